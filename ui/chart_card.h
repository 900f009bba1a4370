/* TwChartCard: a scalar tag's card on the Dashboard — the TwChartView
 * (which draws the tag as its title) with PNG / SVG / CSV export buttons
 * over its top right corner (a GtkFileChooserNative each time; what was
 * saved, or why not, goes to the window's banner), and under the chart a
 * mark for each of its series that cannot be read (a damaged chunk), with
 * the message naming the database, run, tag and chunk. */
#ifndef TW_UI_CHART_CARD_H
#define TW_UI_CHART_CARD_H

#include <gtk/gtk.h>

#include "chart_view.h"

G_BEGIN_DECLS

#define TW_TYPE_CHART_CARD (tw_chart_card_get_type())
G_DECLARE_FINAL_TYPE(TwChartCard, tw_chart_card, TW, CHART_CARD, GtkWidget)

GtkWidget *tw_chart_card_new(TwDashboardData *data, const char *tag);
TwChartView *tw_chart_card_chart(TwChartCard *card);
const char *tw_chart_card_tag(TwChartCard *card);
/* Passes the series on to the chart when they differ from the last ones
 * (so an unrelated update leaves the chart's requests alone). */
void tw_chart_card_set_series(TwChartCard *card, int n, const gint64 *tag_ids, const tw_rgb *colors,
                              const char *const *labels, const double *time_origins);
/* The mark's text (a line per series that cannot be read), or NULL. */
const char *tw_chart_card_damage(TwChartCard *card);
/* The tag ids last set. */
const gint64 *tw_chart_card_tag_ids(TwChartCard *card, int *n);

G_END_DECLS

#endif
