/* TwRunList: the Dashboard's runs — a row per run, newest first, with its
 * colour (tw_run_color by the order the runs were first seen, so a run keeps
 * its colour), a check box, the name, the status (a pulsing dot while
 * running) and the duration (ticking while running); above them a
 * case-insensitive regular-expression filter (an invalid one is marked and
 * the last valid one stays in force). The newest run and running runs start
 * checked; a run that appears later is checked as it appears.
 *
 * Rows are a GtkListView's (GTK 4.8 builds at most 200 of them, around
 * the ones on screen), entering the list a few per frame, so hundreds of
 * runs never hold the main loop. "changed" is emitted when a check box or
 * the filter changes what the charts show. */
#ifndef TW_UI_RUN_LIST_H
#define TW_UI_RUN_LIST_H

#include <gtk/gtk.h>

#include "chart_render.h"
#include "dashboard_data.h"

G_BEGIN_DECLS

#define TW_TYPE_RUN_LIST (tw_run_list_get_type())
G_DECLARE_FINAL_TYPE(TwRunList, tw_run_list, TW, RUN_LIST, GtkWidget)

GtkWidget *tw_run_list_new(void);
/* Take the runs of data's current snapshot (after "runs-changed"). */
void tw_run_list_sync(TwRunList *list, TwDashboardData *data);
/* Forget every run (another file: its runs are others, even under the
 * same ids); the next sync is a first one again. */
void tw_run_list_reset(TwRunList *list);
/* Checked and matching the filter: drawn in the charts. */
gboolean tw_run_list_shown(TwRunList *list, gint64 run_id);
tw_rgb tw_run_list_color(TwRunList *list, gint64 run_id);
void tw_run_list_set_checked(TwRunList *list, gint64 run_id, gboolean checked);
/* Each run_ids[i] checked or not as checked[i], with one "changed" for
 * them all (none when nothing changed). */
void tw_run_list_set_checked_many(TwRunList *list, const gint64 *run_ids, const gboolean *checked, int n);
gboolean tw_run_list_checked(TwRunList *list, gint64 run_id);
/* Runs passing the filter (the rows there are), and the filter entry. */
guint tw_run_list_n_visible(TwRunList *list);
GtkEditable *tw_run_list_filter_entry(TwRunList *list);
/* Whether the filter text is a valid regular expression. */
gboolean tw_run_list_filter_valid(TwRunList *list);

G_END_DECLS

#endif
