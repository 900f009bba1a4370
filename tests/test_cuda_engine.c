/* The engine on CUDA through the plugin (libtw-cuda.so, engine/backend_cuda.c),
 * through the public API only, linked with the shared libtw-engine.so as twb
 * is: every elementwise op of the formula table, the reductions and matmul
 * run on cuda:0 must give the CPU's values (float32 within a few ulps, the
 * device's libm differs; integers exactly), and an MLP and a small CNN
 * trained 200 steps on cuda:0 must give the CPU's losses within float32
 * tolerance; so must the fused batch_norm op, its gradient and a CNN with
 * BatchNormalization. Without a
 * device it prints the engine's reason and exits 77 (skipped). meson points
 * TW_CUDA_PLUGIN at the built plugin. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "elementwise.h"
#include "tw/engine.h"
#include "tw/model.h"

#define CUDA0 ((tw_device){TW_DEVICE_CUDA, 0})

static GRand *rng;

static tw_tensor *random_tensor(tw_dtype dtype, int ndim, const int64_t *shape, double lo, double hi)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    double *v = g_new(double, n + 1);
    for (int64_t i = 0; i < n; i++) {
        v[i] = g_rand_double_range(rng, lo, hi);
        if (dtype != TW_FLOAT32 && dtype != TW_FLOAT64)
            v[i] = floor(v[i]);
    }
    tw_tensor *t = tw_cast(tw_tensor_from_data(v, TW_FLOAT64, ndim, shape), dtype); /* the open scope owns both */
    g_free(v);
    return t;
}

static tw_tensor *on_cuda(tw_tensor *t)
{
    tw_tensor *d = tw_tensor_to(t, CUDA0);
    if (!d)
        g_error("copy to cuda:0: %s", tw_last_error());
    return d;
}

/* got (on cuda:0) against want (CPU): same shape and dtype, values within
 * rtol. Called inside a scope, which owns what it makes. */
static void check(tw_tensor *got, tw_tensor *want, double rtol, const char *what)
{
    if (!got)
        g_error("%s on cuda:0: %s", what, tw_last_error());
    g_assert_nonnull(want);
    g_assert_cmpint(tw_tensor_device(got).kind, ==, TW_DEVICE_CUDA);
    tw_tensor *host = tw_tensor_to(got, TW_CPU);
    g_assert_nonnull(host);
    g_assert_cmpint(tw_tensor_dtype(host), ==, tw_tensor_dtype(want));
    g_assert_cmpint(tw_tensor_numel(host), ==, tw_tensor_numel(want));
    int64_t n = tw_tensor_numel(want);
    double *a = g_new(double, n + 1), *b = g_new(double, n + 1);
    tw_tensor *ha = tw_cast(host, TW_FLOAT64), *hb = tw_cast(want, TW_FLOAT64);
    g_assert_cmpint(tw_tensor_copy_to(ha, a, (size_t)n * 8), ==, 0);
    g_assert_cmpint(tw_tensor_copy_to(hb, b, (size_t)n * 8), ==, 0);
    for (int64_t i = 0; i < n; i++)
        if (!((isnan(a[i]) && isnan(b[i])) || a[i] == b[i] ||
              fabs(a[i] - b[i]) <= rtol * fmax(1.0, fmax(fabs(a[i]), fabs(b[i])))))
            g_error("%s: element %lld: cuda:0 %.17g, cpu %.17g", what, (long long)i, a[i], b[i]);
    g_free(a), g_free(b);
}

static double tolerance(tw_dtype dtype)
{
    return dtype == TW_FLOAT32 ? 1e-5 : dtype == TW_FLOAT64 ? 1e-12 : 0;
}

static const tw_dtype FLOATS[] = {TW_FLOAT32, TW_FLOAT64};
static const tw_dtype NUMBERS[] = {TW_FLOAT32, TW_FLOAT64, TW_INT32, TW_INT64};

