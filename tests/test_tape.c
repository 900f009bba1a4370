/* Gradient tapes, variables and custom gradients: the seeds' examples and
 * the tape's contract (persistence, nesting, unconnected sources, errors). */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "internal.h"

static tw_tensor *scalar64(double v)
{
    return tw_scalar_of(v, TW_FLOAT64);
}

/* The seeds: d/dx x*x at 3 is 6, the second derivative 2, the third unconnected. */
static void test_higher_order(void)
{
    tw_scope_begin();
    tw_tensor *x = scalar64(3);
    tw_tape *t3 = tw_tape_begin(false);
    tw_tape_watch(t3, x);
    tw_tape *t2 = tw_tape_begin(false);
    tw_tape_watch(t2, x);
    tw_tape *t1 = tw_tape_begin(false);
    tw_tape_watch(t1, x);
    tw_tensor *y = tw_mul(x, x);
    tw_tape_end(t1);
    tw_tensor *dy;
    g_assert_cmpint(tw_tape_gradient(t1, y, 1, &x, &dy), ==, 0);
    tw_tape_end(t2);
    tw_tensor *d2y;
    g_assert_cmpint(tw_tape_gradient(t2, dy, 1, &x, &d2y), ==, 0);
    tw_tape_end(t3);
    tw_tensor *d3y = (tw_tensor *)1;
    g_assert_cmpint(tw_tape_gradient(t3, d2y, 1, &x, &d3y), ==, 0);
    g_assert_cmpfloat(tw_tensor_item(dy), ==, 6.0);
    g_assert_cmpfloat(tw_tensor_item(d2y), ==, 2.0);
    g_assert_null(d3y);
    tw_tape_free(t1);
    tw_tape_free(t2);
    tw_tape_free(t3);
    tw_scope_end();
}

static void test_unconnected_and_sum(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_tensor_from_data((double[]){1, 2, 3}, TW_FLOAT64, TW_SHAPE(3));
    tw_tensor *z = tw_tensor_from_data((double[]){4, 5, 6}, TW_FLOAT64, TW_SHAPE(3));
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, x);
    tw_tape_watch(tape, z);
    tw_tensor *y = tw_square(x); /* non-scalar target: summed */
    tw_tape_end(tape);
    tw_tensor *g[2];
    g_assert_cmpint(tw_tape_gradient(tape, y, TW_TENSORS(x, z), g), ==, 0);
    g_assert_nonnull(g[0]);
    g_assert_null(g[1]);
    for (int i = 0; i < 3; i++)
        g_assert_cmpfloat(((double *)tw_tensor_data(g[0]))[i], ==, 2.0 * (i + 1));
    tw_tape_free(tape);
    tw_scope_end();
}

static void test_not_persistent_refuses_second_call(void)
{
    tw_scope_begin();
    tw_tensor *x = scalar64(2);
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, x);
    tw_tensor *y = tw_mul(x, x);
    tw_tape_end(tape);
    tw_tensor *g;
    g_assert_cmpint(tw_tape_gradient(tape, y, 1, &x, &g), ==, 0);
    g_assert_cmpint(tw_tape_gradient(tape, y, 1, &x, &g), ==, -1);
    g_assert_null(g);
    g_assert_nonnull(strstr(tw_last_error(), "non-persistent"));
    tw_tape_free(tape);
    tw_scope_end();
}

static void test_persistent_allows_many(void)
{
    tw_scope_begin();
    tw_tensor *x = scalar64(3);
    tw_tape *tape = tw_tape_begin(true);
    tw_tape_watch(tape, x);
    tw_tensor *y = tw_mul(x, x);
    tw_tensor *z = tw_mul(y, y);
    tw_tape_end(tape);
    tw_tensor *dz, *dy;
    g_assert_cmpint(tw_tape_gradient(tape, z, 1, &x, &dz), ==, 0);
    g_assert_cmpint(tw_tape_gradient(tape, y, 1, &x, &dy), ==, 0);
    g_assert_cmpfloat(tw_tensor_item(dz), ==, 108.0); /* 4 x^3 */
    g_assert_cmpfloat(tw_tensor_item(dy), ==, 6.0);
    tw_tape_free(tape);
    tw_scope_end();
}

