/* Traced training: every optimizer's update traced into a graph gives the
 * eager update's weights, slots and iteration count (float64, each kind,
 * schedules and clipping); fit traced and eager give the same history and
 * gradients; a step's graph read back from its JSON trains the same; the
 * last, smaller batch retraces once and later epochs reuse
 * the graphs; a model with Dropout falls back to eager under auto and
 * fails under on naming the op the random draw feeds. */
#include <math.h>
#include <string.h>

#include <glib.h>

#include <tw/engine.h>
#include <tw/function.h>
#include <tw/model.h>

#define STEPS 6

/* ---- the optimizers, traced and eager -------------------------------------------- */

/* A least-squares problem in float64: pred = x W + b. */
typedef struct {
    tw_tensor *x, *y, *w, *b;
    tw_optimizer *opt;
} problem;

static tw_tensor *matrix(tw_rng *rng, int64_t rows, int64_t cols, double scale)
{
    return tw_random_normal(rng, TW_FLOAT64, TW_SHAPE(rows, cols), 0, scale);
}

static problem problem_new(const tw_optimizer_config *config)
{
    problem p = {0};
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(42);
    p.x = tw_tensor_ref(matrix(rng, 8, 3, 1));
    p.y = tw_tensor_ref(matrix(rng, 8, 2, 1));
    p.w = tw_tensor_ref(tw_variable(matrix(rng, 3, 2, 0.5), "w", true));
    p.b = tw_tensor_ref(tw_variable(tw_zeros(TW_FLOAT64, TW_SHAPE(2)), "b", true));
    tw_rng_free(rng);
    tw_scope_end();
    p.opt = tw_optimizer_new(config);
    g_assert_nonnull(p.opt);
    return p;
}

static void problem_free(problem *p)
{
    tw_tensor_unref(p->x);
    tw_tensor_unref(p->y);
    tw_tensor_unref(p->w);
    tw_tensor_unref(p->b);
    tw_optimizer_free(p->opt);
}

/* One training step: the loss, its gradients and the update. The same
 * code runs eagerly and as a traced function. */
static int step(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user)
{
    (void)n;
    (void)max;
    problem *p = user;
    tw_tape *tape = tw_tape_begin(false);
    tw_tensor *pred = tw_add(tw_matmul(in[0], p->w), p->b);
    tw_tensor *loss = tw_mean(tw_square(tw_sub(pred, in[1])), 0, NULL, false);
    tw_tape_end(tape);
    tw_tensor *grads[2] = {NULL, NULL};
    int rc = tw_tape_gradient(tape, loss, 2, (tw_tensor *const[]){p->w, p->b}, grads);
    tw_tape_free(tape);
    if (rc || tw_optimizer_apply_gradients(p->opt, 2, (tw_tensor *const[]){p->w, p->b}, grads))
        return -1;
    out[0] = loss;
    return 1;
}

static void train(problem *p, bool traced)
{
    tw_function *f = tw_function_new("least_squares_step", step, p);
    for (int s = 0; s < STEPS; s++) {
        tw_scope_begin();
        tw_tensor *loss = NULL;
        int n = traced ? tw_function_call(f, 2, (tw_tensor *const[]){p->x, p->y}, &loss, 1)
                       : step((tw_tensor *const[]){p->x, p->y}, 2, &loss, 1, p);
        if (n != 1)
            g_error("step %d (%s): %s", s, traced ? "traced" : "eager", tw_last_error());
        tw_scope_end();
    }
    if (traced)
        g_assert_cmpint(tw_function_trace_count(f), ==, 1);
    tw_function_free(f);
}

static void assert_close(const tw_tensor *a, const tw_tensor *b, const char *what, const char *name)
{
    const double *x = tw_tensor_data(a), *y = tw_tensor_data(b);
    for (int64_t i = 0; i < tw_tensor_numel(a); i++)
        if (!(fabs(x[i] - y[i]) <= 1e-12 * (1 + fabs(y[i]))))
            g_error("%s, %s[%lld]: traced %.17g, eager %.17g", name, what, (long long)i, x[i], y[i]);
}

typedef struct {
    const char *name;
    tw_optimizer_config config;
} optimizer_case;

