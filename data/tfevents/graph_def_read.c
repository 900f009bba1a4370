/* An event file's GraphDef (TensorFlow's graph, as tf.summary.graph, the
 * Keras callback and PyTorch's add_graph write it) as twb's graph JSON
 * (docs/graph_json.md), which the run database stores and the graph view
 * draws: one node per NodeDef, its TensorFlow op name kept, its scope the
 * name up to the last '/' (TensorBoard's name scopes), data inputs as
 * [node, output], each output's dtype and shape from the "_output_shapes"
 * and type attrs when the writer put them there.
 *
 * The JSON lists nodes in an order where every input comes first; a
 * GraphDef need not (and a TF1 while loop's NextIteration feeds its Merge
 * back), so the nodes are put in depth-first post-order, file order kept
 * where it already is one, and an input that closes a cycle is left out.
 * Control inputs ("^name") carry no tensor and are left out too; both are
 * how TensorFlow graphs are, not damage. An input naming no node is
 * damage: left out, and the note says how many. */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "graph.pb-c.h"
#include "tfevents_internal.h"

/* An output index above this ("node:99999999") is taken as damage: no op
 * has that many outputs, and the node's outputs are allocated up to it. */
#define MAX_OUTPUT_INDEX 4096

typedef struct {
    int node, output; /* -1: left out */
} edge;

typedef struct {
    const Tensorflow__NodeDef *def;
    edge *inputs;
    int ninputs;
    int noutputs;
    int order; /* position in the JSON */
} node_info;

/* TensorFlow's DataType (types.proto) by number; reference types (+100)
 * name their base type. */
static const char *dtype_name(int t)
{
    static const char *const names[] = {
        [1] = "float32",  [2] = "float64",  [3] = "int32",     [4] = "uint8",    [5] = "int16",
        [6] = "int8",     [7] = "string",   [8] = "complex64", [9] = "int64",    [10] = "bool",
        [11] = "qint8",   [12] = "quint8",  [13] = "qint32",   [14] = "bfloat16", [15] = "qint16",
        [16] = "quint16", [17] = "uint16",  [18] = "complex128", [19] = "float16", [20] = "resource",
        [21] = "variant", [22] = "uint32",  [23] = "uint64",
    };
    if (t > 100)
        t -= 100;
    return t > 0 && t < (int)G_N_ELEMENTS(names) && names[t] ? names[t] : "?";
}

static const Tensorflow__AttrValue *attr(const Tensorflow__NodeDef *n, const char *key)
{
    for (size_t i = 0; i < n->n_attr; i++)
        if (n->attr[i] && n->attr[i]->key && !strcmp(n->attr[i]->key, key))
            return n->attr[i]->value;
    return NULL;
}

/* Output k's dtype: a list of output types when the op has one (as many as
 * the outputs), else the op's single type attr. */
static const char *output_dtype(const Tensorflow__NodeDef *n, int k, int noutputs)
{
    static const char *const lists[] = {"_output_types", "output_types", "Tout", "out_types"};
    for (size_t i = 0; i < G_N_ELEMENTS(lists); i++) {
        const Tensorflow__AttrValue *a = attr(n, lists[i]);
        if (a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && (int)a->list->n_type == noutputs)
            return dtype_name(a->list->type[k]);
    }
    static const char *const singles[] = {"dtype", "T", "DstT", "out_type", "Tidx"};
    for (size_t i = 0; i < G_N_ELEMENTS(singles); i++) {
        const Tensorflow__AttrValue *a = attr(n, singles[i]);
        if (a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE)
            return dtype_name(a->type);
    }
    return "?";
}

static void append_json_string(GString *out, const char *s)
{
    char *valid = g_utf8_make_valid(s ? s : "", -1);
    g_string_append_c(out, '"');
    for (const char *p = valid; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\')
            g_string_append_printf(out, "\\%c", c);
        else if (c < 0x20)
            g_string_append_printf(out, "\\u%04x", c);
        else
            g_string_append_c(out, (char)c);
    }
    g_string_append_c(out, '"');
    g_free(valid);
}

