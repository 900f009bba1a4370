/* The dataset machinery shared by sources and transformations: a dataset is
 * a class (how to iterate, its cardinality, how to free its state) plus its
 * state and, for a transformation, the input it wraps. Not installed. */
#ifndef TW_DATASET_INTERNAL_H
#define TW_DATASET_INTERNAL_H

#include <stdatomic.h>

#include "tw/data.h"

typedef struct {
    const char *kind;
    /* A new iterator (its first field a tw_iterator initialised with
     * tw__iterator_init), or NULL with an error set. */
    tw_iterator *(*iter)(tw_dataset *ds);
    int64_t (*cardinality)(const tw_dataset *ds);
    void (*finalize)(void *state); /* may be NULL */
} tw_dataset_class;

struct tw_dataset {
    const tw_dataset_class *klass;
    atomic_int refcount;
    char *name;
    tw_dataset *input; /* owned; NULL for sources */
    void *state;       /* owned, released by klass->finalize */
};

struct tw_iterator {
    int (*next)(tw_iterator *it, tw_element *out);
    void (*free)(tw_iterator *it); /* frees the whole iterator */
    tw_dataset *ds;                /* a reference, released by tw_iterator_free */
};

/* A dataset that takes over `input` (may be NULL for sources) and `state`.
 * name is printf-style. On failure (NULL input with an error pending, or no
 * memory) it releases input and state and returns NULL. */
tw_dataset *tw__dataset_new(const tw_dataset_class *klass, tw_dataset *input, void *state, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Fill the base of a freshly allocated iterator (takes a reference to ds). */
void tw__iterator_init(tw_iterator *it, tw_dataset *ds, int (*next)(tw_iterator *, tw_element *),
                       void (*free_fn)(tw_iterator *));
/* Fail with "op: the input dataset is NULL" unless an error is pending. */
int tw__dataset_check(const char *op, const tw_dataset *input);
/* The tensors behind a from_tensors source (borrowed; *tensors may be NULL
 * to ask only): how many, or 0 when ds is not such a source. Lets batch
 * gather rows directly instead of stacking per-row views. */
int tw__dataset_slices(const tw_dataset *ds, tw_tensor *const **tensors);
/* Move src's components into dst (dst must be empty). */
void tw__element_move(tw_element *dst, tw_element *src);

#endif
