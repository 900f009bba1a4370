/* The Evaluation tab's confusion matrix as a pure renderer (as
 * chart_render.h's charts): a function of the counts, the class names,
 * the selected cell and the style drawing onto a cairo_t, so tests draw it
 * into an image surface and check pixels, and a hit test sharing its
 * geometry for clicks.
 *
 * Rows are the true classes, columns the predicted ones. Each cell shows
 * its count; its colour follows the count's share of its row (row-normalised:
 * a class's recall on the diagonal), blue on the diagonal and red off it,
 * so a row's mistakes stand out whatever the class sizes. */
#ifndef TW_UI_EVALUATION_RENDER_H
#define TW_UI_EVALUATION_RENDER_H

#include <cairo.h>
#include <stdbool.h>

#include "chart_render.h"

typedef struct {
    int classes;
    const double *counts;     /* classes x classes, row the true class */
    const char *const *names; /* classes labels, or NULL: the class numbers */
    int selected_row, selected_col; /* -1: no cell selected */
    bool dark;
} tw_confusion_plot;

void tw_confusion_render(cairo_t *cr, int width, int height, const tw_confusion_plot *plot);
/* The cell under (x, y): true and *row, *col set, or false. */
bool tw_confusion_hit(int width, int height, const tw_confusion_plot *plot, double x, double y, int *row, int *col);
/* A cell's centre in pixels (for tests and keyboard focus). */
void tw_confusion_cell_center(int width, int height, const tw_confusion_plot *plot, int row, int col, double *x,
                              double *y);
/* The fill a cell gets: the square root of its count's share of its row,
 * from the background to blue (diagonal) or red (elsewhere). */
tw_rgb tw_confusion_cell_color(const tw_confusion_plot *plot, int row, int col);

#endif
