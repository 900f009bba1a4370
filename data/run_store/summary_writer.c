/* The summary writer's calls (tw/summary.h): opening a run, the enqueueing
 * calls of the training thread, flush and close. The writing itself is the
 * thread's (summary_thread.c). */
#include <errno.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "summary_internal.h"
#include "tw/tfevents.h"

static double wall_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* the vDSO: no system call */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tw__summary_fail(tw_summary_writer *w, char *message)
{
    char *none = NULL;
    if (!atomic_compare_exchange_strong(&w->error, &none, message))
        free(message);
}

/* ---- creating the run ------------------------------------------------------ */
/* 1 when the run exists (its id, and whether it is still running), 0 when
 * not, -1 when the file cannot be read. */
static int find_run(sqlite3 *db, const char *name, int64_t *id, bool *running)
{
    sqlite3_stmt *find = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT id, status = 'running' FROM runs WHERE name = ?1", -1, &find, NULL);
    if (rc == SQLITE_OK)
        sqlite3_bind_text(find, 1, name, -1, SQLITE_STATIC);
    rc = rc == SQLITE_OK ? sqlite3_step(find) : rc;
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(find, 0);
        *running = sqlite3_column_int(find, 1);
    }
    sqlite3_finalize(find);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

static int taken(const tw_summary_writer *w)
{
    return tw_error_set("%s: a run named '%s' is already in the file (append to it, or choose another name)", w->path,
                        w->run_name);
}

/* Either NULL leaves the column as it is (a resumed run keeps its model). */
static const char *const create_sql =
    "INSERT INTO runs (name, status, start_time, host, pid, process_start_time, model_json, hparams_json, notes) "
    "VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6, ?7, coalesce(?8, ''))";
static const char *const resume_sql =
    "UPDATE runs SET status = 'running', end_time = NULL, host = ?3, pid = ?4, process_start_time = ?5, "
    "model_json = coalesce(?6, model_json), hparams_json = coalesce(?7, hparams_json), notes = coalesce(?8, notes) "
    "WHERE name = ?1";

static int write_run_row(tw_summary_writer *w, const tw_summary_run_options *o, bool resume)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(w->db, resume ? resume_sql : create_sql, -1, &stmt, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(stmt, 1, w->run_name, -1, SQLITE_STATIC);
        sqlite3_bind_double(stmt, 2, wall_clock());
        sqlite3_bind_text(stmt, 3, tw__store_host(), -1, SQLITE_STATIC);
        sqlite3_bind_int64(stmt, 4, getpid());
        sqlite3_bind_int64(stmt, 5, tw__process_start_time(getpid()));
        sqlite3_bind_text(stmt, 6, o ? o->model_json : NULL, -1, SQLITE_STATIC);
        sqlite3_bind_text(stmt, 7, o ? o->hparams_json : NULL, -1, SQLITE_STATIC);
        sqlite3_bind_text(stmt, 8, o ? o->notes : NULL, -1, SQLITE_STATIC);
        rc = sqlite3_step(stmt);
    }
    sqlite3_finalize(stmt);
    if (rc == SQLITE_CONSTRAINT) /* another process took the name since we looked */
        return 1;
    return rc == SQLITE_DONE ? 0 : tw__store_sqlite_error(w->db, w->path, "cannot create the run");
}

/* A resumed run's tags go back into the queue's table under the kinds they
 * have, so a call with another kind fails at once, as for a new tag. */
static int declare_tags(tw_summary_writer *w)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(w->db, "SELECT name, kind FROM tags WHERE run_id = ?1 ORDER BY id", -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        sqlite3_bind_int64(stmt, 1, w->run_id);
    while (rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        int kind = tw__series_kind_parse((const char *)sqlite3_column_text(stmt, 1));
        rc = kind < 0 || tw__queue_declare_tag(&w->queue, (const char *)sqlite3_column_text(stmt, 0), kind)
                 ? SQLITE_ERROR
                 : SQLITE_OK;
    }
    sqlite3_finalize(stmt);
    return rc == SQLITE_DONE ? 0 : tw__store_sqlite_error(w->db, w->path, "cannot read the run's tags");
}

