/* Every CUDA kernel of libtw-cuda.so against its CPU counterpart on
 * generated cases (shapes, strides, broadcasts, dtypes, axes). Needs a GPU:
 * without one it says why and exits 77 (meson's "skipped"). Floats agree to
 * a few float32/float64 ulps (the device's libm and summation order differ);
 * integers, moves and masks agree exactly. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cpu/batch_norm_kernels.h"
#include "cpu/conv_kernels.h"
#include "cpu/gather_kernels.h"
#include "cuda/twc_kernels.h"
#include "internal.h"

static twc_device *dev;
static GRand *rng;
static int failures;

/* ---- helpers ------------------------------------------------------------------ */
static void *up(const void *host, size_t bytes)
{
    void *d = twc_alloc(dev, bytes ? bytes : 1);
    g_assert_nonnull(d);
    g_assert_cmpint(twc_copy_to_device(dev, d, host, bytes), ==, 0);
    return d;
}

static void *down(const void *d, size_t bytes)
{
    void *h = g_malloc0(bytes ? bytes : 1);
    if (twc_copy_to_host(dev, h, d, bytes) != 0)
        g_error("copy to host: %s", twc_last_error());
    return h;
}

static void *dzeros(size_t bytes)
{
    void *d = twc_alloc(dev, bytes ? bytes : 1);
    g_assert_nonnull(d);
    g_assert_cmpint(twc_fill(dev, TWK_UINT8, (int64_t)bytes, d, 0), ==, 0);
    return d;
}

/* Whether n values agree: exactly for integers, within rtol (relative, with
 * an absolute floor of rtol) for floats; NaN matches NaN. */
static bool agree(twk_dtype dtype, const void *got, const void *want, int64_t n, double rtol, const char *what)
{
    size_t sz = twk_dtype_size(dtype);
    for (int64_t i = 0; i < n; i++) {
        double g = twk_load(dtype, (const char *)got + i * sz), w = twk_load(dtype, (const char *)want + i * sz);
        bool ok = (isnan(g) && isnan(w)) || g == w ||
                  (dtype <= TWK_FLOAT64 && fabs(g - w) <= rtol * fmax(1.0, fmax(fabs(g), fabs(w))));
        if (!ok) {
            g_printerr("%s: element %lld: CUDA %.17g, CPU %.17g\n", what, (long long)i, g, w);
            failures++;
            return false;
        }
    }
    return true;
}

static double tol(twk_dtype dtype)
{
    return dtype == TWK_FLOAT32 ? 2e-5 : 1e-12;
}

static void fill_random(twk_dtype dtype, void *p, int64_t n, double lo, double hi)
{
    for (int64_t i = 0; i < n; i++) {
        double v = g_rand_double_range(rng, lo, hi);
        if (dtype > TWK_FLOAT64)
            v = floor(v);
        twk_store(dtype, (char *)p + i * (int64_t)twk_dtype_size(dtype), v);
    }
}

typedef struct {
    int ndim;
    int64_t shape[TWK_MAX_DIMS], strides[TWK_MAX_DIMS], span, numel;
} layout;

/* A random shape of up to max_ndim axes (sizes 1..7). */
static void gen_shape(layout *l, int max_ndim)
{
    l->ndim = g_rand_int_range(rng, 0, max_ndim + 1);
    for (int d = 0; d < l->ndim; d++)
        l->shape[d] = g_rand_int_range(rng, 1, 8);
}

/* Strides for l's shape: permuted axes, a step of 1 or 2, broadcast axes when asked. */
static void gen_strides(layout *l, bool broadcast)
{
    int perm[TWK_MAX_DIMS];
    for (int d = 0; d < l->ndim; d++)
        perm[d] = d;
    for (int d = l->ndim - 1; d > 0; d--) {
        int e = g_rand_int_range(rng, 0, d + 1), t = perm[d];
        perm[d] = perm[e], perm[e] = t;
    }
    int64_t s = g_rand_int_range(rng, 1, 3);
    for (int k = l->ndim - 1; k >= 0; k--) {
        l->strides[perm[k]] = s;
        s *= l->shape[perm[k]];
    }
    l->span = 1, l->numel = 1;
    for (int d = 0; d < l->ndim; d++) {
        if (broadcast && g_rand_int_range(rng, 0, 4) == 0)
            l->strides[d] = 0;
        l->span += (l->shape[d] - 1) * l->strides[d];
        l->numel *= l->shape[d];
    }
}

static void contiguous(layout *l)
{
    int64_t s = 1;
    for (int d = l->ndim - 1; d >= 0; d--) {
        l->strides[d] = s;
        s *= l->shape[d];
    }
    l->span = l->numel = s;
}

static const twk_dtype ALL[] = {TWK_FLOAT32, TWK_FLOAT64, TWK_INT32, TWK_INT64, TWK_UINT8, TWK_BOOL};

/* ---- elementwise ------------------------------------------------------------------ */
#define UNARY_TAKES(name, takes, nattrs, f, i) [TWK_UNARY_##name] = #takes,
#define BINARY_TAKES(name, takes, f, i) [TWK_BINARY_##name] = #takes,
#define BINARY_BOOL(name, takes, f, i) [TWK_BINARY_##name] = TWK_BOOL_RESULT_##takes,
static const char *unary_takes[] = {TWK_UNARY_OPS(UNARY_TAKES)};
static const char *binary_takes[] = {TWK_BINARY_OPS(BINARY_TAKES)};
static const bool binary_bool[] = {TWK_BINARY_OPS(BINARY_BOOL)};

static bool takes(const char *t, twk_dtype dt)
{
    if (!strcmp(t, "NUMBER") || !strcmp(t, "ARITH"))
        return dt != TWK_BOOL;
    if (!strcmp(t, "FLOAT"))
        return dt <= TWK_FLOAT64;
    if (!strcmp(t, "BOOL") || !strcmp(t, "LOGICAL"))
        return dt == TWK_BOOL;
    return true; /* COMPARE */
}

