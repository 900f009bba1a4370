/* TwGraphCanvas (see graph_canvas.h). */
#include "graph_canvas.h"

#include <math.h>

#include "render_style.h"
#include "widget_image.h"

#define ZOOM_STEP 1.2     /* per scroll notch and key press */
#define MIN_SCALE 0.01
#define MAX_SCALE 4.0
#define MAIN_LOOP_RENDER_MS 2.0 /* a drawing that took longer goes to a thread next time */
#define MAIN_LOOP_NODES 300     /* the first drawing of a graph this small is on the main loop */
/* The image covers the view and a margin of this share of its width and
 * height on every side, so that a pan only moves it; a new one, centred on
 * the view, is drawn in a thread once the view has moved half a margin
 * off the image's centre, before it reaches the image's edge. */
#define MARGIN 0.5

/* The graph drawn for one state: the arrangement, selection, highlight
 * and zoom it shows, over the view and its margins (viewport: the
 * image's top-left corner). Under GSK's GL renderer frames show it as a
 * texture (uploaded once); under its Cairo renderer it is painted from a
 * Cairo node (a texture would be copied every frame), as chart_view.c. */
typedef struct {
    cairo_surface_t *surface;
    GdkTexture *texture;
    int width, height, scale;
    gboolean dark;
    guint generation;
    tw_graph_viewport viewport;
} graph_image;

struct _TwGraphCanvas {
    GtkWidget parent_instance;
    tw_graph_arrangement *arrangement;
    int selected;
    bool *highlighted;
    tw_graph_color_mode color_by;
    tw_graph_viewport viewport;
    gboolean auto_fit;
    guint generation; /* counts changes of what is drawn, the viewport aside */
    graph_image image;
    GCancellable *rendering;
    double render_ms;
    gboolean drawn;
    guint drawn_idle;
    double pointer_x, pointer_y;
    gboolean pointer_inside;
    tw_graph_viewport drag_start;
};

