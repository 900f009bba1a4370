/* Adam, exactly as Keras 2.11+ (keras.optimizers.Adam) computes it, with the
 * bias correction folded into the step size:
 *   m += (g - m) * (1 - beta_1)
 *   v += (g^2 - v) * (1 - beta_2)
 *   alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)      (t = iterations + 1)
 *   w -= m * alpha / (sqrt(v) + epsilon)
 * Epsilon is added to sqrt(v) without its own bias correction, so Keras'
 * epsilon 1e-7 acts like the paper's epsilon_hat; the paper's form with
 * m_hat / (sqrt(v_hat) + epsilon) differs by that term only.
 * AdamW is the same rule after the decoupled decay w *= 1 - lr * weight_decay
 * that apply.c hands every rule (Keras applies it before the step). */
#include <math.h>

#include "optimizer_internal.h"

static int adam_slots(const tw_optimizer_config *c, const char **names, double *initial_values)
{
    (void)c;
    names[0] = "m";
    names[1] = "v";
    initial_values[0] = initial_values[1] = 0;
    return 2;
}

#define DEFINE_ADAM(T, S, SQRT)                                                                         \
    static void adam_##S(const tw_update *u)                                                            \
    {                                                                                                   \
        T *w = u->w, *m = u->slots[0], *v = u->slots[1];                                                \
        const T *g = u->g;                                                                              \
        const tw_optimizer_config *c = u->config;                                                       \
        double t = (double)u->t;                                                                        \
        const T alpha = (T)(u->lr * sqrt(1 - pow(c->beta_2, t)) / (1 - pow(c->beta_1, t)));             \
        const T one_minus_beta_1 = (T)(1 - c->beta_1), one_minus_beta_2 = (T)(1 - c->beta_2);           \
        const T epsilon = (T)c->epsilon, keep = (T)u->keep, scale = (T)u->scale, clip = (T)u->clip;     \
        const int64_t n = u->n;                                                                         \
        TW_OPT_PARALLEL_FOR(                                                                            \
        for (int64_t i = 0; i < n; i++) {                                                               \
            T gi = tw__opt_grad_##S(g[i], scale, clip);                                                 \
            m[i] = TW_OPT_FLUSH(T, m[i] + (gi - m[i]) * one_minus_beta_1);                              \
            v[i] = TW_OPT_FLUSH(T, v[i] + (gi * gi - v[i]) * one_minus_beta_2);                         \
            w[i] = w[i] * keep - m[i] * alpha / (SQRT(v[i]) + epsilon);                                 \
        });                                                                                             \
    }

DEFINE_ADAM(float, f32, sqrtf)
DEFINE_ADAM(double, f64, sqrt)

const tw_optimizer_algo tw__adam_algo = {.slots = adam_slots, .update = {adam_f32, adam_f64}};
