/* Keras' Functional models in JSON, read and written.
 *
 * A Functional config is {"name", "layers", "input_layers",
 * "output_layers"}; each layer carries its "inbound_nodes", one per call:
 *   Keras 2: [[["dense", 0, 0, {}], ...], ...], each input as
 *            [layer, node_index, tensor_index, kwargs];
 *   Keras 3: [{"args": [...], "kwargs": {...}}, ...], the inputs being the
 *            {"class_name": "__keras_tensor__", "config": {"keras_history":
 *            [layer, node_index, tensor_index]}} found in args, in order
 *            (Add's args hold one list of them, MultiHeadAttention's two).
 * Node indices count a layer's calls within the model, except that Keras
 * 2 counts a nested model's own construction as its node 0 (Keras'
 * _should_skip_first_node), so its calls there start at 1.
 *
 * Reading calls the layers in dependency order as Keras' from_config does
 * (a layer's calls in order, a call once its inputs exist), through the
 * engine's tw_apply, so shapes are checked where the file makes them
 * meet; a failure is reported at its place: "layers[12] 'add_1'
 * .inbound_nodes[0][1]: ...". Writing follows the model's own order. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_json_internal.h"
#include "tw/error.h"

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *message = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    tw_error_set("%s", message);
    g_free(message);
    return -1;
}

static const char *string_of(JsonNode *node)
{
    return node && JSON_NODE_HOLDS_VALUE(node) && json_node_get_value_type(node) == G_TYPE_STRING
               ? json_node_get_string(node)
               : NULL;
}

static bool int_of(JsonNode *node, int64_t *out)
{
    if (!node || !JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_INT64)
        return false;
    *out = json_node_get_int(node);
    return true;
}

/* ---- reading ---------------------------------------------------------------- */

/* An input of a call: (layer, node, tensor) and where the file says it. */
typedef struct {
    int layer;
    int64_t node, tensor;
    char *path;
    JsonNode *shape; /* Keras 3's record of the tensor's shape; NULL in Keras 2's form */
} ref;

typedef struct {
    tw_layer *layer; /* a reference until the graph takes it */
    const char *name;
    char *path;      /* "layers[3] 'dense'" */
    JsonArray *nodes;
    int ncalls;      /* calls listed in the file (an InputLayer: its own 1) */
    int offset;      /* node index of the first call: 1 for Keras 2's nested models */
    int done;        /* calls made so far */
    tw_node ***outputs; /* per call: its outputs, NULL-terminated */
    int *noutputs;
} entry;

typedef struct {
    entry *entries;
    int n;
    GHashTable *by_name; /* name -> index + 1 */
    bool keras2;         /* node lists as nested lists: Keras 2's node numbering */
} graph;

static void refs_free(GPtrArray *refs)
{
    for (guint i = 0; i < refs->len; i++) {
        ref *r = refs->pdata[i];
        g_free(r->path);
        g_free(r);
    }
    g_ptr_array_free(refs, TRUE);
}

/* [layer, node, tensor] (Keras 2's may carry a fourth, kwargs) at path. */
static int parse_history(graph *g, JsonNode *node, const char *path, GPtrArray *refs)
{
    JsonArray *a = JSON_NODE_HOLDS_ARRAY(node) ? json_node_get_array(node) : NULL;
    guint n = a ? json_array_get_length(a) : 0;
    const char *name = n >= 3 ? string_of(json_array_get_element(a, 0)) : NULL;
    int64_t node_index, tensor_index;
    if (!name || !int_of(json_array_get_element(a, 1), &node_index) ||
        !int_of(json_array_get_element(a, 2), &tensor_index) || n > 4)
        return fail("%s: expected [layer name, node index, tensor index], got %s", path,
                    a ? "another list" : tw__json_describe(node));
    int index = GPOINTER_TO_INT(g_hash_table_lookup(g->by_name, name)) - 1;
    if (index < 0)
        return fail("%s: no layer named '%s' in the model", path, name);
    entry *from = &g->entries[index];
    int64_t local = node_index - from->offset;
    if (local < 0 || local >= from->ncalls || tensor_index < 0)
        return fail("%s: layer '%s' has no node %lld (it is called %d time%s)", path, name, (long long)node_index,
                    from->ncalls, from->ncalls == 1 ? "" : "s");
    ref *r = g_new0(ref, 1);
    *r = (ref){index, local, tensor_index, g_strdup(path)};
    g_ptr_array_add(refs, r);
    return 0;
}

/* Keras 3's args: every __keras_tensor__ in them, depth first. */
static int collect_tensors(graph *g, JsonNode *node, const char *path, GPtrArray *refs)
{
    if (JSON_NODE_HOLDS_ARRAY(node)) {
        JsonArray *a = json_node_get_array(node);
        for (guint i = 0; i < json_array_get_length(a); i++) {
            char *p = g_strdup_printf("%s[%u]", path, i);
            int rc = collect_tensors(g, json_array_get_element(a, i), p, refs);
            g_free(p);
            if (rc)
                return -1;
        }
        return 0;
    }
    JsonObject *obj = JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
    const char *class_name = obj ? string_of(json_object_get_member(obj, "class_name")) : NULL;
    if (!class_name || strcmp(class_name, "__keras_tensor__"))
        return 0; /* a constant argument: nothing to wire */
    JsonNode *config = json_object_get_member(obj, "config");
    JsonObject *c = config && JSON_NODE_HOLDS_OBJECT(config) ? json_node_get_object(config) : NULL;
    JsonNode *history = c ? json_object_get_member(c, "keras_history") : NULL;
    char *p = g_strdup_printf("%s.config.keras_history", path);
    int rc = history ? parse_history(g, history, p, refs) : fail("%s: missing", p);
    g_free(p);
    if (!rc)
        ((ref *)refs->pdata[refs->len - 1])->shape = json_object_get_member(c, "shape");
    return rc;
}