enum { SIGNAL_SELECTION_CHANGED, SIGNAL_SCOPE_TOGGLED, SIGNAL_DRAWN, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(TwGraphCanvas, tw_graph_canvas, GTK_TYPE_WIDGET)

static int canvas_width(TwGraphCanvas *c)
{
    return MAX(gtk_widget_get_width(GTK_WIDGET(c)), 1);
}

static int canvas_height(TwGraphCanvas *c)
{
    return MAX(gtk_widget_get_height(GTK_WIDGET(c)), 1);
}

static gboolean is_dark(GtkWidget *widget)
{
    GdkRGBA fg;
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
    G_GNUC_END_IGNORE_DEPRECATIONS
    return 0.299 * fg.red + 0.587 * fg.green + 0.114 * fg.blue > 0.5;
}

static void changed(TwGraphCanvas *c)
{
    c->generation++;
    c->drawn = FALSE;
    gtk_widget_queue_draw(GTK_WIDGET(c));
}

/* ---- the image ------------------------------------------------------------------ */

/* The margins around a width x height view, in widget pixels. */
static int margin_x(int width)
{
    return (int)(width * MARGIN);
}

static int margin_y(int height)
{
    return (int)(height * MARGIN);
}

/* Everything a drawing needs, owned, so that a thread can draw it. */
typedef struct {
    tw_image_job base;
    gboolean dark;
    guint generation;
    tw_graph_viewport viewport;
    tw_graph_arrangement *arrangement;
    int selected;
    bool *highlighted;
    tw_graph_color_mode color_by;
} render_job;

static void render_job_draw(tw_image_job *base, cairo_t *cr)
{
    render_job *job = (render_job *)base;
    tw_graph_scene scene = tw_graph_arrangement_scene(job->arrangement, job->selected, job->highlighted);
    scene.color_by = job->color_by;
    tw_graph_render(cr, &scene, &job->viewport, base->width, base->height, job->dark);
}

static void render_job_finalize(tw_image_job *base)
{
    render_job *job = (render_job *)base;
    tw_graph_arrangement_unref(job->arrangement);
    g_free(job->highlighted);
}

/* A drawing of the view (width x height) and its margins. */
static render_job *render_job_new(TwGraphCanvas *c, int width, int height, int scale, gboolean dark)
{
    render_job *job = g_new0(render_job, 1);
    int mx = margin_x(width), my = margin_y(height);
    job->base = (tw_image_job){.width = width + 2 * mx, .height = height + 2 * my, .scale = scale,
                               .draw = render_job_draw, .finalize = render_job_finalize};
    job->dark = dark;
    job->generation = c->generation;
    job->viewport = (tw_graph_viewport){c->viewport.scale, c->viewport.origin_x - mx / c->viewport.scale,
                                        c->viewport.origin_y - my / c->viewport.scale};
    job->arrangement = tw_graph_arrangement_ref(c->arrangement);
    job->selected = c->selected;
    job->color_by = c->color_by;
    if (c->highlighted)
        job->highlighted = g_memdup2(c->highlighted, sizeof(bool) * (size_t)MAX(c->arrangement->graph->nnodes, 1));
    return job;
}

static void image_clear(graph_image *im)
{
    g_clear_object(&im->texture);
    g_clear_pointer(&im->surface, cairo_surface_destroy);
}

static void take_image(TwGraphCanvas *c, render_job *job)
{
    c->render_ms = job->base.ms;
    image_clear(&c->image);
    c->image = (graph_image){.surface = job->base.surface, .width = job->base.width, .height = job->base.height,
                             .scale = job->base.scale, .dark = job->dark, .generation = job->generation,
                             .viewport = job->viewport};
    job->base.surface = NULL;
    tw_image_job_free(&job->base);
}

/* The view's top-left corner in the image's pixels (at the image's zoom). */
static void view_in_image(const graph_image *im, const tw_graph_viewport *now, double *x, double *y)
{
    *x = (now->origin_x - im->viewport.origin_x) * im->viewport.scale;
    *y = (now->origin_y - im->viewport.origin_y) * im->viewport.scale;
}

/* The image shows what is drawn now, at the current zoom. */
static gboolean image_same(TwGraphCanvas *c, int scale, gboolean dark)
{
    const graph_image *im = &c->image;
    return im->surface && im->generation == c->generation && im->scale == scale && im->dark == dark &&
           im->viewport.scale == c->viewport.scale;
}

/* ... and covers the whole view. */
static gboolean image_current(TwGraphCanvas *c, int width, int height, int scale, gboolean dark)
{
    const graph_image *im = &c->image;
    double x, y;
    view_in_image(im, &c->viewport, &x, &y);
    return image_same(c, scale, dark) && x >= 0 && y >= 0 && x + width <= im->width && y + height <= im->height;
}

/* ... and the view is within half a margin of the image's centre. */
static gboolean image_centred(TwGraphCanvas *c, int width, int height, int scale, gboolean dark)
{
    const graph_image *im = &c->image;
    double x, y;
    view_in_image(im, &c->viewport, &x, &y);
    double mx = (im->width - width) / 2.0, my = (im->height - height) / 2.0;
    return image_current(c, width, height, scale, dark) && fabs(x - mx) <= margin_x(width) / 2.0 &&
           fabs(y - my) <= margin_y(height) / 2.0;
}

static void rendered(GtkWidget *widget, tw_image_job *job)
{
    take_image(TW_GRAPH_CANVAS(widget), (render_job *)job);
}

/* A new image when what is drawn or the zoom changed: on the main loop
 * when the last one was cheap, else in a thread (one at a time); when the
 * view has only moved off the image's centre, in a thread, the frames
 * meanwhile moving the image (panning costs no drawing on the main loop). */
static void update_image(TwGraphCanvas *c, int width, int height, int scale, gboolean dark)
{
    if (c->rendering || image_centred(c, width, height, scale, dark))
        return;
    render_job *job = render_job_new(c, width, height, scale, dark);
    gboolean cheap = c->image.surface ? c->render_ms <= MAIN_LOOP_RENDER_MS
                                      : c->arrangement->layout->nnodes <= MAIN_LOOP_NODES;
    if (cheap && !image_current(c, width, height, scale, dark)) {
        tw_image_job_run(&job->base);
        take_image(c, job);
        return;
    }
    tw_image_job_start(GTK_WIDGET(c), &c->rendering, &job->base, rendered);
}

static gboolean emit_drawn(gpointer data)
{
    TwGraphCanvas *c = data;
    c->drawn_idle = 0;
    g_signal_emit(c, signals[SIGNAL_DRAWN], 0);
    return G_SOURCE_REMOVE;
}

/* The image, moved and scaled from the viewport it was drawn for to the
 * current one: world w was at (w - o_then) s_then, is now at (w - o_now) s_now. */
static void tw_graph_canvas_snapshot(GtkWidget *widget, GtkSnapshot *snapshot)
{
    TwGraphCanvas *c = TW_GRAPH_CANVAS(widget);
    int width = canvas_width(c), height = canvas_height(c), scale = gtk_widget_get_scale_factor(widget);
    gboolean dark = is_dark(widget);
    tw_rgb bg = tw_render_style_get(dark).background;
    graphene_rect_t area = GRAPHENE_RECT_INIT(0, 0, width, height);
    gtk_snapshot_append_color(snapshot, &(GdkRGBA){(float)bg.r, (float)bg.g, (float)bg.b, 1}, &area);
    if (!c->arrangement)
        return;
    update_image(c, width, height, scale, dark);
    graph_image *im = &c->image;
    if (!im->surface)
        return;
    const tw_graph_viewport *then = &im->viewport, *now = &c->viewport;
    float zoom = (float)(now->scale / then->scale);
    float dx = (float)round((then->origin_x - now->origin_x) * now->scale);
    float dy = (float)round((then->origin_y - now->origin_y) * now->scale);
    graphene_rect_t whole = GRAPHENE_RECT_INIT(0, 0, im->width, im->height);
    gtk_snapshot_push_clip(snapshot, &area);
    if (tw_widget_cairo_rendered(widget)) {
        /* A Cairo node the size of the view, whatever the image's, the
         * image's part in view copied in. */
        cairo_t *cr = gtk_snapshot_append_cairo(snapshot, &area);
        cairo_translate(cr, dx, dy);
        cairo_scale(cr, zoom, zoom);
        cairo_rectangle(cr, 0, 0, im->width, im->height);
        cairo_clip(cr);
        tw_cairo_set_source_kept(cr, im->surface, 0, 0);
        /* Scaled only until the new image lands: the cheapest filter. At
         * zoom 1 bilinear is a plain copy on whole pixels and smooth where
         * the frame itself is scaled (as designer_canvas_image.c). */
        cairo_pattern_set_filter(cairo_get_source(cr), zoom == 1 ? CAIRO_FILTER_BILINEAR : CAIRO_FILTER_FAST);
        cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE); /* opaque: a copy, no blending */
        cairo_paint(cr);
        cairo_destroy(cr);
    } else {
        if (!im->texture)
            im->texture = tw_texture_of_surface(im->surface);
        gtk_snapshot_save(snapshot);
        gtk_snapshot_translate(snapshot, &GRAPHENE_POINT_INIT(dx, dy));
        gtk_snapshot_scale(snapshot, zoom, zoom);
        gtk_snapshot_append_texture(snapshot, im->texture, &whole);
        gtk_snapshot_restore(snapshot);
    }
    gtk_snapshot_pop(snapshot);
    gboolean current = image_current(c, width, height, scale, dark);
    if (current && !c->drawn && !c->drawn_idle)
        c->drawn_idle = g_idle_add(emit_drawn, c);
    c->drawn = current;
}

