/* An event file's GraphDef in the graph view: data/tfevents/graph_def_read.c
 * turns it into twb's graph JSON, the import stores it as the run's
 * "graph_def" series, and the graph view's model (ui/graph_model.c) and
 * sources (ui/graph_source.c) read it. The shared corpus's Keras-callback
 * graphs are checked node by node against tests/tb_decode.py (Debian's
 * python3-protobuf, descriptors of its own); hand-made GraphDefs cover
 * cycles, control inputs, missing producers, damage and a function
 * library (calls drawn as their functions' bodies, its field numbers
 * checked against tb_decode.py too: no corpus file holds one). */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/wait.h>

#include "graph_model.h"
#include "graph_source.h"
#include "scratch_tree.h"
#include "tfevents/tfevents_internal.h"
#include "tw/tfevents.h"

/* ---- protobuf bytes written by hand (field numbers of graph.proto) --------------------------- */
static void varint(GByteArray *b, uint64_t v)
{
    do {
        uint8_t byte = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            byte |= 0x80;
        g_byte_array_append(b, &byte, 1);
    } while (v);
}

static void bytes_field(GByteArray *b, int field, const void *data, size_t n)
{
    varint(b, (uint64_t)field << 3 | 2);
    varint(b, n);
    g_byte_array_append(b, data, (guint)n);
}

static void string_field(GByteArray *b, int field, const char *s)
{
    bytes_field(b, field, s, strlen(s));
}

/* A NodeDef: name, op, inputs (NULL-terminated); with a float32 "T" attr
 * and, when rank >= 0, one _output_shapes entry of dims [7, rank...]. */
static void add_node(GByteArray *graph, const char *name, const char *op, const char *const *inputs, int rank)
{
    GByteArray *n = g_byte_array_new();
    string_field(n, 1, name);
    string_field(n, 2, op);
    for (int i = 0; inputs && inputs[i]; i++)
        string_field(n, 3, inputs[i]);
    GByteArray *entry = g_byte_array_new(), *value = g_byte_array_new();
    string_field(entry, 1, "T");
    varint(value, 6 << 3 | 0); /* AttrValue.type */
    varint(value, 1);          /* DT_FLOAT */
    bytes_field(entry, 2, value->data, value->len);
    bytes_field(n, 5, entry->data, entry->len);
    if (rank >= 0) {
        GByteArray *shape = g_byte_array_new(), *list = g_byte_array_new();
        g_byte_array_set_size(entry, 0), g_byte_array_set_size(value, 0);
        for (int d = 0; d < rank; d++) {
            GByteArray *dim = g_byte_array_new();
            varint(dim, 1 << 3 | 0);
            varint(dim, d == 0 ? (uint64_t)-1 : 7); /* -1: unknown, as TensorFlow writes the batch */
            bytes_field(shape, 2, dim->data, dim->len);
            g_byte_array_unref(dim);
        }
        bytes_field(list, 7, shape->data, shape->len);
        bytes_field(value, 1, list->data, list->len);
        string_field(entry, 1, "_output_shapes");
        bytes_field(entry, 2, value->data, value->len);
        bytes_field(n, 5, entry->data, entry->len);
        g_byte_array_unref(shape), g_byte_array_unref(list);
    }
    bytes_field(graph, 1, n->data, n->len);
    g_byte_array_unref(n), g_byte_array_unref(entry), g_byte_array_unref(value);
}

static JsonObject *parse(const char *json, JsonParser *parser)
{
    GError *error = NULL;
    g_assert_true(json_parser_load_from_data(parser, json, -1, &error));
    g_assert_no_error(error);
    return json_node_get_object(json_parser_get_root(parser));
}

static JsonObject *node_named(JsonObject *graph, const char *name)
{
    JsonArray *nodes = json_object_get_array_member(graph, "nodes");
    for (guint i = 0; i < json_array_get_length(nodes); i++) {
        JsonObject *n = json_array_get_object_element(nodes, i);
        if (!strcmp(json_object_get_string_member(n, "name"), name))
            return n;
    }
    g_error("no node named %s", name);
}

/* "producer:k" of a JSON input [id, k] (":0" left off). */
static char *input_text(JsonObject *graph, JsonArray *pair)
{
    JsonArray *nodes = json_object_get_array_member(graph, "nodes");
    JsonObject *from = json_array_get_object_element(nodes, (guint)json_array_get_int_element(pair, 0));
    gint64 k = json_array_get_int_element(pair, 1);
    const char *name = json_object_get_string_member(from, "name");
    return k ? g_strdup_printf("%s:%" G_GINT64_FORMAT, name, k) : g_strdup(name);
}

/* Every input comes before its reader, ids are positions. */
static void assert_ordered(JsonObject *graph)
{
    JsonArray *nodes = json_object_get_array_member(graph, "nodes");
    for (guint i = 0; i < json_array_get_length(nodes); i++) {
        JsonObject *n = json_array_get_object_element(nodes, i);
        g_assert_cmpint(json_object_get_int_member(n, "id"), ==, i);
        JsonArray *in = json_object_get_array_member(n, "inputs");
        for (guint k = 0; k < json_array_get_length(in); k++)
            g_assert_cmpint(json_array_get_int_element(json_array_get_array_element(in, k), 0), <, i);
    }
}

