/* TwGraphView (see graph_view.h).
 *
 * Every slow step is a GTask: listing the run database's graphs, tracing
 * the designer's model or reading a stored graph (then parsing and laying
 * it out), and laying it out again when a scope opens or closes. Each job
 * carries the view's job number when it started; an answer for an older
 * one is dropped. The designer's model is taken as Keras JSON on the main
 * loop and traced again, a moment after the last edit, while the page is
 * shown (or when it is shown next). */
#include "graph_view.h"

#include <cairo-svg.h>
#include <string.h>

#include <tw/layers.h>

#include "graph_inspector.h"
#include "graph_profile.h"
#include "graph_source.h"

#define GRAPH_CSS "/io/github/twb/Workbench/graph.css"
#define DOC_DEBOUNCE_MS 300
#define ZOOM_STEP 1.25
#define EXPORT_MAX_SIDE 16000 /* pixels: a larger PNG is drawn smaller */
#define UNTIMED_SWATCH -1 /* draw_swatch's data for "not measured" */

struct _TwGraphView {
    GtkWidget parent_instance;
    GtkWidget *box, *sources, *search, *search_status, *note, *stack, *message, *canvas_widget, *inspector;
    GtkWidget *color_box, *color, *legends, *kind_legend, *heat_strip, *heat_min, *heat_max, *untimed_swatch;
    TwGraphCanvas *canvas;
    GtkStringList *source_labels;
    gboolean updating_sources;

    TwModelDoc *doc;
    gulong doc_handler;
    char *logdb;
    GArray *stored; /* tw_stored_graph, the sources after the designer */
    guint source;

    guint job;            /* the job whose answer is awaited; answers of others are dropped */
    gboolean busy;        /* a load or layout is under way */
    gboolean designer_stale;
    guint debounce;
    GCancellable *cancellable;
    int anchor_scope;     /* keep this scope where it was on screen after a layout; -1 */
    double anchor_x, anchor_y;
    int select_after;     /* a graph node to select after a layout; -1 */
    char *search_text;
    int search_at;        /* the last match's place among the matches */
    char *search_label;
    gboolean ready;
    GtkNativeDialog *export_dialog; /* while an export asks where: it goes with the view */
};

