/* TwDesignerCanvas (designer_canvas.h): the pointer, keys and viewport;
 * the drawing is designer_canvas_draw.c's. */
#include "designer_canvas.h"

#include <math.h>
#include <string.h>

#include "designer_arrange.h"
#include "designer_blocks.h"
#include "designer_canvas_draw.h"
#include "designer_canvas_image.h"

#define REACH 9.0  /* pixels: how near a port or an edge the pointer must be */
#define NUDGE 10.0 /* document units an arrow key moves the selection */
#define ZOOM_SETTLE_MS 150 /* the zoom still this long: the image is drawn at it */

typedef enum { DRAG_NONE, DRAG_CONNECT, DRAG_MOVE, DRAG_BAND, DRAG_MINIMAP } DragKind;

struct _TwDesignerCanvas {
    GtkWidget parent_instance;
    TwModelDoc *doc;
    GArray *selected; /* gboolean per node */
    int primary;
    int edge_node, edge_input;
    tw_designer_viewport view;
    gboolean fitted_once;
    /* the drag in progress (document units) */
    DragKind drag;
    double x0, y0, x1, y1;
    int from_node, from_port, press_node;
    tw_designer_minimap minimap; /* where the map was when a drag on it began */
    GdkModifierType press_state;
    double pan_x, pan_y; /* the viewport's offset when a pan began */
    guint generation;    /* bumped on every change: an arrange of an older document is dropped */
    GCancellable *arrange;
    tw_designer_image *image; /* the drawing kept between frames */
    guint content;            /* bumped whenever what is drawn changes, the viewport aside */
    guint zoom_settle;        /* the zoom moved lately: the image is shown scaled until this fires */
    gboolean tiles_pending;   /* the image lacks tiles of the view it settled on */
    guint more_tiles;         /* a tick that queues the frame that draws more of them */
};