static void test_order_cycles_and_controls(void)
{
    GByteArray *g = g_byte_array_new();
    /* "m" reads "n", which comes later and reads "m" back: a TF1 loop. */
    add_node(g, "m", "Merge", (const char *const[]){"a", "n", NULL}, 2);
    add_node(g, "n", "NextIteration", (const char *const[]){"m", "^a", NULL}, 2);
    add_node(g, "a", "Placeholder", NULL, 2);
    add_node(g, "scope/inner/x", "Unpack", (const char *const[]){"a", NULL}, -1);
    add_node(g, "scope/y", "AddV2", (const char *const[]){"scope/inner/x:1", "scope/inner/x", NULL}, 3);
    char why[256];
    char *json = tw__tb_graph_json_from_graph_def(g->data, g->len, "graph_def", why, sizeof why);
    g_assert_nonnull(json);
    g_assert_cmpstr(why, ==, ""); /* loops and control inputs are how TensorFlow graphs are */
    JsonParser *parser = json_parser_new();
    JsonObject *root = parse(json, parser);
    g_assert_cmpstr(json_object_get_string_member(root, "format"), ==, "twb-graph");
    assert_ordered(root);
    JsonArray *nodes = json_object_get_array_member(root, "nodes");
    g_assert_cmpuint(json_array_get_length(nodes), ==, 5);
    /* depth-first from m: a, then n (whose input back to m is cut), then m */
    g_assert_cmpstr(json_object_get_string_member(json_array_get_object_element(nodes, 0), "name"), ==, "a");
    g_assert_cmpstr(json_object_get_string_member(json_array_get_object_element(nodes, 1), "name"), ==, "n");
    g_assert_cmpuint(json_array_get_length(json_object_get_array_member(node_named(root, "n"), "inputs")), ==, 0);
    JsonArray *m_in = json_object_get_array_member(node_named(root, "m"), "inputs");
    g_assert_cmpuint(json_array_get_length(m_in), ==, 2);
    char *first = input_text(root, json_array_get_array_element(m_in, 0));
    char *second = input_text(root, json_array_get_array_element(m_in, 1));
    g_assert_cmpstr(first, ==, "a");
    g_assert_cmpstr(second, ==, "n");
    g_free(first), g_free(second);
    /* x is read at output 1: it has two outputs, their shapes unknown (no _output_shapes) */
    JsonObject *x = node_named(root, "scope/inner/x");
    g_assert_cmpstr(json_object_get_string_member(x, "scope"), ==, "scope/inner");
    JsonArray *x_out = json_object_get_array_member(x, "outputs");
    g_assert_cmpuint(json_array_get_length(x_out), ==, 2);
    g_assert_true(JSON_NODE_HOLDS_NULL(json_object_get_member(json_array_get_object_element(x_out, 1), "shape")));
    JsonObject *y_out = json_array_get_object_element(json_object_get_array_member(node_named(root, "scope/y"), "outputs"), 0);
    g_assert_cmpstr(json_object_get_string_member(y_out, "dtype"), ==, "float32");
    JsonArray *y_shape = json_object_get_array_member(y_out, "shape");
    g_assert_cmpint(json_array_get_int_element(y_shape, 0), ==, -1);
    g_assert_cmpint(json_array_get_int_element(y_shape, 2), ==, 7);

    /* The graph view reads it: scopes as frames, unknown sizes as "?". */
    GError *error = NULL;
    tw_graph_model *model = tw_graph_model_parse(json, -1, &error);
    g_assert_no_error(error);
    g_assert_cmpint(tw_graph_model_find_scope(model, "scope/inner"), >, 0);
    g_assert_cmpstr(model->nodes[3].name, ==, "scope/inner/x"); /* a, n, m, x, y */
    g_assert_cmpint(model->nodes[3].noutputs, ==, 2);
    char buf[64];
    g_assert_cmpstr(tw_graph_tensor_format(&model->nodes[4].outputs[0], buf, sizeof buf), ==, "(?, 7, 7)");
    g_assert_cmpstr(tw_graph_tensor_format(&model->nodes[3].outputs[1], buf, sizeof buf), ==, "?");
    tw_graph_model_free(model);
    g_object_unref(parser);
    g_free(json);
    g_byte_array_unref(g);
}

/* A TF2 function graph's captured variable, a Placeholder of dtype
 * resource read by one ReadVariableOp, is tucked into it as a variable
 * is; a Placeholder of data stays a box. */
static void test_resource_tucked(void)
{
    const char *json = "{\"format\": \"twb-graph\", \"version\": 1, \"nodes\": ["
                       "{\"id\": 0, \"op\": \"Placeholder\", \"name\": \"x\", \"inputs\": [], "
                       "\"outputs\": [{\"dtype\": \"float32\", \"shape\": [-1, 4]}]},"
                       "{\"id\": 1, \"op\": \"Placeholder\", \"name\": \"d/MatMul/ReadVariableOp/resource\", "
                       "\"scope\": \"d/MatMul/ReadVariableOp\", \"inputs\": [], "
                       "\"outputs\": [{\"dtype\": \"resource\", \"shape\": []}]},"
                       "{\"id\": 2, \"op\": \"ReadVariableOp\", \"name\": \"d/MatMul/ReadVariableOp\", "
                       "\"scope\": \"d/MatMul\", \"inputs\": [[1, 0]], "
                       "\"outputs\": [{\"dtype\": \"float32\", \"shape\": [4, 2]}]},"
                       "{\"id\": 3, \"op\": \"MatMul\", \"name\": \"d/MatMul\", \"scope\": \"d\", "
                       "\"inputs\": [[0, 0], [2, 0]], \"outputs\": [{\"dtype\": \"float32\", \"shape\": [-1, 2]}]}]}";
    GError *error = NULL;
    tw_graph_model *model = tw_graph_model_parse(json, -1, &error);
    g_assert_no_error(error);
    g_assert_cmpint(tw_op_kind_of("MatMul"), ==, TW_OP_KIND_LINEAR);
    tw_visible_graph *visible = tw_visible_graph_new(model, NULL); /* every scope open */
    g_assert_cmpint(visible->of_node[0], >=, 0); /* x: data */
    g_assert_cmpint(visible->of_node[1], ==, -1); /* the handle: tucked */
    const tw_visible_node *read = &visible->nodes[visible->of_node[2]];
    g_assert_cmpint(read->nparams, ==, 1);
    g_assert_cmpint(read->params[0], ==, 1);
    tw_visible_graph_free(visible);
    /* the handle's own scope (d/MatMul/ReadVariableOp: values alone) closed
     * is no box of 0 ops: the handle is still tucked into its reader */
    bool *expanded = g_new(bool, model->nscopes);
    for (int k = 0; k < model->nscopes; k++)
        expanded[k] = TRUE;
    expanded[tw_graph_model_find_scope(model, "d/MatMul/ReadVariableOp")] = FALSE;
    visible = tw_visible_graph_new(model, expanded);
    g_assert_cmpint(visible->nnodes, ==, 3); /* x, ReadVariableOp, MatMul */
    g_assert_cmpint(visible->of_node[1], ==, -1);
    g_assert_cmpint(visible->nodes[visible->of_node[2]].nparams, ==, 1);
    tw_visible_graph_free(visible);
    g_free(expanded);
    tw_graph_model_free(model);
}

