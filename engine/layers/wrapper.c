/* tw_layer_wrap and what Bidirectional and TimeDistributed share (wrapper.h). */
#include <stdio.h>
#include <string.h>

#include "model/model_internal.h"
#include "wrapper.h"

extern const tw_layer_class tw_layer_class_Bidirectional, tw_layer_class_TimeDistributed;

bool wrapper_is_wrapper(const tw_layer *layer)
{
    return layer->klass->infer_wrapped || layer->klass->infer_wrapped_n;
}

int wrapper_check_wrap(const tw_layer *wrapper, const tw_layer *layer)
{
    if (!wrapper)
        return tw_error_set("layer wrap: the wrapper is NULL");
    if (!wrapper_is_wrapper(wrapper))
        return TW_LAYER_ERROR(wrapper, "does not wrap layers (Bidirectional and TimeDistributed do)");
    if (!layer) /* keep the message of what made the NULL */
        return tw_error_pending() ? -1 : TW_LAYER_ERROR(wrapper, "the layer to wrap is NULL");
    if (wrapper->built)
        return TW_LAYER_ERROR(wrapper, "cannot change the layer inside after it is built");
    return 0;
}

int wrapper_adopt(const tw_layer *wrapper, tw_layer *layer, const char *prefix)
{
    char base[64], name[128];
    if (layer->name[0])
        snprintf(base, sizeof base, "%s", layer->name);
    else
        tw__snake_case(layer->klass->name, base, sizeof base);
    size_t n = strlen(prefix);
    snprintf(name, sizeof name, "%s%s", prefix, strncmp(base, prefix, n) ? base : base + n);
    if (strlen(name) >= sizeof layer->name)
        return TW_LAYER_ERROR(wrapper, "the inner layer's name \"%s\" is longer than %zu characters", name,
                              sizeof layer->name - 1);
    snprintf(layer->name, sizeof layer->name, "%s", name);
    if (tw_layer_set_dtype(layer, wrapper->dtype))
        return -1;
    return wrapper->trainable ? 0 : tw_layer_set_trainable(layer, false);
}

int wrapper_default_layer(tw_layer *wrapper, const char *class_name)
{
    return wrapper->nchildren ? 0 : tw_layer_wrap(wrapper, tw_layer_new(class_name, NULL));
}

int tw_layer_wrap(tw_layer *wrapper, tw_layer *layer)
{
    if (wrapper_check_wrap(wrapper, layer)) {
        tw_layer_unref(layer);
        return -1;
    }
    if (wrapper->klass == &tw_layer_class_Bidirectional)
        return tw__bidirectional_wrap(wrapper, layer);
    if (wrapper->klass == &tw_layer_class_TimeDistributed)
        return tw__time_distributed_wrap(wrapper, layer);
    tw_layer_unref(layer);
    return TW_LAYER_ERROR(wrapper, "is a class of its own; tw_layer_wrap knows Bidirectional and TimeDistributed");
}

void wrapper_set_child(tw_layer *wrapper, int index, tw_layer *layer)
{
    if (index < wrapper->nchildren) {
        tw_layer_unref(wrapper->children[index]);
        wrapper->children[index] = layer;
    } else {
        tw__layer_insert_child(wrapper, wrapper->nchildren, layer);
    }
}

tw_layer *tw_layer_inner(const tw_layer *wrapper, int index)
{
    if (!wrapper || !wrapper_is_wrapper(wrapper) || index < 0 || index >= wrapper->nchildren)
        return NULL;
    return wrapper->children[index];
}
