/* Optimizers: each update rule for three steps against its published
 * formula computed here in double (float64 and float32 variables), SGD's
 * momentum and Nesterov variants, AdamW's decoupled decay, gradient
 * clipping by value, norm and global norm, learning-rate schedules, the
 * iteration counter, slots, NULL and non-contiguous gradients, the errors a
 * user can cause, and the version bump that makes a tape refuse a variable
 * the optimizer changed. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "internal.h"
#include "tw/optimizers.h"

#define N 3
#define ARR(...) ((tw_tensor *const[]){__VA_ARGS__})
#define STEPS 3

/* ---- helpers ------------------------------------------------------------------ */

static const double w0[N] = {0.5, -1.25, 2.0};

/* The gradient of step t (0-based): varied signs and sizes, so clipping and
 * momentum see something different every step. */
static double grad_at(int t, int i)
{
    static const double g[STEPS][N] = {{0.3, -0.8, 1.5}, {-0.2, 0.4, 2.5}, {0.05, -1.1, -0.7}};
    return g[t][i];
}

static tw_tensor *vector(tw_dtype dtype, const double *values, int64_t n)
{
    tw_tensor *t = tw_zeros(dtype, TW_SHAPE(n));
    for (int64_t i = 0; i < n; i++) {
        if (dtype == TW_FLOAT32)
            ((float *)tw_tensor_data(t))[i] = (float)values[i];
        else
            ((double *)tw_tensor_data(t))[i] = values[i];
    }
    return t;
}

static double at(const tw_tensor *t, int64_t i)
{
    return tw_tensor_dtype(t) == TW_FLOAT32 ? ((const float *)tw_tensor_data(t))[i]
                                            : ((const double *)tw_tensor_data(t))[i];
}

static void assert_close(const char *what, const tw_tensor *t, const double *expected, int64_t n, double rtol)
{
    g_assert_nonnull(t);
    for (int64_t i = 0; i < n; i++) {
        double tol = rtol * fmax(1, fabs(expected[i]));
        if (fabs(at(t, i) - expected[i]) > tol)
            g_error("%s: element %lld is %.15g, expected %.15g", what, (long long)i, at(t, i), expected[i]);
    }
}

static void assert_error_contains(const char *needle)
{
    const char *message = tw_last_error();
    if (!strstr(message, needle))
        g_error("error \"%s\" does not contain \"%s\"", message, needle);
    tw_error_clear();
}

/* Run STEPS updates of a fresh variable w0 with the optimizer and compare
 * with the reference after every step. */
typedef void (*reference_fn)(const tw_optimizer_config *c, int t, double *w, double state[2][N]);

static void run_against(const char *what, const tw_optimizer_config *config, tw_dtype dtype, reference_fn reference)
{
    tw_scope_begin();
    tw_tensor *w = tw_variable(vector(dtype, w0, N), "w", true);
    tw_optimizer *opt = tw_optimizer_new(config);
    if (!opt)
        g_error("%s: %s", what, tw_last_error());
    double expected[N], state[2][N] = {{0}};
    memcpy(expected, w0, sizeof expected);
    for (int t = 0; t < STEPS; t++) {
        double g[N];
        for (int i = 0; i < N; i++)
            g[i] = grad_at(t, i);
        tw_tensor *grad = vector(dtype, g, N);
        g_assert_cmpint(tw_optimizer_apply_gradients(opt, 1, &w, &grad), ==, 0);
        reference(config, t, expected, state);
        assert_close(what, w, expected, N, dtype == TW_FLOAT64 ? 1e-12 : 2e-6);
    }
    g_assert_cmpint(tw_optimizer_iterations(opt), ==, STEPS);
    tw_optimizer_free(opt);
    tw_scope_end();
}

static void run_both(const char *what, const tw_optimizer_config *config, reference_fn reference)
{
    run_against(what, config, TW_FLOAT64, reference);
    run_against(what, config, TW_FLOAT32, reference);
}

/* ---- the published formulas ----------------------------------------------------- */

static double lr_of(const tw_optimizer_config *c, int t)
{
    return tw_lr_schedule_at(&c->learning_rate, t);
}

/* SGD with momentum (Keras 2.11+): v = mu v - lr g; w += v, or with
 * Nesterov w += mu v - lr g. Plain SGD is mu = 0. */
static void sgd_reference(const tw_optimizer_config *c, int t, double *w, double state[2][N])
{
    double lr = lr_of(c, t), mu = c->momentum;
    for (int i = 0; i < N; i++) {
        double g = grad_at(t, i);
        double *v = &state[0][i];
        *v = mu * *v - lr * g;
        w[i] += c->nesterov ? mu * *v - lr * g : *v;
    }
}

/* Adam (Kingma & Ba, Algorithm 1, with the step-size form of section 2 that
 * Keras uses): m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2,
 * w -= lr sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps). AdamW first
 * decays w by lr * weight_decay * w. */
static void adam_reference(const tw_optimizer_config *c, int t, double *w, double state[2][N])
{
    double lr = lr_of(c, t), b1 = c->beta_1, b2 = c->beta_2, step = t + 1;
    double alpha = lr * sqrt(1 - pow(b2, step)) / (1 - pow(b1, step));
    for (int i = 0; i < N; i++) {
        double g = grad_at(t, i);
        double *m = &state[0][i], *v = &state[1][i];
        w[i] -= lr * c->weight_decay * w[i];
        *m = b1 * *m + (1 - b1) * g;
        *v = b2 * *v + (1 - b2) * g * g;
        w[i] -= alpha * *m / (sqrt(*v) + c->epsilon);
    }
}

