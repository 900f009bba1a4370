/* Importing a TensorBoard log directory into the run database: each run
 * through its own summary writer (so the rows and chunks are the run
 * store's own), with the events' steps and wall times; small runs'
 * writers have no thread and write within the batch's transaction
 * (import_batch.c), big ones a thread each. Files are streamed record by
 * record; the writer's queue bounds what waits in memory. How each kind
 * is stored: docs/tensorboard.md. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run_store/summary_internal.h"
#include "tfevents_internal.h"

typedef tw_tb_sink run_import;

static bool resume(run_import *ri);

/* A bulk run's queue is written out before it holds this many records (a
 * writer without a thread would wait for room forever). */
#define BULK_WRITE_RECORDS (1 << 16)

static void warn(run_import *ri, const char *message)
{
    ri->stats->warnings++;
    if (ri->warn)
        ri->warn(ri->user_data, message);
}

void tw__tb_sink_warn(void *sink, const char *message)
{
    warn(sink, message);
}
#define warn_cb tw__tb_sink_warn

/* A kind the store refused for a tag (first used with another kind): said
 * once per tag. */
static void refused(run_import *ri, const tw_tb_item *it)
{
    if (g_hash_table_contains(ri->refused_tags, it->tag))
        return;
    g_hash_table_add(ri->refused_tags, g_strdup(it->tag));
    char *message = g_strdup_printf("run '%s': %s; those values are left out", ri->run, tw_last_error());
    warn(ri, message);
    g_free(message);
}

/* Bucket edges into the store's TW_HISTOGRAM_BUCKETS equal-width buckets
 * over [min, max]: each bucket's count spread over the ones it overlaps in
 * proportion (a zero-width bucket's count goes where its edge falls); a
 * bucket with an infinite edge counts in the first or last bucket, as the
 * summary writer counts infinities. */
static void rebin(const tw_tb_histogram *h, tw_histogram_stats *s)
{
    memset(s, 0, sizeof *s);
    s->sum = h->sum;
    s->sum_squares = h->sum_squares;
    double total = 0, lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < h->nbuckets; i++) {
        total += h->count[i];
        double edges[2] = {h->left[i], h->right[i]};
        for (int e = 0; e < 2; e++)
            if (isfinite(edges[e])) {
                lo = fmin(lo, edges[e]);
                hi = fmax(hi, edges[e]);
            }
    }
    s->count = (int64_t)llround(total);
    if (s->count == 0 || lo > hi) {
        s->min = s->max = NAN;
        return;
    }
    s->min = h->nbuckets && h->left[0] < lo ? h->left[0] : lo;
    s->max = h->nbuckets && h->right[h->nbuckets - 1] > hi ? h->right[h->nbuckets - 1] : hi;
    double width = (hi - lo) / TW_HISTOGRAM_BUCKETS;
    for (int i = 0; i < h->nbuckets; i++) {
        double l = h->left[i], r = h->right[i], c = h->count[i];
        if (!(c > 0))
            continue;
        if (l == -INFINITY || r == -INFINITY || isnan(l) || isnan(r)) {
            s->buckets[0] += c;
            continue;
        }
        if (l == INFINITY || r == INFINITY) {
            s->buckets[TW_HISTOGRAM_BUCKETS - 1] += c;
            continue;
        }
        int a = width > 0 ? (int)fmin(fmax((l - lo) / width, 0), TW_HISTOGRAM_BUCKETS - 1) : 0;
        int b = width > 0 ? (int)fmin(fmax((r - lo) / width, 0), TW_HISTOGRAM_BUCKETS - 1) : 0;
        if (r <= l || a == b) {
            s->buckets[a] += c;
            continue;
        }
        for (int k = a; k <= b; k++) {
            double from = fmax(l, lo + k * width), to = fmin(r, k == TW_HISTOGRAM_BUCKETS - 1 ? hi : lo + (k + 1) * width);
            if (to > from)
                s->buckets[k] += c * (to - from) / (r - l);
        }
    }
}

