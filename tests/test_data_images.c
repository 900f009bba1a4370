/* Images in the run database: tw_summary_image (uint8 and float tensors,
 * single images and batches) stored as PNG and decoded back to the same
 * pixels with libpng; bad calls; the corpus' tensorboardX image file
 * imported with its images' bytes as written; a file without the images
 * table (written before it existed) read as having none; a deleted run's
 * images go with it. */
#include <glib.h>
#include <glib/gstdio.h>
#include <png.h>
#include <sqlite3.h>
#include <string.h>

#include <tw/engine.h>
#include <tw/summary.h>
#include <tw/tfevents.h>

#include "scratch_tree.h"

static char *scratch_dir(void)
{
    GError *err = NULL;
    char *dir = g_dir_make_tmp("twb-images-XXXXXX", &err);
    g_assert_no_error(err);
    return dir;
}

static tw_run_store *open_store(const char *path, unsigned flags)
{
    tw_run_store *store = tw_run_store_open(path, flags);
    if (!store)
        g_error("%s", tw_last_error());
    return store;
}

static int64_t run_id(tw_run_store *store, const char *name)
{
    tw_run_info run;
    if (tw_run_store_get_run(store, name, &run))
        g_error("%s", tw_last_error());
    int64_t id = run.id;
    tw_run_info_clear(&run);
    return id;
}

/* A stored PNG decoded with libpng's simplified API into channels per
 * pixel as stored. */
static uint8_t *decode_png(tw_run_store *store, const tw_image_info *im, int channels)
{
    uint8_t *data;
    size_t size;
    g_assert_cmpint(tw_run_store_read_image(store, im->id, &data, &size), ==, 0);
    g_assert_cmpint((int64_t)size, ==, im->size);
    png_image image = {.version = PNG_IMAGE_VERSION};
    g_assert_true(png_image_begin_read_from_memory(&image, data, size));
    g_assert_cmpint(image.width, ==, im->width);
    g_assert_cmpint(image.height, ==, im->height);
    static const png_uint_32 formats[] = {0, PNG_FORMAT_GRAY, PNG_FORMAT_GA, PNG_FORMAT_RGB, PNG_FORMAT_RGBA};
    image.format = formats[channels];
    uint8_t *pixels = g_malloc(PNG_IMAGE_SIZE(image));
    g_assert_true(png_image_finish_read(&image, NULL, pixels, 0, NULL));
    g_free(data);
    return pixels;
}

