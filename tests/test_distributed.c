/* Data-parallel training (tw/distributed.h), run on two ranks by
 * tests/mpirun-test: 2 ranks x batch 32 against 1 rank x batch 64 on the
 * same seed over 20 steps of an MLP and a CNN, in float64 and float32 (and
 * the MLP with a last batch of 3 examples split unevenly), and of a CNN
 * with BatchNormalization, whose batch statistics are synchronised (its
 * moving statistics are among the weights compared); the
 * weights equal bit for bit across ranks after every step; allreduce_mean
 * against hand values. Every rank checks; one failing fails the test. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include <tw/distributed.h>
#include <tw/engine.h>
#include <tw/model.h>

#define N 1280 /* 20 steps of 64 (two ranks x 32) */
#define N_UNEVEN 1283 /* 20 steps of 64, then 3 examples split 1 + 2 */
#define MAX_STEPS 32

static int failures;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "rank %d: %s:%d: ", tw_distributed_rank(), __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fprintf(stderr, "\n");                                                         \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

static void check_allreduce(void)
{
    int r = tw_distributed_rank(), size = tw_distributed_size();
    tw_scope_begin();
    double v[3] = {r + 1.0, 10.0 * r, -0.5};
    tw_tensor *mean = tw_allreduce_mean(tw_tensor_from_data(v, TW_FLOAT64, 1, (int64_t[]){3}));
    CHECK(mean, "allreduce_mean: %s", tw_last_error());
    /* ranks 0..size-1: mean of r+1 is (size+1)/2, of 10r is 5(size-1). */
    if (mean) {
        CHECK(tw_tensor_get(mean, (int64_t[]){0}) == (size + 1) / 2.0, "mean of r+1");
        CHECK(tw_tensor_get(mean, (int64_t[]){1}) == 5.0 * (size - 1), "mean of 10r");
        CHECK(tw_tensor_get(mean, (int64_t[]){2}) == -0.5, "mean of a constant");
    }
    CHECK(!tw_allreduce_mean(tw_zeros(TW_INT32, 1, (int64_t[]){2})), "an int32 tensor is refused");
    tw_scope_end();
}

/* SGD at rate 1 through a data-parallel optimizer with 256-byte buckets:
 * a float64 gradient of 100 elements spans four buckets, a float32 one
 * follows in buckets of its own; each weight must move by minus the mean of
 * the ranks' gradients, rank r's being (r + 1) * (i + 1). */
static void check_buckets(void)
{
    int size = tw_distributed_size();
    tw_scope_begin();
    double w64[100], g64[100];
    float w32[7], g32[7];
    for (int i = 0; i < 100; i++) {
        w64[i] = i;
        g64[i] = (tw_distributed_rank() + 1.0) * (i + 1);
    }
    for (int i = 0; i < 7; i++) {
        w32[i] = (float)i;
        g32[i] = (float)((tw_distributed_rank() + 1.0) * (i + 1));
    }
    tw_tensor *vars[2] = {tw_variable(tw_tensor_from_data(w64, TW_FLOAT64, 1, (int64_t[]){100}), "w64", true),
                          tw_variable(tw_tensor_from_data(w32, TW_FLOAT32, 1, (int64_t[]){7}), "w32", true)};
    tw_tensor *grads[2] = {tw_tensor_from_data(g64, TW_FLOAT64, 1, (int64_t[]){100}),
                           tw_tensor_from_data(g32, TW_FLOAT32, 1, (int64_t[]){7})};
    tw_optimizer *opt = tw_distributed_optimizer(tw_optimizer_new_named("sgd", 1.0), 256);
    CHECK(tw_optimizer_apply_gradients(opt, 2, vars, grads) == 0, "apply: %s", tw_last_error());
    double mean_factor = (size + 1) / 2.0; /* mean of r + 1 */
    for (int i = 0; i < 100; i++)
        CHECK(tw_tensor_get(vars[0], (int64_t[]){i}) == i - mean_factor * (i + 1), "w64[%d] = %g", i,
              tw_tensor_get(vars[0], (int64_t[]){i}));
    for (int i = 0; i < 7; i++)
        CHECK(tw_tensor_get(vars[1], (int64_t[]){i}) == (float)(i - mean_factor * (i + 1)), "w32[%d] = %g", i,
              tw_tensor_get(vars[1], (int64_t[]){i}));
    tw_optimizer_free(opt);
    tw_scope_end();
}