enum { SELECTION_CHANGED, ARRANGED, EDIT_NESTED, LEAVE_NESTED, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(TwDesignerCanvas, tw_designer_canvas, GTK_TYPE_WIDGET)

static char *clipboard_text; /* what Ctrl+C copied last, in this process */

/* ---- coordinates ---------------------------------------------------------- */
static void to_doc(TwDesignerCanvas *c, double x, double y, double *dx, double *dy)
{
    *dx = (x - c->view.ox) / c->view.zoom;
    *dy = (y - c->view.oy) / c->view.zoom;
}

static void to_widget(TwDesignerCanvas *c, double x, double y, double *wx, double *wy)
{
    *wx = x * c->view.zoom + c->view.ox;
    *wy = y * c->view.zoom + c->view.oy;
}

/* ---- selection ------------------------------------------------------------ */
static gboolean is_selected(TwDesignerCanvas *c, int node)
{
    return node >= 0 && node < (int)c->selected->len && g_array_index(c->selected, gboolean, node);
}

static void sync_selection_size(TwDesignerCanvas *c)
{
    int n = tw_model_doc_n_layers(c->doc);
    if ((int)c->selected->len != n)
        g_array_set_size(c->selected, n);
    if (c->primary >= n)
        c->primary = -1;
    if (c->edge_node >= n || (c->edge_node >= 0 && c->edge_input >= tw_model_doc_node_ninputs(c->doc, c->edge_node)))
        c->edge_node = -1;
}

static void clear_selection(TwDesignerCanvas *c)
{
    for (guint i = 0; i < c->selected->len; i++)
        g_array_index(c->selected, gboolean, i) = FALSE;
    c->primary = -1;
    c->edge_node = -1;
}

/* What is drawn changed (not only the viewport). */
static void redraw(TwDesignerCanvas *c)
{
    c->content++;
    gtk_widget_queue_draw(GTK_WIDGET(c));
}

static void selection_changed(TwDesignerCanvas *c)
{
    redraw(c);
    g_signal_emit(c, signals[SELECTION_CHANGED], 0);
}

int tw_designer_canvas_primary(TwDesignerCanvas *c)
{
    return c->primary;
}

static void add_to_selection(TwDesignerCanvas *c, int node)
{
    g_array_index(c->selected, gboolean, node) = TRUE;
    c->primary = node;
}

/* Keep a box in view (a selection made by keys or by the stack). */
static void reveal(TwDesignerCanvas *c, int node)
{
    int w = gtk_widget_get_width(GTK_WIDGET(c)), h = gtk_widget_get_height(GTK_WIDGET(c));
    if (node < 0 || w <= 0 || h <= 0)
        return;
    double x, y, wx0, wy0, wx1, wy1;
    tw_model_doc_node_position(c->doc, node, &x, &y);
    to_widget(c, x, y, &wx0, &wy0);
    to_widget(c, x + TW_DESIGNER_BOX_WIDTH, y + TW_DESIGNER_BOX_HEIGHT, &wx1, &wy1);
    if (wx0 < 0 || wx1 > w)
        c->view.ox += w / 2.0 - (wx0 + wx1) / 2;
    if (wy0 < 0 || wy1 > h)
        c->view.oy += h / 2.0 - (wy0 + wy1) / 2;
}

void tw_designer_canvas_select(TwDesignerCanvas *c, int node)
{
    sync_selection_size(c);
    if (node == c->primary && c->edge_node < 0) {
        int count = 0;
        for (guint i = 0; i < c->selected->len; i++)
            count += g_array_index(c->selected, gboolean, i);
        if (count == (node >= 0))
            return; /* already so: no signal, no loop with the stack */
    }
    clear_selection(c);
    if (node >= 0 && node < (int)c->selected->len) {
        add_to_selection(c, node);
        reveal(c, node);
    }
    selection_changed(c);
}

void tw_designer_canvas_select_many(TwDesignerCanvas *c, const int *nodes, int n)
{
    sync_selection_size(c);
    clear_selection(c);
    for (int k = 0; k < n; k++)
        if (nodes[k] >= 0 && nodes[k] < (int)c->selected->len)
            add_to_selection(c, nodes[k]);
    selection_changed(c);
}

int tw_designer_canvas_selection(TwDesignerCanvas *c, int **nodes)
{
    sync_selection_size(c);
    GArray *out = g_array_new(FALSE, FALSE, sizeof(int));
    for (guint i = 0; i < c->selected->len; i++)
        if (g_array_index(c->selected, gboolean, i)) {
            int v = (int)i;
            g_array_append_val(out, v);
        }
    int n = (int)out->len;
    *nodes = (int *)g_array_free(out, FALSE);
    return n;
}

gboolean tw_designer_canvas_select_edge(TwDesignerCanvas *c, int node, int input)
{
    sync_selection_size(c);
    if (node < 0 || node >= tw_model_doc_n_layers(c->doc) || input < 0 ||
        input >= tw_model_doc_node_ninputs(c->doc, node))
        return FALSE;
    clear_selection(c);
    c->edge_node = node;
    c->edge_input = input;
    selection_changed(c);
    return TRUE;
}

gboolean tw_designer_canvas_selected_edge(TwDesignerCanvas *c, int *node, int *input)
{
    if (c->edge_node < 0)
        return FALSE;
    *node = c->edge_node;
    *input = c->edge_input;
    return TRUE;
}

/* ---- actions -------------------------------------------------------------- */
static void report(TwDesignerCanvas *c, const char *what, GError *error)
{
    /* The window's banner shows edits' errors; here they go to the log
     * with what was tried, and the document stays as it was. */
    g_message("designer: %s: %s", what, error->message);
    gtk_widget_error_bell(GTK_WIDGET(c));
    g_error_free(error);
}

gboolean tw_designer_canvas_delete_selection(TwDesignerCanvas *c)
{
    GError *error = NULL;
    sync_selection_size(c);
    if (c->edge_node >= 0) {
        int node = c->edge_node;
        gboolean ok = tw_model_doc_disconnect(c->doc, node, c->edge_input, &error);
        if (!ok)
            report(c, "disconnect", error);
        else
            tw_designer_canvas_select(c, node);
        return ok;
    }
    int *nodes;
    int n = tw_designer_canvas_selection(c, &nodes);
    int first = n ? nodes[0] : -1;
    gboolean ok = n > 0 && tw_model_doc_delete_nodes(c->doc, nodes, n, &error);
    g_free(nodes);
    if (n && !ok)
        report(c, "delete", error);
    if (ok) {
        int left = tw_model_doc_n_layers(c->doc);
        sync_selection_size(c);
        clear_selection(c);
        tw_designer_canvas_select(c, left ? MIN(first, left - 1) : -1);
    }
    return ok;
}

gboolean tw_designer_canvas_copy(TwDesignerCanvas *c)
{
    int *nodes;
    int n = tw_designer_canvas_selection(c, &nodes);
    char *text = n ? tw_model_doc_copy_nodes(c->doc, nodes, n) : NULL;
    g_free(nodes);
    if (!text)
        return FALSE;
    g_free(clipboard_text);
    clipboard_text = text;
    gdk_clipboard_set_text(gtk_widget_get_clipboard(GTK_WIDGET(c)), text);
    return TRUE;
}

/* New boxes from text, offset so they do not cover the originals; they
 * become the selection. */
static gboolean paste_text(TwDesignerCanvas *c, const char *text)
{
    GError *error = NULL;
    int before = tw_model_doc_n_layers(c->doc);
    int first = tw_model_doc_paste(c->doc, text, 30, 30, &error);
    if (first < 0) {
        report(c, "paste", error);
        return FALSE;
    }
    int n = tw_model_doc_n_layers(c->doc) - before;
    int *nodes = g_new(int, MAX(n, 1));
    for (int k = 0; k < n; k++)
        nodes[k] = first + k;
    tw_designer_canvas_select_many(c, nodes, n);
    g_free(nodes);
    return n > 0;
}

gboolean tw_designer_canvas_paste(TwDesignerCanvas *c)
{
    return clipboard_text && paste_text(c, clipboard_text);
}

gboolean tw_designer_canvas_duplicate(TwDesignerCanvas *c)
{
    int *nodes;
    int n = tw_designer_canvas_selection(c, &nodes);
    char *text = n ? tw_model_doc_copy_nodes(c->doc, nodes, n) : NULL;
    g_free(nodes);
    gboolean ok = text && paste_text(c, text);
    g_free(text);
    return ok;
}

void tw_designer_canvas_follow_edge(TwDesignerCanvas *c, gboolean forward)
{
    int n = tw_model_doc_n_layers(c->doc), at = c->primary;
    if (!n)
        return;
    if (at < 0) {
        tw_designer_canvas_select(c, 0);
        return;
    }
    int next = -1;
    if (forward) {
        for (int j = 0; j < n && next < 0; j++)
            for (int e = 0; e < tw_model_doc_node_ninputs(c->doc, j) && next < 0; e++) {
                int from, port;
                tw_model_doc_node_input(c->doc, j, e, &from, &port);
                if (from == at)
                    next = j;
            }
    } else if (tw_model_doc_node_ninputs(c->doc, at)) {
        int port;
        tw_model_doc_node_input(c->doc, at, 0, &next, &port);
    }
    /* At the end of a path, on to the next box in the list. */
    if (next < 0)
        next = ((forward ? at + 1 : at - 1) + n) % n;
    tw_designer_canvas_select(c, next);
}

gboolean tw_designer_canvas_nudge(TwDesignerCanvas *c, double dx, double dy)
{
    int *nodes;
    int n = tw_designer_canvas_selection(c, &nodes);
    GError *error = NULL;
    gboolean ok = n && tw_model_doc_move_nodes(c->doc, nodes, n, dx, dy, &error);
    if (n && !ok)
        report(c, "move", error);
    g_free(nodes);
    return ok;
}

gboolean tw_designer_canvas_reorder(TwDesignerCanvas *c, int delta)
{
    int at = c->primary, to = at + delta;
    if (at < 0 || to < 0 || to >= tw_model_doc_n_layers(c->doc))
        return FALSE;
    GError *error = NULL;
    if (!tw_model_doc_move(c->doc, at, to, &error)) {
        report(c, "reorder", error);
        return FALSE;
    }
    tw_designer_canvas_select(c, to);
    return TRUE;
}

/* A palette block after node from: its layers selected, the property
 * editor on its last one. */
static gboolean insert_block(TwDesignerCanvas *c, const char *name, int from)
{
    GError *error = NULL;
    int first = tw_designer_block_insert(c->doc, name, from, &error);
    if (first < 0) {
        report(c, "add a block", error);
        return FALSE;
    }
    int n = tw_model_doc_n_layers(c->doc) - first;
    tw_designer_canvas_select(c, first + n - 1); /* into view */
    int *nodes = g_new(int, n);
    for (int k = 0; k < n; k++)
        nodes[k] = first + k;
    tw_designer_canvas_select_many(c, nodes, n);
    g_free(nodes);
    return TRUE;
}

gboolean tw_designer_canvas_drop_class(TwDesignerCanvas *c, const char *class_name, double x, double y)
{
    double dx, dy;
    to_doc(c, x, y, &dx, &dy);
    if (tw_designer_block_find(class_name)) { /* after the box it lands on, else the selected one */
        int on = tw_designer_hit_box(c->doc, dx, dy);
        return insert_block(c, class_name, on >= 0 ? on : c->primary);
    }
    GError *error = NULL;
    int node, input, made;
    if (tw_designer_hit_box(c->doc, dx, dy) < 0 &&
        tw_designer_hit_edge(c->doc, dx, dy, REACH / c->view.zoom, &node, &input))
        made = tw_model_doc_insert_on_edge(c->doc, class_name, node, input, &error);
    else
        made = tw_model_doc_add_node(c->doc, class_name, dx - TW_DESIGNER_BOX_WIDTH / 2,
                                     dy - TW_DESIGNER_BOX_HEIGHT / 2, &error);
    if (made < 0) {
        report(c, "add a layer", error);
        return FALSE;
    }
    tw_designer_canvas_select(c, made);
    return TRUE;
}

gboolean tw_designer_canvas_toggle_nested(TwDesignerCanvas *c, int node)
{
    double before = tw_designer_box_height(c->doc, node);
    if (!tw_model_doc_set_node_expanded(c->doc, node, !tw_model_doc_node_expanded(c->doc, node)))
        return FALSE;
    /* The boxes below make room for the open box or close the gap again,
     * as one move. */
    double extra = tw_designer_box_height(c->doc, node) - before, x, y;
    tw_model_doc_node_position(c->doc, node, &x, &y);
    int n = tw_model_doc_n_layers(c->doc), count = 0;
    int *below = g_new(int, MAX(n, 1));
    for (int i = 0; i < n; i++) {
        double bx, by;
        tw_model_doc_node_position(c->doc, i, &bx, &by);
        if (i != node && by > y)
            below[count++] = i;
    }
    GError *error = NULL;
    if (count && !tw_model_doc_move_nodes(c->doc, below, count, 0, extra, &error))
        report(c, "make room", error);
    g_free(below);
    redraw(c);
    return TRUE;
}

gboolean tw_designer_canvas_append_class(TwDesignerCanvas *c, const char *class_name)
{
    if (tw_designer_block_find(class_name))
        return insert_block(c, class_name, c->primary >= 0 ? c->primary : tw_model_doc_n_layers(c->doc) - 1);
    GError *error = NULL;
    int at = c->primary, n = tw_model_doc_n_layers(c->doc), made = -1;
    if (!tw_model_doc_is_graph(c->doc)) { /* a chain: the stack's insert below the selection */
        made = at >= 0 ? at + 1 : n;
        if (!tw_model_doc_insert(c->doc, made, class_name, &error))
            made = -1;
    } else {
        double x = 40, y = 40;
        if (at >= 0) {
            tw_model_doc_node_position(c->doc, at, &x, &y);
            y += TW_DESIGNER_BOX_HEIGHT + 40;
        }
        made = tw_model_doc_add_node_after(c->doc, class_name, at, x, y, &error);
    }
    if (made < 0) {
        report(c, "add a layer", error);
        return FALSE;
    }
    tw_designer_canvas_select(c, made);
    return TRUE;
}

/* ---- the minimap ---------------------------------------------------------- */
static gboolean in_minimap(TwDesignerCanvas *c, double x, double y, tw_designer_minimap *map)
{
    return tw_designer_minimap_place(c->doc, &c->view, gtk_widget_get_width(GTK_WIDGET(c)),
                                     gtk_widget_get_height(GTK_WIDGET(c)), map) &&
           x >= map->x - 4 && x <= map->x + map->width + 4 && y >= map->y - 4 && y <= map->y + map->height + 4;
}

gboolean tw_designer_canvas_minimap(TwDesignerCanvas *c, tw_designer_minimap *map)
{
    return tw_designer_minimap_place(c->doc, &c->view, gtk_widget_get_width(GTK_WIDGET(c)),
                                     gtk_widget_get_height(GTK_WIDGET(c)), map);
}

/* The document point under the minimap's (x, y) to the middle of the view. */
static void center_from_minimap(TwDesignerCanvas *c, const tw_designer_minimap *map, double x, double y)
{
    double dx, dy;
    tw_designer_minimap_to_doc(map, x, y, &dx, &dy);
    c->view.ox = gtk_widget_get_width(GTK_WIDGET(c)) / 2.0 - dx * c->view.zoom;
    c->view.oy = gtk_widget_get_height(GTK_WIDGET(c)) / 2.0 - dy * c->view.zoom;
    c->fitted_once = TRUE;
    gtk_widget_queue_draw(GTK_WIDGET(c));
}

/* ---- the drag ------------------------------------------------------------- */
static void drag_begin(TwDesignerCanvas *c, double x, double y, GdkModifierType state)
{
    sync_selection_size(c);
    tw_designer_minimap map;
    if (in_minimap(c, x, y, &map)) {
        c->minimap = map; /* fixed while dragging: the view moves under it */
        c->drag = DRAG_MINIMAP;
        center_from_minimap(c, &map, x, y);
        return;
    }
    to_doc(c, x, y, &c->x0, &c->y0);
    c->x1 = c->x0;
    c->y1 = c->y0;
    c->press_state = state;
    c->press_node = -1;
    if (tw_designer_hit_output(c->doc, c->x0, c->y0, REACH / c->view.zoom, &c->from_node, &c->from_port)) {
        c->drag = DRAG_CONNECT;
        tw_designer_port_point(c->doc, c->from_node, TRUE, c->from_port, &c->x0, &c->y0);
        return;
    }
    int box = tw_designer_hit_box(c->doc, c->x0, c->y0);
    c->press_node = box;
    if (box >= 0) {
        if (!is_selected(c, box)) {
            if (!(state & (GDK_CONTROL_MASK | GDK_SHIFT_MASK)))
                clear_selection(c);
            add_to_selection(c, box);
            selection_changed(c);
        }
        c->drag = DRAG_MOVE;
        return;
    }
    c->drag = DRAG_BAND;
}

static void drag_update(TwDesignerCanvas *c, double x, double y)
{
    if (c->drag == DRAG_MINIMAP) {
        center_from_minimap(c, &c->minimap, x, y);
        return;
    }
    to_doc(c, x, y, &c->x1, &c->y1);
    redraw(c);
}

static int connect_target(TwDesignerCanvas *c)
{
    int box = tw_designer_hit_box(c->doc, c->x1, c->y1);
    return box == c->from_node ? -1 : box;
}

static void drag_end(TwDesignerCanvas *c)
{
    DragKind kind = c->drag;
    c->drag = DRAG_NONE;
    GError *error = NULL;
    if (kind == DRAG_CONNECT) {
        int to = connect_target(c);
        if (to >= 0) {
            if (tw_model_doc_connect(c->doc, c->from_node, c->from_port, to, &error))
                tw_designer_canvas_select(c, to);
            else
                report(c, "connect", error);
        }
    } else if (kind == DRAG_MOVE) {
        double dx = c->x1 - c->x0, dy = c->y1 - c->y0;
        if (dx != 0 || dy != 0)
            tw_designer_canvas_nudge(c, dx, dy);
    } else if (kind == DRAG_BAND) {
        if (!(c->press_state & (GDK_CONTROL_MASK | GDK_SHIFT_MASK)))
            clear_selection(c);
        double bx0 = MIN(c->x0, c->x1), bx1 = MAX(c->x0, c->x1), by0 = MIN(c->y0, c->y1), by1 = MAX(c->y0, c->y1);
        for (int i = 0; i < tw_model_doc_n_layers(c->doc); i++) {
            double x, y;
            tw_model_doc_node_position(c->doc, i, &x, &y);
            if (x < bx1 && x + TW_DESIGNER_BOX_WIDTH > bx0 && y < by1 && y + TW_DESIGNER_BOX_HEIGHT > by0)
                add_to_selection(c, i);
        }
        selection_changed(c);
    }
    redraw(c);
}

void tw_designer_canvas_drag(TwDesignerCanvas *c, double x0, double y0, double x1, double y1, GdkModifierType state)
{
    drag_begin(c, x0, y0, state);
    drag_update(c, x1, y1);
    drag_end(c);
}

void tw_designer_canvas_click(TwDesignerCanvas *c, double x, double y, GdkModifierType state)
{
    sync_selection_size(c);
    tw_designer_minimap map;
    if (in_minimap(c, x, y, &map)) {
        center_from_minimap(c, &map, x, y);
        return;
    }
    double dx, dy;
    to_doc(c, x, y, &dx, &dy);
    int box = tw_designer_hit_box(c->doc, dx, dy), node, input;
    gboolean add = (state & (GDK_CONTROL_MASK | GDK_SHIFT_MASK)) != 0;
    if (box >= 0) {
        if (!add)
            clear_selection(c);
        if (add && is_selected(c, box)) {
            g_array_index(c->selected, gboolean, box) = FALSE;
            c->primary = -1;
        } else
            add_to_selection(c, box);
        selection_changed(c);
    } else if (tw_designer_hit_edge(c->doc, dx, dy, REACH / c->view.zoom, &node, &input))
        tw_designer_canvas_select_edge(c, node, input);
    else if (!add) {
        clear_selection(c);
        selection_changed(c);
    }
}

static void on_drag_begin(GtkGestureDrag *gesture, double x, double y, TwDesignerCanvas *c)
{
    gtk_widget_grab_focus(GTK_WIDGET(c));
    drag_begin(c, x, y, gtk_event_controller_get_current_event_state(GTK_EVENT_CONTROLLER(gesture)));
}

static void on_drag_update(GtkGestureDrag *gesture, double dx, double dy, TwDesignerCanvas *c)
{
    double x, y;
    gtk_gesture_drag_get_start_point(gesture, &x, &y);
    drag_update(c, x + dx, y + dy);
}

static void on_drag_end(GtkGestureDrag *gesture, double dx, double dy, TwDesignerCanvas *c)
{
    /* A press without a move is a click (on_pressed) unless it began on a port. */
    if (fabs(dx) < 3 && fabs(dy) < 3) {
        c->drag = DRAG_NONE;
        redraw(c);
        return;
    }
    on_drag_update(gesture, dx, dy, c);
    drag_end(c);
}

static void on_released(GtkGestureClick *gesture, int n_press, double x, double y, TwDesignerCanvas *c)
{
    GdkModifierType state = gtk_event_controller_get_current_event_state(GTK_EVENT_CONTROLLER(gesture));
    if (c->drag != DRAG_NONE)
        return;
    tw_designer_canvas_click(c, x, y, state);
    double dx, dy;
    to_doc(c, x, y, &dx, &dy);
    if (n_press == 2) /* a double-click opens or closes a nested model */
        tw_designer_canvas_toggle_nested(c, tw_designer_hit_box(c->doc, dx, dy));
}

static void on_pan_begin(GtkGestureDrag *gesture, double x, double y, TwDesignerCanvas *c)
{
    c->pan_x = c->view.ox;
    c->pan_y = c->view.oy;
}

static void on_pan_update(GtkGestureDrag *gesture, double dx, double dy, TwDesignerCanvas *c)
{
    tw_designer_canvas_pan(c, c->pan_x + dx - c->view.ox, c->pan_y + dy - c->view.oy);
}

void tw_designer_canvas_pan(TwDesignerCanvas *c, double dx, double dy)
{
    c->view.ox += dx;
    c->view.oy += dy;
    c->fitted_once = TRUE;
    gtk_widget_queue_draw(GTK_WIDGET(c));
}

/* ---- viewport ------------------------------------------------------------- */
static gboolean zoom_settled(gpointer data)
{
    TwDesignerCanvas *c = data;
    c->zoom_settle = 0;
    c->tiles_pending = TRUE; /* until a frame says otherwise */
    gtk_widget_queue_draw(GTK_WIDGET(c));
    return G_SOURCE_REMOVE;
}

/* Frames meanwhile show the kept image scaled, until the zoom is still
 * for ZOOM_SETTLE_MS (designer_canvas_image.h). */
void tw_designer_canvas_zoom(TwDesignerCanvas *c, double factor, double x, double y)
{
    double zoom = CLAMP(c->view.zoom * factor, 0.01, 4.0);
    c->view.ox = x - (x - c->view.ox) * zoom / c->view.zoom;
    c->view.oy = y - (y - c->view.oy) * zoom / c->view.zoom;
    c->view.zoom = zoom;
    g_clear_handle_id(&c->zoom_settle, g_source_remove);
    c->zoom_settle = g_timeout_add(ZOOM_SETTLE_MS, zoom_settled, c);
    gtk_widget_queue_draw(GTK_WIDGET(c));
}

double tw_designer_canvas_scale(TwDesignerCanvas *c)
{
    return c->view.zoom;
}

/* The whole model in view (readable: but no smaller than a readable
 * scale while the width fits, from the top; a tall model then scrolls). */
static void fit(TwDesignerCanvas *c, gboolean readable)
{
    int w = gtk_widget_get_width(GTK_WIDGET(c)), h = gtk_widget_get_height(GTK_WIDGET(c));
    int n = tw_model_doc_n_layers(c->doc);
    if (w <= 0 || h <= 0 || n == 0)
        return;
    double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;
    for (int i = 0; i < n; i++) {
        double x, y;
        tw_model_doc_node_position(c->doc, i, &x, &y);
        x0 = MIN(x0, x);
        y0 = MIN(y0, y);
        x1 = MAX(x1, x + TW_DESIGNER_BOX_WIDTH);
        y1 = MAX(y1, y + TW_DESIGNER_BOX_HEIGHT);
    }
    double margin = 24;
    double width_zoom = (w - 2 * margin) / (x1 - x0), height_zoom = (h - 2 * margin) / (y1 - y0);
    /* Never larger than life: a small model stays at zoom 1. */
    double zoom = MIN(1.0, MIN(width_zoom, height_zoom));
    if (readable)
        zoom = MAX(zoom, MIN(0.7, width_zoom));
    c->view.zoom = CLAMP(zoom, 0.01, 1.0);
    c->view.ox = w / 2.0 - (x0 + x1) / 2 * c->view.zoom;
    gboolean all_fits = (y1 - y0) * c->view.zoom <= h - 2 * margin;
    c->view.oy = all_fits ? h / 2.0 - (y0 + y1) / 2 * c->view.zoom : margin - y0 * c->view.zoom;
    gtk_widget_queue_draw(GTK_WIDGET(c));
}

void tw_designer_canvas_fit(TwDesignerCanvas *c)
{
    fit(c, FALSE);
}

static gboolean on_scroll(GtkEventControllerScroll *scroll, double dx, double dy, TwDesignerCanvas *c)
{
    GdkModifierType state = gtk_event_controller_get_current_event_state(GTK_EVENT_CONTROLLER(scroll));
    if (state & GDK_CONTROL_MASK) {
        double x = gtk_widget_get_width(GTK_WIDGET(c)) / 2.0, y = gtk_widget_get_height(GTK_WIDGET(c)) / 2.0;
        GdkEvent *event = gtk_event_controller_get_current_event(GTK_EVENT_CONTROLLER(scroll));
        if (event)
            gdk_event_get_position(event, &x, &y);
        tw_designer_canvas_zoom(c, pow(1.1, -dy), x, y);
    } else {
        tw_designer_canvas_pan(c, -dx * 30, -dy * 30);
    }
    c->fitted_once = TRUE;
    return TRUE;
}

/* ---- auto-arrange --------------------------------------------------------- */
typedef struct {
    int n, nedges;
    int *edges;
    double *xy, *heights;
    guint generation;
} ArrangeJob;

static void arrange_job_free(gpointer data)
{
    ArrangeJob *job = data;
    g_free(job->edges);
    g_free(job->xy);
    g_free(job->heights);
    g_free(job);
}

static void arrange_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
    ArrangeJob *job = data;
    tw_designer_arrange(job->n, job->nedges, job->edges, job->heights, job->xy);
    g_task_return_boolean(task, TRUE);
}

