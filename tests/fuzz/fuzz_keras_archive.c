/* libFuzzer target for .keras archives (libzip from memory, then
 * config.json through the JSON reader and model.weights.h5 through
 * libhdf5): opening the bytes as a model, taking their config text and
 * listing their weights each succeed or fail with a message naming the
 * input. A model that opens with weights is built, and writing it back as
 * a .keras opens again to the same JSON. Built into
 * build-fuzz/tests/fuzz/fuzz_keras_archive (make fuzz) and, renamed, into
 * the fuzz_replay test that runs tests/fuzz/corpus/keras_archive/. */
#include "fuzz_check.h"
#include "keras_archive.h"
#include "tw/model_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bool had_weights;
    tw_model *model = tw__model_open_bytes(data, size, "fuzz.keras", &had_weights);
    if (!model)
        fuzz_check_failure("fuzz.keras");
    FUZZ_ASSERT(!model || !had_weights || tw_layer_built(model));
    size_t length;
    char *config = tw__model_config_bytes(data, size, "fuzz.keras", &length);
    if (!config)
        fuzz_check_failure("fuzz.keras");
    FUZZ_ASSERT(!model || config); /* a model came from a config */
    free(config);
    tw_weight_list list;
    if (tw__model_weights_bytes(data, size, "fuzz.keras", &list))
        fuzz_check_failure("fuzz.keras");
    tw_weight_list_clear(&list);
    if (model && had_weights) {
        char *json = tw_model_to_json(model);
        size_t written = 0;
        uint8_t *weights = tw__keras3_weights_bytes(model, "again.keras", &written);
        FUZZ_ASSERT(weights);
        uint8_t *archive = tw__keras_archive_bytes("{}", json, weights, written, "again.keras", &written);
        FUZZ_ASSERT(archive);
        tw_model *again = tw__model_open_bytes(archive, written, "again.keras", &had_weights);
        FUZZ_ASSERT(again && had_weights);
        char *json2 = tw_model_to_json(again);
        FUZZ_ASSERT(!strcmp(json, json2));
        free(json2);
        tw_layer_unref(again);
        free(archive);
        free(weights);
        free(json);
    }
    tw_layer_unref(model);
    return 0;
}