/* RMSprop (Hinton's lecture 6e, Keras' epsilon inside the root):
 * s = rho s + (1 - rho) g^2; step = lr g / sqrt(s + eps); with momentum
 * mom = mu mom + step, w -= mom; else w -= step. */
static void rmsprop_reference(const tw_optimizer_config *c, int t, double *w, double state[2][N])
{
    double lr = lr_of(c, t);
    for (int i = 0; i < N; i++) {
        double g = grad_at(t, i);
        double *s = &state[0][i], *mom = &state[1][i];
        *s = c->rho * *s + (1 - c->rho) * g * g;
        double step = lr * g / sqrt(*s + c->epsilon);
        *mom = c->momentum * *mom + step;
        w[i] -= c->momentum > 0 ? *mom : step;
    }
}

/* Adagrad (Duchi et al.): a += g^2 from initial_accumulator_value,
 * w -= lr g / sqrt(a + eps). */
static void adagrad_reference(const tw_optimizer_config *c, int t, double *w, double state[2][N])
{
    double lr = lr_of(c, t);
    for (int i = 0; i < N; i++) {
        double g = grad_at(t, i);
        double *a = &state[0][i];
        if (t == 0)
            *a = c->initial_accumulator_value;
        *a += g * g;
        w[i] -= lr * g / sqrt(*a + c->epsilon);
    }
}

/* ---- update rules --------------------------------------------------------------- */

static void test_sgd(void)
{
    tw_optimizer_config c = tw_optimizer_defaults(TW_OPTIMIZER_SGD);
    c.learning_rate.initial_learning_rate = 0.1;
    run_both("sgd", &c, sgd_reference);
    c.momentum = 0.9;
    run_both("sgd momentum", &c, sgd_reference);
    c.nesterov = true;
    run_both("sgd nesterov", &c, sgd_reference);
}

static void test_adam(void)
{
    tw_optimizer_config c = tw_optimizer_defaults(TW_OPTIMIZER_ADAM);
    c.learning_rate.initial_learning_rate = 0.05;
    run_both("adam", &c, adam_reference);
    c.beta_1 = 0.5;
    c.beta_2 = 0.75;
    c.epsilon = 0.01;
    run_both("adam (beta 0.5, 0.75, epsilon 0.01)", &c, adam_reference);
}

static void test_adamw(void)
{
    tw_optimizer_config c = tw_optimizer_defaults(TW_OPTIMIZER_ADAMW);
    g_assert_cmpfloat(c.weight_decay, ==, 0.004);
    c.learning_rate.initial_learning_rate = 0.05;
    c.weight_decay = 0.5; /* large, so the decay term shows */
    run_both("adamw", &c, adam_reference);

    /* With zero gradients Adam's step is 0: only the decay moves w. */
    tw_scope_begin();
    tw_tensor *w = tw_variable(vector(TW_FLOAT64, w0, N), "w", true);
    tw_optimizer *opt = tw_optimizer_new(&c);
    tw_tensor *zero = tw_zeros(TW_FLOAT64, TW_SHAPE(N));
    g_assert_cmpint(tw_optimizer_apply_gradients(opt, 1, &w, &zero), ==, 0);
    double expected[N];
    for (int i = 0; i < N; i++)
        expected[i] = w0[i] * (1 - 0.05 * 0.5);
    assert_close("adamw decay only", w, expected, N, 1e-15);
    tw_optimizer_free(opt);
    tw_scope_end();
}

static void test_rmsprop(void)
{
    tw_optimizer_config c = tw_optimizer_defaults(TW_OPTIMIZER_RMSPROP);
    c.learning_rate.initial_learning_rate = 0.01;
    run_both("rmsprop", &c, rmsprop_reference);
    c.momentum = 0.8;
    run_both("rmsprop momentum", &c, rmsprop_reference);
}

static void test_adagrad(void)
{
    tw_optimizer_config c = tw_optimizer_defaults(TW_OPTIMIZER_ADAGRAD);
    c.learning_rate.initial_learning_rate = 0.1;
    run_both("adagrad", &c, adagrad_reference);
    c.initial_accumulator_value = 2.5;
    run_both("adagrad (initial accumulator 2.5)", &c, adagrad_reference);
}

