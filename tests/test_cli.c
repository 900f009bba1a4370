/* The twb command line as a person uses it: runs the executable named by the
 * TWB environment variable and checks its exit status and output. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "twb_run.h"
#include "tw/checkpoint.h"
#include "tw/summary.h"

static void test_version(void)
{
    twb_run run = run_twb("--version", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_true(g_str_has_prefix(run.out, "twb 0.1.0\n"));
    /* The second line names the engine and its BLAS. */
    const char *second = run.out + strlen("twb 0.1.0\n");
    g_assert_true(g_str_has_prefix(second, "engine 0.1.0, BLAS: "));
    g_assert_cmpuint(strlen(second), >, strlen("engine 0.1.0, BLAS: \n"));
    g_assert_cmpstr(run.err, ==, "");
    twb_run_clear(&run);
}

static void test_help(void)
{
    const char *spellings[] = {"--help", "-h", "help"};
    for (size_t i = 0; i < G_N_ELEMENTS(spellings); i++) {
        twb_run run = run_twb(spellings[i], NULL);
        g_assert_cmpint(run.exit_status, ==, 0);
        g_assert_true(g_str_has_prefix(run.out, "Usage: twb"));
        g_assert_nonnull(strstr(run.out, "example linear-regression [--steps N]"));
        g_assert_nonnull(strstr(run.out, "data inspect FILE [--labels FILE] [--label-column NAME]"));
        g_assert_nonnull(strstr(run.out, "--version"));
        g_assert_nonnull(strstr(run.out, "twb [--logdb FILE] [MODEL.json|.keras|.h5...]"));
        g_assert_nonnull(strstr(run.out, "--screenshot FILE.png [--view designer|dashboard|graph]"));
        g_assert_cmpstr(run.err, ==, "");
        twb_run_clear(&run);
    }
}

/* Exit status 2, nothing on stdout, a message on stderr that quotes `quoted`. */
static void assert_usage_error(twb_run *run, const char *quoted)
{
    g_assert_cmpint(run->exit_status, ==, 2);
    g_assert_cmpstr(run->out, ==, "");
    g_assert_true(g_str_has_prefix(run->err, "twb: "));
    g_assert_nonnull(strstr(run->err, quoted));
    g_assert_nonnull(strstr(run->err, "twb --help"));
    twb_run_clear(run);
}

static void test_unknown_command(void)
{
    twb_run run = run_twb("frobnicate", NULL);
    assert_usage_error(&run, "unknown command 'frobnicate'");
    run = run_twb("--frobnicate", NULL);
    assert_usage_error(&run, "unknown option '--frobnicate'");
    run = run_twb("example", "mnist", NULL);
    assert_usage_error(&run, "'mnist'");
    run = run_twb("example", NULL);
    assert_usage_error(&run, "linear-regression");
}

static void test_bad_options(void)
{
    twb_run run = run_twb("example", "linear-regression", "--fast", NULL);
    assert_usage_error(&run, "unknown option '--fast'");
    run = run_twb("example", "linear-regression", "--steps", NULL);
    assert_usage_error(&run, "'--steps'");
    const char *bad[] = {"0", "-5", "ten", "12x", ""};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        run = run_twb("example", "linear-regression", "--steps", bad[i], NULL);
        char *quoted = g_strdup_printf("'%s'", bad[i]);
        assert_usage_error(&run, quoted);
        g_free(quoted);
    }
}

/* Parses "after N steps: loss=L  W=w  B=b" from the output. */
static void parse_final(const char *out, int *steps, double *loss, double *w, double *b)
{
    const char *line = strstr(out, "after ");
    g_assert_nonnull(line);
    g_assert_cmpint(sscanf(line, "after %d steps: loss=%lf W=%lf B=%lf", steps, loss, w, b), ==, 4);
}

static unsigned count_progress_lines(const char *out)
{
    unsigned n = 0;
    char **lines = g_strsplit(out, "\n", -1);
    for (char **line = lines; *line; line++)
        n += g_str_has_prefix(*line, "step ");
    g_strfreev(lines);
    return n;
}