static void test_unary(void)
{
    for (int op = 0; op < TWK_UNARY_COUNT; op++)
        for (size_t k = 0; k < G_N_ELEMENTS(ALL); k++) {
            twk_dtype dt = ALL[k];
            if (!takes(unary_takes[op], dt))
                continue;
            for (int c = 0; c < 4; c++) {
                layout x, o;
                gen_shape(&x, 4);
                gen_strides(&x, false);
                o = x;
                contiguous(&o);
                size_t sz = twk_dtype_size(dt);
                void *hx = g_malloc(x.span * sz), *want = g_malloc0(o.numel * sz + 1);
                fill_random(dt, hx, x.span, dt == TWK_UINT8 || dt == TWK_BOOL ? 0 : -4, dt == TWK_BOOL ? 2 : 4);
                double p0 = -0.5, p1 = 1.5;
                if (op == TWK_UNARY_leaky_relu || op == TWK_UNARY_elu)
                    p0 = 0.3;
                twk_unary(op, dt, x.ndim, x.shape, want, o.strides, hx, x.strides, p0, p1);
                void *dx = up(hx, x.span * sz), *dout = dzeros(o.numel * sz);
                g_assert_cmpint(twc_unary(dev, op, dt, x.ndim, x.shape, dout, o.strides, dx, x.strides, p0, p1), ==, 0);
                void *got = down(dout, o.numel * sz);
                agree(dt, got, want, o.numel, 4 * tol(dt), "unary");
                twc_free(dev, dx), twc_free(dev, dout);
                g_free(hx), g_free(want), g_free(got);
            }
        }
    g_assert_cmpint(failures, ==, 0);
}

static void test_binary(void)
{
    for (int op = 0; op < TWK_BINARY_COUNT; op++)
        for (size_t k = 0; k < G_N_ELEMENTS(ALL); k++) {
            twk_dtype dt = ALL[k];
            if (!takes(binary_takes[op], dt))
                continue;
            for (int c = 0; c < 4; c++) {
                layout a, b, o;
                gen_shape(&a, 5);
                b = a;
                gen_strides(&a, true);
                gen_strides(&b, true);
                o = a;
                contiguous(&o);
                size_t sz = twk_dtype_size(dt), osz = binary_bool[op] ? 1 : sz;
                twk_dtype odt = binary_bool[op] ? TWK_BOOL : dt;
                void *ha = g_malloc(a.span * sz), *hb = g_malloc(b.span * sz), *want = g_malloc0(o.numel * osz + 1);
                double lo = dt >= TWK_UINT8 ? 0 : -6, hi = dt == TWK_BOOL ? 2 : 6;
                fill_random(dt, ha, a.span, lo, hi);
                fill_random(dt, hb, b.span, op == TWK_BINARY_pow ? 0.5 : lo, hi);
                twk_binary(op, dt, a.ndim, a.shape, want, o.strides, ha, a.strides, hb, b.strides);
                void *da = up(ha, a.span * sz), *db = up(hb, b.span * sz), *dout = dzeros(o.numel * osz);
                g_assert_cmpint(twc_binary(dev, op, dt, a.ndim, a.shape, dout, o.strides, da, a.strides, db, b.strides),
                                ==, 0);
                void *got = down(dout, o.numel * osz);
                agree(odt, got, want, o.numel, 4 * tol(dt), "binary");
                twc_free(dev, da), twc_free(dev, db), twc_free(dev, dout);
                g_free(ha), g_free(hb), g_free(want), g_free(got);
            }
        }
    g_assert_cmpint(failures, ==, 0);
}

/* Copies that are transposes (twc_copy's tiled path): NHWC to NCHW and
 * back, a filter's (rows, columns) swap, partial tiles, more batch indices
 * than one grid holds, every element size, against the CPU's copy. */
static void test_transpose_copy(void)
{
    typedef struct {
        int64_t n, h, w, c;
    } nhwc;
    static const nhwc cases[] = {{3, 37, 45, 70}, {2, 7, 7, 2048}, {1, 100, 1, 33}, {70000, 2, 1, 3}, {4, 1, 1, 5}};
    static const size_t sizes[] = {1, 2, 4, 8};
    for (size_t k = 0; k < G_N_ELEMENTS(cases); k++)
        for (size_t z = 0; z < G_N_ELEMENTS(sizes); z++)
            for (int back = 0; back < 2; back++) {
                nhwc t = cases[k];
                size_t sz = sizes[z], bytes = (size_t)(t.n * t.h * t.w * t.c) * sz;
                /* NHWC -> NCHW: the shape in NCHW order, NHWC's strides read */
                const int64_t shape[4] = {t.n, t.c, t.h, t.w};
                const int64_t nchw[4] = {t.c * t.h * t.w, t.h * t.w, t.w, 1};
                const int64_t nhwc_st[4] = {t.h * t.w * t.c, 1, t.w * t.c, t.c};
                const int64_t *dst_st = back ? nhwc_st : nchw, *src_st = back ? nchw : nhwc_st;
                void *src = g_malloc(bytes), *want = g_malloc(bytes);
                fill_random(TWK_UINT8, src, (int64_t)bytes, 0, 256);
                twk_copy(sz, 4, shape, want, dst_st, src, src_st);
                void *dsrc = up(src, bytes), *ddst = dzeros(bytes);
                g_assert_cmpint(twc_copy(dev, sz, 4, shape, ddst, dst_st, dsrc, src_st), ==, 0);
                void *got = down(ddst, bytes);
                if (memcmp(got, want, bytes) != 0) {
                    g_printerr("transpose copy: %lldx%lldx%lldx%lld, %zu-byte elements, %s differs\n",
                               (long long)t.n, (long long)t.h, (long long)t.w, (long long)t.c, sz,
                               back ? "NCHW to NHWC" : "NHWC to NCHW");
                    failures++;
                }
                twc_free(dev, dsrc), twc_free(dev, ddst);
                g_free(src), g_free(want), g_free(got);
            }
    g_assert_cmpint(failures, ==, 0);
}

