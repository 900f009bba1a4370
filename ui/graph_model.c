/* The graph view's model (see graph_model.h). */
#include "graph_model.h"

#include <json-glib/json-glib.h>
#include <tw/json_check.h>
#include <string.h>

#define GRAPH_ERROR g_quark_from_static_string("tw-graph-model")

/* The member when it is an array, else NULL (json-glib complains about a
 * missing one). */
static JsonArray *array_member(JsonObject *o, const char *name)
{
    JsonNode *node = json_object_get_member(o, name);
    return node && JSON_NODE_HOLDS_ARRAY(node) ? json_node_get_array(node) : NULL;
}

/* The member when it is a string, else NULL. */
static const char *string_member(JsonObject *o, const char *name)
{
    JsonNode *node = json_object_get_member(o, name);
    return node && JSON_NODE_HOLDS_VALUE(node) && json_node_get_value_type(node) == G_TYPE_STRING
               ? json_node_get_string(node)
               : NULL;
}

static int forward(tw_tensor *const *inputs, int ninputs, tw_tensor **outputs, int max_outputs, void *model)
{
    if (tw_model_noutputs(model) > max_outputs)
        return tw_error_set("the model has %d outputs; a traced function takes %d", tw_model_noutputs(model),
                            max_outputs);
    return tw_model_call_n(model, ninputs, inputs, outputs, false);
}

/* A zero batch of one for input k, or NULL with *error set. */
static tw_tensor *zero_input(tw_model *model, int k, GError **error)
{
    const tw_shape *declared = tw_model_input_shape_at(model, k);
    if (!declared || declared->ndim < 1) {
        g_set_error(error, GRAPH_ERROR, 1, "The model has no input shape: give its first layer one");
        return NULL;
    }
    int64_t dims[TW_MAX_DIMS];
    for (int d = 0; d < declared->ndim; d++) {
        dims[d] = d == 0 ? 1 : declared->dims[d];
        if (dims[d] < 1) {
            g_set_error(error, GRAPH_ERROR, 1, "The model's input shape has an unknown size (input %d, axis %d)", k,
                        d);
            return NULL;
        }
    }
    tw_tensor *x = tw_zeros(TW_FLOAT32, declared->ndim, dims);
    if (!x)
        g_set_error(error, GRAPH_ERROR, 1, "The model cannot be traced: %s", tw_last_error());
    return x;
}

static char *trace_model(tw_model *model, bool shape_only, GError **error)
{
    int ninputs = tw_model_ninputs(model);
    if (ninputs < 1 || ninputs > TW_MAX_LAYER_IO) {
        g_set_error(error, GRAPH_ERROR, 1, "The model has %d inputs; a graph is traced for 1 to %d", ninputs,
                    TW_MAX_LAYER_IO);
        return NULL;
    }
    tw_error_clear();
    tw_tensor *x[TW_MAX_LAYER_IO] = {NULL};
    GError *local = NULL;
    for (int k = 0; k < ninputs && !local; k++)
        x[k] = zero_input(model, k, &local);
    char *json = NULL;
    tw_function *f = NULL;
    if (!local && tw_model_build(model, NULL, 0) == 0 && (f = tw_function_new(tw_layer_name(model), forward, model))) {
        const tw_graph *graph = shape_only ? tw_function_get_graph_shapes(f, ninputs, x)
                                           : tw_function_get_graph(f, ninputs, x);
        json = graph ? tw_graph_json(graph) : NULL;
    }
    if (!json && !local)
        g_set_error(&local, GRAPH_ERROR, 1, "The model cannot be traced: %s", tw_last_error());
    if (local)
        g_propagate_error(error, local);
    tw_function_free(f);
    for (int k = 0; k < ninputs; k++)
        tw_tensor_unref(x[k]);
    return json;
}

char *tw_graph_trace_model(tw_model *model, GError **error)
{
    return trace_model(model, true, error);
}

char *tw_graph_trace_model_with_values(tw_model *model, GError **error)
{
    return trace_model(model, false, error);
}

/* Sources that are values rather than data (tucked into the op reading
 * them): twb's and TensorFlow's constants and variables. */
static const char *const tf_parameters[] = {"Const", "VariableV2", "Variable", "VarHandleOp", NULL};
static const char *const tf_sources[] = {"Placeholder", "PlaceholderWithDefault", NULL};

/* A TF2 function graph captures each variable as a Placeholder of dtype
 * resource: a variable's handle, not data. */
static bool is_parameter(const tw_graph_node *n)
{
    return !strcmp(n->op, "variable") || !strcmp(n->op, "constant") || g_strv_contains(tf_parameters, n->op) ||
           (!strcmp(n->op, "Placeholder") && n->noutputs == 1 && !strcmp(n->outputs[0].dtype, "resource"));
}

