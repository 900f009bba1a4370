/* The image index (image_index.h). */
#include "image_index.h"

#include <string.h>

#include <tw/error.h>

typedef struct {
    char *db_path;
    gint64 *run_ids;
    int n_runs;
} IndexJob;

static void index_job_free(gpointer data)
{
    IndexJob *job = data;
    g_free(job->db_path);
    g_free(job->run_ids);
    g_free(job);
}

static void series_free(gpointer data)
{
    TwImageSeries *s = data;
    g_free(s->tag);
    g_free(s->images); /* the tags are the series' own copies, below */
    g_free(s);
}

static int by_tag(gconstpointer a, gconstpointer b)
{
    const TwImageSeries *x = *(TwImageSeries *const *)a, *y = *(TwImageSeries *const *)b;
    return strcmp(x->tag, y->tag);
}

/* A run's images (sorted by tag, step, sample) split into series per tag;
 * each image's tag points to its series' tag. */
static void add_run(GPtrArray *out, gint64 run_id, tw_image_info *images, int n)
{
    for (int i = 0; i < n;) {
        int j = i + 1;
        while (j < n && !strcmp(images[j].tag, images[i].tag))
            j++;
        TwImageSeries *s = g_new0(TwImageSeries, 1);
        s->run_id = run_id;
        s->tag = g_strdup(images[i].tag);
        s->n = j - i;
        s->images = g_memdup2(images + i, sizeof *images * (gsize)s->n);
        for (int k = 0; k < s->n; k++)
            s->images[k].tag = s->tag;
        g_ptr_array_add(out, s);
        i = j;
    }
}

static void index_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
    IndexJob *job = data;
    tw_run_store *store = tw_run_store_open(job->db_path, TW_STORE_READ_ONLY);
    GPtrArray *out = g_ptr_array_new_with_free_func(series_free);
    int status = store ? 0 : -1;
    for (int r = 0; status == 0 && r < job->n_runs && !g_cancellable_is_cancelled(cancellable); r++) {
        tw_image_info *images;
        int n;
        status = tw_run_store_list_images(store, job->run_ids[r], NULL, &images, &n);
        if (status == 0) {
            add_run(out, job->run_ids[r], images, n);
            tw_image_info_free(images, n);
        }
    }
    tw_run_store_close(store);
    if (status) {
        g_ptr_array_unref(out);
        g_task_return_new_error(task, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s", tw_last_error());
        tw_error_clear();
        return;
    }
    g_ptr_array_sort(out, by_tag); /* stable: runs stay in order within a tag */
    g_task_return_pointer(task, out, (GDestroyNotify)g_ptr_array_unref);
}

void tw_image_index_load(const char *db_path, const gint64 *run_ids, int n_runs, GCancellable *cancellable,
                         GAsyncReadyCallback callback, gpointer user_data)
{
    IndexJob *job = g_new0(IndexJob, 1);
    job->db_path = g_strdup(db_path);
    job->run_ids = g_memdup2(run_ids, sizeof *run_ids * (gsize)MAX(n_runs, 1));
    job->n_runs = n_runs;
    GTask *task = g_task_new(NULL, cancellable, callback, user_data);
    g_task_set_task_data(task, job, index_job_free);
    g_task_run_in_thread(task, index_thread);
    g_object_unref(task);
}

GPtrArray *tw_image_index_finish(GAsyncResult *result, GError **error)
{
    return g_task_propagate_pointer(G_TASK(result), error);
}