static void test_cast_copy_where_fill(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(ALL); i++)
        for (size_t j = 0; j < G_N_ELEMENTS(ALL); j++) {
            twk_dtype src = ALL[i], dst = ALL[j];
            layout x, o;
            gen_shape(&x, 5);
            gen_strides(&x, true);
            o = x;
            gen_strides(&o, false);
            size_t ss = twk_dtype_size(src), ds = twk_dtype_size(dst);
            void *hx = g_malloc(x.span * ss), *want = g_malloc0(o.span * ds);
            fill_random(src, hx, x.span, -300, 300);
            twk_cast(dst, src, x.ndim, x.shape, want, o.strides, hx, x.strides);
            void *dx = up(hx, x.span * ss), *dout = dzeros(o.span * ds);
            g_assert_cmpint(twc_cast(dev, dst, src, x.ndim, x.shape, dout, o.strides, dx, x.strides), ==, 0);
            void *got = down(dout, o.span * ds);
            agree(dst, got, want, o.span, 0, "cast");
            /* the same layouts as a copy of src's bits, and where() picking from both */
            if (src == dst) {
                g_assert_cmpint(twc_fill(dev, dst, o.span, dout, 0), ==, 0);
                g_assert_cmpint(twc_copy(dev, ss, x.ndim, x.shape, dout, o.strides, dx, x.strides), ==, 0);
                void *got2 = down(dout, o.span * ds);
                agree(dst, got2, want, o.span, 0, "copy");
                g_free(got2);
            }
            twc_free(dev, dx), twc_free(dev, dout);
            g_free(hx), g_free(want), g_free(got);
        }
    for (size_t k = 0; k < G_N_ELEMENTS(ALL); k++) {
        twk_dtype dt = ALL[k];
        size_t sz = twk_dtype_size(dt);
        layout c, a, b, o;
        gen_shape(&c, 5);
        a = b = c;
        gen_strides(&c, true), gen_strides(&a, true), gen_strides(&b, true);
        o = c;
        contiguous(&o);
        void *hc = g_malloc(c.span), *ha = g_malloc(a.span * sz), *hb = g_malloc(b.span * sz);
        void *want = g_malloc0(o.numel * sz);
        fill_random(TWK_BOOL, hc, c.span, 0, 2);
        fill_random(dt, ha, a.span, 0, 50), fill_random(dt, hb, b.span, 0, 50);
        twk_where(dt, c.ndim, c.shape, want, o.strides, hc, c.strides, ha, a.strides, hb, b.strides);
        void *dc = up(hc, c.span), *da = up(ha, a.span * sz), *db = up(hb, b.span * sz), *dout = dzeros(o.numel * sz);
        g_assert_cmpint(twc_where(dev, dt, c.ndim, c.shape, dout, o.strides, dc, c.strides, da, a.strides, db, b.strides),
                        ==, 0);
        void *got = down(dout, o.numel * sz);
        agree(dt, got, want, o.numel, 0, "where");
        /* fill, and one element read back */
        g_assert_cmpint(twc_fill(dev, dt, o.numel, dout, 3.75), ==, 0);
        twk_fill(dt, o.numel, want, 3.75);
        g_free(got);
        got = down(dout, o.numel * sz);
        agree(dt, got, want, o.numel, 0, "fill");
        double v;
        g_assert_cmpint(twc_read(dev, dt, dout, &v), ==, 0);
        g_assert_cmpfloat(v, ==, twk_load(dt, want));
        twc_free(dev, dc), twc_free(dev, da), twc_free(dev, db), twc_free(dev, dout);
        g_free(hc), g_free(ha), g_free(hb), g_free(want), g_free(got);
    }
    g_assert_cmpint(failures, ==, 0);
}

/* ---- reductions, softmax, cross-entropies ------------------------------------------ */
static void test_reduce(void)
{
    for (int c = 0; c < 120; c++) {
        twk_dtype dt = ALL[g_rand_int_range(rng, 0, 5)];
        int op = g_rand_int_range(rng, TWK_SUM, TWK_ARGMIN + 1);
        layout x;
        gen_shape(&x, 5);
        if (x.ndim == 0)
            continue;
        if (c % 10 == 0)
            x.shape[x.ndim - 1] = 3000; /* longer than a block */
        gen_strides(&x, false);
        bool reduce[TWK_MAX_DIMS];
        int axis = g_rand_int_range(rng, 0, x.ndim);
        int64_t nout = 1;
        for (int d = 0; d < x.ndim; d++) {
            reduce[d] = op >= TWK_ARGMAX ? d == axis : g_rand_boolean(rng);
            nout *= reduce[d] ? 1 : x.shape[d];
        }
        size_t sz = twk_dtype_size(dt), osz = op >= TWK_ARGMAX ? 8 : sz;
        twk_dtype odt = op >= TWK_ARGMAX ? TWK_INT64 : dt;
        void *hx = g_malloc(x.span * sz), *want = g_malloc0(nout * osz);
        fill_random(dt, hx, x.span, op == TWK_PROD ? 0.9 : -100, op == TWK_PROD ? 1.1 : 100);
        twk_reduce(op, dt, x.ndim, x.shape, x.strides, hx, reduce, want);
        void *dx = up(hx, x.span * sz), *dout = dzeros(nout * osz);
        g_assert_cmpint(twc_reduce(dev, op, dt, x.ndim, x.shape, x.strides, dx, reduce, dout), ==, 0);
        void *got = down(dout, nout * osz);
        agree(odt, got, want, nout, 10 * tol(dt), "reduce");
        twc_free(dev, dx), twc_free(dev, dout);
        g_free(hx), g_free(want), g_free(got);
    }
    /* Column sums (reduce.cu's path for the kept axis innermost and
     * contiguous): NHWC batch statistics, rows packed or padded. */
    static const int64_t nhwc[][4] = {{32, 7, 7, 64}, {3, 5, 5, 1}, {2, 3, 4, 70}, {1, 1, 40, 3000}, {256, 1, 1, 10}};
    for (size_t k = 0; k < G_N_ELEMENTS(nhwc) * 4; k++) {
        const int64_t *shape = nhwc[k / 4];
        twk_dtype dt = k % 2 ? TWK_FLOAT64 : TWK_FLOAT32;
        int64_t row = shape[3] + (k % 4 >= 2 ? 5 : 0), n = shape[0] * shape[1] * shape[2] * row;
        const int64_t strides[4] = {shape[1] * shape[2] * row, shape[2] * row, row, 1};
        const bool reduce[4] = {true, true, true, false};
        size_t sz = twk_dtype_size(dt);
        void *hx = g_malloc(n * sz), *want = g_malloc0(shape[3] * sz);
        fill_random(dt, hx, n, -100, 100);
        twk_reduce(TWK_SUM, dt, 4, shape, strides, hx, reduce, want);
        void *dx = up(hx, n * sz), *dout = dzeros(shape[3] * sz);
        g_assert_cmpint(twc_reduce(dev, TWK_SUM, dt, 4, shape, strides, dx, reduce, dout), ==, 0);
        void *got = down(dout, shape[3] * sz);
        agree(dt, got, want, shape[3], 10 * tol(dt), "column sum");
        twc_free(dev, dx), twc_free(dev, dout);
        g_free(hx), g_free(want), g_free(got);
    }
    g_assert_cmpint(failures, ==, 0);
}

