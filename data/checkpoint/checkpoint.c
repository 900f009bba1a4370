/* Checkpoints: a model's weights by path and its optimizer's slots and
 * iteration count in one safetensors file, with the metadata that says
 * what the file is. Restoring checks names, shapes and dtypes before it
 * assigns anything, so a checkpoint of another model fails cleanly. */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors_internal.h"
#include "tw/json_check.h"

#define FORMAT "twb-checkpoint"
#define VERSION "1"
#define OPTIMIZER_PREFIX "optimizer/"
#define ITERATIONS OPTIMIZER_PREFIX "iterations"

/* ---- the model's weights ------------------------------------------------------ */

typedef struct {
    GPtrArray *paths;      /* owned strings, foreach_weight's order */
    GPtrArray *tensors;    /* borrowed */
    GHashTable *by_path;   /* path -> tensor */
    GHashTable *path_of;   /* tensor -> its first path (a shared layer has several) */
} weight_list;

static int collect(const char *path, tw_tensor *weight, bool trainable, void *user_data)
{
    (void)trainable;
    weight_list *w = user_data;
    char *copy = g_strdup(path);
    g_ptr_array_add(w->paths, copy);
    g_ptr_array_add(w->tensors, weight);
    g_hash_table_insert(w->by_path, copy, weight);
    if (!g_hash_table_contains(w->path_of, weight))
        g_hash_table_insert(w->path_of, weight, copy);
    return 0;
}

static void weights_clear(weight_list *w)
{
    g_hash_table_destroy(w->by_path);
    g_hash_table_destroy(w->path_of);
    g_ptr_array_free(w->tensors, TRUE);
    g_ptr_array_free(w->paths, TRUE);
}

/* Every weight of the model by path. A layer named "optimizer" would mix
 * its weights up with the optimizer's entries: refused. */
static int weights_of(tw_model *model, const char *path, weight_list *w)
{
    w->paths = g_ptr_array_new_with_free_func(g_free);
    w->tensors = g_ptr_array_new();
    w->by_path = g_hash_table_new(g_str_hash, g_str_equal);
    w->path_of = g_hash_table_new(g_direct_hash, g_direct_equal);
    tw_layer_foreach_weight(model, collect, w);
    for (guint i = 0; i < w->paths->len; i++)
        if (g_str_has_prefix(w->paths->pdata[i], OPTIMIZER_PREFIX)) {
            tw_error_set("%s: weight '%s' of model '%s' clashes with the checkpoint's optimizer entries: rename "
                         "the layer called \"optimizer\"",
                         path, (const char *)w->paths->pdata[i], tw_layer_name(model));
            weights_clear(w);
            return -1;
        }
    return 0;
}

/* ---- saving ------------------------------------------------------------------ */

typedef struct {
    const weight_list *weights;
    GPtrArray *names;   /* owned */
    GPtrArray *tensors; /* borrowed */
    const char *path;
} slot_list;

static int collect_slot(tw_tensor *variable, const char *slot_name, tw_tensor *slot, void *user_data)
{
    slot_list *s = user_data;
    const char *weight = g_hash_table_lookup(s->weights->path_of, variable);
    if (!weight)
        return tw_error_set("%s: the optimizer holds slot '%s' of variable '%s', which is not a weight of the model",
                            s->path, slot_name, tw_variable_name(variable));
    g_ptr_array_add(s->names, g_strdup_printf(OPTIMIZER_PREFIX "%s/%s", weight, slot_name));
    g_ptr_array_add(s->tensors, slot);
    return 0;
}

static int write_checkpoint(const char *path, const weight_list *w, tw_optimizer *optimizer, const char *model_json,
                            const char *training_config_json)
{
    slot_list s = {w, g_ptr_array_new_with_free_func(g_free), g_ptr_array_new(), path};
    for (guint i = 0; i < w->paths->len; i++) {
        g_ptr_array_add(s.names, g_strdup(w->paths->pdata[i]));
        g_ptr_array_add(s.tensors, w->tensors->pdata[i]);
    }
    int rc = 0;
    tw_scope_begin();
    if (optimizer) {
        rc = tw_optimizer_foreach_slot(optimizer, collect_slot, &s);
        int64_t iterations = tw_optimizer_iterations(optimizer);
        g_ptr_array_add(s.names, g_strdup(ITERATIONS));
        g_ptr_array_add(s.tensors, tw_tensor_from_data(&iterations, TW_INT64, 0, NULL));
    }
    const char *keys[4] = {"format", "version"}, *values[4] = {FORMAT, VERSION};
    int nmeta = 2;
    if (model_json) {
        keys[nmeta] = "model_json";
        values[nmeta++] = model_json;
    }
    if (training_config_json) {
        keys[nmeta] = "training_config";
        values[nmeta++] = training_config_json;
    }
    if (rc == 0)
        rc = tw_safetensors_write(path, (int)s.names->len, (const char *const *)s.names->pdata,
                                  (tw_tensor *const *)s.tensors->pdata, nmeta, keys, values);
    tw_scope_end();
    g_ptr_array_free(s.names, TRUE);
    g_ptr_array_free(s.tensors, TRUE);
    return rc;
}

