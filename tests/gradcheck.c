/* Finite-difference gradient checks (see gradcheck.h). */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"

#define STEP 1e-6
#define RTOL 1e-5
#define ATOL 1e-6
#define MAX_INPUTS 16

static double weight_at(int input, int64_t i)
{
    /* Fixed, irregular weights in [0.5, 1.5]. */
    uint32_t h = (uint32_t)(i * 2654435761u) ^ (uint32_t)(input * 40503u + 17u);
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return 0.5 + (h % 10007) / 10007.0;
}

tw_tensor *gc_tensor(unsigned seed, double lo, double hi, int ndim, const int64_t *shape)
{
    tw_tensor *t = tw_zeros(TW_FLOAT64, ndim, shape);
    double *d = tw_tensor_data(t);
    GRand *r = g_rand_new_with_seed(seed);
    for (int64_t i = 0; i < tw_tensor_numel(t); i++)
        d[i] = g_rand_double_range(r, lo, hi);
    g_rand_free(r);
    return t;
}

/* sum(f(inputs) * w): the scalar both sides differentiate. */
static tw_tensor *weighted(gc_fn f, tw_tensor *const *inputs, void *data, int salt)
{
    tw_tensor *y = f(inputs, data);
    if (!y)
        return NULL;
    tw_tensor *w = tw_zeros(tw_tensor_dtype(y), tw_tensor_ndim(y), tw_tensor_shape(y));
    for (int64_t i = 0; i < tw_tensor_numel(w); i++) {
        double v = weight_at(salt, i);
        if (tw_tensor_dtype(w) == TW_FLOAT64)
            ((double *)tw_tensor_data(w))[i] = v;
        else
            ((float *)tw_tensor_data(w))[i] = (float)v;
    }
    return tw_sum_all(tw_mul(y, w));
}

static double eval_scalar(gc_fn f, tw_tensor *const *inputs, void *data)
{
    tw_scope_begin();
    tw_tensor *s = weighted(f, inputs, data, 99);
    double v = s ? tw_tensor_item(s) : NAN;
    tw_scope_end();
    return v;
}

/* Fails the running test (once) and returns false on a mismatch. */
static bool compare(const char *name, int input, int64_t i, double analytic, double numeric)
{
    double tol = ATOL + RTOL * fmax(fabs(analytic), fabs(numeric));
    if (fabs(analytic - numeric) <= tol)
        return true;
    g_test_fail_printf("%s: gradient of input %d element %lld: tape %.10g, finite differences %.10g", name, input,
                       (long long)i, analytic, numeric);
    return false;
}

static double numeric_derivative(double (*eval)(gc_fn, tw_tensor *const *, void *), gc_fn f, tw_tensor *const *inputs,
                                 void *data, double *x)
{
    double saved = *x;
    *x = saved + STEP;
    double up = eval(f, inputs, data);
    *x = saved - STEP;
    double down = eval(f, inputs, data);
    *x = saved;
    return (up - down) / (2 * STEP);
}

void gc_check(const char *name, gc_fn f, int ninputs, tw_tensor *const *inputs, void *data)
{
    tw_scope_begin();
    tw_tape *tape = tw_tape_begin(false);
    for (int i = 0; i < ninputs; i++)
        tw_tape_watch(tape, inputs[i]);
    tw_tensor *s = weighted(f, inputs, data, 99);
    tw_tape_end(tape);
    if (!s)
        g_error("%s: forward failed: %s", name, tw_last_error());
    tw_tensor *grads[MAX_INPUTS] = {0};
    if (tw_tape_gradient(tape, s, ninputs, inputs, grads) < 0)
        g_error("%s: gradient failed: %s", name, tw_last_error());
    tw_tape_free(tape);
    for (int k = 0; k < ninputs; k++) {
        if (!grads[k]) {
            g_test_fail_printf("%s: no gradient for input %d", name, k);
            continue;
        }
        double *x = tw_tensor_data(inputs[k]);
        for (int64_t i = 0; i < tw_tensor_numel(inputs[k]); i++) {
            int64_t index[TW_MAX_DIMS];
            int64_t rest = i;
            for (int d = tw_tensor_ndim(inputs[k]) - 1; d >= 0; d--) {
                index[d] = rest % tw_tensor_shape(inputs[k])[d];
                rest /= tw_tensor_shape(inputs[k])[d];
            }
            double analytic = tw_tensor_get(grads[k], index);
            if (!compare(name, k, i, analytic, numeric_derivative(eval_scalar, f, inputs, data, &x[i])))
                break;
        }
    }
    tw_scope_end();
}

