/* What the live views read: a run's tags, a series' new points after a
 * cursor, its end, its raw points in a range, histograms and texts. The
 * level-of-detail reduction is in lod.c. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tw/error.h"
#include "store_internal.h"

/* ---- tags ----------------------------------------------------------------- */

/* Points or records of one tag, and their step range. */
/* A damaged file may hold NULL where the writer always writes text. */
static char *column_text_or_empty(sqlite3_stmt *stmt, int i)
{
    const unsigned char *text = sqlite3_column_text(stmt, i);
    return g_strdup(text ? (const char *)text : "");
}

static int tag_stats(tw_run_store *store, tw_tag_info *tag)
{
    static const char *const sql[] = {
        [TW_SERIES_SCALAR] = "SELECT coalesce(sum(count), 0), min(first_step), max(last_step) FROM scalar_chunks "
                             "WHERE tag_id = ?1",
        [TW_SERIES_HISTOGRAM] = "SELECT count(*), min(step), max(step) FROM histograms WHERE tag_id = ?1",
        [TW_SERIES_TEXT] = "SELECT count(*), min(step), max(step) FROM texts WHERE tag_id = ?1",
        [TW_SERIES_GRAPH] = "SELECT count(*), min(step), max(step) FROM texts WHERE tag_id = ?1",
    };
    sqlite3_stmt *stmt = NULL;
    int rc = tw__store_statement(store, sql[tag->kind], &stmt);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 1, tag->id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
        tag->count = sqlite3_column_int64(stmt, 0);
        tag->first_step = sqlite3_column_int64(stmt, 1); /* NULL, read as 0, when empty */
        tag->last_step = sqlite3_column_int64(stmt, 2);
    } else {
        tw__store_sqlite_error(store->db, store->path, "cannot count a tag's points");
    }
    tw__store_statement_done(stmt);
    return rc == SQLITE_ROW ? 0 : -1;
}

void tw_tag_info_free(tw_tag_info *tags, int n)
{
    for (int i = 0; tags && i < n; i++)
        g_free(tags[i].name);
    g_free(tags);
}

int tw_run_store_list_tags(tw_run_store *store, int64_t run_id, tw_tag_info **tags, int *n)
{
    *tags = NULL;
    *n = 0;
    sqlite3_stmt *stmt = NULL;
    int rc = tw__store_statement(store, "SELECT id, name, kind FROM tags WHERE run_id = ?1 ORDER BY name", &stmt);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 1, run_id);
    GArray *list = g_array_new(FALSE, FALSE, sizeof(tw_tag_info));
    int status = 0;
    while (status == 0 && rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        int kind = tw__series_kind_parse((const char *)sqlite3_column_text(stmt, 2));
        tw_tag_info tag = {.id = sqlite3_column_int64(stmt, 0),
                           .run_id = run_id,
                           .name = column_text_or_empty(stmt, 1),
                           .kind = kind < 0 || kind >= TW_SERIES_IMAGE ? TW_SERIES_TEXT : (tw_series_kind)kind};
        g_array_append_val(list, tag);
        status = tag_stats(store, &g_array_index(list, tw_tag_info, list->len - 1));
        rc = SQLITE_OK;
    }
    if (status == 0 && rc != SQLITE_DONE)
        status = tw__store_sqlite_error(store->db, store->path, "cannot list the tags");
    tw__store_statement_done(stmt);
    int count = (int)list->len;
    tw_tag_info *array = (tw_tag_info *)g_array_free(list, FALSE);
    if (status) {
        tw_tag_info_free(array, count);
        return -1;
    }
    *tags = array;
    *n = count;
    return 0;
}

int64_t tw_run_store_find_tag(tw_run_store *store, int64_t run_id, const char *name)
{
    sqlite3_stmt *stmt = NULL;
    int rc = tw__store_statement(store, "SELECT id FROM tags WHERE run_id = ?1 AND name = ?2", &stmt);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 1, run_id) | sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        tw__store_sqlite_error(store->db, store->path, "cannot look the tag up");
    tw__store_statement_done(stmt);
    return id;
}

/* ---- scalars after a cursor ----------------------------------------------- */

