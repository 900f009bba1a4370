/* The dashboard data's reader thread (dashboard_reader.h).
 *
 * The thread owns a read-only store handle and everything read from it; it
 * wakes every 50 ms (a poll: runs, tags, the watched series' tails), within
 * 3 ms of a write to the file or its write-ahead log (inotify, on the
 * thread's own main context: a committed point need not wait for the next
 * poll), or at once when asked for a view or histograms (only the
 * requests). What a
 * pass finds goes into a batch; a batch not yet applied by the main loop
 * absorbs the next one, so at most one idle callback is ever pending and a
 * stalled main loop holds at most one batch. */
#include "dashboard_reader.h"

#include <glib-unix.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <tw/error.h>

#include "series_view.h"

#define POLL_INTERVAL (50 * G_TIME_SPAN_MILLISECOND)
#define WRITE_DELAY (3 * G_TIME_SPAN_MILLISECOND) /* after a write, the poll waits for the rest of the commit */
#define RETRY_INTERVAL G_TIME_SPAN_SECOND  /* reopening a file, or reading a view, that failed */
/* A file this new that cannot be opened is one being created (an empty
 * file before its writer's first transaction, as when a log directory's
 * follower starts): "no runs yet", tried again at the next poll. */
#define NEW_FILE_GRACE (2 * G_TIME_SPAN_SECOND)
#define TAIL_BATCH 65536                   /* points read per call while tailing */
#define TAIL_BUDGET (25 * G_TIME_SPAN_MILLISECOND) /* a poll's reading, the rest next poll */
#define END_ATTEMPTS 3
#define STREAM_INTERVAL (30 * G_TIME_SPAN_MILLISECOND)
#define VIEW_BUDGET POLL_INTERVAL /* a turn's view reading; the rest after the next poll */

/* ---- runs as listed ------------------------------------------------------------ */

static tw_run_info run_info_copy(const tw_run_info *run)
{
    tw_run_info copy = *run;
    copy.name = g_strdup(run->name);
    copy.host = g_strdup(run->host);
    copy.model_json = g_strdup(run->model_json);
    copy.hparams_json = g_strdup(run->hparams_json);
    copy.metrics_json = g_strdup(run->metrics_json);
    copy.notes = g_strdup(run->notes);
    copy.logs_lost_reason = g_strdup(run->logs_lost_reason);
    copy.failure_reason = g_strdup(run->failure_reason);
    copy.color = g_strdup(run->color);
    copy.sweep = g_strdup(run->sweep);
    return copy;
}

static tw_run_info *runs_copy(const tw_run_info *runs, int n)
{
    tw_run_info *copy = g_new0(tw_run_info, MAX(n, 1));
    for (int i = 0; i < n; i++)
        copy[i] = run_info_copy(&runs[i]);
    return copy;
}