static void check_case(const optimizer_case *c)
{
    problem eager = problem_new(&c->config), traced = problem_new(&c->config);
    train(&eager, false);
    train(&traced, true);
    g_assert_cmpint(tw_optimizer_iterations(traced.opt), ==, STEPS);
    g_assert_cmpint(tw_optimizer_iterations(eager.opt), ==, STEPS);
    assert_close(traced.w, eager.w, "w", c->name);
    assert_close(traced.b, eager.b, "b", c->name);
    /* The weights moved: the comparison is not between two untouched copies. */
    problem fresh = problem_new(&c->config);
    g_assert_cmpfloat(fabs(((double *)tw_tensor_data(eager.b))[0]), >, 1e-6);
    problem_free(&fresh);
    const char *slots[] = {"m", "v", "momentum", "velocity", "accumulator"};
    for (size_t k = 0; k < G_N_ELEMENTS(slots); k++) {
        tw_scope_begin();
        tw_error_clear();
        tw_tensor *a = tw_optimizer_slot(traced.opt, traced.w, slots[k]);
        tw_tensor *b = tw_optimizer_slot(eager.opt, eager.w, slots[k]);
        g_assert_true((a == NULL) == (b == NULL));
        if (a)
            assert_close(a, b, slots[k], c->name);
        tw_scope_end();
    }
    problem_free(&eager);
    problem_free(&traced);
}

static tw_optimizer_config with(tw_optimizer_kind kind, double learning_rate)
{
    tw_optimizer_config c = tw_optimizer_defaults(kind);
    c.learning_rate.initial_learning_rate = learning_rate;
    return c;
}

static void test_optimizers(void)
{
    optimizer_case cases[32];
    int n = 0;
    cases[n++] = (optimizer_case){"sgd", with(TW_OPTIMIZER_SGD, 0.1)};
    cases[n] = (optimizer_case){"sgd momentum", with(TW_OPTIMIZER_SGD, 0.1)};
    cases[n++].config.momentum = 0.9;
    cases[n] = (optimizer_case){"sgd nesterov", with(TW_OPTIMIZER_SGD, 0.1)};
    cases[n].config.momentum = 0.9;
    cases[n++].config.nesterov = true;
    cases[n++] = (optimizer_case){"adam", with(TW_OPTIMIZER_ADAM, 0.05)};
    cases[n++] = (optimizer_case){"adamw", with(TW_OPTIMIZER_ADAMW, 0.05)};
    cases[n++] = (optimizer_case){"rmsprop", with(TW_OPTIMIZER_RMSPROP, 0.05)};
    cases[n] = (optimizer_case){"rmsprop momentum", with(TW_OPTIMIZER_RMSPROP, 0.05)};
    cases[n++].config.momentum = 0.5;
    cases[n++] = (optimizer_case){"adagrad", with(TW_OPTIMIZER_ADAGRAD, 0.1)};
    cases[n] = (optimizer_case){"adam clipvalue", with(TW_OPTIMIZER_ADAM, 0.05)};
    cases[n++].config.clipvalue = 0.1;
    cases[n] = (optimizer_case){"sgd clipnorm", with(TW_OPTIMIZER_SGD, 0.1)};
    cases[n++].config.clipnorm = 0.2;
    cases[n] = (optimizer_case){"rmsprop global_clipnorm", with(TW_OPTIMIZER_RMSPROP, 0.05)};
    cases[n++].config.global_clipnorm = 0.3;
    cases[n] = (optimizer_case){"sgd exponential staircase", with(TW_OPTIMIZER_SGD, 0.1)};
    cases[n].config.learning_rate.kind = TW_SCHEDULE_EXPONENTIAL_DECAY;
    cases[n].config.learning_rate.decay_steps = 2;
    cases[n].config.learning_rate.decay_rate = 0.5;
    cases[n++].config.learning_rate.staircase = true;
    cases[n] = (optimizer_case){"adam cosine", with(TW_OPTIMIZER_ADAM, 0.05)};
    cases[n].config.learning_rate.kind = TW_SCHEDULE_COSINE_DECAY;
    cases[n].config.learning_rate.decay_steps = 4;
    cases[n++].config.learning_rate.alpha = 0.1;
    cases[n] = (optimizer_case){"adagrad step decay", with(TW_OPTIMIZER_ADAGRAD, 0.1)};
    cases[n].config.learning_rate.kind = TW_SCHEDULE_STEP_DECAY;
    cases[n].config.learning_rate.decay_steps = 3;
    cases[n++].config.learning_rate.decay_rate = 0.2;
    for (int i = 0; i < n; i++)
        check_case(&cases[i]);
}