static tw_tensor *tensor(twk_dtype dt, const void *data, int ndim, const int64_t *shape)
{
    return tw_tensor_from_data(data, (tw_dtype)dt, ndim, shape);
}

static void check_tensor(twk_dtype dt, tw_tensor *t, const void *dgot, double rtol, const char *what)
{
    g_assert_nonnull(t);
    int64_t n = tw_tensor_numel(t);
    size_t bytes = (size_t)n * twk_dtype_size(dt);
    void *want = g_malloc(bytes ? bytes : 1), *got = down(dgot, bytes);
    g_assert_cmpint(tw_tensor_copy_to(t, want, bytes), ==, 0);
    agree(dt, got, want, n, rtol, what);
    g_free(want), g_free(got);
}

static void test_softmax_xent(void)
{
    for (int c = 0; c < 40; c++) {
        twk_dtype dt = c % 2 ? TWK_FLOAT64 : TWK_FLOAT32;
        size_t sz = twk_dtype_size(dt);
        layout x;
        gen_shape(&x, 4);
        if (x.ndim == 0)
            x.shape[x.ndim++] = 5;
        if (c % 8 == 0)
            x.shape[x.ndim - 1] = 1000;
        contiguous(&x);
        int axis = g_rand_int_range(rng, 0, x.ndim);
        int64_t outer = 1, inner = 1, n = x.shape[axis];
        for (int d = 0; d < x.ndim; d++)
            outer *= d < axis ? x.shape[d] : 1, inner *= d > axis ? x.shape[d] : 1;
        void *hx = g_malloc(x.numel * sz);
        fill_random(dt, hx, x.numel, -30, 30);
        void *dx = up(hx, x.numel * sz), *dy = dzeros(x.numel * sz);
        tw_scope_begin();
        tw_tensor *t = tensor(dt, hx, x.ndim, x.shape);
        for (int log = 0; log < 2; log++) {
            g_assert_cmpint(twc_softmax(dev, dt, log, outer, n, inner, dx, dy), ==, 0);
            check_tensor(dt, log ? tw_log_softmax(t, axis) : tw_softmax(t, axis), dy, 10 * tol(dt), "softmax");
        }
        /* cross-entropies over the last axis */
        int64_t classes = x.shape[x.ndim - 1], rows = x.numel / classes;
        void *hl = g_malloc(x.numel * sz);
        fill_random(dt, hl, x.numel, 0, 1);
        int64_t *hs = g_new(int64_t, rows);
        for (int64_t r = 0; r < rows; r++)
            hs[r] = g_rand_int_range(rng, 0, (int32_t)classes);
        void *dl = up(hl, x.numel * sz), *ds = up(hs, rows * 8), *dloss = dzeros(rows * sz);
        g_assert_cmpint(twc_softmax_cross_entropy(dev, dt, rows, classes, dx, dl, dloss), ==, 0);
        check_tensor(dt, tw_softmax_cross_entropy(t, tensor(dt, hl, x.ndim, x.shape)), dloss, 10 * tol(dt), "xent");
        g_assert_cmpint(twc_sparse_softmax_cross_entropy(dev, dt, TWK_INT64, rows, classes, dx, ds, dloss), ==, 0);
        check_tensor(dt, tw_sparse_softmax_cross_entropy(t, tensor(TWK_INT64, hs, x.ndim - 1, x.shape)), dloss,
                     10 * tol(dt), "sparse xent");
        tw_scope_end();
        twc_free(dev, dx), twc_free(dev, dy), twc_free(dev, dl), twc_free(dev, ds), twc_free(dev, dloss);
        g_free(hx), g_free(hl), g_free(hs);
    }
    g_assert_cmpint(failures, ==, 0);
}