/* ---- the viewport ------------------------------------------------------------------- */

tw_graph_viewport tw_graph_canvas_viewport(TwGraphCanvas *c)
{
    return c->viewport;
}

void tw_graph_canvas_set_viewport(TwGraphCanvas *c, tw_graph_viewport viewport)
{
    c->viewport = viewport;
    c->viewport.scale = CLAMP(viewport.scale, MIN_SCALE, MAX_SCALE);
    c->auto_fit = FALSE;
    c->drawn = FALSE;
    gtk_widget_queue_draw(GTK_WIDGET(c));
}

void tw_graph_canvas_fit(TwGraphCanvas *c)
{
    if (!c->arrangement)
        return;
    tw_graph_canvas_set_viewport(c, tw_graph_viewport_fit(c->arrangement->layout, canvas_width(c),
                                                           canvas_height(c)));
    c->auto_fit = TRUE;
}

void tw_graph_canvas_zoom(TwGraphCanvas *c, double factor, double x, double y)
{
    tw_graph_viewport vp = c->viewport;
    double scale = CLAMP(vp.scale * factor, MIN_SCALE, MAX_SCALE);
    double wx = vp.origin_x + x / vp.scale, wy = vp.origin_y + y / vp.scale;
    tw_graph_canvas_set_viewport(c, (tw_graph_viewport){scale, wx - x / scale, wy - y / scale});
}

void tw_graph_canvas_pan(TwGraphCanvas *c, double dx, double dy)
{
    tw_graph_viewport vp = c->viewport;
    tw_graph_canvas_set_viewport(c, (tw_graph_viewport){vp.scale, vp.origin_x - dx / vp.scale,
                                                        vp.origin_y - dy / vp.scale});
}

void tw_graph_canvas_center_on(TwGraphCanvas *c, double x, double y)
{
    double scale = c->viewport.scale;
    tw_graph_canvas_set_viewport(c, (tw_graph_viewport){scale, x - canvas_width(c) / 2.0 / scale,
                                                        y - canvas_height(c) / 2.0 / scale});
}

gboolean tw_graph_canvas_drawn(TwGraphCanvas *c)
{
    return c->drawn;
}

