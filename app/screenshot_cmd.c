/* twb --screenshot (screenshot_cmd.h): an instance of its own opens the
 * window at the requested size; after the frame clock's first after-paint
 * and one more frame (so that what the first frame laid out is drawn too),
 * the window is snapshotted through GtkWidgetPaintable into a render node
 * and drawn by GSK's Cairo renderer into a texture, right in that
 * after-paint (a widget that asks to be drawn again, an animation or new
 * data, drops the window's render node until the next frame), and saved as
 * a PNG from an idle. */
#include "screenshot_cmd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "application.h"
#include "dashboard_view.h"
#include "evaluation_view.h"
#include "graph_view.h"
#include "run_list.h"

/* A window that has drawn nothing by then will not. */
#define FRAME_TIMEOUT_SECONDS 30
/* The dashboard's first data, the graph view's first layout drawn: after
 * that, the picture shows what is there. */
#define DATA_TIMEOUT_SECONDS 10

typedef struct {
    const char *output, *view, *model, *logdb;
    const char *tab;    /* the dashboard's tab, or NULL */
    const char *select; /* "RUN,RUN": the runs checked (the HParams rows selected), or NULL */
    int width, height;
} shot_options;

typedef struct {
    shot_options options;
    GApplication *app;
    TwModelDoc *doc;
    TwWindow *win;
    GdkFrameClock *clock;
    gulong after_paint;
    int frames;
    gboolean refitted; /* fit_window ran */
    guint timeout;
    GtkWidget *waiting_on; /* the dashboard or graph view, while waiting for it to be ready */
    gulong ready_handler;
    guint data_timeout;
    gboolean data_done; /* waited once: no more */
    gboolean selected;  /* --select applied */
    guint eval_poll;    /* waiting for the Evaluation tab's run to load */
    GdkTexture *texture; /* the picture, or NULL and why */
    GError *render_error;
    int width, height;
    int status;
} shot;

__attribute__((format(printf, 1, 2))) static int usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("twb: --screenshot: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'twb --help'.\n", stderr);
    return 2;
}

static void fail(shot *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("twb: --screenshot: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    s->status = 1;
}

/* "1280x800": both from 200 to 8192. */
static gboolean parse_size(const char *text, int *width, int *height)
{
    char *end = NULL;
    long w = strtol(text, &end, 10);
    if (end == text || (*end != 'x' && *end != 'X'))
        return FALSE;
    const char *rest = end + 1;
    long h = strtol(rest, &end, 10);
    if (end == rest || *end != '\0' || w < 200 || h < 200 || w > 8192 || h > 8192)
        return FALSE;
    *width = (int)w;
    *height = (int)h;
    return TRUE;
}

/* The value of "--name VALUE" or "--name=VALUE" at argv[*i], or NULL when
 * argv[*i] is another option. *missing is set when the value is absent. */
static const char *option_value(int argc, char **argv, int *i, const char *name, gboolean *missing)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = TRUE;
        return NULL;
    }
    return argv[++*i];
}

