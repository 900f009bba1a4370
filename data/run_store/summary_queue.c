/* The summary writer's queue (see summary_queue.h for the why). */
#include "summary_queue.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tw/error.h"

#define FIRST_RECORDS 4096
/* A buffer this full wakes the writer thread early; one at MAX_RECORDS
 * makes the producer wait for the next swap (only a producer far faster
 * than the disk ever gets there). */
#define WAKE_RECORDS (1u << 16)
#define MAX_RECORDS (1u << 20)
#define FIRST_TAGS 64

static const char *kind_name(tw_series_kind kind)
{
    static const char *const names[] = {"scalar", "histogram", "text", "graph", "image", "tensor"};
    return names[kind];
}

int tw__queue_init(tw_summary_queue *q)
{
    memset(q, 0, sizeof *q);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->wake, &attr);
    pthread_cond_init(&q->done, NULL);
    pthread_condattr_destroy(&attr);
    q->tags = calloc(FIRST_TAGS, sizeof *q->tags);
    q->tags_cap = FIRST_TAGS;
    q->pending.items = malloc(FIRST_RECORDS * sizeof *q->pending.items);
    q->pending.cap = FIRST_RECORDS;
    if (!q->tags || !q->pending.items) {
        tw__queue_destroy(q);
        return tw_error_set("summary writer: out of memory");
    }
    return 0;
}

void tw__records_clear(tw_record_buffer *b)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->items[i].kind != TW_RECORD_SCALAR) {
            if (b->items[i].kind == TW_RECORD_HPARAMS) {
                tw_hparams_payload *p = b->items[i].payload;
                free(p->hparams_json);
                free(p->metrics_json);
            }
            free(b->items[i].payload);
        }
    b->n = 0;
}

void tw__queue_destroy(tw_summary_queue *q)
{
    tw__records_clear(&q->pending);
    free(q->pending.items);
    for (uint32_t i = 0; i < q->tags_cap && q->tags; i++)
        free(q->tags[i].name);
    free(q->tags);
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->wake);
    pthread_cond_destroy(&q->done);
    memset(q, 0, sizeof *q);
}

