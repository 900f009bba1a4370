/* Tensor Workbench — eager ops. Every op runs at once and returns a new
 * tensor (see tensor.h for ownership and error.h for failures). Binary ops
 * broadcast with NumPy's rules; inputs must share a dtype unless one is a weak
 * scalar (tw_scalar). Every op is recorded on the active gradient tapes. */
#ifndef TW_OPS_H
#define TW_OPS_H

#include "elementwise.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* ---- elementwise --------------------------------------------------------
 * One public function per op of the table in elementwise.h (installed next
 * to this header; kernels/include/elementwise.h in the source tree), which
 * also holds each op's formula and the dtypes it takes: binary ops are
 * tw_NAME(a, b) (comparisons give bool tensors; logical ops take them),
 * unary ops without attributes tw_NAME(x) (round rounds halves to even, as
 * TensorFlow and PyTorch; gelu is the exact erf form, Keras' default).
 *
 * Integer tw_div floors, as Python's // and TensorFlow's floordiv (C and
 * TensorFlow's truncatediv round toward zero: -7 / 2 is -4 here, -3 there);
 * tw_floormod is the matching remainder, with the divisor's sign (Python's
 * %, TensorFlow's floormod): a == div(a, b) * b + floormod(a, b). For
 * floats tw_div is true division and tw_floormod a - floor(a / b) * b. An
 * integer zero divisor is an error ("div: integer division by zero"). For
 * a true division of integers cast them to a float dtype first. */
#define TW__DECLARE_BINARY(name, ...) tw_tensor *tw_##name(tw_tensor *a, tw_tensor *b);
#define TW__DECLARE_UNARY(name, takes, nattrs, ...) TW__DECLARE_UNARY_##nattrs(name)
#define TW__DECLARE_UNARY_0(name) tw_tensor *tw_##name(tw_tensor *x);
#define TW__DECLARE_UNARY_1(name)
#define TW__DECLARE_UNARY_2(name)
TWK_BINARY_OPS(TW__DECLARE_BINARY)
TWK_UNARY_OPS(TW__DECLARE_UNARY)
/* TensorFlow's other name for floormod. */
static inline tw_tensor *tw_mod(tw_tensor *a, tw_tensor *b)
{
    return tw_floormod(a, b);
}
/* The unary ops with attributes. */
tw_tensor *tw_leaky_relu(tw_tensor *x, double alpha); /* Keras default alpha 0.3, TF's 0.2 */
tw_tensor *tw_elu(tw_tensor *x, double alpha);        /* alpha 1.0 usually */
tw_tensor *tw_clip(tw_tensor *x, double min_value, double max_value);
tw_tensor *tw_swish(tw_tensor *x); /* x * sigmoid(x), a composite */

/* With a C number on the right (or left for rsub/rdiv: s - a, s / a). */
tw_tensor *tw_add_scalar(tw_tensor *a, double s);
tw_tensor *tw_sub_scalar(tw_tensor *a, double s);
tw_tensor *tw_mul_scalar(tw_tensor *a, double s);
tw_tensor *tw_div_scalar(tw_tensor *a, double s);
tw_tensor *tw_pow_scalar(tw_tensor *a, double s);
tw_tensor *tw_rsub_scalar(double s, tw_tensor *a);
tw_tensor *tw_rdiv_scalar(double s, tw_tensor *a);

/* cond ? a : b, all three broadcast; cond is bool. */
tw_tensor *tw_where(tw_tensor *cond, tw_tensor *a, tw_tensor *b);

/* The value with no gradient flowing back through it. */
tw_tensor *tw_stop_gradient(tw_tensor *x);

/* ---- reductions ----------------------------------------------------------
 * axes: naxes entries, negative allowed; naxes == 0 reduces every axis.
 * keepdims keeps reduced axes with size 1. */
tw_tensor *tw_sum(tw_tensor *x, int naxes, const int *axes, bool keepdims);
tw_tensor *tw_mean(tw_tensor *x, int naxes, const int *axes, bool keepdims);
tw_tensor *tw_max(tw_tensor *x, int naxes, const int *axes, bool keepdims);
tw_tensor *tw_min(tw_tensor *x, int naxes, const int *axes, bool keepdims);
tw_tensor *tw_prod(tw_tensor *x, int naxes, const int *axes, bool keepdims);
tw_tensor *tw_variance(tw_tensor *x, int naxes, const int *axes, bool keepdims); /* population (ddof 0) */
tw_tensor *tw_logsumexp(tw_tensor *x, int naxes, const int *axes, bool keepdims);
/* Index of the largest/smallest value along one axis, as int64. */
tw_tensor *tw_argmax(tw_tensor *x, int axis);
tw_tensor *tw_argmin(tw_tensor *x, int axis);
/* Shorthand: sum and mean of every element. */
tw_tensor *tw_sum_all(tw_tensor *x);
tw_tensor *tw_mean_all(tw_tensor *x);

/* ---- linear algebra ------------------------------------------------------
 * Matrix product over the last two axes, leading axes broadcast (batch). A
 * 1-d operand is not promoted: pass 2-d matrices. */
tw_tensor *tw_matmul(tw_tensor *a, tw_tensor *b);
tw_tensor *tw_matmul_ex(tw_tensor *a, tw_tensor *b, bool transpose_a, bool transpose_b);

/* ---- shape ops ---------------------------------------------------------- */
tw_tensor *tw_concat(int n, tw_tensor *const *tensors, int axis);
tw_tensor *tw_stack(int n, tw_tensor *const *tensors, int axis);
/* Split into n equal parts along axis; outs receives n tensors. */
int tw_split(tw_tensor *x, int n, int axis, tw_tensor **outs);
/* Split into parts of the given sizes (summing to the axis length). */
int tw_split_sizes(tw_tensor *x, int n, const int64_t *sizes, int axis, tw_tensor **outs);
/* Pick slices of params along axis by integer indices (int32 or int64). */
tw_tensor *tw_gather(tw_tensor *params, tw_tensor *indices, int axis);
/* One-hot encoding: shape indices.shape + (depth,), values 1/0 in dtype;
 * indices out of [0, depth) give a row of zeros (TensorFlow's rule). */
tw_tensor *tw_one_hot(tw_tensor *indices, int64_t depth, tw_dtype dtype);
/* paddings: ndim pairs (before, after) of non-negative amounts. */
tw_tensor *tw_pad(tw_tensor *x, const int64_t *paddings, double constant_value);
tw_tensor *tw_tile(tw_tensor *x, int n, const int64_t *multiples);

/* ---- neural-net ops ----------------------------------------------------- */
tw_tensor *tw_softmax(tw_tensor *logits, int axis);
tw_tensor *tw_log_softmax(tw_tensor *logits, int axis);
/* Per-example loss over the last axis, numerically stable:
 * dense labels: same shape as logits (rows of probabilities);
 * sparse labels: int32/int64 class indices, shape logits.shape[:-1]. */
tw_tensor *tw_softmax_cross_entropy(tw_tensor *logits, tw_tensor *labels);
tw_tensor *tw_sparse_softmax_cross_entropy(tw_tensor *logits, tw_tensor *labels);

typedef enum { TW_PADDING_VALID, TW_PADDING_SAME } tw_padding;
typedef struct {
    int stride_h, stride_w;     /* 0 is read as 1 */
    int dilation_h, dilation_w; /* 0 is read as 1 */
    tw_padding padding;
} tw_conv2d_params;
/* input NHWC (batch, height, width, channels); filter HWIO
 * (kernel_h, kernel_w, in_channels, out_channels), as TensorFlow. */
tw_tensor *tw_conv2d(tw_tensor *input, tw_tensor *filter, const tw_conv2d_params *params);

typedef struct {
    int pool_h, pool_w;
    int stride_h, stride_w; /* 0 is read as the pool size (Keras' default) */
    tw_padding padding;
} tw_pool2d_params;
tw_tensor *tw_max_pool2d(tw_tensor *input, const tw_pool2d_params *params);
tw_tensor *tw_avg_pool2d(tw_tensor *input, const tw_pool2d_params *params);

/* Transposed convolution (Keras' Conv2DTranspose, tf.nn.conv2d_transpose):
 * the input gradient of tw_conv2d run forwards. input (batch, h, w, in);
 * filter (kernel_h, kernel_w, out_channels, in) as Keras stores it; output
 * (batch, out_h, out_w, out_channels), where conv2d with params maps an
 * out_h x out_w image back to h x w (else an error names the shapes). */
tw_tensor *tw_conv2d_transpose(tw_tensor *input, tw_tensor *filter, int64_t out_h, int64_t out_w,
                               const tw_conv2d_params *params);
/* Depthwise convolution (tf.nn.depthwise_conv2d): input NHWC; filter
 * (kernel_h, kernel_w, in_channels, multiplier); output channel
 * c * multiplier + m is input channel c convolved with filter[..., c, m]. */
tw_tensor *tw_depthwise_conv2d(tw_tensor *input, tw_tensor *filter, const tw_conv2d_params *params);

/* Resize images (batch, height, width, channels) to (batch, height', width',
 * channels) as TensorFlow 2's tf.image.resize without antialiasing:
 * half-pixel centres, align_corners false. */
typedef enum { TW_RESIZE_BILINEAR, TW_RESIZE_NEAREST } tw_resize_method;
tw_tensor *tw_resize(tw_tensor *images, int64_t height, int64_t width, tw_resize_method method);

typedef struct tw_rng tw_rng;
/* Inverted dropout: zero each element with probability rate, scale the rest
 * by 1 / (1 - rate). Draws from rng, so a seed makes it reproducible. */
tw_tensor *tw_dropout(tw_tensor *x, double rate, tw_rng *rng);
/* Mean and (population) variance over axes, what batch normalization needs. */
int tw_moments(tw_tensor *x, int naxes, const int *axes, bool keepdims, tw_tensor **mean, tw_tensor **variance);
/* Batch normalization in training mode, one fused op, the features on the
 * last axis of x (float32 or float64): with mean and the biased variance
 * over every other axis, y = (x - mean) / sqrt(variance + epsilon) * gamma
 * + beta. gamma and beta have shape (C,) for C features (pass ones and
 * zeros for none). Sets y, and mean and inv_std = 1 / sqrt(variance +
 * epsilon) of shape (C,); all three differentiable. Returns 0, or -1 with
 * the error set (and NULLs). */
int tw_batch_norm(tw_tensor *x, tw_tensor *gamma, tw_tensor *beta, double epsilon, tw_tensor **y, tw_tensor **mean,
                  tw_tensor **inv_std);
/* t * clip_norm / max(||t||_2, clip_norm). */
tw_tensor *tw_clip_by_norm(tw_tensor *t, double clip_norm);
/* Scale all n tensors by clip_norm / max(global_norm, clip_norm); outs gets n
 * tensors, *global_norm (may be NULL) the norm before clipping. */
int tw_clip_by_global_norm(int n, tw_tensor *const *tensors, double clip_norm, tw_tensor **outs, tw_tensor **global_norm);

/* Projective transform of NHWC images (TensorFlow's ImageProjectiveTransformV3,
 * under Keras' RandomRotation, RandomZoom and RandomTranslation): output pixel
 * (x, y) of image n samples the input at ((t0 x + t1 y + t2) / k,
 * (t3 x + t4 y + t5) / k), k = t6 x + t7 y + 1, with t = transforms[n], a
 * (batch, 8) tensor of the images' float dtype. fill_mode says what points
 * outside read: reflect (d c b a | a b c d | d c b a), wrap, constant
 * (fill_value) or nearest (the edge). Differentiable in the images (the
 * adjoint sampling), not in the transforms. */
typedef enum { TW_IMAGE_NEAREST, TW_IMAGE_BILINEAR } tw_image_interpolation;
typedef enum { TW_FILL_REFLECT, TW_FILL_WRAP, TW_FILL_CONSTANT, TW_FILL_NEAREST } tw_fill_mode;
tw_tensor *tw_image_transform(tw_tensor *images, tw_tensor *transforms, int64_t out_h, int64_t out_w,
                              tw_image_interpolation interpolation, tw_fill_mode fill_mode, double fill_value);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
