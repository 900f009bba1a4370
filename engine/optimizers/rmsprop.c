/* RMSprop, as Keras 2.11+ (keras.optimizers.RMSprop, centered = False):
 *   velocity = rho * velocity + (1 - rho) * g^2
 *   increment = g * lr / sqrt(velocity + epsilon)       (epsilon inside the root)
 *   momentum > 0:  momentum_slot = momentum * momentum_slot + increment;  w -= momentum_slot
 *   otherwise:     w -= increment
 * Slots: "velocity" (Keras' legacy name "rms" also finds it) and "momentum"
 * when momentum > 0. */
#include <math.h>

#include "optimizer_internal.h"

static int rmsprop_slots(const tw_optimizer_config *c, const char **names, double *initial_values)
{
    names[0] = "velocity";
    initial_values[0] = 0;
    if (!(c->momentum > 0))
        return 1;
    names[1] = "momentum";
    initial_values[1] = 0;
    return 2;
}

#define DEFINE_RMSPROP(T, S, SQRT)                                                                      \
    static void rmsprop_##S(const tw_update *u)                                                         \
    {                                                                                                   \
        T *w = u->w, *velocity = u->slots[0], *mom = u->slots[1];                                       \
        const T *g = u->g;                                                                              \
        const tw_optimizer_config *c = u->config;                                                       \
        const T lr = (T)u->lr, rho = (T)c->rho, one_minus_rho = (T)(1 - c->rho);                        \
        const T momentum = (T)c->momentum, epsilon = (T)c->epsilon, keep = (T)u->keep;                  \
        const T scale = (T)u->scale, clip = (T)u->clip;                                                 \
        const int64_t n = u->n;                                                                         \
        TW_OPT_PARALLEL_FOR(                                                                            \
        for (int64_t i = 0; i < n; i++) {                                                               \
            T gi = tw__opt_grad_##S(g[i], scale, clip);                                                 \
            velocity[i] = TW_OPT_FLUSH(T, rho * velocity[i] + one_minus_rho * gi * gi);                 \
            T increment = gi * lr / SQRT(velocity[i] + epsilon);                                        \
            if (mom) {                                                                                  \
                mom[i] = TW_OPT_FLUSH(T, momentum * mom[i] + increment);                                \
                increment = mom[i];                                                                     \
            }                                                                                           \
            w[i] = w[i] * keep - increment;                                                             \
        });                                                                                             \
    }

DEFINE_RMSPROP(float, f32, sqrtf)
DEFINE_RMSPROP(double, f64, sqrt)

const tw_optimizer_algo tw__rmsprop_algo = {.slots = rmsprop_slots, .update = {rmsprop_f32, rmsprop_f64}};
