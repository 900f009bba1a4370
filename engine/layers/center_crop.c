/* CenterCrop: cut the central height x width window out of each image
 * (NHWC, or one HWC image), starting at floor((H - height) / 2) and
 * floor((W - width) / 2) as Keras does. Keras resizes an image smaller than
 * the window up to it instead; that is refused here, naming the sizes.
 * Inputs not in the layer's dtype (uint8 images) are cast first. */
#include "layer_common.h"

enum { HEIGHT, WIDTH, DATA_FORMAT };

static const char *const formats[] = {"channels_last", NULL};

static const tw_param_def params[] = {
    [HEIGHT] = {"height", TW_PARAM_INT, "224", 1, 1e9, .help = "Height of the crop"},
    [WIDTH] = {"width", TW_PARAM_INT, "224", 1, 1e9, .help = "Width of the crop"},
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = formats,
                     .help = "Where the images keep their channels"},
};

static int check_size(const tw_layer *self, const tw_shape *input)
{
    char buf[96];
    if (input->ndim != 3 && input->ndim != 4)
        return TW_LAYER_ERROR(self, "expected images of rank 4 (batch, height, width, channels) or 3, got %s",
                              tw_shape_format(input, buf, sizeof buf));
    int64_t h = input->dims[input->ndim - 3], w = input->dims[input->ndim - 2];
    if ((h >= 0 && h < tw__param_int(self, HEIGHT)) || (w >= 0 && w < tw__param_int(self, WIDTH)))
        return TW_LAYER_ERROR(self, "images %s are smaller than the %lldx%lld crop (Keras would resize them up; "
                              "not supported)", tw_shape_format(input, buf, sizeof buf),
                              (long long)tw__param_int(self, HEIGHT), (long long)tw__param_int(self, WIDTH));
    return 0;
}

static int center_crop_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                             int *nw)
{
    if (check_size(self, input))
        return -1;
    *output = *input;
    output->dims[input->ndim - 3] = tw__param_int(self, HEIGHT);
    output->dims[input->ndim - 2] = tw__param_int(self, WIDTH);
    *nw = 0;
    return 0;
}

static tw_tensor *center_crop_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    (void)ctx;
    tw_shape in = tw__shape_of(x);
    if (check_size(self, &in))
        return NULL;
    if (tw_tensor_dtype(x) != self->dtype)
        x = tw_cast(x, self->dtype);
    int ha = in.ndim - 3, wa = in.ndim - 2;
    int64_t h = tw__param_int(self, HEIGHT), w = tw__param_int(self, WIDTH);
    int64_t top = (in.dims[ha] - h) / 2, left = (in.dims[wa] - w) / 2;
    tw_tensor *y = tw_slice(tw_slice(x, ha, top, top + h, 1), wa, left, left + w, 1);
    return tw_contiguous(y);
}

const tw_layer_class tw_layer_class_CenterCrop = {
    .name = "CenterCrop",
    .group = "Core",
    .summary = "Cut the central window out of each image",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer = center_crop_infer,
    .call = center_crop_call,
};
