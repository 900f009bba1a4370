/* CPU kernels for resizing images, NHWC, as TensorFlow 2's tf.image.resize
 * without antialiasing (half-pixel centres, align_corners false):
 *   bilinear: source coordinate (o + 0.5) * in / out - 0.5, the two
 *             neighbours clamped to the image, weights from its fraction;
 *   nearest:  source index floor((o + 0.5) * in / out), clamped to the image.
 * The coordinates are computed in float32 whatever the dtype, as
 * TensorFlow does, so the picked pixels match it exactly. Buffers are
 * contiguous float32 or float64; no allocation, no messages. */
#ifndef TWK_RESIZE_KERNELS_H
#define TWK_RESIZE_KERNELS_H

#include <stdint.h>

#include "../twk_dtype.h"

typedef enum { TWK_RESIZE_BILINEAR, TWK_RESIZE_NEAREST } twk_resize_method;

typedef struct {
    int64_t batch, in_h, in_w, channels;
    int64_t out_h, out_w;
    twk_resize_method method;
} twk_resize_shape;

/* output (batch, out_h, out_w, channels) = resize(input (batch, in_h, in_w, channels)) */
void twk_resize(twk_dtype dtype, const twk_resize_shape *s, const void *input, void *output);
/* grad_input = d<resize(input), grad_output>/d input: each output pixel's
 * gradient spread back over the pixels it was made of, with their weights. */
void twk_resize_grad(twk_dtype dtype, const twk_resize_shape *s, const void *grad_output, void *grad_input);

#endif
