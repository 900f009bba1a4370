/* The dashboard's pure renderers (chart_render.h, histogram_render.h) drawn
 * into cairo image surfaces: a lone spike among ten million points lands on
 * its column, smoothing is TensorBoard's formula, ticks are readable, the
 * distribution's percentiles and the rebinning are exact to a bucket, and
 * both styles draw. No display needed. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tw/engine.h>
#include <tw/summary.h>

#include "chart_render.h"
#include "histogram_render.h"

/* ---- helpers ---------------------------------------------------------------- */
typedef struct {
    char *dir, *path;
} fixture;

static void fixture_setup(fixture *f, gconstpointer data)
{
    GError *error = NULL;
    f->dir = g_dir_make_tmp("twb-render-XXXXXX", &error);
    g_assert_no_error(error);
    f->path = g_build_filename(f->dir, "runs.db", NULL);
}

static void fixture_teardown(fixture *f, gconstpointer data)
{
    GDir *dir = g_dir_open(f->dir, 0, NULL);
    const char *name;
    while (dir && (name = g_dir_read_name(dir))) {
        char *p = g_build_filename(f->dir, name, NULL);
        g_remove(p);
        g_free(p);
    }
    if (dir)
        g_dir_close(dir);
    g_rmdir(f->dir);
    g_free(f->path);
    g_free(f->dir);
}

typedef struct {
    double r, g, b;
} pixel;

static pixel pixel_at(cairo_surface_t *s, int x, int y)
{
    cairo_surface_flush(s);
    const unsigned char *row = cairo_image_surface_get_data(s) + (size_t)y * cairo_image_surface_get_stride(s);
    uint32_t v = ((const uint32_t *)row)[x]; /* ARGB32, opaque here */
    return (pixel){((v >> 16) & 255) / 255.0, ((v >> 8) & 255) / 255.0, (v & 255) / 255.0};
}

/* How much of color over bg the pixel is (0 = background, 1 = the colour),
 * or -1 when the pixel is not a blend of the two (a grey grid line, text). */
static double tint(pixel p, tw_rgb bg, tw_rgb color)
{
    double d[3] = {color.r - bg.r, color.g - bg.g, color.b - bg.b};
    double q[3] = {p.r - bg.r, p.g - bg.g, p.b - bg.b};
    double dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    double t = (q[0] * d[0] + q[1] * d[1] + q[2] * d[2]) / dd, residual = 0;
    for (int i = 0; i < 3; i++)
        residual += (q[i] - t * d[i]) * (q[i] - t * d[i]);
    return sqrt(residual) < 0.03 ? t : -1;
}

/* The strongest tint of color in column x between rows y0 and y1. */
static double column_tint(cairo_surface_t *s, int x, int y0, int y1, tw_rgb bg, tw_rgb color)
{
    double best = 0;
    for (int y = y0; y <= y1; y++)
        best = fmax(best, tint(pixel_at(s, x, y), bg, color));
    return best;
}

static cairo_surface_t *surface_new(int width, int height, cairo_t **cr)
{
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
    g_assert_cmpint(cairo_surface_status(s), ==, CAIRO_STATUS_SUCCESS);
    *cr = cairo_create(s);
    return s;
}

static const tw_rgb light_bg = {1, 1, 1};
static const tw_rgb dark_bg = {30 / 255.0, 30 / 255.0, 32 / 255.0};

static void assert_background(cairo_surface_t *s, int x, int y, bool dark)
{
    pixel p = pixel_at(s, x, y);
    tw_rgb want = dark ? dark_bg : light_bg;
    g_assert_cmpfloat_with_epsilon(p.r, want.r, 1.5 / 255);
    g_assert_cmpfloat_with_epsilon(p.g, want.g, 1.5 / 255);
    g_assert_cmpfloat_with_epsilon(p.b, want.b, 1.5 / 255);
}

/* ---- smoothing --------------------------------------------------------------- */

/* TensorBoard's debiased EMA at weight 0.6, by hand:
 *   1:   last = 0.4 * 1 = 0.4,                debias 1 - 0.6   = 0.4    -> 1
 *   2:   last = 0.6 * 0.4 + 0.4 * 2 = 1.04,   debias 1 - 0.36  = 0.64   -> 1.625
 *   NaN: passed through, not counted
 *   4:   last = 0.6 * 1.04 + 0.4 * 4 = 2.224, debias 1 - 0.216 = 0.784  -> 2.2244/0.784
 *   +Inf passed through; 0: last = 1.3344, debias 1 - 0.1296 = 0.8704. */
static void test_smoothing(void)
{
    const double values[] = {1, 2, NAN, 4, INFINITY, 0};
    double out[6];
    tw_smooth_ema(values, 6, 0.6, out);
    g_assert_cmpfloat_with_epsilon(out[0], 1, 1e-12);
    g_assert_cmpfloat_with_epsilon(out[1], 1.625, 1e-12);
    g_assert_true(isnan(out[2]));
    g_assert_cmpfloat_with_epsilon(out[3], 2.224 / 0.784, 1e-12);
    g_assert_true(isinf(out[4]) && out[4] > 0);
    g_assert_cmpfloat_with_epsilon(out[5], 1.3344 / 0.8704, 1e-12);

    /* Weight 0 is no smoothing; in place works. */
    double copy[6];
    memcpy(copy, values, sizeof copy);
    tw_smooth_ema(copy, 6, 0, copy);
    for (int i = 0; i < 6; i++)
        if (isfinite(values[i]))
            g_assert_cmpfloat(copy[i], ==, values[i]);

    /* A leading NaN does not start the average. */
    const double lead[] = {NAN, 3, 5};
    tw_smooth_ema(lead, 3, 0.5, out);
    g_assert_true(isnan(out[0]));
    g_assert_cmpfloat_with_epsilon(out[1], 3, 1e-12);
    g_assert_cmpfloat_with_epsilon(out[2], (0.25 * 3 + 0.5 * 5) / 0.75, 1e-12);
}

/* ---- ticks ------------------------------------------------------------------- */
static void assert_labels(const tw_ticks *t, const char *const *want, int n)
{
    g_assert_cmpint(t->n, ==, n);
    for (int i = 0; i < n; i++)
        g_assert_cmpstr(t->labels[i], ==, want[i]);
}

/* Every tick an integer multiple of one 1, 2 or 5 times a power of ten,
 * evenly spaced, inside the range, about target of them. */
