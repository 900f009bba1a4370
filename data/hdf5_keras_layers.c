/* A model's layers and weights in Keras' order and names (see
 * hdf5_keras_layers.h). */
#include "hdf5_keras_layers.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw/error.h"

static bool is_class(const tw_layer *layer, const char *name)
{
    return !strcmp(tw_layer_class_of(layer)->name, name);
}

/* Keras' Sequential.layers leaves out the InputLayer its stack starts
 * with; a Functional model lists its inputs. */
static int first_listed(const tw_model *model)
{
    return is_class(model, "Sequential") && tw_model_nlayers(model) > 0 &&
           is_class(tw_model_layer_at(model, 0), "InputLayer");
}

int tw__keras_nlayers(const tw_model *model)
{
    return tw_model_nlayers(model) - first_listed(model);
}

tw_layer *tw__keras_layer_at(const tw_model *model, int index)
{
    return tw_model_layer_at(model, index + first_listed(model));
}

void tw__keras_weight_clear(tw_keras_weight *w)
{
    free(w->path);
    w->path = NULL;
}

typedef struct {
    tw_layer *owner;
    GArray *weights;
} collect_ctx;

static int collect(const char *path, tw_tensor *weight, bool trainable, void *data)
{
    collect_ctx *c = data;
    tw_keras_weight w = {c->owner, strdup(path), weight, trainable};
    g_array_append_val(c->weights, w);
    return 0;
}

static GArray *weight_array(void)
{
    GArray *a = g_array_new(false, true, sizeof(tw_keras_weight));
    g_array_set_clear_func(a, (GDestroyNotify)tw__keras_weight_clear);
    return a;
}

static void keras_layer_free(tw_keras_layer *l)
{
    g_array_unref(l->weights);
    g_free(l);
}

GPtrArray *tw__keras2_layers(tw_model *model)
{
    GPtrArray *layers = g_ptr_array_new_with_free_func((GDestroyNotify)keras_layer_free);
    for (int i = 0; i < tw__keras_nlayers(model); i++) {
        tw_keras_layer *l = g_new0(tw_keras_layer, 1);
        l->layer = tw__keras_layer_at(model, i);
        g_ptr_array_add(layers, l);
        GArray *all = weight_array();
        collect_ctx c = {l->layer, all};
        if (tw_layer_foreach_weight(l->layer, collect, &c)) {
            g_array_unref(all);
            l->weights = weight_array();
            g_ptr_array_unref(layers);
            return NULL;
        }
        /* weights = trainable_weights + non_trainable_weights; the array
         * takes the paths over, so only the shells are dropped. */
        l->weights = g_array_new(false, true, sizeof(tw_keras_weight));
        g_array_set_clear_func(l->weights, (GDestroyNotify)tw__keras_weight_clear);
        for (int pass = 0; pass < 2; pass++)
            for (guint k = 0; k < all->len; k++) {
                tw_keras_weight *w = &g_array_index(all, tw_keras_weight, k);
                if (w->trainable == (pass == 0))
                    g_array_append_val(l->weights, *w);
            }
        g_array_set_clear_func(all, NULL);
        g_array_unref(all);
    }
    return layers;
}

char *tw__keras_snake_case(const char *class_name)
{
    /* re.sub("(.)([A-Z][a-z]+)", r"\1_\2"), then re.sub("([a-z])([A-Z])",
     * r"\1_\2"), then lower(), after dropping non-word characters. */
    GString *word = g_string_new(NULL);
    for (const char *p = class_name; *p; p++)
        if (isalnum((unsigned char)*p) || *p == '_')
            g_string_append_c(word, *p);
    GString *a = g_string_new(NULL);
    const char *s = word->str;
    size_t n = word->len;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && isupper((unsigned char)s[i]) && i + 1 < n && islower((unsigned char)s[i + 1]))
            g_string_append_c(a, '_');
        g_string_append_c(a, s[i]);
    }
    GString *b = g_string_new(NULL);
    for (size_t i = 0; i < a->len; i++) {
        if (i > 0 && islower((unsigned char)a->str[i - 1]) && isupper((unsigned char)a->str[i]))
            g_string_append_c(b, '_');
        g_string_append_c(b, (char)tolower((unsigned char)a->str[i]));
    }
    g_string_free(word, true);
    g_string_free(a, true);
    return g_string_free(b, false);
}

/* Keras 3 saves Functional models under the class name "Functional"; the
 * engine may call them "Model" (Keras 2's name). A class the engine does
 * not know is saved under its Python class's name (Keras 2's class_name
 * "MyPkg>MyLayer" without its package). */
