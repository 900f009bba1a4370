/* The designer canvas's kept drawing (designer_canvas_image.h). */
#include "designer_canvas_image.h"

#include <math.h>

#include "widget_image.h"

#define TILE 256    /* a tile's side in widget pixels */
#define PREFETCH 2  /* tiles of the ring around the view drawn a frame */
#define KEEP_RING 1 /* tiles further than this outside the view are dropped */

typedef struct {
    int tx, ty;
    cairo_surface_t *surface;
} tile;

/* A drawing of the document at one zoom, in tiles: tile (tx, ty) holds
 * doc * zoom + (fx, fy) in [tx, tx + 1) * tw x [ty, ty + 1) * th. */
typedef struct {
    GHashTable *tiles; /* (tx, ty) packed in a gint64 -> tile */
    double zoom, fx, fy;
    int tw, th;
} tile_set;

struct tw_designer_image {
    /* The tiles of the zoom the view is at, or was at before the zoom
     * moved: TILE square, fx and fy the view's offset's fractions, so that
     * they show the document on the very pixels a direct drawing would. */
    tile_set cur;
    /* What stands in while cur lacks tiles of the view (empty when
     * nothing does): the tiles of the zoom before, or the view drawn
     * directly during a zoom gesture (one tile of the view's size). */
    tile_set back;
    gboolean cur_whole; /* cur had every tile of the view at the last frame */
    int scale; /* device scale */
    guint content;
    tw_designer_image_counts counts;
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

static tile *tile_at(const tile_set *set, int tx, int ty)
{
    gint64 key = tile_number(tx, ty);
    return g_hash_table_lookup(set->tiles, &key);
}

static void tile_free(gpointer data)
{
    tile *t = data;
    cairo_surface_destroy(t->surface);
    g_free(t);
}

static void set_init(tile_set *set)
{
    set->tiles = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, tile_free);
}

static gboolean set_empty(const tile_set *set)
{
    return g_hash_table_size(set->tiles) == 0;
}

/* Empty, then to hold tiles of tw x th at zoom and (fx, fy). */
static void set_reset(tile_set *set, double zoom, double fx, double fy, int tw, int th)
{
    g_hash_table_remove_all(set->tiles);
    set->zoom = zoom, set->fx = fx, set->fy = fy, set->tw = tw, set->th = th;
}

/* from's tiles become to's (to's are dropped); from is left empty. */
static void set_move(tile_set *to, tile_set *from)
{
    GHashTable *tiles = to->tiles;
    g_hash_table_remove_all(tiles);
    *to = *from;
    from->tiles = tiles;
}

tw_designer_image *tw_designer_image_new(void)
{
    tw_designer_image *im = g_new0(tw_designer_image, 1);
    set_init(&im->cur);
    set_init(&im->back);
    return im;
}

void tw_designer_image_free(tw_designer_image *im)
{
    if (!im)
        return;
    g_hash_table_unref(im->cur.tiles);
    g_hash_table_unref(im->back.tiles);
    g_free(im);
}

tw_designer_image_counts tw_designer_image_get_counts(const tw_designer_image *im)
{
    return im->counts;
}

/* A new image surface of w x h pixels of a set. */
static cairo_surface_t *new_surface(tw_designer_image *im, int w, int h)
{
    /* ARGB32, as GTK's Cairo node: text is drawn as it would be there. */
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w * im->scale, h * im->scale);
    cairo_surface_set_device_scale(surface, im->scale, im->scale);
    return surface;
}

/* The document in a surface of cur's tiles [tx0, tx1] x [ty0, ty1]. */
static cairo_surface_t *draw_tiles(tw_designer_image *im, TwModelDoc *doc, int tx0, int ty0, int tx1, int ty1,
                                   const tw_designer_overlay *overlay)
{
    cairo_surface_t *surface = new_surface(im, (tx1 - tx0 + 1) * TILE, (ty1 - ty0 + 1) * TILE);
    cairo_t *cr = cairo_create(surface);
    tw_designer_viewport v = {im->cur.zoom, im->cur.fx - (double)tx0 * TILE, im->cur.fy - (double)ty0 * TILE};
    tw_designer_draw_document(cr, doc, &v, overlay); /* culled to the surface */
    cairo_destroy(cr);
    return surface;
}