static void arrange_done(GObject *source, GAsyncResult *result, gpointer data)
{
    TwDesignerCanvas *c = TW_DESIGNER_CANVAS(source);
    ArrangeJob *job = g_task_get_task_data(G_TASK(result));
    gboolean cancelled = g_cancellable_is_cancelled(g_task_get_cancellable(G_TASK(result)));
    if (!cancelled)
        g_clear_object(&c->arrange);
    /* An edit meanwhile: its document is not the one arranged. */
    if (cancelled || job->generation != c->generation)
        return;
    GError *error = NULL;
    if (!tw_model_doc_set_positions(c->doc, job->xy, &error))
        report(c, "arrange", error);
    tw_designer_canvas_fit(c);
    g_signal_emit(c, signals[ARRANGED], 0);
}

void tw_designer_canvas_arrange(TwDesignerCanvas *c)
{
    if (c->arrange)
        g_cancellable_cancel(c->arrange);
    g_clear_object(&c->arrange);
    ArrangeJob *job = g_new0(ArrangeJob, 1);
    job->n = tw_model_doc_n_layers(c->doc);
    job->generation = c->generation;
    job->xy = g_new(double, 2 * MAX(job->n, 1));
    job->heights = g_new(double, MAX(job->n, 1));
    for (int i = 0; i < job->n; i++)
        job->heights[i] = tw_designer_box_height(c->doc, i);
    for (int i = 0; i < job->n; i++)
        for (int e = 0; e < tw_model_doc_node_ninputs(c->doc, i); e++) {
            int from, port;
            tw_model_doc_node_input(c->doc, i, e, &from, &port);
            job->edges = g_renew(int, job->edges, 2 * (job->nedges + 1));
            job->edges[2 * job->nedges] = from;
            job->edges[2 * job->nedges++ + 1] = i;
        }
    c->arrange = g_cancellable_new();
    GTask *task = g_task_new(c, c->arrange, arrange_done, NULL);
    g_task_set_task_data(task, job, arrange_job_free);
    g_task_run_in_thread(task, arrange_thread);
    g_object_unref(task);
}