static char *object_name(const tw_layer *layer)
{
    const char *name = tw_layer_class_shown(layer);
    return tw__keras_snake_case(!strcmp(name, "Model") ? "Functional" : name);
}

static bool has_cell(const tw_layer *layer)
{
    return is_class(layer, "LSTM") || is_class(layer, "GRU") || is_class(layer, "SimpleRNN");
}

static int walk3(tw_layer *layer, const char *group, GPtrArray *groups, GArray *vars);

/* A container's child's group, "<group>/layers/<name>" or, for the
 * second object of a name, "<name>_1" and on; used counts the names. */
static char *child_group(GHashTable *used, const char *group, const tw_layer *child)
{
    char *name = object_name(child);
    gpointer seen;
    char *child_group;
    if (g_hash_table_lookup_extended(used, name, NULL, &seen)) {
        int count = GPOINTER_TO_INT(seen) + 1;
        g_hash_table_insert(used, g_strdup(name), GINT_TO_POINTER(count));
        child_group = g_strdup_printf("%s%slayers/%s_%d", group, *group ? "/" : "", name, count);
    } else {
        g_hash_table_insert(used, g_strdup(name), GINT_TO_POINTER(0));
        child_group = g_strdup_printf("%s%slayers/%s", group, *group ? "/" : "", name);
    }
    free(name);
    return child_group;
}

static int walk3_container(tw_model *model, const char *group, GPtrArray *groups, GArray *vars)
{
    GHashTable *used = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    int rc = 0;
    for (int i = 0; i < tw__keras_nlayers(model) && !rc; i++) {
        tw_layer *child = tw__keras_layer_at(model, i);
        char *at = child_group(used, group, child);
        rc = walk3(child, at, groups, vars);
        g_free(at);
    }
    g_hash_table_unref(used);
    return rc;
}

static void user_groups(tw_model *model, const char *group, GPtrArray *layers, GPtrArray *groups)
{
    GHashTable *used = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (int i = 0; i < tw__keras_nlayers(model); i++) {
        tw_layer *child = tw__keras_layer_at(model, i);
        char *at = child_group(used, group, child);
        if (tw_user_layer_keras(child)) {
            g_ptr_array_add(layers, child);
            g_ptr_array_add(groups, at);
            continue;
        }
        if (tw_layer_is_model(child))
            user_groups(child, at, layers, groups);
        g_free(at);
    }
    g_hash_table_unref(used);
}

/* Keras 3 saves a wrapper's layers as its attributes: Bidirectional's
 * forward_layer and backward_layer, TimeDistributed's layer (each then in
 * its own form, an LSTM's weights under cell/vars). */
static int walk3_wrapper(tw_layer *layer, const char *group, GPtrArray *groups, GArray *vars)
{
    bool bidi = is_class(layer, "Bidirectional");
    const char *const names[] = {bidi ? "forward_layer" : "layer", "backward_layer"};
    int rc = 0;
    for (int i = 0; !rc && i < (bidi ? 2 : 1); i++) {
        char *sub = g_strdup_printf("%s/%s", group, names[i]);
        rc = walk3(tw_layer_inner(layer, i), sub, groups, vars);
        g_free(sub);
    }
    return rc;
}

/* MultiHeadAttention's projections are EinsumDense layers Keras 3 saves
 * under its properties query_dense, key_dense, value_dense and
 * output_dense (attributes whose names start with '_' are visited after
 * these), each with its kernel as vars/0 and bias as vars/1. The engine
 * names them query_kernel, query_bias, ..., attention_output_bias. */
static int walk3_attention(tw_layer *layer, const char *group, GPtrArray *groups, GArray *vars)
{
    static const char *const parts[][2] = {
        {"query_", "query_dense"}, {"key_", "key_dense"}, {"value_", "value_dense"},
        {"attention_output_", "output_dense"}};
    GArray *all = weight_array();
    collect_ctx c = {layer, all};
    int rc = tw_layer_foreach_weight(layer, collect, &c);
    for (size_t p = 0; p < G_N_ELEMENTS(parts) && !rc; p++) {
        char *sub = g_strdup_printf("%s/%s/vars", group, parts[p][1]);
        g_ptr_array_add(groups, g_strdup(sub));
        for (guint k = 0; k < all->len; k++) {
            tw_keras_weight *w = &g_array_index(all, tw_keras_weight, k);
            if (!w->path) /* taken by an earlier part */
                continue;
            const char *name = strrchr(w->path, '/') ? strrchr(w->path, '/') + 1 : w->path;
            if (!g_str_has_prefix(name, parts[p][0]))
                continue;
            const char *rest = name + strlen(parts[p][0]);
            tw_keras3_var v = {g_strdup_printf("%s/%d", sub, strcmp(rest, "kernel") ? 1 : 0), *w};
            w->path = NULL; /* moved */
            g_array_append_val(vars, v);
        }
        g_free(sub);
    }
    g_array_unref(all);
    return rc;
}