/* Whether the run may be written: 1 (message set) when its name is taken,
 * or when appending to a run another writer still has open (the opening
 * already marked dead writers' runs interrupted). */
static int refuse(const tw_summary_writer *w, const tw_summary_run_options *o, bool exists, bool running)
{
    if (!exists && o && o->annotate)
        tw_error_set("%s: no run named '%s' to add the records to", w->path, w->run_name);
    else if (exists && !(o && (o->append || o->annotate)))
        taken(w);
    else if (exists && running)
        tw_error_set("%s: run '%s' is still being written by another writer; append to it once that one has closed "
                     "it",
                     w->path, w->run_name);
    else
        return 0;
    return 1;
}

/* 1: refused (message set); -1: the file refused the writes. */
static int create_run(tw_summary_writer *w, const tw_summary_run_options *o)
{
    /* An inline writer's run is created within the caller's transaction. */
    if (tw__store_exec(w->db, w->path, w->shared_db ? "SAVEPOINT tw_create_run" : "BEGIN IMMEDIATE"))
        return -1;
    int64_t id = -1;
    bool running = false;
    int exists = find_run(w->db, w->run_name, &id, &running);
    for (int k = 2; exists > 0 && o && o->unique && k < 1000000; k++) { /* NAME-2, NAME-3, ... */
        char *base = g_strdup(w->run_name), *dash = strrchr(base, '-');
        if (k > 2 && dash) /* the last try's suffix off */
            *dash = '\0';
        g_free(w->run_name);
        w->run_name = g_strdup_printf("%s-%d", base, k);
        g_free(base);
        exists = find_run(w->db, w->run_name, &id, &running);
    }
    int rc = exists < 0 ? tw__store_sqlite_error(w->db, w->path, "cannot read the runs") : refuse(w, o, exists, running);
    if (!rc && !(o && o->annotate))
        rc = write_run_row(w, o, exists);
    if (!rc) {
        w->run_id = exists ? id : sqlite3_last_insert_rowid(w->db);
        if (exists)
            rc = declare_tags(w);
        if (!rc && !tw__store_exec(w->db, w->path, w->shared_db ? "RELEASE tw_create_run" : "COMMIT"))
            return 0;
        w->run_id = -1;
        rc = rc ? rc : -1;
    }
    if (rc == 1 && exists == 0 && !(o && o->annotate)) /* another process took the name since we looked */
        taken(w);
    sqlite3_exec(w->db, w->shared_db ? "ROLLBACK TO tw_create_run; RELEASE tw_create_run" : "ROLLBACK", NULL, NULL,
                 NULL);
    return rc;
}

/* The file is a run database that cannot be written (read-only, full,
 * locked): NULL when it cannot even be read or the name is taken, else 0
 * and the writer goes on without a connection, logging nothing. */
static int check_unwritable(tw_summary_writer *w, const tw_summary_run_options *o)
{
    char *why = g_strdup(tw_last_error());
    /* A new file in a folder we cannot write to: as a read-only file. */
    char *folder = g_path_get_dirname(w->path);
    bool cannot_create = !g_file_test(w->path, G_FILE_TEST_EXISTS) && g_file_test(folder, G_FILE_TEST_IS_DIR);
    if (cannot_create && access(folder, W_OK) != 0) {
        g_free(why);
        why = g_strdup_printf("%s: cannot create the file in folder '%s': %s", w->path, folder, g_strerror(errno));
    }
    g_free(folder);
    sqlite3 *db = cannot_create ? NULL : tw__store_connect(w->path, true);
    bool running = false;
    int exists = db ? find_run(db, w->run_name, &(int64_t){0}, &running) : cannot_create ? 0 : -1;
    sqlite3_close(db);
    if (exists > 0 && o && o->unique) /* nothing is written: no other name to find */
        exists = 0;
    int rc = 0;
    if (exists < 0)
        rc = tw_error_set("%s", why);
    else if (refuse(w, o, exists, running))
        rc = -1;
    else
        tw__summary_fail(w, g_strdup_printf("%s; the logs of run '%s' are not written", why, w->run_name));
    g_free(why);
    return rc;
}