/* ---- tags ------------------------------------------------------------------ */
/* FNV-1a: a few cycles per byte, and tags are short. */
static uint64_t hash_tag(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static tw_tag_slot *find_slot(tw_tag_slot *tags, uint32_t cap, uint64_t hash, const char *name)
{
    for (uint32_t i = (uint32_t)hash & (cap - 1);; i = (i + 1) & (cap - 1))
        if (!tags[i].name || (tags[i].hash == hash && !strcmp(tags[i].name, name)))
            return &tags[i];
}

static int grow_tags(tw_summary_queue *q)
{
    uint32_t cap = q->tags_cap * 2;
    tw_tag_slot *tags = calloc(cap, sizeof *tags);
    if (!tags)
        return -1;
    for (uint32_t i = 0; i < q->tags_cap; i++)
        if (q->tags[i].name)
            *find_slot(tags, cap, q->tags[i].hash, q->tags[i].name) = q->tags[i];
    free(q->tags);
    q->tags = tags;
    q->tags_cap = cap;
    return 0;
}

static int append(tw_summary_queue *q, const tw_summary_record *r);

/* The slow path of a tag's first use: copy the name, give it the next id
 * and tell the writer thread (which keeps its own per-id state). */
static tw_tag_slot *add_tag(tw_summary_queue *q, tw_tag_slot *slot, uint64_t hash, const char *name,
                            tw_series_kind kind, bool announce)
{
    if ((q->ntags + 1) * 2 > q->tags_cap) {
        if (grow_tags(q))
            return NULL;
        slot = find_slot(q->tags, q->tags_cap, hash, name);
    }
    char *copy = strdup(name), *announced = announce ? strdup(name) : NULL;
    if (!copy || (announce && !announced)) {
        free(copy);
        free(announced);
        return NULL;
    }
    *slot = (tw_tag_slot){.hash = hash, .name = copy, .id = q->ntags++, .kind = kind};
    tw_summary_record r = {.kind = TW_RECORD_TAG, .tag = slot->id, .step = kind, .payload = announced};
    if (announce && append(q, &r)) {
        free(announced);
        return NULL;
    }
    return slot;
}

/* Called with the lock held. */
static int intern(tw_summary_queue *q, const char *name, tw_series_kind kind, bool announce, uint32_t *id)
{
    uint64_t hash = hash_tag(name);
    tw_tag_slot *slot = find_slot(q->tags, q->tags_cap, hash, name);
    if (!slot->name && !(slot = add_tag(q, slot, hash, name, kind, announce)))
        return tw_error_set("summary writer: out of memory adding tag '%s'", name);
    if (slot->kind != kind)
        return tw_error_set("summary writer: tag '%s' is a %s series; it cannot take a %s", name,
                            kind_name(slot->kind), kind_name(kind));
    *id = slot->id;
    return 0;
}

/* ---- records --------------------------------------------------------------- */
/* Called with the lock held. */
static int append(tw_summary_queue *q, const tw_summary_record *r)
{
    tw_record_buffer *b = &q->pending;
    while (b->n == b->cap && b->cap >= MAX_RECORDS) {
        uint64_t swaps = q->swaps;
        pthread_cond_signal(&q->wake);
        while (q->swaps == swaps)
            pthread_cond_wait(&q->done, &q->lock);
    }
    if (b->n == b->cap) {
        tw_summary_record *items = realloc(b->items, 2 * b->cap * sizeof *items);
        if (!items)
            return tw_error_set("summary writer: out of memory queueing a record");
        b->items = items;
        b->cap *= 2;
    }
    b->items[b->n++] = *r;
    if (b->n == WAKE_RECORDS || (b->n == 1 && q->quiet))
        pthread_cond_signal(&q->wake);
    return 0;
}

int tw__queue_scalar(tw_summary_queue *q, const char *tag, double value, int64_t step, double wall_time)
{
    tw_summary_record r = {.kind = TW_RECORD_SCALAR, .step = step, .wall_time = wall_time, .value = value};
    pthread_mutex_lock(&q->lock);
    int rc = intern(q, tag, TW_SERIES_SCALAR, true, &r.tag);
    if (!rc)
        rc = append(q, &r);
    pthread_mutex_unlock(&q->lock);
    return rc;
}

static tw_series_kind series_of(tw_record_kind kind)
{
    return kind == TW_RECORD_HISTOGRAM ? TW_SERIES_HISTOGRAM
           : kind == TW_RECORD_TEXT    ? TW_SERIES_TEXT
           : kind == TW_RECORD_IMAGE   ? TW_SERIES_IMAGE
           : kind == TW_RECORD_TENSOR  ? TW_SERIES_TENSOR
                                       : TW_SERIES_GRAPH;
}

int tw__queue_push(tw_summary_queue *q, tw_record_kind kind, const char *tag, int64_t step, double wall_time,
                   void *payload)
{
    tw_summary_record r = {.kind = kind, .step = step, .wall_time = wall_time, .payload = payload};
    pthread_mutex_lock(&q->lock);
    int rc = tag ? intern(q, tag, series_of(kind), true, &r.tag) : 0;
    if (!rc)
        rc = append(q, &r);
    pthread_mutex_unlock(&q->lock);
    if (rc) {
        tw_record_buffer one = {.items = &r, .n = 1};
        tw__records_clear(&one);
    }
    return rc;
}

int tw__queue_declare_tag(tw_summary_queue *q, const char *tag, tw_series_kind kind)
{
    uint32_t id;
    pthread_mutex_lock(&q->lock);
    int rc = intern(q, tag, kind, true, &id);
    pthread_mutex_unlock(&q->lock);
    return rc;
}

/* ---- the two threads meeting ----------------------------------------------- */
void tw__queue_take(tw_summary_queue *q, int timeout_ms, tw_record_buffer *mine, uint64_t *flush_seq,
                    bool *stopping)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += (long)timeout_ms * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&q->lock);
    while (!q->stopping && q->flush_requested == q->flush_done && q->pending.n < WAKE_RECORDS &&
           !(q->quiet && q->pending.n > 0) && pthread_cond_timedwait(&q->wake, &q->lock, &until) != ETIMEDOUT)
        ;
    q->quiet = q->pending.n == 0;
    tw_record_buffer taken = q->pending;
    mine->n = 0;
    q->pending = *mine;
    *mine = taken;
    q->swaps++;
    *flush_seq = q->flush_requested;
    *stopping = q->stopping;
    pthread_cond_broadcast(&q->done); /* a producer waiting for room */
    pthread_mutex_unlock(&q->lock);
}

void tw__queue_mark_done(tw_summary_queue *q, uint64_t flush_seq)
{
    pthread_mutex_lock(&q->lock);
    if (flush_seq > q->flush_done)
        q->flush_done = flush_seq;
    pthread_cond_broadcast(&q->done);
    pthread_mutex_unlock(&q->lock);
}

void tw__queue_flush(tw_summary_queue *q, bool stop)
{
    pthread_mutex_lock(&q->lock);
    uint64_t seq = ++q->flush_requested;
    q->stopping |= stop;
    pthread_cond_signal(&q->wake);
    while (q->flush_done < seq)
        pthread_cond_wait(&q->done, &q->lock);
    pthread_mutex_unlock(&q->lock);
}
