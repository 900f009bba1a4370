/* Training: compile/fit/evaluate/predict, train_on_batch and test_on_batch,
 * callbacks and early stopping, resuming a fit exactly, NaN losses, the
 * seeds' custom loop and the shared trunk with two heads. Data are small
 * synthetic sets made with the engine's own RNG. */
#include <math.h>
#include <string.h>

#include <glib.h>

#include <tw/engine.h>
#include <tw/model.h>

#include "internal.h" /* tw__system_allocations */

/* Three Gaussian blobs in 2-D: x (n, 2) float32, y (n,) int32. */
static void blobs(int64_t n, uint64_t seed, tw_tensor **x, tw_tensor **y)
{
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(seed);
    tw_tensor *labels = tw_cast(tw_mul_scalar(tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(n), 0, 2.999), 1), TW_INT32);
    tw_tensor *centers = tw_tensor_from_data((float[]){-2, -2, 2, -2, 0, 2}, TW_FLOAT32, TW_SHAPE(3, 2));
    tw_tensor *points = tw_add(tw_gather(centers, labels, 0), tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(n, 2), 0, 0.5));
    *x = tw_tensor_ref(points);
    *y = tw_tensor_ref(labels);
    tw_rng_free(rng);
    tw_scope_end();
}

static tw_model *classifier(double dropout)
{
    tw_model *m = tw_sequential_new("classifier");
    tw_model_add(m, tw_input_layer(&(tw_shape){2, {-1, 2}}));
    tw_model_add(m, tw_dense(16, "relu"));
    if (dropout > 0)
        tw_model_add(m, tw_dropout_layer(dropout));
    tw_model_add(m, tw_dense(3, NULL));
    return m;
}

static void compile(tw_model *m, double lr)
{
    tw_loss loss = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    loss.from_logits = true;
    const char *metrics[] = {"accuracy"};
    g_assert_cmpint(tw_model_compile(m, tw_optimizer_new_named("adam", lr), &loss, 1, metrics), ==, 0);
}

static void test_fit_evaluate_predict(void)
{
    tw_tensor *x, *y;
    blobs(600, 1, &x, &y);
    tw_model *m = classifier(0);
    compile(m, 0.01);
    tw_fit_options opt = tw_fit_options_default();
    opt.epochs = 5;
    opt.seed = 3;
    opt.validation_split = 0.2;
    tw_history *h = tw_model_fit(m, x, y, &opt);
    g_assert_nonnull(h);
    g_assert_cmpint(h->epochs, ==, 5);
    double first = tw_logs_get(&h->epoch_logs[0], "loss"), last = tw_logs_get(&h->epoch_logs[4], "loss");
    g_assert_cmpfloat(last, <, first);
    g_assert_cmpfloat(tw_logs_get(&h->epoch_logs[4], "val_accuracy"), >, 0.9);
    g_assert_false(isnan(tw_logs_get(&h->epoch_logs[4], "val_loss")));
    /* 480 training examples, batch 32: 15 steps an epoch. */
    g_assert_cmpint(tw_optimizer_iterations(tw_model_optimizer(m)), ==, 75);

    tw_logs logs;
    g_assert_cmpint(tw_model_evaluate(m, x, y, 64, &logs), ==, 0);
    g_assert_cmpfloat(tw_logs_get(&logs, "accuracy"), >, 0.9);

    tw_tensor *pred = tw_model_predict(m, x, 100);
    g_assert_nonnull(pred);
    g_assert_cmpint(tw_tensor_dim(pred, 0), ==, 600);
    g_assert_cmpint(tw_tensor_dim(pred, 1), ==, 3);
    /* predict agrees with one big call. */
    tw_scope_begin();
    tw_tensor *direct = tw_model_call(m, x, false);
    g_assert_cmpfloat(tw_tensor_item(tw_max(tw_abs(tw_sub(pred, direct)), 0, NULL, false)), <, 1e-5);
    tw_scope_end();
    tw_tensor_unref(pred);
    tw_history_free(h);
    tw_layer_unref(m);
    tw_tensor_unref(x);
    tw_tensor_unref(y);
}