static void test_defaults_and_names(void)
{
    tw_optimizer_config sgd = tw_optimizer_defaults(TW_OPTIMIZER_SGD);
    g_assert_cmpfloat(sgd.learning_rate.initial_learning_rate, ==, 0.01);
    g_assert_cmpint(sgd.learning_rate.kind, ==, TW_SCHEDULE_CONSTANT);
    g_assert_cmpfloat(sgd.momentum, ==, 0);
    g_assert_false(sgd.nesterov);
    tw_optimizer_config adam = tw_optimizer_defaults(TW_OPTIMIZER_ADAM);
    g_assert_cmpfloat(adam.learning_rate.initial_learning_rate, ==, 0.001);
    g_assert_cmpfloat(adam.beta_1, ==, 0.9);
    g_assert_cmpfloat(adam.beta_2, ==, 0.999);
    g_assert_cmpfloat(adam.epsilon, ==, 1e-7);
    g_assert_cmpfloat(adam.weight_decay, ==, 0);
    tw_optimizer_config rms = tw_optimizer_defaults(TW_OPTIMIZER_RMSPROP);
    g_assert_cmpfloat(rms.learning_rate.initial_learning_rate, ==, 0.001);
    g_assert_cmpfloat(rms.rho, ==, 0.9);
    g_assert_cmpfloat(rms.momentum, ==, 0);
    g_assert_cmpfloat(rms.epsilon, ==, 1e-7);
    tw_optimizer_config ada = tw_optimizer_defaults(TW_OPTIMIZER_ADAGRAD);
    g_assert_cmpfloat(ada.learning_rate.initial_learning_rate, ==, 0.001);
    g_assert_cmpfloat(ada.initial_accumulator_value, ==, 0.1);
    g_assert_cmpfloat(ada.epsilon, ==, 1e-7);

    for (int k = 0; k < TW_OPTIMIZER_KIND_COUNT; k++) {
        tw_optimizer_kind kind;
        const char *name = tw_optimizer_kind_name((tw_optimizer_kind)k);
        g_assert_nonnull(name);
        g_assert_cmpint(tw_optimizer_kind_from_name(name, &kind), ==, 0);
        g_assert_cmpint(kind, ==, k);
    }
    tw_optimizer_kind kind;
    g_assert_cmpint(tw_optimizer_kind_from_name("RMSprop", &kind), ==, 0);
    g_assert_cmpint(kind, ==, TW_OPTIMIZER_RMSPROP);
    g_assert_cmpint(tw_optimizer_kind_from_name("adadelta", &kind), ==, -1);
    assert_error_contains("unknown optimizer 'adadelta'; expected one of sgd, adam, adamw, rmsprop, adagrad");

    tw_optimizer *opt = tw_optimizer_new_named("Adam", 0.25);
    g_assert_nonnull(opt);
    const tw_optimizer_config *c = tw_optimizer_get_config(opt);
    g_assert_cmpint(c->kind, ==, TW_OPTIMIZER_ADAM);
    g_assert_cmpfloat(c->learning_rate.initial_learning_rate, ==, 0.25);
    g_assert_cmpfloat(c->beta_2, ==, 0.999);
    g_assert_cmpfloat(tw_optimizer_learning_rate(opt), ==, 0.25);
    tw_optimizer_free(opt);
    g_assert_null(tw_optimizer_new_named("nadam", 0.1));
    assert_error_contains("unknown optimizer 'nadam'");
}

static void test_config_errors(void)
{
    tw_optimizer_config c = tw_optimizer_defaults(TW_OPTIMIZER_SGD);
    c.clipnorm = 1;
    c.global_clipnorm = 2;
    g_assert_null(tw_optimizer_new(&c));
    assert_error_contains("sgd: at most one of clipnorm (1) and global_clipnorm (2) can be set");
    c = tw_optimizer_defaults(TW_OPTIMIZER_SGD);
    c.momentum = 1.5;
    g_assert_null(tw_optimizer_new(&c));
    assert_error_contains("sgd: momentum must be in [0, 1], got 1.5");
    c = tw_optimizer_defaults(TW_OPTIMIZER_ADAM);
    c.beta_1 = 1;
    g_assert_null(tw_optimizer_new(&c));
    assert_error_contains("adam: beta_1 must be in [0, 1), got 1");
    c = tw_optimizer_defaults(TW_OPTIMIZER_ADAM);
    c.learning_rate.kind = TW_SCHEDULE_COSINE_DECAY;
    g_assert_null(tw_optimizer_new(&c));
    assert_error_contains("adam: the schedule's decay_steps must be positive, got 0");
    c = tw_optimizer_defaults(TW_OPTIMIZER_RMSPROP);
    c.clipvalue = -1;
    g_assert_null(tw_optimizer_new(&c));
    assert_error_contains("rmsprop: clipvalue must be in [0, inf], got -1");
}

/* ---- clipping ------------------------------------------------------------------- */

/* One SGD step with learning rate 1 from zero variables: the variables
 * become minus the clipped gradients. */
static void sgd_step_from_zero(const tw_optimizer_config *c, int n, const int64_t *sizes, const double *const *grads,
                               const double *const *expected)
{
    tw_scope_begin();
    tw_tensor *vars[4], *gs[4];
    for (int k = 0; k < n; k++) {
        vars[k] = tw_variable(tw_zeros(TW_FLOAT64, TW_SHAPE(sizes[k])), "v", true);
        gs[k] = vector(TW_FLOAT64, grads[k], sizes[k]);
    }
    tw_optimizer *opt = tw_optimizer_new(c);
    g_assert_cmpint(tw_optimizer_apply_gradients(opt, n, vars, gs), ==, 0);
    for (int k = 0; k < n; k++) {
        double minus[8];
        for (int64_t i = 0; i < sizes[k]; i++)
            minus[i] = -expected[k][i];
        assert_close("clipped gradient", vars[k], minus, sizes[k], 1e-15);
    }
    tw_optimizer_free(opt);
    tw_scope_end();
}