static void test_damage(void)
{
    char why[256];
    /* an input naming no node: the graph is drawn without it, and said */
    GByteArray *g = g_byte_array_new();
    add_node(g, "a", "Placeholder", NULL, 1);
    add_node(g, "b", "Relu", (const char *const[]){"a", "gone:0", NULL}, 1);
    char *json = tw__tb_graph_json_from_graph_def(g->data, g->len, "graph_def", why, sizeof why);
    g_assert_nonnull(json);
    g_assert_cmpstr(why, ==, "1 input names no node of the graph (left out)");
    g_free(json);
    /* two nodes of one name */
    add_node(g, "a", "Const", NULL, 1);
    g_assert_null(tw__tb_graph_json_from_graph_def(g->data, g->len, "graph_def", why, sizeof why));
    g_assert_cmpstr(why, ==, "node 2: a second node named 'a'");
    /* no nodes, garbage, a wrong wire type */
    g_assert_null(tw__tb_graph_json_from_graph_def((const uint8_t *)"", 0, "graph_def", why, sizeof why));
    g_assert_cmpstr(why, ==, "the GraphDef has no nodes");
    g_assert_null(tw__tb_graph_json_from_graph_def((const uint8_t *)"\xff\xff\xff", 3, "graph_def", why, sizeof why));
    g_assert_true(g_str_has_prefix(why, "not a GraphDef message"));
    g_assert_null(tw__tb_graph_json_from_graph_def((const uint8_t *)"\x08\x01", 2, "graph_def", why, sizeof why));
    g_assert_nonnull(strstr(why, "field 1 (node) of tensorflow.GraphDef"));
    g_byte_array_unref(g);
}

/* ---- the function library (function.proto, op_def.proto field numbers) ---------------------- */

/* A NodeDef calling function f through its "f" attr (AttrValue.func, NameAttrList.name). */
static void add_call(GByteArray *into, int field, const char *name, const char *op, const char *f,
                     const char *const *inputs)
{
    GByteArray *n = g_byte_array_new(), *entry = g_byte_array_new(), *value = g_byte_array_new(),
               *func = g_byte_array_new();
    string_field(n, 1, name);
    string_field(n, 2, op);
    for (int i = 0; inputs && inputs[i]; i++)
        string_field(n, 3, inputs[i]);
    if (f) {
        string_field(func, 1, f);
        bytes_field(value, 10, func->data, func->len);
        string_field(entry, 1, "f");
        bytes_field(entry, 2, value->data, value->len);
        bytes_field(n, 5, entry->data, entry->len);
    }
    bytes_field(into, field, n->data, n->len);
    g_byte_array_unref(n), g_byte_array_unref(entry), g_byte_array_unref(value), g_byte_array_unref(func);
}

/* A FunctionDef into a FunctionDefLibrary: signature (name, input and
 * output args by name), body (NodeDefs written by the caller into body,
 * field 3) and ret ("out=node:arg:k" pairs). */
static void add_function(GByteArray *library, const char *name, const char *const *in, const char *const *out,
                         GByteArray *body, const char *const *ret)
{
    GByteArray *f = g_byte_array_new(), *sig = g_byte_array_new();
    string_field(sig, 1, name);
    for (int field = 2; field <= 3; field++)
        for (const char *const *a = field == 2 ? in : out; a && *a; a++) {
            GByteArray *arg = g_byte_array_new();
            string_field(arg, 1, *a);
            bytes_field(sig, field, arg->data, arg->len);
            g_byte_array_unref(arg);
        }
    bytes_field(f, 1, sig->data, sig->len);
    g_byte_array_append(f, body->data, body->len);
    for (int i = 0; ret && ret[i]; i++) {
        char **kv = g_strsplit(ret[i], "=", 2);
        GByteArray *entry = g_byte_array_new();
        string_field(entry, 1, kv[0]);
        string_field(entry, 2, kv[1]);
        bytes_field(f, 4, entry->data, entry->len);
        g_byte_array_unref(entry);
        g_strfreev(kv);
    }
    bytes_field(library, 1, f->data, f->len);
    g_byte_array_unref(f), g_byte_array_unref(sig);
}

/* A TF2 graph: a StatefulPartitionedCall of a function that calls another
 * through PartitionedCall, a function calling itself, one never called. */
static GByteArray *function_graph(void)
{
    GByteArray *g = g_byte_array_new(), *library = g_byte_array_new(), *body = g_byte_array_new();
    add_node(g, "x", "Placeholder", NULL, 2);
    add_node(g, "w", "Placeholder", NULL, -1);
    add_call(g, 1, "call", "StatefulPartitionedCall", "__inference_f_1", (const char *const[]){"x", "w", "^x", NULL});
    add_node(g, "out", "Identity", (const char *const[]){"call:1", NULL}, -1);
    add_call(g, 1, "r", "__rec_4", NULL, (const char *const[]){"x", NULL});

    add_call(body, 3, "mul", "Mul", NULL, (const char *const[]){"a", "b:0", NULL});
    add_call(body, 3, "inner", "PartitionedCall", "__inference_g_2", (const char *const[]){"mul:z:0", NULL});
    add_function(library, "__inference_f_1", (const char *const[]){"a", "b", NULL},
                 (const char *const[]){"y", "z", NULL}, body,
                 (const char *const[]){"z=inner:output:0", "y=mul:z:0", NULL});
    g_byte_array_set_size(body, 0);
    add_call(body, 3, "relu", "Relu", NULL, (const char *const[]){"u", NULL});
    add_function(library, "__inference_g_2", (const char *const[]){"u", NULL}, (const char *const[]){"v", NULL},
                 body, (const char *const[]){"v=relu:activations:0", NULL});
    g_byte_array_set_size(body, 0);
    add_call(body, 3, "c", "Const", NULL, NULL);
    add_function(library, "__unused_3", NULL, (const char *const[]){"c", NULL}, body,
                 (const char *const[]){"c=c:output:0", NULL});
    g_byte_array_set_size(body, 0);
    add_call(body, 3, "again", "__rec_4", NULL, (const char *const[]){"p", NULL});
    add_function(library, "__rec_4", (const char *const[]){"p", NULL}, (const char *const[]){"q", NULL}, body,
                 (const char *const[]){"q=again:q:0", NULL});
    bytes_field(g, 2, library->data, library->len);
    g_byte_array_unref(library), g_byte_array_unref(body);
    return g;
}