/* "name", "name:k" (k a decimal) or "^name" (a control input: *control). */
static edge parse_input(const char *text, GHashTable *index, bool *control)
{
    edge e = {-1, -1};
    *control = text[0] == '^';
    if (*control)
        return e;
    const char *colon = strrchr(text, ':');
    int k = 0;
    char *name = NULL;
    if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1) && strlen(colon + 1) < 6) {
        k = atoi(colon + 1);
        name = g_strndup(text, (gsize)(colon - text));
    } else {
        name = g_strdup(text);
    }
    gpointer found;
    if (k <= MAX_OUTPUT_INDEX && g_hash_table_lookup_extended(index, name, NULL, &found))
        e = (edge){GPOINTER_TO_INT(found), k};
    g_free(name);
    return e;
}

/* Depth-first post-order from every node in file order, without recursion
 * (a chain of 100,000 nodes is one path); an input to a node still on the
 * path closes a cycle and is cut. Returns the nodes by position. */
static int *order_nodes(node_info *nodes, int n)
{
    enum { UNSEEN, ON_PATH, DONE };
    char *state = g_new0(char, MAX(n, 1));
    int *stack = g_new(int, MAX(n, 1)), *next_input = g_new0(int, MAX(n, 1));
    int *by_position = g_new(int, MAX(n, 1));
    int placed = 0;
    for (int root = 0; root < n; root++) {
        if (state[root] != UNSEEN)
            continue;
        int depth = 0;
        stack[depth++] = root;
        state[root] = ON_PATH;
        while (depth > 0) {
            int v = stack[depth - 1];
            if (next_input[v] < nodes[v].ninputs) {
                edge *e = &nodes[v].inputs[next_input[v]++];
                if (e->node < 0)
                    continue;
                if (state[e->node] == ON_PATH)
                    e->node = e->output = -1;
                else if (state[e->node] == UNSEEN) {
                    state[e->node] = ON_PATH;
                    stack[depth++] = e->node;
                }
                continue;
            }
            state[v] = DONE;
            nodes[v].order = placed;
            by_position[placed++] = v;
            depth--;
        }
    }
    g_free(state), g_free(stack), g_free(next_input);
    return by_position;
}

static void append_shape(GString *out, const Tensorflow__TensorShapeProto *s)
{
    if (!s || s->unknown_rank) {
        g_string_append(out, "null");
        return;
    }
    g_string_append_c(out, '[');
    for (size_t d = 0; d < s->n_dim; d++)
        g_string_append_printf(out, "%s%" G_GINT64_FORMAT, d ? ", " : "",
                               s->dim[d] && s->dim[d]->size >= 0 ? (gint64)s->dim[d]->size : (gint64)-1);
    g_string_append_c(out, ']');
}

static void append_node(GString *out, const node_info *nodes, int v, int id)
{
    const node_info *ni = &nodes[v];
    const Tensorflow__NodeDef *def = ni->def;
    const char *name = def->name ? def->name : "";
    const char *slash = strrchr(name, '/');
    char *scope = slash ? g_strndup(name, (gsize)(slash - name)) : g_strdup("");
    g_string_append_printf(out, "%s\n  {\"id\": %d, \"op\": ", id ? "," : "", id);
    append_json_string(out, def->op && def->op[0] ? def->op : "?");
    g_string_append(out, ", \"name\": ");
    append_json_string(out, name);
    g_string_append(out, ", \"scope\": ");
    append_json_string(out, scope);
    g_string_append(out, ", \"inputs\": [");
    int written = 0;
    for (int k = 0; k < ni->ninputs; k++)
        if (ni->inputs[k].node >= 0)
            g_string_append_printf(out, "%s[%d, %d]", written++ ? ", " : "", nodes[ni->inputs[k].node].order,
                                   ni->inputs[k].output);
    g_string_append(out, "], \"outputs\": [");
    const Tensorflow__AttrValue *shapes = attr(def, "_output_shapes");
    size_t nshapes = shapes && shapes->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST ? shapes->list->n_shape : 0;
    for (int k = 0; k < ni->noutputs; k++) {
        g_string_append_printf(out, "%s{\"dtype\": ", k ? ", " : "");
        append_json_string(out, output_dtype(def, k, ni->noutputs));
        g_string_append(out, ", \"shape\": ");
        append_shape(out, (size_t)k < nshapes ? shapes->list->shape[k] : NULL);
        g_string_append_c(out, '}');
    }
    g_string_append(out, "], \"attrs\": {\"ints\": [], \"floats\": []}}");
    g_free(scope);
}