static void test_clipping(void)
{
    tw_optimizer_config c = tw_optimizer_defaults(TW_OPTIMIZER_SGD);
    c.learning_rate.initial_learning_rate = 1;
    const double a[] = {2, -3, 0.1}, b[] = {0.3, 0.4}, big[] = {3, 4}, far[] = {0, 0, 12};

    c.clipvalue = 0.5;
    sgd_step_from_zero(&c, 1, (int64_t[]){3}, (const double *[]){a}, (const double *[]){(double[]){0.5, -0.5, 0.1}});

    /* Each gradient's own norm: (3, 4) has norm 5 and becomes (0.6, 0.8);
     * (0.3, 0.4) is within the bound and stays. */
    c = tw_optimizer_defaults(TW_OPTIMIZER_SGD);
    c.learning_rate.initial_learning_rate = 1;
    c.clipnorm = 1;
    sgd_step_from_zero(&c, 2, (int64_t[]){2, 2}, (const double *[]){big, b},
                       (const double *[]){(double[]){0.6, 0.8}, b});

    /* Keras 2.11+ applies one clipping: clipnorm wins over clipvalue. */
    c.clipvalue = 0.1;
    sgd_step_from_zero(&c, 2, (int64_t[]){2, 2}, (const double *[]){big, b},
                       (const double *[]){(double[]){0.6, 0.8}, b});

    /* The global norm of (3, 4) and (0, 0, 12) is 13: both scale by 1/13. */
    c = tw_optimizer_defaults(TW_OPTIMIZER_SGD);
    c.learning_rate.initial_learning_rate = 1;
    c.global_clipnorm = 1;
    sgd_step_from_zero(&c, 2, (int64_t[]){2, 3}, (const double *[]){big, far},
                       (const double *[]){(double[]){3.0 / 13, 4.0 / 13}, (double[]){0, 0, 12.0 / 13}});
    /* Below the bound nothing changes. */
    c.global_clipnorm = 20;
    sgd_step_from_zero(&c, 2, (int64_t[]){2, 3}, (const double *[]){big, far}, (const double *[]){big, far});
}

/* Clipping feeds the update rule: Adam with clipvalue sees the clamped gradient. */
static void test_clipping_feeds_the_rule(void)
{
    tw_scope_begin();
    tw_optimizer_config c = tw_optimizer_defaults(TW_OPTIMIZER_ADAGRAD);
    c.learning_rate.initial_learning_rate = 0.1;
    c.clipvalue = 1;
    tw_tensor *w = tw_variable(tw_zeros(TW_FLOAT64, TW_SHAPE(2)), "w", true);
    tw_tensor *g = vector(TW_FLOAT64, (double[]){5, -0.5}, 2);
    tw_optimizer *opt = tw_optimizer_new(&c);
    g_assert_cmpint(tw_optimizer_apply_gradients(opt, 1, &w, &g), ==, 0);
    double expected[2] = {-0.1 * 1 / sqrt(0.1 + 1 + 1e-7), 0.1 * 0.5 / sqrt(0.1 + 0.25 + 1e-7)};
    assert_close("adagrad with clipvalue", w, expected, 2, 1e-15);
    tw_optimizer_free(opt);
    tw_scope_end();
}

/* ---- schedules -------------------------------------------------------------------- */

static void test_schedules(void)
{
    tw_lr_schedule constant = {.kind = TW_SCHEDULE_CONSTANT, .initial_learning_rate = 0.3};
    g_assert_cmpfloat(tw_lr_schedule_at(&constant, 1000), ==, 0.3);

    tw_lr_schedule e = {.kind = TW_SCHEDULE_EXPONENTIAL_DECAY, .initial_learning_rate = 0.1, .decay_steps = 10,
                        .decay_rate = 0.5};
    g_assert_cmpfloat_with_epsilon(tw_lr_schedule_at(&e, 0), 0.1, 1e-15);
    g_assert_cmpfloat_with_epsilon(tw_lr_schedule_at(&e, 5), 0.1 * sqrt(0.5), 1e-15);
    g_assert_cmpfloat_with_epsilon(tw_lr_schedule_at(&e, 20), 0.025, 1e-15);
    e.staircase = true;
    g_assert_cmpfloat_with_epsilon(tw_lr_schedule_at(&e, 9), 0.1, 1e-15);
    g_assert_cmpfloat_with_epsilon(tw_lr_schedule_at(&e, 15), 0.05, 1e-15);

    tw_lr_schedule cosine = {.kind = TW_SCHEDULE_COSINE_DECAY, .initial_learning_rate = 1, .decay_steps = 100,
                             .alpha = 0.1};
    g_assert_cmpfloat_with_epsilon(tw_lr_schedule_at(&cosine, 0), 1, 1e-15);
    g_assert_cmpfloat_with_epsilon(tw_lr_schedule_at(&cosine, 50), 0.55, 1e-15);
    g_assert_cmpfloat_with_epsilon(tw_lr_schedule_at(&cosine, 25), 0.9 * 0.5 * (1 + sqrt(0.5)) + 0.1, 1e-15);
    g_assert_cmpfloat_with_epsilon(tw_lr_schedule_at(&cosine, 100), 0.1, 1e-15);
    g_assert_cmpfloat_with_epsilon(tw_lr_schedule_at(&cosine, 250), 0.1, 1e-15);

    tw_lr_schedule step = {.kind = TW_SCHEDULE_STEP_DECAY, .initial_learning_rate = 1, .decay_steps = 3,
                           .decay_rate = 0.1};
    g_assert_cmpfloat_with_epsilon(tw_lr_schedule_at(&step, 2), 1, 1e-15);
    g_assert_cmpfloat_with_epsilon(tw_lr_schedule_at(&step, 3), 0.1, 1e-15);
    g_assert_cmpfloat_with_epsilon(tw_lr_schedule_at(&step, 7), 0.01, 1e-15);

    step.decay_steps = 0;
    g_assert_true(isnan(tw_lr_schedule_at(&step, 1)));
}

