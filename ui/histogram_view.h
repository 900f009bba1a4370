/* TwHistogramView: one run's histogram tag drawn by the pure renderers
 * (histogram_render.h) — offset ridges, overlaid outlines, or the
 * distribution's percentile bands over steps. It asks TwDashboardData for
 * the tag's histograms when shown, watches the tag while shown (new
 * records are read again), and redraws when an answer comes with
 * "series-changed". */
#ifndef TW_UI_HISTOGRAM_VIEW_H
#define TW_UI_HISTOGRAM_VIEW_H

#include <gtk/gtk.h>

#include "dashboard_data.h"
#include "histogram_render.h"

G_BEGIN_DECLS

#define TW_TYPE_HISTOGRAM_VIEW (tw_histogram_view_get_type())
G_DECLARE_FINAL_TYPE(TwHistogramView, tw_histogram_view, TW, HISTOGRAM_VIEW, GtkWidget)

typedef enum { TW_HISTOGRAM_VIEW_OFFSET, TW_HISTOGRAM_VIEW_OVERLAY, TW_HISTOGRAM_VIEW_DISTRIBUTION } TwHistogramViewMode;

/* Histograms asked for per tag: spread evenly over its steps. */
#define TW_HISTOGRAM_VIEW_RECORDS 50

GtkWidget *tw_histogram_view_new(TwDashboardData *data, gint64 tag_id, const char *title, tw_rgb color,
                                 TwHistogramViewMode mode);
void tw_histogram_view_set_mode(TwHistogramView *view, TwHistogramViewMode mode);
gint64 tw_histogram_view_tag_id(TwHistogramView *view);
/* Histograms in the last frame drawn (-1 before the first). */
int tw_histogram_view_n_drawn(TwHistogramView *view);

G_END_DECLS

#endif