enum { PROP_0, PROP_READY, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE(TwGraphView, tw_graph_view, GTK_TYPE_WIDGET)

static void load_css(GtkWidget *widget)
{
    GdkDisplay *display = gtk_widget_get_display(widget);
    if (g_object_get_data(G_OBJECT(display), "tw-graph-css") ||
        !g_resources_get_info(GRAPH_CSS, G_RESOURCE_LOOKUP_FLAGS_NONE, NULL, NULL, NULL))
        return;
    GtkCssProvider *provider = gtk_css_provider_new();
    gtk_css_provider_load_from_resource(provider, GRAPH_CSS);
    gtk_style_context_add_provider_for_display(display, GTK_STYLE_PROVIDER(provider),
                                               GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    g_object_set_data_full(G_OBJECT(display), "tw-graph-css", provider, g_object_unref);
}

static void set_ready(TwGraphView *view, gboolean ready)
{
    if (view->ready == ready)
        return;
    view->ready = ready;
    g_object_notify_by_pspec(G_OBJECT(view), props[PROP_READY]);
}

/* ---- what the page shows ----------------------------------------------------------- */

/* The Colour control is there only for a graph with a profile; the canvas
 * and the legend follow its choice. */
static void apply_color(TwGraphView *view)
{
    const tw_graph_arrangement *a = tw_graph_canvas_arrangement(view->canvas);
    double min_us = 0, max_us = 0;
    gboolean timed = a && a->model->node_us && tw_graph_time_range(a->model, a->graph, &min_us, &max_us);
    gtk_widget_set_visible(view->color_box, timed);
    gboolean heat = timed && gtk_drop_down_get_selected(GTK_DROP_DOWN(view->color)) == TW_GRAPH_COLOR_TIME;
    tw_graph_canvas_set_color_mode(view->canvas, heat ? TW_GRAPH_COLOR_TIME : TW_GRAPH_COLOR_KIND);
    gtk_stack_set_visible_child_name(GTK_STACK(view->legends), heat ? "time" : "kind");
    if (!heat)
        return;
    char text[32];
    gtk_label_set_text(GTK_LABEL(view->heat_min), tw_graph_format_us(min_us, text, sizeof text));
    gtk_label_set_text(GTK_LABEL(view->heat_max), tw_graph_format_us(max_us, text, sizeof text));
}

/* The message line: why the shown graph's profile could not be read. */
static void set_note(TwGraphView *view, const char *text)
{
    gtk_label_set_text(GTK_LABEL(view->note), text ? text : "");
    gtk_widget_set_tooltip_text(view->note, text);
}

static void show_message(TwGraphView *view, const char *text)
{
    view->busy = FALSE;
    gtk_label_set_text(GTK_LABEL(view->message), text);
    gtk_stack_set_visible_child_name(GTK_STACK(view->stack), "message");
    tw_graph_canvas_set_arrangement(view->canvas, NULL);
    apply_color(view);
    set_note(view, NULL);
    set_ready(view, TRUE);
}

/* A job begins: a new number, the older ones' answers dropped. */
static guint begin_job(TwGraphView *view, const char *waiting)
{
    view->busy = TRUE;
    set_ready(view, FALSE);
    if (waiting && !tw_graph_canvas_arrangement(view->canvas)) {
        gtk_label_set_text(GTK_LABEL(view->message), waiting);
        gtk_stack_set_visible_child_name(GTK_STACK(view->stack), "message");
    }
    return ++view->job;
}

static int find_scope_box(const tw_graph_arrangement *a, int scope)
{
    for (int v = 0; v < a->graph->nnodes; v++)
        if (a->graph->nodes[v].is_scope && a->graph->nodes[v].index == scope)
            return v;
    return -1;
}

/* Where a scope is drawn: its box's centre, or its open frame's title. */
static gboolean scope_point(const tw_graph_arrangement *a, int scope, double *x, double *y)
{
    int v = find_scope_box(a, scope);
    if (v >= 0) {
        const tw_layout_box *b = &a->layout->nodes[v];
        *x = b->x + b->width / 2, *y = b->y + b->height / 2;
        return TRUE;
    }
    for (int f = 0; f < a->nframes; f++)
        if (a->frames[f].scope == scope) {
            *x = a->frames[f].x + a->frames[f].width / 2, *y = a->frames[f].y + TW_GRAPH_FRAME_HEADER / 2;
            return TRUE;
        }
    return FALSE;
}

static void center_on_visible(TwGraphView *view, int v)
{
    const tw_layout_box *b = &tw_graph_canvas_arrangement(view->canvas)->layout->nodes[v];
    tw_graph_canvas_center_on(view->canvas, b->x + b->width / 2, b->y + b->height / 2);
}

/* A new arrangement: a new graph is fitted; a rearranged one keeps the
 * toggled scope where it was on screen, or shows the node searched for. */
static void show_arrangement(TwGraphView *view, tw_graph_arrangement *a, gboolean fresh)
{
    view->busy = FALSE;
    tw_graph_canvas_set_arrangement(view->canvas, a);
    gtk_stack_set_visible_child_name(GTK_STACK(view->stack), "graph");
    apply_color(view);
    double x, y;
    if (fresh) {
        set_note(view, a->model->note ? a->model->note : a->model->profile_error);
        tw_graph_canvas_fit(view->canvas);
    } else if (view->anchor_scope >= 0 && scope_point(a, view->anchor_scope, &x, &y)) {
        tw_graph_viewport vp = tw_graph_canvas_viewport(view->canvas);
        tw_graph_canvas_set_viewport(view->canvas, (tw_graph_viewport){vp.scale, x - view->anchor_x / vp.scale,
                                                                       y - view->anchor_y / vp.scale});
    }
    view->anchor_scope = -1;
    if (view->select_after >= 0) {
        int v = tw_graph_arrangement_visible_of(a, view->select_after);
        view->select_after = -1;
        tw_graph_canvas_select(view->canvas, v);
        if (v >= 0)
            center_on_visible(view, v);
    }
    if (tw_graph_canvas_drawn(view->canvas))
        set_ready(view, TRUE);
}

/* ---- jobs -------------------------------------------------------------------------- */

typedef struct {
    guint job;
    char *keras_json;       /* the designer's model, or */
    char *logdb;            /* a stored graph */
    tw_stored_graph stored;
    tw_graph_arrangement *from; /* or a new layout of this one */
    bool *expanded;
} load_job;

static void load_job_free(load_job *j)
{
    g_free(j->keras_json), g_free(j->logdb), g_free(j->stored.run), g_free(j->stored.tag);
    tw_graph_arrangement_unref(j->from);
    g_free(j->expanded);
    g_free(j);
}

static void load_in_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
    load_job *j = data;
    GError *error = NULL;
    tw_graph_arrangement *a = j->from ? tw_graph_arrangement_rearrange(j->from, j->expanded)
                              : j->keras_json ? tw_designer_graph_load(j->keras_json, &error)
                                              : tw_stored_graph_load(j->logdb, &j->stored, &error);
    if (a)
        g_task_return_pointer(task, a, (GDestroyNotify)tw_graph_arrangement_unref);
    else
        g_task_return_error(task, error);
}

static void loaded(GObject *source, GAsyncResult *result, gpointer user_data)
{
    GError *error = NULL;
    tw_graph_arrangement *a = g_task_propagate_pointer(G_TASK(result), &error);
    if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) { /* disposed */
        g_error_free(error);
        return;
    }
    TwGraphView *view = TW_GRAPH_VIEW(source);
    load_job *j = g_task_get_task_data(G_TASK(result));
    if (j->job == view->job) {
        if (a)
            show_arrangement(view, a, j->from == NULL);
        else
            show_message(view, error->message);
    }
    g_clear_error(&error);
    tw_graph_arrangement_unref(a);
}

