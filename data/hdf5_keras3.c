/* Keras 3's weight files (model.weights.h5 inside a .keras archive, and
 * .weights.h5 from save_weights): one group per object at its path
 * (hdf5_keras_layers.c names them), its variables as datasets vars/0,
 * vars/1, ...; optimizer state under optimizer/ (not read). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdf5_file.h"
#include "hdf5_keras_layers.h"
#include "keras_archive.h"
#include "tw/error.h"

static void var_clear(tw_keras3_var *v)
{
    g_free(v->dataset);
    tw__keras_weight_clear(&v->weight);
}

static GArray *var_array(void)
{
    GArray *a = g_array_new(false, true, sizeof(tw_keras3_var));
    g_array_set_clear_func(a, (GDestroyNotify)var_clear);
    return a;
}

/* How many datasets vars/ holds (Keras 3 checks the count too). */
static int count_vars(hid_t file, const char *group)
{
    tw__h5_lock();
    hid_t g = H5Gopen2(file, group, H5P_DEFAULT);
    H5G_info_t info;
    int n = g >= 0 && H5Gget_info(g, &info) >= 0 ? (int)info.nlinks : -1;
    if (g >= 0)
        H5Gclose(g);
    H5Eclear2(H5E_DEFAULT);
    tw__h5_unlock();
    return n;
}

/* The group of a variable's dataset: "layers/dense/vars". */
static char *group_of(const char *dataset)
{
    const char *slash = strrchr(dataset, '/');
    return g_strndup(dataset, (gsize)(slash - dataset));
}

static herr_t add_dataset_size(hid_t obj, const char *path, const H5O_info_t *info, void *data)
{
    if (info->type != H5O_TYPE_DATASET)
        return 0;
    hid_t d = H5Dopen2(obj, path, H5P_DEFAULT);
    hid_t space = d >= 0 ? H5Dget_space(d) : -1;
    hssize_t n = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    if (space >= 0)
        H5Sclose(space);
    if (d >= 0)
        H5Dclose(d);
    if (n < 0)
        return -1;
    *(int64_t *)data += n;
    return 0;
}

/* A layer of a class the engine does not know has its variables saved by
 * its own code under its group: their sizes are its parameter count. */
static int count_user_layers(tw_model *model, hid_t file, const char *name)
{
    GPtrArray *layers = g_ptr_array_new(), *groups = g_ptr_array_new_with_free_func(g_free);
    tw__keras3_user_groups(model, layers, groups);
    int rc = 0;
    for (guint i = 0; i < layers->len && !rc; i++) {
        if (!tw__h5_has_link(file, groups->pdata[i]))
            continue; /* nothing saved: its count stays unknown */
        int64_t total = 0;
        tw__h5_lock();
        hid_t g = H5Gopen2(file, groups->pdata[i], H5P_DEFAULT);
        herr_t visited = g >= 0 ? H5Ovisit2(g, H5_INDEX_NAME, H5_ITER_INC, add_dataset_size, &total, H5O_INFO_BASIC)
                                : -1;
        if (g >= 0)
            H5Gclose(g);
        H5Eclear2(H5E_DEFAULT);
        tw__h5_unlock();
        if (visited < 0)
            rc = tw_error_set("%s: cannot read the variables under '%s' of layer '%s'", name,
                              (const char *)groups->pdata[i], tw_layer_name(layers->pdata[i]));
        else
            rc = tw_user_layer_set_param_count(layers->pdata[i], total, 0);
    }
    g_ptr_array_unref(layers);
    g_ptr_array_unref(groups);
    return rc;
}

int tw__keras3_apply_weights(tw_model *model, hid_t file, size_t cap, const char *name)
{
    GPtrArray *groups = g_ptr_array_new_with_free_func(g_free);
    GArray *vars = var_array();
    int rc = tw__keras3_vars(model, groups, vars);
    if (rc)
        tw_error_set("%s: %s", name, tw_last_error());
    GPtrArray *values = g_ptr_array_new_with_free_func((GDestroyNotify)tw_tensor_unref);
    /* Each group the model has weights in must hold exactly those. */
    GHashTable *counted = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < vars->len && !rc; i++) {
        tw_keras3_var *v = &g_array_index(vars, tw_keras3_var, i);
        char *group = group_of(v->dataset);
        if (!g_hash_table_contains(counted, group)) {
            int expected = 0;
            for (guint k = i; k < vars->len; k++)
                if (g_str_has_prefix(g_array_index(vars, tw_keras3_var, k).dataset, group) &&
                    !strchr(g_array_index(vars, tw_keras3_var, k).dataset + strlen(group) + 1, '/'))
                    expected++;
            int found = tw__h5_has_link(file, group) ? count_vars(file, group) : -1;
            if (found < 0)
                rc = tw_error_set("%s: no group '%s' for layer '%s' (%d weights)", name, group,
                                  tw_layer_name(v->weight.owner), expected);
            else if (found != expected)
                rc = tw_error_set("%s: layer '%s' has %d weights, the file's '%s' holds %d", name,
                                  tw_layer_name(v->weight.owner), expected, group, found);
            g_hash_table_add(counted, g_strdup(group));
        }
        g_free(group);
        if (rc)
            break;
        tw_tensor *value = tw__h5_read_tensor(file, v->dataset, cap, name);
        if (!value || tw__keras_check(&v->weight, value, name)) {
            tw_tensor_unref(value);
            rc = -1;
        } else {
            g_ptr_array_add(values, value);
        }
    }
    for (guint i = 0; i < values->len && !rc; i++)
        rc = tw__keras_assign(&g_array_index(vars, tw_keras3_var, i).weight, values->pdata[i], name);
    /* Its weights are made by its own code: the file gives their count. */
    if (!rc)
        rc = count_user_layers(model, file, name);
    g_hash_table_unref(counted);
    g_ptr_array_unref(values);
    g_array_unref(vars);
    g_ptr_array_unref(groups);
    return rc;
}

uint8_t *tw__keras3_weights_bytes(tw_model *model, const char *name, size_t *size)
{
    GPtrArray *groups = g_ptr_array_new_with_free_func(g_free);
    GArray *vars = var_array();
    if (tw__keras3_vars(model, groups, vars)) {
        tw_error_set("%s: %s", name, tw_last_error());
        g_ptr_array_unref(groups);
        g_array_unref(vars);
        return NULL;
    }
    hid_t file = tw__h5_create_image(name);
    int rc = file < 0;
    /* Keras writes a group for every object, empty or not. */
    for (guint i = 0; i < groups->len && !rc; i++) {
        hid_t g = tw__h5_group(file, groups->pdata[i], name);
        rc = g < 0;
        tw__h5_lock();
        if (g >= 0)
            H5Gclose(g);
        tw__h5_unlock();
    }
    for (guint i = 0; i < vars->len && !rc; i++) {
        tw_keras3_var *v = &g_array_index(vars, tw_keras3_var, i);
        rc = tw__h5_write_tensor(file, v->dataset, v->weight.variable, name);
    }
    uint8_t *bytes = rc ? NULL : tw__h5_image_bytes(file, name, size);
    if (file >= 0) {
        tw__h5_lock();
        H5Fclose(file);
        tw__h5_unlock();
    }
    g_ptr_array_unref(groups);
    g_array_unref(vars);
    return bytes;
}
