/* TwDashboardData (see dashboard_data.h): the object on the main loop and
 * the reader thread behind it.
 *
 * The thread owns a read-only store handle and everything read from it; it
 * wakes every 50 ms (a poll: runs, tags, the watched series' tails), within
 * 3 ms of a write to the file or its write-ahead log (inotify, on the
 * thread's own main context: a committed point need not wait for the next
 * poll), or at once when asked for a view or histograms (only the
 * requests). What a
 * pass finds goes into a batch; a batch not yet applied by the main loop
 * absorbs the next one, so at most one idle callback is ever pending and a
 * stalled main loop holds at most one batch. The main loop applies a
 * batch, then emits the signals. */
#include "dashboard_data.h"

#include <float.h>
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
#define MAX_COLUMNS 16384
#define END_ATTEMPTS 3
#define STREAM_INTERVAL (30 * G_TIME_SPAN_MILLISECOND)

typedef struct {
    tw_axis axis;
    double lo, hi;
    int ncolumns;
} view_request;

/* Tags merged by name over the runs (dashboard_data.h). */
typedef struct {
    int n_names, n_runs;
    char **names;
    tw_series_kind *kinds;
    gint64 *ids; /* n_names x n_runs, -1 where a run lacks the tag */
} tag_table;

typedef struct {
    int n;
    tw_histogram *histograms;
} histogram_list;

/* What one pass found, for the main loop. */
typedef struct {
    char *path;     /* the file it was read from */
    gboolean reset; /* another file: every view and histogram before is gone */
    gboolean has_runs;
    tw_run_info *runs;
    int n_runs;
    tag_table *tags; /* NULL: unchanged */
    gboolean has_error;
    char *error;
    GHashTable *views;      /* tag id -> TwSeriesView */
    GHashTable *histograms; /* tag id -> histogram_list */
    GHashTable *series_errors; /* tag id -> why it cannot be read, "" when it can again */
} batch;

/* What the main loop asked for since the thread last looked. */
typedef struct {
    char *path; /* NULL: unchanged */
    GHashTable *views;      /* tag id -> view_request, the latest */
    GHashTable *watches;    /* tag id -> GINT_TO_POINTER(watch + 1) */
    GHashTable *histograms; /* tag id -> GINT_TO_POINTER(max_records + 1) */
} requests;

struct _TwDashboardData {
    GObject parent_instance;
    GMainContext *context;
    char *path;
    /* The main loop's snapshot. */
    tw_run_info *runs;
    int n_runs;
    tag_table *tags;
    char *error;
    GHashTable *views, *histograms;
    GHashTable *series_errors; /* tag id -> message */
    GHashTable *watchers; /* tag id -> how many asked to watch it */
    /* Shared with the thread, under lock. */
    GMutex lock;
    GMainContext *reader_context; /* the thread's: woken for requests */
    gboolean quit, poked;
    requests asked;
    batch *pending;
    GSource *pending_source;
    GThread *thread;
};

G_DEFINE_FINAL_TYPE(TwDashboardData, tw_dashboard_data, G_TYPE_OBJECT)

enum { SIGNAL_RUNS_CHANGED, SIGNAL_TAGS_CHANGED, SIGNAL_SERIES_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* ---- small containers -------------------------------------------------------- */

static gint64 *key_new(gint64 id)
{
    return g_memdup2(&id, sizeof id);
}

static GHashTable *id_table(GDestroyNotify free_value)
{
    return g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, free_value);
}

static void tag_table_free(tag_table *t)
{
    if (!t)
        return;
    g_strfreev(t->names);
    g_free(t->kinds);
    g_free(t->ids);
    g_free(t);
}

static tag_table *tag_table_copy(const tag_table *t)
{
    tag_table *copy = g_memdup2(t, sizeof *t);
    copy->names = g_strdupv(t->names);
    copy->kinds = g_memdup2(t->kinds, sizeof *t->kinds * (size_t)t->n_names);
    copy->ids = g_memdup2(t->ids, sizeof *t->ids * (size_t)t->n_names * (size_t)t->n_runs);
    return copy;
}

