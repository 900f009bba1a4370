/* A traced graph (twb's graph JSON, docs/graph_json.md) as a TensorFlow
 * GraphDef for TensorBoard's graph view: one NodeDef per top-level node,
 * named as in the JSON (its scope path, which TensorBoard folds into
 * collapsible name scopes), its op's registry name, inputs as "producer"
 * or "producer:k", and the outputs' shapes as the "_output_shapes" attr
 * TensorBoard shows on edges. cond and while nodes keep their sub-graphs
 * out (TensorBoard draws them as single nodes). */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "graph.pb-c.h"
#include "tfevents_internal.h"
#include "tw/error.h"
#include "tw/json_check.h"

/* Everything one conversion allocates, freed at once. */
typedef struct {
    GPtrArray *owned;
    GStringChunk *strings;
} pool;

static void *take(pool *p, void *block)
{
    g_ptr_array_add(p->owned, block);
    return block;
}

static Tensorflow__TensorShapeProto *shape_of(pool *p, JsonObject *output)
{
    Tensorflow__TensorShapeProto *s = take(p, g_new(Tensorflow__TensorShapeProto, 1));
    *s = (Tensorflow__TensorShapeProto)TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
    JsonArray *dims = json_object_has_member(output, "shape") &&
                              JSON_NODE_HOLDS_ARRAY(json_object_get_member(output, "shape"))
                          ? json_object_get_array_member(output, "shape")
                          : NULL;
    JsonNode *shape = json_object_get_member(output, "shape");
    if (shape && JSON_NODE_HOLDS_NULL(shape)) /* rank unknown (a graph imported from TensorFlow) */
        s->has_unknown_rank = s->unknown_rank = true;
    s->n_dim = dims ? json_array_get_length(dims) : 0;
    s->dim = take(p, g_new0(Tensorflow__TensorShapeProto__Dim *, MAX(s->n_dim, 1)));
    for (size_t i = 0; i < s->n_dim; i++) {
        Tensorflow__TensorShapeProto__Dim *d = take(p, g_new(Tensorflow__TensorShapeProto__Dim, 1));
        *d = (Tensorflow__TensorShapeProto__Dim)TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT;
        JsonNode *n = json_array_get_element(dims, (guint)i);
        d->has_size = true;
        d->size = JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_INT64 ? json_node_get_int(n) : -1;
        s->dim[i] = d;
    }
    return s;
}

static const char *member_string(JsonObject *o, const char *name)
{
    JsonNode *n = json_object_get_member(o, name);
    return n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING ? json_node_get_string(n)
                                                                                        : NULL;
}

/* One node; names[] are the nodes' names by id (NULL past this one). */
static int node_def(pool *p, JsonObject *o, gint64 id, const char *const *names, Tensorflow__NodeDef *nd, char *why,
                    size_t size)
{
    *nd = (Tensorflow__NodeDef)TENSORFLOW__NODE_DEF__INIT;
    nd->name = (char *)names[id];
    const char *op = member_string(o, "op");
    nd->op = g_string_chunk_insert(p->strings, op ? op : "");
    JsonNode *inputs = json_object_get_member(o, "inputs");
    JsonArray *in = inputs && JSON_NODE_HOLDS_ARRAY(inputs) ? json_node_get_array(inputs) : NULL;
    nd->n_input = in ? json_array_get_length(in) : 0;
    nd->input = take(p, g_new0(char *, MAX(nd->n_input, 1)));
    for (size_t i = 0; i < nd->n_input; i++) {
        JsonNode *e = json_array_get_element(in, (guint)i);
        JsonArray *pair = JSON_NODE_HOLDS_ARRAY(e) ? json_node_get_array(e) : NULL;
        gint64 from = pair && json_array_get_length(pair) == 2 ? json_array_get_int_element(pair, 0) : -1;
        gint64 k = pair && json_array_get_length(pair) == 2 ? json_array_get_int_element(pair, 1) : -1;
        if (from < 0 || from >= id || k < 0) {
            snprintf(why, size, "node %lld (%s): input %zu is not [an earlier node, an output]", (long long)id,
                     names[id], i);
            return -1;
        }
        char *text = k ? g_strdup_printf("%s:%lld", names[from], (long long)k) : g_strdup(names[from]);
        nd->input[i] = g_string_chunk_insert(p->strings, text);
        g_free(text);
    }
    JsonNode *outputs = json_object_get_member(o, "outputs");
    JsonArray *out = outputs && JSON_NODE_HOLDS_ARRAY(outputs) ? json_node_get_array(outputs) : NULL;
    Tensorflow__AttrValue__ListValue *list = take(p, g_new(Tensorflow__AttrValue__ListValue, 1));
    *list = (Tensorflow__AttrValue__ListValue)TENSORFLOW__ATTR_VALUE__LIST_VALUE__INIT;
    list->n_shape = out ? json_array_get_length(out) : 0;
    list->shape = take(p, g_new0(Tensorflow__TensorShapeProto *, MAX(list->n_shape, 1)));
    for (size_t i = 0; i < list->n_shape; i++) {
        JsonNode *e = json_array_get_element(out, (guint)i);
        if (!JSON_NODE_HOLDS_OBJECT(e)) {
            snprintf(why, size, "node %lld (%s): output %zu is not an object", (long long)id, names[id], i);
            return -1;
        }
        list->shape[i] = shape_of(p, json_node_get_object(e));
    }
    Tensorflow__AttrValue *value = take(p, g_new(Tensorflow__AttrValue, 1));
    *value = (Tensorflow__AttrValue)TENSORFLOW__ATTR_VALUE__INIT;
    value->value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
    value->list = list;
    Tensorflow__NodeDef__AttrEntry *entry = take(p, g_new(Tensorflow__NodeDef__AttrEntry, 1));
    *entry = (Tensorflow__NodeDef__AttrEntry)TENSORFLOW__NODE_DEF__ATTR_ENTRY__INIT;
    entry->key = "_output_shapes";
    entry->value = value;
    nd->n_attr = 1;
    nd->attr = take(p, g_new(Tensorflow__NodeDef__AttrEntry *, 1));
    nd->attr[0] = entry;
    return 0;
}