static void assert_nice_linear(double lo, double hi, int target)
{
    tw_ticks t;
    tw_ticks_linear(lo, hi, target, &t);
    g_assert_cmpint(t.n, >=, target / 2);
    g_assert_cmpint(t.n, <=, target + 1);
    double step = t.values[1] - t.values[0];
    double mantissa = step / pow(10, floor(log10(step)));
    g_assert_true(fabs(mantissa - 1) < 1e-9 || fabs(mantissa - 2) < 1e-9 || fabs(mantissa - 5) < 1e-9);
    for (int i = 0; i < t.n; i++) {
        g_assert_cmpfloat(t.values[i], >=, lo - 1e-9 * step);
        g_assert_cmpfloat(t.values[i], <=, hi + 1e-9 * step);
        double k = t.values[i] / step;
        g_assert_cmpfloat_with_epsilon(k, round(k), 1e-6);
        if (i > 0)
            g_assert_cmpfloat_with_epsilon(t.values[i] - t.values[i - 1], step, 1e-9 * step);
    }
}

static void test_linear_ticks(void)
{
    const double ranges[][2] = {{0, 1}, {0, 2000}, {-3.7, 12.2}, {0.00013, 0.00071}, {1e6, 1.3e7}, {-1e-3, 5e-3},
                                {997, 1003}, {0, 93}};
    for (size_t i = 0; i < G_N_ELEMENTS(ranges); i++)
        for (int target = 3; target <= 10; target++)
            assert_nice_linear(ranges[i][0], ranges[i][1], target);

    tw_ticks t;
    tw_ticks_linear(0, 2000, 4, &t);
    assert_labels(&t, (const char *const[]){"0", "500", "1k", "1.5k", "2k"}, 5);
    tw_ticks_linear(0, 4e6, 4, &t);
    assert_labels(&t, (const char *const[]){"0", "1M", "2M", "3M", "4M"}, 5);
    tw_ticks_linear(0, 0.004, 4, &t);
    assert_labels(&t, (const char *const[]){"0", "0.001", "0.002", "0.003", "0.004"}, 5);
    tw_ticks_linear(1000, 1060, 6, &t); /* a suffix only where one decimal says it all */
    assert_labels(&t, (const char *const[]){"1000", "1010", "1020", "1030", "1040", "1050", "1060"}, 7);
    tw_ticks_linear(-1, 1, 4, &t);
    assert_labels(&t, (const char *const[]){"-1", "-0.5", "0", "0.5", "1"}, 5);
    tw_ticks_linear(0.1, 0.35, 5, &t); /* 0.1 + 0.05k: never 0.30000000000000004 */
    assert_labels(&t, (const char *const[]){"0.1", "0.15", "0.2", "0.25", "0.3", "0.35"}, 6);
    tw_ticks_linear(0, 0.0004, 4, &t); /* all below a thousandth: scientific */
    assert_labels(&t, (const char *const[]){"0", "1e-4", "2e-4", "3e-4", "4e-4"}, 5);

    tw_ticks_linear(NAN, 1, 5, &t);
    g_assert_cmpint(t.n, ==, 0);
    tw_ticks_linear(-1.5e308, 1.5e308, 5, &t); /* a span past the largest double */
    g_assert_cmpint(t.n, ==, 0);
    tw_ticks_linear(-8e307, 8e307, 5, &t);
    g_assert_cmpint(t.n, >=, 3);
}

static void test_log_ticks(void)
{
    tw_ticks t;
    tw_ticks_log(1e-4, 1e2, 8, &t);
    assert_labels(&t, (const char *const[]){"1e-4", "1e-3", "0.01", "0.1", "1", "10", "100"}, 7);
    for (int i = 0; i < t.n; i++)
        g_assert_cmpfloat_with_epsilon(t.values[i], pow(10, i - 4), 1e-12 * pow(10, i - 4));

    /* Fewer ticks wanted: still powers of ten, every other decade. */
    tw_ticks_log(1e-4, 1e2, 4, &t);
    g_assert_cmpint(t.n, >=, 3);
    g_assert_cmpint(t.n, <=, 5);
    for (int i = 0; i < t.n; i++) {
        double e = log10(t.values[i]);
        g_assert_cmpfloat_with_epsilon(e, round(e), 1e-9);
    }

    /* Two decades: 1, 2 and 5 of each. */
    tw_ticks_log(1, 100, 10, &t);
    assert_labels(&t, (const char *const[]){"1", "2", "5", "10", "20", "50", "100"}, 7);
    /* Inside one decade: 1/2/5 steps. */
    tw_ticks_log(0.3, 0.8, 5, &t);
    assert_labels(&t, (const char *const[]){"0.3", "0.4", "0.5", "0.6", "0.7", "0.8"}, 6);

    tw_ticks_log(0, 10, 5, &t);
    g_assert_cmpint(t.n, ==, 0);
}

static void test_time_ticks(void)
{
    tw_ticks t;
    tw_ticks_time(0, 600, 5, false, &t);
    assert_labels(&t, (const char *const[]){"0", "2m", "4m", "6m", "8m", "10m"}, 6);
    tw_ticks_time(0, 5400, 3, false, &t);
    assert_labels(&t, (const char *const[]){"0", "30m", "1h", "1h30m"}, 4);
    tw_ticks_time(0, 2, 4, false, &t);
    assert_labels(&t, (const char *const[]){"0", "0.5s", "1s", "1.5s", "2s"}, 5);

    /* Wall clock, in UTC (main sets TZ): 1.7e9 s is 2023-11-14 22:13:20. */
    tw_ticks_time(1.7e9, 1.7e9 + 3600, 4, true, &t);
    assert_labels(&t, (const char *const[]){"22:15", "22:30", "22:45", "23:00"}, 4);
    /* Far past the calendar: numbers, no garbage. */
    tw_ticks_time(1e300, 1.0000001e300, 4, true, &t);
    for (int i = 0; i < t.n; i++)
        g_assert_cmpint(strspn(t.labels[i], "0123456789"), ==, strlen(t.labels[i]));
    tw_ticks_time(0, 1e300, 4, false, &t);
    g_assert_cmpint(t.n, >=, 2);
}

/* An epoch chart with one point at step 1687: the view the chart gives a
 * lone point (a step either side, 5% room on the right) has whole-step
 * ticks, the point on one of them when there is room for three. */
