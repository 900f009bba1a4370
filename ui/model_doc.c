/* TwModelDoc (model_doc.h). Every edit changes the nodes in place, then
 * commit() writes the document's state (its JSON) and records it: the
 * history holds nothing but those texts, and an undo or redo reads one
 * back. After every change the nodes are inferred one by one in
 * topological order with the engine's tw_layer_infer_n, and the engine
 * model is rebuilt from them (Sequential for a Sequential model's chain,
 * else Functional through tw_apply), which is what a save writes and what
 * training copies. */
#include "model_doc.h"

#include <json-glib/json-glib.h>
#include <tw/functional.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tw/error.h>
#include <tw/keras_file.h>
#include <tw/model_file.h>

#include "designer_arrange.h"
#include "nested_positions.h"

#define MAX_UNDO 500

static const char no_input_message[] = "Add an InputLayer or give the first layer an input shape";
static const char no_layers_message[] = "The model has no layers: add an InputLayer, then layers from the palette";

typedef struct {
    int node, port;
} Src;

typedef struct {
    tw_layer *layer; /* one reference; nodes of a shared layer hold the same one */
    double x, y;
    int nin;
    Src in[TW_MAX_LAYER_IO];
} Node;

typedef struct {
    int noutputs; /* 0 while unknown */
    tw_shape *outputs;
    tw_layer_info info; /* info.output is outputs[0] */
    char *error;        /* the node's message, or NULL */
    gboolean cannot_run; /* error says why the layer cannot run here; its shapes are known */
} NodeInfo;

typedef struct {
    char *before, *after;
} Step;

struct _TwModelDoc {
    GObject parent_instance;
    char *name;
    gboolean sequential; /* saved as Sequential while it is a chain */
    gboolean user_positions;
    GArray *nodes; /* of Node */
    tw_model *model;
    char *state;       /* the document's JSON now */
    char *saved_state; /* as loaded or saved; modified means state differs */
    char *keras;       /* the model with its positions (keras_to_save adds the nested ones), NULL while not a model */
    char *path;
    GPtrArray *undo, *redo; /* of Step, newest last */
    gboolean grouping;      /* tw_model_doc_begin_group: edits go into one step */
    Step *group_step;       /* the step the group made (the newest in undo), or NULL */
    NodeInfo *info;         /* one per node */
    int error_index;
    char *error;
    int64_t trainable, non_trainable;
    GHashTable *expanded; /* names of nested models shown open; view state */
    /* The box positions inside nested models, by layer name
     * (nested_positions.h): part of the state, so undo restores them. */
    JsonObject *nested;
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
    g_free(step->before);
    g_free(step->after);
    g_free(step);
}

static Node *node_at(TwModelDoc *doc, int i)
{
    return &g_array_index(doc->nodes, Node, i);
}

static int n_nodes(TwModelDoc *doc)
{
    return (int)doc->nodes->len;
}

static void node_clear(gpointer data)
{
    tw_layer_unref(((Node *)data)->layer);
}

static GArray *nodes_new(void)
{
    GArray *nodes = g_array_new(FALSE, TRUE, sizeof(Node));
    g_array_set_clear_func(nodes, node_clear);
    return nodes;
}

static gboolean is_input_layer(const tw_layer *layer)
{
    return !strcmp(tw_layer_class_of(layer)->name, "InputLayer");
}

/* The batch shape a node without inputs starts from, or NULL. */
static const tw_shape *own_shape(const tw_layer *layer)
{
    return tw_layer_is_model(layer) ? tw_model_input_shape(layer) : tw_layer_input_shape(layer);
}

static int max_inputs(const tw_layer *layer)
{
    if (is_input_layer(layer))
        return 0;
    return tw_layer_class_of(layer)->infer_n ? TW_MAX_LAYER_IO : 1;
}

/* node i is fed by i - 1 for every i > 0, and feeds only i + 1. */
static gboolean is_chain(TwModelDoc *doc)
{
    int n = n_nodes(doc);
    for (int i = 0; i < n; i++) {
        Node *node = node_at(doc, i);
        if (i == 0 ? node->nin != 0 : node->nin != 1 || node->in[0].node != i - 1 || node->in[0].port != 0)
            return FALSE;
    }
    return TRUE;
}

/* Nodes in an order where every node comes after its inputs, the lowest
 * index first among those ready, so that a list already in such an order
 * keeps it; FALSE on a cycle (edits refuse those, but a state read back is
 * checked too). */
static gboolean topo_order(GArray *nodes, int *order)
{
    int n = (int)nodes->len, done = 0;
    int *pending = g_new0(int, MAX(n, 1));
    gboolean *placed = g_new0(gboolean, MAX(n, 1));
    for (int i = 0; i < n; i++)
        pending[i] = g_array_index(nodes, Node, i).nin;
    while (done < n) {
        int next = -1;
        for (int i = 0; i < n && next < 0; i++)
            if (!placed[i] && !pending[i])
                next = i;
        if (next < 0)
            break;
        placed[next] = TRUE;
        order[done++] = next;
        for (int j = 0; j < n; j++) {
            Node *node = &g_array_index(nodes, Node, j);
            for (int e = 0; e < node->nin; e++)
                pending[j] -= node->in[e].node == next;
        }
    }
    g_free(pending);
    g_free(placed);
    return done == n;
}

/* The nodes in topological order (a file's layers come so already; a
 * reopened save then lists its nodes as they were). */
static void sort_topologically(GArray *nodes)
{
    int n = (int)nodes->len;
    int *order = g_new(int, MAX(n, 1)), *where = g_new(int, MAX(n, 1));
    if (topo_order(nodes, order)) {
        Node *copy = g_memdup2(nodes->data, sizeof(Node) * n);
        for (int k = 0; k < n; k++)
            where[order[k]] = k;
        for (int k = 0; k < n; k++) {
            Node node = copy[order[k]];
            for (int e = 0; e < node.nin; e++)
                node.in[e].node = where[node.in[e].node];
            g_array_index(nodes, Node, k) = node;
        }
        g_free(copy);
    }
    g_free(order);
    g_free(where);
}

/* ---- inference ------------------------------------------------------------ */
static void info_free(TwModelDoc *doc)
{
    if (!doc->info)
        return;
    for (int i = 0; doc->info[i].noutputs >= 0; i++) {
        g_free(doc->info[i].outputs);
        g_free(doc->info[i].error);
    }
    g_clear_pointer(&doc->info, g_free);
}

static void set_error(TwModelDoc *doc, int index, const char *message)
{
    doc->error_index = index;
    g_free(doc->error);
    doc->error = message ? g_strdup(message) : NULL;
}

static void node_fails(NodeInfo *info, const char *message)
{
    info->error = g_strdup(message);
    snprintf(info->info.error, sizeof info->info.error, "%s", message);
}

static void infer_node(TwModelDoc *doc, int i, gboolean chain)
{
    Node *node = node_at(doc, i);
    NodeInfo *info = &doc->info[i];
    const char *name = tw_layer_name(node->layer);
    tw_shape inputs[TW_MAX_LAYER_IO], outputs[TW_MAX_LAYER_IO];
    int ninputs = node->nin, noutputs = 1, unknown_count = 0;
    if (is_input_layer(node->layer)) {
        const tw_shape *shape = tw_layer_input_shape(node->layer);
        if (!shape) {
            if (!chain || i) /* a chain says so for the whole model */
                node_fails(info, "this InputLayer has no shape: give it one");
            return;
        }
        outputs[0] = *shape;
    } else {
        if (!ninputs) {
            const tw_shape *shape = own_shape(node->layer);
            if (!shape) {
                if (!chain) {
                    char *m = g_strdup_printf("%s: dangling input: connect another layer's output to it", name);
                    node_fails(info, m);
                    g_free(m);
                }
                return;
            }
            inputs[0] = *shape;
            ninputs = 1;
        }
        for (int k = 0; k < node->nin; k++) {
            NodeInfo *from = &doc->info[node->in[k].node];
            if (!from->noutputs)
                return; /* its source failed: nothing to say here */
            if (node->in[k].port >= from->noutputs) {
                char *m = g_strdup_printf("%s: input %d: '%s' has no output %d", name, k,
                                          tw_layer_name(node_at(doc, node->in[k].node)->layer), node->in[k].port);
                node_fails(info, m);
                g_free(m);
                return;
            }
            inputs[k] = from->outputs[node->in[k].port];
        }
        unknown_count = tw_layer_infer_partial(node->layer, inputs, ninputs, outputs, &noutputs,
                                               &info->info.trainable_params, &info->info.non_trainable_params);
        if (unknown_count < 0) {
            node_fails(info, tw_last_error());
            return;
        }
    }
    info->noutputs = noutputs;
    info->outputs = g_memdup2(outputs, sizeof(tw_shape) * noutputs);
    info->info.output = outputs[0];
    /* A Lambda or a StringLookup: the model is valid (it summarizes and
     * saves) but cannot train; the engine says why. */
    if (tw_layer_check_runnable(node->layer)) {
        node_fails(info, tw_last_error());
        info->cannot_run = TRUE;
    } else if (unknown_count) {
        /* After a Lambda of unknown shape: its weights' sizes are unknown,
         * so it cannot be built, but the model still opens and saves. The
         * engine's message says so when asked for the counts. */
        int64_t t, nt;
        info->info.params_unknown = true;
        if (tw_layer_infer_n(node->layer, inputs, ninputs, NULL, NULL, &t, &nt))
            node_fails(info, tw_last_error());
        info->cannot_run = TRUE;
    }
}

