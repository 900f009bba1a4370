/* map: apply a C function to every element.
 *
 * The function gets the input element (borrowed) and an empty output element;
 * it puts new references in out (open its own tw_scope and tw_tensor_ref what
 * it keeps, so that it works whether or not the caller has a scope open) and
 * returns 0, or -1 with an error set, which the iterator passes on. */
#include <stdlib.h>

#include "dataset_internal.h"

typedef struct {
    tw_map_fn fn;
    void *user_data;
    void (*destroy)(void *);
} map_state;

typedef struct {
    tw_iterator base;
    tw_iterator *input;
    int64_t position;
} map_iterator;

static int map_next(tw_iterator *it, tw_element *out)
{
    map_iterator *mi = (map_iterator *)it;
    const map_state *s = it->ds->state;
    tw_element in;
    int rc = tw_iterator_next(mi->input, &in);
    if (rc <= 0)
        return rc;
    int64_t position = mi->position++;
    rc = s->fn(&in, out, s->user_data);
    tw_element_clear(&in);
    if (rc < 0) {
        tw_element_clear(out);
        if (!tw_error_pending())
            tw_error_set("map: the function failed on element %lld", (long long)position);
        return -1;
    }
    if (out->n < 1 || out->n > TW_ELEMENT_MAX) {
        int n = out->n;
        tw_element_clear(out);
        return tw_error_set("map: the function returned %d components for element %lld; 1 to %d are supported", n,
                            (long long)position, TW_ELEMENT_MAX);
    }
    for (int c = 0; c < out->n; c++) {
        if (!out->t[c]) {
            tw_element_clear(out);
            return tw_error_set("map: the function returned a NULL component %d for element %lld", c,
                                (long long)position);
        }
    }
    return 1;
}

static void map_free(tw_iterator *it)
{
    map_iterator *mi = (map_iterator *)it;
    tw_iterator_free(mi->input);
    free(mi);
}

static tw_iterator *map_iter(tw_dataset *ds)
{
    map_iterator *mi = calloc(1, sizeof *mi);
    if (!mi) {
        tw_error_set("map: out of memory");
        return NULL;
    }
    mi->input = tw_dataset_iter(ds->input);
    if (!mi->input) {
        free(mi);
        return NULL;
    }
    tw__iterator_init(&mi->base, ds, map_next, map_free);
    return &mi->base;
}

static int64_t map_cardinality(const tw_dataset *ds)
{
    return tw_dataset_cardinality(ds->input);
}

static void map_finalize(void *state)
{
    map_state *s = state;
    if (s->destroy)
        s->destroy(s->user_data);
    free(s);
}

static const tw_dataset_class map_class = {
    .kind = "map",
    .iter = map_iter,
    .cardinality = map_cardinality,
    .finalize = map_finalize,
};

tw_dataset *tw_dataset_map(tw_dataset *ds, tw_map_fn fn, void *user_data, void (*destroy)(void *))
{
    if (tw__dataset_check("map", ds) < 0 || !fn) {
        if (ds && !fn)
            tw_error_set("map: the function is NULL");
        tw_dataset_unref(ds);
        if (destroy)
            destroy(user_data);
        return NULL;
    }
    map_state *s = malloc(sizeof *s);
    if (!s) {
        tw_error_set("map: out of memory");
        tw_dataset_unref(ds);
        if (destroy)
            destroy(user_data);
        return NULL;
    }
    s->fn = fn;
    s->user_data = user_data;
    s->destroy = destroy;
    return tw__dataset_new(&map_class, ds, s, "map(%s)", ds->name);
}