uint8_t *tw__tb_graph_def_from_json(const char *json, size_t *n, char *why, size_t size)
{
    *n = 0;
    if (tw_json_check_text(json, (ptrdiff_t)strlen(json), "graph")) {
        snprintf(why, size, "%s", tw_last_error());
        tw_error_clear();
        return NULL;
    }
    JsonParser *parser = json_parser_new();
    GError *error = NULL;
    if (!json_parser_load_from_data(parser, json, -1, &error)) {
        snprintf(why, size, "not JSON: %s", error->message);
        g_error_free(error);
        g_object_unref(parser);
        return NULL;
    }
    JsonNode *root = json_parser_get_root(parser);
    JsonObject *g = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    const char *format = g ? member_string(g, "format") : NULL;
    JsonNode *nodes_node = g ? json_object_get_member(g, "nodes") : NULL;
    if (!format || strcmp(format, "twb-graph") || !nodes_node || !JSON_NODE_HOLDS_ARRAY(nodes_node)) {
        snprintf(why, size, "not a twb graph (format \"twb-graph\" with its nodes)");
        g_object_unref(parser);
        return NULL;
    }
    JsonArray *nodes = json_node_get_array(nodes_node);
    guint count = json_array_get_length(nodes);
    pool p = {g_ptr_array_new_with_free_func(g_free), g_string_chunk_new(4096)};
    const char **names = take(&p, g_new0(const char *, count + 1));
    Tensorflow__NodeDef **defs = take(&p, g_new0(Tensorflow__NodeDef *, MAX(count, 1)));
    int status = 0;
    for (guint i = 0; i < count && status == 0; i++) {
        JsonNode *e = json_array_get_element(nodes, i);
        const char *name = JSON_NODE_HOLDS_OBJECT(e) ? member_string(json_node_get_object(e), "name") : NULL;
        if (!name) {
            snprintf(why, size, "node %u has no name", i);
            status = -1;
            break;
        }
        names[i] = g_string_chunk_insert(p.strings, name);
        defs[i] = take(&p, g_new(Tensorflow__NodeDef, 1));
        status = node_def(&p, json_node_get_object(e), i, names, defs[i], why, size);
    }
    uint8_t *bytes = NULL;
    if (status == 0) {
        Tensorflow__VersionDef versions = TENSORFLOW__VERSION_DEF__INIT;
        Tensorflow__GraphDef gd = TENSORFLOW__GRAPH_DEF__INIT;
        gd.n_node = count;
        gd.node = defs;
        gd.versions = &versions;
        *n = tensorflow__graph_def__get_packed_size(&gd);
        bytes = g_malloc(*n ? *n : 1);
        tensorflow__graph_def__pack(&gd, bytes);
    }
    g_ptr_array_unref(p.owned);
    g_string_chunk_free(p.strings);
    g_object_unref(parser);
    return bytes;
}