static void test_variables_watched_automatically(void)
{
    tw_scope_begin();
    tw_tensor *w = tw_variable(tw_scalar_of(2, TW_FLOAT32), "w", true);
    tw_tensor *frozen = tw_variable(tw_scalar_of(5, TW_FLOAT32), "frozen", false);
    tw_tape *tape = tw_tape_begin(false);
    tw_tensor *y = tw_mul(tw_mul(w, w), frozen);
    tw_tape_end(tape);
    tw_tensor *g[2];
    g_assert_cmpint(tw_tape_gradient(tape, y, TW_TENSORS(w, frozen), g), ==, 0);
    g_assert_cmpfloat(tw_tensor_item(g[0]), ==, 20.0);
    g_assert_null(g[1]);
    g_assert_cmpstr(tw_variable_name(w), ==, "w");
    tw_tape_free(tape);
    tw_scope_end();
}

static void test_assign(void)
{
    tw_scope_begin();
    tw_tensor *v = tw_variable(tw_tensor_from_data((float[]){1, 2, 3, 4}, TW_FLOAT32, TW_SHAPE(2, 2)), "v", true);
    tw_tensor *view = tw_transpose(v);
    g_assert_cmpint(tw_assign_add(v, tw_scalar(10)), ==, 0);
    g_assert_cmpfloat(tw_tensor_get(view, (int64_t[]){0, 1}), ==, 13.0);
    g_assert_cmpint(tw_assign_sub(v, tw_tensor_from_data((float[]){1, 2}, TW_FLOAT32, TW_SHAPE(2))), ==, 0);
    g_assert_cmpfloat(tw_tensor_get(v, (int64_t[]){1, 1}), ==, 12.0);
    g_assert_cmpint(tw_assign(v, tw_zeros(TW_FLOAT32, TW_SHAPE(2, 2))), ==, 0);
    g_assert_cmpfloat(tw_tensor_item(tw_sum_all(v)), ==, 0.0);
    g_assert_cmpint(tw_assign(v, tw_zeros(TW_FLOAT32, TW_SHAPE(3))), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "assign"));
    g_assert_cmpint(tw_assign(v, tw_zeros(TW_FLOAT64, TW_SHAPE(2, 2))), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "float64"));
    g_assert_cmpint(tw_assign(tw_zeros(TW_FLOAT32, TW_SHAPE(2)), tw_scalar(1)), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "not a variable"));
    tw_scope_end();
}

/* A tape refuses a gradient through a value that changed in place. */
static void test_stale_variable(void)
{
    tw_scope_begin();
    tw_tensor *w = tw_variable(tw_scalar_of(2, TW_FLOAT64), "w", true);
    tw_tape *tape = tw_tape_begin(false);
    tw_tensor *y = tw_mul(w, w);
    tw_tape_end(tape);
    tw_assign(w, tw_scalar(7));
    tw_tensor *g;
    g_assert_cmpint(tw_tape_gradient(tape, y, 1, &w, &g), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "variable 'w' was modified"));
    tw_tape_free(tape);
    tw_scope_end();
}

static void test_stop_gradient(void)
{
    tw_scope_begin();
    tw_tensor *x = scalar64(3);
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, x);
    tw_tensor *y = tw_add(tw_mul(x, x), tw_stop_gradient(tw_mul(x, x)));
    tw_tape_end(tape);
    tw_tensor *g;
    tw_tape_gradient(tape, y, 1, &x, &g);
    g_assert_cmpfloat(tw_tensor_item(y), ==, 18.0);
    g_assert_cmpfloat(tw_tensor_item(g), ==, 6.0);
    tw_tape_free(tape);
    tw_scope_end();
}

/* ---- custom gradients: the seeds' two examples ------------------------------- */
static tw_tensor *clip_forward(tw_custom_ctx *ctx, tw_tensor *const *in, void *norm)
{
    return tw_copy(in[0]);
}

static int clip_backward(tw_custom_ctx *ctx, tw_tensor *dy, tw_tensor **dx, void *norm)
{
    dx[0] = tw_clip_by_norm(dy, *(double *)norm);
    return dx[0] ? 0 : -1;
}