/* Each layer's parameters once, however many nodes call it. */
static void add_totals(TwModelDoc *doc)
{
    GHashTable *seen = g_hash_table_new(NULL, NULL);
    for (int i = 0; i < n_nodes(doc); i++)
        if (doc->info[i].noutputs && g_hash_table_add(seen, node_at(doc, i)->layer)) {
            doc->trainable += doc->info[i].info.trainable_params;
            doc->non_trainable += doc->info[i].info.non_trainable_params;
        }
    g_hash_table_unref(seen);
}

static void infer(TwModelDoc *doc)
{
    int n = n_nodes(doc);
    info_free(doc);
    doc->info = g_new0(NodeInfo, n + 1);
    doc->info[n].noutputs = -1; /* the end mark */
    doc->trainable = doc->non_trainable = 0;
    set_error(doc, -1, NULL);
    if (n == 0) {
        set_error(doc, 0, no_layers_message);
        return;
    }
    gboolean chain = is_chain(doc);
    int *order = g_new(int, n);
    if (!topo_order(doc->nodes, order)) {
        g_free(order);
        set_error(doc, n, "the graph has a cycle");
        return;
    }
    for (int k = 0; k < n; k++)
        infer_node(doc, order[k], chain);
    g_free(order);
    /* An input no layer reads: Functional models use every input. */
    for (int i = 0; i < n && !chain; i++) {
        if (!is_input_layer(node_at(doc, i)->layer))
            continue; /* the scan below for every node made a 1,000-layer edit quadratic */
        gboolean used = FALSE;
        for (int j = 0; j < n && !used; j++)
            for (int k = 0; k < node_at(doc, j)->nin && !used; k++)
                used = node_at(doc, j)->in[k].node == i;
        if (!used && !doc->info[i].error) {
            char *m = g_strdup_printf("%s: unconnected output: no layer reads this input; connect it or delete it",
                                      tw_layer_name(node_at(doc, i)->layer));
            g_free(doc->info[i].outputs);
            doc->info[i].outputs = NULL;
            doc->info[i].noutputs = 0;
            node_fails(&doc->info[i], m);
            g_free(m);
        }
    }
    add_totals(doc);
    if (chain && !doc->info[0].noutputs && !doc->info[0].error) {
        set_error(doc, n, no_input_message);
        return;
    }
    for (int i = 0; i < n; i++)
        if (doc->info[i].error && !doc->info[i].cannot_run) {
            set_error(doc, i, doc->info[i].error);
            return;
        }
}

/* A valid model holding a layer that cannot run: why it cannot train. */
static void note_cannot_run(TwModelDoc *doc)
{
    for (int i = 0; i < n_nodes(doc) && doc->error_index < 0; i++)
        if (doc->info[i].cannot_run) {
            g_free(doc->error);
            doc->error = g_strdup(doc->info[i].error);
            return;
        }
}

/* ---- the engine model ----------------------------------------------------- */
/* Each layer once, however many nodes call it (ptr -> clone). */
static tw_layer *clone_of(GHashTable *clones, tw_layer *layer)
{
    tw_layer *copy = g_hash_table_lookup(clones, layer);
    if (!copy) {
        copy = tw_layer_clone(layer, tw_layer_name(layer));
        if (copy)
            g_hash_table_insert(clones, layer, copy);
    }
    return copy;
}

static tw_model *build_sequential(TwModelDoc *doc, GHashTable *clones)
{
    tw_model *model = tw_sequential_new(doc->name);
    for (int i = 0; i < n_nodes(doc); i++) {
        tw_layer *copy = clone_of(clones, node_at(doc, i)->layer);
        if (!copy || tw_model_add(model, tw_layer_ref(copy))) {
            tw_layer_unref(model);
            return NULL;
        }
    }
    return model;
}

/* Declared through tw_apply, as a program writes one; the model's outputs
 * are the nodes no other node reads, in node order. */
static tw_model *build_functional(TwModelDoc *doc, GHashTable *clones)
{
    int n = n_nodes(doc);
    int *order = g_new(int, n);
    tw_node ***outs = g_new0(tw_node **, n);
    GPtrArray *ins = g_ptr_array_new(), *sinks = g_ptr_array_new();
    gboolean *read = g_new0(gboolean, n);
    int64_t mark = tw_nodes_mark();
    tw_model *model = NULL;
    if (!topo_order(doc->nodes, order))
        goto out;
    for (int k = 0; k < n; k++) {
        int i = order[k];
        Node *node = node_at(doc, i);
        tw_layer *copy = clone_of(clones, node->layer);
        if (!copy)
            goto out;
        outs[i] = g_new0(tw_node *, TW_MAX_LAYER_IO);
        if (is_input_layer(node->layer)) {
            outs[i][0] = tw_input_from_layer(tw_layer_ref(copy));
            g_ptr_array_add(ins, outs[i][0]);
            continue;
        }
        tw_node *args[TW_MAX_LAYER_IO];
        int nargs = node->nin;
        for (int e = 0; e < node->nin; e++) {
            args[e] = outs[node->in[e].node][node->in[e].port];
            read[node->in[e].node] = TRUE;
        }
        if (!nargs) {
            const tw_shape *shape = own_shape(node->layer);
            if (!shape) {
                tw_error_set("%s: dangling input", tw_layer_name(node->layer));
                goto out;
            }
            args[0] = tw_input(NULL, shape->ndim - 1, shape->dims + 1);
            g_ptr_array_add(ins, args[0]);
            nargs = 1;
        }
        if (tw_apply_multi(tw_layer_ref(copy), nargs, args, outs[i]) < 0)
            goto out;
    }
    for (int i = 0; i < n; i++)
        if (!read[i] && !is_input_layer(node_at(doc, i)->layer))
            g_ptr_array_add(sinks, outs[i][0]);
    model = tw_functional_new(doc->name, (int)ins->len, (tw_node **)ins->pdata, (int)sinks->len,
                              (tw_node **)sinks->pdata);
out:
    tw_nodes_release(mark);
    for (int i = 0; i < n; i++)
        g_free(outs[i]);
    g_free(outs);
    g_free(order);
    g_free(read);
    g_ptr_array_unref(ins);
    g_ptr_array_unref(sinks);
    return model;
}

/* ---- the document's JSON --------------------------------------------------- */
/* A layer's Keras JSON: the one-layer Sequential model holding a copy. */
static char *layer_json(const tw_layer *layer)
{
    tw_model *holder = tw_sequential_new("holder");
    tw_layer *copy = tw_layer_clone(layer, tw_layer_name(layer));
    char *json = NULL;
    if (copy && !tw_model_add(holder, copy))
        json = tw_model_to_json(holder);
    tw_layer_unref(holder);
    return json;
}

static tw_layer *layer_from_json(const char *json)
{
    tw_model *holder = tw_model_from_json(json, strlen(json), NULL);
    if (!holder)
        return NULL;
    tw_layer *layer = tw_model_nlayers(holder) == 1 ? tw_layer_ref(tw_model_layer_at(holder, 0)) : NULL;
    tw_layer_unref(holder);
    return layer;
}

static void put_json_string(GString *out, const char *s)
{
    JsonNode *node = json_node_init_string(json_node_alloc(), s);
    char *text = json_to_string(node, FALSE);
    g_string_append(out, text);
    g_free(text);
    json_node_unref(node);
}

/* {"name": ..., "sequential": ..., "nodes": [{"layer": {...}, "pos": [x, y],
 * "in": [[node, port], ...]}, ...]}; a node calling the layer of an earlier
 * one has "layer_of": its index instead of "layer". NULL when a layer does
 * not write. */
static char *write_state(const char *name, gboolean sequential, GArray *nodes, const int *subset, int nsubset)
{
    int n = subset ? nsubset : (int)nodes->len;
    int *local = g_new(int, nodes->len + 1); /* node -> its index in the text, -1 when left out */
    for (guint i = 0; i < nodes->len; i++)
        local[i] = subset ? -1 : (int)i;
    for (int k = 0; subset && k < nsubset; k++)
        local[subset[k]] = k;
    GString *out = g_string_new("{\"name\": ");
    put_json_string(out, name);
    g_string_append_printf(out, ", \"sequential\": %s, \"nodes\": [", sequential ? "true" : "false");
    gboolean ok = TRUE;
    for (int k = 0; k < n && ok; k++) {
        int i = subset ? subset[k] : k;
        Node *node = &g_array_index(nodes, Node, i);
        g_string_append(out, k ? ",\n" : "\n");
        int first = -1;
        for (int j = 0; j < k && first < 0; j++)
            if (g_array_index(nodes, Node, subset ? subset[j] : j).layer == node->layer)
                first = j;
        if (first >= 0)
            g_string_append_printf(out, "{\"layer_of\": %d", first);
        else {
            char *json = layer_json(node->layer);
            ok = json != NULL;
            g_string_append_printf(out, "{\"layer\": %s", json ? json : "null");
            free(json);
        }
        g_string_append_printf(out, ", \"pos\": [%.1f, %.1f], \"in\": [", node->x, node->y);
        gboolean any = FALSE;
        for (int e = 0; e < node->nin; e++) {
            if (local[node->in[e].node] < 0)
                continue;
            g_string_append_printf(out, "%s[%d, %d]", any ? ", " : "", local[node->in[e].node], node->in[e].port);
            any = TRUE;
        }
        g_string_append(out, "]}");
    }
    g_string_append(out, "]}");
    g_free(local);
    return g_string_free(out, !ok);
}

