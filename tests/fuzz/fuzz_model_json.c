/* libFuzzer target for the Keras model file reader: tw_model_from_json on
 * the fuzzer's bytes, and tw_model_load on them as a file (gunzipped when
 * they start as gzip), which must agree with it on plain text. A model
 * that loads must write back to JSON that loads to the same text (the
 * round trip), and its summary must either work or fail with a message.
 * The depth scan every JSON reader relies on is checked against json-glib. Built into build-fuzz/tests/fuzz/
 * fuzz_model_json (make fuzz) and, renamed, into the fuzz_replay test that
 * runs tests/fuzz/corpus/model_json/ on every build. */
#include <json-glib/json-glib.h>

#include "fuzz_check.h"
#include "tw/json_check.h"
#include "tw/model_file.h"

/* Arrays and objects nested in node, itself counted. */
static int tree_depth(JsonNode *node)
{
    int deepest = 0;
    if (JSON_NODE_HOLDS_ARRAY(node)) {
        JsonArray *array = json_node_get_array(node);
        for (guint i = 0; i < json_array_get_length(array); i++) {
            int d = tree_depth(json_array_get_element(array, i)); /* not inside MAX, which evaluates twice */
            deepest = MAX(deepest, d);
        }
    } else if (JSON_NODE_HOLDS_OBJECT(node)) {
        GList *members = json_object_get_values(json_node_get_object(node));
        for (GList *m = members; m; m = m->next) {
            int d = tree_depth(m->data);
            deepest = MAX(deepest, d);
        }
        g_list_free(members);
    } else {
        return 0;
    }
    return deepest + 1;
}

/* The depth scan must never count less than json-glib nests: text it
 * lets through parses (if at all) to a tree at most TW_JSON_MAX_DEPTH
 * deep. Inputs of a few KB reach 513 levels, so a scan that misreads
 * json-glib's strings or comments shows here long before a stack does. */
static void check_depth_scan(const uint8_t *data, size_t size)
{
    if (tw_json_too_deep((const char *)data, (ptrdiff_t)size) >= 0)
        return;
    JsonParser *parser = json_parser_new_immutable();
    if (json_parser_load_from_data(parser, (const char *)data, (gssize)size, NULL) && json_parser_get_root(parser))
        FUZZ_ASSERT(tree_depth(json_parser_get_root(parser)) <= TW_JSON_MAX_DEPTH);
    g_object_unref(parser);
}

/* The loader on the bytes as a file: NULL with a message naming it, or a
 * model; on bytes that are not gzip, the same verdict as from_json's. */
static void check_load(const uint8_t *data, size_t size, bool parsed)
{
    char path[64];
    int fd = fuzz_as_file(data, size, path, sizeof path);
    if (fd < 0)
        return;
    tw_model *model = tw_model_load(path);
    if (!model)
        fuzz_check_failure(path);
    bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    FUZZ_ASSERT(gzip || !model == !parsed);
    tw_layer_unref(model);
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_depth_scan(data, size);
    tw_model *model = tw_model_from_json((const char *)data, size, "fuzz.json");
    if (!model)
        fuzz_check_failure("fuzz.json");
    check_load(data, size, model != NULL);
    if (!model)
        return 0;
    char *json = tw_model_to_json(model);
    FUZZ_ASSERT(json);
    tw_model *again = tw_model_from_json(json, strlen(json), "again.json");
    FUZZ_ASSERT(again);
    char *json2 = tw_model_to_json(again);
    FUZZ_ASSERT(json2 && !strcmp(json, json2));
    char *summary = tw_model_summary(model, 0);
    FUZZ_ASSERT(summary || tw_error_pending());
    tw_error_clear();
    free(summary);
    free(json2);
    free(json);
    tw_layer_unref(again);
    tw_layer_unref(model);
    return 0;
}
