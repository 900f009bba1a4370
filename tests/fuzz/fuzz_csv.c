/* libFuzzer target for the CSV parser: tw_csv_parse on the fuzzer's bytes
 * three ways: without labels, with the label column "label", and with it
 * one-hot over 3 classes. Built into build-fuzz/tests/fuzz/fuzz_csv (make
 * fuzz) and, renamed, into the fuzz_replay test that runs
 * tests/fuzz/corpus/csv/ on every build. */
#include "fuzz_check.h"
#include "tw/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const tw_csv_options options[3] = {{NULL, 0}, {"label", 0}, {"label", 3}};
    for (int i = 0; i < 3; i++) {
        tw_tensor *features = NULL, *labels = NULL;
        int rc = tw_csv_parse((const char *)data, size, "fuzz.csv", &options[i], &features, &labels);
        if (rc < 0) {
            FUZZ_ASSERT(!features && !labels);
            fuzz_check_failure("fuzz.csv");
            continue;
        }
        FUZZ_ASSERT(rc == 0 && features && tw_tensor_ndim(features) == 2);
        FUZZ_ASSERT(tw_tensor_dtype(features) == TW_FLOAT32);
        /* Every cell took at least one byte of the input. */
        FUZZ_ASSERT((size_t)tw_tensor_numel(features) <= size);
        if (options[i].label_column) {
            FUZZ_ASSERT(labels && tw_tensor_dim(labels, 0) == tw_tensor_dim(features, 0));
            FUZZ_ASSERT(options[i].one_hot_classes ? tw_tensor_dim(labels, 1) == 3 : tw_tensor_ndim(labels) == 1);
        } else {
            FUZZ_ASSERT(!labels);
        }
        tw_tensor_unref(features);
        tw_tensor_unref(labels);
    }
    return 0;
}
