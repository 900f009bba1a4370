/* What crosses between the dashboard data's reader thread
 * (dashboard_reader.c) and the main loop (dashboard_data.c): the main
 * loop's requests one way, a pass's batch of results the other, and the
 * tables both keep. Keys of the id tables are gint64 (tw_id_key_new). */
#ifndef TW_UI_DASHBOARD_BATCH_H
#define TW_UI_DASHBOARD_BATCH_H

#include <glib.h>

#include <tw/run_store.h>

/* A view asked for (tw_dashboard_data_request_view). */
typedef struct {
    tw_axis axis;
    double lo, hi;
    int ncolumns;
} tw_view_request;

/* Tags merged by name over the runs (dashboard_data.h). */
typedef struct {
    int n_names, n_runs;
    char **names;
    tw_series_kind *kinds;
    gint64 *ids; /* n_names x n_runs, -1 where a run lacks the tag */
} tw_tag_table;

typedef struct {
    int n;
    tw_histogram *histograms;
} tw_histogram_list;

/* What one pass found, for the main loop. */
typedef struct {
    char *path;     /* the file it was read from */
    gboolean reset; /* another file: every view and histogram before is gone */
    gboolean has_runs;
    tw_run_info *runs;
    int n_runs;
    tw_tag_table *tags; /* NULL: unchanged */
    gboolean has_error;
    char *error;
    GHashTable *views;      /* tag id -> TwSeriesView */
    GHashTable *histograms; /* tag id -> tw_histogram_list */
    GHashTable *series_errors; /* tag id -> why it cannot be read, "" when it can again */
} tw_dashboard_batch;

/* What the main loop asked for since the thread last looked. */
typedef struct {
    char *path; /* NULL: unchanged */
    GHashTable *views;      /* tag id -> tw_view_request, the latest */
    GHashTable *watches;    /* tag id -> GINT_TO_POINTER(watch + 1) */
    GHashTable *histograms; /* tag id -> GINT_TO_POINTER(max_records + 1) */
} tw_dashboard_requests;

gint64 *tw_id_key_new(gint64 id);
/* A table keyed by tw_id_key_new's keys, freeing them. */
GHashTable *tw_id_table_new(GDestroyNotify free_value);

void tw_tag_table_free(tw_tag_table *t);
tw_tag_table *tw_tag_table_copy(const tw_tag_table *t);
gboolean tw_tag_table_equal(const tw_tag_table *a, const tw_tag_table *b);
void tw_histogram_list_free(tw_histogram_list *list);

tw_dashboard_batch *tw_dashboard_batch_new(void);
void tw_dashboard_batch_free(tw_dashboard_batch *b);
gboolean tw_dashboard_batch_empty(const tw_dashboard_batch *b);
/* A later batch over an earlier one; `from` is freed. */
void tw_dashboard_batch_merge(tw_dashboard_batch *into, tw_dashboard_batch *from);

void tw_dashboard_requests_init(tw_dashboard_requests *r);
void tw_dashboard_requests_clear(tw_dashboard_requests *r);

#endif
