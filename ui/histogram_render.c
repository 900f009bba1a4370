/* Histograms and distributions over steps (histogram_render.h).
 *
 * A record whose min or max is infinite has no bucket geometry (its end
 * buckets hold the infinities, the others the finite values' own range,
 * which the record does not keep): it rebins to nothing, its percentiles
 * are NaN, and the renderers leave it out. */
#include <math.h>
#include <stdlib.h>

#include "histogram_render.h"
#include "render_style.h"

const double tw_distribution_percentiles[TW_DISTRIBUTION_BANDS] = {0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000};

#define LABEL_SIZE 11

static bool has_geometry(const tw_histogram *h)
{
    return h->nbuckets > 0 && h->buckets && isfinite(h->min) && isfinite(h->max) && h->max >= h->min;
}

static double total_count(const tw_histogram *h)
{
    double total = 0;
    for (int b = 0; b < h->nbuckets; b++)
        total += h->buckets[b];
    return total;
}

/* ---- rebinning and percentiles ------------------------------------------------ */
void tw_histogram_rebin(const tw_histogram *h, double lo, double hi, int nbins, double *out)
{
    for (int j = 0; j < nbins; j++)
        out[j] = 0;
    if (nbins < 1 || !has_geometry(h) || !(hi > lo))
        return;
    double bin = (hi - lo) / nbins;
    if (h->max == h->min) { /* every value the same: all of it in one bin */
        if (h->min >= lo && h->min <= hi) {
            int j = (int)((h->min - lo) / bin);
            out[j < nbins ? j : nbins - 1] += total_count(h);
        }
        return;
    }
    double width = (h->max - h->min) / h->nbuckets;
    for (int b = 0; b < h->nbuckets; b++) {
        double count = h->buckets[b];
        double a = h->min + b * width, z = b == h->nbuckets - 1 ? h->max : h->min + (b + 1) * width;
        if (count == 0 || z <= lo || a >= hi)
            continue;
        int j0 = (int)floor((fmax(a, lo) - lo) / bin), j1 = (int)floor((fmin(z, hi) - lo) / bin);
        j0 = j0 < 0 ? 0 : j0;
        j1 = j1 >= nbins ? nbins - 1 : j1;
        for (int j = j0; j <= j1; j++) {
            double left = lo + (hi - lo) * j / nbins, right = lo + (hi - lo) * (j + 1) / nbins;
            double overlap = fmin(z, right) - fmax(a, left);
            if (overlap > 0)
                out[j] += count * overlap / (z - a);
        }
    }
}

void tw_histogram_percentiles(const tw_histogram *h, double *out)
{
    double total = has_geometry(h) ? total_count(h) : 0;
    for (int k = 0; k < TW_DISTRIBUTION_BANDS; k++)
        out[k] = NAN;
    if (!(total > 0))
        return;
    double width = (h->max - h->min) / h->nbuckets, below = 0;
    int b = 0;
    for (int k = 0; k < TW_DISTRIBUTION_BANDS; k++) {
        double target = tw_distribution_percentiles[k] / 10000 * total;
        /* The bucket holding the target-th value; counts before it sum to below. */
        while (b < h->nbuckets - 1 && (h->buckets[b] == 0 || below + h->buckets[b] < target))
            below += h->buckets[b++];
        double within = h->buckets[b] > 0 ? (target - below) / h->buckets[b] : 0;
        double v = h->min + (b + fmin(fmax(within, 0), 1)) * width;
        out[k] = k == 0 ? h->min : k == TW_DISTRIBUTION_BANDS - 1 ? h->max : fmin(fmax(v, h->min), h->max);
    }
}

/* ---- shared layout ------------------------------------------------------------- */
typedef struct {
    double lo, hi;
} range;

