/* Lambda and TFOpLambda: layers whose computation is Python code saved in
 * a Keras file (a lambda's bytecode, or a TensorFlow op Keras 2 recorded
 * by name). That code cannot run here and is never guessed: the layer
 * holds its place in the model with the output shape the file declares
 * (Lambda's output_shape, without the batch axis), or an unknown shape
 * (TW_SHAPE_UNKNOWN) where it declares none, so the model opens, counts
 * and summarizes; calling it fails, naming the layer and why. */
#include <string.h>

#include "layer_internal.h"

enum { OUTPUT_SHAPE };

static const tw_param_def params[] = {
    [OUTPUT_SHAPE] = {"output_shape", TW_PARAM_INTS, "none", -1, 1e12, .nullable = true,
                      .help = "The output shape without the batch axis, as the file declares it"},
};

int tw__declared_shape_infer_n(const tw_layer *self, const tw_shape *inputs, int n, tw_shape *outputs,
                               int *noutputs, tw_weight_spec *w, int *nw)
{
    (void)w;
    (void)n;
    *nw = 0;
    *noutputs = 1;
    const tw_param_value *shape = self->klass->nparams ? tw_layer_param(self, OUTPUT_SHAPE) : NULL;
    if (!shape || shape->is_null) {
        outputs[0] = (tw_shape){TW_SHAPE_UNKNOWN};
        return 0;
    }
    if (shape->n + 1 > TW_MAX_DIMS)
        return TW_LAYER_ERROR(self, "output_shape has %d axes; at most %d", shape->n, TW_MAX_DIMS - 1);
    outputs[0] = (tw_shape){shape->n + 1, {tw_shape_known(&inputs[0]) ? inputs[0].dims[0] : -1}};
    memcpy(outputs[0].dims + 1, shape->ints, sizeof(int64_t) * (size_t)shape->n);
    return 0;
}

static const char *opaque_cannot_run(const tw_layer *self)
{
    return strcmp(self->klass->name, "Lambda")
               ? "runs Python code saved in the Keras file (a TensorFlow op recorded by name), which cannot run "
                 "here; the model can be summarized but not run or trained"
               : "runs Python code saved in the Keras file (a lambda), which cannot run here; the model can be "
                 "summarized but not run or trained";
}

static int opaque_call_n(tw_layer *self, tw_tensor *const *inputs, int n, tw_tensor **outputs,
                         const tw_call_context *ctx)
{
    (void)inputs;
    (void)n;
    (void)outputs;
    (void)ctx;
    return TW_LAYER_ERROR(self, "%s", opaque_cannot_run(self));
}

const tw_layer_class tw_layer_class_Lambda = {
    .name = "Lambda",
    .group = "Core",
    .summary = "Python code from a Keras file: keeps its place and shape, cannot run",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer_n = tw__declared_shape_infer_n,
    .call_n = opaque_call_n,
    .cannot_run = opaque_cannot_run,
    .takes_unknown_shapes = true,
};

const tw_layer_class tw_layer_class_TFOpLambda = {
    .name = "TFOpLambda",
    .group = "Core",
    .summary = "A TensorFlow op recorded by Keras 2: keeps its place, cannot run",
    .infer_n = tw__declared_shape_infer_n,
    .call_n = opaque_call_n,
    .cannot_run = opaque_cannot_run,
    .takes_unknown_shapes = true,
};
