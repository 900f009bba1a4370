/* TwSeriesView arithmetic (see series_view.h). */
#include "series_view.h"

#include <math.h>
#include <string.h>

double tw_series_x(tw_axis axis, tw_scalar_point p)
{
    return axis == TW_AXIS_STEP ? (double)p.step : p.wall_time;
}

/* The store's rule: floor((x - lo) / (hi - lo) * n), x = hi in the last column. */
int tw_series_view_column_of(const TwSeriesView *view, double x)
{
    if (view->ncolumns < 1 || !(x >= view->lo && x <= view->hi))
        return -1;
    if (view->hi == view->lo)
        return 0;
    double column = (x - view->lo) / (view->hi - view->lo) * view->ncolumns;
    return column >= view->ncolumns ? view->ncolumns - 1 : (int)column;
}

void tw_lod_columns_clear(tw_lod_column *columns, int n)
{
    for (int i = 0; i < n; i++)
        columns[i] = (tw_lod_column){.min = NAN, .max = NAN, .min_step = -1, .max_step = -1};
}

static void take_min(tw_lod_column *into, double value, int64_t step)
{
    if (isnan(value))
        return;
    if (isnan(into->min) || value < into->min || (value == into->min && step < into->min_step)) {
        into->min = value;
        into->min_step = step;
    }
}

static void take_max(tw_lod_column *into, double value, int64_t step)
{
    if (isnan(value))
        return;
    if (isnan(into->max) || value > into->max || (value == into->max && step < into->max_step)) {
        into->max = value;
        into->max_step = step;
    }
}

void tw_lod_column_add(tw_lod_column *c, tw_axis axis, tw_scalar_point p)
{
    double x = tw_series_x(axis, p);
    if (c->count == 0 || x < tw_series_x(axis, c->first))
        c->first = p; /* ties stay with the earlier written */
    if (c->count == 0 || x >= tw_series_x(axis, c->last))
        c->last = p; /* ties go to the later written */
    c->count++;
    if (isnan(p.value)) {
        c->nan_count++;
        return;
    }
    take_min(c, p.value, p.step);
    take_max(c, p.value, p.step);
}

void tw_lod_column_merge(tw_lod_column *into, const tw_lod_column *from, tw_axis axis)
{
    if (from->count == 0)
        return;
    if (into->count == 0) {
        *into = *from;
        return;
    }
    if (tw_series_x(axis, from->first) < tw_series_x(axis, into->first))
        into->first = from->first;
    if (tw_series_x(axis, from->last) >= tw_series_x(axis, into->last))
        into->last = from->last;
    into->count += from->count;
    into->nan_count += from->nan_count;
    take_min(into, from->min, from->min_step);
    take_max(into, from->max, from->max_step);
}

void tw_series_view_remap(const TwSeriesView *view, double lo, double hi, int ncolumns, tw_lod_column *out)
{
    tw_lod_columns_clear(out, ncolumns);
    TwSeriesView target = {.axis = view->axis, .lo = lo, .hi = hi, .ncolumns = ncolumns};
    double width = (view->hi - view->lo) / view->ncolumns;
    for (int i = 0; i < view->ncolumns; i++) {
        int j = tw_series_view_column_of(&target, view->lo + (i + 0.5) * width);
        if (j >= 0)
            tw_lod_column_merge(&out[j], &view->columns[i], view->axis);
    }
}

void tw_series_view_set_extent(TwSeriesView *view, const tw_lod_column *all)
{
    view->count = all->count;
    view->first_x = all->count ? tw_series_x(view->axis, all->first) : NAN;
    view->last_x = all->count ? tw_series_x(view->axis, all->last) : NAN;
    view->min_value = all->min;
    view->max_value = all->max;
}