static gboolean same_double(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

static gboolean run_equal(const tw_run_info *a, const tw_run_info *b)
{
    return a->id == b->id && a->status == b->status && same_double(a->start_time, b->start_time) &&
           same_double(a->end_time, b->end_time) && a->pid == b->pid &&
           a->logs_lost_from_step == b->logs_lost_from_step && !g_strcmp0(a->name, b->name) &&
           !g_strcmp0(a->host, b->host) && !g_strcmp0(a->model_json, b->model_json) &&
           !g_strcmp0(a->hparams_json, b->hparams_json) && !g_strcmp0(a->metrics_json, b->metrics_json) &&
           !g_strcmp0(a->notes, b->notes) && !g_strcmp0(a->logs_lost_reason, b->logs_lost_reason) &&
           !g_strcmp0(a->failure_reason, b->failure_reason) && !g_strcmp0(a->color, b->color) &&
           a->pinned == b->pinned && !g_strcmp0(a->sweep, b->sweep);
}

/* ---- the reader thread's state ------------------------------------------------ */

/* A series the thread reads: its view (columns over the last requested
 * range plus the whole series' extent) and the cursor the view is exact
 * up to; watched, the points after the cursor are reduced into it. */
typedef struct {
    gint64 tag_id;
    gboolean watched, exact; /* exact: view and cursor agree */
    tw_series_cursor cursor;
    TwSeriesView view;
    int histogram_max;       /* -1: no histograms asked for */
    gint64 histogram_count;  /* records when last read */
    char *error;             /* why the last read failed (a damaged chunk), or NULL */
    gboolean retrying;       /* the view that failed is asked again every RETRY_INTERVAL */
    tw_view_request failed;
    gint64 retry_at;
} series_state;

/* A run's tags as last listed. */
typedef struct {
    tw_tag_info *tags;
    int n;
    tw_run_status status;
    double end_time;
} run_tags;

typedef struct {
    tw_dashboard_shared *shared;
    char *path;
    tw_run_store *store;
    dev_t device;
    ino_t inode;
    char *error;
    gint64 retry_at;
    ino_t seen_inode; /* the file the poll saw first appear at seen_at */
    gint64 seen_at;
    tw_run_info *runs;
    int n_runs;
    tw_tag_table *tags;
    GHashTable *run_tags;   /* run id -> run_tags */
    GHashTable *tag_counts; /* tag id -> records (histograms), for re-reading watched ones */
    GHashTable *series;     /* tag id -> series_state */
    GHashTable *views_waiting; /* tag id -> tw_view_request: asked for, not yet read */
    gint64 next_poll;
    /* The file's data version when the last poll read it all (-1: not
     * yet): a poll finding it unchanged has nothing new to read. */
    gint64 data_version;
    gboolean tail_unfinished; /* the last tail ran out of time: more to read */
    int inotify; /* the file's folder, for writes to the file and its log; -1 */
    GSource *inotify_source;
} reader;

static void run_tags_free(run_tags *t)
{
    tw_tag_info_free(t->tags, t->n);
    g_free(t);
}

static void series_state_free(series_state *s)
{
    tw_series_view_clear(&s->view);
    g_free(s->error);
    g_free(s);
}

static series_state *series_get(reader *r, gint64 tag_id)
{
    series_state *s = g_hash_table_lookup(r->series, &tag_id);
    if (!s) {
        s = g_new0(series_state, 1);
        s->tag_id = tag_id;
        s->histogram_max = -1;
        s->view = (TwSeriesView){.axis = TW_AXIS_STEP, .first_x = NAN, .last_x = NAN, .min_value = NAN,
                                 .max_value = NAN};
        g_hash_table_insert(r->series, tw_id_key_new(tag_id), s);
    }
    return s;
}

static void set_error(reader *r, tw_dashboard_batch *b, const char *message)
{
    if (!g_strcmp0(r->error, message))
        return;
    g_free(r->error);
    r->error = g_strdup(message);
    g_free(b->error);
    b->has_error = TRUE;
    b->error = g_strdup(message);
}

/* The run and tag a tag id belongs to, as last listed; NULL when unknown. */
static void find_tag(reader *r, gint64 tag_id, const char **run, const char **tag)
{
    *run = *tag = NULL;
    for (int i = 0; i < r->n_runs && !*tag; i++) {
        run_tags *t = g_hash_table_lookup(r->run_tags, &r->runs[i].id);
        for (int k = 0; t && k < t->n && !*tag; k++)
            if (t->tags[k].id == tag_id)
                *run = r->runs[i].name, *tag = t->tags[k].name;
    }
}

/* A series could not be read (a damaged chunk): it is marked with a message
 * naming the file, the run and the tag before the store's own (which names
 * the chunk), and the rest of the dashboard reads on. The store's message
 * may begin with the path or "run database": the path is said once. */
static void series_failed(reader *r, series_state *s, tw_dashboard_batch *b, const char *message)
{
    const char *rest = message && *message ? message : "unknown error";
    size_t n = strlen(r->path);
    if (!strncmp(rest, r->path, n) && !strncmp(rest + n, ": ", 2))
        rest += n + 2;
    else if (g_str_has_prefix(rest, "run database: "))
        rest += strlen("run database: ");
    const char *run, *tag;
    find_tag(r, s->tag_id, &run, &tag);
    char *text = run ? g_strdup_printf("%s: run “%s”, tag “%s”: %s", r->path, run, tag, rest)
                     : g_strdup_printf("%s: tag %" G_GINT64_FORMAT ": %s", r->path, s->tag_id, rest);
    if (!g_strcmp0(text, s->error)) { /* said already */
        g_free(text);
        return;
    }
    g_free(s->error);
    s->error = text;
    g_hash_table_replace(b->series_errors, tw_id_key_new(s->tag_id), g_strdup(text));
}

/* A series read again in full (a view's columns, all its histograms): its
 * mark goes. Reading its extent or its tail does not clear it, since those
 * do not decode the chunks before. */
static void series_read(series_state *s, tw_dashboard_batch *b)
{
    if (!s->error)
        return;
    g_clear_pointer(&s->error, g_free);
    g_hash_table_replace(b->series_errors, tw_id_key_new(s->tag_id), g_strdup(""));
}

/* Forget the file: everything read from it goes, the main loop too. */
static void close_file(reader *r, tw_dashboard_batch *b)
{
    g_clear_pointer(&r->store, tw_run_store_close);
    r->data_version = -1;
    r->tail_unfinished = FALSE;
    tw_run_info_free(r->runs, r->n_runs);
    r->runs = NULL;
    r->n_runs = 0;
    g_clear_pointer(&r->tags, tw_tag_table_free);
    g_hash_table_remove_all(r->run_tags);
    g_hash_table_remove_all(r->tag_counts);
    g_hash_table_remove_all(r->series);
    g_hash_table_remove_all(r->views_waiting);
    b->reset = TRUE;
    tw_run_info_free(b->runs, b->n_runs);
    b->has_runs = TRUE;
    b->runs = NULL;
    b->n_runs = 0;
    tw_tag_table_free(b->tags);
    b->tags = g_new0(tw_tag_table, 1);
    b->tags->names = g_new0(char *, 1);
}

static void open_file(reader *r, tw_dashboard_batch *b, const GStatBuf *st)
{
    tw_error_clear();
    r->store = tw_run_store_open(r->path, TW_STORE_READ_ONLY);
    if (!r->store) {
        gint64 now = g_get_monotonic_time();
        if (st->st_ino != r->seen_inode) {
            r->seen_inode = st->st_ino;
            r->seen_at = now;
        }
        gboolean being_created = now - r->seen_at < NEW_FILE_GRACE;
        set_error(r, b, being_created ? NULL : tw_last_error());
        r->retry_at = being_created ? now : now + RETRY_INTERVAL;
        return;
    }
    r->device = st->st_dev;
    r->inode = st->st_ino;
    set_error(r, b, NULL);
}

/* ---- runs and tags -------------------------------------------------------------- */

static const tw_run_info *find_run(const tw_run_info *runs, int n, gint64 id)
{
    for (int i = 0; i < n; i++)
        if (runs[i].id == id)
            return &runs[i];
    return NULL;
}

static gboolean tags_same(const run_tags *a, const tw_tag_info *tags, int n)
{
    if (a->n != n)
        return FALSE;
    for (int i = 0; i < n; i++)
        if (a->tags[i].id != tags[i].id || a->tags[i].kind != tags[i].kind || strcmp(a->tags[i].name, tags[i].name))
            return FALSE;
    return TRUE;
}

/* Lists a run's tags again when it has changed since, or is running (tags
 * come and go with its writer) and the file has changed; *changed says
 * whether they differ. */
static int refresh_run_tags(reader *r, const tw_run_info *run, const tw_run_info *before, gboolean file_changed,
                            gboolean *changed)
{
    run_tags *known = g_hash_table_lookup(r->run_tags, &run->id);
    if (known && (run->status != TW_RUN_RUNNING || !file_changed) && before && run_equal(run, before))
        return 0;
    tw_tag_info *tags;
    int n;
    if (tw_run_store_list_tags(r->store, run->id, &tags, &n))
        return -1;
    for (int i = 0; i < n; i++)
        g_hash_table_replace(r->tag_counts, tw_id_key_new(tags[i].id), tw_id_key_new(tags[i].count));
    if (!known || !tags_same(known, tags, n))
        *changed = TRUE;
    run_tags *fresh = g_new(run_tags, 1);
    *fresh = (run_tags){tags, n, run->status, run->end_time};
    g_hash_table_replace(r->run_tags, tw_id_key_new(run->id), fresh);
    return 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static tw_tag_table *build_tag_table(reader *r)
{
    GHashTable *kinds = g_hash_table_new(g_str_hash, g_str_equal); /* name -> kind + 1 */
    for (int i = 0; i < r->n_runs; i++) {
        run_tags *t = g_hash_table_lookup(r->run_tags, &r->runs[i].id);
        for (int k = 0; t && k < t->n; k++)
            if (!g_hash_table_contains(kinds, t->tags[k].name))
                g_hash_table_insert(kinds, t->tags[k].name, GINT_TO_POINTER(t->tags[k].kind + 1));
    }
    tw_tag_table *table = g_new0(tw_tag_table, 1);
    table->n_runs = r->n_runs;
    table->n_names = (int)g_hash_table_size(kinds);
    table->names = (char **)g_hash_table_get_keys_as_array(kinds, NULL);
    qsort(table->names, (size_t)table->n_names, sizeof(char *), compare_names);
    table->kinds = g_new(tw_series_kind, MAX(table->n_names, 1));
    GHashTable *position = g_hash_table_new(g_str_hash, g_str_equal);
    for (int i = 0; i < table->n_names; i++) {
        table->kinds[i] = GPOINTER_TO_INT(g_hash_table_lookup(kinds, table->names[i])) - 1;
        g_hash_table_insert(position, table->names[i], GINT_TO_POINTER(i));
    }
    table->ids = g_new(gint64, MAX((size_t)table->n_names * (size_t)table->n_runs, 1));
    for (size_t i = 0; i < (size_t)table->n_names * (size_t)table->n_runs; i++)
        table->ids[i] = -1;
    for (int i = 0; i < r->n_runs; i++) {
        run_tags *t = g_hash_table_lookup(r->run_tags, &r->runs[i].id);
        for (int k = 0; t && k < t->n; k++) {
            int at = GPOINTER_TO_INT(g_hash_table_lookup(position, t->tags[k].name));
            if (table->ids[(size_t)at * table->n_runs + i] < 0)
                table->ids[(size_t)at * table->n_runs + i] = t->tags[k].id;
        }
    }
    /* The names still point into run_tags: own them. */
    for (int i = 0; i < table->n_names; i++)
        table->names[i] = g_strdup(table->names[i]);
    g_hash_table_unref(position);
    g_hash_table_unref(kinds);
    return table;
}

/* Drops the tags of runs no longer listed. */
static void forget_gone_runs(reader *r, const tw_run_info *runs, int n)
{
    GHashTableIter iter;
    gpointer key;
    g_hash_table_iter_init(&iter, r->run_tags);
    while (g_hash_table_iter_next(&iter, &key, NULL))
        if (!find_run(runs, n, *(gint64 *)key))
            g_hash_table_iter_remove(&iter);
}

/* With the file as the last poll read it, only a running run can read
 * differently: its writer may have died (listed as interrupted). Those few
 * are read alone; one that cannot be read counts as changed. */
static gboolean running_runs_changed(reader *r)
{
    for (int i = 0; i < r->n_runs; i++) {
        if (r->runs[i].status != TW_RUN_RUNNING)
            continue;
        tw_run_info now;
        if (tw_run_store_get_run(r->store, r->runs[i].name, &now))
            return TRUE;
        gboolean changed = !run_equal(&now, &r->runs[i]);
        tw_run_info_clear(&now);
        if (changed)
            return TRUE;
    }
    return FALSE;
}

/* Runs and tags, into the batch when they changed; with the file
 * unchanged, only when a running run's writer died, and not their tags. */
static int poll_runs(reader *r, tw_dashboard_batch *b, gboolean file_changed)
{
    if (!file_changed && !running_runs_changed(r))
        return 0;
    tw_error_clear();
    tw_run_info *runs;
    int n;
    if (tw_run_store_list_runs(r->store, &runs, &n))
        return -1;
    gboolean runs_changed = n != r->n_runs;
    for (int i = 0; !runs_changed && i < n; i++)
        runs_changed = !run_equal(&runs[i], &r->runs[i]);
    gboolean tags_changed = runs_changed;
    int status = 0;
    for (int i = 0; status == 0 && i < n; i++)
        status = refresh_run_tags(r, &runs[i], find_run(r->runs, r->n_runs, runs[i].id), file_changed,
                                  &tags_changed);
    if (status || !runs_changed) {
        tw_run_info_free(runs, n);
    } else {
        forget_gone_runs(r, runs, n);
        tw_run_info_free(r->runs, r->n_runs);
        r->runs = runs;
        r->n_runs = n;
        tw_run_info_free(b->runs, b->n_runs);
        b->has_runs = TRUE;
        b->runs = runs_copy(runs, n);
        b->n_runs = n;
    }
    if (status == 0 && tags_changed) {
        tw_tag_table *table = build_tag_table(r);
        if (tw_tag_table_equal(table, r->tags)) {
            tw_tag_table_free(table);
        } else {
            tw_tag_table_free(b->tags);
            b->tags = tw_tag_table_copy(table);
            tw_tag_table_free(r->tags);
            r->tags = table;
        }
    }
    return status;
}

/* The file as it is now: reopened when it appears or is replaced, closed
 * when it goes; runs and tags when open. TRUE when the file may hold
 * something new since the last poll. */
static gboolean poll_file(reader *r, tw_dashboard_batch *b)
{
    GStatBuf st;
    gboolean exists = g_stat(r->path, &st) == 0;
    if (r->store && (!exists || st.st_dev != r->device || st.st_ino != r->inode))
        close_file(r, b);
    if (!exists)
        set_error(r, b, NULL); /* a missing file is "no runs yet" */
    if (!r->store && exists && (!r->error || g_get_monotonic_time() >= r->retry_at))
        open_file(r, b, &st);
    if (!r->store)
        return FALSE;
    tw_error_clear();
    gint64 version = -1;
    gboolean file_changed = tw_run_store_data_version(r->store, &version) || version != r->data_version;
    int status = poll_runs(r, b, file_changed);
    set_error(r, b, status ? tw_last_error() : NULL);
    r->data_version = status ? -1 : version;
    return file_changed;
}

/* ---- views ------------------------------------------------------------------------ */

/* A range wider than any step or wall time: one column over it gives the
 * whole series' extent from the chunk summaries alone. */
#define WHOLE_AXIS 1e300

/* The series' extent on the axis, then (q not NULL) the columns of the
 * range and the raw points when there are at most two per column. */
static int read_view(reader *r, series_state *s, tw_axis axis, const tw_view_request *q)
{
    TwSeriesView *v = &s->view;
    tw_series_view_clear(v);
    v->axis = axis;
    tw_lod_column all;
    if (tw_run_store_read_lod(r->store, s->tag_id, axis, -WHOLE_AXIS, WHOLE_AXIS, 1, &all))
        return -1;
    tw_series_view_set_extent(v, &all);
    if (!q)
        return 0;
    v->lo = q->lo;
    v->hi = q->hi;
    v->ncolumns = q->ncolumns;
    v->columns = g_new(tw_lod_column, q->ncolumns);
    if (tw_run_store_read_lod(r->store, s->tag_id, axis, q->lo, q->hi, q->ncolumns, v->columns))
        return -1;
    int64_t total = 0, few = 2 * (int64_t)q->ncolumns;
    for (int i = 0; i < q->ncolumns; i++)
        total += v->columns[i].count;
    if (total > few)
        return 0;
    tw_scalar_point *points;
    int64_t n;
    if (tw_run_store_read_scalar_range(r->store, s->tag_id, axis, q->lo, q->hi, few + 1, &points, &n))
        return -1;
    if (n > few) { /* grew meanwhile: the columns stand alone */
        free(points);
        return 0;
    }
    tw_series_view_take_points(v, points, n);
    return 0;
}

/* Reads with the series' end cursor before and after: when they agree no
 * point came in between, so tailing from there neither misses nor repeats
 * a point. A writer faster than the reads gets the last cursor: points
 * written during that read may then be missing until the next request. */
static int read_exact(reader *r, series_state *s, tw_axis axis, const tw_view_request *q)
{
    s->exact = FALSE;
    for (int attempt = 0; attempt < END_ATTEMPTS; attempt++) {
        tw_series_cursor before, after;
        if (tw_run_store_scalar_end(r->store, s->tag_id, &before) || read_view(r, s, axis, q) ||
            tw_run_store_scalar_end(r->store, s->tag_id, &after))
            return -1;
        s->cursor = after;
        s->exact = TRUE;
        if (before.chunk == after.chunk && before.index == after.index)
            break;
    }
    return 0;
}

static void post_view(tw_dashboard_batch *b, const series_state *s)
{
    g_hash_table_replace(b->views, tw_id_key_new(s->tag_id), tw_series_view_copy(&s->view));
}

static void post(tw_dashboard_shared *shared, const char *path, tw_dashboard_batch *b);

/* A view read in full, or marked and asked again later (the file may be
 * repaired, or the failure was passing). */
static void answer_view(reader *r, series_state *s, const tw_view_request *q, tw_dashboard_batch *b)
{
    tw_error_clear();
    if (read_exact(r, s, q->axis, q)) {
        series_failed(r, s, b, tw_last_error());
        s->retrying = TRUE;
        s->failed = *q;
        s->retry_at = g_get_monotonic_time() + RETRY_INTERVAL;
    } else {
        s->retrying = FALSE;
        series_read(s, b);
        post_view(b, s);
    }
}

/* Many requests at once (a dashboard of 1,000 runs opening asks for tens
 * of thousands of views, a few milliseconds each) are answered in parts:
 * what is ready goes to the main loop every STREAM_INTERVAL, and after
 * VIEW_BUDGET the rest wait for the next turn, which polls first when a
 * poll is due. Answering every view asked for before polling again held
 * the runs' listing back by seconds per turn: 1,000 runs took 100 s to be
 * listed. A newer request for a waiting series replaces the older one. */
static void answer_views(reader *r, GHashTable *asked, tw_dashboard_batch **b)
{
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, asked);
    while (g_hash_table_iter_next(&iter, &key, &value)) {
        g_hash_table_iter_steal(&iter);
        g_hash_table_replace(r->views_waiting, key, value);
    }
    gint64 start = g_get_monotonic_time(), posted = start;
    g_hash_table_iter_init(&iter, r->views_waiting);
    while (r->store && g_get_monotonic_time() - start < VIEW_BUDGET && g_hash_table_iter_next(&iter, &key, &value)) {
        answer_view(r, series_get(r, *(gint64 *)key), value, *b);
        g_hash_table_iter_remove(&iter);
        if (g_get_monotonic_time() - posted > STREAM_INTERVAL) {
            post(r->shared, r->path, *b);
            *b = tw_dashboard_batch_new();
            posted = g_get_monotonic_time();
        }
    }
    if (!r->store) /* no file to read them from (as before the views were kept waiting) */
        g_hash_table_remove_all(r->views_waiting);
}

/* The views that failed, asked again once their time has come. */
static void retry_views(reader *r, tw_dashboard_batch *b)
{
    gint64 now = g_get_monotonic_time();
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, r->series);
    while (r->store && g_hash_table_iter_next(&iter, NULL, &value)) {
        series_state *s = value;
        if (s->retrying && now >= s->retry_at) {
            tw_view_request q = s->failed;
            answer_view(r, s, &q, b);
        }
    }
}