static void test_batch_steps(void)
{
    tw_tensor *x, *y;
    blobs(64, 2, &x, &y);
    tw_model *m = classifier(0);
    compile(m, 0.05);
    tw_logs before, after, train;
    g_assert_cmpint(tw_model_test_on_batch(m, x, y, &before), ==, 0);
    for (int i = 0; i < 20; i++)
        g_assert_cmpint(tw_model_train_on_batch(m, x, y, &train), ==, 0);
    g_assert_cmpint(tw_model_test_on_batch(m, x, y, &after), ==, 0);
    g_assert_cmpfloat(tw_logs_get(&after, "loss"), <, tw_logs_get(&before, "loss"));
    g_assert_cmpint(tw_optimizer_iterations(tw_model_optimizer(m)), ==, 20);
    tw_layer_unref(m);
    tw_tensor_unref(x);
    tw_tensor_unref(y);
}

/* After a warm-up, a training step takes every tensor buffer from the
 * caches: no buffer comes from the system in the steady state. */
static void test_steady_state_allocates_no_buffers(void)
{
    tw_tensor *x, *y;
    blobs(64, 3, &x, &y);
    tw_model *m = classifier(0.2);
    compile(m, 0.01);
    tw_logs logs;
    for (int i = 0; i < 3; i++)
        g_assert_cmpint(tw_model_train_on_batch(m, x, y, &logs), ==, 0);
    uint64_t before = tw__system_allocations();
    for (int i = 0; i < 20; i++)
        g_assert_cmpint(tw_model_train_on_batch(m, x, y, &logs), ==, 0);
    g_assert_cmpuint(tw__system_allocations(), ==, before);
    tw_layer_unref(m);
    tw_tensor_unref(x);
    tw_tensor_unref(y);
}

/* Fitting 3 epochs at once, or 1 then 2 more from initial_epoch (after
 * stopping halfway through the second), gives the same losses: shuffles
 * come from (seed, epoch) and dropout from (seed, iteration). */
static int stop_at_step(tw_model *m, const tw_progress *p, const tw_logs *logs, void *data)
{
    return p->epoch == 1 && p->step == *(int *)data ? 1 : 0;
}

static void test_resume_is_exact(void)
{
    tw_tensor *x, *y;
    blobs(320, 4, &x, &y);
    tw_fit_options opt = tw_fit_options_default();
    opt.seed = 9;
    opt.epochs = 3;

    tw_model *whole = classifier(0.3);
    compile(whole, 0.01);
    tw_model_build(whole, NULL, 5);
    tw_history *h = tw_model_fit(whole, x, y, &opt);

    tw_model *parts = classifier(0.3);
    compile(parts, 0.01);
    tw_model_build(parts, NULL, 5);
    int stop_step = 4;
    tw_callback stopper = {.on_batch_end = stop_at_step, .user_data = &stop_step};
    opt.callbacks = &stopper;
    opt.ncallbacks = 1;
    tw_history *h1 = tw_model_fit(parts, x, y, &opt);
    g_assert_true(h1->stopped_early);
    g_assert_cmpint(h1->epochs, ==, 1); /* the interrupted epoch is not in the history */
    g_assert_cmpint(h1->resume_epoch, ==, 1);
    g_assert_cmpint(h1->resume_step, ==, 5);
    opt.ncallbacks = 0;
    opt.initial_epoch = h1->resume_epoch;
    opt.initial_step = h1->resume_step;
    tw_history *h2 = tw_model_fit(parts, x, y, &opt);
    g_assert_cmpint(h2->epochs, ==, 2);
    /* The last epoch ran whole in both; its loss must match exactly. */
    g_assert_cmpfloat(tw_logs_get(&h->epoch_logs[2], "loss"), ==, tw_logs_get(&h2->epoch_logs[1], "loss"));
    tw_variables a = tw_model_variables(whole), b = tw_model_variables(parts);
    tw_scope_begin();
    for (int i = 0; i < a.n; i++)
        g_assert_cmpfloat(tw_tensor_item(tw_max(tw_abs(tw_sub(a.items[i], b.items[i])), 0, NULL, false)), ==, 0);
    tw_scope_end();
    tw_history_free(h);
    tw_history_free(h1);
    tw_history_free(h2);
    tw_layer_unref(whole);
    tw_layer_unref(parts);
    tw_tensor_unref(x);
    tw_tensor_unref(y);
}

