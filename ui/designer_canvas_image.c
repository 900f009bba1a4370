/* The designer canvas's kept drawing (designer_canvas_image.h). */
#include "designer_canvas_image.h"

#include <math.h>

#include "widget_image.h"

#define TILE 256 /* a tile's side in widget pixels */
#define PREFETCH 2 /* tiles of the ring around the view drawn a frame */
#define KEEP_RING 1 /* tiles further than this outside the view are dropped */

typedef struct {
    int tx, ty;
    cairo_surface_t *surface;
} tile;

struct tw_designer_image {
    GHashTable *tiles; /* (tx, ty) packed in a gint64 -> tile */
    /* Tile (tx, ty) holds doc * zoom + (fx, fy) in [tx, tx + 1) x [ty, ty + 1) * TILE:
     * fx, fy are the view's offset's fractions, so that the tiles show
     * the document on the very pixels a direct drawing would. */
    double zoom, fx, fy;
    int scale;         /* device scale */
    guint content;
};

/* (tx, ty) as one number; shifted unsigned, as tiles left of or above the
 * document's origin have negative indices. */
static gint64 tile_number(int tx, int ty)
{
    return (gint64)(((guint64)(guint32)tx << 32) | (guint32)ty);
}

static gint64 *tile_key(int tx, int ty)
{
    gint64 *key = g_new(gint64, 1);
    *key = tile_number(tx, ty);
    return key;
}

static tile *tile_at(tw_designer_image *im, int tx, int ty)
{
    gint64 key = tile_number(tx, ty);
    return g_hash_table_lookup(im->tiles, &key);
}

static void tile_free(gpointer data)
{
    tile *t = data;
    cairo_surface_destroy(t->surface);
    g_free(t);
}

tw_designer_image *tw_designer_image_new(void)
{
    tw_designer_image *im = g_new0(tw_designer_image, 1);
    im->tiles = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, tile_free);
    return im;
}

void tw_designer_image_free(tw_designer_image *im)
{
    if (!im)
        return;
    g_hash_table_unref(im->tiles);
    g_free(im);
}

/* A new image surface of the tiles' pixels, w x h tiles. */
static cairo_surface_t *tiles_surface(tw_designer_image *im, int w, int h)
{
    /* ARGB32, as GTK's Cairo node: text is drawn as it would be there. */
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w * TILE * im->scale,
                                                          h * TILE * im->scale);
    cairo_surface_set_device_scale(surface, im->scale, im->scale);
    return surface;
}

/* The document in a surface of the tiles [tx0, tx1] x [ty0, ty1]. */
static cairo_surface_t *draw_tiles(tw_designer_image *im, TwModelDoc *doc, int tx0, int ty0, int tx1, int ty1,
                                   const tw_designer_overlay *overlay)
{
    cairo_surface_t *surface = tiles_surface(im, tx1 - tx0 + 1, ty1 - ty0 + 1);
    cairo_t *cr = cairo_create(surface);
    tw_designer_viewport v = {im->zoom, im->fx - (double)tx0 * TILE, im->fy - (double)ty0 * TILE};
    tw_designer_draw_document(cr, doc, &v, overlay); /* culled to the surface */
    cairo_destroy(cr);
    return surface;
}

static tile *add_tile(tw_designer_image *im, int tx, int ty, cairo_surface_t *surface)
{
    tile *t = g_new(tile, 1);
    *t = (tile){tx, ty, surface};
    g_hash_table_insert(im->tiles, tile_key(tx, ty), t);
    return t;
}

static tile *draw_tile(tw_designer_image *im, TwModelDoc *doc, int tx, int ty, const tw_designer_overlay *overlay)
{
    return add_tile(im, tx, ty, draw_tiles(im, doc, tx, ty, tx, ty, overlay));
}

/* The view's missing tiles when most are: drawn in one pass (each box's
 * text laid out once, not once per tile it meets), then cut. */
static void draw_missing(tw_designer_image *im, TwModelDoc *doc, int tx0, int ty0, int tx1, int ty1,
                         const tw_designer_overlay *overlay)
{
    int missing = 0, n = (tx1 - tx0 + 1) * (ty1 - ty0 + 1);
    for (int ty = ty0; ty <= ty1; ty++)
        for (int tx = tx0; tx <= tx1; tx++)
            missing += !tile_at(im, tx, ty);
    if (missing * 2 < n)
        return;
    cairo_surface_t *whole = draw_tiles(im, doc, tx0, ty0, tx1, ty1, overlay);
    for (int ty = ty0; ty <= ty1; ty++)
        for (int tx = tx0; tx <= tx1; tx++) {
            if (tile_at(im, tx, ty))
                continue;
            cairo_surface_t *surface = tiles_surface(im, 1, 1);
            cairo_t *cr = cairo_create(surface);
            cairo_set_source_surface(cr, whole, -(double)(tx - tx0) * TILE, -(double)(ty - ty0) * TILE);
            cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE);
            cairo_paint(cr);
            cairo_destroy(cr);
            add_tile(im, tx, ty, surface);
        }
    cairo_surface_destroy(whole);
}

/* The tiles [tx0, tx1] x [ty0, ty1] that a width x height view shows when
 * a tile pixel p is at widget p * s + o. */
static void tiles_in_view(double s, double ox, double oy, int width, int height, int *tx0, int *ty0, int *tx1,
                          int *ty1)
{
    *tx0 = (int)floor(-ox / s / TILE), *tx1 = (int)floor((width - ox) / s / TILE);
    *ty0 = (int)floor(-oy / s / TILE), *ty1 = (int)floor((height - oy) / s / TILE);
}

