/* The renderers' shared style (render_style.h) and the run colours. */
#include <math.h>

#include "render_style.h"

/* Mid-lightness hues, ordered so that neighbours differ most: each keeps
 * enough contrast on white and on the dark background, and none is grey
 * (the grid's colour). */
static const tw_rgb run_colors[] = {
    {0.180, 0.490, 0.843}, /* blue */
    {0.941, 0.482, 0.086}, /* orange */
    {0.059, 0.639, 0.541}, /* teal */
    {0.839, 0.227, 0.290}, /* red */
    {0.557, 0.361, 0.851}, /* violet */
    {0.498, 0.635, 0.102}, /* olive */
    {0.851, 0.310, 0.659}, /* magenta */
    {0.129, 0.659, 0.847}, /* sky */
    {0.647, 0.408, 0.227}, /* brown */
    {0.420, 0.498, 0.627}, /* slate */
};

tw_rgb tw_run_color(int index)
{
    int n = (int)(sizeof run_colors / sizeof run_colors[0]);
    int i = index % n;
    return run_colors[i < 0 ? i + n : i];
}

tw_render_style tw_render_style_get(bool dark)
{
    if (dark)
        return (tw_render_style){
            .background = {0.118, 0.118, 0.125},
            .text = {0.93, 0.93, 0.94},
            .muted = {0.64, 0.64, 0.68},
            .grid = {0.21, 0.21, 0.23},
            .axis = {0.38, 0.38, 0.41},
        };
    return (tw_render_style){
        .background = {1, 1, 1},
        .text = {0.14, 0.14, 0.16},
        .muted = {0.40, 0.40, 0.44},
        .grid = {0.91, 0.91, 0.93},
        .axis = {0.70, 0.70, 0.73},
    };
}

tw_rgb tw_rgb_mix(tw_rgb a, tw_rgb b, double t)
{
    return (tw_rgb){a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}

void tw_render_set_color(cairo_t *cr, tw_rgb color, double alpha)
{
    cairo_set_source_rgba(cr, color.r, color.g, color.b, alpha);
}

double tw_render_crisp(double px)
{
    return floor(px) + 0.5;
}

void tw_render_background(cairo_t *cr, int width, int height, const tw_render_style *style)
{
    cairo_set_antialias(cr, CAIRO_ANTIALIAS_GOOD);
    tw_render_set_color(cr, style->background, 1);
    cairo_rectangle(cr, 0, 0, width, height);
    cairo_fill(cr);
}

PangoLayout *tw_render_label_layout(cairo_t *cr, double size, bool bold)
{
    PangoLayout *layout = pango_cairo_create_layout(cr);
    PangoFontDescription *font = pango_font_description_from_string("Sans");
    pango_font_description_set_absolute_size(font, size * PANGO_SCALE);
    if (bold)
        pango_font_description_set_weight(font, PANGO_WEIGHT_BOLD);
    pango_layout_set_font_description(layout, font);
    pango_font_description_free(font);
    return layout;
}

void tw_render_label_size(PangoLayout *layout, const char *text, double *width, double *height)
{
    pango_layout_set_text(layout, text, -1);
    PangoRectangle logical;
    pango_layout_get_extents(layout, NULL, &logical);
    *width = (double)logical.width / PANGO_SCALE;
    *height = (double)logical.height / PANGO_SCALE;
}

void tw_render_label(cairo_t *cr, PangoLayout *layout, const char *text, double x, double y, double ax, double ay,
                     tw_rgb color)
{
    double w, h;
    tw_render_label_size(layout, text, &w, &h);
    tw_render_set_color(cr, color, 1);
    /* Whole pixels keep glyphs as sharp as the font's hinting made them. */
    cairo_move_to(cr, round(x - w * ax), round(y - h * ay));
    pango_cairo_show_layout(cr, layout);
}

void tw_render_grid(cairo_t *cr, tw_rect plot, const double *xs, int nx, const double *ys, int ny,
                    const tw_render_style *style)
{
    cairo_set_line_width(cr, 1);
    tw_render_set_color(cr, style->grid, 1);
    for (int i = 0; i < nx; i++) {
        double px = tw_render_crisp(xs[i]);
        if (px > plot.x && px < plot.x + plot.width) {
            cairo_move_to(cr, px, plot.y);
            cairo_line_to(cr, px, plot.y + plot.height);
        }
    }
    for (int i = 0; i < ny; i++) {
        double py = tw_render_crisp(ys[i]);
        if (py > plot.y && py < plot.y + plot.height) {
            cairo_move_to(cr, plot.x, py);
            cairo_line_to(cr, plot.x + plot.width, py);
        }
    }
    cairo_stroke(cr);
    tw_render_set_color(cr, style->axis, 1);
    double left = plot.x - 0.5, bottom = plot.y + plot.height + 0.5;
    cairo_move_to(cr, left, plot.y);
    cairo_line_to(cr, left, bottom);
    cairo_line_to(cr, plot.x + plot.width, bottom);
    cairo_stroke(cr);
}

void tw_render_x_tick_labels(cairo_t *cr, PangoLayout *layout, const tw_ticks *ticks, const double *px, double y,
                             double left, double right, const tw_render_style *style)
{
    double last_right = -INFINITY;
    for (int i = 0; i < ticks->n; i++) {
        double w, h;
        tw_render_label_size(layout, ticks->labels[i], &w, &h);
        double l = px[i] - w / 2;
        if (l < left || l + w > right || l < last_right + 8)
            continue;
        tw_render_label(cr, layout, ticks->labels[i], px[i], y, 0.5, 0, style->muted);
        last_right = l + w;
    }
}

void tw_render_y_tick_labels(cairo_t *cr, PangoLayout *layout, const tw_ticks *ticks, const double *py, double x,
                             double ax, double top, double bottom, const tw_render_style *style)
{
    double last = NAN; /* the last drawn label's centre, whichever way the ticks go */
    for (int i = 0; i < ticks->n; i++) {
        double w, h;
        tw_render_label_size(layout, ticks->labels[i], &w, &h);
        if (py[i] < top - 0.5 || py[i] > bottom + 0.5 || fabs(py[i] - last) < h + 2)
            continue;
        tw_render_label(cr, layout, ticks->labels[i], x, py[i], ax, 0.5, style->muted);
        last = py[i];
    }
}

void tw_render_title(cairo_t *cr, const char *title, double x, double max_width, const tw_render_style *style)
{
    if (!title || !*title || max_width < 1)
        return;
    PangoLayout *layout = tw_render_label_layout(cr, 12, true);
    pango_layout_set_width(layout, (int)(max_width * PANGO_SCALE));
    pango_layout_set_ellipsize(layout, PANGO_ELLIPSIZE_MIDDLE);
    tw_render_label(cr, layout, title, x, 6, 0, 0, style->text);
    g_object_unref(layout);
}

void tw_render_note(cairo_t *cr, int width, int height, const char *note, const tw_render_style *style)
{
    PangoLayout *layout = tw_render_label_layout(cr, 12, false);
    tw_render_label(cr, layout, note, width / 2.0, height / 2.0, 0.5, 0.5, style->muted);
    g_object_unref(layout);
}