/* A range with room: never empty, a margin of `pad` of its span. */
static range padded(range r, double pad)
{
    if (!(r.hi > r.lo)) {
        double d = r.lo == 0 ? 1 : 0.1 * fabs(r.lo);
        return (range){r.lo - d, r.hi + d};
    }
    double d = pad * (r.hi - r.lo);
    return (range){r.lo - d, r.hi + d};
}

/* The values and steps the drawable records span; false when none is. */
static bool extents(const tw_histogram_chart *chart, range *values, range *steps)
{
    *values = (range){INFINITY, -INFINITY};
    *steps = (range){INFINITY, -INFINITY};
    for (int k = 0; k < chart->n; k++) {
        const tw_histogram *h = &chart->histograms[k];
        if (!has_geometry(h))
            continue;
        values->lo = fmin(values->lo, h->min), values->hi = fmax(values->hi, h->max);
        steps->lo = fmin(steps->lo, (double)h->step), steps->hi = fmax(steps->hi, (double)h->step);
    }
    return values->lo <= values->hi;
}

static double map(range r, double v, double px0, double px1)
{
    return px0 + (v - r.lo) / (r.hi - r.lo) * (px1 - px0);
}

static int display_bins(tw_rect plot)
{
    int n = (int)(plot.width / 7);
    return n < 10 ? 10 : n > 60 ? 60 : n;
}

/* Rebinned counts of every record (n x nbins) and the largest. */
static double *rebin_all(const tw_histogram_chart *chart, range values, int nbins, double *largest)
{
    double *counts = malloc(sizeof *counts * (size_t)chart->n * (size_t)nbins);
    *largest = 0;
    for (int k = 0; k < chart->n; k++) {
        tw_histogram_rebin(&chart->histograms[k], values.lo, values.hi, nbins, counts + (size_t)k * nbins);
        for (int j = 0; j < nbins; j++)
            *largest = fmax(*largest, counts[(size_t)k * nbins + j]);
    }
    return counts;
}

/* Bottom value axis: grid lines, tick labels and a unit. */
static void value_axis(cairo_t *cr, PangoLayout *layout, tw_rect plot, range values, const double *ys, int ny,
                       const tw_render_style *style)
{
    tw_ticks xt;
    tw_ticks_linear(values.lo, values.hi, (int)(plot.width / 90) + 1, &xt);
    double xs[TW_MAX_TICKS];
    for (int i = 0; i < xt.n; i++)
        xs[i] = map(values, xt.values[i], plot.x, plot.x + plot.width);
    tw_render_grid(cr, plot, xs, xt.n, ys, ny, style);
    double right = plot.x + plot.width;
    tw_render_x_tick_labels(cr, layout, &xt, xs, plot.y + plot.height + 5, plot.x - 20, right + 16, style);
}

/* One record's outline over its own range [min, max] (x0 to x1 in
 * pixels): up from the baseline through the centres of the bins it covers
 * (kept inside its range, so a sharp edge stays sharp) and back down. */
static void outline_path(cairo_t *cr, const double *counts, int nbins, double scale, tw_rect plot, double base,
                         double x0, double x1)
{
    double bin = plot.width / nbins;
    cairo_move_to(cr, x0, base);
    for (int j = 0; j < nbins; j++) {
        double left = plot.x + j * bin, centre = left + bin / 2;
        if (left + bin <= x0 || left >= x1)
            continue;
        cairo_line_to(cr, fmin(fmax(centre, x0), x1), base - counts[j] * scale);
    }
    cairo_line_to(cr, x1, base);
}

/* The record's range in pixels. */
static void record_span(const tw_histogram *h, range values, tw_rect plot, double *x0, double *x1)
{
    *x0 = map(values, h->min, plot.x, plot.x + plot.width);
    *x1 = map(values, h->max, plot.x, plot.x + plot.width);
}

/* ---- histograms --------------------------------------------------------------- */

/* Ridges: the oldest at the top, drawn first; each later one lower and in
 * front, filled opaque so it hides what is behind it, and darker. */