gboolean tw_designer_canvas_arranging(TwDesignerCanvas *c)
{
    return c->arrange != NULL;
}

/* ---- drill-down into nested models ------------------------------------------- */
gboolean tw_designer_canvas_edit_nested(TwDesignerCanvas *c, int node)
{
    tw_layer *layer = tw_model_doc_layer(c->doc, node);
    if (!layer || !tw_layer_is_model(layer))
        return FALSE;
    g_signal_emit(c, signals[EDIT_NESTED], 0, node);
    return TRUE;
}

static void on_edit_nested_action(GtkWidget *widget, const char *name, GVariant *parameter)
{
    TwDesignerCanvas *c = TW_DESIGNER_CANVAS(widget);
    tw_designer_canvas_edit_nested(c, c->primary);
}

/* A right-click on a box selects it and offers what applies to it: for
 * now, editing a nested model. */
static void on_context_pressed(GtkGestureClick *gesture, int n_press, double x, double y, TwDesignerCanvas *c)
{
    double dx, dy;
    to_doc(c, x, y, &dx, &dy);
    int box = tw_designer_hit_box(c->doc, dx, dy);
    tw_layer *layer = tw_model_doc_layer(c->doc, box);
    if (!layer || !tw_layer_is_model(layer))
        return;
    tw_designer_canvas_select(c, box);
    GMenu *menu = g_menu_new();
    g_menu_append(menu, "Edit Nested Model", "canvas.edit-nested");
    GtkWidget *popover = gtk_popover_menu_new_from_model(G_MENU_MODEL(menu));
    g_object_unref(menu);
    gtk_widget_set_parent(popover, GTK_WIDGET(c));
    gtk_popover_set_pointing_to(GTK_POPOVER(popover), &(GdkRectangle){(int)x, (int)y, 1, 1});
    gtk_popover_set_has_arrow(GTK_POPOVER(popover), FALSE);
    /* Unparented when it closes, after the action ran. */
    g_signal_connect(popover, "closed", G_CALLBACK(gtk_widget_unparent), NULL);
    gtk_popover_popup(GTK_POPOVER(popover));
}

