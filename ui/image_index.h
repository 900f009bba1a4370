/* Which images a run database holds, read off the main loop: every image
 * (without its bytes) of the given runs, grouped by run and tag, for the
 * dashboard's Images tab. */
#ifndef TW_UI_IMAGE_INDEX_H
#define TW_UI_IMAGE_INDEX_H

#include <gio/gio.h>
#include <tw/run_store.h>

G_BEGIN_DECLS

/* One run's images of one tag, by step and sample. */
typedef struct {
    gint64 run_id;
    char *tag;
    tw_image_info *images;
    int n;
} TwImageSeries;

/* Lists the images of runs (n_runs ids) in a thread; callback gets a
 * GPtrArray of TwImageSeries (by tag, then in the order of run_ids) from
 * tw_image_index_finish, or NULL with the store's message. */
void tw_image_index_load(const char *db_path, const gint64 *run_ids, int n_runs, GCancellable *cancellable,
                         GAsyncReadyCallback callback, gpointer user_data);
GPtrArray *tw_image_index_finish(GAsyncResult *result, GError **error);

G_END_DECLS

#endif
