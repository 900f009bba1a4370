/* Placement on the simulated device (engine/backend_sim.c): host memory
 * behind the backend interface, its pointers unusable as host pointers, so
 * every path that must go through a copy is exercised without a GPU:
 * copies both ways, creation on a default device, refused direct access,
 * mixed-device errors, ops and gradients, a traced function, training that
 * gives the CPU's losses bit for bit, checkpoints of device variables and
 * summaries of device tensors. */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include <tw/engine.h>
#include <tw/function.h>
#include <tw/model.h>

#include <tw/checkpoint.h>
#include <tw/data.h>
#include <tw/run_store.h>
#include <tw/summary.h>

#define SIM0 ((tw_device){TW_DEVICE_SIM, 0})
#define SIM1 ((tw_device){TW_DEVICE_SIM, 1})

static bool on(const tw_tensor *t, tw_device d)
{
    tw_device have = tw_tensor_device(t);
    return have.kind == d.kind && have.index == d.index;
}

/* The values of t, whatever its device, as doubles in row-major order. */
static void values(tw_tensor *t, double *out)
{
    tw_scope_begin();
    tw_tensor *h = tw_cast(tw_tensor_to(t, TW_CPU), TW_FLOAT64);
    g_assert_nonnull(h);
    g_assert_cmpint(tw_tensor_copy_to(h, out, sizeof(double) * (size_t)tw_tensor_numel(h)), ==, 0);
    tw_scope_end();
}

static void test_devices_listed(void)
{
    g_assert_cmpint(tw_device_count(TW_DEVICE_CPU), ==, 1);
    g_assert_cmpint(tw_device_count(TW_DEVICE_SIM), ==, 2);
    char name[32];
    g_assert_cmpstr(tw_device_name(SIM1, name, sizeof name), ==, "sim:1");
    g_assert_cmpint(tw_set_default_device((tw_device){TW_DEVICE_SIM, 2}), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "device sim:2 is not available"));
    tw_error_clear();
    tw_error_clear();
    tw_scope_begin();
    g_assert_true(on(tw_zeros(TW_FLOAT32, TW_SHAPE(1)), TW_CPU)); /* the failed set changed nothing */
    tw_scope_end();
    char line[128];
    g_assert_cmpstr(tw_device_describe(SIM1, line, sizeof line), ==, "simulated device (host memory) for tests");
    g_assert_true(g_str_has_prefix(tw_device_describe(TW_CPU, line, sizeof line), "cpu:0, OpenBLAS"));
    /* No CUDA plugin or no GPU here: the message says which device and why. */
    if (tw_device_count(TW_DEVICE_CUDA) == 0) {
        tw_device cuda = {TW_DEVICE_CUDA, 0};
        g_assert_cmpint(tw_set_default_device(cuda), ==, -1);
        g_assert_true(g_str_has_prefix(tw_last_error(), "set_default_device: device cuda:0 is not available ("));
        tw_error_clear();
        char why[256];
        g_assert_true(g_str_has_prefix(tw_device_describe(cuda, why, sizeof why), "device cuda:0 is not available ("));
        g_assert_false(tw_error_pending());
    }
}

static void test_copies_both_ways(void)
{
    tw_scope_begin();
    float data[6] = {1, 2, 3, 4, 5, 6};
    tw_tensor *x = tw_tensor_from_data(data, TW_FLOAT32, TW_SHAPE(2, 3));
    tw_tensor *d = tw_tensor_to(x, SIM0);
    g_assert_true(on(d, SIM0));
    g_assert_false(tw_tensor_shares_storage(x, d));
    /* Direct access refused with the reason; the readers copy. */
    g_assert_null(tw_tensor_data(d));
    g_assert_cmpstr(tw_last_error(), ==,
                    "tensor_data: the tensor is on sim:0, not in host memory; copy it with tw_tensor_to(t, TW_CPU) "
                    "first");
    tw_error_clear();
    g_assert_cmpfloat(tw_tensor_get(d, (int64_t[]){1, 2}), ==, 6);
    float back[6];
    g_assert_cmpint(tw_tensor_copy_to(d, back, sizeof back), ==, 0);
    g_assert_cmpmem(back, sizeof back, data, sizeof data);
    /* A strided view (the transpose) to the device and back, and between
     * two devices. */
    tw_tensor *dt = tw_tensor_to(tw_transpose(x), SIM1);
    tw_tensor *t0 = tw_tensor_to(dt, SIM0);
    g_assert_true(on(t0, SIM0));
    tw_tensor *h = tw_tensor_to(tw_transpose(t0), TW_CPU);
    g_assert_true(on(h, TW_CPU));
    g_assert_cmpmem(tw_tensor_data(h), sizeof data, data, sizeof data);
    /* A view on the device read back. */
    double row[3];
    values(tw_slice(d, 0, 1, 2, 1), row);
    g_assert_cmpfloat(row[0], ==, 4);
    g_assert_cmpfloat(row[2], ==, 6);
    tw_scope_end();
}

