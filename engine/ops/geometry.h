/* The checked geometry of the image ops (convolutions, depthwise
 * convolutions, pooling, resizing, the projective transform), shared by
 * their infer functions (engine/ops) and the CPU's kernels
 * (engine/backend_cpu): where their attributes are, and the kernels' shape
 * structs from attrs and shapes, with an error naming op when they do not
 * fit; and how a BLAS reads a matrix product's operands. */
#ifndef TW_OPS_GEOMETRY_H
#define TW_OPS_GEOMETRY_H

#include "cpu/conv_kernels.h"
#include "cpu/depthwise_kernels.h"
#include "cpu/image_transform.h"
#include "cpu/resize_kernels.h"
#include "internal.h"

/* attrs.i of conv2d and depthwise_conv2d: stride h/w, dilation h/w, padding;
 * the backprop ops add the shape of what they produce at TW_CONV_ATTR_SHAPE. */
enum { TW_CONV_ATTR_SHAPE = 5 };
/* attrs.i of pooling: pool h/w, stride h/w, padding; avg_pool2d_grad adds
 * the input's shape at TW_POOL_ATTR_SHAPE. */
enum { TW_POOL_ATTR_SHAPE = 5 };

/* Exported for the CUDA plugin (backend.h), whose kernels take the same
 * geometry. */
#pragma GCC visibility push(default)
int tw__conv2d_geometry(const char *op, const tw_attrs *a, const int64_t *in, const int64_t *fil, twk_conv2d_shape *s);
int tw__pool2d_geometry(const char *op, const tw_attrs *a, const int64_t *in, twk_pool2d_shape *s);
/* How a BLAS reads the last two axes of t for a matrix product (ops/matmul.c):
 * leading dimension and whether to flip the transpose flag; false when the
 * layout needs packing first. */
bool tw__blas_layout(const tw_tensor *t, bool *flip, int64_t *ld);
#pragma GCC visibility pop
int tw__depthwise_geometry(const char *op, const tw_attrs *a, const int64_t *in, const int64_t *fil,
                           twk_depthwise_shape *s);

/* attrs.i of resize and resize_grad: method, then the height and width of
 * the op's own output. */
enum { TW_RESIZE_ATTR_METHOD, TW_RESIZE_ATTR_HEIGHT, TW_RESIZE_ATTR_WIDTH, TW_RESIZE_ATTR_COUNT };
/* The resize that reads images of shape in and writes out_h x out_w. */
int tw__resize_geometry(const char *op, const tw_attrs *a, const int64_t *in, int64_t out_h, int64_t out_w,
                        twk_resize_shape *s);
/* The resize that resize_grad's call is the gradient of. */
int tw__resize_grad_geometry(const tw_op_call *call, twk_resize_shape *s);

/* attrs.i of image_transform and its adjoint: height, width (the output's
 * for image_transform, the images' for the adjoint), interpolation, fill
 * mode; attrs.f[0]: the fill value. */
enum { TW_IMAGE_ATTR_HEIGHT, TW_IMAGE_ATTR_WIDTH, TW_IMAGE_ATTR_INTERP, TW_IMAGE_ATTR_FILL, TW_IMAGE_ATTR_COUNT };

#endif