static char *writer_path(const char *db_path)
{
    if (db_path)
        return g_strdup(db_path);
    char *path = tw_run_store_default_path(), *folder = g_path_get_dirname(path);
    if (g_mkdir_with_parents(folder, 0700)) {
        tw_error_set("%s: cannot create the folder: %s", folder, g_strerror(errno));
        g_free(path);
        path = NULL;
    }
    g_free(folder);
    return path;
}

static void writer_free(tw_summary_writer *w)
{
    tw_tb_writer_close(w->tb); /* a writer whose thread never started */
    g_free(w->tb_path);
    g_free(w->close_reason);
    if (!w->shared_db)
        sqlite3_close(w->db);
    tw__queue_destroy(&w->queue);
    g_free(w->path);
    g_free(w->run_name);
    free(atomic_load(&w->error));
    g_free(w);
}

tw_summary_writer *tw_summary_writer_open(const char *db_path, const char *run_name,
                                          const tw_summary_run_options *options)
{
    if (!run_name || !*run_name) {
        tw_error_set("summary writer: the run needs a name");
        return NULL;
    }
    tw_summary_writer *w = g_new0(tw_summary_writer, 1);
    w->run_id = -1;
    w->lost_from_step = -1;
    w->busy_limit_ms = TW_SUMMARY_BUSY_LIMIT_MS;
    w->run_name = g_strdup(run_name);
    w->annotate = options && options->annotate;
    w->path = writer_path(db_path);
    if (!w->path || tw__queue_init(&w->queue)) {
        writer_free(w);
        return NULL;
    }
    /* The event file first: a folder that cannot be made leaves no run behind. */
    if (options && options->tfevents_dir) {
        w->tb = tw_tb_writer_open(options->tfevents_dir);
        w->tb_path = w->tb ? g_strdup(tw_tb_writer_path(w->tb)) : NULL;
        if (!w->tb) {
            writer_free(w);
            return NULL;
        }
    }
    w->db = tw__store_connect(w->path, false);
    int rc = w->db ? create_run(w, options) : -1;
    if (rc < 0) { /* the failed connection's or transaction's message */
        sqlite3_close(w->db);
        w->db = NULL;
        rc = check_unwritable(w, options);
    }
    /* The hyperparameters reach the event file through the queue, as the rest. */
    if (!rc && w->tb && options->hparams_json)
        rc = tw_summary_hparams(w, options->hparams_json, NULL);
    if (rc || tw__summary_thread_start(w)) {
        writer_free(w);
        return NULL;
    }
    return w;
}

tw_summary_writer *tw__summary_writer_open_inline(sqlite3 *db, const char *db_path, const char *run_name, bool append,
                                                 tw_summary_statements *statements)
{
    tw_summary_writer *w = g_new0(tw_summary_writer, 1);
    w->run_id = -1;
    w->lost_from_step = -1;
    w->busy_limit_ms = TW_SUMMARY_BUSY_LIMIT_MS;
    w->run_name = g_strdup(run_name);
    w->path = g_strdup(db_path);
    w->db = db;
    w->shared_db = true;
    int rc = tw__queue_init(&w->queue);
    if (!rc)
        rc = create_run(w, append ? &(tw_summary_run_options){.append = true} : NULL);
    if (rc || tw__summary_inline_start(w, statements)) {
        writer_free(w);
        return NULL;
    }
    return w;
}

const char *tw_summary_writer_tfevents_path(const tw_summary_writer *w)
{
    return w->tb_path;
}

/* ---- the calls ------------------------------------------------------------- */
static int bad_call(const char *call, const tw_summary_writer *w, const char *tag)
{
    return tw_error_set("%s: %s is NULL", call, !w ? "the writer" : !tag ? "the tag" : "the value");
}

int tw_summary_scalar(tw_summary_writer *w, const char *tag, double value, int64_t step)
{
    if (!w || !tag)
        return bad_call("tw_summary_scalar", w, tag);
    return tw__queue_scalar(&w->queue, tag, value, step, wall_clock());
}