static int walk3(tw_layer *layer, const char *group, GPtrArray *groups, GArray *vars)
{
    /* A class the engine does not know: what its code saved is not held
     * here, so nothing is written for it (not an empty group, which would
     * say it has no weights). */
    if (tw_user_layer_keras(layer))
        return 0;
    g_ptr_array_add(groups, g_strdup_printf("%s%svars", group, *group ? "/" : ""));
    if (tw_layer_is_model(layer))
        return walk3_container(layer, group, groups, vars);
    if (tw_layer_inner(layer, 0))
        return walk3_wrapper(layer, group, groups, vars);
    if (is_class(layer, "MultiHeadAttention"))
        return walk3_attention(layer, group, groups, vars);
    GArray *all = weight_array();
    collect_ctx c = {layer, all};
    int rc = tw_layer_foreach_weight(layer, collect, &c);
    char *vars_group = has_cell(layer) ? g_strdup_printf("%s/cell/vars", group) : NULL;
    if (vars_group)
        g_ptr_array_add(groups, g_strdup(vars_group));
    else
        vars_group = g_strdup_printf("%s%svars", group, *group ? "/" : "");
    /* Keras 3 saves _trainable_variables then _non_trainable_variables:
     * by how each weight was created, not whether it is frozen now. */
    int index = 0;
    for (int pass = 0; pass < 2 && !rc; pass++)
        for (guint k = 0; k < all->len; k++) {
            const tw_weight_spec *spec = (int)k < tw_layer_nweights(layer) ? tw_layer_weight_spec(layer, (int)k) : NULL;
            bool created_trainable = spec ? spec->trainable : g_array_index(all, tw_keras_weight, k).trainable;
            if (created_trainable != (pass == 0))
                continue;
            tw_keras3_var v = {g_strdup_printf("%s/%d", vars_group, index++), g_array_index(all, tw_keras_weight, k)};
            g_array_index(all, tw_keras_weight, k).path = NULL; /* moved */
            g_array_append_val(vars, v);
        }
    g_free(vars_group);
    g_array_unref(all);
    return rc;
}

int tw__keras3_vars(tw_model *model, GPtrArray *groups, GArray *vars)
{
    return walk3(model, "", groups, vars);
}

void tw__keras3_user_groups(tw_model *model, GPtrArray *layers, GPtrArray *groups)
{
    user_groups(model, "", layers, groups);
}

int tw__keras_check(const tw_keras_weight *w, const tw_tensor *value, const char *where)
{
    const char *slash = strrchr(w->path, '/');
    const char *weight = slash ? slash + 1 : w->path;
    char layer[256];
    if (slash) {
        const char *start = slash;
        while (start > w->path && start[-1] != '/')
            start--;
        snprintf(layer, sizeof layer, "%.*s", (int)(slash - start), start);
    } else {
        snprintf(layer, sizeof layer, "%s", tw_layer_name(w->owner));
    }
    char a[96], b[96];
    tw_tensor *v = w->variable;
    if (tw_tensor_ndim(v) != tw_tensor_ndim(value) ||
        memcmp(tw_tensor_shape(v), tw_tensor_shape(value), sizeof(int64_t) * (size_t)tw_tensor_ndim(v)))
        return tw_error_set("%s: layer '%s' weight '%s': file has %s, model has %s", where, layer, weight,
                            tw_shape_str(tw_tensor_ndim(value), tw_tensor_shape(value), a, sizeof a),
                            tw_shape_str(tw_tensor_ndim(v), tw_tensor_shape(v), b, sizeof b));
    if (tw_tensor_dtype(v) != tw_tensor_dtype(value))
        return tw_error_set("%s: layer '%s' weight '%s': file has %s values, model has %s", where, layer, weight,
                            tw_dtype_name(tw_tensor_dtype(value)), tw_dtype_name(tw_tensor_dtype(v)));
    return 0;
}

int tw__keras_assign(const tw_keras_weight *w, tw_tensor *value, const char *where)
{
    if (tw__keras_check(w, value, where))
        return -1;
    if (tw_layer_restore_weight(w->owner, w->path, value))
        return tw_error_set("%s: %s", where, tw_last_error());
    return 0;
}
