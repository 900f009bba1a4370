/* libFuzzer target for the engine's graph importer: tw_graph_from_json on
 * the fuzzer's bytes (as text), its constants and variables a float32
 * scalar from the lookup. A graph that imports must write back to JSON
 * that imports again and writes the same text. Built into
 * build-fuzz/tests/fuzz/fuzz_graph_json (make fuzz) and, renamed, into the
 * fuzz_replay test that runs tests/fuzz/corpus/graph_json/ on every build. */
#include <glib.h>

#include "fuzz_check.h"
#include "tw/function.h"
#include "tw/tensor.h"

static tw_tensor *scalar_lookup(const char *node_name, tw_node_kind kind, void *user_data)
{
    (void)node_name, (void)kind, (void)user_data;
    return tw_scalar_of(1.5, TW_FLOAT32); /* belongs to the importer's scope */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = g_strndup((const char *)data, size); /* the importer reads up to a NUL */
    tw_graph *g = tw_graph_from_json(text, scalar_lookup, NULL);
    g_free(text);
    if (!g) {
        fuzz_check_failure("graph JSON");
        return 0;
    }
    char *json = tw_graph_json(g);
    FUZZ_ASSERT(json);
    tw_graph *again = tw_graph_from_json(json, scalar_lookup, NULL);
    FUZZ_ASSERT(again);
    char *json2 = tw_graph_json(again);
    FUZZ_ASSERT(json2 && !strcmp(json, json2));
    free(json2);
    free(json);
    tw_graph_unref(again);
    tw_graph_unref(g);
    return 0;
}