/* ---- keys ----------------------------------------------------------------- */
static gboolean on_key(GtkEventControllerKey *key, guint keyval, guint keycode, GdkModifierType state,
                       TwDesignerCanvas *c)
{
    gboolean ctrl = (state & GDK_CONTROL_MASK) != 0, alt = (state & GDK_ALT_MASK) != 0;
    gboolean shift = (state & GDK_SHIFT_MASK) != 0;
    switch (keyval) {
    case GDK_KEY_Delete:
    case GDK_KEY_KP_Delete:
    case GDK_KEY_BackSpace:
        tw_designer_canvas_delete_selection(c);
        return TRUE;
    case GDK_KEY_c:
        if (!ctrl)
            return FALSE;
        tw_designer_canvas_copy(c);
        return TRUE;
    case GDK_KEY_v:
        if (!ctrl)
            return FALSE;
        tw_designer_canvas_paste(c);
        return TRUE;
    case GDK_KEY_d:
        if (!ctrl)
            return FALSE;
        tw_designer_canvas_duplicate(c);
        return TRUE;
    case GDK_KEY_a:
        if (!ctrl)
            return FALSE;
        {
            int n = tw_model_doc_n_layers(c->doc);
            int *all = g_new(int, MAX(n, 1));
            for (int i = 0; i < n; i++)
                all[i] = i;
            tw_designer_canvas_select_many(c, all, n);
            g_free(all);
        }
        return TRUE;
    case GDK_KEY_l:
        if (!ctrl)
            return FALSE;
        tw_designer_canvas_arrange(c);
        return TRUE;
    case GDK_KEY_Return:
    case GDK_KEY_KP_Enter:
        if (shift)
            return tw_designer_canvas_edit_nested(c, c->primary);
        return tw_designer_canvas_toggle_nested(c, c->primary);
    case GDK_KEY_Escape:
        g_signal_emit(c, signals[LEAVE_NESTED], 0);
        return TRUE;
    case GDK_KEY_Tab:
    case GDK_KEY_ISO_Left_Tab:
        if (ctrl) /* Ctrl+Tab leaves the canvas, as GTK moves the focus out of a widget that takes Tab */
            return FALSE;
        tw_designer_canvas_follow_edge(c, !(shift || keyval == GDK_KEY_ISO_Left_Tab));
        return TRUE;
    case GDK_KEY_Up:
    case GDK_KEY_Down:
        if (alt)
            return tw_designer_canvas_reorder(c, keyval == GDK_KEY_Up ? -1 : 1), TRUE;
        tw_designer_canvas_nudge(c, 0, keyval == GDK_KEY_Up ? -NUDGE : NUDGE);
        return TRUE;
    case GDK_KEY_Left:
    case GDK_KEY_Right:
        tw_designer_canvas_nudge(c, keyval == GDK_KEY_Left ? -NUDGE : NUDGE, 0);
        return TRUE;
    case GDK_KEY_plus:
    case GDK_KEY_equal:
    case GDK_KEY_KP_Add:
        tw_designer_canvas_zoom(c, 1.25, gtk_widget_get_width(GTK_WIDGET(c)) / 2.0,
                                gtk_widget_get_height(GTK_WIDGET(c)) / 2.0);
        return TRUE;
    case GDK_KEY_minus:
    case GDK_KEY_KP_Subtract:
        tw_designer_canvas_zoom(c, 0.8, gtk_widget_get_width(GTK_WIDGET(c)) / 2.0,
                                gtk_widget_get_height(GTK_WIDGET(c)) / 2.0);
        return TRUE;
    case GDK_KEY_0:
        tw_designer_canvas_fit(c);
        return TRUE;
    default:
        return FALSE;
    }
}