static void add_text(run_import *ri, const tw_tb_item *it, const char *tag, double wall)
{
    char *text = g_utf8_make_valid(it->text, (gssize)it->text_len);
    char *copy = strdup(text); /* the queue frees payloads with free() */
    g_free(text);
    if (copy && tw__queue_push(&ri->w->queue, TW_RECORD_TEXT, tag, it->step, wall, copy))
        refused(ri, it);
    else
        ri->stats->texts++;
}

/* The encoded image as it is: the store keeps PNG, JPEG and GIF bytes. */
static void add_image(run_import *ri, const tw_tb_item *it, double wall)
{
    const tw_tb_image *im = &it->image;
    tw_image_payload *p = malloc(sizeof *p + im->size);
    if (!p)
        return;
    *p = (tw_image_payload){.n = 1, .height = im->height, .width = im->width, .channels = im->colorspace,
                            .size = im->size};
    g_strlcpy(p->format, im->format, sizeof p->format);
    memcpy(p->data, im->data, im->size);
    if (tw__queue_push(&ri->w->queue, TW_RECORD_IMAGE, it->tag, it->step, wall, p))
        refused(ri, it);
    else
        ri->stats->images++;
}

/* The GraphDef as the graph view's JSON (the decoder converted it; a
 * graph it could not read was warned about and has no text). */
static void add_graph(run_import *ri, const tw_tb_item *it, double wall)
{
    char *copy = it->text ? strdup(it->text) : NULL; /* the queue frees payloads with free() */
    if (!copy)
        return;
    const tw_tb_item at = {.tag = TW_TB_GRAPH_TAG, .step = it->step};
    if (tw__queue_push(&ri->w->queue, TW_RECORD_GRAPH, TW_TB_GRAPH_TAG, it->step, wall, copy))
        refused(ri, &at);
    else
        ri->stats->graphs++;
}

/* A tensor of numbers as the store keeps tw_summary_tensor's: its values
 * in its dtype, row-major. */
static void add_tensor(run_import *ri, const tw_tb_item *it, double wall)
{
    const tw_tb_tensor *t = &it->tensor;
    size_t size = (size_t)t->numel * tw__tb_dtype_width(t->dtype);
    tw_tensor_payload *p = calloc(1, sizeof *p + size);
    if (!p)
        return;
    g_strlcpy(p->dtype, t->dtype, sizeof p->dtype);
    p->ndim = t->ndim;
    memcpy(p->dims, t->dims, sizeof(int64_t) * (size_t)t->ndim);
    p->size = size;
    tw__tb_pack_numbers(t->dtype, t->values, t->numel, p->data);
    if (tw__queue_push(&ri->w->queue, TW_RECORD_TENSOR, it->tag, it->step, wall, p))
        refused(ri, it);
    else
        ri->stats->tensors++;
}

/* A bulk run's queued records into the batch; a failure ends the batch
 * (and so the import or the following). */
static int write_queued(run_import *ri)
{
    if (!ri->bulk || !ri->w)
        return 0;
    if (tw__tb_batch_begin(ri->batch) || tw_summary_flush(ri->w)) {
        tw__tb_batch_fail(ri->batch, tw_last_error());
        return -1;
    }
    return 0;
}

