/* split: Keras' validation_split. With n elements, the first
 * floor(n * (1 - fraction)) are the training part (take) and the rest the
 * validation part (skip); both read the same input. Only a dataset of known,
 * finite cardinality can be split. */
#include <math.h>

#include "dataset_internal.h"

static const char *cardinality_words(int64_t n)
{
    return n == TW_INFINITE_CARDINALITY ? "infinite" : "unknown";
}

int tw_dataset_split(tw_dataset *ds, double validation_fraction, tw_dataset **train, tw_dataset **validation)
{
    if (train)
        *train = NULL;
    if (validation)
        *validation = NULL;
    if (tw__dataset_check("split", ds) < 0)
        return -1;
    if (!train || !validation) {
        tw_dataset_unref(ds);
        return tw_error_set("split: the train and validation results must not be NULL");
    }
    if (!(validation_fraction > 0.0 && validation_fraction < 1.0)) {
        tw_dataset_unref(ds);
        return tw_error_set("split: validation_fraction must be between 0 and 1 (exclusive), got %g",
                            validation_fraction);
    }
    int64_t n = tw_dataset_cardinality(ds);
    if (n < 0) {
        int rc = tw_error_set("split: %s has %s cardinality; a validation split needs a finite dataset of known size",
                              tw_dataset_name(ds), cardinality_words(n));
        tw_dataset_unref(ds);
        return rc;
    }
    int64_t split_at = (int64_t)floor((double)n * (1.0 - validation_fraction));
    tw_dataset *t = tw_dataset_take(tw_dataset_ref(ds), split_at);
    tw_dataset *v = tw_dataset_skip(ds, split_at);
    if (!t || !v) {
        tw_dataset_unref(t);
        tw_dataset_unref(v);
        return -1;
    }
    *train = t;
    *validation = v;
    return 0;
}
