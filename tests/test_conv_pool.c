/* 2-D convolution and pooling (NHWC, HWIO filters): forward values against
 * hand-checked cases and a naive direct loop, TensorFlow's SAME/VALID output
 * shapes, both kernel paths (direct AVX-512 and im2col + gemm) against each
 * other, gradients against finite differences to first and second order,
 * the backprop ops' own backward rules, and the messages of the errors a
 * user can cause. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "cpu/conv_kernels.h"
#include "gradcheck.h"
#include "internal.h"

/* ---- helpers ------------------------------------------------------------------ */

static tw_tensor *make(tw_dtype dtype, int ndim, const int64_t *shape, const double *values)
{
    tw_tensor *t = tw_tensor_empty(dtype, ndim, shape);
    g_assert_nonnull(t);
    for (int64_t i = 0; i < tw_tensor_numel(t); i++) {
        if (dtype == TW_FLOAT32)
            ((float *)tw_tensor_data(t))[i] = (float)values[i];
        else
            ((double *)tw_tensor_data(t))[i] = values[i];
    }
    return t;
}
#define MAKE(dtype, shape, ...) make(dtype, shape, (const double[]){__VA_ARGS__})

/* Element i (row-major) of a contiguous float tensor. */
static double at(const tw_tensor *t, int64_t i)
{
    return tw_tensor_dtype(t) == TW_FLOAT32 ? ((const float *)tw_tensor_data(t))[i]
                                            : ((const double *)tw_tensor_data(t))[i];
}

static void assert_shape(const tw_tensor *t, int64_t n, int64_t h, int64_t w, int64_t c)
{
    if (!t)
        g_error("expected a tensor, got an error: %s", tw_last_error());
    g_assert_cmpint(tw_tensor_ndim(t), ==, 4);
    const int64_t *s = tw_tensor_shape(t);
    if (s[0] != n || s[1] != h || s[2] != w || s[3] != c)
        g_error("shape (%lld, %lld, %lld, %lld), expected (%lld, %lld, %lld, %lld)", (long long)s[0],
                (long long)s[1], (long long)s[2], (long long)s[3], (long long)n, (long long)h, (long long)w,
                (long long)c);
}

/* max |a - b| / max(1, max |b|) over all elements; shapes must agree. */
static double rel_diff(tw_tensor *a, tw_tensor *b)
{
    g_assert_nonnull(a);
    g_assert_nonnull(b);
    g_assert_cmpint(tw_tensor_numel(a), ==, tw_tensor_numel(b));
    tw_tensor *ca = tw_contiguous(a), *cb = tw_contiguous(b);
    double m = 0, scale = 1;
    for (int64_t i = 0; i < tw_tensor_numel(a); i++) {
        m = fmax(m, fabs(at(ca, i) - at(cb, i)));
        scale = fmax(scale, fabs(at(cb, i)));
    }
    return m / scale;
}

static void assert_values(tw_tensor *t, const double *expected, double tol)
{
    g_assert_nonnull(t);
    tw_tensor *c = tw_contiguous(t);
    for (int64_t i = 0; i < tw_tensor_numel(t); i++)
        if (fabs(at(c, i) - expected[i]) > tol)
            g_error("element %lld is %.10g, expected %.10g", (long long)i, at(c, i), expected[i]);
}

/* TensorFlow's output size and padding before, computed independently of the engine. */
static int64_t tf_out(int64_t in, int64_t k, int64_t stride, int64_t dilation, tw_padding padding, int64_t *before)
{
    int64_t eff = (k - 1) * dilation + 1;
    if (padding == TW_PADDING_VALID) {
        *before = 0;
        return (int64_t)ceil((double)(in - eff + 1) / (double)stride);
    }
    int64_t out = (int64_t)ceil((double)in / (double)stride);
    int64_t total = (out - 1) * stride + eff - in;
    *before = total > 0 ? total / 2 : 0;
    return out;
}

static int or1(int v) { return v ? v : 1; }

/* Direct-loop convolution in double: the reference. */
static tw_tensor *naive_conv(tw_tensor *x, tw_tensor *f, const tw_conv2d_params *p)
{
    const int64_t *xs = tw_tensor_shape(x), *fs = tw_tensor_shape(f);
    int sh = or1(p->stride_h), sw = or1(p->stride_w), dh = or1(p->dilation_h), dw = or1(p->dilation_w);
    int64_t pt, pl;
    int64_t oh = tf_out(xs[1], fs[0], sh, dh, p->padding, &pt), ow = tf_out(xs[2], fs[1], sw, dw, p->padding, &pl);
    tw_tensor *y = tw_zeros(TW_FLOAT64, TW_SHAPE(xs[0], oh, ow, fs[3]));
    tw_tensor *cx = tw_contiguous(x), *cf = tw_contiguous(f);
    double *yd = tw_tensor_data(y);
    for (int64_t n = 0; n < xs[0]; n++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++)
                for (int64_t o = 0; o < fs[3]; o++) {
                    double acc = 0;
                    for (int64_t a = 0; a < fs[0]; a++)
                        for (int64_t b = 0; b < fs[1]; b++) {
                            int64_t ih = i * sh - pt + a * dh, iw = j * sw - pl + b * dw;
                            if (ih < 0 || ih >= xs[1] || iw < 0 || iw >= xs[2])
                                continue;
                            for (int64_t c = 0; c < xs[3]; c++)
                                acc += at(cx, ((n * xs[1] + ih) * xs[2] + iw) * xs[3] + c) *
                                       at(cf, ((a * fs[1] + b) * fs[2] + c) * fs[3] + o);
                        }
                    yd[((n * oh + i) * ow + j) * fs[3] + o] = acc;
                }
    return y;
}

/* Direct-loop pooling in double (max ignores padding, average divides by
 * the valid count). */
