/* The designer's canvas in a window under Xvfb, driven through the same
 * actions its gestures and keys run (tw_designer_canvas_drag, _click,
 * _drop_class, ...; real keys through xdotool): a residual block built by
 * connecting ports, a layer inserted on an edge, an edge deleted and the
 * error shown, undo and redo restoring exact documents, a block copied and
 * pasted with its inner edge, keys, a Sequential model read as a column,
 * the minimap, a drawn graph saved and trained by `twb train`, and every
 * corpus file opened and saved unchanged. */
#include <gtk/gtk.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include <tw/engine.h>
#include <tw/model_file.h>

#include "designer_canvas.h"
#include "designer_view.h"
#include "gui_helpers.h"
#include "ui_keys.h"

typedef struct {
    TwModelDoc *doc;
    GtkWidget *window;
    TwDesignerView *view;
    TwDesignerCanvas *canvas;
} Fixture;

static void fixture_setup(Fixture *f, gconstpointer data)
{
    designer_window_open(1200, 800, &f->doc, &f->window, &f->view);
    f->canvas = TW_DESIGNER_CANVAS(tw_designer_view_canvas(f->view));
    /* Until the canvas has its size and first frame. */
    gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
    while (gtk_widget_get_height(GTK_WIDGET(f->canvas)) < 300 && g_get_monotonic_time() < end)
        g_main_context_iteration(NULL, TRUE);
    drain();
    g_assert_cmpint(gtk_widget_get_height(GTK_WIDGET(f->canvas)), >=, 300);
}

static void fixture_teardown(Fixture *f, gconstpointer data)
{
    designer_window_close(f->window, f->doc);
}

static const char *class_at(Fixture *f, int node)
{
    return tw_layer_class_of(tw_model_doc_layer(f->doc, node))->name;
}

static char *shape_at(Fixture *f, int node)
{
    const tw_shape *shape = tw_model_doc_node_output(f->doc, node, 0);
    char buf[96] = "unknown";
    if (shape)
        tw_shape_format(shape, buf, sizeof buf);
    return g_strdup(buf);
}

static void assert_shape(Fixture *f, int node, const char *expected)
{
    char *shape = shape_at(f, node);
    g_assert_cmpstr(shape, ==, expected);
    g_free(shape);
}

/* Drag from node's output port onto to's box, as the pointer does. */
static void connect(Fixture *f, int from, int to)
{
    double x0, y0, x1, y1;
    tw_designer_canvas_port(f->canvas, from, TRUE, 0, &x0, &y0);
    tw_designer_canvas_box_center(f->canvas, to, &x1, &y1);
    int before = tw_model_doc_node_ninputs(f->doc, to);
    tw_designer_canvas_drag(f->canvas, x0, y0, x1, y1, 0);
    g_assert_cmpint(tw_model_doc_node_ninputs(f->doc, to), ==, before + 1);
}

/* A palette class dropped (dx, dy) widget pixels from node's centre. */
static int drop_near(Fixture *f, const char *class_name, int node, double dx, double dy)
{
    double x, y;
    tw_designer_canvas_box_center(f->canvas, node, &x, &y);
    int before = tw_model_doc_n_layers(f->doc);
    g_assert_true(tw_designer_canvas_drop_class(f->canvas, class_name, x + dx, y + dy));
    g_assert_cmpint(tw_model_doc_n_layers(f->doc), ==, before + 1);
    g_assert_cmpint(tw_designer_canvas_primary(f->canvas), ==, before);
    return before;
}

static void set(Fixture *f, int node, const char *key, const char *text)
{
    GError *error = NULL;
    must(tw_model_doc_set_param(f->doc, node, key, text, &error), error);
}