static void render_offset(cairo_t *cr, PangoLayout *layout, int width, int height, const tw_histogram_chart *chart,
                          range values, range steps, const tw_render_style *style)
{
    tw_rect plot = {16, 30, width - 16 - 62, height - 30 - 24};
    int nbins = display_bins(plot);
    double largest;
    double *counts = rebin_all(chart, values, nbins, &largest);
    bool one_step = !(steps.hi > steps.lo);
    double ridge = one_step ? plot.height : plot.height * 0.45;
    double scale = largest > 0 ? ridge / largest : 0;

    tw_ticks st;
    tw_ticks_integer(steps.lo, steps.hi, (int)((plot.height - ridge) / 40) + 2, &st);
    double ys[TW_MAX_TICKS];
    for (int i = 0; i < st.n; i++)
        ys[i] = one_step ? plot.y + plot.height : map(steps, st.values[i], plot.y + ridge, plot.y + plot.height);
    value_axis(cr, layout, plot, values, NULL, 0, style);
    tw_render_y_tick_labels(cr, layout, &st, ys, plot.x + plot.width + 6, 0, plot.y, plot.y + plot.height, style);
    /* The unit heads its column, above the first (oldest) step's label:
     * below the plot it would sit on the last step's label and on the
     * value axis's labels. */
    double top_tick = one_step ? plot.y + plot.height : plot.y + ridge;
    tw_render_label(cr, layout, "step", plot.x + plot.width + 6, top_tick - 10, 0, 1, style->muted);

    cairo_set_line_width(cr, 1);
    for (int k = 0; k < chart->n; k++) {
        const tw_histogram *h = &chart->histograms[k];
        if (!has_geometry(h))
            continue;
        double t = one_step ? 1 : ((double)h->step - steps.lo) / (steps.hi - steps.lo);
        double base = plot.y + ridge + t * (plot.height - ridge), x0, x1;
        record_span(h, values, plot, &x0, &x1);
        outline_path(cr, counts + (size_t)k * nbins, nbins, scale, plot, base, x0, x1);
        cairo_close_path(cr);
        tw_render_set_color(cr, tw_rgb_mix(style->background, chart->color, 0.08 + 0.22 * t), 1);
        cairo_fill_preserve(cr);
        tw_render_set_color(cr, tw_rgb_mix(style->background, chart->color, 0.35 + 0.65 * t), 1);
        cairo_stroke(cr);
    }
    free(counts);
}

/* Every record's outline on one count axis, older ones more transparent. */
static void render_overlay(cairo_t *cr, PangoLayout *layout, int width, int height, const tw_histogram_chart *chart,
                           range values, range steps, const tw_render_style *style)
{
    tw_rect plot = {58, 30, width - 58 - 18, height - 30 - 24};
    int nbins = display_bins(plot);
    double largest;
    double *counts = rebin_all(chart, values, nbins, &largest);
    range count_axis = {0, largest > 0 ? largest * 1.05 : 1};

    tw_ticks ct;
    tw_ticks_linear(count_axis.lo, count_axis.hi, (int)(plot.height / 45) + 1, &ct);
    double ys[TW_MAX_TICKS];
    for (int i = 0; i < ct.n; i++)
        ys[i] = map(count_axis, ct.values[i], plot.y + plot.height, plot.y);
    value_axis(cr, layout, plot, values, ys, ct.n, style);
    tw_render_y_tick_labels(cr, layout, &ct, ys, plot.x - 6, 1, plot.y, plot.y + plot.height, style);

    double scale = plot.height / count_axis.hi, base = plot.y + plot.height;
    bool one_step = !(steps.hi > steps.lo);
    for (int k = 0; k < chart->n; k++) {
        const tw_histogram *h = &chart->histograms[k];
        if (!has_geometry(h))
            continue;
        double t = one_step ? 1 : ((double)h->step - steps.lo) / (steps.hi - steps.lo), x0, x1;
        record_span(h, values, plot, &x0, &x1);
        outline_path(cr, counts + (size_t)k * nbins, nbins, scale, plot, base, x0, x1);
        cairo_set_line_width(cr, k == chart->n - 1 ? 2 : 1);
        tw_render_set_color(cr, chart->color, 0.25 + 0.75 * t * t);
        cairo_stroke(cr);
    }
    free(counts);
}