/* Only the positions inside the nested models among the nodes are kept:
 * a deleted layer's go, and so do a renamed one's under its old name. */
static void drop_unused_nested(TwModelDoc *doc)
{
    JsonObject *used = json_object_new();
    for (int i = 0; i < n_nodes(doc); i++) {
        const tw_layer *layer = node_at(doc, i)->layer;
        const char *name = tw_layer_name(layer);
        if (tw_layer_is_model(layer) && json_object_has_member(doc->nested, name) &&
            !json_object_has_member(used, name))
            json_object_set_member(used, name, json_object_dup_member(doc->nested, name));
    }
    json_object_unref(doc->nested);
    doc->nested = used;
}

/* A copy of a nested model, named copy, laid out inside as the one named
 * original is (within a document, or from a clipboard's text, which may
 * come from outside: a tree that is not an object is left out). */
static void copy_nested_positions(TwModelDoc *doc, JsonObject *from, const char *original, const char *copy)
{
    JsonNode *tree = json_object_get_member(from, original);
    if (tree && JSON_NODE_HOLDS_OBJECT(tree))
        json_object_set_member(doc->nested, copy, json_node_copy(tree));
}

/* A state text (write_state's, taken) with the positions inside nested
 * models as its "nested" member, when there are any. */
static char *with_nested(char *state, JsonObject *nested)
{
    if (!state || !json_object_get_size(nested))
        return state;
    JsonNode *node = json_node_init_object(json_node_alloc(), nested);
    char *text = tw_json_node_to_text(node);
    json_node_unref(node);
    GString *out = g_string_new_len(state, (gssize)strlen(state) - 1); /* the closing brace */
    g_string_append_printf(out, ", \"nested\": %s}", text);
    free(text);
    g_free(state);
    return g_string_free(out, FALSE);
}

/* The document's state: its nodes and the positions inside its nested
 * models. */
static char *doc_state(TwModelDoc *doc)
{
    char *state = write_state(doc->name, doc->sequential, doc->nodes, NULL, 0);
    drop_unused_nested(doc);
    return with_nested(state, doc->nested);
}

/* Typed members of a JSON object, NULL or FALSE when absent or of
 * another type (the text may come from outside: a clipboard). */
static JsonArray *array_member(JsonObject *o, const char *key)
{
    JsonNode *node = o ? json_object_get_member(o, key) : NULL;
    return node && JSON_NODE_HOLDS_ARRAY(node) ? json_node_get_array(node) : NULL;
}

static gboolean number_of(JsonNode *node, double *out)
{
    if (!node || !JSON_NODE_HOLDS_VALUE(node))
        return FALSE;
    GType type = json_node_get_value_type(node);
    if (type != G_TYPE_INT64 && type != G_TYPE_DOUBLE)
        return FALSE;
    *out = json_node_get_double(node);
    return isfinite(*out);
}

static gboolean number_at(JsonArray *array, guint i, double *out)
{
    return array && i < json_array_get_length(array) && number_of(json_array_get_element(array, i), out);
}

/* An index in [0, limit). */
static gboolean index_of(JsonNode *node, int limit, int *out)
{
    double v;
    if (!number_of(node, &v) || v != floor(v) || v < 0 || v >= limit)
        return FALSE;
    *out = (int)v;
    return TRUE;
}

static gboolean index_at(JsonArray *array, guint i, int limit, int *out)
{
    return array && i < json_array_get_length(array) && index_of(json_array_get_element(array, i), limit, out);
}

/* One node of a state; its edges are relative to the text's first node. */
static gboolean read_node(JsonObject *o, GArray *nodes, guint base, guint k, guint count, Node *node)
{
    JsonNode *shared = json_object_get_member(o, "layer_of");
    if (shared) {
        int j;
        if (!index_of(shared, (int)k, &j))
            return FALSE;
        node->layer = tw_layer_ref(g_array_index(nodes, Node, base + j).layer);
    } else {
        JsonNode *layer = json_object_get_member(o, "layer");
        if (!layer || !JSON_NODE_HOLDS_OBJECT(layer))
            return FALSE;
        char *json = json_to_string(layer, FALSE);
        node->layer = layer_from_json(json);
        g_free(json);
        if (!node->layer)
            return FALSE;
    }
    JsonArray *pos = array_member(o, "pos"), *in = array_member(o, "in");
    if (!number_at(pos, 0, &node->x) || !number_at(pos, 1, &node->y) || !in ||
        json_array_get_length(in) > TW_MAX_LAYER_IO)
        return FALSE;
    node->nin = (int)json_array_get_length(in);
    for (int e = 0; e < node->nin; e++) {
        JsonNode *edge = json_array_get_element(in, e);
        JsonArray *pair = JSON_NODE_HOLDS_ARRAY(edge) ? json_node_get_array(edge) : NULL;
        int from, port;
        if (!pair || !index_at(pair, 0, (int)count, &from) || !index_at(pair, 1, TW_MAX_LAYER_IO, &port))
            return FALSE;
        node->in[e] = (Src){(int)base + from, port};
    }
    return TRUE;
}

/* The nodes of a state (or a clipboard text), appended to nodes; layers
 * are new objects. FALSE, with nodes as they were, when the text is not
 * one of ours. */
static gboolean read_nodes(const char *text, GArray *nodes, char **name, gboolean *sequential, JsonObject **nested,
                           GError **error)
{
    JsonParser *parser = json_parser_new();
    gboolean ok = json_parser_load_from_data(parser, text, -1, NULL);
    JsonNode *root = ok ? json_parser_get_root(parser) : NULL;
    JsonObject *obj = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    JsonArray *list = array_member(obj, "nodes");
    guint base = nodes->len;
    ok = list != NULL;
    for (guint k = 0; ok && k < json_array_get_length(list); k++) {
        JsonNode *element = json_array_get_element(list, k);
        Node node = {0};
        ok = JSON_NODE_HOLDS_OBJECT(element) &&
             read_node(json_node_get_object(element), nodes, base, k, json_array_get_length(list), &node);
        if (ok)
            g_array_append_val(nodes, node);
        else
            tw_layer_unref(node.layer);
    }
    if (ok) { /* edges may point forward, but never round */
        int *order = g_new(int, nodes->len + 1);
        ok = topo_order(nodes, order);
        g_free(order);
    }
    JsonNode *name_node = obj ? json_object_get_member(obj, "name") : NULL;
    if (ok && name)
        *name = g_strdup(name_node && JSON_NODE_HOLDS_VALUE(name_node) &&
                                 json_node_get_value_type(name_node) == G_TYPE_STRING
                             ? json_node_get_string(name_node)
                             : "model");
    JsonNode *inner = obj ? json_object_get_member(obj, "nested") : NULL;
    if (ok && nested)
        *nested = inner && JSON_NODE_HOLDS_OBJECT(inner) ? json_object_ref(json_node_get_object(inner))
                                                         : json_object_new();
    JsonNode *seq = obj ? json_object_get_member(obj, "sequential") : NULL;
    if (ok && sequential)
        *sequential = seq && JSON_NODE_HOLDS_VALUE(seq) && json_node_get_value_type(seq) == G_TYPE_BOOLEAN &&
                      json_node_get_boolean(seq);
    g_object_unref(parser);
    if (!ok) {
        g_array_set_size(nodes, base);
        g_set_error_literal(error, doc_error_quark(), 0,
                            "not a designer selection: expected {\"nodes\": [{\"layer\": ..., \"pos\": [x, y], "
                            "\"in\": [[node, port], ...]}, ...]} without a cycle");
    }
    return ok;
}

/* The Keras JSON of model with the positions under our own key, keyed by
 * layer name (a list: one position per call of the layer). */
static char *keras_with_positions(TwModelDoc *doc, const tw_model *model)
{
    char *json = tw_model_to_json(model);
    if (!json)
        return NULL;
    GString *out = g_string_new_len(json, (gssize)(strrchr(json, '}') - json));
    free(json);
    g_string_append(out, ", \"" TW_DESIGNER_KEY "\": {\"positions\": {");
    GHashTable *done = g_hash_table_new(NULL, NULL);
    gboolean first = TRUE;
    for (int i = 0; i < n_nodes(doc); i++) {
        tw_layer *layer = node_at(doc, i)->layer;
        if (!g_hash_table_add(done, layer))
            continue;
        g_string_append(out, first ? "" : ", ");
        first = FALSE;
        put_json_string(out, tw_layer_name(layer));
        g_string_append(out, ": [");
        for (int j = i, k = 0; j < n_nodes(doc); j++)
            if (node_at(doc, j)->layer == layer)
                g_string_append_printf(out, "%s[%.1f, %.1f]", k++ ? ", " : "", node_at(doc, j)->x, node_at(doc, j)->y);
        g_string_append(out, "]");
    }
    g_hash_table_unref(done);
    g_string_append(out, "}}}");
    return g_string_free(out, FALSE);
}

