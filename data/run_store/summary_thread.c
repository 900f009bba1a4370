/* The summary writer's thread: at least every TW_SUMMARY_WAKE_MS, at once
 * on flush and close and for the first record after a quiet spell, it
 * takes every queued record and writes them in
 * one transaction. Scalars go into each tag's open chunk, which is written
 * (inserted once, then rewritten by id) at the end of every transaction
 * until it is full; histograms and texts are one row each, images one row
 * per image (raw pixels encoded as PNG here).
 *
 * Locking: the file is in WAL mode and every transaction starts with BEGIN
 * IMMEDIATE, so the write lock is the only thing another writer can hold
 * against us, and only BEGIN can meet it. BEGIN waits with SQLite's busy
 * timeout and is retried until the writer's busy limit has passed; only
 * then is the file "locked" and the logs given up.
 *
 * Failure (read-only, full, locked, I/O): the transaction is rolled back,
 * the first message kept, and every later record dropped; the run records
 * the first step lost as soon as (and if ever) the file takes that write. */
#include <glib.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "summary_internal.h"
#include "tw/tfevents.h"

enum {
    BEGIN,
    COMMIT,
    ROLLBACK,
    FIND_TAG,
    INSERT_TAG,
    LAST_CHUNK,
    INSERT_CHUNK,
    UPDATE_CHUNK,
    INSERT_HISTOGRAM,
    INSERT_TEXT,
    INSERT_IMAGE,
    INSERT_TENSOR,
    SET_HPARAMS,
    SET_LOST,
    FINISH,
    NSTATEMENTS
};

#define CHUNK_PARAMS_FROM_1 "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13"
#define CHUNK_PARAMS_FROM_2 "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14"

static const char *const statement_sql[NSTATEMENTS] = {
    [BEGIN] = "BEGIN IMMEDIATE",
    [COMMIT] = "COMMIT",
    [ROLLBACK] = "ROLLBACK",
    [FIND_TAG] = "SELECT id, kind FROM tags WHERE run_id = ?1 AND name = ?2",
    [INSERT_TAG] = "INSERT INTO tags (run_id, name, kind) VALUES (?1, ?2, ?3)",
    [LAST_CHUNK] = "SELECT id, points FROM scalar_chunks WHERE tag_id = ?1 ORDER BY id DESC LIMIT 1",
    [INSERT_CHUNK] = "INSERT INTO scalar_chunks (tag_id, " TW_CHUNK_COLUMNS ") VALUES (?1, " CHUNK_PARAMS_FROM_2 ")",
    [UPDATE_CHUNK] = "UPDATE scalar_chunks SET (" TW_CHUNK_COLUMNS ") = (" CHUNK_PARAMS_FROM_1 ") WHERE id = ?14",
    [INSERT_HISTOGRAM] = "INSERT INTO histograms (tag_id, " TW_HISTOGRAM_COLUMNS ") "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [INSERT_TEXT] = "INSERT INTO texts (tag_id, step, wall_time, body) VALUES (?1, ?2, ?3, ?4)",
    /* sample: the images of this tag and step already there, so several
     * images at one step (a batch, an imported group) number 0, 1, ... */
    [INSERT_IMAGE] = "INSERT INTO images (run_id, tag, step, sample, wall_time, width, height, format, data) "
                     "VALUES (?1, ?2, ?3, (SELECT count(*) FROM images WHERE run_id = ?1 AND tag = ?2 AND step = ?3), "
                     "?4, ?5, ?6, ?7, ?8)",
    [INSERT_TENSOR] = "INSERT INTO tensors (run_id, tag, step, wall_time, dtype, shape, data) "
                      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [SET_HPARAMS] = "UPDATE runs SET hparams_json = coalesce(?2, hparams_json), "
                    "metrics_json = coalesce(?3, metrics_json) WHERE id = ?1",
    /* A resumed run keeps the step of an earlier loss. */
    [SET_LOST] = "UPDATE runs SET logs_lost_from_step = ?2, logs_lost_reason = ?3 "
                 "WHERE id = ?1 AND logs_lost_from_step IS NULL",
    [FINISH] = "UPDATE runs SET status = ?2, end_time = ?3, failure_reason = ?4 WHERE id = ?1",
};