static void run_job(TwGraphView *view, load_job *j)
{
    GTask *task = g_task_new(view, view->cancellable, loaded, NULL);
    g_task_set_task_data(task, j, (GDestroyNotify)load_job_free);
    g_task_set_return_on_cancel(task, FALSE);
    g_task_run_in_thread(task, load_in_thread);
    g_object_unref(task);
}

/* Layers other than the InputLayer: a model without is not worth a graph. */
static int working_layers(TwModelDoc *doc)
{
    int n = 0;
    for (int i = 0; i < tw_model_doc_n_layers(doc); i++)
        n += strcmp(tw_layer_class_of(tw_model_doc_layer(doc, i))->name, "InputLayer") != 0;
    return n;
}

static void load_designer(TwGraphView *view)
{
    view->designer_stale = FALSE;
    g_clear_handle_id(&view->debounce, g_source_remove);
    if (!view->doc || working_layers(view->doc) == 0) {
        begin_job(view, NULL);
        show_message(view, "The designer's model has no layers yet. Add layers in the Designer (or open a model "
                           "with Open…) and its traced graph appears here. Graphs stored by training "
                           "(twb train --trace) and TensorBoard logs' graphs are listed under Source.");
        return;
    }
    load_job *j = g_new0(load_job, 1);
    j->job = begin_job(view, "Tracing the designer's model…");
    j->keras_json = tw_model_doc_to_json(view->doc);
    run_job(view, j);
}

static void load_stored(TwGraphView *view, const tw_stored_graph *g)
{
    load_job *j = g_new0(load_job, 1);
    j->job = begin_job(view, "Reading the graph…");
    j->logdb = g_strdup(view->logdb);
    j->stored = (tw_stored_graph){g_strdup(g->run), g_strdup(g->tag), g->run_id, g->tag_id};
    run_job(view, j);
}

static void load_source(TwGraphView *view)
{
    tw_graph_canvas_set_arrangement(view->canvas, NULL);
    apply_color(view);
    if (view->source == 0 || !view->stored || view->source > view->stored->len)
        load_designer(view);
    else
        load_stored(view, &g_array_index(view->stored, tw_stored_graph, view->source - 1));
}

/* A new layout of the graph shown with these scopes open (taken). */
static void rearrange(TwGraphView *view, bool *expanded)
{
    load_job *j = g_new0(load_job, 1);
    j->job = begin_job(view, NULL);
    j->from = tw_graph_arrangement_ref((tw_graph_arrangement *)tw_graph_canvas_arrangement(view->canvas));
    j->expanded = expanded;
    run_job(view, j);
}

/* ---- the run database's graphs ------------------------------------------------------- */

static void list_in_thread(GTask *task, gpointer source, gpointer logdb, GCancellable *cancellable)
{
    GError *error = NULL;
    GArray *stored = tw_stored_graphs_list(logdb, &error);
    if (stored)
        g_task_return_pointer(task, stored, (GDestroyNotify)g_array_unref);
    else
        g_task_return_error(task, error);
}

static void set_sources(TwGraphView *view, GArray *stored)
{
    char *current = view->source ? tw_graph_view_source_label(view, view->source) : NULL;
    if (view->stored)
        g_array_unref(view->stored);
    view->stored = stored;
    guint n = g_list_model_get_n_items(G_LIST_MODEL(view->source_labels)), selected = 0;
    char **labels = g_new0(char *, stored->len + 2);
    labels[0] = g_strdup("Designer model");
    for (guint i = 0; i < stored->len; i++) {
        labels[i + 1] = tw_stored_graph_label(&g_array_index(stored, tw_stored_graph, i));
        if (!g_strcmp0(labels[i + 1], current))
            selected = i + 1;
    }
    view->updating_sources = TRUE;
    gtk_string_list_splice(view->source_labels, 0, n, (const char *const *)labels);
    gtk_drop_down_set_selected(GTK_DROP_DOWN(view->sources), selected);
    view->updating_sources = FALSE;
    gboolean reload = selected != view->source; /* also when the graph shown is gone */
    view->source = selected;
    if (reload)
        load_source(view);
    g_strfreev(labels);
    g_free(current);
}

