/* Engine internals shared by the engine's own files: the tensor layout, the
 * op table, dispatch, scopes and the recorders (tapes and the graph
 * tracer). Not installed. */
#ifndef TW_INTERNAL_H
#define TW_INTERNAL_H

#include <stdatomic.h>

#include "op_ids.h"
#include "tw/engine.h"
#include "twk_dtype.h"

/* Kernels take the engine's dtypes as their own (kernels/twk_dtype.h). */
#define TW__SAME_NUMBER(a, b) ((int)(a) == (int)(b))
_Static_assert(TW__SAME_NUMBER(TWK_FLOAT32, TW_FLOAT32) && TW__SAME_NUMBER(TWK_FLOAT64, TW_FLOAT64) &&
                   TW__SAME_NUMBER(TWK_INT32, TW_INT32) && TW__SAME_NUMBER(TWK_INT64, TW_INT64) &&
                   TW__SAME_NUMBER(TWK_UINT8, TW_UINT8) && TW__SAME_NUMBER(TWK_BOOL, TW_BOOL) &&
                   TW__SAME_NUMBER(TWK_DTYPE_COUNT, TW_DTYPE_COUNT) && TWK_MAX_DIMS == TW_MAX_DIMS,
               "kernels/twk_dtype.h numbers dtypes as tw/tensor.h");

/* Per-thread state read on every op (tape stack, scopes). The initial-exec
 * model makes each access a plain load instead of a __tls_get_addr call;
 * keep such state small, as it comes from the static TLS reserve. */
#define TW_HOT_THREAD_LOCAL _Thread_local __attribute__((tls_model("initial-exec")))

/* ---- storage and tensors ------------------------------------------------ */
typedef struct tw_storage {
    atomic_int refcount;
    tw_device device;
    size_t nbytes;    /* usable bytes at data */
    int size_class;   /* pool bucket, -1 when allocated directly; DEVICE_CLASS + the
                       * device pool's bucket for memory of another device */
    atomic_uint version; /* bumped by in-place writes (variable assignment) */
    void *data;
    /* Device storages only: a host copy of the bytes, taken at version
     * mirror_version, for the few small values a device's kernels read on
     * the host each call (backend_cuda.c's optimizer configuration and
     * iteration counter); NULL until first read, freed with the storage. */
    void *mirror;
    unsigned mirror_version;
} tw_storage;

typedef struct tw_variable_info {
    char *name;
    bool trainable;
} tw_variable_info;

struct tw_tensor {
    atomic_int refcount;
    tw_dtype dtype;
    int ndim;
    bool weak; /* weak-typed scalar from tw_scalar() */
    int64_t numel;
    int64_t shape[TW_MAX_DIMS];
    int64_t strides[TW_MAX_DIMS]; /* in elements */
    int64_t offset;               /* in elements, into storage */
    tw_storage *storage;
    uint64_t id; /* unique for the process's lifetime; tapes key on it */
    tw_variable_info *variable;
};

/* A new contiguous tensor with fresh (pooled, uninitialised) storage; owned
 * by the caller, not by any scope. NULL with an error when memory runs out. */
tw_tensor *tw__tensor_new(tw_dtype dtype, int ndim, const int64_t *shape, tw_device device);
/* The same for a shape that has passed tw__check_shape (dispatch's outputs):
 * checking it again cost every op a second walk of the shape. */
tw_tensor *tw__tensor_new_checked(tw_dtype dtype, int ndim, const int64_t *shape, tw_device device);
/* A new tensor header over existing storage (a view); owned by the caller. */
tw_tensor *tw__tensor_view(tw_tensor *base, int ndim, const int64_t *shape, const int64_t *strides, int64_t offset);
void tw__contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);
/* The element count; the shape must have passed tw__check_shape. */
int64_t tw__numel(int ndim, const int64_t *shape);
/* 0, or -1 with "OP: shape (...) has more than INT64_MAX elements" (or "OP:
 * negative dimension in shape (...)", "OP: rank N is outside 0..TW_MAX_DIMS"): every
 * shape a tensor takes passes it. */
int tw__check_shape(const char *op, int ndim, const int64_t *shape);
/* Raw data pointer of element 0 (storage data + offset). */
static inline void *tw__data(const tw_tensor *t)
{
    return (char *)t->storage->data + t->offset * (int64_t)twk_dtype_size(t->dtype);
}
/* A contiguous copy (or a new reference when already contiguous), without
 * dispatch: not recorded, not scoped. For kernels. */
tw_tensor *tw__contiguous_raw(tw_tensor *t);
/* Copy src's values into dst (same shape and dtype, any strides), no dispatch. */
void tw__copy_into(tw_tensor *dst, const tw_tensor *src);