/* Unary ops without attributes, each dtype they take, broadcast-free shapes and a transposed view. */
#define UNARY_CASE_NUMBER(name) run_unary(#name, tw_##name, NUMBERS, G_N_ELEMENTS(NUMBERS));
#define UNARY_CASE_FLOAT(name) run_unary(#name, tw_##name, FLOATS, G_N_ELEMENTS(FLOATS));
#define UNARY_CASE_BOOL(name)
#define UNARY_ROW(name, takes, nattrs, f, i) UNARY_ROW_##nattrs(name, takes)
#define UNARY_ROW_0(name, takes) UNARY_CASE_##takes(name)
#define UNARY_ROW_1(name, takes)
#define UNARY_ROW_2(name, takes)

static void run_unary(const char *name, tw_tensor *(*fn)(tw_tensor *), const tw_dtype *dtypes, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        tw_scope_begin();
        tw_tensor *x = random_tensor(dtypes[k], TW_SHAPE(5, 7, 3), -3, 3);
        tw_tensor *xt = tw_transpose(x);
        check(fn(on_cuda(xt)), fn(xt), 4 * tolerance(dtypes[k]), name);
        tw_scope_end();
    }
}

static void test_unary(void)
{
    TWK_UNARY_OPS(UNARY_ROW)
}

#define BINARY_CASE_ARITH(name) run_binary(#name, tw_##name, NUMBERS, G_N_ELEMENTS(NUMBERS));
#define BINARY_CASE_FLOAT(name) run_binary(#name, tw_##name, FLOATS, G_N_ELEMENTS(FLOATS));
#define BINARY_CASE_COMPARE(name) run_binary(#name, tw_##name, NUMBERS, G_N_ELEMENTS(NUMBERS));
#define BINARY_CASE_LOGICAL(name)
#define BINARY_ROW(name, takes, f, i) BINARY_CASE_##takes(name)

static void run_binary(const char *name, tw_tensor *(*fn)(tw_tensor *, tw_tensor *), const tw_dtype *dtypes, size_t n)
{
    bool int_divide = !strcmp(name, "div") || !strcmp(name, "floormod");
    for (size_t k = 0; k < n; k++) {
        if (int_divide && dtypes[k] != TW_FLOAT32 && dtypes[k] != TW_FLOAT64)
            continue; /* refused on cuda:0 (supports_op), see engine/backend_cuda.c */
        tw_scope_begin();
        tw_tensor *a = random_tensor(dtypes[k], TW_SHAPE(4, 1, 6), -5, 5);
        tw_tensor *b = random_tensor(dtypes[k], TW_SHAPE(3, 6), !strcmp(name, "pow") ? 0.5 : 1, 5);
        check(fn(on_cuda(a), on_cuda(b)), fn(a, b), 4 * tolerance(dtypes[k]), name);
        tw_scope_end();
    }
}

static void test_binary(void)
{
    TWK_BINARY_OPS(BINARY_ROW)
}

static void test_reductions_matmul(void)
{
    for (size_t k = 0; k < G_N_ELEMENTS(NUMBERS); k++) {
        tw_dtype dt = NUMBERS[k];
        tw_scope_begin();
        tw_tensor *x = random_tensor(dt, TW_SHAPE(6, 50, 9), -20, 20), *dx = on_cuda(x);
        check(tw_sum(dx, TW_AXES(1), false), tw_sum(x, TW_AXES(1), false), 10 * tolerance(dt), "sum");
        check(tw_max(dx, TW_AXES(0, 2), true), tw_max(x, TW_AXES(0, 2), true), 0, "max");
        check(tw_min(dx, TW_AXES(2), false), tw_min(x, TW_AXES(2), false), 0, "min");
        check(tw_argmax(dx, 1), tw_argmax(x, 1), 0, "argmax");
        tw_scope_end();
    }
    for (size_t k = 0; k < G_N_ELEMENTS(FLOATS); k++) {
        tw_scope_begin();
        tw_tensor *a = random_tensor(FLOATS[k], TW_SHAPE(3, 2, 17, 9), -1, 1);
        tw_tensor *b = random_tensor(FLOATS[k], TW_SHAPE(2, 9, 11), -1, 1);
        check(tw_matmul(on_cuda(a), on_cuda(b)), tw_matmul(a, b), 10 * tolerance(FLOATS[k]), "matmul");
        tw_tensor *bt = tw_transpose(random_tensor(FLOATS[k], TW_SHAPE(11, 9), -1, 1));
        check(tw_matmul(on_cuda(a), on_cuda(bt)), tw_matmul(a, bt), 10 * tolerance(FLOATS[k]), "matmul (transposed)");
        tw_scope_end();
    }
}