static void add_tile(tile_set *set, int tx, int ty, cairo_surface_t *surface)
{
    tile *t = g_new(tile, 1);
    *t = (tile){tx, ty, surface};
    g_hash_table_insert(set->tiles, tile_key(tx, ty), t);
}

static void draw_tile(tw_designer_image *im, TwModelDoc *doc, int tx, int ty, const tw_designer_overlay *overlay)
{
    add_tile(&im->cur, tx, ty, draw_tiles(im, doc, tx, ty, tx, ty, overlay));
    im->counts.tiles++;
}

/* The view's missing tiles when most are: drawn in one pass (each box's
 * text laid out once, not once per tile it meets), then cut. */
static void draw_missing(tw_designer_image *im, TwModelDoc *doc, int tx0, int ty0, int tx1, int ty1,
                         const tw_designer_overlay *overlay)
{
    int missing = 0, n = (tx1 - tx0 + 1) * (ty1 - ty0 + 1);
    for (int ty = ty0; ty <= ty1; ty++)
        for (int tx = tx0; tx <= tx1; tx++)
            missing += !tile_at(&im->cur, tx, ty);
    if (missing * 2 < n)
        return;
    cairo_surface_t *whole = draw_tiles(im, doc, tx0, ty0, tx1, ty1, overlay);
    for (int ty = ty0; ty <= ty1; ty++)
        for (int tx = tx0; tx <= tx1; tx++) {
            if (tile_at(&im->cur, tx, ty))
                continue;
            cairo_surface_t *surface = new_surface(im, TILE, TILE);
            cairo_t *cr = cairo_create(surface);
            cairo_set_source_surface(cr, whole, -(double)(tx - tx0) * TILE, -(double)(ty - ty0) * TILE);
            cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE);
            cairo_paint(cr);
            cairo_destroy(cr);
            add_tile(&im->cur, tx, ty, surface);
            im->counts.tiles++;
        }
    cairo_surface_destroy(whole);
}

/* Where set's tiles land in the widget: tile pixel p at widget p * s + o
 * (o less the widget's place within a window pixel, px, py). */
typedef struct {
    double s, ox, oy;
} placement;

static placement place(const tile_set *set, const tw_designer_viewport *placed, double px, double py)
{
    double s = placed->zoom / set->zoom;
    return (placement){s, placed->ox - set->fx * s - px, placed->oy - set->fy * s - py};
}

/* The tiles [tx0, tx1] x [ty0, ty1] of set that the rectangle [x0, x1) x
 * [y0, y1) of the widget meets. */
static void tiles_meeting(const tile_set *set, placement p, double x0, double y0, double x1, double y1, int *tx0,
                          int *ty0, int *tx1, int *ty1)
{
    *tx0 = (int)floor((x0 - p.ox) / p.s / set->tw), *tx1 = (int)floor((x1 - p.ox) / p.s / set->tw - 1e-9);
    *ty0 = (int)floor((y0 - p.oy) / p.s / set->th), *ty1 = (int)floor((y1 - p.oy) / p.s / set->th - 1e-9);
}

/* Paints set's tiles of the width x height view. */
static void paint_set(cairo_t *cr, const tile_set *set, placement p, int width, int height)
{
    int tx0, ty0, tx1, ty1;
    tiles_meeting(set, p, 0, 0, width, height, &tx0, &ty0, &tx1, &ty1);
    cairo_save(cr);
    cairo_translate(cr, p.ox, p.oy);
    cairo_scale(cr, p.s, p.s);
    cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE);
    /* Whole pixels for each tile's square: antialiased edges of two
     * neighbours would each cover part of the pixel between them. */
    cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
    for (int ty = ty0; ty <= ty1; ty++)
        for (int tx = tx0; tx <= tx1; tx++) {
            tile *t = tile_at(set, tx, ty);
            if (!t)
                continue;
            tw_cairo_set_source_kept(cr, t->surface, (double)tx * set->tw, (double)ty * set->th);
            /* Bilinear: a plain copy where a tile lands on whole pixels,
             * and smooth where the frame itself is scaled (twb --screenshot
             * draws the window through a paintable), where nearest would
             * drop rows of the text. */
            cairo_pattern_set_filter(cairo_get_source(cr), p.s == 1 ? CAIRO_FILTER_BILINEAR : CAIRO_FILTER_FAST);
            cairo_pattern_set_extend(cairo_get_source(cr), CAIRO_EXTEND_PAD); /* no seam between tiles */
            cairo_rectangle(cr, (double)tx * set->tw, (double)ty * set->th, set->tw, set->th);
            cairo_fill(cr);
        }
    cairo_restore(cr);
}