/* Appends points [start, start + take) of a chunk to a growing array. */
static int append_points(const tw_chunk *c, int start, int64_t take, tw_scalar_point **points, int64_t *n,
                         int64_t *capacity)
{
    if (*n + take > *capacity) {
        int64_t wanted = MAX(*n + take, 2 * *capacity);
        tw_scalar_point *grown = realloc(*points, (size_t)wanted * sizeof **points);
        if (!grown)
            return tw_error_set("run database: out of memory reading %lld points", (long long)wanted);
        *points = grown;
        *capacity = wanted;
    }
    for (int64_t i = 0; i < take; i++)
        (*points)[*n + i] = (tw_scalar_point){c->steps[start + i], c->wall_times[start + i], c->values[start + i]};
    *n += take;
    return 0;
}

/* The chunk at the cursor is read again only when it has grown (the
 * writer rewrites a tag's open last chunk); later chunks in full. */
int tw_run_store_read_scalars(tw_run_store *store, int64_t tag_id, tw_series_cursor *cursor, int64_t max,
                              tw_scalar_point **points, int64_t *n)
{
    *points = NULL;
    *n = 0;
    if (max < 0)
        return tw_error_set("%s: read_scalars: max is %lld, not 0 (all) or a number of points", store->path,
                            (long long)max);
    sqlite3_stmt *stmt = NULL;
    int rc = tw__store_statement(store, "SELECT id, points FROM scalar_chunks WHERE tag_id = ?1 AND id >= ?2 "
                                "AND (id > ?2 OR count > ?3) ORDER BY id", &stmt);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 1, tag_id) | sqlite3_bind_int64(stmt, 2, cursor->chunk) |
             sqlite3_bind_int64(stmt, 3, cursor->index);
    tw_chunk *chunk = g_new(tw_chunk, 1);
    tw_series_cursor at = *cursor; /* moved only on success */
    int64_t capacity = 0;
    int status = 0;
    while (status == 0 && (max == 0 || *n < max) && rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(stmt, 0);
        rc = SQLITE_OK;
        status = tw__chunk_unpack(store->path, sqlite3_column_blob(stmt, 1), sqlite3_column_bytes(stmt, 1), id, chunk);
        if (status)
            break;
        int start = id == at.chunk ? (int)MIN(at.index, chunk->n) : 0;
        int64_t take = chunk->n - start;
        if (max > 0)
            take = MIN(take, max - *n);
        status = append_points(chunk, start, take, points, n, &capacity);
        if (status == 0)
            at = (tw_series_cursor){id, start + take};
    }
    if (status == 0 && rc != SQLITE_OK && rc != SQLITE_DONE)
        status = tw__store_sqlite_error(store->db, store->path, "cannot read the series");
    tw__store_statement_done(stmt);
    g_free(chunk);
    if (status) {
        free(*points);
        *points = NULL;
        *n = 0;
        return -1;
    }
    *cursor = at;
    return 0;
}

/* ---- the end of a series, and raw points in a range ------------------------ */

int tw_run_store_scalar_end(tw_run_store *store, int64_t tag_id, tw_series_cursor *cursor)
{
    sqlite3_stmt *stmt = NULL;
    int rc = tw__store_statement(store, "SELECT id, count FROM scalar_chunks WHERE tag_id = ?1 ORDER BY id DESC LIMIT 1", &stmt);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 1, tag_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW)
        *cursor = (tw_series_cursor){sqlite3_column_int64(stmt, 0), sqlite3_column_int64(stmt, 1)};
    else if (rc == SQLITE_DONE)
        *cursor = (tw_series_cursor){0, 0};
    else
        tw__store_sqlite_error(store->db, store->path, "cannot find the end of the series");
    tw__store_statement_done(stmt);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* A decoded chunk's points inside [lo, hi], up to max in all. */
static int append_range(const tw_chunk *c, tw_axis axis, double lo, double hi, int64_t max, tw_scalar_point **points,
                        int64_t *n, int64_t *capacity)
{
    for (int i = 0; i < c->n && (max == 0 || *n < max); i++) {
        double x = axis == TW_AXIS_STEP ? (double)c->steps[i] : c->wall_times[i];
        if (x >= lo && x <= hi && append_points(c, i, 1, points, n, capacity))
            return -1;
    }
    return 0;
}