/* Recurrent layers (and Bidirectional) take their initial states as
 * further inputs after the sequence; Keras 3 passes them as the keyword
 * argument initial_state. */
static bool takes_initial_state(const tw_layer *layer)
{
    const tw_layer_class *klass = tw_layer_class_of(layer);
    return tw_layer_class_param(klass, "return_state") || !strcmp(klass->name, "Bidirectional");
}

bool tw__json_is_call_argument(const char *key)
{
    return !strcmp(key, "use_causal_mask") || !strcmp(key, "attention_mask");
}

/* A call's use_causal_mask: MultiHeadAttention's parameter of that name,
 * Attention's causal. Other flags (training, mask: null) change nothing
 * here. */
static int read_call_flag(const entry *e, int k, const char *name, JsonNode *value, const char *path)
{
    if (strcmp(name, "use_causal_mask"))
        return 0;
    if (!JSON_NODE_HOLDS_VALUE(value) || json_node_get_value_type(value) != G_TYPE_BOOLEAN)
        return fail("%s: expected true or false, got %s", path, tw__json_describe(value));
    bool on = json_node_get_boolean(value);
    const tw_layer_class *klass = tw_layer_class_of(e->layer);
    const char *key = tw_layer_class_param(klass, "use_causal_mask") ? "use_causal_mask"
                      : tw_layer_class_param(klass, "causal")         ? "causal"
                                                                      : NULL;
    if (!key)
        return on ? fail("%s: %s '%s' takes no causal mask", path, klass->name, e->name) : 0;
    bool had = tw_layer_get(e->layer, key)->number != 0;
    if (k > 0 && had != on)
        return fail("%s: the calls of shared layer '%s' differ in use_causal_mask; one value for all its calls is "
                    "supported",
                    path, e->name);
    if (had != on && tw_layer_set(e->layer, key, on ? "true" : "false"))
        return fail("%s: %s", path, tw_last_error());
    return 0;
}

/* MultiHeadAttention's call takes query, value and key as separate
 * arguments, by position or by name, and attention_mask by name; the
 * engine's inputs are (query, value[, key][, attention_mask]), its
 * attention_mask parameter saying whether the last is the mask. */
static const char *const attention_arguments[] = {"query", "value", "key", "attention_mask"};
enum { NATTENTION_ARGUMENTS = 4 };

static bool takes_attention_arguments(const tw_layer *layer)
{
    return tw_layer_class_param(tw_layer_class_of(layer), "attention_mask") != NULL;
}

/* Keras 2 writes a tensor in kwargs as [layer, node, tensor] (in lists for
 * several); Keras 3 as a __keras_tensor__ object. */
static int kwarg_tensors(graph *g, JsonNode *node, const char *path, bool keras2, GPtrArray *found)
{
    if (!keras2)
        return collect_tensors(g, node, path, found);
    JsonArray *a = JSON_NODE_HOLDS_ARRAY(node) ? json_node_get_array(node) : NULL;
    if (!a)
        return 0;
    int64_t i64;
    if (json_array_get_length(a) == 3 && string_of(json_array_get_element(a, 0)) &&
        int_of(json_array_get_element(a, 1), &i64) && int_of(json_array_get_element(a, 2), &i64))
        return parse_history(g, node, path, found);
    for (guint i = 0; i < json_array_get_length(a); i++) {
        char *p = g_strdup_printf("%s[%u]", path, i);
        int rc = kwarg_tensors(g, json_array_get_element(a, i), p, keras2, found);
        g_free(p);
        if (rc)
            return -1;
    }
    return 0;
}

/* The tensors of keyword argument `name`: a recurrent layer's
 * initial_state becomes inputs after the args'; MultiHeadAttention's
 * arguments go to their place in named; any other tensor there (a mask
 * Keras derives, Attention's mask) is an input this reader does not wire. */
static int read_tensor_kwarg(graph *g, const entry *e, const char *name, JsonNode *value, const char *path,
                             bool keras2, GPtrArray *refs, ref **named)
{
    GPtrArray *found = g_ptr_array_new();
    int rc = kwarg_tensors(g, value, path, keras2, found);
    int slot = -1;
    for (int i = 0; takes_attention_arguments(e->layer) && i < NATTENTION_ARGUMENTS; i++)
        if (!strcmp(name, attention_arguments[i]))
            slot = i;
    if (rc || !found->len) {
    } else if (!strcmp(name, "initial_state") && takes_initial_state(e->layer)) {
        for (guint i = 0; i < found->len; i++)
            g_ptr_array_add(refs, found->pdata[i]);
        g_ptr_array_set_size(found, 0);
    } else if (slot >= 0 && found->len == 1 && !named[slot]) {
        named[slot] = g_ptr_array_steal_index(found, 0);
    } else if (slot >= 0) {
        rc = fail("%s: expected one tensor for %s's '%s'%s", path, tw_layer_class_of(e->layer)->name, name,
                  named[slot] ? ", which the call also gives by position" : "");
    } else {
        rc = fail("%s: a tensor passed as keyword argument '%s' is not supported", path, name);
    }
    refs_free(found);
    return rc;
}

/* Keras 3's kwargs: flags (training, mask: null, use_causal_mask) and
 * tensors (read_tensor_kwarg). */