static int parse(int argc, char **argv, shot_options *o)
{
    static const char *const names[] = {"--screenshot", "--view", "--model", "--logdb", "--size", "--tab", "--select"};
    const char **targets[] = {&o->output, &o->view, &o->model, &o->logdb, NULL, &o->tab, &o->select};
    const char *size = NULL;
    for (int i = 0; i < argc; i++) {
        size_t k = 0;
        const char *value = NULL;
        gboolean missing = FALSE;
        for (; k < G_N_ELEMENTS(names) && !value && !missing; k++)
            value = option_value(argc, argv, &i, names[k], &missing);
        if (missing)
            return usage("option '%s' needs a value", argv[i]);
        if (!value)
            return usage(argv[i][0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'", argv[i]);
        if (value[0] == '\0')
            return usage("option '%s' needs a value", names[k - 1]);
        const char **target = k - 1 != 4 ? targets[k - 1] : &size;
        if (*target)
            return usage("option '%s' given twice", names[k - 1]);
        *target = value;
    }
    if (!g_str_has_suffix(o->output, ".png") && !g_str_has_suffix(o->output, ".PNG"))
        return usage("'%s': the screenshot is a PNG file (FILE.png)", o->output);
    if (o->view && strcmp(o->view, "designer") && strcmp(o->view, "dashboard") && strcmp(o->view, "graph"))
        return usage("--view: '%s' is not a view (there are: designer, dashboard, graph)", o->view);
    static const char *const tabs[] = {"scalars", "histograms", "distributions", "images", "text", "hparams",
                                       "evaluation"};
    gboolean known_tab = !o->tab;
    for (size_t t = 0; t < G_N_ELEMENTS(tabs) && !known_tab; t++)
        known_tab = !strcmp(o->tab, tabs[t]);
    if (!known_tab)
        return usage("--tab: '%s' is not a dashboard tab (there are: scalars, histograms, distributions, images, "
                     "text, hparams, evaluation)", o->tab);
    if (size && !parse_size(size, &o->width, &o->height))
        return usage("--size: '%s' is not WIDTHxHEIGHT with both from 200 to 8192", size);
    return 0;
}

static GdkTexture *render_window(GtkWidget *window, int width, int height, GError **error)
{
    GdkPaintable *paintable = gtk_widget_paintable_new(window);
    GtkSnapshot *snapshot = gtk_snapshot_new();
    gdk_paintable_snapshot(paintable, snapshot, width, height);
    GskRenderNode *node = gtk_snapshot_free_to_node(snapshot);
    g_object_unref(paintable);
    if (!node) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "the window drew nothing");
        return NULL;
    }
    GskRenderer *renderer = gsk_cairo_renderer_new();
    GdkTexture *texture = NULL;
    if (gsk_renderer_realize(renderer, NULL, error)) {
        texture = gsk_renderer_render_texture(renderer, node, &GRAPHENE_RECT_INIT(0, 0, width, height));
        gsk_renderer_unrealize(renderer);
    }
    g_object_unref(renderer);
    gsk_render_node_unref(node);
    return texture;
}

static void stop_painting(shot *s)
{
    if (s->after_paint)
        g_signal_handler_disconnect(s->clock, s->after_paint);
    s->after_paint = 0;
    s->frames = 0;
}

static void stop_waiting_for_data(shot *s)
{
    if (s->ready_handler)
        g_signal_handler_disconnect(s->waiting_on, s->ready_handler);
    s->ready_handler = 0;
    if (s->data_timeout)
        g_source_remove(s->data_timeout);
    s->data_timeout = 0;
}

static void stop_waiting(shot *s)
{
    stop_painting(s);
    stop_waiting_for_data(s);
    if (s->timeout)
        g_source_remove(s->timeout);
    s->timeout = 0;
    if (s->eval_poll)
        g_source_remove(s->eval_poll);
    s->eval_poll = 0;
}

static void capture(shot *s)
{
    GtkWidget *window = GTK_WIDGET(s->win);
    s->width = gtk_widget_get_width(window);
    s->height = gtk_widget_get_height(window);
    s->texture = render_window(window, s->width, s->height, &s->render_error);
}

static gboolean take(gpointer data)
{
    shot *s = data;
    GdkTexture *texture = s->texture;
    int width = s->width, height = s->height;
    if (!texture) {
        fail(s, "cannot render the window: %s", s->render_error->message);
        g_clear_error(&s->render_error);
    } else if (!gdk_texture_save_to_png(texture, s->options.output)) {
        fail(s, "cannot write '%s'", s->options.output);
    } else if (width != s->options.width || height != s->options.height) {
        fail(s, "the window is %dx%d, not the %dx%d asked for (the screen or the window's smallest size does not allow it); '%s' shows it", width, height,
             s->options.width, s->options.height, s->options.output);
    }
    g_clear_object(&s->texture);
    g_application_quit(s->app);
    return G_SOURCE_REMOVE;
}

static void on_map(GtkWidget *window, shot *s);
static GtkWidget *find_type(GtkWidget *widget, GType type);

static GtkWidget *find_type(GtkWidget *widget, GType type);

/* A window for the model at the size asked for plus extra. */
static void open_window(shot *s, int extra_width, int extra_height)
{
    s->win = tw_window_new(GTK_APPLICATION(s->app), s->doc);
    gtk_window_set_default_size(GTK_WINDOW(s->win), s->options.width + extra_width,
                                s->options.height + extra_height);
    if (s->options.view)
        tw_window_show_view(s->win, s->options.view);
    if (s->options.logdb)
        tw_window_set_logdb(s->win, s->options.logdb);
    GtkWidget *dashboard = s->options.tab ? find_type(GTK_WIDGET(s->win), TW_TYPE_DASHBOARD_VIEW) : NULL;
    if (dashboard)
        tw_dashboard_view_show_tab(TW_DASHBOARD_VIEW(dashboard), s->options.tab);
    g_signal_connect(s->win, "map", G_CALLBACK(on_map), s);
    gtk_window_present(GTK_WINDOW(s->win));
}