static void test_creation_on_default_device(void)
{
    g_assert_cmpint(tw_set_default_device(SIM0), ==, 0);
    tw_scope_begin();
    tw_tensor *z = tw_full(2.5, TW_FLOAT64, TW_SHAPE(3));
    tw_tensor *r = tw_arange(0, 4, 1, TW_INT32);
    tw_tensor *e = tw_eye(2, 2, TW_FLOAT32);
    tw_tensor *s = tw_scalar(3);
    g_assert_true(on(z, SIM0) && on(r, SIM0) && on(e, SIM0) && on(s, SIM0));
    g_assert_true(on(tw_zeros_like(z), SIM0));
    double v[4];
    values(z, v);
    g_assert_cmpfloat(v[2], ==, 2.5);
    values(r, v);
    g_assert_cmpfloat(v[3], ==, 3);
    values(e, v);
    g_assert_cmpfloat(v[0], ==, 1);
    g_assert_cmpfloat(v[1], ==, 0);
    g_assert_cmpfloat(v[3], ==, 1);
    g_assert_cmpfloat(tw_tensor_item(s), ==, 3);
    /* Random draws land on the device with the CPU's values. */
    tw_rng *a = tw_rng_new(5), *b = tw_rng_new(5);
    tw_tensor *rd = tw_random_normal(a, TW_FLOAT32, TW_SHAPE(4), 0, 1);
    g_assert_cmpint(tw_set_default_device(TW_CPU), ==, 0);
    tw_tensor *rc = tw_random_normal(b, TW_FLOAT32, TW_SHAPE(4), 0, 1);
    g_assert_true(on(rd, SIM0) && on(rc, TW_CPU));
    double x[4], y[4];
    values(rd, x);
    values(rc, y);
    g_assert_cmpmem(x, sizeof x, y, sizeof y);
    tw_rng_free(a);
    tw_rng_free(b);
    tw_scope_end();
}

static void *default_device_of_new_thread(void *unused)
{
    tw_device *d = g_new(tw_device, 1);
    *d = tw_default_device();
    return d;
}

static void test_default_device_is_per_thread(void)
{
    g_assert_cmpint(tw_set_default_device(SIM1), ==, 0);
    pthread_t th;
    pthread_create(&th, NULL, default_device_of_new_thread, NULL);
    tw_device *other;
    pthread_join(th, (void **)&other);
    g_assert_cmpint(other->kind, ==, TW_DEVICE_CPU);
    g_free(other);
    g_assert_cmpint(tw_default_device().kind, ==, TW_DEVICE_SIM);
    g_assert_cmpint(tw_default_device().index, ==, 1);
    tw_set_default_device(TW_CPU);
}