static gboolean tag_table_equal(const tag_table *a, const tag_table *b)
{
    if (!a || !b || a->n_names != b->n_names || a->n_runs != b->n_runs)
        return FALSE;
    for (int i = 0; i < a->n_names; i++)
        if (strcmp(a->names[i], b->names[i]) || a->kinds[i] != b->kinds[i])
            return FALSE;
    return !memcmp(a->ids, b->ids, sizeof *a->ids * (size_t)a->n_names * (size_t)a->n_runs);
}

static void histogram_list_free(histogram_list *list)
{
    tw_histogram_free(list->histograms, list->n);
    g_free(list);
}

static batch *batch_new(void)
{
    batch *b = g_new0(batch, 1);
    b->views = id_table((GDestroyNotify)tw_series_view_unref);
    b->histograms = id_table((GDestroyNotify)histogram_list_free);
    b->series_errors = id_table(g_free);
    return b;
}

static void batch_free(batch *b)
{
    tw_run_info_free(b->runs, b->n_runs);
    tag_table_free(b->tags);
    g_free(b->error);
    g_free(b->path);
    g_hash_table_unref(b->views);
    g_hash_table_unref(b->histograms);
    g_hash_table_unref(b->series_errors);
    g_free(b);
}

static gboolean batch_empty(const batch *b)
{
    return !b->reset && !b->has_runs && !b->tags && !b->has_error && !g_hash_table_size(b->views) &&
           !g_hash_table_size(b->histograms) && !g_hash_table_size(b->series_errors);
}

static void move_entries(GHashTable *into, GHashTable *from)
{
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, from);
    while (g_hash_table_iter_next(&iter, &key, &value)) {
        g_hash_table_iter_steal(&iter);
        g_hash_table_replace(into, key, value);
    }
}

/* A later batch over an earlier one; `from` is freed. */
static void batch_merge(batch *into, batch *from)
{
    if (from->reset) {
        into->reset = TRUE;
        g_hash_table_remove_all(into->views);
        g_hash_table_remove_all(into->histograms);
        g_hash_table_remove_all(into->series_errors);
    }
    if (from->has_runs) {
        tw_run_info_free(into->runs, into->n_runs);
        into->has_runs = TRUE;
        into->runs = g_steal_pointer(&from->runs);
        into->n_runs = from->n_runs;
    }
    if (from->tags) {
        tag_table_free(into->tags);
        into->tags = g_steal_pointer(&from->tags);
    }
    if (from->has_error) {
        g_free(into->error);
        into->has_error = TRUE;
        into->error = g_steal_pointer(&from->error);
    }
    move_entries(into->views, from->views);
    move_entries(into->histograms, from->histograms);
    move_entries(into->series_errors, from->series_errors);
    batch_free(from);
}

static void requests_init(requests *r)
{
    r->path = NULL;
    r->views = id_table(g_free);
    r->watches = id_table(NULL);
    r->histograms = id_table(NULL);
}

static void requests_clear(requests *r)
{
    g_free(r->path);
    g_hash_table_unref(r->views);
    g_hash_table_unref(r->watches);
    g_hash_table_unref(r->histograms);
}

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
    view_request failed;
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
    TwDashboardData *data; /* the lock, the requests and the pending batch only */
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
    tag_table *tags;
    GHashTable *run_tags;   /* run id -> run_tags */
    GHashTable *tag_counts; /* tag id -> records (histograms), for re-reading watched ones */
    GHashTable *series;     /* tag id -> series_state */
    gint64 next_poll;
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
        g_hash_table_insert(r->series, key_new(tag_id), s);
    }
    return s;
}

static void set_error(reader *r, batch *b, const char *message)
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
static void series_failed(reader *r, series_state *s, batch *b, const char *message)
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
    g_hash_table_replace(b->series_errors, key_new(s->tag_id), g_strdup(text));
}

/* A series read again in full (a view's columns, all its histograms): its
 * mark goes. Reading its extent or its tail does not clear it, since those
 * do not decode the chunks before. */
static void series_read(series_state *s, batch *b)
{
    if (!s->error)
        return;
    g_clear_pointer(&s->error, g_free);
    g_hash_table_replace(b->series_errors, key_new(s->tag_id), g_strdup(""));
}