static void listed(GObject *source, GAsyncResult *result, gpointer logdb)
{
    GError *error = NULL;
    GArray *stored = g_task_propagate_pointer(G_TASK(result), &error);
    if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        g_error_free(error);
        return;
    }
    TwGraphView *view = TW_GRAPH_VIEW(source);
    if (!g_strcmp0(view->logdb, g_task_get_task_data(G_TASK(result)))) {
        gtk_widget_set_tooltip_text(view->sources, error ? error->message : NULL);
        set_sources(view, stored ? stored : g_array_new(FALSE, TRUE, sizeof(tw_stored_graph)));
        stored = NULL;
    }
    if (stored)
        g_array_unref(stored);
    g_clear_error(&error);
}

static void list_stored(TwGraphView *view)
{
    GTask *task = g_task_new(view, view->cancellable, listed, NULL);
    g_task_set_task_data(task, g_strdup(view->logdb), g_free);
    g_task_run_in_thread(task, list_in_thread);
    g_object_unref(task);
}

/* ---- the toolbar ------------------------------------------------------------------------ */

static void on_source_selected(GtkDropDown *drop_down, GParamSpec *pspec, TwGraphView *view)
{
    guint selected = gtk_drop_down_get_selected(drop_down);
    if (view->updating_sources || selected == GTK_INVALID_LIST_POSITION || selected == view->source)
        return;
    view->source = selected;
    load_source(view);
}

static void on_color_selected(GtkDropDown *drop_down, GParamSpec *pspec, TwGraphView *view)
{
    apply_color(view);
}

static void zoom_by(TwGraphView *view, double factor)
{
    GtkWidget *c = view->canvas_widget;
    tw_graph_canvas_zoom(view->canvas, factor, gtk_widget_get_width(c) / 2.0, gtk_widget_get_height(c) / 2.0);
}

static void on_zoom_in(GtkButton *button, TwGraphView *view)
{
    zoom_by(view, ZOOM_STEP);
}

static void on_zoom_out(GtkButton *button, TwGraphView *view)
{
    zoom_by(view, 1 / ZOOM_STEP);
}

static void on_fit(GtkButton *button, TwGraphView *view)
{
    tw_graph_canvas_fit(view->canvas);
}

static void on_search_activate(GtkSearchEntry *entry, TwGraphView *view)
{
    tw_graph_view_find_next(view, gtk_editable_get_text(GTK_EDITABLE(entry)));
}

static void on_search_changed(GtkSearchEntry *entry, TwGraphView *view)
{
    if (!*gtk_editable_get_text(GTK_EDITABLE(entry)))
        gtk_label_set_text(GTK_LABEL(view->search_status), "");
}

static void export_response(GtkNativeDialog *dialog, int response, TwGraphView *view)
{
    if (response == GTK_RESPONSE_ACCEPT) {
        GFile *file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
        char *path = g_file_get_path(file);
        gboolean svg = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(dialog), "tw-svg"));
        GError *error = NULL;
        gboolean ok = path && (svg ? tw_graph_view_export_svg(view, path, &error)
                                   : tw_graph_view_export_png(view, path, &error));
        char *note = ok ? g_strdup_printf("Saved %s", path)
                        : g_strdup_printf("Not saved: %s", error ? error->message : "not a local file");
        gtk_label_set_text(GTK_LABEL(view->note), note);
        g_free(note), g_free(path);
        g_clear_error(&error);
        g_object_unref(file);
    }
    gtk_native_dialog_destroy(dialog);
    g_clear_object(&view->export_dialog);
}

static void drop_export_dialog(TwGraphView *view)
{
    if (view->export_dialog)
        gtk_native_dialog_destroy(view->export_dialog);
    g_clear_object(&view->export_dialog);
}