/* ---- indexed moves -------------------------------------------------------------------- */
static void test_moves(void)
{
    for (int c = 0; c < 60; c++) {
        twk_dtype dt = ALL[g_rand_int_range(rng, 0, 6)];
        size_t sz = twk_dtype_size(dt);
        int64_t outer = g_rand_int_range(rng, 1, 5), axis = g_rand_int_range(rng, 1, 7), inner = g_rand_int_range(rng, 1, 9);
        int64_t nidx = g_rand_int_range(rng, 1, 12), idx[12];
        for (int64_t j = 0; j < nidx; j++)
            idx[j] = g_rand_int_range(rng, 0, (int32_t)axis);
        void *hp = g_malloc(outer * axis * inner * sz), *want = g_malloc0(outer * nidx * inner * sz);
        fill_random(dt, hp, outer * axis * inner, 0, dt == TWK_BOOL ? 2 : 20);
        twk_gather(sz, outer, axis, inner, hp, TWK_INT64, nidx, idx, want);
        void *dp = up(hp, outer * axis * inner * sz), *di = up(idx, nidx * 8), *dout = dzeros(outer * nidx * inner * sz);
        g_assert_cmpint(twc_gather(dev, sz, outer, axis, inner, dp, TWK_INT64, nidx, di, dout), ==, 0);
        void *got = down(dout, outer * nidx * inner * sz);
        agree(dt, got, want, outer * nidx * inner, 0, "gather");
        /* scatter-add of the gathered rows back (repeated indices accumulate) */
        void *swant = g_malloc0(outer * axis * inner * sz), *dsc = dzeros(outer * axis * inner * sz);
        twk_scatter_add(dt, outer, axis, inner, want, TWK_INT64, nidx, idx, swant);
        g_assert_cmpint(twc_scatter_add(dev, dt, outer, axis, inner, dout, TWK_INT64, nidx, di, dsc), ==, 0);
        void *sgot = down(dsc, outer * axis * inner * sz);
        agree(dt, sgot, swant, outer * axis * inner, tol(dt), "scatter_add");
        /* one-hot of the indices */
        void *owant = g_malloc0(nidx * axis * sz), *doh = dzeros(nidx * axis * sz);
        twk_one_hot(dt, TWK_INT64, nidx, idx, axis, owant);
        g_assert_cmpint(twc_one_hot(dev, dt, TWK_INT64, nidx, di, axis, doh), ==, 0);
        void *ogot = down(doh, nidx * axis * sz);
        agree(dt, ogot, owant, nidx * axis, 0, "one_hot");
        twc_free(dev, dp), twc_free(dev, di), twc_free(dev, dout), twc_free(dev, dsc), twc_free(dev, doh);
        g_free(hp), g_free(want), g_free(got), g_free(swant), g_free(sgot), g_free(owant), g_free(ogot);
    }
    for (int c = 0; c < 60; c++) {
        twk_dtype dt = ALL[g_rand_int_range(rng, 0, 6)];
        size_t sz = twk_dtype_size(dt);
        layout x;
        gen_shape(&x, 4);
        gen_strides(&x, true);
        void *hx = g_malloc(x.span * sz);
        fill_random(dt, hx, x.span, 0, dt == TWK_BOOL ? 2 : 50);
        void *dx = up(hx, x.span * sz);
        /* tile against twk_tile */
        int64_t mult[TWK_MAX_DIMS], tn = 1;
        for (int d = 0; d < x.ndim; d++)
            mult[d] = g_rand_int_range(rng, 1, 4), tn *= x.shape[d] * mult[d];
        void *want = g_malloc0(tn * sz), *dout = dzeros(tn * sz);
        twk_tile(sz, x.ndim, x.shape, hx, x.strides, mult, want);
        g_assert_cmpint(twc_tile(dev, sz, x.ndim, x.shape, dx, x.strides, mult, dout), ==, 0);
        void *got = down(dout, tn * sz);
        agree(dt, got, want, tn, 0, "tile");
        /* pad against tw_pad (of a contiguous copy) */
        int64_t pads[2 * TWK_MAX_DIMS], pn = 1;
        for (int d = 0; d < x.ndim; d++) {
            pads[2 * d] = g_rand_int_range(rng, 0, 3), pads[2 * d + 1] = g_rand_int_range(rng, 0, 3);
            pn *= pads[2 * d] + x.shape[d] + pads[2 * d + 1];
        }
        layout cx = x;
        contiguous(&cx);
        void *hcx = g_malloc(cx.numel * sz + 1);
        twk_copy(sz, x.ndim, x.shape, hcx, cx.strides, hx, x.strides);
        void *dpad = dzeros(pn * sz);
        g_assert_cmpint(twc_pad(dev, dt, x.ndim, x.shape, dx, x.strides, pads, 1.0, dpad), ==, 0);
        tw_scope_begin();
        check_tensor(dt, tw_pad(tensor(dt, hcx, x.ndim, x.shape), pads, 1.0), dpad, 0, "pad");
        /* concat of x with itself twice along a random axis */
        if (x.ndim > 0) {
            int axis = g_rand_int_range(rng, 0, x.ndim);
            int64_t outer = 1, inner = 1, sizes[3] = {x.shape[axis], x.shape[axis], x.shape[axis]};
            for (int d = 0; d < x.ndim; d++)
                outer *= d < axis ? x.shape[d] : 1, inner *= d > axis ? x.shape[d] : 1;
            void *dcx = up(hcx, cx.numel * sz), *dcat = dzeros(3 * cx.numel * sz);
            const void *parts[3] = {dcx, dcx, dcx};
            g_assert_cmpint(twc_concat(dev, sz, 3, parts, sizes, outer, inner, dcat), ==, 0);
            tw_tensor *t = tensor(dt, hcx, x.ndim, x.shape);
            check_tensor(dt, tw_concat(3, (tw_tensor *const[]){t, t, t}, axis), dcat, 0, "concat");
            twc_free(dev, dcx), twc_free(dev, dcat);
        }
        tw_scope_end();
        twc_free(dev, dx), twc_free(dev, dout), twc_free(dev, dpad);
        g_free(hx), g_free(want), g_free(got), g_free(hcx);
    }
    g_assert_cmpint(failures, ==, 0);
}

/* Dropout keeps what tw_dropout keeps for the same generator state. */
static void test_dropout(void)
{
    for (int c = 0; c < 2; c++) {
        twk_dtype dt = c ? TWK_FLOAT64 : TWK_FLOAT32;
        size_t sz = twk_dtype_size(dt);
        enum { N = 100003 };
        void *hx = g_malloc(N * sz);
        fill_random(dt, hx, N, -3, 3);
        uint64_t seed = 77 + (uint64_t)c, position = 12345;
        tw_rng *r = tw_rng_new(seed);
        tw_rng_set_state(r, seed, position);
        tw_scope_begin();
        tw_tensor *want = tw_dropout(tensor(dt, hx, TW_SHAPE(N)), 0.3, r);
        void *dx = up(hx, N * sz), *dy = dzeros(N * sz);
        g_assert_cmpint(twc_dropout(dev, dt, N, dx, 0.3, seed, position, dy), ==, 0);
        check_tensor(dt, want, dy, 0, "dropout");
        tw_scope_end();
        tw_rng_free(r);
        twc_free(dev, dx), twc_free(dev, dy);
        g_free(hx);
    }
    g_assert_cmpint(failures, ==, 0);
}

