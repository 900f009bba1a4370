/* Contract notes (from the implementation): watching a tag answers at once
 * with its extent (a view of 0 columns) when no view was asked for yet, so a
 * chart learns the range to ask for; "runs-changed" also fires when
 * tw_dashboard_data_error changes.
 *
 * TwDashboardData: everything the dashboard shows, read from one run
 * database off the main loop. A background thread owns a read-only store
 * handle (tw/run_store.h) and, every 50 ms: lists runs and tags (new runs
 * from other processes appear), tails the scalar series being watched from
 * their cursors, and answers level-of-detail requests for a chart's current
 * view. Only results cross to the main loop (g_main_context_invoke of
 * immutable snapshots); the main loop never queries SQLite.
 *
 * Signals (main loop): "runs-changed", "tags-changed", "series-changed"
 * (gint64 tag_id: new points arrived or a requested reduction is ready).
 */
#ifndef TW_UI_DASHBOARD_DATA_H
#define TW_UI_DASHBOARD_DATA_H

#include <glib-object.h>

#include <tw/run_store.h>

G_BEGIN_DECLS

#define TW_TYPE_DASHBOARD_DATA (tw_dashboard_data_get_type())
G_DECLARE_FINAL_TYPE(TwDashboardData, tw_dashboard_data, TW, DASHBOARD_DATA, GObject)

/* path NULL: the default run database. A missing file is not an error: the
 * dashboard shows "no runs yet" and picks the file up once it exists; so
 * is a file that cannot be opened in its first 2 s (being created: a log
 * directory's follower starting), tried again at every poll meanwhile. */
TwDashboardData *tw_dashboard_data_new(const char *path);
const char *tw_dashboard_data_path(TwDashboardData *data);
void tw_dashboard_data_set_path(TwDashboardData *data, const char *path);
/* The last error reading the file (a newer schema, not a run database), or NULL. */
const char *tw_dashboard_data_error(TwDashboardData *data);
/* Why a series cannot be read, or NULL: a damaged chunk marks its series
 * alone ("runs.db: run “a”, tag “loss”: scalar chunk 3: …", naming the
 * file, run, tag and chunk) and every other series reads on. The failed
 * view is asked again every second: the mark goes once it reads (a
 * repaired file, a passing failure). A change comes with "series-changed"
 * for the tag. */
const char *tw_dashboard_data_series_error(TwDashboardData *data, gint64 tag_id);

/* Snapshots on the main loop (borrowed; valid until the next "*-changed"). */
int tw_dashboard_data_n_runs(TwDashboardData *data);
const tw_run_info *tw_dashboard_data_run(TwDashboardData *data, int index);
/* Tags of all runs, merged by name: the names (sorted) and for each run
 * the tag id or -1. */
int tw_dashboard_data_n_tag_names(TwDashboardData *data);
const char *tw_dashboard_data_tag_name(TwDashboardData *data, int index);
tw_series_kind tw_dashboard_data_tag_kind(TwDashboardData *data, int index);
int64_t tw_dashboard_data_tag_id(TwDashboardData *data, int tag_index, int run_index);

/* ---- scalar series for charts ------------------------------------------- */
/* Ask for a series reduced to ncolumns over [lo, hi] on an axis; the
 * answer comes with "series-changed" and is read with _series_view. A new
 * request for the same tag replaces an older one not yet answered. While
 * watched, new points extend the series: the view is re-reduced from the
 * appended points only (not the whole series) and emitted again. */
void tw_dashboard_data_request_view(TwDashboardData *data, gint64 tag_id, tw_axis axis, double lo, double hi,
                                    int ncolumns);
/* Watches are counted: a tag stays watched until every watch is undone. */
void tw_dashboard_data_watch(TwDashboardData *data, gint64 tag_id, gboolean watch);

typedef struct {
    tw_axis axis;
    double lo, hi;
    int ncolumns;
    tw_lod_column *columns;
    /* When the range holds at most a few points per column: the points. */
    int64_t npoints;
    tw_scalar_point *points;
    /* The whole series' extent (for "reset zoom"). */
    int64_t count;
    double first_x, last_x;
    double min_value, max_value;
} TwSeriesView;
/* The latest answer for the tag, or NULL (borrowed). */
const TwSeriesView *tw_dashboard_data_series_view(TwDashboardData *data, gint64 tag_id);

/* Histograms of a tag (at most max_records spread over its steps); the
 * answer comes with "series-changed" and is read with _histograms. */
void tw_dashboard_data_request_histograms(TwDashboardData *data, gint64 tag_id, int max_records);
const tw_histogram *tw_dashboard_data_histograms(TwDashboardData *data, gint64 tag_id, int *n);
/* Whether an answer for the tag's histograms came (it may hold none). */
gboolean tw_dashboard_data_histograms_read(TwDashboardData *data, gint64 tag_id);

G_END_DECLS

#endif
