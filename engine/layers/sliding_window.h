/* What the convolution and pooling layers share: the geometry of a window
 * sliding over 1 or 2 spatial axes of a channels_last input, Keras' output
 * length arithmetic, the input checks with their messages, and the
 * channels_last-only rule for data_format. Not installed. */
#ifndef TW_SLIDING_WINDOW_H
#define TW_SLIDING_WINDOW_H

#include "layer_internal.h"

typedef struct {
    const char *what; /* "kernel" or "pool", for messages */
    int rank;         /* spatial axes: 1 (steps) or 2 (height, width) */
    int64_t size[2], stride[2], dilation[2];
    const char *padding; /* "valid", "same" or "causal" */
} tw__window;

/* The window from a layer's INTS params; strides None (index of a nullable
 * param) means the window's size, Keras' pooling default; dilation index -1
 * means none. */
tw__window tw__window_from_params(const tw_layer *self, const char *what, int rank, int size, int strides,
                                  int dilation, int padding);

/* Output shape for an input (batch, spatial..., channels): each spatial size
 * as Keras' conv_output_length computes it (unknown stays unknown), the
 * channels unchanged. Fails naming the layer and the input when the rank is
 * wrong, the channels are unknown or a VALID window does not fit:
 * "Conv2D 'conv2d': kernel 5x5 does not fit input (None, 3, 3, 1) with
 * padding valid". */
int tw__window_output(const tw_layer *self, const tw__window *w, const tw_shape *input, tw_shape *output);

/* The engine's 2-D op params for the window; a 1-D window runs as 1 x n
 * over a (batch, 1, steps, channels) view. Causal padding is the caller's
 * left pad followed by a VALID window. */
tw_conv2d_params tw__window_conv_params(const tw__window *w);
tw_pool2d_params tw__window_pool_params(const tw__window *w);

/* configure's check: only channels_last (or None, which means it) computes. */
int tw__check_channels_last(const tw_layer *self, int data_format);
/* Conv1D/Conv2D configure: groups must be 1 and the layout channels_last. */
int tw__check_conv_config(const tw_layer *self, int groups, int data_format);

/* The parameters Conv1D and Conv2D share after their window parameters,
 * under the enum names each file defines. */
#define TW_CONV_TAIL_PARAMS                                                                                 \
    [GROUPS] = {"groups", TW_PARAM_INT, "1", 1, 1e9, .help = "Channel groups; only 1 is supported"},           \
    [ACTIVATION] = {"activation", TW_PARAM_CHOICE, "linear", .choices = tw_activation_names,                \
                    .help = "Applied to the output"},                                                       \
    [USE_BIAS] = {"use_bias", TW_PARAM_BOOL, "true", .help = "Add a learned bias per filter"},              \
    [KERNEL_INIT] = {"kernel_initializer", TW_PARAM_CHOICE, "glorot_uniform", .choices = tw_initializer_names, \
                     .help = "How the kernel starts"},                                                      \
    [BIAS_INIT] = {"bias_initializer", TW_PARAM_CHOICE, "zeros", .choices = tw_initializer_names,           \
                   .help = "How the bias starts"},                                                          \
    [KERNEL_REG] = {"kernel_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on the kernel"},    \
    [BIAS_REG] = {"bias_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on the bias"}

/* The choices of a data_format param. */
extern const char *const tw__data_formats[];

#endif