/* What a save writes: doc->keras with the positions inside its nested
 * models, added only here (a parse and a rewrite of the whole text, too
 * slow for every edit of a large model). */
static char *keras_to_save(TwModelDoc *doc)
{
    if (!json_object_get_size(doc->nested))
        return g_strdup(doc->keras);
    JsonObject *tree = json_object_new();
    json_object_set_object_member(tree, "nested", json_object_ref(doc->nested));
    char *text = tw_nested_positions_apply(doc->keras, tree);
    json_object_unref(tree);
    return text;
}

/* ---- the document's state ------------------------------------------------- */
static void notify_state(TwModelDoc *doc)
{
    g_object_notify_by_pspec(G_OBJECT(doc), props[PROP_MODIFIED]);
    g_object_notify_by_pspec(G_OBJECT(doc), props[PROP_CAN_UNDO]);
    g_object_notify_by_pspec(G_OBJECT(doc), props[PROP_CAN_REDO]);
}

/* Everything that follows from the nodes: inference, the engine model,
 * the Keras JSON. */
static void derive(TwModelDoc *doc)
{
    infer(doc);
    g_clear_pointer(&doc->model, tw_layer_unref);
    g_clear_pointer(&doc->keras, g_free);
    GHashTable *clones = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify)tw_layer_unref);
    gboolean chain = is_chain(doc);
    if (n_nodes(doc) && chain && doc->sequential)
        doc->model = build_sequential(doc, clones);
    else if (n_nodes(doc) && doc->error_index < 0) {
        doc->model = build_functional(doc, clones);
        if (!doc->model)
            set_error(doc, n_nodes(doc), tw_last_error());
    }
    g_hash_table_unref(clones);
    if (doc->model) {
        doc->keras = keras_with_positions(doc, doc->model);
    }
    note_cannot_run(doc);
}

static void emit_changed(TwModelDoc *doc)
{
    derive(doc);
    g_signal_emit(doc, signals[CHANGED], 0);
    notify_state(doc);
}

/* Replace the nodes with those of a state text. */
static gboolean restore(TwModelDoc *doc, const char *state, GError **error)
{
    GArray *nodes = nodes_new();
    char *name = NULL;
    gboolean sequential;
    JsonObject *nested = NULL;
    if (!read_nodes(state, nodes, &name, &sequential, &nested, error)) {
        g_array_unref(nodes);
        return FALSE;
    }
    json_object_unref(doc->nested);
    doc->nested = nested;
    g_array_unref(doc->nodes);
    doc->nodes = nodes;
    g_free(doc->name);
    doc->name = name;
    doc->sequential = sequential;
    g_free(doc->state);
    doc->state = g_strdup(state);
    return TRUE;
}

/* Before an edit, undo, redo or load reads or touches the nodes: a pending
 * edit elsewhere is made first (model_doc.h, "changing"). */
static void begin_edit(TwModelDoc *doc)
{
    g_signal_emit(doc, signals[CHANGING], 0);
}

/* After an edit of the nodes: one undo step, unless nothing changed. */
static gboolean commit(TwModelDoc *doc, GError **error)
{
    char *state = doc_state(doc);
    if (!state) {
        g_set_error(error, doc_error_quark(), 0, "the edited model does not write: %s", tw_last_error());
        char *old = g_strdup(doc->state);
        restore(doc, old, NULL);
        g_free(old);
        return FALSE;
    }
    if (!strcmp(state, doc->state)) { /* the same value again: no step */
        g_free(state);
        return TRUE;
    }
    if (doc->grouping && doc->group_step && doc->undo->len &&
        g_ptr_array_index(doc->undo, doc->undo->len - 1) == doc->group_step) {
        /* A later edit of a group: its step now leads here, or, back where
         * the group began, goes. */
        Step *step = doc->group_step;
        g_free(doc->state);
        doc->state = state;
        if (!strcmp(state, step->before)) {
            g_ptr_array_remove_index(doc->undo, doc->undo->len - 1);
            doc->group_step = NULL;
        } else {
            g_free(step->after);
            step->after = g_strdup(state);
        }
        emit_changed(doc);
        return TRUE;
    }
    Step *step = g_new(Step, 1);
    step->before = doc->state;
    step->after = g_strdup(state);
    doc->state = state;
    g_ptr_array_add(doc->undo, step);
    if (doc->undo->len > MAX_UNDO)
        g_ptr_array_remove_index(doc->undo, 0);
    if (doc->grouping)
        doc->group_step = step;
    g_ptr_array_set_size(doc->redo, 0);
    emit_changed(doc);
    return TRUE;
}

/* ---- GObject -------------------------------------------------------------- */
static void tw_model_doc_finalize(GObject *object)
{
    TwModelDoc *doc = TW_MODEL_DOC(object);
    g_array_unref(doc->nodes);
    tw_layer_unref(doc->model);
    g_free(doc->name);
    g_free(doc->state);
    g_free(doc->saved_state);
    g_free(doc->keras);
    g_free(doc->path);
    g_ptr_array_unref(doc->undo);
    g_ptr_array_unref(doc->redo);
    info_free(doc);
    g_free(doc->error);
    g_hash_table_unref(doc->expanded);
    json_object_unref(doc->nested);
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
    doc->nodes = nodes_new();
    doc->undo = g_ptr_array_new_with_free_func(step_free);
    doc->redo = g_ptr_array_new_with_free_func(step_free);
    doc->error_index = -1;
    doc->name = g_strdup("model");
    doc->sequential = TRUE;
    doc->expanded = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    doc->nested = json_object_new();
}

/* A chain's column: boxes one below the other. */
static void place_column(TwModelDoc *doc, int from)
{
    for (int i = from; i < n_nodes(doc); i++) {
        node_at(doc, i)->x = 40;
        node_at(doc, i)->y = 40 + i * (TW_DESIGNER_BOX_HEIGHT + 34);
    }
}

/* Auto-arrange now (a load; the canvas arranges on demand in a thread). */
static void place_layered(TwModelDoc *doc)
{
    int n = n_nodes(doc), nedges = 0;
    int *edges = NULL;
    for (int i = 0; i < n; i++)
        for (int e = 0; e < node_at(doc, i)->nin; e++) {
            edges = g_renew(int, edges, 2 * (nedges + 1));
            edges[2 * nedges] = node_at(doc, i)->in[e].node;
            edges[2 * nedges++ + 1] = i;
        }
    double *xy = g_new(double, 2 * MAX(n, 1));
    tw_designer_arrange(n, nedges, edges, NULL, xy);
    for (int i = 0; i < n; i++) {
        node_at(doc, i)->x = xy[2 * i];
        node_at(doc, i)->y = xy[2 * i + 1];
    }
    g_free(xy);
    g_free(edges);
}

/* Take over nodes as a fresh document (no history). */
static gboolean start_over(TwModelDoc *doc, const char *name, gboolean sequential, GArray *nodes, const char *path,
                           GError **error)
{
    g_array_unref(doc->nodes);
    doc->nodes = nodes;
    g_free(doc->name);
    doc->name = g_strdup(name && *name ? name : "model");
    doc->sequential = sequential;
    char *state = doc_state(doc);
    if (!state)
        return engine_fail(error);
    g_free(doc->state);
    doc->state = state;
    g_ptr_array_set_size(doc->undo, 0);
    g_ptr_array_set_size(doc->redo, 0);
    doc->group_step = NULL;
    g_free(doc->saved_state);
    doc->saved_state = g_strdup(state);
    if (g_strcmp0(doc->path, path)) {
        g_free(doc->path);
        doc->path = g_strdup(path);
    }
    emit_changed(doc);
    g_object_notify_by_pspec(G_OBJECT(doc), props[PROP_PATH]);
    return TRUE;
}