static void test_mixed_devices_refused(void)
{
    tw_scope_begin();
    tw_tensor *c = tw_ones(TW_FLOAT32, TW_SHAPE(2, 2));
    tw_tensor *d = tw_tensor_to(c, SIM0);
    g_assert_null(tw_add(c, d));
    g_assert_cmpstr(tw_last_error(), ==,
                    "add: inputs are on different devices (cpu:0 and sim:0); copy with tw_tensor_to()");
    tw_error_clear();
    g_assert_null(tw_matmul(d, tw_tensor_to(c, SIM1)));
    g_assert_cmpstr(tw_last_error(), ==,
                    "matmul: inputs are on different devices (sim:0 and sim:1); copy with tw_tensor_to()");
    tw_error_clear();
    /* A scalar constant joins the device of the other inputs. */
    tw_tensor *twice = tw_mul(d, tw_scalar(2));
    g_assert_true(on(twice, SIM0));
    g_assert_cmpfloat(tw_tensor_get(twice, (int64_t[]){1, 1}), ==, 2);
    tw_scope_end();
}

/* A few ops of each family and a gradient, on the device and on the CPU:
 * the same kernels, so the same bits. */
static void test_ops_and_gradients_match_cpu(void)
{
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(9);
    tw_tensor *a = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(3, 4), 0, 1);
    tw_tensor *b = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(4, 2), 0, 1);
    tw_tensor *results[2];
    double grads[2][12];
    for (int pass = 0; pass < 2; pass++) {
        tw_device dev = pass ? SIM0 : TW_CPU;
        tw_tensor *va = tw_variable(tw_tensor_to(a, dev), "a", true);
        tw_tensor *vb = tw_tensor_to(b, dev);
        tw_tape *tape = tw_tape_begin(false);
        tw_tensor *y = tw_softmax(tw_matmul(tw_tanh(va), vb), -1);
        tw_tensor *loss = tw_sum(tw_square(tw_concat(TW_TENSORS(y, tw_slice(y, 1, 1, 2, 1)), 1)), 0, NULL, false);
        tw_tape_end(tape);
        tw_tensor *g;
        g_assert_cmpint(tw_tape_gradient(tape, loss, 1, &va, &g), ==, 0);
        g_assert_true(on(g, dev) && on(loss, dev));
        values(g, grads[pass]);
        results[pass] = tw_tensor_to(y, TW_CPU);
        tw_tape_free(tape);
    }
    g_assert_cmpmem(tw_tensor_data(results[0]), 6 * sizeof(float), tw_tensor_data(results[1]), 6 * sizeof(float));
    g_assert_cmpmem(grads[0], sizeof grads[0], grads[1], sizeof grads[1]);
    tw_rng_free(rng);
    tw_scope_end();
}

/* BatchNormalization in training (the fused batch_norm op and its
 * gradient; without gamma and beta, the ones and zeros it makes itself)
 * gives the CPU's output, input gradient and moving statistics bit for bit. */
static void test_batchnorm_on_device(void)
{
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(5);
    tw_tensor *x = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(6, 2, 3), 1, 2);
    double got[2][2][36 + 36 + 3 + 3];
    for (int plain = 0; plain < 2; plain++)
        for (int pass = 0; pass < 2; pass++) {
            tw_device dev = pass ? SIM0 : TW_CPU;
            g_assert_cmpint(tw_set_default_device(dev), ==, 0);
            tw_layer *bn = tw_layer_new("BatchNormalization", "bn");
            if (plain)
                g_assert_cmpint(tw_layer_set(bn, "center", "false") | tw_layer_set(bn, "scale", "false"), ==, 0);
            g_assert_cmpint(tw_layer_build(bn, &(tw_shape){3, {-1, 2, 3}}, rng), ==, 0);
            tw_tensor *xd = tw_tensor_to(x, dev);
            tw_tape *tape = tw_tape_begin(false);
            tw_tape_watch(tape, xd);
            tw_tensor *y = tw_layer_call(bn, xd, true);
            tw_tensor *loss = tw_sum_all(tw_mul(y, tw_sin(xd)));
            tw_tape_end(tape);
            tw_tensor *g;
            g_assert_cmpint(tw_tape_gradient(tape, loss, 1, &xd, &g), ==, 0);
            g_assert_true(on(y, dev) && on(g, dev));
            double *out = got[plain][pass];
            values(y, out);
            values(g, out + 36);
            values(tw_layer_weight(bn, plain ? 0 : 2), out + 72);
            values(tw_layer_weight(bn, plain ? 1 : 3), out + 75);
            tw_tape_free(tape);
            tw_layer_unref(bn);
            g_assert_cmpint(tw_set_default_device(TW_CPU), ==, 0);
        }
    for (int plain = 0; plain < 2; plain++)
        g_assert_cmpmem(got[plain][0], sizeof got[plain][0], got[plain][1], sizeof got[plain][1]);
    tw_rng_free(rng);
    tw_scope_end();
}