static void assert_inputs(JsonObject *root, const char *node, const char *const *expected)
{
    JsonArray *in = json_object_get_array_member(node_named(root, node), "inputs");
    guint n = 0;
    for (; expected[n]; n++) {
        g_assert_cmpuint(n, <, json_array_get_length(in));
        char *text = input_text(root, json_array_get_array_element(in, n));
        g_assert_cmpstr(text, ==, expected[n]);
        g_free(text);
    }
    g_assert_cmpuint(json_array_get_length(in), ==, n);
}

/* Each call is drawn as its function's body in the scope "call/function",
 * the body's arguments wired to the call's inputs and its returns to what
 * read the call's outputs; a call of a function already being drawn
 * around it stays one node; a function no node calls is said. */
static void test_function_library(void)
{
    GByteArray *g = function_graph();
    char why[256];
    char *json = tw__tb_graph_json_from_graph_def(g->data, g->len, "graph_def", why, sizeof why);
    g_assert_nonnull(json);
    g_assert_cmpstr(why, ==, "1 library function called by no node drawn (not drawn)");
    JsonParser *parser = json_parser_new();
    JsonObject *root = parse(json, parser);
    assert_ordered(root);
    g_assert_cmpuint(json_array_get_length(json_object_get_array_member(root, "nodes")), ==, 6);
    const char *mul = "call/__inference_f_1/mul", *relu = "call/__inference_f_1/inner/__inference_g_2/relu";
    g_assert_cmpstr(json_object_get_string_member(node_named(root, mul), "scope"), ==, "call/__inference_f_1");
    g_assert_cmpstr(json_object_get_string_member(node_named(root, relu), "scope"), ==,
                    "call/__inference_f_1/inner/__inference_g_2");
    g_assert_cmpstr(json_object_get_string_member(node_named(root, relu), "op"), ==, "Relu");
    assert_inputs(root, mul, (const char *const[]){"x", "w", NULL});
    assert_inputs(root, relu, (const char *const[]){mul, NULL});
    assert_inputs(root, "out", (const char *const[]){relu, NULL}); /* call:1 is z, the inner call's v */
    assert_inputs(root, "r/__rec_4/again", (const char *const[]){"x", NULL});
    g_assert_cmpstr(json_object_get_string_member(node_named(root, "r/__rec_4/again"), "op"), ==, "__rec_4");

    GError *error = NULL;
    tw_graph_model *model = tw_graph_model_parse(json, -1, &error);
    g_assert_no_error(error);
    g_assert_cmpint(tw_graph_model_find_scope(model, "call/__inference_f_1"), >, 0);
    g_assert_cmpint(tw_graph_model_find_scope(model, "call/__inference_f_1/inner/__inference_g_2"), >, 0);
    tw_graph_model_free(model);
    g_object_unref(parser);
    g_free(json);
    g_byte_array_unref(g);
}

/* A body NodeDef with one attr (when key is set): an int (AttrValue.i,
 * field 3) as Unpack's "num", or, type_list, a list of value float32
 * types (AttrValue.list.type, field 6) as IteratorGetNext's "output_types". */
static void add_attr_node(GByteArray *into, const char *name, const char *op, const char *const *inputs,
                          const char *key, bool type_list, int value)
{
    GByteArray *n = g_byte_array_new(), *entry = g_byte_array_new(), *attr_value = g_byte_array_new(),
               *list = g_byte_array_new();
    string_field(n, 1, name);
    string_field(n, 2, op);
    for (int i = 0; inputs && inputs[i]; i++)
        string_field(n, 3, inputs[i]);
    if (key) {
        if (type_list) {
            for (int i = 0; i < value; i++) {
                varint(list, 6 << 3 | 0);
                varint(list, 1); /* DT_FLOAT */
            }
            bytes_field(attr_value, 1, list->data, list->len);
        } else {
            varint(attr_value, 3 << 3 | 0);
            varint(attr_value, (uint64_t)value);
        }
        string_field(entry, 1, key);
        bytes_field(entry, 2, attr_value->data, attr_value->len);
        bytes_field(n, 5, entry->data, entry->len);
    }
    bytes_field(into, 3, n->data, n->len);
    g_byte_array_unref(n), g_byte_array_unref(entry), g_byte_array_unref(attr_value), g_byte_array_unref(list);
}

/* Body inputs "node:arg:k" and the flat output each is, by TensorFlow's
 * OpDefs (Split's "output" is num_split tensors, IteratorGetNext's
 * "components" output_types long, FusedBatchNormV3's sixth output
 * reserve_space_3, the function two's second output argument out_b);
 * MysteryOp is known to nobody: output k of each name. NULL: left out. */
static const struct {
    const char *reader, *input, *drawn;
} output_arguments[] = {
    {"c1", "split:output:2", "split:2"},
    {"c1", "unpack:output:1", "unpack:1"},
    {"c2", "next:components:1", "next:1"},
    {"c2", "uniq:idx:0", "uniq:1"},
    {"c3", "fbn:batch_variance:0", "fbn:2"},
    {"c3", "fbn:reserve_space_3:0", "fbn:5"},
    {"c4", "mystery:first:0", "mystery"},
    {"c4", "mystery:second:1", "mystery:1"},
    {"c5", "split:output:3", NULL}, /* num_split is 3 */
    {"c5", "uniq:count:0", NULL},   /* Unique has y and idx */
    {"c6", "two:out_b:0", "two/__inference_two/rb"},
};

/* A call of a function whose body reads ops of several output arguments
 * and lists (attrs num_split, num, output_types), an op nobody knows, and
 * a direct call of a function of two outputs. */