typedef struct {
    int64_t id; /* the tags row */
    tw_series_kind kind;
    int64_t chunk_id; /* scalars: the open chunk's row, 0 before its first write */
    tw_chunk *chunk;  /* scalars: the open chunk */
    bool dirty;       /* it holds points the file does not have */
    bool listed;      /* in the dirty list of this transaction */
    char *name;       /* images, tensors: rows name their tag (they have no tags row) */
} tag_state;

typedef struct {
    tw_summary_writer *w;
    sqlite3 *db;
    sqlite3_stmt *stmt[NSTATEMENTS];
    tag_state *tags;
    uint32_t ntags, tags_cap;
    uint32_t *dirty; /* ids of the tags with dirty chunks, ntags room */
    uint32_t ndirty;
    int busy_ms;        /* the busy timeout db has now */
    bool failed;        /* records are dropped from now on */
    bool lost_recorded; /* the run row says from which step */
    tw_record_buffer spare; /* without a thread: the buffer swapped for the queue's */
    bool shared_statements; /* without a thread: stmt are the caller's (tw_summary_statements) */
} writer_thread;

struct tw_summary_statements {
    sqlite3_stmt *stmt[NSTATEMENTS];
};

static double monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

static double wall_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Step a statement with no result rows (or one, for the LAST_CHUNK kind:
 * SQLITE_ROW is returned and the caller resets). */