static bool is_constant(const char *op)
{
    return !strcmp(op, "constant") || !strcmp(op, "Const");
}

tw_op_kind tw_op_kind_of(const char *op)
{
    static const char *const linear[] = {"matmul", "conv2d", "conv2d_backprop_filter", "conv2d_backprop_input", NULL};
    static const char *const reduction[] = {"sum", "mean", "max", "min", "prod", "argmax", "argmin", "max_pool2d",
                                            "avg_pool2d", "softmax", "log_softmax", "softmax_cross_entropy",
                                            "sparse_softmax_cross_entropy", "logsumexp", NULL};
    static const char *const shape[] = {"reshape", "permute", "transpose", "broadcast_to", "concat", "strided_slice",
                                        "slice", "gather", "pad", "tile", "copy", "cast", "squeeze", "expand_dims",
                                        "one_hot", "stop_gradient", NULL};
    static const char *const source[] = {"input", "constant", "variable", NULL};
    /* TensorFlow's names, for a graph imported from an event file's GraphDef. */
    static const char *const tf_linear[] = {"MatMul", "BatchMatMul", "BatchMatMulV2", "Conv2D", "Conv3D",
                                            "DepthwiseConv2dNative", "Conv2DBackpropInput", "Conv2DBackpropFilter",
                                            "Einsum", NULL};
    static const char *const tf_reduction[] = {"Sum", "Mean", "Max", "Min", "Prod", "ArgMax", "ArgMin", "MaxPool",
                                               "AvgPool", "Softmax", "LogSoftmax", "SoftmaxCrossEntropyWithLogits",
                                               "SparseSoftmaxCrossEntropyWithLogits", "FusedBatchNormV3", NULL};
    static const char *const tf_shape[] = {"Reshape", "Transpose", "BroadcastTo", "ConcatV2", "StridedSlice", "Slice",
                                           "GatherV2", "Pad", "Tile", "Identity", "Cast", "Squeeze", "ExpandDims",
                                           "OneHot", "StopGradient", "Shape", "Pack", "Unpack", "Split", NULL};
    const struct { const char *const *names; tw_op_kind kind; } table[] = {
        {linear, TW_OP_KIND_LINEAR}, {reduction, TW_OP_KIND_REDUCTION},
        {shape, TW_OP_KIND_SHAPE},   {source, TW_OP_KIND_SOURCE},
        {tf_linear, TW_OP_KIND_LINEAR}, {tf_reduction, TW_OP_KIND_REDUCTION},
        {tf_shape, TW_OP_KIND_SHAPE},   {tf_sources, TW_OP_KIND_SOURCE},
        {tf_parameters, TW_OP_KIND_SOURCE},
    };
    for (size_t t = 0; t < G_N_ELEMENTS(table); t++)
        for (int i = 0; table[t].names[i]; i++)
            if (strcmp(op, table[t].names[i]) == 0)
                return table[t].kind;
    return TW_OP_KIND_ELEMENTWISE;
}

const char *tw_graph_tensor_format(const tw_graph_tensor *t, char *buf, size_t size)
{
    if (t->ndim < 0) {
        g_snprintf(buf, size, "?");
        return buf;
    }
    size_t used = (size_t)g_snprintf(buf, size, "(");
    for (int d = 0; d < t->ndim && used < size; d++)
        used += d == 0 && t->batch_none ? (size_t)g_snprintf(buf + used, size - used, "None")
                : t->shape[d] < 0       ? (size_t)g_snprintf(buf + used, size - used, "%s?", d ? ", " : "")
                : (size_t)g_snprintf(buf + used, size - used, "%s%" G_GINT64_FORMAT, d ? ", " : "", t->shape[d]);
    if (used < size)
        g_snprintf(buf + used, size - used, t->ndim == 1 ? ",)" : ")");
    return buf;
}

int64_t tw_graph_tensor_numel(const tw_graph_tensor *t)
{
    int64_t n = 1; /* a dimension of unknown size (-1) counts as 1 */
    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d] < 0 ? 1 : t->shape[d];
    return n;
}

/* A layer graph's box colour, from the layer class's palette group: the
 * weights' work (convolutions, recurrences, attention, Dense, Embedding),
 * pooling, reshaping, inputs; the rest (activations, merges, dropout,
 * normalization, Lambda) as elementwise. */
static tw_op_kind layer_kind_of(const char *op)
{
    static const char *const linear[] = {"Dense", "Embedding", "EinsumDense", NULL};
    static const char *const shape[] = {"Flatten", "Reshape", "Permute", "RepeatVector", "Concatenate",
                                        "ZeroPadding1D", "ZeroPadding2D", "Cropping1D", "Cropping2D", NULL};
    const tw_layer_class *klass = tw_layer_class_find(op);
    const char *group = klass ? klass->group : "";
    if (!strcmp(op, "input"))
        return TW_OP_KIND_SOURCE;
    if (g_strv_contains(linear, op) || !strcmp(group, "Convolution") || !strcmp(group, "Recurrent") ||
        !strcmp(group, "Attention"))
        return TW_OP_KIND_LINEAR;
    if (!strcmp(group, "Pooling"))
        return TW_OP_KIND_REDUCTION;
    if (g_strv_contains(shape, op))
        return TW_OP_KIND_SHAPE;
    return TW_OP_KIND_ELEMENTWISE;
}