static void export_ask(TwGraphView *view, gboolean svg)
{
    drop_export_dialog(view);
    GtkNative *native = gtk_widget_get_native(GTK_WIDGET(view));
    GtkFileChooserNative *dialog = gtk_file_chooser_native_new(svg ? "Export the Graph as SVG" : "Export the Graph as PNG",
                                                               GTK_IS_WINDOW(native) ? GTK_WINDOW(native) : NULL,
                                                               GTK_FILE_CHOOSER_ACTION_SAVE, "_Export", "_Cancel");
    gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(dialog), svg ? "graph.svg" : "graph.png");
    g_object_set_data(G_OBJECT(dialog), "tw-svg", GINT_TO_POINTER(svg));
    g_signal_connect(dialog, "response", G_CALLBACK(export_response), view);
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(dialog), TRUE);
    view->export_dialog = GTK_NATIVE_DIALOG(dialog);
    gtk_native_dialog_show(view->export_dialog);
}

static void on_export_png(GtkButton *button, TwGraphView *view)
{
    export_ask(view, FALSE);
}

static void on_export_svg(GtkButton *button, TwGraphView *view)
{
    export_ask(view, TRUE);
}

/* ---- the legend ------------------------------------------------------------------------- */

static void draw_swatch(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer kind)
{
    GdkRGBA fg;
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    gtk_style_context_get_color(gtk_widget_get_style_context(GTK_WIDGET(area)), &fg);
    G_GNUC_END_IGNORE_DEPRECATIONS
    gboolean dark = 0.299 * fg.red + 0.587 * fg.green + 0.114 * fg.blue > 0.5;
    int k = GPOINTER_TO_INT(kind);
    tw_rgb c = k == UNTIMED_SWATCH ? tw_graph_untimed_color(dark) : tw_graph_kind_color(k, dark);
    cairo_rectangle(cr, 0.5, 0.5, width - 1, height - 1);
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    cairo_fill_preserve(cr);
    cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.5);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
}

static GtkWidget *swatch_setup(GtkWidget *swatch, int kind)
{
    gtk_drawing_area_set_content_width(GTK_DRAWING_AREA(swatch), 12);
    gtk_drawing_area_set_content_height(GTK_DRAWING_AREA(swatch), 12);
    gtk_widget_set_valign(swatch, GTK_ALIGN_CENTER);
    gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(swatch), draw_swatch, GINT_TO_POINTER(kind), NULL);
    return swatch;
}

/* The heat scale from the fastest box's time (left) to the slowest's. */
static void draw_heat_strip(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
    for (int x = 0; x < width; x++) {
        tw_rgb c = tw_graph_heat_color(width > 1 ? x / (double)(width - 1) : 1);
        cairo_set_source_rgb(cr, c.r, c.g, c.b);
        cairo_rectangle(cr, x, 0, 1, height);
        cairo_fill(cr);
    }
}

/* The template's legends: the op kinds' swatches, the heat scale's drawing. */
static void fill_legends(TwGraphView *view)
{
    static const struct { tw_op_kind kind; const char *label; } items[] = {
        {TW_OP_KIND_LINEAR, "matmul, conv"}, {TW_OP_KIND_ELEMENTWISE, "elementwise"},
        {TW_OP_KIND_REDUCTION, "reduction, pooling, softmax"}, {TW_OP_KIND_SHAPE, "shape, copy"},
        {TW_OP_KIND_SOURCE, "input, output, variable, constant"}, {TW_OP_KIND_SCOPE, "closed scope (layer)"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(items); i++) {
        gtk_box_append(GTK_BOX(view->kind_legend), swatch_setup(gtk_drawing_area_new(), items[i].kind));
        gtk_box_append(GTK_BOX(view->kind_legend), gtk_label_new(items[i].label));
    }
    swatch_setup(view->untimed_swatch, UNTIMED_SWATCH);
    gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(view->heat_strip), draw_heat_strip, NULL, NULL);
}

/* ---- selection, scopes, search ------------------------------------------------------------ */

static void update_highlight(TwGraphView *view)
{
    const tw_graph_arrangement *a = tw_graph_canvas_arrangement(view->canvas);
    int selected = tw_graph_canvas_selected(view->canvas);
    gboolean trace = tw_graph_inspector_trace_inputs(TW_GRAPH_INSPECTOR(view->inspector));
    if (a && selected >= 0 && trace)
        tw_graph_canvas_set_highlighted(view->canvas, tw_graph_dependencies(a->graph, selected));
    else if (tw_graph_canvas_highlighted(view->canvas))
        tw_graph_canvas_set_highlighted(view->canvas, NULL);
}

static void on_selection_changed(TwGraphCanvas *canvas, TwGraphView *view)
{
    tw_graph_inspector_show(TW_GRAPH_INSPECTOR(view->inspector), tw_graph_canvas_arrangement(canvas),
                            tw_graph_canvas_selected(canvas));
    update_highlight(view);
}

