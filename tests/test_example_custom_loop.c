/* The seeds' custom loop (examples/custom_loop.c, the program in
 * $CUSTOM_LOOP) trained 300 steps into a scratch run database: it finishes,
 * and its run holds the loss curve, the test accuracy it printed, and the
 * sample predictions: one 4 x 4 grid image whose frames (green right, red
 * wrong) agree with the labels text, "predicted (true)" per image. Skipped
 * when Fashion-MNIST is not installed (the program exits 77). */
#include <glib.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <tw/data.h>
#include <tw/run_store.h>

#include "scratch_tree.h"

#define GRID 4
#define CELL 30

static int class_of(const char *name)
{
    for (int c = 0; c < 10; c++)
        if (!strcmp(name, tw_fashion_mnist_classes[c]))
            return c;
    g_error("not a Fashion-MNIST class: '%s'", name);
}

/* The labels text: per image, whether the predicted class is the true one. */
static void parse_labels(const char *text, gboolean right[GRID * GRID])
{
    char **lines = g_strsplit(text, "\n", -1);
    g_assert_cmpint(g_strv_length(lines), ==, GRID + 1); /* a newline ends each row */
    g_assert_cmpstr(lines[GRID], ==, "");
    for (int row = 0; row < GRID; row++) {
        char **items = g_strsplit(lines[row], ", ", -1);
        g_assert_cmpint(g_strv_length(items), ==, GRID);
        for (int col = 0; col < GRID; col++) {
            char *open = strstr(items[col], " (");
            g_assert_nonnull(open);
            g_assert_true(g_str_has_suffix(open, ")"));
            *open = '\0';
            open[strlen(open + 1)] = '\0'; /* the closing parenthesis */
            right[row * GRID + col] = class_of(items[col]) == class_of(open + 2);
        }
        g_strfreev(items);
    }
    g_strfreev(lines);
}

static uint8_t *decode_rgb(tw_run_store *store, const tw_image_info *im)
{
    uint8_t *data;
    size_t size;
    g_assert_cmpint(tw_run_store_read_image(store, im->id, &data, &size), ==, 0);
    png_image image = {.version = PNG_IMAGE_VERSION};
    g_assert_true(png_image_begin_read_from_memory(&image, data, size));
    image.format = PNG_FORMAT_RGB;
    uint8_t *pixels = g_malloc(PNG_IMAGE_SIZE(image));
    g_assert_true(png_image_finish_read(&image, NULL, pixels, 0, NULL));
    free(data);
    return pixels;
}

static void test_custom_loop(void)
{
    char *dir = g_dir_make_tmp("twb-custom-loop-XXXXXX", NULL);
    char *logdb = g_build_filename(dir, "runs.db", NULL);
    const char *program = g_getenv("CUSTOM_LOOP");
    g_assert_nonnull(program);
    char *argv[] = {(char *)program, "300", logdb, NULL};
    char *out = NULL, *err = NULL;
    int status;
    g_assert_true(g_spawn_sync(NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, NULL));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
        g_test_skip(err);
        goto done;
    }
    g_assert_cmpstr(err, ==, "");
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const char *printed = strstr(out, "test accuracy: ");
    g_assert_nonnull(printed);
    double accuracy = g_ascii_strtod(printed + strlen("test accuracy: "), NULL);
    g_assert_cmpfloat(accuracy, >, 0.5); /* ten classes: chance is 0.1 */

    tw_run_store *store = tw_run_store_open(logdb, TW_STORE_READ_ONLY);
    g_assert_nonnull(store);
    tw_run_info *runs;
    int n;
    g_assert_cmpint(tw_run_store_list_runs(store, &runs, &n), ==, 0);
    g_assert_cmpint(n, ==, 1);
    g_assert_true(g_str_has_prefix(runs[0].name, "custom-loop-"));
    g_assert_cmpint(runs[0].status, ==, TW_RUN_FINISHED);
    int64_t run = runs[0].id;
    tw_run_info_free(runs, n);

    /* the loss every 100 steps, the accuracy as printed (to its 4 digits) */
    tw_scalar_point *points;
    int64_t npoints;
    tw_series_cursor cursor = {0};
    g_assert_cmpint(tw_run_store_read_scalars(store, tw_run_store_find_tag(store, run, "train/loss"), &cursor, 0,
                                              &points, &npoints),
                    ==, 0);
    g_assert_cmpint(npoints, ==, 3);
    g_assert_cmpint(points[2].step, ==, 300);
    free(points);
    cursor = (tw_series_cursor){0};
    g_assert_cmpint(tw_run_store_read_scalars(store, tw_run_store_find_tag(store, run, "test/accuracy"), &cursor, 0,
                                              &points, &npoints),
                    ==, 0);
    g_assert_cmpint(npoints, ==, 1);
    g_assert_cmpfloat_with_epsilon(points[0].value, accuracy, 5e-5);
    free(points);

    /* the sample predictions */
    tw_text_record *texts;
    int ntexts;
    cursor = (tw_series_cursor){0};
    g_assert_cmpint(tw_run_store_read_texts(store, tw_run_store_find_tag(store, run, "predictions/labels"), &cursor,
                                            &texts, &ntexts),
                    ==, 0);
    g_assert_cmpint(ntexts, ==, 1);
    g_assert_cmpint(texts[0].step, ==, 300);
    gboolean right[GRID * GRID];
    parse_labels(texts[0].text, right);
    tw_text_record_free(texts, ntexts);

    tw_image_info *images;
    g_assert_cmpint(tw_run_store_list_images(store, run, "predictions/images", &images, &n), ==, 0);
    g_assert_cmpint(n, ==, 1);
    g_assert_cmpint(images[0].step, ==, 300);
    g_assert_cmpint(images[0].width, ==, GRID * CELL);
    g_assert_cmpint(images[0].height, ==, GRID * CELL);
    g_assert_cmpstr(images[0].format, ==, "png");
    uint8_t *rgb = decode_rgb(store, &images[0]);
    for (int i = 0; i < GRID * GRID; i++) {
        const uint8_t *corner = rgb + ((size_t)(i / GRID * CELL) * GRID * CELL + (size_t)(i % GRID * CELL)) * 3;
        g_assert_cmpint(corner[0], ==, right[i] ? 0 : 255);
        g_assert_cmpint(corner[1], ==, right[i] ? 255 : 0);
        g_assert_cmpint(corner[2], ==, 0);
    }
    g_free(rgb);
    tw_image_info_free(images, n);
    tw_run_store_close(store);
done:
    g_free(out);
    g_free(err);
    scratch_remove_tree(dir);
    g_free(logdb);
    g_free(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/example/custom-loop", test_custom_loop);
    return g_test_run();
}
