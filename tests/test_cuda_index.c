/* The CUDA kernels' index arithmetic (kernels/cuda/twc_index.h) and device
 * Philox (twc_philox.h), compiled by gcc and run on the CPU: each map drives
 * a host loop that must give what the CPU kernel or engine op gives, on
 * generated shapes, strides, broadcasts and axes. No GPU or CUDA needed. */
#include <glib.h>
#include <string.h>

#include "cpu/gather_kernels.h"
#include "cuda/twc_philox.h"
#include "internal.h"

#define CASES 300

/* A generated strided operand: shape, strides (permuted axes, a step, some
 * broadcast axes) and the buffer length the strides reach. */
typedef struct {
    int ndim;
    int64_t shape[TWK_MAX_DIMS], strides[TWK_MAX_DIMS], span, numel;
} layout;

static void gen_shape(GRand *r, int max_ndim, int *ndim, int64_t *shape)
{
    *ndim = g_rand_int_range(r, 0, max_ndim + 1);
    for (int d = 0; d < *ndim; d++)
        shape[d] = g_rand_int_range(r, 1, 5);
}

static void gen_strides(GRand *r, layout *l, bool broadcast)
{
    int perm[TWK_MAX_DIMS];
    for (int d = 0; d < l->ndim; d++)
        perm[d] = d;
    for (int d = l->ndim - 1; d > 0; d--) {
        int e = g_rand_int_range(r, 0, d + 1), t = perm[d];
        perm[d] = perm[e];
        perm[e] = t;
    }
    int64_t s = g_rand_int_range(r, 1, 3);
    for (int k = l->ndim - 1; k >= 0; k--) {
        l->strides[perm[k]] = s;
        s *= l->shape[perm[k]];
    }
    l->span = 1;
    l->numel = 1;
    for (int d = 0; d < l->ndim; d++) {
        if (broadcast && g_rand_int_range(r, 0, 4) == 0)
            l->strides[d] = 0;
        l->span += (l->shape[d] - 1) * l->strides[d];
        l->numel *= l->shape[d];
    }
}

static void contiguous_strides(int ndim, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = s;
        s *= shape[d];
    }
}

static double *gen_values(GRand *r, int64_t n)
{
    double *v = g_new(double, n > 0 ? n : 1);
    for (int64_t i = 0; i < n; i++)
        v[i] = g_rand_int_range(r, -50, 51); /* small integers: sums are exact in any order */
    return v;
}

/* out = a + b with broadcasting: twk_binary against a three-operand walk. */
static void test_walk_binary(void)
{
    GRand *r = g_rand_new_with_seed(16);
    for (int c = 0; c < CASES; c++) {
        layout a, b;
        gen_shape(r, 6, &a.ndim, a.shape);
        b.ndim = a.ndim;
        memcpy(b.shape, a.shape, sizeof a.shape);
        gen_strides(r, &a, true);
        gen_strides(r, &b, true);
        int64_t os[TWK_MAX_DIMS];
        contiguous_strides(a.ndim, a.shape, os);
        double *x = gen_values(r, a.span), *y = gen_values(r, b.span);
        double *want = g_new0(double, a.numel), *got = g_new0(double, a.numel);
        twk_binary(TWK_BINARY_sub, TWK_FLOAT64, a.ndim, a.shape, want, os, x, a.strides, y, b.strides);
        twc_walk w;
        twc_walk_init(&w, a.ndim, a.shape, 3, (const int64_t *const[]){os, a.strides, b.strides});
        g_assert_cmpint(w.numel, ==, a.numel);
        for (int64_t i = 0; i < w.numel; i++) {
            int64_t off[3];
            twc_walk_offsets(&w, 3, i, off);
            got[off[0]] = twk_sub_f64(x[off[1]], y[off[2]]);
        }
        g_assert_cmpmem(got, a.numel * 8, want, a.numel * 8);
        g_free(x), g_free(y), g_free(want), g_free(got);
    }
    g_rand_free(r);
}