/* The fused batch_norm (batch_norm.cu) and its gradient, batch_norm_grad,
 * through the tape: y, mean, inv_std and the gradients of x, gamma and beta.
 * Both sum in double, in different orders: float32 within 1e-4. */
static void test_batch_norm(void)
{
    for (size_t k = 0; k < G_N_ELEMENTS(FLOATS); k++) {
        tw_dtype dt = FLOATS[k];
        double tol = dt == TW_FLOAT32 ? 1e-4 : 1e-10;
        tw_scope_begin();
        tw_tensor *in[4] = {random_tensor(dt, TW_SHAPE(4, 5, 6, 8), -3, 5), random_tensor(dt, TW_SHAPE(8), 0.5, 2),
                            random_tensor(dt, TW_SHAPE(8), -1, 1), random_tensor(dt, TW_SHAPE(4, 5, 6, 8), -1, 1)};
        tw_tensor *out[2][6];
        for (int pass = 0; pass < 2; pass++) {
            tw_tensor *x = pass ? on_cuda(in[0]) : in[0], *g = pass ? on_cuda(in[1]) : in[1];
            tw_tensor *b = pass ? on_cuda(in[2]) : in[2], *w = pass ? on_cuda(in[3]) : in[3];
            tw_tape *tape = tw_tape_begin(false);
            tw_tape_watch(tape, x);
            tw_tape_watch(tape, g);
            tw_tape_watch(tape, b);
            tw_tensor **o = out[pass];
            if (tw_batch_norm(x, g, b, 0.001, &o[0], &o[1], &o[2]) < 0)
                g_error("batch_norm on %s: %s", pass ? "cuda:0" : "cpu", tw_last_error());
            tw_tensor *loss = tw_sum_all(tw_mul(o[0], w));
            tw_tape_end(tape);
            g_assert_cmpint(tw_tape_gradient(tape, loss, 3, (tw_tensor *const[]){x, g, b}, o + 3), ==, 0);
            tw_tape_free(tape);
        }
        static const char *const what[] = {"batch_norm y", "batch_norm mean", "batch_norm inv_std",
                                           "batch_norm_grad dx", "batch_norm_grad dgamma", "batch_norm_grad dbeta"};
        for (int i = 0; i < 6; i++)
            check(out[1][i], out[0][i], tol, what[i]);
        tw_scope_end();
    }
}

/* A model trained 200 steps (20 epochs of 10 batches of 32) with Adam on
 * the same data from the same seeds: the CPU's losses. */
typedef tw_model *(*model_fn)(void);

static tw_model *mlp(void)
{
    tw_model *m = tw_sequential_new("mlp");
    tw_model_add(m, tw_input_layer(&(tw_shape){2, {-1, 8}}));
    tw_model_add(m, tw_dense(32, "relu"));
    tw_model_add(m, tw_dense(2, NULL));
    return m;
}

static tw_model *cnn(void)
{
    tw_model *m = tw_sequential_new("cnn");
    tw_model_add(m, tw_input_layer(&(tw_shape){4, {-1, 8, 8, 1}}));
    tw_model_add(m, tw_conv2d_layer(4, 3, "relu"));
    tw_model_add(m, tw_max_pooling2d_layer(2));
    tw_model_add(m, tw_flatten_layer());
    tw_model_add(m, tw_dense(2, NULL));
    return m;
}