static void test_one_point_epoch_ticks(void)
{
    tw_chart c = {.x_axis = TW_X_STEP, .y_axis = TW_Y_LINEAR, .x_lo = 1686, .x_hi = 1688.1, .y_lo = 0.4,
                  .y_hi = 0.6, .hover_x = NAN};
    for (int width = 200; width <= 1600; width += 200) {
        tw_ticks x, y;
        tw_chart_ticks(&c, tw_chart_plot_area(width, 300), &x, &y);
        g_assert_cmpint(x.n, >=, 2);
        bool has_point = false;
        for (int i = 0; i < x.n; i++) {
            g_assert_cmpfloat(x.values[i], ==, round(x.values[i]));
            g_assert_null(strchr(x.labels[i], '.'));
            has_point |= x.values[i] == 1687;
        }
        g_assert_true(has_point || x.n < 3);
    }
    tw_ticks t;
    tw_ticks_integer(1686, 1688.1, 5, &t);
    assert_labels(&t, (const char *const[]){"1686", "1687", "1688"}, 3);
    tw_ticks_integer(7, 7, 5, &t); /* an empty range: whole steps around it */
    assert_labels(&t, (const char *const[]){"6", "7", "8"}, 3);
    tw_ticks_integer(0, 2000, 4, &t); /* wide ranges as on any linear axis */
    assert_labels(&t, (const char *const[]){"0", "500", "1k", "1.5k", "2k"}, 5);
}

/* The wall-clock axis shows the time of day; a date only at a midnight of
 * a range that spans days, or when its ticks are days apart. */
static void test_wall_clock_axis(void)
{
    g_assert_cmpstr(tw_chart_x_unit(TW_X_WALL_TIME), ==, "local time");
    g_assert_cmpstr(tw_chart_x_unit(TW_X_STEP), ==, "step");
    g_assert_cmpstr(tw_chart_x_unit(TW_X_RELATIVE_TIME), ==, "time");
    /* A 40 s training run at 1.7e9 (2023-11-14 22:13:20 UTC). */
    tw_chart c = {.x_axis = TW_X_WALL_TIME, .y_axis = TW_Y_LINEAR, .x_lo = 1.7e9, .x_hi = 1.7e9 + 40, .y_lo = 0,
                  .y_hi = 1, .hover_x = NAN};
    tw_ticks x, y;
    tw_chart_ticks(&c, tw_chart_plot_area(640, 300), &x, &y);
    g_assert_cmpint(x.n, >=, 3);
    for (int i = 0; i < x.n; i++)
        g_assert_true(g_regex_match_simple("^22:1[34]:[0-5][0-9]$", x.labels[i], 0, 0));
    /* A lone point: two seconds around it. */
    tw_ticks_time(1.7e9 - 1, 1.7e9 + 1.1, 5, true, &x);
    g_assert_cmpint(x.n, >=, 2);
    for (int i = 0; i < x.n; i++)
        g_assert_true(g_regex_match_simple("^22:13:(19|20|21)(\\.[05])?$", x.labels[i], 0, 0));
    /* 20:00 to 04:00: times, and the date at midnight. */
    double evening = 1.7e9 - 8000; /* 20:00 UTC */
    tw_ticks_time(evening, evening + 8 * 3600, 4, true, &x);
    assert_labels(&x, (const char *const[]){"20:00", "22:00", "Nov 15", "02:00", "04:00"}, 5);
    /* Weeks: dates. */
    tw_ticks_time(1.7e9, 1.7e9 + 21 * 86400, 4, true, &x);
    for (int i = 0; i < x.n; i++)
        g_assert_true(g_regex_match_simple("^Nov [0-9]{2}$|^Dec [0-9]{2}$", x.labels[i], 0, 0));
}

/* The card lays its export buttons over the chart's top right corner: with
 * header_reserve set, neither "log scale" nor a long title is drawn there. */
static void test_header_clear_of_buttons(void)
{
    const int width = 600, height = 300, reserve = 140;
    tw_lod_column columns[10];
    for (int i = 0; i < 10; i++)
        columns[i] = (tw_lod_column){.count = 1, .first = {i, 0, 1 + i}, .last = {i, 0, 1 + i}, .min = 1 + i,
                                     .max = 1 + i};
    tw_chart_series s = {.color = tw_run_color(0), .ncolumns = 10, .columns = columns};
    const char *titles[] = {"loss", "a/very/long/tag/name/that/would/run/under/the/export/buttons/of/the/card"};
    for (int t = 0; t < 2; t++) {
        tw_chart c = {.x_axis = TW_X_STEP, .y_axis = TW_Y_LOG, .x_lo = 0, .x_hi = 9, .y_lo = 0.5, .y_hi = 20,
                      .nseries = 1, .series = &s, .title = titles[t], .hover_x = NAN, .header_reserve = reserve};
        cairo_t *cr;
        cairo_surface_t *surface = surface_new(width, height, &cr);
        tw_chart_render(cr, width, height, &c);
        tw_rect plot = tw_chart_plot_area(width, height);
        for (int y = 0; y < (int)plot.y - 1; y++)
            for (int x = width - reserve; x < width; x++)
                assert_background(surface, x, y, false);
        /* The caption is there, left of the reserve: some ink in the header
         * between the title's end and the reserve. */
        int ink = 0;
        for (int y = 0; y < (int)plot.y - 1; y++)
            for (int x = width - reserve - 70; x < width - reserve; x++)
                ink += pixel_at(surface, x, y).r < 0.8;
        g_assert_cmpint(ink, >, 0);
        cairo_destroy(cr);
        cairo_surface_destroy(surface);
    }
}

/* ---- mapping and ranges -------------------------------------------------------- */
static void test_mapping(void)
{
    tw_rect plot = tw_chart_plot_area(640, 320);
    g_assert_cmpfloat(plot.width, >, 500);
    g_assert_cmpfloat(plot.height, >, 220);
    g_assert_cmpfloat(plot.x, ==, floor(plot.x)); /* whole pixels: crisp lines */
    g_assert_cmpfloat(plot.y, ==, floor(plot.y));
    tw_chart c = {.x_axis = TW_X_STEP, .y_axis = TW_Y_LOG, .x_lo = 0, .x_hi = 100, .y_lo = 1e-4, .y_hi = 1e2};
    g_assert_cmpfloat(tw_chart_x_to_px(&c, plot, 0), ==, plot.x);
    g_assert_cmpfloat(tw_chart_x_to_px(&c, plot, 100), ==, plot.x + plot.width);
    g_assert_cmpfloat_with_epsilon(tw_chart_px_to_x(&c, plot, tw_chart_x_to_px(&c, plot, 37)), 37, 1e-9);
    /* log10: 0.1 is halfway between 1e-4 and 1e2. */
    g_assert_cmpfloat_with_epsilon(tw_chart_y_to_px(&c, plot, 0.1), plot.y + plot.height / 2, 1e-9);
    g_assert_cmpfloat_with_epsilon(tw_chart_y_to_px(&c, plot, 1e2), plot.y, 1e-9);
    g_assert_cmpfloat_with_epsilon(tw_chart_px_to_y(&c, plot, tw_chart_y_to_px(&c, plot, 3.5)), 3.5, 1e-9);
}

