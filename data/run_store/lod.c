/* Level of detail: a range of a scalar series reduced to N equal-width
 * columns, exactly (the same numbers as a pass over every point), reading
 * only chunk summaries for the chunks that fall inside one column and
 * decoding just the chunks that straddle a column edge or the range's ends.
 * Since a chunk's steps and wall times never go down, its first and last
 * points bound all of its points on either axis.
 *
 * Rules, the same for a chunk's summary and for single points:
 * - a column's first point is the one with the smallest coordinate (step
 *   or wall time), ties going to the earlier written (chunk id, then
 *   index); its last point the one with the largest, ties to the later;
 * - NaN values count (nan_count) but are not extremes; among equal extreme
 *   values the smallest step is reported. */
#include <glib.h>
#include <math.h>

#include "tw/error.h"
#include "store_internal.h"

/* Where a point stands in writing order along the axis. */
typedef struct {
    double x;
    int64_t chunk;
    int index;
} order_key;

static int key_compare(order_key a, order_key b)
{
    if (a.x != b.x)
        return a.x < b.x ? -1 : 1;
    if (a.chunk != b.chunk)
        return a.chunk < b.chunk ? -1 : 1;
    return (a.index > b.index) - (a.index < b.index);
}

typedef struct {
    tw_axis axis;
    double lo, hi;
    int ncolumns;
    tw_lod_column *columns;
    order_key *first, *last; /* per column */
} reduction;

/* The column of coordinate x, or -1 outside [lo, hi]. Monotonic in x, so a
 * chunk whose first and last points share a column has all its points in
 * that column. */
static int column_of(const reduction *r, double x)
{
    if (!(x >= r->lo && x <= r->hi))
        return -1;
    if (r->hi == r->lo)
        return 0;
    double column = (x - r->lo) / (r->hi - r->lo) * r->ncolumns;
    return column >= r->ncolumns ? r->ncolumns - 1 : (int)column;
}

static double coordinate(const reduction *r, int64_t step, double wall_time)
{
    return r->axis == TW_AXIS_STEP ? (double)step : wall_time;
}

static void take_extremes(tw_lod_column *c, double min, int64_t min_step, double max, int64_t max_step)
{
    if (isnan(min))
        return;
    bool empty = isnan(c->min);
    if (empty || min < c->min || (min == c->min && min_step < c->min_step)) {
        c->min = min;
        c->min_step = min_step;
    }
    if (empty || max > c->max || (max == c->max && max_step < c->max_step)) {
        c->max = max;
        c->max_step = max_step;
    }
}

/* Adds points to column i: count of them, the first and last with their
 * order keys, and their extremes. */
static void add(reduction *r, int i, int64_t count, int64_t nan_count, tw_scalar_point first, order_key first_key,
                tw_scalar_point last, order_key last_key, double min, int64_t min_step, double max, int64_t max_step)
{
    tw_lod_column *c = &r->columns[i];
    if (c->count == 0 || key_compare(first_key, r->first[i]) < 0) {
        c->first = first;
        r->first[i] = first_key;
    }
    if (c->count == 0 || key_compare(last_key, r->last[i]) > 0) {
        c->last = last;
        r->last[i] = last_key;
    }
    c->count += count;
    c->nan_count += nan_count;
    take_extremes(c, min, min_step, max, max_step);
}

static double point_coordinate(const reduction *r, const tw_chunk *c, int i)
{
    return coordinate(r, c->steps[i], c->wall_times[i]);
}

/* Points [begin, end) of a decoded chunk, all in column i. */
static void add_segment(reduction *r, int i, int64_t chunk_id, const tw_chunk *c, int begin, int end)
{
    int64_t nan_count = 0, min_step = -1, max_step = -1;
    double min = NAN, max = NAN;
    bool found = false;
    for (int k = begin; k < end; k++) {
        double v = c->values[k];
        if (isnan(v)) {
            nan_count++;
            continue;
        }
        /* Steps never go down within a chunk: the first of equal extremes
         * has the smallest step. */
        if (!found) {
            min = max = v;
            min_step = max_step = c->steps[k];
            found = true;
        } else if (v < min) {
            min = v;
            min_step = c->steps[k];
        } else if (v > max) {
            max = v;
            max_step = c->steps[k];
        }
    }
    int last = end - 1;
    tw_scalar_point first_point = {c->steps[begin], c->wall_times[begin], c->values[begin]};
    tw_scalar_point last_point = {c->steps[last], c->wall_times[last], c->values[last]};
    add(r, i, end - begin, nan_count, first_point, (order_key){point_coordinate(r, c, begin), chunk_id, begin},
        last_point, (order_key){point_coordinate(r, c, last), chunk_id, last}, min, min_step, max, max_step);
}

/* A decoded chunk, cut where its points change column: the coordinates
 * never go down, so each column's points are one run, found by bisection
 * (points past the range's end have column -1 and end the last run). */
static void add_points(reduction *r, int64_t chunk_id, const tw_chunk *c)
{
    for (int begin = 0; begin < c->n;) {
        int column = column_of(r, point_coordinate(r, c, begin));
        if (column < 0) {
            begin++;
            continue;
        }
        int inside = begin, outside = c->n;
        while (outside - inside > 1) {
            int middle = inside + (outside - inside) / 2;
            if (column_of(r, point_coordinate(r, c, middle)) == column)
                inside = middle;
            else
                outside = middle;
        }
        add_segment(r, column, chunk_id, c, begin, outside);
        begin = outside;
    }
}

