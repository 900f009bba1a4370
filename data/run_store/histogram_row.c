/* Histogram rows: the statistics as REAL columns (NaN as NULL) and the
 * bucket counts as a blob of little-endian float64s. */
#include <glib.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tw/error.h"
#include "store_internal.h"

int tw__histogram_bind(sqlite3_stmt *stmt, int first, const tw_histogram *h)
{
    if (h->nbuckets < 0 || h->nbuckets > INT_MAX / 8 || (h->nbuckets > 0 && !h->buckets))
        return tw_error_set("run database: a histogram at step %lld has %d buckets", (long long)h->step, h->nbuckets);
    uint64_t *blob = malloc((size_t)h->nbuckets * 8 + 1);
    if (!blob)
        return tw_error_set("run database: out of memory packing %d buckets", h->nbuckets);
    for (int i = 0; i < h->nbuckets; i++) {
        memcpy(&blob[i], &h->buckets[i], 8);
        blob[i] = GUINT64_TO_LE(blob[i]);
    }
    int i = first;
    int rc = sqlite3_bind_int64(stmt, i, h->step) | tw__bind_real(stmt, i + 1, h->wall_time) |
             tw__bind_real(stmt, i + 2, h->count) | tw__bind_real(stmt, i + 3, h->min) |
             tw__bind_real(stmt, i + 4, h->max) | tw__bind_real(stmt, i + 5, h->sum) |
             tw__bind_real(stmt, i + 6, h->sum_squares) | sqlite3_bind_int(stmt, i + 7, h->nbuckets) |
             sqlite3_bind_blob(stmt, i + 8, blob, h->nbuckets * 8, free);
    if (rc != SQLITE_OK)
        return tw_error_set("run database: cannot bind a histogram's values: %s",
                            sqlite3_errmsg(sqlite3_db_handle(stmt)));
    return 0;
}

int tw__histogram_read(const char *path, sqlite3_stmt *stmt, int first, int64_t id, tw_histogram *h)
{
    int i = first;
    int nbuckets = sqlite3_column_int(stmt, i + 7);
    const uint8_t *blob = sqlite3_column_blob(stmt, i + 8);
    int size = sqlite3_column_bytes(stmt, i + 8);
    if (nbuckets < 0 || size != (int64_t)nbuckets * 8 || (nbuckets > 0 && !blob))
        return tw_error_set("%s: histogram %lld: %d bytes of buckets for %d buckets", path, (long long)id, size,
                            nbuckets);
    *h = (tw_histogram){
        .step = sqlite3_column_int64(stmt, i),
        .wall_time = tw__column_real(stmt, i + 1),
        .count = tw__column_real(stmt, i + 2),
        .min = tw__column_real(stmt, i + 3),
        .max = tw__column_real(stmt, i + 4),
        .sum = tw__column_real(stmt, i + 5),
        .sum_squares = tw__column_real(stmt, i + 6),
        .nbuckets = nbuckets,
        .buckets = g_new(double, nbuckets),
    };
    for (int b = 0; b < nbuckets; b++) {
        uint64_t bits;
        memcpy(&bits, blob + 8 * b, 8);
        bits = GUINT64_FROM_LE(bits);
        memcpy(&h->buckets[b], &bits, 8);
    }
    return 0;
}