/* 100 columns of values in [0, 1] and one column reaching 1e6: the spike
 * sets the range unless outliers are ignored. */
static void test_auto_y_range(void)
{
    tw_lod_column columns[100];
    for (int i = 0; i < 100; i++)
        columns[i] = (tw_lod_column){.count = 10, .min = 0.01 * i * 0.5, .max = 0.01 * i, .min_step = i, .max_step = i};
    columns[40].max = 1e6;
    tw_chart_series s = {.ncolumns = 100, .columns = columns};
    tw_chart c = {.x_axis = TW_X_STEP, .y_axis = TW_Y_LINEAR, .x_lo = 0, .x_hi = 100, .nseries = 1, .series = &s};
    double lo, hi;
    tw_chart_auto_y_range(&c, false, &lo, &hi);
    g_assert_cmpfloat(lo, <=, 0);
    g_assert_cmpfloat(hi, >=, 1e6);
    tw_chart_auto_y_range(&c, true, &lo, &hi);
    /* The 95th percentile of the maxima is 0.95 (column 95), the 5th of the
     * minima 0.025 (column 5), plus a 5% margin. */
    g_assert_cmpfloat(hi, >, 0.95);
    g_assert_cmpfloat(hi, <, 1);
    g_assert_cmpfloat(lo, <, 0.025);
    g_assert_cmpfloat(lo, >, -0.05);
    c.y_axis = TW_Y_LOG;
    tw_chart_auto_y_range(&c, false, &lo, &hi); /* the minimum 0 has no logarithm: left out */
    g_assert_cmpfloat(lo, >, 0);
    g_assert_cmpfloat(lo, <, 0.005);
    g_assert_cmpfloat(hi, >, 1e6);
}

/* ---- a lone spike among ten million points ------------------------------------- */
enum { SPIKE_N = 10000000, SPIKE_STEP = 6543210 };

static void spike_chart(cairo_surface_t *surface, cairo_t *cr, const tw_lod_column *columns, int ncolumns,
                        const double *smoothed, bool dark, tw_chart *out)
{
    int width = cairo_image_surface_get_width(surface), height = cairo_image_surface_get_height(surface);
    static tw_chart_series series;
    series = (tw_chart_series){.color = tw_run_color(0), .label = "spiky", .ncolumns = ncolumns,
                               .columns = columns, .smoothed = smoothed};
    *out = (tw_chart){.x_axis = TW_X_STEP, .y_axis = TW_Y_LINEAR, .x_lo = 0, .x_hi = SPIKE_N - 1, .nseries = 1,
                      .series = &series, .title = "train/loss", .dark = dark, .hover_x = NAN};
    tw_chart_auto_y_range(out, false, &out->y_lo, &out->y_hi);
    tw_chart_render(cr, width, height, out);
}

static void test_spike(fixture *f, gconstpointer data)
{
    tw_summary_writer *w = tw_summary_writer_open(f->path, "spiky", NULL);
    g_assert_nonnull(w);
    GRand *rand = g_rand_new_with_seed(11);
    for (int64_t i = 0; i < SPIKE_N; i++)
        g_assert_cmpint(tw_summary_scalar(w, "train/loss", i == SPIKE_STEP ? 1e6 : g_rand_double(rand), i), ==, 0);
    g_rand_free(rand);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);

    tw_run_store *store = tw_run_store_open(f->path, TW_STORE_READ_ONLY);
    g_assert_nonnull(store);
    tw_run_info run;
    g_assert_cmpint(tw_run_store_get_run(store, "spiky", &run), ==, 0);
    int64_t tag = tw_run_store_find_tag(store, run.id, "train/loss");
    tw_run_info_clear(&run);
    g_assert_cmpint(tag, >=, 0);

    const int width = 900, height = 320;
    tw_rect plot = tw_chart_plot_area(width, height);
    int ncolumns = (int)plot.width; /* a column per pixel, as the chart view asks */
    tw_lod_column *columns = g_new(tw_lod_column, ncolumns);
    g_assert_cmpint(tw_run_store_read_lod(store, tag, TW_AXIS_STEP, 0, SPIKE_N - 1, ncolumns, columns), ==, 0);
    tw_run_store_close(store);
    int spike = (int)((double)SPIKE_STEP / (SPIKE_N - 1) * ncolumns);
    int64_t total = 0;
    for (int i = 0; i < ncolumns; i++)
        total += columns[i].count;
    g_assert_cmpint(total, ==, SPIKE_N);
    g_assert_cmpfloat(columns[spike].max, ==, 1e6);

    double *lasts = g_new(double, ncolumns), *smoothed = g_new(double, ncolumns);
    for (int i = 0; i < ncolumns; i++)
        lasts[i] = columns[i].last.value;
    tw_smooth_ema(lasts, ncolumns, 0.6, smoothed);

    for (int dark = 0; dark <= 1; dark++) {
        cairo_t *cr;
        cairo_surface_t *s = surface_new(width, height, &cr);
        tw_chart chart;
        spike_chart(s, cr, columns, ncolumns, smoothed, dark, &chart);
        tw_rgb bg = dark ? dark_bg : light_bg, color = tw_run_color(0);
        /* The spike's top is 1/21 of the plot down (a 5% margin above 1e6). */
        double top_px = tw_chart_y_to_px(&chart, plot, 1e6);
        g_assert_cmpfloat(top_px, <, plot.y + 0.1 * plot.height);
        int y0 = (int)plot.y + 1, y1 = (int)(plot.y + 0.4 * plot.height);
        int x = (int)plot.x + spike;
        g_assert_cmpfloat(column_tint(s, x, y0, y1, bg, color), >, 0.2);
        for (int d = 1; d <= 3; d++) {
            g_assert_cmpfloat(column_tint(s, x - d, y0, y1, bg, color), <, 0.05);
            g_assert_cmpfloat(column_tint(s, x + d, y0, y1, bg, color), <, 0.05);
        }
        /* The rest of the data (values in [0, 1)) is squeezed into a row
         * or two, the smoothed line there in full colour. */
        int data_row = (int)tw_chart_y_to_px(&chart, plot, 0.5);
        g_assert_cmpint(data_row, >, plot.y + 0.9 * plot.height);
        g_assert_cmpfloat(column_tint(s, (int)plot.x + ncolumns / 3, data_row - 2, data_row + 2, bg, color), >, 0.8);
        assert_background(s, 2, height - 2, dark);
        cairo_destroy(cr);
        cairo_surface_destroy(s);
    }
    g_free(lasts);
    g_free(smoothed);
    g_free(columns);
}

