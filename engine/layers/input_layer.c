/* InputLayer: declares the model's input shape (batch_input_shape, held by
 * every layer, see tw_layer_set_input_shape) and dtype; passes x through. */
#include "layer_internal.h"

/* "string": Keras models of text take it (StringLookup follows); the engine
 * has no string tensors, so such a model opens and summarizes but cannot be
 * fed yet. */
static const char *const dtypes[] = {"float32", "float64", "int32", "int64", "string", NULL};

static const tw_param_def params[] = {
    {"dtype", TW_PARAM_CHOICE, "float32", .choices = dtypes, .help = "The type of the input values"},
};

static int input_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    char a[96], b[96];
    const tw_shape *declared = tw_layer_input_shape(self);
    if (declared) {
        bool ok = declared->ndim == input->ndim;
        for (int i = 1; ok && i < input->ndim; i++)
            ok = declared->dims[i] < 0 || declared->dims[i] == input->dims[i];
        if (!ok)
            return TW_LAYER_ERROR(self, "declares input %s but receives %s", tw_shape_format(declared, a, sizeof a),
                                  tw_shape_format(input, b, sizeof b));
    }
    *output = *input;
    *nw = 0;
    return 0;
}

static tw_tensor *input_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    return tw_activation_apply("linear", x);
}

const tw_layer_class tw_layer_class_InputLayer = {
    .name = "InputLayer",
    .group = "Core",
    .summary = "The model's input: its shape and dtype",
    .params = params,
    .nparams = 1,
    .infer = input_infer,
    .call = input_call,
};