/* Watching starts from the view's cursor, or with the extent alone (a view
 * of no columns) when no view was asked for yet. */
static void apply_watches(reader *r, GHashTable *watches, tw_dashboard_batch *b)
{
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, watches);
    while (r->store && g_hash_table_iter_next(&iter, &key, &value)) {
        series_state *s = series_get(r, *(gint64 *)key);
        gboolean watch = GPOINTER_TO_INT(value) - 1;
        gboolean starts = watch && !s->watched;
        s->watched = watch;
        if (!starts || s->exact)
            continue;
        tw_error_clear();
        if (read_exact(r, s, s->view.axis, NULL))
            series_failed(r, s, b, tw_last_error());
        else
            post_view(b, s);
    }
}

/* New points of the watched series, reduced into their views; a poll
 * reads for at most TAIL_BUDGET and goes on from there the next time. */
static void tail_series(reader *r, tw_dashboard_batch *b)
{
    gint64 deadline = g_get_monotonic_time() + TAIL_BUDGET;
    r->tail_unfinished = FALSE;
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, r->series);
    while (r->store && g_hash_table_iter_next(&iter, NULL, &value)) {
        series_state *s = value;
        if (!s->watched || !s->exact)
            continue;
        gboolean grew = FALSE;
        int64_t n = TAIL_BATCH;
        while (n == TAIL_BATCH && g_get_monotonic_time() < deadline) {
            tw_scalar_point *points;
            tw_error_clear();
            if (tw_run_store_read_scalars(r->store, s->tag_id, &s->cursor, TAIL_BATCH, &points, &n)) {
                series_failed(r, s, b, tw_last_error());
                break;
            }
            tw_series_view_append(&s->view, points, n);
            free(points);
            grew |= n > 0;
        }
        r->tail_unfinished |= n == TAIL_BATCH;
        if (grew)
            post_view(b, s);
    }
}