static tw_tensor *traced_w;

static int affine(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user)
{
    out[0] = tw_relu(tw_add(tw_matmul(in[0], traced_w), tw_scalar(0.5)));
    return 1;
}

/* A traced function whose inputs and variables are on the device: its
 * graph's nodes run there, and again after the variable changes. */
static void test_traced_function_on_device(void)
{
    tw_scope_begin();
    float w[4] = {1, -1, 2, 0.5f}, x[4] = {1, 2, 3, 4};
    tw_tensor *xc = tw_tensor_from_data(x, TW_FLOAT32, TW_SHAPE(2, 2));
    traced_w = tw_variable(tw_tensor_to(tw_tensor_from_data(w, TW_FLOAT32, TW_SHAPE(2, 2)), SIM0), "w", true);
    tw_tensor *xd = tw_tensor_to(xc, SIM0);
    tw_function *f = tw_function_new("affine", affine, NULL);
    tw_tensor *y = tw_function_call1(f, TW_TENSORS(xd));
    g_assert_nonnull(y);
    g_assert_true(on(y, SIM0));
    double v[4];
    values(y, v);
    /* [1 2; 3 4] [1 -1; 2 .5] + .5, relu */
    g_assert_cmpfloat(v[0], ==, 5.5);
    g_assert_cmpfloat(v[1], ==, 0.5);
    g_assert_cmpfloat(v[2], ==, 11.5);
    g_assert_cmpfloat(v[3], ==, 0);
    g_assert_cmpint(tw_assign(traced_w, tw_scalar(1)), ==, 0);
    y = tw_function_call1(f, TW_TENSORS(xd));
    values(y, v);
    g_assert_cmpfloat(v[0], ==, 3.5);
    g_assert_cmpfloat(v[3], ==, 7.5);
    g_assert_cmpint(tw_function_trace_count(f), ==, 1);
    /* A CPU input against the device's variable: refused, naming both. */
    g_assert_null(tw_function_call1(f, TW_TENSORS(xc)));
    g_assert_nonnull(strstr(tw_last_error(), "different devices (cpu:0 and sim:0)"));
    tw_error_clear();
    tw_function_free(f);
    tw_scope_end();
}

/* A small MLP trained with fit on the device gives the CPU's losses
 * exactly: the same kernels, the same random streams; with its data on the
 * device or on the CPU. */
static void train(tw_device device, bool data_on_cpu, int epochs, double *losses)
{
    g_assert_cmpint(tw_set_default_device(data_on_cpu ? TW_CPU : device), ==, 0);
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(4);
    tw_tensor *x = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(96, 4), 0, 1);
    tw_tensor *y = tw_cast(tw_greater(tw_sum(x, TW_AXES(1), false), tw_scalar(0)), TW_INT32);
    g_assert_cmpint(tw_set_default_device(device), ==, 0); /* the model's variables go there */
    tw_model *m = tw_sequential_new("mlp");
    tw_model_add(m, tw_input_layer(&(tw_shape){2, {-1, 4}}));
    tw_model_add(m, tw_dense(8, "relu"));
    tw_model_add(m, tw_dense(2, NULL));
    tw_loss loss = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    loss.from_logits = true;
    const char *metrics[] = {"accuracy"};
    g_assert_cmpint(tw_model_compile(m, tw_optimizer_new_named("adam", 0.01), &loss, 1, metrics), ==, 0);
    tw_fit_options opt = tw_fit_options_default();
    opt.epochs = epochs;
    opt.seed = 2;
    opt.batch_size = 16;
    tw_history *h = tw_model_fit(m, x, y, &opt);
    if (!h)
        g_error("fit on %s: %s", device.kind == TW_DEVICE_CPU ? "cpu" : "sim", tw_last_error());
    for (int e = 0; e < epochs; e++)
        losses[e] = tw_logs_get(&h->epoch_logs[e], "loss");
    tw_variables vars = tw_model_trainable_variables(m);
    for (int i = 0; i < vars.n; i++)
        g_assert_true(on(vars.items[i], device));
    tw_history_free(h);
    tw_layer_unref(m);
    tw_rng_free(rng);
    tw_scope_end();
    tw_set_default_device(TW_CPU);
}