void tw_designer_image_paint(tw_designer_image *im, GtkWidget *widget, cairo_t *cr, TwModelDoc *doc,
                             const tw_designer_viewport *view, int width, int height, guint content,
                             gboolean zoom_moving, const tw_designer_overlay *overlay)
{
    int scale = gtk_widget_get_scale_factor(widget);
    /* Where the widget's origin falls within a window pixel: tiles are
     * drawn and placed on the window's pixels. */
    double px = 0, py = 0;
    GtkNative *native = gtk_widget_get_native(widget);
    if (native) {
        double nx, ny;
        gtk_native_get_surface_transform(native, &nx, &ny);
        gtk_widget_translate_coordinates(widget, GTK_WIDGET(native), nx, ny, &px, &py);
        px -= floor(px), py -= floor(py);
    }
    tw_designer_viewport placed = {view->zoom, view->ox + px, view->oy + py};
    view = &placed;
    /* Tiles of another zoom are shown scaled while the zoom moves, within
     * a factor of two (beyond, too few or too many tiles would show). */
    double ratio = im->zoom > 0 ? view->zoom / im->zoom : 0;
    gboolean scalable = zoom_moving && g_hash_table_size(im->tiles) > 0 && ratio >= 0.5 && ratio <= 2;
    if (zoom_moving && im->zoom != view->zoom && !scalable) {
        /* Drawn directly, tiles kept, until the zoom settles: a frame of
         * the zoom gesture costs one drawing of the view, not of its tiles. */
        cairo_save(cr);
        cairo_rectangle(cr, 0, 0, width, height);
        cairo_clip(cr);
        tw_designer_viewport direct = {view->zoom, view->ox - px, view->oy - py};
        tw_designer_draw_document(cr, doc, &direct, overlay);
        cairo_restore(cr);
        return;
    }
    double fx = view->ox - floor(view->ox), fy = view->oy - floor(view->oy);
    gboolean same_place = im->zoom == view->zoom ? im->fx == fx && im->fy == fy : scalable;
    if (im->content != content || im->scale != scale || !same_place) {
        g_hash_table_remove_all(im->tiles);
        im->content = content, im->scale = scale, im->zoom = view->zoom, im->fx = fx, im->fy = fy;
    }
    /* At the tiles' zoom, on whole pixels; else scaled (the zoom moving). */
    double s = view->zoom / im->zoom;
    double ox = (s == 1 ? floor(view->ox) : view->ox - im->fx * s) - px;
    double oy = (s == 1 ? floor(view->oy) : view->oy - im->fy * s) - py;
    int tx0, ty0, tx1, ty1;
    tiles_in_view(s, ox, oy, width, height, &tx0, &ty0, &tx1, &ty1);

    if (s == 1)
        draw_missing(im, doc, tx0, ty0, tx1, ty1, overlay);
    cairo_save(cr);
    cairo_rectangle(cr, 0, 0, width, height);
    cairo_clip(cr);
    if (s != 1) { /* where no tile is: the background */
        cairo_set_source_rgb(cr, 0.94, 0.94, 0.95);
        cairo_paint(cr);
    }
    cairo_translate(cr, ox, oy);
    cairo_scale(cr, s, s);
    cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE);
    /* Whole pixels for each tile's square: antialiased edges of two
     * neighbours would each cover part of the pixel between them. */
    cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
    for (int ty = ty0; ty <= ty1; ty++)
        for (int tx = tx0; tx <= tx1; tx++) {
            tile *t = tile_at(im, tx, ty);
            if (!t && s == 1)
                t = draw_tile(im, doc, tx, ty, overlay);
            if (!t)
                continue;
            tw_cairo_set_source_kept(cr, t->surface, (double)tx * TILE, (double)ty * TILE);
            /* Bilinear: a plain copy where a tile lands on whole pixels,
             * and smooth where the frame itself is scaled (twb --screenshot
             * draws the window through a paintable), where nearest would
             * drop rows of the text. */
            cairo_pattern_set_filter(cairo_get_source(cr), s == 1 ? CAIRO_FILTER_BILINEAR : CAIRO_FILTER_FAST);
            cairo_pattern_set_extend(cairo_get_source(cr), CAIRO_EXTEND_PAD); /* no seam between tiles */
            cairo_rectangle(cr, (double)tx * TILE, (double)ty * TILE, TILE, TILE);
            cairo_fill(cr);
        }
    cairo_restore(cr);
    if (s != 1)
        return;

    /* The ring around the view, a few tiles a frame, so that a pan finds
     * its next tiles drawn; tiles further out are dropped. */
    int drawn = 0;
    for (int ty = ty0 - 1; ty <= ty1 + 1 && drawn < PREFETCH; ty++)
        for (int tx = tx0 - 1; tx <= tx1 + 1 && drawn < PREFETCH; tx++)
            if (!tile_at(im, tx, ty)) {
                draw_tile(im, doc, tx, ty, overlay);
                drawn++;
            }
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, im->tiles);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        tile *t = value;
        if (t->tx < tx0 - KEEP_RING || t->tx > tx1 + KEEP_RING || t->ty < ty0 - KEEP_RING || t->ty > ty1 + KEEP_RING)
            g_hash_table_iter_remove(&it);
    }
}