static void render_empty(cairo_t *cr, int width, int height, const tw_histogram_chart *chart,
                         const tw_render_style *style)
{
    tw_render_title(cr, chart->title, 10, width - 20, style);
    if (!chart->loading)
        tw_render_note(cr, width, height, "No histograms", style);
}

/* A tag that cannot be read: its message, wrapped, in red, where the
 * histograms would be. */
static void render_damage(cairo_t *cr, int width, int height, const tw_histogram_chart *chart,
                          const tw_render_style *style)
{
    tw_render_title(cr, chart->title, 10, width - 20, style);
    PangoLayout *layout = tw_render_label_layout(cr, LABEL_SIZE, false);
    pango_layout_set_width(layout, (int)(MAX(width - 40, 20) * PANGO_SCALE));
    pango_layout_set_wrap(layout, PANGO_WRAP_WORD_CHAR);
    pango_layout_set_alignment(layout, PANGO_ALIGN_CENTER);
    char *text = g_strdup_printf("⚠ %s", chart->damage);
    tw_rgb red = chart->dark ? (tw_rgb){1.0, 0.48, 0.45} : (tw_rgb){0.75, 0.11, 0.16};
    tw_render_label(cr, layout, text, 20, height / 2.0, 0, 0.5, red);
    g_free(text);
    g_object_unref(layout);
}

/* The start of either chart: the context saved, the background, and for
 * damaged data or none the message alone (false, the context restored);
 * else true with the values' and steps' ranges. */
static bool chart_begin(cairo_t *cr, int width, int height, const tw_histogram_chart *chart,
                        const tw_render_style *style, range *values, range *steps)
{
    cairo_save(cr);
    tw_render_background(cr, width, height, style);
    if (!chart->damage && extents(chart, values, steps))
        return true;
    (chart->damage ? render_damage : render_empty)(cr, width, height, chart, style);
    cairo_restore(cr);
    return false;
}

void tw_histogram_render(cairo_t *cr, int width, int height, const tw_histogram_chart *chart)
{
    tw_render_style style = tw_render_style_get(chart->dark);
    range values, steps;
    if (!chart_begin(cr, width, height, chart, &style, &values, &steps))
        return;
    values = padded(values, 0.02);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    cairo_set_antialias(cr, CAIRO_ANTIALIAS_FAST); /* a hundred outlines: see chart_render.c */
    PangoLayout *layout = tw_render_label_layout(cr, LABEL_SIZE, false);
    if (chart->mode == TW_HISTOGRAM_OFFSET)
        render_offset(cr, layout, width, height, chart, values, steps, &style);
    else
        render_overlay(cr, layout, width, height, chart, values, steps, &style);
    g_object_unref(layout);
    tw_render_title(cr, chart->title, 10, width - 20, &style);
    cairo_restore(cr);
}

/* ---- distributions -------------------------------------------------------------- */

/* Band b's outline (b = 0 the widest, 3 the innermost): along its upper
 * percentile over the steps, back along its lower one. A single record
 * spans the whole width. */
static void band_path(cairo_t *cr, const double (*p)[TW_DISTRIBUTION_BANDS], const double *xs, int n, int upper,
                      int lower, range values, tw_rect plot)
{
    double bottom = plot.y + plot.height;
    for (int k = 0; k < n; k++)
        cairo_line_to(cr, xs[k], map(values, p[k][upper], bottom, plot.y));
    for (int k = n - 1; k >= 0; k--)
        cairo_line_to(cr, xs[k], map(values, p[k][lower], bottom, plot.y));
    cairo_close_path(cr);
}