static void test_mlp_trains_as_on_cpu(void)
{
    double cpu[4], sim[4], sim_fed[4];
    train(TW_CPU, false, 4, cpu);
    train(SIM0, false, 4, sim);
    train(SIM0, true, 4, sim_fed); /* data on the CPU: fit copies each batch to the model's device */
    for (int e = 0; e < 4; e++) {
        g_assert_cmpfloat(sim[e], ==, cpu[e]);
        g_assert_cmpfloat(sim_fed[e], ==, cpu[e]);
    }
    g_assert_cmpfloat(cpu[3], <, cpu[0]);
}

/* A small model on the device with Adam's slots, one step trained. */
static tw_model *device_model(tw_optimizer **opt)
{
    tw_model *m = tw_sequential_new("ckpt");
    tw_model_add(m, tw_input_layer(&(tw_shape){2, {-1, 3}}));
    tw_model_add(m, tw_dense(2, NULL));
    g_assert_cmpint(tw_model_build(m, &(tw_shape){2, {-1, 3}}, 7), ==, 0);
    *opt = tw_optimizer_new_named("adam", 0.1);
    tw_scope_begin();
    tw_variables vars = tw_model_trainable_variables(m);
    tw_tensor *grads[2];
    for (int i = 0; i < vars.n; i++)
        grads[i] = tw_ones_like(vars.items[i]);
    g_assert_cmpint(tw_optimizer_apply_gradients(*opt, vars.n, vars.items, grads), ==, 0);
    tw_scope_end();
    return m;
}

/* Weights, slots and the iteration count of variables on the device go to
 * a checkpoint through host copies and come back into device variables. */
static void test_checkpoint_of_device_variables(void)
{
    char *dir = g_dir_make_tmp("twb-device-XXXXXX", NULL);
    char *path = g_build_filename(dir, "ckpt.safetensors", NULL);
    g_assert_cmpint(tw_set_default_device(SIM0), ==, 0);
    tw_optimizer *opt, *opt2;
    tw_model *m = device_model(&opt);
    tw_variables vars = tw_model_trainable_variables(m);
    g_assert_true(on(vars.items[0], SIM0));
    g_assert_true(on(tw_optimizer_iterations_variable(opt), SIM0));
    if (tw_checkpoint_save(path, m, opt, NULL, NULL) < 0)
        g_error("%s", tw_last_error());
    double saved[6];
    values(vars.items[0], saved);

    tw_model *m2 = device_model(&opt2); /* other weights: another seed would do, one more step does */
    tw_scope_begin();
    tw_variables v2 = tw_model_trainable_variables(m2);
    tw_tensor *g2[2] = {tw_ones_like(v2.items[0]), tw_ones_like(v2.items[1])};
    g_assert_cmpint(tw_optimizer_apply_gradients(opt2, 2, v2.items, g2), ==, 0);
    tw_scope_end();
    g_assert_cmpint(tw_optimizer_iterations(opt2), ==, 2);
    /* Read on the CPU, assigned into the device's variables. */
    g_assert_cmpint(tw_set_default_device(TW_CPU), ==, 0);
    if (tw_checkpoint_restore(path, m2, opt2) < 0)
        g_error("%s", tw_last_error());
    g_assert_cmpint(tw_optimizer_iterations(opt2), ==, 1);
    double back[6];
    g_assert_true(on(v2.items[0], SIM0));
    values(v2.items[0], back);
    g_assert_cmpmem(back, sizeof back, saved, sizeof saved);
    tw_optimizer_free(opt);
    tw_optimizer_free(opt2);
    tw_layer_unref(m);
    tw_layer_unref(m2);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}