/* --nccl: the NCCL path (libtw-nccl.so) with gradients on CUDA devices,
 * each rank on cuda:LOCAL_RANK (one rank on one GPU still runs it): SGD at rate 1
 * through a data-parallel optimizer, rank r's gradient (r + 1) * (i + 1);
 * every weight must move by minus their mean. Skipped (77) with fewer
 * CUDA devices than ranks. */
static int check_nccl(void)
{
    int rank = tw_distributed_rank(), size = tw_distributed_size(), devices = tw_device_count(TW_DEVICE_CUDA);
    /* Every rank of a machine has the same count: all skip or none. */
    if (devices <= tw_distributed_local_rank()) {
        fprintf(stderr, "test_distributed --nccl: %d CUDA device(s) for rank %d of this machine; skipped\n", devices,
                tw_distributed_local_rank());
        return 77;
    }
    tw_device device = {TW_DEVICE_CUDA, tw_distributed_local_rank()};
    tw_scope_begin();
    float w[1000], g[1000];
    for (int i = 0; i < 1000; i++) {
        w[i] = (float)i;
        g[i] = (float)((rank + 1.0) * (i + 1));
    }
    tw_tensor *var = tw_variable(tw_tensor_to(tw_tensor_from_data(w, TW_FLOAT32, 1, (int64_t[]){1000}), device), "w",
                                 true);
    tw_tensor *grad = tw_tensor_to(tw_tensor_from_data(g, TW_FLOAT32, 1, (int64_t[]){1000}), device);
    tw_optimizer *opt = tw_distributed_optimizer(tw_optimizer_new_named("sgd", 1.0), 0);
    CHECK(var && grad && tw_optimizer_apply_gradients(opt, 1, &var, &grad) == 0, "apply on cuda:%d: %s",
          device.index, tw_last_error());
    tw_tensor *back = var ? tw_tensor_to(var, TW_CPU) : NULL;
    double mean_factor = (size + 1) / 2.0;
    for (int i = 0; back && i < 1000; i++)
        CHECK(tw_tensor_get(back, (int64_t[]){i}) == (float)(i - mean_factor * (i + 1)), "w[%d] = %g", i,
              tw_tensor_get(back, (int64_t[]){i}));
    tw_optimizer_free(opt);
    tw_scope_end();
    if (rank == 0 && !failures)
        printf("NCCL: %d rank(s) on CUDA devices averaged a gradient of 1000 floats\n", size);
    return 0;
}

static tw_model *make_model(bool cnn, bool bn, tw_dtype dtype)
{
    tw_model *m = tw_sequential_new(cnn ? "cnn" : "mlp");
    if (cnn) {
        tw_model_add(m, tw_input_layer(&(tw_shape){4, {-1, 8, 8, 1}}));
        tw_model_add(m, tw_conv2d_layer(4, 3, "relu"));
        if (bn)
            tw_model_add(m, tw_layer_new("BatchNormalization", NULL));
        tw_model_add(m, tw_flatten_layer());
    } else {
        tw_model_add(m, tw_input_layer(&(tw_shape){2, {-1, 64}}));
        tw_model_add(m, tw_dense(32, "relu"));
    }
    tw_model_add(m, tw_dense(10, NULL));
    tw_layer_set_dtype(m, dtype);
    tw_loss loss = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    loss.from_logits = true;
    const char *metrics[] = {"accuracy"};
    tw_model_compile(m, tw_optimizer_new_named("adam", 0.01), &loss, 1, metrics);
    return m;
}