static tw_tensor *naive_pool(tw_tensor *x, const tw_pool2d_params *p, bool max)
{
    const int64_t *xs = tw_tensor_shape(x);
    int sh = p->stride_h ? p->stride_h : p->pool_h, sw = p->stride_w ? p->stride_w : p->pool_w;
    int64_t pt, pl;
    int64_t oh = tf_out(xs[1], p->pool_h, sh, 1, p->padding, &pt), ow = tf_out(xs[2], p->pool_w, sw, 1, p->padding, &pl);
    tw_tensor *y = tw_zeros(TW_FLOAT64, TW_SHAPE(xs[0], oh, ow, xs[3]));
    tw_tensor *cx = tw_contiguous(x);
    double *yd = tw_tensor_data(y);
    for (int64_t n = 0; n < xs[0]; n++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++)
                for (int64_t c = 0; c < xs[3]; c++) {
                    double acc = max ? -INFINITY : 0;
                    int count = 0;
                    for (int64_t a = 0; a < p->pool_h; a++)
                        for (int64_t b = 0; b < p->pool_w; b++) {
                            int64_t ih = i * sh - pt + a, iw = j * sw - pl + b;
                            if (ih < 0 || ih >= xs[1] || iw < 0 || iw >= xs[2])
                                continue;
                            double v = at(cx, ((n * xs[1] + ih) * xs[2] + iw) * xs[3] + c);
                            acc = max ? fmax(acc, v) : acc + v;
                            count++;
                        }
                    yd[((n * oh + i) * ow + j) * xs[3] + c] = max ? acc : acc / count;
                }
    return y;
}

static const tw_conv2d_params conv_cases[] = {
    {1, 1, 1, 1, TW_PADDING_VALID}, {1, 1, 1, 1, TW_PADDING_SAME}, {2, 2, 1, 1, TW_PADDING_SAME},
    {2, 1, 1, 1, TW_PADDING_VALID}, {1, 1, 2, 2, TW_PADDING_SAME},  {1, 1, 2, 1, TW_PADDING_VALID},
    {2, 3, 2, 1, TW_PADDING_SAME},  {3, 2, 1, 2, TW_PADDING_VALID}, {0, 0, 0, 0, TW_PADDING_SAME},
};

/* ---- forward ------------------------------------------------------------------ */

static void test_conv_hand_checked(void)
{
    tw_scope_begin();
    for (tw_dtype dt = TW_FLOAT32; dt <= TW_FLOAT64; dt++) {
        /* 1..9 in a 3x3 image, a 2x2 filter of ones: window sums. */
        tw_tensor *x = MAKE(dt, TW_SHAPE(1, 3, 3, 1), 1, 2, 3, 4, 5, 6, 7, 8, 9);
        tw_tensor *f = MAKE(dt, TW_SHAPE(2, 2, 1, 1), 1, 1, 1, 1);
        tw_tensor *y = tw_conv2d(x, f, &(tw_conv2d_params){.padding = TW_PADDING_VALID});
        assert_shape(y, 1, 2, 2, 1);
        assert_values(y, (const double[]){12, 16, 24, 28}, 1e-6);
        /* SAME: pad_total 1 per axis, all of it after (pad_before = 1 / 2 = 0). */
        y = tw_conv2d(x, f, &(tw_conv2d_params){.padding = TW_PADDING_SAME});
        assert_shape(y, 1, 3, 3, 1);
        assert_values(y, (const double[]){12, 16, 9, 24, 28, 15, 15, 17, 9}, 1e-6);
        /* Stride 2, SAME: out 2x2, pad_total (2-1)*2+2-3 = 1, again all after. */
        y = tw_conv2d(x, f, &(tw_conv2d_params){.stride_h = 2, .stride_w = 2, .padding = TW_PADDING_SAME});
        assert_shape(y, 1, 2, 2, 1);
        assert_values(y, (const double[]){12, 9, 15, 9}, 1e-6);
        /* Dilation 2, VALID: the four corners. */
        y = tw_conv2d(x, f, &(tw_conv2d_params){.dilation_h = 2, .dilation_w = 2});
        assert_shape(y, 1, 1, 1, 1);
        assert_values(y, (const double[]){1 + 3 + 7 + 9}, 1e-6);
        /* Two channels in, two out: y[o] = sum_c x[c] * f[c][o] (1x1 filter). */
        tw_tensor *x2 = MAKE(dt, TW_SHAPE(1, 1, 2, 2), 1, 2, 3, 4);
        tw_tensor *f2 = MAKE(dt, TW_SHAPE(1, 1, 2, 2), 1, 10, 100, 1000);
        y = tw_conv2d(x2, f2, NULL);
        assert_shape(y, 1, 1, 2, 2);
        assert_values(y, (const double[]){201, 2010, 403, 4030}, 1e-3);
        /* 3x3 SAME, pad 1 on every side: centre tap of each output sees the whole ring. */
        tw_tensor *f3 = tw_ones(dt, TW_SHAPE(3, 3, 1, 1));
        y = tw_conv2d(x, f3, &(tw_conv2d_params){.padding = TW_PADDING_SAME});
        assert_values(y, (const double[]){12, 21, 16, 27, 45, 33, 24, 39, 28}, 1e-6);
    }
    tw_scope_end();
}

