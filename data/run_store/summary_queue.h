/* The summary writer's queue: the training thread appends fixed-size
 * records, the writer thread takes them all at once at each wake.
 *
 * Cost on the training thread is what matters (a scalar call must stay well
 * under a microsecond): one uncontended mutex, a tag lookup in a small
 * open-addressing table keyed by the tag's hash, and a 32-byte copy into a
 * buffer that grows by doubling, so there is no malloc and no system call
 * per record. The writer thread swaps in its own (emptied) buffer, so each
 * side reuses its memory. The first use of a tag takes the slow path: it
 * copies the name and enqueues a TW_RECORD_TAG record announcing the id.
 */
#ifndef TW_SUMMARY_QUEUE_H
#define TW_SUMMARY_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tw/run_store.h"

typedef enum {
    TW_RECORD_SCALAR,    /* value */
    TW_RECORD_HISTOGRAM, /* payload: tw_histogram_stats */
    TW_RECORD_TEXT,      /* payload: the text */
    TW_RECORD_GRAPH,     /* payload: the graph's JSON */
    TW_RECORD_TAG,       /* a new tag: payload is its name, step its tw_series_kind */
    TW_RECORD_HPARAMS,   /* payload: tw_hparams_payload; no tag */
    TW_RECORD_IMAGE,     /* payload: tw_image_payload */
    TW_RECORD_TENSOR,    /* payload: tw_tensor_payload */
} tw_record_kind;

/* A record's payload is one malloc'd block, owned by the queue until the
 * writer thread takes it, then by the thread. */
typedef struct {
    uint32_t kind; /* tw_record_kind */
    uint32_t tag;  /* the interned id */
    int64_t step;
    double wall_time;
    union {
        double value;
        void *payload;
    };
} tw_summary_record;

typedef struct {
    char *hparams_json, *metrics_json; /* either NULL: left as it is */
} tw_hparams_payload;

/* An image record's payload, one block: either n raw images of height x
 * width x channels uint8 pixels (format ""), which the writer thread
 * encodes as PNG, or one image already encoded (format "png", "jpeg" or
 * "gif"; an imported event file's), stored as it is. */
typedef struct {
    int n, height, width, channels;
    char format[8];
    size_t size; /* bytes in data */
    uint8_t data[];
} tw_image_payload;

/* A tensor record's payload, one block: the dtype's name, the shape and
 * the values as the tensor holds them, packed row-major. */
typedef struct {
    char dtype[12];
    int ndim;
    int64_t dims[TW_STORED_TENSOR_MAX_DIMS];
    size_t size; /* bytes in data */
    uint8_t data[];
} tw_tensor_payload;

typedef struct {
    uint64_t hash;
    char *name; /* NULL: a free slot */
    uint32_t id;
    tw_series_kind kind;
} tw_tag_slot;

typedef struct {
    tw_summary_record *items;
    size_t n, cap;
} tw_record_buffer;

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* the writer thread sleeps on it */
    pthread_cond_t done; /* flushers and a full buffer's producer sleep on it */
    tw_record_buffer pending;
    tw_tag_slot *tags;
    uint32_t tags_cap, ntags;
    uint64_t flush_requested, flush_done;
    uint64_t swaps; /* buffers taken so far (a full buffer waits for the next) */
    bool stopping;
    /* The writer thread's last wake found nothing to write: the next record
     * wakes it at once instead of waiting for the rest of its period, so a
     * value logged after a quiet spell (an epoch's metrics) is written
     * within milliseconds. While records keep coming it is false and the
     * producer never signals. */
    bool quiet;
} tw_summary_queue;

int tw__queue_init(tw_summary_queue *q);
/* Frees what is still pending (payloads too) and the tag table. */
void tw__queue_destroy(tw_summary_queue *q);

/* Append one record. -1 with a message when the tag was first used with
 * another kind. The payload (may be NULL) passes to the queue even on
 * failure. */
int tw__queue_scalar(tw_summary_queue *q, const char *tag, double value, int64_t step, double wall_time);
int tw__queue_push(tw_summary_queue *q, tw_record_kind kind, const char *tag, int64_t step, double wall_time,
                   void *payload);
/* Intern a tag without a data record (tags a resumed run already has). */
int tw__queue_declare_tag(tw_summary_queue *q, const char *tag, tw_series_kind kind);

/* Writer-thread side. Wait until woken (a flush, stop, a filling buffer) or
 * timeout_ms passed; then swap `mine` (emptied) for the pending records.
 * *flush_seq gets the flush request those records answer, *stopping
 * whether close has asked the thread to end. */
void tw__queue_take(tw_summary_queue *q, int timeout_ms, tw_record_buffer *mine, uint64_t *flush_seq,
                    bool *stopping);
/* The records answering flush_seq are written (or dropped): wake flushers. */
void tw__queue_mark_done(tw_summary_queue *q, uint64_t flush_seq);
/* Free the payloads of n records and empty the buffer. */
void tw__records_clear(tw_record_buffer *b);

/* Training-thread side: wait until everything enqueued before the call is
 * handled; with stop, also ask the thread to end after that. */
void tw__queue_flush(tw_summary_queue *q, bool stop);

#endif
