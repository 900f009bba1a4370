/* Output lengths of transposed convolutions (see transposed_window.h). */
#include <stdio.h>
#include <string.h>

#include "transposed_window.h"

/* Keras' deconv_output_length with the dilated kernel; output_padding -1
 * is None. */
static int64_t transposed_length(int64_t in, int64_t k, int64_t stride, bool same, int64_t output_padding)
{
    if (output_padding < 0)
        return same ? in * stride : in * stride + (k > stride ? k - stride : 0);
    int64_t pad = same ? k / 2 : 0;
    return (in - 1) * stride + k - 2 * pad + output_padding;
}

/* The forward convolution's output length for an input of length n. */
static int64_t conv_length(int64_t n, int64_t k, int64_t stride, bool same)
{
    if (same)
        return (n + stride - 1) / stride;
    return n < k ? 0 : (n - k) / stride + 1;
}

int tw__check_output_padding(const tw_layer *self, const tw__window *w, const tw_param_value *output_padding)
{
    if (output_padding->is_null)
        return 0;
    for (int i = 0; i < w->rank; i++)
        if (output_padding->ints[i] >= w->stride[i])
            return TW_LAYER_ERROR(self, "output_padding %lld must be less than the stride %lld (axis %d)",
                                  (long long)output_padding->ints[i], (long long)w->stride[i], i + 1);
    return 0;
}

int tw__transposed_output(const tw_layer *self, const tw__window *w, const tw_param_value *output_padding,
                          const tw_shape *input, tw_shape *output)
{
    static const char *const layouts[] = {"", "(batch, steps, channels)", "(batch, height, width, channels)"};
    static const char *const axes[][2] = {{""}, {"length"}, {"height", "width"}};
    char in[128];
    tw_shape_format(input, in, sizeof in);
    if (input->ndim != w->rank + 2)
        return TW_LAYER_ERROR(self, "expected input of rank %d %s, got %s", w->rank + 2, layouts[w->rank], in);
    if (input->dims[input->ndim - 1] < 1)
        return TW_LAYER_ERROR(self, "the channels (last) dimension of input %s must be known", in);
    *output = *input;
    bool same = !strcmp(w->padding, "same");
    for (int i = 0; i < w->rank; i++) {
        int64_t n = input->dims[1 + i];
        if (n < 0)
            continue; /* unknown stays unknown */
        int64_t k = (w->size[i] - 1) * w->dilation[i] + 1;
        int64_t op = output_padding->is_null ? -1 : output_padding->ints[i];
        int64_t len = transposed_length(n, k, w->stride[i], same, op);
        if (len < 1 || conv_length(len, k, w->stride[i], same) != n) {
            char opad[32] = "None";
            if (op >= 0)
                snprintf(opad, sizeof opad, "%lld", (long long)op);
            return TW_LAYER_ERROR(self, "input %s gives an output %s of %lld (kernel %lld, stride %lld, padding %s, "
                                        "output_padding %s), which a convolution does not map back to %lld",
                                  in, axes[w->rank][i], (long long)len, (long long)k, (long long)w->stride[i],
                                  w->padding, opad, (long long)n);
        }
        output->dims[1 + i] = len;
    }
    return 0;
}