/* Strided source into a strided (transposed) destination: twk_copy. */
static void test_walk_copy(void)
{
    GRand *r = g_rand_new_with_seed(17);
    for (int c = 0; c < CASES; c++) {
        layout s, d;
        gen_shape(r, 8, &s.ndim, s.shape);
        d.ndim = s.ndim;
        memcpy(d.shape, s.shape, sizeof s.shape);
        gen_strides(r, &s, true);
        gen_strides(r, &d, false); /* every destination element once */
        double *src = gen_values(r, s.span);
        double *want = g_new0(double, d.span), *got = g_new0(double, d.span);
        twk_copy(sizeof(double), s.ndim, s.shape, want, d.strides, src, s.strides);
        twc_walk w;
        twc_walk_init(&w, s.ndim, s.shape, 2, (const int64_t *const[]){d.strides, s.strides});
        for (int64_t i = 0; i < w.numel; i++) {
            int64_t off[2];
            twc_walk_offsets(&w, 2, i, off);
            got[off[0]] = src[off[1]];
        }
        g_assert_cmpmem(got, d.span * 8, want, d.span * 8);
        g_free(src), g_free(want), g_free(got);
    }
    g_rand_free(r);
}

/* Sums over any axes and argmax over one, strided input: twk_reduce. */
static void test_reduce_map(void)
{
    GRand *r = g_rand_new_with_seed(18);
    for (int c = 0; c < CASES; c++) {
        layout x;
        gen_shape(r, 6, &x.ndim, x.shape);
        gen_strides(r, &x, false);
        bool reduce[TWK_MAX_DIMS];
        for (int d = 0; d < x.ndim; d++)
            reduce[d] = g_rand_boolean(r);
        double *v = gen_values(r, x.span);
        twc_reduce_map m;
        twc_reduce_map_init(&m, x.ndim, x.shape, x.strides, reduce);
        double *want = g_new0(double, m.nout), *got = g_new0(double, m.nout);
        twk_reduce(TWK_SUM, TWK_FLOAT64, x.ndim, x.shape, x.strides, v, reduce, want);
        for (int64_t o = 0; o < m.nout; o++) {
            int64_t base = twc_reduce_base(&m, o);
            for (int64_t i = 0; i < m.nreduce; i++)
                got[o] += v[base + twc_reduce_step(&m, i)];
        }
        g_assert_cmpmem(got, m.nout * 8, want, m.nout * 8);
        g_free(want), g_free(got);

        if (x.ndim > 0) {
            int axis = g_rand_int_range(r, 0, x.ndim);
            for (int d = 0; d < x.ndim; d++)
                reduce[d] = d == axis;
            twc_reduce_map_init(&m, x.ndim, x.shape, x.strides, reduce);
            int64_t *iwant = g_new0(int64_t, m.nout), *igot = g_new0(int64_t, m.nout);
            twk_reduce(TWK_ARGMAX, TWK_FLOAT64, x.ndim, x.shape, x.strides, v, reduce, iwant);
            for (int64_t o = 0; o < m.nout; o++) {
                int64_t base = twc_reduce_base(&m, o);
                for (int64_t i = 1; i < m.nreduce; i++)
                    if (v[base + twc_reduce_step(&m, i)] > v[base + twc_reduce_step(&m, igot[o])])
                        igot[o] = i;
            }
            g_assert_cmpmem(igot, m.nout * 8, iwant, m.nout * 8);
            g_free(iwant), g_free(igot);
        }
        g_free(v);
    }
    g_rand_free(r);
}

static tw_tensor *tensor_of(const double *v, int ndim, const int64_t *shape)
{
    return tw_tensor_from_data(v, TW_FLOAT64, ndim, shape);
}

static void assert_tensor_equals(tw_tensor *t, const double *want, int64_t n)
{
    g_assert_nonnull(t);
    g_assert_cmpint(tw_tensor_numel(t), ==, n);
    double *have = g_new(double, n > 0 ? n : 1);
    g_assert_cmpint(tw_tensor_copy_to(t, have, (size_t)n * 8), ==, 0);
    g_assert_cmpmem(have, n * 8, want, n * 8);
    g_free(have);
}

