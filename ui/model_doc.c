/* TwModelDoc (model_doc.h). Every edit changes the engine's model in place,
 * then commit() reads the model back from its own JSON: the designer shows
 * exactly what a save writes and what an undo or redo restores, and the
 * history holds nothing but JSON texts. */
#include "model_doc.h"

#include <tw/functional.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <tw/error.h>
#include <tw/model_file.h>

#define MAX_UNDO 500

static const char no_input_message[] = "Add an InputLayer or give the first layer an input shape";
static const char no_layers_message[] = "The model has no layers: add an InputLayer, then layers from the palette";

typedef struct {
    char *before, *after;
} Step;

struct _TwModelDoc {
    GObject parent_instance;
    tw_model *model;
    char *json;       /* the model's JSON now */
    char *saved_json; /* as loaded or saved; modified means json differs */
    char *path;
    GPtrArray *undo, *redo; /* of Step, newest last */
    tw_layer_info *info;    /* one per layer */
    int error_index;
    char *error;
    int64_t trainable, non_trainable;
};

enum { PROP_0, PROP_PATH, PROP_MODIFIED, PROP_CAN_UNDO, PROP_CAN_REDO, N_PROPS };
static GParamSpec *props[N_PROPS];

enum { CHANGED, CHANGING, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(TwModelDoc, tw_model_doc, G_TYPE_OBJECT)

static GQuark doc_error_quark(void)
{
    return g_quark_from_static_string("tw-model-doc-error");
}

static gboolean fail(GError **error, const char *message)
{
    g_set_error_literal(error, doc_error_quark(), 0, message);
    return FALSE;
}

static gboolean engine_fail(GError **error)
{
    return fail(error, tw_last_error());
}

static void step_free(gpointer data)
{
    Step *step = data;
    free(step->before);
    free(step->after);
    g_free(step);
}

/* ---- inference ------------------------------------------------------------ */
static void set_error(TwModelDoc *doc, int index, const char *message)
{
    doc->error_index = index;
    g_free(doc->error);
    doc->error = message ? g_strdup(message) : NULL;
}

static void infer(TwModelDoc *doc)
{
    int n = tw_model_nlayers(doc->model);
    g_free(doc->info);
    doc->info = g_new0(tw_layer_info, MAX(n, 1));
    doc->trainable = doc->non_trainable = 0;
    const tw_shape *input = tw_model_input_shape(doc->model);
    if (n == 0 || !input) {
        set_error(doc, n, n ? no_input_message : no_layers_message);
        return;
    }
    int fitted = tw_model_infer(doc->model, input, doc->info);
    if (fitted < 0) {
        set_error(doc, n, tw_last_error());
        return;
    }
    for (int i = 0; i < fitted; i++) {
        doc->trainable += doc->info[i].trainable_params;
        doc->non_trainable += doc->info[i].non_trainable_params;
    }
    set_error(doc, fitted < n ? fitted : -1, fitted < n ? doc->info[fitted].error : NULL);
}

/* ---- the model's state ---------------------------------------------------- */
static void notify_state(TwModelDoc *doc)
{
    g_object_notify_by_pspec(G_OBJECT(doc), props[PROP_MODIFIED]);
    g_object_notify_by_pspec(G_OBJECT(doc), props[PROP_CAN_UNDO]);
    g_object_notify_by_pspec(G_OBJECT(doc), props[PROP_CAN_REDO]);
}

/* Take over model and its JSON as the current state. */
static void set_state(TwModelDoc *doc, tw_model *model, char *json)
{
    tw_layer_unref(doc->model);
    free(doc->json);
    doc->model = model;
    doc->json = json;
    infer(doc);
    g_signal_emit(doc, signals[CHANGED], 0);
    notify_state(doc);
}

/* The model as its JSON reads back, and that JSON; NULL with the engine's
 * message when it does not read back. */
static tw_model *read_back(const tw_model *model, char **json_out)
{
    char *json = tw_model_to_json(model);
    if (!json)
        return NULL;
    tw_model *copy = tw_model_from_json(json, strlen(json), NULL);
    free(json);
    if (!copy)
        return NULL;
    *json_out = tw_model_to_json(copy);
    if (!*json_out) {
        tw_layer_unref(copy);
        return NULL;
    }
    return copy;
}

/* Put the current state back into the model after an edit that failed
 * half-way (the engine's calls leave it unchanged, but a move is two). */
static void revert(TwModelDoc *doc)
{
    tw_model *model = tw_model_from_json(doc->json, strlen(doc->json), NULL);
    g_return_if_fail(model != NULL);
    tw_layer_unref(doc->model);
    doc->model = model;
}

/* Before an edit, undo, redo or load reads or touches doc->model: a
 * pending edit elsewhere is made first (model_doc.h, "changing"). */
static void begin_edit(TwModelDoc *doc)
{
    g_signal_emit(doc, signals[CHANGING], 0);
}

/* After an edit of doc->model: one undo step, unless nothing changed. */
static gboolean commit(TwModelDoc *doc, GError **error)
{
    char *json;
    tw_model *model = read_back(doc->model, &json);
    if (!model) {
        g_set_error(error, doc_error_quark(), 0, "the edited model does not read back: %s", tw_last_error());
        revert(doc);
        return FALSE;
    }
    if (!strcmp(json, doc->json)) { /* the same value again: no step */
        tw_layer_unref(model);
        free(json);
        return TRUE;
    }
    Step *step = g_new(Step, 1);
    step->before = strdup(doc->json);
    step->after = strdup(json);
    g_ptr_array_add(doc->undo, step);
    if (doc->undo->len > MAX_UNDO)
        g_ptr_array_remove_index(doc->undo, 0);
    g_ptr_array_set_size(doc->redo, 0);
    set_state(doc, model, json);
    return TRUE;
}

static tw_model *parse_json(const char *json, const char *source_name)
{
    return tw_model_from_json(json, strlen(json), source_name);
}

/* ---- GObject -------------------------------------------------------------- */
static void tw_model_doc_finalize(GObject *object)
{
    TwModelDoc *doc = TW_MODEL_DOC(object);
    tw_layer_unref(doc->model);
    free(doc->json);
    g_free(doc->saved_json);
    g_free(doc->path);
    g_ptr_array_unref(doc->undo);
    g_ptr_array_unref(doc->redo);
    g_free(doc->info);
    g_free(doc->error);
    G_OBJECT_CLASS(tw_model_doc_parent_class)->finalize(object);
}

static void tw_model_doc_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    TwModelDoc *doc = TW_MODEL_DOC(object);
    switch (id) {
    case PROP_PATH:
        g_value_set_string(value, doc->path);
        break;
    case PROP_MODIFIED:
        g_value_set_boolean(value, tw_model_doc_modified(doc));
        break;
    case PROP_CAN_UNDO:
        g_value_set_boolean(value, tw_model_doc_can_undo(doc));
        break;
    case PROP_CAN_REDO:
        g_value_set_boolean(value, tw_model_doc_can_redo(doc));
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void tw_model_doc_class_init(TwModelDocClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    object_class->finalize = tw_model_doc_finalize;
    object_class->get_property = tw_model_doc_get_property;
    props[PROP_PATH] = g_param_spec_string("path", NULL, NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    props[PROP_MODIFIED] =
        g_param_spec_boolean("modified", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    props[PROP_CAN_UNDO] =
        g_param_spec_boolean("can-undo", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    props[PROP_CAN_REDO] =
        g_param_spec_boolean("can-redo", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(object_class, N_PROPS, props);
    signals[CHANGED] = g_signal_new("changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                    G_TYPE_NONE, 0);
    signals[CHANGING] = g_signal_new("changing", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                     G_TYPE_NONE, 0);
}

static void tw_model_doc_init(TwModelDoc *doc)
{
    doc->undo = g_ptr_array_new_with_free_func(step_free);
    doc->redo = g_ptr_array_new_with_free_func(step_free);
    doc->error_index = -1;
}

TwModelDoc *tw_model_doc_new(void)
{
    TwModelDoc *doc = g_object_new(TW_TYPE_MODEL_DOC, NULL);
    tw_model *model = tw_sequential_new("model");
    tw_shape shape = {3, {-1, 28, 28}};
    tw_model_add(model, tw_input_layer(&shape));
    char *json;
    tw_model *read = read_back(model, &json);
    tw_layer_unref(model);
    g_assert(read != NULL);
    doc->saved_json = g_strdup(json);
    set_state(doc, read, json);
    return doc;
}

/* ---- files ---------------------------------------------------------------- */
/* Keras' "build_input_shape" of a model without an input layer belongs, in
 * the designer, to the first layer, where the property editor shows it. */
static void move_model_input_shape(tw_model *model)
{
    tw_layer *first = tw_model_layer_at(model, 0);
    const tw_shape *own = tw_layer_input_shape(model);
    if (!own || !first || tw_layer_is_model(first))
        return;
    if (!tw_layer_input_shape(first))
        tw_layer_set_input_shape(first, own);
    tw_layer_set_input_shape(model, NULL);
}

static gboolean replace_model(TwModelDoc *doc, tw_model *loaded, const char *path, GError **error)
{
    if (!loaded)
        return engine_fail(error);
    if (!tw_layer_is_model(loaded)) {
        tw_layer_unref(loaded);
        return fail(error, "the file holds a single layer, not a Sequential model");
    }
    move_model_input_shape(loaded);
    char *json;
    tw_model *model = read_back(loaded, &json);
    tw_layer_unref(loaded);
    if (!model)
        return engine_fail(error);
    g_ptr_array_set_size(doc->undo, 0);
    g_ptr_array_set_size(doc->redo, 0);
    g_free(doc->saved_json);
    doc->saved_json = g_strdup(json);
    g_free(doc->path);
    doc->path = g_strdup(path);
    set_state(doc, model, json);
    g_object_notify_by_pspec(G_OBJECT(doc), props[PROP_PATH]);
    return TRUE;
}

gboolean tw_model_doc_load(TwModelDoc *doc, const char *path, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && path, FALSE);
    begin_edit(doc);
    return replace_model(doc, tw_model_load(path), path, error);
}

gboolean tw_model_doc_load_json(TwModelDoc *doc, const char *json, const char *source_name, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && json, FALSE);
    begin_edit(doc);
    return replace_model(doc, parse_json(json, source_name), NULL, error);
}

gboolean tw_model_doc_save(TwModelDoc *doc, const char *path, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && path, FALSE);
    if (tw_model_save(doc->model, path))
        return engine_fail(error);
    g_free(doc->saved_json);
    doc->saved_json = g_strdup(doc->json);
    if (g_strcmp0(doc->path, path)) {
        char *copy = g_strdup(path);
        g_free(doc->path);
        doc->path = copy;
        g_object_notify_by_pspec(G_OBJECT(doc), props[PROP_PATH]);
    }
    g_object_notify_by_pspec(G_OBJECT(doc), props[PROP_MODIFIED]);
    return TRUE;
}

char *tw_model_doc_to_json(TwModelDoc *doc)
{
    return g_strdup(doc->json);
}

const char *tw_model_doc_path(TwModelDoc *doc)
{
    return doc->path;
}

gboolean tw_model_doc_modified(TwModelDoc *doc)
{
    return g_strcmp0(doc->json, doc->saved_json) != 0;
}

gboolean tw_model_doc_is_graph(TwModelDoc *doc)
{
    return doc->model && tw_layer_is_functional(doc->model);
}

tw_model *tw_model_doc_model(TwModelDoc *doc)
{
    return doc->model;
}

int tw_model_doc_n_layers(TwModelDoc *doc)
{
    return tw_model_nlayers(doc->model);
}

tw_layer *tw_model_doc_layer(TwModelDoc *doc, int index)
{
    return tw_model_layer_at(doc->model, index);
}

/* ---- edits ---------------------------------------------------------------- */
static gboolean check_index(TwModelDoc *doc, int index, int count, GError **error)
{
    if (index >= 0 && index < count)
        return TRUE;
    g_set_error(error, doc_error_quark(), 0, "layer index %d is out of range for %d layers", index,
                tw_model_doc_n_layers(doc));
    return FALSE;
}

/* The input shape belongs to the top of the stack: when an edit puts
 * another layer first, that layer takes over the shape the model had. */
static void keep_input_shape_on_top(TwModelDoc *doc, const tw_shape *had)
{
    tw_layer *first = tw_model_layer_at(doc->model, 0);
    if (had->ndim && first && !tw_layer_is_model(first) && !tw_model_input_shape(doc->model))
        tw_layer_set_input_shape(first, had);
}

static tw_shape input_shape_now(TwModelDoc *doc)
{
    const tw_shape *shape = tw_model_input_shape(doc->model);
    return shape ? *shape : (tw_shape){0};
}

/* A structural edit: rc 0 from the engine, then the shape rule, then commit. */
static gboolean finish_structural(TwModelDoc *doc, int rc, const tw_shape *had, GError **error)
{
    if (rc) {
        revert(doc);
        return engine_fail(error);
    }
    keep_input_shape_on_top(doc, had);
    return commit(doc, error);
}

gboolean tw_model_doc_insert(TwModelDoc *doc, int index, const char *class_name, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && class_name, FALSE);
    begin_edit(doc);
    if (!check_index(doc, index, tw_model_doc_n_layers(doc) + 1, error))
        return FALSE;
    tw_layer *layer = tw_layer_new(class_name, NULL);
    if (!layer)
        return engine_fail(error);
    tw_shape had = input_shape_now(doc);
    return finish_structural(doc, tw_model_insert(doc->model, index, layer), &had, error);
}

gboolean tw_model_doc_remove(TwModelDoc *doc, int index, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc), FALSE);
    begin_edit(doc);
    if (!check_index(doc, index, tw_model_doc_n_layers(doc), error))
        return FALSE;
    tw_shape had = input_shape_now(doc);
    return finish_structural(doc, tw_model_remove(doc->model, index), &had, error);
}

gboolean tw_model_doc_move(TwModelDoc *doc, int from, int to, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc), FALSE);
    begin_edit(doc);
    int n = tw_model_doc_n_layers(doc);
    if (!check_index(doc, from, n, error) || !check_index(doc, to, n, error))
        return FALSE;
    if (from == to)
        return TRUE;
    tw_shape had = input_shape_now(doc);
    tw_layer *layer = tw_layer_ref(tw_model_layer_at(doc->model, from));
    int rc = tw_model_remove(doc->model, from);
    if (rc)
        tw_layer_unref(layer);
    else
        rc = tw_model_insert(doc->model, to, layer);
    return finish_structural(doc, rc, &had, error);
}