typedef struct {
    double loss[MAX_STEPS];
    int steps;
    int unequal_steps; /* steps after which the ranks' weights differed */
} record;

/* FNV-1a over the bytes of every variable. */
static uint64_t weights_hash(tw_model *m)
{
    uint64_t h = 1469598103934665603ull;
    tw_variables vars = tw_model_variables(m);
    for (int i = 0; i < vars.n; i++) {
        size_t bytes = (size_t)tw_tensor_numel(vars.items[i]) * tw_dtype_size(tw_tensor_dtype(vars.items[i]));
        unsigned char *buf = malloc(bytes);
        tw_tensor_copy_to(vars.items[i], buf, bytes);
        for (size_t k = 0; k < bytes; k++)
            h = (h ^ buf[k]) * 1099511628211ull;
        free(buf);
    }
    return h;
}

static int on_batch(tw_model *m, const tw_progress *p, const tw_logs *logs, void *data)
{
    record *r = data;
    if (r->steps < MAX_STEPS)
        r->loss[r->steps++] = tw_logs_get(logs, "loss");
    if (p->ranks > 1) {
        uint64_t h = weights_hash(m);
        double mine[2] = {(double)(h >> 32), (double)(h & 0xffffffffu)}, all[2 * 64];
        if (tw_allgather_values(mine, 2, all))
            return -1;
        for (int k = 1; k < p->ranks; k++)
            if (all[2 * k] != all[0] || all[2 * k + 1] != all[1]) {
                r->unequal_steps++;
                break;
            }
        for (int k = 0; k < p->ranks; k++)
            if (!(p->rank_step_ms[k] > 0) || !(p->rank_allreduce_ms[k] >= 0))
                return tw_error_set("rank %d's times are not set", k);
    }
    return 0;
}

static void data(bool cnn, tw_dtype dtype, int64_t n, tw_tensor **x, tw_tensor **y)
{
    tw_rng *rng = tw_rng_new(7);
    int64_t shape[4] = {n, 8, 8, 1};
    *x = tw_cast(tw_random_normal(rng, TW_FLOAT64, cnn ? 4 : 2, cnn ? shape : (int64_t[]){n, 64}, 0, 1), dtype);
    *y = tw_cast(tw_random_uniform(rng, TW_FLOAT64, 1, (int64_t[]){n}, 0, 10), TW_INT64);
    tw_rng_free(rng);
}

static double max_relative(tw_model *a, tw_model *b)
{
    tw_variables va = tw_model_variables(a), vb = tw_model_variables(b);
    double worst = 0;
    for (int i = 0; i < va.n; i++) {
        tw_scope_begin();
        tw_tensor *diff = tw_max(tw_abs(tw_sub(va.items[i], vb.items[i])), 0, NULL, false);
        tw_tensor *scale = tw_max(tw_abs(vb.items[i]), 0, NULL, false);
        double rel = tw_tensor_item(diff) / fmax(tw_tensor_item(scale), 1e-30);
        worst = fmax(worst, rel);
        tw_scope_end();
    }
    return worst;
}

/* n examples: N, or N_UNEVEN for a last batch split unevenly (each rank's
 * gradient then weighs by its share of the batch). */