/* Output element -> input offset of a padded, strided input: tw_pad. */
static void test_pad_map(void)
{
    GRand *r = g_rand_new_with_seed(19);
    for (int c = 0; c < CASES; c++) {
        layout x;
        gen_shape(r, 5, &x.ndim, x.shape);
        contiguous_strides(x.ndim, x.shape, x.strides);
        x.numel = 1;
        for (int d = 0; d < x.ndim; d++)
            x.numel *= x.shape[d];
        int64_t pads[2 * TWK_MAX_DIMS];
        for (int d = 0; d < 2 * x.ndim; d++)
            pads[d] = g_rand_int_range(r, 0, 3);
        double *v = gen_values(r, x.numel);
        twc_window_map m;
        twc_pad_map_init(&m, x.ndim, x.shape, x.strides, pads);
        double *got = g_new(double, m.numel);
        for (int64_t i = 0; i < m.numel; i++) {
            int64_t s = twc_pad_source(&m, i);
            got[i] = s < 0 ? -7.0 : v[s];
        }
        tw_scope_begin();
        assert_tensor_equals(tw_pad(tensor_of(v, x.ndim, x.shape), pads, -7.0), got, m.numel);
        tw_scope_end();
        g_free(v), g_free(got);
    }
    g_rand_free(r);
}

/* Output element -> input offset of a tiled, strided input: twk_tile. */
static void test_tile_map(void)
{
    GRand *r = g_rand_new_with_seed(20);
    for (int c = 0; c < CASES; c++) {
        layout x;
        gen_shape(r, 5, &x.ndim, x.shape);
        gen_strides(r, &x, true);
        int64_t mult[TWK_MAX_DIMS];
        for (int d = 0; d < x.ndim; d++)
            mult[d] = g_rand_int_range(r, 1, 4);
        double *v = gen_values(r, x.span);
        twc_window_map m;
        twc_tile_map_init(&m, x.ndim, x.shape, x.strides, mult);
        double *want = g_new(double, m.numel), *got = g_new(double, m.numel);
        twk_tile(sizeof(double), x.ndim, x.shape, v, x.strides, mult, want);
        for (int64_t i = 0; i < m.numel; i++)
            got[i] = v[twc_tile_source(&m, i)];
        g_assert_cmpmem(got, m.numel * 8, want, m.numel * 8);
        g_free(v), g_free(want), g_free(got);
    }
    g_rand_free(r);
}

/* Each input's element -> its place in the output: tw_concat. */
static void test_concat_dest(void)
{
    GRand *r = g_rand_new_with_seed(21);
    for (int c = 0; c < CASES; c++) {
        int ndim, n = g_rand_int_range(r, 1, 5);
        int64_t shape[TWK_MAX_DIMS];
        gen_shape(r, 4, &ndim, shape);
        if (ndim == 0)
            shape[ndim++] = 2;
        int axis = g_rand_int_range(r, 0, ndim);
        int64_t outer = 1, inner = 1, total = 0;
        for (int d = 0; d < axis; d++)
            outer *= shape[d];
        for (int d = axis + 1; d < ndim; d++)
            inner *= shape[d];
        tw_scope_begin();
        tw_tensor *parts[4];
        int64_t sizes[4];
        double *values[4];
        for (int j = 0; j < n; j++) {
            sizes[j] = g_rand_int_range(r, 0, 4);
            total += sizes[j];
        }
        double *got = g_new0(double, outer * total * inner + 1);
        int64_t start = 0;
        for (int j = 0; j < n; j++) {
            int64_t s[TWK_MAX_DIMS];
            memcpy(s, shape, sizeof s);
            s[axis] = sizes[j];
            int64_t numel = outer * sizes[j] * inner;
            values[j] = gen_values(r, numel);
            parts[j] = tensor_of(values[j], ndim, s);
            for (int64_t i = 0; i < numel; i++)
                got[twc_concat_dest(sizes[j], start, total, inner, i)] = values[j][i];
            start += sizes[j];
        }
        assert_tensor_equals(tw_concat(n, parts, axis), got, outer * total * inner);
        tw_scope_end();
        for (int j = 0; j < n; j++)
            g_free(values[j]);
        g_free(got);
    }
    g_rand_free(r);
}

/* Gathered element -> params element: twk_gather. */
static void test_gather_map(void)
{
    GRand *r = g_rand_new_with_seed(22);
    for (int c = 0; c < CASES; c++) {
        int64_t outer = g_rand_int_range(r, 1, 5), axis = g_rand_int_range(r, 1, 6), inner = g_rand_int_range(r, 1, 5);
        int64_t nidx = g_rand_int_range(r, 0, 7), n = outer * nidx * inner;
        int64_t idx[7];
        for (int64_t j = 0; j < nidx; j++)
            idx[j] = g_rand_int_range(r, 0, (int32_t)axis);
        double *params = gen_values(r, outer * axis * inner);
        double *want = g_new0(double, n + 1), *got = g_new0(double, n + 1);
        twk_gather(sizeof(double), outer, axis, inner, params, TWK_INT64, nidx, idx, want);
        for (int64_t i = 0; i < n; i++) {
            int64_t j, k, o = twc_gather_row(nidx, inner, i, &j, &k);
            got[i] = params[twc_gather_source(axis, inner, o, idx[j], k)];
        }
        g_assert_cmpmem(got, n * 8, want, n * 8);
        g_free(params), g_free(want), g_free(got);
    }
    g_rand_free(r);
}