/* Forget the file: everything read from it goes, the main loop too. */
static void close_file(reader *r, batch *b)
{
    g_clear_pointer(&r->store, tw_run_store_close);
    tw_run_info_free(r->runs, r->n_runs);
    r->runs = NULL;
    r->n_runs = 0;
    g_clear_pointer(&r->tags, tag_table_free);
    g_hash_table_remove_all(r->run_tags);
    g_hash_table_remove_all(r->tag_counts);
    g_hash_table_remove_all(r->series);
    b->reset = TRUE;
    tw_run_info_free(b->runs, b->n_runs);
    b->has_runs = TRUE;
    b->runs = NULL;
    b->n_runs = 0;
    tag_table_free(b->tags);
    b->tags = g_new0(tag_table, 1);
    b->tags->names = g_new0(char *, 1);
}

static void open_file(reader *r, batch *b, const GStatBuf *st)
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

/* Lists a run's tags again when it is running (tags come and go with its
 * writer) or has changed since; *changed says whether they differ. */
static int refresh_run_tags(reader *r, const tw_run_info *run, const tw_run_info *before, gboolean *changed)
{
    run_tags *known = g_hash_table_lookup(r->run_tags, &run->id);
    if (known && run->status != TW_RUN_RUNNING && before && run_equal(run, before))
        return 0;
    tw_tag_info *tags;
    int n;
    if (tw_run_store_list_tags(r->store, run->id, &tags, &n))
        return -1;
    for (int i = 0; i < n; i++)
        g_hash_table_replace(r->tag_counts, key_new(tags[i].id), key_new(tags[i].count));
    if (!known || !tags_same(known, tags, n))
        *changed = TRUE;
    run_tags *fresh = g_new(run_tags, 1);
    *fresh = (run_tags){tags, n, run->status, run->end_time};
    g_hash_table_replace(r->run_tags, key_new(run->id), fresh);
    return 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static tag_table *build_tag_table(reader *r)
{
    GHashTable *kinds = g_hash_table_new(g_str_hash, g_str_equal); /* name -> kind + 1 */
    for (int i = 0; i < r->n_runs; i++) {
        run_tags *t = g_hash_table_lookup(r->run_tags, &r->runs[i].id);
        for (int k = 0; t && k < t->n; k++)
            if (!g_hash_table_contains(kinds, t->tags[k].name))
                g_hash_table_insert(kinds, t->tags[k].name, GINT_TO_POINTER(t->tags[k].kind + 1));
    }
    tag_table *table = g_new0(tag_table, 1);
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

/* Runs and tags, into the batch when they changed. */
static int poll_runs(reader *r, batch *b)
{
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
        status = refresh_run_tags(r, &runs[i], find_run(r->runs, r->n_runs, runs[i].id), &tags_changed);
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
        tag_table *table = build_tag_table(r);
        if (tag_table_equal(table, r->tags)) {
            tag_table_free(table);
        } else {
            tag_table_free(b->tags);
            b->tags = tag_table_copy(table);
            tag_table_free(r->tags);
            r->tags = table;
        }
    }
    return status;
}

/* The file as it is now: reopened when it appears or is replaced, closed
 * when it goes; runs and tags when open. */
static void poll_file(reader *r, batch *b)
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
        return;
    tw_error_clear();
    set_error(r, b, poll_runs(r, b) ? tw_last_error() : NULL);
}

/* ---- views ------------------------------------------------------------------------ */

/* A range wider than any step or wall time: one column over it gives the
 * whole series' extent from the chunk summaries alone. */
#define WHOLE_AXIS 1e300

/* The series' extent on the axis, then (q not NULL) the columns of the
 * range and the raw points when there are at most two per column. */
static int read_view(reader *r, series_state *s, tw_axis axis, const view_request *q)
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
static int read_exact(reader *r, series_state *s, tw_axis axis, const view_request *q)
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

static void post_view(batch *b, const series_state *s)
{
    g_hash_table_replace(b->views, key_new(s->tag_id), tw_series_view_copy(&s->view));
}

static void post(TwDashboardData *data, const char *path, batch *b);

/* Many requests at once (a dashboard of 200 runs opening) are answered in
 * parts: what is ready goes to the main loop every STREAM_INTERVAL. */
