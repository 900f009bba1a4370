/* Tensor Workbench — tensors: dtypes, devices, creation, views, ownership.
 *
 * Ownership. Tensors are reference counted. Every function that returns a
 * tensor returns a new reference. When a scope is open on the calling thread
 * (tw_scope_begin), that reference belongs to the scope and is released by
 * tw_scope_end; keep a tensor past the scope with tw_tensor_ref(). Without an
 * open scope the caller owns the reference and releases it with
 * tw_tensor_unref(). Scopes are the C stand-in for a garbage collector: they
 * let expressions nest without naming every intermediate.
 *
 * Views (reshape, permute, transpose, slice, broadcast_to, squeeze,
 * expand_dims) share storage with their base; writes through a variable
 * assignment are seen by every view of it.
 */
#ifndef TW_TENSOR_H
#define TW_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define TW_MAX_DIMS 8

typedef enum {
    TW_FLOAT32,
    TW_FLOAT64,
    TW_INT32,
    TW_INT64,
    TW_UINT8,
    TW_BOOL,
    TW_DTYPE_COUNT
} tw_dtype;

size_t tw_dtype_size(tw_dtype dtype);
const char *tw_dtype_name(tw_dtype dtype); /* "float32", ... as TensorFlow names them */
bool tw_dtype_is_float(tw_dtype dtype);

/* Where a tensor's data lives. The CPU is always there; CUDA devices come
 * from the CUDA plugin (libtw-cuda.so) when it loads and finds a GPU; SIM
 * is a simulated device for tests (host memory behind the device
 * interface), absent unless a test enables it. Ops run on the device of
 * their inputs (all on one device, or an error naming both); copy between
 * devices with tw_tensor_to. */
typedef enum { TW_DEVICE_CPU = 0, TW_DEVICE_CUDA = 1, TW_DEVICE_SIM = 2, TW_DEVICE_KIND_COUNT } tw_device_kind;
typedef struct {
    tw_device_kind kind;
    int index;
} tw_device;

#define TW_CPU ((tw_device){TW_DEVICE_CPU, 0})
const char *tw_device_name(tw_device device, char *buf, size_t size); /* "cpu:0", "cuda:1" */
/* The device a name gives ("cpu", "cuda", "cuda:1", "sim:0"; no index:
 * 0), whether present or not; -1 with a message for anything else. */
int tw_device_parse(const char *text, tw_device *out);
/* How many devices of a kind this process can use (1 for the CPU, 0 where
 * none is present). The first question about CUDA loads the plugin. */
int tw_device_count(tw_device_kind kind);
/* A line about a present device for `twb --version` and the like (its
 * backend's description, e.g. the GPU's name and memory), else why it is
 * not available. Writes at most size bytes into buf and returns buf. */
const char *tw_device_describe(tw_device device, char *buf, size_t size);
/* The device new tensors are created on, per thread (TensorFlow's tf.device).
 * Setting a device that is not present fails with a message naming it. */
tw_device tw_default_device(void);
int tw_set_default_device(tw_device device);

typedef struct tw_tensor tw_tensor;

/* Shape and axis literals: tw_zeros(TW_FLOAT32, TW_SHAPE(2, 3)). */
#define TW_SHAPE(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (const int64_t[]){__VA_ARGS__}
#define TW_AXES(...) (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), (const int[]){__VA_ARGS__}
#define TW_TENSORS(...) (int)(sizeof((tw_tensor *[]){__VA_ARGS__}) / sizeof(tw_tensor *)), (tw_tensor *const[]){__VA_ARGS__}

/* ---- ownership ---------------------------------------------------------- */
tw_tensor *tw_tensor_ref(tw_tensor *t);
void tw_tensor_unref(tw_tensor *t); /* NULL is accepted */

void tw_scope_begin(void);
void tw_scope_end(void);

/* ---- inspection --------------------------------------------------------- */
tw_dtype tw_tensor_dtype(const tw_tensor *t);
tw_device tw_tensor_device(const tw_tensor *t);
int tw_tensor_ndim(const tw_tensor *t);
const int64_t *tw_tensor_shape(const tw_tensor *t);
int64_t tw_tensor_dim(const tw_tensor *t, int axis); /* negative axes count from the end */
const int64_t *tw_tensor_strides(const tw_tensor *t); /* in elements */
int64_t tw_tensor_numel(const tw_tensor *t);
bool tw_tensor_is_contiguous(const tw_tensor *t);
/* Whether two tensors share storage (one is a view of the other, or both of a third). */
bool tw_tensor_shares_storage(const tw_tensor *a, const tw_tensor *b);
/* Pointer to the first element of a CPU tensor. Honour the strides, or call
 * tw_contiguous() first. NULL, with an error naming the device, for a tensor
 * on another device: copy it with tw_tensor_to(t, TW_CPU) first. */
void *tw_tensor_data(const tw_tensor *t);
/* The value of a one-element tensor as a double; NAN (and an error) otherwise.
 * These readers (item, get, copy_to) copy from any device. */