/* input (8, 8, 4) -> conv (4 filters, same) -> add(conv, input): nodes 0, 1, 2. */
static void residual_block(Fixture *f)
{
    GError *error = NULL;
    must(tw_model_doc_set_input_shape(f->doc, 0, "8,8,4", &error), error);
    double s = tw_designer_canvas_scale(f->canvas);
    int conv = drop_near(f, "Conv2D", 0, 0, 110 * s);
    g_assert_nonnull(tw_model_doc_node_error(f->doc, conv)); /* nothing feeds it yet */
    g_assert_nonnull(strstr(tw_model_doc_node_error(f->doc, conv), "dangling input"));
    set(f, conv, "filters", "4");
    set(f, conv, "kernel_size", "3,3");
    set(f, conv, "padding", "same");
    int add = drop_near(f, "Add", 0, 260 * s, 230 * s);
    connect(f, 0, conv);
    connect(f, conv, add);
    connect(f, 0, add);
}

static void test_residual_block(Fixture *f, gconstpointer data)
{
    residual_block(f);
    g_assert_cmpstr(class_at(f, 1), ==, "Conv2D");
    g_assert_cmpstr(class_at(f, 2), ==, "Add");
    g_assert_true(tw_model_doc_is_graph(f->doc));
    g_assert_cmpint(tw_model_doc_node_ninputs(f->doc, 2), ==, 2);
    g_assert_cmpint(tw_model_doc_error_index(f->doc), ==, -1);
    g_assert_null(tw_model_doc_error(f->doc));
    assert_shape(f, 2, "(None, 8, 8, 4)");
    g_assert_cmpint(tw_model_doc_info(f->doc, 1)->trainable_params, ==, 3 * 3 * 4 * 4 + 4);
    int64_t trainable;
    tw_model_doc_totals(f->doc, &trainable, NULL);
    g_assert_cmpint(trainable, ==, 148);
    /* A merge takes more inputs than two: a third port is free; a Conv2D
     * takes one, so a second edge into it is refused. */
    g_assert_cmpint(tw_model_doc_node_max_inputs(f->doc, 2), >, 2);
    GError *error = NULL;
    g_assert_false(tw_model_doc_connect(f->doc, 0, 0, 1, &error));
    g_assert_nonnull(strstr(error->message, "takes one input"));
    g_clear_error(&error);
    /* Nor may an edge close a cycle. */
    g_assert_false(tw_model_doc_connect(f->doc, 2, 0, 2, &error));
    g_clear_error(&error);

    /* The model is Functional and what a save writes reads back the same. */
    tw_model *model = tw_model_doc_model(f->doc);
    g_assert_nonnull(model);
    g_assert_true(tw_layer_is_functional(model));
    char *json = tw_model_doc_to_json(f->doc);
    g_assert_nonnull(strstr(json, "\"class_name\": \"Functional\""));
    g_assert_nonnull(strstr(json, "\"twb_designer\""));
    TwModelDoc *again = tw_model_doc_new();
    must(tw_model_doc_load_json(again, json, "residual.json", &error), error);
    char *back = tw_model_doc_to_json(again);
    g_assert_cmpstr(back, ==, json);
    g_assert_true(tw_model_doc_has_user_positions(again));
    g_free(back);
    g_free(json);
    g_object_unref(again);
}