/* The rate of update t is the schedule at t: SGD with step decay. */
static void test_schedule_drives_updates(void)
{
    tw_optimizer_config c = tw_optimizer_defaults(TW_OPTIMIZER_SGD);
    c.learning_rate = (tw_lr_schedule){.kind = TW_SCHEDULE_STEP_DECAY, .initial_learning_rate = 1,
                                       .decay_steps = 1, .decay_rate = 0.5};
    run_both("sgd with step decay", &c, sgd_reference);
    c = tw_optimizer_defaults(TW_OPTIMIZER_ADAM);
    c.learning_rate = (tw_lr_schedule){.kind = TW_SCHEDULE_COSINE_DECAY, .initial_learning_rate = 0.1,
                                       .decay_steps = 2, .alpha = 0.2};
    run_both("adam with cosine decay", &c, adam_reference);

    tw_optimizer *opt = tw_optimizer_new(&c);
    g_assert_cmpfloat_with_epsilon(tw_optimizer_learning_rate(opt), 0.1, 1e-15);
    tw_optimizer_set_iterations(opt, 1);
    g_assert_cmpfloat_with_epsilon(tw_optimizer_learning_rate(opt), 0.1 * (0.8 * 0.5 + 0.2), 1e-15);
    tw_optimizer_free(opt);
}

/* ---- counter, slots, gradients ------------------------------------------------------ */

static void test_iterations(void)
{
    tw_scope_begin();
    tw_optimizer *opt = tw_optimizer_new_named("sgd", 0.1);
    tw_tensor *a = tw_variable(tw_zeros(TW_FLOAT64, TW_SHAPE(2)), "a", true);
    tw_tensor *b = tw_variable(tw_zeros(TW_FLOAT64, TW_SHAPE(3)), "b", true);
    tw_tensor *ga = tw_ones(TW_FLOAT64, TW_SHAPE(2)), *gb = tw_ones(TW_FLOAT64, TW_SHAPE(3));
    g_assert_cmpint(tw_optimizer_iterations(opt), ==, 0);
    /* Once per call, however many variables. */
    g_assert_cmpint(tw_optimizer_apply_gradients(opt, 2, ARR(a, b), ARR(ga, gb)), ==, 0);
    g_assert_cmpint(tw_optimizer_iterations(opt), ==, 1);
    g_assert_cmpint(tw_optimizer_apply_gradients(opt, 1, &a, &ga), ==, 0);
    g_assert_cmpint(tw_optimizer_iterations(opt), ==, 2);
    /* An empty list is a step (Keras); a list of only missing gradients fails. */
    g_assert_cmpint(tw_optimizer_apply_gradients(opt, 0, NULL, NULL), ==, 0);
    g_assert_cmpint(tw_optimizer_iterations(opt), ==, 3);
    g_assert_cmpint(tw_optimizer_apply_gradients(opt, 2, ARR(a, b), ARR(NULL, NULL)), ==, -1);
    assert_error_contains("sgd: no gradients provided for any variable: 'a', 'b'");
    g_assert_cmpint(tw_optimizer_iterations(opt), ==, 3);
    tw_optimizer_set_iterations(opt, 41);
    g_assert_cmpint(tw_optimizer_iterations(opt), ==, 41);
    tw_optimizer_free(opt);
    tw_scope_end();
}

/* Adam's step 42 after set_iterations(41) uses t = 42 in its bias correction. */
static void test_set_iterations_drives_bias_correction(void)
{
    tw_scope_begin();
    tw_optimizer *opt = tw_optimizer_new_named("adam", 0.1);
    tw_tensor *w = tw_variable(tw_zeros(TW_FLOAT64, TW_SHAPE(1)), "w", true);
    tw_tensor *g = tw_full(2, TW_FLOAT64, TW_SHAPE(1));
    tw_optimizer_set_iterations(opt, 41);
    g_assert_cmpint(tw_optimizer_apply_gradients(opt, 1, &w, &g), ==, 0);
    double t = 42, m = 0.1 * 2, v = 0.001 * 4;
    double expected = -0.1 * sqrt(1 - pow(0.999, t)) / (1 - pow(0.9, t)) * m / (sqrt(v) + 1e-7);
    assert_close("adam at t = 42", w, &expected, 1, 1e-14);
    tw_optimizer_free(opt);
    tw_scope_end();
}

typedef struct {
    int count;
    char seen[8][64];
    tw_tensor *variables[8];
} slot_log;

static int log_slot(tw_tensor *variable, const char *slot_name, tw_tensor *slot, void *user_data)
{
    slot_log *log = user_data;
    g_assert_cmpint(tw_tensor_numel(slot), ==, tw_tensor_numel(variable));
    g_assert_cmpint(tw_tensor_dtype(slot), ==, tw_tensor_dtype(variable));
    g_snprintf(log->seen[log->count], sizeof log->seen[0], "%s:%s", tw_variable_name(variable), slot_name);
    log->variables[log->count++] = variable;
    return 0;
}