static int read_kwargs(graph *g, const entry *e, int k, JsonNode *kwargs, const char *path, GPtrArray *refs,
                       ref **named)
{
    if (!kwargs || !JSON_NODE_HOLDS_OBJECT(kwargs))
        return 0;
    JsonObject *obj = json_node_get_object(kwargs);
    GList *members = json_object_get_members(obj);
    int rc = 0;
    for (GList *m = members; m && !rc; m = m->next) {
        JsonNode *value = json_object_get_member(obj, m->data);
        char *p = g_strdup_printf("%s.%s", path, (const char *)m->data);
        if (!strcmp(m->data, "use_causal_mask"))
            rc = read_call_flag(e, k, m->data, value, p);
        else
            rc = read_tensor_kwarg(g, e, m->data, value, p, false, refs, named);
        g_free(p);
    }
    g_list_free(members);
    return rc;
}

/* MultiHeadAttention's inputs in the engine's order, from the positional
 * ones (query, value, key) in refs and the named ones; the layer's
 * attention_mask set to whether the call passes one. */
static int arrange_attention_inputs(const entry *e, int k, const char *path, GPtrArray *refs, ref **named)
{
    int rc = 0;
    if (refs->len > 3)
        rc = fail("%s: %s '%s' takes at most 3 tensors by position (query, value, key), got %u", path,
                  tw_layer_class_of(e->layer)->name, e->name, refs->len);
    for (guint i = 0; !rc && i < refs->len && i < 3; i++)
        if (named[i])
            rc = fail("%s: '%s' is given both by position and by name", named[i]->path, attention_arguments[i]);
    if (rc)
        return rc;
    for (guint i = 0; i < refs->len; i++)
        named[i] = refs->pdata[i];
    g_ptr_array_set_size(refs, 0);
    for (int i = 0; i < NATTENTION_ARGUMENTS; i++)
        if (named[i])
            g_ptr_array_add(refs, named[i]);
    if (!named[0] || !named[1]) {
        for (int i = 0; i < NATTENTION_ARGUMENTS; i++)
            named[i] = NULL; /* now in refs, freed with them */
        return fail("%s: %s '%s' needs a query and a value", path, tw_layer_class_of(e->layer)->name, e->name);
    }
    bool masked = named[3] != NULL, had = tw_layer_get(e->layer, "attention_mask")->number != 0;
    for (int i = 0; i < NATTENTION_ARGUMENTS; i++)
        named[i] = NULL;
    if (k > 0 && had != masked)
        return fail("%s: the calls of shared layer '%s' differ in passing an attention_mask; all or none is "
                    "supported",
                    path, e->name);
    if (had != masked && tw_layer_set(e->layer, "attention_mask", masked ? "true" : "false"))
        return fail("%s: %s", path, tw_last_error());
    return 0;
}

/* The inputs of call k of entry e, into refs. */
static int parse_call(graph *g, const entry *e, int k, GPtrArray *refs)
{
    JsonNode *node = json_array_get_element(e->nodes, (guint)k);
    char *path = g_strdup_printf("%s.inbound_nodes[%d]", e->path, k);
    ref *named[NATTENTION_ARGUMENTS] = {NULL};
    int rc = 0;
    if (JSON_NODE_HOLDS_ARRAY(node)) {
        JsonArray *a = json_node_get_array(node);
        g->keras2 = true;
        /* A layer that keeps its input's structure (TFOpLambda) has its one
         * input written unwrapped: ["dense", 0, 0, {kwargs}]. */
        bool flat = json_array_get_length(a) && string_of(json_array_get_element(a, 0));
        guint n = flat ? 1 : json_array_get_length(a);
        for (guint i = 0; i < n && !rc; i++) {
            char *p = flat ? g_strdup(path) : g_strdup_printf("%s[%u]", path, i);
            JsonNode *item = flat ? node : json_array_get_element(a, i);
            rc = parse_history(g, item, p, refs);
            /* Keras 2 keeps the call's keyword arguments in each input's
             * fourth item, the same for every input: flags read from each,
             * tensors from the first. */
            JsonArray *h = JSON_NODE_HOLDS_ARRAY(item) ? json_node_get_array(item) : NULL;
            JsonNode *kw = h && json_array_get_length(h) == 4 ? json_array_get_element(h, 3) : NULL;
            JsonObject *kwo = kw && JSON_NODE_HOLDS_OBJECT(kw) ? json_node_get_object(kw) : NULL;
            GList *members = kwo ? json_object_get_members(kwo) : NULL;
            for (GList *m = members; m && !rc; m = m->next) {
                char *mp = g_strdup_printf("%s[3].%s", p, (const char *)m->data);
                JsonNode *value = json_object_get_member(kwo, m->data);
                if (!strcmp(m->data, "use_causal_mask"))
                    rc = read_call_flag(e, k, m->data, value, mp);
                else if (i == 0)
                    rc = read_tensor_kwarg(g, e, m->data, value, mp, true, refs, named);
                g_free(mp);
            }
            g_list_free(members);
            g_free(p);
        }
    } else if (JSON_NODE_HOLDS_OBJECT(node) && json_object_has_member(json_node_get_object(node), "args")) {
        JsonObject *obj = json_node_get_object(node);
        char *p = g_strdup_printf("%s.args", path);
        rc = collect_tensors(g, json_object_get_member(obj, "args"), p, refs);
        g_free(p);
        if (!rc) {
            p = g_strdup_printf("%s.kwargs", path);
            rc = read_kwargs(g, e, k, json_object_get_member(obj, "kwargs"), p, refs, named);
            g_free(p);
        }
    } else {
        rc = fail("%s: expected a list of inputs or {\"args\": ..., \"kwargs\": ...}, got %s", path,
                  tw__json_describe(node));
    }
    if (!rc && takes_attention_arguments(e->layer))
        rc = arrange_attention_inputs(e, k, path, refs, named);
    for (int i = 0; i < NATTENTION_ARGUMENTS; i++)
        if (named[i]) { /* not placed: the call was refused */
            g_free(named[i]->path);
            g_free(named[i]);
        }
    if (!rc && refs->len == 0)
        rc = fail("%s: the call has no inputs", path);
    if (!rc && refs->len > TW_MAX_LAYER_IO)
        rc = fail("%s: %u inputs; at most %d", path, refs->len, TW_MAX_LAYER_IO);
    g_free(path);
    return rc;
}