char *tw__tb_graph_json_from_graph_def(const uint8_t *data, size_t size, const char *function, char *why,
                                       size_t why_size)
{
    why[0] = '\0';
    Tensorflow__GraphDef *g = tensorflow__graph_def__unpack(NULL, size, data);
    if (!g) {
        char detail[200];
        if (tw__pb_check(&tensorflow__graph_def__descriptor, data, size, TW_PB_MAX_DEPTH, detail, sizeof detail))
            snprintf(why, why_size, "not a GraphDef message: %s", detail);
        else
            snprintf(why, why_size, "not a GraphDef message");
        return NULL;
    }
    int n = (int)MIN(g->n_node, (size_t)G_MAXINT / 2);
    if (n == 0) {
        snprintf(why, why_size, "the GraphDef has no nodes");
        tensorflow__graph_def__free_unpacked(g, NULL);
        return NULL;
    }
    GHashTable *index = g_hash_table_new(g_str_hash, g_str_equal);
    node_info *nodes = g_new0(node_info, n);
    char *result = NULL;
    int unknown = 0;
    for (int i = 0; i < n; i++) {
        nodes[i].def = g->node[i];
        const char *name = g->node[i]->name ? g->node[i]->name : "";
        if (!name[0] || g_hash_table_contains(index, name)) {
            snprintf(why, why_size, name[0] ? "node %d: a second node named '%.100s'" : "node %d has no name", i,
                     name);
            goto out;
        }
        g_hash_table_insert(index, (gpointer)name, GINT_TO_POINTER(i));
    }
    for (int i = 0; i < n; i++) {
        const Tensorflow__NodeDef *def = nodes[i].def;
        const Tensorflow__AttrValue *shapes = attr(def, "_output_shapes");
        if (shapes && shapes->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST)
            nodes[i].noutputs = (int)MIN(shapes->list->n_shape, (size_t)MAX_OUTPUT_INDEX + 1);
        nodes[i].inputs = g_new(edge, MAX(def->n_input, 1));
        for (size_t k = 0; k < def->n_input; k++) {
            bool control;
            edge e = parse_input(def->input[k] ? def->input[k] : "", index, &control);
            unknown += !control && e.node < 0;
            nodes[i].inputs[nodes[i].ninputs++] = e;
        }
    }
    for (int i = 0; i < n; i++) /* a producer has at least the outputs read from it */
        for (int k = 0; k < nodes[i].ninputs; k++) {
            edge e = nodes[i].inputs[k];
            if (e.node >= 0 && nodes[e.node].noutputs <= e.output)
                nodes[e.node].noutputs = e.output + 1;
        }
    int *by_position = order_nodes(nodes, n);
    GString *out = g_string_new("{\"format\": \"twb-graph\", \"version\": 1, \"function\": ");
    append_json_string(out, function);
    g_string_append(out, ", \"inputs\": [], \"outputs\": [], \"nodes\": [");
    for (int p = 0; p < n; p++)
        append_node(out, nodes, by_position[p], p);
    g_string_append(out, "]}\n");
    g_free(by_position);
    result = g_string_free(out, FALSE);
    if (unknown)
        snprintf(why, why_size, "%d input%s name%s no node of the graph (left out)", unknown, unknown == 1 ? "" : "s",
                 unknown == 1 ? "s" : "");
out:
    for (int i = 0; i < n; i++)
        g_free(nodes[i].inputs);
    g_free(nodes);
    g_hash_table_unref(index);
    tensorflow__graph_def__free_unpacked(g, NULL);
    return result;
}