static GByteArray *output_arguments_graph(void)
{
    GByteArray *g = g_byte_array_new(), *library = g_byte_array_new(), *body = g_byte_array_new();
    add_node(g, "x", "Placeholder", NULL, -1);
    add_node(g, "it", "Placeholder", NULL, -1);
    add_call(g, 1, "call", "StatefulPartitionedCall", "__inference_multi", (const char *const[]){"x", "it", NULL});
    add_node(g, "out0", "Identity", (const char *const[]){"call:0", NULL}, -1);
    add_node(g, "out1", "Identity", (const char *const[]){"call:1", NULL}, -1);

    add_attr_node(body, "split", "Split", (const char *const[]){"a", "a", NULL}, "num_split", false, 3);
    add_attr_node(body, "unpack", "Unpack", (const char *const[]){"a", NULL}, "num", false, 2);
    add_attr_node(body, "next", "IteratorGetNext", (const char *const[]){"i", NULL}, "output_types", true, 3);
    add_attr_node(body, "uniq", "Unique", (const char *const[]){"a", NULL}, NULL, false, 0);
    add_attr_node(body, "fbn", "FusedBatchNormV3", (const char *const[]){"a", NULL}, NULL, false, 0);
    add_attr_node(body, "mystery", "MysteryOp", (const char *const[]){"a", NULL}, NULL, false, 0);
    add_attr_node(body, "two", "__inference_two", (const char *const[]){"a", NULL}, NULL, false, 0);
    for (size_t i = 0; i < G_N_ELEMENTS(output_arguments);) {
        const char *reader = output_arguments[i].reader, *inputs[3] = {NULL, NULL, NULL};
        for (int k = 0; i < G_N_ELEMENTS(output_arguments) && !strcmp(output_arguments[i].reader, reader); i++)
            inputs[k++] = output_arguments[i].input;
        add_attr_node(body, reader, "AddV2", inputs, NULL, false, 0);
    }
    add_function(library, "__inference_multi", (const char *const[]){"a", "i", NULL},
                 (const char *const[]){"p", "q", NULL}, body, (const char *const[]){"p=c1:z:0", "q=c2:z:0", NULL});
    g_byte_array_set_size(body, 0);
    add_attr_node(body, "ra", "Neg", (const char *const[]){"u", NULL}, NULL, false, 0);
    add_attr_node(body, "rb", "Neg", (const char *const[]){"u", NULL}, NULL, false, 0);
    add_function(library, "__inference_two", (const char *const[]){"u", NULL},
                 (const char *const[]){"out_a", "out_b", NULL}, body,
                 (const char *const[]){"out_a=ra:y:0", "out_b=rb:y:0", NULL});
    bytes_field(g, 2, library->data, library->len);
    g_byte_array_unref(library), g_byte_array_unref(body);
    return g;
}

static guint outputs_of(JsonObject *root, const char *node)
{
    return json_array_get_length(json_object_get_array_member(node_named(root, node), "outputs"));
}

/* "node:arg:k" is drawn on the flat output TensorFlow's OpDef gives it;
 * what no OpDef here places is said in the note. */
static void test_output_arguments(void)
{
    GByteArray *g = output_arguments_graph();
    char why[400];
    char *json = tw__tb_graph_json_from_graph_def(g->data, g->len, "graph_def", why, sizeof why);
    g_assert_nonnull(json);
    g_assert_cmpstr(why, ==,
                    "2 inputs name an output its op does not have (left out); 1 node of ops whose outputs are "
                    "not known here (MysteryOp) read through several output arguments (each drawn as output k)");
    JsonParser *parser = json_parser_new();
    JsonObject *root = parse(json, parser);
    assert_ordered(root);
    const char *prefix = "call/__inference_multi/";
    for (size_t i = 0; i < G_N_ELEMENTS(output_arguments);) {
        const char *reader = output_arguments[i].reader, *want[3] = {NULL, NULL, NULL};
        char *owned[3] = {NULL, NULL, NULL};
        for (int k = 0; i < G_N_ELEMENTS(output_arguments) && !strcmp(output_arguments[i].reader, reader); i++)
            if (output_arguments[i].drawn)
                want[k] = owned[k] = g_strconcat(prefix, output_arguments[i].drawn, NULL), k++;
        char *name = g_strconcat(prefix, reader, NULL);
        assert_inputs(root, name, want);
        g_free(name), g_free(owned[0]), g_free(owned[1]), g_free(owned[2]);
    }
    assert_inputs(root, "out0", (const char *const[]){"call/__inference_multi/c1", NULL});
    assert_inputs(root, "out1", (const char *const[]){"call/__inference_multi/c2", NULL});
    /* every output the op has, read or not */
    g_assert_cmpuint(outputs_of(root, "call/__inference_multi/split"), ==, 3);
    g_assert_cmpuint(outputs_of(root, "call/__inference_multi/unpack"), ==, 2);
    g_assert_cmpuint(outputs_of(root, "call/__inference_multi/next"), ==, 3);
    g_assert_cmpuint(outputs_of(root, "call/__inference_multi/fbn"), ==, 6);
    g_assert_cmpuint(outputs_of(root, "call/__inference_multi/uniq"), ==, 2);
    g_object_unref(parser);
    g_free(json);
    g_byte_array_unref(g);
}

/* A chain of 100,000 nodes written last to first: ordering it must not
 * recurse once per node. */
static void test_long_chain(void)
{
    enum { N = 100000 };
    GByteArray *g = g_byte_array_new();
    for (int i = N - 1; i >= 0; i--) {
        char name[32], input[32];
        g_snprintf(name, sizeof name, "n%d", i);
        g_snprintf(input, sizeof input, "n%d", i - 1);
        add_node(g, name, "Relu", i ? (const char *const[]){input, NULL} : NULL, -1);
    }
    char why[256];
    char *json = tw__tb_graph_json_from_graph_def(g->data, g->len, "graph_def", why, sizeof why);
    g_assert_nonnull(json);
    JsonParser *parser = json_parser_new();
    JsonObject *root = parse(json, parser);
    assert_ordered(root);
    g_assert_cmpstr(json_object_get_string_member(json_array_get_object_element(
                        json_object_get_array_member(root, "nodes"), 0), "name"), ==, "n0");
    g_object_unref(parser);
    g_free(json);
    g_byte_array_unref(g);
}

