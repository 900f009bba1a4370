/* TwHparamsView: the Dashboard's HParams tab. A table with a row per run
 * and a column per hyperparameter and final metric (hparams_table.h), its
 * rows sorted by clicking a column's header, filtered by a query ("lr>=1e-3
 * batch_size=32..64 optimizer=adam"), its columns hidden from the Columns
 * menu; under it a parallel-coordinates plot of the rows passing the
 * filter and a scatter of a metric against a hyperparameter, both drawn by
 * hparams_render.c and exportable (Export: the table as CSV, each plot as
 * PNG or SVG).
 *
 * One selection for the whole window: the table's selected rows are the
 * run list's checked runs, which the charts draw. Selecting rows (or a
 * point in the scatter) checks exactly those runs, unchecking the others;
 * checking a run in the run list selects its row. The table follows the
 * run database live (tw_hparams_view_sync after "runs-changed"). */
#ifndef TW_UI_HPARAMS_VIEW_H
#define TW_UI_HPARAMS_VIEW_H

#include <gtk/gtk.h>

#include "dashboard_data.h"
#include "hparams_table.h"
#include "run_list.h"

G_BEGIN_DECLS

#define TW_TYPE_HPARAMS_VIEW (tw_hparams_view_get_type())
G_DECLARE_FINAL_TYPE(TwHparamsView, tw_hparams_view, TW, HPARAMS_VIEW, GtkWidget)

/* runs: the run list whose checked runs are the selection (a reference is
 * kept; the construct-only property "run-list", for .ui templates). */
GtkWidget *tw_hparams_view_new(TwRunList *runs);
/* Rebuild the table from data's runs (after "runs-changed"). */
void tw_hparams_view_sync(TwHparamsView *view, TwDashboardData *data);
/* The same from runs given (newest first), for tests and the bench. */
void tw_hparams_view_set_runs(TwHparamsView *view, const tw_run_info *runs, int n);
const tw_hp_table *tw_hparams_view_table(TwHparamsView *view);

/* The rows on screen: passing the filter, in the sorted order. */
guint tw_hparams_view_n_shown(TwHparamsView *view);
gint64 tw_hparams_view_shown_run(TwHparamsView *view, guint position);
/* Select exactly these runs, as a person's click would (the run list follows). */
void tw_hparams_view_select(TwHparamsView *view, const gint64 *run_ids, int n);
gboolean tw_hparams_view_selected(TwHparamsView *view, gint64 run_id);
/* The filter entry's text; the sort by a column's header (NULL: the run name). */
GtkEditable *tw_hparams_view_filter_entry(TwHparamsView *view);
void tw_hparams_view_sort(TwHparamsView *view, const char *column, gboolean descending);
/* Hide or show a column, as the Columns menu does. */
void tw_hparams_view_set_column_visible(TwHparamsView *view, const char *column, gboolean visible);
/* The scatter's axes by column name (x: a hyperparameter, y: a metric). */
void tw_hparams_view_set_scatter(TwHparamsView *view, const char *x, const char *y);
/* what: "csv" (the rows shown, the columns not hidden), "parallel" or
 * "scatter" (PNG or SVG by path's extension). */
gboolean tw_hparams_view_export(TwHparamsView *view, const char *what, const char *path, GError **error);

G_END_DECLS

#endif