/* ---- drop from the palette ------------------------------------------------ */
static gboolean on_drop(GtkDropTarget *target, const GValue *value, double x, double y, TwDesignerCanvas *c)
{
    if (!G_VALUE_HOLDS_STRING(value))
        return FALSE;
    gtk_widget_grab_focus(GTK_WIDGET(c));
    return tw_designer_canvas_drop_class(c, g_value_get_string(value), x, y);
}

/* ---- geometry for tests --------------------------------------------------- */
void tw_designer_canvas_box_center(TwDesignerCanvas *c, int node, double *x, double *y)
{
    double bx, by;
    tw_model_doc_node_position(c->doc, node, &bx, &by);
    to_widget(c, bx + TW_DESIGNER_BOX_WIDTH / 2, by + TW_DESIGNER_BOX_HEIGHT / 2, x, y);
}

void tw_designer_canvas_port(TwDesignerCanvas *c, int node, gboolean output, int port, double *x, double *y)
{
    double px, py;
    tw_designer_port_point(c->doc, node, output, port, &px, &py);
    to_widget(c, px, py, x, y);
}

void tw_designer_canvas_edge_middle(TwDesignerCanvas *c, int node, int input, double *x, double *y)
{
    GArray *points = g_array_new(FALSE, FALSE, sizeof(double));
    int n = tw_designer_edge_route(c->doc, node, input, NULL, points);
    const double *p = (const double *)points->data;
    /* Halfway along the route. */
    double length = 0, mx = p[0], my = p[1];
    for (int s = 0; s + 1 < n; s++)
        length += hypot(p[2 * s + 2] - p[2 * s], p[2 * s + 3] - p[2 * s + 1]);
    double left = length / 2;
    for (int s = 0; s + 1 < n; s++) {
        double seg = hypot(p[2 * s + 2] - p[2 * s], p[2 * s + 3] - p[2 * s + 1]);
        if (seg >= left) {
            double t = seg > 0 ? left / seg : 0;
            mx = p[2 * s] + t * (p[2 * s + 2] - p[2 * s]);
            my = p[2 * s + 1] + t * (p[2 * s + 3] - p[2 * s + 1]);
            break;
        }
        left -= seg;
    }
    g_array_free(points, TRUE);
    to_widget(c, mx, my, x, y);
}