/* ---- the corpus, against the independent decoder ------------------------------------------ */
static char *corpus_file(const char *run)
{
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    char *dir = g_build_filename(srcdir ? srcdir : ".", "..", "..", "shared", "corpus", "tfevents", run, NULL);
    char **files = g_file_test(dir, G_FILE_TEST_IS_DIR) ? tw_tb_run_files(dir) : NULL;
    char *file = files && files[0] ? g_strdup(files[0]) : NULL;
    g_strfreev(files);
    g_free(dir);
    return file;
}

/* tb_decode.py's graph line for file, or NULL after a skip. */
static JsonNode *independent_graph(const char *file)
{
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    char *script = g_build_filename(srcdir ? srcdir : ".", "tb_decode.py", NULL);
    char *argv[] = {"/usr/bin/python3", script, (char *)file, NULL};
    char *out = NULL;
    int status = 0;
    gboolean ran = g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, &status, NULL);
    g_free(script);
    if (!ran || (WIFEXITED(status) && WEXITSTATUS(status) == 2)) {
        g_test_skip("python3-protobuf is not installed (apt-get install python3-protobuf): the independent decoder "
                    "did not run");
        g_free(out);
        return NULL;
    }
    g_assert_true(g_spawn_check_wait_status(status, NULL));
    JsonNode *graph = NULL;
    char **lines = g_strsplit(out, "\n", -1);
    for (char **l = lines; *l && !graph; l++)
        if (strstr(*l, "\"kind\": \"graph\""))
            graph = json_from_string(*l, NULL);
    g_strfreev(lines);
    g_free(out);
    g_assert_nonnull(graph);
    return graph;
}

typedef struct {
    char *json;
    int warnings;
} graph_item;

static void on_item(void *user_data, const tw_tb_item *it)
{
    graph_item *g = user_data;
    if (it->kind == TW_TB_GRAPH_DEF) {
        g_assert_null(g->json);
        g_assert_nonnull(it->text);
        g->json = g_strdup(it->text);
    }
}

static void on_warning(void *user_data, const char *message)
{
    g_printerr("%s\n", message);
    ((graph_item *)user_data)->warnings++;
}

static char *read_graph(const char *file)
{
    graph_item g = {0};
    tw_tfrecord_reader *r = tw_tfrecord_open(file, on_warning, &g);
    tw_tb_decoder *d = tw_tb_decoder_new(file, on_warning, &g);
    const uint8_t *data;
    size_t n;
    uint64_t offset;
    while (tw_tfrecord_next(r, &data, &n, &offset) == TW_TFRECORD_OK)
        tw_tb_decode_event(d, data, n, offset, on_item, &g);
    tw_tb_decoder_free(d);
    tw_tfrecord_close(r);
    g_assert_cmpint(g.warnings, ==, 0);
    g_assert_nonnull(g.json);
    return g.json;
}

/* One event holding graph_def (Event field 4), framed as a TFRecord. */
static void write_graph_event(const char *path, const GByteArray *graph)
{
    GByteArray *event = g_byte_array_new(), *file = g_byte_array_new();
    bytes_field(event, 4, graph->data, graph->len);
    uint64_t n = event->len;
    uint32_t crc = tw_tfrecord_masked_crc(&n, 8);
    g_byte_array_append(file, (const uint8_t *)&n, 8);
    g_byte_array_append(file, (const uint8_t *)&crc, 4);
    g_byte_array_append(file, event->data, event->len);
    crc = tw_tfrecord_masked_crc(event->data, event->len);
    g_byte_array_append(file, (const uint8_t *)&crc, 4);
    g_assert_true(g_file_set_contents(path, (const char *)file->data, file->len, NULL));
    g_byte_array_unref(event), g_byte_array_unref(file);
}

static JsonObject *independent_function(JsonObject *graph, const char *name)
{
    JsonArray *functions = json_object_get_array_member(graph, "functions");
    for (guint i = 0; i < json_array_get_length(functions); i++)
        if (!strcmp(json_object_get_string_member(json_array_get_object_element(functions, i), "name"), name))
            return json_array_get_object_element(functions, i);
    return NULL;
}

/* Every node of the function's body as the independent reader reads it
 * is ours under prefix, with its op; a node calling a library function
 * (its "f") is that function's body one scope down. */
static int check_body(JsonObject *theirs, JsonObject *ours, const char *prefix, const char *function, int depth)
{
    JsonObject *f = independent_function(theirs, function);
    g_assert_nonnull(f);
    JsonArray *body = json_object_get_array_member(f, "nodes");
    int checked = 0;
    for (guint i = 0; i < json_array_get_length(body); i++) {
        JsonObject *n = json_array_get_object_element(body, i);
        JsonArray *calls = json_object_get_array_member(n, "f");
        const char *callee = json_array_get_length(calls) ? json_array_get_string_element(calls, 0) : NULL;
        char *name = g_strconcat(prefix, json_object_get_string_member(n, "name"), NULL);
        if (callee && independent_function(theirs, callee) && depth < 4) {
            char *inner = g_strconcat(name, "/", callee, "/", NULL);
            checked += check_body(theirs, ours, inner, callee, depth + 1);
            g_free(inner);
        } else {
            g_assert_cmpstr(json_object_get_string_member(node_named(ours, name), "op"), ==,
                            json_object_get_string_member(n, "op"));
            checked++;
        }
        g_free(name);
    }
    return checked;
}

/* The library's field numbers against the independent reader: the
 * function graph, written to an event file, read by tb_decode.py; each
 * call's body as it reads it is the one drawn. */