static void test_conv_output_shapes(void)
{
    /* TensorFlow: SAME out = ceil(in / stride); VALID out = ceil((in - (k-1)*d) / stride). */
    static const struct {
        int64_t in, k;
        int stride, dilation;
        tw_padding padding;
        int64_t out;
    } cases[] = {
        {7, 3, 2, 1, TW_PADDING_SAME, 4},  {7, 3, 2, 1, TW_PADDING_VALID, 3}, {10, 3, 3, 2, TW_PADDING_VALID, 2},
        {10, 3, 3, 2, TW_PADDING_SAME, 4}, {5, 5, 1, 1, TW_PADDING_VALID, 1}, {5, 5, 1, 1, TW_PADDING_SAME, 5},
        {1, 3, 1, 1, TW_PADDING_SAME, 1},  {8, 1, 3, 1, TW_PADDING_VALID, 3}, {9, 2, 4, 3, TW_PADDING_SAME, 3},
        {28, 3, 1, 1, TW_PADDING_SAME, 28}, {6, 4, 2, 1, TW_PADDING_VALID, 2},
    };
    tw_scope_begin();
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        /* Height follows the case; width is kept at 1x1 so only one axis varies. */
        tw_tensor *x = gc_tensor(1, -1, 1, TW_SHAPE(2, cases[i].in, 3, 2));
        tw_tensor *f = gc_tensor(2, -1, 1, TW_SHAPE(cases[i].k, 1, 2, 3));
        tw_conv2d_params p = {.stride_h = cases[i].stride, .dilation_h = cases[i].dilation,
                              .padding = cases[i].padding};
        tw_tensor *y = tw_conv2d(x, f, &p);
        assert_shape(y, 2, cases[i].out, 3, 3);
        g_assert_cmpfloat(rel_diff(y, naive_conv(x, f, &p)), <, 1e-12);
        /* The same along the width. */
        x = gc_tensor(3, -1, 1, TW_SHAPE(1, 2, cases[i].in, 1));
        f = gc_tensor(4, -1, 1, TW_SHAPE(1, cases[i].k, 1, 2));
        p = (tw_conv2d_params){.stride_w = cases[i].stride, .dilation_w = cases[i].dilation,
                               .padding = cases[i].padding};
        y = tw_conv2d(x, f, &p);
        assert_shape(y, 1, 2, cases[i].out, 2);
        g_assert_cmpfloat(rel_diff(y, naive_conv(x, f, &p)), <, 1e-12);
    }
    tw_scope_end();
}

/* The float32 algorithms a test can ask for: im2col + gemm, and the direct
 * path with Winograd off and on (the direct path reads a padded copy below
 * 16 input channels and the input in place from 16 on). Where the CPU lacks
 * AVX-512 every variant is the gemm path. */
enum { PATH_GEMM, PATH_DIRECT, PATH_WINOGRAD, PATH_COUNT };

static void use_path(int path)
{
    twk_conv2d_set_direct(path != PATH_GEMM);
    twk_conv2d_set_winograd(path == PATH_WINOGRAD);
}

static void restore_paths(void)
{
    twk_conv2d_set_direct(true);
    twk_conv2d_set_winograd(true);
}

/* Every configuration against the naive loop, float64 and float32 on every
 * path; odd channel counts exercise the vector tails. */
static void test_conv_against_naive(void)
{
    static const int64_t shapes[][2] = {{5, 70}, {19, 37}, {33, 16}}; /* in_c, out_c */
    tw_scope_begin();
    for (size_t k = 0; k < G_N_ELEMENTS(shapes); k++) {
        for (size_t i = 0; i < G_N_ELEMENTS(conv_cases); i++) {
            const tw_conv2d_params *p = &conv_cases[i];
            tw_tensor *x = gc_tensor(10 + i, -1, 1, TW_SHAPE(2, 9, 8, shapes[k][0]));
            tw_tensor *f = gc_tensor(20 + i, -1, 1, TW_SHAPE(3, k == 0 ? 2 : 3, shapes[k][0], shapes[k][1]));
            tw_tensor *want = naive_conv(x, f, p);
            g_assert_cmpfloat(rel_diff(tw_conv2d(x, f, p), want), <, 1e-12);
            for (int path = 0; path < PATH_COUNT; path++) {
                use_path(path);
                tw_tensor *y = tw_conv2d(tw_cast(x, TW_FLOAT32), tw_cast(f, TW_FLOAT32), p);
                g_assert_cmpint(tw_tensor_dtype(y), ==, TW_FLOAT32);
                g_assert_cmpfloat(rel_diff(y, want), <, 1e-5);
            }
        }
    }
    restore_paths();
    tw_scope_end();
}

/* Strided (non-contiguous) inputs are read through their strides. */
static void test_conv_strided_inputs(void)
{
    tw_scope_begin();
    tw_tensor *base = gc_tensor(5, -1, 1, TW_SHAPE(2, 6, 7, 4));
    tw_tensor *x = tw_permute(base, TW_AXES(0, 2, 1, 3)); /* (2, 7, 6, 4), strided */
    g_assert_false(tw_tensor_is_contiguous(x));
    tw_tensor *f = gc_tensor(6, -1, 1, TW_SHAPE(3, 3, 4, 3));
    tw_conv2d_params p = {.stride_h = 2, .padding = TW_PADDING_SAME};
    g_assert_cmpfloat(rel_diff(tw_conv2d(x, f, &p), naive_conv(tw_contiguous(x), f, &p)), <, 1e-12);
    tw_scope_end();
}

/* float32 gradients from every path agree with float64 ones: the direct
 * filter gradient, its stride-1 input gradient (a flipped convolution), the
 * Winograd passes, against im2col + gemm + col2im. Odd sizes leave partial
 * Winograd tiles at the edges. */
