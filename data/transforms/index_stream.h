/* The batch fast path's view of its input: when a dataset's elements are
 * rows of in-memory tensors (a from_tensors source, or a shuffle of one), a
 * pass over it can be described as a stream of row indices, and batch can
 * gather the rows straight into the batch tensor with memcpy instead of
 * making a view per row and stacking them. The indices come out in exactly
 * the order the elements would (a shuffle draws the same random numbers),
 * so the fast path and the general path yield the same batches.
 *
 * Private to data/transforms (shuffle.c defines it, batch.c uses it). */
#ifndef TW_INDEX_STREAM_H
#define TW_INDEX_STREAM_H

#include <stddef.h>

#include "dataset_internal.h"

/* Where the rows of a from_tensors source live. Row i of component c is
 * row_bytes[c] contiguous bytes at base[c] + i * stride[c]; row0[c] (a view of
 * row 0) keeps the storage alive and gives the row's dtype and shape. */
typedef struct {
    int n;
    int64_t count;
    tw_tensor *row0[TW_ELEMENT_MAX];
    const char *base[TW_ELEMENT_MAX];
    ptrdiff_t stride[TW_ELEMENT_MAX];
    size_t row_bytes[TW_ELEMENT_MAX];
} tw__rows;

typedef struct tw__index_stream tw__index_stream;

/* One pass over ds as row indices, or NULL (and no error) when ds is not a
 * from_tensors source with contiguous rows, nor a shuffle of one. Counts as a
 * pass of ds: a reshuffling shuffle moves on to its next epoch. */
tw__index_stream *tw__index_stream_new(tw_dataset *ds);
const tw__rows *tw__index_stream_rows(const tw__index_stream *s);
/* Up to max next indices into out: how many (0 at the end), or -1 with an
 * error set. */
int64_t tw__index_stream_next(tw__index_stream *s, int64_t *out, int64_t max);
void tw__index_stream_free(tw__index_stream *s);

#endif