static void test_early_stopping(void)
{
    tw_tensor *x, *y;
    blobs(200, 5, &x, &y);
    tw_model *m = classifier(0);
    compile(m, 0.0); /* a zero learning rate: val_loss never improves */
    tw_early_stopping *es = tw_early_stopping_new("val_loss", 0, 2, true);
    tw_callback cb = tw_early_stopping_callback(es);
    tw_fit_options opt = tw_fit_options_default();
    opt.epochs = 20;
    opt.validation_split = 0.25;
    opt.callbacks = &cb;
    opt.ncallbacks = 1;
    tw_history *h = tw_model_fit(m, x, y, &opt);
    g_assert_nonnull(h);
    g_assert_true(h->stopped_early);
    g_assert_cmpint(h->epochs, ==, 3); /* best at epoch 1, then two without improvement */
    g_assert_cmpint(tw_early_stopping_stopped_epoch(es), ==, 2);
    tw_history_free(h);
    tw_early_stopping_free(es);

    /* A monitor that is not logged is an error naming it. */
    es = tw_early_stopping_new("val_nothing", 0, 1, false);
    cb = tw_early_stopping_callback(es);
    g_assert_null(tw_model_fit(m, x, y, &opt));
    g_assert_nonnull(strstr(tw_last_error(), "val_nothing"));
    tw_early_stopping_free(es);
    tw_layer_unref(m);
    tw_tensor_unref(x);
    tw_tensor_unref(y);
}

static void test_nan_loss_is_reported(void)
{
    tw_tensor *x, *y;
    blobs(64, 6, &x, &y);
    tw_scope_begin();
    tw_tensor *bad = tw_tensor_ref(tw_mul(x, tw_full(NAN, TW_FLOAT32, TW_SHAPE(1, 2))));
    tw_scope_end();
    tw_model *m = classifier(0);
    compile(m, 0.01);
    tw_fit_options opt = tw_fit_options_default();
    g_assert_null(tw_model_fit(m, bad, y, &opt));
    g_assert_nonnull(strstr(tw_last_error(), "epoch 1, step 1"));
    g_test_message("%s", tw_last_error());
    g_assert_nonnull(strstr(tw_last_error(), "NaN"));
    /* Mismatched example counts. */
    tw_scope_begin();
    g_assert_null(tw_model_fit(m, x, tw_slice(y, 0, 0, 10, 1), &opt));
    g_assert_nonnull(strstr(tw_last_error(), "64 examples but y has 10"));
    tw_scope_end();
    tw_layer_unref(m);
    tw_tensor_unref(bad);
    tw_tensor_unref(x);
    tw_tensor_unref(y);
}


/* Adam, RMSprop and Adagrad at a huge learning rate: each step moves a
 * weight by about the rate, so the loss grows without ever overflowing; the
 * fit stops all the same, naming the epoch and step. */
static void test_divergence_is_reported(void)
{
    const char *optimizers[] = {"adam", "rmsprop", "adagrad"};
    for (size_t i = 0; i < G_N_ELEMENTS(optimizers); i++) {
        tw_scope_begin();
        tw_rng *rng = tw_rng_new(4);
        tw_tensor *x = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(256, 1), 0, 1);
        tw_tensor *y = tw_mul_scalar(x, 3);
        tw_model *m = tw_sequential_new("regression");
        tw_model_add(m, tw_input_layer(&(tw_shape){2, {-1, 1}}));
        tw_model_add(m, tw_dense(16, "relu"));
        tw_model_add(m, tw_dense(1, NULL));
        tw_loss loss = tw_loss_default(TW_LOSS_MEAN_SQUARED_ERROR);
        g_assert_cmpint(tw_model_compile(m, tw_optimizer_new_named(optimizers[i], 1000), &loss, 0, NULL), ==, 0);
        tw_fit_options opt = tw_fit_options_default();
        opt.epochs = 5;
        g_assert_null(tw_model_fit(m, x, y, &opt));
        g_test_message("%s: %s", optimizers[i], tw_last_error());
        g_assert_true(g_str_has_prefix(tw_last_error(), "fit: epoch 1, step "));
        g_assert_nonnull(strstr(tw_last_error(), ": the loss diverged: "));
        g_assert_nonnull(strstr(tw_last_error(), "lower the learning rate"));
        tw_layer_unref(m);
        tw_rng_free(rng);
        tw_scope_end();
    }
}

