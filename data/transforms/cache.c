/* cache: the first complete pass is kept in memory; later passes replay it
 * without touching the input. A pass that stops early (its iterator freed
 * before the end) or fails records nothing, so the next pass reads the input
 * again. Passes may run on several threads: the first to finish publishes
 * its recording, which is never changed afterwards. */
#include <pthread.h>
#include <stdlib.h>

#include "dataset_internal.h"

typedef struct {
    pthread_mutex_t lock;
    bool complete;
    tw_element *elements; /* immutable once complete */
    int64_t count;
} cache_state;

typedef struct {
    tw_iterator base;
    /* recording */
    tw_iterator *input;
    tw_element *recorded;
    int64_t count, capacity;
    bool failed;
    /* replaying */
    const cache_state *replay;
    int64_t next_index;
} cache_iterator;

static void clear_elements(tw_element *elements, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        tw_element_clear(&elements[i]);
    free(elements);
}

static int cache_replay_next(cache_iterator *ci, tw_element *out)
{
    if (ci->next_index >= ci->replay->count)
        return 0;
    const tw_element *e = &ci->replay->elements[ci->next_index++];
    out->n = e->n;
    for (int c = 0; c < e->n; c++)
        out->t[c] = tw_tensor_ref(e->t[c]);
    return 1;
}

/* The pass ended: publish the recording unless another pass did first. */
static void cache_publish(cache_iterator *ci)
{
    cache_state *s = ci->base.ds->state;
    pthread_mutex_lock(&s->lock);
    if (!s->complete) {
        s->elements = ci->recorded;
        s->count = ci->count;
        s->complete = true;
        ci->recorded = NULL;
        ci->count = 0;
    }
    pthread_mutex_unlock(&s->lock);
    clear_elements(ci->recorded, ci->count);
    ci->recorded = NULL;
    ci->count = ci->capacity = 0;
}

static int cache_record_next(cache_iterator *ci, tw_element *out)
{
    if (!ci->input)
        return 0;
    int rc = tw_iterator_next(ci->input, out);
    if (rc < 0) {
        ci->failed = true;
        return -1;
    }
    if (rc == 0) {
        tw_iterator_free(ci->input);
        ci->input = NULL;
        if (!ci->failed)
            cache_publish(ci);
        return 0;
    }
    if (ci->failed)
        return 1;
    if (ci->count == ci->capacity) {
        int64_t cap = ci->capacity ? ci->capacity * 2 : 256;
        tw_element *r = realloc(ci->recorded, (size_t)cap * sizeof *r);
        if (!r) {
            ci->failed = true;
            tw_element_clear(out);
            return tw_error_set("cache: out of memory recording %lld elements", (long long)cap);
        }
        ci->recorded = r;
        ci->capacity = cap;
    }
    tw_element *e = &ci->recorded[ci->count++];
    e->n = out->n;
    for (int c = 0; c < out->n; c++)
        e->t[c] = tw_tensor_ref(out->t[c]);
    return 1;
}

static int cache_next(tw_iterator *it, tw_element *out)
{
    cache_iterator *ci = (cache_iterator *)it;
    return ci->replay ? cache_replay_next(ci, out) : cache_record_next(ci, out);
}

static void cache_free(tw_iterator *it)
{
    cache_iterator *ci = (cache_iterator *)it;
    tw_iterator_free(ci->input);
    clear_elements(ci->recorded, ci->count);
    free(ci);
}

static tw_iterator *cache_iter(tw_dataset *ds)
{
    cache_state *s = ds->state;
    cache_iterator *ci = calloc(1, sizeof *ci);
    if (!ci) {
        tw_error_set("cache: out of memory");
        return NULL;
    }
    pthread_mutex_lock(&s->lock);
    if (s->complete)
        ci->replay = s;
    pthread_mutex_unlock(&s->lock);
    if (!ci->replay) {
        ci->input = tw_dataset_iter(ds->input);
        if (!ci->input) {
            free(ci);
            return NULL;
        }
    }
    tw__iterator_init(&ci->base, ds, cache_next, cache_free);
    return &ci->base;
}

static int64_t cache_cardinality(const tw_dataset *ds)
{
    return tw_dataset_cardinality(ds->input);
}

static void cache_finalize(void *state)
{
    cache_state *s = state;
    clear_elements(s->elements, s->count);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static const tw_dataset_class cache_class = {
    .kind = "cache",
    .iter = cache_iter,
    .cardinality = cache_cardinality,
    .finalize = cache_finalize,
};

tw_dataset *tw_dataset_cache(tw_dataset *ds)
{
    if (tw__dataset_check("cache", ds) < 0)
        return NULL;
    cache_state *s = calloc(1, sizeof *s);
    if (!s) {
        tw_error_set("cache: out of memory");
        tw_dataset_unref(ds);
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    return tw__dataset_new(&cache_class, ds, s, "cache(%s)", ds->name);
}