static int stop_at_second(tw_tensor *variable, const char *slot_name, tw_tensor *slot, void *user_data)
{
    return ++*(int *)user_data == 2 ? 7 : 0;
}

static void test_slots(void)
{
    tw_scope_begin();
    tw_optimizer *opt = tw_optimizer_new_named("adam", 0.1);
    tw_tensor *a = tw_variable(tw_zeros(TW_FLOAT64, TW_SHAPE(2)), "a", true);
    tw_tensor *b = tw_variable(tw_zeros(TW_FLOAT32, TW_SHAPE(2, 2)), "b", true);
    slot_log log = {0};
    g_assert_cmpint(tw_optimizer_foreach_slot(opt, log_slot, &log), ==, 0);
    g_assert_cmpint(log.count, ==, 0);
    g_assert_cmpint(tw_optimizer_build(opt, 2, ARR(a, b)), ==, 0);
    g_assert_cmpint(tw_optimizer_build(opt, 1, &a), ==, 0); /* once per variable */
    g_assert_cmpint(tw_optimizer_foreach_slot(opt, log_slot, &log), ==, 0);
    g_assert_cmpint(log.count, ==, 4);
    g_assert_cmpstr(log.seen[0], ==, "a:m");
    g_assert_cmpstr(log.seen[1], ==, "a:v");
    g_assert_cmpstr(log.seen[2], ==, "b:m");
    g_assert_cmpstr(log.seen[3], ==, "b:v");
    g_assert_true(log.variables[0] == a && log.variables[3] == b);
    int calls = 0;
    g_assert_cmpint(tw_optimizer_foreach_slot(opt, stop_at_second, &calls), ==, 7);
    g_assert_cmpint(calls, ==, 2);

    /* After one step m = (1 - beta_1) g and v = (1 - beta_2) g^2. */
    tw_tensor *g = vector(TW_FLOAT64, (double[]){2, -4}, 2);
    g_assert_cmpint(tw_optimizer_apply_gradients(opt, 1, &a, &g), ==, 0);
    tw_tensor *m = tw_optimizer_slot(opt, a, "m"), *v = tw_optimizer_slot(opt, a, "v");
    assert_close("m", m, (double[]){0.2, -0.4}, 2, 1e-15);
    assert_close("v", v, (double[]){0.004, 0.016}, 2, 1e-15);
    g_assert_cmpstr(tw_variable_name(m), ==, "a/m");
    g_assert_false(tw_variable_trainable(m));
    /* The slot is the live state: a checkpoint restore writes into it. */
    g_assert_cmpint(tw_assign(m, tw_scalar(0)), ==, 0);
    g_assert_true(tw_optimizer_slot(opt, a, "m") == m);

    /* A slot asked for a new variable is created. */
    tw_tensor *c = tw_variable(tw_ones(TW_FLOAT64, TW_SHAPE(3)), "c", true);
    tw_tensor *cm = tw_optimizer_slot(opt, c, "v");
    assert_close("fresh slot", cm, (double[]){0, 0, 0}, 3, 0);

    g_assert_null(tw_optimizer_slot(opt, a, "momentum"));
    assert_error_contains("adam: no slot named 'momentum' (its slots: m, v)");
    g_assert_null(tw_optimizer_slot(opt, tw_zeros(TW_FLOAT64, TW_SHAPE(2)), "m"));
    assert_error_contains("adam: optimizers update variables (tw_variable), got a plain tensor");
    tw_optimizer_free(opt);
    tw_scope_end();
}

static void test_slot_names(void)
{
    tw_scope_begin();
    tw_tensor *w = tw_variable(tw_zeros(TW_FLOAT64, TW_SHAPE(2)), "w", true);

    tw_optimizer *sgd = tw_optimizer_new_named("sgd", 0.1);
    g_assert_null(tw_optimizer_slot(sgd, w, "momentum"));
    assert_error_contains("sgd: no slot named 'momentum' (this configuration has no slots)");
    tw_optimizer_free(sgd);
    tw_optimizer_config c = tw_optimizer_defaults(TW_OPTIMIZER_SGD);
    c.momentum = 0.5;
    sgd = tw_optimizer_new(&c);
    g_assert_nonnull(tw_optimizer_slot(sgd, w, "momentum"));
    tw_optimizer_free(sgd);

    c = tw_optimizer_defaults(TW_OPTIMIZER_RMSPROP);
    tw_optimizer *rms = tw_optimizer_new(&c);
    tw_tensor *velocity = tw_optimizer_slot(rms, w, "velocity");
    g_assert_true(tw_optimizer_slot(rms, w, "rms") == velocity);
    g_assert_null(tw_optimizer_slot(rms, w, "momentum"));
    assert_error_contains("rmsprop: no slot named 'momentum' (its slots: velocity)");
    tw_optimizer_free(rms);
    c.momentum = 0.9;
    rms = tw_optimizer_new(&c);
    g_assert_nonnull(tw_optimizer_slot(rms, w, "momentum"));
    tw_optimizer_free(rms);

    tw_optimizer *ada = tw_optimizer_new_named("adagrad", 0.1);
    assert_close("accumulator", tw_optimizer_slot(ada, w, "accumulator"), (double[]){0.1, 0.1}, 2, 0);
    tw_optimizer_free(ada);
    tw_scope_end();
}