/* The scope for path, made with its ancestors when new. */
static int scope_for(tw_graph_model *m, GHashTable *index, const char *path)
{
    gpointer found;
    if (g_hash_table_lookup_extended(index, path, NULL, &found))
        return GPOINTER_TO_INT(found);
    const char *slash = strrchr(path, '/');
    char *parent_path = slash ? g_strndup(path, (gsize)(slash - path)) : g_strdup("");
    int parent = scope_for(m, index, parent_path);
    g_free(parent_path);
    m->scopes = g_renew(tw_graph_scope, m->scopes, m->nscopes + 1);
    tw_graph_scope *s = &m->scopes[m->nscopes];
    /* name is set once scopes[] stops moving */
    *s = (tw_graph_scope){.path = g_strdup(path), .parent = parent, .depth = m->scopes[parent].depth + 1};
    m->scopes[parent].nchildren++;
    g_hash_table_insert(index, s->path, GINT_TO_POINTER(m->nscopes));
    return m->nscopes++;
}

static gboolean parse_tensor(JsonNode *node, tw_graph_tensor *t)
{
    if (!JSON_NODE_HOLDS_OBJECT(node))
        return FALSE;
    JsonObject *o = json_node_get_object(node);
    JsonArray *shape = array_member(o, "shape");
    g_strlcpy(t->dtype, json_object_get_string_member_with_default(o, "dtype", "?"), sizeof t->dtype);
    JsonNode *member = json_object_get_member(o, "shape");
    if (member && JSON_NODE_HOLDS_NULL(member)) { /* an imported graph's unknown rank */
        t->ndim = -1;
        return TRUE;
    }
    if (!shape || json_array_get_length(shape) > TW_GRAPH_MAX_DIMS)
        return FALSE;
    t->ndim = (int)json_array_get_length(shape);
    for (int d = 0; d < t->ndim; d++)
        t->shape[d] = json_array_get_int_element(shape, (guint)d);
    return TRUE;
}

static gboolean parse_node(tw_graph_model *m, int id, JsonObject *o, GHashTable *scopes, GError **error)
{
    tw_graph_node *n = &m->nodes[id];
    JsonArray *inputs = array_member(o, "inputs");
    JsonArray *outputs = array_member(o, "outputs");
    if (!json_object_has_member(o, "op") || !inputs || !outputs) {
        g_set_error(error, GRAPH_ERROR, 1, "graph JSON: node %d lacks op, inputs or outputs", id);
        return FALSE;
    }
    n->op = g_strdup(json_object_get_string_member_with_default(o, "op", "?"));
    n->name = g_strdup(json_object_get_string_member_with_default(o, "name", n->op));
    n->scope = g_strdup(json_object_get_string_member_with_default(o, "scope", ""));
    n->kind = m->layer_level ? layer_kind_of(n->op) : tw_op_kind_of(n->op);
    n->scope_index = scope_for(m, scopes, n->scope);
    n->ninputs = (int)json_array_get_length(inputs);
    n->input_node = g_new(int, n->ninputs);
    n->input_output = g_new(int, n->ninputs);
    for (int k = 0; k < n->ninputs; k++) {
        JsonNode *element = json_array_get_element(inputs, (guint)k);
        JsonArray *pair = JSON_NODE_HOLDS_ARRAY(element) ? json_node_get_array(element) : NULL;
        int from = pair && json_array_get_length(pair) == 2 ? (int)json_array_get_int_element(pair, 0) : -1;
        int out = from >= 0 ? (int)json_array_get_int_element(pair, 1) : -1;
        if (from < 0 || from >= id || out < 0 || out >= m->nodes[from].noutputs) {
            g_set_error(error, GRAPH_ERROR, 1, "graph JSON: node %d (%s): input %d is not an earlier node's output",
                        id, n->name, k);
            return FALSE;
        }
        n->input_node[k] = from;
        n->input_output[k] = out;
    }
    n->noutputs = (int)json_array_get_length(outputs);
    n->outputs = g_new0(tw_graph_tensor, n->noutputs);
    for (int k = 0; k < n->noutputs; k++)
        if (!parse_tensor(json_array_get_element(outputs, (guint)k), &n->outputs[k])) {
            g_set_error(error, GRAPH_ERROR, 1, "graph JSON: node %d (%s): output %d has no shape", id, n->name, k);
            return FALSE;
        }
    JsonNode *attrs = json_object_get_member(o, "attrs");
    JsonObject *a = attrs && JSON_NODE_HOLDS_OBJECT(attrs) ? json_node_get_object(attrs) : NULL;
    JsonArray *ints = a ? array_member(a, "ints") : NULL, *floats = a ? array_member(a, "floats") : NULL;
    n->nints = ints ? (int)json_array_get_length(ints) : 0;
    n->ints = g_new(int64_t, MAX(n->nints, 1));
    for (int k = 0; k < n->nints; k++)
        n->ints[k] = json_array_get_int_element(ints, (guint)k);
    n->cannot_run = g_strdup(string_member(o, "cannot_run"));
    n->nfloats = floats ? (int)json_array_get_length(floats) : 0;
    n->floats = g_new(double, MAX(n->nfloats, 1));
    for (int k = 0; k < n->nfloats; k++)
        n->floats[k] = json_array_get_double_element(floats, (guint)k);
    return TRUE;
}