static void test_linear_regression(void)
{
    twb_run run = run_twb("example", "linear-regression", NULL);
    g_assert_cmpstr(run.err, ==, "");
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_true(g_str_has_prefix(strstr(run.out, "step "), "step    0: loss="));
    g_assert_nonnull(strstr(run.out, "W=5.0000  B=10.0000"));
    g_assert_cmpuint(count_progress_lines(run.out), ==, 10); /* steps 0, 20, ..., 180 */
    int steps = 0;
    double loss = 0, w = 0, b = 0;
    parse_final(run.out, &steps, &loss, &w, &b);
    g_assert_cmpint(steps, ==, 200);
    g_assert_cmpfloat_with_epsilon(w, 3.0, 0.15);
    g_assert_cmpfloat_with_epsilon(b, 2.0, 0.3);
    g_assert_cmpfloat(loss, <, 1.2);
    g_assert_cmpfloat(loss, >, 0.7); /* the noise has variance 1 */
    twb_run_clear(&run);
}

static void test_linear_regression_steps(void)
{
    twb_run run = run_twb("example", "linear-regression", "--steps=41", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_cmpuint(count_progress_lines(run.out), ==, 3); /* steps 0, 20, 40 */
    int steps = 0;
    double loss = 0, w = 0, b = 0;
    parse_final(run.out, &steps, &loss, &w, &b);
    g_assert_cmpint(steps, ==, 41);
    /* Part of the way from (5, 10) towards (3, 2). */
    g_assert_cmpfloat(w, <, 5.0);
    g_assert_cmpfloat(w, >, 3.0);
    g_assert_cmpfloat(b, <, 10.0);
    g_assert_cmpfloat(b, >, 2.5);
    twb_run_clear(&run);
}

/* Without a command (or with model files) twb opens the window; without a
 * display it says so and fails instead of crashing. The window itself is
 * tested under Xvfb (test_ui_window.c). */
static void test_no_arguments_no_display(void)
{
    char *display = g_strdup(g_getenv("DISPLAY")), *wayland = g_strdup(g_getenv("WAYLAND_DISPLAY"));
    g_unsetenv("DISPLAY");
    g_unsetenv("WAYLAND_DISPLAY");
    const char *const *cases[] = {(const char *const[]){NULL}, (const char *const[]){"model.json", NULL}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        twb_run run = run_twb_argv(cases[i]);
        g_assert_cmpint(run.exit_status, ==, 1);
        g_assert_cmpstr(run.out, ==, "");
        g_assert_true(g_str_has_prefix(run.err, "twb: cannot open the workbench window: no display"));
        g_assert_nonnull(strstr(run.err, "twb --help"));
        twb_run_clear(&run);
    }
    if (display)
        g_setenv("DISPLAY", display, TRUE);
    if (wayland)
        g_setenv("WAYLAND_DISPLAY", wayland, TRUE);
    g_free(display);
    g_free(wayland);
}

/* ---- twb data inspect --------------------------------------------------- */

/* A temporary directory for the files a test writes; removed at the end. */
typedef struct {
    char *dir;
    GPtrArray *paths;
} scratch;

static scratch scratch_new(void)
{
    GError *error = NULL;
    scratch s = {g_dir_make_tmp("twb-inspect-XXXXXX", &error), g_ptr_array_new_with_free_func(g_free)};
    g_assert_no_error(error);
    return s;
}

static const char *scratch_file(scratch *s, const char *name, const void *bytes, size_t size)
{
    char *path = g_build_filename(s->dir, name, NULL);
    GError *error = NULL;
    g_file_set_contents(path, bytes, (gssize)size, &error);
    g_assert_no_error(error);
    g_ptr_array_add(s->paths, path);
    return path;
}

static void scratch_free(scratch *s)
{
    for (guint i = 0; i < s->paths->len; i++)
        g_remove(s->paths->pdata[i]);
    g_rmdir(s->dir);
    g_free(s->dir);
    g_ptr_array_free(s->paths, TRUE);
}

/* An IDX file: magic 00 00 type ndim, big-endian dimensions, then data. */
static GByteArray *idx_bytes(uint8_t type, int ndim, const uint32_t *dims, const void *data, size_t size)
{
    GByteArray *b = g_byte_array_new();
    uint8_t magic[4] = {0, 0, type, (uint8_t)ndim};
    g_byte_array_append(b, magic, 4);
    for (int i = 0; i < ndim; i++) {
        uint8_t be[4] = {dims[i] >> 24, (dims[i] >> 16) & 0xff, (dims[i] >> 8) & 0xff, dims[i] & 0xff};
        g_byte_array_append(b, be, 4);
    }
    g_byte_array_append(b, data, (guint)size);
    return b;
}

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
    }
    return ~crc;
}

