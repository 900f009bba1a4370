/* Adagrad, as Keras 2.11+ (keras.optimizers.Adagrad):
 *   accumulator += g^2                      (starts at initial_accumulator_value)
 *   w -= lr * g / sqrt(accumulator + epsilon) */
#include <math.h>

#include "optimizer_internal.h"

static int adagrad_slots(const tw_optimizer_config *c, const char **names, double *initial_values)
{
    names[0] = "accumulator";
    initial_values[0] = c->initial_accumulator_value;
    return 1;
}

#define DEFINE_ADAGRAD(T, S, SQRT)                                                                      \
    static void adagrad_##S(const tw_update *u)                                                         \
    {                                                                                                   \
        T *w = u->w, *acc = u->slots[0];                                                                \
        const T *g = u->g;                                                                              \
        const T lr = (T)u->lr, epsilon = (T)u->config->epsilon, keep = (T)u->keep;                      \
        const T scale = (T)u->scale, clip = (T)u->clip;                                                 \
        const int64_t n = u->n;                                                                         \
        TW_OPT_PARALLEL_FOR(                                                                            \
        for (int64_t i = 0; i < n; i++) {                                                               \
            T gi = tw__opt_grad_##S(g[i], scale, clip);                                                 \
            acc[i] += gi * gi;                                                                          \
            w[i] = w[i] * keep - lr * gi / SQRT(acc[i] + epsilon);                                      \
        });                                                                                             \
    }

DEFINE_ADAGRAD(float, f32, sqrtf)
DEFINE_ADAGRAD(double, f64, sqrt)

const tw_optimizer_algo tw__adagrad_algo = {.slots = adagrad_slots, .update = {adagrad_f32, adagrad_f64}};