static const char *const overlap_sql[] = {
    [TW_AXIS_STEP] = "SELECT id, points FROM scalar_chunks WHERE tag_id = ?1 AND first_step <= ?3 "
                     "AND last_step >= ?2 ORDER BY id",
    [TW_AXIS_WALL_TIME] = "SELECT id, points FROM scalar_chunks WHERE tag_id = ?1 AND first_wall_time <= ?3 "
                          "AND last_wall_time >= ?2 ORDER BY id",
};

int tw_run_store_read_scalar_range(tw_run_store *store, int64_t tag_id, tw_axis axis, double lo, double hi,
                                   int64_t max, tw_scalar_point **points, int64_t *n)
{
    *points = NULL;
    *n = 0;
    if (axis != TW_AXIS_STEP && axis != TW_AXIS_WALL_TIME)
        return tw_error_set("%s: read_scalar_range: unknown axis %d", store->path, (int)axis);
    if (max < 0 || isnan(lo) || isnan(hi))
        return tw_error_set("%s: read_scalar_range: the range [%g, %g] with max %lld", store->path, lo, hi,
                            (long long)max);
    sqlite3_stmt *stmt = NULL;
    int rc = tw__store_statement(store, overlap_sql[axis], &stmt);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 1, tag_id) | sqlite3_bind_double(stmt, 2, lo) | sqlite3_bind_double(stmt, 3, hi);
    tw_chunk *chunk = g_new(tw_chunk, 1);
    int64_t capacity = 0;
    int status = 0;
    while (status == 0 && (max == 0 || *n < max) && rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        status = tw__chunk_unpack(store->path, sqlite3_column_blob(stmt, 1), sqlite3_column_bytes(stmt, 1),
                                  sqlite3_column_int64(stmt, 0), chunk);
        if (status == 0)
            status = append_range(chunk, axis, lo, hi, max, points, n, &capacity);
    }
    if (status == 0 && rc != SQLITE_OK && rc != SQLITE_DONE)
        status = tw__store_sqlite_error(store->db, store->path, "cannot read the series");
    tw__store_statement_done(stmt);
    g_free(chunk);
    if (status) {
        free(*points);
        *points = NULL;
        *n = 0;
        return -1;
    }
    return 0;
}

/* ---- histograms ----------------------------------------------------------- */

void tw_histogram_free(tw_histogram *histograms, int n)
{
    for (int i = 0; histograms && i < n; i++)
        g_free(histograms[i].buckets);
    g_free(histograms);
}

static int count_histograms(tw_run_store *store, int64_t tag_id, int64_t lo, int64_t hi, int64_t *count)
{
    sqlite3_stmt *stmt = NULL;
    int rc = tw__store_statement(store, "SELECT count(*) FROM histograms WHERE tag_id = ?1 AND step BETWEEN ?2 AND ?3", &stmt);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 1, tag_id) | sqlite3_bind_int64(stmt, 2, lo) | sqlite3_bind_int64(stmt, 3, hi);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW)
        *count = sqlite3_column_int64(stmt, 0);
    else
        tw__store_sqlite_error(store->db, store->path, "cannot count the histograms");
    tw__store_statement_done(stmt);
    return rc == SQLITE_ROW ? 0 : -1;
}

/* The position of the i-th of `picks` records spread evenly over total
 * (first and last included; one pick is the latest). */
static int64_t pick_position(int64_t i, int64_t picks, int64_t total)
{
    if (picks == 1)
        return total - 1;
    return (i * (total - 1) + (picks - 1) / 2) / (picks - 1);
}