/* The counter is a variable the graph increments: a count set between
 * calls is what the next traced update reads (Adam's bias correction). */
static void test_counter_set_between_calls(void)
{
    tw_optimizer_config config = with(TW_OPTIMIZER_ADAM, 0.05);
    problem eager = problem_new(&config), traced = problem_new(&config);
    tw_optimizer_set_iterations(eager.opt, 100);
    tw_optimizer_set_iterations(traced.opt, 100);
    train(&eager, false);
    train(&traced, true);
    g_assert_cmpint(tw_optimizer_iterations(traced.opt), ==, 100 + STEPS);
    assert_close(traced.w, eager.w, "w", "adam from 100");
    tw_tensor *counter = tw_optimizer_iterations_variable(traced.opt);
    g_assert_cmpint(tw_tensor_dtype(counter), ==, TW_INT64);
    problem_free(&eager);
    problem_free(&traced);
}

/* The traced graph holds the update as ops: one optimizer_update per
 * variable and the counter's assign_add. */
static void test_update_ops_in_graph(void)
{
    tw_optimizer_config config = with(TW_OPTIMIZER_SGD, 0.1);
    config.momentum = 0.9;
    problem p = problem_new(&config);
    tw_function *f = tw_function_new("least_squares_step", step, &p);
    const tw_graph *g = tw_function_get_graph(f, 2, (tw_tensor *const[]){p.x, p.y});
    g_assert_nonnull(g);
    int updates = 0, increments = 0;
    for (int i = 0; i < tw_graph_node_count(g); i++) {
        updates += strcmp(tw_graph_node_op(g, i), "optimizer_update") == 0;
        increments += strcmp(tw_graph_node_op(g, i), "assign_add") == 0;
    }
    g_assert_cmpint(updates, ==, 2);
    g_assert_cmpint(increments, ==, 1);
    g_assert_cmpint(tw_optimizer_iterations(p.opt), ==, 0); /* tracing alone updates nothing */
    char *json = tw_graph_json(g);
    g_assert_nonnull(strstr(json, "optimizer_update"));
    free(json);
    tw_function_free(f);
    problem_free(&p);
}

/* The original graph's tensors (variables, slots, the counter), by node name. */
static tw_tensor *same_tensors(const char *name, tw_node_kind kind, void *user_data)
{
    const tw_graph *g = user_data;
    for (int id = 0; id < tw_graph_node_count(g); id++)
        if (strcmp(tw_graph_node_name(g, id), name) == 0)
            return (tw_tensor *)tw_graph_node_tensor(g, id);
    return NULL;
}

/* A training step's graph written as JSON and read back (the optimizer's
 * update op is in the registry) trains as the traced function does. */
static void test_step_graph_read_back(void)
{
    tw_optimizer_config config = with(TW_OPTIMIZER_ADAM, 0.05);
    problem direct = problem_new(&config), imported = problem_new(&config);
    train(&direct, true);
    tw_function *f = tw_function_new("least_squares_step", step, &imported);
    const tw_graph *g = tw_function_get_graph(f, 2, (tw_tensor *const[]){imported.x, imported.y});
    g_assert_nonnull(g);
    char *json = tw_graph_json(g);
    tw_graph *back = tw_graph_from_json(json, same_tensors, (void *)g);
    if (!back)
        g_error("step graph read back: %s", tw_last_error());
    for (int s = 0; s < STEPS; s++) {
        tw_scope_begin();
        tw_tensor *loss = NULL;
        g_assert_cmpint(tw_graph_run(back, 2, (tw_tensor *const[]){imported.x, imported.y}, &loss, 1), ==, 1);
        tw_scope_end();
    }
    g_assert_cmpint(tw_optimizer_iterations(imported.opt), ==, STEPS);
    assert_close(imported.w, direct.w, "w", "adam read back");
    assert_close(imported.b, direct.b, "b", "adam read back");
    tw_graph_unref(back);
    free(json);
    tw_function_free(f);
    problem_free(&direct);
    problem_free(&imported);
}

