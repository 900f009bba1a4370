/* prefetch: a background thread runs the input's iterator and hands its
 * results to the consumer through a bounded queue of buffer_size entries, so
 * the input's work overlaps the consumer's.
 *
 * The stream is the one the input gives without prefetch, errors included:
 * an entry is an element or an error message (errors are thread-local, so the
 * producer copies tw_last_error() and the consumer sets it again on its own
 * thread). The producer starts when the iterator is made and stops at the end
 * of the input or when the iterator is freed; freeing waits for the element
 * in progress, then joins the thread and releases what was queued. */
#include <glib.h>
#include <pthread.h>
#include <stdlib.h>

#include "dataset_internal.h"

typedef struct {
    int rc; /* 1: an element; -1: an error with its message */
    tw_element e;
    char *message;
} prefetch_entry;

typedef struct {
    tw_iterator base;
    tw_iterator *input; /* used by the producer only, until it is joined */
    GThread *thread;
    /* pthread's rather than GLib's (which are futexes underneath), so that
     * helgrind and ThreadSanitizer see the ordering they give. */
    pthread_mutex_t lock;
    pthread_cond_t not_empty, not_full; /* signalled only when someone waits on them */
    bool consumer_waiting, producer_waiting;
    prefetch_entry *ring;
    int64_t capacity, head, count;
    bool input_done; /* the producer saw the end */
    bool stop;       /* the consumer is gone */
} prefetch_iterator;

static gpointer producer(gpointer data)
{
    prefetch_iterator *pi = data;
    for (;;) {
        pthread_mutex_lock(&pi->lock);
        while (pi->count == pi->capacity && !pi->stop) {
            pi->producer_waiting = true;
            pthread_cond_wait(&pi->not_full, &pi->lock);
        }
        pi->producer_waiting = false;
        bool stop = pi->stop;
        pthread_mutex_unlock(&pi->lock);
        if (stop)
            break;

        prefetch_entry entry = {0};
        entry.rc = tw_iterator_next(pi->input, &entry.e);
        if (entry.rc < 0) {
            entry.message = g_strdup(tw_last_error());
            tw_error_clear();
        }

        pthread_mutex_lock(&pi->lock);
        if (entry.rc == 0)
            pi->input_done = true;
        else if (!pi->stop) {
            pi->ring[(pi->head + pi->count++) % pi->capacity] = entry;
            entry = (prefetch_entry){0};
        }
        if (pi->consumer_waiting)
            pthread_cond_signal(&pi->not_empty);
        stop = pi->stop || pi->input_done;
        pthread_mutex_unlock(&pi->lock);
        tw_element_clear(&entry.e); /* only when it was not queued */
        g_free(entry.message);
        if (stop)
            break;
    }
    return NULL;
}

static int prefetch_next(tw_iterator *it, tw_element *out)
{
    prefetch_iterator *pi = (prefetch_iterator *)it;
    pthread_mutex_lock(&pi->lock);
    while (pi->count == 0 && !pi->input_done) {
        pi->consumer_waiting = true;
        pthread_cond_wait(&pi->not_empty, &pi->lock);
    }
    pi->consumer_waiting = false;
    if (pi->count == 0) {
        pthread_mutex_unlock(&pi->lock);
        return 0;
    }
    prefetch_entry entry = pi->ring[pi->head];
    pi->head = (pi->head + 1) % pi->capacity;
    pi->count--;
    /* Wake a sleeping producer only once the queue is down to half: each
     * wake-up is a system call (12-15 us on these VMs, as much as building a
     * batch), so with a buffer of 8 the consumer pays it every 4th element. */
    if (pi->producer_waiting && pi->count <= pi->capacity / 2)
        pthread_cond_signal(&pi->not_full);
    pthread_mutex_unlock(&pi->lock);
    if (entry.rc < 0) {
        tw_error_set("%s", entry.message);
        g_free(entry.message);
        return -1;
    }
    tw__element_move(out, &entry.e);
    return 1;
}

static void prefetch_free(tw_iterator *it)
{
    prefetch_iterator *pi = (prefetch_iterator *)it;
    if (pi->thread) {
        pthread_mutex_lock(&pi->lock);
        pi->stop = true;
        pthread_cond_signal(&pi->not_full);
        pthread_mutex_unlock(&pi->lock);
        g_thread_join(pi->thread);
    }
    for (int64_t k = 0; k < pi->count; k++) {
        prefetch_entry *entry = &pi->ring[(pi->head + k) % pi->capacity];
        tw_element_clear(&entry->e);
        g_free(entry->message);
    }
    tw_iterator_free(pi->input);
    pthread_mutex_destroy(&pi->lock);
    pthread_cond_destroy(&pi->not_empty);
    pthread_cond_destroy(&pi->not_full);
    free(pi->ring);
    free(pi);
}

static tw_iterator *prefetch_iter(tw_dataset *ds)
{
    int64_t buffer_size = *(const int64_t *)ds->state;
    prefetch_iterator *pi = calloc(1, sizeof *pi);
    if (!pi) {
        tw_error_set("prefetch: out of memory");
        return NULL;
    }
    pthread_mutex_init(&pi->lock, NULL);
    pthread_cond_init(&pi->not_empty, NULL);
    pthread_cond_init(&pi->not_full, NULL);
    pi->capacity = buffer_size;
    pi->ring = calloc((size_t)buffer_size, sizeof *pi->ring);
    if (!pi->ring) {
        tw_error_set("prefetch: out of memory for a buffer of %lld elements", (long long)buffer_size);
        prefetch_free(&pi->base);
        return NULL;
    }
    pi->input = tw_dataset_iter(ds->input);
    if (!pi->input) {
        prefetch_free(&pi->base);
        return NULL;
    }
    GError *error = NULL;
    pi->thread = g_thread_try_new("tw-prefetch", producer, pi, &error);
    if (!pi->thread) {
        tw_error_set("prefetch: cannot start the producer thread: %s", error->message);
        g_error_free(error);
        prefetch_free(&pi->base);
        return NULL;
    }
    tw__iterator_init(&pi->base, ds, prefetch_next, prefetch_free);
    return &pi->base;
}

static int64_t prefetch_cardinality(const tw_dataset *ds)
{
    return tw_dataset_cardinality(ds->input);
}

static void prefetch_finalize(void *state)
{
    free(state);
}

static const tw_dataset_class prefetch_class = {
    .kind = "prefetch",
    .iter = prefetch_iter,
    .cardinality = prefetch_cardinality,
    .finalize = prefetch_finalize,
};

tw_dataset *tw_dataset_prefetch(tw_dataset *ds, int64_t buffer_size)
{
    if (tw__dataset_check("prefetch", ds) < 0)
        return NULL;
    if (buffer_size < 1 || buffer_size > (1 << 20)) {
        tw_error_set("prefetch: buffer_size must be between 1 and %d, got %lld", 1 << 20, (long long)buffer_size);
        tw_dataset_unref(ds);
        return NULL;
    }
    int64_t *s = malloc(sizeof *s);
    if (!s) {
        tw_error_set("prefetch: out of memory");
        tw_dataset_unref(ds);
        return NULL;
    }
    *s = buffer_size;
    return tw__dataset_new(&prefetch_class, ds, s, "prefetch(%lld, %s)", (long long)buffer_size, ds->name);
}