/* One histogram by row id. */
static int read_histogram(tw_run_store *store, sqlite3_stmt *row, int64_t id, tw_histogram *h)
{
    int rc = sqlite3_bind_int64(row, 1, id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(row);
    int status = rc == SQLITE_ROW ? tw__histogram_read(store->path, row, 0, id, h)
                                  : tw__store_sqlite_error(store->db, store->path, "cannot read a histogram");
    sqlite3_reset(row);
    return status;
}

/* The range's row ids come from the (tag_id, step) index alone; only the
 * picked rows are read. */
int tw_run_store_read_histograms(tw_run_store *store, int64_t tag_id, int64_t step_lo, int64_t step_hi,
                                 int max_records, tw_histogram **out, int *n)
{
    *out = NULL;
    *n = 0;
    if (max_records < 0)
        return tw_error_set("%s: read_histograms: max_records is %d", store->path, max_records);
    /* One read transaction: the count and the rows agree while a writer adds more. */
    bool began;
    if (tw__store_read_begin(store, &began) != SQLITE_DONE)
        return tw__store_sqlite_error(store->db, store->path, "cannot begin reading the histograms");
    int64_t total = 0;
    if (count_histograms(store, tag_id, step_lo, step_hi, &total)) {
        tw__store_read_end(store, began);
        return -1;
    }
    int64_t picks = max_records > 0 && max_records < total ? max_records : total;
    sqlite3_stmt *ids = NULL, *row = NULL;
    int rc = tw__store_statement(store, "SELECT id FROM histograms WHERE tag_id = ?1 AND step BETWEEN ?2 AND ?3 "
                                "ORDER BY step, id", &ids);
    if (rc == SQLITE_OK)
        rc = tw__store_statement(store, "SELECT " TW_HISTOGRAM_COLUMNS " FROM histograms WHERE id = ?1", &row);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(ids, 1, tag_id) | sqlite3_bind_int64(ids, 2, step_lo) |
             sqlite3_bind_int64(ids, 3, step_hi);
    tw_histogram *list = g_new0(tw_histogram, picks);
    int got = 0, status = 0;
    for (int64_t position = 0; status == 0 && got < picks && rc == SQLITE_OK; position++) {
        rc = sqlite3_step(ids);
        if (rc != SQLITE_ROW)
            break;
        rc = SQLITE_OK;
        if (position == pick_position(got, picks, total)) {
            status = read_histogram(store, row, sqlite3_column_int64(ids, 0), &list[got]);
            got += status == 0;
        }
    }
    if (status == 0 && rc != SQLITE_OK && rc != SQLITE_DONE)
        status = tw__store_sqlite_error(store->db, store->path, "cannot read the histograms");
    tw__store_statement_done(ids);
    tw__store_statement_done(row);
    tw__store_read_end(store, began);
    if (status) {
        tw_histogram_free(list, got);
        return -1;
    }
    *out = list;
    *n = got;
    return 0;
}

/* ---- texts and graphs ----------------------------------------------------- */

void tw_text_record_free(tw_text_record *records, int n)
{
    for (int i = 0; records && i < n; i++)
        g_free(records[i].text);
    g_free(records);
}

/* One row a record: the cursor's chunk is the last record's id. */
int tw_run_store_read_texts(tw_run_store *store, int64_t tag_id, tw_series_cursor *cursor, tw_text_record **out,
                            int *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *stmt = NULL;
    int rc = tw__store_statement(store, "SELECT id, step, wall_time, body FROM texts WHERE tag_id = ?1 AND id > ?2 ORDER BY id", &stmt);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 1, tag_id) | sqlite3_bind_int64(stmt, 2, cursor->chunk);
    GArray *list = g_array_new(FALSE, FALSE, sizeof(tw_text_record));
    int64_t last = cursor->chunk;
    while (rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        tw_text_record record = {sqlite3_column_int64(stmt, 1), tw__column_real(stmt, 2),
                                 column_text_or_empty(stmt, 3)};
        g_array_append_val(list, record);
        last = sqlite3_column_int64(stmt, 0);
        rc = SQLITE_OK;
    }
    tw__store_statement_done(stmt);
    int count = (int)list->len;
    tw_text_record *array = (tw_text_record *)g_array_free(list, FALSE);
    if (rc != SQLITE_DONE) {
        tw_text_record_free(array, count);
        return tw__store_sqlite_error(store->db, store->path, "cannot read the texts");
    }
    *out = array;
    *n = count;
    *cursor = (tw_series_cursor){last, 0};
    return 0;
}