static void test_insert_on_edge(Fixture *f, gconstpointer data)
{
    /* A chain: the new layer takes its place in the list. */
    g_assert_true(tw_designer_canvas_append_class(f->canvas, "Flatten"));
    g_assert_true(tw_designer_canvas_append_class(f->canvas, "Dense"));
    g_assert_cmpint(tw_model_doc_n_layers(f->doc), ==, 3);
    double x, y;
    tw_designer_canvas_edge_middle(f->canvas, 2, 0, &x, &y);
    g_assert_true(tw_designer_canvas_drop_class(f->canvas, "Dropout", x, y));
    g_assert_cmpint(tw_model_doc_n_layers(f->doc), ==, 4);
    g_assert_cmpstr(class_at(f, 2), ==, "Dropout");
    g_assert_false(tw_model_doc_is_graph(f->doc));
    assert_shape(f, 3, "(None, 32)");
    g_assert_true(tw_layer_is_model(tw_model_doc_model(f->doc)));
    g_assert_false(tw_layer_is_functional(tw_model_doc_model(f->doc)));

    /* A graph: the edge conv -> add becomes conv -> new -> add. */
    fixture_teardown(f, NULL);
    fixture_setup(f, NULL);
    residual_block(f);
    int from, port;
    g_assert_true(tw_model_doc_node_input(f->doc, 2, 0, &from, &port));
    g_assert_cmpint(from, ==, 1);
    tw_designer_canvas_edge_middle(f->canvas, 2, 0, &x, &y);
    g_assert_true(tw_designer_canvas_drop_class(f->canvas, "BatchNormalization", x, y));
    g_assert_cmpint(tw_model_doc_n_layers(f->doc), ==, 4);
    g_assert_cmpstr(class_at(f, 3), ==, "BatchNormalization");
    g_assert_true(tw_model_doc_node_input(f->doc, 2, 0, &from, &port));
    g_assert_cmpint(from, ==, 3);
    g_assert_true(tw_model_doc_node_input(f->doc, 3, 0, &from, &port));
    g_assert_cmpint(from, ==, 1);
    g_assert_cmpint(tw_model_doc_info(f->doc, 3)->non_trainable_params, ==, 8);
    g_assert_cmpint(tw_model_doc_error_index(f->doc), ==, -1);
}

static void test_delete_edge_error(Fixture *f, gconstpointer data)
{
    residual_block(f);
    /* Click the edge input -> add (the add's second input) and delete it. */
    double x, y;
    tw_designer_canvas_edge_middle(f->canvas, 2, 1, &x, &y);
    tw_designer_canvas_click(f->canvas, x, y, 0);
    int node, input;
    g_assert_true(tw_designer_canvas_selected_edge(f->canvas, &node, &input));
    g_assert_cmpint(node, ==, 2);
    g_assert_cmpint(input, ==, 1);
    g_assert_true(tw_designer_canvas_delete_selection(f->canvas));
    g_assert_cmpint(tw_model_doc_node_ninputs(f->doc, 2), ==, 1);
    /* An Add of one input: the engine's message on the box and the model's. */
    const char *error = tw_model_doc_node_error(f->doc, 2);
    g_assert_nonnull(error);
    g_test_message("add with one input: %s", error);
    g_assert_cmpint(tw_model_doc_error_index(f->doc), ==, 2);
    g_assert_cmpstr(tw_model_doc_error(f->doc), ==, error);
    g_assert_null(tw_model_doc_model(f->doc));
    const char *status = gtk_label_get_text(GTK_LABEL(tw_designer_view_problem(f->view)));
    g_assert_nonnull(strstr(status, "Cannot train"));
    g_assert_nonnull(strstr(status, error));
    GError *save_error = NULL;
    g_assert_false(tw_model_doc_save(f->doc, "/nonexistent/never.json", &save_error));
    g_assert_nonnull(strstr(save_error->message, "not a model yet"));
    g_clear_error(&save_error);

    /* The edge into the conv: now it dangles. */
    tw_designer_canvas_edge_middle(f->canvas, 1, 0, &x, &y);
    tw_designer_canvas_click(f->canvas, x, y, 0);
    g_assert_true(tw_designer_canvas_delete_selection(f->canvas));
    g_assert_nonnull(strstr(tw_model_doc_node_error(f->doc, 1), "dangling input"));
    g_assert_nonnull(strstr(tw_model_doc_node_error(f->doc, 0), "unconnected output"));
    tw_model_doc_undo(f->doc);
    tw_model_doc_undo(f->doc);
    g_assert_cmpint(tw_model_doc_error_index(f->doc), ==, -1);
}

