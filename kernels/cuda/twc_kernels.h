/* The CUDA kernels of libtw-cuda.so: C functions over raw device pointers,
 * shapes and strides in elements, the CPU kernels' conventions
 * (kernels/cpu/cpu_kernels.h) with a device context added. Like the CPU
 * kernels they include nothing of the engine and validate nothing the
 * engine validates first; they return 0, or -1 with twc_last_error() set
 * (a CUDA, cuBLAS or cuDNN failure, or out of device memory).
 *
 * Work is queued on the device's one stream and runs in order; the host
 * waits only in twc_sync, twc_copy_to_host and twc_read. */
#ifndef TWC_KERNELS_H
#define TWC_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#include "../cpu/conv_kernels.h"
#include "../include/elementwise.h"
#include "../twk_dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TWC_API __attribute__((visibility("default")))

/* ---- devices ------------------------------------------------------------------ */
/* Number of CUDA devices; 0 where there is no driver or no device, with the
 * reason in twc_last_error() ("no CUDA device: ..."). */
TWC_API int twc_device_count(void);
typedef struct {
    char name[256];
    size_t total_memory;
    int major, minor; /* compute capability */
} twc_device_info;
TWC_API int twc_device_info_get(int ordinal, twc_device_info *info);
/* The reason of the last failure on this thread. */
TWC_API const char *twc_last_error(void);

/* A device context: the device's stream, its cuBLAS and cuDNN handles, the
 * caching allocator and a pinned staging buffer. One per device and process;
 * the functions below may be called from any thread but not concurrently on
 * one context. */
typedef struct twc_device twc_device;
TWC_API twc_device *twc_device_open(int ordinal);
TWC_API void twc_device_close(twc_device *dev);
TWC_API int twc_sync(twc_device *dev);

/* ---- memory (caching allocator: blocks return to per-size free lists and are
 * reused; cudaMalloc only when no free block fits) ----------------------------- */
TWC_API void *twc_alloc(twc_device *dev, size_t bytes);
TWC_API void twc_free(twc_device *dev, void *ptr);
/* Bytes held from the driver, and in use; calls of cudaMalloc so far. */
TWC_API void twc_memory_stats(twc_device *dev, size_t *held, size_t *in_use, uint64_t *driver_allocs);
/* Give the free cached blocks back to the driver. */
TWC_API void twc_release_cached(twc_device *dev);

/* Host to device and back through the pinned staging buffer (the host memory
 * may be anything); device to device on the stream. */
TWC_API int twc_copy_to_device(twc_device *dev, void *dst, const void *src, size_t bytes);
TWC_API int twc_copy_to_host(twc_device *dev, void *dst, const void *src, size_t bytes);
TWC_API int twc_copy_device(twc_device *dev, void *dst, const void *src, size_t bytes);
/* Read one element as double (waits for the stream). */
TWC_API int twc_read(twc_device *dev, twk_dtype dtype, const void *p, double *value);

/* ---- elementwise (kernels/include/elementwise.h) --------------------------------- */
TWC_API int twc_fill(twc_device *dev, twk_dtype dtype, int64_t n, void *dst, double value);
TWC_API int twc_copy(twc_device *dev, size_t itemsize, int ndim, const int64_t *shape, void *dst,
                     const int64_t *dst_strides, const void *src, const int64_t *src_strides);
TWC_API int twc_cast(twc_device *dev, twk_dtype dst_dtype, twk_dtype src_dtype, int ndim, const int64_t *shape,
                     void *dst, const int64_t *dst_strides, const void *src, const int64_t *src_strides);
TWC_API int twc_unary(twc_device *dev, twk_unary_op op, twk_dtype dtype, int ndim, const int64_t *shape, void *out,
                      const int64_t *out_strides, const void *x, const int64_t *x_strides, double p0, double p1);
TWC_API int twc_binary(twc_device *dev, twk_binary_op op, twk_dtype in_dtype, int ndim, const int64_t *shape,
                       void *out, const int64_t *out_strides, const void *a, const int64_t *a_strides,
                       const void *b, const int64_t *b_strides);
TWC_API int twc_where(twc_device *dev, twk_dtype dtype, int ndim, const int64_t *shape, void *out,
                      const int64_t *out_strides, const void *cond, const int64_t *cond_strides, const void *a,
                      const int64_t *a_strides, const void *b, const int64_t *b_strides);

/* ---- reductions (as twk_reduce: op numbers TWK_SUM .. TWK_ARGMIN of
 * cpu_kernels.h; float sums accumulate in double; out contiguous) ----------------- */
TWC_API int twc_reduce(twc_device *dev, int op, twk_dtype dtype, int ndim, const int64_t *shape,
                       const int64_t *strides, const void *x, const bool *reduce, void *out);

/* ---- softmax along an axis of a contiguous (outer, n, inner) tensor, and the
 * fused cross-entropies over rows of n classes (float32/float64) ------------------ */
TWC_API int twc_softmax(twc_device *dev, twk_dtype dtype, bool log, int64_t outer, int64_t n, int64_t inner,
                        const void *x, void *y);
/* loss[r] = logsumexp(logits[r]) - sum_c labels[r, c] * logits[r, c] */
TWC_API int twc_softmax_cross_entropy(twc_device *dev, twk_dtype dtype, int64_t rows, int64_t n,
                                      const void *logits, const void *labels, void *loss);
/* loss[r] = logsumexp(logits[r]) - logits[r, labels[r]]; a label outside
 * [0, n) gives NaN (the engine checks labels first). */
TWC_API int twc_sparse_softmax_cross_entropy(twc_device *dev, twk_dtype dtype, twk_dtype label_dtype, int64_t rows,
                                             int64_t n, const void *logits, const void *labels, void *loss);