static void test_clip_gradient_by_norm(void)
{
    tw_scope_begin();
    double norm = 1.0;
    tw_tensor *x = tw_tensor_from_data((double[]){1, 2}, TW_FLOAT64, TW_SHAPE(2));
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, x);
    tw_tensor *y = tw_custom_gradient(1, &x, clip_forward, clip_backward, &norm);
    tw_tensor *loss = tw_sum_all(tw_mul_scalar(y, 10)); /* upstream gradient (10, 10), norm 14.1 */
    tw_tape_end(tape);
    tw_tensor *g;
    g_assert_cmpint(tw_tape_gradient(tape, loss, 1, &x, &g), ==, 0);
    double *d = tw_tensor_data(g);
    g_assert_cmpfloat_with_epsilon(d[0], M_SQRT1_2, 1e-12);
    g_assert_cmpfloat_with_epsilon(d[1], M_SQRT1_2, 1e-12);
    g_assert_cmpfloat(tw_tensor_item(tw_sum_all(y)), ==, 3.0);
    tw_tape_free(tape);
    tw_scope_end();
}

static tw_tensor *log1pexp_naive(tw_tensor *x)
{
    return tw_log(tw_add_scalar(tw_exp(x), 1));
}

static tw_tensor *log1pexp_forward(tw_custom_ctx *ctx, tw_tensor *const *in, void *unused)
{
    tw_tensor *e = tw_exp(in[0]);
    tw_custom_save(ctx, e);
    return tw_log(tw_add_scalar(e, 1));
}

static int log1pexp_backward(tw_custom_ctx *ctx, tw_tensor *dy, tw_tensor **dx, void *unused)
{
    tw_tensor *e = tw_custom_saved(ctx, 0);
    dx[0] = tw_mul(dy, tw_rsub_scalar(1, tw_rdiv_scalar(1, tw_add_scalar(e, 1))));
    return dx[0] ? 0 : -1;
}

static double gradient_at(double at, bool custom)
{
    tw_scope_begin();
    tw_tensor *x = tw_scalar_of(at, TW_FLOAT32);
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, x);
    tw_tensor *y = custom ? tw_custom_gradient(1, &x, log1pexp_forward, log1pexp_backward, NULL) : log1pexp_naive(x);
    tw_tape_end(tape);
    tw_tensor *g;
    tw_tape_gradient(tape, y, 1, &x, &g);
    double v = tw_tensor_item(g);
    tw_tape_free(tape);
    tw_scope_end();
    return v;
}

static void test_log1pexp(void)
{
    g_assert_cmpfloat(gradient_at(0, false), ==, 0.5);
    g_assert_true(isnan(gradient_at(100, false))); /* the seeds' instability */
    g_assert_cmpfloat(gradient_at(0, true), ==, 0.5);
    g_assert_cmpfloat(gradient_at(100, true), ==, 1.0);
}

/* ---- the seeds' backtracking line search: plain C control flow ------------------- */
static tw_tensor *bowl(tw_tensor *x)
{
    return tw_sum_all(tw_square(tw_sub_scalar(x, 3)));
}

static void line_search_step(tw_tensor *init_x, double rate, tw_tensor **x_out, double *value_out)
{
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, init_x);
    tw_tensor *value = bowl(init_x);
    tw_tape_end(tape);
    tw_tensor *grad;
    tw_tape_gradient(tape, value, 1, &init_x, &grad);
    tw_tape_free(tape);
    double grad_norm = tw_tensor_item(tw_sum_all(tw_mul(grad, grad)));
    double init_value = tw_tensor_item(value);
    tw_tensor *x = init_x;
    while (tw_tensor_item(value) > init_value - rate * grad_norm) {
        x = tw_sub(init_x, tw_mul_scalar(grad, rate));
        value = bowl(x);
        rate /= 2.0;
    }
    *x_out = x;
    *value_out = tw_tensor_item(value);
}

static void test_line_search(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_tensor_from_data((double[]){0, 1}, TW_FLOAT64, TW_SHAPE(2));
    double value;
    tw_tensor *next;
    line_search_step(x, 1.0, &next, &value);
    g_assert_cmpfloat(value, <, 13.0); /* bowl(x) was 9 + 4 */
    g_assert_cmpfloat(value, ==, 0.0); /* rate 0.5 lands on the minimum of a unit-curvature bowl */
    g_assert_cmpfloat(tw_tensor_get(next, (int64_t[]){1}), ==, 3.0);
    tw_scope_end();
}

