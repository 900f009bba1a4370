/* Tensor Workbench — the summary writer (TensorFlow 2's tf.summary), writing
 * into the run database (tw/run_store.h).
 *
 *     tw_summary_writer *train = tw_summary_writer_open("runs.db", "mlp-1", NULL);
 *     for (...) {
 *         ...
 *         tw_summary_scalar(train, "train/loss", loss, step);   // enqueues, returns at once
 *     }
 *     tw_summary_writer_close(train, TW_RUN_FINISHED);
 *
 * Every call only enqueues: a writer thread batches the rows into
 * transactions, at least every 40 ms while calls keep coming, at once for
 * the first call after a quiet spell, on tw_summary_flush and on close. The
 * step is explicit, as in TF2. Several writers may be open at once, in one
 * process or several, on one file or several.
 *
 * When the file cannot be written (read-only, disk full, locked for too
 * long) the writer keeps the first message (tw_summary_writer_error) and
 * the first step lost (tw_summary_writer_lost_from_step), both set the
 * moment a write fails, drops what it cannot write, records the step in
 * the run at once when the file still takes that one small write (else at
 * close), and never makes the calls fail: training goes on. Calls return -1 only for bad arguments (a NULL tag, a tag already used
 * with another kind of series).
 */
#ifndef TW_SUMMARY_H
#define TW_SUMMARY_H

#include "tw/engine.h"
#include "tw/metrics.h"
#include "tw/model.h"
#include "tw/run_store.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

typedef struct tw_summary_writer tw_summary_writer;

typedef struct {
    const char *model_json;   /* stored with the run, may be NULL */
    const char *hparams_json; /* a JSON object of hyperparameters, may be NULL */
    const char *notes;
    /* A run of that name already in the file: false (default) fails with a
     * message; true appends to it (a resumed training run). */
    bool append;
    /* A run of that name already in the file: the first free of NAME-2,
     * NAME-3, ... instead (tw_summary_writer_run_name says which), chosen
     * within the transaction that creates the run. For names made of the
     * time, which processes started in the same second share. */
    bool unique;
    /* A folder: every record is also written into a TensorBoard event
     * file there (tw/tfevents.h's writer, by the writer thread), and the
     * run's hyperparameters first; graphs are not (twb's graph JSON is no
     * GraphDef). NULL: none. */
    const char *tfevents_dir;
    /* Add records to an existing run without reopening it (an evaluation
     * of a finished run): its status, times, settings and model stay as
     * they are, and closing the writer leaves them too (the status given
     * to close is ignored). A run of that name must exist and not be
     * running. */
    bool annotate;
} tw_summary_run_options;

/* Creates the run (status running) in the file at db_path (NULL: the
 * default file, see tw_run_store_open). NULL with a message when the file
 * cannot be opened (no such folder, not a run database, a newer schema) or
 * the name is taken. A run database that can be read but not written
 * (read-only, full, locked) gives a writer that logs nothing and says why
 * in tw_summary_writer_error, so training goes on. */
tw_summary_writer *tw_summary_writer_open(const char *db_path, const char *run_name,
                                          const tw_summary_run_options *options);

int tw_summary_scalar(tw_summary_writer *w, const char *tag, double value, int64_t step);
/* The tensor's values (any float or integer dtype) as a histogram: exact
 * count, min, max, sum and sum of squares, and 64 equal-width buckets
 * spanning [min, max]. Computed on the calling thread (two passes over the
 * values); the rest is enqueued. NaN values are counted apart and left out
 * of everything else (count is the buckets' total); with an infinite min or
 * max, -Inf and +Inf fill the end buckets and the finite values spread over
 * their own range. */
int tw_summary_histogram(tw_summary_writer *w, const char *tag, tw_tensor *values, int64_t step);
int tw_summary_text(tw_summary_writer *w, const char *tag, const char *text, int64_t step);
/* Images: a tensor [height, width, channels] or [n, height, width,
 * channels], channels 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA),
 * uint8, or float32/float64 in [0, 1] (scaled by 255 and rounded, values
 * outside clamped, NaN as 0), as tf.summary.image takes them. The pixels
 * are copied on the calling thread; the writer thread encodes each image
 * as a PNG, stored with the tag, step and its index in the batch
 * (tw_run_store_list_images). */
int tw_summary_image(tw_summary_writer *w, const char *tag, tw_tensor *images, int64_t step);
/* A tensor's values (float32, float64, int32 or int64, rank at most
 * TW_STORED_TENSOR_MAX_DIMS, on the CPU) with its dtype and shape,
 * copied on the calling thread; tw_run_store_read_tensor reads it back.
 * Mirrored into the event file as TF2's generic tensor (tw_tb_write_tensor). */
int tw_summary_tensor(tw_summary_writer *w, const char *tag, tw_tensor *values, int64_t step);
/* A graph as JSON (the graph view's format, see docs/run_database.md). */
int tw_summary_graph(tw_summary_writer *w, const char *tag, const char *graph_json, int64_t step);
/* Hyperparameters and final metrics (JSON objects; either may be NULL). */
int tw_summary_hparams(tw_summary_writer *w, const char *hparams_json, const char *metrics_json);
/* The seeds' "average the loss, log every N steps" in one line: writes the
 * metric's result under tag and resets it. */
int tw_summary_metric(tw_summary_writer *w, const char *tag, tw_metric *metric, int64_t step);

/* Wait until everything enqueued so far is in the file (or has failed). */
int tw_summary_flush(tw_summary_writer *w);
/* Flush, set the run's status and end time, stop the thread, free. -1,
 * with the writer's error as the thread's message, when logs were lost;
 * the writer is freed either way. */
int tw_summary_writer_close(tw_summary_writer *w, tw_run_status status);
/* The same, storing why the run ended (its failure_reason, shown by `twb
 * runs show` and the run list's tooltip); reason NULL or "" stores none. */
int tw_summary_writer_close_with_reason(tw_summary_writer *w, tw_run_status status, const char *reason);

/* NULL while all is well; else the first failure's message. */
const char *tw_summary_writer_error(const tw_summary_writer *w);
/* The event file written beside the database (tfevents_dir), or NULL. */
const char *tw_summary_writer_tfevents_path(const tw_summary_writer *w);
/* -1, or the first step whose logs could not be written. */
int64_t tw_summary_writer_lost_from_step(const tw_summary_writer *w);
int64_t tw_summary_writer_run_id(const tw_summary_writer *w);
/* The run's name: the one asked for, or with `unique` the one chosen. */
const char *tw_summary_writer_run_name(const tw_summary_writer *w);

/* ---- logging a fit -------------------------------------------------------- */
/* A fit callback: every `every_steps` steps the batch logs as "train/<name>"
 * ("train/loss", "train/accuracy") and the learning rate as
 * "train/learning_rate"; every `histogram_every_steps` steps (0: never)
 * each weight's values as "weights/<path>" and, when the fit exposes
 * gradients (tw_fit_options.expose_gradients), each gradient as
 * "gradients/<path>"; at each epoch's end the epoch logs as
 * "epoch/<name>" and validation values as "validation/<name>". Steps are
 * the optimizer's iteration count. */
typedef struct tw_summary_logger tw_summary_logger;
tw_summary_logger *tw_summary_logger_new(tw_summary_writer *w, int every_steps, int histogram_every_steps);
tw_callback tw_summary_logger_callback(tw_summary_logger *logger);
void tw_summary_logger_free(tw_summary_logger *logger);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