/* h(inputs) = sum_k <grad_k, v_k>, with gradients from an inner tape that
 * an outer tape (when active) records. */
static tw_tensor *first_order_dot(gc_fn f, tw_tensor *const *inputs, int ninputs, void *data)
{
    tw_tape *inner = tw_tape_begin(false);
    for (int i = 0; i < ninputs; i++)
        tw_tape_watch(inner, inputs[i]);
    tw_tensor *s = weighted(f, inputs, data, 99);
    tw_tape_end(inner);
    tw_tensor *grads[MAX_INPUTS] = {0};
    if (!s || tw_tape_gradient(inner, s, ninputs, inputs, grads) < 0)
        g_error("second order: inner gradient failed: %s", tw_last_error());
    tw_tape_free(inner);
    tw_tensor *h = NULL;
    for (int k = 0; k < ninputs; k++) {
        if (!grads[k])
            continue;
        tw_tensor *v = tw_zeros(TW_FLOAT64, tw_tensor_ndim(grads[k]), tw_tensor_shape(grads[k]));
        for (int64_t i = 0; i < tw_tensor_numel(v); i++)
            ((double *)tw_tensor_data(v))[i] = weight_at(k + 7, i);
        tw_tensor *term = tw_sum_all(tw_mul(grads[k], v));
        h = h ? tw_add(h, term) : term;
    }
    return h;
}

typedef struct {
    gc_fn f;
    void *data;
    int ninputs;
} second_ctx;

static tw_tensor *h_of(tw_tensor *const *inputs, void *p)
{
    second_ctx *c = p;
    return first_order_dot(c->f, inputs, c->ninputs, c->data);
}

static double eval_h(gc_fn unused, tw_tensor *const *inputs, void *p)
{
    tw_scope_begin();
    tw_tensor *h = h_of(inputs, p);
    double v = h ? tw_tensor_item(h) : 0.0; /* no first-order gradient at all: h = 0 */
    tw_scope_end();
    return v;
}

void gc_check_second(const char *name, gc_fn f, int ninputs, tw_tensor *const *inputs, void *data)
{
    second_ctx ctx = {f, data, ninputs};
    tw_scope_begin();
    tw_tape *outer = tw_tape_begin(false);
    for (int i = 0; i < ninputs; i++)
        tw_tape_watch(outer, inputs[i]);
    tw_tensor *h = h_of(inputs, &ctx);
    tw_tape_end(outer);
    if (!h)
        g_error("%s: no first-order gradient to differentiate", name);
    tw_tensor *grads[MAX_INPUTS] = {0};
    if (tw_tape_gradient(outer, h, ninputs, inputs, grads) < 0)
        g_error("%s: second-order gradient failed: %s", name, tw_last_error());
    tw_tape_free(outer);
    for (int k = 0; k < ninputs; k++) {
        double *x = tw_tensor_data(inputs[k]);
        for (int64_t i = 0; i < tw_tensor_numel(inputs[k]); i++) {
            int64_t index[TW_MAX_DIMS], rest = i;
            for (int d = tw_tensor_ndim(inputs[k]) - 1; d >= 0; d--) {
                index[d] = rest % tw_tensor_shape(inputs[k])[d];
                rest /= tw_tensor_shape(inputs[k])[d];
            }
            double analytic = grads[k] ? tw_tensor_get(grads[k], index) : 0.0;
            double numeric = numeric_derivative(eval_h, NULL, inputs, &ctx, &x[i]);
            if (!compare(name, k, i, analytic, numeric))
                break;
        }
    }
    tw_scope_end();
}