/* ---- indexed moves (as kernels/cpu/gather_kernels.h) ----------------------------- */
TWC_API int twc_gather(twc_device *dev, size_t itemsize, int64_t outer, int64_t axis_size, int64_t inner,
                       const void *params, twk_dtype index_dtype, int64_t nindices, const void *indices, void *out);
/* out must be zeroed by the caller (twc_fill); float scatter-adds use atomics,
 * so their sums may differ from the CPU's in the last bits. */
TWC_API int twc_scatter_add(twc_device *dev, twk_dtype dtype, int64_t outer, int64_t axis_size, int64_t inner,
                            const void *src, twk_dtype index_dtype, int64_t nindices, const void *indices, void *out);
TWC_API int twc_one_hot(twc_device *dev, twk_dtype dtype, twk_dtype index_dtype, int64_t n, const void *indices,
                        int64_t depth, void *out);
/* Input j of n (outer, sizes[j], inner), contiguous, into out (outer, sum, inner). */
TWC_API int twc_concat(twc_device *dev, size_t itemsize, int n, const void *const *inputs, const int64_t *sizes,
                       int64_t outer, int64_t inner, void *out);
/* paddings: ndim pairs (before, after); out contiguous. */
TWC_API int twc_pad(twc_device *dev, twk_dtype dtype, int ndim, const int64_t *shape, const void *x,
                    const int64_t *x_strides, const int64_t *paddings, double value, void *out);
TWC_API int twc_tile(twc_device *dev, size_t itemsize, int ndim, const int64_t *shape, const void *x,
                     const int64_t *x_strides, const int64_t *multiples, void *out);

/* ---- dropout: y = x * keep / (1 - rate), keep where the uniform draw of
 * element i from (seed, position + i) is at least rate (engine/random.c's
 * Philox, so the CPU's tw_dropout keeps the same elements); n contiguous. --------- */
TWC_API int twc_dropout(twc_device *dev, twk_dtype dtype, int64_t n, const void *x, double rate, uint64_t seed,
                        uint64_t position, void *y);

/* ---- fused optimizer updates (engine/optimizers' rules, float32/float64) --------
 * g is scaled by scale and clipped to [-clip, clip]; keep is the decoupled
 * weight decay factor (1 without it). m may be NULL for SGD without momentum. */
typedef struct {
    double lr, keep, scale, clip;
    double momentum, beta_1, beta_2, epsilon;
    bool nesterov;
    int64_t t; /* Adam: iterations + 1 */
} twc_update;
TWC_API int twc_sgd_update(twc_device *dev, twk_dtype dtype, int64_t n, void *w, const void *g, void *m,
                           const twc_update *u);
TWC_API int twc_adam_update(twc_device *dev, twk_dtype dtype, int64_t n, void *w, const void *g, void *m, void *v,
                            const twc_update *u);

/* ---- cuBLAS: C[b] = A[b] * B[b] row-major, batch strides in elements (0
 * broadcasts), transposes as twk_gemm, beta 0 or 1 ------------------------------- */
TWC_API int twc_gemm(twc_device *dev, twk_dtype dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                     const void *a, int64_t lda, int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b,
                     float beta, void *c, int64_t ldc, int64_t stride_c, int64_t batch);

/* ---- convolution (cuDNN) and pooling, NHWC, float32/float64, the CPU
 * kernels' shapes (kernels/cpu/conv_kernels.h: filters HWIO, padding before
 * given, padding after implied by the output size) ---------------------------- */
TWC_API int twc_conv2d_forward(twc_device *dev, twk_dtype dtype, const twk_conv2d_shape *s, const void *x,
                               const void *filter, void *y);
TWC_API int twc_conv2d_backprop_input(twc_device *dev, twk_dtype dtype, const twk_conv2d_shape *s, const void *filter,
                                      const void *dy, void *dx);
TWC_API int twc_conv2d_backprop_filter(twc_device *dev, twk_dtype dtype, const twk_conv2d_shape *s, const void *x,
                                       const void *dy, void *dfilter);
/* Pooling as the CPU's: windows see only valid elements; the max gradient
 * goes to the first maximum of each window; average divides by the number
 * of valid elements. The gradients accumulate with atomics into dx, which
 * they zero first. */
TWC_API int twc_max_pool2d(twc_device *dev, twk_dtype dtype, const twk_pool2d_shape *s, const void *x, void *y);
TWC_API int twc_max_pool2d_grad(twc_device *dev, twk_dtype dtype, const twk_pool2d_shape *s, const void *x,
                                const void *dy, void *dx);
TWC_API int twc_avg_pool2d(twc_device *dev, twk_dtype dtype, const twk_pool2d_shape *s, const void *x, void *y);
TWC_API int twc_avg_pool2d_grad(twc_device *dev, twk_dtype dtype, const twk_pool2d_shape *s, const void *dy,
                                void *dx);
/* Batch normalization in training mode over (rows, channels) with the
 * channel last (NHWC flattened), batch_norm.cu: the CPU kernel's passes
 * (kernels/cpu/batch_norm_kernels.h) with the same outputs: y and the batch
 * mean and inverse standard deviation; the gradient from those. */
TWC_API int twc_batch_norm_forward(twc_device *dev, twk_dtype dtype, int64_t rows, int64_t channels, const void *x,
                                   const void *gamma, const void *beta, double epsilon, void *y, void *mean,
                                   void *inv_std);
TWC_API int twc_batch_norm_backward(twc_device *dev, twk_dtype dtype, int64_t rows, int64_t channels, const void *x,
                                    const void *dy, const void *gamma, const void *mean, const void *inv_std,
                                    void *dx, void *dgamma, void *dbeta);

#ifdef __cplusplus
}
#endif

#endif