/* ---- input ------------------------------------------------------------------------------ */

static void on_motion(GtkEventControllerMotion *motion, double x, double y, TwGraphCanvas *c)
{
    c->pointer_x = x, c->pointer_y = y, c->pointer_inside = TRUE;
}

static void on_leave(GtkEventControllerMotion *motion, TwGraphCanvas *c)
{
    c->pointer_inside = FALSE;
}

static gboolean on_scroll(GtkEventControllerScroll *scroll, double dx, double dy, TwGraphCanvas *c)
{
    if (dy == 0 || !c->arrangement)
        return FALSE;
    double x = c->pointer_inside ? c->pointer_x : canvas_width(c) / 2.0;
    double y = c->pointer_inside ? c->pointer_y : canvas_height(c) / 2.0;
    tw_graph_canvas_zoom(c, pow(ZOOM_STEP, -dy), x, y);
    return TRUE;
}

static void on_drag_begin(GtkGestureDrag *drag, double x, double y, TwGraphCanvas *c)
{
    c->drag_start = c->viewport;
}

static void on_drag_update(GtkGestureDrag *drag, double dx, double dy, TwGraphCanvas *c)
{
    if (!c->arrangement)
        return;
    tw_graph_viewport vp = c->drag_start;
    tw_graph_canvas_set_viewport(c, (tw_graph_viewport){vp.scale, vp.origin_x - dx / vp.scale,
                                                        vp.origin_y - dy / vp.scale});
}

/* A click (released without a drag): an expander opens or closes its
 * scope, a box is selected, the background clears the selection; a
 * double click on a scope's box or frame title opens or closes it. */
static void on_released(GtkGestureClick *click, int n_press, double x, double y, TwGraphCanvas *c)
{
    gtk_widget_grab_focus(GTK_WIDGET(c));
    if (!c->arrangement)
        return;
    const tw_graph_arrangement *a = c->arrangement;
    double wx = c->viewport.origin_x + x / c->viewport.scale, wy = c->viewport.origin_y + y / c->viewport.scale;
    int scope = tw_graph_arrangement_expander_at(a, wx, wy);
    int v = tw_graph_node_at(a->layout, wx, wy);
    if (n_press == 1 && scope >= 0) {
        g_signal_emit(c, signals[SIGNAL_SCOPE_TOGGLED], 0, scope);
    } else if (n_press == 1) {
        tw_graph_canvas_select(c, v);
    } else if (n_press == 2 && scope < 0 && v >= 0 && a->graph->nodes[v].is_scope) {
        g_signal_emit(c, signals[SIGNAL_SCOPE_TOGGLED], 0, a->graph->nodes[v].index);
    }
}

static gboolean on_key(GtkEventControllerKey *key, guint keyval, guint keycode, GdkModifierType state,
                       TwGraphCanvas *c)
{
    double x = canvas_width(c) / 2.0, y = canvas_height(c) / 2.0;
    switch (keyval) {
    case GDK_KEY_plus: case GDK_KEY_equal: case GDK_KEY_KP_Add:
        tw_graph_canvas_zoom(c, ZOOM_STEP, x, y);
        return TRUE;
    case GDK_KEY_minus: case GDK_KEY_KP_Subtract:
        tw_graph_canvas_zoom(c, 1 / ZOOM_STEP, x, y);
        return TRUE;
    case GDK_KEY_0: case GDK_KEY_KP_0:
        tw_graph_canvas_fit(c);
        return TRUE;
    default:
        return FALSE;
    }
}

static void add_input(TwGraphCanvas *c)
{
    GtkWidget *widget = GTK_WIDGET(c);
    GtkEventController *motion = gtk_event_controller_motion_new();
    g_signal_connect(motion, "motion", G_CALLBACK(on_motion), c);
    g_signal_connect(motion, "leave", G_CALLBACK(on_leave), c);
    gtk_widget_add_controller(widget, motion);
    GtkEventController *scroll = gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
    g_signal_connect(scroll, "scroll", G_CALLBACK(on_scroll), c);
    gtk_widget_add_controller(widget, scroll);
    GtkGesture *drag = gtk_gesture_drag_new();
    g_signal_connect(drag, "drag-begin", G_CALLBACK(on_drag_begin), c);
    g_signal_connect(drag, "drag-update", G_CALLBACK(on_drag_update), c);
    gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(drag));
    GtkGesture *click = gtk_gesture_click_new();
    g_signal_connect(click, "released", G_CALLBACK(on_released), c);
    gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(click));
    GtkEventController *key = gtk_event_controller_key_new();
    g_signal_connect(key, "key-pressed", G_CALLBACK(on_key), c);
    gtk_widget_add_controller(widget, key);
}