TwModelDoc *tw_model_doc_new(void)
{
    TwModelDoc *doc = g_object_new(TW_TYPE_MODEL_DOC, NULL);
    tw_shape shape = {3, {-1, 28, 28}};
    GArray *nodes = nodes_new();
    Node input = {.layer = tw_input_layer(&shape)};
    tw_layer_set_name(input.layer, "input");
    g_array_append_val(nodes, input);
    gboolean ok = start_over(doc, "model", TRUE, nodes, NULL, NULL);
    g_assert(ok);
    place_column(doc, 0);
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

/* The nodes of a Functional model: one per call of each layer. */
static GArray *functional_nodes(tw_model *model)
{
    GArray *nodes = nodes_new();
    int nlayers = tw_model_nlayers(model);
    int *first = g_new(int, nlayers + 1);
    for (int l = 0; l < nlayers; l++) {
        first[l] = (int)nodes->len;
        for (int c = 0; c < tw_functional_layer_ncalls(model, l); c++) {
            Node node = {.layer = tw_layer_ref(tw_model_layer_at(model, l))};
            g_array_append_val(nodes, node);
        }
    }
    for (int l = 0; l < nlayers; l++)
        for (int c = 0; c < tw_functional_layer_ncalls(model, l); c++) {
            Node *node = &g_array_index(nodes, Node, first[l] + c);
            tw_keras_history in[TW_MAX_LAYER_IO];
            int nin = tw_functional_call_inputs(model, l, c, in);
            for (int e = 0; e < nin; e++)
                node->in[node->nin++] = (Src){first[in[e].layer] + in[e].node_index, in[e].tensor_index};
        }
    g_free(first);
    return nodes;
}

static GArray *sequential_nodes(tw_model *model)
{
    GArray *nodes = nodes_new();
    move_model_input_shape(model);
    for (int i = 0; i < tw_model_nlayers(model); i++) {
        Node node = {.layer = tw_layer_ref(tw_model_layer_at(model, i))};
        if (i)
            node.in[node.nin++] = (Src){i - 1, 0};
        g_array_append_val(nodes, node);
    }
    return nodes;
}

/* The positions a file of ours kept (tw_model_doc_save), by layer name. */
static gboolean apply_positions(GArray *nodes, JsonNode *root)
{
    JsonObject *top = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    JsonNode *ours = top ? json_object_get_member(top, TW_DESIGNER_KEY) : NULL;
    JsonObject *our_object = ours && JSON_NODE_HOLDS_OBJECT(ours) ? json_node_get_object(ours) : NULL;
    JsonNode *table = our_object ? json_object_get_member(our_object, "positions") : NULL;
    JsonObject *pos = table && JSON_NODE_HOLDS_OBJECT(table) ? json_node_get_object(table) : NULL;
    if (!pos)
        return FALSE;
    GHashTable *calls = g_hash_table_new(NULL, NULL); /* layer -> calls seen */
    gboolean all = TRUE;
    for (guint i = 0; i < nodes->len; i++) {
        Node *node = &g_array_index(nodes, Node, i);
        guint k = GPOINTER_TO_UINT(g_hash_table_lookup(calls, node->layer));
        g_hash_table_insert(calls, node->layer, GUINT_TO_POINTER(k + 1));
        JsonNode *list = json_object_get_member(pos, tw_layer_name(node->layer));
        JsonArray *calls_xy = list && JSON_NODE_HOLDS_ARRAY(list) ? json_node_get_array(list) : NULL;
        JsonNode *one = calls_xy && k < json_array_get_length(calls_xy) ? json_array_get_element(calls_xy, k) : NULL;
        JsonArray *xy = one && JSON_NODE_HOLDS_ARRAY(one) ? json_node_get_array(one) : NULL;
        double x, y;
        if (!number_at(xy, 0, &x) || !number_at(xy, 1, &y)) {
            all = FALSE;
            continue;
        }
        node->x = x;
        node->y = y;
    }
    g_hash_table_unref(calls);
    return all;
}

static gboolean replace_model(TwModelDoc *doc, tw_model *loaded, JsonNode *root, const char *path, GError **error)
{
    if (!loaded)
        return engine_fail(error);
    if (!tw_layer_is_model(loaded)) {
        tw_layer_unref(loaded);
        return fail(error, "the file holds a single layer, not a model");
    }
    gboolean functional = tw_layer_is_functional(loaded);
    GArray *nodes = functional ? functional_nodes(loaded) : sequential_nodes(loaded);
    char *name = g_strdup(tw_layer_name(loaded));
    tw_layer_unref(loaded);
    sort_topologically(nodes);
    gboolean positioned = apply_positions(nodes, root);
    JsonObject *tree = tw_nested_positions_tree(root);
    JsonNode *nested = tree ? json_object_get_member(tree, "nested") : NULL;
    json_object_unref(doc->nested);
    doc->nested = nested ? json_object_ref(json_node_get_object(nested)) : json_object_new();
    if (tree)
        json_object_unref(tree);
    gboolean ok = start_over(doc, name, !functional, nodes, path, error);
    g_free(name);
    if (ok && !positioned) {
        /* Placed without an undo step: where the boxes go first is part of
         * opening the file, not an edit. */
        if (is_chain(doc))
            place_column(doc, 0);
        else
            place_layered(doc);
        char *state = doc_state(doc);
        g_free(doc->state);
        doc->state = state;
        g_free(doc->saved_state);
        doc->saved_state = g_strdup(state);
        emit_changed(doc);
    }
    doc->user_positions = positioned;
    return ok;
}

static JsonNode *parse_root(const char *json, gssize length)
{
    JsonParser *parser = json_parser_new();
    JsonNode *root = json_parser_load_from_data(parser, json, length, NULL) ? json_parser_steal_root(parser) : NULL;
    g_object_unref(parser);
    return root;
}

gboolean tw_model_doc_load(TwModelDoc *doc, const char *path, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && path, FALSE);
    begin_edit(doc);
    tw_model *loaded = tw_model_open(path);
    /* A JSON file of ours may hold positions (other files hold none). */
    char *text = NULL;
    gsize length = 0;
    JsonNode *root = NULL;
    if (loaded && g_file_get_contents(path, &text, &length, NULL) && length && text[0] == '{')
        root = parse_root(text, (gssize)length);
    g_free(text);
    gboolean ok = replace_model(doc, loaded, root, path, error);
    if (root)
        json_node_unref(root);
    return ok;
}

gboolean tw_model_doc_load_json(TwModelDoc *doc, const char *json, const char *source_name, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && json, FALSE);
    begin_edit(doc);
    tw_model *loaded = tw_model_from_json(json, strlen(json), source_name);
    JsonNode *root = loaded ? parse_root(json, -1) : NULL;
    gboolean ok = replace_model(doc, loaded, root, NULL, error);
    if (root)
        json_node_unref(root);
    return ok;
}

gboolean tw_model_doc_save(TwModelDoc *doc, const char *path, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && path, FALSE);
    if (!doc->keras) {
        g_set_error(error, doc_error_quark(), 0, "%s: not saved, the graph is not a model yet: %s", path,
                    doc->error ? doc->error : "it does not build");
        return FALSE;
    }
    GError *io = NULL;
    char *text = keras_to_save(doc);
    gboolean written = g_file_set_contents(path, text, -1, &io);
    g_free(text);
    if (!written) {
        g_set_error(error, doc_error_quark(), 0, "model save: %s", io->message);
        g_error_free(io);
        return FALSE;
    }
    g_free(doc->saved_state);
    doc->saved_state = g_strdup(doc->state);
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
    return doc->keras ? keras_to_save(doc) : g_strdup(doc->state);
}

char *tw_model_doc_state(TwModelDoc *doc)
{
    return g_strdup(doc->state);
}

const char *tw_model_doc_name(TwModelDoc *doc)
{
    return doc->name;
}

const char *tw_model_doc_path(TwModelDoc *doc)
{
    return doc->path;
}

gboolean tw_model_doc_modified(TwModelDoc *doc)
{
    return g_strcmp0(doc->state, doc->saved_state) != 0;
}

gboolean tw_model_doc_is_graph(TwModelDoc *doc)
{
    return !is_chain(doc);
}

tw_model *tw_model_doc_model(TwModelDoc *doc)
{
    return doc->model;
}

int tw_model_doc_n_layers(TwModelDoc *doc)
{
    return n_nodes(doc);
}

static gboolean valid_node(TwModelDoc *doc, int node)
{
    return node >= 0 && node < n_nodes(doc);
}

tw_layer *tw_model_doc_layer(TwModelDoc *doc, int index)
{
    return valid_node(doc, index) ? node_at(doc, index)->layer : NULL;
}

gboolean tw_model_doc_node_expanded(TwModelDoc *doc, int node)
{
    return valid_node(doc, node) && tw_layer_is_model(node_at(doc, node)->layer) &&
           g_hash_table_contains(doc->expanded, tw_layer_name(node_at(doc, node)->layer));
}

gboolean tw_model_doc_set_node_expanded(TwModelDoc *doc, int node, gboolean expanded)
{
    if (!valid_node(doc, node) || !tw_layer_is_model(node_at(doc, node)->layer))
        return FALSE;
    const char *name = tw_layer_name(node_at(doc, node)->layer);
    if (expanded)
        g_hash_table_add(doc->expanded, g_strdup(name));
    else
        g_hash_table_remove(doc->expanded, name);
    return TRUE;
}

/* ---- the graph ------------------------------------------------------------ */
int tw_model_doc_node_ninputs(TwModelDoc *doc, int node)
{
    return valid_node(doc, node) ? node_at(doc, node)->nin : 0;
}

gboolean tw_model_doc_node_input(TwModelDoc *doc, int node, int input, int *from, int *port)
{
    if (!valid_node(doc, node) || input < 0 || input >= node_at(doc, node)->nin)
        return FALSE;
    *from = node_at(doc, node)->in[input].node;
    *port = node_at(doc, node)->in[input].port;
    return TRUE;
}

int tw_model_doc_node_max_inputs(TwModelDoc *doc, int node)
{
    return valid_node(doc, node) ? max_inputs(node_at(doc, node)->layer) : 0;
}

