/* libFuzzer target for the Keras model file reader: tw_model_from_json on
 * the fuzzer's bytes, and tw_model_load on them as a file (gunzipped when
 * they start as gzip), which must agree with it on plain text. A model
 * that loads must write back to JSON that loads to the same text (the
 * round trip), and its summary must either work or fail with a message. Built into build-fuzz/tests/fuzz/
 * fuzz_model_json (make fuzz) and, renamed, into the fuzz_replay test that
 * runs tests/fuzz/corpus/model_json/ on every build. */
#include "fuzz_check.h"
#include "tw/model_file.h"

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
