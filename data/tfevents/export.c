/* A stored run written out as a TensorBoard event file (twb runs export):
 * every scalar, histogram, image and text record of the run, its
 * hyperparameters and its model (the Keras callback's model config),
 * through the event writer (event_writer.c). A series that cannot be read
 * (a damaged chunk) is left out and said; a file that cannot be written is
 * removed. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tfevents_internal.h"
#include "tw/error.h"

/* Channels from a PNG's header (its colour type), 0 for other formats:
 * Summary.Image's colorspace, which readers do not need. */
static int png_channels(const uint8_t *p, size_t n)
{
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n < 26 || memcmp(p, signature, 8))
        return 0;
    switch (p[25]) {
    case 0: return 1;
    case 2: return 3;
    case 3: return 3; /* a palette of RGB colours */
    case 4: return 2;
    case 6: return 4;
    default: return 0;
    }
}

/* One export: where it writes, what it has written, and the series it left
 * out because they cannot be read. */
typedef struct {
    tw_run_store *store;
    const char *run;
    tw_tb_writer *w;
    tw_tb_export_stats *stats;
    GString *left_out;
} exporter;

/* A series (or record) that cannot be read, a damaged chunk say: left out
 * with a line naming the file, the run and the tag, as the dashboard marks
 * its card, and the store's own message, which names the chunk. The rest
 * of the run is still written. */
static void leave_out(exporter *x, const char *tag)
{
    const char *path = tw_run_store_path(x->store), *rest = tw_last_error();
    size_t n = strlen(path);
    if (!strncmp(rest, path, n) && !strncmp(rest + n, ": ", 2))
        rest += n + 2; /* the path is said once */
    g_string_append_printf(x->left_out, "%s: run “%s”, tag “%s”: %s\n", path, x->run, tag, rest);
    x->stats->left_out++;
    tw_error_clear();
}

/* Each export_* returns -1 only when the event file cannot be written. */
static int export_scalars(exporter *x, const tw_tag_info *tag)
{
    tw_series_cursor cursor = {0};
    tw_scalar_point *points = NULL;
    int64_t n = 0;
    if (tw_run_store_read_scalars(x->store, tag->id, &cursor, 0, &points, &n)) {
        leave_out(x, tag->name);
        return 0;
    }
    int rc = 0;
    for (int64_t i = 0; rc == 0 && i < n; i++)
        rc = tw_tb_write_scalar(x->w, tag->name, points[i].step, points[i].wall_time, points[i].value);
    x->stats->scalars += rc ? 0 : n;
    free(points);
    return rc;
}

static int export_histograms(exporter *x, const tw_tag_info *tag)
{
    tw_histogram *h = NULL;
    int n = 0;
    if (tw_run_store_read_histograms(x->store, tag->id, INT64_MIN, INT64_MAX, 0, &h, &n)) {
        leave_out(x, tag->name);
        return 0;
    }
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++)
        rc = tw_tb_write_histogram(x->w, tag->name, &h[i]);
    x->stats->histograms += rc ? 0 : n;
    tw_histogram_free(h, n);
    return rc;
}

static int export_texts(exporter *x, const tw_tag_info *tag)
{
    tw_series_cursor cursor = {0};
    tw_text_record *t = NULL;
    int n = 0;
    if (tw_run_store_read_texts(x->store, tag->id, &cursor, &t, &n)) {
        leave_out(x, tag->name);
        return 0;
    }
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++)
        rc = tw_tb_write_text(x->w, tag->name, t[i].step, t[i].wall_time, t[i].text);
    x->stats->texts += rc ? 0 : n;
    tw_text_record_free(t, n);
    return rc;
}

static int export_graphs(exporter *x, const tw_tag_info *tag)
{
    tw_series_cursor cursor = {0};
    tw_text_record *t = NULL;
    int n = 0;
    if (tw_run_store_read_texts(x->store, tag->id, &cursor, &t, &n)) {
        leave_out(x, tag->name);
        return 0;
    }
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        int written = tw_tb_write_graph(x->w, t[i].step, t[i].wall_time, t[i].text);
        if (written < 0)
            rc = -1;
        else if (written > 0)
            x->stats->graphs_left_out++, tw_error_clear();
        else
            x->stats->graphs++;
    }
    tw_text_record_free(t, n);
    return rc;
}