static int run(sqlite3_stmt *stmt)
{
    int rc = sqlite3_step(stmt);
    if (rc != SQLITE_ROW)
        sqlite3_reset(stmt);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* ---- failing ---------------------------------------------------------------- */
static int64_t first_step(const tw_record_buffer *b)
{
    int64_t first = -1;
    for (size_t i = 0; i < b->n; i++) {
        const tw_summary_record *r = &b->items[i];
        if (r->kind != TW_RECORD_TAG && r->kind != TW_RECORD_HPARAMS && (first < 0 || r->step < first))
            first = r->step;
    }
    return first;
}

static void fail(writer_thread *t, const char *why, const tw_record_buffer *lost)
{
    int64_t step = first_step(lost);
    atomic_store(&t->w->lost_from_step, step);
    char *message = step >= 0 ? g_strdup_printf("%s: %s; the logs of run '%s' from step %lld on are lost",
                                                t->w->path, why, t->w->run_name, (long long)step)
                              : g_strdup_printf("%s: %s; the logs of run '%s' are lost from now on", t->w->path,
                                                why, t->w->run_name);
    tw__summary_fail(t->w, strdup(message));
    g_free(message);
    t->failed = true;
}

/* What SQLite says, with the system's word when there is one ("disk I/O
 * error (File too large)"). */
static void describe(writer_thread *t, int rc, char *why, size_t size)
{
    int code = sqlite3_errcode(t->db) & 0xff;
    int err = code == SQLITE_IOERR || code == SQLITE_FULL ? sqlite3_system_errno(t->db) : 0;
    snprintf(why, size, "cannot write to it: %s%s%s%s", rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(t->db),
             err ? " (" : "", err ? g_strerror(err) : "", err ? ")" : "");
}

/* BEGIN IMMEDIATE, waiting out another writer up to limit ms. */
static int begin(writer_thread *t, int limit, char *why, size_t size)
{
    if (limit != t->busy_ms)
        sqlite3_busy_timeout(t->db, t->busy_ms = limit);
    double start = monotonic_ms();
    int rc;
    while ((rc = run(t->stmt[BEGIN])) == SQLITE_BUSY && monotonic_ms() - start < limit)
        g_usleep(1000); /* SQLite gave up early (a WAL recovery, say): try again */
    if (rc == SQLITE_BUSY)
        snprintf(why, size, "the file stayed locked by another program for more than %.1f s",
                 (monotonic_ms() - start) / 1e3);
    else if (rc != SQLITE_OK)
        describe(t, rc, why, size);
    return rc == SQLITE_OK ? 0 : -1;
}

/* One statement in its own transaction (the run row's updates). */
static int run_alone(writer_thread *t, sqlite3_stmt *stmt, int limit, char *why, size_t size)
{
    if (begin(t, limit, why, size))
        return -1;
    int rc = run(stmt);
    if (rc == SQLITE_OK && (rc = run(t->stmt[COMMIT])) == SQLITE_OK)
        return 0;
    describe(t, rc, why, size);
    run(t->stmt[ROLLBACK]);
    return -1;
}

/* The run row learns from which step the logs are lost as soon as the file
 * takes that write: tried once at every wake without waiting (flushes stay
 * quick while the file is locked) and patiently at close. */
static void record_loss(writer_thread *t, bool patient)
{
    int64_t step = atomic_load(&t->w->lost_from_step);
    if (!t->failed || t->lost_recorded || !t->db || t->w->run_id < 0 || step < 0)
        return;
    sqlite3_stmt *s = t->stmt[SET_LOST];
    sqlite3_bind_int64(s, 1, t->w->run_id);
    sqlite3_bind_int64(s, 2, step);
    sqlite3_bind_text(s, 3, atomic_load(&t->w->error), -1, SQLITE_STATIC);
    char why[512];
    t->lost_recorded = run_alone(t, s, patient ? atomic_load(&t->w->busy_limit_ms) : 0, why, sizeof why) == 0;
}

/* ---- tags and chunks --------------------------------------------------------- */
static tag_state *tag_at(writer_thread *t, uint32_t id)
{
    if (id >= t->tags_cap) {
        uint32_t cap = t->tags_cap ? 2 * t->tags_cap : 64;
        while (cap <= id)
            cap *= 2;
        tag_state *tags = realloc(t->tags, cap * sizeof *tags);
        uint32_t *dirty = realloc(t->dirty, cap * sizeof *dirty);
        if (tags)
            t->tags = tags;
        if (dirty)
            t->dirty = dirty;
        if (!tags || !dirty)
            return NULL;
        memset(tags + t->tags_cap, 0, (cap - t->tags_cap) * sizeof *tags);
        t->tags_cap = cap;
    }
    if (id >= t->ntags)
        t->ntags = id + 1;
    return &t->tags[id];
}

/* A resumed scalar tag goes on filling its last chunk if that has room. */
static int reopen_last_chunk(writer_thread *t, tag_state *s)
{
    sqlite3_stmt *q = t->stmt[LAST_CHUNK];
    sqlite3_bind_int64(q, 1, s->id);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(q, 0);
        if (tw__chunk_unpack(t->w->path, sqlite3_column_blob(q, 1), sqlite3_column_bytes(q, 1), id, s->chunk) == 0 &&
            s->chunk->n < TW_CHUNK_POINTS)
            s->chunk_id = id;
        else
            s->chunk->n = 0; /* full (or unreadable: left alone): start a new one */
        rc = SQLITE_DONE;
    }
    sqlite3_reset(q);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int add_tag(writer_thread *t, const tw_summary_record *r)
{
    tag_state *s = tag_at(t, r->tag);
    if (!s || (r->step == TW_SERIES_SCALAR && !s->chunk && !(s->chunk = calloc(1, sizeof *s->chunk))))
        return SQLITE_NOMEM;
    s->kind = (tw_series_kind)r->step;
    if (s->kind == TW_SERIES_IMAGE || s->kind == TW_SERIES_TENSOR) /* its name was kept by name_tags */
        return SQLITE_OK;
    sqlite3_stmt *find = t->stmt[FIND_TAG], *insert = t->stmt[INSERT_TAG];
    sqlite3_bind_int64(find, 1, t->w->run_id);
    sqlite3_bind_text(find, 2, r->payload, -1, SQLITE_STATIC);
    int rc = sqlite3_step(find);
    if (rc == SQLITE_ROW) {
        s->id = sqlite3_column_int64(find, 0);
        sqlite3_reset(find);
        return s->kind == TW_SERIES_SCALAR ? reopen_last_chunk(t, s) : SQLITE_OK;
    }
    sqlite3_reset(find);
    if (rc != SQLITE_DONE)
        return rc;
    sqlite3_bind_int64(insert, 1, t->w->run_id);
    sqlite3_bind_text(insert, 2, r->payload, -1, SQLITE_STATIC);
    sqlite3_bind_text(insert, 3, tw__series_kind_name(s->kind), -1, SQLITE_STATIC);
    rc = run(insert);
    s->id = sqlite3_last_insert_rowid(t->db);
    return rc;
}

static int write_chunk(writer_thread *t, tag_state *s)
{
    if (!s->dirty)
        return SQLITE_OK;
    sqlite3_stmt *stmt = t->stmt[s->chunk_id ? UPDATE_CHUNK : INSERT_CHUNK];
    if (s->chunk_id)
        sqlite3_bind_int64(stmt, 14, s->chunk_id);
    else
        sqlite3_bind_int64(stmt, 1, s->id);
    if (tw__chunk_bind(stmt, s->chunk_id ? 1 : 2, s->chunk))
        return SQLITE_NOMEM;
    int rc = run(stmt);
    if (rc == SQLITE_OK && !s->chunk_id)
        s->chunk_id = sqlite3_last_insert_rowid(t->db);
    s->dirty = rc != SQLITE_OK;
    return rc;
}

static int add_scalar(writer_thread *t, const tw_summary_record *r)
{
    tag_state *s = &t->tags[r->tag];
    tw_chunk *c = s->chunk;
    if (!tw__chunk_accepts(c, r->step, r->wall_time)) {
        int rc = write_chunk(t, s);
        if (rc != SQLITE_OK)
            return rc;
        c->n = 0;
        s->chunk_id = 0;
    }
    c->steps[c->n] = r->step;
    c->wall_times[c->n] = r->wall_time;
    c->values[c->n++] = r->value;
    if (!s->listed)
        t->dirty[t->ndirty++] = r->tag;
    s->dirty = s->listed = true;
    return SQLITE_OK;
}

/* ---- histograms, texts, hyperparameters ------------------------------------- */
static int add_histogram(writer_thread *t, const tw_summary_record *r)
{
    tw_histogram_stats *stats = r->payload;
    tw_histogram h = {.step = r->step,
                      .wall_time = r->wall_time,
                      .count = (double)stats->count,
                      .min = stats->min,
                      .max = stats->max,
                      .sum = stats->sum,
                      .sum_squares = stats->sum_squares,
                      .nbuckets = TW_HISTOGRAM_BUCKETS,
                      .buckets = stats->buckets};
    sqlite3_stmt *s = t->stmt[INSERT_HISTOGRAM];
    sqlite3_bind_int64(s, 1, t->tags[r->tag].id);
    return tw__histogram_bind(s, 2, &h) ? SQLITE_NOMEM : run(s);
}

static int add_text(writer_thread *t, const tw_summary_record *r)
{
    sqlite3_stmt *s = t->stmt[INSERT_TEXT];
    sqlite3_bind_int64(s, 1, t->tags[r->tag].id);
    sqlite3_bind_int64(s, 2, r->step);
    sqlite3_bind_double(s, 3, r->wall_time);
    sqlite3_bind_text(s, 4, r->payload, -1, SQLITE_STATIC);
    return run(s);
}

static int insert_image(writer_thread *t, const tw_summary_record *r, int height, int width, const char *format,
                        const void *data, size_t size)
{
    sqlite3_stmt *s = t->stmt[INSERT_IMAGE];
    sqlite3_bind_int64(s, 1, t->w->run_id);
    sqlite3_bind_text(s, 2, t->tags[r->tag].name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, r->step);
    sqlite3_bind_double(s, 4, r->wall_time);
    sqlite3_bind_int(s, 5, width);
    sqlite3_bind_int(s, 6, height);
    sqlite3_bind_text(s, 7, format, -1, SQLITE_STATIC);
    sqlite3_bind_blob64(s, 8, data, size, SQLITE_STATIC);
    return run(s);
}

/* Raw images are encoded here, off the training thread. */
static int add_image(writer_thread *t, const tw_summary_record *r)
{
    const tw_image_payload *p = r->payload;
    if (p->format[0])
        return insert_image(t, r, p->height, p->width, p->format, p->data, p->size);
    size_t each = (size_t)p->height * (size_t)p->width * (size_t)p->channels;
    int rc = SQLITE_OK;
    for (int i = 0; rc == SQLITE_OK && i < p->n; i++) {
        uint8_t *png;
        size_t size;
        if (tw__png_encode(p->data + (size_t)i * each, p->height, p->width, p->channels, &png, &size))
            return SQLITE_NOMEM;
        rc = insert_image(t, r, p->height, p->width, "png", png, size);
        free(png);
    }
    return rc;
}

static int add_tensor(writer_thread *t, const tw_summary_record *r)
{
    const tw_tensor_payload *p = r->payload;
    GString *shape = g_string_new("[");
    for (int i = 0; i < p->ndim; i++)
        g_string_append_printf(shape, "%s%lld", i ? ", " : "", (long long)p->dims[i]);
    g_string_append_c(shape, ']');
    sqlite3_stmt *s = t->stmt[INSERT_TENSOR];
    sqlite3_bind_int64(s, 1, t->w->run_id);
    sqlite3_bind_text(s, 2, t->tags[r->tag].name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, r->step);
    sqlite3_bind_double(s, 4, r->wall_time);
    sqlite3_bind_text(s, 5, p->dtype, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 6, shape->str, -1, SQLITE_TRANSIENT);
    /* a zero-length blob binds as NULL, which the column refuses */
    sqlite3_bind_blob64(s, 7, p->size ? (const void *)p->data : "", p->size, SQLITE_STATIC);
    g_string_free(shape, TRUE);
    return run(s);
}

static int set_hparams(writer_thread *t, const tw_summary_record *r)
{
    const tw_hparams_payload *p = r->payload;
    sqlite3_stmt *s = t->stmt[SET_HPARAMS];
    sqlite3_bind_int64(s, 1, t->w->run_id);
    sqlite3_bind_text(s, 2, p->hparams_json, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, p->metrics_json, -1, SQLITE_STATIC);
    return run(s);
}

static int add_record(writer_thread *t, const tw_summary_record *r)
{
    switch ((tw_record_kind)r->kind) {
    case TW_RECORD_SCALAR: return add_scalar(t, r);
    case TW_RECORD_HISTOGRAM: return add_histogram(t, r);
    case TW_RECORD_TEXT:
    case TW_RECORD_GRAPH: return add_text(t, r);
    case TW_RECORD_TAG: return add_tag(t, r);
    case TW_RECORD_HPARAMS: return set_hparams(t, r);
    case TW_RECORD_IMAGE: return add_image(t, r);
    case TW_RECORD_TENSOR: return add_tensor(t, r);
    }
    return SQLITE_MISUSE;
}

/* ---- one wake's transaction ------------------------------------------------ */
static int write_records(writer_thread *t, const tw_record_buffer *b)
{
    int rc = SQLITE_OK;
    for (size_t i = 0; rc == SQLITE_OK && i < b->n; i++)
        rc = add_record(t, &b->items[i]);
    for (uint32_t i = 0; i < t->ndirty; i++) {
        tag_state *s = &t->tags[t->dirty[i]];
        if (rc == SQLITE_OK)
            rc = write_chunk(t, s);
        s->listed = false;
    }
    t->ndirty = 0;
    return rc;
}

static void write_batch(writer_thread *t, const tw_record_buffer *b)
{
    if (b->n == 0 || t->failed) {
        if (b->n && atomic_load(&t->w->lost_from_step) < 0)
            atomic_store(&t->w->lost_from_step, first_step(b));
        return;
    }
    char why[512];
    if (begin(t, atomic_load(&t->w->busy_limit_ms), why, sizeof why)) {
        fail(t, why, b);
        return;
    }
    int rc = write_records(t, b);
    if (rc == SQLITE_OK && (rc = run(t->stmt[COMMIT])) == SQLITE_OK)
        return;
    describe(t, rc, why, sizeof why);
    run(t->stmt[ROLLBACK]);
    fail(t, why, b);
}

static sqlite3_stmt *bind_finish(writer_thread *t)
{
    sqlite3_stmt *s = t->stmt[FINISH];
    sqlite3_bind_int64(s, 1, t->w->run_id);
    sqlite3_bind_text(s, 2, tw_run_status_name(t->w->close_status), -1, SQLITE_STATIC);
    sqlite3_bind_double(s, 3, wall_clock());
    sqlite3_bind_text(s, 4, t->w->close_reason, -1, SQLITE_STATIC);
    return s;
}

static void finish_run(writer_thread *t)
{
    record_loss(t, true);
    if (!t->db || t->w->run_id < 0 || t->w->annotate)
        return;
    sqlite3_stmt *s = bind_finish(t);
    char why[512], *message;
    if (run_alone(t, s, atomic_load(&t->w->busy_limit_ms), why, sizeof why) == 0)
        return;
    message = g_strdup_printf("%s: cannot record the end of run '%s': %s", t->w->path, t->w->run_name, why);
    tw__summary_fail(t->w, strdup(message));
    g_free(message);
}

/* ---- the TensorBoard event file ------------------------------------------------- */
/* Every tag's name, kept before the batch is written (image rows and the
 * event file name their tags). */
static int name_tags(writer_thread *t, const tw_record_buffer *b)
{
    for (size_t i = 0; i < b->n; i++) {
        const tw_summary_record *r = &b->items[i];
        if (r->kind != TW_RECORD_TAG)
            continue;
        tag_state *s = tag_at(t, r->tag);
        if (!s)
            return -1;
        free(s->name);
        if (!(s->name = strdup(r->payload)))
            return -1;
    }
    return 0;
}

static int mirror_image(tw_tb_writer *tb, const char *tag, const tw_summary_record *r)
{
    const tw_image_payload *p = r->payload;
    if (p->format[0])
        return tw_tb_write_image(tb, tag, r->step, r->wall_time, p->width, p->height, p->channels, p->data, p->size);
    size_t each = (size_t)p->height * (size_t)p->width * (size_t)p->channels;
    for (int i = 0; i < p->n; i++) {
        uint8_t *png;
        size_t size;
        if (tw__png_encode(p->data + (size_t)i * each, p->height, p->width, p->channels, &png, &size))
            return tw_error_set("%s: out of memory encoding an image", tw_tb_writer_path(tb));
        int rc = tw_tb_write_image(tb, tag, r->step, r->wall_time, p->width, p->height, p->channels, png, size);
        free(png);
        if (rc)
            return -1;
    }
    return 0;
}

static int mirror_record(writer_thread *t, const tw_summary_record *r)
{
    tw_tb_writer *tb = t->w->tb;
    const char *tag = r->kind == TW_RECORD_HPARAMS || r->kind == TW_RECORD_TAG ? NULL : t->tags[r->tag].name;
    switch ((tw_record_kind)r->kind) {
    case TW_RECORD_SCALAR: return tw_tb_write_scalar(tb, tag, r->step, r->wall_time, r->value);
    case TW_RECORD_HISTOGRAM: {
        tw_histogram_stats *stats = r->payload;
        tw_histogram h = {.step = r->step, .wall_time = r->wall_time, .count = (double)stats->count,
                          .min = stats->min, .max = stats->max, .sum = stats->sum,
                          .sum_squares = stats->sum_squares, .nbuckets = TW_HISTOGRAM_BUCKETS,
                          .buckets = stats->buckets};
        return tw_tb_write_histogram(tb, tag, &h);
    }
    case TW_RECORD_TEXT: return tw_tb_write_text(tb, tag, r->step, r->wall_time, r->payload);
    case TW_RECORD_IMAGE: return mirror_image(tb, tag, r);
    case TW_RECORD_HPARAMS: {
        const tw_hparams_payload *p = r->payload;
        return p->hparams_json ? tw_tb_write_hparams(tb, p->hparams_json, r->wall_time) : 0;
    }
    case TW_RECORD_GRAPH: /* one that is not a twb graph is left out of the event file alone */
        if (tw_tb_write_graph(tb, r->step, r->wall_time, r->payload) > 0)
            tw_error_clear();
        return tw_tb_writer_flush(tb) < 0 ? -1 : 0;
    case TW_RECORD_TAG: return 0;
    case TW_RECORD_TENSOR: {
        const tw_tensor_payload *p = r->payload;
        return tw_tb_write_tensor(tb, tag, r->step, r->wall_time, p->dtype, p->ndim, p->dims, p->data, p->size);
    }
    }
    return 0;
}

/* The batch into the event file too, flushed whole; the first failure is
 * the writer's error (training goes on) and the file is written no more. */
static void mirror_batch(writer_thread *t, const tw_record_buffer *b)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < b->n; i++)
        rc = mirror_record(t, &b->items[i]);
    if (rc == 0 && b->n)
        rc = tw_tb_writer_flush(t->w->tb);
    if (rc) {
        tw__summary_fail(t->w, g_strdup_printf("%s; the event file is written no more", tw_last_error()));
        tw_error_clear();
        tw_tb_writer_close(t->w->tb);
        t->w->tb = NULL;
    }
}