/* SGD with momentum and Adam: one fused step against the rules written out. */
static void test_optimizers(void)
{
    enum { N = 5000 };
    float w[N], g[N], m[N], v[N];
    for (int i = 0; i < N; i++)
        w[i] = (float)g_rand_double_range(rng, -1, 1), g[i] = (float)g_rand_double_range(rng, -2, 2),
        m[i] = (float)g_rand_double_range(rng, -0.1, 0.1), v[i] = (float)g_rand_double_range(rng, 0, 0.1);
    twc_update u = {.lr = 0.01, .keep = 0.999, .scale = 0.5, .clip = 0.8, .momentum = 0.9, .beta_1 = 0.9,
                    .beta_2 = 0.999, .epsilon = 1e-7, .nesterov = true, .t = 3};
    void *dw = up(w, sizeof w), *dg = up(g, sizeof g), *dm = up(m, sizeof m), *dv = up(v, sizeof v);
    g_assert_cmpint(twc_sgd_update(dev, TWK_FLOAT32, N, dw, dg, dm, &u), ==, 0);
    float ww[N], mw[N];
    for (int i = 0; i < N; i++) {
        float gi = fminf(fmaxf(g[i] * 0.5f, -0.8f), 0.8f), step = -gi * 0.01f;
        mw[i] = step + m[i] * 0.9f;
        ww[i] = w[i] * 0.999f + (step + mw[i] * 0.9f);
    }
    float *got = down(dw, sizeof w), *mgot = down(dm, sizeof m);
    agree(TWK_FLOAT32, got, ww, N, 1e-6, "sgd w");
    agree(TWK_FLOAT32, mgot, mw, N, 1e-6, "sgd m");
    g_free(got), g_free(mgot);
    g_assert_cmpint(twc_copy_to_device(dev, dw, w, sizeof w), ==, 0);
    g_assert_cmpint(twc_copy_to_device(dev, dm, m, sizeof m), ==, 0);
    g_assert_cmpint(twc_adam_update(dev, TWK_FLOAT32, N, dw, dg, dm, dv, &u), ==, 0);
    float alpha = (float)(0.01 * sqrt(1 - pow(0.999, 3)) / (1 - pow(0.9, 3)));
    for (int i = 0; i < N; i++) {
        float gi = fminf(fmaxf(g[i] * 0.5f, -0.8f), 0.8f);
        mw[i] = m[i] + (gi - m[i]) * (1 - 0.9f);
        float vi = v[i] + (gi * gi - v[i]) * (float)(1 - 0.999);
        ww[i] = w[i] * 0.999f - mw[i] * alpha / (sqrtf(vi) + 1e-7f);
    }
    got = down(dw, sizeof w);
    agree(TWK_FLOAT32, got, ww, N, 1e-5, "adam w");
    g_free(got);
    twc_free(dev, dw), twc_free(dev, dg), twc_free(dev, dm), twc_free(dev, dv);
    g_assert_cmpint(failures, ==, 0);
}

/* ---- cuBLAS and cuDNN ---------------------------------------------------------------- */
static void test_gemm(void)
{
    for (int c = 0; c < 24; c++) {
        twk_dtype dt = c % 2 ? TWK_FLOAT64 : TWK_FLOAT32;
        size_t sz = twk_dtype_size(dt);
        bool ta = c & 2, tb = c & 4;
        int64_t m = g_rand_int_range(rng, 1, 70), n = g_rand_int_range(rng, 1, 70), k = g_rand_int_range(rng, 1, 70);
        int64_t batch = c % 3 + 1;
        int64_t lda = ta ? m : k, ldb = tb ? k : n, sa = m * k, sb = (c % 5 == 0) ? 0 : k * n, sc = m * n;
        void *a = g_malloc(batch * sa * sz), *b = g_malloc((sb ? batch : 1) * k * n * sz), *want = g_malloc0(batch * sc * sz);
        fill_random(dt, a, batch * sa, -1, 1), fill_random(dt, b, (sb ? batch : 1) * k * n, -1, 1);
        for (int64_t i = 0; i < batch; i++)
            twk_gemm(dt, ta, tb, m, n, k, (char *)a + i * sa * sz, lda, (char *)b + i * sb * sz, ldb, 0,
                     (char *)want + i * sc * sz, n);
        void *da = up(a, batch * sa * sz), *db = up(b, (sb ? batch : 1) * k * n * sz), *dc = dzeros(batch * sc * sz);
        g_assert_cmpint(twc_gemm(dev, dt, ta, tb, m, n, k, da, lda, sa, db, ldb, sb, 0, dc, n, sc, batch), ==, 0);
        void *got = down(dc, batch * sc * sz);
        agree(dt, got, want, batch * sc, 10 * tol(dt), "gemm");
        twc_free(dev, da), twc_free(dev, db), twc_free(dev, dc);
        g_free(a), g_free(b), g_free(want), g_free(got);
    }
    g_assert_cmpint(failures, ==, 0);
}

static int64_t out_size(int64_t in, int64_t k, int64_t stride, int64_t dil, bool same, int64_t *pad_before)
{
    int64_t ek = (k - 1) * dil + 1;
    if (!same) {
        *pad_before = 0;
        return (in - ek) / stride + 1;
    }
    int64_t out = (in + stride - 1) / stride, total = (out - 1) * stride + ek - in;
    *pad_before = total > 0 ? total / 2 : 0;
    return out;
}