/* The summary columns as the range query selects them. */
enum { C_ID, C_COUNT, C_NAN, C_FIRST_STEP, C_LAST_STEP, C_FIRST_WALL, C_LAST_WALL, C_FIRST_VALUE, C_LAST_VALUE,
       C_MIN, C_MAX, C_MIN_STEP, C_MAX_STEP };

/* Whole-chunk summary into one column; 1 when the chunk must be decoded. */
static int add_summary(reduction *r, sqlite3_stmt *s)
{
    int64_t id = sqlite3_column_int64(s, C_ID), count = sqlite3_column_int64(s, C_COUNT);
    tw_scalar_point first = {sqlite3_column_int64(s, C_FIRST_STEP), sqlite3_column_double(s, C_FIRST_WALL),
                             tw__column_real(s, C_FIRST_VALUE)};
    tw_scalar_point last = {sqlite3_column_int64(s, C_LAST_STEP), sqlite3_column_double(s, C_LAST_WALL),
                            tw__column_real(s, C_LAST_VALUE)};
    double x0 = coordinate(r, first.step, first.wall_time), x1 = coordinate(r, last.step, last.wall_time);
    int column = column_of(r, x0);
    if (column < 0 || column != column_of(r, x1))
        return 1;
    add(r, column, count, sqlite3_column_int64(s, C_NAN), first, (order_key){x0, id, 0}, last,
        (order_key){x1, id, (int)count - 1}, tw__column_real(s, C_MIN), sqlite3_column_int64(s, C_MIN_STEP),
        tw__column_real(s, C_MAX), sqlite3_column_int64(s, C_MAX_STEP));
    return 0;
}

static int add_decoded(reduction *r, tw_run_store *store, sqlite3_stmt *points, int64_t id, tw_chunk *chunk)
{
    int rc = sqlite3_bind_int64(points, 1, id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(points);
    int status = rc == SQLITE_ROW ? tw__chunk_unpack(store->path, sqlite3_column_blob(points, 0), sqlite3_column_bytes(points, 0),
                                                     id, chunk)
                                  : tw__store_sqlite_error(store->db, store->path, "cannot read a chunk");
    sqlite3_reset(points);
    if (status == 0)
        add_points(r, id, chunk);
    return status;
}

static const char *const range_sql[] = {
    [TW_AXIS_STEP] = "SELECT id, count, nan_count, first_step, last_step, first_wall_time, last_wall_time, "
                     "first_value, last_value, min_value, max_value, min_step, max_step FROM scalar_chunks "
                     "WHERE tag_id = ?1 AND first_step <= ?3 AND last_step >= ?2",
    [TW_AXIS_WALL_TIME] = "SELECT id, count, nan_count, first_step, last_step, first_wall_time, last_wall_time, "
                          "first_value, last_value, min_value, max_value, min_step, max_step FROM scalar_chunks "
                          "WHERE tag_id = ?1 AND first_wall_time <= ?3 AND last_wall_time >= ?2",
};

/* Every chunk overlapping the range, in one read transaction so that a
 * chunk the writer extends meanwhile is read as its summary said. */
static int reduce(reduction *r, tw_run_store *store, int64_t tag_id)
{
    sqlite3_stmt *range = NULL, *points = NULL;
    int rc = tw__store_statement(store, range_sql[r->axis], &range);
    if (rc == SQLITE_OK)
        rc = tw__store_statement(store, "SELECT points FROM scalar_chunks WHERE id = ?1", &points);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(range, 1, tag_id) | sqlite3_bind_double(range, 2, r->lo) |
             sqlite3_bind_double(range, 3, r->hi);
    bool began = false;
    if (rc == SQLITE_OK && tw__store_read_begin(store, &began) != SQLITE_DONE)
        rc = SQLITE_ERROR;
    tw_chunk *chunk = g_new(tw_chunk, 1);
    int status = rc == SQLITE_OK ? 0 : tw__store_sqlite_error(store->db, store->path, "cannot read the series");
    while (status == 0 && (rc = sqlite3_step(range)) == SQLITE_ROW)
        if (add_summary(r, range))
            status = add_decoded(r, store, points, sqlite3_column_int64(range, C_ID), chunk);
    if (status == 0 && rc != SQLITE_DONE)
        status = tw__store_sqlite_error(store->db, store->path, "cannot read the series");
    tw__store_statement_done(range);
    tw__store_statement_done(points);
    tw__store_read_end(store, began);
    g_free(chunk);
    return status;
}

int tw_run_store_read_lod(tw_run_store *store, int64_t tag_id, tw_axis axis, double lo, double hi, int ncolumns,
                          tw_lod_column *columns)
{
    if (ncolumns < 1 || !columns)
        return tw_error_set("%s: read_lod: %d columns", store->path, ncolumns);
    if (!isfinite(lo) || !isfinite(hi) || lo > hi)
        return tw_error_set("%s: read_lod: the range [%g, %g] is not a finite range", store->path, lo, hi);
    if (axis != TW_AXIS_STEP && axis != TW_AXIS_WALL_TIME)
        return tw_error_set("%s: read_lod: unknown axis %d", store->path, (int)axis);
    for (int i = 0; i < ncolumns; i++)
        columns[i] = (tw_lod_column){.min = NAN, .max = NAN, .min_step = -1, .max_step = -1};
    reduction r = {axis, lo, hi, ncolumns, columns, g_new(order_key, ncolumns), g_new(order_key, ncolumns)};
    int status = reduce(&r, store, tag_id);
    g_free(r.first);
    g_free(r.last);
    return status;
}