/* A view read in full, or marked and asked again later (the file may be
 * repaired, or the failure was passing). */
static void answer_view(reader *r, series_state *s, const view_request *q, batch *b)
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

static void answer_views(reader *r, GHashTable *views, batch **b)
{
    gint64 posted = g_get_monotonic_time();
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, views);
    while (r->store && g_hash_table_iter_next(&iter, &key, &value)) {
        answer_view(r, series_get(r, *(gint64 *)key), value, *b);
        if (g_get_monotonic_time() - posted > STREAM_INTERVAL) {
            post(r->data, r->path, *b);
            *b = batch_new();
            posted = g_get_monotonic_time();
        }
    }
}

/* The views that failed, asked again once their time has come. */
static void retry_views(reader *r, batch *b)
{
    gint64 now = g_get_monotonic_time();
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, r->series);
    while (r->store && g_hash_table_iter_next(&iter, NULL, &value)) {
        series_state *s = value;
        if (s->retrying && now >= s->retry_at) {
            view_request q = s->failed;
            answer_view(r, s, &q, b);
        }
    }
}

/* Watching starts from the view's cursor, or with the extent alone (a view
 * of no columns) when no view was asked for yet. */
static void apply_watches(reader *r, GHashTable *watches, batch *b)
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
static void tail_series(reader *r, batch *b)
{
    gint64 deadline = g_get_monotonic_time() + TAIL_BUDGET;
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
        if (grew)
            post_view(b, s);
    }
}

/* ---- histograms -------------------------------------------------------------------- */

static void read_histograms(reader *r, series_state *s, batch *b)
{
    histogram_list *list = g_new0(histogram_list, 1);
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
    g_hash_table_replace(b->histograms, key_new(s->tag_id), list);
}

static void answer_histograms(reader *r, GHashTable *asked, batch *b)
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
static void refresh_histograms(reader *r, batch *b)
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

static gboolean deliver(gpointer user_data);

/* Hands the batch to the main loop, merged into one still waiting there. */
static void post(TwDashboardData *data, const char *path, batch *b)
{
    if (batch_empty(b)) {
        batch_free(b);
        return;
    }
    b->path = g_strdup(path);
    g_mutex_lock(&data->lock);
    if (data->pending && g_strcmp0(data->pending->path, b->path)) {
        /* What was read from the file before this one is not delivered. */
        batch_free(data->pending);
        data->pending = b;
    } else if (data->pending) {
        batch_merge(data->pending, b);
    } else {
        data->pending = b;
        data->pending_source = g_idle_source_new();
        g_source_set_priority(data->pending_source, G_PRIORITY_DEFAULT);
        g_source_set_callback(data->pending_source, deliver, data, NULL);
        g_source_set_static_name(data->pending_source, "[twb] dashboard data");
        g_source_attach(data->pending_source, data->context);
    }
    g_mutex_unlock(&data->lock);
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

static void switch_file(reader *r, char *path, batch *b)
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
    tag_table_free(r->tags);
    g_hash_table_unref(r->run_tags);
    g_hash_table_unref(r->tag_counts);
    g_hash_table_unref(r->series);
    g_free(r);
}

static gboolean wake_up(gpointer unused)
{
    return G_SOURCE_REMOVE;
}

/* Sleeps until the next poll (moved earlier by a write to the file) or a
 * request; FALSE when asked to quit. *poll says whether the poll is due;
 * the requests move into *asked. */
static gboolean wait_for_work(reader *r, gboolean *poll, requests *asked)
{
    TwDashboardData *data = r->data;
    GMainContext *context = g_main_context_get_thread_default();
    g_mutex_lock(&data->lock);
    while (!data->quit && !data->poked && g_get_monotonic_time() < r->next_poll) {
        g_mutex_unlock(&data->lock);
        /* A request wakes the context (g_main_context_wakeup), a write
         * dispatches on_inotify, the timeout ends the wait. */
        GSource *timeout = g_timeout_source_new((guint)MAX(1, (r->next_poll - g_get_monotonic_time()) / 1000));
        g_source_set_callback(timeout, wake_up, NULL, NULL);
        g_source_attach(timeout, context);
        g_main_context_iteration(context, TRUE);
        g_source_destroy(timeout);
        g_source_unref(timeout);
        g_mutex_lock(&data->lock);
    }
    gboolean quit = data->quit;
    *poll = g_get_monotonic_time() >= r->next_poll;
    *asked = data->asked;
    requests_init(&data->asked);
    data->poked = FALSE;
    g_mutex_unlock(&data->lock);
    if (quit)
        requests_clear(asked);
    return !quit;
}