/* ---- histograms -------------------------------------------------------------------- */

static void read_histograms(reader *r, series_state *s, tw_dashboard_batch *b)
{
    tw_histogram_list *list = g_new0(tw_histogram_list, 1);
    tw_error_clear();
    if (tw_run_store_read_histograms(r->store, s->tag_id, INT64_MIN, INT64_MAX, s->histogram_max,
                                     &list->histograms, &list->n)) {
        series_failed(r, s, b, tw_last_error());
        g_free(list);
        return;
    }
    series_read(s, b);
    gint64 *count = g_hash_table_lookup(r->tag_counts, &s->tag_id);
    s->histogram_count = count ? *count : -1;
    g_hash_table_replace(b->histograms, tw_id_key_new(s->tag_id), list);
}

static void answer_histograms(reader *r, GHashTable *asked, tw_dashboard_batch *b)
{
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, asked);
    while (r->store && g_hash_table_iter_next(&iter, &key, &value)) {
        series_state *s = series_get(r, *(gint64 *)key);
        s->histogram_max = GPOINTER_TO_INT(value) - 1;
        read_histograms(r, s, b);
    }
}

/* Watched histogram tags whose record count changed since they were read. */
static void refresh_histograms(reader *r, tw_dashboard_batch *b)
{
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, r->series);
    while (r->store && g_hash_table_iter_next(&iter, NULL, &value)) {
        series_state *s = value;
        gint64 *count = g_hash_table_lookup(r->tag_counts, &s->tag_id);
        if (s->watched && s->histogram_max >= 0 && count && *count != s->histogram_count)
            read_histograms(r, s, b);
    }
}

