/* libFuzzer target for reading an event file's GraphDef into twb's graph
 * JSON (data/tfevents/graph_def_read.c, which the Event decoder runs on
 * every graph_def): any bytes give either a reason or JSON in which every
 * node's id is its position, every input is an earlier node's existing
 * output, and every output has a dtype and a shape (an array or null).
 * Built into build-fuzz/tests/fuzz/fuzz_graph_def_read (make fuzz) and,
 * renamed, into the fuzz_replay test that runs
 * tests/fuzz/corpus/graph_def_read/. */
#include <json-glib/json-glib.h>

#include "fuzz_check.h"
#include "tfevents/tfevents_internal.h"

static void check_graph(const char *json)
{
    JsonParser *parser = json_parser_new();
    FUZZ_ASSERT(json_parser_load_from_data(parser, json, -1, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    FUZZ_ASSERT(!strcmp(json_object_get_string_member(root, "format"), "twb-graph"));
    JsonArray *nodes = json_object_get_array_member(root, "nodes");
    guint n = json_array_get_length(nodes);
    FUZZ_ASSERT(n > 0);
    for (guint i = 0; i < n; i++) {
        JsonObject *node = json_array_get_object_element(nodes, i);
        FUZZ_ASSERT(json_object_get_int_member(node, "id") == (gint64)i);
        JsonArray *in = json_object_get_array_member(node, "inputs");
        for (guint k = 0; k < json_array_get_length(in); k++) {
            JsonArray *pair = json_array_get_array_element(in, k);
            gint64 from = json_array_get_int_element(pair, 0), out = json_array_get_int_element(pair, 1);
            FUZZ_ASSERT(from >= 0 && from < (gint64)i && out >= 0);
            JsonObject *producer = json_array_get_object_element(nodes, (guint)from);
            FUZZ_ASSERT(out < (gint64)json_array_get_length(json_object_get_array_member(producer, "outputs")));
        }
        JsonArray *outs = json_object_get_array_member(node, "outputs");
        for (guint k = 0; k < json_array_get_length(outs); k++) {
            JsonObject *o = json_array_get_object_element(outs, k);
            JsonNode *shape = json_object_get_member(o, "shape");
            FUZZ_ASSERT(json_object_get_string_member(o, "dtype") && shape &&
                        (JSON_NODE_HOLDS_NULL(shape) || JSON_NODE_HOLDS_ARRAY(shape)));
        }
    }
    g_object_unref(parser);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[256] = "x";
    char *json = tw__tb_graph_json_from_graph_def(data, size, "graph_def", why, sizeof why);
    FUZZ_ASSERT(json || why[0] != '\0');
    if (json)
        check_graph(json);
    g_free(json);
    return 0;
}