static gpointer reader_main(gpointer user_data)
{
    reader *r = user_data;
    g_main_context_push_thread_default(r->data->reader_context);
    gboolean poll;
    requests asked;
    while (wait_for_work(r, &poll, &asked)) {
        batch *b = batch_new();
        /* Another file is read at once: the first answer about it carries
         * its runs (or why it cannot be read), never an empty list the
         * dashboard would take for the file's. */
        if (asked.path) {
            switch_file(r, g_steal_pointer(&asked.path), b);
            poll = TRUE;
        }
        if (poll) {
            r->next_poll = g_get_monotonic_time() + POLL_INTERVAL;
            poll_file(r, b);
        }
        answer_views(r, asked.views, &b);
        apply_watches(r, asked.watches, b);
        answer_histograms(r, asked.histograms, b);
        if (poll) {
            tail_series(r, b);
            refresh_histograms(r, b);
            retry_views(r, b);
        }
        requests_clear(&asked);
        post(r->data, r->path, b);
    }
    g_main_context_pop_thread_default(r->data->reader_context);
    reader_free(r);
    return NULL;
}

/* ---- the main loop's side ------------------------------------------------------------- */

/* The batch becomes the snapshot; then the signals, the state complete. */
static void apply(TwDashboardData *data, batch *b)
{
    /* Read from a file the main loop has since left (its runs would show
     * as the new file's until the new answers came). */
    if (g_strcmp0(b->path, data->path))
        return;
    if (b->reset) {
        g_hash_table_remove_all(data->views);
        g_hash_table_remove_all(data->histograms);
        g_hash_table_remove_all(data->series_errors);
    }
    if (b->has_runs) {
        tw_run_info_free(data->runs, data->n_runs);
        data->runs = g_steal_pointer(&b->runs);
        data->n_runs = b->n_runs;
    }
    gboolean tags_changed = b->tags != NULL;
    if (tags_changed) {
        tag_table_free(data->tags);
        data->tags = g_steal_pointer(&b->tags);
    }
    if (b->has_error) {
        g_free(data->error);
        data->error = g_steal_pointer(&b->error);
    }
    /* The ids copied: a handler that runs the main loop may replace views. */
    GArray *changed = g_array_new(FALSE, FALSE, sizeof(gint64));
    GHashTableIter iter;
    gpointer key, value;
    GHashTable *sources[] = {b->views, b->histograms}, *targets[] = {data->views, data->histograms};
    for (int k = 0; k < 2; k++) {
        g_hash_table_iter_init(&iter, sources[k]);
        while (g_hash_table_iter_next(&iter, &key, &value)) {
            g_hash_table_iter_steal(&iter);
            g_array_append_val(changed, *(gint64 *)key);
            g_hash_table_replace(targets[k], key, value);
        }
    }
    g_hash_table_iter_init(&iter, b->series_errors);
    while (g_hash_table_iter_next(&iter, &key, &value)) {
        g_array_append_val(changed, *(gint64 *)key);
        if (*(const char *)value) {
            g_hash_table_iter_steal(&iter);
            g_hash_table_replace(data->series_errors, key, value);
        } else {
            g_hash_table_remove(data->series_errors, key);
        }
    }
    g_object_ref(data); /* a handler may drop the last other reference */
    if (b->has_runs || b->has_error)
        g_signal_emit(data, signals[SIGNAL_RUNS_CHANGED], 0);
    if (tags_changed)
        g_signal_emit(data, signals[SIGNAL_TAGS_CHANGED], 0);
    for (guint i = 0; i < changed->len; i++)
        g_signal_emit(data, signals[SIGNAL_SERIES_CHANGED], 0, g_array_index(changed, gint64, i));
    g_array_unref(changed);
    g_object_unref(data);
}