int tw_checkpoint_save(const char *path, tw_model *model, tw_optimizer *optimizer, const char *model_json,
                       const char *training_config_json)
{
    if (!path || !model)
        return tw_error_set("checkpoint save: the %s is NULL", path ? "model" : "path");
    if (!tw_layer_built(model))
        return tw_error_set("%s: model '%s' is not built, so it has no weights to save yet (build it, or call it "
                            "once, first)",
                            path, tw_layer_name(model));
    weight_list w;
    if (weights_of(model, path, &w))
        return -1;
    int rc = write_checkpoint(path, &w, optimizer, model_json, training_config_json);
    weights_clear(&w);
    return rc;
}

/* ---- restoring --------------------------------------------------------------- */

static tw_safetensors *open_checkpoint(const char *path)
{
    tw_safetensors *st = tw_safetensors_open(path);
    if (!st)
        return NULL;
    const char *format = tw_safetensors_metadata(st, "format");
    const char *version = tw_safetensors_metadata(st, "version");
    if (!format || strcmp(format, FORMAT))
        tw_error_set("%s: not a Tensor Workbench checkpoint (its metadata \"format\" is %s%s%s, not \"" FORMAT "\")",
                     path, format ? "\"" : "", format ? format : "missing", format ? "\"" : "");
    else if (!version || strcmp(version, VERSION))
        tw_error_set("%s: checkpoint version %s%s%s; this build reads version " VERSION, path, version ? "\"" : "",
                     version ? version : "missing", version ? "\"" : "");
    else
        return st;
    tw_safetensors_close(st);
    return NULL;
}

static bool is_optimizer_entry(const char *name)
{
    return g_str_has_prefix(name, OPTIMIZER_PREFIX);
}

/* The file's tensor `name` has the dtype and shape of `like`. */
static int check_like(tw_safetensors *st, const char *path, const char *name, tw_tensor *like, const char *what)
{
    tw_dtype dtype;
    int ndim;
    int64_t shape[TW_MAX_DIMS];
    if (tw_safetensors_info(st, name, &dtype, &ndim, shape))
        return -1;
    char a[96], b[96];
    if (ndim != tw_tensor_ndim(like) || memcmp(shape, tw_tensor_shape(like), sizeof(int64_t) * (size_t)ndim))
        return tw_error_set("%s: '%s' has shape %s in the checkpoint but %s in the %s", path, name,
                            tw_shape_str(ndim, shape, a, sizeof a),
                            tw_shape_str(tw_tensor_ndim(like), tw_tensor_shape(like), b, sizeof b), what);
    if (dtype != tw_tensor_dtype(like))
        return tw_error_set("%s: '%s' is %s in the checkpoint but %s in the %s", path, name, tw_dtype_name(dtype),
                            tw_dtype_name(tw_tensor_dtype(like)), what);
    return 0;
}

/* A built model: the same set of paths on both sides, and the same shapes. */
static int check_weights(tw_safetensors *st, const char *path, tw_model *model, const weight_list *w)
{
    for (guint i = 0; i < w->paths->len; i++) {
        const char *name = w->paths->pdata[i];
        if (!tw_safetensors_has(st, name))
            return tw_error_set("%s: weight '%s' of model '%s' is missing from the checkpoint", path, name,
                                tw_layer_name(model));
        if (check_like(st, path, name, w->tensors->pdata[i], "model"))
            return -1;
    }
    for (int i = 0; i < tw_safetensors_count(st); i++) {
        const char *name = tw_safetensors_name(st, i);
        if (!is_optimizer_entry(name) && !g_hash_table_contains(w->by_path, name))
            return tw_error_set("%s: the checkpoint has weight '%s', which model '%s' does not have", path, name,
                                tw_layer_name(model));
    }
    return 0;
}

/* An unbuilt model: every path must lead through layers the model has
 * (their weights are only known once they are built). */