/* Raw points far apart (zoomed in) on a relative-time axis, no smoothing:
 * the line between them is drawn across the empty pixel columns at the
 * right height, in full colour. */
static void test_sparse_points(void)
{
    const int width = 500, height = 300;
    const double origin = 1.7e9;
    tw_scalar_point points[] = {{0, origin, 0}, {1, origin + 50, 10}, {2, origin + 100, 0}};
    tw_chart_series s = {.color = tw_run_color(3), .npoints = 3, .points = points, .time_origin = origin};
    tw_chart c = {.x_axis = TW_X_RELATIVE_TIME, .y_axis = TW_Y_LINEAR, .x_lo = 0, .x_hi = 100, .y_lo = -1,
                  .y_hi = 11, .nseries = 1, .series = &s, .hover_x = NAN};
    cairo_t *cr;
    cairo_surface_t *surface = surface_new(width, height, &cr);
    tw_chart_render(cr, width, height, &c);
    tw_rect plot = tw_chart_plot_area(width, height);
    for (double t = 10; t <= 90; t += 20) {
        double want = t <= 50 ? t / 5 : (100 - t) / 5;
        int x = (int)tw_chart_x_to_px(&c, plot, t), y = (int)tw_chart_y_to_px(&c, plot, want);
        g_assert_cmpfloat(column_tint(surface, x, y - 2, y + 2, light_bg, s.color), >, 0.5);
        /* and nothing of it far above or below */
        g_assert_cmpfloat(column_tint(surface, x, (int)plot.y + 1, y - 8, light_bg, s.color), <, 0.05);
    }
    cairo_destroy(cr);
    cairo_surface_destroy(surface);
}

/* A series with one point (an epoch's first value) shows a dot there. */
static void test_lone_point(void)
{
    const int width = 400, height = 300;
    tw_scalar_point point = {5, 0, 2};
    tw_chart_series s = {.color = tw_run_color(1), .npoints = 1, .points = &point};
    tw_chart c = {.x_axis = TW_X_STEP, .y_axis = TW_Y_LINEAR, .x_lo = 0, .x_hi = 10, .y_lo = 0, .y_hi = 4,
                  .nseries = 1, .series = &s, .hover_x = NAN};
    cairo_t *cr;
    cairo_surface_t *surface = surface_new(width, height, &cr);
    tw_chart_render(cr, width, height, &c);
    tw_rect plot = tw_chart_plot_area(width, height);
    int x = (int)tw_chart_x_to_px(&c, plot, 5), y = (int)tw_chart_y_to_px(&c, plot, 2);
    g_assert_cmpfloat(column_tint(surface, x, y - 1, y + 1, light_bg, s.color), >, 0.8);
    g_assert_cmpfloat(column_tint(surface, x + 20, (int)plot.y + 1, (int)(plot.y + plot.height) - 2, light_bg, s.color),
                      <, 0.05);
    cairo_destroy(cr);
    cairo_surface_destroy(surface);
}

/* A point a hundred billion pixels away (deep zoom): the visible part of
 * the line to it keeps its true slope (cairo's fixed-point coordinates
 * would overflow). */
static void test_far_point(void)
{
    const int width = 400, height = 300;
    tw_scalar_point points[] = {{0, 0, 0}, {(int64_t)1e12, 0, 5e11}};
    tw_chart_series s = {.color = tw_run_color(0), .npoints = 2, .points = points};
    tw_chart c = {.x_axis = TW_X_STEP, .y_axis = TW_Y_LINEAR, .x_lo = 0, .x_hi = 10, .y_lo = 0, .y_hi = 10,
                  .nseries = 1, .series = &s, .hover_x = NAN};
    cairo_t *cr;
    cairo_surface_t *surface = surface_new(width, height, &cr);
    tw_chart_render(cr, width, height, &c);
    tw_rect plot = tw_chart_plot_area(width, height);
    for (double v = 2; v <= 8; v += 3) { /* on the line y = x / 2 */
        int x = (int)tw_chart_x_to_px(&c, plot, v), y = (int)tw_chart_y_to_px(&c, plot, v / 2);
        g_assert_cmpfloat(column_tint(surface, x, y - 2, y + 2, light_bg, s.color), >, 0.5);
    }
    cairo_destroy(cr);
    cairo_surface_destroy(surface);
}

/* ---- histograms ----------------------------------------------------------------- */
static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A sample's exact percentile (linear interpolation between order statistics). */
static double exact_percentile(const double *sorted, int n, double fraction)
{
    double pos = fraction * (n - 1);
    int i = (int)floor(pos);
    return i + 1 < n ? sorted[i] + (pos - i) * (sorted[i + 1] - sorted[i]) : sorted[n - 1];
}

/* Normal and uniform samples written by the summary writer, read back:
 * every band's percentile within one bucket of the sample's own. */