/* ---- the thread --------------------------------------------------------------- */
static void thread_free(writer_thread *t)
{
    for (int i = 0; i < NSTATEMENTS && !t->shared_statements; i++)
        sqlite3_finalize(t->stmt[i]);
    for (uint32_t i = 0; i < t->ntags; i++) {
        free(t->tags[i].chunk);
        free(t->tags[i].name);
    }
    free(t->tags);
    free(t->dirty);
    free(t->spare.items);
    g_free(t);
}

static void *thread_main(void *arg)
{
    writer_thread *t = arg;
    tw_summary_queue *q = &t->w->queue;
    pthread_setname_np(pthread_self(), "twb-summary"); /* as top and gdb show it */
    tw_record_buffer mine = {.items = malloc(q->pending.cap * sizeof *mine.items), .cap = q->pending.cap};
    for (bool stopping = false; !stopping;) {
        uint64_t seq;
        tw__queue_take(q, TW_SUMMARY_WAKE_MS, &mine, &seq, &stopping);
        if (name_tags(t, &mine))
            fail(t, "out of memory", &mine);
        write_batch(t, &mine);
        if (t->w->tb)
            mirror_batch(t, &mine);
        tw__records_clear(&mine);
        if (stopping)
            finish_run(t);
        else
            record_loss(t, false);
        tw__queue_mark_done(q, seq);
    }
    free(mine.items);
    if (t->w->tb && tw_tb_writer_close(t->w->tb))
        tw__summary_fail(t->w, strdup(tw_last_error()));
    t->w->tb = NULL;
    thread_free(t);
    return NULL;
}