static void extend(TwSeriesView *view, tw_scalar_point p)
{
    double x = tw_series_x(view->axis, p);
    if (view->count == 0 || x < view->first_x)
        view->first_x = x;
    if (view->count == 0 || x > view->last_x)
        view->last_x = x;
    view->count++;
    if (!isnan(p.value) && (isnan(view->min_value) || p.value < view->min_value))
        view->min_value = p.value;
    if (!isnan(p.value) && (isnan(view->max_value) || p.value > view->max_value))
        view->max_value = p.value;
}

/* Where a point of coordinate x goes among the sorted raw points: after
 * those with the same x (they were written earlier). */
static int64_t insert_position(const TwSeriesView *view, double x)
{
    int64_t lo = 0, hi = view->npoints;
    while (lo < hi) {
        int64_t middle = lo + (hi - lo) / 2;
        if (tw_series_x(view->axis, view->points[middle]) <= x)
            lo = middle + 1;
        else
            hi = middle;
    }
    return lo;
}

static void add_raw_point(TwSeriesView *view, tw_scalar_point p)
{
    if (view->npoints + 1 > 2 * (int64_t)view->ncolumns) {
        g_clear_pointer(&view->points, g_free);
        view->npoints = 0;
        return;
    }
    int64_t at = insert_position(view, tw_series_x(view->axis, p));
    view->points = g_renew(tw_scalar_point, view->points, view->npoints + 1);
    memmove(view->points + at + 1, view->points + at, (size_t)(view->npoints - at) * sizeof *view->points);
    view->points[at] = p;
    view->npoints++;
}

void tw_series_view_append(TwSeriesView *view, const tw_scalar_point *points, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        extend(view, points[i]);
        int column = tw_series_view_column_of(view, tw_series_x(view->axis, points[i]));
        if (column < 0)
            continue;
        tw_lod_column_add(&view->columns[column], view->axis, points[i]);
        if (view->points)
            add_raw_point(view, points[i]);
    }
}

static gint compare_x(gconstpointer a, gconstpointer b, gpointer axis)
{
    double xa = tw_series_x(GPOINTER_TO_INT(axis), *(const tw_scalar_point *)a);
    double xb = tw_series_x(GPOINTER_TO_INT(axis), *(const tw_scalar_point *)b);
    return (xa > xb) - (xa < xb);
}

void tw_series_view_take_points(TwSeriesView *view, tw_scalar_point *points, int64_t n)
{
    tw_lod_columns_clear(view->columns, view->ncolumns);
    for (int64_t i = 0; i < n; i++) {
        int column = tw_series_view_column_of(view, tw_series_x(view->axis, points[i]));
        if (column >= 0)
            tw_lod_column_add(&view->columns[column], view->axis, points[i]);
    }
    /* g_qsort_with_data is stable: equal x keep their writing order. */
    g_qsort_with_data(points, (gint)n, sizeof *points, compare_x, GINT_TO_POINTER(view->axis));
    g_free(view->points);
    /* Non-NULL even when empty: the view is in raw mode, later points join. */
    view->points = n ? points : g_new(tw_scalar_point, 1);
    view->npoints = n;
}

TwSeriesView *tw_series_view_copy(const TwSeriesView *view)
{
    TwSeriesView *copy = g_atomic_rc_box_dup(sizeof *view, (gpointer)view);
    copy->columns = g_memdup2(view->columns, sizeof *view->columns * (size_t)view->ncolumns);
    copy->points =
        view->points ? g_memdup2(view->points, sizeof *view->points * (size_t)MAX(view->npoints, 1)) : NULL;
    return copy;
}

const TwSeriesView *tw_series_view_ref(const TwSeriesView *copy)
{
    return g_atomic_rc_box_acquire((gpointer)copy);
}

void tw_series_view_clear(TwSeriesView *view)
{
    g_clear_pointer(&view->columns, g_free);
    g_clear_pointer(&view->points, g_free);
    view->ncolumns = 0;
    view->npoints = 0;
}

void tw_series_view_unref(const TwSeriesView *copy)
{
    if (copy)
        g_atomic_rc_box_release_full((gpointer)copy, (GDestroyNotify)tw_series_view_clear);
}
