/* Pure renderers for histograms and distributions over steps (TensorBoard's
 * Histograms and Distributions tabs), from the stored buckets
 * (tw_histogram: exact count, min, max and equal-width buckets over
 * [min, max]). Rebinning never invents shape: a stored bucket's count is
 * spread over the display bins it overlaps in proportion to the overlap.
 */
#ifndef TW_UI_HISTOGRAM_RENDER_H
#define TW_UI_HISTOGRAM_RENDER_H

#include <cairo.h>
#include <stdbool.h>

#include <tw/run_store.h>

#include "chart_render.h"

/* Counts of h in nbins equal bins over [lo, hi] (out: nbins). */
void tw_histogram_rebin(const tw_histogram *h, double lo, double hi, int nbins, double *out);

/* TensorBoard's distribution percentiles: 0, 7, 16, 31, 50, 69, 84, 93, 100
 * (in basis points: 0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000 of the
 * normal's sigma levels); each from the buckets by linear interpolation
 * within the bucket holding it. */
#define TW_DISTRIBUTION_BANDS 9
extern const double tw_distribution_percentiles[TW_DISTRIBUTION_BANDS];
void tw_histogram_percentiles(const tw_histogram *h, double *out /* TW_DISTRIBUTION_BANDS */);

typedef enum { TW_HISTOGRAM_OFFSET, TW_HISTOGRAM_OVERLAY } tw_histogram_mode;

typedef struct {
    tw_histogram_mode mode;
    int n;                    /* histograms, by step */
    const tw_histogram *histograms;
    tw_rgb color;
    const char *title;
    bool dark;
    const char *damage; /* why the tag cannot be read (a damaged record), drawn instead; NULL */
    bool loading;       /* not read yet: the title alone, not "No histograms" */
} tw_histogram_chart;

/* Offset: one ridge per step, later steps in front and lower, a step axis
 * on the right; overlay: every step's outline on one value axis, later
 * steps more opaque. */
void tw_histogram_render(cairo_t *cr, int width, int height, const tw_histogram_chart *chart);

/* Distributions: the percentile bands over steps, darker towards the
 * median (x: step, y: value). */
void tw_distribution_render(cairo_t *cr, int width, int height, const tw_histogram_chart *chart);

#endif
