/* The designer's canvas in a window under Xvfb, driven through the same
 * actions its gestures and keys run (tw_designer_canvas_drag, _click,
 * _drop_class, ...; real keys through xdotool): a residual block built by
 * connecting ports, a layer inserted on an edge, an edge deleted and the
 * error shown, undo and redo restoring exact documents, a block copied and
 * pasted with its inner edge, keys, a Sequential model read as a column,
 * the minimap, the kept drawing redrawn a few tiles a frame after a zoom,
 * edges routed clear of every box in the templates, the
 * palette's blocks, a drawn graph saved and trained by `twb train` and
 * another trained from the window's Train button, every corpus file
 * opened and saved unchanged, and a corpus Lambda marked as not runnable
 * with Train off. */
#include <gtk/gtk.h>
#include <math.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include <tw/engine.h>
#include <tw/model_file.h>

#include "designer_arrange.h"
#include "designer_blocks.h"
#include "designer_canvas.h"
#include "designer_route.h"
#include "designer_view.h"
#include "layer_palette.h"
#include "layer_stack.h"
#include "train_controller.h"
#include "gui_helpers.h"
#include "window.h"
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
    /* The canvas keeps its drawing in tiles after arranging, as before. */
    tw_designer_image_counts counts;
    g_assert_true(tw_designer_canvas_image_counts(f->canvas, &counts));
    g_assert_true(tw_model_doc_undo(f->doc));
    char *after = tw_model_doc_state(f->doc);
    g_assert_cmpstr(after, ==, before);
    g_free(after);
    g_free(before);
}

static void load_resnet50(Fixture *f)
{
    char *path = g_build_filename(g_getenv("G_TEST_SRCDIR") ? g_getenv("G_TEST_SRCDIR") : ".", "..", "examples",
                                  "models", "resnet50.json", NULL);
    GError *error = NULL;
    must(tw_model_doc_load(f->doc, path, &error), error);
    g_free(path);
    drain();
}

