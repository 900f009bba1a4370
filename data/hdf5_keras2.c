/* Keras 2's HDF5 model files (keras.saving.legacy.hdf5_format): attributes
 * model_config, keras_version and backend at the root; model_weights/ with
 * the attribute layer_names; one group per layer with the attribute
 * weight_names and its datasets at <layer>/<weight name>. save_weights
 * files hold the same layout at their root. Keras loads by position: the
 * n-th layer of the file that has weights goes to the n-th layer of the
 * model that has weights, its weights in the order of weight_names. */
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdf5_file.h"
#include "hdf5_keras_layers.h"
#include "keras_archive.h"
#include "tw/error.h"

char *tw__h5_model_config(hid_t file, const char *name)
{
    if (!tw__h5_has_attr(file, "model_config")) {
        if (tw__h5_has_attr(file, "layer_names") || tw__h5_has_attr(file, "layer_names0"))
            tw_error_set("%s: holds weights only (Keras' save_weights), no model; open the model's own file and "
                         "load these weights into it",
                         name);
        else
            tw_error_set("%s: an HDF5 file without Keras' model_config attribute: not a Keras .h5 model", name);
        return NULL;
    }
    return tw__h5_attr_string(file, "model_config", name);
}

typedef struct {
    char *layer;       /* the file's layer name */
    char **weights;    /* its weight_names */
} file_layer;

static void file_layers_free(file_layer *layers, int n)
{
    for (int i = 0; i < n; i++) {
        g_free(layers[i].layer);
        g_strfreev(layers[i].weights);
    }
    g_free(layers);
}

/* The file's layers that hold weights, in layer_names order. */
static file_layer *read_file_layers(hid_t group, const char *name, int *count)
{
    char **names = tw__h5_attr_strings(group, "layer_names", name);
    if (!names)
        return NULL;
    int n = (int)g_strv_length(names), kept = 0;
    file_layer *layers = g_new0(file_layer, n ? n : 1);
    for (int i = 0; i < n; i++) {
        char where[600];
        snprintf(where, sizeof where, "%s: layer '%s'", name, names[i]);
        if (!tw__h5_has_link(group, names[i])) {
            tw_error_set("%s: layer_names lists '%s' but the file has no such group", name, names[i]);
            goto fail;
        }
        tw__h5_lock();
        hid_t g = H5Gopen2(group, names[i], H5P_DEFAULT);
        tw__h5_unlock();
        if (g < 0) {
            tw__h5_fail(where, "not a group");
            goto fail;
        }
        char **weights = tw__h5_attr_strings(g, "weight_names", where);
        tw__h5_lock();
        H5Gclose(g);
        tw__h5_unlock();
        if (!weights)
            goto fail;
        if (!weights[0]) {
            g_strfreev(weights);
            continue;
        }
        layers[kept].layer = g_strdup(names[i]);
        layers[kept++].weights = weights;
    }
    g_strfreev(names);
    *count = kept;
    return layers;
fail:
    g_strfreev(names);
    file_layers_free(layers, kept);
    return NULL;
}

int tw__keras2_apply_weights(tw_model *model, hid_t group, size_t cap, const char *name)
{
    int nfile = 0;
    file_layer *file = read_file_layers(group, name, &nfile);
    if (!file)
        return -1;
    GPtrArray *all = tw__keras2_layers(model);
    if (!all) {
        file_layers_free(file, nfile);
        return tw_error_set("%s: %s", name, tw_last_error());
    }
    GPtrArray *model_layers = g_ptr_array_new();
    for (guint i = 0; i < all->len; i++)
        if (((tw_keras_layer *)all->pdata[i])->weights->len)
            g_ptr_array_add(model_layers, all->pdata[i]);
    GPtrArray *values = g_ptr_array_new_with_free_func((GDestroyNotify)tw_tensor_unref);
    GPtrArray *targets = g_ptr_array_new();
    int rc = 0;
    if ((int)model_layers->len != nfile)
        rc = tw_error_set("%s: the file holds weights for %d layers, the model has %u layers with weights", name, nfile,
                          model_layers->len);
    for (int i = 0; i < nfile && !rc; i++) {
        tw_keras_layer *l = model_layers->pdata[i];
        int nw = (int)g_strv_length(file[i].weights);
        if (nw != (int)l->weights->len) {
            rc = tw_error_set("%s: layer '%s' (the file's '%s') has %u weights, the file holds %d", name,
                              tw_layer_name(l->layer), file[i].layer, l->weights->len, nw);
            break;
        }
        for (int k = 0; k < nw && !rc; k++) {
            char *path = g_strdup_printf("%s/%s", file[i].layer, file[i].weights[k]);
            tw_tensor *value = tw__h5_read_tensor(group, path, cap, name);
            tw_keras_weight *w = &g_array_index(l->weights, tw_keras_weight, k);
            if (!value || tw__keras_check(w, value, name)) {
                tw_tensor_unref(value);
                rc = -1;
            } else {
                g_ptr_array_add(values, value);
                g_ptr_array_add(targets, w);
            }
            g_free(path);
        }
    }
    /* Everything fits: now assign. */
    for (guint i = 0; i < values->len && !rc; i++)
        rc = tw__keras_assign(targets->pdata[i], values->pdata[i], name);
    g_ptr_array_unref(targets);
    g_ptr_array_unref(values);
    g_ptr_array_unref(model_layers);
    g_ptr_array_unref(all);
    file_layers_free(file, nfile);
    return rc;
}

