/* TwDashboardData (see dashboard_data.h): the object on the main loop.
 * Its reader thread (dashboard_reader.c) answers the requests made here
 * with batches (dashboard_batch.h); the main loop applies a batch, then
 * emits the signals. */
#include "dashboard_data.h"

#include <math.h>

#include "dashboard_reader.h"
#include "series_view.h"

#define MAX_COLUMNS 16384

struct _TwDashboardData {
    GObject parent_instance;
    char *path;
    /* The main loop's snapshot. */
    tw_run_info *runs;
    int n_runs;
    tw_tag_table *tags;
    char *error;
    GHashTable *views, *histograms;
    GHashTable *series_errors; /* tag id -> message */
    GHashTable *watchers; /* tag id -> how many asked to watch it */
    tw_dashboard_shared shared; /* with the thread */
    GThread *thread;
};

G_DEFINE_FINAL_TYPE(TwDashboardData, tw_dashboard_data, G_TYPE_OBJECT)

enum { SIGNAL_RUNS_CHANGED, SIGNAL_TAGS_CHANGED, SIGNAL_SERIES_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* The batch becomes the snapshot; then the signals, the state complete. */
static void apply(TwDashboardData *data, tw_dashboard_batch *b)
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
        tw_tag_table_free(data->tags);
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
    g_mutex_lock(&data->shared.lock);
    tw_dashboard_batch *b = g_steal_pointer(&data->shared.pending);
    g_clear_pointer(&data->shared.pending_source, g_source_unref);
    g_mutex_unlock(&data->shared.lock);
    apply(data, b);
    tw_dashboard_batch_free(b);
    return G_SOURCE_REMOVE;
}

static void tw_dashboard_data_dispose(GObject *object)
{
    TwDashboardData *data = TW_DASHBOARD_DATA(object);
    if (data->thread) {
        g_mutex_lock(&data->shared.lock);
        data->shared.quit = TRUE;
        g_main_context_wakeup(data->shared.reader_context);
        g_mutex_unlock(&data->shared.lock);
        g_thread_join(g_steal_pointer(&data->thread));
    }
    /* The thread is gone: nothing posts any more. */
    if (data->shared.pending_source) {
        g_source_destroy(data->shared.pending_source);
        g_clear_pointer(&data->shared.pending_source, g_source_unref);
        g_clear_pointer(&data->shared.pending, tw_dashboard_batch_free);
    }
    G_OBJECT_CLASS(tw_dashboard_data_parent_class)->dispose(object);
}

static void tw_dashboard_data_finalize(GObject *object)
{
    TwDashboardData *data = TW_DASHBOARD_DATA(object);
    g_free(data->path);
    tw_run_info_free(data->runs, data->n_runs);
    tw_tag_table_free(data->tags);
    g_free(data->error);
    g_hash_table_unref(data->views);
    g_hash_table_unref(data->histograms);
    g_hash_table_unref(data->series_errors);
    g_hash_table_unref(data->watchers);
    tw_dashboard_requests_clear(&data->shared.asked);
    g_mutex_clear(&data->shared.lock);
    g_main_context_unref(data->shared.reader_context);
    g_main_context_unref(data->shared.context);
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
    data->shared.context = g_main_context_ref_thread_default();
    data->tags = g_new0(tw_tag_table, 1);
    data->tags->names = g_new0(char *, 1);
    data->views = tw_id_table_new((GDestroyNotify)tw_series_view_unref);
    data->histograms = tw_id_table_new((GDestroyNotify)tw_histogram_list_free);
    data->series_errors = tw_id_table_new(g_free);
    data->watchers = tw_id_table_new(NULL);
    g_mutex_init(&data->shared.lock);
    data->shared.reader_context = g_main_context_new();
    tw_dashboard_requests_init(&data->shared.asked);
    data->shared.deliver = deliver;
    data->shared.deliver_data = data;
}