static void check_equivalence(bool cnn, bool bn, tw_dtype dtype, int64_t n, double tolerance)
{
    char what[64];
    g_snprintf(what, sizeof what, "%s%s %s%s", cnn ? "cnn" : "mlp", bn ? " with BatchNormalization" : "",
               dtype == TW_FLOAT64 ? "float64" : "float32", n == N ? "" : ", uneven last batch");
    int steps = (int)((n + 63) / 64);
    tw_scope_begin();
    tw_tensor *x, *y;
    data(cnn, dtype, n, &x, &y);
    record dist = {0}, single = {0};
    tw_model *a = make_model(cnn, bn, dtype), *b = make_model(cnn, bn, dtype);
    tw_callback cb_a = {.on_batch_end = on_batch, .user_data = &dist};
    tw_callback cb_b = {.on_batch_end = on_batch, .user_data = &single};
    tw_fit_options o = tw_fit_options_default();
    o.seed = 42;
    o.batch_size = 32;
    o.distributed = true;
    o.ncallbacks = 1;
    o.callbacks = &cb_a;
    tw_history *ha = tw_model_fit(a, x, y, &o);
    CHECK(ha, "%s: distributed fit: %s", what, tw_last_error());
    o.batch_size = 32 * tw_distributed_size();
    o.distributed = false;
    o.callbacks = &cb_b;
    o.traced = TW_TRACE_OFF;
    tw_history *hb = tw_model_fit(b, x, y, &o);
    CHECK(hb, "%s: single fit: %s", what, tw_last_error());
    CHECK(dist.steps == steps && single.steps == steps, "%s: %d and %d steps", what, dist.steps, single.steps);
    for (int i = 0; i < dist.steps && i < single.steps; i++)
        CHECK(fabs(dist.loss[i] - single.loss[i]) <= tolerance * fabs(single.loss[i]), "%s: step %d loss %.17g vs %.17g",
              what, i + 1, dist.loss[i], single.loss[i]);
    double rel = max_relative(a, b);
    CHECK(rel <= tolerance, "%s: final weights differ by %.3g relative (tolerance %g)", what, rel, tolerance);
    CHECK(dist.unequal_steps == 0, "%s: the ranks' weights differed after %d steps", what, dist.unequal_steps);
    if (tw_distributed_rank() == 0)
        printf("%s: %d steps, losses and weights within %.3g relative of one rank x batch %d; ranks bitwise "
               "equal\n",
               what, dist.steps, rel, 32 * tw_distributed_size());
    tw_history_free(ha);
    tw_history_free(hb);
    tw_layer_unref(a);
    tw_layer_unref(b);
    tw_scope_end();
}

int main(int argc, char **argv)
{
    if (tw_distributed_init(&argc, &argv)) {
        fprintf(stderr, "test_distributed: %s\n", tw_last_error());
        return 1;
    }
    bool nccl = argc > 1 && !strcmp(argv[1], "--nccl");
    if (nccl && check_nccl() == 77) {
        tw_distributed_finalize();
        return 77;
    }
    if (!nccl && tw_distributed_size() < 2) {
        fprintf(stderr, "test_distributed: needs two ranks (run by tests/mpirun-test)\n");
        return 77;
    }
    if (!nccl) {
        check_allreduce();
        check_buckets();
        check_equivalence(false, false, TW_FLOAT64, N, 1e-10);
        check_equivalence(false, false, TW_FLOAT32, N, 1e-5);
        check_equivalence(true, false, TW_FLOAT64, N, 1e-10);
        check_equivalence(true, false, TW_FLOAT32, N, 1e-5);
        check_equivalence(false, false, TW_FLOAT64, N_UNEVEN, 1e-10);
        check_equivalence(true, true, TW_FLOAT64, N, 1e-10);
        /* Normalising by the batch's deviation amplifies rounding: in float64
         * the final weights differ by about 1e-12 relative (thousands of ulps,
         * from summing in another order), in float32 by about 2e-5. */
        check_equivalence(true, true, TW_FLOAT32, N, 1e-4);
        check_equivalence(true, true, TW_FLOAT64, N_UNEVEN, 1e-10);
    }
    double all_failures[64], mine = failures;
    tw_allgather_values(&mine, 1, all_failures);
    int total = 0;
    for (int r = 0; r < tw_distributed_size(); r++)
        total += (int)all_failures[r];
    tw_distributed_finalize();
    if (tw_distributed_rank() == 0)
        printf("%s: %d failure(s) over all ranks\n", total ? "FAIL" : "PASS", total);
    return total ? 1 : 0;
}