static void count_ops(tw_graph_model *m)
{
    for (int i = 0; i < m->nnodes; i++) {
        if (m->nodes[i].kind == TW_OP_KIND_SOURCE)
            continue; /* "7 ops": the work, not the weights */
        for (int s = m->nodes[i].scope_index; s >= 0; s = m->scopes[s].parent)
            m->scopes[s].nops++;
    }
}

/* The function's outputs ([node, output] pairs; none when absent). */
static gboolean parse_outputs(tw_graph_model *m, JsonArray *outputs, GError **error)
{
    m->noutputs = outputs ? (int)json_array_get_length(outputs) : 0;
    m->output_node = g_new(int, MAX(m->noutputs, 1));
    m->output_output = g_new(int, MAX(m->noutputs, 1));
    for (int k = 0; k < m->noutputs; k++) {
        JsonNode *element = json_array_get_element(outputs, (guint)k);
        JsonArray *pair = JSON_NODE_HOLDS_ARRAY(element) ? json_node_get_array(element) : NULL;
        int node = pair && json_array_get_length(pair) == 2 ? (int)json_array_get_int_element(pair, 0) : -1;
        int out = node >= 0 && node < m->nnodes ? (int)json_array_get_int_element(pair, 1) : -1;
        if (out < 0 || out >= m->nodes[node].noutputs) {
            g_set_error(error, GRAPH_ERROR, 1, "graph JSON: output %d is not a node's output", k);
            return FALSE;
        }
        m->output_node[k] = node, m->output_output[k] = out;
    }
    return TRUE;
}

static tw_graph_model *parse_graph(JsonObject *root, GError **error)
{
    if (g_strcmp0(json_object_get_string_member_with_default(root, "format", ""), "twb-graph") != 0 ||
        json_object_get_int_member_with_default(root, "version", 0) != 1) {
        g_set_error(error, GRAPH_ERROR, 1, "graph JSON: not a twb-graph version 1 document");
        return NULL;
    }
    JsonArray *nodes = array_member(root, "nodes");
    if (!nodes) {
        g_set_error(error, GRAPH_ERROR, 1, "graph JSON: no nodes array");
        return NULL;
    }
    tw_graph_model *m = g_new0(tw_graph_model, 1);
    m->function = g_strdup(json_object_get_string_member_with_default(root, "function", "function"));
    m->layer_level = g_strcmp0(string_member(root, "level"), "layers") == 0;
    m->note = g_strdup(string_member(root, "note"));
    m->nnodes = (int)json_array_get_length(nodes);
    m->nodes = g_new0(tw_graph_node, m->nnodes);
    GHashTable *scopes = g_hash_table_new(g_str_hash, g_str_equal);
    m->scopes = g_new0(tw_graph_scope, 1);
    m->scopes[0] = (tw_graph_scope){.path = g_strdup(""), .parent = -1};
    m->scopes[0].name = m->scopes[0].path;
    m->nscopes = 1;
    g_hash_table_insert(scopes, m->scopes[0].path, GINT_TO_POINTER(0));
    gboolean ok = TRUE;
    for (int i = 0; ok && i < m->nnodes; i++) {
        JsonNode *node = json_array_get_element(nodes, (guint)i);
        ok = JSON_NODE_HOLDS_OBJECT(node) && parse_node(m, i, json_node_get_object(node), scopes, error);
        if (!ok && error && !*error)
            g_set_error(error, GRAPH_ERROR, 1, "graph JSON: node %d is not an object", i);
    }
    g_hash_table_unref(scopes);
    if (!ok) {
        tw_graph_model_free(m);
        return NULL;
    }
    /* scopes[] was reallocated while growing: names point into paths. */
    for (int s = 0; s < m->nscopes; s++) {
        const char *slash = strrchr(m->scopes[s].path, '/');
        m->scopes[s].name = slash ? slash + 1 : m->scopes[s].path;
    }
    count_ops(m);
    if (!parse_outputs(m, array_member(root, "outputs"), error)) {
        tw_graph_model_free(m);
        return NULL;
    }
    return m;
}