static void test_conv_gradient_paths(void)
{
    tw_scope_begin();
    for (size_t i = 0; i < G_N_ELEMENTS(conv_cases); i++) {
        const tw_conv2d_params *p = &conv_cases[i];
        tw_tensor *x = gc_tensor(30 + i, -1, 1, TW_SHAPE(3, 9, 9, 19));
        tw_tensor *f = gc_tensor(40 + i, -1, 1, TW_SHAPE(3, 3, 19, 37));
        tw_tensor *ref[2] = {0}, *got[PATH_COUNT][2] = {{0}};
        for (int variant = -1; variant < PATH_COUNT; variant++) {
            if (variant >= 0)
                use_path(variant);
            tw_dtype dt = variant < 0 ? TW_FLOAT64 : TW_FLOAT32;
            tw_tensor *xv = tw_cast(x, dt), *fv = tw_cast(f, dt);
            tw_tape *tape = tw_tape_begin(false);
            tw_tape_watch(tape, xv);
            tw_tape_watch(tape, fv);
            tw_tensor *y = tw_conv2d(xv, fv, p);
            tw_tensor *loss = tw_sum_all(tw_mul(y, y));
            tw_tape_end(tape);
            tw_tensor **out = variant < 0 ? ref : got[variant];
            g_assert_cmpint(tw_tape_gradient(tape, loss, TW_TENSORS(xv, fv), out), ==, 0);
            tw_tape_free(tape);
        }
        for (int k = 0; k < 2; k++)
            for (int path = 0; path < PATH_COUNT; path++)
                g_assert_cmpfloat(rel_diff(got[path][k], ref[k]), <, 2e-5);
    }
    restore_paths();
    tw_scope_end();
}

/* ---- gradients ---------------------------------------------------------------- */

static tw_tensor *conv_fn(tw_tensor *const *in, void *data)
{
    return tw_conv2d(in[0], in[1], data);
}

/* A nonlinearity after the convolution makes the upstream gradient depend
 * on the inputs, so second order exercises every backward rule. */
static tw_tensor *conv_square_fn(tw_tensor *const *in, void *data)
{
    return tw_square(tw_conv2d(in[0], in[1], data));
}

/* Two convolutions in a row. */
static tw_tensor *conv_conv_fn(tw_tensor *const *in, void *data)
{
    tw_tensor *h = tw_tanh(tw_conv2d(in[0], in[1], data));
    return tw_conv2d(h, in[2], &(tw_conv2d_params){.padding = TW_PADDING_SAME});
}

static const tw_conv2d_params grad_cases[] = {
    {2, 2, 1, 1, TW_PADDING_SAME},  {2, 2, 1, 1, TW_PADDING_VALID}, {1, 1, 2, 2, TW_PADDING_SAME},
    {1, 1, 2, 2, TW_PADDING_VALID}, {1, 1, 1, 1, TW_PADDING_SAME},  {2, 1, 1, 2, TW_PADDING_SAME},
};

static void test_conv_gradients(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(grad_cases); i++) {
        tw_scope_begin();
        char name[64];
        g_snprintf(name, sizeof name, "conv2d case %zu", i);
        tw_tensor *x = gc_tensor(50 + i, -1, 1, TW_SHAPE(2, 6, 5, 2));
        tw_tensor *f = gc_tensor(60 + i, -1, 1, TW_SHAPE(3, 2, 2, 3));
        gc_check(name, conv_fn, TW_TENSORS(x, f), (void *)&grad_cases[i]);
        tw_scope_end();
    }
}

static void test_conv_second_order(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(grad_cases); i += 2) {
        tw_scope_begin();
        char name[64];
        g_snprintf(name, sizeof name, "conv2d second order case %zu", i);
        tw_tensor *x = gc_tensor(70 + i, -1, 1, TW_SHAPE(1, 5, 5, 2));
        tw_tensor *f = gc_tensor(80 + i, -1, 1, TW_SHAPE(2, 3, 2, 2));
        gc_check_second(name, conv_square_fn, TW_TENSORS(x, f), (void *)&grad_cases[i]);
        tw_scope_end();
    }
    tw_scope_begin();
    tw_tensor *x = gc_tensor(90, -1, 1, TW_SHAPE(1, 5, 4, 2));
    tw_tensor *f = gc_tensor(91, -1, 1, TW_SHAPE(2, 2, 2, 2));
    tw_tensor *g = gc_tensor(92, -1, 1, TW_SHAPE(2, 2, 2, 1));
    tw_conv2d_params p = {.stride_h = 2, .padding = TW_PADDING_SAME};
    gc_check("conv2d chain", conv_conv_fn, TW_TENSORS(x, f, g), &p);
    gc_check_second("conv2d chain second order", conv_conv_fn, TW_TENSORS(x, f, g), &p);
    tw_scope_end();
}

/* The gradient ops themselves, first order through their own backward rules. */
typedef struct {
    const char *op;
    tw_attrs attrs;
} op_call_data;

static tw_tensor *op2_fn(tw_tensor *const *in, void *data)
{
    op_call_data *d = data;
    return tw_dispatch1(tw_op_lookup(d->op), 2, in, &d->attrs);
}

static void test_conv_backprop_ops(void)
{
    tw_scope_begin();
    /* input (2, 7, 6, 3), filter (3, 2, 3, 2), stride (2, 1), dilation (1, 2), SAME -> output (2, 4, 6, 2) */
    op_call_data in = {"conv2d_backprop_input", {.i = {2, 1, 1, 2, TW_PADDING_SAME, 2, 7, 6, 3}, .ni = 9}};
    op_call_data fil = {"conv2d_backprop_filter", {.i = {2, 1, 1, 2, TW_PADDING_SAME, 3, 2, 3, 2}, .ni = 9}};
    tw_tensor *x = gc_tensor(100, -1, 1, TW_SHAPE(2, 7, 6, 3));
    tw_tensor *f = gc_tensor(101, -1, 1, TW_SHAPE(3, 2, 3, 2));
    tw_tensor *g = gc_tensor(102, -1, 1, TW_SHAPE(2, 4, 6, 2));
    gc_check("conv2d_backprop_input", op2_fn, TW_TENSORS(f, g), &in);
    gc_check("conv2d_backprop_filter", op2_fn, TW_TENSORS(x, g), &fil);
    /* Adjoint identities: <u, B_I(f, g)> = <conv(u, f), g> and <v, B_F(x, g)> = <conv(x, v), g>. */
    tw_conv2d_params p = {2, 1, 1, 2, TW_PADDING_SAME};
    tw_tensor *u = gc_tensor(103, -1, 1, TW_SHAPE(2, 7, 6, 3)), *v = gc_tensor(104, -1, 1, TW_SHAPE(3, 2, 3, 2));
    double lhs = tw_tensor_item(tw_sum_all(tw_mul(u, op2_fn((tw_tensor *const[]){f, g}, &in))));
    double rhs = tw_tensor_item(tw_sum_all(tw_mul(tw_conv2d(u, f, &p), g)));
    g_assert_cmpfloat(fabs(lhs - rhs), <, 1e-10 * fmax(1, fabs(rhs)));
    lhs = tw_tensor_item(tw_sum_all(tw_mul(v, op2_fn((tw_tensor *const[]){x, g}, &fil))));
    rhs = tw_tensor_item(tw_sum_all(tw_mul(tw_conv2d(x, v, &p), g)));
    g_assert_cmpfloat(fabs(lhs - rhs), <, 1e-10 * fmax(1, fabs(rhs)));
    tw_scope_end();
}