static void test_percentiles(fixture *f, gconstpointer data)
{
    enum { N = 200000 };
    tw_summary_writer *w = tw_summary_writer_open(f->path, "dist", NULL);
    g_assert_nonnull(w);
    GRand *rand = g_rand_new_with_seed(5);
    double *samples[2] = {g_new(double, N), g_new(double, N)};
    for (int i = 0; i < N; i++) {
        double u1 = g_rand_double(rand), u2 = g_rand_double(rand);
        samples[0][i] = 0.5 + 2 * sqrt(-2 * log(1 - u1)) * cos(2 * G_PI * u2); /* normal(0.5, 2) */
        samples[1][i] = -3 + 4 * g_rand_double(rand);                          /* uniform(-3, 1) */
    }
    g_rand_free(rand);
    const char *tags[2] = {"weights/normal", "weights/uniform"};
    for (int d = 0; d < 2; d++) {
        tw_tensor *t = tw_tensor_from_data(samples[d], TW_FLOAT64, 1, (int64_t[]){N});
        g_assert_cmpint(tw_summary_histogram(w, tags[d], t, 1), ==, 0);
        tw_tensor_unref(t);
    }
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);

    tw_run_store *store = tw_run_store_open(f->path, TW_STORE_READ_ONLY);
    tw_run_info run;
    g_assert_cmpint(tw_run_store_get_run(store, "dist", &run), ==, 0);
    for (int d = 0; d < 2; d++) {
        tw_histogram *h;
        int n;
        int64_t tag = tw_run_store_find_tag(store, run.id, tags[d]);
        g_assert_cmpint(tw_run_store_read_histograms(store, tag, 0, 10, 0, &h, &n), ==, 0);
        g_assert_cmpint(n, ==, 1);
        qsort(samples[d], N, sizeof(double), compare_doubles);
        double p[TW_DISTRIBUTION_BANDS], bucket = (h->max - h->min) / h->nbuckets;
        tw_histogram_percentiles(h, p);
        for (int k = 0; k < TW_DISTRIBUTION_BANDS; k++) {
            double want = exact_percentile(samples[d], N, tw_distribution_percentiles[k] / 10000);
            g_assert_cmpfloat_with_epsilon(p[k], want, bucket);
            if (k > 0)
                g_assert_cmpfloat(p[k], >=, p[k - 1]);
        }
        g_assert_cmpfloat(p[0], ==, samples[d][0]);
        g_assert_cmpfloat(p[TW_DISTRIBUTION_BANDS - 1], ==, samples[d][N - 1]);
        tw_histogram_free(h, n);
    }
    tw_run_info_clear(&run);
    tw_run_store_close(store);
    g_free(samples[0]);
    g_free(samples[1]);
}

/* Percentiles interpolate inside the bucket holding them. */
static void test_percentiles_by_hand(void)
{
    /* 10 values in [0, 1), 30 in [1, 2), none in [2, 3), 60 in [3, 4]. */
    double buckets[] = {10, 30, 0, 60};
    tw_histogram h = {.count = 100, .min = 0, .max = 4, .nbuckets = 4, .buckets = buckets};
    double p[TW_DISTRIBUTION_BANDS];
    tw_histogram_percentiles(&h, p);
    g_assert_cmpfloat(p[0], ==, 0);
    g_assert_cmpfloat_with_epsilon(p[1], 0.668, 1e-12);            /* 6.68 of the first bucket's 10 */
    g_assert_cmpfloat_with_epsilon(p[2], 1 + 5.87 / 30, 1e-12);    /* 15.87: 5.87 into the 30 */
    g_assert_cmpfloat_with_epsilon(p[4], 3 + 10.0 / 60, 1e-12);    /* the median skips the empty bucket */
    g_assert_cmpfloat_with_epsilon(p[7], 3 + 53.32 / 60, 1e-12);
    g_assert_cmpfloat(p[8], ==, 4);

    tw_histogram empty = {.count = 0, .min = 0, .max = 1, .nbuckets = 4, .buckets = (double[]){0, 0, 0, 0}};
    tw_histogram_percentiles(&empty, p);
    g_assert_true(isnan(p[4]));
}

static void test_rebin(void)
{
    /* One bucket over [0, 10] holding 100: spread in proportion. */
    tw_histogram one = {.count = 100, .min = 0, .max = 10, .nbuckets = 1, .buckets = (double[]){100}};
    double out[4];
    tw_histogram_rebin(&one, 0, 20, 4, out);
    g_assert_cmpfloat_with_epsilon(out[0], 50, 1e-9);
    g_assert_cmpfloat_with_epsilon(out[1], 50, 1e-9);
    g_assert_cmpfloat(out[2], ==, 0);
    g_assert_cmpfloat(out[3], ==, 0);
    tw_histogram_rebin(&one, 2.5, 12.5, 4, out); /* a quarter of [0, 10] in each of the first three bins */
    g_assert_cmpfloat_with_epsilon(out[0], 25, 1e-9);
    g_assert_cmpfloat_with_epsilon(out[1], 25, 1e-9);
    g_assert_cmpfloat_with_epsilon(out[2], 25, 1e-9);
    g_assert_cmpfloat(out[3], ==, 0);

    /* Every value equal: the whole count in the bin holding it. */
    tw_histogram point = {.count = 7, .min = 3, .max = 3, .nbuckets = 2, .buckets = (double[]){7, 0}};
    tw_histogram_rebin(&point, 0, 4, 4, out);
    g_assert_cmpfloat(out[3], ==, 7);
    g_assert_cmpfloat(out[0] + out[1] + out[2], ==, 0);

    /* 64 random buckets into 37 bins over a wider range: the total stays. */
    double buckets[64], total = 0, sum = 0, bins[37];
    GRand *rand = g_rand_new_with_seed(3);
    for (int b = 0; b < 64; b++)
        total += buckets[b] = g_rand_int_range(rand, 0, 1000);
    g_rand_free(rand);
    tw_histogram h = {.count = total, .min = -1.3, .max = 2.9, .nbuckets = 64, .buckets = buckets};
    tw_histogram_rebin(&h, -2, 3, 37, bins);
    for (int j = 0; j < 37; j++)
        sum += bins[j];
    g_assert_cmpfloat_with_epsilon(sum, total, 1e-9 * total);
    /* Into the same buckets: the same counts. */
    double same[64];
    tw_histogram_rebin(&h, -1.3, 2.9, 64, same);
    for (int b = 0; b < 64; b++)
        g_assert_cmpfloat_with_epsilon(same[b], buckets[b], 1e-6);

    /* Infinite extremes have no bucket geometry: nothing to draw. */
    tw_histogram inf = {.count = 3, .min = -INFINITY, .max = 1, .nbuckets = 1, .buckets = (double[]){3}};
    tw_histogram_rebin(&inf, 0, 1, 4, out);
    g_assert_cmpfloat(out[0] + out[1] + out[2] + out[3], ==, 0);
}

/* ---- both styles ------------------------------------------------------------------ */

/* Histograms of normal samples drifting right over 20 steps. */
static tw_histogram *drifting_histograms(int n, int nbuckets)
{
    tw_histogram *h = g_new0(tw_histogram, n);
    for (int k = 0; k < n; k++) {
        double mean = k * 0.1, sd = 1 + 0.02 * k;
        h[k] = (tw_histogram){.step = 100 * k, .min = mean - 3 * sd, .max = mean + 3 * sd, .nbuckets = nbuckets,
                              .buckets = g_new(double, nbuckets)};
        for (int b = 0; b < nbuckets; b++) {
            double z = -3 + 6 * (b + 0.5) / nbuckets;
            h[k].count += h[k].buckets[b] = 1000 * exp(-z * z / 2);
        }
    }
    return h;
}