static void test_function_library_independent(void)
{
    char *dir = g_dir_make_tmp("twb-tb-graph-XXXXXX", NULL), *file = g_build_filename(dir, "events.out.tfevents.1.f", NULL);
    GByteArray *g = function_graph();
    write_graph_event(file, g);
    JsonNode *expected = independent_graph(file);
    if (expected) {
        JsonObject *theirs = json_node_get_object(expected);
        char why[256];
        char *json = tw__tb_graph_json_from_graph_def(g->data, g->len, "graph_def", why, sizeof why);
        JsonParser *parser = json_parser_new();
        JsonObject *ours = parse(json, parser);
        JsonArray *calls = json_object_get_array_member(json_object_get_object_member(theirs, "calls"), "call");
        g_assert_cmpuint(json_array_get_length(calls), ==, 1);
        const char *callee = json_array_get_string_element(calls, 0);
        char *prefix = g_strconcat("call/", callee, "/", NULL);
        g_assert_cmpint(check_body(theirs, ours, prefix, callee, 0), ==, 2); /* mul, and relu inside inner */
        g_assert_cmpuint(json_array_get_length(json_object_get_array_member(theirs, "functions")), ==, 4);
        g_free(prefix);
        g_object_unref(parser);
        g_free(json);
        json_node_unref(expected);
    }
    g_byte_array_unref(g);
    scratch_remove_tree(dir);
    g_free(file);
    g_free(dir);
}

/* The output-arguments graph as the independent reader reads it: the
 * attrs the lengths come from (AttrValue.i, ListValue.type), the body's
 * inputs and two's output arguments as output_arguments assumes them. */
static void test_output_arguments_independent(void)
{
    char *dir = g_dir_make_tmp("twb-tb-graph-XXXXXX", NULL);
    char *file = g_build_filename(dir, "events.out.tfevents.1.o", NULL);
    GByteArray *g = output_arguments_graph();
    write_graph_event(file, g);
    JsonNode *expected = independent_graph(file);
    if (expected) {
        JsonObject *theirs = json_node_get_object(expected);
        JsonArray *body = json_object_get_array_member(independent_function(theirs, "__inference_multi"), "nodes");
        const struct {
            const char *node, *attr;
            gint64 value;
        } lengths[] = {{"split", "num_split", 3}, {"unpack", "num", 2}, {"next", "output_types", 3}};
        for (size_t i = 0; i < G_N_ELEMENTS(lengths); i++)
            for (guint j = 0; j < json_array_get_length(body); j++) {
                JsonObject *n = json_array_get_object_element(body, j);
                if (!strcmp(json_object_get_string_member(n, "name"), lengths[i].node))
                    g_assert_cmpint(json_object_get_int_member(json_object_get_object_member(n, "attrs"),
                                                               lengths[i].attr), ==, lengths[i].value);
            }
        guint checked = 0;
        for (guint j = 0; j < json_array_get_length(body); j++) {
            JsonObject *n = json_array_get_object_element(body, j);
            JsonArray *in = json_object_get_array_member(n, "inputs");
            for (guint k = 0; k < json_array_get_length(in); k++)
                for (size_t e = 0; e < G_N_ELEMENTS(output_arguments); e++)
                    if (!strcmp(output_arguments[e].reader, json_object_get_string_member(n, "name")) &&
                        !strcmp(output_arguments[e].input, json_array_get_string_element(in, k)))
                        checked++;
        }
        g_assert_cmpuint(checked, ==, G_N_ELEMENTS(output_arguments));
        JsonArray *outs = json_object_get_array_member(independent_function(theirs, "__inference_two"), "outputs");
        g_assert_cmpuint(json_array_get_length(outs), ==, 2);
        g_assert_cmpstr(json_array_get_string_element(outs, 1), ==, "out_b");
        json_node_unref(expected);
    }
    g_byte_array_unref(g);
    scratch_remove_tree(dir);
    g_free(file);
    g_free(dir);
}

/* Each node of the independent reading is a node of ours: op, data inputs
 * in order (control inputs left out), the _output_shapes. */
static void check_corpus_graph(gconstpointer run)
{
    char *file = corpus_file(run);
    if (!file) {
        g_test_skip("the shared corpus (../shared/corpus/tfevents) is not here");
        return;
    }
    JsonNode *expected = independent_graph(file);
    if (!expected) {
        g_free(file);
        return;
    }
    char *json = read_graph(file);
    JsonParser *parser = json_parser_new();
    JsonObject *ours = parse(json, parser);
    assert_ordered(ours);
    JsonArray *theirs = json_object_get_array_member(json_node_get_object(expected), "nodes");
    g_assert_cmpuint(json_array_get_length(json_object_get_array_member(ours, "nodes")), ==,
                     json_array_get_length(theirs));
    for (guint i = 0; i < json_array_get_length(theirs); i++) {
        JsonObject *t = json_array_get_object_element(theirs, i);
        JsonObject *o = node_named(ours, json_object_get_string_member(t, "name"));
        g_assert_cmpstr(json_object_get_string_member(o, "op"), ==, json_object_get_string_member(t, "op"));
        JsonArray *t_in = json_object_get_array_member(t, "inputs"), *o_in = json_object_get_array_member(o, "inputs");
        guint k = 0;
        for (guint j = 0; j < json_array_get_length(t_in); j++) {
            const char *name = json_array_get_string_element(t_in, j);
            if (name[0] == '^')
                continue;
            g_assert_cmpuint(k, <, json_array_get_length(o_in));
            char *got = input_text(ours, json_array_get_array_element(o_in, k++));
            char *want = g_str_has_suffix(name, ":0") ? g_strndup(name, strlen(name) - 2) : g_strdup(name);
            g_assert_cmpstr(got, ==, want);
            g_free(got), g_free(want);
        }
        g_assert_cmpuint(k, ==, json_array_get_length(o_in));
        JsonArray *t_shapes = json_object_get_array_member(t, "shapes");
        JsonArray *o_out = json_object_get_array_member(o, "outputs");
        g_assert_cmpuint(json_array_get_length(o_out), >=, json_array_get_length(t_shapes));
        for (guint s = 0; s < json_array_get_length(t_shapes); s++) {
            JsonNode *want = json_array_get_element(t_shapes, s);
            JsonNode *got = json_object_get_member(json_array_get_object_element(o_out, s), "shape");
            g_assert_cmpint(JSON_NODE_HOLDS_NULL(got), ==, JSON_NODE_HOLDS_NULL(want));
            if (JSON_NODE_HOLDS_NULL(want))
                continue;
            JsonArray *w = json_node_get_array(want), *g = json_node_get_array(got);
            g_assert_cmpuint(json_array_get_length(g), ==, json_array_get_length(w));
            for (guint d = 0; d < json_array_get_length(w); d++)
                g_assert_cmpint(json_array_get_int_element(g, d), ==, json_array_get_int_element(w, d));
        }
    }
    /* and the graph view's model reads it, TensorFlow's name scopes as its scopes */
    GError *error = NULL;
    tw_graph_model *model = tw_graph_model_parse(json, -1, &error);
    g_assert_no_error(error);
    g_assert_cmpint(model->nnodes, ==, (int)json_array_get_length(theirs));
    bool *expanded = g_new0(bool, model->nscopes);
    tw_graph_model_default_expansion(model, expanded);
    tw_visible_graph *visible = tw_visible_graph_new(model, expanded);
    g_assert_cmpint(visible->nnodes, >, 0);
    g_assert_cmpint(visible->nnodes, <, model->nnodes / 4); /* scopes collapsed, constants tucked */
    tw_visible_graph_free(visible);
    g_free(expanded);
    tw_graph_model_free(model);
    g_object_unref(parser);
    g_free(json);
    json_node_unref(expected);
    g_free(file);
}