/* A layer whose shape is made by code not in the file (a Lambda, a class
 * the engine does not know) and not declared there. */
static bool shapeless_code(const entry *e)
{
    const tw_param_value *shape = tw_layer_get(e->layer, "output_shape");
    return (!strcmp(tw_layer_class_of(e->layer)->name, "Lambda") || tw_user_layer_keras(e->layer)) && shape &&
           shape->is_null;
}

/* Make call k of e when its inputs exist: 1 made, 0 waiting, -1 failed. */
static int try_call(graph *g, entry *e, int k)
{
    if (!strcmp(tw_layer_class_of(e->layer)->name, "InputLayer")) {
        tw_node *in = tw_input_from_layer(tw_layer_ref(e->layer));
        if (!in)
            return fail("%s: %s", e->path, tw_last_error());
        e->outputs[0] = g_new0(tw_node *, 1);
        e->outputs[0][0] = in;
        e->noutputs[0] = 1;
        e->done = 1;
        return 1;
    }
    GPtrArray *refs = g_ptr_array_new();
    int rc = parse_call(g, e, k, refs);
    tw_node *inputs[TW_MAX_LAYER_IO];
    for (guint i = 0; !rc && i < refs->len; i++) {
        ref *r = refs->pdata[i];
        entry *from = &g->entries[r->layer];
        if (r->node >= from->done) {
            rc = 1; /* not made yet */
            break;
        }
        if (r->tensor >= from->noutputs[r->node]) {
            rc = fail("%s: layer '%s' node %lld has %d output%s; tensor %lld does not exist", r->path, from->name,
                      (long long)(r->node + from->offset), from->noutputs[r->node],
                      from->noutputs[r->node] == 1 ? "" : "s", (long long)r->tensor);
            break;
        }
        inputs[i] = from->outputs[r->node][r->tensor];
    }
    if (rc) {
        refs_free(refs);
        return rc > 0 ? 0 : -1;
    }
    tw_node *outs[TW_MAX_LAYER_IO];
    int n = tw_apply_multi(tw_layer_ref(e->layer), (int)refs->len, inputs, outs);
    if (n < 0) {
        /* The inputs' places when the call's shapes do not meet. */
        const char *where = refs->len > 1 ? ((ref *)refs->pdata[refs->len - 1])->path : ((ref *)refs->pdata[0])->path;
        char *msg = g_strdup(tw_last_error());
        char *call = g_strdup_printf("%s.inbound_nodes[%d]", e->path, k);
        fail("%s: %s", refs->len > 1 ? where : call, msg);
        g_free(call);
        g_free(msg);
        refs_free(refs);
        return -1;
    }
    refs_free(refs);
    e->outputs[k] = g_new0(tw_node *, (gsize)n);
    memcpy(e->outputs[k], outs, sizeof *outs * (size_t)n);
    e->noutputs[k] = n;
    e->done++;
    return 1;
}

/* Keras 2 numbers a nested model's calls from 1 when the model was made
 * with its input known. */
static int first_node_index(const tw_layer *layer, bool keras2)
{
    return keras2 && tw_layer_is_model(layer) && tw_model_input_shape(layer) ? 1 : 0;
}

/* A Lambda whose output_shape is itself Python code (output_shape_type
 * "lambda") declares no shape: the layer, with the other keys, without it. */
static JsonNode *without_code_shape(JsonObject *layer)
{
    JsonNode *config = json_object_get_member(layer, "config");
    JsonObject *c = config && JSON_NODE_HOLDS_OBJECT(config) ? json_node_get_object(config) : NULL;
    const char *type = c ? string_of(json_object_get_member(c, "output_shape_type")) : NULL;
    if (!type || strcmp(type, "lambda"))
        return NULL;
    JsonObject *copy = json_object_new();
    GList *members = json_object_get_members(c);
    for (GList *m = members; m; m = m->next)
        if (strcmp(m->data, "output_shape"))
            json_object_set_member(copy, m->data, json_node_copy(json_object_get_member(c, m->data)));
    g_list_free(members);
    JsonObject *outer = json_object_new();
    json_object_set_string_member(outer, "class_name", "Lambda");
    json_object_set_object_member(outer, "config", copy);
    JsonNode *node = json_node_new(JSON_NODE_OBJECT);
    json_node_take_object(node, outer);
    return node;
}

/* A shape as Keras writes it ([null, 256]) as output_shape's text without
 * the batch axis ("256"; -1 for an unknown size); NULL when it is not one. */
static char *shape_text(JsonNode *node)
{
    JsonArray *a = node && JSON_NODE_HOLDS_ARRAY(node) ? json_node_get_array(node) : NULL;
    guint n = a ? json_array_get_length(a) : 0;
    if (n < 2)
        return NULL;
    GString *text = g_string_new(NULL);
    for (guint i = 1; i < n; i++) {
        JsonNode *d = json_array_get_element(a, i);
        int64_t v;
        if (JSON_NODE_HOLDS_NULL(d))
            v = -1;
        else if (!int_of(d, &v) || v < 0) {
            g_string_free(text, TRUE);
            return NULL;
        }
        g_string_append_printf(text, "%s%lld", i > 1 ? "," : "", (long long)v);
    }
    return g_string_free(text, FALSE);
}