void tw__tb_sink_item(void *user_data, const tw_tb_item *it)
{
    run_import *ri = user_data;
    if (ri->batch->error || !resume(ri))
        return;
    /* An event without a wall time takes the one before it, so the
     * store's wall-time axis never goes back for it. */
    double wall = isnan(it->wall_time) ? ri->last_wall : it->wall_time;
    ri->last_wall = wall;
    if (isnan(ri->first_wall) && !isnan(it->wall_time)) {
        ri->first_wall = it->wall_time;
        ri->row_dirty = true;
    }
    tw__tb_metrics_note(&ri->batch->metrics, ri->run, ri->run_id, it);
    switch (it->kind) {
    case TW_TB_SCALAR:
        if (tw__queue_scalar(&ri->w->queue, it->tag, it->value, it->step, wall))
            refused(ri, it);
        else
            ri->stats->scalars++;
        break;
    case TW_TB_HISTOGRAM: {
        tw_histogram_stats *s = malloc(sizeof *s);
        if (!s)
            break;
        rebin(&it->histogram, s);
        if (tw__queue_push(&ri->w->queue, TW_RECORD_HISTOGRAM, it->tag, it->step, wall, s))
            refused(ri, it);
        else
            ri->stats->histograms++;
        break;
    }
    case TW_TB_TEXT: add_text(ri, it, it->tag, wall); break;
    case TW_TB_HPARAMS_START:
        g_free(ri->hparams_json);
        ri->hparams_json = g_strdup(it->text);
        ri->stats->hparams++;
        break;
    case TW_TB_HPARAMS_EXPERIMENT:
    case TW_TB_HPARAMS_END:
        add_text(ri, it, it->tag, wall);
        ri->stats->hparams++;
        break;
    case TW_TB_KERAS_MODEL:
        g_free(ri->model_json);
        ri->model_json = g_utf8_make_valid(it->text, (gssize)it->text_len);
        ri->row_dirty = true;
        break;
    case TW_TB_IMAGE: add_image(ri, it, wall); break;
    case TW_TB_GRAPH_DEF: add_graph(ri, it, wall); break;
    case TW_TB_TENSOR: add_tensor(ri, it, wall); break;
    case TW_TB_META_GRAPH_DEF:
    case TW_TB_OTHER: ri->stats->other++; break;
    case TW_TB_FILE_VERSION:
    case TW_TB_SESSION_LOG: break;
    }
    if (ri->bulk && ri->w->queue.pending.n >= BULK_WRITE_RECORDS)
        write_queued(ri);
}

static int import_file(run_import *ri, const char *path)
{
    tw_tfrecord_reader *r = tw_tfrecord_open(path, warn_cb, ri);
    if (!r) {
        warn(ri, tw_last_error());
        return 0;
    }
    tw_tb_decoder *d = tw_tb_decoder_new(path, warn_cb, ri);
    const uint8_t *data;
    size_t n;
    uint64_t offset;
    tw_tfrecord_status s;
    while ((s = tw_tfrecord_next(r, &data, &n, &offset)) != TW_TFRECORD_END && s != TW_TFRECORD_ERROR) {
        if (s == TW_TFRECORD_AGAIN) {
            tw_tfrecord_report_cut(r); /* imported once: nothing more will come */
            continue;
        }
        ri->stats->records++;
        tw_tb_decode_event(d, data, n, offset, tw__tb_sink_item, ri);
    }
    if (s == TW_TFRECORD_ERROR)
        warn(ri, tw_last_error());
    tw_tb_decoder_free(d);
    tw_tfrecord_close(r);
    ri->stats->files++;
    return 0;
}

/* A followed run whose newest event is older than this shows as finished
 * (at its last event) until new events come: an old log directory is not
 * a set of runs going on for years. */
#define LIVE_SECONDS 120.0

static bool looks_live(const run_import *ri)
{
    return (double)g_get_real_time() / 1e6 - ri->last_wall < LIVE_SECONDS;
}

/* The run's times are its events' (the writer stamped the import's), and
 * the Keras callback's model config becomes the run's model. A followed
 * run (live) is running while its events are recent, else finished at its
 * last event. */