gboolean tw_model_doc_duplicate(TwModelDoc *doc, int index, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc), FALSE);
    begin_edit(doc);
    if (!check_index(doc, index, tw_model_doc_n_layers(doc), error))
        return FALSE;
    tw_layer *copy = tw_layer_clone(tw_model_layer_at(doc->model, index), NULL);
    if (!copy)
        return engine_fail(error);
    tw_layer_set_input_shape(copy, NULL); /* only the first layer's counts */
    tw_shape had = input_shape_now(doc);
    return finish_structural(doc, tw_model_insert(doc->model, index + 1, copy), &had, error);
}

gboolean tw_model_doc_set_param(TwModelDoc *doc, int index, const char *key, const char *text, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && key && text, FALSE);
    begin_edit(doc);
    if (!check_index(doc, index, tw_model_doc_n_layers(doc), error))
        return FALSE;
    if (tw_layer_set(tw_model_layer_at(doc->model, index), key, text))
        return engine_fail(error);
    return commit(doc, error);
}

gboolean tw_model_doc_rename_layer(TwModelDoc *doc, int index, const char *name, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && name, FALSE);
    begin_edit(doc);
    int n = tw_model_doc_n_layers(doc);
    if (!check_index(doc, index, n, error))
        return FALSE;
    for (int i = 0; i < n; i++)
        if (i != index && !strcmp(tw_layer_name(tw_model_layer_at(doc->model, i)), name)) {
            g_set_error(error, doc_error_quark(), 0, "another layer is already named \"%s\"; names must be unique",
                        name);
            return FALSE;
        }
    if (tw_layer_set_name(tw_model_layer_at(doc->model, index), name))
        return engine_fail(error);
    return commit(doc, error);
}