static void free_histograms(tw_histogram *h, int n)
{
    for (int k = 0; k < n; k++)
        g_free(h[k].buckets);
    g_free(h);
}

static void test_styles(void)
{
    const int width = 480, height = 300;
    tw_histogram *h = drifting_histograms(20, 64);
    tw_lod_column columns[200];
    double smoothed[200], lasts[200];
    for (int i = 0; i < 200; i++) {
        double v = exp(-i / 60.0);
        columns[i] = (tw_lod_column){.count = 5, .first = {5 * i, 0, v * 1.1}, .last = {5 * i + 4, 0, v},
                                     .min = v * 0.9, .max = v * 1.2};
        lasts[i] = v;
    }
    tw_smooth_ema(lasts, 200, 0.6, smoothed);
    tw_chart_series s = {.color = tw_run_color(1), .ncolumns = 200, .columns = columns, .smoothed = smoothed};
    for (int dark = 0; dark <= 1; dark++) {
        for (int kind = 0; kind < 5; kind++) {
            cairo_t *cr;
            cairo_surface_t *surface = surface_new(width, height, &cr);
            tw_histogram_chart hc = {.mode = kind == 1 ? TW_HISTOGRAM_OVERLAY : TW_HISTOGRAM_OFFSET,
                                     .n = kind == 3 ? 0 : 20, .histograms = h, .color = tw_run_color(2),
                                     .title = "weights/dense/kernel", .dark = dark};
            tw_chart chart = {.x_axis = TW_X_STEP, .y_axis = kind == 4 ? TW_Y_LOG : TW_Y_LINEAR, .x_lo = 0,
                              .x_hi = 999, .nseries = 1, .series = &s, .title = "train/loss", .dark = dark,
                              .hover_x = 500};
            if (kind <= 1)
                tw_histogram_render(cr, width, height, &hc);
            else if (kind == 2 || kind == 3)
                tw_distribution_render(cr, width, height, &hc);
            else {
                tw_chart_auto_y_range(&chart, false, &chart.y_lo, &chart.y_hi);
                tw_chart_render(cr, width, height, &chart);
            }
            g_assert_cmpint(cairo_status(cr), ==, CAIRO_STATUS_SUCCESS);
            assert_background(surface, 1, 1, dark);
            assert_background(surface, width - 2, height - 2, dark);
            if (kind == 4) { /* the hover guide at step 500 */
                tw_rect plot = tw_chart_plot_area(width, height);
                int gx = (int)tw_chart_x_to_px(&chart, plot, 500);
                int gy = (int)(plot.y + 5);
                pixel p = pixel_at(surface, gx, gy);
                g_assert_cmpfloat(fabs(p.r - (dark ? dark_bg.r : 1)), >, 0.2);
            }
            cairo_destroy(cr);
            cairo_surface_destroy(surface);
        }
    }
    free_histograms(h, 20);
}

/* Two records on disjoint ranges, step 0 on [0, 1] and step 100 on
 * [2, 3]: in offset mode the later ridge stands lower and darker; in
 * overlay mode both share the baseline and the older one is fainter. */
static void test_histogram_modes(void)
{
    const int width = 600, height = 300;
    double b0[] = {10, 30, 10}, b1[] = {10, 30, 10};
    tw_histogram h[] = {{.step = 0, .count = 50, .min = 0, .max = 1, .nbuckets = 3, .buckets = b0},
                        {.step = 100, .count = 50, .min = 2, .max = 3, .nbuckets = 3, .buckets = b1}};
    tw_rgb color = tw_run_color(0);
    for (int mode = 0; mode < 2; mode++) {
        cairo_t *cr;
        cairo_surface_t *s = surface_new(width, height, &cr);
        tw_histogram_chart hc = {.mode = mode ? TW_HISTOGRAM_OVERLAY : TW_HISTOGRAM_OFFSET, .n = 2, .histograms = h,
                                 .color = color, .title = "w"};
        tw_histogram_render(cr, width, height, &hc);
        /* Per record: the topmost row its outline reaches and its
         * strongest tint, record 0 in the left half, record 1 in the right. */
        int top[2] = {height, height};
        double strongest[2] = {0, 0};
        for (int k = 0; k < 2; k++) {
            for (int x = k * width / 2; x < (k + 1) * width / 2; x++)
                for (int y = 30; y < height - 24; y++) {
                    double t = tint(pixel_at(s, x, y), light_bg, color);
                    if (t > 0.05 && y < top[k])
                        top[k] = y;
                    strongest[k] = fmax(strongest[k], t);
                }
            g_assert_cmpint(top[k], <, height);
        }
        g_assert_cmpfloat(strongest[1], >, strongest[0] + 0.2);
        if (mode == 0)
            g_assert_cmpint(top[1], >, top[0] + 50); /* the later ridge lower */
        else
            g_assert_cmpint(abs(top[1] - top[0]), <=, 2); /* same counts, same height */
        cairo_destroy(cr);
        cairo_surface_destroy(s);
    }
}

/* Distribution bands: the median row is darker than the outer band. */
static void test_distribution_bands(void)
{
    const int width = 400, height = 300;
    tw_histogram *h = drifting_histograms(10, 64);
    for (int k = 0; k < 10; k++) /* no drift: the median stays at 0 */
        h[k].min = -3, h[k].max = 3;
    cairo_t *cr;
    cairo_surface_t *s = surface_new(width, height, &cr);
    tw_histogram_chart hc = {.n = 10, .histograms = h, .color = tw_run_color(0), .title = "w"};
    tw_distribution_render(cr, width, height, &hc);
    /* Values -3..3 padded by 5% map to the plot's rows; find the rows of
     * the median (0) and of 2.5 (between the 93rd and 100th percentiles)
     * by scanning the middle column from the top for the first tint. */
    int x = width / 2, first = -1, median_tint_row = height / 2;
    for (int y = 0; y < height && first < 0; y++)
        if (tint(pixel_at(s, x, y), light_bg, tw_run_color(0)) > 0.1)
            first = y;
    g_assert_cmpint(first, >, 0);
    double outer = tint(pixel_at(s, x, first + 2), light_bg, tw_run_color(0));
    double inner = 0;
    for (int y = median_tint_row - 25; y <= median_tint_row + 25; y++)
        inner = fmax(inner, tint(pixel_at(s, x, y), light_bg, tw_run_color(0)));
    g_assert_cmpfloat(inner, >, outer + 0.3);
    cairo_destroy(cr);
    cairo_surface_destroy(s);
    free_histograms(h, 10);
}