static int set_run_row(run_import *ri, int64_t run_id, bool closing)
{
    ri->row_dirty = false;
    bool running = ri->live && !closing && looks_live(ri);
    ri->shown_running = running;
    ri->shown_end = ri->last_wall;
    sqlite3 *db = ri->db;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "UPDATE runs SET start_time = coalesce(?2, start_time), model_json = coalesce(?4, "
                                "model_json), end_time = CASE WHEN ?5 THEN NULL ELSE coalesce(?3, end_time) END, "
                                "status = coalesce(?6, status) WHERE id = ?1",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, run_id);
        if (!isnan(ri->first_wall))
            sqlite3_bind_double(st, 2, ri->first_wall);
        if (!isnan(ri->first_wall) && (closing || (ri->live && !running)))
            sqlite3_bind_double(st, 3, ri->last_wall);
        sqlite3_bind_text(st, 4, ri->model_json, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 5, running);
        if (ri->live && !closing)
            sqlite3_bind_text(st, 6, tw_run_status_name(running ? TW_RUN_RUNNING : TW_RUN_FINISHED), -1,
                              SQLITE_STATIC);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : tw__store_sqlite_error(db, ri->db_path, "cannot set the imported run's times");
}

sqlite3 *tw__tb_open_database(const char *path)
{
    char *folder = g_path_get_dirname(path);
    g_mkdir_with_parents(folder, 0700); /* the default file's folder; a failure is the connection's to report */
    g_free(folder);
    return tw__store_connect(path, false);
}

/* A writer thread's connection waits for the write lock: the batch
 * commits first, so it never waits for us while we wait for it. */
static tw_summary_writer *open_writer(run_import *ri, bool append)
{
    if (ri->bulk) {
        tw_tb_batch *b = ri->batch;
        if (!b->statements && !(b->statements = tw__summary_statements_new(ri->db, ri->db_path)))
            return NULL;
        return tw__tb_batch_begin(b) ? NULL
                                     : tw__summary_writer_open_inline(ri->db, ri->db_path, ri->run, append, b->statements);
    }
    if (tw__tb_batch_commit(ri->batch))
        return NULL;
    return tw_summary_writer_open(ri->db_path, ri->run, append ? &(tw_summary_run_options){.append = true} : NULL);
}

int tw__tb_sink_open(run_import *ri, tw_tb_batch *batch, const char *run, bool bulk, tw_tb_import_stats *stats,
                     tw_tb_warn_fn warn_fn, void *user_data)
{
    *ri = (run_import){.db = batch->db, .db_path = batch->db_path, .run = run, .batch = batch, .bulk = bulk,
                       .stats = stats, .warn = warn_fn, .user_data = user_data, .last_wall = 0, .first_wall = NAN,
                       .refused_tags = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL)};
    ri->w = open_writer(ri, false);
    if (!ri->w) {
        g_hash_table_destroy(ri->refused_tags);
        if (!strstr(tw_last_error(), "already in the file"))
            return -1;
        warn(ri, tw_last_error());
        stats->refused_runs++;
        return 1;
    }
    ri->run_id = tw_summary_writer_run_id(ri->w);
    stats->runs++;
    return 0;
}

int tw__tb_sink_sync(run_import *ri)
{
    if (ri->hparams_json && ri->w) {
        tw_summary_hparams(ri->w, ri->hparams_json, NULL);
        g_clear_pointer(&ri->hparams_json, g_free);
    }
    if (write_queued(ri))
        return -1;
    bool moved = ri->live && ri->w && !isnan(ri->first_wall) &&
                 (looks_live(ri) != ri->shown_running || (!ri->shown_running && ri->last_wall != ri->shown_end));
    return ri->row_dirty || moved ? set_run_row(ri, ri->run_id, !ri->w) : 0;
}

/* Close the writer, leaving the run finished at its last event. A bulk
 * run's writer writes its end within the batch (nothing once the batch
 * failed); a threaded one's waits for the write lock, so the batch
 * commits first. */
static int end_writer(run_import *ri, tw_run_status status)
{
    if (!ri->w)
        return 0;
    if (ri->hparams_json) {
        tw_summary_hparams(ri->w, ri->hparams_json, NULL);
        g_clear_pointer(&ri->hparams_json, g_free);
    }
    int rc = ri->bulk ? tw__tb_batch_begin(ri->batch) : tw__tb_batch_commit(ri->batch);
    if (rc && ri->bulk)
        tw__summary_fail(ri->w, g_strdup(tw_last_error()));
    rc = tw_summary_writer_close(ri->w, status) || rc ? -1 : 0;
    if (rc && ri->bulk)
        tw__tb_batch_fail(ri->batch, tw_last_error());
    ri->w = NULL;
    return rc ? rc : set_run_row(ri, ri->run_id, true);
}