/* The keras_version our JSON writer claims (one source: its output). */
static char *keras_version_of(const char *json)
{
    JsonParser *parser = json_parser_new_immutable();
    char *version = NULL;
    if (json_parser_load_from_data(parser, json, -1, NULL) && JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser))) {
        JsonObject *obj = json_node_get_object(json_parser_get_root(parser));
        if (json_object_has_member(obj, "keras_version"))
            version = g_strdup(json_object_get_string_member(obj, "keras_version"));
    }
    g_object_unref(parser);
    return version ? version : g_strdup("2");
}

static int write_layer(hid_t weights, tw_keras_layer *l, const char *name)
{
    const char *layer = tw_layer_name(l->layer);
    hid_t g = tw__h5_group(weights, layer, name);
    if (g < 0)
        return -1;
    int n = (int)l->weights->len, rc = 0;
    char **names = g_new0(char *, n + 1);
    for (int k = 0; k < n && !rc; k++) {
        tw_keras_weight *w = &g_array_index(l->weights, tw_keras_weight, k);
        /* A variable's name in TF Keras: "<its layer>/<weight>:0". */
        names[k] = g_strdup_printf("%s:0", w->path);
        rc = tw__h5_write_tensor(g, names[k], w->variable, name);
    }
    if (!rc)
        rc = tw__h5_set_attr_strings(g, "weight_names", n, (const char *const *)names, name);
    g_strfreev(names);
    tw__h5_lock();
    H5Gclose(g);
    tw__h5_unlock();
    return rc;
}

uint8_t *tw__keras2_h5_bytes(tw_model *model, const char *json, const char *name, size_t *size)
{
    GPtrArray *layers = tw__keras2_layers(model);
    if (!layers) {
        tw_error_set("%s: %s", name, tw_last_error());
        return NULL;
    }
    hid_t file = tw__h5_create_image(name);
    if (file < 0) {
        g_ptr_array_unref(layers);
        return NULL;
    }
    char *version = keras_version_of(json);
    int rc = tw__h5_set_attr_string(file, "keras_version", version, name) ||
             tw__h5_set_attr_string(file, "backend", "tensorflow", name) ||
             tw__h5_set_attr_string(file, "model_config", json, name);
    hid_t weights = rc ? H5I_INVALID_HID : tw__h5_group(file, "model_weights", name);
    rc = rc || weights < 0;
    const char **layer_names = g_new0(const char *, layers->len + 1);
    for (guint i = 0; i < layers->len && !rc; i++) {
        tw_keras_layer *l = layers->pdata[i];
        layer_names[i] = tw_layer_name(l->layer);
        rc = write_layer(weights, l, name);
    }
    if (!rc)
        rc = tw__h5_set_attr_strings(weights, "layer_names", (int)layers->len, layer_names, name) ||
             tw__h5_set_attr_string(weights, "keras_version", version, name) ||
             tw__h5_set_attr_string(weights, "backend", "tensorflow", name);
    uint8_t *bytes = rc ? NULL : tw__h5_image_bytes(file, name, size);
    tw__h5_lock();
    if (weights >= 0)
        H5Gclose(weights);
    H5Fclose(file);
    tw__h5_unlock();
    g_free(layer_names);
    g_free(version);
    g_ptr_array_unref(layers);
    return bytes;
}