/* Without a compositor, GTK counts the frame around client-side
 * decorations (where resizing grabs) into the default size, and a shown
 * window keeps its size. Once the first frame shows how much the frame
 * takes, a second window opens that much larger. TRUE when it did. */
static gboolean fit_window(shot *s)
{
    GtkWidget *first = GTK_WIDGET(s->win);
    int dx = s->options.width - gtk_widget_get_width(first);
    int dy = s->options.height - gtk_widget_get_height(first);
    s->refitted = TRUE;
    if (dx <= 0 && dy <= 0)
        return FALSE;
    stop_painting(s);
    open_window(s, MAX(dx, 0), MAX(dy, 0));
    gtk_window_destroy(GTK_WINDOW(first));
    return TRUE;
}

static GtkWidget *find_type(GtkWidget *widget, GType type)
{
    if (G_TYPE_CHECK_INSTANCE_TYPE(widget, type))
        return widget;
    for (GtkWidget *c = gtk_widget_get_first_child(widget); c; c = gtk_widget_get_next_sibling(c)) {
        GtkWidget *found = find_type(c, type);
        if (found)
            return found;
    }
    return NULL;
}

/* The view is ready (or will not be in time): two more frames. */
static void data_arrived(shot *s)
{
    stop_waiting_for_data(s);
    s->waiting_on = NULL;
    s->data_done = TRUE;
    s->frames = 0;
    gtk_widget_queue_draw(GTK_WIDGET(s->win));
}

static gboolean on_data_timeout(gpointer data)
{
    shot *s = data;
    s->data_timeout = 0;
    data_arrived(s);
    return G_SOURCE_REMOVE;
}

/* The Dashboard reads its file in a thread, the Graph view traces and lays
 * out its graph in one: wait for the view to be ready (its "ready"). */
static gboolean waiting_for_data(shot *s)
{
    if (s->waiting_on)
        return TRUE;
    const char *name = tw_window_visible_view(s->win);
    GType type = !g_strcmp0(name, "dashboard") ? TW_TYPE_DASHBOARD_VIEW
                 : !g_strcmp0(name, "graph")   ? TW_TYPE_GRAPH_VIEW
                                               : G_TYPE_INVALID;
    if (s->data_done || type == G_TYPE_INVALID)
        return FALSE;
    GtkWidget *view = find_type(GTK_WIDGET(s->win), type);
    gboolean ready = TRUE;
    if (view)
        g_object_get(view, "ready", &ready, NULL);
    if (ready)
        return FALSE;
    s->waiting_on = view;
    s->ready_handler = g_signal_connect_swapped(view, "notify::ready", G_CALLBACK(data_arrived), s);
    s->data_timeout = g_timeout_add_seconds(DATA_TIMEOUT_SECONDS, on_data_timeout, s);
    return TRUE;
}

static gboolean poll_evaluation(gpointer data)
{
    shot *s = data;
    GtkWidget *view = find_type(GTK_WIDGET(s->win), TW_TYPE_EVALUATION_VIEW);
    if (view && tw_evaluation_view_loading(TW_EVALUATION_VIEW(view)))
        return G_SOURCE_CONTINUE;
    s->eval_poll = 0;
    s->frames = 0;
    gtk_widget_queue_draw(GTK_WIDGET(s->win));
    return G_SOURCE_REMOVE;
}

/* --select RUN,RUN once the Dashboard has its runs: exactly those checked
 * (the HParams table selects their rows, the charts draw only them) and
 * the first one's evaluation shown. FALSE, with a message, when a name is
 * not a run of the database. */