/* One size of an input shape: a positive integer, or None/?/-1 for unknown. */
static gboolean parse_size(const char *text, int64_t *out)
{
    if (!g_ascii_strcasecmp(text, "none") || !strcmp(text, "?") || !strcmp(text, "-1")) {
        *out = -1;
        return TRUE;
    }
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end || errno || v < 1)
        return FALSE;
    *out = v;
    return TRUE;
}

/* "28,28,1", "(28, 28, 1)", "[None, 10]" or "(13,)" into (None, ...);
 * empty text clears the shape (ndim 0). */
static gboolean parse_input_shape(const char *text, tw_shape *shape, GError **error)
{
    char *inner = g_strstrip(g_strdelimit(g_strdup(text), "()[]", ' '));
    char **parts = g_strsplit(inner, ",", -1);
    int n = g_strv_length(parts);
    if (n > 1 && !g_strstrip(parts[n - 1])[0])
        n--; /* Python's one-element tuple "(13,)" */
    gboolean ok = n + 1 <= TW_MAX_DIMS;
    *shape = (tw_shape){inner[0] ? n + 1 : 0, {-1}};
    for (int i = 0; ok && i + 1 < shape->ndim; i++)
        ok = parse_size(g_strstrip(parts[i]), &shape->dims[i + 1]);
    if (!ok)
        g_set_error(error, doc_error_quark(), 0,
                    "input shape: expected up to %d sizes separated by commas such as 28,28,1 (None for an "
                    "unknown size), got \"%s\"",
                    TW_MAX_DIMS - 1, text);
    g_strfreev(parts);
    g_free(inner);
    return ok;
}