/* ---- the seeds' linear model ------------------------------------------------------ */
static void test_linear_regression(void)
{
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(42);
    int64_t n = 1000;
    tw_tensor *x = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(n), 0, 1);
    tw_tensor *noise = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(n), 0, 1);
    tw_tensor *y = tw_add(tw_add_scalar(tw_mul_scalar(x, 3), 2), noise);
    tw_tensor *W = tw_variable(tw_scalar_of(5, TW_FLOAT32), "W", true);
    tw_tensor *B = tw_variable(tw_scalar_of(10, TW_FLOAT32), "B", true);
    double loss_value = 0;
    for (int step = 0; step < 200; step++) {
        tw_scope_begin();
        tw_tape *tape = tw_tape_begin(false);
        tw_tensor *loss = tw_mean_all(tw_square(tw_sub(tw_add(tw_mul(x, W), B), y)));
        tw_tape_end(tape);
        tw_tensor *g[2];
        g_assert_cmpint(tw_tape_gradient(tape, loss, TW_TENSORS(W, B), g), ==, 0);
        tw_assign_sub(W, tw_mul_scalar(g[0], 0.01));
        tw_assign_sub(B, tw_mul_scalar(g[1], 0.01));
        tw_tape_free(tape);
        loss_value = tw_tensor_item(loss);
        tw_scope_end();
    }
    g_test_message("W=%f B=%f loss=%f", tw_tensor_item(W), tw_tensor_item(B), loss_value);
    g_assert_cmpfloat(fabs(tw_tensor_item(W) - 3), <, 0.1);
    g_assert_cmpfloat(fabs(tw_tensor_item(B) - 2), <, 0.3);
    g_assert_cmpfloat(loss_value, <, 1.2);
    tw_rng_free(rng);
    tw_scope_end();
}

/* ---- errors -------------------------------------------------------------------------- */
static void test_errors(void)
{
    tw_scope_begin();
    tw_tensor *i = tw_scalar_of(3, TW_INT32);
    tw_tape *tape = tw_tape_begin(false);
    g_assert_cmpint(tw_tape_watch(tape, i), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "watch: only float"));
    g_assert_cmpint(tw_tape_watch(tape, NULL), ==, -1);
    tw_tape_end(tape);
    tw_tensor *g = (tw_tensor *)1;
    g_assert_cmpint(tw_tape_gradient(tape, NULL, 1, &i, &g), ==, -1);
    g_assert_null(g);
    tw_tape_free(tape);
    tw_scope_end();
}

/* Scopes release what they hold; references taken inside survive. */
static void test_scope_ownership(void)
{
    tw_tensor *kept;
    tw_scope_begin();
    tw_tensor *a = tw_ones(TW_FLOAT32, TW_SHAPE(4));
    kept = tw_tensor_ref(tw_mul_scalar(a, 3));
    tw_scope_end();
    tw_tensor *total = tw_sum_all(kept);
    g_assert_cmpfloat(tw_tensor_item(total), ==, 12.0);
    tw_tensor_unref(total);
    tw_tensor_unref(kept);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/tape/higher-order", test_higher_order);
    g_test_add_func("/tape/unconnected-and-sum", test_unconnected_and_sum);
    g_test_add_func("/tape/not-persistent", test_not_persistent_refuses_second_call);
    g_test_add_func("/tape/persistent", test_persistent_allows_many);
    g_test_add_func("/tape/variables-watched", test_variables_watched_automatically);
    g_test_add_func("/tape/assign", test_assign);
    g_test_add_func("/tape/stale-variable", test_stale_variable);
    g_test_add_func("/tape/stop-gradient", test_stop_gradient);
    g_test_add_func("/tape/custom/clip-gradient-by-norm", test_clip_gradient_by_norm);
    g_test_add_func("/tape/custom/log1pexp", test_log1pexp);
    g_test_add_func("/tape/line-search", test_line_search);
    g_test_add_func("/tape/linear-regression", test_linear_regression);
    g_test_add_func("/tape/errors", test_errors);
    g_test_add_func("/tape/scope-ownership", test_scope_ownership);
    return g_test_run();
}