tw_graph_model *tw_graph_model_parse(const char *json, gssize length, GError **error)
{
    if (tw_json_check_text(json, length, "graph JSON")) {
        g_set_error(error, GRAPH_ERROR, 1, "%s", tw_last_error());
        return NULL;
    }
    JsonParser *parser = json_parser_new();
    tw_graph_model *m = NULL;
    if (json_parser_load_from_data(parser, json, length, error)) {
        JsonNode *root = json_parser_get_root(parser);
        if (root && JSON_NODE_HOLDS_OBJECT(root))
            m = parse_graph(json_node_get_object(root), error);
        else
            g_set_error(error, GRAPH_ERROR, 1, "graph JSON: the document is not an object");
    }
    g_object_unref(parser);
    return m;
}

void tw_graph_model_free(tw_graph_model *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->nnodes; i++) {
        tw_graph_node *n = &m->nodes[i];
        g_free(n->op), g_free(n->name), g_free(n->scope), g_free(n->ints), g_free(n->floats);
        g_free(n->input_node), g_free(n->input_output), g_free(n->outputs), g_free(n->cannot_run);
    }
    for (int s = 0; s < m->nscopes; s++) {
        g_free(m->scopes[s].path), g_free(m->scopes[s].layer_class);
        g_strfreev(m->scopes[s].layer_fields);
    }
    g_free(m->nodes), g_free(m->scopes), g_free(m->function), g_free(m->output_node), g_free(m->output_output);
    g_free(m->node_us), g_free(m->scope_us), g_free(m->profile_error), g_free(m->note);
    g_free(m);
}

int tw_graph_model_find_scope(const tw_graph_model *m, const char *path)
{
    for (int s = 0; s < m->nscopes; s++)
        if (strcmp(m->scopes[s].path, path) == 0)
            return s;
    return -1;
}

void tw_graph_model_mark_batch(tw_graph_model *m, int64_t batch)
{
    bool *from_input = g_new0(bool, MAX(m->nnodes, 1));
    for (int i = 0; i < m->nnodes; i++) { /* inputs come before the nodes reading them */
        tw_graph_node *n = &m->nodes[i];
        from_input[i] = strcmp(n->op, "input") == 0;
        for (int k = 0; k < n->ninputs && !from_input[i]; k++)
            from_input[i] = from_input[n->input_node[k]];
        for (int k = 0; from_input[i] && k < n->noutputs; k++)
            n->outputs[k].batch_none = n->outputs[k].ndim > 0 && n->outputs[k].shape[0] == batch;
    }
    g_free(from_input);
}

/* A config value as Keras would print it: None, True, 3, 'same', (3, 3),
 * an initializer by its class. */
static char *config_value(JsonNode *node)
{
    if (JSON_NODE_HOLDS_NULL(node))
        return g_strdup("None");
    if (JSON_NODE_HOLDS_VALUE(node)) {
        GType type = json_node_get_value_type(node);
        if (type == G_TYPE_BOOLEAN)
            return g_strdup(json_node_get_boolean(node) ? "True" : "False");
        if (type == G_TYPE_STRING)
            return g_strdup_printf("'%s'", json_node_get_string(node));
        if (type == G_TYPE_INT64)
            return g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(node));
        return g_strdup_printf("%g", json_node_get_double(node));
    }
    if (JSON_NODE_HOLDS_ARRAY(node)) {
        JsonArray *a = json_node_get_array(node);
        guint n = json_array_get_length(a);
        GString *s = g_string_new("(");
        for (guint i = 0; i < n; i++) {
            char *item = config_value(json_array_get_element(a, i));
            g_string_append_printf(s, "%s%s", i ? ", " : "", item);
            g_free(item);
        }
        g_string_append(s, n == 1 ? ",)" : ")");
        return g_string_free(s, FALSE);
    }
    JsonObject *o = json_node_get_object(node);
    return g_strdup(json_object_get_string_member_with_default(o, "class_name", "{…}"));
}

/* Every layer object ({"class_name", "config": {"name", ...}}) under node,
 * nested models' layers too, into layers (name to the object). */