/* The offset histogram's step axis, right of the plot: its unit ("step")
 * and its tick labels each stand apart. Rows with ink in that column come
 * in groups no taller than a line of text (two labels on each other make
 * a taller one) with at least five blank rows between them: "step" under
 * the plot shared rows with the last step's label, their glyphs three
 * rows apart in this font and touching in others. */
static void test_histogram_labels_apart(void)
{
    tw_histogram *h = drifting_histograms(21, 64); /* steps 0 to 2000: the last one has a tick */
    for (int height = 200; height <= 500; height += 60) {
        const int width = 480;
        cairo_t *cr;
        cairo_surface_t *surface = surface_new(width, height, &cr);
        tw_histogram_chart hc = {.mode = TW_HISTOGRAM_OFFSET, .n = 21, .histograms = h, .color = tw_run_color(2),
                                 .title = "w"};
        tw_histogram_render(cr, width, height, &hc);
        int run = 0, tallest = 0, blank = -1, narrowest = height;
        for (int y = 0; y < height; y++) {
            bool ink = false;
            for (int x = width - 56; x < width && !ink; x++)
                ink = pixel_at(surface, x, y).r < 0.97;
            if (ink && blank >= 0 && run == 0)
                narrowest = MIN(narrowest, blank);
            blank = ink ? 0 : blank >= 0 ? blank + 1 : -1;
            run = ink ? run + 1 : 0;
            tallest = MAX(tallest, run);
        }
        g_assert_cmpint(tallest, >, 5);
        g_assert_cmpint(tallest, <=, 16);
        g_assert_cmpint(narrowest, >=, 5);
        cairo_destroy(cr);
        cairo_surface_destroy(surface);
    }
    free_histograms(h, 21);
}

/* A histogram tag that cannot be read shows its message, in red, in
 * every mode, instead of its ridges or bands. */
static void test_histogram_damage(void)
{
    tw_histogram *h = drifting_histograms(5, 16);
    const tw_rgb red = {0.75, 0.11, 0.16};
    for (int mode = 0; mode < 3; mode++) {
        const int width = 480, height = 300;
        cairo_t *cr;
        cairo_surface_t *surface = surface_new(width, height, &cr);
        tw_histogram_chart hc = {.mode = mode == 1 ? TW_HISTOGRAM_OVERLAY : TW_HISTOGRAM_OFFSET, .n = 5,
                                 .histograms = h, .color = tw_run_color(2), .title = "w",
                                 .damage = "runs.db: run “a”, tag “w”: histogram 3: 5 bytes of buckets"};
        if (mode == 2)
            tw_distribution_render(cr, width, height, &hc);
        else
            tw_histogram_render(cr, width, height, &hc);
        int reds = 0, run_colour = 0;
        for (int y = 40; y < height - 30; y++)
            for (int x = 0; x < width; x++) {
                pixel p = pixel_at(surface, x, y);
                reds += tint(p, light_bg, red) > 0.5;
                run_colour += tint(p, light_bg, tw_run_color(2)) > 0.5;
            }
        g_assert_cmpint(reds, >, 50);
        g_assert_cmpint(run_colour, ==, 0);
        cairo_destroy(cr);
        cairo_surface_destroy(surface);
    }
    free_histograms(h, 5);
}

/* No histograms yet read: the title alone; read and none: the note too. */
static void test_histogram_loading(void)
{
    const int width = 480, height = 300;
    int marked[2];
    for (int loading = 0; loading <= 1; loading++) {
        cairo_t *cr;
        cairo_surface_t *surface = surface_new(width, height, &cr);
        tw_histogram_chart hc = {.n = 0, .color = tw_run_color(2), .title = "w", .loading = loading};
        tw_histogram_render(cr, width, height, &hc);
        marked[loading] = 0;
        for (int y = 40; y < height - 30; y++) /* below the title */
            for (int x = 0; x < width; x++) {
                pixel p = pixel_at(surface, x, y);
                marked[loading] += fabs(p.r - light_bg.r) + fabs(p.g - light_bg.g) + fabs(p.b - light_bg.b) > 0.1;
            }
        cairo_destroy(cr);
        cairo_surface_destroy(surface);
    }
    g_assert_cmpint(marked[0], >, 20); /* "No histograms" */
    g_assert_cmpint(marked[1], ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_setenv("TZ", "UTC", TRUE); /* wall-clock tick labels; before any thread starts */
    tzset();
    g_test_add_func("/render/smoothing", test_smoothing);
    g_test_add_func("/render/ticks/linear", test_linear_ticks);
    g_test_add_func("/render/ticks/log", test_log_ticks);
    g_test_add_func("/render/ticks/time", test_time_ticks);
    g_test_add_func("/render/ticks/one-point-epoch", test_one_point_epoch_ticks);
    g_test_add_func("/render/ticks/wall-clock", test_wall_clock_axis);
    g_test_add_func("/render/header-clear-of-buttons", test_header_clear_of_buttons);
    g_test_add_func("/render/mapping", test_mapping);
    g_test_add_func("/render/auto-y-range", test_auto_y_range);
    g_test_add_func("/render/sparse-points", test_sparse_points);
    g_test_add_func("/render/far-point", test_far_point);
    g_test_add_func("/render/lone-point", test_lone_point);
    g_test_add("/render/spike", fixture, NULL, fixture_setup, test_spike, fixture_teardown);
    g_test_add("/render/percentiles", fixture, NULL, fixture_setup, test_percentiles, fixture_teardown);
    g_test_add_func("/render/percentiles-by-hand", test_percentiles_by_hand);
    g_test_add_func("/render/rebin", test_rebin);
    g_test_add_func("/render/styles", test_styles);
    g_test_add_func("/render/histogram-modes", test_histogram_modes);
    g_test_add_func("/render/histogram-labels-apart", test_histogram_labels_apart);
    g_test_add_func("/render/histogram-damage", test_histogram_damage);
    g_test_add_func("/render/histogram-loading", test_histogram_loading);
    g_test_add_func("/render/distribution-bands", test_distribution_bands);
    return g_test_run();
}
