/* CPU kernels for depthwise 2-D convolution on NHWC tensors: each input
 * channel c convolved with its own depth_multiplier filters, output channel
 * c * multiplier + m (TensorFlow's depthwise_conv2d). The filter is
 * (k_h, k_w, channels, multiplier). Every buffer is contiguous and float32
 * or float64; the engine validates shapes, computes the padding and hands
 * in a workspace of the size asked for. No allocation, no messages.
 *
 * The loops run over channels innermost (NHWC keeps them contiguous), with
 * a block of channels accumulated over all taps before it is stored, and
 * are compiled three times (AVX-512, AVX2 + FMA, baseline x86-64) with the
 * widest the CPU has chosen at run time. */
#ifndef TWK_DEPTHWISE_KERNELS_H
#define TWK_DEPTHWISE_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../twk_dtype.h"

typedef struct {
    int64_t batch, in_h, in_w, channels; /* input (batch, in_h, in_w, channels) */
    int64_t k_h, k_w, multiplier;        /* filter (k_h, k_w, channels, multiplier) */
    int64_t out_h, out_w;                /* output (batch, out_h, out_w, channels * multiplier) */
    int64_t stride_h, stride_w;          /* >= 1 */
    int64_t dilation_h, dilation_w;      /* >= 1 */
    int64_t pad_top, pad_left;           /* zeros before the first row/column, >= 0 */
} twk_depthwise_shape;

/* output = depthwise_conv(input, filter) */
void twk_depthwise_forward(twk_dtype dtype, const twk_depthwise_shape *s, const void *input, const void *filter,
                           void *output);
/* grad_input = d<depthwise_conv(input, filter), grad_output>/d input */
void twk_depthwise_backprop_input(twk_dtype dtype, const twk_depthwise_shape *s, const void *filter,
                                  const void *grad_output, void *grad_input);
/* Bytes of workspace the filter gradient needs: one partial filter per
 * thread. Call on the thread that then runs it. */
size_t twk_depthwise_filter_workspace(twk_dtype dtype, const twk_depthwise_shape *s);
/* grad_filter = d<depthwise_conv(input, filter), grad_output>/d filter */
void twk_depthwise_backprop_filter(twk_dtype dtype, const twk_depthwise_shape *s, const void *input,
                                   const void *grad_output, void *grad_filter, void *workspace);

/* The instruction sets the passes are compiled for. The widest the CPU has
 * is used unless a test picks another to check it against the rest. */
typedef enum { TWK_DEPTHWISE_AVX512, TWK_DEPTHWISE_AVX2, TWK_DEPTHWISE_BASELINE, TWK_DEPTHWISE_ISA_COUNT } twk_depthwise_isa;
extern const char *const twk_depthwise_isa_names[TWK_DEPTHWISE_ISA_COUNT];
bool twk_depthwise_isa_available(twk_depthwise_isa isa);
/* Use isa from now on (it must be available); returns the one used before. */
twk_depthwise_isa twk_depthwise_set_isa(twk_depthwise_isa isa);

#endif
