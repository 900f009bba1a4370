/* A chart (chart_render.h) saved to a file: drawn as a PNG image or an SVG
 * drawing at a given size, or its visible data as CSV (run, wall_time,
 * step, value: the raw points in the x range, or each column's first and
 * last point when reduced, after a comment saying so). Errors name the
 * file. */
#ifndef TW_UI_CHART_EXPORT_H
#define TW_UI_CHART_EXPORT_H

#include <glib.h>

#include "chart_render.h"

gboolean tw_chart_export_png(const tw_chart *chart, int width, int height, const char *path, GError **error);
gboolean tw_chart_export_svg(const tw_chart *chart, int width, int height, const char *path, GError **error);
gboolean tw_chart_export_csv(const tw_chart *chart, const char *path, GError **error);

#endif