/* twb import-tensorboard stores the graph; the graph view lists and loads it. */
static void test_import_to_graph_view(void)
{
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    char *logdir = g_build_filename(srcdir ? srcdir : ".", "..", "..", "shared", "corpus", "tfevents",
                                    "tf2-keras-callback-histograms", NULL);
    if (!g_file_test(logdir, G_FILE_TEST_IS_DIR)) {
        g_test_skip("the shared corpus (../shared/corpus/tfevents) is not here");
        g_free(logdir);
        return;
    }
    char *scratch = g_dir_make_tmp("tw-tb-graph-XXXXXX", NULL);
    char *db = g_build_filename(scratch, "runs.db", NULL);
    tw_tb_import_stats stats;
    g_assert_cmpint(tw_tb_import(logdir, db, NULL, NULL, &stats), ==, 0);
    g_assert_cmpint(stats.graphs, ==, 1);
    GError *error = NULL;
    GArray *graphs = tw_stored_graphs_list(db, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(graphs->len, ==, 1);
    tw_stored_graph *g = &g_array_index(graphs, tw_stored_graph, 0);
    g_assert_cmpstr(g->run, ==, ".");
    g_assert_cmpstr(g->tag, ==, TW_TB_GRAPH_TAG);
    tw_graph_arrangement *arrangement = tw_stored_graph_load(db, g, &error);
    g_assert_no_error(error);
    g_assert_nonnull(arrangement);
    tw_graph_arrangement_unref(arrangement);
    g_array_unref(graphs);

    /* twb runs export writes it back as a GraphDef that reads as the same
     * graph: names, ops, inputs and shapes (unknown ranks too). */
    char *out = g_build_filename(scratch, "exported", NULL), *file = NULL;
    tw_tb_export_stats exported;
    g_assert_cmpint(tw_tb_export_run(db, ".", out, &file, &exported), ==, 0);
    g_assert_cmpint(exported.graphs, ==, 1);
    g_assert_cmpint(exported.graphs_left_out, ==, 0);
    char *original = read_graph(corpus_file("tf2-keras-callback-histograms")), *back = read_graph(file);
    JsonParser *p1 = json_parser_new(), *p2 = json_parser_new();
    JsonArray *a = json_object_get_array_member(parse(original, p1), "nodes");
    JsonArray *b = json_object_get_array_member(parse(back, p2), "nodes");
    g_assert_cmpuint(json_array_get_length(a), ==, json_array_get_length(b));
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonObject *x = json_array_get_object_element(a, i), *y = json_array_get_object_element(b, i);
        static const char *const members[] = {"name", "op", "scope"};
        for (size_t m = 0; m < G_N_ELEMENTS(members); m++)
            g_assert_cmpstr(json_object_get_string_member(x, members[m]), ==,
                            json_object_get_string_member(y, members[m]));
        static const char *const arrays[] = {"inputs", "outputs"};
        for (size_t m = 0; m < G_N_ELEMENTS(arrays); m++) {
            JsonArray *xa = json_object_get_array_member(x, arrays[m]), *ya = json_object_get_array_member(y, arrays[m]);
            g_assert_cmpuint(json_array_get_length(xa), ==, json_array_get_length(ya));
            for (guint k = 0; m == 0 && k < json_array_get_length(xa); k++)
                g_assert_true(json_node_equal(json_array_get_element(xa, k), json_array_get_element(ya, k)));
            for (guint k = 0; m == 1 && k < json_array_get_length(xa); k++) /* dtypes are not written */
                g_assert_true(json_node_equal(json_object_get_member(json_array_get_object_element(xa, k), "shape"),
                                              json_object_get_member(json_array_get_object_element(ya, k), "shape")));
        }
    }
    g_object_unref(p1), g_object_unref(p2);
    g_free(original), g_free(back), g_free(file), g_free(out);
    scratch_remove_tree(scratch);
    g_free(db), g_free(scratch), g_free(logdir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/tb_graph/order-cycles-controls", test_order_cycles_and_controls);
    g_test_add_func("/tb_graph/resource-tucked", test_resource_tucked);
    g_test_add_func("/tb_graph/damage", test_damage);
    g_test_add_func("/tb_graph/long-chain", test_long_chain);
    g_test_add_func("/tb_graph/function-library", test_function_library);
    g_test_add_func("/tb_graph/function-library-independent", test_function_library_independent);
    g_test_add_func("/tb_graph/output-arguments", test_output_arguments);
    g_test_add_func("/tb_graph/output-arguments-independent", test_output_arguments_independent);
    g_test_add_data_func("/tb_graph/corpus/tf1-keras", "tf1-keras-callback-scalars-graph", check_corpus_graph);
    g_test_add_data_func("/tb_graph/corpus/tf2-keras", "tf2-keras-callback-histograms", check_corpus_graph);
    g_test_add_func("/tb_graph/import-to-graph-view", test_import_to_graph_view);
    return g_test_run();
}