static void test_null_gradient_skipped(void)
{
    tw_scope_begin();
    tw_optimizer *opt = tw_optimizer_new_named("adam", 0.1);
    tw_tensor *a = tw_variable(vector(TW_FLOAT64, w0, N), "a", true);
    tw_tensor *b = tw_variable(vector(TW_FLOAT64, w0, N), "b", true);
    tw_tensor *ga = tw_ones(TW_FLOAT64, TW_SHAPE(N));
    g_assert_cmpint(tw_optimizer_apply_gradients(opt, 2, ARR(a, b), ARR(ga, NULL)), ==, 0);
    assert_close("skipped variable", b, w0, N, 0);
    g_assert_cmpfloat(fabs(at(a, 0) - w0[0]), >, 0.05);
    slot_log log = {0};
    tw_optimizer_foreach_slot(opt, log_slot, &log);
    g_assert_cmpint(log.count, ==, 2); /* only a's m and v */
    tw_optimizer_free(opt);
    tw_scope_end();
}

/* A transposed view as the gradient reads in logical order. */
static void test_non_contiguous_gradient(void)
{
    tw_scope_begin();
    tw_optimizer *opt = tw_optimizer_new_named("sgd", 1);
    tw_tensor *w = tw_variable(tw_zeros(TW_FLOAT32, TW_SHAPE(2, 3)), "w", true);
    tw_tensor *base = tw_reshape(tw_arange(0, 6, 1, TW_FLOAT32), TW_SHAPE(3, 2));
    tw_tensor *g = tw_transpose(base);
    g_assert_false(tw_tensor_is_contiguous(g));
    g_assert_cmpint(tw_optimizer_apply_gradients(opt, 1, &w, &g), ==, 0);
    assert_close("transposed gradient", w, (double[]){-0, -2, -4, -1, -3, -5}, 6, 0);
    tw_optimizer_free(opt);
    tw_scope_end();
}

static void test_errors(void)
{
    tw_scope_begin();
    tw_optimizer *opt = tw_optimizer_new_named("adam", 0.1);
    tw_tensor *w = tw_variable(vector(TW_FLOAT64, w0, N), "dense/kernel", true);
    tw_tensor *u = tw_variable(vector(TW_FLOAT64, w0, N), "dense/bias", true);
    tw_tensor *good = tw_ones(TW_FLOAT64, TW_SHAPE(N));

    /* A bad pair anywhere changes nothing, the counter included. */
    tw_tensor *wrong_shape = tw_ones(TW_FLOAT64, TW_SHAPE(2));
    g_assert_cmpint(tw_optimizer_apply_gradients(opt, 2, ARR(u, w), ARR(good, wrong_shape)), ==, -1);
    assert_error_contains("adam: gradient of shape (2,) does not match variable 'dense/kernel' of shape (3,)");
    assert_close("untouched", u, w0, N, 0);
    g_assert_cmpint(tw_optimizer_iterations(opt), ==, 0);

    tw_tensor *wrong_dtype = tw_ones(TW_FLOAT32, TW_SHAPE(N));
    g_assert_cmpint(tw_optimizer_apply_gradients(opt, 1, &w, &wrong_dtype), ==, -1);
    assert_error_contains("adam: the gradient of variable 'dense/kernel' is float32 but the variable is float64");

    tw_tensor *plain = tw_zeros(TW_FLOAT64, TW_SHAPE(N));
    g_assert_cmpint(tw_optimizer_apply_gradients(opt, 1, &plain, &good), ==, -1);
    assert_error_contains("got a plain tensor");

    tw_tensor *ints = tw_variable(tw_zeros(TW_INT32, TW_SHAPE(N)), "steps", false);
    tw_tensor *int_grad = tw_zeros(TW_INT32, TW_SHAPE(N));
    g_assert_cmpint(tw_optimizer_apply_gradients(opt, 1, &ints, &int_grad), ==, -1);
    assert_error_contains("adam: variable 'steps' is int32; optimizers update float32 and float64 variables");

    g_assert_cmpint(tw_optimizer_apply_gradients(opt, -1, NULL, NULL), ==, -1);
    assert_error_contains("n = -1");
    g_assert_cmpint(tw_optimizer_iterations(opt), ==, 0);
    tw_optimizer_free(opt);
    tw_scope_end();
}

/* The optimizer writes variables in place and bumps their version, so a
 * tape that recorded the old value refuses to differentiate it. */
static void test_stale_tape(void)
{
    tw_scope_begin();
    tw_optimizer *opt = tw_optimizer_new_named("sgd", 0.1);
    tw_tensor *w = tw_variable(vector(TW_FLOAT64, w0, N), "w", true);
    tw_tape *tape = tw_tape_begin(false);
    tw_tensor *loss = tw_sum_all(tw_mul(w, w));
    tw_tape_end(tape);
    tw_tensor *g = tw_ones(TW_FLOAT64, TW_SHAPE(N));
    g_assert_cmpint(tw_optimizer_apply_gradients(opt, 1, &w, &g), ==, 0);
    tw_tensor *grad = NULL;
    g_assert_cmpint(tw_tape_gradient(tape, loss, 1, &w, &grad), ==, -1);
    assert_error_contains("variable 'w' was modified in place after op 'mul' used it");
    g_assert_null(grad);
    tw_tape_free(tape);
    tw_optimizer_free(opt);
    tw_scope_end();
}