/* Whether set has every tile meeting the widget rectangle (clipped to the
 * width x height view). */
static gboolean set_covers(const tile_set *set, placement p, double x0, double y0, double x1, double y1, int width,
                           int height)
{
    x0 = MAX(x0, 0), y0 = MAX(y0, 0), x1 = MIN(x1, width), y1 = MIN(y1, height);
    if (set_empty(set))
        return FALSE;
    if (x0 >= x1 || y0 >= y1)
        return TRUE;
    int tx0, ty0, tx1, ty1;
    tiles_meeting(set, p, x0, y0, x1, y1, &tx0, &ty0, &tx1, &ty1);
    for (int ty = ty0; ty <= ty1; ty++)
        for (int tx = tx0; tx <= tx1; tx++)
            if (!tile_at(set, tx, ty))
                return FALSE;
    return TRUE;
}

/* A missing tile of cur, in the order they are drawn. */
typedef struct {
    int tx, ty;
    gboolean uncovered; /* no stand-in shows its place: first */
    double distance;    /* from the view's centre: nearest first */
} wanted;

static int wanted_order(gconstpointer a, gconstpointer b)
{
    const wanted *x = a, *y = b;
    if (x->uncovered != y->uncovered)
        return x->uncovered ? -1 : 1;
    return (x->distance > y->distance) - (x->distance < y->distance);
}

/* Draws at most TW_DESIGNER_IMAGE_TILES_PER_FRAME of cur's missing tiles
 * [tx0, tx1] x [ty0, ty1] while back stands in (*drawn of them); TRUE when
 * some are left. */
static gboolean draw_some(tw_designer_image *im, TwModelDoc *doc, placement cp, placement bp, int tx0, int ty0,
                          int tx1, int ty1, int width, int height, const tw_designer_overlay *overlay, int *drawn)
{
    GArray *missing = g_array_new(FALSE, FALSE, sizeof(wanted));
    for (int ty = ty0; ty <= ty1; ty++)
        for (int tx = tx0; tx <= tx1; tx++) {
            if (tile_at(&im->cur, tx, ty))
                continue;
            double x = tx * TILE + cp.ox, y = ty * TILE + cp.oy; /* cur is at s = 1 */
            wanted w = {tx, ty, !set_covers(&im->back, bp, x, y, x + TILE, y + TILE, width, height),
                        hypot(x + TILE / 2.0 - width / 2.0, y + TILE / 2.0 - height / 2.0)};
            g_array_append_val(missing, w);
        }
    g_array_sort(missing, wanted_order);
    int n = MIN((int)missing->len, TW_DESIGNER_IMAGE_TILES_PER_FRAME);
    for (int i = 0; i < n; i++) {
        wanted *w = &g_array_index(missing, wanted, i);
        draw_tile(im, doc, w->tx, w->ty, overlay);
    }
    gboolean left = (int)missing->len > n;
    *drawn = n;
    g_array_unref(missing);
    return left;
}

/* How far a set's zoom is from the view's, as a factor >= 1. */
static double zoom_distance(const tile_set *set, double zoom)
{
    double r = zoom / set->zoom;
    return r >= 1 ? r : 1 / r;
}

/* The set shown scaled while the zoom moves: a set of tiles within a
 * factor of two of the view's zoom (beyond, too few or too many tiles
 * would show), or the view drawn directly when zooming in from it; the
 * nearest; NULL when none is. */
static tile_set *shown_while_zooming(tw_designer_image *im, double zoom)
{
    tile_set *best = NULL;
    tile_set *sets[] = {&im->cur, &im->back};
    for (int i = 0; i < 2; i++) {
        tile_set *set = sets[i];
        gboolean view_sized = set->tw != TILE;
        if (set_empty(set) || zoom / set->zoom > 2 || zoom / set->zoom < (view_sized ? 1 : 0.5))
            continue;
        if (!best || zoom_distance(set, zoom) < zoom_distance(best, zoom))
            best = set;
    }
    return best;
}

static void paint_background(cairo_t *cr)
{
    cairo_set_source_rgb(cr, 0.94, 0.94, 0.95);
    cairo_paint(cr);
}