tw_storage *tw__storage_new(size_t nbytes, tw_device device);
void tw__storage_unref(tw_storage *s);
/* Tensor headers from the per-thread cache. */
tw_tensor *tw__header_alloc(void);
void tw__header_free(tw_tensor *t);
/* Tensor buffers taken from the system so far (not from the caches). */
uint64_t tw__system_allocations(void);
/* Release pooled memory that is not in use (tests call it before leak checks). */
void tw__pool_trim(void);
/* Fit the calling thread's OpenMP thread count to the cores other processes
 * leave free (threads.c): measures at most every 200 ms; graph runs call it. */
void tw__threads_adapt(void);
/* Dispatch's per-op form: every TW__ADAPT_EVERY_OPS-th op of a thread (and
 * the first after tw_set_num_threads) calls tw__threads_adapt. Reading the
 * clock and the thread's state on every op cost about 50 instructions, a
 * twentieth of a 16-element add. */
#define TW__ADAPT_EVERY_OPS 16
extern TW_HOT_THREAD_LOCAL int tw__ops_until_adapt;
static inline void tw__threads_adapt_op(void)
{
    if (__builtin_expect(--tw__ops_until_adapt < 0, 0)) {
        tw__ops_until_adapt = TW__ADAPT_EVERY_OPS - 1;
        tw__threads_adapt();
    }
}

/* One Philox4x32-10 block (random.c); exposed for its known-answer test. */
void tw__philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/* ---- scopes --------------------------------------------------------------- */
/* Hand a freshly created, caller-owned tensor to the open scope if any. */
tw_tensor *tw__track(tw_tensor *t);
/* End of a composite op: keep t alive past the scope the op opened, close
 * that scope, and hand t to the enclosing one. t may be NULL. */
tw_tensor *tw__scope_return(tw_tensor *t);

/* ---- the op table --------------------------------------------------------- */
#define TW_MAX_INPUTS 16
#define TW_MAX_OUTPUTS 4
#define TW_MAX_ATTR_INTS 32
#define TW_MAX_ATTR_FLOATS 4

/* Attributes of one op call: ints (axes, strides, flags) and floats (alpha). */
typedef struct {
    int64_t i[TW_MAX_ATTR_INTS];
    double f[TW_MAX_ATTR_FLOATS];
    int ni, nf;
} tw_attrs;

/* The shape and dtype an op promises for one output. */
typedef struct {
    tw_dtype dtype;
    int ndim;
    int64_t shape[TW_MAX_DIMS];
} tw_desc;

typedef struct tw_op_def tw_op_def;

typedef struct {
    const tw_op_def *op;
    int ninputs;
    tw_tensor *const *inputs;
    const tw_attrs *attrs;
    void *ctx; /* custom gradients only */
} tw_op_call;

enum {
    TW_OP_NOT_DIFFERENTIABLE = 1 << 0, /* never recorded on tapes */
    /* Writes into an input (variable assignment): a trace records it
     * without running it, and graph passes never drop or merge it. */
    TW_OP_STATEFUL = 1 << 1,
};

/* tw_op_def.ninputs of an op whose infer checks the count itself. */
#define TW_OP_VARIADIC (-1)

struct tw_op_def {
    const char *name;
    /* Its number (op_ids.h): the index of its kernel in every backend's
     * table. The kernels themselves live in the backends (the CPU's in
     * engine/backend_cpu/), found through tw__kernel_for (backend.h): a
     * kernel computes into freshly allocated contiguous outputs from inputs
     * that may be strided views, and returns 0, or -1 with an error set. */
    tw_op_id id;
    int noutputs;
    /* Inputs it takes (its infer and kernel read exactly these), or
     * TW_OP_VARIADIC. Dispatch and the graph reader check it
     * (tw__check_arity) before infer runs. */
    int ninputs;
    unsigned flags;
    /* An elementwise op of kernels/include/elementwise.h: its number of inputs (1 or
     * 2) and its twk_unary_op or twk_binary_op; 0 for every other op. The
     * graph fuser runs such ops in one pass over the elements. */
    int elementwise, elementwise_op;
    /* Validate inputs and attrs; describe each output. On bad input set the
     * error (naming the op and the shapes) and return -1. */
    int (*infer)(const tw_op_call *call, tw_desc *outs);
    /* View ops build their output over the input's storage instead of
     * running a kernel. Returns a caller-owned tensor. */
    tw_tensor *(*view)(const tw_op_call *call, const tw_desc *out);
    /* Gradients of the inputs from the outputs' gradients, written with
     * engine ops (tw_mul, ...) so the backward pass is itself recorded on any
     * outer tape. grad_outs[k] is NULL when output k has no gradient; fill
     * grad_ins[i] only where needs[i]; leave NULL for "no gradient". Runs
     * inside a scope: results need no unref. */
    int (*backward)(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *grad_outs, const bool *needs,
                    tw_tensor **grad_ins);
    /* Ops whose calls carry a context (custom gradients): tapes keep it
     * alive while they hold the call. */
    void (*ctx_ref)(void *ctx);
    void (*ctx_unref)(void *ctx);
};