/* A Lambda's output shape is Python code or absent (and a class the
 * engine does not know declares none), but a layer that takes its output
 * records what it was given: Keras 3 (and 2.13+) write each layer's
 * build_config.input_shape, the shapes of its first call's inputs in
 * order, and Keras 3 each input tensor's shape in the call itself. That
 * shape is the layer's output, read, not guessed. With no such record its
 * shape stays unknown (TW_SHAPE_UNKNOWN): the model opens and summarizes
 * with "?" there. */
static void lambda_shapes_from_consumers(graph *g, JsonArray *layers)
{
    for (int i = 0; i < g->n; i++) {
        entry *c = &g->entries[i];
        JsonObject *obj = json_node_get_object(json_array_get_element(layers, (guint)i));
        JsonNode *bc = json_object_get_member(obj, "build_config");
        JsonObject *bco = bc && JSON_NODE_HOLDS_OBJECT(bc) ? json_node_get_object(bc) : NULL;
        JsonNode *shapes = bco ? json_object_get_member(bco, "input_shape") : NULL;
        JsonArray *a = shapes && JSON_NODE_HOLDS_ARRAY(shapes) ? json_node_get_array(shapes) : NULL;
        for (int call = 0; call < (int)json_array_get_length(c->nodes); call++) {
            GPtrArray *refs = g_ptr_array_new();
            if (parse_call(g, c, call, refs))
                tw_error_clear(); /* reported at its place when the call is made */
            /* One input: input_shape is its shape; several: a list of shapes. */
            for (guint k = 0; k < refs->len; k++) {
                ref *r = refs->pdata[k];
                entry *from = &g->entries[r->layer];
                if (r->node != 0 || r->tensor != 0 || !shapeless_code(from))
                    continue;
                JsonNode *one = !a || call                    ? r->shape
                                : refs->len == 1              ? shapes
                                : k < json_array_get_length(a) ? json_array_get_element(a, k)
                                                                : NULL;
                char *text = shape_text(one);
                if (text && tw_layer_set(from->layer, "output_shape", text))
                    tw_error_clear(); /* left shapeless: its shape is unknown */
                g_free(text);
            }
            refs_free(refs);
        }
    }
}

static int read_entries(graph *g, JsonArray *layers, const char *prefix)
{
    g->n = (int)json_array_get_length(layers);
    g->entries = g_new0(entry, (gsize)(g->n ? g->n : 1));
    /* Keras 2's nested lists or Keras 3's objects: the first non-empty node says. */
    for (int i = 0; i < g->n && !g->keras2; i++) {
        JsonNode *node = json_array_get_element(layers, (guint)i); /* not an object: refused below */
        JsonObject *obj = JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
        JsonNode *nodes = obj ? json_object_get_member(obj, "inbound_nodes") : NULL;
        if (nodes && JSON_NODE_HOLDS_ARRAY(nodes) && json_array_get_length(json_node_get_array(nodes)))
            g->keras2 = JSON_NODE_HOLDS_ARRAY(json_array_get_element(json_node_get_array(nodes), 0));
    }
    for (int i = 0; i < g->n; i++) {
        entry *e = &g->entries[i];
        JsonNode *node = json_array_get_element(layers, (guint)i);
        char *at = g_strdup_printf("%slayers[%d]", prefix, i);
        JsonObject *obj = JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
        const char *class_name = obj ? string_of(json_object_get_member(obj, "class_name")) : NULL;
        bool input = class_name && !strcmp(class_name, "InputLayer");
        JsonNode *lambda = class_name && !strcmp(class_name, "Lambda") ? without_code_shape(obj) : NULL;
        e->layer = tw__json_read_layer(lambda ? lambda : node, input, at);
        if (lambda)
            json_node_unref(lambda);
        if (!e->layer) {
            g_free(at);
            return -1;
        }
        e->name = tw_layer_name(e->layer);
        e->path = g_strdup_printf("%s '%s'", at, e->name);
        g_free(at);
        if (g_hash_table_contains(g->by_name, e->name))
            return fail("%s: a second layer named '%s'; layer names must be unique", e->path, e->name);
        g_hash_table_insert(g->by_name, (gpointer)e->name, GINT_TO_POINTER(i + 1));
        JsonNode *nodes = json_object_get_member(obj, "inbound_nodes");
        if (!nodes || !JSON_NODE_HOLDS_ARRAY(nodes))
            return fail("%s.inbound_nodes: expected a list, got %s", e->path,
                        nodes ? tw__json_describe(nodes) : "nothing");
        e->nodes = json_node_get_array(nodes);
        e->ncalls = input ? 1 : (int)json_array_get_length(e->nodes);
        if (!input && e->ncalls == 0)
            return fail("%s.inbound_nodes: the layer is never called", e->path);
        e->offset = first_node_index(e->layer, g->keras2);
        e->outputs = g_new0(tw_node **, (gsize)e->ncalls);
        e->noutputs = g_new0(int, (gsize)e->ncalls);
    }
    lambda_shapes_from_consumers(g, layers);
    return 0;
}

/* Passes in file order until every call is made (InputLayers where the
 * file lists them, so the model keeps the file's order of layers); a pass
 * that makes none leaves calls waiting on each other: a cycle. */
static int make_calls(graph *g)
{
    for (bool progress = true; progress;) {
        progress = false;
        bool waiting = false;
        for (int i = 0; i < g->n; i++) {
            entry *e = &g->entries[i];
            while (e->done < e->ncalls) {
                int rc = try_call(g, e, e->done);
                if (rc < 0)
                    return -1;
                if (!rc) {
                    waiting = true;
                    break;
                }
                progress = true;
            }
        }
        if (waiting && !progress)
            break;
        if (!waiting)
            return 0;
    }
    for (int i = 0; i < g->n; i++) {
        entry *e = &g->entries[i];
        if (e->done < e->ncalls)
            return fail("%s.inbound_nodes[%d]: waits on a call that waits on it: the inbound_nodes form a cycle",
                        e->path, e->done);
    }
    return 0;
}