/* A histogram of a device tensor is the one of its CPU copy. */
static void test_histogram_of_device_tensor(void)
{
    char *dir = g_dir_make_tmp("twb-device-XXXXXX", NULL);
    char *db = g_build_filename(dir, "runs.db", NULL);
    tw_summary_writer *w = tw_summary_writer_open(db, "sim", NULL);
    g_assert_nonnull(w);
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(3);
    tw_tensor *cpu = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(20, 10), 0, 1);
    tw_tensor *dev = tw_tensor_to(tw_transpose(cpu), SIM1);
    g_assert_cmpint(tw_summary_histogram(w, "device", dev, 1), ==, 0);
    /* Against the CPU's packed transpose: the same values in the same order. */
    g_assert_cmpint(tw_summary_histogram(w, "host", tw_contiguous(tw_transpose(cpu)), 1), ==, 0);
    g_assert_cmpint(tw_summary_scalar(w, "mean", tw_tensor_item(tw_mean(dev, 0, NULL, false)), 1), ==, 0);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    tw_run_store *store = tw_run_store_open(db, TW_STORE_READ_ONLY);
    g_assert_nonnull(store);
    tw_run_info run;
    g_assert_cmpint(tw_run_store_get_run(store, "sim", &run), ==, 0);
    tw_histogram *hd, *hh;
    int nd, nh;
    g_assert_cmpint(tw_run_store_read_histograms(store, tw_run_store_find_tag(store, run.id, "device"), 0, 9, 0, &hd, &nd), ==, 0);
    g_assert_cmpint(tw_run_store_read_histograms(store, tw_run_store_find_tag(store, run.id, "host"), 0, 9, 0, &hh, &nh), ==, 0);
    g_assert_cmpint(nd, ==, 1);
    g_assert_cmpint(nh, ==, 1);
    g_assert_cmpfloat(hd[0].count, ==, 200);
    g_assert_cmpfloat(hd[0].min, ==, hh[0].min);
    g_assert_cmpfloat(hd[0].max, ==, hh[0].max);
    g_assert_cmpfloat(hd[0].sum_squares, ==, hh[0].sum_squares);
    g_assert_cmpint(hd[0].nbuckets, ==, hh[0].nbuckets);
    for (int k = 0; k < hd[0].nbuckets; k++)
        g_assert_cmpfloat(hd[0].buckets[k], ==, hh[0].buckets[k]);
    tw_histogram_free(hd, nd);
    tw_histogram_free(hh, nh);
    tw_run_info_clear(&run);
    tw_run_store_close(store);
    tw_rng_free(rng);
    tw_scope_end();
    g_unlink(db);
    g_rmdir(dir);
    g_free(db);
    g_free(dir);
}

/* Tensor and image summaries of a device tensor store its CPU copy's
 * values (a transposed view, so the copy is packed too). */
static void test_summaries_of_device_tensors(void)
{
    char *dir = g_dir_make_tmp("twb-device-XXXXXX", NULL);
    char *db = g_build_filename(dir, "runs.db", NULL);
    tw_summary_writer *w = tw_summary_writer_open(db, "sim", NULL);
    g_assert_nonnull(w);
    tw_scope_begin();
    tw_tensor *cpu = tw_reshape(tw_arange(0, 6, 1, TW_FLOAT32), TW_SHAPE(2, 3));
    tw_tensor *dev = tw_transpose(tw_tensor_to(cpu, SIM1));
    g_assert_cmpint(tw_summary_tensor(w, "confusion", dev, 4), ==, 0);
    tw_tensor *pixels = tw_tensor_to(tw_div(tw_reshape(tw_arange(0, 12, 1, TW_FLOAT32), TW_SHAPE(2, 2, 3)),
                                            tw_scalar(11)), SIM0);
    g_assert_cmpint(tw_summary_image(w, "picture", pixels, 4), ==, 0);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    tw_scope_end();
    tw_run_store *store = tw_run_store_open(db, TW_STORE_READ_ONLY);
    g_assert_nonnull(store);
    tw_run_info run;
    g_assert_cmpint(tw_run_store_get_run(store, "sim", &run), ==, 0);
    tw_stored_tensor t;
    g_assert_cmpint(tw_run_store_read_tensor(store, run.id, "confusion", &t), ==, 1);
    g_assert_cmpint(t.ndim, ==, 2);
    g_assert_cmpint(t.dims[0], ==, 3);
    g_assert_cmpint(t.dims[1], ==, 2);
    static const double transposed[] = {0, 3, 1, 4, 2, 5};
    for (int i = 0; i < 6; i++)
        g_assert_cmpfloat(t.values[i], ==, transposed[i]);
    tw_stored_tensor_clear(&t);
    tw_image_info *images;
    int n;
    g_assert_cmpint(tw_run_store_list_images(store, run.id, "picture", &images, &n), ==, 0);
    g_assert_cmpint(n, ==, 1);
    g_assert_cmpint(images[0].width, ==, 2);
    g_assert_cmpint(images[0].height, ==, 2);
    tw_image_info_free(images, n);
    tw_run_info_clear(&run);
    tw_run_store_close(store);
    g_unlink(db);
    g_rmdir(dir);
    g_free(db);
    g_free(dir);
}