int tw_summary_histogram(tw_summary_writer *w, const char *tag, tw_tensor *values, int64_t step)
{
    if (!w || !tag || !values)
        return bad_call("tw_summary_histogram", w, tag);
    tw_histogram_stats *h = malloc(sizeof *h);
    if (!h)
        return tw_error_set("tw_summary_histogram: out of memory");
    if (tw__histogram_compute(values, h)) {
        free(h);
        return -1;
    }
    return tw__queue_push(&w->queue, TW_RECORD_HISTOGRAM, tag, step, wall_clock(), h);
}

static int push_text(const char *call, tw_record_kind kind, tw_summary_writer *w, const char *tag, const char *text,
                     int64_t step)
{
    if (!w || !tag || !text)
        return bad_call(call, w, tag);
    char *copy = strdup(text);
    if (!copy)
        return tw_error_set("%s: out of memory", call);
    return tw__queue_push(&w->queue, kind, tag, step, wall_clock(), copy);
}

int tw_summary_text(tw_summary_writer *w, const char *tag, const char *text, int64_t step)
{
    return push_text("tw_summary_text", TW_RECORD_TEXT, w, tag, text, step);
}

int tw_summary_graph(tw_summary_writer *w, const char *tag, const char *graph_json, int64_t step)
{
    return push_text("tw_summary_graph", TW_RECORD_GRAPH, w, tag, graph_json, step);
}

int tw_summary_hparams(tw_summary_writer *w, const char *hparams_json, const char *metrics_json)
{
    if (!w)
        return bad_call("tw_summary_hparams", w, "");
    tw_hparams_payload *p = calloc(1, sizeof *p);
    if (!p || (hparams_json && !(p->hparams_json = strdup(hparams_json))) ||
        (metrics_json && !(p->metrics_json = strdup(metrics_json)))) {
        if (p)
            free(p->hparams_json);
        free(p);
        return tw_error_set("tw_summary_hparams: out of memory");
    }
    return tw__queue_push(&w->queue, TW_RECORD_HPARAMS, NULL, 0, wall_clock(), p);
}

int tw_summary_metric(tw_summary_writer *w, const char *tag, tw_metric *metric, int64_t step)
{
    if (!w || !tag || !metric)
        return bad_call("tw_summary_metric", w, tag);
    double value = tw_metric_result(metric);
    tw_metric_reset_state(metric);
    return tw_summary_scalar(w, tag, value, step);
}

int tw_summary_flush(tw_summary_writer *w)
{
    if (!w)
        return bad_call("tw_summary_flush", w, "");
    if (w->inline_state)
        return tw__summary_inline_write(w);
    tw__queue_flush(&w->queue, false);
    return 0;
}

int tw_summary_writer_close(tw_summary_writer *w, tw_run_status status)
{
    return tw_summary_writer_close_with_reason(w, status, NULL);
}

int tw_summary_writer_close_with_reason(tw_summary_writer *w, tw_run_status status, const char *reason)
{
    if (!w)
        return 0;
    w->close_status = status;
    w->close_reason = reason && *reason ? g_strdup(reason) : NULL;
    if (w->inline_state) {
        int rc = tw__summary_inline_finish(w);
        writer_free(w);
        return rc;
    }
    tw__queue_flush(&w->queue, true);
    pthread_join(w->thread, NULL);
    const char *error = atomic_load(&w->error);
    int rc = error ? tw_error_set("%s", error) : 0;
    writer_free(w);
    return rc;
}

const char *tw_summary_writer_error(const tw_summary_writer *w)
{
    return w ? atomic_load(&w->error) : NULL;
}

int64_t tw_summary_writer_lost_from_step(const tw_summary_writer *w)
{
    return w ? atomic_load(&w->lost_from_step) : -1;
}

int64_t tw_summary_writer_run_id(const tw_summary_writer *w)
{
    return w ? w->run_id : -1;
}

const char *tw_summary_writer_run_name(const tw_summary_writer *w)
{
    return w ? w->run_name : NULL;
}

void tw__summary_writer_set_busy_limit(tw_summary_writer *w, int ms)
{
    atomic_store(&w->busy_limit_ms, ms);
}
