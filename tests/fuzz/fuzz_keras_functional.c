/* libFuzzer target for the Keras Functional reader (data/model_json_functional.c):
 * tw_model_from_json on the fuzzer's bytes. A model that loads must count
 * its parameters (or say which depend on an unknown shape), summarize, and
 * write back in
 * Keras 2's and Keras 3's forms to text that reads back to the same text.
 * Cycles, dangling references and shape mismatches must be refused with a
 * message, never a crash or a hang. Built into
 * build-fuzz/tests/fuzz/fuzz_keras_functional (make fuzz) and, renamed,
 * into the fuzz_replay test that runs tests/fuzz/corpus/keras_functional/. */
#include "fuzz_check.h"
#include "tw/model_file.h"

static void check_form(const tw_model *model, tw_keras_json_format format)
{
    char *json = tw_model_to_json_format(model, format);
    FUZZ_ASSERT(json);
    tw_model *again = tw_model_from_json(json, strlen(json), "again.json");
    FUZZ_ASSERT(again);
    char *json2 = tw_model_to_json_format(again, format);
    FUZZ_ASSERT(json2 && !strcmp(json, json2));
    free(json2);
    free(json);
    tw_layer_unref(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tw_model *model = tw_model_from_json((const char *)data, size, "fuzz.json");
    if (!model) {
        fuzz_check_failure("fuzz.json");
        return 0;
    }
    /* A Functional model's shapes were all inferred while reading: the
     * summary cannot fail on one that loaded, and counting only where a
     * count depends on a shape not known (after a Lambda whose file gives
     * none). A Sequential model (the reader takes those too) loads even
     * when its layers do not fit together or it declares no input shape,
     * so that the designer can show where: counting and the summary
     * either work or fail with a message, as fuzz_model_json checks. */
    int64_t total;
    bool functional = tw_layer_is_functional(model);
    if (tw_model_count_params(model, &total, NULL, NULL)) {
        FUZZ_ASSERT(!functional || strstr(tw_last_error(), "depends on an input shape that is unknown"));
        FUZZ_ASSERT(tw_last_error()[0]);
        tw_error_clear();
    }
    char *summary = tw_model_summary(model, 0);
    FUZZ_ASSERT(summary || (!functional && tw_last_error()[0]));
    tw_error_clear();
    free(summary);
    check_form(model, TW_KERAS_JSON_2);
    check_form(model, TW_KERAS_JSON_3);
    tw_layer_unref(model);
    return 0;
}
