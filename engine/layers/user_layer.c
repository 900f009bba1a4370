/* UserLayer: a layer of a class the engine does not know, a user's Python
 * class in a Keras file (Keras 3's module and registered_name from
 * register_keras_serializable, Keras 2's "Package>Class" class_name), or a
 * Keras class not implemented here. Its code is not in the file, so, as
 * Lambda (lambda.c), it holds its place with the output shape the file
 * records ("output_shape", which the Functional reader sets from the
 * layers it feeds) or an unknown one; its parameters are made by that
 * code, so their count is unknown unless a weights file gives it (the
 * Keras 3 reader sets it); calling it fails naming its class. What the
 * file says of it is kept verbatim to be written back. */
#include <stdlib.h>
#include <string.h>

#include "layer_internal.h"

enum { OUTPUT_SHAPE };

static const tw_param_def params[] = {
    [OUTPUT_SHAPE] = {"output_shape", TW_PARAM_INTS, "none", -1, 1e12, .nullable = true,
                      .help = "The output shape without the batch axis, as the file records it"},
};

typedef struct {
    tw_user_class keras; /* pointers to the copies below */
    char *class_name, *module, *registered_name, *config, *build_config, *why;
    bool counted; /* a weights file gave the counts */
    int64_t trainable, non_trainable;
} user_state;

static const char *user_cannot_run(const tw_layer *self)
{
    return ((const user_state *)self->state)->why;
}

static int user_call_n(tw_layer *self, tw_tensor *const *inputs, int n, tw_tensor **outputs,
                       const tw_call_context *ctx)
{
    (void)inputs;
    (void)n;
    (void)outputs;
    (void)ctx;
    return TW_LAYER_ERROR(self, "%s", user_cannot_run(self));
}

/* Its weights are made by its Python code: their count is not known
 * unless a weights file gave it. */
static int user_count_params(const tw_layer *self, int64_t *trainable, int64_t *non_trainable)
{
    const user_state *st = self->state;
    *trainable = st->counted ? st->trainable : 0;
    *non_trainable = st->counted ? st->non_trainable : 0;
    return st->counted ? 0 : 1;
}

static void user_finalize(tw_layer *self)
{
    user_state *st = self->state;
    free(st->class_name);
    free(st->module);
    free(st->registered_name);
    free(st->config);
    free(st->build_config);
    free(st->why);
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void set_keras(tw_layer *layer, const tw_user_class *keras)
{
    user_state *st = layer->state;
    st->class_name = strdup(keras->class_name);
    st->module = dup_or_null(keras->module);
    st->registered_name = dup_or_null(keras->registered_name);
    st->config = strdup(keras->config ? keras->config : "{}");
    st->build_config = dup_or_null(keras->build_config);
    st->why = strdup(keras->why ? keras->why : "a class Tensor Workbench does not know");
    st->keras = (tw_user_class){st->class_name, st->module, st->registered_name, st->config, st->build_config, st->why};
}

static int user_clone_extra(tw_layer *copy, const tw_layer *layer)
{
    const user_state *from = layer->state;
    user_state *to = copy->state;
    set_keras(copy, &from->keras);
    to->counted = from->counted;
    to->trainable = from->trainable;
    to->non_trainable = from->non_trainable;
    return 0;
}

const tw_layer_class tw__layer_class_UserLayer = {
    .name = "UserLayer",
    .group = "Core",
    .summary = "A class from a Keras file the engine does not know: keeps its place and config, cannot run",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .state_size = sizeof(user_state),
    .infer_n = tw__declared_shape_infer_n,
    .call_n = user_call_n,
    .count_params = user_count_params,
    .finalize = user_finalize,
    .clone_extra = user_clone_extra,
    .cannot_run = user_cannot_run,
    .takes_unknown_shapes = true,
};

tw_layer *tw_user_layer_new(const char *name, const tw_user_class *keras)
{
    if (!keras || !keras->class_name) {
        tw_error_set("user layer: the class_name is missing");
        return NULL;
    }
    tw_layer *layer = tw__layer_new_of(&tw__layer_class_UserLayer, name);
    if (layer)
        set_keras(layer, keras);
    return layer;
}

const tw_user_class *tw_user_layer_keras(const tw_layer *layer)
{
    return layer && layer->klass == &tw__layer_class_UserLayer ? &((const user_state *)layer->state)->keras : NULL;
}

const char *tw_user_layer_python_class(const tw_layer *layer)
{
    const tw_user_class *keras = tw_user_layer_keras(layer);
    const char *package_end = keras ? strrchr(keras->class_name, '>') : NULL;
    return package_end ? package_end + 1 : keras ? keras->class_name : NULL;
}

int tw_user_layer_set_param_count(tw_layer *layer, int64_t trainable, int64_t non_trainable)
{
    if (!tw_user_layer_keras(layer))
        return tw_error_set("user layer: %s is not a layer of a class the engine does not know",
                            layer ? tw_layer_name(layer) : "NULL");
    if (trainable < 0 || non_trainable < 0)
        return TW_LAYER_ERROR(layer, "a parameter count cannot be negative");
    user_state *st = layer->state;
    st->counted = true;
    st->trainable = trainable;
    st->non_trainable = non_trainable;
    return 0;
}

const char *tw_layer_class_shown(const tw_layer *layer)
{
    const char *python_class = tw_user_layer_python_class(layer);
    return python_class ? python_class : layer->klass->name;
}