gboolean tw_model_doc_set_input_shape(TwModelDoc *doc, int index, const char *text, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && text, FALSE);
    begin_edit(doc);
    tw_shape shape;
    if (!check_index(doc, index, tw_model_doc_n_layers(doc), error) || !parse_input_shape(text, &shape, error))
        return FALSE;
    if (tw_layer_set_input_shape(tw_model_layer_at(doc->model, index), shape.ndim ? &shape : NULL))
        return engine_fail(error);
    return commit(doc, error);
}

/* ---- undo and redo -------------------------------------------------------- */
gboolean tw_model_doc_can_undo(TwModelDoc *doc)
{
    return doc->undo->len > 0;
}

gboolean tw_model_doc_can_redo(TwModelDoc *doc)
{
    return doc->redo->len > 0;
}

/* Move the newest step from one history to the other and restore its
 * before (undo) or after (redo) state. */
static gboolean travel(TwModelDoc *doc, GPtrArray *from, GPtrArray *to, gboolean undo)
{
    if (!from->len)
        return FALSE;
    Step *step = g_ptr_array_steal_index(from, from->len - 1);
    const char *json = undo ? step->before : step->after;
    tw_model *model = parse_json(json, NULL);
    if (!model) {
        g_warning("model history: a recorded state does not read back: %s", tw_last_error());
        step_free(step);
        return FALSE;
    }
    char *copy = strdup(json);
    g_ptr_array_add(to, step);
    set_state(doc, model, copy);
    return TRUE;
}