double tw_tensor_item(const tw_tensor *t);
/* Element at a multi-index, as a double (for tests and printing). */
double tw_tensor_get(const tw_tensor *t, const int64_t *index);
/* Copy the elements in row-major order into buf (bytes must equal numel*itemsize). */
int tw_tensor_copy_to(const tw_tensor *t, void *buf, size_t bytes);
/* Shape as "(2, 3)" into buf. */
const char *tw_shape_str(int ndim, const int64_t *shape, char *buf, size_t size);

/* Print in TensorFlow's style: values, then shape and dtype; long tensors are
 * elided with "...". tw_tensor_to_string returns a malloc'd string. */
char *tw_tensor_to_string(const tw_tensor *t);
int tw_tensor_print(const tw_tensor *t, FILE *out);

/* ---- creation ----------------------------------------------------------- */
/* Copies `data` (row-major, numel elements of dtype). */
tw_tensor *tw_tensor_from_data(const void *data, tw_dtype dtype, int ndim, const int64_t *shape);
tw_tensor *tw_tensor_empty(tw_dtype dtype, int ndim, const int64_t *shape); /* uninitialised */
/* The same on a named device, whatever the default (readers filling host
 * memory ask for TW_CPU). */
tw_tensor *tw_tensor_empty_on(tw_device device, tw_dtype dtype, int ndim, const int64_t *shape);
/* A 0-d tensor of the given dtype. */
tw_tensor *tw_scalar_of(double value, tw_dtype dtype);
/* A "weak" 0-d float scalar: combined with a tensor of another dtype it takes
 * that tensor's dtype (as Python numbers do with NumPy arrays), so
 * tw_mul(x, tw_scalar(2)) works for float32 and float64 x alike. */
tw_tensor *tw_scalar(double value);
tw_tensor *tw_zeros(tw_dtype dtype, int ndim, const int64_t *shape);
tw_tensor *tw_ones(tw_dtype dtype, int ndim, const int64_t *shape);
tw_tensor *tw_full(double value, tw_dtype dtype, int ndim, const int64_t *shape);
tw_tensor *tw_zeros_like(const tw_tensor *t);
tw_tensor *tw_ones_like(const tw_tensor *t);
/* [start, stop) by step, NumPy's rule for the length. */
tw_tensor *tw_arange(double start, double stop, double step, tw_dtype dtype);
/* num evenly spaced values from start to stop inclusive. */
tw_tensor *tw_linspace(double start, double stop, int64_t num, tw_dtype dtype);
tw_tensor *tw_eye(int64_t rows, int64_t cols, tw_dtype dtype);
tw_tensor *tw_cast(tw_tensor *t, tw_dtype dtype);
/* Copy to a device (a plain copy when already there). Not recorded on tapes:
 * gradients do not flow across devices. */
tw_tensor *tw_tensor_to(tw_tensor *t, tw_device device);
/* A new tensor with its own storage and the same values. */
tw_tensor *tw_copy(tw_tensor *t);

/* ---- views (no copy) ---------------------------------------------------- */
/* One dimension may be -1 and is inferred. Needs contiguous data (or a layout
 * a view can express); use tw_contiguous() first otherwise. */
tw_tensor *tw_reshape(tw_tensor *t, int ndim, const int64_t *shape);
tw_tensor *tw_permute(tw_tensor *t, int ndim, const int *perm);
/* Reverses the dimensions (TensorFlow's tf.transpose default). */
tw_tensor *tw_transpose(tw_tensor *t);
/* Python-style slice of one axis: start/stop clamp, negative values count
 * from the end, step may be negative; TW_END means "to the end". */
#define TW_END INT64_MAX
tw_tensor *tw_slice(tw_tensor *t, int axis, int64_t start, int64_t stop, int64_t step);
/* Slice every axis at once (begin/end/step arrays of length ndim). */
tw_tensor *tw_strided_slice(tw_tensor *t, const int64_t *begin, const int64_t *end, const int64_t *step);
tw_tensor *tw_broadcast_to(tw_tensor *t, int ndim, const int64_t *shape);
tw_tensor *tw_expand_dims(tw_tensor *t, int axis);
/* naxes == 0: remove every dimension of size 1. */
tw_tensor *tw_squeeze(tw_tensor *t, int naxes, const int *axes);
/* The tensor itself (a new reference) when contiguous, else a packed copy. */
tw_tensor *tw_contiguous(tw_tensor *t);

/* ---- variables ---------------------------------------------------------- */
/* A variable is a tensor with a name, a trainable flag and its own storage,
 * updated in place by the assign functions. Tapes watch trainable variables
 * automatically. Its lifetime is its reference count, like any tensor. */
tw_tensor *tw_variable(tw_tensor *initial_value, const char *name, bool trainable);
bool tw_tensor_is_variable(const tw_tensor *t);
const char *tw_variable_name(const tw_tensor *v);
bool tw_variable_trainable(const tw_tensor *v);
int tw_variable_set_trainable(tw_tensor *v, bool trainable);
int tw_assign(tw_tensor *v, tw_tensor *value);     /* value broadcasts to v's shape */
int tw_assign_add(tw_tensor *v, tw_tensor *delta);
int tw_assign_sub(tw_tensor *v, tw_tensor *delta);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
