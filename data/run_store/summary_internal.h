/* The summary writer's insides, shared by summary_writer.c (the calls),
 * summary_thread.c (the thread writing into the file), histogram.c and
 * summary_logger.c. Not installed. */
#ifndef TW_SUMMARY_INTERNAL_H
#define TW_SUMMARY_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "store_internal.h"
#include "summary_queue.h"
#include "tw/summary.h"

/* How long the thread waits for a locked file before it gives up on the
 * logs (SQLite's busy timeout, then whole-transaction retries). */
#define TW_SUMMARY_BUSY_LIMIT_MS 10000
/* While records keep coming the thread writes at least this often: 40 ms
 * leaves room within the dashboard's 100 ms from a call to the screen (the
 * reader wakes ~3 ms after a commit, then a frame). An idle wake writes
 * nothing, and the first record after one is written at once
 * (summary_queue.h). */
#define TW_SUMMARY_WAKE_MS 40

/* A histogram record's payload. */
typedef struct {
    int64_t count;     /* values that are not NaN: the buckets' total */
    int64_t nan_count; /* left out of everything else */
    double min, max;   /* NaN when count is 0 */
    double sum, sum_squares;
    double buckets[TW_HISTOGRAM_BUCKETS];
} tw_histogram_stats;

int tw__histogram_compute(tw_tensor *values, tw_histogram_stats *h);
/* values packed in host memory: itself, a packed copy, or a copy from its
 * device (new tensors owned by the current scope); NULL with the error set. */
tw_tensor *tw__host_contiguous(tw_tensor *values);

/* height x width x channels (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA) uint8
 * pixels as a PNG (png_encode.c): 0 and *out (malloc'd), or -1 (out of
 * memory, a size libpng refuses). */
int tw__png_encode(const uint8_t *pixels, int height, int width, int channels, uint8_t **out, size_t *size);

struct tw_summary_writer {
    tw_summary_queue queue;
    char *path, *run_name;
    int64_t run_id;  /* -1 when the run could not be created */
    sqlite3 *db;     /* the thread's from open on; NULL when the file cannot be written */
    pthread_t thread;
    tw_run_status close_status;
    bool annotate;      /* tw_summary_run_options.annotate: close leaves the run's row alone */
    char *close_reason; /* why the run failed, or NULL */
    _Atomic int busy_limit_ms;
    /* Failure, set once by the thread (or by open) and read by anyone. */
    _Atomic(char *) error;
    _Atomic int64_t lost_from_step;
    /* The TensorBoard event file (tfevents_dir), written by the thread
     * after each batch; NULL when none or after it failed. */
    struct tw_tb_writer *tb;
    char *tb_path;
    /* A writer without a thread (tw__summary_writer_open_inline): db is
     * the caller's, and this its statements and tags (summary_thread.c). */
    bool shared_db;
    void *inline_state;
};

typedef struct tw_summary_statements tw_summary_statements;

/* A writer without a thread or a connection of its own, for importing
 * many small runs (data/tfevents/import.c): the run is created, its queued
 * records written and its end recorded on the caller's connection db,
 * inside the transaction the caller holds there, so a batch of runs costs
 * one transaction instead of a thread, a connection and a commit per wake
 * for each. The caller writes the queue out (tw_summary_flush) before it
 * holds a million records. NULL with a message (a taken name as
 * tw_summary_writer_open says it). tw_summary_flush writes its queue:
 * 0, or -1 with a message, after which the caller's transaction is the
 * caller's to roll back. Once its error is set (tw__summary_fail, also by
 * the caller when it rolled back for another reason) it writes nothing
 * more, close included. */
tw_summary_writer *tw__summary_writer_open_inline(sqlite3 *db, const char *db_path, const char *run_name, bool append,
                                                 tw_summary_statements *statements);
/* The inline writers' statements on one connection, prepared once for all
 * of them (preparing them per run took a fifth of an import of small
 * runs); freed after the last of those writers closed. NULL with a message. */
tw_summary_statements *tw__summary_statements_new(sqlite3 *db, const char *path);
void tw__summary_statements_free(tw_summary_statements *s);
/* summary_thread.c's side of an inline writer. */
int tw__summary_inline_start(tw_summary_writer *w, tw_summary_statements *statements);
int tw__summary_inline_write(tw_summary_writer *w);
int tw__summary_inline_finish(tw_summary_writer *w);

/* Start the writer thread; it owns w->db from then on and ends after the
 * flush that tw__queue_flush(.., stop) asks for, having set the run's status. */
int tw__summary_thread_start(tw_summary_writer *w);
/* Keep the first failure's message (takes `message`, malloc'd). */
void tw__summary_fail(tw_summary_writer *w, char *message);

/* Tests: make a locked file fail sooner than TW_SUMMARY_BUSY_LIMIT_MS. */
void tw__summary_writer_set_busy_limit(tw_summary_writer *w, int ms);

#endif
