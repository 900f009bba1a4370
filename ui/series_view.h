/* The arithmetic of a TwSeriesView (dashboard_data.h) done point by point:
 * the data thread reduces appended points into an existing view and
 * builds a zoomed-in view's columns from its raw points, by the store's
 * level-of-detail rules (docs/run_database.md, "Level of detail"), so the
 * columns are the same numbers tw_run_store_read_lod would return. */
#ifndef TW_UI_SERIES_VIEW_H
#define TW_UI_SERIES_VIEW_H

#include "dashboard_data.h"

/* A point's coordinate on the axis. */
double tw_series_x(tw_axis axis, tw_scalar_point p);
/* The column of x in the view, or -1 outside [lo, hi]. */
int tw_series_view_column_of(const TwSeriesView *view, double x);
/* Empty columns (count 0, NaN extremes, steps -1). */
void tw_lod_columns_clear(tw_lod_column *columns, int n);
/* Adds one point, later in writing order than those already in the column. */
void tw_lod_column_add(tw_lod_column *column, tw_axis axis, tw_scalar_point p);

/* Adds the points of column `from` to `into` (as if read after them). */
void tw_lod_column_merge(tw_lod_column *into, const tw_lod_column *from, tw_axis axis);
/* A view's columns regrouped into ncolumns columns over [lo, hi] (by each
 * column's centre), for drawing an older view shifted or scaled until the
 * new one arrives. */
void tw_series_view_remap(const TwSeriesView *view, double lo, double hi, int ncolumns, tw_lod_column *out);

/* The extent of a series reduced to one column over the whole axis. */
void tw_series_view_set_extent(TwSeriesView *view, const tw_lod_column *all);
/* Appended points (writing order): the extent grows, those inside
 * [lo, hi] join their columns, and the raw points while they stay at most
 * 2 per column (past that the view keeps only its columns). */
void tw_series_view_append(TwSeriesView *view, const tw_scalar_point *points, int64_t n);
/* Takes the range's raw points (writing order, malloc'd) as the view's
 * columns and points, sorted by x. */
void tw_series_view_take_points(TwSeriesView *view, tw_scalar_point *points, int64_t n);

/* Deep copies for the main loop, reference counted (atomically): a chart
 * keeps the snapshot it draws, in a render thread too, after the data
 * object has moved on to a newer one. */
TwSeriesView *tw_series_view_copy(const TwSeriesView *view);
const TwSeriesView *tw_series_view_ref(const TwSeriesView *copy);
void tw_series_view_unref(const TwSeriesView *copy);
void tw_series_view_clear(TwSeriesView *view); /* frees the arrays of a view not from _copy */

#endif