static int export_images(exporter *x, int64_t run_id)
{
    tw_image_info *images = NULL;
    int n = 0;
    if (tw_run_store_list_images(x->store, run_id, NULL, &images, &n)) {
        leave_out(x, "(the images)");
        return 0;
    }
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        uint8_t *data = NULL;
        size_t size;
        if (tw_run_store_read_image(x->store, images[i].id, &data, &size)) {
            leave_out(x, images[i].tag);
            continue;
        }
        rc = tw_tb_write_image(x->w, images[i].tag, images[i].step, images[i].wall_time, images[i].width,
                               images[i].height, png_channels(data, size), data, size);
        free(data);
        x->stats->images += rc == 0;
    }
    tw_image_info_free(images, n);
    return rc;
}

/* The run's tensor records (an evaluation's tables) in their dtypes. */
static int export_tensors(exporter *x, int64_t run_id)
{
    tw_stored_tensor *t = NULL;
    char **tags = NULL;
    int n = 0;
    if (tw_run_store_read_run_tensors(x->store, run_id, &t, &tags, &n)) {
        leave_out(x, "(the tensors)");
        return 0;
    }
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        size_t size = (size_t)t[i].numel * tw__tb_dtype_width(t[i].dtype);
        uint8_t *data = g_malloc(MAX(size, 1));
        tw__tb_pack_numbers(t[i].dtype, t[i].values, t[i].numel, data);
        rc = tw_tb_write_tensor(x->w, tags[i], t[i].step, t[i].wall_time, t[i].dtype, t[i].ndim, t[i].dims, data,
                                size);
        g_free(data);
        x->stats->tensors += rc == 0;
    }
    tw_stored_tensors_free(t, tags, n);
    return rc;
}

int tw_tb_export_run(const char *db_path, const char *run_name, const char *dir, char **file,
                     tw_tb_export_stats *stats)
{
    *stats = (tw_tb_export_stats){0};
    if (file)
        *file = NULL;
    tw_run_store *store = tw_run_store_open(db_path, TW_STORE_READ_ONLY);
    if (!store)
        return -1;
    tw_run_info run;
    if (tw_run_store_get_run(store, run_name, &run)) {
        tw_run_store_close(store);
        return -1;
    }
    exporter x = {store, run.name, tw_tb_writer_open(dir), stats, g_string_new("")};
    tw_tb_writer *w = x.w;
    int rc = w ? 0 : -1;
    if (rc == 0 && run.hparams_json && (rc = tw_tb_write_hparams(w, run.hparams_json, run.start_time)) == 0)
        stats->hparams++;
    /* The model config at step 0, where the Keras callback writes it (its
     * on_train_begin), so that the run opens as a model again. */
    if (rc == 0 && run.model_json &&
        (rc = tw_tb_write_keras_model(w, 0, isfinite(run.start_time) ? run.start_time : 0, run.model_json)) == 0)
        stats->models++;
    tw_tag_info *tags = NULL;
    int ntags = 0;
    if (rc == 0)
        rc = tw_run_store_list_tags(store, run.id, &tags, &ntags);
    for (int i = 0; rc == 0 && i < ntags; i++) {
        if (tags[i].kind == TW_SERIES_SCALAR)
            rc = export_scalars(&x, &tags[i]);
        else if (tags[i].kind == TW_SERIES_HISTOGRAM)
            rc = export_histograms(&x, &tags[i]);
        else if (tags[i].kind == TW_SERIES_TEXT && !g_str_has_prefix(tags[i].name, "_hparams_/"))
            rc = export_texts(&x, &tags[i]); /* the hparams plugin's records: the run's hparams above */
        else if (tags[i].kind == TW_SERIES_GRAPH)
            rc = export_graphs(&x, &tags[i]);
    }
    if (rc == 0)
        rc = export_images(&x, run.id);
    if (rc == 0)
        rc = export_tensors(&x, run.id);
    tw_tag_info_free(tags, ntags);
    char *path = w ? g_strdup(tw_tb_writer_path(w)) : NULL;
    /* The first failure, not close's "an earlier write failed". */
    char *why = rc ? g_strdup(tw_last_error()) : NULL;
    if (tw_tb_writer_close(w) && !why) {
        rc = -1;
        why = g_strdup(tw_last_error());
    }
    /* A failed export leaves no partial event file for TensorBoard to show
     * as if it were the run. */
    if (why)
        tw_error_set(rc && path && g_unlink(path) == 0 ? "%s; the unfinished file is removed" : "%s", why);
    g_free(why);
    if (rc == 0 && file)
        *file = g_steal_pointer(&path);
    g_free(path);
    stats->left_out_messages = g_string_free(x.left_out, rc != 0 || x.left_out->len == 0); /* NULL when freed */
    tw_run_info_clear(&run);
    tw_run_store_close(store);
    return rc;
}
