/* Optimizer internals shared by the optimizer core (optimizer.c, slots.c,
 * apply.c) and the update rules (one file per algorithm). Not installed. */
#ifndef TW_OPTIMIZER_INTERNAL_H
#define TW_OPTIMIZER_INTERNAL_H

#include <float.h>
#include "cpu/cpu_kernels.h"
#include "cpu/parallel.h"
#include "id_map.h"
#include "backend.h"
#include "tw/optimizers.h"

#define TW_OPT_MAX_SLOTS 2

/* One variable's update: n contiguous elements of the variable, its
 * gradient and its slots, all of one dtype, and this step's scalars. */
typedef struct {
    int64_t n;
    void *w;
    const void *g;
    void *slots[TW_OPT_MAX_SLOTS];
    double lr;    /* this step's learning rate */
    double keep;  /* 1 - lr * weight_decay: decoupled decay, w *= keep before the step */
    double scale; /* gradient norm clipping factor (1 when off) */
    double clip;  /* gradient value bound (INFINITY when off) */
    int64_t t;    /* this update's 1-based number (Adam's bias correction) */
    const tw_optimizer_config *config;
} tw_update;

/* An update rule. slots() names the slots this configuration needs (SGD
 * without momentum needs none) and their initial values; update[] runs one
 * fused, in-place loop, [0] for float32 and [1] for float64. */
typedef struct {
    int (*slots)(const tw_optimizer_config *config, const char **names, double *initial_values);
    void (*update[2])(const tw_update *u);
} tw_optimizer_algo;

extern const tw_optimizer_algo tw__sgd_algo, tw__adam_algo, tw__rmsprop_algo, tw__adagrad_algo;

/* The gradient an update rule uses: scaled (norm clipping), then clamped
 * (value clipping). NaN passes through, as in TensorFlow. */
static inline float tw__opt_grad_f32(float g, float scale, float clip)
{
    g *= scale;
    return g < -clip ? -clip : (g > clip ? clip : g);
}
static inline double tw__opt_grad_f64(double g, double scale, double clip)
{
    g *= scale;
    return g < -clip ? -clip : (g > clip ? clip : g);
}

/* An update loop over a local `n` elements: threads for large variables
 * (elementwise, so the result does not depend on the thread count). */
#define TW_OPT_PARALLEL_FOR(...) TWK_PARALLEL_FOR(twk_parallel(n), schedule(static), __VA_ARGS__)

/* A decaying slot value below the smallest normal float becomes 0. Moments
 * of weights whose gradients stay 0 (dead units, unused pixels) otherwise
 * sink into subnormals, where each operation costs ~100 cycles: after one
 * Fashion-MNIST epoch Adam's step took 3-8x longer. TensorFlow flushes
 * denormals in its threads for the same reason; here only the slots are. */
#define TW_OPT_FLUSH(T, x) ((x) > -(T)TW_OPT_MIN_NORMAL(T) && (x) < (T)TW_OPT_MIN_NORMAL(T) ? (T)0 : (x))
#define TW_OPT_MIN_NORMAL(T) (sizeof(T) == sizeof(float) ? FLT_MIN : DBL_MIN)

/* What makes an optimizer data-parallel (engine/distributed_mpi.c): the
 * gradients averaged across processes before each eager update. */
typedef struct {
    /* A gradient the backward pass has finished (tw_tape_gradient_hooked). */
    void (*ready)(void *data, int index, tw_tensor *variable, tw_tensor *gradient);
    /* The average over the processes of each gradient, into averaged (new
     * references; NULL where the gradient is). */
    int (*reduce)(void *data, int n, tw_tensor *const *variables, tw_tensor *const *gradients,
                  tw_tensor **averaged);
    double (*wait_ms)(const void *data); /* the last reduce's wait */
    /* This process's gradients count weight times in the next average (a
     * share of a batch split unevenly: rows here x processes / rows). */
    void (*set_weight)(void *data, double weight);
    void (*free)(void *data);
} tw_gradient_reducer;

/* Whether the optimizer averages its gradients across processes: fit then
 * hands it each gradient as the backward pass finishes it
 * (tw_tape_gradient_hooked). */
bool tw__optimizer_reduces(const tw_optimizer *opt);
/* The reducer's set_weight, when the optimizer has one. */
void tw__optimizer_weigh_gradients(tw_optimizer *opt, double weight);

/* One variable's slots. */
typedef struct {
    tw_tensor *variable; /* a reference */
    tw_tensor *slots[TW_OPT_MAX_SLOTS];
} tw_slot_set;

struct tw_optimizer {
    tw_optimizer_config config;
    const tw_optimizer_algo *algo;
    const char *name; /* tw_optimizer_kind_name, for messages */
    int nslots;
    const char *slot_names[TW_OPT_MAX_SLOTS];
    double slot_initial_values[TW_OPT_MAX_SLOTS];
    /* Updates applied so far: an int64 scalar variable (not a C counter) so a
     * traced update reads and increments it in the graph. */
    tw_tensor *iterations;
    int nsets, sets_capacity;
    tw_slot_set *sets; /* in the order variables were first seen */
    tw_id_map index;   /* variable id -> set index + 1 */
    const tw_gradient_reducer *reducer; /* NULL: gradients used as given */
    void *reducer_data;
};

/* slots.c: a float variable's slot set, created on first use (NULL with an
 * error naming the variable). The pointer is valid until the next creation. */
tw_slot_set *tw__optimizer_slot_set(tw_optimizer *opt, tw_tensor *variable);
/* Fail unless v is a float32/float64 variable. */
int tw__optimizer_check_variable(const tw_optimizer *opt, const tw_tensor *v);
void tw__optimizer_free_slots(tw_optimizer *opt);

/* optimizer.c: the update rule of a kind. */
const tw_optimizer_algo *tw__optimizer_algo(tw_optimizer_kind kind);
int64_t tw__optimizer_iteration_value(const tw_tensor *iterations);
/* Move the iteration counter to the device of the variables (a new
 * variable with the same count) before a first update there. */
int tw__optimizer_place(tw_optimizer *opt, tw_device device);

/* apply.c: one variable's fused in-place update at update number t
 * (1-based) with this step's learning rate and global clipping factor
 * (1 when off); the eager path and the traced update op share it. */
int tw__optimizer_update_variable(const tw_optimizer_config *config, const tw_optimizer_algo *algo, int nslots,
                                  tw_tensor *v, tw_tensor *gradient, tw_tensor *const *slots, double lr,
                                  double scale, int64_t t);
/* Validation shared by both paths: every pair checked, some gradient given. */
int tw__optimizer_check_call(const tw_optimizer *opt, int n, tw_tensor *const *variables,
                             tw_tensor *const *gradients);

/* traced_update.c: apply_gradients as ops (one optimizer_update per
 * variable, the counter's assign_add): while a function is traced, so the
 * graph applies it on every run, and eagerly for variables on a device
 * other than the CPU, so the update runs where they live. */
int tw__optimizer_apply_traced(tw_optimizer *opt, int n, tw_tensor *const *variables, tw_tensor *const *gradients);

#endif
