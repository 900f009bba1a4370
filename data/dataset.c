/* Datasets and iterators: reference counting, naming, the iteration loop. */
#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "dataset_internal.h"

void tw_element_clear(tw_element *e)
{
    if (!e)
        return;
    for (int i = 0; i < e->n && i < TW_ELEMENT_MAX; i++) {
        tw_tensor_unref(e->t[i]);
        e->t[i] = NULL;
    }
    e->n = 0;
}

void tw__element_move(tw_element *dst, tw_element *src)
{
    *dst = *src;
    src->n = 0;
}

int tw__dataset_check(const char *op, const tw_dataset *input)
{
    if (input)
        return 0;
    if (!tw_error_pending())
        tw_error_set("%s: the input dataset is NULL", op);
    return -1;
}

tw_dataset *tw__dataset_new(const tw_dataset_class *klass, tw_dataset *input, void *state, const char *fmt, ...)
{
    tw_dataset *ds = calloc(1, sizeof *ds);
    if (!ds) {
        tw_error_set("%s: out of memory", klass->kind);
        tw_dataset_unref(input);
        if (klass->finalize && state)
            klass->finalize(state);
        return NULL;
    }
    va_list ap;
    va_start(ap, fmt);
    ds->name = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    ds->klass = klass;
    atomic_init(&ds->refcount, 1);
    ds->input = input;
    ds->state = state;
    return ds;
}

tw_dataset *tw_dataset_ref(tw_dataset *ds)
{
    if (ds)
        atomic_fetch_add(&ds->refcount, 1);
    return ds;
}

void tw_dataset_unref(tw_dataset *ds)
{
    if (!ds || atomic_fetch_sub(&ds->refcount, 1) != 1)
        return;
    if (ds->klass->finalize && ds->state)
        ds->klass->finalize(ds->state);
    tw_dataset_unref(ds->input);
    g_free(ds->name);
    free(ds);
}

int64_t tw_dataset_cardinality(const tw_dataset *ds)
{
    return ds ? ds->klass->cardinality(ds) : TW_UNKNOWN_CARDINALITY;
}

const char *tw_dataset_name(const tw_dataset *ds)
{
    return ds ? ds->name : "(null)";
}

void tw__iterator_init(tw_iterator *it, tw_dataset *ds, int (*next)(tw_iterator *, tw_element *),
                       void (*free_fn)(tw_iterator *))
{
    it->next = next;
    it->free = free_fn;
    it->ds = tw_dataset_ref(ds);
}

tw_iterator *tw_dataset_iter(tw_dataset *ds)
{
    if (tw__dataset_check("iter", ds) < 0)
        return NULL;
    return ds->klass->iter(ds);
}

int tw_iterator_next(tw_iterator *it, tw_element *out)
{
    out->n = 0;
    if (!it)
        return tw_error_set("iterator_next: the iterator is NULL");
    return it->next(it, out);
}

void tw_iterator_free(tw_iterator *it)
{
    if (!it)
        return;
    tw_dataset *ds = it->ds;
    it->free(it);
    tw_dataset_unref(ds);
}