/* input_layers / output_layers: [[name, node, tensor], ...], or Keras 3's
 * single [name, node, tensor]. */
static int read_ends(graph *g, JsonObject *config, const char *key, const char *prefix, tw_node **out, int *n)
{
    JsonNode *node = json_object_get_member(config, key);
    char *path = g_strdup_printf("%s%s", prefix, key);
    int rc = 0;
    if (!node || !JSON_NODE_HOLDS_ARRAY(node)) {
        rc = fail("%s: expected a list such as [[\"input_1\", 0, 0]], got %s", path,
                  node ? tw__json_describe(node) : "nothing");
        g_free(path);
        return rc;
    }
    JsonArray *a = json_node_get_array(node);
    bool single = json_array_get_length(a) && string_of(json_array_get_element(a, 0));
    guint count = single ? 1 : json_array_get_length(a);
    if (count < 1 || count > TW_MAX_LAYER_IO)
        rc = fail("%s: expected 1 to %d entries, got %u", path, TW_MAX_LAYER_IO, count);
    *n = (int)count;
    for (guint i = 0; i < count && !rc; i++) {
        GPtrArray *refs = g_ptr_array_new();
        char *p = single ? g_strdup(path) : g_strdup_printf("%s[%u]", path, i);
        rc = parse_history(g, single ? node : json_array_get_element(a, i), p, refs);
        if (!rc) {
            ref *r = refs->pdata[0];
            entry *from = &g->entries[r->layer];
            if (r->tensor >= from->noutputs[r->node])
                rc = fail("%s: layer '%s' has no output %lld", p, from->name, (long long)r->tensor);
            else
                out[i] = from->outputs[r->node][r->tensor];
        }
        g_free(p);
        refs_free(refs);
    }
    g_free(path);
    return rc;
}

static void graph_free(graph *g)
{
    for (int i = 0; i < g->n; i++) {
        entry *e = &g->entries[i];
        tw_layer_unref(e->layer);
        g_free(e->path);
        for (int k = 0; e->outputs && k < e->ncalls; k++)
            g_free(e->outputs[k]);
        g_free(e->outputs);
        g_free(e->noutputs);
    }
    g_free(g->entries);
    g_hash_table_unref(g->by_name);
}

tw_model *tw__json_read_functional(JsonNode *config, const char *path)
{
    JsonObject *obj = JSON_NODE_HOLDS_OBJECT(config) ? json_node_get_object(config) : NULL;
    if (!obj) {
        fail("%s: expected an object with \"layers\", \"input_layers\" and \"output_layers\", got %s", path,
             tw__json_describe(config));
        return NULL;
    }
    JsonNode *layers = json_object_get_member(obj, "layers");
    if (!layers) {
        fail("%s: missing \"layers\"", path);
        return NULL;
    }
    if (!JSON_NODE_HOLDS_ARRAY(layers)) {
        fail("%s.layers: expected a list of layers, got %s", path, tw__json_describe(layers));
        return NULL;
    }
    const char *name = string_of(json_object_get_member(obj, "name"));
    /* The top level's places are "layers[3]"; a nested model's carry its path. */
    char *prefix = strcmp(path, "config") ? g_strdup_printf("%s.", path) : g_strdup("");
    graph g = {.by_name = g_hash_table_new(g_str_hash, g_str_equal)};
    tw_node *inputs[TW_MAX_LAYER_IO], *outputs[TW_MAX_LAYER_IO];
    int ninputs = 0, noutputs = 0;
    tw_model *model = NULL;
    /* The calls made here go on the thread's symbolic graph, and come off
     * it once the model holds them. */
    int64_t mark = tw_nodes_mark();
    if (!read_entries(&g, json_node_get_array(layers), prefix) && !make_calls(&g) &&
        !read_ends(&g, obj, "input_layers", prefix, inputs, &ninputs) &&
        !read_ends(&g, obj, "output_layers", prefix, outputs, &noutputs)) {
        model = tw_functional_new(name ? name : "functional", ninputs, inputs, noutputs, outputs);
        if (!model)
            fail("%s: %s", path, tw_last_error());
    }
    JsonNode *trainable = json_object_get_member(obj, "trainable");
    if (model && trainable && JSON_NODE_HOLDS_VALUE(trainable) &&
        json_node_get_value_type(trainable) == G_TYPE_BOOLEAN && !json_node_get_boolean(trainable))
        tw_layer_set_trainable(model, false);
    graph_free(&g);
    tw_nodes_release(mark);
    g_free(prefix);
    return model;
}

/* ---- writing ---------------------------------------------------------------- */

/* The call arguments a layer keeps as parameters, set ones only, as the
 * members of a kwargs object: "\"use_causal_mask\": true" or "". */
static char *call_kwargs(const tw_layer *layer)
{
    GString *s = g_string_new(NULL);
    const tw_layer_class *klass = tw_layer_class_of(layer);
    for (int i = 0; i < klass->nparams; i++)
        if (tw__json_is_call_argument(klass->params[i].key) && tw_layer_param(layer, i)->number &&
            strcmp(klass->params[i].key, "attention_mask")) /* a tensor, written with the inputs */
            g_string_append_printf(s, "%s\"%s\": true", s->len ? ", " : "", klass->params[i].key);
    return g_string_free(s, FALSE);
}

/* kwargs: Keras 2's fourth item's members (the call's keyword arguments),
 * NULL for none (Keras 3, or a tensor inside Keras 2's kwargs). */