static int check_paths(const char *path, tw_model *model, const char *name)
{
    const tw_layer *at = model;
    const char *rest = name;
    if (!tw_layer_is_model(model)) {
        size_t len = strlen(tw_layer_name(model));
        if (strncmp(name, tw_layer_name(model), len) || name[len] != '/')
            return tw_error_set("%s: '%s' is not a weight of layer '%s'", path, name, tw_layer_name(model));
        rest = name + len + 1;
    }
    for (const char *slash; (slash = strchr(rest, '/')); rest = slash + 1) {
        const tw_layer *next = NULL;
        for (int i = 0; tw_layer_is_model(at) && i < tw_model_nlayers(at) && !next; i++) {
            const char *child = tw_layer_name(tw_model_layer_at(at, i));
            if (strlen(child) == (size_t)(slash - rest) && !strncmp(child, rest, (size_t)(slash - rest)))
                next = tw_model_layer_at(at, i);
        }
        for (int i = 0; tw_layer_inner(at, i) && !next; i++) { /* a wrapper's layers (Bidirectional's two) */
            const char *child = tw_layer_name(tw_layer_inner(at, i));
            if (strlen(child) == (size_t)(slash - rest) && !strncmp(child, rest, (size_t)(slash - rest)))
                next = tw_layer_inner(at, i);
        }
        if (!next)
            return tw_error_set("%s: the checkpoint has weight '%s', but model '%s' has no layer \"%.*s\" in '%s'",
                                path, name, tw_layer_name(model), (int)(slash - rest), rest, tw_layer_name(at));
        at = next;
    }
    return 0;
}

/* Put every model weight of the file in place (or in waiting). */
static int restore_weights(tw_safetensors *st, const char *path, tw_model *model)
{
    for (int i = 0; i < tw_safetensors_count(st); i++) {
        const char *name = tw_safetensors_name(st, i);
        if (is_optimizer_entry(name))
            continue;
        tw_tensor *value = tw_safetensors_get(st, name);
        if (!value)
            return -1;
        if (tw_layer_restore_weight(model, name, value))
            return tw_error_set("%s: %s", path, tw_last_error());
    }
    return 0;
}

/* The optimizer the checkpoint's training settings name (the metadata
 * "training_config"'s settings.optimizer, which `twb train` and the window
 * write), or NULL. */
static char *saved_optimizer(tw_safetensors *st)
{
    const char *config = tw_safetensors_metadata(st, "training_config");
    if (config && tw_json_too_deep(config, -1) >= 0)
        return NULL;
    JsonParser *parser = json_parser_new();
    char *name = NULL;
    JsonNode *root = config && json_parser_load_from_data(parser, config, -1, NULL) ? json_parser_get_root(parser)
                                                                                     : NULL;
    JsonObject *top = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    JsonNode *settings = top ? json_object_get_member(top, "settings") : NULL;
    if (settings && JSON_NODE_HOLDS_OBJECT(settings)) {
        JsonNode *n = json_object_get_member(json_node_get_object(settings), "optimizer");
        if (n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING)
            name = g_strdup(json_node_get_string(n));
    }
    g_object_unref(parser);
    return name;
}

/* "optimizer/<weight path>/<slot>" -> the weight and the slot name. */
static tw_tensor *slot_for(tw_safetensors *st, const char *path, const weight_list *w, tw_optimizer *optimizer,
                           const char *name)
{
    const char *weight_path = name + strlen(OPTIMIZER_PREFIX), *slash = strrchr(weight_path, '/');
    char *weight_name = slash ? g_strndup(weight_path, (gsize)(slash - weight_path)) : NULL;
    tw_tensor *variable = weight_name ? g_hash_table_lookup(w->by_path, weight_name) : NULL;
    g_free(weight_name);
    if (!variable) {
        tw_error_set("%s: optimizer entry '%s' does not name a weight of the model and a slot", path, name);
        return NULL;
    }
    tw_tensor *slot = tw_optimizer_slot(optimizer, variable, slash + 1);
    if (!slot) {
        const char *now = tw_optimizer_kind_name(tw_optimizer_get_config(optimizer)->kind);
        char *saved = saved_optimizer(st);
        if (saved && g_ascii_strcasecmp(saved, now))
            tw_error_set("%s: the checkpoint was saved by optimizer %s, this one is %s: its state ('%s') has no "
                         "place here; resume with optimizer %s, or start again without the checkpoint",
                         path, saved, now, name, saved);
        else
            tw_error_set("%s: optimizer entry '%s': %s", path, name, tw_last_error());
        g_free(saved);
        return NULL;
    }
    return check_like(st, path, name, slot, "optimizer") ? NULL : slot;
}