static void test_undo_redo_exact(Fixture *f, gconstpointer data)
{
    GPtrArray *states = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(states, tw_model_doc_state(f->doc));
    GError *error = NULL;
    must(tw_model_doc_set_input_shape(f->doc, 0, "8,8,4", &error), error);
    g_ptr_array_add(states, tw_model_doc_state(f->doc));
    double s = tw_designer_canvas_scale(f->canvas);
    drop_near(f, "Conv2D", 0, 0, 110 * s);
    g_ptr_array_add(states, tw_model_doc_state(f->doc));
    set(f, 1, "padding", "same");
    g_ptr_array_add(states, tw_model_doc_state(f->doc));
    drop_near(f, "Concatenate", 0, 120 * s, 230 * s);
    g_ptr_array_add(states, tw_model_doc_state(f->doc));
    connect(f, 0, 1);
    g_ptr_array_add(states, tw_model_doc_state(f->doc));
    connect(f, 1, 2);
    g_ptr_array_add(states, tw_model_doc_state(f->doc));
    connect(f, 0, 2);
    g_ptr_array_add(states, tw_model_doc_state(f->doc));
    double x, y;
    tw_designer_canvas_box_center(f->canvas, 2, &x, &y); /* move the concatenate */
    tw_designer_canvas_drag(f->canvas, x, y, x + 40, y + 15, 0);
    g_ptr_array_add(states, tw_model_doc_state(f->doc));
    tw_designer_canvas_select(f->canvas, 1);
    g_assert_true(tw_designer_canvas_delete_selection(f->canvas));
    g_ptr_array_add(states, tw_model_doc_state(f->doc));
    for (guint i = 1; i < states->len; i++) /* every action was one step */
        g_assert_cmpstr(g_ptr_array_index(states, i - 1), !=, g_ptr_array_index(states, i));

    for (int i = (int)states->len - 2; i >= 0; i--) {
        g_assert_true(tw_model_doc_undo(f->doc));
        char *state = tw_model_doc_state(f->doc);
        g_assert_cmpstr(state, ==, g_ptr_array_index(states, i));
        g_free(state);
    }
    g_assert_false(tw_model_doc_can_undo(f->doc));
    g_assert_false(tw_model_doc_modified(f->doc));
    for (guint i = 1; i < states->len; i++) {
        g_assert_true(tw_model_doc_redo(f->doc));
        char *state = tw_model_doc_state(f->doc);
        g_assert_cmpstr(state, ==, g_ptr_array_index(states, i));
        g_free(state);
    }
    g_assert_false(tw_model_doc_can_redo(f->doc));
    g_ptr_array_unref(states);
}

