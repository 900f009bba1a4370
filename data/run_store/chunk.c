/* Scalar chunks: up to TW_CHUNK_POINTS points of one tag in one row, as a
 * blob of three little-endian arrays (steps as int64, then wall times, then
 * values as float64: 24 bytes a point), beside a summary of the points that
 * level-of-detail queries read instead of the blob. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tw/error.h"
#include "store_internal.h"

void tw__chunk_summarize(const tw_chunk *c, tw_chunk_summary *s)
{
    int n = c->n;
    *s = (tw_chunk_summary){
        .count = n,
        .first_step = c->steps[0],
        .last_step = c->steps[n - 1],
        .first_wall_time = c->wall_times[0],
        .last_wall_time = c->wall_times[n - 1],
        .first_value = c->values[0],
        .last_value = c->values[n - 1],
        .min = NAN,
        .max = NAN,
        .min_step = -1,
        .max_step = -1,
    };
    bool found = false;
    for (int i = 0; i < n; i++) {
        double v = c->values[i];
        int64_t step = c->steps[i];
        if (isnan(v)) {
            s->nan_count++;
            continue;
        }
        /* Ties go to the smallest step, whatever the order of the points. */
        if (!found || v < s->min || (v == s->min && step < s->min_step)) {
            s->min = v;
            s->min_step = step;
        }
        if (!found || v > s->max || (v == s->max && step < s->max_step)) {
            s->max = v;
            s->max_step = step;
        }
        found = true;
    }
}

bool tw__chunk_accepts(const tw_chunk *c, int64_t step, double wall_time)
{
    if (c->n == 0)
        return true;
    return c->n < TW_CHUNK_POINTS && step >= c->steps[c->n - 1] && wall_time >= c->wall_times[c->n - 1];
}

#define POINT_BYTES 24

static void put_u64(uint8_t *out, uint64_t bits)
{
    bits = GUINT64_TO_LE(bits);
    memcpy(out, &bits, 8);
}

static uint64_t get_u64(const uint8_t *in)
{
    uint64_t bits;
    memcpy(&bits, in, 8);
    return GUINT64_FROM_LE(bits);
}

void *tw__chunk_pack(const tw_chunk *c, int *size)
{
    int n = c->n;
    uint8_t *blob = malloc((size_t)n * POINT_BYTES);
    if (!blob)
        return NULL;
    for (int i = 0; i < n; i++) {
        uint64_t wall, value;
        memcpy(&wall, &c->wall_times[i], 8);
        memcpy(&value, &c->values[i], 8);
        put_u64(blob + 8 * i, (uint64_t)c->steps[i]);
        put_u64(blob + 8 * (n + i), wall);
        put_u64(blob + 8 * (2 * n + i), value);
    }
    *size = n * POINT_BYTES;
    return blob;
}

int tw__chunk_unpack(const char *path, const void *blob, int size, int64_t chunk_id, tw_chunk *c)
{
    if (!blob || size <= 0 || size % POINT_BYTES != 0 || size / POINT_BYTES > TW_CHUNK_POINTS)
        return tw_error_set("%s: scalar chunk %lld: %d bytes is not 1 to %d points of %d bytes", path,
                            (long long)chunk_id, size, TW_CHUNK_POINTS, POINT_BYTES);
    const uint8_t *in = blob;
    int n = size / POINT_BYTES;
    c->n = n;
    for (int i = 0; i < n; i++) {
        uint64_t wall = get_u64(in + 8 * (n + i)), value = get_u64(in + 8 * (2 * n + i));
        c->steps[i] = (int64_t)get_u64(in + 8 * i);
        memcpy(&c->wall_times[i], &wall, 8);
        memcpy(&c->values[i], &value, 8);
    }
    return 0;
}

int tw__bind_real(sqlite3_stmt *stmt, int index, double value)
{
    return isnan(value) ? sqlite3_bind_null(stmt, index) : sqlite3_bind_double(stmt, index, value);
}

double tw__column_real(sqlite3_stmt *stmt, int index)
{
    return sqlite3_column_type(stmt, index) == SQLITE_NULL ? NAN : sqlite3_column_double(stmt, index);
}

/* An extreme's step, NULL when every value is NaN (there is no extreme). */
static int bind_step(sqlite3_stmt *stmt, int index, double extreme, int64_t step)
{
    return isnan(extreme) ? sqlite3_bind_null(stmt, index) : sqlite3_bind_int64(stmt, index, step);
}

int tw__chunk_bind(sqlite3_stmt *stmt, int first, const tw_chunk *c)
{
    tw_chunk_summary s;
    tw__chunk_summarize(c, &s);
    int size = 0;
    void *blob = tw__chunk_pack(c, &size);
    if (!blob)
        return tw_error_set("run database: out of memory packing %d points", c->n);
    int i = first;
    int rc = sqlite3_bind_int64(stmt, i, s.count) | sqlite3_bind_int64(stmt, i + 1, s.nan_count) |
             sqlite3_bind_int64(stmt, i + 2, s.first_step) | sqlite3_bind_int64(stmt, i + 3, s.last_step) |
             tw__bind_real(stmt, i + 4, s.first_wall_time) | tw__bind_real(stmt, i + 5, s.last_wall_time) |
             tw__bind_real(stmt, i + 6, s.first_value) | tw__bind_real(stmt, i + 7, s.last_value) |
             tw__bind_real(stmt, i + 8, s.min) | tw__bind_real(stmt, i + 9, s.max) | bind_step(stmt, i + 10, s.min, s.min_step) |
             bind_step(stmt, i + 11, s.max, s.max_step) | sqlite3_bind_blob(stmt, i + 12, blob, size, free);
    if (rc != SQLITE_OK)
        return tw_error_set("run database: cannot bind a chunk's values: %s", sqlite3_errmsg(sqlite3_db_handle(stmt)));
    return 0;
}
