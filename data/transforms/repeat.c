/* repeat: the input's passes one after another, count times (count < 0:
 * forever). Each pass is a new iterator of the input, so a reshuffling
 * shuffle underneath gives each pass its own order. A pass that yields
 * nothing ends the repetition (an empty input repeated forever is empty,
 * not a hang), as in tf.data. */
#include <stdlib.h>

#include "dataset_internal.h"

typedef struct {
    tw_iterator base;
    tw_iterator *input;
    int64_t count;       /* passes to make; < 0 forever */
    int64_t pass;        /* passes started */
    bool pass_yielded;   /* whether the current pass gave an element */
} repeat_iterator;

static int repeat_next(tw_iterator *it, tw_element *out)
{
    repeat_iterator *ri = (repeat_iterator *)it;
    for (;;) {
        if (!ri->input) {
            if (ri->count >= 0 && ri->pass >= ri->count)
                return 0;
            ri->input = tw_dataset_iter(it->ds->input);
            if (!ri->input)
                return -1;
            ri->pass++;
            ri->pass_yielded = false;
        }
        int rc = tw_iterator_next(ri->input, out);
        if (rc != 0) {
            if (rc > 0)
                ri->pass_yielded = true;
            return rc;
        }
        tw_iterator_free(ri->input);
        ri->input = NULL;
        if (!ri->pass_yielded) {
            ri->count = 0; /* an empty pass: the rest would be empty too */
            ri->pass = 0;
            return 0;
        }
    }
}

static void repeat_free(tw_iterator *it)
{
    repeat_iterator *ri = (repeat_iterator *)it;
    tw_iterator_free(ri->input);
    free(ri);
}

static tw_iterator *repeat_iter(tw_dataset *ds)
{
    repeat_iterator *ri = calloc(1, sizeof *ri);
    if (!ri) {
        tw_error_set("repeat: out of memory");
        return NULL;
    }
    ri->count = *(const int64_t *)ds->state;
    tw__iterator_init(&ri->base, ds, repeat_next, repeat_free);
    return &ri->base;
}

/* tf.data's rule. */
static int64_t repeat_cardinality(const tw_dataset *ds)
{
    int64_t count = *(const int64_t *)ds->state;
    int64_t n = tw_dataset_cardinality(ds->input);
    if (count < 0)
        return n == 0 ? 0 : TW_INFINITE_CARDINALITY;
    if (count == 0)
        return 0;
    if (n < 0)
        return n;
    if (n > INT64_MAX / count)
        return TW_INFINITE_CARDINALITY;
    return n * count;
}

static void repeat_finalize(void *state)
{
    free(state);
}

static const tw_dataset_class repeat_class = {
    .kind = "repeat",
    .iter = repeat_iter,
    .cardinality = repeat_cardinality,
    .finalize = repeat_finalize,
};

tw_dataset *tw_dataset_repeat(tw_dataset *ds, int64_t count)
{
    if (tw__dataset_check("repeat", ds) < 0)
        return NULL;
    int64_t *s = malloc(sizeof *s);
    if (!s) {
        tw_error_set("repeat: out of memory");
        tw_dataset_unref(ds);
        return NULL;
    }
    *s = count < 0 ? -1 : count;
    if (count < 0)
        return tw__dataset_new(&repeat_class, ds, s, "repeat(forever, %s)", ds->name);
    return tw__dataset_new(&repeat_class, ds, s, "repeat(%lld, %s)", (long long)count, ds->name);
}