gboolean tw_model_doc_undo(TwModelDoc *doc)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc), FALSE);
    begin_edit(doc);
    return travel(doc, doc->undo, doc->redo, TRUE);
}

gboolean tw_model_doc_redo(TwModelDoc *doc)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc), FALSE);
    begin_edit(doc);
    return travel(doc, doc->redo, doc->undo, FALSE);
}

/* ---- inference results ---------------------------------------------------- */
const tw_layer_info *tw_model_doc_info(TwModelDoc *doc, int index)
{
    if (index < 0 || index >= tw_model_doc_n_layers(doc))
        return NULL;
    return &doc->info[index];
}

int tw_model_doc_error_index(TwModelDoc *doc)
{
    return doc->error_index;
}

const char *tw_model_doc_error(TwModelDoc *doc)
{
    return doc->error;
}

void tw_model_doc_totals(TwModelDoc *doc, int64_t *trainable, int64_t *non_trainable)
{
    if (trainable)
        *trainable = doc->trainable;
    if (non_trainable)
        *non_trainable = doc->non_trainable;
}

tw_model *tw_model_doc_copy_model(TwModelDoc *doc, GError **error)
{
    tw_model *copy = parse_json(doc->json, NULL);
    if (!copy)
        engine_fail(error);
    return copy;
}