int tw_model_doc_node_noutputs(TwModelDoc *doc, int node)
{
    return valid_node(doc, node) ? MAX(doc->info[node].noutputs, 1) : 0;
}

const tw_shape *tw_model_doc_node_output(TwModelDoc *doc, int node, int port)
{
    if (!valid_node(doc, node) || port < 0 || port >= doc->info[node].noutputs)
        return NULL;
    return &doc->info[node].outputs[port];
}

const char *tw_model_doc_node_error(TwModelDoc *doc, int node)
{
    return valid_node(doc, node) ? doc->info[node].error : NULL;
}

const char *tw_model_doc_node_cannot_run(TwModelDoc *doc, int node)
{
    return valid_node(doc, node) && doc->info[node].cannot_run ? doc->info[node].error : NULL;
}

void tw_model_doc_node_position(TwModelDoc *doc, int node, double *x, double *y)
{
    *x = valid_node(doc, node) ? node_at(doc, node)->x : 0;
    *y = valid_node(doc, node) ? node_at(doc, node)->y : 0;
}

gboolean tw_model_doc_has_user_positions(TwModelDoc *doc)
{
    return doc->user_positions;
}

/* ---- names ---------------------------------------------------------------- */
/* Keras' to_snake_case: "MaxPooling2D" -> "max_pooling2d", "SimpleRNN" -> "simple_rnn". */
static char *snake_case(const char *camel)
{
    GString *out = g_string_new(NULL);
    for (const char *p = camel; *p; p++) {
        gboolean upper = g_ascii_isupper(*p);
        gboolean word_start = upper && p > camel &&
                              (g_ascii_islower(p[-1]) || (g_ascii_isupper(p[-1]) && g_ascii_islower(p[1])));
        if (word_start)
            g_string_append_c(out, '_');
        g_string_append_c(out, g_ascii_tolower(*p));
    }
    return g_string_free(out, FALSE);
}

static gboolean name_taken(TwModelDoc *doc, const char *name, const tw_layer *except)
{
    for (int i = 0; i < n_nodes(doc); i++)
        if (node_at(doc, i)->layer != except && !strcmp(tw_layer_name(node_at(doc, i)->layer), name))
            return TRUE;
    return FALSE;
}

/* base, base_1, base_2, ... as Keras names layers. */
static char *unique_name(TwModelDoc *doc, const char *base)
{
    if (!name_taken(doc, base, NULL))
        return g_strdup(base);
    for (int k = 1;; k++) {
        char *name = g_strdup_printf("%s_%d", base, k);
        if (!name_taken(doc, name, NULL))
            return name;
        g_free(name);
    }
}

static tw_layer *new_layer(TwModelDoc *doc, const char *class_name)
{
    tw_layer *layer = tw_layer_new(class_name, NULL);
    if (!layer)
        return NULL;
    char *base = snake_case(class_name);
    char *name = unique_name(doc, base);
    tw_layer_set_name(layer, name);
    g_free(name);
    g_free(base);
    return layer;
}

/* ---- the stack's edits (chains) ------------------------------------------- */
static gboolean check_index(TwModelDoc *doc, int index, int count, GError **error)
{
    if (index >= 0 && index < count)
        return TRUE;
    g_set_error(error, doc_error_quark(), 0, "layer index %d is out of range for %d layers", index, n_nodes(doc));
    return FALSE;
}

static gboolean check_chain(TwModelDoc *doc, GError **error)
{
    if (is_chain(doc))
        return TRUE;
    return fail(error, "the model is a graph, not a stack: edit its layers on the canvas");
}

/* Make the nodes a chain in array order again. */
static void rechain(TwModelDoc *doc)
{
    for (int i = 0; i < n_nodes(doc); i++) {
        Node *node = node_at(doc, i);
        node->nin = i ? 1 : 0;
        node->in[0] = (Src){i - 1, 0};
    }
}

/* The input shape belongs to the top of the stack: when an edit puts
 * another layer first, that layer takes over the shape the first one had. */
static void keep_input_shape_on_top(TwModelDoc *doc, const tw_shape *had)
{
    tw_layer *first = n_nodes(doc) ? node_at(doc, 0)->layer : NULL;
    if (had->ndim && first && !tw_layer_is_model(first) && !own_shape(first))
        tw_layer_set_input_shape(first, had);
}

static tw_shape input_shape_now(TwModelDoc *doc)
{
    const tw_shape *shape = n_nodes(doc) ? own_shape(node_at(doc, 0)->layer) : NULL;
    return shape ? *shape : (tw_shape){0};
}

/* After a chain's nodes were inserted, removed or reordered in the array. */
static gboolean finish_chain_edit(TwModelDoc *doc, const tw_shape *had, GError **error)
{
    rechain(doc);
    keep_input_shape_on_top(doc, had);
    place_column(doc, 0);
    return commit(doc, error);
}

static void insert_node(TwModelDoc *doc, int index, tw_layer *layer)
{
    Node node = {.layer = layer};
    g_array_insert_val(doc->nodes, index, node);
}

gboolean tw_model_doc_insert(TwModelDoc *doc, int index, const char *class_name, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && class_name, FALSE);
    begin_edit(doc);
    if (!check_chain(doc, error) || !check_index(doc, index, n_nodes(doc) + 1, error))
        return FALSE;
    tw_layer *layer = new_layer(doc, class_name);
    if (!layer)
        return engine_fail(error);
    tw_shape had = input_shape_now(doc);
    insert_node(doc, index, layer);
    return finish_chain_edit(doc, &had, error);
}

gboolean tw_model_doc_remove(TwModelDoc *doc, int index, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc), FALSE);
    begin_edit(doc);
    if (!check_chain(doc, error) || !check_index(doc, index, n_nodes(doc), error))
        return FALSE;
    tw_shape had = input_shape_now(doc);
    g_array_remove_index(doc->nodes, index);
    return finish_chain_edit(doc, &had, error);
}

gboolean tw_model_doc_move(TwModelDoc *doc, int from, int to, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc), FALSE);
    begin_edit(doc);
    int n = n_nodes(doc);
    if (!check_chain(doc, error) || !check_index(doc, from, n, error) || !check_index(doc, to, n, error))
        return FALSE;
    if (from == to)
        return TRUE;
    tw_shape had = input_shape_now(doc);
    tw_layer *layer = tw_layer_ref(node_at(doc, from)->layer);
    g_array_remove_index(doc->nodes, from);
    insert_node(doc, to, layer);
    return finish_chain_edit(doc, &had, error);
}

gboolean tw_model_doc_duplicate(TwModelDoc *doc, int index, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc), FALSE);
    begin_edit(doc);
    if (!check_chain(doc, error) || !check_index(doc, index, n_nodes(doc), error))
        return FALSE;
    const char *class_name = tw_layer_class_of(node_at(doc, index)->layer)->name;
    char *base = snake_case(class_name);
    char *name = unique_name(doc, base);
    tw_layer *copy = tw_layer_clone(node_at(doc, index)->layer, name);
    if (copy && tw_layer_is_model(copy))
        copy_nested_positions(doc, doc->nested, tw_layer_name(node_at(doc, index)->layer), name);
    g_free(name);
    g_free(base);
    if (!copy)
        return engine_fail(error);
    tw_layer_set_input_shape(copy, NULL); /* only the first layer's counts */
    tw_shape had = input_shape_now(doc);
    insert_node(doc, index + 1, copy);
    return finish_chain_edit(doc, &had, error);
}

gboolean tw_model_doc_set_param(TwModelDoc *doc, int index, const char *key, const char *text, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && key && text, FALSE);
    begin_edit(doc);
    if (!check_index(doc, index, n_nodes(doc), error))
        return FALSE;
    if (tw_layer_set(node_at(doc, index)->layer, key, text))
        return engine_fail(error);
    return commit(doc, error);
}

gboolean tw_model_doc_rename_layer(TwModelDoc *doc, int index, const char *name, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && name, FALSE);
    begin_edit(doc);
    if (!check_index(doc, index, n_nodes(doc), error))
        return FALSE;
    if (name_taken(doc, name, node_at(doc, index)->layer)) {
        g_set_error(error, doc_error_quark(), 0, "another layer is already named \"%s\"; names must be unique", name);
        return FALSE;
    }
    char *old = g_strdup(tw_layer_name(node_at(doc, index)->layer));
    if (tw_layer_set_name(node_at(doc, index)->layer, name)) {
        g_free(old);
        return engine_fail(error);
    }
    /* A nested model's positions follow its name. */
    JsonNode *tree = json_object_dup_member(doc->nested, old);
    if (tree) {
        json_object_remove_member(doc->nested, old);
        json_object_set_member(doc->nested, name, tree);
    }
    g_free(old);
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
    if (!check_index(doc, index, n_nodes(doc), error) || !parse_input_shape(text, &shape, error))
        return FALSE;
    if (tw_layer_set_input_shape(node_at(doc, index)->layer, shape.ndim ? &shape : NULL))
        return engine_fail(error);
    return commit(doc, error);
}

/* ---- graph edits ---------------------------------------------------------- */
/* A new node that is not part of a chain makes the document Functional. */
static void leave_sequential(TwModelDoc *doc)
{
    if (!is_chain(doc))
        doc->sequential = FALSE;
}

