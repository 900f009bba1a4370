/* Reading the tensors table (schema.c): a run's newest tensor of a tag, its
 * values as doubles. A file written before the table existed has none. */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "tw/error.h"
#include "store_internal.h"

static bool has_tensors_table(tw_run_store *store)
{
    sqlite3_stmt *stmt = NULL;
    bool found = sqlite3_prepare_v2(store->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tensors'",
                                    -1, &stmt, NULL) == SQLITE_OK &&
                 sqlite3_step(stmt) == SQLITE_ROW;
    sqlite3_finalize(stmt);
    return found;
}

void tw_stored_tensor_clear(tw_stored_tensor *t)
{
    if (!t)
        return;
    free(t->values);
    memset(t, 0, sizeof *t);
}

/* "[3, 4]" into dims; the product in *numel. 0, or -1 when it is not a
 * list of at most TW_STORED_TENSOR_MAX_DIMS sizes whose product fits. */
static int parse_shape(const char *text, tw_stored_tensor *t)
{
    const char *p = text ? text : "";
    while (*p == ' ')
        p++;
    if (*p++ != '[')
        return -1;
    t->ndim = 0;
    t->numel = 1;
    while (*p == ' ')
        p++;
    if (*p == ']')
        return p[1] ? -1 : 0;
    for (;;) {
        char *end;
        long long d = strtoll(p, &end, 10);
        if (end == p || d < 0 || t->ndim == TW_STORED_TENSOR_MAX_DIMS || (d && t->numel > INT64_MAX / d))
            return -1;
        t->dims[t->ndim++] = d;
        t->numel *= d;
        p = end;
        while (*p == ' ')
            p++;
        if (*p == ']')
            return p[1] ? -1 : 0;
        if (*p++ != ',')
            return -1;
    }
}

static int decode(const char *dtype, const void *blob, size_t bytes, tw_stored_tensor *t)
{
    size_t each = !strcmp(dtype, "float32") || !strcmp(dtype, "int32")   ? 4
                  : !strcmp(dtype, "float64") || !strcmp(dtype, "int64") ? 8
                                                                         : 0;
    if (!each || (uint64_t)t->numel > SIZE_MAX / each || bytes != (size_t)t->numel * each)
        return -1;
    t->values = malloc((size_t)t->numel * sizeof(double) + 1);
    if (!t->values)
        return -1;
    for (int64_t i = 0; i < t->numel; i++) {
        const uint8_t *at = (const uint8_t *)blob + (size_t)i * each;
        if (!strcmp(dtype, "float32")) {
            float v;
            memcpy(&v, at, 4);
            t->values[i] = v;
        } else if (!strcmp(dtype, "int32")) {
            int32_t v;
            memcpy(&v, at, 4);
            t->values[i] = v;
        } else if (!strcmp(dtype, "float64")) {
            memcpy(&t->values[i], at, 8);
        } else {
            int64_t v;
            memcpy(&v, at, 8);
            t->values[i] = (double)v;
        }
    }
    g_strlcpy(t->dtype, dtype, sizeof t->dtype);
    return 0;
}

/* The row's step, wall time, dtype, shape and data from column first on. */
static int read_row(tw_run_store *store, sqlite3_stmt *stmt, int first, int64_t run_id, const char *tag,
                    tw_stored_tensor *out)
{
    out->step = sqlite3_column_int64(stmt, first);
    out->wall_time = sqlite3_column_double(stmt, first + 1);
    const char *dtype = (const char *)sqlite3_column_text(stmt, first + 2);
    const char *shape = (const char *)sqlite3_column_text(stmt, first + 3);
    const void *blob = sqlite3_column_blob(stmt, first + 4);
    size_t bytes = (size_t)sqlite3_column_bytes(stmt, first + 4);
    if (parse_shape(shape, out) || decode(dtype ? dtype : "", blob, bytes, out)) {
        tw_stored_tensor_clear(out);
        return tw_error_set("%s: run %lld, tensor '%s': a damaged row (dtype %s, shape %s, %zu bytes)", store->path,
                            (long long)run_id, tag, dtype ? dtype : "NULL", shape ? shape : "NULL", bytes);
    }
    return 0;
}

