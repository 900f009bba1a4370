/* shuffle: tf.data's buffer algorithm. Fill a buffer with up to buffer_size
 * elements, emit one from a uniformly random slot, move the last element into
 * that slot, refill from the input. A buffer at least as large as the input is
 * a uniform random permutation of the whole pass.
 *
 * Randomness: a tw_rng (Philox) per pass, seeded from (seed, epoch), where
 * epoch counts the passes over this dataset when reshuffling each iteration
 * and is always 0 otherwise. Slots are drawn from uniform float64 numbers in
 * chunks, so a pass is a pure function of (seed, epoch, input).
 *
 * Also here: the row-index streams of index_stream.h (from_tensors, or a
 * shuffle of it), which draw the same numbers as the element path. */
#include <stdlib.h>
#include <string.h>

#include "index_stream.h"

typedef struct {
    int64_t buffer_size;
    uint64_t seed;
    bool reshuffle_each_iteration;
    atomic_int_fast64_t epochs; /* passes started, when reshuffling */
} shuffle_state;

/* ---- random slots -------------------------------------------------------- */
#define DRAW_CHUNK 1024

typedef struct {
    tw_rng *rng;
    double u[DRAW_CHUNK];
    int pos, len;
} slot_picker;

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The picker of the next pass over the shuffle dataset ds. */
static int picker_init(slot_picker *p, tw_dataset *ds)
{
    shuffle_state *s = ds->state;
    int64_t epoch = s->reshuffle_each_iteration ? atomic_fetch_add(&s->epochs, 1) : 0;
    p->rng = tw_rng_new(mix64(s->seed ^ mix64((uint64_t)epoch)));
    p->pos = p->len = 0;
    return p->rng ? 0 : -1;
}

static void picker_clear(slot_picker *p)
{
    tw_rng_free(p->rng);
    p->rng = NULL;
}

/* A uniformly random slot in [0, count), count >= 1. */
static inline int pick_slot(slot_picker *p, int64_t count, int64_t *slot)
{
    if (p->pos == p->len) {
        tw_scope_begin();
        tw_tensor *u = tw_random_uniform(p->rng, TW_FLOAT64, TW_SHAPE(DRAW_CHUNK), 0.0, 1.0);
        int rc = u ? tw_tensor_copy_to(u, p->u, sizeof p->u) : -1;
        tw_scope_end();
        if (rc < 0)
            return -1;
        p->pos = 0;
        p->len = DRAW_CHUNK;
    }
    int64_t k = (int64_t)(p->u[p->pos++] * (double)count);
    *slot = k < count ? k : count - 1;
    return 0;
}

/* ---- the element path ----------------------------------------------------- */
typedef struct {
    tw_iterator base;
    tw_iterator *input;
    bool input_done;
    int64_t buffer_size;
    tw_element *buffer;
    int64_t count, capacity;
    slot_picker picker;
} shuffle_iterator;

static int shuffle_fill(shuffle_iterator *si)
{
    while (!si->input_done && si->count < si->buffer_size) {
        if (si->count == si->capacity) {
            int64_t cap = si->capacity ? si->capacity * 2 : 64;
            if (cap > si->buffer_size)
                cap = si->buffer_size;
            tw_element *b = realloc(si->buffer, (size_t)cap * sizeof *b);
            if (!b)
                return tw_error_set("shuffle: out of memory for a buffer of %lld elements", (long long)cap);
            si->buffer = b;
            si->capacity = cap;
        }
        tw_element e;
        int rc = tw_iterator_next(si->input, &e);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            si->input_done = true;
            break;
        }
        tw__element_move(&si->buffer[si->count++], &e);
    }
    return 0;
}

static int shuffle_next(tw_iterator *it, tw_element *out)
{
    shuffle_iterator *si = (shuffle_iterator *)it;
    if (shuffle_fill(si) < 0)
        return -1;
    if (si->count == 0)
        return 0;
    int64_t slot;
    if (pick_slot(&si->picker, si->count, &slot) < 0)
        return -1;
    tw__element_move(out, &si->buffer[slot]);
    si->count--;
    if (slot != si->count)
        tw__element_move(&si->buffer[slot], &si->buffer[si->count]);
    return 1;
}

static void shuffle_free(tw_iterator *it)
{
    shuffle_iterator *si = (shuffle_iterator *)it;
    for (int64_t i = 0; i < si->count; i++)
        tw_element_clear(&si->buffer[i]);
    free(si->buffer);
    tw_iterator_free(si->input);
    picker_clear(&si->picker);
    free(si);
}

static tw_iterator *shuffle_iter(tw_dataset *ds)
{
    shuffle_iterator *si = calloc(1, sizeof *si);
    if (!si) {
        tw_error_set("shuffle: out of memory");
        return NULL;
    }
    si->buffer_size = ((shuffle_state *)ds->state)->buffer_size;
    si->input = tw_dataset_iter(ds->input);
    if (!si->input || picker_init(&si->picker, ds) < 0) {
        tw_iterator_free(si->input);
        free(si);
        return NULL;
    }
    tw__iterator_init(&si->base, ds, shuffle_next, shuffle_free);
    return &si->base;
}