/* ---- the thread --------------------------------------------------------------------- */

/* Hands the batch to the main loop, merged into one still waiting there. */
static void post(tw_dashboard_shared *shared, const char *path, tw_dashboard_batch *b)
{
    if (tw_dashboard_batch_empty(b)) {
        tw_dashboard_batch_free(b);
        return;
    }
    b->path = g_strdup(path);
    g_mutex_lock(&shared->lock);
    if (shared->pending && g_strcmp0(shared->pending->path, b->path)) {
        /* What was read from the file before this one is not delivered. */
        tw_dashboard_batch_free(shared->pending);
        shared->pending = b;
    } else if (shared->pending) {
        tw_dashboard_batch_merge(shared->pending, b);
    } else {
        shared->pending = b;
        shared->pending_source = g_idle_source_new();
        g_source_set_priority(shared->pending_source, G_PRIORITY_DEFAULT);
        g_source_set_callback(shared->pending_source, shared->deliver, shared->deliver_data, NULL);
        g_source_set_static_name(shared->pending_source, "[twb] dashboard data");
        g_source_attach(shared->pending_source, shared->context);
    }
    g_mutex_unlock(&shared->lock);
}

/* Whether a name in the folder is the file or its write-ahead log (not
 * the shared-memory index, which readers write too: our own reads would
 * wake us). */