static gboolean deliver(gpointer user_data)
{
    TwDashboardData *data = user_data;
    g_mutex_lock(&data->lock);
    batch *b = g_steal_pointer(&data->pending);
    g_clear_pointer(&data->pending_source, g_source_unref);
    g_mutex_unlock(&data->lock);
    apply(data, b);
    batch_free(b);
    return G_SOURCE_REMOVE;
}

static void tw_dashboard_data_dispose(GObject *object)
{
    TwDashboardData *data = TW_DASHBOARD_DATA(object);
    if (data->thread) {
        g_mutex_lock(&data->lock);
        data->quit = TRUE;
        g_main_context_wakeup(data->reader_context);
        g_mutex_unlock(&data->lock);
        g_thread_join(g_steal_pointer(&data->thread));
    }
    /* The thread is gone: nothing posts any more. */
    if (data->pending_source) {
        g_source_destroy(data->pending_source);
        g_clear_pointer(&data->pending_source, g_source_unref);
        g_clear_pointer(&data->pending, batch_free);
    }
    G_OBJECT_CLASS(tw_dashboard_data_parent_class)->dispose(object);
}

static void tw_dashboard_data_finalize(GObject *object)
{
    TwDashboardData *data = TW_DASHBOARD_DATA(object);
    g_free(data->path);
    tw_run_info_free(data->runs, data->n_runs);
    tag_table_free(data->tags);
    g_free(data->error);
    g_hash_table_unref(data->views);
    g_hash_table_unref(data->histograms);
    g_hash_table_unref(data->series_errors);
    g_hash_table_unref(data->watchers);
    requests_clear(&data->asked);
    g_mutex_clear(&data->lock);
    g_main_context_unref(data->reader_context);
    g_main_context_unref(data->context);
    G_OBJECT_CLASS(tw_dashboard_data_parent_class)->finalize(object);
}

