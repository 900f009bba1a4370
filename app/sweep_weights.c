/* A sweep trial's model over a model file's weights (sweep_weights.h). */
#include "sweep_weights.h"

#include <glib.h>

#include <tw/error.h>
#include <tw/keras_file.h>

#include "train_session.h"

/* The trial's values that differ from the file's, "dense.units=32
 * dropout.rate=0.3" (g_free), or NULL when none does. A layer or property
 * that is not there counts as a change: setting it reports why. */
static char *changed_values(const tw_model *model, const tw_train_settings *s)
{
    GString *out = g_string_new(NULL);
    for (int i = 0; i < s->nlayer_values; i++) {
        const tw_layer_value *v = &s->layer_values[i];
        const tw_layer *layer = tw_model_find_layer_path(model, v->layer, NULL);
        const tw_param_value *now = layer ? tw_layer_get(layer, v->property) : NULL;
        if (now && !now->is_null && now->number == v->value)
            continue;
        char text[G_ASCII_DTOSTR_BUF_SIZE];
        g_string_append_printf(out, "%s%s.%s=%s", out->len ? " " : "", v->layer, v->property,
                               g_ascii_formatd(text, sizeof text, "%.10g", v->value)); /* 0.3, not 0.2999… */
    }
    tw_error_clear();
    return g_string_free(out, out->len == 0);
}

static char *shape_text(const tw_tensor *t)
{
    tw_shape shape = {.ndim = tw_tensor_ndim(t)};
    for (int i = 0; i < shape.ndim; i++)
        shape.dims[i] = tw_tensor_shape(t)[i];
    char buf[128];
    return g_strdup(tw_shape_format(&shape, buf, sizeof buf));
}

static bool same_shape(const tw_tensor *a, const tw_tensor *b)
{
    if (tw_tensor_ndim(a) != tw_tensor_ndim(b) || tw_tensor_dtype(a) != tw_tensor_dtype(b))
        return false;
    for (int i = 0; i < tw_tensor_ndim(a); i++)
        if (tw_tensor_shape(a)[i] != tw_tensor_shape(b)[i])
            return false;
    return true;
}

typedef struct {
    GHashTable *file; /* path -> the file's weight (borrowed from the file's model) */
    GString *fresh;   /* "dense/kernel (2, 16) -> (2, 32), ..." */
    int kept, nfresh;
} carry;

static int remember(const char *path, tw_tensor *weight, bool trainable, void *user_data)
{
    (void)trainable;
    carry *c = user_data;
    g_hash_table_insert(c->file, g_strdup(path), weight);
    return 0;
}

/* The trial model's weight takes the file's of its path when the shapes
 * agree; otherwise it keeps its fresh value, named in the notice. */
static int take(const char *path, tw_tensor *weight, bool trainable, void *user_data)
{
    (void)trainable;
    carry *c = user_data;
    tw_tensor *file = g_hash_table_lookup(c->file, path);
    if (file && same_shape(file, weight)) {
        c->kept++;
        g_hash_table_remove(c->file, path);
        return tw_assign(weight, file);
    }
    char *now = shape_text(weight);
    char *before = file ? shape_text(file) : g_strdup("none");
    g_string_append_printf(c->fresh, "%s%s %s -> %s", c->nfresh++ ? ", " : "", path, before, now);
    g_free(now);
    g_free(before);
    g_hash_table_remove(c->file, path);
    return 0;
}

/* copy's weights from model's where they fit; the notice when some do not. */
static int carry_weights(const tw_model *model, tw_model *copy, const char *path, const char *changed, char **notice)
{
    carry c = {g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL), g_string_new(NULL), 0, 0};
    int rc = tw_layer_foreach_weight(model, remember, &c) || tw_layer_foreach_weight(copy, take, &c) ? -1 : 0;
    /* weights of the file the trial's model has no place for (none for a
     * numeric property today; said rather than dropped silently) */
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, c.file);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        char *before = shape_text(value);
        g_string_append_printf(c.fresh, "%s%s %s -> none", c.nfresh++ ? ", " : "", (const char *)key, before);
        g_free(before);
    }
    if (!rc && c.nfresh) {
        char *base = g_path_get_basename(path);
        *notice = g_strdup_printf("%s: %d weight%s of %s start%s fresh, %s changed: %s; %d kept from the file",
                                  changed, c.nfresh, c.nfresh == 1 ? "" : "s", base, c.nfresh == 1 ? "s" : "",
                                  c.nfresh == 1 ? "its shape" : "their shapes", c.fresh->str, c.kept);
        g_free(base);
    }
    g_hash_table_destroy(c.file);
    g_string_free(c.fresh, TRUE);
    return rc;
}

tw_model *twb_sweep_trial_model(const char *path, const tw_train_settings *s, char **notice)
{
    *notice = NULL;
    tw_model *model = tw_model_open(path);
    if (!model || !tw_model_open_had_weights())
        return twb_model_with_layer_values(model, s);
    char *changed = changed_values(model, s);
    if (!changed)
        return model; /* the file's architecture: every weight as it is */
    tw_model *copy = twb_model_with_layer_values(tw_layer_clone(model, tw_layer_name(model)), s);
    int rc = copy ? 0 : -1;
    /* as fit builds an unbuilt model: from the declared input, the trial's seed */
    if (!rc)
        rc = tw_model_build(copy, NULL, s->seed);
    if (!rc)
        rc = carry_weights(model, copy, path, changed, notice);
    g_free(changed);
    tw_layer_unref(model);
    if (rc) {
        tw_layer_unref(copy);
        return NULL;
    }
    return copy;
}