static gboolean select_runs(shot *s)
{
    s->selected = TRUE;
    GtkWidget *dashboard = find_type(GTK_WIDGET(s->win), TW_TYPE_DASHBOARD_VIEW);
    GtkWidget *list = dashboard ? find_type(dashboard, TW_TYPE_RUN_LIST) : NULL;
    TwDashboardData *data = dashboard ? tw_dashboard_view_data(TW_DASHBOARD_VIEW(dashboard)) : NULL;
    if (!list || !data) {
        fail(s, "--select: the window has no Dashboard with runs (give --view dashboard --logdb FILE)");
        return FALSE;
    }
    char **names = g_strsplit(s->options.select, ",", -1);
    gint64 *ids = g_new0(gint64, g_strv_length(names) + 1);
    gboolean found_all = TRUE;
    for (int k = 0; names[k] && found_all; k++) {
        found_all = FALSE;
        for (int i = 0; i < tw_dashboard_data_n_runs(data) && !found_all; i++)
            if (!strcmp(tw_dashboard_data_run(data, i)->name, names[k])) {
                ids[k] = tw_dashboard_data_run(data, i)->id;
                found_all = TRUE;
            }
        if (!found_all)
            fail(s, "--select: '%s' is not a run of %s", names[k], s->options.logdb);
    }
    for (int i = 0; found_all && i < tw_dashboard_data_n_runs(data); i++) {
        gint64 id = tw_dashboard_data_run(data, i)->id;
        gboolean wanted = FALSE;
        for (int k = 0; names[k]; k++)
            wanted |= ids[k] == id;
        tw_run_list_set_checked(TW_RUN_LIST(list), id, wanted);
    }
    GtkWidget *evaluation = find_type(dashboard, TW_TYPE_EVALUATION_VIEW);
    if (found_all && evaluation) {
        tw_evaluation_view_show_run(TW_EVALUATION_VIEW(evaluation), ids[0]);
        s->eval_poll = g_timeout_add(50, poll_evaluation, s);
    }
    g_strfreev(names);
    g_free(ids);
    return found_all;
}

/* After the first frame, one more (and the view being ready); after
 * that, the picture (saved outside the frame clock's paint, from an idle). */
static void on_after_paint(GdkFrameClock *clock, shot *s)
{
    if (s->frames == 0 && !s->refitted && fit_window(s))
        return;
    if (++s->frames < 2) {
        gtk_widget_queue_draw(GTK_WIDGET(s->win));
        return;
    }
    if (waiting_for_data(s) || s->eval_poll)
        return;
    if (s->options.select && !s->selected) {
        if (!select_runs(s)) {
            stop_waiting(s);
            g_application_quit(s->app);
            return;
        }
        s->frames = 0;
        s->data_done = FALSE; /* the selected runs' cards read their data */
        gtk_widget_queue_draw(GTK_WIDGET(s->win));
        return;
    }
    stop_waiting(s);
    capture(s);
    g_idle_add(take, s);
}

static void on_map(GtkWidget *window, shot *s)
{
    s->clock = gtk_widget_get_frame_clock(window);
    s->after_paint = g_signal_connect(s->clock, "after-paint", G_CALLBACK(on_after_paint), s);
    gtk_widget_queue_draw(window);
}

static gboolean on_timeout(gpointer data)
{
    shot *s = data;
    s->timeout = 0;
    stop_waiting(s);
    fail(s, "the window drew no complete frame within %d s", FRAME_TIMEOUT_SECONDS);
    g_application_quit(s->app);
    return G_SOURCE_REMOVE;
}

/* Runs before TwbApplication's own activate, which finds this window there. */
static void on_activate(GApplication *app, shot *s)
{
    open_window(s, 0, 0);
    s->timeout = g_timeout_add_seconds(FRAME_TIMEOUT_SECONDS, on_timeout, s);
}

int twb_screenshot_command(int argc, char **argv)
{
    shot s = {.options = {.width = 1280, .height = 800}};
    int status = parse(argc, argv, &s.options);
    if (status)
        return status;
    if (!twb_application_can_open_windows())
        return 1;
    s.doc = tw_model_doc_new();
    GError *error = NULL;
    if (s.options.model && !tw_model_doc_load(s.doc, s.options.model, &error)) {
        fail(&s, "cannot open the model: %s", error->message);
        g_error_free(error);
        g_object_unref(s.doc);
        return 1;
    }
    g_set_application_name("Tensor Workbench");
    s.app = G_APPLICATION(twb_application_new(G_APPLICATION_NON_UNIQUE));
    g_signal_connect(s.app, "activate", G_CALLBACK(on_activate), &s);
    /* Only the program's name: the options are not GApplication's. */
    char *run_argv[] = {"twb", NULL};
    g_application_run(s.app, 1, run_argv);
    stop_waiting(&s);
    g_object_unref(s.app);
    g_object_unref(s.doc);
    return s.status;
}