static void collect_layers(JsonNode *node, GHashTable *layers)
{
    if (!node)
        return;
    if (JSON_NODE_HOLDS_ARRAY(node)) {
        JsonArray *a = json_node_get_array(node);
        for (guint i = 0; i < json_array_get_length(a); i++)
            collect_layers(json_array_get_element(a, i), layers);
        return;
    }
    if (!JSON_NODE_HOLDS_OBJECT(node))
        return;
    JsonObject *o = json_node_get_object(node);
    JsonNode *config = json_object_get_member(o, "config");
    if (json_object_has_member(o, "class_name") && config && JSON_NODE_HOLDS_OBJECT(config)) {
        const char *name = json_object_get_string_member_with_default(json_node_get_object(config), "name", NULL);
        if (name && !g_hash_table_contains(layers, name))
            g_hash_table_insert(layers, (gpointer)name, o);
        collect_layers(json_object_get_member(json_node_get_object(config), "layers"), layers);
    }
}

void tw_graph_model_add_layers(tw_graph_model *m, const char *keras_json)
{
    static const char *const skipped[] = {"name", "layers", "input_layers", "output_layers", NULL};
    JsonParser *parser = json_parser_new();
    if (tw_json_check_text(keras_json, -1, "the model") == 0 &&
        json_parser_load_from_data(parser, keras_json, -1, NULL) && json_parser_get_root(parser)) {
        GHashTable *layers = g_hash_table_new(g_str_hash, g_str_equal);
        collect_layers(json_parser_get_root(parser), layers);
        for (int s = 1; s < m->nscopes; s++) {
            JsonObject *layer = g_hash_table_lookup(layers, m->scopes[s].name);
            if (!layer)
                continue;
            JsonObject *config = json_object_get_object_member(layer, "config");
            GPtrArray *fields = g_ptr_array_new();
            GList *members = json_object_get_members(config);
            for (GList *k = members; k; k = k->next)
                if (!g_strv_contains(skipped, k->data)) {
                    char *value = config_value(json_object_get_member(config, k->data));
                    g_ptr_array_add(fields, g_strdup_printf("%s: %s", (char *)k->data, value));
                    g_free(value);
                }
            g_list_free(members);
            g_ptr_array_add(fields, NULL);
            m->scopes[s].layer_class = g_strdup(json_object_get_string_member_with_default(layer, "class_name", "?"));
            m->scopes[s].layer_fields = (char **)g_ptr_array_free(fields, FALSE);
        }
        g_hash_table_unref(layers);
    } else {
        tw_error_clear(); /* nothing added: the trace itself reports a broken model */
    }
    g_object_unref(parser);
}

static char *ints_text(const int64_t *v, int n)
{
    GString *s = g_string_new(n == 1 ? "" : "(");
    for (int k = 0; k < n; k++)
        g_string_append_printf(s, "%s%" G_GINT64_FORMAT, k ? ", " : "", v[k]);
    if (n != 1)
        g_string_append(s, ")");
    return g_string_free(s, FALSE);
}

/* Which of the ints an op's attribute is (see the op's source in
 * engine/ops/): [first, first + count); count -1: to the end. */
typedef struct {
    const char *name;
    int first, count;
    bool padding; /* 0 valid, 1 same */
} attr_slot;

static const attr_slot *attr_slots(const char *op)
{
    static const attr_slot conv[] = {{"strides", 0, 2}, {"dilation", 2, 2}, {"padding", 4, 1, true},
                                     {"result shape", 5, -1}, {NULL}};
    static const attr_slot pool[] = {{"pool size", 0, 2}, {"strides", 2, 2}, {"padding", 4, 1, true},
                                     {"input shape", 5, -1}, {NULL}};
    static const attr_slot axis[] = {{"axis", 0, 1}, {NULL}};
    static const attr_slot shape[] = {{"shape", 0, -1}, {NULL}};
    static const attr_slot perm[] = {{"permutation", 0, -1}, {NULL}};
    static const attr_slot resize[] = {{"method", 0, 1}, {"size", 1, 2}, {NULL}};
    static const struct { const char *op; const attr_slot *slots; } table[] = {
        {"conv2d", conv}, {"conv2d_backprop_input", conv}, {"conv2d_backprop_filter", conv},
        {"depthwise_conv2d", conv}, {"max_pool2d", pool}, {"avg_pool2d", pool}, {"avg_pool2d_grad", pool},
        {"concat", axis}, {"gather", axis}, {"argmax", axis}, {"argmin", axis}, {"reshape", shape},
        {"broadcast_to", shape}, {"permute", perm}, {"transpose", perm}, {"resize", resize},
    };
    for (size_t t = 0; t < G_N_ELEMENTS(table); t++)
        if (strcmp(op, table[t].op) == 0)
            return table[t].slots;
    return NULL;
}

static void add_field(GPtrArray *fields, const char *name, char *value)
{
    g_ptr_array_add(fields, g_strdup(name));
    g_ptr_array_add(fields, value);
}