static int64_t shuffle_cardinality(const tw_dataset *ds)
{
    return tw_dataset_cardinality(ds->input);
}

static void shuffle_finalize(void *state)
{
    free(state);
}

static const tw_dataset_class shuffle_class = {
    .kind = "shuffle",
    .iter = shuffle_iter,
    .cardinality = shuffle_cardinality,
    .finalize = shuffle_finalize,
};

tw_dataset *tw_dataset_shuffle(tw_dataset *ds, int64_t buffer_size, uint64_t seed, bool reshuffle_each_iteration)
{
    if (tw__dataset_check("shuffle", ds) < 0)
        return NULL;
    if (buffer_size < 1) {
        tw_error_set("shuffle: buffer_size must be at least 1, got %lld", (long long)buffer_size);
        tw_dataset_unref(ds);
        return NULL;
    }
    shuffle_state *s = calloc(1, sizeof *s);
    if (!s) {
        tw_error_set("shuffle: out of memory");
        tw_dataset_unref(ds);
        return NULL;
    }
    s->buffer_size = buffer_size;
    s->seed = seed;
    s->reshuffle_each_iteration = reshuffle_each_iteration;
    atomic_init(&s->epochs, 0);
    return tw__dataset_new(&shuffle_class, ds, s, "shuffle(%lld, %s)", (long long)buffer_size, ds->name);
}

/* ---- row-index streams ---------------------------------------------------- */
struct tw__index_stream {
    tw__rows rows;
    int64_t next_row;
    bool shuffled;
    int64_t buffer_size;
    int64_t *buffer;
    int64_t count;
    slot_picker picker;
};

static void rows_clear(tw__rows *r)
{
    for (int c = 0; c < r->n; c++)
        tw_tensor_unref(r->row0[c]);
    r->n = 0;
}

/* Where the rows of a from_tensors source live: row i of component c starts
 * at row 0 plus i times the first axis' stride; each row must be dense. */
static bool rows_of(tw_dataset *ds, tw__rows *r)
{
    memset(r, 0, sizeof *r);
    tw_tensor *const *tensors;
    int n = tw__dataset_slices(ds, &tensors);
    int64_t count = tw_dataset_cardinality(ds);
    if (n == 0 || count < 1)
        return false;
    bool ok = true;
    for (int c = 0; ok && c < n; c++) {
        tw_tensor *t = tensors[c];
        tw_scope_begin();
        tw_tensor *row0 = tw_squeeze(tw_slice(t, 0, 0, 1, 1), TW_AXES(0));
        ok = row0 && tw_tensor_device(t).kind == TW_DEVICE_CPU && tw_tensor_is_contiguous(row0);
        if (ok) {
            size_t itemsize = tw_dtype_size(tw_tensor_dtype(t));
            r->row0[c] = tw_tensor_ref(row0);
            r->base[c] = tw_tensor_data(row0);
            r->row_bytes[c] = (size_t)tw_tensor_numel(row0) * itemsize;
            r->stride[c] = (ptrdiff_t)(tw_tensor_strides(t)[0] * (int64_t)itemsize);
            r->n = c + 1;
        }
        tw_scope_end();
    }
    r->count = count;
    if (!ok)
        rows_clear(r);
    return ok;
}

tw__index_stream *tw__index_stream_new(tw_dataset *ds)
{
    if (!ds)
        return NULL;
    bool shuffled = ds->klass == &shuffle_class;
    tw__rows rows;
    if (!rows_of(shuffled ? ds->input : ds, &rows))
        return NULL;
    tw__index_stream *s = calloc(1, sizeof *s);
    if (!s) {
        rows_clear(&rows);
        return NULL;
    }
    s->rows = rows;
    s->shuffled = shuffled;
    if (shuffled) {
        int64_t size = ((shuffle_state *)ds->state)->buffer_size;
        s->buffer_size = size < rows.count ? size : rows.count;
        s->buffer = malloc((size_t)s->buffer_size * sizeof *s->buffer);
        if (!s->buffer || picker_init(&s->picker, ds) < 0) {
            tw__index_stream_free(s);
            return NULL;
        }
    }
    return s;
}

const tw__rows *tw__index_stream_rows(const tw__index_stream *s)
{
    return &s->rows;
}

int64_t tw__index_stream_next(tw__index_stream *s, int64_t *out, int64_t max)
{
    int64_t k = 0;
    if (!s->shuffled) {
        while (k < max && s->next_row < s->rows.count)
            out[k++] = s->next_row++;
        return k;
    }
    /* The element path's steps, on row numbers. */
    while (k < max) {
        while (s->count < s->buffer_size && s->next_row < s->rows.count)
            s->buffer[s->count++] = s->next_row++;
        if (s->count == 0)
            break;
        int64_t slot;
        if (pick_slot(&s->picker, s->count, &slot) < 0)
            return -1;
        out[k++] = s->buffer[slot];
        s->buffer[slot] = s->buffer[--s->count];
    }
    return k;
}

void tw__index_stream_free(tw__index_stream *s)
{
    if (!s)
        return;
    rows_clear(&s->rows);
    free(s->buffer);
    picker_clear(&s->picker);
    free(s);
}
