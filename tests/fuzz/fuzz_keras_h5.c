/* libFuzzer target for Keras 2 .h5 files (libhdf5 from a file image in
 * memory): opening the bytes as a model, taking their model_config and
 * listing every dataset each succeed or fail with a message naming the
 * input, never a crash or an HDF5 error stack on stderr. A model that
 * opens with weights is built, and writing it back as .h5 opens again to
 * the same JSON. Built into build-fuzz/tests/fuzz/fuzz_keras_h5 (make fuzz)
 * and, renamed, into the fuzz_replay test that runs
 * tests/fuzz/corpus/keras_h5/. */
#include "fuzz_check.h"
#include "keras_archive.h"
#include "tw/model_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bool had_weights;
    tw_model *model = tw__model_open_bytes(data, size, "fuzz.h5", &had_weights);
    if (!model)
        fuzz_check_failure("fuzz.h5");
    FUZZ_ASSERT(!model || !had_weights || tw_layer_built(model));
    size_t length;
    char *config = tw__model_config_bytes(data, size, "fuzz.h5", &length);
    if (!config)
        fuzz_check_failure("fuzz.h5");
    FUZZ_ASSERT(!model || config);
    free(config);
    tw_weight_list list;
    if (tw__model_weights_bytes(data, size, "fuzz.h5", &list))
        fuzz_check_failure("fuzz.h5");
    tw_weight_list_clear(&list);
    if (model && had_weights) {
        char *json = tw_model_to_json(model);
        size_t written = 0;
        uint8_t *bytes = tw__keras2_h5_bytes(model, json, "again.h5", &written);
        FUZZ_ASSERT(bytes);
        tw_model *again = tw__model_open_bytes(bytes, written, "again.h5", &had_weights);
        FUZZ_ASSERT(again && had_weights);
        char *json2 = tw_model_to_json(again);
        FUZZ_ASSERT(!strcmp(json, json2));
        free(json2);
        tw_layer_unref(again);
        free(bytes);
        free(json);
    }
    tw_layer_unref(model);
    return 0;
}
