/* The convenience constructors of tw/model.h: a layer by class name with a
 * few parameters set, everything else at Keras' defaults. */
#include <stdio.h>

#include "layer_internal.h"

/* A new layer of class_name with n key/value pairs set, or NULL with the
 * first refusal's message. */
static tw_layer *layer_with(const char *class_name, int n, const char *const (*kv)[2])
{
    tw_layer *layer = tw_layer_new(class_name, NULL);
    for (int i = 0; layer && i < n; i++)
        if (kv[i][1] && tw_layer_set(layer, kv[i][0], kv[i][1])) {
            tw_layer_unref(layer);
            return NULL;
        }
    return layer;
}

tw_layer *tw_dense(int64_t units, const char *activation)
{
    char u[32];
    snprintf(u, sizeof u, "%lld", (long long)units);
    return layer_with("Dense", 2, (const char *const[][2]){{"units", u}, {"activation", activation}});
}

tw_layer *tw_conv2d_layer(int64_t filters, int kernel_size, const char *activation)
{
    char f[32], k[32];
    snprintf(f, sizeof f, "%lld", (long long)filters);
    snprintf(k, sizeof k, "%d", kernel_size);
    return layer_with("Conv2D", 3,
                      (const char *const[][2]){{"filters", f}, {"kernel_size", k}, {"activation", activation}});
}

tw_layer *tw_max_pooling2d_layer(int pool_size)
{
    char p[32];
    snprintf(p, sizeof p, "%d", pool_size);
    return layer_with("MaxPooling2D", 1, (const char *const[][2]){{"pool_size", p}});
}

tw_layer *tw_flatten_layer(void)
{
    return tw_layer_new("Flatten", NULL);
}

tw_layer *tw_dropout_layer(double rate)
{
    char r[32];
    snprintf(r, sizeof r, "%.17g", rate);
    return layer_with("Dropout", 1, (const char *const[][2]){{"rate", r}});
}

tw_layer *tw_input_layer(const tw_shape *batch_input_shape)
{
    tw_layer *layer = tw_layer_new("InputLayer", NULL);
    if (layer && tw_layer_set_input_shape(layer, batch_input_shape)) {
        tw_layer_unref(layer);
        return NULL;
    }
    return layer;
}