static void test_copy_paste_block(Fixture *f, gconstpointer data)
{
    residual_block(f);
    /* A rubber band around the conv and the add (not the input). */
    double cx, cy, ax, ay;
    tw_designer_canvas_box_center(f->canvas, 1, &cx, &cy);
    tw_designer_canvas_box_center(f->canvas, 2, &ax, &ay);
    double s = tw_designer_canvas_scale(f->canvas);
    tw_designer_canvas_drag(f->canvas, MIN(cx, ax) - 120 * s, cy - 45 * s, MAX(cx, ax) + 120 * s, ay + 45 * s, 0);
    int *sel;
    int n = tw_designer_canvas_selection(f->canvas, &sel);
    g_assert_cmpint(n, ==, 2);
    g_assert_cmpint(sel[0], ==, 1);
    g_assert_cmpint(sel[1], ==, 2);
    g_free(sel);
    g_assert_true(tw_designer_canvas_copy(f->canvas));
    g_assert_true(tw_designer_canvas_paste(f->canvas));
    g_assert_cmpint(tw_model_doc_n_layers(f->doc), ==, 5);
    g_assert_cmpstr(class_at(f, 3), ==, "Conv2D");
    g_assert_cmpstr(class_at(f, 4), ==, "Add");
    g_assert_cmpstr(tw_layer_name(tw_model_doc_layer(f->doc, 3)), !=, tw_layer_name(tw_model_doc_layer(f->doc, 1)));
    char *a = tw_layer_get_text(tw_model_doc_layer(f->doc, 1), "padding");
    char *b = tw_layer_get_text(tw_model_doc_layer(f->doc, 3), "padding");
    g_assert_cmpstr(a, ==, b);
    free(a);
    free(b);
    /* The inner edge came along; the edges from outside did not. */
    int from, port;
    g_assert_cmpint(tw_model_doc_node_ninputs(f->doc, 4), ==, 1);
    g_assert_true(tw_model_doc_node_input(f->doc, 4, 0, &from, &port));
    g_assert_cmpint(from, ==, 3);
    g_assert_cmpint(tw_model_doc_node_ninputs(f->doc, 3), ==, 0);
    n = tw_designer_canvas_selection(f->canvas, &sel);
    g_assert_cmpint(n, ==, 2);
    g_assert_cmpint(sel[0], ==, 3);
    g_free(sel);
    /* Wire the copy after the first block: a second residual block. */
    connect(f, 2, 3);
    connect(f, 2, 4);
    g_assert_cmpint(tw_model_doc_error_index(f->doc), ==, -1);
    assert_shape(f, 4, "(None, 8, 8, 4)");
    int64_t trainable;
    tw_model_doc_totals(f->doc, &trainable, NULL);
    g_assert_cmpint(trainable, ==, 2 * 148);

    /* Double-click in the palette on a graph: after the selection, fed by
     * it, in one undo step. */
    tw_designer_canvas_select(f->canvas, 4);
    int steps_before = tw_model_doc_n_layers(f->doc);
    g_assert_true(tw_designer_canvas_append_class(f->canvas, "Flatten"));
    g_assert_cmpint(tw_designer_canvas_primary(f->canvas), ==, steps_before);
    g_assert_true(tw_model_doc_node_input(f->doc, steps_before, 0, &from, &port));
    g_assert_cmpint(from, ==, 4);
    assert_shape(f, steps_before, "(None, 256)");
    g_assert_true(tw_model_doc_undo(f->doc));
    g_assert_cmpint(tw_model_doc_n_layers(f->doc), ==, steps_before);
    g_assert_cmpint(tw_model_doc_error_index(f->doc), ==, -1);

    /* Duplicate: the same in one action. */
    tw_designer_canvas_select_many(f->canvas, (int[]){3, 4}, 2);
    g_assert_true(tw_designer_canvas_duplicate(f->canvas));
    g_assert_cmpint(tw_model_doc_n_layers(f->doc), ==, 7);
    g_assert_true(tw_model_doc_node_input(f->doc, 6, 0, &from, &port));
    g_assert_cmpint(from, ==, 5);
}

static gboolean has_n_layers(gpointer data)
{
    Fixture *f = data;
    return tw_model_doc_n_layers(f->doc) == GPOINTER_TO_INT(g_object_get_data(G_OBJECT(f->canvas), "want"));
}

static gboolean primary_is(gpointer data)
{
    Fixture *f = data;
    return tw_designer_canvas_primary(f->canvas) == GPOINTER_TO_INT(g_object_get_data(G_OBJECT(f->canvas), "want"));
}

static void want(Fixture *f, int n)
{
    g_object_set_data(G_OBJECT(f->canvas), "want", GINT_TO_POINTER(n));
}