/* ---- pooling ------------------------------------------------------------------- */

static void test_pool_hand_checked(void)
{
    tw_scope_begin();
    for (tw_dtype dt = TW_FLOAT32; dt <= TW_FLOAT64; dt++) {
        tw_tensor *x = MAKE(dt, TW_SHAPE(1, 3, 3, 1), 1, 5, 3, 4, 2, 9, 7, 8, 6);
        tw_pool2d_params p = {.pool_h = 2, .pool_w = 2, .padding = TW_PADDING_VALID};
        tw_tensor *y = tw_max_pool2d(x, &p); /* stride 0 reads as 2: one window */
        assert_shape(y, 1, 1, 1, 1);
        assert_values(y, (const double[]){5}, 0);
        p.padding = TW_PADDING_SAME; /* out 2x2, pad_total 1, all after */
        y = tw_max_pool2d(x, &p);
        assert_shape(y, 1, 2, 2, 1);
        assert_values(y, (const double[]){5, 9, 8, 6}, 0);
        y = tw_avg_pool2d(x, &p); /* averages over the valid elements only */
        assert_values(y, (const double[]){3, 6, 7.5, 6}, 1e-6);
        p = (tw_pool2d_params){.pool_h = 3, .pool_w = 3, .stride_h = 1, .stride_w = 1, .padding = TW_PADDING_SAME};
        y = tw_avg_pool2d(x, &p); /* corners average 4 values, edges 6, centre 9 */
        assert_values(y, (const double[]){3, 4, 19.0 / 4, 4.5, 5, 33.0 / 6, 21.0 / 4, 6, 25.0 / 4}, 1e-6);
        /* Max pool never picks a padded zero, even when every value is negative. */
        tw_tensor *neg = tw_neg(x);
        y = tw_max_pool2d(neg, &p);
        assert_values(y, (const double[]){-1, -1, -2, -1, -1, -2, -2, -2, -2}, 0);
    }
    tw_scope_end();
}

static void test_pool_against_naive(void)
{
    static const tw_pool2d_params cases[] = {
        {2, 2, 0, 0, TW_PADDING_VALID}, {2, 2, 0, 0, TW_PADDING_SAME}, {3, 3, 2, 2, TW_PADDING_SAME},
        {3, 2, 1, 2, TW_PADDING_VALID}, {3, 3, 1, 1, TW_PADDING_SAME}, {1, 4, 1, 3, TW_PADDING_SAME},
        {5, 5, 3, 3, TW_PADDING_SAME},  {7, 8, 1, 1, TW_PADDING_VALID},
    };
    tw_scope_begin();
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        tw_tensor *x = gc_tensor(200 + i, -3, 3, TW_SHAPE(2, 7, 8, 67));
        for (int max = 0; max < 2; max++) {
            tw_tensor *want = naive_pool(x, &cases[i], max);
            tw_tensor *(*fn)(tw_tensor *, const tw_pool2d_params *) = max ? tw_max_pool2d : tw_avg_pool2d;
            g_assert_cmpfloat(rel_diff(fn(x, &cases[i]), want), <, 1e-12);
            g_assert_cmpfloat(rel_diff(fn(tw_cast(x, TW_FLOAT32), &cases[i]), want), <, 1e-5);
        }
    }
    tw_scope_end();
}

/* The max-pool gradient against a direct scatter in double: each window's
 * gradient to its first maximum (row-major), summed where windows overlap.
 * The cases include windows that do not overlap and leave elements outside
 * every window (stride above the pool size, a VALID remainder), whose
 * gradient must be exactly 0 although nothing clears the output first, and
 * 67 channels (two blocks of the kernel). The output's memory is first
 * likely dirtied: freed tensors of NaNs of the same size. */