int tw_model_doc_add_node(TwModelDoc *doc, const char *class_name, double x, double y, GError **error)
{
    return tw_model_doc_add_node_after(doc, class_name, -1, x, y, error);
}

int tw_model_doc_add_node_after(TwModelDoc *doc, const char *class_name, int from, double x, double y,
                                GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && class_name, -1);
    begin_edit(doc);
    if (from >= n_nodes(doc) || from < -1) {
        fail(error, "no such layer");
        return -1;
    }
    tw_layer *layer = new_layer(doc, class_name);
    if (!layer) {
        engine_fail(error);
        return -1;
    }
    if (from >= 0 && !max_inputs(layer)) {
        tw_layer_unref(layer);
        fail(error, "an InputLayer takes no input: it cannot follow another layer");
        return -1;
    }
    Node node = {.layer = layer, .x = x, .y = y};
    if (from >= 0)
        node.in[node.nin++] = (Src){from, 0};
    g_array_append_val(doc->nodes, node);
    leave_sequential(doc);
    doc->user_positions = TRUE;
    return commit(doc, error) ? n_nodes(doc) - 1 : -1;
}

int tw_model_doc_add_block(TwModelDoc *doc, const tw_model_doc_block_layer *layers, int n, int from, double x,
                           double y, double room, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && layers && n > 0, -1);
    begin_edit(doc);
    int first = n_nodes(doc);
    if (from >= first || from < -1) {
        fail(error, "no such layer");
        return -1;
    }
    /* Every layer made and checked before the document changes. */
    Node *made = g_new0(Node, n);
    char *why = NULL;
    for (int i = 0; i < n && !why; i++) {
        const tw_model_doc_block_layer *b = &layers[i];
        made[i].layer = tw_layer_new(b->class_name, NULL);
        if (!made[i].layer) {
            why = g_strdup(tw_last_error());
            break;
        }
        for (int p = 0; p + 1 < 2 * TW_MODEL_DOC_BLOCK_MAX_PARAMS && b->params[p] && !why; p += 2)
            if (tw_layer_set(made[i].layer, b->params[p], b->params[p + 1]) != 0)
                why = g_strdup_printf("%s %s: %s", b->class_name, b->params[p], tw_last_error());
        made[i].x = x + b->dx;
        made[i].y = y + b->dy;
        for (int k = 0; k < b->ninputs && !why; k++) {
            int in = b->inputs[k];
            if (in == TW_MODEL_DOC_BLOCK_OPEN)
                break; /* this one and the rest stay free */
            if (in == TW_MODEL_DOC_BLOCK_FROM && from < 0)
                why = g_strdup("the block follows a layer: select the layer it should follow");
            else
                made[i].in[made[i].nin++] = (Src){in == TW_MODEL_DOC_BLOCK_FROM ? from : first + in, 0};
        }
    }
    if (why) {
        for (int k = 0; k < n; k++)
            if (made[k].layer)
                tw_layer_unref(made[k].layer);
        g_free(made);
        fail(error, why);
        g_free(why);
        return -1;
    }
    /* In the chain as a single layer goes in: what fed on from's first
     * output feeds on the block's last layer, and the boxes below from
     * move down by room. */
    for (int i = 0; i < first && from >= 0; i++) {
        Node *node = node_at(doc, i);
        for (int e = 0; e < node->nin; e++)
            if (node->in[e].node == from && node->in[e].port == 0)
                node->in[e] = (Src){first + n - 1, 0};
        if (node->y > node_at(doc, from)->y)
            node->y += room;
    }
    for (int k = 0; k < n; k++) {
        char *base = snake_case(layers[k].class_name), *name = unique_name(doc, base);
        tw_layer_set_name(made[k].layer, name);
        g_free(name);
        g_free(base);
        g_array_append_val(doc->nodes, made[k]);
    }
    g_free(made);
    leave_sequential(doc);
    doc->user_positions = TRUE;
    return commit(doc, error) ? first : -1;
}

/* Whether to is reachable from from along edges (each node visited once:
 * a graph of many residual blocks has exponentially many paths). */
static gboolean reaches(TwModelDoc *doc, int from, int to)
{
    int n = n_nodes(doc), top = 0;
    gboolean *seen = g_new0(gboolean, n + 1), found = FALSE;
    int *stack = g_new(int, n + 1);
    stack[top++] = from;
    seen[from] = TRUE;
    while (top && !found) {
        int at = stack[--top];
        found = at == to;
        for (int j = 0; j < n && !found; j++)
            for (int e = 0; e < node_at(doc, j)->nin; e++)
                if (node_at(doc, j)->in[e].node == at && !seen[j]) {
                    seen[j] = TRUE;
                    stack[top++] = j;
                    break;
                }
    }
    g_free(seen);
    g_free(stack);
    return found;
}

int tw_model_doc_insert_on_edge(TwModelDoc *doc, const char *class_name, int node, int input, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && class_name, -1);
    begin_edit(doc);
    if (!valid_node(doc, node) || input < 0 || input >= node_at(doc, node)->nin) {
        fail(error, "no such edge");
        return -1;
    }
    tw_layer *layer = new_layer(doc, class_name);
    if (!layer) {
        engine_fail(error);
        return -1;
    }
    if (max_inputs(layer) == 0) {
        tw_layer_unref(layer);
        fail(error, "an InputLayer takes no input: it cannot go on an edge");
        return -1;
    }
    if (is_chain(doc)) {
        /* A chain stays one: the new node goes to its place in the list. */
        tw_shape had = input_shape_now(doc);
        insert_node(doc, node, layer);
        return finish_chain_edit(doc, &had, error) ? node : -1;
    }
    Node *to = node_at(doc, node);
    Src src = to->in[input];
    Node *from = node_at(doc, src.node);
    Node fresh = {.layer = layer, .nin = 1, .in = {src}};
    fresh.x = (from->x + to->x) / 2;
    fresh.y = (from->y + to->y) / 2;
    int index = n_nodes(doc);
    to->in[input] = (Src){index, 0};
    g_array_append_val(doc->nodes, fresh);
    return commit(doc, error) ? index : -1;
}

gboolean tw_model_doc_connect(TwModelDoc *doc, int from, int port, int to, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc), FALSE);
    begin_edit(doc);
    if (!valid_node(doc, from) || !valid_node(doc, to) || port < 0)
        return fail(error, "no such layer");
    Node *dst = node_at(doc, to);
    const char *name = tw_layer_name(dst->layer);
    if (port >= tw_model_doc_node_noutputs(doc, from)) {
        g_set_error(error, doc_error_quark(), 0, "%s has no output %d", tw_layer_name(node_at(doc, from)->layer),
                    port);
        return FALSE;
    }
    if (dst->nin >= max_inputs(dst->layer)) {
        g_set_error(error, doc_error_quark(), 0, "%s takes %s; disconnect one first", name,
                    max_inputs(dst->layer) ? "one input" : "no input (it is an InputLayer)");
        return FALSE;
    }
    if (reaches(doc, to, from)) {
        g_set_error(error, doc_error_quark(), 0, "connecting %s to %s would make a cycle",
                    tw_layer_name(node_at(doc, from)->layer), name);
        return FALSE;
    }
    dst->in[dst->nin++] = (Src){from, port};
    leave_sequential(doc);
    return commit(doc, error);
}

gboolean tw_model_doc_disconnect(TwModelDoc *doc, int node, int input, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc), FALSE);
    begin_edit(doc);
    if (!valid_node(doc, node) || input < 0 || input >= node_at(doc, node)->nin)
        return fail(error, "no such edge");
    Node *dst = node_at(doc, node);
    memmove(&dst->in[input], &dst->in[input + 1], sizeof(Src) * (dst->nin - input - 1));
    dst->nin--;
    leave_sequential(doc);
    return commit(doc, error);
}

static int cmp_int(gconstpointer a, gconstpointer b)
{
    return *(const int *)a - *(const int *)b;
}

gboolean tw_model_doc_delete_nodes(TwModelDoc *doc, const int *nodes, int n, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc), FALSE);
    begin_edit(doc);
    int total = n_nodes(doc);
    gboolean *gone = g_new0(gboolean, total + 1);
    for (int k = 0; k < n; k++) {
        if (!valid_node(doc, nodes[k])) {
            g_free(gone);
            return fail(error, "no such layer");
        }
        gone[nodes[k]] = TRUE;
    }
    gboolean chain = is_chain(doc);
    tw_shape had = input_shape_now(doc);
    /* One node of one input: its readers read its source instead. */
    Src bridge = {-1, 0};
    if (n == 1 && node_at(doc, nodes[0])->nin == 1)
        bridge = node_at(doc, nodes[0])->in[0];
    int *index = g_new(int, total + 1); /* old -> new */
    for (int i = 0, k = 0; i < total; i++)
        index[i] = gone[i] ? -1 : k++;
    for (int i = 0; i < total; i++) {
        Node *node = node_at(doc, i);
        int kept = 0;
        for (int e = 0; e < node->nin; e++) {
            Src s = node->in[e];
            if (gone[s.node] && bridge.node >= 0)
                s = bridge;
            if (!gone[s.node])
                node->in[kept++] = (Src){index[s.node], s.port};
        }
        node->nin = kept;
    }
    int *sorted = g_memdup2(nodes, sizeof(int) * n);
    qsort(sorted, n, sizeof(int), cmp_int);
    for (int k = n - 1; k >= 0; k--)
        if (k == n - 1 || sorted[k] != sorted[k + 1])
            g_array_remove_index(doc->nodes, sorted[k]);
    g_free(sorted);
    g_free(index);
    g_free(gone);
    if (chain && is_chain(doc)) {
        keep_input_shape_on_top(doc, &had);
        if (!doc->user_positions)
            place_column(doc, 0);
    }
    return commit(doc, error);
}