static void tw_dashboard_data_class_init(TwDashboardDataClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    object_class->dispose = tw_dashboard_data_dispose;
    object_class->finalize = tw_dashboard_data_finalize;
    signals[SIGNAL_RUNS_CHANGED] = g_signal_new("runs-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                                NULL, NULL, G_TYPE_NONE, 0);
    signals[SIGNAL_TAGS_CHANGED] = g_signal_new("tags-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                                NULL, NULL, G_TYPE_NONE, 0);
    signals[SIGNAL_SERIES_CHANGED] = g_signal_new("series-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT64);
}

static void tw_dashboard_data_init(TwDashboardData *data)
{
    data->context = g_main_context_ref_thread_default();
    data->tags = g_new0(tag_table, 1);
    data->tags->names = g_new0(char *, 1);
    data->views = id_table((GDestroyNotify)tw_series_view_unref);
    data->histograms = id_table((GDestroyNotify)histogram_list_free);
    data->series_errors = id_table(g_free);
    data->watchers = id_table(NULL);
    g_mutex_init(&data->lock);
    data->reader_context = g_main_context_new();
    requests_init(&data->asked);
}

/* Wakes the thread for what was just asked (under the lock). */
static void poke(TwDashboardData *data)
{
    data->poked = TRUE;
    g_main_context_wakeup(data->reader_context);
}

TwDashboardData *tw_dashboard_data_new(const char *path)
{
    TwDashboardData *data = g_object_new(TW_TYPE_DASHBOARD_DATA, NULL);
    tw_dashboard_data_set_path(data, path);
    reader *r = g_new0(reader, 1);
    r->data = data;
    r->inotify = -1;
    r->run_tags = id_table((GDestroyNotify)run_tags_free);
    r->tag_counts = id_table(g_free);
    r->series = id_table((GDestroyNotify)series_state_free);
    data->thread = g_thread_new("twb-dashboard", reader_main, r);
    return data;
}

const char *tw_dashboard_data_path(TwDashboardData *data)
{
    return data->path;
}

void tw_dashboard_data_set_path(TwDashboardData *data, const char *path)
{
    char *resolved = path ? g_strdup(path) : tw_run_store_default_path();
    if (!g_strcmp0(resolved, data->path)) {
        g_free(resolved);
        return;
    }
    g_free(data->path);
    data->path = resolved;
    g_mutex_lock(&data->lock);
    g_free(data->asked.path);
    data->asked.path = g_strdup(resolved);
    /* Requests made for the old file mean nothing in the new one. */
    g_hash_table_remove_all(data->watchers);
    g_hash_table_remove_all(data->asked.views);
    g_hash_table_remove_all(data->asked.watches);
    g_hash_table_remove_all(data->asked.histograms);
    poke(data);
    g_mutex_unlock(&data->lock);
}

const char *tw_dashboard_data_error(TwDashboardData *data)
{
    return data->error;
}

const char *tw_dashboard_data_series_error(TwDashboardData *data, gint64 tag_id)
{
    return g_hash_table_lookup(data->series_errors, &tag_id);
}

int tw_dashboard_data_n_runs(TwDashboardData *data)
{
    return data->n_runs;
}

const tw_run_info *tw_dashboard_data_run(TwDashboardData *data, int index)
{
    g_return_val_if_fail(index >= 0 && index < data->n_runs, NULL);
    return &data->runs[index];
}

int tw_dashboard_data_n_tag_names(TwDashboardData *data)
{
    return data->tags->n_names;
}

const char *tw_dashboard_data_tag_name(TwDashboardData *data, int index)
{
    g_return_val_if_fail(index >= 0 && index < data->tags->n_names, NULL);
    return data->tags->names[index];
}

tw_series_kind tw_dashboard_data_tag_kind(TwDashboardData *data, int index)
{
    g_return_val_if_fail(index >= 0 && index < data->tags->n_names, TW_SERIES_SCALAR);
    return data->tags->kinds[index];
}

int64_t tw_dashboard_data_tag_id(TwDashboardData *data, int tag_index, int run_index)
{
    const tag_table *t = data->tags;
    g_return_val_if_fail(tag_index >= 0 && tag_index < t->n_names && run_index >= 0 && run_index < t->n_runs, -1);
    return t->ids[(size_t)tag_index * t->n_runs + run_index];
}

void tw_dashboard_data_request_view(TwDashboardData *data, gint64 tag_id, tw_axis axis, double lo, double hi,
                                    int ncolumns)
{
    g_return_if_fail(isfinite(lo) && isfinite(hi) && lo <= hi && ncolumns >= 1);
    view_request q = {axis, lo, hi, MIN(ncolumns, MAX_COLUMNS)};
    g_mutex_lock(&data->lock);
    g_hash_table_replace(data->asked.views, key_new(tag_id), g_memdup2(&q, sizeof q));
    poke(data);
    g_mutex_unlock(&data->lock);
}

/* Counted: two charts of one tag both watch it until both stop. */
void tw_dashboard_data_watch(TwDashboardData *data, gint64 tag_id, gboolean watch)
{
    int count = GPOINTER_TO_INT(g_hash_table_lookup(data->watchers, &tag_id));
    if (!watch && count == 0)
        return;
    int now = count + (watch ? 1 : -1);
    if (now)
        g_hash_table_replace(data->watchers, key_new(tag_id), GINT_TO_POINTER(now));
    else
        g_hash_table_remove(data->watchers, &tag_id);
    if ((count > 0) == (now > 0))
        return;
    g_mutex_lock(&data->lock);
    g_hash_table_replace(data->asked.watches, key_new(tag_id), GINT_TO_POINTER(!!watch + 1));
    poke(data);
    g_mutex_unlock(&data->lock);
}

const TwSeriesView *tw_dashboard_data_series_view(TwDashboardData *data, gint64 tag_id)
{
    return g_hash_table_lookup(data->views, &tag_id);
}

void tw_dashboard_data_request_histograms(TwDashboardData *data, gint64 tag_id, int max_records)
{
    g_return_if_fail(max_records >= 0);
    g_mutex_lock(&data->lock);
    g_hash_table_replace(data->asked.histograms, key_new(tag_id), GINT_TO_POINTER(max_records + 1));
    poke(data);
    g_mutex_unlock(&data->lock);
}

const tw_histogram *tw_dashboard_data_histograms(TwDashboardData *data, gint64 tag_id, int *n)
{
    histogram_list *list = g_hash_table_lookup(data->histograms, &tag_id);
    *n = list ? list->n : 0;
    return list ? list->histograms : NULL;
}