/* An input pipeline stays on the host whatever the thread's default
 * device: device tensors handed to from_tensors are copied once, and the
 * batches are CPU tensors a training loop copies where its model is. */
static void test_pipeline_on_host(void)
{
    g_assert_cmpint(tw_set_default_device(SIM0), ==, 0);
    tw_scope_begin();
    tw_tensor *x = tw_arange(0, 10, 1, TW_FLOAT32);
    tw_tensor *y = tw_cast(tw_arange(0, 10, 1, TW_INT32), TW_UINT8);
    g_assert_true(on(x, SIM0) && on(y, SIM0));
    tw_dataset *ds = tw_dataset_scale(tw_dataset_batch(tw_dataset_from_tensors(TW_TENSORS(x, y)), 4, false), 1, 0.5);
    g_assert_nonnull(ds);
    tw_iterator *it = tw_dataset_iter(ds);
    tw_element e;
    int batches = 0;
    while (tw_iterator_next(it, &e) > 0) {
        g_assert_true(on(e.t[0], TW_CPU) && on(e.t[1], TW_CPU));
        const float *xs = tw_tensor_data(e.t[0]), *ys = tw_tensor_data(e.t[1]); /* scale made floats */
        g_assert_cmpfloat(xs[0], ==, 4 * batches);
        g_assert_cmpfloat(ys[0], ==, 2 * batches);
        batches++;
        tw_element_clear(&e);
    }
    g_assert_cmpint(batches, ==, 3);
    tw_iterator_free(it);
    tw_dataset_unref(ds);
    tw_scope_end();
    tw_set_default_device(TW_CPU);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_setenv("TW_SIM_DEVICES", "2", TRUE); /* read at the first question about a device */
    g_test_add_func("/device_sim/devices-listed", test_devices_listed);
    g_test_add_func("/device_sim/copies-both-ways", test_copies_both_ways);
    g_test_add_func("/device_sim/creation-on-default-device", test_creation_on_default_device);
    g_test_add_func("/device_sim/default-device-per-thread", test_default_device_is_per_thread);
    g_test_add_func("/device_sim/mixed-devices-refused", test_mixed_devices_refused);
    g_test_add_func("/device_sim/ops-and-gradients", test_ops_and_gradients_match_cpu);
    g_test_add_func("/device_sim/traced-function", test_traced_function_on_device);
    g_test_add_func("/device_sim/batchnorm", test_batchnorm_on_device);
    g_test_add_func("/device_sim/mlp-trains-as-on-cpu", test_mlp_trains_as_on_cpu);
    g_test_add_func("/device_sim/checkpoint", test_checkpoint_of_device_variables);
    g_test_add_func("/device_sim/histogram", test_histogram_of_device_tensor);
    g_test_add_func("/device_sim/summaries-of-device-tensors", test_summaries_of_device_tensors);
    g_test_add_func("/device_sim/pipeline-on-host", test_pipeline_on_host);
    return g_test_run();
}