/* A gzip member holding `data` in one stored (uncompressed) deflate block. */
static GByteArray *gzip_stored(const uint8_t *data, size_t n)
{
    g_assert_cmpuint(n, <, 65536);
    GByteArray *b = g_byte_array_new();
    const uint8_t header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    g_byte_array_append(b, header, 10);
    uint16_t len = (uint16_t)n, nlen = (uint16_t)~len;
    const uint8_t block[5] = {1, len & 0xff, len >> 8, nlen & 0xff, nlen >> 8};
    g_byte_array_append(b, block, 5);
    g_byte_array_append(b, data, (guint)n);
    uint32_t crc = crc32_of(data, n), size = (uint32_t)n;
    const uint8_t trailer[8] = {crc & 0xff, (crc >> 8) & 0xff, (crc >> 16) & 0xff, crc >> 24,
                                size & 0xff, (size >> 8) & 0xff, (size >> 16) & 0xff, size >> 24};
    g_byte_array_append(b, trailer, 8);
    return b;
}

/* An NPY version 1.0 file, header padded to 64 bytes. */
static GByteArray *npy_bytes(const char *descr, const char *shape, const void *data, size_t size)
{
    GString *header = g_string_new(NULL);
    g_string_printf(header, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    while ((10 + header->len + 1) % 64 != 0)
        g_string_append_c(header, ' ');
    g_string_append_c(header, '\n');
    GByteArray *b = g_byte_array_new();
    const uint8_t magic[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, header->len & 0xff, header->len >> 8};
    g_byte_array_append(b, magic, 10);
    g_byte_array_append(b, (const uint8_t *)header->str, (guint)header->len);
    g_byte_array_append(b, data, (guint)size);
    g_string_free(header, TRUE);
    return b;
}

static const char *scratch_bytes(scratch *s, const char *name, GByteArray *b)
{
    const char *path = scratch_file(s, name, b->data, b->len);
    g_byte_array_free(b, TRUE);
    return path;
}

/* The value of the report line "key:   value" (trimmed), or fail. */
static char *report_value(const char *out, const char *key)
{
    char *prefix = g_strdup_printf("%s:", key);
    char *value = NULL;
    char **lines = g_strsplit(out, "\n", -1);
    for (char **line = lines; *line && !value; line++)
        if (g_str_has_prefix(*line, prefix))
            value = g_strstrip(g_strdup(*line + strlen(prefix)));
    g_strfreev(lines);
    if (!value)
        g_error("no line '%s' in the report:\n%s", prefix, out);
    g_free(prefix);
    return value;
}

static void assert_report(const char *out, const char *key, const char *expected)
{
    char *value = report_value(out, key);
    g_assert_cmpstr(value, ==, expected);
    g_free(value);
}

static void assert_report_prefix(const char *out, const char *key, const char *expected)
{
    char *value = report_value(out, key);
    if (!g_str_has_prefix(value, expected))
        g_error("line '%s:' is '%s', expected it to start with '%s'", key, value, expected);
    g_free(value);
}

/* Every "key: value" line has its value in the same column. */
static void assert_aligned(const char *out)
{
    int column = -1;
    char **lines = g_strsplit(out, "\n", -1);
    for (char **line = lines; *line; line++) {
        const char *colon = strchr(*line, ':');
        if (**line == ' ' || **line == '\0' || !colon)
            continue; /* table rows are indented */
        const char *value = colon + 1;
        while (*value == ' ')
            value++;
        int at = (int)(value - *line);
        if (column < 0)
            column = at;
        if (at != column)
            g_error("'%s' is not aligned with the lines above (column %d, not %d)", *line, at, column);
    }
    g_strfreev(lines);
}

/* Exit status 1, nothing on stdout, "twb: data inspect: ..." quoting `quoted`. */
static void assert_inspect_failed(twb_run *run, const char *quoted)
{
    g_assert_cmpint(run->exit_status, ==, 1);
    g_assert_cmpstr(run->out, ==, "");
    if (!g_str_has_prefix(run->err, "twb: data inspect: ") || !strstr(run->err, quoted))
        g_error("expected 'twb: data inspect: ...%s...' on stderr, got '%s'", quoted, run->err);
    twb_run_clear(run);
}

/* Three 2x2 images (values 0..255) and their labels 1, 0, 1. */
static const uint8_t idx_pixels[12] = {0, 255, 9, 20, 30, 40, 50, 60, 70, 80, 90, 100};
static const uint8_t idx_labels[3] = {1, 0, 1};

static void test_inspect_idx(void)
{
    scratch s = scratch_new();
    const char *images = scratch_bytes(&s, "images-idx3-ubyte", idx_bytes(8, 3, (uint32_t[]){3, 2, 2}, idx_pixels, 12));
    const char *labels = scratch_bytes(&s, "labels-idx1-ubyte", idx_bytes(8, 1, (uint32_t[]){3}, idx_labels, 3));

    twb_run run = run_twb("data", "inspect", images, "--labels", labels, NULL);
    g_assert_cmpstr(run.err, ==, "");
    g_assert_cmpint(run.exit_status, ==, 0);
    assert_aligned(run.out);
    assert_report(run.out, "file", images);
    assert_report(run.out, "format", "IDX; type 0x08 (unsigned byte), 3 dimensions (3, 2, 2)");
    assert_report(run.out, "examples", "3");
    assert_report(run.out, "features", "(2, 2) uint8");
    assert_report(run.out, "value range", "min 0, max 255, mean 67"); /* 804 / 12 */
    assert_report_prefix(run.out, "8-bit pixels", "yes");
    assert_report(run.out, "labels file", labels);
    assert_report(run.out, "labels format", "IDX; type 0x08 (unsigned byte), 1 dimension (3,)");
    assert_report(run.out, "labels", "() uint8, 2 classes");
    g_assert_nonnull(strstr(run.out, "  class  count   share\n"
                                     "      0      1   33.3%\n"
                                     "      1      2   66.7%\n"));
    twb_run_clear(&run);

    /* Alone, the images have no labels; the labels file reads as values. */
    run = run_twb("data", "inspect", images, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    assert_report_prefix(run.out, "labels", "none");
    twb_run_clear(&run);
    run = run_twb("data", "inspect", labels, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    assert_report(run.out, "values", "() uint8, 2 classes");
    twb_run_clear(&run);
    scratch_free(&s);
}

static void test_inspect_idx_gzip(void)
{
    scratch s = scratch_new();
    GByteArray *raw = idx_bytes(8, 3, (uint32_t[]){3, 2, 2}, idx_pixels, 12);
    const char *images = scratch_bytes(&s, "images-idx3-ubyte.gz", gzip_stored(raw->data, raw->len));
    g_byte_array_free(raw, TRUE);
    twb_run run = run_twb("data", "inspect", images, NULL);
    g_assert_cmpstr(run.err, ==, "");
    g_assert_cmpint(run.exit_status, ==, 0);
    assert_report(run.out, "format", "IDX, gzip-compressed; type 0x08 (unsigned byte), 3 dimensions (3, 2, 2)");
    assert_report(run.out, "examples", "3");
    assert_report(run.out, "value range", "min 0, max 255, mean 67");
    twb_run_clear(&run);
    scratch_free(&s);
}

static void test_inspect_npy(void)
{
    scratch s = scratch_new();
    const float x[12] = {-1.5f, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10.5f};
    const int64_t y[4] = {2, 0, 1, 2};
    const char *features = scratch_bytes(&s, "x.npy", npy_bytes("<f4", "(4, 3)", x, sizeof x));
    const char *labels = scratch_bytes(&s, "y.npy", npy_bytes("<i8", "(4,)", y, sizeof y));
    twb_run run = run_twb("data", "inspect", features, "--labels", labels, NULL);
    g_assert_cmpstr(run.err, ==, "");
    g_assert_cmpint(run.exit_status, ==, 0);
    assert_aligned(run.out);
    assert_report(run.out, "format", "NPY version 1.0; descr '<f4', shape (4, 3)");
    assert_report(run.out, "examples", "4");
    assert_report(run.out, "features", "(3,) float32");
    assert_report(run.out, "value range", "min -1.5, max 10.5, mean 4.5");
    assert_report(run.out, "labels format", "NPY version 1.0; descr '<i8', shape (4,)");
    assert_report(run.out, "labels", "() int64, 3 classes");
    g_assert_nonnull(strstr(run.out, "      2      2   50.0%\n"));
    g_assert_null(strstr(run.out, "8-bit pixels")); /* said of IDX images only */
    twb_run_clear(&run);

    /* The counts must agree. */
    const char *short_labels = scratch_bytes(&s, "y3.npy", npy_bytes("<i8", "(3,)", y, 3 * sizeof y[0]));
    run = run_twb("data", "inspect", features, "--labels", short_labels, NULL);
    assert_inspect_failed(&run, "4 examples but");
    scratch_free(&s);
}

static void test_inspect_csv(void)
{
    scratch s = scratch_new();
    const char text[] = "width,height,label\n1,10,0\n3,20,1\n5,60,1\n";
    const char *csv = scratch_file(&s, "points.csv", text, strlen(text));
    twb_run run = run_twb("data", "inspect", csv, "--label-column", "label", NULL);
    g_assert_cmpstr(run.err, ==, "");
    g_assert_cmpint(run.exit_status, ==, 0);
    assert_aligned(run.out);
    assert_report(run.out, "format", "CSV; header row with 3 columns, label column 'label'");
    assert_report(run.out, "examples", "3");
    assert_report(run.out, "features", "(2,) float32");
    assert_report(run.out, "value range", "min 1, max 60, mean 16.5");
    assert_report(run.out, "labels", "() int64, 2 classes");
    /* Each feature column's range. */
    g_assert_nonnull(strstr(run.out, "  width              1             5             3\n"));
    g_assert_nonnull(strstr(run.out, "  height            10            60            30\n"));
    twb_run_clear(&run);

    /* Without a label column every column is a feature. */
    run = run_twb("data", "inspect", csv, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    assert_report(run.out, "features", "(3,) float32");
    assert_report_prefix(run.out, "labels", "none");
    twb_run_clear(&run);

    /* A label column that is not there is the engine's error. */
    run = run_twb("data", "inspect", csv, "--label-column", "colour", NULL);
    assert_inspect_failed(&run, "colour");
    scratch_free(&s);
}

static void test_inspect_bad_files(void)
{
    scratch s = scratch_new();
    /* Declares 3x2x2 bytes, holds 5. */
    const char *truncated =
        scratch_bytes(&s, "truncated-idx3-ubyte", idx_bytes(8, 3, (uint32_t[]){3, 2, 2}, idx_pixels, 5));
    twb_run run = run_twb("data", "inspect", truncated, NULL);
    assert_inspect_failed(&run, truncated);

    /* IDX by name, but the magic number is wrong. */
    const char *wrong =
        scratch_bytes(&s, "wrong-magic-idx3-ubyte", idx_bytes(7, 3, (uint32_t[]){3, 2, 2}, idx_pixels, 12));
    run = run_twb("data", "inspect", wrong, NULL);
    assert_inspect_failed(&run, wrong);

    const char not_npy[] = "\x93NUMPZ\x01\x00\x10\x00{'descr': '<f4'}";
    const char *bad_npy = scratch_file(&s, "bad.npy", not_npy, sizeof not_npy - 1);
    run = run_twb("data", "inspect", bad_npy, NULL);
    assert_inspect_failed(&run, bad_npy);

    const uint8_t blob[8] = {0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3};
    const char *unknown = scratch_file(&s, "blob.bin", blob, sizeof blob);
    run = run_twb("data", "inspect", unknown, NULL);
    assert_inspect_failed(&run, "not an IDX, NPY or CSV file");

    char *missing = g_build_filename(s.dir, "missing.npy", NULL);
    run = run_twb("data", "inspect", missing, NULL);
    assert_inspect_failed(&run, missing);
    g_free(missing);

    /* A labels file whose count disagrees with the images. */
    const char *images = scratch_bytes(&s, "images-idx3-ubyte", idx_bytes(8, 3, (uint32_t[]){3, 2, 2}, idx_pixels, 12));
    const char *labels = scratch_bytes(&s, "labels-idx1-ubyte", idx_bytes(8, 1, (uint32_t[]){2}, idx_labels, 2));
    run = run_twb("data", "inspect", images, "--labels", labels, NULL);
    assert_inspect_failed(&run, "3 examples but");
    scratch_free(&s);
}

static void test_inspect_usage(void)
{
    scratch s = scratch_new();
    const char *images = scratch_bytes(&s, "images-idx3-ubyte", idx_bytes(8, 3, (uint32_t[]){3, 2, 2}, idx_pixels, 12));
    const char text[] = "a,b\n1,2\n";
    const char *csv = scratch_file(&s, "t.csv", text, strlen(text));

    twb_run run = run_twb("data", NULL);
    assert_usage_error(&run, "inspect");
    run = run_twb("data", "look", NULL);
    assert_usage_error(&run, "'look'");
    run = run_twb("data", "inspect", NULL);
    assert_usage_error(&run, "name a file");
    run = run_twb("data", "inspect", images, images, NULL);
    assert_usage_error(&run, "one file at a time");
    run = run_twb("data", "inspect", images, "--labels", NULL);
    assert_usage_error(&run, "'--labels'");
    run = run_twb("data", "inspect", images, "--fast", NULL);
    assert_usage_error(&run, "unknown option '--fast'");
    run = run_twb("data", "inspect", images, "--label-column", "y", NULL);
    assert_usage_error(&run, "--label-column is for CSV files");
    run = run_twb("data", "inspect", csv, "--labels", images, NULL);
    assert_usage_error(&run, "--labels is for IDX and NPY files");
    run = run_twb("data", "inspect", "fashion-mnist:validation", NULL);
    assert_usage_error(&run, "'validation'");
    scratch_free(&s);
}

/* Where libtw-data looks: $TWB_DATA_DIR, a fashion-mnist folder in it, Debian's folder. */
static bool fashion_mnist_installed(void)
{
    const char *env = g_getenv("TWB_DATA_DIR");
    char *sub = env && env[0] ? g_build_filename(env, "fashion-mnist", NULL) : NULL;
    const char *dirs[3] = {env, sub, "/usr/share/datasets/fashion-mnist"};
    bool found = false;
    for (int i = 0; i < 3 && !found; i++) {
        if (!dirs[i] || !dirs[i][0])
            continue;
        for (int gz = 0; gz < 2 && !found; gz++) {
            char *path = g_build_filename(dirs[i], gz ? "t10k-images-idx3-ubyte.gz" : "t10k-images-idx3-ubyte", NULL);
            found = g_file_test(path, G_FILE_TEST_IS_REGULAR);
            g_free(path);
        }
    }
    g_free(sub);
    return found;
}

static void test_inspect_fashion_mnist(void)
{
    if (!fashion_mnist_installed()) {
        g_test_skip("Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist, or set TWB_DATA_DIR)");
        return;
    }
    twb_run run = run_twb("data", "inspect", "fashion-mnist:test", NULL);
    g_assert_cmpstr(run.err, ==, "");
    g_assert_cmpint(run.exit_status, ==, 0);
    assert_aligned(run.out);
    assert_report(run.out, "dataset", "fashion-mnist, test split");
    assert_report(run.out, "examples", "10000");
    assert_report(run.out, "features", "(28, 28) uint8");
    assert_report_prefix(run.out, "value range", "min 0, max 255, mean ");
    assert_report_prefix(run.out, "8-bit pixels", "yes");
    assert_report(run.out, "labels", "() uint8, 10 classes");
    g_assert_nonnull(strstr(run.out, "      0   1000   10.0%  T-shirt/top\n"));
    g_assert_nonnull(strstr(run.out, "      9   1000   10.0%  Ankle boot\n"));
    twb_run_clear(&run);
}

/* ---- twb summary ---------------------------------------------------------- */

static void test_summary_corpus(void)
{
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    char *path = g_build_filename(srcdir ? srcdir : ".", "..", "..", "shared", "corpus", "keras",
                                  "01-mlp-dropout-house-price.json", NULL);
    if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
        g_test_skip("the Keras corpus (../shared/corpus/keras) is not there");
        g_free(path);
        return;
    }
    twb_run run = run_twb("summary", path, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_true(g_str_has_prefix(run.out, "Model: \"sequential_10\"\n"));
    g_assert_nonnull(strstr(run.out, "dense_37 (Dense)             (None, 128)               1,792\n"));
    g_assert_nonnull(strstr(run.out, "dropout_15 (Dropout)         (None, 128)               0\n"));
    g_assert_nonnull(strstr(run.out, "Total params: 14,273\nTrainable params: 14,273\nNon-trainable params: 0\n"));
    g_assert_cmpstr(run.err, ==, "");
    twb_run_clear(&run);
    g_free(path);
}

static void test_summary_written_file(void)
{
    scratch s = scratch_new();
    const char *json = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"tiny\", \"layers\": ["
                       "{\"class_name\": \"Dense\", \"config\": {\"name\": \"hidden\", \"units\": 8, "
                       "\"activation\": \"relu\", \"batch_input_shape\": [null, 3]}}, "
                       "{\"class_name\": \"Dense\", \"config\": {\"name\": \"out\", \"units\": 2}}]}}";
    const char *path = scratch_file(&s, "tiny.json", json, strlen(json));
    twb_run run = run_twb("summary", path, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_cmpstr(run.out, ==,
                    "Model: \"tiny\"\n"
                    "_________________________________________________________________\n"
                    "Layer (type)                 Output Shape              Param #\n"
                    "=================================================================\n"
                    "hidden (Dense)               (None, 8)                 32\n"
                    "_________________________________________________________________\n"
                    "out (Dense)                  (None, 2)                 18\n"
                    "=================================================================\n"
                    "Total params: 50\n"
                    "Trainable params: 50\n"
                    "Non-trainable params: 0\n"
                    "_________________________________________________________________\n");
    g_assert_cmpstr(run.err, ==, "");
    twb_run_clear(&run);

    /* A bad value: exit status 1 and the file, layer and key on stderr. */
    const char *bad = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", \"layers\": ["
                      "{\"class_name\": \"Dense\", \"config\": {\"units\": -4}}]}}";
    path = scratch_file(&s, "bad.json", bad, strlen(bad));
    run = run_twb("summary", path, NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_cmpstr(run.out, ==, "");
    char *expected = g_strdup_printf("twb: summary: %s: layers[0].config.units: expected a positive integer, got -4\n",
                                     path);
    g_assert_cmpstr(run.err, ==, expected);
    g_free(expected);
    twb_run_clear(&run);

    /* No input shape anywhere: the summary cannot be made. */
    const char *shapeless = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", \"layers\": ["
                            "{\"class_name\": \"Dense\", \"config\": {\"units\": 4}}]}}";
    path = scratch_file(&s, "shapeless.json", shapeless, strlen(shapeless));
    run = run_twb("summary", path, NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "no input shape"));
    twb_run_clear(&run);
    scratch_free(&s);
}

static void test_summary_usage(void)
{
    twb_run run = run_twb("summary", NULL);
    assert_usage_error(&run, "MODEL.json");
    run = run_twb("summary", "--wide", NULL);
    assert_usage_error(&run, "unknown option '--wide'");
    run = run_twb("summary", "a.json", "b.json", NULL);
    assert_usage_error(&run, "'b.json'");
    run = run_twb("summary", "/nonexistent/model.json", NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_true(g_str_has_prefix(run.err, "twb: summary: /nonexistent/model.json"));
    twb_run_clear(&run);
}

/* A device or a FIFO given as the model: refused at once, not read until
 * memory runs out (/dev/zero) or waited on forever (a FIFO nobody writes). */
static void test_model_not_a_file(void)
{
    twb_run run = run_twb("summary", "/dev/zero", NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_cmpstr(run.err, ==,
                    "twb: summary: /dev/zero: is not a regular file (a device, pipe or socket); only files can be "
                    "read\n");
    twb_run_clear(&run);
    scratch s = scratch_new();
    char *fifo = g_build_filename(s.dir, "model.json", NULL);
    g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
    run = run_twb("summary", fifo, NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    char *expected = g_strdup_printf(
        "twb: summary: %s: is not a regular file (a device, pipe or socket); only files can be read\n", fifo);
    g_assert_cmpstr(run.err, ==, expected);
    g_free(expected);
    twb_run_clear(&run);
    /* The same FIFO as a CSV to inspect and as a graph file to run. */
    char *csv = g_build_filename(s.dir, "data.csv", NULL);
    g_assert_cmpint(rename(fifo, csv), ==, 0);
    run = run_twb("data", "inspect", csv, NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "is not a regular file"));
    twb_run_clear(&run);
    run = run_twb("run-graph", csv, "--input", csv, NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "is not a regular file"));
    twb_run_clear(&run);
    g_remove(csv);
    g_free(csv);
    g_free(fifo);
    scratch_free(&s);
}

/* A run whose stored model JSON is nested deeper than json-glib's parser
 * can follow: `runs show` says so instead of overflowing the stack. */
static void test_runs_show_deep_model(void)
{
    scratch s = scratch_new();
    char *db = g_build_filename(s.dir, "runs.db", NULL);
    char *deep = g_strnfill(200000, '[');
    tw_summary_run_options options = {.model_json = deep};
    tw_summary_writer *w = tw_summary_writer_open(db, "deep", &options);
    g_assert_nonnull(w);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    twb_run run = run_twb("runs", "show", "deep", "--logdb", db, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_nonnull(
        strstr(run.out, "model:    not read: the run's model JSON: JSON nested deeper than 512 levels (at byte 512)\n"));
    twb_run_clear(&run);
    g_free(deep);
    g_remove(db);
    char *side = g_strconcat(db, "-wal", NULL);
    g_remove(side);
    g_free(side);
    side = g_strconcat(db, "-shm", NULL);
    g_remove(side);
    g_free(side);
    g_free(db);
    scratch_free(&s);
}

/* A checkpoint whose training config is nested deeper than json-glib's
 * parser can follow: --resume names the checkpoint instead of crashing. */
static void test_resume_deep_training_config(void)
{
    scratch s = scratch_new();
    const char *json = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", \"layers\": ["
                       "{\"class_name\": \"Dense\", \"config\": {\"units\": 4, \"activation\": \"relu\", "
                       "\"batch_input_shape\": [null, 2]}}, {\"class_name\": \"Dense\", \"config\": {\"units\": 2}}]}}";
    const char *model = scratch_file(&s, "m.json", json, strlen(json));
    char *dir = g_build_filename(s.dir, "ck", NULL), *ckpt = g_build_filename(dir, "checkpoint.safetensors", NULL);
    twb_run run = run_twb("train", model, "--data", "spirals", "--epochs", "1", "--checkpoint-dir", dir, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    twb_run_clear(&run);

    /* The same checkpoint with its training config replaced. */
    tw_scope_begin();
    tw_safetensors *st = tw_safetensors_open(ckpt);
    g_assert_nonnull(st);
    int n = tw_safetensors_count(st);
    const char **names = g_new(const char *, n);
    tw_tensor **tensors = g_new(tw_tensor *, n);
    for (int i = 0; i < n; i++) {
        names[i] = tw_safetensors_name(st, i);
        tensors[i] = tw_safetensors_get(st, names[i]);
        g_assert_nonnull(tensors[i]);
    }
    char *deep = g_strnfill(200000, '[');
    const char *keys[] = {"format", "version", "model_json", "training_config"};
    const char *values[] = {tw_safetensors_metadata(st, "format"), tw_safetensors_metadata(st, "version"),
                            tw_safetensors_metadata(st, "model_json"), deep};
    char *copy = g_strconcat(ckpt, ".new", NULL);
    g_assert_cmpint(tw_safetensors_write(copy, n, names, tensors, 4, keys, values), ==, 0);
    tw_safetensors_close(st);
    g_assert_cmpint(g_rename(copy, ckpt), ==, 0);
    tw_scope_end();

    run = run_twb("train", model, "--data", "spirals", "--epochs", "2", "--checkpoint-dir", dir, "--resume", NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    char *expected = g_strdup_printf("%s: the training config: JSON nested deeper than 512 levels (at byte 512)", ckpt);
    g_assert_nonnull(strstr(run.err, expected));
    g_free(expected);
    twb_run_clear(&run);
    g_free(deep), g_free(copy), g_free(names), g_free(tensors);
    g_remove(ckpt);
    g_rmdir(dir);
    g_free(ckpt), g_free(dir);
    scratch_free(&s);
}

/* A model file nested deeper than a recursive JSON parser's stack allows. */
static void test_model_nested_too_deep(void)
{
    scratch s = scratch_new();
    char *deep = g_strnfill(200000, '[');
    const char *path = scratch_file(&s, "deep.json", deep, strlen(deep));
    twb_run run = run_twb("summary", path, NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    char *expected = g_strdup_printf("twb: summary: %s: JSON nested deeper than 512 levels (at byte 512)\n", path);
    g_assert_cmpstr(run.err, ==, expected);
    g_free(expected);
    twb_run_clear(&run);
    g_free(deep);
    scratch_free(&s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cli/version", test_version);
    g_test_add_func("/cli/help", test_help);
    g_test_add_func("/cli/unknown-command", test_unknown_command);
    g_test_add_func("/cli/bad-options", test_bad_options);
    g_test_add_func("/cli/linear-regression", test_linear_regression);
    g_test_add_func("/cli/linear-regression-steps", test_linear_regression_steps);
    g_test_add_func("/cli/no-arguments", test_no_arguments_no_display);
    g_test_add_func("/cli/data-inspect/idx", test_inspect_idx);
    g_test_add_func("/cli/data-inspect/idx-gzip", test_inspect_idx_gzip);
    g_test_add_func("/cli/data-inspect/npy", test_inspect_npy);
    g_test_add_func("/cli/data-inspect/csv", test_inspect_csv);
    g_test_add_func("/cli/data-inspect/bad-files", test_inspect_bad_files);
    g_test_add_func("/cli/data-inspect/usage", test_inspect_usage);
    g_test_add_func("/cli/data-inspect/fashion-mnist", test_inspect_fashion_mnist);
    g_test_add_func("/cli/summary/corpus", test_summary_corpus);
    g_test_add_func("/cli/summary/written-file", test_summary_written_file);
    g_test_add_func("/cli/summary/usage", test_summary_usage);
    g_test_add_func("/cli/model-not-a-file", test_model_not_a_file);
    g_test_add_func("/cli/model-nested-too-deep", test_model_nested_too_deep);
    g_test_add_func("/cli/runs-show-deep-model", test_runs_show_deep_model);
    g_test_add_func("/cli/resume-deep-training-config", test_resume_deep_training_config);
    return g_test_run();
}