/* ---- fit ------------------------------------------------------------------------------ */

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

static tw_model *classifier(double dropout, const char *optimizer)
{
    tw_model *m = tw_sequential_new("classifier");
    tw_model_add(m, tw_input_layer(&(tw_shape){2, {-1, 2}}));
    tw_model_add(m, tw_dense(16, "relu"));
    if (dropout > 0)
        tw_model_add(m, tw_dropout_layer(dropout));
    tw_model_add(m, tw_dense(3, NULL));
    tw_loss loss = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    loss.from_logits = true;
    const char *metrics[] = {"accuracy"};
    g_assert_cmpint(tw_model_compile(m, tw_optimizer_new_named(optimizer, 0.01), &loss, 1, metrics), ==, 0);
    return m;
}

/* What on_batch_end saw: the step graph of each batch and the last gradients. */
typedef struct {
    const tw_graph *graphs[64];
    int64_t batch_rows[64];
    int calls;
    double last_gradient_sum;
} seen_steps;

static int on_batch(tw_model *model, const tw_progress *p, const tw_logs *logs, void *data)
{
    (void)logs;
    seen_steps *s = data;
    const tw_graph *g = tw_model_train_step_graph(model);
    if (s->calls < 64) {
        s->graphs[s->calls] = g;
        const int64_t *shape = NULL;
        s->batch_rows[s->calls] = g && tw_graph_node_output_shape(g, tw_graph_input_node(g, 0), 0, &shape) > 0
                                      ? shape[0]
                                      : -1;
    }
    s->calls++;
    s->last_gradient_sum = 0;
    for (int i = 0; i < p->ngradients; i++) {
        g_assert_nonnull(p->gradients[i]);
        const float *d = tw_tensor_data(p->gradients[i]);
        for (int64_t k = 0; k < tw_tensor_numel(p->gradients[i]); k++)
            s->last_gradient_sum += fabs(d[k]);
    }
    return 0;
}

static tw_history *fit(tw_model *m, tw_tensor *x, tw_tensor *y, tw_trace_mode mode, seen_steps *seen)
{
    tw_callback cb = {.on_batch_end = on_batch, .user_data = seen};
    tw_fit_options opt = tw_fit_options_default();
    opt.epochs = 3;
    opt.seed = 5;
    opt.traced = mode;
    opt.expose_gradients = true;
    opt.callbacks = &cb;
    opt.ncallbacks = 1;
    return tw_model_fit(m, x, y, &opt);
}

/* Traced and eager fits from the same seed: the same losses, accuracies,
 * gradients and iteration counts, for each optimizer kind. */
static void test_fit_same_history(void)
{
    tw_tensor *x, *y;
    blobs(200, 1, &x, &y); /* 6 batches of 32 and one of 8 */
    const char *kinds[] = {"sgd", "adam", "rmsprop", "adagrad"};
    for (size_t k = 0; k < G_N_ELEMENTS(kinds); k++) {
        tw_model *a = classifier(0, kinds[k]), *b = classifier(0, kinds[k]);
        seen_steps sa = {0}, sb = {0};
        tw_history *ha = fit(a, x, y, TW_TRACE_ON, &sa), *hb = fit(b, x, y, TW_TRACE_OFF, &sb);
        if (!ha || !hb)
            g_error("%s: %s", kinds[k], tw_last_error());
        g_assert_cmpint(ha->epochs, ==, hb->epochs);
        for (int e = 0; e < ha->epochs; e++) {
            for (int i = 0; i < hb->epoch_logs[e].n; i++) {
                double va = ha->epoch_logs[e].values[i], vb = hb->epoch_logs[e].values[i];
                g_assert_cmpstr(ha->epoch_logs[e].names[i], ==, hb->epoch_logs[e].names[i]);
                if (!(fabs(va - vb) <= 1e-5 * (1 + fabs(vb))))
                    g_error("%s, epoch %d, %s: traced %.9g, eager %.9g", kinds[k], e, hb->epoch_logs[e].names[i], va,
                            vb);
            }
        }
        g_assert_cmpfloat(fabs(sa.last_gradient_sum - sb.last_gradient_sum), <=, 1e-4 * sb.last_gradient_sum);
        g_assert_cmpint(tw_optimizer_iterations(tw_model_optimizer(a)), ==, 21);
        g_assert_cmpint(tw_optimizer_iterations(tw_model_optimizer(b)), ==, 21);
        g_assert_nonnull(sa.graphs[0]);
        g_assert_null(sb.graphs[0]); /* eager: no step graph */
        tw_history_free(ha);
        tw_history_free(hb);
        tw_layer_unref(a);
        tw_layer_unref(b);
    }
    tw_tensor_unref(x);
    tw_tensor_unref(y);
}