int tw_run_store_read_tensor(tw_run_store *store, int64_t run_id, const char *tag, tw_stored_tensor *out)
{
    memset(out, 0, sizeof *out);
    if (!has_tensors_table(store))
        return 0;
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(store->db,
                                "SELECT step, wall_time, dtype, shape, data FROM tensors "
                                "WHERE run_id = ?1 AND tag = ?2 ORDER BY id DESC LIMIT 1",
                                -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 1, run_id) | sqlite3_bind_text(stmt, 2, tag, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    int status;
    if (rc == SQLITE_ROW) {
        status = read_row(store, stmt, 0, run_id, tag, out) ? -1 : 1;
    } else if (rc == SQLITE_DONE) {
        status = 0;
    } else {
        status = tw__store_sqlite_error(store->db, store->path, "cannot read a tensor");
    }
    sqlite3_finalize(stmt);
    return status;
}

int tw_run_store_runs_with_tensor(tw_run_store *store, const char *tag, int64_t **ids, int *n)
{
    *ids = NULL;
    *n = 0;
    if (!has_tensors_table(store))
        return 0;
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(store->db, "SELECT DISTINCT run_id FROM tensors WHERE tag = ?1 ORDER BY run_id", -1,
                                &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(stmt, 1, tag, -1, SQLITE_STATIC);
    GArray *list = g_array_new(FALSE, FALSE, sizeof(int64_t));
    while (rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(stmt, 0);
        g_array_append_val(list, id);
        rc = SQLITE_OK;
    }
    int status = rc == SQLITE_DONE ? 0 : tw__store_sqlite_error(store->db, store->path, "cannot list the tensors");
    sqlite3_finalize(stmt);
    *n = status ? 0 : (int)list->len;
    int64_t *array = (int64_t *)g_array_free(list, FALSE);
    if (status)
        g_free(array);
    else
        *ids = array;
    return status;
}

int tw_run_store_read_run_tensors(tw_run_store *store, int64_t run_id, tw_stored_tensor **tensors, char ***tags,
                                  int *n)
{
    *tensors = NULL;
    *tags = NULL;
    *n = 0;
    if (!has_tensors_table(store))
        return 0;
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(store->db,
                                "SELECT tag, step, wall_time, dtype, shape, data FROM tensors WHERE run_id = ?1 "
                                "ORDER BY id",
                                -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 1, run_id);
    GArray *list = g_array_new(FALSE, TRUE, sizeof(tw_stored_tensor));
    GPtrArray *names = g_ptr_array_new();
    int status = 0;
    while (rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        const char *tag = (const char *)sqlite3_column_text(stmt, 0);
        tw_stored_tensor t = {0};
        if (read_row(store, stmt, 1, run_id, tag ? tag : "", &t)) {
            status = -1;
            break;
        }
        g_array_append_val(list, t);
        g_ptr_array_add(names, g_strdup(tag ? tag : ""));
        rc = SQLITE_OK;
    }
    if (!status && rc != SQLITE_DONE)
        status = tw__store_sqlite_error(store->db, store->path, "cannot read the run's tensors");
    sqlite3_finalize(stmt);
    g_ptr_array_add(names, NULL);
    *n = (int)list->len;
    *tensors = (tw_stored_tensor *)g_array_free(list, FALSE);
    *tags = (char **)g_ptr_array_free(names, FALSE);
    if (status) {
        tw_stored_tensors_free(*tensors, *tags, *n);
        *tensors = NULL, *tags = NULL, *n = 0;
    }
    return status;
}

void tw_stored_tensors_free(tw_stored_tensor *tensors, char **tags, int n)
{
    for (int i = 0; i < n; i++)
        tw_stored_tensor_clear(&tensors[i]);
    g_free(tensors);
    g_strfreev(tags);
}
