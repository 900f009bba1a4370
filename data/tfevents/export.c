/* A stored run written out as a TensorBoard event file (twb runs export):
 * every scalar, histogram, image and text record of the run, its
 * hyperparameters and its model (the Keras callback's model config),
 * through the event writer (event_writer.c). */
#include <glib.h>
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

static int export_scalars(tw_run_store *store, tw_tb_writer *w, const tw_tag_info *tag, tw_tb_export_stats *stats)
{
    tw_series_cursor cursor = {0};
    tw_scalar_point *points = NULL;
    int64_t n = 0;
    int rc = tw_run_store_read_scalars(store, tag->id, &cursor, 0, &points, &n);
    for (int64_t i = 0; rc == 0 && i < n; i++)
        rc = tw_tb_write_scalar(w, tag->name, points[i].step, points[i].wall_time, points[i].value);
    stats->scalars += rc ? 0 : n;
    free(points);
    return rc;
}

static int export_histograms(tw_run_store *store, tw_tb_writer *w, const tw_tag_info *tag, tw_tb_export_stats *stats)
{
    tw_histogram *h = NULL;
    int n = 0;
    int rc = tw_run_store_read_histograms(store, tag->id, INT64_MIN, INT64_MAX, 0, &h, &n);
    for (int i = 0; rc == 0 && i < n; i++)
        rc = tw_tb_write_histogram(w, tag->name, &h[i]);
    stats->histograms += rc ? 0 : n;
    tw_histogram_free(h, n);
    return rc;
}

static int export_texts(tw_run_store *store, tw_tb_writer *w, const tw_tag_info *tag, tw_tb_export_stats *stats)
{
    tw_series_cursor cursor = {0};
    tw_text_record *t = NULL;
    int n = 0;
    int rc = tw_run_store_read_texts(store, tag->id, &cursor, &t, &n);
    for (int i = 0; rc == 0 && i < n; i++)
        rc = tw_tb_write_text(w, tag->name, t[i].step, t[i].wall_time, t[i].text);
    stats->texts += rc ? 0 : n;
    tw_text_record_free(t, n);
    return rc;
}

static int export_graphs(tw_run_store *store, tw_tb_writer *w, const tw_tag_info *tag, tw_tb_export_stats *stats)
{
    tw_series_cursor cursor = {0};
    tw_text_record *t = NULL;
    int n = 0;
    int rc = tw_run_store_read_texts(store, tag->id, &cursor, &t, &n);
    for (int i = 0; rc == 0 && i < n; i++) {
        int written = tw_tb_write_graph(w, t[i].step, t[i].wall_time, t[i].text);
        if (written < 0)
            rc = -1;
        else if (written > 0)
            stats->graphs_left_out++, tw_error_clear();
        else
            stats->graphs++;
    }
    tw_text_record_free(t, n);
    return rc;
}

static int export_images(tw_run_store *store, tw_tb_writer *w, int64_t run_id, tw_tb_export_stats *stats)
{
    tw_image_info *images = NULL;
    int n = 0;
    int rc = tw_run_store_list_images(store, run_id, NULL, &images, &n);
    for (int i = 0; rc == 0 && i < n; i++) {
        uint8_t *data;
        size_t size;
        rc = tw_run_store_read_image(store, images[i].id, &data, &size);
        if (rc == 0)
            rc = tw_tb_write_image(w, images[i].tag, images[i].step, images[i].wall_time, images[i].width,
                                   images[i].height, png_channels(data, size), data, size);
        free(data);
        stats->images += rc == 0;
    }
    tw_image_info_free(images, n);
    return rc;
}

/* The run's tensor records (an evaluation's tables) in their dtypes. */
static int export_tensors(tw_run_store *store, tw_tb_writer *w, int64_t run_id, tw_tb_export_stats *stats)
{
    tw_stored_tensor *t = NULL;
    char **tags = NULL;
    int n = 0;
    int rc = tw_run_store_read_run_tensors(store, run_id, &t, &tags, &n);
    for (int i = 0; rc == 0 && i < n; i++) {
        size_t size = (size_t)t[i].numel * tw__tb_dtype_width(t[i].dtype);
        uint8_t *data = g_malloc(MAX(size, 1));
        tw__tb_pack_numbers(t[i].dtype, t[i].values, t[i].numel, data);
        rc = tw_tb_write_tensor(w, tags[i], t[i].step, t[i].wall_time, t[i].dtype, t[i].ndim, t[i].dims, data, size);
        g_free(data);
        stats->tensors += rc == 0;
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
    tw_tb_writer *w = tw_tb_writer_open(dir);
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
            rc = export_scalars(store, w, &tags[i], stats);
        else if (tags[i].kind == TW_SERIES_HISTOGRAM)
            rc = export_histograms(store, w, &tags[i], stats);
        else if (tags[i].kind == TW_SERIES_TEXT && !g_str_has_prefix(tags[i].name, "_hparams_/"))
            rc = export_texts(store, w, &tags[i], stats); /* the hparams plugin's records: the run's hparams above */
        else if (tags[i].kind == TW_SERIES_GRAPH)
            rc = export_graphs(store, w, &tags[i], stats);
    }
    if (rc == 0)
        rc = export_images(store, w, run.id, stats);
    if (rc == 0)
        rc = export_tensors(store, w, run.id, stats);
    tw_tag_info_free(tags, ntags);
    if (rc == 0 && file)
        *file = g_strdup(tw_tb_writer_path(w));
    if (tw_tb_writer_close(w) && rc == 0)
        rc = -1;
    tw_run_info_clear(&run);
    tw_run_store_close(store);
    if (rc && file)
        g_clear_pointer(file, g_free);
    return rc;
}
