/* Window geometry shared by the convolution and pooling layers (see
 * sliding_window.h). */
#include <stdio.h>
#include <string.h>

#include "sliding_window.h"

const char *const tw__data_formats[] = {"channels_last", "channels_first", NULL};

tw__window tw__window_from_params(const tw_layer *self, const char *what, int rank, int size, int strides,
                                  int dilation, int padding)
{
    tw__window w = {.what = what, .rank = rank, .padding = tw__param_choice(self, padding)};
    const tw_param_value *k = tw_layer_param(self, size), *s = tw_layer_param(self, strides);
    for (int i = 0; i < rank; i++) {
        w.size[i] = k->ints[i];
        w.stride[i] = s->is_null ? k->ints[i] : s->ints[i];
        w.dilation[i] = dilation < 0 ? 1 : tw_layer_param(self, dilation)->ints[i];
    }
    return w;
}

/* "5x5" or "5". */
static const char *format_sizes(int rank, const int64_t *v, char *buf, size_t size)
{
    if (rank == 1)
        snprintf(buf, size, "%lld", (long long)v[0]);
    else
        snprintf(buf, size, "%lldx%lld", (long long)v[0], (long long)v[1]);
    return buf;
}

static int does_not_fit(const tw_layer *self, const tw__window *w, const tw_shape *input)
{
    char k[48], d[48], in[128];
    format_sizes(w->rank, w->size, k, sizeof k);
    tw_shape_format(input, in, sizeof in);
    bool dilated = w->dilation[0] > 1 || (w->rank > 1 && w->dilation[1] > 1);
    if (dilated)
        return TW_LAYER_ERROR(self, "%s %s with dilation_rate %s does not fit input %s with padding %s", w->what, k,
                              format_sizes(w->rank, w->dilation, d, sizeof d), in, w->padding);
    return TW_LAYER_ERROR(self, "%s %s does not fit input %s with padding %s", w->what, k, in, w->padding);
}

int tw__window_output(const tw_layer *self, const tw__window *w, const tw_shape *input, tw_shape *output)
{
    static const char *const layouts[] = {"", "(batch, steps, channels)", "(batch, height, width, channels)"};
    char in[128];
    if (input->ndim != w->rank + 2)
        return TW_LAYER_ERROR(self, "expected input of rank %d %s, got %s", w->rank + 2, layouts[w->rank],
                              tw_shape_format(input, in, sizeof in));
    if (input->dims[input->ndim - 1] < 1)
        return TW_LAYER_ERROR(self, "the channels (last) dimension of input %s must be known",
                              tw_shape_format(input, in, sizeof in));
    *output = *input;
    bool valid = !strcmp(w->padding, "valid");
    for (int i = 0; i < w->rank; i++) {
        int64_t n = input->dims[1 + i];
        if (n < 0)
            continue; /* an unknown length (a sequence of any length) stays unknown */
        /* SAME and causal keep the length before striding; VALID loses the
         * dilated window's extent minus one. */
        if (valid) {
            n -= (w->size[i] - 1) * w->dilation[i];
            if (n < 1)
                return does_not_fit(self, w, input);
        }
        output->dims[1 + i] = (n + w->stride[i] - 1) / w->stride[i];
    }
    return 0;
}

tw_conv2d_params tw__window_conv_params(const tw__window *w)
{
    tw_padding padding = !strcmp(w->padding, "same") ? TW_PADDING_SAME : TW_PADDING_VALID;
    if (w->rank == 1)
        return (tw_conv2d_params){1, (int)w->stride[0], 1, (int)w->dilation[0], padding};
    return (tw_conv2d_params){(int)w->stride[0], (int)w->stride[1], (int)w->dilation[0], (int)w->dilation[1], padding};
}

tw_pool2d_params tw__window_pool_params(const tw__window *w)
{
    tw_padding padding = !strcmp(w->padding, "same") ? TW_PADDING_SAME : TW_PADDING_VALID;
    if (w->rank == 1)
        return (tw_pool2d_params){1, (int)w->size[0], 1, (int)w->stride[0], padding};
    return (tw_pool2d_params){(int)w->size[0], (int)w->size[1], (int)w->stride[0], (int)w->stride[1], padding};
}

int tw__check_channels_last(const tw_layer *self, int data_format)
{
    const tw_param_value *v = tw_layer_param(self, data_format);
    if (!v->is_null && strcmp(v->choice, "channels_last"))
        return TW_LAYER_ERROR(self, "data_format %s is not supported; only channels_last (channels as the last "
                                    "axis) is",
                              v->choice);
    return 0;
}

int tw__check_conv_config(const tw_layer *self, int groups, int data_format)
{
    if (tw__param_int(self, groups) != 1)
        return TW_LAYER_ERROR(self, "groups=%lld is not supported; only groups=1 (every filter sees every input "
                                    "channel) is",
                              (long long)tw__param_int(self, groups));
    return tw__check_channels_last(self, data_format);
}