void tw_distribution_render(cairo_t *cr, int width, int height, const tw_histogram_chart *chart)
{
    tw_render_style style = tw_render_style_get(chart->dark);
    range values, steps;
    if (!chart_begin(cr, width, height, chart, &style, &values, &steps))
        return;
    tw_rect plot = {58, 30, width - 58 - 18, height - 30 - 24};
    values = padded(values, 0.05);
    bool one_step = !(steps.hi > steps.lo);
    range step_axis = one_step ? (range){steps.lo - 0.5, steps.hi + 0.5} : steps;

    /* The drawable records' percentiles and positions (a lone one twice,
     * at both edges). */
    double (*p)[TW_DISTRIBUTION_BANDS] = malloc(sizeof *p * (size_t)(chart->n + 1));
    double *xs = malloc(sizeof *xs * (size_t)(chart->n + 1));
    int n = 0;
    for (int k = 0; k < chart->n; k++) {
        if (!has_geometry(&chart->histograms[k]))
            continue;
        tw_histogram_percentiles(&chart->histograms[k], p[n]);
        xs[n++] = map(step_axis, (double)chart->histograms[k].step, plot.x, plot.x + plot.width);
    }
    if (n == 1) {
        for (int b = 0; b < TW_DISTRIBUTION_BANDS; b++)
            p[1][b] = p[0][b];
        xs[0] = plot.x, xs[1] = plot.x + plot.width, n = 2;
    }

    tw_ticks xt, yt;
    tw_ticks_integer(step_axis.lo, step_axis.hi, (int)(plot.width / 90) + 1, &xt);
    tw_ticks_linear(values.lo, values.hi, (int)(plot.height / 45) + 1, &yt);
    double gx[TW_MAX_TICKS], gy[TW_MAX_TICKS];
    for (int i = 0; i < xt.n; i++)
        gx[i] = map(step_axis, xt.values[i], plot.x, plot.x + plot.width);
    for (int i = 0; i < yt.n; i++)
        gy[i] = map(values, yt.values[i], plot.y + plot.height, plot.y);
    tw_render_grid(cr, plot, gx, xt.n, gy, yt.n, &style);
    PangoLayout *layout = tw_render_label_layout(cr, LABEL_SIZE, false);
    double uw, uh, right = plot.x + plot.width, label_y = plot.y + plot.height + 5;
    tw_render_label_size(layout, "step", &uw, &uh);
    tw_render_label(cr, layout, "step", right, label_y, 1, 0, style.muted);
    tw_render_x_tick_labels(cr, layout, &xt, gx, label_y, plot.x - 29, right - uw - 8, &style);
    tw_render_y_tick_labels(cr, layout, &yt, gy, plot.x - 6, 1, plot.y, plot.y + plot.height, &style);
    g_object_unref(layout);

    /* Nested bands, each over the one outside it: darker towards the median. */
    for (int b = 0; b < TW_DISTRIBUTION_BANDS / 2; b++) {
        cairo_new_path(cr);
        band_path(cr, (const double(*)[TW_DISTRIBUTION_BANDS])p, xs, n, TW_DISTRIBUTION_BANDS - 1 - b, b, values,
                  plot);
        tw_render_set_color(cr, chart->color, chart->dark ? 0.26 : 0.2);
        cairo_fill(cr);
    }
    cairo_new_path(cr);
    for (int k = 0; k < n; k++)
        cairo_line_to(cr, xs[k], map(values, p[k][TW_DISTRIBUTION_BANDS / 2], plot.y + plot.height, plot.y));
    /* The median a shade towards the text colour, to stand out of the
     * innermost band. */
    cairo_set_line_width(cr, 1.5);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    tw_render_set_color(cr, tw_rgb_mix(chart->color, style.text, chart->dark ? 0.45 : 0.3), 1);
    cairo_stroke(cr);
    free(p);
    free(xs);
    tw_render_title(cr, chart->title, 10, width - 20, &style);
    cairo_restore(cr);
}
