/* TwDashboardView: the Dashboard page. Left: the runs (a colour each, check
 * boxes, a regular-expression filter, status and duration) and the chart
 * settings (smoothing slider, default 0.6; x axis step / relative / wall
 * time; y axis linear / log; ignore outliers). Right: tags grouped by their
 * prefix ("train/", "validation/") in collapsible sections with a tag
 * filter, a TwChartView per scalar tag, Histograms / Distributions tabs
 * for histogram tags, an Images tab (a TwImageCard per run and image tag)
 * and a Text tab (a TwTextCard per run and text tag, markdown rendered). Runs written by another process appear and update
 * like those started from the window.
 *
 * Contract changes (dashboard page): the "logdb" property (so the window's
 * template can hold the page), "ready" with tw_dashboard_view_ready (the
 * first data is on screen: `twb --screenshot` waits for it), and
 * tw_dashboard_view_show_tab. */
#ifndef TW_UI_DASHBOARD_VIEW_H
#define TW_UI_DASHBOARD_VIEW_H

#include <gtk/gtk.h>

#include "dashboard_data.h"

G_BEGIN_DECLS

#define TW_TYPE_DASHBOARD_VIEW (tw_dashboard_view_get_type())
G_DECLARE_FINAL_TYPE(TwDashboardView, tw_dashboard_view, TW, DASHBOARD_VIEW, GtkWidget)

GtkWidget *tw_dashboard_view_new(const char *logdb_path);
void tw_dashboard_view_set_logdb(TwDashboardView *view, const char *path);
TwDashboardData *tw_dashboard_view_data(TwDashboardView *view);
/* TRUE once the runs are listed and every chart built on screen has had
 * its first answer (notify::ready). */
gboolean tw_dashboard_view_ready(TwDashboardView *view);
/* "scalars", "histograms", "distributions", "images" or "text";
 * "hparams": the HParams table and plots (hparams_view.h). */
void tw_dashboard_view_show_tab(TwDashboardView *view, const char *name);
/* Show a TensorBoard log directory, live: its runs are followed
 * (tw_tb_follow) into a run database of its own in the user's cache,
 * rebuilt from the event files, which the page then reads. Setting
 * another database (tw_dashboard_view_set_logdb) stops following. FALSE
 * with the reason when the folder cannot be read or watched. */
gboolean tw_dashboard_view_open_logdir(TwDashboardView *view, const char *dir, GError **error);
/* The log directory followed, or NULL. */
const char *tw_dashboard_view_logdir(TwDashboardView *view);

G_END_DECLS

#endif