/* A box's tooltip: its class, name, shape, counts and the whole message. */
static gboolean on_query_tooltip(GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                                 TwDesignerCanvas *c)
{
    double dx, dy;
    to_doc(c, x, y, &dx, &dy);
    int node = tw_designer_hit_box(c->doc, dx, dy);
    if (node < 0)
        return FALSE;
    tw_layer *layer = tw_model_doc_layer(c->doc, node);
    GString *text = g_string_new(NULL);
    g_string_append_printf(text, "%s '%s'", tw_layer_class_shown(layer), tw_layer_name(layer));
    for (int k = 0; k < tw_model_doc_node_noutputs(c->doc, node); k++) {
        const tw_shape *shape = tw_model_doc_node_output(c->doc, node, k);
        char buf[96];
        if (shape)
            g_string_append_printf(text, "\noutput %d: %s", k, tw_shape_format(shape, buf, sizeof buf));
    }
    const tw_layer_info *info = tw_model_doc_info(c->doc, node);
    char t[32], nt[32];
    tw_designer_format_count(info->trainable_params, t, sizeof t);
    tw_designer_format_count(info->non_trainable_params, nt, sizeof nt);
    g_string_append_printf(text, "\ntrainable %s, non-trainable %s", t, nt);
    if (tw_model_doc_node_error(c->doc, node))
        g_string_append_printf(text, "\n%s", tw_model_doc_node_error(c->doc, node));
    char **rows = tw_model_doc_node_expanded(c->doc, node) ? tw_designer_nested_rows(c->doc, node) : NULL;
    for (int k = 0; rows && rows[k]; k++) {
        char **f = g_strsplit(rows[k], "\t", 4);
        g_string_append_printf(text, "\n  %s %s %s%s%s", f[0], f[1] ? f[1] : "", f[1] && f[2] ? f[2] : "",
                               f[1] && f[2] && f[3] && *f[3] ? ", params " : "", f[1] && f[2] && f[3] ? f[3] : "");
        g_strfreev(f);
    }
    g_strfreev(rows);
    gtk_tooltip_set_text(tooltip, text->str);
    g_string_free(text, TRUE);
    return TRUE;
}

/* ---- the widget ----------------------------------------------------------- */
static void on_doc_changed(TwModelDoc *doc, TwDesignerCanvas *c)
{
    c->generation++;
    sync_selection_size(c);
    redraw(c);
}

static void on_doc_loaded(TwModelDoc *doc, GParamSpec *pspec, TwDesignerCanvas *c)
{
    clear_selection(c);
    fit(c, TRUE);
    selection_changed(c);
}

static gboolean draw_more_tiles(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
    TW_DESIGNER_CANVAS(widget)->more_tiles = 0;
    gtk_widget_queue_draw(widget);
    return G_SOURCE_REMOVE;
}

gboolean tw_designer_canvas_image_counts(TwDesignerCanvas *c, tw_designer_image_counts *counts)
{
    if (c->image)
        *counts = tw_designer_image_get_counts(c->image);
    return c->image != NULL;
}

gboolean tw_designer_canvas_settling(TwDesignerCanvas *c)
{
    return c->zoom_settle != 0 || c->tiles_pending;
}

static void tw_designer_canvas_snapshot(GtkWidget *widget, GtkSnapshot *snapshot)
{
    TwDesignerCanvas *c = TW_DESIGNER_CANVAS(widget);
    int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
    if (!c->fitted_once && w > 0 && h > 0) {
        c->fitted_once = TRUE;
        fit(c, TRUE);
    }
    sync_selection_size(c);
    tw_designer_overlay overlay = {
        .selected = (const gboolean *)c->selected->data,
        .edge_node = c->edge_node,
        .edge_input = c->edge_input,
        .hover_target = -1,
    };
    if (c->drag == DRAG_MOVE) {
        overlay.move_dx = c->x1 - c->x0;
        overlay.move_dy = c->y1 - c->y0;
    } else if (c->drag == DRAG_CONNECT || c->drag == DRAG_BAND) {
        overlay.connecting = c->drag == DRAG_CONNECT;
        overlay.banding = c->drag == DRAG_BAND;
        overlay.x0 = c->x0;
        overlay.y0 = c->y0;
        overlay.x1 = c->x1;
        overlay.y1 = c->y1;
        overlay.hover_target = c->drag == DRAG_CONNECT ? connect_target(c) : -1;
    }
    cairo_t *cr = gtk_snapshot_append_cairo(snapshot, &GRAPHENE_RECT_INIT(0, 0, w, h));
    if (c->image && (c->drag == DRAG_NONE || c->drag == DRAG_MINIMAP)) {
        /* The kept image; its content is this widget's changes and the
         * selection (hashed, so that no path that changes it is missed). */
        guint content = c->content * 31u + (guint)c->edge_node * 7u + (guint)c->edge_input;
        for (guint i = 0; i < c->selected->len; i++)
            content = content * 33u + (guint)g_array_index(c->selected, gboolean, i);
        gboolean more = tw_designer_image_paint(c->image, widget, cr, c->doc, &c->view, w, h, content,
                                                c->zoom_settle != 0, &overlay);
        /* A frame's snapshot may not queue another: a tick of the next
         * frame does. */
        c->tiles_pending = more;
        if (more && !c->more_tiles)
            c->more_tiles = gtk_widget_add_tick_callback(widget, draw_more_tiles, NULL, NULL);
        tw_designer_draw_minimap(cr, c->doc, &c->view, w, h);
    } else {
        /* Moving boxes, a new edge or the rubber band: drawn afresh. */
        tw_designer_draw(cr, c->doc, &c->view, w, h, &overlay);
    }
    cairo_destroy(cr);
}

