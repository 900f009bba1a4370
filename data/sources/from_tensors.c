/* Slices of in-memory tensors along their first axis. */
#include <stdlib.h>
#include <string.h>

#include "dataset_internal.h"

typedef struct {
    int n;
    tw_tensor *t[TW_ELEMENT_MAX];
    int64_t count;
} slices_state;

typedef struct {
    tw_iterator base;
    const slices_state *state;
    int64_t next_index;
} slices_iterator;

static void slices_finalize(void *p)
{
    slices_state *s = p;
    for (int i = 0; i < s->n; i++)
        tw_tensor_unref(s->t[i]);
    free(s);
}

static int64_t slices_cardinality(const tw_dataset *ds)
{
    return ((const slices_state *)ds->state)->count;
}

/* Row i of t as a view with the first axis dropped. */
static tw_tensor *row_view(tw_tensor *t, int64_t i)
{
    tw_scope_begin();
    tw_tensor *row = tw_tensor_ref(tw_squeeze(tw_slice(t, 0, i, i + 1, 1), TW_AXES(0)));
    tw_scope_end();
    return row;
}

static int slices_next(tw_iterator *it, tw_element *out)
{
    slices_iterator *si = (slices_iterator *)it;
    if (si->next_index >= si->state->count)
        return 0;
    for (int i = 0; i < si->state->n; i++) {
        out->t[i] = row_view(si->state->t[i], si->next_index);
        out->n = i + 1;
        if (!out->t[i]) {
            tw_element_clear(out);
            return -1;
        }
    }
    si->next_index++;
    return 1;
}

static void slices_free(tw_iterator *it)
{
    free(it);
}

static tw_iterator *slices_iter(tw_dataset *ds)
{
    slices_iterator *it = calloc(1, sizeof *it);
    if (!it) {
        tw_error_set("from_tensors: out of memory");
        return NULL;
    }
    tw__iterator_init(&it->base, ds, slices_next, slices_free);
    it->state = ds->state;
    return &it->base;
}

static const tw_dataset_class slices_class = {
    .kind = "from_tensors",
    .iter = slices_iter,
    .cardinality = slices_cardinality,
    .finalize = slices_finalize,
};

tw_dataset *tw_dataset_from_tensors(int n, tw_tensor *const *tensors)
{
    if (n < 1 || n > TW_ELEMENT_MAX) {
        tw_error_set("from_tensors: %d components; 1 to %d are supported", n, TW_ELEMENT_MAX);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        if (!tensors[i]) {
            if (!tw_error_pending())
                tw_error_set("from_tensors: component %d is NULL", i);
            return NULL;
        }
        if (tw_tensor_ndim(tensors[i]) < 1) {
            tw_error_set("from_tensors: component %d is a scalar; slicing needs a first axis", i);
            return NULL;
        }
        if (tw_tensor_dim(tensors[i], 0) != tw_tensor_dim(tensors[0], 0)) {
            char a[160], b[160];
            tw_error_set("from_tensors: component 0 has shape %s but component %d has shape %s; their first "
                         "dimensions must agree",
                         tw_shape_str(tw_tensor_ndim(tensors[0]), tw_tensor_shape(tensors[0]), a, sizeof a), i,
                         tw_shape_str(tw_tensor_ndim(tensors[i]), tw_tensor_shape(tensors[i]), b, sizeof b));
            return NULL;
        }
    }
    slices_state *s = calloc(1, sizeof *s);
    if (!s) {
        tw_error_set("from_tensors: out of memory");
        return NULL;
    }
    s->n = n;
    s->count = tw_tensor_dim(tensors[0], 0);
    /* Input pipelines run on the host (as tf.data's): tensors on a device
     * are copied to the CPU once, here. */
    tw_scope_begin();
    for (int i = 0; i < n; i++)
        s->t[i] = tw_tensor_ref(tw_tensor_device(tensors[i]).kind == TW_DEVICE_CPU ? tensors[i]
                                                                                     : tw_tensor_to(tensors[i], TW_CPU));
    tw_scope_end();
    for (int i = 0; i < n; i++)
        if (!s->t[i]) {
            slices_finalize(s);
            return NULL;
        }
    return tw__dataset_new(&slices_class, NULL, s, "from_tensors(%lld)", (long long)s->count);
}

int tw__dataset_slices(const tw_dataset *ds, tw_tensor *const **tensors)
{
    if (!ds || ds->klass != &slices_class)
        return 0;
    const slices_state *s = ds->state;
    if (tensors)
        *tensors = s->t;
    return s->n;
}