static void test_summary_images(void)
{
    char *dir = scratch_dir(), *db = g_build_filename(dir, "runs.db", NULL);
    tw_summary_writer *w = tw_summary_writer_open(db, "r", NULL);
    g_assert_nonnull(w);
    tw_scope_begin();
    /* A batch of two 3x4 RGB images, uint8: every byte value a pattern. */
    uint8_t rgb[2 * 3 * 4 * 3];
    for (size_t i = 0; i < sizeof rgb; i++)
        rgb[i] = (uint8_t)(i * 37 + 11);
    tw_tensor *batch = tw_tensor_from_data(rgb, TW_UINT8, TW_SHAPE(2, 3, 4, 3));
    g_assert_cmpint(tw_summary_image(w, "samples", batch, 7), ==, 0);
    /* One 5x2 gray image, float in [0, 1], with values outside and NaN. */
    float gray[5 * 2] = {0.0f, 1.0f, 0.5f, 0.2f, -0.3f, 1.7f, NAN, 0.999f, 0.001f, 0.25f};
    tw_tensor *g = tw_tensor_from_data(gray, TW_FLOAT32, TW_SHAPE(5, 2, 1));
    g_assert_cmpint(tw_summary_image(w, "gray", g, 3), ==, 0);
    g_assert_cmpint(tw_summary_image(w, "gray", g, 4), ==, 0);
    /* A non-contiguous view: the transposed [4, 3, 3] of the first image. */
    tw_tensor *first = tw_tensor_from_data(rgb, TW_UINT8, TW_SHAPE(3, 4, 3));
    tw_tensor *transposed = tw_permute(first, TW_AXES(1, 0, 2));
    g_assert_cmpint(tw_summary_image(w, "transposed", transposed, 0), ==, 0);

    /* Bad calls: a message naming the call and the tag; nothing queued. */
    tw_tensor *flat = tw_zeros(TW_UINT8, TW_SHAPE(3, 4));
    g_assert_cmpint(tw_summary_image(w, "bad", flat, 0), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "tag 'bad'"));
    g_assert_nonnull(strstr(tw_last_error(), "rank 2"));
    tw_tensor *five = tw_zeros(TW_UINT8, TW_SHAPE(2, 2, 5));
    g_assert_cmpint(tw_summary_image(w, "bad", five, 0), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "5 channels"));
    tw_tensor *ints = tw_zeros(TW_INT32, TW_SHAPE(2, 2, 3));
    g_assert_cmpint(tw_summary_image(w, "bad", ints, 0), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "int32"));
    g_assert_cmpint(tw_summary_image(w, NULL, g, 0), ==, -1);
    /* A tag of another kind. */
    g_assert_cmpint(tw_summary_scalar(w, "loss", 1.0, 0), ==, 0);
    g_assert_cmpint(tw_summary_image(w, "loss", g, 0), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "scalar series"));
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);

    tw_run_store *store = open_store(db, TW_STORE_READ_ONLY);
    int64_t id = run_id(store, "r");
    tw_image_info *images;
    int n;
    g_assert_cmpint(tw_run_store_list_images(store, id, NULL, &images, &n), ==, 0);
    g_assert_cmpint(n, ==, 5); /* by tag: gray x2, samples x2, transposed */
    g_assert_cmpstr(images[0].tag, ==, "gray");
    g_assert_cmpint(images[0].step, ==, 3);
    g_assert_cmpint(images[1].step, ==, 4);
    g_assert_cmpstr(images[2].tag, ==, "samples");
    g_assert_cmpint(images[2].sample, ==, 0);
    g_assert_cmpint(images[3].sample, ==, 1);
    g_assert_cmpint(images[3].step, ==, 7);
    g_assert_cmpstr(images[4].tag, ==, "transposed");
    for (int i = 0; i < n; i++)
        g_assert_cmpstr(images[i].format, ==, "png");

    uint8_t *pixels = decode_png(store, &images[0], 1);
    g_assert_cmpint(images[0].width, ==, 2);
    g_assert_cmpint(images[0].height, ==, 5);
    const uint8_t want_gray[10] = {0, 255, 128, 51, 0, 255, 0, 255, 0, 64};
    g_assert_cmpmem(pixels, 10, want_gray, 10);
    g_free(pixels);
    for (int s = 0; s < 2; s++) {
        pixels = decode_png(store, &images[2 + s], 3);
        g_assert_cmpmem(pixels, 36, rgb + 36 * s, 36);
        g_free(pixels);
    }
    pixels = decode_png(store, &images[4], 3);
    g_assert_cmpint(images[4].width, ==, 3);
    g_assert_cmpint(images[4].height, ==, 4);
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 3; x++)
            g_assert_cmpmem(pixels + (y * 3 + x) * 3, 3, rgb + (x * 4 + y) * 3, 3);
    g_free(pixels);
    tw_image_info_free(images, n);

    /* One tag only. */
    g_assert_cmpint(tw_run_store_list_images(store, id, "samples", &images, &n), ==, 0);
    g_assert_cmpint(n, ==, 2);
    tw_image_info_free(images, n);
    tw_run_store_close(store);

    /* Deleting the run deletes its images. */
    store = open_store(db, 0);
    g_assert_cmpint(tw_run_store_delete_run(store, "r"), ==, 0);
    g_assert_cmpint(tw_run_store_list_images(store, id, NULL, &images, &n), ==, 0);
    g_assert_cmpint(n, ==, 0);
    tw_run_store_close(store);
    tw_scope_end();
    scratch_remove_tree(dir);
    g_free(db);
    g_free(dir);
}

/* A file written before the images table existed: a read-only reader
 * finds no images; opening it for writing adds the table. */
