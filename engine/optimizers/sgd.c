/* SGD, as Keras 2.11+ (keras.optimizers.SGD):
 *   no momentum:  w -= lr * g
 *   momentum:     m = momentum * m - lr * g;  w += m
 *   nesterov:     m = momentum * m - lr * g;  w += momentum * m - lr * g
 * with the slot "momentum" only when momentum > 0. */
#include "optimizer_internal.h"

static int sgd_slots(const tw_optimizer_config *c, const char **names, double *initial_values)
{
    if (!(c->momentum > 0))
        return 0;
    names[0] = "momentum";
    initial_values[0] = 0;
    return 1;
}

#define DEFINE_SGD(T, S)                                                                                \
    static void sgd_##S(const tw_update *u)                                                             \
    {                                                                                                   \
        T *w = u->w, *m = u->slots[0];                                                                  \
        const T *g = u->g;                                                                              \
        const T lr = (T)u->lr, momentum = (T)u->config->momentum, keep = (T)u->keep;                    \
        const T scale = (T)u->scale, clip = (T)u->clip;                                                 \
        const bool nesterov = u->config->nesterov;                                                      \
        const int64_t n = u->n;                                                                         \
        TW_OPT_PARALLEL_FOR(                                                                            \
        for (int64_t i = 0; i < n; i++) {                                                               \
            T step = -tw__opt_grad_##S(g[i], scale, clip) * lr;                                         \
            if (m) {                                                                                    \
                m[i] = TW_OPT_FLUSH(T, step + m[i] * momentum);                                         \
                step = nesterov ? step + m[i] * momentum : m[i];                                        \
            }                                                                                           \
            w[i] = w[i] * keep + step;                                                                  \
        });                                                                                             \
    }

DEFINE_SGD(float, f32)
DEFINE_SGD(double, f64)

const tw_optimizer_algo tw__sgd_algo = {.slots = sgd_slots, .update = {sgd_f32, sgd_f64}};