/* Real keys into the focused canvas. */
static void test_keys(Fixture *f, gconstpointer data)
{
    residual_block(f);
    tw_designer_canvas_select(f->canvas, 0);
    gtk_widget_grab_focus(GTK_WIDGET(f->canvas));
    want(f, 1);
    if (!ui_keys_send(f->window, "Tab", primary_is, f)) {
        g_test_skip("no xdotool or no X11 display to type with");
        return;
    }
    g_assert_cmpint(tw_designer_canvas_primary(f->canvas), ==, 1); /* along the edge input -> conv */
    want(f, 2);
    ui_keys_send(f->window, "Tab", primary_is, f);
    g_assert_cmpint(tw_designer_canvas_primary(f->canvas), ==, 2);
    want(f, 1);
    ui_keys_send(f->window, "shift+Tab", primary_is, f); /* back along the add's first input */
    g_assert_cmpint(tw_designer_canvas_primary(f->canvas), ==, 1);

    double x0, y0, x1, y1;
    tw_model_doc_node_position(f->doc, 1, &x0, &y0);
    want(f, 1);
    ui_keys_send(f->window, "Right Down", primary_is, f);
    drain();
    tw_model_doc_node_position(f->doc, 1, &x1, &y1);
    g_assert_cmpfloat(x1, ==, x0 + 10);
    g_assert_cmpfloat(y1, ==, y0 + 10);

    want(f, 4);
    ui_keys_send(f->window, "ctrl+d", has_n_layers, f);
    g_assert_cmpint(tw_model_doc_n_layers(f->doc), ==, 4);
    want(f, 3);
    ui_keys_send(f->window, "Delete", has_n_layers, f);
    g_assert_cmpint(tw_model_doc_n_layers(f->doc), ==, 3);
    tw_designer_canvas_select(f->canvas, 1);
    gtk_widget_grab_focus(GTK_WIDGET(f->canvas));
    want(f, 4);
    ui_keys_send(f->window, "ctrl+c ctrl+v", has_n_layers, f);
    g_assert_cmpint(tw_model_doc_n_layers(f->doc), ==, 4);
    g_assert_cmpstr(class_at(f, 3), ==, "Conv2D");
}

/* Alt+Up/Down reorders a chain; a Sequential model is a column. */
static void test_sequential_column(Fixture *f, gconstpointer data)
{
    char *path = g_build_filename(g_getenv("G_TEST_SRCDIR") ? g_getenv("G_TEST_SRCDIR") : ".", "..", "examples",
                                  "models", "cnn_fashion_mnist.json", NULL);
    GError *error = NULL;
    must(tw_model_doc_load(f->doc, path, &error), error);
    g_free(path);
    int n = tw_model_doc_n_layers(f->doc);
    g_assert_cmpint(n, >, 4);
    g_assert_false(tw_model_doc_is_graph(f->doc));
    for (int i = 1; i < n; i++) {
        double x0, y0, x1, y1;
        tw_model_doc_node_position(f->doc, i - 1, &x0, &y0);
        tw_model_doc_node_position(f->doc, i, &x1, &y1);
        g_assert_cmpfloat(x1, ==, x0);
        g_assert_cmpfloat(y1, >, y0);
    }
    const char *third = tw_layer_name(tw_model_doc_layer(f->doc, 3));
    char *name = g_strdup(third);
    tw_designer_canvas_select(f->canvas, 3);
    g_assert_true(tw_designer_canvas_reorder(f->canvas, -1));
    g_assert_cmpstr(tw_layer_name(tw_model_doc_layer(f->doc, 2)), ==, name);
    g_assert_cmpint(tw_designer_canvas_primary(f->canvas), ==, 2);
    g_assert_true(tw_designer_canvas_reorder(f->canvas, 1));
    g_assert_cmpstr(tw_layer_name(tw_model_doc_layer(f->doc, 3)), ==, name);
    g_free(name);
    /* Double-click in the palette: after the selected layer. */
    tw_designer_canvas_select(f->canvas, 1);
    g_assert_true(tw_designer_canvas_append_class(f->canvas, "Dropout"));
    g_assert_cmpstr(class_at(f, 2), ==, "Dropout");
    g_assert_cmpint(tw_designer_canvas_primary(f->canvas), ==, 2);
}

static gboolean arranged(gpointer data)
{
    return !tw_designer_canvas_arranging(data);
}

