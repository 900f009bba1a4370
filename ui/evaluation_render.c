/* The confusion matrix (evaluation_render.h). */
#include "evaluation_render.h"

#include <glib.h>
#include <math.h>

#include "render_style.h"

#define LEFT 120.0  /* the true classes' names */
#define TOP 84.0    /* "predicted" and the predicted classes' names, slanted */
#define RIGHT 56.0 /* the last column's slanted name */
#define BOTTOM 12.0
#define MAX_CELL 64.0

static const tw_rgb diagonal = {0.16, 0.40, 0.80}, mistake = {0.82, 0.20, 0.16};

/* The matrix's top left corner and cell size: square cells filling the
 * room left by the labels, at most MAX_CELL. */
static void geometry(int width, int height, int classes, double *x0, double *y0, double *cell)
{
    double room = fmin((double)width - LEFT - RIGHT, (double)height - TOP - BOTTOM);
    *cell = classes > 0 ? fmin(MAX_CELL, fmax(room, 1.0) / classes) : 0;
    *x0 = LEFT;
    *y0 = TOP;
}

static double row_total(const tw_confusion_plot *p, int row)
{
    double total = 0;
    for (int c = 0; c < p->classes; c++)
        total += p->counts[row * p->classes + c];
    return total;
}

tw_rgb tw_confusion_cell_color(const tw_confusion_plot *p, int row, int col)
{
    tw_render_style style = tw_render_style_get(p->dark);
    double total = row_total(p, row);
    double share = total > 0 ? p->counts[row * p->classes + col] / total : 0;
    /* the square root: a row's few percent of mistakes still show */
    return tw_rgb_mix(style.background, row == col ? diagonal : mistake, sqrt(share));
}

static const char *name_of(const tw_confusion_plot *p, int c, char *buf, size_t size)
{
    if (p->names && p->names[c] && p->names[c][0])
        return p->names[c];
    g_snprintf(buf, size, "%d", c);
    return buf;
}

static void draw_labels(cairo_t *cr, const tw_confusion_plot *p, double x0, double y0, double cell,
                        const tw_render_style *style)
{
    PangoLayout *layout = tw_render_label_layout(cr, fmin(12.0, fmax(cell * 0.45, 8.0)), false);
    pango_layout_set_ellipsize(layout, PANGO_ELLIPSIZE_END);
    pango_layout_set_width(layout, (int)((LEFT - 28) * PANGO_SCALE));
    char buf[16];
    for (int r = 0; r < p->classes; r++)
        tw_render_label(cr, layout, name_of(p, r, buf, sizeof buf), LEFT - 8, y0 + (r + 0.5) * cell, 1, 0.5,
                        r == p->selected_row ? style->text : style->muted);
    for (int c = 0; c < p->classes; c++) { /* slanted up to the right, from the column's centre */
        cairo_save(cr);
        cairo_translate(cr, x0 + (c + 0.5) * cell, y0 - 6);
        cairo_rotate(cr, -G_PI / 4);
        tw_render_label(cr, layout, name_of(p, c, buf, sizeof buf), 0, 0, 0, 0.5,
                        c == p->selected_col ? style->text : style->muted);
        cairo_restore(cr);
    }
    g_object_unref(layout);
    PangoLayout *bold = tw_render_label_layout(cr, 12, true);
    tw_render_label(cr, bold, "predicted →", x0, 4, 0, 0, style->text);
    cairo_save(cr);
    cairo_translate(cr, 10, y0);
    cairo_rotate(cr, -G_PI / 2);
    tw_render_label(cr, bold, "true ↓", 0, 0, 1, 0, style->text);
    cairo_restore(cr);
    g_object_unref(bold);
}

static void draw_cells(cairo_t *cr, const tw_confusion_plot *p, double x0, double y0, double cell,
                       const tw_render_style *style)
{
    PangoLayout *layout = tw_render_label_layout(cr, fmin(13.0, cell * 0.32), false);
    for (int r = 0; r < p->classes; r++) {
        double total = row_total(p, r);
        for (int c = 0; c < p->classes; c++) {
            double count = p->counts[r * p->classes + c];
            tw_rgb fill = tw_confusion_cell_color(p, r, c);
            tw_render_set_color(cr, fill, 1);
            cairo_rectangle(cr, x0 + c * cell, y0 + r * cell, cell, cell);
            cairo_fill(cr);
            if (cell < 16)
                continue;
            /* white on the darker part of the scale */
            bool light_text = total > 0 && sqrt(count / total) > 0.6;
            tw_rgb ink = light_text ? (tw_rgb){1, 1, 1} : style->text;
            char text[32];
            g_snprintf(text, sizeof text, "%.0f", count);
            tw_render_label(cr, layout, text, x0 + (c + 0.5) * cell, y0 + (r + 0.5) * cell, 0.5, 0.5, ink);
        }
    }
    g_object_unref(layout);
    tw_render_set_color(cr, style->grid, 1);
    cairo_set_line_width(cr, 1);
    for (int i = 0; i <= p->classes; i++) {
        cairo_move_to(cr, tw_render_crisp(x0 + i * cell), y0);
        cairo_line_to(cr, tw_render_crisp(x0 + i * cell), y0 + p->classes * cell);
        cairo_move_to(cr, x0, tw_render_crisp(y0 + i * cell));
        cairo_line_to(cr, x0 + p->classes * cell, tw_render_crisp(y0 + i * cell));
    }
    cairo_stroke(cr);
    if (p->selected_row >= 0 && p->selected_col >= 0) {
        tw_render_set_color(cr, style->text, 1);
        cairo_set_line_width(cr, 3);
        cairo_rectangle(cr, x0 + p->selected_col * cell + 1.5, y0 + p->selected_row * cell + 1.5, cell - 3,
                        cell - 3);
        cairo_stroke(cr);
    }
}

void tw_confusion_render(cairo_t *cr, int width, int height, const tw_confusion_plot *plot)
{
    tw_render_style style = tw_render_style_get(plot->dark);
    tw_render_background(cr, width, height, &style);
    if (plot->classes < 1 || !plot->counts) {
        tw_render_note(cr, width, height, "No evaluation", &style);
        return;
    }
    double x0, y0, cell;
    geometry(width, height, plot->classes, &x0, &y0, &cell);
    draw_cells(cr, plot, x0, y0, cell, &style);
    draw_labels(cr, plot, x0, y0, cell, &style);
}

bool tw_confusion_hit(int width, int height, const tw_confusion_plot *plot, double x, double y, int *row, int *col)
{
    double x0, y0, cell;
    geometry(width, height, plot->classes, &x0, &y0, &cell);
    if (plot->classes < 1 || cell <= 0 || x < x0 || y < y0)
        return false;
    int c = (int)((x - x0) / cell), r = (int)((y - y0) / cell);
    if (r >= plot->classes || c >= plot->classes)
        return false;
    *row = r;
    *col = c;
    return true;
}

void tw_confusion_cell_center(int width, int height, const tw_confusion_plot *plot, int row, int col, double *x,
                              double *y)
{
    double x0, y0, cell;
    geometry(width, height, plot->classes, &x0, &y0, &cell);
    *x = x0 + (col + 0.5) * cell;
    *y = y0 + (row + 0.5) * cell;
}