/* The usual loop: tape, gradient, apply; the loss goes down. */
static void test_training_loop(void)
{
    tw_scope_begin();
    tw_optimizer *opt = tw_optimizer_new_named("adam", 0.1);
    tw_tensor *w = tw_variable(vector(TW_FLOAT32, w0, N), "w", true);
    tw_tensor *target = vector(TW_FLOAT32, (double[]){1, 2, 3}, N);
    double first = 0, last = 0;
    for (int step = 0; step < 50; step++) {
        tw_scope_begin();
        tw_tape *tape = tw_tape_begin(false);
        tw_tensor *loss = tw_sum_all(tw_square(tw_sub(w, target)));
        tw_tape_end(tape);
        tw_tensor *grad;
        g_assert_cmpint(tw_tape_gradient(tape, loss, 1, &w, &grad), ==, 0);
        g_assert_cmpint(tw_optimizer_apply_gradients(opt, 1, &w, &grad), ==, 0);
        last = tw_tensor_item(loss);
        first = step == 0 ? last : first;
        tw_tape_free(tape);
        tw_scope_end();
    }
    g_assert_cmpfloat(last, <, first / 10);
    tw_optimizer_free(opt);
    tw_scope_end();
}

/* A moment decaying under zero gradients reaches 0, never a subnormal
 * (which would make every later step on it slow). */
static void test_no_subnormal_slots(void)
{
    float one = 1;
    tw_scope_begin();
    tw_tensor *w = tw_variable(tw_tensor_from_data(&one, TW_FLOAT32, TW_SHAPE(1)), "w", true);
    /* Moments start near 1e-37 (rmsprop's from g^2), then decay by 0.9 a step: without
     * flushing they would be subnormal from step ~25 to step ~170. */
    tw_tensor *tiny = tw_tensor_from_data((float[]){1e-36f}, TW_FLOAT32, TW_SHAPE(1));
    tw_tensor *small = tw_tensor_from_data((float[]){1e-18f}, TW_FLOAT32, TW_SHAPE(1));
    tw_tensor *zero = tw_tensor_from_data((float[]){0}, TW_FLOAT32, TW_SHAPE(1));
    const char *names[] = {"adam", "sgd", "rmsprop"};
    for (int k = 0; k < 3; k++) {
        tw_optimizer_config c = tw_optimizer_defaults(k == 0 ? TW_OPTIMIZER_ADAM : k == 1 ? TW_OPTIMIZER_SGD
                                                                                            : TW_OPTIMIZER_RMSPROP);
        c.momentum = k ? 0.9 : c.momentum;
        tw_optimizer *opt = tw_optimizer_new(&c);
        g_assert_cmpint(tw_optimizer_apply_gradients(opt, 1, &w, k == 2 ? &small : &tiny), ==, 0);
        for (int i = 0; i < 60; i++)
            g_assert_cmpint(tw_optimizer_apply_gradients(opt, 1, &w, &zero), ==, 0);
        const char *slot = k == 0 ? "m" : k == 1 ? "momentum" : "velocity";
        float value = *(float *)tw_tensor_data(tw_optimizer_slot(opt, w, slot));
        g_test_message("%s %s: %g", names[k], slot, value);
        g_assert_cmpint(fpclassify(value), ==, FP_ZERO);
        tw_optimizer_free(opt);
    }
    tw_scope_end();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/optimizers/sgd", test_sgd);
    g_test_add_func("/optimizers/adam", test_adam);
    g_test_add_func("/optimizers/adamw", test_adamw);
    g_test_add_func("/optimizers/rmsprop", test_rmsprop);
    g_test_add_func("/optimizers/adagrad", test_adagrad);
    g_test_add_func("/optimizers/defaults-and-names", test_defaults_and_names);
    g_test_add_func("/optimizers/config-errors", test_config_errors);
    g_test_add_func("/optimizers/clipping", test_clipping);
    g_test_add_func("/optimizers/clipping-feeds-the-rule", test_clipping_feeds_the_rule);
    g_test_add_func("/optimizers/schedules", test_schedules);
    g_test_add_func("/optimizers/schedule-drives-updates", test_schedule_drives_updates);
    g_test_add_func("/optimizers/iterations", test_iterations);
    g_test_add_func("/optimizers/set-iterations-bias-correction", test_set_iterations_drives_bias_correction);
    g_test_add_func("/optimizers/slots", test_slots);
    g_test_add_func("/optimizers/slot-names", test_slot_names);
    g_test_add_func("/optimizers/null-gradient-skipped", test_null_gradient_skipped);
    g_test_add_func("/optimizers/non-contiguous-gradient", test_non_contiguous_gradient);
    g_test_add_func("/optimizers/errors", test_errors);
    g_test_add_func("/optimizers/stale-tape", test_stale_tape);
    g_test_add_func("/optimizers/training-loop", test_training_loop);
    g_test_add_func("/optimizers/no-subnormal-slots", test_no_subnormal_slots);
    int rc = g_test_run();
    tw__pool_trim();
    return rc;
}
