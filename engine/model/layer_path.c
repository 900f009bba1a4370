/* Layers of nested models by path (tw/model.h): "encoder/dense_1" is the
 * layer dense_1 of the model encoder used as a layer, as weight paths name
 * it (tw_layer_foreach_weight). Only models are entered: a wrapper's layers
 * (Bidirectional's forward and backward copies) follow their wrapper and
 * are not set on their own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw/error.h"
#include "tw/model.h"

/* Candidates named in a message before "and N more". */
#define MAX_NAMED 12

static int walk(const tw_model *model, const char *prefix, tw_layer_path_fn fn, void *user_data)
{
    int n = tw_model_nlayers(model);
    for (int i = 0; i < n; i++) {
        tw_layer *layer = tw_model_layer_at(model, i);
        size_t size = strlen(prefix) + strlen(tw_layer_name(layer)) + 2;
        char *path = malloc(size);
        snprintf(path, size, "%s%s%s", prefix, *prefix ? "/" : "", tw_layer_name(layer));
        int rc = fn(path, layer, user_data);
        if (!rc && tw_layer_is_model(layer))
            rc = walk(layer, path, fn, user_data);
        free(path);
        if (rc)
            return rc;
    }
    return 0;
}

int tw_model_foreach_layer(const tw_model *model, tw_layer_path_fn fn, void *user_data)
{
    if (!tw_layer_is_model(model))
        return tw_error_set("model: %s is not a model", model ? tw_layer_name(model) : "NULL");
    return walk(model, "", fn, user_data);
}

/* ---- finding one ----------------------------------------------------------- */
typedef struct {
    const char *name;   /* matched against each layer's own name, or NULL: every layer */
    tw_layer *found;
    char *found_path;
    int count;          /* layers matched */
    char *list;         /* the first MAX_NAMED matched paths, ", " between */
    size_t list_len;
} search;

static int collect(const char *path, tw_layer *layer, void *user_data)
{
    search *s = user_data;
    if (s->name && strcmp(tw_layer_name(layer), s->name))
        return 0;
    if (!s->count++) {
        s->found = layer;
        s->found_path = strdup(path);
    }
    if (s->count <= MAX_NAMED) {
        size_t add = strlen(path) + 2;
        s->list = realloc(s->list, s->list_len + add + 1);
        snprintf(s->list + s->list_len, add + 1, "%s%s", s->list_len ? ", " : "", path);
        s->list_len += strlen(s->list + s->list_len);
    }
    return 0;
}

/* "a, b/c, d and 40 more" (the search's list) into a message. */
static int fail_listing(const search *s, const char *fmt, const char *model, const char *what)
{
    char more[48] = "";
    if (s->count > MAX_NAMED)
        snprintf(more, sizeof more, " and %d more", s->count - MAX_NAMED);
    return tw_error_set(fmt, model, what, s->list ? s->list : "", more);
}

/* A child of model named exactly name (which may hold a slash), or NULL. */
static tw_layer *child_named(const tw_model *model, const char *name, size_t len)
{
    int n = tw_model_nlayers(model);
    for (int i = 0; i < n; i++) {
        tw_layer *layer = tw_model_layer_at(model, i);
        if (strlen(tw_layer_name(layer)) == len && !strncmp(tw_layer_name(layer), name, len))
            return layer;
    }
    return NULL;
}

/* "a/b/c": each part a layer of the model before it. */
static tw_layer *follow(const tw_model *model, const char *path)
{
    const tw_model *at = model;
    for (const char *part = path;;) {
        const char *slash = strchr(part, '/');
        size_t len = slash ? (size_t)(slash - part) : strlen(part);
        tw_layer *layer = child_named(at, part, len);
        if (!layer) {
            tw_error_set("model '%s' has no layer '%s': '%s' has no layer named '%.*s'", tw_layer_name(model), path,
                         tw_layer_name(at), (int)len, part);
            return NULL;
        }
        if (!slash)
            return layer;
        if (!tw_layer_is_model(layer)) {
            tw_error_set("model '%s' has no layer '%s': '%.*s' is a %s layer, not a model holding layers",
                         tw_layer_name(model), path, (int)(slash - path), path, tw_layer_class_of(layer)->name);
            return NULL;
        }
        at = layer;
        part = slash + 1;
    }
}

tw_layer *tw_model_find_layer_path(const tw_model *model, const char *path, char **full_path)
{
    if (full_path)
        *full_path = NULL;
    if (!tw_layer_is_model(model) || !path || !*path) {
        tw_error_set("model: %s", !path || !*path ? "no layer named (an empty path)" : "not a model");
        return NULL;
    }
    /* the model's own layer first: its path is its name, even one with a slash */
    tw_layer *layer = child_named(model, path, strlen(path));
    if (!layer && strchr(path, '/'))
        layer = follow(model, path);
    if (layer || strchr(path, '/')) {
        if (layer && full_path)
            *full_path = strdup(path);
        return layer;
    }
    /* a bare name: the one nested layer of that name */
    search s = {.name = path};
    walk(model, "", collect, &s);
    if (s.count == 1) {
        if (full_path)
            *full_path = s.found_path;
        else
            free(s.found_path);
        free(s.list);
        return s.found;
    }
    if (s.count > 1)
        fail_listing(&s, "model '%s': '%s' names %s%s; give the layer's path", tw_layer_name(model), path);
    else {
        search all = {0};
        walk(model, "", collect, &all);
        if (all.count)
            fail_listing(&all, "model '%s' has no layer named '%s'; its layers are %s%s", tw_layer_name(model), path);
        else
            tw_error_set("model '%s' has no layer named '%s'; it has no layers", tw_layer_name(model), path);
        free(all.found_path);
        free(all.list);
    }
    free(s.found_path);
    free(s.list);
    return NULL;
}