static void put_history(GString *out, const tw_model *model, const tw_keras_history *h, tw_keras_json_format format,
                        const char *kwargs)
{
    const tw_layer *layer = tw_model_layer_at(model, h->layer);
    g_string_append_c(out, '[');
    tw__json_put_string(out, tw_layer_name(layer));
    int node = h->node_index + first_node_index(layer, format == TW_KERAS_JSON_2);
    g_string_append_printf(out, ", %d, %d", node, h->tensor_index);
    if (kwargs)
        g_string_append_printf(out, ", {%s}", kwargs);
    g_string_append_c(out, ']');
}

/* input_layers or output_layers: their calls numbered as inbound_nodes
 * number them (an output may be a nested model's call). */
static void put_ends(GString *out, const tw_model *model, bool inputs, tw_keras_json_format format)
{
    int n = inputs ? tw_functional_ninputs(model) : tw_functional_noutputs(model);
    g_string_append_c(out, '[');
    for (int i = 0; i < n; i++) {
        tw_keras_history h;
        if (inputs)
            tw_functional_input(model, i, &h);
        else
            tw_functional_output(model, i, &h);
        const tw_layer *layer = tw_model_layer_at(model, h.layer);
        g_string_append(out, i ? ", [" : "[");
        tw__json_put_string(out, tw_layer_name(layer));
        g_string_append_printf(out, ", %d, %d]", h.node_index + first_node_index(layer, format == TW_KERAS_JSON_2),
                               h.tensor_index);
    }
    g_string_append_c(out, ']');
}

/* Keras 3's {"class_name": "__keras_tensor__", ...} for input h. */
static void put_keras_tensor(GString *out, const tw_model *model, const tw_keras_history *h)
{
    tw_shape shapes[TW_MAX_LAYER_IO];
    tw_functional_call_outputs(model, h->layer, h->node_index, shapes);
    g_string_append(out, "{\"class_name\": \"__keras_tensor__\", \"config\": {\"shape\": ");
    tw__json_put_shape(out, &shapes[h->tensor_index]);
    /* An input's dtype is its InputLayer's; layers compute in float32. */
    const tw_layer *from = tw_model_layer_at(model, h->layer);
    char *dtype = strcmp(tw_layer_class_of(from)->name, "InputLayer") ? NULL : tw_layer_get_text(from, "dtype");
    g_string_append_printf(out, ", \"dtype\": \"%s\", \"keras_history\": ", dtype ? dtype : "float32");
    free(dtype);
    put_history(out, model, h, TW_KERAS_JSON_3, NULL);
    g_string_append(out, "}}");
}

/* MultiHeadAttention's call, Keras' way: mha(query, value[, key],
 * attention_mask=mask). Keras 2 writes the query with every other argument
 * in its kwargs ([["q", 0, 0, {"value": ["v", 0, 0]}]]), Keras 3 the query,
 * value and key as args and the mask in kwargs. */
static void put_attention_call(GString *out, const tw_model *model, const tw_keras_history *in, int n,
                               bool masked, tw_keras_json_format format, const char *flags)
{
    int npos = masked ? n - 1 : n;
    GString *kw = g_string_new(NULL);
    for (int i = format == TW_KERAS_JSON_2 ? 1 : npos; i < n; i++) {
        g_string_append_printf(kw, "%s\"%s\": ", kw->len ? ", " : "", i < npos ? (i == 1 ? "value" : "key")
                                                                                 : "attention_mask");
        if (format == TW_KERAS_JSON_2)
            put_history(kw, model, &in[i], format, NULL);
        else
            put_keras_tensor(kw, model, &in[i]);
    }
    if (flags[0]) /* after the tensors, as Keras orders them */
        g_string_append_printf(kw, "%s%s", kw->len ? ", " : "", flags);
    if (format == TW_KERAS_JSON_2) {
        g_string_append_c(out, '[');
        put_history(out, model, &in[0], format, kw->str);
        g_string_append_c(out, ']');
    } else {
        g_string_append(out, "{\"args\": [");
        for (int i = 0; i < npos; i++) {
            g_string_append(out, i ? ", " : "");
            put_keras_tensor(out, model, &in[i]);
        }
        g_string_append_printf(out, "], \"kwargs\": {%s}}", kw->str);
    }
    g_string_free(kw, TRUE);
}

static void put_nodes(GString *out, const tw_model *model, int layer, tw_keras_json_format format)
{
    const tw_layer *l = tw_model_layer_at(model, layer);
    bool input = !strcmp(tw_layer_class_of(l)->name, "InputLayer");
    bool states = takes_initial_state(l);
    /* Several inputs of a layer without a one-input form go as one list
     * argument in Keras 3 (Add()([a, b])); a layer of one input takes it
     * alone, a recurrent layer its initial states as initial_state. */
    bool as_list = !tw_layer_class_of(l)->call && !states;
    char *kwargs = call_kwargs(l);
    g_string_append_c(out, '[');
    for (int k = 0; !input && k < tw_functional_layer_ncalls(model, layer); k++) {
        tw_keras_history in[TW_MAX_LAYER_IO];
        int n = tw_functional_call_inputs(model, layer, k, in);
        int nargs = states ? 1 : n;
        g_string_append(out, k ? ", " : "");
        if (takes_attention_arguments(l)) {
            put_attention_call(out, model, in, n, tw_layer_get(l, "attention_mask")->number != 0, format, kwargs);
            continue;
        }
        if (format == TW_KERAS_JSON_2) {
            g_string_append_c(out, '[');
            for (int i = 0; i < n; i++) {
                g_string_append(out, i ? ", " : "");
                put_history(out, model, &in[i], format, kwargs);
            }
            g_string_append_c(out, ']');
            continue;
        }
        g_string_append(out, as_list ? "{\"args\": [[" : "{\"args\": [");
        for (int i = 0; i < nargs; i++) {
            g_string_append(out, i ? ", " : "");
            put_keras_tensor(out, model, &in[i]);
        }
        g_string_append_printf(out, "%s, \"kwargs\": {%s", as_list ? "]]" : "]", kwargs);
        if (n > nargs) {
            g_string_append_printf(out, "%s\"initial_state\": [", kwargs[0] ? ", " : "");
            for (int i = nargs; i < n; i++) {
                g_string_append(out, i > nargs ? ", " : "");
                put_keras_tensor(out, model, &in[i]);
            }
            g_string_append_c(out, ']');
        }
        g_string_append(out, "}}");
    }
    g_string_append_c(out, ']');
    g_free(kwargs);
}