GPtrArray *tw_graph_node_attr_fields(const tw_graph_node *n)
{
    GPtrArray *fields = g_ptr_array_new_with_free_func(g_free);
    static const char *const reductions[] = {"sum", "mean", "max", "min", "prod", NULL};
    const attr_slot *slots = attr_slots(n->op);
    if (slots) {
        for (const attr_slot *a = slots; a->name; a++) {
            int count = a->count < 0 ? n->nints - a->first : a->count;
            if (count <= 0 || a->first + count > n->nints)
                continue;
            char *value = a->padding ? g_strdup(n->ints[a->first] ? "same" : "valid")
                                     : ints_text(n->ints + a->first, count);
            add_field(fields, a->name, value);
        }
    } else if (g_strv_contains(reductions, n->op) && n->nints >= 1) {
        /* ints[0] keepdims, then one flag per axis of the input */
        GString *axes = g_string_new("");
        for (int d = 1; d < n->nints; d++)
            if (n->ints[d])
                g_string_append_printf(axes, "%s%d", axes->len ? ", " : "", d - 1);
        add_field(fields, "axes", g_string_free(axes, FALSE));
        add_field(fields, "keepdims", g_strdup(n->ints[0] ? "true" : "false"));
    } else if (n->nints) {
        add_field(fields, "integers", ints_text(n->ints, n->nints));
    }
    if (n->nfloats) {
        GString *s = g_string_new("");
        for (int k = 0; k < n->nfloats; k++)
            g_string_append_printf(s, "%s%g", k ? ", " : "", n->floats[k]);
        add_field(fields, "floats", g_string_free(s, FALSE));
    }
    return fields;
}

void tw_graph_model_default_expansion(const tw_graph_model *m, bool *expanded)
{
    for (int s = 0; s < m->nscopes; s++) {
        int p = m->scopes[s].parent;
        /* Open: the root, and a lone child scope of an open scope that holds
         * no ops of its own besides it (the model around its layers). */
        bool lone = p >= 0 && expanded[p] && m->scopes[p].nchildren == 1 && m->scopes[s].nchildren > 0;
        expanded[s] = p < 0 || lone; /* parents come before children in scopes[] */
    }
}

/* The outermost collapsed scope around graph node i, or -1 when every scope
 * around it is open. */
static int collapsed_scope(const tw_graph_model *m, const bool *expanded, int i)
{
    int box = -1;
    for (int s = m->nodes[i].scope_index; s > 0; s = m->scopes[s].parent)
        if (expanded && !expanded[s])
            box = s;
    return box;
}

/* lone_consumers' mark of a constant several ops read: a value, not data
 * flowing from the scope that made it (the engine shares a scalar such as
 * BatchNormalization's epsilon between layers), tucked into each of them. */
#define SHARED_CONSTANT (-3)

/* A source feeding one op alone: the op; a constant feeding several:
 * SHARED_CONSTANT; else -1. */
static int *lone_consumers(const tw_graph_model *m)
{
    int *consumer = g_new(int, m->nnodes);
    for (int i = 0; i < m->nnodes; i++)
        consumer[i] = -1;
    for (int i = 0; i < m->nnodes; i++)
        for (int k = 0; k < m->nodes[i].ninputs; k++) {
            int from = m->nodes[i].input_node[k];
            consumer[from] = consumer[from] == -1 || consumer[from] == i ? i : -2;
        }
    for (int i = 0; i < m->nnodes; i++) {
        const char *op = m->nodes[i].op;
        if (consumer[i] == -2 && is_constant(op))
            consumer[i] = SHARED_CONSTANT;
        else if (consumer[i] < 0 || !is_parameter(&m->nodes[i]))
            consumer[i] = -1;
    }
    return consumer;
}

static void add_edge(tw_visible_graph *g, GHashTable *edges, const tw_graph_model *m, int from, int to, int node,
                     int output)
{
    gint64 key = (gint64)from << 32 | (guint32)to;
    gpointer found;
    if (g_hash_table_lookup_extended(edges, &key, NULL, &found)) {
        tw_visible_edge *e = &g->edges[GPOINTER_TO_INT(found)];
        if (e->node == node && e->output == output)
            return; /* the same tensor read twice */
        e->ntensors++;
        if (tw_graph_tensor_numel(&m->nodes[node].outputs[output]) >
            tw_graph_tensor_numel(&m->nodes[e->node].outputs[e->output]))
            e->node = node, e->output = output;
        return;
    }
    g->edges = g_renew(tw_visible_edge, g->edges, g->nedges + 1);
    g->edges[g->nedges] = (tw_visible_edge){from, to, node, output, 1};
    g_hash_table_insert(edges, g_memdup2(&key, sizeof key), GINT_TO_POINTER(g->nedges));
    g->nedges++;
}