/* Rows along any axis of a contiguous tensor: max along the axis against tw_max. */
static void test_axis_rows(void)
{
    GRand *r = g_rand_new_with_seed(23);
    for (int c = 0; c < CASES; c++) {
        int ndim;
        int64_t shape[TWK_MAX_DIMS];
        gen_shape(r, 5, &ndim, shape);
        if (ndim == 0)
            shape[ndim++] = 3;
        int axis = g_rand_int_range(r, 0, ndim);
        int64_t outer = 1, inner = 1, n = shape[axis], numel = 1;
        for (int d = 0; d < ndim; d++) {
            numel *= shape[d];
            outer *= d < axis ? shape[d] : 1;
            inner *= d > axis ? shape[d] : 1;
        }
        double *v = gen_values(r, numel), *got = g_new(double, outer * inner);
        for (int64_t row = 0; row < outer * inner; row++) {
            got[row] = v[twc_axis_offset(n, inner, row, 0)];
            for (int64_t a = 1; a < n; a++)
                got[row] = MAX(got[row], v[twc_axis_offset(n, inner, row, a)]);
        }
        tw_scope_begin();
        assert_tensor_equals(tw_max(tensor_of(v, ndim, shape), 1, &axis, false), got, outer * inner);
        tw_scope_end();
        g_free(v), g_free(got);
    }
    g_rand_free(r);
}

/* The device Philox is the engine's, and its uniforms are tw_random_uniform's. */
static void test_philox_matches_engine(void)
{
    GRand *r = g_rand_new_with_seed(24);
    for (int c = 0; c < 1000; c++) {
        uint32_t ctr[4], key[2], want[4], got[4];
        for (int k = 0; k < 4; k++)
            ctr[k] = g_rand_int(r);
        key[0] = g_rand_int(r), key[1] = g_rand_int(r);
        tw__philox4x32_10(ctr, key, want);
        twc_philox4x32_10(ctr[0], ctr[1], ctr[2], ctr[3], key[0], key[1], got);
        g_assert_cmpmem(got, sizeof got, want, sizeof want);
    }
    for (int dt = 0; dt < 2; dt++) {
        tw_dtype dtype = dt ? TW_FLOAT64 : TW_FLOAT32;
        uint64_t seed = 0x123456789abcdefULL + (uint64_t)dt;
        tw_rng *rng = tw_rng_new(seed);
        tw_rng_set_state(rng, seed, 1000); /* a draw that starts mid-stream */
        enum { N = 4099 };
        tw_tensor *u = tw_random_uniform(rng, dtype, TW_SHAPE(N), 0.0, 1.0);
        g_assert_nonnull(u);
        for (int64_t i = 0; i < N; i++) {
            double want = tw_tensor_get(u, &i);
            double got = dt ? twc_uniform_f64(seed, 1000 + (uint64_t)i) : (double)twc_uniform_f32(seed, 1000 + (uint64_t)i);
            g_assert_cmpfloat(got, ==, want);
        }
        tw_tensor_unref(u);
        tw_rng_free(rng);
    }
    g_rand_free(r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cuda-index/walk-binary", test_walk_binary);
    g_test_add_func("/cuda-index/walk-copy", test_walk_copy);
    g_test_add_func("/cuda-index/reduce-map", test_reduce_map);
    g_test_add_func("/cuda-index/pad-map", test_pad_map);
    g_test_add_func("/cuda-index/tile-map", test_tile_map);
    g_test_add_func("/cuda-index/concat-dest", test_concat_dest);
    g_test_add_func("/cuda-index/gather-map", test_gather_map);
    g_test_add_func("/cuda-index/axis-rows", test_axis_rows);
    g_test_add_func("/cuda-index/philox", test_philox_matches_engine);
    return g_test_run();
}