int tw__tb_sink_suspend(run_import *ri)
{
    return end_writer(ri, TW_RUN_FINISHED);
}

/* A run whose events stopped has its writer closed, which writes its row
 * too: its row is not written first as well, while the writer's thread may
 * still hold the file's write lock (the wait, per run of a log directory
 * of a thousand old runs, slowed their listing). */
int tw__tb_sink_settle(run_import *ri)
{
    return ri->w && !looks_live(ri) ? end_writer(ri, TW_RUN_FINISHED) : tw__tb_sink_sync(ri);
}

/* A suspended run's writer opened again, appending, for new items. */
static bool resume(run_import *ri)
{
    if (ri->w)
        return true;
    if (ri->failed)
        return false;
    ri->w = open_writer(ri, true);
    if (!ri->w) {
        char *message = g_strdup_printf("%s; run '%s' is no longer followed", tw_last_error(), ri->run);
        warn(ri, message);
        g_free(message);
        ri->failed = true;
    }
    return ri->w != NULL;
}

int tw__tb_sink_close(run_import *ri, tw_run_status status)
{
    int rc = end_writer(ri, status);
    g_hash_table_destroy(ri->refused_tags);
    g_free(ri->model_json);
    g_free(ri->hparams_json);
    return rc;
}

/* 1: the run was refused (its name is taken), warned about; -1: the
 * database failed. */
static int import_run(const char *logdir, const char *run, tw_tb_batch *batch, uint64_t bulk_max_bytes,
                      tw_tb_warn_fn warn_fn, void *user_data, tw_tb_import_stats *stats)
{
    char *dir = tw__tb_run_dir(logdir, run);
    char **files = tw_tb_run_files(dir);
    uint64_t size = 0;
    for (int i = 0; files && files[i]; i++) {
        GStatBuf st;
        size += g_stat(files[i], &st) == 0 ? (uint64_t)st.st_size : 0;
    }
    run_import ri;
    int rc = tw__tb_sink_open(&ri, batch, run, size <= bulk_max_bytes, stats, warn_fn, user_data);
    for (int i = 0; !rc && files && files[i]; i++)
        import_file(&ri, files[i]);
    g_strfreev(files);
    g_free(dir);
    if (!rc)
        rc = tw__tb_sink_close(&ri, TW_RUN_FINISHED);
    return rc < 0 || tw__tb_batch_commit_due(batch) ? -1 : rc;
}

int tw_tb_import(const char *logdir, const char *db_path, tw_tb_warn_fn warn_fn, void *user_data,
                 tw_tb_import_stats *stats)
{
    return tw__tb_import_runs(logdir, db_path, TW_TB_BULK_MAX_BYTES, warn_fn, user_data, stats);
}

int tw__tb_import_runs(const char *logdir, const char *db_path, uint64_t bulk_max_bytes, tw_tb_warn_fn warn_fn,
                       void *user_data, tw_tb_import_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    char **runs = tw_tb_list_runs(logdir);
    if (!runs)
        return -1;
    char *path = db_path ? g_strdup(db_path) : tw_run_store_default_path();
    sqlite3 *db = tw__tb_open_database(path);
    tw_tb_batch batch = {.db = db, .db_path = path};
    int rc = db ? 0 : -1;
    for (int i = 0; runs[i] && rc >= 0; i++)
        rc = import_run(logdir, runs[i], &batch, bulk_max_bytes, warn_fn, user_data, stats);
    if (rc >= 0 && tw__tb_batch_commit(&batch))
        rc = -1;
    if (rc < 0 && batch.error)
        tw_error_set("%s", batch.error);
    tw__tb_batch_end(&batch);
    sqlite3_close(db);
    g_strfreev(runs);
    g_free(path);
    return rc < 0 ? -1 : 0;
}