/* ---- the widget ------------------------------------------------------------------------- */

void tw_graph_canvas_set_arrangement(TwGraphCanvas *c, tw_graph_arrangement *arrangement)
{
    tw_graph_arrangement_unref(c->arrangement);
    c->arrangement = arrangement ? tw_graph_arrangement_ref(arrangement) : NULL;
    c->selected = -1;
    g_clear_pointer(&c->highlighted, g_free);
    changed(c);
    g_signal_emit(c, signals[SIGNAL_SELECTION_CHANGED], 0);
}

const tw_graph_arrangement *tw_graph_canvas_arrangement(TwGraphCanvas *c)
{
    return c->arrangement;
}

void tw_graph_canvas_select(TwGraphCanvas *c, int visible)
{
    int n = c->arrangement ? c->arrangement->graph->nnodes : 0;
    visible = visible >= 0 && visible < n ? visible : -1;
    if (visible == c->selected)
        return;
    c->selected = visible;
    changed(c);
    g_signal_emit(c, signals[SIGNAL_SELECTION_CHANGED], 0);
}

int tw_graph_canvas_selected(TwGraphCanvas *c)
{
    return c->selected;
}

void tw_graph_canvas_set_highlighted(TwGraphCanvas *c, bool *highlighted)
{
    g_free(c->highlighted);
    c->highlighted = highlighted;
    changed(c);
}

void tw_graph_canvas_set_color_mode(TwGraphCanvas *c, tw_graph_color_mode mode)
{
    if (c->color_by == mode)
        return;
    c->color_by = mode;
    changed(c);
}

tw_graph_color_mode tw_graph_canvas_color_mode(TwGraphCanvas *c)
{
    return c->color_by;
}

const bool *tw_graph_canvas_highlighted(TwGraphCanvas *c)
{
    return c->highlighted;
}

static void tw_graph_canvas_size_allocate(GtkWidget *widget, int width, int height, int baseline)
{
    TwGraphCanvas *c = TW_GRAPH_CANVAS(widget);
    if (c->auto_fit)
        tw_graph_canvas_fit(c);
}

static void tw_graph_canvas_measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                                    int *natural, int *minimum_baseline, int *natural_baseline)
{
    *minimum = 120;
    *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 800 : 600;
}

static void tw_graph_canvas_dispose(GObject *object)
{
    TwGraphCanvas *c = TW_GRAPH_CANVAS(object);
    if (c->rendering) {
        g_cancellable_cancel(c->rendering);
        g_clear_object(&c->rendering);
    }
    g_clear_handle_id(&c->drawn_idle, g_source_remove);
    g_clear_pointer(&c->arrangement, tw_graph_arrangement_unref);
    G_OBJECT_CLASS(tw_graph_canvas_parent_class)->dispose(object);
}

static void tw_graph_canvas_finalize(GObject *object)
{
    TwGraphCanvas *c = TW_GRAPH_CANVAS(object);
    g_free(c->highlighted);
    image_clear(&c->image);
    G_OBJECT_CLASS(tw_graph_canvas_parent_class)->finalize(object);
}

static void tw_graph_canvas_class_init(TwGraphCanvasClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    object_class->dispose = tw_graph_canvas_dispose;
    object_class->finalize = tw_graph_canvas_finalize;
    widget_class->snapshot = tw_graph_canvas_snapshot;
    widget_class->measure = tw_graph_canvas_measure;
    widget_class->size_allocate = tw_graph_canvas_size_allocate;
    gtk_widget_class_set_css_name(widget_class, "graphcanvas");
    signals[SIGNAL_SELECTION_CHANGED] = g_signal_new("selection-changed", G_TYPE_FROM_CLASS(klass),
                                                     G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
    signals[SIGNAL_SCOPE_TOGGLED] = g_signal_new("scope-toggled", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                                 NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT);
    signals[SIGNAL_DRAWN] = g_signal_new("drawn", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                         G_TYPE_NONE, 0);
}

static void tw_graph_canvas_init(TwGraphCanvas *c)
{
    c->selected = -1;
    c->auto_fit = TRUE;
    c->viewport.scale = 1;
    gtk_widget_set_focusable(GTK_WIDGET(c), TRUE);
    gtk_widget_set_hexpand(GTK_WIDGET(c), TRUE);
    gtk_widget_set_vexpand(GTK_WIDGET(c), TRUE);
    add_input(c);
}

GtkWidget *tw_graph_canvas_new(void)
{
    return g_object_new(TW_TYPE_GRAPH_CANVAS, NULL);
}