/* Auto-arrange runs in a thread and lands as one undo step. */
static void test_arrange(Fixture *f, gconstpointer data)
{
    residual_block(f);
    char *before = tw_model_doc_state(f->doc);
    tw_designer_canvas_arrange(f->canvas);
    gint64 end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
    while (!arranged(f->canvas) && g_get_monotonic_time() < end)
        g_main_context_iteration(NULL, TRUE);
    g_assert_false(tw_designer_canvas_arranging(f->canvas));
    double y0, y1, y2, x;
    tw_model_doc_node_position(f->doc, 0, &x, &y0);
    tw_model_doc_node_position(f->doc, 1, &x, &y1);
    tw_model_doc_node_position(f->doc, 2, &x, &y2);
    g_assert_cmpfloat(y0, <, y1); /* layers down the page */
    g_assert_cmpfloat(y1, <, y2);
    g_assert_true(tw_model_doc_undo(f->doc));
    char *after = tw_model_doc_state(f->doc);
    g_assert_cmpstr(after, ==, before);
    g_free(after);
    g_free(before);
}

/* ResNet50 opens readable from the top, with a minimap that moves the view. */
static void test_minimap(Fixture *f, gconstpointer data)
{
    char *path = g_build_filename(g_getenv("G_TEST_SRCDIR") ? g_getenv("G_TEST_SRCDIR") : ".", "..", "examples",
                                  "models", "resnet50.json", NULL);
    GError *error = NULL;
    must(tw_model_doc_load(f->doc, path, &error), error);
    g_free(path);
    drain();
    int n = tw_model_doc_n_layers(f->doc);
    g_assert_cmpint(n, ==, 177);
    g_assert_true(tw_model_doc_is_graph(f->doc));
    g_assert_cmpfloat(tw_designer_canvas_scale(f->canvas), >=, 0.5);
    tw_designer_minimap map;
    g_assert_true(tw_designer_canvas_minimap(f->canvas, &map));
    double h = gtk_widget_get_height(GTK_WIDGET(f->canvas)), x, y;
    tw_designer_canvas_box_center(f->canvas, n - 1, &x, &y);
    g_assert_cmpfloat(y, >, h); /* the output is below the view */
    tw_designer_canvas_click(f->canvas, map.x + map.width / 2, map.y + map.height - 1, 0);
    tw_designer_canvas_box_center(f->canvas, n - 1, &x, &y);
    g_assert_cmpfloat(y, >, 0);
    g_assert_cmpfloat(y, <, h);
    /* Fit shows it all, and then no map is needed. */
    tw_designer_canvas_fit(f->canvas);
    g_assert_false(tw_designer_canvas_minimap(f->canvas, &map));
}

/* A residual MLP drawn on the canvas, saved, and trained by `twb train`. */
static void test_saved_graph_trains(Fixture *f, gconstpointer data)
{
    const char *twb = g_getenv("TWB");
    if (!twb) {
        g_test_skip("TWB (the twb binary) is not set; meson test sets it");
        return;
    }
    GError *error = NULL;
    must(tw_model_doc_set_input_shape(f->doc, 0, "2", &error), error);
    double s = tw_designer_canvas_scale(f->canvas);
    int a = drop_near(f, "Dense", 0, 0, 110 * s);
    set(f, a, "units", "16");
    set(f, a, "activation", "relu");
    int b = drop_near(f, "Dense", 0, 0, 220 * s);
    set(f, b, "units", "16");
    int add = drop_near(f, "Add", 0, 260 * s, 330 * s);
    int out = drop_near(f, "Dense", 0, 260 * s, 440 * s);
    set(f, out, "units", "2");
    set(f, out, "activation", "softmax");
    connect(f, 0, a);
    connect(f, a, b);
    connect(f, b, add);
    connect(f, a, add);
    connect(f, add, out);
    g_assert_cmpint(tw_model_doc_error_index(f->doc), ==, -1);
    char *dir = g_dir_make_tmp("twb-canvas-XXXXXX", NULL);
    char *path = g_build_filename(dir, "residual_mlp.json", NULL);
    must(tw_model_doc_save(f->doc, path, &error), error);
    const char *argv[] = {twb, "train", path, "--data", "spirals", "--epochs", "1", "--json", NULL};
    char *out_text = NULL, *err_text = NULL;
    int status = 0;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out_text, &err_text, &status,
                               &error));
    g_assert_no_error(error);
    if (!g_spawn_check_wait_status(status, NULL))
        g_test_message("twb train: %s", err_text);
    g_assert_true(g_spawn_check_wait_status(status, NULL));
    g_assert_nonnull(strstr(out_text, "\"loss\""));
    g_free(out_text);
    g_free(err_text);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}