gboolean tw_designer_image_paint(tw_designer_image *im, GtkWidget *widget, cairo_t *cr, TwModelDoc *doc,
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
    double fx = placed.ox - floor(placed.ox), fy = placed.oy - floor(placed.oy);
    if (im->content != content || im->scale != scale) {
        set_reset(&im->cur, placed.zoom, fx, fy, TILE, TILE);
        set_reset(&im->back, placed.zoom, 0, 0, 0, 0);
        im->cur_whole = FALSE;
        im->content = content, im->scale = scale;
    }
    cairo_save(cr);
    cairo_rectangle(cr, 0, 0, width, height);
    cairo_clip(cr);

    if (zoom_moving && (im->cur.zoom != placed.zoom || !set_empty(&im->back))) {
        tile_set *shown = shown_while_zooming(im, placed.zoom);
        if (!shown) {
            /* The view drawn directly, and kept as what stands in: a
             * frame of the gesture costs one drawing of the view, not of
             * its tiles, and the frames after it zoom in on this one. */
            set_reset(&im->back, placed.zoom, view->ox, view->oy, width, height);
            cairo_surface_t *surface = new_surface(im, width, height);
            cairo_t *pcr = cairo_create(surface);
            tw_designer_draw_document(pcr, doc, view, overlay);
            cairo_destroy(pcr);
            add_tile(&im->back, 0, 0, surface);
            im->counts.views++;
            shown = &im->back;
        }
        paint_background(cr);
        paint_set(cr, shown, place(shown, &placed, px, py), width, height);
        cairo_restore(cr);
        return FALSE;
    }

    if (im->cur.zoom != placed.zoom || im->cur.fx != fx || im->cur.fy != fy) {
        /* The zoom settled (or the view moved by a fraction of a pixel):
         * what stands in while cur's tiles are drawn anew, a few a frame,
         * is whichever of the two is nearest the new zoom. */
        if (set_empty(&im->back) ||
            (im->cur_whole && zoom_distance(&im->cur, placed.zoom) <= zoom_distance(&im->back, placed.zoom)))
            set_move(&im->back, &im->cur);
        set_reset(&im->cur, placed.zoom, fx, fy, TILE, TILE);
        im->cur_whole = FALSE;
    }
    placement cp = place(&im->cur, &placed, px, py);
    int tx0, ty0, tx1, ty1;
    tiles_meeting(&im->cur, cp, 0, 0, width, height, &tx0, &ty0, &tx1, &ty1);
    gboolean more = FALSE;
    int budget = PREFETCH; /* for the ring */
    if (set_empty(&im->back)) {
        /* Nothing to stand in: the view's missing tiles now, most of them
         * in one pass. */
        draw_missing(im, doc, tx0, ty0, tx1, ty1, overlay);
        for (int ty = ty0; ty <= ty1; ty++)
            for (int tx = tx0; tx <= tx1; tx++)
                if (!tile_at(&im->cur, tx, ty))
                    draw_tile(im, doc, tx, ty, overlay);
    } else {
        placement bp = place(&im->back, &placed, px, py);
        int drawn;
        more = draw_some(im, doc, cp, bp, tx0, ty0, tx1, ty1, width, height, overlay, &drawn);
        budget = MIN(budget, TW_DESIGNER_IMAGE_TILES_PER_FRAME - drawn);
        paint_background(cr);
        paint_set(cr, &im->back, bp, width, height);
        if (!more)
            set_reset(&im->back, placed.zoom, 0, 0, 0, 0);
    }
    paint_set(cr, &im->cur, cp, width, height);
    cairo_restore(cr);
    im->cur_whole = !more;
    if (more)
        return TRUE;

    /* The ring around the view, a few tiles a frame, so that a pan finds
     * its next tiles drawn; tiles further out are dropped. */
    for (int ty = ty0 - 1; ty <= ty1 + 1 && budget > 0; ty++)
        for (int tx = tx0 - 1; tx <= tx1 + 1 && budget > 0; tx++)
            if (!tile_at(&im->cur, tx, ty)) {
                draw_tile(im, doc, tx, ty, overlay);
                budget--;
            }
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, im->cur.tiles);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        tile *t = value;
        if (t->tx < tx0 - KEEP_RING || t->tx > tx1 + KEEP_RING || t->ty < ty0 - KEEP_RING || t->ty > ty1 + KEEP_RING)
            g_hash_table_iter_remove(&it);
    }
    return FALSE;
}
