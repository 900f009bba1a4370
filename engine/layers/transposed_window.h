/* What Conv2DTranspose and Conv1DTranspose share: Keras' output length of a
 * transposed convolution (deconv_output_length), the input checks with their
 * messages, and the runtime sizes for the engine's tw_conv2d_transpose. Not
 * installed. */
#ifndef TW_TRANSPOSED_WINDOW_H
#define TW_TRANSPOSED_WINDOW_H

#include "sliding_window.h"

/* Output shape for an input (batch, spatial..., channels), the channels
 * still the input's; output_padding is the layer's param (None or one
 * amount per axis). Fails naming the layer when the rank is wrong, the
 * channels are unknown, or an axis comes out empty or of a length the
 * forward convolution would not map back to the input's (an even kernel
 * with padding same and output_padding 0 at stride 2, which TensorFlow
 * refuses too). */
int tw__transposed_output(const tw_layer *self, const tw__window *w, const tw_param_value *output_padding,
                          const tw_shape *input, tw_shape *output);

/* configure's check: each output_padding below its stride (Keras' rule). */
int tw__check_output_padding(const tw_layer *self, const tw__window *w, const tw_param_value *output_padding);

/* The parameters the two share, under the enum names each file defines:
 * Conv2D's and Conv1D's tail, and output_padding of the window's rank. */
#define TW_OUTPUT_PADDING_PARAM(len, example)                                                                  \
    [OUTPUT_PADDING] = {"output_padding", TW_PARAM_INTS, "", 0, 1e9, .length = len, .nullable = true,          \
                        .help = "Extra rows/columns at the end of the output, below the stride (None: Keras' " \
                                "default length); e.g. " example}

#endif