/* ResNet50 opens readable from the top, with a minimap that moves the view. */
static void test_minimap(Fixture *f, gconstpointer data)
{
    load_resnet50(f);
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

/* ---- the kept drawing after a zoom ---------------------------------------- */
/* What the canvas's image drew in each frame, from after-paint to after-paint. */
typedef struct {
    TwDesignerCanvas *canvas;
    tw_designer_image_counts last;
    guint64 most_tiles; /* in one frame */
    int frames_with_tiles;
    guint64 tiles, views;
} frame_tally;

static void tally_frame(GdkFrameClock *clock, gpointer data)
{
    frame_tally *t = data;
    tw_designer_image_counts now;
    g_assert_true(tw_designer_canvas_image_counts(t->canvas, &now));
    guint64 tiles = now.tiles - t->last.tiles;
    t->most_tiles = MAX(t->most_tiles, tiles);
    t->frames_with_tiles += tiles > 0;
    t->tiles += tiles;
    t->views += now.views - t->last.views;
    t->last = now;
}

static gboolean settled(gpointer canvas)
{
    return !tw_designer_canvas_settling(canvas);
}

/* Zooms by factor around the canvas's centre in `steps` steps, one a frame
 * (steps 0: all before one frame), and tallies the frames until the image
 * has settled at the new zoom. */
static frame_tally zoom_and_settle(Fixture *f, double factor, int steps)
{
    GtkWidget *w = GTK_WIDGET(f->canvas);
    frame_tally t = {f->canvas};
    g_assert_true(tw_designer_canvas_image_counts(f->canvas, &t.last));
    GdkFrameClock *clock = gtk_widget_get_frame_clock(w);
    gulong painted = g_signal_connect(clock, "after-paint", G_CALLBACK(tally_frame), &t);
    double cx = gtk_widget_get_width(w) / 2.0, cy = gtk_widget_get_height(w) / 2.0;
    if (steps == 0)
        tw_designer_canvas_zoom(f->canvas, factor, cx, cy);
    for (int i = 0; i < steps; i++) {
        tw_designer_canvas_zoom(f->canvas, pow(factor, 1.0 / steps), cx, cy);
        spin(0.02);
    }
    wait_until(settled, f->canvas, 10, "the image at the new zoom");
    spin(0.1); /* frames at rest draw nothing more */
    g_signal_handler_disconnect(clock, painted);
    return t;
}

/* After a zoom stops, the tiles of the new zoom are drawn a few a frame
 * while the old ones stand in, scaled: no frame draws all the view's
 * tiles at once. A zoom beyond twice the tiles' draws the view once and
 * shows that scaled meanwhile. Counted in tiles, not timed. */
static void test_zoom_redraw_spread(Fixture *f, gconstpointer data)
{
    load_resnet50(f);
    GtkWidget *w = GTK_WIDGET(f->canvas);
    /* The view's tiles: at least this many are drawn anew at a new zoom. */
    int in_view = ((gtk_widget_get_width(w) + 255) / 256) * ((gtk_widget_get_height(w) + 255) / 256);
    g_test_message("the canvas: %d x %d px", gtk_widget_get_width(w), gtk_widget_get_height(w));
    g_assert_cmpint(in_view, >, TW_DESIGNER_IMAGE_TILES_PER_FRAME);
    zoom_and_settle(f, 1.0 / tw_designer_canvas_scale(f->canvas), 0); /* life size, settled */

    struct {
        double factor;
        int steps;
        gboolean direct; /* beyond a factor of two: the view drawn directly, once */
    } zooms[] = {{1.15 * 1.15, 2, FALSE}, {1 / 1.3, 3, FALSE}, {3.0, 0, TRUE}, {1 / 3.0, 0, TRUE}};
    for (size_t i = 0; i < G_N_ELEMENTS(zooms); i++) {
        double before = tw_designer_canvas_scale(f->canvas);
        frame_tally t = zoom_and_settle(f, zooms[i].factor, zooms[i].steps);
        g_test_message("zoom by %.3f: %" G_GUINT64_FORMAT " tiles in %d frames, at most %" G_GUINT64_FORMAT
                       " a frame; %" G_GUINT64_FORMAT " views drawn directly",
                       zooms[i].factor, t.tiles, t.frames_with_tiles, t.most_tiles, t.views);
        g_assert_cmpfloat_with_epsilon(tw_designer_canvas_scale(f->canvas), before * zooms[i].factor, 1e-9);
        g_assert_cmpuint(t.tiles, >=, in_view);
        g_assert_cmpuint(t.most_tiles, <=, TW_DESIGNER_IMAGE_TILES_PER_FRAME);
        g_assert_cmpint(t.frames_with_tiles, >=, in_view / TW_DESIGNER_IMAGE_TILES_PER_FRAME);
        g_assert_cmpuint(t.views, ==, zooms[i].direct ? 1 : 0);
    }
    /* At rest, once the ring around the view is drawn (a few tiles a
     * frame), a frame copies tiles and draws none. */
    for (int i = 0; i < 20; i++) {
        gtk_widget_queue_draw(w);
        spin(0.03);
    }
    frame_tally rest = {f->canvas};
    g_assert_true(tw_designer_canvas_image_counts(f->canvas, &rest.last));
    gulong painted = g_signal_connect(gtk_widget_get_frame_clock(w), "after-paint", G_CALLBACK(tally_frame), &rest);
    gtk_widget_queue_draw(w);
    spin(0.1);
    g_signal_handler_disconnect(gtk_widget_get_frame_clock(w), painted);
    g_assert_cmpuint(rest.tiles + rest.views, ==, 0);
}

/* Every edge of every template, as arranged on open and with a box dragged
 * across another edge, runs around the boxes: no segment of a route passes
 * through the inside of any box (its own ends only touch their boxes'
 * borders), segments are horizontal or vertical, and each route starts and
 * ends at its ports. */
static int assert_routes_clear(Fixture *f, const char *name)
{
    int n = tw_model_doc_n_layers(f->doc), routed = 0;
    GArray *points = g_array_new(FALSE, FALSE, sizeof(double));
    for (int node = 0; node < n; node++)
        for (int e = 0; e < tw_model_doc_node_ninputs(f->doc, node); e++) {
            int np = tw_designer_edge_route(f->doc, node, e, NULL, points), from, port;
            const double *p = (const double *)points->data;
            g_assert_cmpint(np, >=, 2);
            g_assert_true(tw_model_doc_node_input(f->doc, node, e, &from, &port));
            double sx, sy, tx, ty;
            tw_designer_port_point(f->doc, from, TRUE, port, &sx, &sy);
            tw_designer_port_point(f->doc, node, FALSE, e, &tx, &ty);
            g_assert_cmpfloat(p[0], ==, sx);
            g_assert_cmpfloat(p[1], ==, sy);
            g_assert_cmpfloat(p[2 * np - 2], ==, tx);
            g_assert_cmpfloat(p[2 * np - 1], ==, ty);
            for (int s = 0; s + 1 < np; s++) {
                g_assert_true(p[2 * s] == p[2 * s + 2] || p[2 * s + 1] == p[2 * s + 3]);
                for (int b = 0; b < n; b++) {
                    double bx, by;
                    tw_model_doc_node_position(f->doc, b, &bx, &by);
                    if (tw_designer_segment_crosses(p[2 * s], p[2 * s + 1], p[2 * s + 2], p[2 * s + 3], bx, by,
                                                    TW_DESIGNER_BOX_WIDTH, tw_designer_box_height(f->doc, b)))
                        g_error("%s: the edge %s -> %s (input %d) crosses the box of %s", name,
                                tw_layer_name(tw_model_doc_layer(f->doc, from)),
                                tw_layer_name(tw_model_doc_layer(f->doc, node)), e,
                                tw_layer_name(tw_model_doc_layer(f->doc, b)));
                }
            }
            routed++;
        }
    g_array_free(points, TRUE);
    return routed;
}

/* Whether two axis-parallel segments cross: one horizontal, one vertical,
 * each passing strictly through the other (touching at an end or a shared
 * port does not count; runs along one line are not crossings). */
static gboolean segments_cross(const double *a, const double *b)
{
    gboolean ah = a[1] == a[3], bh = b[1] == b[3];
    if (ah == bh)
        return FALSE;
    const double *h = ah ? a : b, *v = ah ? b : a;
    double x = v[0], y = h[1];
    return x > MIN(h[0], h[2]) && x < MAX(h[0], h[2]) && y > MIN(v[1], v[3]) && y < MAX(v[1], v[3]);
}

/* Crossings between the routes of different edges of the open document. */
static int count_crossings(Fixture *f)
{
    GPtrArray *routes = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    for (int node = 0; node < tw_model_doc_n_layers(f->doc); node++)
        for (int e = 0; e < tw_model_doc_node_ninputs(f->doc, node); e++) {
            GArray *points = g_array_new(FALSE, FALSE, sizeof(double));
            tw_designer_edge_route(f->doc, node, e, NULL, points);
            g_ptr_array_add(routes, points);
        }
    int crossings = 0;
    for (guint a = 0; a < routes->len; a++)
        for (guint b = a + 1; b < routes->len; b++) {
            GArray *pa = routes->pdata[a], *pb = routes->pdata[b];
            for (guint i = 0; i + 3 < pa->len; i += 2)
                for (guint j = 0; j + 3 < pb->len; j += 2)
                    crossings += segments_cross(&g_array_index(pa, double, i), &g_array_index(pb, double, j));
        }
    g_ptr_array_unref(routes);
    return crossings;
}

/* The templates as arranged on open have no crossings between edges: the
 * layout orders the boxes feeding a merge as the inputs they feed
 * (graph_layout.c), so ResNet's shortcut into Add([shortcut, x]) and
 * seq2seq's decoder input beside the encoder's states no longer cross
 * (16 in ResNet50, 2 in the residual Fashion-MNIST network and 2 in
 * seq2seq before), and the channel order (designer_route.c) adds none. */
static void test_route_crossings(Fixture *f, gconstpointer data)
{
    static const struct {
        const char *file;
        int most;
    } templates[] = {{"resnet_fashion_mnist.json", 0}, {"unet_small.json", 0}, {"siamese_fashion_mnist.json", 0},
                     {"seq2seq_lstm.json", 0}, {"resnet50.json", 0}};
    const char *srcdir = g_getenv("G_TEST_SRCDIR") ? g_getenv("G_TEST_SRCDIR") : ".";
    for (guint t = 0; t < G_N_ELEMENTS(templates); t++) {
        char *path = g_build_filename(srcdir, "..", "examples", "models", templates[t].file, NULL);
        GError *error = NULL;
        must(tw_model_doc_load(f->doc, path, &error), error);
        g_free(path);
        int crossings = count_crossings(f);
        g_test_message("%s: %d crossings between edges", templates[t].file, crossings);
        if (crossings > templates[t].most)
            g_error("%s: %d crossings between edges; at most %d expected", templates[t].file, crossings,
                    templates[t].most);
    }
}

static void test_routes_avoid_boxes(Fixture *f, gconstpointer data)
{
    static const char *const templates[] = {"resnet_fashion_mnist.json", "unet_small.json",
                                            "siamese_fashion_mnist.json", "seq2seq_lstm.json", "resnet50.json",
                                            "cnn_fashion_mnist.json"};
    const char *srcdir = g_getenv("G_TEST_SRCDIR") ? g_getenv("G_TEST_SRCDIR") : ".";
    for (guint t = 0; t < G_N_ELEMENTS(templates); t++) {
        char *path = g_build_filename(srcdir, "..", "examples", "models", templates[t], NULL);
        GError *error = NULL;
        must(tw_model_doc_load(f->doc, path, &error), error);
        g_free(path);
        int routed = assert_routes_clear(f, templates[t]);
        g_assert_cmpint(routed, >=, tw_model_doc_n_layers(f->doc) - 2);
        g_test_message("%s: %d edges routed clear of %d boxes", templates[t], routed,
                       tw_model_doc_n_layers(f->doc));
    }
    /* seq2seq as the user might leave it: the decoder's input dragged
     * to the left of the encoder and the encoder right under it, so that a
     * straight edge would cross boxes. */
    char *path = g_build_filename(srcdir, "..", "examples", "models", "seq2seq_lstm.json", NULL);
    GError *error = NULL;
    must(tw_model_doc_load(f->doc, path, &error), error);
    g_free(path);
    int n = tw_model_doc_n_layers(f->doc);
    double *xy = g_new(double, 2 * n);
    for (int i = 0; i < n; i++) {
        xy[2 * i] = (i % 3) * 230.0;          /* three columns */
        xy[2 * i + 1] = (i / 3) * 110.0; /* rows in index order */
    }
    must(tw_model_doc_set_positions(f->doc, xy, &error), error);
    g_free(xy);
    assert_routes_clear(f, "seq2seq in a grid");

    /* While a box is dragged across an edge, the routes of each frame
     * (some kept from the frame before) stay clear of the boxes where they
     * are drawn: the input feeds a Dense 300 units below it, and a third
     * box is dragged across that edge from the right to the left. */
    TwModelDoc *doc = tw_model_doc_new();
    must(tw_model_doc_add_node_after(doc, "Dense", 0, 0, 300, &error) == 1, error);
    must(tw_model_doc_add_node(doc, "Dense", 0, 0, &error) == 2, error);
    double three[6] = {0, 0, 0, 300, 500, 150};
    must(tw_model_doc_set_positions(doc, three, &error), error);
    n = 3;
    gboolean *selected = g_new0(gboolean, n);
    selected[2] = TRUE;
    tw_designer_overlay drag = {.selected = selected, .edge_node = -1, .hover_target = -1};
    GArray *points = g_array_new(FALSE, FALSE, sizeof(double));
    for (int step = 1; step <= 40; step++) {
        drag.move_dx = -step * 20.0;
        int np = tw_designer_edge_route(doc, 1, 0, &drag, points);
        const double *p = (const double *)points->data;
        for (int s = 0; s + 1 < np; s++)
            g_assert_false(tw_designer_segment_crosses(p[2 * s], p[2 * s + 1], p[2 * s + 2], p[2 * s + 3],
                                                       500 + drag.move_dx, 150, TW_DESIGNER_BOX_WIDTH,
                                                       TW_DESIGNER_BOX_HEIGHT));
    }
    g_array_free(points, TRUE);
    g_free(selected);
    g_object_unref(doc);
}

/* A box of several outputs shows each one's shape: the seq2seq encoder's
 * LSTM returns its output and both states. */
static void test_box_shows_every_output(Fixture *f, gconstpointer data)
{
    char *path = g_build_filename(g_getenv("G_TEST_SRCDIR") ? g_getenv("G_TEST_SRCDIR") : ".", "..", "examples",
                                  "models", "seq2seq_lstm.json", NULL);
    GError *error = NULL;
    must(tw_model_doc_load(f->doc, path, &error), error);
    g_free(path);
    int encoder = -1;
    for (int i = 0; i < tw_model_doc_n_layers(f->doc); i++)
        if (tw_model_doc_node_noutputs(f->doc, i) == 3)
            encoder = i;
    g_assert_cmpint(encoder, >=, 0);
    char *text = tw_designer_box_shapes(f->doc, encoder);
    /* Each output's shape in port order, one after the other. */
    const char *at = text;
    for (int k = 0; k < 3; k++) {
        char buf[96];
        const tw_shape *shape = tw_model_doc_node_output(f->doc, encoder, k);
        g_assert_nonnull(shape);
        tw_shape_format(shape, buf, sizeof buf);
        const char *found = strstr(at, buf);
        g_assert_nonnull(found);
        at = found + strlen(buf);
    }
    g_test_message("encoder box: %s", text);
    g_free(text);
}

/* A palette block activated after the selected box, as a double-click
 * does: one undo step of new layers; returns the first. */
static int add_block(Fixture *f, const char *block, int after)
{
    tw_designer_canvas_select(f->canvas, after);
    int before = tw_model_doc_n_layers(f->doc);
    char *state = tw_model_doc_state(f->doc);
    TwLayerPalette *palette = TW_LAYER_PALETTE(tw_designer_view_palette(f->view));
    g_assert_true(tw_layer_palette_activate(palette, block));
    drain();
    g_assert_cmpint(tw_model_doc_n_layers(f->doc), >, before);
    /* The block is selected, the property editor on its last layer. */
    int *selected = NULL;
    g_assert_cmpint(tw_designer_canvas_selection(f->canvas, &selected), ==, tw_model_doc_n_layers(f->doc) - before);
    g_assert_cmpint(selected[0], ==, before);
    g_free(selected);
    g_assert_cmpint(tw_designer_canvas_primary(f->canvas), ==, tw_model_doc_n_layers(f->doc) - 1);
    /* One step: undo gives back the document before it, redo the block. */
    char *with = tw_model_doc_state(f->doc);
    g_assert_true(tw_model_doc_undo(f->doc));
    char *undone = tw_model_doc_state(f->doc);
    g_assert_cmpstr(undone, ==, state);
    g_assert_true(tw_model_doc_redo(f->doc));
    char *redone = tw_model_doc_state(f->doc);
    g_assert_cmpstr(redone, ==, with);
    g_free(redone);
    g_free(undone);
    g_free(with);
    g_free(state);
    return before;
}

/* Trainable and non-trainable parameters of nodes first.. */
static void block_params(Fixture *f, int first, int64_t *trainable, int64_t *non_trainable)
{
    *trainable = *non_trainable = 0;
    for (int i = first; i < tw_model_doc_n_layers(f->doc); i++) {
        g_assert_null(tw_model_doc_node_error(f->doc, i));
        *trainable += tw_model_doc_info(f->doc, i)->trainable_params;
        *non_trainable += tw_model_doc_info(f->doc, i)->non_trainable_params;
    }
}

/* Each palette block inserts as ordinary layers after the selected box,
 * sized from its output; shapes and parameter counts are the engine's and
 * match Keras' formulas. */
static void test_palette_blocks(Fixture *f, gconstpointer data)
{
    GError *error = NULL;
    int64_t t, nt;
    /* Residual block on (28, 28, 8): two 3x3 convolutions of 8 filters
     * (3*3*8*8 + 8 each), two batch norms (8 gamma + 8 beta trainable, 16
     * moving statistics), the add and a ReLU. */
    must(tw_model_doc_set_input_shape(f->doc, 0, "28,28,8", &error), error);
    int first = add_block(f, "Residual block", 0);
    g_assert_cmpint(tw_model_doc_n_layers(f->doc), ==, first + 7);
    g_assert_cmpstr(class_at(f, first + 5), ==, "Add");
    int from, port;
    g_assert_true(tw_model_doc_node_input(f->doc, first + 5, 1, &from, &port));
    g_assert_cmpint(from, ==, 0); /* the skip */
    assert_shape(f, first + 6, "(None, 28, 28, 8)");
    block_params(f, first, &t, &nt);
    g_assert_cmpint(t, ==, 2 * (3 * 3 * 8 * 8 + 8) + 2 * 16);
    g_assert_cmpint(nt, ==, 2 * 16);
    g_assert_null(tw_model_doc_error(f->doc));

    /* U-Net down step after the residual block: 16 filters, pooled. */
    int down = add_block(f, "U-Net down step", first + 6);
    assert_shape(f, down + 1, "(None, 28, 28, 16)");
    assert_shape(f, down + 2, "(None, 14, 14, 16)");
    block_params(f, down, &t, &nt);
    g_assert_cmpint(t, ==, (3 * 3 * 8 * 16 + 16) + (3 * 3 * 16 * 16 + 16));
    /* The up step: a 2x2 transposed convolution back to 28x28 with 8
     * filters, and a Concatenate whose second input is the skip, which the
     * user connects from the down step's second convolution. */
    int up = add_block(f, "U-Net up step", down + 2);
    g_assert_cmpstr(class_at(f, up + 1), ==, "Concatenate");
    g_assert_cmpint(tw_model_doc_node_ninputs(f->doc, up + 1), ==, 1);
    assert_shape(f, up, "(None, 28, 28, 8)");
    connect(f, down + 1, up + 1);
    assert_shape(f, up + 1, "(None, 28, 28, 24)");
    assert_shape(f, up + 3, "(None, 28, 28, 8)");
    block_params(f, up, &t, &nt);
    g_assert_cmpint(t, ==, (2 * 2 * 16 * 8 + 8) + (3 * 3 * 24 * 8 + 8) + (3 * 3 * 8 * 8 + 8));
    g_assert_null(tw_model_doc_error(f->doc));

    /* Inception branch: 1x1 (16), 1x1 (16) -> 3x3 (24), 1x1 (8) -> 5x5
     * (8), pool -> 1x1 (8), concatenated to 16 + 24 + 8 + 8 channels. */
    int inc = add_block(f, "Inception branch", up + 3);
    g_assert_cmpint(tw_model_doc_n_layers(f->doc), ==, inc + 8);
    assert_shape(f, inc + 7, "(None, 28, 28, 56)");
    g_assert_cmpint(tw_model_doc_node_ninputs(f->doc, inc + 7), ==, 4);
    block_params(f, inc, &t, &nt);
    g_assert_cmpint(t, ==, (8 * 16 + 16) + (8 * 16 + 16) + (3 * 3 * 16 * 24 + 24) + (8 * 8 + 8) + (5 * 5 * 8 * 8 + 8) +
                               (8 * 8 + 8));
    g_assert_null(tw_model_doc_error(f->doc));

    /* Transformer encoder on (None, 10, 16): attention of 2 heads of 8
     * (query, key, value and output projections, 16*16 + 16 each), two
     * layer norms (2*16 each), a feed-forward 16 -> 32 -> 16. */
    TwModelDoc *doc = f->doc;
    must(tw_model_doc_load_json(doc,
                                "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"seq\", \"layers\": ["
                                "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 10, 16],"
                                " \"name\": \"tokens\"}}]}}",
                                "tokens.json", &error),
         error);
    drain();
    int enc = add_block(f, "Transformer encoder", 0);
    g_assert_cmpstr(class_at(f, enc), ==, "MultiHeadAttention");
    g_assert_cmpint(tw_model_doc_node_ninputs(f->doc, enc), ==, 2);
    assert_shape(f, tw_model_doc_n_layers(f->doc) - 1, "(None, 10, 16)");
    block_params(f, enc, &t, &nt);
    g_assert_cmpint(t, ==, 4 * (16 * 16 + 16) + 2 * (2 * 16) + (16 * 32 + 32) + (32 * 16 + 16));
    g_assert_null(tw_model_doc_error(f->doc));

    /* In the middle of a chain a block goes into it, as a single layer
     * does: what followed the selected box takes the block's output, the
     * boxes below it move down past the block. */
    must(tw_model_doc_load_json(doc,
                                "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"chain\", \"layers\": ["
                                "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 28, 28,"
                                " 8], \"name\": \"img\"}},"
                                "{\"class_name\": \"Conv2D\", \"config\": {\"name\": \"c1\", \"filters\": 8,"
                                " \"kernel_size\": [3, 3], \"padding\": \"same\"}},"
                                "{\"class_name\": \"Reshape\", \"config\": {\"name\": \"flat\", \"target_shape\":"
                                " [6272]}},"
                                "{\"class_name\": \"Dense\", \"config\": {\"name\": \"out\", \"units\": 10}}]}}",
                                "chain.json", &error),
         error);
    drain();
    double c1_x, c1_y, flat_y_before, fx, fy;
    tw_model_doc_node_position(f->doc, 1, &c1_x, &c1_y);
    tw_model_doc_node_position(f->doc, 2, &fx, &flat_y_before);
    int res = add_block(f, "Residual block", 1);
    g_assert_cmpint(res, ==, 4);
    int last = res + 6;
    g_assert_true(tw_model_doc_node_input(f->doc, 2, 0, &from, &port));
    g_assert_cmpint(from, ==, last); /* flat now follows the block */
    g_assert_cmpint(port, ==, 0);
    g_assert_true(tw_model_doc_node_input(f->doc, res, 0, &from, &port));
    g_assert_cmpint(from, ==, 1);
    g_assert_true(tw_model_doc_node_input(f->doc, res + 5, 1, &from, &port));
    g_assert_cmpint(from, ==, 1); /* the skip from c1 */
    g_assert_false(tw_model_doc_node_input(f->doc, 1, 1, &from, &port));
    assert_shape(f, 2, "(None, 6272)");
    assert_shape(f, 3, "(None, 10)");
    g_assert_null(tw_model_doc_error(f->doc));
    double bx, by, lx, ly;
    tw_model_doc_node_position(f->doc, res, &bx, &by);
    tw_model_doc_node_position(f->doc, last, &lx, &ly);
    tw_model_doc_node_position(f->doc, 2, &fx, &fy);
    g_assert_cmpfloat(bx, ==, c1_x);
    g_assert_cmpfloat(by, >, c1_y);
    g_assert_cmpfloat(fy, >, ly);
    g_assert_cmpfloat(fy, >, flat_y_before);
    /* A block whose output does not fit what follows: the U-Net down step
     * halves 28x28x8 to 14x14x16, which flat cannot reshape to 6272; flat
     * carries the engine's message, the block itself is fine, and undo
     * takes it all back (add_block checks the one step). */
    g_assert_true(tw_model_doc_undo(f->doc));
    int step = add_block(f, "U-Net down step", 1);
    g_assert_true(tw_model_doc_node_input(f->doc, 2, 0, &from, &port));
    g_assert_cmpint(from, ==, step + 2);
    assert_shape(f, step + 2, "(None, 14, 14, 16)");
    g_assert_null(tw_model_doc_node_error(f->doc, step + 2));
    const char *flat_error = tw_model_doc_node_error(f->doc, 2);
    g_assert_nonnull(flat_error);
    g_assert_nonnull(strstr(flat_error, "6272"));
    g_assert_nonnull(tw_model_doc_error(f->doc));

    /* With nothing to follow, a block is refused with the reason. */
    TwModelDoc *empty = f->doc;
    char *before = tw_model_doc_state(empty);
    GError *why = NULL;
    g_assert_cmpint(tw_designer_block_insert(empty, "Residual block", -1, &why), ==, -1);
    g_assert_nonnull(strstr(why->message, "select the layer"));
    g_clear_error(&why);
    /* A residual block after a sequence: its output's last axis sizes it;
     * Conv2D on rank 3 fails on the box with the engine's message. */
    g_assert_cmpint(tw_designer_block_insert(empty, "Residual block", 0, &why), >, 0);
    g_assert_no_error(why);
    g_assert_nonnull(tw_model_doc_error(empty));
    g_assert_true(tw_model_doc_undo(empty));
    char *after = tw_model_doc_state(empty);
    g_assert_cmpstr(after, ==, before);
    g_free(after);
    g_free(before);
}

/* A nested model (here a Sequential base inside a Sequential model) is one
 * box that opens in place, listing its layers with their shapes and
 * counts, the boxes below moving down to make room, and closes again;
 * being open survives edits and undo; auto-arrange makes room for the open
 * box, and edges go around it. */
static void test_nested_model_opens_in_place(Fixture *f, gconstpointer data)
{
    static const char json[] =
        "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"outer\", \"layers\": ["
        "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 8], \"name\": \"in\"}},"
        "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"base\", \"layers\": ["
        "{\"class_name\": \"Dense\", \"config\": {\"name\": \"d1\", \"units\": 4, \"activation\": \"relu\"}},"
        "{\"class_name\": \"Dense\", \"config\": {\"name\": \"d2\", \"units\": 3}}]}},"
        "{\"class_name\": \"Dense\", \"config\": {\"name\": \"head\", \"units\": 2}}]}}";
    GError *error = NULL;
    must(tw_model_doc_load_json(f->doc, json, "nested.json", &error), error);
    drain();
    int base = -1, head = -1;
    for (int i = 0; i < tw_model_doc_n_layers(f->doc); i++) {
        if (tw_layer_is_model(tw_model_doc_layer(f->doc, i)))
            base = i;
        if (!strcmp(tw_layer_name(tw_model_doc_layer(f->doc, i)), "head"))
            head = i;
    }
    g_assert_cmpint(base, >=, 0);
    g_assert_cmpint(head, >=, 0);
    assert_shape(f, base, "(None, 3)");
    g_assert_false(tw_model_doc_node_expanded(f->doc, base));
    g_assert_cmpfloat(tw_designer_box_height(f->doc, base), ==, TW_DESIGNER_BOX_HEIGHT);
    g_assert_false(tw_designer_canvas_toggle_nested(f->canvas, head)); /* not a nested model */

    double hx, hy, hy0;
    tw_model_doc_node_position(f->doc, head, &hx, &hy0);
    g_assert_true(tw_designer_canvas_toggle_nested(f->canvas, base));
    g_assert_true(tw_model_doc_node_expanded(f->doc, base));

    /* Its layers, fed by the (None, 8) input: 8*4 + 4 and 4*3 + 3. */
    char **rows = tw_designer_nested_rows(f->doc, base);
    g_assert_cmpint(g_strv_length(rows), ==, 2);
    g_assert_cmpstr(rows[0], ==, "Dense\td1\t(None, 4)\t36");
    g_assert_cmpstr(rows[1], ==, "Dense\td2\t(None, 3)\t15");
    g_strfreev(rows);
    double height = tw_designer_box_height(f->doc, base);
    g_assert_cmpfloat(height, >, TW_DESIGNER_BOX_HEIGHT + 2 * 12);
    /* The box is taller: its output port is at its new bottom, and a point
     * among its rows is the box. */
    double bx, by, px, py;
    tw_model_doc_node_position(f->doc, base, &bx, &by);
    tw_designer_port_point(f->doc, base, TRUE, 0, &px, &py);
    g_assert_cmpfloat(py, ==, by + height);
    g_assert_cmpint(tw_designer_hit_box(f->doc, bx + 20, by + height - 8), ==, base);
    tw_model_doc_node_position(f->doc, head, &hx, &hy);
    g_assert_cmpfloat(hy, ==, hy0 + height - TW_DESIGNER_BOX_HEIGHT); /* moved down to make room */
    assert_routes_clear(f, "nested, opened");

    /* An edit and its undo keep it open. */
    set(f, head, "units", "5");
    g_assert_true(tw_model_doc_undo(f->doc));
    g_assert_true(tw_model_doc_node_expanded(f->doc, base));

    /* Auto-arrange leaves room for it; every edge goes around every box. */
    tw_designer_canvas_arrange(f->canvas);
    gint64 end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
    while (tw_designer_canvas_arranging(f->canvas) && g_get_monotonic_time() < end)
        g_main_context_iteration(NULL, TRUE);
    g_assert_false(tw_designer_canvas_arranging(f->canvas));
    tw_model_doc_node_position(f->doc, base, &bx, &by);
    tw_model_doc_node_position(f->doc, head, &hx, &hy);
    g_assert_cmpfloat(hy, >=, by + height);
    assert_routes_clear(f, "nested, open");

    g_assert_true(tw_designer_canvas_toggle_nested(f->canvas, base));
    g_assert_false(tw_model_doc_node_expanded(f->doc, base));
    g_assert_cmpfloat(tw_designer_box_height(f->doc, base), ==, TW_DESIGNER_BOX_HEIGHT);
    double closed_y;
    tw_model_doc_node_position(f->doc, head, &hx, &closed_y);
    g_assert_cmpfloat(closed_y, ==, hy - (height - TW_DESIGNER_BOX_HEIGHT)); /* the gap closed */
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
                /* Files the engine's loader refuses (weights without a
                 * model) say so, naming the file. */
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

/* ---- training a drawn graph from the window ------------------------------ */
static const char *label_text(GtkWidget *root, const char *name)
{
    GtkWidget *w = find_named(root, name);
    g_assert_nonnull(w);
    if (GTK_IS_INSCRIPTION(w))
        return gtk_inscription_get_text(GTK_INSCRIPTION(w)) ? gtk_inscription_get_text(GTK_INSCRIPTION(w)) : "";
    return gtk_label_get_text(GTK_LABEL(w));
}

/* The header bar's Train button (its action is win.train). */
static GtkWidget *header_train(GtkWidget *root)
{
    for (GtkWidget *w = gtk_widget_get_first_child(root); w; w = gtk_widget_get_next_sibling(w)) {
        if (GTK_IS_BUTTON(w) && GTK_IS_ACTIONABLE(w) &&
            !g_strcmp0(gtk_actionable_get_action_name(GTK_ACTIONABLE(w)), "win.train"))
            return w;
        GtkWidget *found = header_train(w);
        if (found)
            return found;
    }
    return NULL;
}

static gboolean sensitive(gpointer widget)
{
    return gtk_widget_is_sensitive(widget);
}

/* A few steps shown: "Epoch 1/1 · step 3/844 · ...". */
static gboolean stepped(gpointer panel)
{
    const char *text = label_text(panel, "progress-text"), *at = strstr(text, "step ");
    return at && atoi(at + strlen("step ")) >= 3;
}

static gboolean stopped(gpointer panel)
{
    return g_str_has_prefix(label_text(panel, "status"), "Stopped");
}

/* A residual network drawn on the window's canvas through the actions the
 * UI runs (a drop, a port dragged onto a box, the palette's residual block
 * and appended layers), trained on Fashion-MNIST with the window's Train
 * button for a few steps, then stopped. */
static void test_drawn_graph_trains_from_window(void)
{
    if (!g_file_test("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz", G_FILE_TEST_EXISTS)) {
        g_test_skip("Fashion-MNIST is not in /usr/share/datasets/fashion-mnist");
        return;
    }
    GtkApplication *app = gtk_application_new("io.github.twb.Workbench.TestCanvas", G_APPLICATION_NON_UNIQUE);
    g_assert_true(g_application_register(G_APPLICATION(app), NULL, NULL));
    TwModelDoc *doc = tw_model_doc_new();
    TwWindow *win = tw_window_new(app, doc);
    twb_train_controller_attach(win);
    gtk_window_set_default_size(GTK_WINDOW(win), 1280, 860);
    gtk_window_present(GTK_WINDOW(win));
    GtkWidget *panel = GTK_WIDGET(tw_window_train_panel(win));
    char *dir = g_dir_make_tmp("twb-canvas-train-XXXXXX", NULL), *logdb = g_build_filename(dir, "runs.db", NULL);
    g_object_set(panel, "logdb", logdb, NULL);
    Fixture fx = {.doc = doc, .window = GTK_WIDGET(win)};
    fx.view = TW_DESIGNER_VIEW(find_type(GTK_WIDGET(win), TW_TYPE_DESIGNER_VIEW));
    fx.canvas = TW_DESIGNER_CANVAS(tw_designer_view_canvas(fx.view));
    Fixture *f = &fx;
    gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
    while (gtk_widget_get_height(GTK_WIDGET(f->canvas)) < 300 && g_get_monotonic_time() < end)
        g_main_context_iteration(NULL, TRUE);
    drain();

    GError *error = NULL;
    must(tw_model_doc_set_input_shape(doc, 0, "28,28,1", &error), error);
    double s = tw_designer_canvas_scale(f->canvas);
    int conv = drop_near(f, "Conv2D", 0, 0, 110 * s);
    connect(f, 0, conv);
    set(f, conv, "filters", "8");
    set(f, conv, "padding", "same");
    set(f, conv, "activation", "relu");
    int block = add_block(f, "Residual block", conv);
    tw_designer_canvas_select(f->canvas, tw_model_doc_n_layers(doc) - 1);
    g_assert_true(tw_designer_canvas_append_class(f->canvas, "Flatten"));
    g_assert_true(tw_designer_canvas_append_class(f->canvas, "Dense"));
    int dense = tw_model_doc_n_layers(doc) - 1;
    set(f, dense, "units", "10");
    set(f, dense, "activation", "softmax");
    g_assert_null(tw_model_doc_error(doc));
    g_assert_true(tw_model_doc_is_graph(doc));
    assert_shape(f, block + 6, "(None, 28, 28, 8)");
    assert_shape(f, dense, "(None, 10)");

    gtk_spin_button_set_value(GTK_SPIN_BUTTON(find_named(panel, "epochs")), 1);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(find_named(panel, "batch-size")), 64);
    gtk_editable_set_text(GTK_EDITABLE(find_named(panel, "run-name")), "drawn-residual");
    GtkWidget *train = header_train(GTK_WIDGET(win));
    g_assert_nonnull(train);
    /* Train turns on once the data is checked against the model. */
    wait_until(sensitive, train, 120, "Train to turn on");
    g_signal_emit_by_name(train, "clicked");
    wait_until(stepped, panel, 300, "a few training steps");
    /* The loss shown is a number, not NaN. */
    const char *loss = strstr(label_text(panel, "metrics"), "Loss ");
    g_assert_nonnull(loss);
    double value = g_ascii_strtod(loss + strlen("Loss "), NULL);
    g_assert_true(isfinite(value) && value > 0);
    g_test_message("%s", label_text(panel, "metrics"));
    g_signal_emit_by_name(find_named(panel, "stop"), "clicked");
    wait_until(stopped, panel, 60, "the run to stop");
    g_test_message("%s; %s", label_text(panel, "progress-text"), label_text(panel, "status"));
    g_assert_true(g_str_has_prefix(label_text(panel, "status"), "Stopped after step "));

    gtk_window_destroy(GTK_WINDOW(win));
    drain();
    g_object_unref(doc);
    g_object_unref(app);
    /* The run database and the run's checkpoint folder beside it. */
    char *rm[] = {"rm", "-rf", dir, NULL};
    g_spawn_sync(NULL, rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
    g_free(logdb);
    g_free(dir);
}

/* A label under root (shown or not) whose text is text. */
static gboolean has_label(GtkWidget *root, const char *text)
{
    if (GTK_IS_LABEL(root) && !g_strcmp0(gtk_label_get_text(GTK_LABEL(root)), text))
        return TRUE;
    for (GtkWidget *c = gtk_widget_get_first_child(root); c; c = gtk_widget_get_next_sibling(c))
        if (has_label(c, text))
            return TRUE;
    return FALSE;
}

/* A corpus model whose Lambda holds Python code: it opens with every shape
 * and saves, but its box and card carry the engine's reason and both Train
 * buttons are off with that reason. */
static void test_lambda_cannot_run(void)
{
    char *dir = corpus_dir("keras-functional");
    char *path = g_build_filename(dir, "03-triplet-siamese-shared-sequential.json", NULL);
    g_free(dir);
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        g_test_skip("the corpus (../shared/corpus/keras-functional) is not there");
        g_free(path);
        return;
    }
    GtkApplication *app = gtk_application_new("io.github.twb.Workbench.TestCanvasLambda", G_APPLICATION_NON_UNIQUE);
    g_assert_true(g_application_register(G_APPLICATION(app), NULL, NULL));
    TwModelDoc *doc = tw_model_doc_new();
    TwWindow *win = tw_window_new(app, doc);
    twb_train_controller_attach(win);
    gtk_window_set_default_size(GTK_WINDOW(win), 1280, 860);
    gtk_window_present(GTK_WINDOW(win));
    GError *error = NULL;
    must(tw_model_doc_load(doc, path, &error), error);
    drain();

    int lambda = -1;
    for (int i = 0; i < tw_model_doc_n_layers(doc); i++)
        if (!strcmp(tw_layer_class_of(tw_model_doc_layer(doc, i))->name, "Lambda"))
            lambda = i;
    g_assert_cmpint(lambda, >=, 0);
    /* A valid model: shapes known, no failing layer. */
    g_assert_cmpint(tw_model_doc_error_index(doc), ==, -1);
    const tw_shape *shape = tw_model_doc_node_output(doc, lambda, 0);
    g_assert_nonnull(shape);
    char buf[64];
    g_assert_cmpstr(tw_shape_format(shape, buf, sizeof buf), ==, "(None, 1)");
    /* The mark on the box is the engine's reason, naming the layer. */
    const char *mark = tw_model_doc_node_error(doc, lambda);
    g_assert_nonnull(mark);
    g_assert_true(g_str_has_prefix(mark, "Lambda 'lambda': runs Python code saved in the Keras file (a lambda)"));
    g_assert_cmpstr(tw_model_doc_node_cannot_run(doc, lambda), ==, mark);
    g_assert_cmpstr(tw_model_doc_error(doc), ==, mark);
    for (int i = 0; i < tw_model_doc_n_layers(doc); i++)
        if (i != lambda)
            g_assert_null(tw_model_doc_node_error(doc, i));
    /* The layer list's card says the same, and the status line why it cannot train. */
    GtkWidget *view = find_type(GTK_WIDGET(win), TW_TYPE_DESIGNER_VIEW);
    g_assert_true(has_label(find_type(view, TW_TYPE_LAYER_STACK), mark));
    char *status = g_strdup_printf("Cannot train: %s", mark);
    g_assert_true(has_label(view, status));
    g_free(status);
    /* Both Train buttons: off, the reason in the tooltip. */
    GtkWidget *header = header_train(GTK_WIDGET(win));
    GtkWidget *panel_train = find_named(GTK_WIDGET(tw_window_train_panel(win)), "train");
    g_assert_nonnull(header);
    g_assert_nonnull(panel_train);
    GtkWidget *buttons[] = {header, panel_train};
    for (int b = 0; b < 2; b++) {
        g_assert_false(gtk_widget_is_sensitive(buttons[b]));
        g_assert_cmpstr(gtk_widget_get_tooltip_text(buttons[b]), ==, mark);
    }
    g_assert_false(tw_train_panel_request_train(tw_window_train_panel(win)));
    /* The model still saves. */
    char *tmp = g_dir_make_tmp("twb-canvas-lambda-XXXXXX", NULL), *saved = g_build_filename(tmp, "m.json", NULL);
    must(tw_model_doc_save(doc, saved, &error), error);
    g_remove(saved);
    g_rmdir(tmp);
    g_free(saved);
    g_free(tmp);

    gtk_window_destroy(GTK_WINDOW(win));
    drain();
    g_object_unref(doc);
    g_object_unref(app);
    g_free(path);
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
    ADD("zoom_redraw_spread", test_zoom_redraw_spread);
    ADD("routes_avoid_boxes", test_routes_avoid_boxes);
    ADD("route_crossings", test_route_crossings);
    ADD("box_shows_every_output", test_box_shows_every_output);
    ADD("palette_blocks", test_palette_blocks);
    ADD("nested_model_opens_in_place", test_nested_model_opens_in_place);
    ADD("saved_graph_trains", test_saved_graph_trains);
    g_test_add_func("/ui/canvas/drawn_graph_trains_from_window", test_drawn_graph_trains_from_window);
    ADD("corpus_open_save", test_corpus_open_save);
    g_test_add_func("/ui/canvas/lambda_cannot_run", test_lambda_cannot_run);
    return g_test_run();
}