/* The seeds' custom loop, as short as theirs. */
static void test_custom_loop(void)
{
    tw_tensor *x, *y;
    blobs(128, 7, &x, &y);
    tw_model *model = classifier(0);
    tw_optimizer *opt = tw_optimizer_new_named("sgd", 0.1);
    tw_loss loss_fn = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    loss_fn.from_logits = true;
    tw_metric *avg_loss = tw_metric_new("mean");
    double first = 0, last = 0;
    for (int step = 0; step < 50; step++) {
        tw_scope_begin();
        tw_tape *tape = tw_tape_begin(false);
        tw_tensor *loss = tw_loss_compute(&loss_fn, y, tw_model_call(model, x, true));
        tw_tape_end(tape);
        tw_variables vars = tw_model_trainable_variables(model);
        tw_tensor *grads[8];
        g_assert_cmpint(tw_tape_gradient(tape, loss, vars.n, vars.items, grads), ==, 0);
        g_assert_cmpint(tw_optimizer_apply_gradients(opt, vars.n, vars.items, grads), ==, 0);
        tw_tape_free(tape);
        tw_metric_update_value(avg_loss, tw_tensor_item(loss), 1);
        tw_scope_end();
        if (step == 9)
            first = tw_metric_result(avg_loss);
        if (step % 10 == 9) {
            last = tw_metric_result(avg_loss);
            tw_metric_reset_state(avg_loss);
        }
    }
    g_assert_cmpfloat(last, <, first);
    tw_metric_free(avg_loss);
    tw_optimizer_free(opt);
    tw_layer_unref(model);
    tw_tensor_unref(x);
    tw_tensor_unref(y);
}

static double weights_fingerprint(tw_model *m)
{
    tw_variables v = tw_model_variables(m);
    double s = 0;
    tw_scope_begin();
    for (int i = 0; i < v.n; i++)
        s += tw_tensor_item(tw_sum_all(tw_square(v.items[i])));
    tw_scope_end();
    return s;
}

/* The seeds' shared trunk with two heads: gradients for one head leave the
 * trunk alone; a frozen trunk stays put under fit; variables are gathered
 * recursively without duplicates. */
static void test_trunk_and_heads(void)
{
    tw_tensor *x, *y;
    blobs(128, 8, &x, &y);
    tw_model *trunk = tw_sequential_new("trunk");
    tw_model_add(trunk, tw_dense(8, "relu"));
    tw_model *head1 = tw_sequential_new("head1"), *head2 = tw_sequential_new("head2");
    tw_model_add(head1, tw_dense(3, NULL));
    tw_model_add(head2, tw_dense(3, NULL));
    tw_model *path1 = tw_sequential_new("path1"), *path2 = tw_sequential_new("path2");
    tw_model_add(path1, tw_layer_ref(trunk));
    tw_model_add(path1, tw_layer_ref(head1));
    tw_model_add(path2, tw_layer_ref(trunk));
    tw_model_add(path2, tw_layer_ref(head2));
    g_assert_cmpint(tw_model_build(path1, &(tw_shape){2, {-1, 2}}, 1), ==, 0);
    g_assert_cmpint(tw_model_build(path2, &(tw_shape){2, {-1, 2}}, 2), ==, 0);
    g_assert_cmpint(tw_model_trainable_variables(path1).n, ==, 4);

    /* Fine-tune head2 with fit while the trunk is frozen. */
    tw_layer_set_trainable(trunk, false);
    g_assert_cmpint(tw_model_trainable_variables(path2).n, ==, 2);
    int64_t total, trainable, frozen;
    tw_model_count_params(path2, &total, &trainable, &frozen);
    g_assert_cmpint(frozen, ==, 2 * 8 + 8);
    g_assert_cmpint(trainable, ==, 8 * 3 + 3);
    double trunk_before = weights_fingerprint(trunk), head1_before = weights_fingerprint(head1);
    double head2_before = weights_fingerprint(head2);
    compile(path2, 0.05);
    tw_fit_options opt = tw_fit_options_default();
    opt.epochs = 2;
    tw_history *h = tw_model_fit(path2, x, y, &opt);
    g_assert_nonnull(h);
    g_assert_cmpfloat(weights_fingerprint(trunk), ==, trunk_before);
    g_assert_cmpfloat(weights_fingerprint(head1), ==, head1_before);
    g_assert_cmpfloat(weights_fingerprint(head2), !=, head2_before);
    char *summary = tw_model_summary(path2, 0);
    g_assert_nonnull(strstr(summary, "trunk (Sequential)"));
    g_assert_nonnull(strstr(summary, "Non-trainable params: 24"));
    free(summary);
    tw_history_free(h);
    tw_layer_unref(path1);
    tw_layer_unref(path2);
    tw_layer_unref(trunk);
    tw_layer_unref(head1);
    tw_layer_unref(head2);
    tw_tensor_unref(x);
    tw_tensor_unref(y);
}