static void test_max_pool_grad_against_naive(void)
{
    static const tw_pool2d_params cases[] = {
        {2, 2, 0, 0, TW_PADDING_VALID}, {2, 2, 3, 3, TW_PADDING_VALID}, {2, 3, 3, 4, TW_PADDING_SAME},
        {3, 3, 3, 3, TW_PADDING_SAME},  {3, 3, 2, 2, TW_PADDING_SAME},  {2, 2, 1, 1, TW_PADDING_VALID},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
        for (int f32 = 0; f32 < 2; f32++) {
            tw_scope_begin();
            const tw_pool2d_params *p = &cases[i];
            tw_tensor *x = gc_tensor(500 + i, -3, 3, TW_SHAPE(2, 7, 9, 67));
            if (f32)
                x = tw_cast(x, TW_FLOAT32);
            tw_scope_begin();
            for (int k = 0; k < 8; k++)
                g_assert_nonnull(tw_full(NAN, tw_tensor_dtype(x), 4, tw_tensor_shape(x)));
            tw_scope_end();
            tw_tape *tape = tw_tape_begin(false);
            tw_tape_watch(tape, x);
            tw_tensor *y = tw_max_pool2d(x, p);
            tw_tensor *u = gc_tensor(600 + i, -1, 1, 4, tw_tensor_shape(y));
            tw_tensor *s = tw_sum_all(tw_mul(y, f32 ? tw_cast(u, TW_FLOAT32) : u));
            tw_tape_end(tape);
            tw_tensor *g;
            g_assert_cmpint(tw_tape_gradient(tape, s, TW_TENSORS(x), &g), ==, 0);
            tw_tape_free(tape);

            const int64_t *xs = tw_tensor_shape(x), *ys = tw_tensor_shape(y);
            int sh = p->stride_h ? p->stride_h : p->pool_h, sw = p->stride_w ? p->stride_w : p->pool_w;
            int64_t pt, pl;
            tf_out(xs[1], p->pool_h, sh, 1, p->padding, &pt);
            tf_out(xs[2], p->pool_w, sw, 1, p->padding, &pl);
            tw_tensor *want = tw_zeros(TW_FLOAT64, 4, xs);
            double *wd = tw_tensor_data(want);
            for (int64_t n = 0; n < xs[0]; n++)
                for (int64_t oi = 0; oi < ys[1]; oi++)
                    for (int64_t oj = 0; oj < ys[2]; oj++)
                        for (int64_t c = 0; c < xs[3]; c++) {
                            int64_t best = -1;
                            for (int64_t a = 0; a < p->pool_h; a++)
                                for (int64_t b = 0; b < p->pool_w; b++) {
                                    int64_t ih = oi * sh - pt + a, iw = oj * sw - pl + b;
                                    if (ih < 0 || ih >= xs[1] || iw < 0 || iw >= xs[2])
                                        continue;
                                    int64_t k = ((n * xs[1] + ih) * xs[2] + iw) * xs[3] + c;
                                    if (best < 0 || at(x, k) > at(x, best))
                                        best = k;
                                }
                            if (best >= 0)
                                wd[best] += at(u, ((n * ys[1] + oi) * ys[2] + oj) * ys[3] + c);
                        }
            for (int64_t k = 0; k < tw_tensor_numel(x); k++)
                if (fabs(at(g, k) - wd[k]) > (f32 ? 1e-6 : 0))
                    g_error("max_pool2d gradient case %zu (%s), element %lld: %g, want %g", i,
                            f32 ? "float32" : "float64", (long long)k, at(g, k), wd[k]);
            tw_scope_end();
        }
}

static tw_tensor *max_pool_fn(tw_tensor *const *in, void *data) { return tw_max_pool2d(in[0], data); }
static tw_tensor *avg_pool_fn(tw_tensor *const *in, void *data) { return tw_avg_pool2d(in[0], data); }
static tw_tensor *max_pool_square_fn(tw_tensor *const *in, void *data)
{
    return tw_square(tw_max_pool2d(in[0], data));
}
static tw_tensor *avg_pool_square_fn(tw_tensor *const *in, void *data)
{
    return tw_square(tw_avg_pool2d(in[0], data));
}

static const tw_pool2d_params pool_grad_cases[] = {
    {2, 2, 0, 0, TW_PADDING_VALID}, {3, 3, 2, 2, TW_PADDING_SAME}, {3, 2, 1, 1, TW_PADDING_SAME},
    {2, 3, 1, 2, TW_PADDING_VALID},
};

static void test_pool_gradients(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(pool_grad_cases); i++) {
        tw_scope_begin();
        /* Distinct values far apart (no near-ties for the finite differences of max). */
        tw_tensor *x = gc_tensor(300 + i, -1, 1, TW_SHAPE(2, 5, 6, 3));
        double *d = tw_tensor_data(x);
        for (int64_t k = 0; k < tw_tensor_numel(x); k++)
            d[k] += 0.05 * (double)((k * 37) % 61);
        char name[64];
        g_snprintf(name, sizeof name, "max_pool2d case %zu", i);
        gc_check(name, max_pool_fn, TW_TENSORS(x), (void *)&pool_grad_cases[i]);
        g_snprintf(name, sizeof name, "avg_pool2d case %zu", i);
        gc_check(name, avg_pool_fn, TW_TENSORS(x), (void *)&pool_grad_cases[i]);
        g_snprintf(name, sizeof name, "max_pool2d second order case %zu", i);
        gc_check_second(name, max_pool_square_fn, TW_TENSORS(x), (void *)&pool_grad_cases[i]);
        g_snprintf(name, sizeof name, "avg_pool2d second order case %zu", i);
        gc_check_second(name, avg_pool_square_fn, TW_TENSORS(x), (void *)&pool_grad_cases[i]);
        tw_scope_end();
    }
}

/* max_pool2d_grad's gradient with respect to grad_output, and
 * max_pool2d_grad_grad's own backward rule, against finite differences. */
typedef struct {
    tw_tensor *x, *y;
    tw_attrs attrs;
    const char *op;
} max_grad_data;

static tw_tensor *max_grad_fn(tw_tensor *const *in, void *data)
{
    max_grad_data *d = data;
    return tw_dispatch1(tw_op_lookup(d->op), 3, (tw_tensor *const[]){d->x, d->y, in[0]}, &d->attrs);
}