static void test_conv_pool(void)
{
    for (int c = 0; c < 24; c++) {
        twk_dtype dt = c % 4 == 3 ? TWK_FLOAT64 : TWK_FLOAT32;
        size_t sz = twk_dtype_size(dt);
        twk_conv2d_shape s = {.batch = g_rand_int_range(rng, 1, 4), .in_h = g_rand_int_range(rng, 5, 12),
                              .in_w = g_rand_int_range(rng, 5, 12), .in_c = g_rand_int_range(rng, 1, 9),
                              .k_h = g_rand_int_range(rng, 1, 4), .k_w = g_rand_int_range(rng, 1, 4),
                              .out_c = g_rand_int_range(rng, 1, 9), .stride_h = g_rand_int_range(rng, 1, 3),
                              .stride_w = g_rand_int_range(rng, 1, 3), .dilation_h = 1 + (c % 5 == 0),
                              .dilation_w = 1};
        if (c % 6 == 1) /* 1x1: the matrix-product path (dnn.cu's pointwise), strides 1 and 2 */
            s.k_h = s.k_w = 1;
        bool same = c % 2;
        s.out_h = out_size(s.in_h, s.k_h, s.stride_h, s.dilation_h, same, &s.pad_top);
        s.out_w = out_size(s.in_w, s.k_w, s.stride_w, s.dilation_w, same, &s.pad_left);
        int64_t nx = s.batch * s.in_h * s.in_w * s.in_c, nf = s.k_h * s.k_w * s.in_c * s.out_c;
        int64_t ny = s.batch * s.out_h * s.out_w * s.out_c;
        void *x = g_malloc(nx * sz), *f = g_malloc(nf * sz), *dy = g_malloc(ny * sz);
        fill_random(dt, x, nx, -1, 1), fill_random(dt, f, nf, -1, 1), fill_random(dt, dy, ny, -1, 1);
        void *y = g_malloc0(ny * sz), *dx = g_malloc0(nx * sz), *df = g_malloc0(nf * sz);
        void *ws = g_malloc(twk_conv2d_workspace(dt, &s, TWK_CONV_FORWARD) + 64);
        twk_conv2d_forward(dt, &s, x, f, y, ws);
        g_free(ws), ws = g_malloc(twk_conv2d_workspace(dt, &s, TWK_CONV_BACKPROP_INPUT) + 64);
        twk_conv2d_backprop_input(dt, &s, f, dy, dx, ws);
        g_free(ws), ws = g_malloc(twk_conv2d_workspace(dt, &s, TWK_CONV_BACKPROP_FILTER) + 64);
        twk_conv2d_backprop_filter(dt, &s, x, dy, df, ws);
        g_free(ws);
        void *d_x = up(x, nx * sz), *d_f = up(f, nf * sz), *d_dy = up(dy, ny * sz);
        void *d_y = dzeros(ny * sz), *d_dx = dzeros(nx * sz), *d_df = dzeros(nf * sz);
        if (twc_conv2d_forward(dev, dt, &s, d_x, d_f, d_y) != 0 ||
            twc_conv2d_backprop_input(dev, dt, &s, d_f, d_dy, d_dx) != 0 ||
            twc_conv2d_backprop_filter(dev, dt, &s, d_x, d_dy, d_df) != 0)
            g_error("conv2d case %d: %s", c, twc_last_error());
        void *gy = down(d_y, ny * sz), *gdx = down(d_dx, nx * sz), *gdf = down(d_df, nf * sz);
        agree(dt, gy, y, ny, 1e3 * tol(dt), "conv2d");
        agree(dt, gdx, dx, nx, 1e3 * tol(dt), "conv2d input gradient");
        agree(dt, gdf, df, nf, 1e3 * tol(dt), "conv2d filter gradient");

        /* pooling over the same input */
        twk_pool2d_shape p = {.batch = s.batch, .in_h = s.in_h, .in_w = s.in_w, .channels = s.in_c,
                              .pool_h = s.k_h, .pool_w = s.k_w, .stride_h = s.stride_h, .stride_w = s.stride_w};
        p.out_h = out_size(p.in_h, p.pool_h, p.stride_h, 1, same, &p.pad_top);
        p.out_w = out_size(p.in_w, p.pool_w, p.stride_w, 1, same, &p.pad_left);
        int64_t np = p.batch * p.out_h * p.out_w * p.channels;
        void *py = g_malloc0(np * sz), *pdy = g_malloc(np * sz), *pdx = g_malloc0(nx * sz);
        fill_random(dt, pdy, np, -1, 1);
        void *d_py = dzeros(np * sz), *d_pdy = up(pdy, np * sz), *d_pdx = dzeros(nx * sz);
        for (int avg = 0; avg < 2; avg++) {
            if (avg) {
                twk_avg_pool2d(dt, &p, x, py);
                memset(pdx, 0, nx * sz);
                twk_avg_pool2d_grad(dt, &p, pdy, pdx);
                g_assert_cmpint(twc_avg_pool2d(dev, dt, &p, d_x, d_py), ==, 0);
                g_assert_cmpint(twc_avg_pool2d_grad(dev, dt, &p, d_pdy, d_pdx), ==, 0);
            } else {
                twk_max_pool2d(dt, &p, x, py);
                memset(pdx, 0, nx * sz);
                twk_max_pool2d_grad(dt, &p, x, pdy, pdx);
                g_assert_cmpint(twc_max_pool2d(dev, dt, &p, d_x, d_py), ==, 0);
                g_assert_cmpint(twc_max_pool2d_grad(dev, dt, &p, d_x, d_pdy, d_pdx), ==, 0);
            }
            void *gpy = down(d_py, np * sz), *gpdx = down(d_pdx, nx * sz);
            agree(dt, gpy, py, np, 10 * tol(dt), avg ? "avg_pool2d" : "max_pool2d");
            agree(dt, gpdx, pdx, nx, 10 * tol(dt), avg ? "avg_pool2d gradient" : "max_pool2d gradient");
            g_free(gpy), g_free(gpdx);
        }
        twc_free(dev, d_x), twc_free(dev, d_f), twc_free(dev, d_dy), twc_free(dev, d_y), twc_free(dev, d_dx);
        twc_free(dev, d_df), twc_free(dev, d_py), twc_free(dev, d_pdy), twc_free(dev, d_pdx);
        g_free(x), g_free(f), g_free(dy), g_free(y), g_free(dx), g_free(df), g_free(gy), g_free(gdx), g_free(gdf);
        g_free(py), g_free(pdy), g_free(pdx);
    }
    g_assert_cmpint(failures, ==, 0);
}