static void tw_designer_canvas_dispose(GObject *object)
{
    TwDesignerCanvas *c = TW_DESIGNER_CANVAS(object);
    if (c->arrange)
        g_cancellable_cancel(c->arrange);
    g_clear_object(&c->arrange);
    g_clear_handle_id(&c->zoom_settle, g_source_remove);
    if (c->more_tiles)
        gtk_widget_remove_tick_callback(GTK_WIDGET(c), c->more_tiles);
    c->more_tiles = 0;
    g_clear_pointer(&c->image, tw_designer_image_free);
    if (c->doc)
        g_signal_handlers_disconnect_by_data(c->doc, c);
    g_clear_object(&c->doc);
    G_OBJECT_CLASS(tw_designer_canvas_parent_class)->dispose(object);
}

static void tw_designer_canvas_finalize(GObject *object)
{
    g_array_unref(TW_DESIGNER_CANVAS(object)->selected);
    G_OBJECT_CLASS(tw_designer_canvas_parent_class)->finalize(object);
}

static void tw_designer_canvas_class_init(TwDesignerCanvasClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    object_class->dispose = tw_designer_canvas_dispose;
    object_class->finalize = tw_designer_canvas_finalize;
    widget_class->snapshot = tw_designer_canvas_snapshot;
    gtk_widget_class_set_css_name(widget_class, "designercanvas");
    signals[SELECTION_CHANGED] = g_signal_new("selection-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                              NULL, NULL, NULL, G_TYPE_NONE, 0);
    signals[ARRANGED] = g_signal_new("arranged", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                     G_TYPE_NONE, 0);
    signals[EDIT_NESTED] = g_signal_new("edit-nested", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                        NULL, G_TYPE_NONE, 1, G_TYPE_INT);
    signals[LEAVE_NESTED] = g_signal_new("leave-nested", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                         NULL, G_TYPE_NONE, 0);
    gtk_widget_class_install_action(widget_class, "canvas.edit-nested", NULL, on_edit_nested_action);
}

static void tw_designer_canvas_init(TwDesignerCanvas *c)
{
    c->selected = g_array_new(FALSE, TRUE, sizeof(gboolean));
    c->primary = -1;
    c->edge_node = -1;
    c->view.zoom = 1.0;
    c->image = tw_designer_image_new();
    GtkWidget *widget = GTK_WIDGET(c);
    gtk_widget_set_focusable(widget, TRUE);
    gtk_widget_set_hexpand(widget, TRUE);
    gtk_widget_set_vexpand(widget, TRUE);
    gtk_widget_set_size_request(widget, 200, 200);

    GtkGesture *drag = gtk_gesture_drag_new();
    gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(drag), GDK_BUTTON_PRIMARY);
    g_signal_connect(drag, "drag-begin", G_CALLBACK(on_drag_begin), c);
    g_signal_connect(drag, "drag-update", G_CALLBACK(on_drag_update), c);
    g_signal_connect(drag, "drag-end", G_CALLBACK(on_drag_end), c);
    gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(drag));

    GtkGesture *click = gtk_gesture_click_new();
    gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(click), GDK_BUTTON_PRIMARY);
    g_signal_connect(click, "released", G_CALLBACK(on_released), c);
    gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(click));

    GtkGesture *context = gtk_gesture_click_new();
    gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(context), GDK_BUTTON_SECONDARY);
    g_signal_connect(context, "pressed", G_CALLBACK(on_context_pressed), c);
    gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(context));

    GtkGesture *pan = gtk_gesture_drag_new();
    gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(pan), GDK_BUTTON_MIDDLE);
    g_signal_connect(pan, "drag-begin", G_CALLBACK(on_pan_begin), c);
    g_signal_connect(pan, "drag-update", G_CALLBACK(on_pan_update), c);
    gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(pan));

    GtkEventController *scroll = gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
    g_signal_connect(scroll, "scroll", G_CALLBACK(on_scroll), c);
    gtk_widget_add_controller(widget, scroll);

    GtkEventController *key = gtk_event_controller_key_new();
    g_signal_connect(key, "key-pressed", G_CALLBACK(on_key), c);
    gtk_widget_add_controller(widget, key);

    gtk_widget_set_has_tooltip(widget, TRUE);
    g_signal_connect(widget, "query-tooltip", G_CALLBACK(on_query_tooltip), c);

    GtkDropTarget *drop = gtk_drop_target_new(G_TYPE_STRING, GDK_ACTION_COPY);
    g_signal_connect(drop, "drop", G_CALLBACK(on_drop), c);
    gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(drop));
}

GtkWidget *tw_designer_canvas_new(TwModelDoc *doc)
{
    TwDesignerCanvas *c = g_object_new(TW_TYPE_DESIGNER_CANVAS, NULL);
    c->doc = g_object_ref(doc);
    g_signal_connect(doc, "changed", G_CALLBACK(on_doc_changed), c);
    g_signal_connect(doc, "notify::path", G_CALLBACK(on_doc_loaded), c);
    sync_selection_size(c);
    return GTK_WIDGET(c);
}
