/* take: at most the first count elements (count < 0: all of them).
 * skip: all but the first count elements (count < 0: none of them).
 * Cardinalities follow tf.data's rules, infinite and unknown inputs included. */
#include <stdlib.h>

#include "dataset_internal.h"

typedef struct {
    tw_iterator base;
    tw_iterator *input;
    int64_t remaining; /* take: elements still to give (< 0: all); skip: still to drop */
} count_iterator;

static int take_next(tw_iterator *it, tw_element *out)
{
    count_iterator *ci = (count_iterator *)it;
    if (ci->remaining == 0)
        return 0;
    int rc = tw_iterator_next(ci->input, out);
    if (rc > 0 && ci->remaining > 0)
        ci->remaining--;
    if (rc == 0)
        ci->remaining = 0;
    return rc;
}

static int skip_next(tw_iterator *it, tw_element *out)
{
    count_iterator *ci = (count_iterator *)it;
    while (ci->remaining != 0) {
        tw_element dropped;
        int rc = tw_iterator_next(ci->input, &dropped);
        if (rc <= 0)
            return rc;
        tw_element_clear(&dropped);
        if (ci->remaining > 0)
            ci->remaining--;
    }
    return tw_iterator_next(ci->input, out);
}

static void count_free(tw_iterator *it)
{
    count_iterator *ci = (count_iterator *)it;
    tw_iterator_free(ci->input);
    free(ci);
}

static tw_iterator *count_iter(tw_dataset *ds, int (*next)(tw_iterator *, tw_element *))
{
    count_iterator *ci = calloc(1, sizeof *ci);
    if (!ci) {
        tw_error_set("%s: out of memory", ds->klass->kind);
        return NULL;
    }
    ci->remaining = *(const int64_t *)ds->state;
    ci->input = tw_dataset_iter(ds->input);
    if (!ci->input) {
        free(ci);
        return NULL;
    }
    tw__iterator_init(&ci->base, ds, next, count_free);
    return &ci->base;
}

static tw_iterator *take_iter(tw_dataset *ds)
{
    return count_iter(ds, take_next);
}

static tw_iterator *skip_iter(tw_dataset *ds)
{
    return count_iter(ds, skip_next);
}

static int64_t take_cardinality(const tw_dataset *ds)
{
    int64_t count = *(const int64_t *)ds->state;
    int64_t n = tw_dataset_cardinality(ds->input);
    if (n == TW_UNKNOWN_CARDINALITY)
        return count == 0 ? 0 : TW_UNKNOWN_CARDINALITY;
    if (n == TW_INFINITE_CARDINALITY)
        return count < 0 ? TW_INFINITE_CARDINALITY : count;
    if (count < 0)
        return n;
    return count < n ? count : n;
}

static int64_t skip_cardinality(const tw_dataset *ds)
{
    int64_t count = *(const int64_t *)ds->state;
    int64_t n = tw_dataset_cardinality(ds->input);
    if (n < 0)
        return n;
    if (count < 0)
        return 0;
    return count < n ? n - count : 0;
}

static void count_finalize(void *state)
{
    free(state);
}

static const tw_dataset_class take_class = {
    .kind = "take",
    .iter = take_iter,
    .cardinality = take_cardinality,
    .finalize = count_finalize,
};

static const tw_dataset_class skip_class = {
    .kind = "skip",
    .iter = skip_iter,
    .cardinality = skip_cardinality,
    .finalize = count_finalize,
};

static tw_dataset *count_dataset(const tw_dataset_class *klass, tw_dataset *ds, int64_t count)
{
    if (tw__dataset_check(klass->kind, ds) < 0)
        return NULL;
    int64_t *s = malloc(sizeof *s);
    if (!s) {
        tw_error_set("%s: out of memory", klass->kind);
        tw_dataset_unref(ds);
        return NULL;
    }
    *s = count < 0 ? -1 : count;
    if (count < 0)
        return tw__dataset_new(klass, ds, s, "%s(all, %s)", klass->kind, ds->name);
    return tw__dataset_new(klass, ds, s, "%s(%lld, %s)", klass->kind, (long long)count, ds->name);
}

tw_dataset *tw_dataset_take(tw_dataset *ds, int64_t count)
{
    return count_dataset(&take_class, ds, count);
}

tw_dataset *tw_dataset_skip(tw_dataset *ds, int64_t count)
{
    return count_dataset(&skip_class, ds, count);
}