static void on_trace_inputs(GObject *inspector, GParamSpec *pspec, TwGraphView *view)
{
    update_highlight(view);
}

static void on_node_activated(TwGraphInspector *inspector, int node, TwGraphView *view)
{
    tw_graph_view_select_node(view, node);
}

static void on_scope_toggled(TwGraphCanvas *canvas, int scope, TwGraphView *view)
{
    tw_graph_view_toggle_scope(view, scope);
}

static void on_canvas_drawn(TwGraphCanvas *canvas, TwGraphView *view)
{
    if (!view->busy && tw_graph_canvas_arrangement(canvas))
        set_ready(view, TRUE);
}

void tw_graph_view_toggle_scope(TwGraphView *view, int scope)
{
    const tw_graph_arrangement *a = tw_graph_canvas_arrangement(view->canvas);
    if (!a || scope <= 0 || scope >= a->model->nscopes)
        return;
    double x, y;
    if (scope_point(a, scope, &x, &y)) {
        tw_graph_viewport vp = tw_graph_canvas_viewport(view->canvas);
        view->anchor_scope = scope;
        view->anchor_x = (x - vp.origin_x) * vp.scale, view->anchor_y = (y - vp.origin_y) * vp.scale;
    }
    int selected = tw_graph_canvas_selected(view->canvas);
    if (selected >= 0 && !a->graph->nodes[selected].is_scope)
        view->select_after = a->graph->nodes[selected].index; /* the same op, wherever it lands */
    bool *expanded = g_memdup2(a->expanded, sizeof(bool) * (size_t)a->model->nscopes);
    expanded[scope] = !expanded[scope];
    rearrange(view, expanded);
}

void tw_graph_view_select_node(TwGraphView *view, int node)
{
    const tw_graph_arrangement *a = tw_graph_canvas_arrangement(view->canvas);
    if (!a || node < 0 || node >= a->model->nnodes)
        return;
    /* A tucked parameter is shown by the op it feeds. */
    int target = node;
    for (int i = node + 1; a->graph->of_node[node] < 0 && i < a->model->nnodes && target == node; i++)
        for (int k = 0; k < a->model->nodes[i].ninputs; k++)
            if (a->model->nodes[i].input_node[k] == node)
                target = i;
    int v = a->graph->of_node[target];
    if (v >= 0 && !a->graph->nodes[v].is_scope) {
        tw_graph_canvas_select(view->canvas, v);
        center_on_visible(view, v);
        return;
    }
    bool *expanded = g_memdup2(a->expanded, sizeof(bool) * (size_t)a->model->nscopes);
    for (int s = a->model->nodes[target].scope_index; s > 0; s = a->model->scopes[s].parent)
        expanded[s] = true;
    view->select_after = target;
    rearrange(view, expanded);
}

const char *tw_graph_view_find_next(TwGraphView *view, const char *text)
{
    const tw_graph_arrangement *a = tw_graph_canvas_arrangement(view->canvas);
    g_free(view->search_label);
    if (!a || !text || !*text) {
        view->search_label = g_strdup(a ? "" : "No graph");
        gtk_label_set_text(GTK_LABEL(view->search_status), view->search_label);
        return view->search_label;
    }
    char *needle = g_utf8_casefold(text, -1);
    GArray *matches = g_array_new(FALSE, FALSE, sizeof(int));
    for (int i = 0; i < a->model->nnodes; i++) {
        char *name = g_utf8_casefold(a->model->nodes[i].name, -1), *op = g_utf8_casefold(a->model->nodes[i].op, -1);
        if (strstr(name, needle) || strstr(op, needle))
            g_array_append_val(matches, i);
        g_free(name), g_free(op);
    }
    if (g_strcmp0(view->search_text, text)) {
        g_free(view->search_text);
        view->search_text = g_strdup(text);
        view->search_at = -1;
    }
    if (matches->len == 0) {
        view->search_label = g_strdup("No match");
    } else {
        view->search_at = (view->search_at + 1) % (int)matches->len;
        view->search_label = g_strdup_printf("%d of %u", view->search_at + 1, matches->len);
        tw_graph_view_select_node(view, g_array_index(matches, int, view->search_at));
    }
    gtk_label_set_text(GTK_LABEL(view->search_status), view->search_label);
    g_array_unref(matches);
    g_free(needle);
    return view->search_label;
}

/* ---- exports --------------------------------------------------------------------------------- */