static int prepare_all(sqlite3 *db, const char *path, sqlite3_stmt **stmt)
{
    for (int i = 0; i < NSTATEMENTS; i++)
        if (sqlite3_prepare_v3(db, statement_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &stmt[i], NULL) != SQLITE_OK)
            return tw__store_sqlite_error(db, path, "cannot prepare the summary writer's statements");
    return 0;
}

static int prepare(writer_thread *t)
{
    return prepare_all(t->db, t->w->path, t->stmt);
}

int tw__summary_thread_start(tw_summary_writer *w)
{
    writer_thread *t = g_new0(writer_thread, 1);
    t->w = w;
    t->db = w->db;
    t->busy_ms = -1;
    t->failed = !t->db;
    if (t->db && prepare(t)) {
        thread_free(t);
        return -1;
    }
    /* Signals (Ctrl+C) belong to the training thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&w->thread, NULL, thread_main, t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        thread_free(t);
        return tw_error_set("summary writer: cannot start its thread: %s", g_strerror(rc));
    }
    return 0;
}

/* ---- without a thread (tw__summary_writer_open_inline) ------------------------ */
tw_summary_statements *tw__summary_statements_new(sqlite3 *db, const char *path)
{
    tw_summary_statements *s = g_new0(tw_summary_statements, 1);
    if (prepare_all(db, path, s->stmt)) {
        tw__summary_statements_free(s);
        return NULL;
    }
    return s;
}

void tw__summary_statements_free(tw_summary_statements *s)
{
    for (int i = 0; s && i < NSTATEMENTS; i++)
        sqlite3_finalize(s->stmt[i]);
    g_free(s);
}

/* Every statement binds all its parameters at each use and is reset after
 * it, so the writers of one connection can share them. */
int tw__summary_inline_start(tw_summary_writer *w, tw_summary_statements *statements)
{
    writer_thread *t = g_new0(writer_thread, 1);
    t->w = w;
    t->db = w->db;
    t->shared_statements = true;
    memcpy(t->stmt, statements->stmt, sizeof t->stmt);
    t->spare.cap = w->queue.pending.cap;
    if (!(t->spare.items = malloc(t->spare.cap * sizeof *t->spare.items))) {
        thread_free(t);
        return tw_error_set("summary writer: out of memory");
    }
    w->inline_state = t;
    return 0;
}

/* The queued records into the caller's transaction. A failure leaves that
 * transaction for the caller to roll back; the writer drops records from
 * then on, as its thread would. */
int tw__summary_inline_write(tw_summary_writer *w)
{
    writer_thread *t = w->inline_state;
    tw_record_buffer *mine = &t->spare;
    uint64_t seq;
    bool stopping;
    tw__queue_take(&w->queue, 0, mine, &seq, &stopping);
    int rc = SQLITE_OK;
    t->failed |= atomic_load(&w->error) != NULL;
    if (mine->n && !t->failed) {
        if (name_tags(t, mine))
            rc = SQLITE_NOMEM;
        if (rc == SQLITE_OK)
            rc = write_records(t, mine);
        if (rc != SQLITE_OK) {
            char why[512];
            describe(t, rc, why, sizeof why);
            fail(t, why, mine);
        }
    }
    tw__records_clear(mine);
    return t->failed ? tw_error_set("%s", atomic_load(&w->error)) : 0;
}

int tw__summary_inline_finish(tw_summary_writer *w)
{
    writer_thread *t = w->inline_state;
    int rc = tw__summary_inline_write(w);
    if (!rc && !w->annotate && run(bind_finish(t)) != SQLITE_OK)
        rc = tw__store_sqlite_error(t->db, w->path, "cannot record the end of the run");
    thread_free(t);
    w->inline_state = NULL;
    return rc;
}