static gboolean is_ours(const reader *r, const char *name)
{
    char *base = g_path_get_basename(r->path);
    size_t n = strlen(base);
    gboolean ours = !strncmp(name, base, n) && (!name[n] || !strcmp(name + n, "-wal"));
    g_free(base);
    return ours;
}

/* A write to the file or its log: poll soon, once the writer is likely
 * done with its commit. (GFileMonitor delays events by up to tens of
 * milliseconds to coalesce them; inotify itself does not.) */
static gboolean on_inotify(gint fd, GIOCondition condition, gpointer user_data)
{
    reader *r = user_data;
    char buffer[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    gboolean ours = FALSE;
    ssize_t length;
    while ((length = read(fd, buffer, sizeof buffer)) > 0)
        for (char *at = buffer; at < buffer + length;) {
            const struct inotify_event *event = (const struct inotify_event *)at;
            ours |= event->len > 0 && is_ours(r, event->name);
            at += sizeof *event + event->len;
        }
    if (ours)
        r->next_poll = MIN(r->next_poll, g_get_monotonic_time() + WRITE_DELAY);
    return G_SOURCE_CONTINUE;
}

static void stop_watching_folder(reader *r)
{
    if (r->inotify_source) {
        g_source_destroy(r->inotify_source);
        g_clear_pointer(&r->inotify_source, g_source_unref);
    }
    if (r->inotify >= 0)
        close(r->inotify);
    r->inotify = -1;
}

/* Without inotify (another system, no watches left) the 50 ms poll alone
 * still finds everything. */
static void watch_folder(reader *r)
{
    stop_watching_folder(r);
    char *folder = g_path_get_dirname(r->path);
    r->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (r->inotify >= 0 &&
        inotify_add_watch(r->inotify, folder, IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DELETE) < 0)
        stop_watching_folder(r);
    g_free(folder);
    if (r->inotify < 0)
        return;
    r->inotify_source = g_unix_fd_source_new(r->inotify, G_IO_IN);
    g_source_set_callback(r->inotify_source, (GSourceFunc)(void (*)(void))on_inotify, r, NULL);
    g_source_attach(r->inotify_source, g_main_context_get_thread_default());
}

static void switch_file(reader *r, char *path, tw_dashboard_batch *b)
{
    close_file(r, b);
    g_free(r->path);
    r->path = path;
    watch_folder(r);
    g_clear_pointer(&r->error, g_free);
    b->has_error = TRUE;
    g_clear_pointer(&b->error, g_free);
}

static void reader_free(reader *r)
{
    stop_watching_folder(r);
    tw_run_store_close(r->store);
    g_free(r->path);
    g_free(r->error);
    tw_run_info_free(r->runs, r->n_runs);
    tw_tag_table_free(r->tags);
    g_hash_table_unref(r->run_tags);
    g_hash_table_unref(r->tag_counts);
    g_hash_table_unref(r->series);
    g_hash_table_unref(r->views_waiting);
    g_free(r);
}

static gboolean wake_up(gpointer unused)
{
    return G_SOURCE_REMOVE;
}

/* Sleeps until the next poll (moved earlier by a write to the file) or a
 * request, not at all while views wait to be read; FALSE when asked to
 * quit. *poll says whether the poll is due; the requests move into *asked. */
static gboolean wait_for_work(reader *r, gboolean *poll, tw_dashboard_requests *asked)
{
    tw_dashboard_shared *shared = r->shared;
    GMainContext *context = g_main_context_get_thread_default();
    g_mutex_lock(&shared->lock);
    while (!shared->quit && !shared->poked && g_hash_table_size(r->views_waiting) == 0 &&
           g_get_monotonic_time() < r->next_poll) {
        g_mutex_unlock(&shared->lock);
        /* A request wakes the context (g_main_context_wakeup), a write
         * dispatches on_inotify, the timeout ends the wait. */
        GSource *timeout = g_timeout_source_new((guint)MAX(1, (r->next_poll - g_get_monotonic_time()) / 1000));
        g_source_set_callback(timeout, wake_up, NULL, NULL);
        g_source_attach(timeout, context);
        g_main_context_iteration(context, TRUE);
        g_source_destroy(timeout);
        g_source_unref(timeout);
        g_mutex_lock(&shared->lock);
    }
    gboolean quit = shared->quit;
    *poll = g_get_monotonic_time() >= r->next_poll;
    *asked = shared->asked;
    tw_dashboard_requests_init(&shared->asked);
    shared->poked = FALSE;
    g_mutex_unlock(&shared->lock);
    if (quit)
        tw_dashboard_requests_clear(asked);
    return !quit;
}

static gpointer reader_main(gpointer user_data)
{
    reader *r = user_data;
    g_main_context_push_thread_default(r->shared->reader_context);
    gboolean poll;
    tw_dashboard_requests asked;
    while (wait_for_work(r, &poll, &asked)) {
        tw_dashboard_batch *b = tw_dashboard_batch_new();
        /* Another file is read at once: the first answer about it carries
         * its runs (or why it cannot be read), never an empty list the
         * dashboard would take for the file's. */
        if (asked.path) {
            switch_file(r, g_steal_pointer(&asked.path), b);
            poll = TRUE;
        }
        gboolean file_changed = FALSE;
        if (poll) {
            r->next_poll = g_get_monotonic_time() + POLL_INTERVAL;
            file_changed = poll_file(r, b);
        }
        /* The reads below in one read transaction: one snapshot, and one
         * WAL read lock instead of one per series (with a thousand runs
         * listed, thousands of tails and views a poll). A file that cannot
         * begin one is read as before, each read on its own. */
        gboolean snapshot = r->store && tw_run_store_read_begin(r->store) == 0;
        tw_error_clear();
        answer_views(r, asked.views, &b);
        apply_watches(r, asked.watches, b);
        answer_histograms(r, asked.histograms, b);
        if (poll && (file_changed || r->tail_unfinished))
            tail_series(r, b);
        if (poll && file_changed)
            refresh_histograms(r, b);
        if (poll)
            retry_views(r, b);
        if (snapshot && r->store)
            tw_run_store_read_end(r->store);
        tw_dashboard_requests_clear(&asked);
        post(r->shared, r->path, b);
    }
    g_main_context_pop_thread_default(r->shared->reader_context);
    reader_free(r);
    return NULL;
}

GThread *tw_dashboard_reader_start(tw_dashboard_shared *shared)
{
    reader *r = g_new0(reader, 1);
    r->shared = shared;
    r->inotify = -1;
    r->data_version = -1;
    r->run_tags = tw_id_table_new((GDestroyNotify)run_tags_free);
    r->tag_counts = tw_id_table_new(g_free);
    r->series = tw_id_table_new((GDestroyNotify)series_state_free);
    r->views_waiting = tw_id_table_new(g_free);
    return g_thread_new("twb-dashboard", reader_main, r);
}