static gboolean export_graph(TwGraphView *view, const char *path, gboolean svg, GError **error)
{
    const tw_graph_arrangement *a = tw_graph_canvas_arrangement(view->canvas);
    if (!a) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: there is no graph to export", path);
        return FALSE;
    }
    double scale = svg ? 1 : MIN(1.0, EXPORT_MAX_SIDE / MAX(a->layout->width, a->layout->height));
    int width = (int)(a->layout->width * scale + 0.5), height = (int)(a->layout->height * scale + 0.5);
    cairo_surface_t *surface = svg ? cairo_svg_surface_create(path, width, height)
                                   : cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
    cairo_t *cr = cairo_create(surface);
    tw_graph_scene scene = tw_graph_arrangement_scene(a, tw_graph_canvas_selected(view->canvas),
                                                      tw_graph_canvas_highlighted(view->canvas));
    scene.color_by = tw_graph_canvas_color_mode(view->canvas);
    tw_graph_viewport vp = {scale, 0, 0};
    tw_graph_render(cr, &scene, &vp, width, height, false);
    cairo_destroy(cr);
    cairo_status_t status = svg ? (cairo_surface_finish(surface), cairo_surface_status(surface))
                                : cairo_surface_write_to_png(surface, path);
    cairo_surface_destroy(surface);
    if (status != CAIRO_STATUS_SUCCESS) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: %s", path, cairo_status_to_string(status));
        return FALSE;
    }
    return TRUE;
}

gboolean tw_graph_view_export_png(TwGraphView *view, const char *path, GError **error)
{
    return export_graph(view, path, FALSE, error);
}

gboolean tw_graph_view_export_svg(TwGraphView *view, const char *path, GError **error)
{
    return export_graph(view, path, TRUE, error);
}

/* ---- the designer's document ------------------------------------------------------------------ */

static gboolean on_debounced(gpointer data)
{
    TwGraphView *view = data;
    view->debounce = 0;
    load_designer(view);
    return G_SOURCE_REMOVE;
}

static void on_doc_changed(TwGraphView *view)
{
    if (view->source != 0)
        return;
    if (!gtk_widget_get_mapped(GTK_WIDGET(view))) {
        view->designer_stale = TRUE;
        return;
    }
    g_clear_handle_id(&view->debounce, g_source_remove);
    view->debounce = g_timeout_add(DOC_DEBOUNCE_MS, on_debounced, view);
}

void tw_graph_view_set_doc(TwGraphView *view, TwModelDoc *doc)
{
    if (view->doc)
        g_clear_signal_handler(&view->doc_handler, view->doc);
    g_set_object(&view->doc, doc);
    if (doc)
        view->doc_handler = g_signal_connect_swapped(doc, "changed", G_CALLBACK(on_doc_changed), view);
    view->designer_stale = TRUE;
    if (view->source == 0 && gtk_widget_get_mapped(GTK_WIDGET(view)))
        load_designer(view);
}

void tw_graph_view_set_logdb(TwGraphView *view, const char *path)
{
    if (!g_strcmp0(view->logdb, path))
        return;
    g_free(view->logdb);
    view->logdb = g_strdup(path);
    list_stored(view);
}

/* ---- the widget ------------------------------------------------------------------------------- */

/* Shown: the designer's model as it is now, and the run database's graphs. */
static void tw_graph_view_map(GtkWidget *widget)
{
    GTK_WIDGET_CLASS(tw_graph_view_parent_class)->map(widget);
    TwGraphView *view = TW_GRAPH_VIEW(widget);
    if (view->source == 0 && view->designer_stale)
        load_designer(view);
    if (view->logdb)
        list_stored(view);
}

static void tw_graph_view_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    if (id == PROP_READY)
        g_value_set_boolean(value, TW_GRAPH_VIEW(object)->ready);
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
}

static void tw_graph_view_dispose(GObject *object)
{
    TwGraphView *view = TW_GRAPH_VIEW(object);
    g_cancellable_cancel(view->cancellable);
    g_clear_handle_id(&view->debounce, g_source_remove);
    drop_export_dialog(view);
    if (view->doc)
        g_clear_signal_handler(&view->doc_handler, view->doc);
    g_clear_object(&view->doc);
    g_clear_pointer(&view->box, gtk_widget_unparent);
    gtk_widget_dispose_template(GTK_WIDGET(view), TW_TYPE_GRAPH_VIEW);
    G_OBJECT_CLASS(tw_graph_view_parent_class)->dispose(object);
}

static void tw_graph_view_finalize(GObject *object)
{
    TwGraphView *view = TW_GRAPH_VIEW(object);
    g_clear_object(&view->cancellable);
    if (view->stored)
        g_array_unref(view->stored);
    g_free(view->logdb), g_free(view->search_text), g_free(view->search_label);
    G_OBJECT_CLASS(tw_graph_view_parent_class)->finalize(object);
}