gboolean tw_model_doc_move_nodes(TwModelDoc *doc, const int *nodes, int n, double dx, double dy, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc), FALSE);
    begin_edit(doc);
    for (int k = 0; k < n; k++)
        if (!valid_node(doc, nodes[k]))
            return fail(error, "no such layer");
    GHashTable *moved = g_hash_table_new(NULL, NULL);
    for (int k = 0; k < n; k++)
        if (g_hash_table_add(moved, GINT_TO_POINTER(nodes[k] + 1))) {
            node_at(doc, nodes[k])->x += dx;
            node_at(doc, nodes[k])->y += dy;
        }
    g_hash_table_unref(moved);
    doc->user_positions = TRUE;
    return commit(doc, error);
}

gboolean tw_model_doc_set_positions(TwModelDoc *doc, const double *xy, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && xy, FALSE);
    begin_edit(doc);
    for (int i = 0; i < n_nodes(doc); i++) {
        node_at(doc, i)->x = xy[2 * i];
        node_at(doc, i)->y = xy[2 * i + 1];
    }
    return commit(doc, error);
}

char *tw_model_doc_copy_nodes(TwModelDoc *doc, const int *nodes, int n)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc), NULL);
    for (int k = 0; k < n; k++)
        g_return_val_if_fail(valid_node(doc, nodes[k]), NULL);
    /* The positions inside the nested models copied go along: a copy of
     * a nested model is laid out inside as the original is. */
    JsonObject *nested = json_object_new();
    for (int k = 0; k < n; k++) {
        const char *name = tw_layer_name(node_at(doc, nodes[k])->layer);
        if (json_object_has_member(doc->nested, name) && !json_object_has_member(nested, name))
            json_object_set_member(nested, name, json_object_dup_member(doc->nested, name));
    }
    char *text = with_nested(write_state(doc->name, FALSE, doc->nodes, nodes, n), nested);
    json_object_unref(nested);
    return text;
}


/* A pasted layer's name: its own when free, else the next free one of
 * its base ("conv2d_3" -> "conv2d_4"...). */
static char *paste_name(TwModelDoc *doc, const char *name)
{
    char *base = g_strdup(name);
    char *us = strrchr(base, '_');
    if (us && us[1] && strspn(us + 1, "0123456789") == strlen(us + 1))
        *us = 0;
    char *unique = name_taken(doc, name, NULL) ? unique_name(doc, base) : g_strdup(name);
    g_free(base);
    return unique;
}

int tw_model_doc_paste(TwModelDoc *doc, const char *text, double dx, double dy, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && text, -1);
    begin_edit(doc);
    int first = n_nodes(doc);
    JsonObject *nested = NULL;
    if (!read_nodes(text, doc->nodes, NULL, NULL, &nested, error))
        return -1;
    GHashTable *renamed = g_hash_table_new(NULL, NULL);
    for (int i = first; i < n_nodes(doc); i++) {
        Node *node = node_at(doc, i);
        node->x += dx;
        node->y += dy;
        if (!g_hash_table_add(renamed, node->layer))
            continue; /* a shared layer, renamed once */
        char *name = paste_name(doc, tw_layer_name(node->layer));
        if (tw_layer_is_model(node->layer))
            copy_nested_positions(doc, nested, tw_layer_name(node->layer), name);
        tw_layer_set_name(node->layer, name);
        g_free(name);
    }
    g_hash_table_unref(renamed);
    json_object_unref(nested);
    leave_sequential(doc);
    doc->user_positions = TRUE;
    if (n_nodes(doc) == first)
        return first;
    return commit(doc, error) ? first : -1;
}

/* ---- undo and redo -------------------------------------------------------- */
void tw_model_doc_begin_group(TwModelDoc *doc)
{
    g_return_if_fail(TW_IS_MODEL_DOC(doc));
    doc->grouping = TRUE;
    doc->group_step = NULL;
}

void tw_model_doc_end_group(TwModelDoc *doc)
{
    g_return_if_fail(TW_IS_MODEL_DOC(doc));
    doc->grouping = FALSE;
    doc->group_step = NULL;
}

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
    doc->group_step = NULL; /* a group's next edit makes a step of its own */
    GError *error = NULL;
    if (!restore(doc, undo ? step->before : step->after, &error)) {
        g_warning("model history: a recorded state does not read back: %s", error->message);
        g_error_free(error);
        step_free(step);
        return FALSE;
    }
    g_ptr_array_add(to, step);
    emit_changed(doc);
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
    return valid_node(doc, index) ? &doc->info[index].info : NULL;
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
    if (!doc->keras) {
        g_set_error(error, doc_error_quark(), 0, "the graph is not a model yet: %s",
                    doc->error ? doc->error : "it does not build");
        return NULL;
    }
    tw_model *copy = tw_model_from_json(doc->keras, strlen(doc->keras), NULL);
    if (!copy)
        engine_fail(error);
    return copy;
}

/* ---- nested models ---------------------------------------------------------- */
char *tw_model_doc_nested_json(TwModelDoc *doc, int node)
{
    if (!valid_node(doc, node) || !tw_layer_is_model(node_at(doc, node)->layer))
        return NULL;
    const tw_layer *layer = node_at(doc, node)->layer;
    char *json = tw_model_to_json(layer);
    /* With the positions kept inside it, at the top as in a file of ours. */
    JsonNode *tree = json ? json_object_get_member(doc->nested, tw_layer_name(layer)) : NULL;
    char *out = tw_nested_positions_apply(json, tree ? json_node_get_object(tree) : NULL);
    free(json);
    return out;
}

/* The messages of the nodes that call layer, joined, each once (the
 * calls of a shared encoder fail alike); NULL when none fails. */
static char *layer_errors(TwModelDoc *doc, const tw_layer *layer)
{
    GString *out = NULL;
    for (int i = 0; i < n_nodes(doc); i++)
        if (node_at(doc, i)->layer == layer && doc->info[i].error && !doc->info[i].cannot_run &&
            !(out && strstr(out->str, doc->info[i].error))) {
            if (!out)
                out = g_string_new(NULL);
            else
                g_string_append(out, "; ");
            g_string_append(out, doc->info[i].error);
        }
    return out ? g_string_free(out, FALSE) : NULL;
}

gboolean tw_model_doc_replace_nested(TwModelDoc *doc, int node, const char *json, GError **error)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc) && json, FALSE);
    begin_edit(doc);
    if (!valid_node(doc, node) || !tw_layer_is_model(node_at(doc, node)->layer)) {
        g_set_error(error, doc_error_quark(), 0, "node %d is not a nested model", node);
        return FALSE;
    }
    tw_model *fresh = tw_model_from_json(json, strlen(json), NULL);
    if (!fresh)
        return engine_fail(error);
    tw_layer *old = node_at(doc, node)->layer;
    /* The layer keeps its name (what the outer model and the weight paths
     * call it) and whether it is frozen. */
    if (tw_layer_set_name(fresh, tw_layer_name(old)) || tw_layer_set_trainable(fresh, tw_layer_trainable(old))) {
        tw_layer_unref(fresh);
        return engine_fail(error);
    }
    /* The positions inside it go with it (restore takes the old ones back
     * on a refusal, as it takes back the nodes). */
    JsonNode *root = parse_root(json, -1);
    JsonObject *tree = tw_nested_positions_tree(root);
    json_node_unref(root);
    if (tree)
        json_object_set_object_member(doc->nested, tw_layer_name(old), tree);
    else if (json_object_has_member(doc->nested, tw_layer_name(old)))
        json_object_remove_member(doc->nested, tw_layer_name(old));
    char *before = layer_errors(doc, old);
    /* Every call of a shared nested model (one encoder for three inputs)
     * takes the new one; each node holds a reference. */
    tw_layer_ref(old);
    for (int i = 0; i < n_nodes(doc); i++) {
        Node *n = node_at(doc, i);
        if (n->layer == old) {
            n->layer = tw_layer_ref(fresh);
            tw_layer_unref(old);
        }
    }
    tw_layer_unref(old);
    infer(doc);
    char *after = layer_errors(doc, fresh);
    tw_layer_unref(fresh);
    if (after && !before) {
        g_set_error(error, doc_error_quark(), 0, "%s", after);
        char *state = g_strdup(doc->state);
        restore(doc, state, NULL);
        g_free(state);
        derive(doc);
        g_free(after);
        return FALSE;
    }
    g_free(before);
    g_free(after);
    return commit(doc, error);
}