static char *corpus_dir(const char *name)
{
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    return g_build_filename(srcdir ? srcdir : ".", "..", "..", "shared", "corpus", name, NULL);
}

/* Every corpus file opens (or is refused with the loader's message naming
 * it); what opens saves, and the save reopens to the same document. */
static void test_corpus_open_save(Fixture *f, gconstpointer data)
{
    const char *dirs[] = {"keras", "keras-functional"};
    int opened = 0;
    char *tmp = g_dir_make_tmp("twb-canvas-XXXXXX", NULL);
    for (size_t d = 0; d < G_N_ELEMENTS(dirs); d++) {
        char *dir = corpus_dir(dirs[d]);
        GDir *listing = g_dir_open(dir, 0, NULL);
        if (!listing) {
            g_test_skip("the corpus (../shared/corpus) is not there");
            g_free(dir);
            continue;
        }
        const char *entry;
        while ((entry = g_dir_read_name(listing))) {
            if (!g_str_has_suffix(entry, ".json") && !g_str_has_suffix(entry, ".keras") &&
                !g_str_has_suffix(entry, ".h5"))
                continue;
            char *path = g_build_filename(dir, entry, NULL);
            GError *error = NULL;
            if (!tw_model_doc_load(f->doc, path, &error)) {
                /* Files the engine's loader refuses (a Lambda of unknown
                 * shape, weights without a model) say so, naming the file. */
                g_test_message("%s: %s", entry, error->message);
                g_assert_nonnull(strstr(error->message, entry));
                g_clear_error(&error);
                g_free(path);
                continue;
            }
            opened++;
            g_assert_false(tw_model_doc_modified(f->doc));
            drain();
            char *saved = g_build_filename(tmp, "saved.json", NULL);
            must(tw_model_doc_save(f->doc, saved, &error), error);
            TwModelDoc *again = tw_model_doc_new();
            must(tw_model_doc_load(again, saved, &error), error);
            char *a = tw_model_doc_to_json(f->doc), *b = tw_model_doc_to_json(again);
            char *sa = tw_model_doc_state(f->doc), *sb = tw_model_doc_state(again);
            g_assert_cmpstr(a, ==, b);
            g_assert_cmpstr(sa, ==, sb);
            g_assert_cmpint(tw_model_doc_is_graph(again), ==, tw_model_doc_is_graph(f->doc));
            /* What we write, the engine's own reader takes. */
            tw_model *model = tw_model_load(saved);
            g_assert_nonnull(model);
            tw_layer_unref(model);
            g_free(a);
            g_free(b);
            g_free(sa);
            g_free(sb);
            g_object_unref(again);
            g_unlink(saved);
            g_free(saved);
            g_free(path);
        }
        g_dir_close(listing);
        g_free(dir);
    }
    g_rmdir(tmp);
    g_free(tmp);
    g_test_message("%d corpus files opened and saved", opened);
}

#define ADD(path, fn) g_test_add("/ui/canvas/" path, Fixture, NULL, fixture_setup, fn, fixture_teardown)

int main(int argc, char **argv)
{
    gtk_test_init(&argc, &argv, NULL);
    ADD("residual_block", test_residual_block);
    ADD("insert_on_edge", test_insert_on_edge);
    ADD("delete_edge_error", test_delete_edge_error);
    ADD("undo_redo_exact", test_undo_redo_exact);
    ADD("copy_paste_block", test_copy_paste_block);
    ADD("keys", test_keys);
    ADD("sequential_column", test_sequential_column);
    ADD("arrange", test_arrange);
    ADD("minimap", test_minimap);
    ADD("saved_graph_trains", test_saved_graph_trains);
    ADD("corpus_open_save", test_corpus_open_save);
    return g_test_run();
}