static void put_input_layer(GString *out, const tw_layer *layer, tw_keras_json_format format)
{
    char *dtype = tw_layer_get_text(layer, "dtype");
    g_string_append(out, "{");
    if (format == TW_KERAS_JSON_3)
        g_string_append(out, "\"module\": \"keras.layers\", ");
    g_string_append_printf(out, "\"class_name\": \"InputLayer\", \"config\": {\"%s\": ",
                           format == TW_KERAS_JSON_3 ? "batch_shape" : "batch_input_shape");
    tw__json_put_shape(out, tw_layer_input_shape(layer));
    g_string_append_printf(out, ", \"dtype\": \"%s\", \"sparse\": false, ", dtype);
    if (format == TW_KERAS_JSON_2)
        g_string_append(out, "\"ragged\": false, ");
    g_string_append(out, "\"name\": ");
    tw__json_put_string(out, tw_layer_name(layer));
    g_string_append(out, "}");
    if (format == TW_KERAS_JSON_3)
        g_string_append(out, ", \"registered_name\": null");
    free(dtype);
}

/* Keras 2's form records no tensor shapes, and a class the engine does
 * not know declares none: a layer it feeds gets Keras 2.13+'s
 * build_config, the shapes of its first call's inputs, from which the
 * reader takes that class's output shape again. Only when all are known. */
static void put_shapes_after_user_layer(GString *out, const tw_model *model, int layer)
{
    tw_keras_history in[TW_MAX_LAYER_IO];
    int n = tw_functional_layer_ncalls(model, layer) > 0 ? tw_functional_call_inputs(model, layer, 0, in) : 0;
    bool fed = false;
    tw_shape shapes[TW_MAX_LAYER_IO];
    for (int i = 0; i < n; i++) {
        tw_shape outs[TW_MAX_LAYER_IO];
        tw_functional_call_outputs(model, in[i].layer, in[i].node_index, outs);
        shapes[i] = outs[in[i].tensor_index];
        if (!tw_shape_known(&shapes[i]))
            return;
        fed |= tw_user_layer_keras(tw_model_layer_at(model, in[i].layer)) != NULL;
    }
    if (!fed)
        return;
    g_string_append(out, ", \"build_config\": {\"input_shape\": ");
    g_string_append(out, n > 1 ? "[" : "");
    for (int i = 0; i < n; i++) {
        g_string_append(out, i ? ", " : "");
        tw__json_put_shape(out, &shapes[i]);
    }
    g_string_append(out, n > 1 ? "]}" : "}");
}

void tw__json_put_functional_config(GString *out, const tw_model *model, tw_keras_json_format format)
{
    g_string_append(out, "{\"name\": ");
    tw__json_put_string(out, tw_layer_name(model));
    if (!tw_layer_trainable(model) || format == TW_KERAS_JSON_3)
        g_string_append_printf(out, ", \"trainable\": %s", tw_layer_trainable(model) ? "true" : "false");
    g_string_append(out, ", \"layers\": [");
    for (int i = 0; i < tw_model_nlayers(model); i++) {
        const tw_layer *layer = tw_model_layer_at(model, i);
        const tw_layer_class *klass = tw_layer_class_of(layer);
        g_string_append(out, i ? ", " : "");
        if (!strcmp(klass->name, "InputLayer")) {
            put_input_layer(out, layer, format);
        } else if (tw_user_layer_keras(layer)) {
            GString *one = g_string_new(NULL);
            tw__json_put_layer(one, layer, format);
            g_string_append_len(out, one->str, (gssize)one->len - 1); /* opened again for the name */
            g_string_free(one, TRUE);
        } else {
            /* {"class_name": ..., "config": ...}, opened again for Keras 3's keys. */
            GString *one = g_string_new(NULL);
            tw__json_put_layer(one, layer, format);
            g_string_truncate(one, one->len - 1);
            if (format == TW_KERAS_JSON_3) {
                bool functional = tw_layer_is_functional(layer), sequential = tw_layer_is_model(layer) && !functional;
                g_string_append_printf(out, "{\"module\": \"%s\", ",
                                       functional ? "keras.src.models.functional"
                                       : sequential ? "keras"
                                                    : "keras.layers");
                g_string_append(out, one->str + 1);
                g_string_append_printf(out, ", \"registered_name\": %s", functional ? "\"Functional\"" : "null");
            } else {
                g_string_append(out, one->str);
            }
            g_string_free(one, TRUE);
        }
        g_string_append(out, ", \"name\": ");
        tw__json_put_string(out, tw_layer_name(layer));
        g_string_append(out, ", \"inbound_nodes\": ");
        put_nodes(out, model, i, format);
        if (format == TW_KERAS_JSON_2)
            put_shapes_after_user_layer(out, model, i);
        g_string_append_c(out, '}');
    }
    g_string_append(out, "], \"input_layers\": ");
    put_ends(out, model, true, format);
    g_string_append(out, ", \"output_layers\": ");
    put_ends(out, model, false, format);
    g_string_append_c(out, '}');
}