/* The last, smaller batch traces once more; later epochs reuse both graphs. */
static void test_retrace_on_last_batch(void)
{
    tw_tensor *x, *y;
    blobs(200, 2, &x, &y);
    tw_model *m = classifier(0, "adam");
    seen_steps s = {0};
    tw_history *h = fit(m, x, y, TW_TRACE_ON, &s);
    g_assert_nonnull(h);
    g_assert_cmpint(s.calls, ==, 21);
    for (int i = 0; i < s.calls; i++) {
        bool last = i % 7 == 6;
        g_assert_cmpint(s.batch_rows[i], ==, last ? 8 : 32);
        g_assert_true(s.graphs[i] == (last ? s.graphs[6] : s.graphs[0]));
    }
    g_assert_true(s.graphs[0] != s.graphs[6]);
    tw_history_free(h);
    tw_layer_unref(m);
    tw_tensor_unref(x);
    tw_tensor_unref(y);
}

/* Dropout draws random numbers, which a graph cannot: auto trains eagerly
 * (the same history as off), on fails naming the op the draw feeds. */
static void test_dropout_falls_back(void)
{
    tw_tensor *x, *y;
    blobs(96, 3, &x, &y);
    tw_model *a = classifier(0.5, "adam"), *b = classifier(0.5, "adam"), *c = classifier(0.5, "adam");
    seen_steps sa = {0}, sb = {0}, sc = {0};
    tw_history *ha = fit(a, x, y, TW_TRACE_AUTO, &sa), *hb = fit(b, x, y, TW_TRACE_OFF, &sb);
    g_assert_nonnull(ha);
    g_assert_nonnull(hb);
    g_assert_null(sa.graphs[0]);
    for (int i = 0; i < hb->epoch_logs[2].n; i++)
        g_assert_cmpfloat(ha->epoch_logs[2].values[i], ==, hb->epoch_logs[2].values[i]);
    g_assert_null(fit(c, x, y, TW_TRACE_ON, &sc));
    const char *message = tw_last_error();
    if (!strstr(message, "random draw") || !strstr(message, "op '") || !strstr(message, "traced"))
        g_error("unexpected message: %s", message);
    g_test_message("traced = on with Dropout: %s", message);
    g_assert_cmpint(tw_optimizer_iterations(tw_model_optimizer(c)), ==, 0);
    tw_history_free(ha);
    tw_history_free(hb);
    tw_layer_unref(a);
    tw_layer_unref(b);
    tw_layer_unref(c);
    tw_tensor_unref(x);
    tw_tensor_unref(y);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/traced-training/optimizers", test_optimizers);
    g_test_add_func("/traced-training/counter-set-between-calls", test_counter_set_between_calls);
    g_test_add_func("/traced-training/update-ops-in-graph", test_update_ops_in_graph);
    g_test_add_func("/traced-training/step-graph-read-back", test_step_graph_read_back);
    g_test_add_func("/traced-training/fit-same-history", test_fit_same_history);
    g_test_add_func("/traced-training/retrace-on-last-batch", test_retrace_on_last_batch);
    g_test_add_func("/traced-training/dropout-falls-back", test_dropout_falls_back);
    return g_test_run();
}
