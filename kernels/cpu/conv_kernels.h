/* CPU kernels for 2-D convolution and pooling on NHWC tensors (filters HWIO,
 * as TensorFlow). Every buffer is contiguous; the engine validates shapes,
 * computes the padding and hands in a workspace of the size asked for (from
 * its caching pool). No allocation, no error messages.
 *
 * Convolution runs one of three ways (conv.c says which file holds each):
 *   - float32 on a CPU with AVX-512: a direct convolution register-blocked
 *     6 pixels x 64 output channels, for the forward pass, the filter
 *     gradient and the input gradient (at stride 1 a convolution of the
 *     output gradient with the flipped, transposed filter, else the column
 *     matrix dout x filter^T and col2im);
 *     3x3 stride-1 convolutions with 16+ channels use Winograd F(2x2, 3x3)
 *     instead (2.25x fewer multiplications), for all three passes;
 *   - everything else (float64, or no AVX-512): im2col + twk_gemm
 *     (OpenBLAS), the batch processed in chunks so the column buffer
 *     stays in a core's L2, 1x1 stride-1 unpadded convolutions as one
 *     plain gemm, the input gradient as a convolution of the output
 *     gradient with the flipped filter at stride 1, else through col2im.
 * The gemm path needs a successful twk_blas_init() first. */
#ifndef TWK_CONV_KERNELS_H
#define TWK_CONV_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../twk_dtype.h"

typedef struct {
    int64_t batch, in_h, in_w, in_c;  /* input (batch, in_h, in_w, in_c) */
    int64_t k_h, k_w, out_c;          /* filter (k_h, k_w, in_c, out_c) */
    int64_t out_h, out_w;             /* output (batch, out_h, out_w, out_c) */
    int64_t stride_h, stride_w;       /* >= 1 */
    int64_t dilation_h, dilation_w;   /* >= 1 */
    int64_t pad_top, pad_left;        /* zeros before the first row/column, >= 0 */
} twk_conv2d_shape;

typedef enum { TWK_CONV_FORWARD, TWK_CONV_BACKPROP_INPUT, TWK_CONV_BACKPROP_FILTER } twk_conv_pass;

/* Bytes of workspace one pass needs (0 possible). Call on the thread that
 * then runs the pass (the size depends on its OpenMP thread count). */
size_t twk_conv2d_workspace(twk_dtype dtype, const twk_conv2d_shape *s, twk_conv_pass pass);
/* output = conv(input, filter) */
void twk_conv2d_forward(twk_dtype dtype, const twk_conv2d_shape *s, const void *input, const void *filter,
                        void *output, void *workspace);
/* grad_input = d<conv(input, filter), grad_output>/d input */
void twk_conv2d_backprop_input(twk_dtype dtype, const twk_conv2d_shape *s, const void *filter,
                               const void *grad_output, void *grad_input, void *workspace);
/* grad_filter = d<conv(input, filter), grad_output>/d filter */
void twk_conv2d_backprop_filter(twk_dtype dtype, const twk_conv2d_shape *s, const void *input,
                                const void *grad_output, void *grad_filter, void *workspace);

/* Whether the direct (AVX-512) float32 path may be used: true by default
 * when the CPU has AVX-512 and $TW_CONV_DIRECT is not "0". Tests switch it
 * off to check the gemm path against it. Returns the previous setting. */
bool twk_conv2d_set_direct(bool enabled);
bool twk_conv2d_direct_available(void);
/* Whether the direct path may use Winograd F(2x2, 3x3) for 3x3, stride-1,
 * undilated convolutions with 16 or more channels in and out: on by
 * default unless $TW_CONV_WINOGRAD is "0". Returns the previous setting. */
bool twk_conv2d_set_winograd(bool enabled);

/* ---- pooling ---------------------------------------------------------------
 * Windows that hang over the padding only see the valid elements: max
 * ignores padded positions, average divides by the number of valid ones. */
typedef struct {
    int64_t batch, in_h, in_w, channels;
    int64_t pool_h, pool_w;
    int64_t out_h, out_w;
    int64_t stride_h, stride_w;
    int64_t pad_top, pad_left;
} twk_pool2d_shape;

void twk_max_pool2d(twk_dtype dtype, const twk_pool2d_shape *s, const void *input, void *output);
/* grad_input[argmax of each window] += grad_output (the first maximum in
 * row-major window order takes it all, as TensorFlow's CPU kernel). */
void twk_max_pool2d_grad(twk_dtype dtype, const twk_pool2d_shape *s, const void *input, const void *grad_output,
                         void *grad_input);
/* out[window] = grad_grad_input[argmax of the window]: the gradient of
 * max_pool2d_grad with respect to its grad_output. */
void twk_max_pool2d_grad_grad(twk_dtype dtype, const twk_pool2d_shape *s, const void *input,
                              const void *grad_grad_input, void *output);
void twk_avg_pool2d(twk_dtype dtype, const twk_pool2d_shape *s, const void *input, void *output);
void twk_avg_pool2d_grad(twk_dtype dtype, const twk_pool2d_shape *s, const void *grad_output, void *grad_input);

#endif