/* Run an op: check, allocate, compute, record on tapes, hand to the scope.
 * outs receives op->noutputs tensors. Returns 0 or -1 (error set). */
int tw_dispatch(const tw_op_def *op, int ninputs, tw_tensor *const *inputs, const tw_attrs *attrs, void *ctx,
                tw_tensor **outs);
/* -1 with "OP: takes N inputs, got M" unless ninputs fits op->ninputs. */
int tw__check_arity(const tw_op_def *op, int ninputs);
/* Single-output convenience; NULL on failure. */
tw_tensor *tw_dispatch1(const tw_op_def *op, int ninputs, tw_tensor *const *inputs, const tw_attrs *attrs);

/* Find a registered op by name (for graphs and tests); NULL if unknown. */
const tw_op_def *tw_op_lookup(const char *name);
/* All registered ops, NULL-terminated. */
const tw_op_def *const *tw_op_registry(void);

/* ---- recorders -------------------------------------------------------------
 * Dispatch calls tw__record after every successful op. Tapes are the
 * recorders today; tracing a function into a graph will be another. */
void tw__record(const tw_op_call *call, tw_tensor *const *outs, int noutputs);
bool tw__recording(void); /* any tape active and not paused on this thread */

/* Tapes that were active when a trace started must not see it (the graph's
 * runs record on them instead); tapes begun inside the traced function work
 * as usual. Hide the active ones, and bring them back after the trace. */
typedef struct {
    int base, pause_depth;
} tw_tapes_hidden;
tw_tapes_hidden tw__tapes_hide(void);
void tw__tapes_unhide(tw_tapes_hidden hidden);

/* ---- tracing (trace.c) --------------------------------------------------------
 * While a function is traced on this thread, dispatch reports every op to
 * the tracer (after running it; stateful ops are reported, not run), and
 * the places that hand out a tensor's values or draw random numbers tell it
 * too, so it can refuse what a graph cannot reproduce. */
struct tw_tracer;
extern _Thread_local struct tw_tracer *tw__tracer __attribute__((tls_model("initial-exec")));
void tw__trace_op(const tw_op_call *call, tw_tensor *const *outs, int noutputs);
/* The scope of the traced node that computed t, or NULL (not tracing, or t
 * was not computed in this trace). */
const char *tw__trace_scope_of(const tw_tensor *t);
/* Before the values of t are handed out: 0, or -1 with an error set when a
 * shape-only trace did not compute them (the trace fails either way when
 * they are dynamic; see trace.c). */
int tw__trace_read(const tw_tensor *t, const char *what);
/* Whether this op's kernel is skipped: a shape-only trace and an input
 * that is dynamic (see trace.c). */
bool tw__trace_skips(const tw_op_call *call);
/* Whether t's values are there to read (false only for what a shape-only
 * trace did not compute). */
bool tw__trace_computed(const tw_tensor *t);
void tw__trace_random(const tw_tensor *t, const char *what);
/* Something that changes state outside dispatch: the trace fails. */
void tw__trace_unsupported(const char *what);
/* Stop tracing for a while (a layer building its weights inside a traced
 * call: the initialisers are not part of the computation). */
struct tw_tracer *tw__trace_suspend(void);
void tw__trace_resume(struct tw_tracer *tracer);

/* ---- helpers for op implementations ------------------------------------- */
/* Fail if any input is NULL (keeping an earlier error), returns -1. */
int tw__check_inputs(const char *op, int n, tw_tensor *const *inputs);
/* Normalise axis into [0, ndim), or set "op: axis A is out of range for a
 * tensor of rank N" and return -1. */
int tw__normalize_axis(const char *op, int axis, int ndim, int *out);
/* NumPy broadcast of two shapes; error names op and both shapes. */
int tw__broadcast_shapes(const char *op, int na, const int64_t *a, int nb, const int64_t *b, int *nout,
                         int64_t *out);
/* Strides that read t as if broadcast to (ndim, shape): 0 on broadcast axes. */
void tw__broadcast_strides(const tw_tensor *t, int ndim, const int64_t *shape, int64_t *strides);
/* Sum g down to (ndim, shape), undoing a broadcast; recorded (differentiable). */
tw_tensor *tw__sum_to_shape(tw_tensor *g, int ndim, const int64_t *shape);
/* Failures set on this thread so far: a change across a call means it failed
 * somewhere inside, even if it returned normally. */
unsigned tw__error_count(void);
/* Set an error naming op: "op: what (shape)". */
int tw__shape_error(const char *op, const char *what, const tw_tensor *t);

static inline tw_attrs tw__attrs_none(void)
{
    tw_attrs a = {0};
    return a;
}

#endif