static void tw_graph_view_class_init(TwGraphViewClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    object_class->dispose = tw_graph_view_dispose;
    object_class->finalize = tw_graph_view_finalize;
    object_class->get_property = tw_graph_view_get_property;
    widget_class->map = tw_graph_view_map;
    props[PROP_READY] = g_param_spec_boolean("ready", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(object_class, N_PROPS, props);
    gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
    gtk_widget_class_set_css_name(widget_class, "graphview");

    g_type_ensure(TW_TYPE_GRAPH_CANVAS);
    g_type_ensure(TW_TYPE_GRAPH_INSPECTOR);
    gtk_widget_class_set_template_from_resource(widget_class, "/io/github/twb/Workbench/graph_view.ui");
#define BIND(field) gtk_widget_class_bind_template_child(widget_class, TwGraphView, field)
    BIND(box);
    BIND(sources);
    BIND(source_labels);
    BIND(color_box);
    BIND(color);
    BIND(search);
    BIND(search_status);
    BIND(note);
    BIND(stack);
    BIND(message);
    BIND(canvas_widget);
    BIND(legends);
    BIND(kind_legend);
    BIND(heat_min);
    BIND(heat_strip);
    BIND(heat_max);
    BIND(untimed_swatch);
    BIND(inspector);
#undef BIND
    gtk_widget_class_bind_template_callback(widget_class, on_source_selected);
    gtk_widget_class_bind_template_callback(widget_class, on_color_selected);
    gtk_widget_class_bind_template_callback(widget_class, on_search_activate);
    gtk_widget_class_bind_template_callback(widget_class, on_search_changed);
    gtk_widget_class_bind_template_callback(widget_class, on_zoom_out);
    gtk_widget_class_bind_template_callback(widget_class, on_zoom_in);
    gtk_widget_class_bind_template_callback(widget_class, on_fit);
    gtk_widget_class_bind_template_callback(widget_class, on_export_png);
    gtk_widget_class_bind_template_callback(widget_class, on_export_svg);
    gtk_widget_class_bind_template_callback(widget_class, on_selection_changed);
    gtk_widget_class_bind_template_callback(widget_class, on_scope_toggled);
    gtk_widget_class_bind_template_callback(widget_class, on_canvas_drawn);
    gtk_widget_class_bind_template_callback(widget_class, on_trace_inputs);
    gtk_widget_class_bind_template_callback(widget_class, on_node_activated);
}

static void tw_graph_view_init(TwGraphView *view)
{
    view->cancellable = g_cancellable_new();
    view->anchor_scope = view->select_after = -1;
    view->designer_stale = TRUE;
    gtk_widget_init_template(GTK_WIDGET(view));
    view->canvas = TW_GRAPH_CANVAS(view->canvas_widget);
    fill_legends(view);
    load_css(GTK_WIDGET(view));
}

GtkWidget *tw_graph_view_new(TwModelDoc *doc)
{
    TwGraphView *view = g_object_new(TW_TYPE_GRAPH_VIEW, NULL);
    if (doc)
        tw_graph_view_set_doc(view, doc);
    return GTK_WIDGET(view);
}

guint tw_graph_view_n_sources(TwGraphView *view)
{
    return g_list_model_get_n_items(G_LIST_MODEL(view->source_labels));
}

char *tw_graph_view_source_label(TwGraphView *view, guint index)
{
    return index < tw_graph_view_n_sources(view) ? g_strdup(gtk_string_list_get_string(view->source_labels, index))
                                                 : NULL;
}

void tw_graph_view_select_source(TwGraphView *view, guint index)
{
    gtk_drop_down_set_selected(GTK_DROP_DOWN(view->sources), index);
}

gboolean tw_graph_view_ready(TwGraphView *view)
{
    return view->ready;
}

const char *tw_graph_view_message(TwGraphView *view)
{
    if (view->busy || g_strcmp0(gtk_stack_get_visible_child_name(GTK_STACK(view->stack)), "message"))
        return NULL;
    return gtk_label_get_text(GTK_LABEL(view->message));
}

TwGraphCanvas *tw_graph_view_canvas(TwGraphView *view)
{
    return view->canvas;
}

GtkWidget *tw_graph_view_inspector(TwGraphView *view)
{
    return view->inspector;
}

GtkWidget *tw_graph_view_color_control(TwGraphView *view)
{
    return view->color;
}

const char *tw_graph_view_note(TwGraphView *view)
{
    return gtk_label_get_text(GTK_LABEL(view->note));
}