/* Batch normalization in training mode against the CPU kernel: y, mean,
 * inv_std and the three gradients, over few rows and many (several column
 * blocks and row chunks), float32 and float64. */
static void test_batch_norm(void)
{
    static const int64_t cases[][2] = {{1, 3}, {7, 5}, {300, 7}, {5000, 70}, {3136, 256}};
    static const twk_dtype dtypes[] = {TWK_FLOAT32, TWK_FLOAT64};
    for (size_t t = 0; t < G_N_ELEMENTS(dtypes); t++)
        for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
            twk_dtype dt = dtypes[t];
            int64_t R = cases[k][0], C = cases[k][1];
            size_t sz = twk_dtype_size(dt), big = (size_t)(R * C) * sz, small = (size_t)C * sz;
            void *x = g_malloc(big), *dy = g_malloc(big), *gamma = g_malloc(small), *beta = g_malloc(small);
            fill_random(dt, x, R * C, -2, 3);
            fill_random(dt, dy, R * C, -1, 1);
            fill_random(dt, gamma, C, 0.5, 2);
            fill_random(dt, beta, C, -1, 1);
            /* the CPU's outputs: y, mean, inv_std, dx, dgamma, dbeta */
            void *want[6], *got[6], *dev_out[6];
            for (int i = 0; i < 6; i++) {
                size_t bytes = i == 0 || i == 3 ? big : small;
                want[i] = g_malloc(bytes);
                dev_out[i] = dzeros(bytes);
            }
            void *work = g_malloc(twk_batch_norm_workspace(R, C));
            double eps = 1e-3;
            twk_batch_norm_forward(dt, R, C, x, gamma, beta, eps, want[0], want[1], want[2], work);
            twk_batch_norm_backward(dt, R, C, x, dy, gamma, want[1], want[2], want[3], want[4], want[5], work);
            void *dx_ = up(x, big), *ddy = up(dy, big), *dg = up(gamma, small), *db = up(beta, small);
            if (twc_batch_norm_forward(dev, dt, R, C, dx_, dg, db, eps, dev_out[0], dev_out[1], dev_out[2]) != 0 ||
                twc_batch_norm_backward(dev, dt, R, C, dx_, ddy, dg, dev_out[1], dev_out[2], dev_out[3], dev_out[4],
                                        dev_out[5]) != 0)
                g_error("batch norm: %s", twc_last_error());
            static const char *const what[] = {"batch norm y", "batch norm mean", "batch norm inv_std",
                                               "batch norm dx", "batch norm dgamma", "batch norm dbeta"};
            for (int i = 0; i < 6; i++) {
                int64_t n = i == 0 || i == 3 ? R * C : C;
                got[i] = down(dev_out[i], (size_t)n * sz);
                /* summation order differs: a few more ulps than one op */
                if (!agree(dt, got[i], want[i], n, 20 * tol(dt), what[i]))
                    g_printerr("  (%s, %lld rows x %lld channels)\n", dt == TWK_FLOAT32 ? "float32" : "float64",
                               (long long)R, (long long)C);
                g_free(got[i]);
                g_free(want[i]);
                twc_free(dev, dev_out[i]);
            }
            twc_free(dev, dx_), twc_free(dev, ddy), twc_free(dev, dg), twc_free(dev, db);
            g_free(x), g_free(dy), g_free(gamma), g_free(beta), g_free(work);
        }
    g_assert_cmpint(failures, ==, 0);
}

/* A steady-state step allocates nothing from the driver. */
static void test_allocator_steady_state(void)
{
    static const size_t sizes[] = {4, 1000, 4096, 100000, 3u << 20, 12345678};
    void *p[G_N_ELEMENTS(sizes)];
    size_t held, in_use;
    uint64_t before, after;
    for (int step = 0; step < 5; step++) {
        if (step == 1)
            twc_memory_stats(dev, &held, &in_use, &before);
        for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++)
            g_assert_nonnull(p[i] = twc_alloc(dev, sizes[i]));
        for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++)
            twc_free(dev, p[i]);
    }
    twc_memory_stats(dev, &held, &in_use, &after);
    g_assert_cmpuint(after, ==, before);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    int n = twc_device_count();
    if (n == 0) {
        printf("SKIP: %s; the CUDA kernel tests need a GPU\n", twc_last_error());
        return 77;
    }
    dev = twc_device_open(0);
    if (!dev)
        g_error("cuda:0: %s", twc_last_error());
    twc_device_info info;
    if (twc_device_info_get(0, &info) == 0)
        printf("# cuda:0 %s, %.1f GiB, compute %d.%d\n", info.name, info.total_memory / 1073741824.0, info.major,
               info.minor);
    const char *blas_message = NULL; /* the CPU references of gemm and conv2d */
    if (twk_blas_init(&blas_message) != 0)
        g_error("OpenBLAS: %s", blas_message);
    rng = g_rand_new_with_seed(16);
    g_test_add_func("/cuda/unary", test_unary);
    g_test_add_func("/cuda/binary", test_binary);
    g_test_add_func("/cuda/cast-copy-where-fill", test_cast_copy_where_fill);
    g_test_add_func("/cuda/transpose-copy", test_transpose_copy);
    g_test_add_func("/cuda/reduce", test_reduce);
    g_test_add_func("/cuda/softmax-xent", test_softmax_xent);
    g_test_add_func("/cuda/moves", test_moves);
    g_test_add_func("/cuda/dropout", test_dropout);
    g_test_add_func("/cuda/optimizers", test_optimizers);
    g_test_add_func("/cuda/gemm", test_gemm);
    g_test_add_func("/cuda/conv-pool", test_conv_pool);
    g_test_add_func("/cuda/batch-norm", test_batch_norm);
    g_test_add_func("/cuda/allocator-steady-state", test_allocator_steady_state);
    int rc = g_test_run();
    twc_device_close(dev);
    g_rand_free(rng);
    return rc;
}