static void test_max_pool_grad_ops(void)
{
    tw_scope_begin();
    tw_pool2d_params p = {3, 3, 2, 2, TW_PADDING_SAME};
    tw_tensor *x = gc_tensor(400, -1, 1, TW_SHAPE(1, 5, 5, 2));
    tw_tensor *y = tw_max_pool2d(x, &p);
    max_grad_data d = {x, y, {.i = {3, 3, 2, 2, TW_PADDING_SAME}, .ni = 5}, "max_pool2d_grad"};
    gc_check("max_pool2d_grad", max_grad_fn, TW_TENSORS(gc_tensor(401, -1, 1, TW_SHAPE(1, 3, 3, 2))), &d);
    d.op = "max_pool2d_grad_grad";
    gc_check("max_pool2d_grad_grad", max_grad_fn, TW_TENSORS(gc_tensor(402, -1, 1, TW_SHAPE(1, 5, 5, 2))), &d);
    /* Overlapping windows (stride 1): one input that is the maximum of
     * several windows collects all their gradients. */
    tw_tensor *x1 = MAKE(TW_FLOAT64, TW_SHAPE(1, 3, 3, 1), 0, 0, 0, 0, 9, 0, 0, 0, 0);
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, x1);
    tw_tensor *s = tw_sum_all(tw_max_pool2d(x1, &(tw_pool2d_params){2, 2, 1, 1, TW_PADDING_VALID}));
    tw_tape_end(tape);
    tw_tensor *g;
    g_assert_cmpint(tw_tape_gradient(tape, s, TW_TENSORS(x1), &g), ==, 0);
    tw_tape_free(tape);
    assert_values(g, (const double[]){0, 0, 0, 0, 4, 0, 0, 0, 0}, 0);
    /* Ties: the first maximum in row-major window order takes the gradient
     * (TensorFlow's and PyTorch's CPU kernels). */
    tw_tensor *x2 = MAKE(TW_FLOAT64, TW_SHAPE(1, 2, 3, 1), 1, 2, 2, 2, 2, 1);
    tape = tw_tape_begin(false);
    tw_tape_watch(tape, x2);
    s = tw_sum_all(tw_max_pool2d(x2, &(tw_pool2d_params){2, 2, 1, 1, TW_PADDING_VALID}));
    tw_tape_end(tape);
    g_assert_cmpint(tw_tape_gradient(tape, s, TW_TENSORS(x2), &g), ==, 0);
    tw_tape_free(tape);
    assert_values(g, (const double[]){0, 2, 0, 0, 0, 0}, 0);
    tw_scope_end();
}

/* ---- errors -------------------------------------------------------------------- */

static void expect_error(tw_tensor *result, const char *const *fragments)
{
    g_assert_null(result);
    for (const char *const *f = fragments; *f; f++)
        if (!strstr(tw_last_error(), *f))
            g_error("error message \"%s\" lacks \"%s\"", tw_last_error(), *f);
    tw_error_clear();
}
#define EXPECT_ERROR(expr, ...) expect_error((expr), (const char *const[]){__VA_ARGS__, NULL})

static void test_conv_errors(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_zeros(TW_FLOAT32, TW_SHAPE(1, 5, 5, 3));
    tw_tensor *f = tw_zeros(TW_FLOAT32, TW_SHAPE(3, 3, 4, 8));
    tw_conv2d_params same = {.padding = TW_PADDING_SAME};
    EXPECT_ERROR(tw_conv2d(x, f, &same),
                 "conv2d: input channels 3 do not match filter in_channels 4: input (1, 5, 5, 3), filter (3, 3, 4, 8)");
    EXPECT_ERROR(tw_conv2d(tw_zeros(TW_FLOAT32, TW_SHAPE(5, 5, 3)), f, &same), "conv2d", "input", "rank 4",
                 "(5, 5, 3)");
    EXPECT_ERROR(tw_conv2d(x, tw_zeros(TW_FLOAT32, TW_SHAPE(3, 3, 3)), &same), "conv2d", "filter", "rank 4",
                 "(3, 3, 3)");
    tw_tensor *f3 = tw_zeros(TW_FLOAT32, TW_SHAPE(3, 3, 3, 8));
    EXPECT_ERROR(tw_conv2d(tw_zeros(TW_INT32, TW_SHAPE(1, 5, 5, 3)), tw_zeros(TW_INT32, TW_SHAPE(3, 3, 3, 8)), &same),
                 "conv2d", "float32 or float64", "int32", "(1, 5, 5, 3)");
    EXPECT_ERROR(tw_conv2d(x, tw_zeros(TW_FLOAT64, TW_SHAPE(3, 3, 3, 8)), &same), "conv2d: dtypes differ",
                 "float32 (1, 5, 5, 3)", "float64 (3, 3, 3, 8)");
    EXPECT_ERROR(tw_conv2d(x, tw_zeros(TW_FLOAT32, TW_SHAPE(6, 2, 3, 8)), &(tw_conv2d_params){0}), "conv2d",
                 "larger than the input", "VALID", "(1, 5, 5, 3)", "(6, 2, 3, 8)");
    EXPECT_ERROR(tw_conv2d(x, f3, &(tw_conv2d_params){.dilation_h = 3}), "conv2d", "larger than the input",
                 "dilation", "(1, 5, 5, 3)", "(3, 3, 3, 8)");
    EXPECT_ERROR(tw_conv2d(x, f3, &(tw_conv2d_params){.stride_h = -1, .stride_w = 1}), "conv2d",
                 "strides must be positive", "(-1, 1)", "(1, 5, 5, 3)", "(3, 3, 3, 8)");
    EXPECT_ERROR(tw_conv2d(x, f3, &(tw_conv2d_params){.dilation_w = -2}), "conv2d", "dilations must be positive",
                 "(1, 5, 5, 3)");
    EXPECT_ERROR(tw_conv2d(x, f3, &(tw_conv2d_params){.padding = (tw_padding)7}), "conv2d", "padding", "7");
    EXPECT_ERROR(tw_conv2d(x, tw_zeros(TW_FLOAT32, TW_SHAPE(0, 3, 3, 8)), &same), "conv2d", "kernel size",
                 "(0, 3, 3, 8)");
    /* A failed input propagates its own message. */
    tw_tensor *bad = tw_conv2d(x, f, &same);
    g_assert_null(bad);
    char first[1024];
    g_strlcpy(first, tw_last_error(), sizeof first);
    g_assert_null(tw_conv2d(bad, f3, &same));
    g_assert_cmpstr(tw_last_error(), ==, first);
    tw_error_clear();
    /* The gradient ops check the gradient's shape against the convolution. */
    tw_attrs a = {.i = {1, 1, 1, 1, TW_PADDING_SAME, 1, 5, 5, 3}, .ni = 9};
    EXPECT_ERROR(tw_dispatch1(tw_op_lookup("conv2d_backprop_input"), 2,
                              (tw_tensor *const[]){f3, tw_zeros(TW_FLOAT32, TW_SHAPE(1, 4, 5, 8))}, &a),
                 "conv2d_backprop_input", "grad_output (1, 4, 5, 8)", "(1, 5, 5, 8)");
    tw_attrs b = {.i = {1, 1, 1, 1, TW_PADDING_SAME, 3, 3, 3, 8}, .ni = 9};
    EXPECT_ERROR(tw_dispatch1(tw_op_lookup("conv2d_backprop_filter"), 2,
                              (tw_tensor *const[]){x, tw_zeros(TW_FLOAT32, TW_SHAPE(1, 5, 5, 7))}, &b),
                 "conv2d_backprop_filter", "grad_output (1, 5, 5, 7)", "(1, 5, 5, 8)");
    /* Nothing was left pending by the failures above. */
    g_assert_nonnull(tw_conv2d(x, f3, &same));
    tw_scope_end();
}