tw_visible_graph *tw_visible_graph_new(const tw_graph_model *m, const bool *expanded)
{
    tw_visible_graph *g = g_new0(tw_visible_graph, 1);
    g->of_node = g_new(int, m->nnodes);
    g->nodes = g_new0(tw_visible_node, MAX(m->nnodes + m->noutputs, 1));
    int *scope_box = g_new(int, m->nscopes);
    for (int s = 0; s < m->nscopes; s++)
        scope_box[s] = -1;
    int *consumer = lone_consumers(m);
    /* Boxes in the order of their first node, so the ids follow the data. */
    for (int i = 0; i < m->nnodes; i++) {
        int s = collapsed_scope(m, expanded, i);
        /* A closed scope of values alone (TensorFlow's "range/start" and
         * "range/delta" beside the op "range") is no box of "0 ops": its
         * values are tucked into the ops that read them. */
        if (s >= 0 && m->scopes[s].nops == 0 && consumer[i] >= 0)
            s = -1;
        if ((s < 0 && consumer[i] >= 0) || consumer[i] == SHARED_CONSTANT) {
            g->of_node[i] = -1; /* tucked: placed below */
            continue;
        }
        if (s >= 0 && scope_box[s] >= 0) {
            g->of_node[i] = scope_box[s];
            continue;
        }
        tw_visible_node *v = &g->nodes[g->nnodes];
        v->output = -1;
        v->is_scope = s >= 0;
        v->index = s >= 0 ? s : i;
        v->kind = s >= 0 ? TW_OP_KIND_SCOPE : m->nodes[i].kind;
        if (s >= 0)
            scope_box[s] = g->nnodes;
        g->of_node[i] = g->nnodes++;
    }
    /* A tucked source joins its op's parameters; inside a collapsed scope it
     * is simply part of the box. */
    for (int i = 0; i < m->nnodes; i++) {
        if (g->of_node[i] >= 0 || consumer[i] < 0)
            continue;
        tw_visible_node *v = &g->nodes[g->of_node[consumer[i]]];
        if (!v->is_scope) {
            v->params = g_renew(int, v->params, v->nparams + 1);
            v->params[v->nparams++] = i;
        }
    }
    for (int i = 0; i < m->nnodes; i++) /* each reader of a shared constant */
        for (int k = 0; k < m->nodes[i].ninputs; k++) {
            int from = m->nodes[i].input_node[k];
            tw_visible_node *v = g->of_node[i] >= 0 ? &g->nodes[g->of_node[i]] : NULL;
            if (consumer[from] == SHARED_CONSTANT && v && !v->is_scope) {
                v->params = g_renew(int, v->params, v->nparams + 1);
                v->params[v->nparams++] = from;
            }
        }
    GHashTable *edges = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    for (int i = 0; i < m->nnodes; i++)
        for (int k = 0; k < m->nodes[i].ninputs; k++) {
            int from = g->of_node[m->nodes[i].input_node[k]];
            if (from >= 0 && from != g->of_node[i])
                add_edge(g, edges, m, from, g->of_node[i], m->nodes[i].input_node[k], m->nodes[i].input_output[k]);
        }
    /* The function's outputs, each a box of its own below its producer. */
    for (int k = 0; k < m->noutputs; k++) {
        int from = g->of_node[m->output_node[k]];
        if (from < 0)
            continue;
        g->nodes[g->nnodes] = (tw_visible_node){.index = m->output_node[k], .output = k, .kind = TW_OP_KIND_OUTPUT};
        add_edge(g, edges, m, from, g->nnodes++, m->output_node[k], m->output_output[k]);
    }
    g_hash_table_unref(edges);
    g_free(consumer);
    g_free(scope_box);
    return g;
}

void tw_visible_graph_free(tw_visible_graph *g)
{
    if (!g)
        return;
    for (int v = 0; v < g->nnodes; v++)
        g_free(g->nodes[v].params);
    g_free(g->nodes), g_free(g->edges), g_free(g->of_node);
    g_free(g);
}

char *tw_visible_node_title(const tw_graph_model *m, const tw_visible_node *v)
{
    if (v->is_scope)
        return g_strdup(m->scopes[v->index].name);
    if (v->output >= 0)
        return m->noutputs > 1 ? g_strdup_printf("output %d", v->output) : g_strdup("output");
    const char *name = m->nodes[v->index].name;
    const char *slash = strrchr(name, '/');
    return g_strdup(slash ? slash + 1 : name);
}

char *tw_visible_node_detail(const tw_graph_model *m, const tw_visible_node *v)
{
    if (v->is_scope) {
        int n = m->scopes[v->index].nops;
        return g_strdup_printf("%d op%s", n, n == 1 ? "" : "s");
    }
    if (v->output >= 0) {
        char shape[160];
        return g_strdup(tw_graph_tensor_format(&m->nodes[v->index].outputs[m->output_output[v->output]], shape,
                                               sizeof shape));
    }
    const tw_graph_node *n = &m->nodes[v->index];
    return n->cannot_run ? g_strdup_printf("%s · cannot run here", n->op) : g_strdup(n->op);
}
