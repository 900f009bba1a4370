/* Reading the images table (schema.c): a run's images without their bytes,
 * and one image's bytes. A file written before the table existed has none. */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "tw/error.h"
#include "store_internal.h"

static bool has_images_table(tw_run_store *store)
{
    sqlite3_stmt *stmt = NULL;
    bool found = sqlite3_prepare_v2(store->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'images'",
                                    -1, &stmt, NULL) == SQLITE_OK &&
                 sqlite3_step(stmt) == SQLITE_ROW;
    sqlite3_finalize(stmt);
    return found;
}

void tw_image_info_free(tw_image_info *images, int n)
{
    for (int i = 0; images && i < n; i++)
        g_free(images[i].tag);
    g_free(images);
}

int tw_run_store_list_images(tw_run_store *store, int64_t run_id, const char *tag, tw_image_info **out, int *n)
{
    *out = NULL;
    *n = 0;
    if (!has_images_table(store))
        return 0;
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(store->db,
                                "SELECT id, tag, step, sample, wall_time, width, height, format, length(data) "
                                "FROM images WHERE run_id = ?1 AND (?2 IS NULL OR tag = ?2) "
                                "ORDER BY tag, step, sample",
                                -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 1, run_id) | sqlite3_bind_text(stmt, 2, tag, -1, SQLITE_STATIC);
    GArray *list = g_array_new(FALSE, FALSE, sizeof(tw_image_info));
    while (rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        const unsigned char *name = sqlite3_column_text(stmt, 1), *format = sqlite3_column_text(stmt, 7);
        tw_image_info im = {.id = sqlite3_column_int64(stmt, 0),
                            .tag = g_strdup(name ? (const char *)name : ""),
                            .step = sqlite3_column_int64(stmt, 2),
                            .sample = sqlite3_column_int(stmt, 3),
                            .wall_time = sqlite3_column_double(stmt, 4),
                            .width = sqlite3_column_int(stmt, 5),
                            .height = sqlite3_column_int(stmt, 6),
                            .size = sqlite3_column_int64(stmt, 8)};
        g_strlcpy(im.format, format ? (const char *)format : "", sizeof im.format);
        g_array_append_val(list, im);
        rc = SQLITE_OK;
    }
    int status = rc == SQLITE_DONE ? 0 : tw__store_sqlite_error(store->db, store->path, "cannot list the images");
    sqlite3_finalize(stmt);
    int count = (int)list->len;
    tw_image_info *array = (tw_image_info *)g_array_free(list, FALSE);
    if (status) {
        tw_image_info_free(array, count);
        return -1;
    }
    *out = array;
    *n = count;
    return 0;
}

int tw_run_store_read_image(tw_run_store *store, int64_t image_id, uint8_t **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(store->db, "SELECT data FROM images WHERE id = ?1", -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 1, image_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    int status = 0;
    if (rc == SQLITE_ROW) {
        size_t n = (size_t)sqlite3_column_bytes(stmt, 0);
        *data = malloc(n ? n : 1);
        if (*data) {
            memcpy(*data, sqlite3_column_blob(stmt, 0), n);
            *size = n;
        } else {
            status = tw_error_set("%s: out of memory reading image %lld", store->path, (long long)image_id);
        }
    } else if (rc == SQLITE_DONE) {
        status = tw_error_set("%s: no image %lld", store->path, (long long)image_id);
    } else {
        status = tw__store_sqlite_error(store->db, store->path, "cannot read an image");
    }
    sqlite3_finalize(stmt);
    return status;
}