static void test_pool_errors(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_zeros(TW_FLOAT32, TW_SHAPE(1, 2, 2, 1));
    EXPECT_ERROR(tw_max_pool2d(x, &(tw_pool2d_params){3, 3, 1, 1, TW_PADDING_VALID}), "max_pool2d",
                 "pool (3x3) is larger than the input (2x2)", "VALID", "(1, 2, 2, 1)");
    EXPECT_ERROR(tw_avg_pool2d(x, &(tw_pool2d_params){2, 3, 0, 0, TW_PADDING_VALID}), "avg_pool2d",
                 "larger than the input", "(1, 2, 2, 1)");
    EXPECT_ERROR(tw_max_pool2d(x, &(tw_pool2d_params){2, 2, -1, 1, TW_PADDING_SAME}), "max_pool2d",
                 "strides must be positive", "(-1, 1)", "(1, 2, 2, 1)");
    EXPECT_ERROR(tw_avg_pool2d(x, &(tw_pool2d_params){0, 2, 1, 1, TW_PADDING_SAME}), "avg_pool2d",
                 "pool size must be positive", "(1, 2, 2, 1)");
    EXPECT_ERROR(tw_max_pool2d(tw_zeros(TW_FLOAT32, TW_SHAPE(2, 2, 1)), &(tw_pool2d_params){1, 1, 1, 1, 0}),
                 "max_pool2d", "rank 4", "(2, 2, 1)");
    EXPECT_ERROR(tw_avg_pool2d(tw_zeros(TW_INT64, TW_SHAPE(1, 2, 2, 1)), &(tw_pool2d_params){1, 1, 1, 1, 0}),
                 "avg_pool2d", "float32 or float64", "int64", "(1, 2, 2, 1)");
    EXPECT_ERROR(tw_max_pool2d(x, NULL), "max_pool2d", "params");
    tw_scope_end();
}

/* Zero-sized batches and channels give empty or zero results, not crashes. */
static void test_empty(void)
{
    tw_scope_begin();
    tw_conv2d_params same = {.padding = TW_PADDING_SAME};
    tw_tensor *y = tw_conv2d(tw_zeros(TW_FLOAT32, TW_SHAPE(0, 5, 5, 3)), tw_ones(TW_FLOAT32, TW_SHAPE(3, 3, 3, 4)),
                             &same);
    assert_shape(y, 0, 5, 5, 4);
    y = tw_conv2d(tw_zeros(TW_FLOAT64, TW_SHAPE(1, 4, 4, 0)), tw_ones(TW_FLOAT64, TW_SHAPE(3, 3, 0, 2)), &same);
    assert_shape(y, 1, 4, 4, 2);
    assert_values(y, (const double[32]){0}, 0);
    y = tw_max_pool2d(tw_zeros(TW_FLOAT32, TW_SHAPE(0, 4, 4, 2)), &(tw_pool2d_params){2, 2, 0, 0, 0});
    assert_shape(y, 0, 2, 2, 2);
    tw_scope_end();
}

static void test_registered(void)
{
    static const char *const names[] = {"conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "max_pool2d",
                                        "max_pool2d_grad", "max_pool2d_grad_grad", "avg_pool2d", "avg_pool2d_grad"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        const tw_op_def *op = tw_op_lookup(names[i]);
        g_assert_nonnull(op);
        g_assert_cmpstr(op->name, ==, names[i]);
        g_assert_nonnull(op->backward);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/conv/hand-checked", test_conv_hand_checked);
    g_test_add_func("/conv/output-shapes", test_conv_output_shapes);
    g_test_add_func("/conv/against-naive", test_conv_against_naive);
    g_test_add_func("/conv/strided-inputs", test_conv_strided_inputs);
    g_test_add_func("/conv/gradient-paths", test_conv_gradient_paths);
    g_test_add_func("/conv/gradients", test_conv_gradients);
    g_test_add_func("/conv/second-order", test_conv_second_order);
    g_test_add_func("/conv/backprop-ops", test_conv_backprop_ops);
    g_test_add_func("/conv/errors", test_conv_errors);
    g_test_add_func("/pool/hand-checked", test_pool_hand_checked);
    g_test_add_func("/pool/against-naive", test_pool_against_naive);
    g_test_add_func("/pool/gradients", test_pool_gradients);
    g_test_add_func("/pool/max-grad-ops", test_max_pool_grad_ops);
    g_test_add_func("/pool/max-grad-against-naive", test_max_pool_grad_against_naive);
    g_test_add_func("/pool/errors", test_pool_errors);
    g_test_add_func("/conv-pool/empty", test_empty);
    g_test_add_func("/conv-pool/registered", test_registered);
    int rc = g_test_run();
    tw__pool_trim();
    return rc;
}