/* Wakes the thread for what was just asked (under the lock). */
static void poke(TwDashboardData *data)
{
    data->shared.poked = TRUE;
    g_main_context_wakeup(data->shared.reader_context);
}

TwDashboardData *tw_dashboard_data_new(const char *path)
{
    TwDashboardData *data = g_object_new(TW_TYPE_DASHBOARD_DATA, NULL);
    tw_dashboard_data_set_path(data, path);
    data->thread = tw_dashboard_reader_start(&data->shared);
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
    g_mutex_lock(&data->shared.lock);
    g_free(data->shared.asked.path);
    data->shared.asked.path = g_strdup(resolved);
    /* Requests made for the old file mean nothing in the new one. */
    g_hash_table_remove_all(data->watchers);
    g_hash_table_remove_all(data->shared.asked.views);
    g_hash_table_remove_all(data->shared.asked.watches);
    g_hash_table_remove_all(data->shared.asked.histograms);
    poke(data);
    g_mutex_unlock(&data->shared.lock);
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
    const tw_tag_table *t = data->tags;
    g_return_val_if_fail(tag_index >= 0 && tag_index < t->n_names && run_index >= 0 && run_index < t->n_runs, -1);
    return t->ids[(size_t)tag_index * t->n_runs + run_index];
}

void tw_dashboard_data_request_view(TwDashboardData *data, gint64 tag_id, tw_axis axis, double lo, double hi,
                                    int ncolumns)
{
    g_return_if_fail(isfinite(lo) && isfinite(hi) && lo <= hi && ncolumns >= 1);
    tw_view_request q = {axis, lo, hi, MIN(ncolumns, MAX_COLUMNS)};
    g_mutex_lock(&data->shared.lock);
    g_hash_table_replace(data->shared.asked.views, tw_id_key_new(tag_id), g_memdup2(&q, sizeof q));
    poke(data);
    g_mutex_unlock(&data->shared.lock);
}

/* Counted: two charts of one tag both watch it until both stop. */
void tw_dashboard_data_watch(TwDashboardData *data, gint64 tag_id, gboolean watch)
{
    int count = GPOINTER_TO_INT(g_hash_table_lookup(data->watchers, &tag_id));
    if (!watch && count == 0)
        return;
    int now = count + (watch ? 1 : -1);
    if (now)
        g_hash_table_replace(data->watchers, tw_id_key_new(tag_id), GINT_TO_POINTER(now));
    else
        g_hash_table_remove(data->watchers, &tag_id);
    if ((count > 0) == (now > 0))
        return;
    g_mutex_lock(&data->shared.lock);
    g_hash_table_replace(data->shared.asked.watches, tw_id_key_new(tag_id), GINT_TO_POINTER(!!watch + 1));
    poke(data);
    g_mutex_unlock(&data->shared.lock);
}

const TwSeriesView *tw_dashboard_data_series_view(TwDashboardData *data, gint64 tag_id)
{
    return g_hash_table_lookup(data->views, &tag_id);
}

void tw_dashboard_data_request_histograms(TwDashboardData *data, gint64 tag_id, int max_records)
{
    g_return_if_fail(max_records >= 0);
    g_mutex_lock(&data->shared.lock);
    g_hash_table_replace(data->shared.asked.histograms, tw_id_key_new(tag_id), GINT_TO_POINTER(max_records + 1));
    poke(data);
    g_mutex_unlock(&data->shared.lock);
}

gboolean tw_dashboard_data_histograms_read(TwDashboardData *data, gint64 tag_id)
{
    return g_hash_table_contains(data->histograms, &tag_id);
}

const tw_histogram *tw_dashboard_data_histograms(TwDashboardData *data, gint64 tag_id, int *n)
{
    tw_histogram_list *list = g_hash_table_lookup(data->histograms, &tag_id);
    *n = list ? list->n : 0;
    return list ? list->histograms : NULL;
}