/* The CNN with a BatchNormalization after the convolution: the fused op. */
static tw_model *cnn_bn(void)
{
    tw_model *m = tw_sequential_new("cnn_bn");
    tw_model_add(m, tw_input_layer(&(tw_shape){4, {-1, 8, 8, 1}}));
    tw_model_add(m, tw_conv2d_layer(4, 3, NULL));
    tw_model_add(m, tw_layer_new("BatchNormalization", NULL));
    tw_model_add(m, tw_layer_new("ReLU", NULL));
    tw_model_add(m, tw_max_pooling2d_layer(2));
    tw_model_add(m, tw_flatten_layer());
    tw_model_add(m, tw_dense(2, NULL));
    return m;
}

static void train(tw_device device, model_fn build, int ndim, const int64_t *x_shape, int epochs, double *losses)
{
    g_assert_cmpint(tw_set_default_device(device), ==, 0);
    tw_scope_begin();
    tw_rng *r = tw_rng_new(4);
    tw_tensor *x = tw_random_normal(r, TW_FLOAT32, ndim, x_shape, 0, 1);
    int axes[TW_MAX_DIMS];
    for (int d = 1; d < ndim; d++)
        axes[d - 1] = d;
    tw_tensor *y = tw_cast(tw_greater(tw_sum(x, ndim - 1, axes, false), tw_scalar(0)), TW_INT32);
    tw_model *m = build();
    tw_loss loss = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    loss.from_logits = true;
    g_assert_cmpint(tw_model_compile(m, tw_optimizer_new_named("adam", 0.01), &loss, 0, NULL), ==, 0);
    tw_fit_options opt = tw_fit_options_default();
    opt.epochs = epochs;
    opt.seed = 2;
    opt.batch_size = 32;
    tw_history *h = tw_model_fit(m, x, y, &opt);
    if (!h)
        g_error("fit on %s: %s", device.kind == TW_DEVICE_CPU ? "cpu" : "cuda:0", tw_last_error());
    for (int e = 0; e < epochs; e++)
        losses[e] = tw_logs_get(&h->epoch_logs[e], "loss");
    tw_history_free(h);
    tw_layer_unref(m);
    tw_rng_free(r);
    tw_scope_end();
    tw_set_default_device(TW_CPU);
}

static void same_losses(model_fn build, int ndim, const int64_t *x_shape)
{
    enum { EPOCHS = 20 };
    double cpu[EPOCHS], cuda[EPOCHS];
    train(TW_CPU, build, ndim, x_shape, EPOCHS, cpu);
    train(CUDA0, build, ndim, x_shape, EPOCHS, cuda);
    for (int e = 0; e < EPOCHS; e++)
        if (!(fabs(cuda[e] - cpu[e]) <= 1e-4 * fmax(1.0, fabs(cpu[e]))))
            g_error("epoch %d: loss %.9g on cuda:0, %.9g on the CPU", e + 1, cuda[e], cpu[e]);
    g_assert_cmpfloat(cpu[EPOCHS - 1], <, cpu[0]);
}

static void test_mlp_200_steps(void)
{
    same_losses(mlp, TW_SHAPE(320, 8));
}

static void test_cnn_200_steps(void)
{
    same_losses(cnn, TW_SHAPE(320, 8, 8, 1));
}

static void test_cnn_batchnorm_200_steps(void)
{
    same_losses(cnn_bn, TW_SHAPE(320, 8, 8, 1));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (tw_device_count(TW_DEVICE_CUDA) == 0) {
        tw_set_default_device(CUDA0); /* for the engine's reason */
        printf("SKIP: %s\n", tw_last_error());
        return 77;
    }
    rng = g_rand_new_with_seed(16);
    g_test_add_func("/cuda-engine/unary", test_unary);
    g_test_add_func("/cuda-engine/binary", test_binary);
    g_test_add_func("/cuda-engine/reductions-matmul", test_reductions_matmul);
    g_test_add_func("/cuda-engine/mlp-200-steps", test_mlp_200_steps);
    g_test_add_func("/cuda-engine/cnn-200-steps", test_cnn_200_steps);
    g_test_add_func("/cuda-engine/batch-norm", test_batch_norm);
    g_test_add_func("/cuda-engine/cnn-batchnorm-200-steps", test_cnn_batchnorm_200_steps);
    int rc = g_test_run();
    g_rand_free(rng);
    return rc;
}