static void test_file_without_table(void)
{
    char *dir = scratch_dir(), *db = g_build_filename(dir, "runs.db", NULL);
    tw_summary_writer *w = tw_summary_writer_open(db, "old", NULL);
    g_assert_cmpint(tw_summary_scalar(w, "loss", 1.0, 0), ==, 0);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    sqlite3 *raw;
    g_assert_cmpint(sqlite3_open(db, &raw), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_exec(raw, "DROP TABLE images", NULL, NULL, NULL), ==, SQLITE_OK);
    sqlite3_close(raw);

    tw_run_store *store = open_store(db, TW_STORE_READ_ONLY);
    tw_image_info *images;
    int n = -1;
    g_assert_cmpint(tw_run_store_list_images(store, run_id(store, "old"), NULL, &images, &n), ==, 0);
    g_assert_cmpint(n, ==, 0);
    tw_run_store_close(store);

    w = tw_summary_writer_open(db, "new", NULL);
    tw_scope_begin();
    g_assert_cmpint(tw_summary_image(w, "i", tw_ones(TW_FLOAT32, TW_SHAPE(2, 2, 3)), 0), ==, 0);
    tw_scope_end();
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    store = open_store(db, TW_STORE_READ_ONLY);
    g_assert_cmpint(tw_run_store_list_images(store, run_id(store, "new"), NULL, &images, &n), ==, 0);
    g_assert_cmpint(n, ==, 1);
    uint8_t *pixels = decode_png(store, &images[0], 3);
    for (int i = 0; i < 12; i++)
        g_assert_cmpint(pixels[i], ==, 255);
    g_free(pixels);
    tw_image_info_free(images, n);
    tw_run_store_close(store);
    scratch_remove_tree(dir);
    g_free(db);
    g_free(dir);
}

/* The corpus' tensorboardX image file (expected.txt): 8 images in 5 tags,
 * 28x28 PNGs, MNIST_group holding 4 at step 0, stored byte for byte. */
static void test_import_corpus_images(void)
{
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    char *logdir = g_build_filename(srcdir ? srcdir : ".", "..", "..", "shared", "corpus", "tfevents",
                                    "tensorboardx-images", NULL);
    if (!g_file_test(logdir, G_FILE_TEST_IS_DIR)) {
        g_test_skip("the shared corpus (tfevents/tensorboardx-images) is absent");
        g_free(logdir);
        return;
    }
    char *dir = scratch_dir(), *db = g_build_filename(dir, "runs.db", NULL);
    tw_tb_import_stats stats;
    g_assert_cmpint(tw_tb_import(logdir, db, NULL, NULL, &stats), ==, 0);
    g_assert_cmpint(stats.images, ==, 8);
    g_assert_cmpint(stats.warnings, ==, 0);
    tw_run_store *store = open_store(db, TW_STORE_READ_ONLY);
    tw_image_info *images;
    int n;
    g_assert_cmpint(tw_run_store_list_images(store, run_id(store, "."), "MNIST_group", &images, &n), ==, 0);
    g_assert_cmpint(n, ==, 4);
    const int64_t sizes[4] = {549, 553, 463, 353};
    for (int i = 0; i < 4; i++) {
        g_assert_cmpint(images[i].sample, ==, i);
        g_assert_cmpint(images[i].step, ==, 0);
        g_assert_cmpint(images[i].width, ==, 28);
        g_assert_cmpint(images[i].height, ==, 28);
        g_assert_cmpstr(images[i].format, ==, "png");
        g_assert_cmpint(images[i].size, ==, sizes[i]);
        g_free(decode_png(store, &images[i], 3));
    }
    tw_image_info_free(images, n);
    g_assert_cmpint(tw_run_store_list_images(store, run_id(store, "."), NULL, &images, &n), ==, 0);
    g_assert_cmpint(n, ==, 8);
    tw_image_info_free(images, n);
    tw_run_store_close(store);
    scratch_remove_tree(dir);
    g_free(db);
    g_free(dir);
    g_free(logdir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/data/images/summary-images", test_summary_images);
    g_test_add_func("/data/images/file-without-table", test_file_without_table);
    g_test_add_func("/data/images/import-corpus-images", test_import_corpus_images);
    return g_test_run();
}