static int check_gradients(tw_model *m, const tw_progress *p, const tw_logs *logs, void *data)
{
    g_assert_cmpint(p->ngradients, ==, 4);
    for (int i = 0; i < p->ngradients; i++) {
        g_assert_nonnull(p->gradients[i]);
        g_assert_cmpint(tw_tensor_numel(p->gradients[i]), ==, tw_tensor_numel(p->variables[i]));
    }
    (*(int *)data)++;
    return 0;
}

/* expose_gradients hands each step's gradients to on_batch_end. */
static void test_exposed_gradients(void)
{
    tw_tensor *x, *y;
    blobs(64, 10, &x, &y);
    tw_model *m = classifier(0);
    compile(m, 0.01);
    int calls = 0;
    tw_callback cb = {.on_batch_end = check_gradients, .user_data = &calls};
    tw_fit_options opt = tw_fit_options_default();
    opt.expose_gradients = true;
    opt.callbacks = &cb;
    opt.ncallbacks = 1;
    tw_history *h = tw_model_fit(m, x, y, &opt);
    g_assert_nonnull(h);
    g_assert_cmpint(calls, ==, 2);
    tw_history_free(h);
    tw_layer_unref(m);
    tw_tensor_unref(x);
    tw_tensor_unref(y);
}

static void test_usage_errors(void)
{
    tw_tensor *x, *y;
    blobs(16, 9, &x, &y);
    tw_model *m = classifier(0);
    g_assert_null(tw_model_fit(m, x, y, NULL));
    g_assert_nonnull(strstr(tw_last_error(), "not compiled"));
    compile(m, 0.01);
    tw_fit_options opt = tw_fit_options_default();
    opt.batch_size = 0;
    g_assert_null(tw_model_fit(m, x, y, &opt));
    g_assert_nonnull(strstr(tw_last_error(), "batch size"));
    opt = tw_fit_options_default();
    opt.validation_split = 0.99; /* int(16 * 0.01) = 0 examples left to train on */
    g_assert_null(tw_model_fit(m, x, y, &opt));
    g_assert_nonnull(strstr(tw_last_error(), "leaves no training data"));
    tw_layer_unref(m);
    tw_tensor_unref(x);
    tw_tensor_unref(y);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/training/fit-evaluate-predict", test_fit_evaluate_predict);
    g_test_add_func("/training/batch-steps", test_batch_steps);
    g_test_add_func("/training/resume-is-exact", test_resume_is_exact);
    g_test_add_func("/training/steady-state-allocates-no-buffers", test_steady_state_allocates_no_buffers);
    g_test_add_func("/training/early-stopping", test_early_stopping);
    g_test_add_func("/training/nan-loss", test_nan_loss_is_reported);
    g_test_add_func("/training/divergence", test_divergence_is_reported);
    g_test_add_func("/training/custom-loop", test_custom_loop);
    g_test_add_func("/training/trunk-and-heads", test_trunk_and_heads);
    g_test_add_func("/training/usage-errors", test_usage_errors);
    g_test_add_func("/training/exposed-gradients", test_exposed_gradients);
    return g_test_run();
}