/* The optimizer's part, found and checked before anything is assigned:
 * its slot (created where missing) for every entry of the file. */
typedef struct {
    GPtrArray *slots; /* borrowed from the scope restoring runs in */
    GPtrArray *names; /* the file's entries, owned by st */
} slot_plan;

static int plan_optimizer(tw_safetensors *st, const char *path, const weight_list *w, tw_optimizer *optimizer,
                          slot_plan *plan)
{
    if (!tw_safetensors_has(st, ITERATIONS))
        return tw_error_set("%s: the checkpoint holds no optimizer state (no '" ITERATIONS "'): it was saved "
                            "without an optimizer",
                            path);
    if (check_like(st, path, ITERATIONS, tw_zeros(TW_INT64, 0, NULL), "optimizer's iteration count"))
        return -1;
    for (int i = 0; i < tw_safetensors_count(st); i++) {
        const char *name = tw_safetensors_name(st, i);
        if (!is_optimizer_entry(name) || !strcmp(name, ITERATIONS))
            continue;
        tw_tensor *slot = slot_for(st, path, w, optimizer, name);
        if (!slot)
            return -1;
        g_ptr_array_add(plan->slots, slot);
        g_ptr_array_add(plan->names, (char *)name);
    }
    return 0;
}

static int apply_optimizer(tw_safetensors *st, const slot_plan *plan, tw_optimizer *optimizer)
{
    for (guint i = 0; i < plan->slots->len; i++) {
        tw_tensor *value = tw_safetensors_get(st, plan->names->pdata[i]);
        if (!value || tw_assign(plan->slots->pdata[i], value))
            return -1;
    }
    tw_tensor *iterations = tw_safetensors_get(st, ITERATIONS);
    if (!iterations)
        return -1;
    int64_t count;
    if (tw_tensor_copy_to(iterations, &count, sizeof count) < 0) /* from whichever device it was read to */
        return -1;
    tw_optimizer_set_iterations(optimizer, count);
    return 0;
}

/* Runs inside a scope (the slots and values read belong to it). */
static int restore_built(tw_safetensors *st, const char *path, tw_model *model, tw_optimizer *optimizer)
{
    weight_list w;
    if (weights_of(model, path, &w))
        return -1;
    slot_plan plan = {g_ptr_array_new(), g_ptr_array_new()};
    int rc = check_weights(st, path, model, &w);
    if (rc == 0 && optimizer)
        rc = plan_optimizer(st, path, &w, optimizer, &plan);
    if (rc == 0)
        rc = restore_weights(st, path, model);
    if (rc == 0 && optimizer)
        rc = apply_optimizer(st, &plan, optimizer);
    g_ptr_array_free(plan.slots, TRUE);
    g_ptr_array_free(plan.names, TRUE);
    weights_clear(&w);
    return rc;
}

static int restore_deferred(tw_safetensors *st, const char *path, tw_model *model)
{
    for (int i = 0; i < tw_safetensors_count(st); i++) {
        const char *name = tw_safetensors_name(st, i);
        if (!is_optimizer_entry(name) && check_paths(path, model, name))
            return -1;
    }
    return restore_weights(st, path, model);
}

int tw_checkpoint_restore(const char *path, tw_model *model, tw_optimizer *optimizer)
{
    if (!path || !model)
        return tw_error_set("checkpoint restore: the %s is NULL", path ? "model" : "path");
    bool built = tw_layer_built(model);
    /* Slots belong to variables, which an unbuilt model does not have yet. */
    if (optimizer && !built)
        return tw_error_set("%s: restoring an optimizer needs a built model: build model '%s' first, then restore",
                            path, tw_layer_name(model));
    tw_safetensors *st = open_checkpoint(path);
    if (!st)
        return -1;
    tw_scope_begin();
    int rc = built ? restore_built(st, path, model, optimizer) : restore_deferred(st, path, model);
    tw_scope_end();
    tw_safetensors_close(st);
    return rc;
}

char *tw_checkpoint_read_metadata(const char *path, const char *key)
{
    if (!key) {
        tw_error_set("%s: checkpoint metadata: the key is NULL", path ? path : "(null)");
        return NULL;
    }
    tw_safetensors *st = open_checkpoint(path);
    if (!st)
        return NULL;
    const char *value = tw_safetensors_metadata(st, key);
    char *copy = value ? strdup(value) : NULL;
    if (!value)
        tw_error_set("%s: the checkpoint has no metadata \"%s\"", path, key);
    tw_safetensors_close(st);
    return copy;
}
