/* Editing a nested model in place (drill-down), in the app's window,
 * through the actions the UI uses: Edit Nested Model on the canvas (its
 * context menu and Shift+Enter run tw_designer_canvas_edit_nested), edits
 * inside through the canvas and the document, back out through the
 * breadcrumb's action (tw_designer_view_leave_to) or Escape, and Ctrl+Z /
 * Ctrl+Shift+Z as the window's undo and redo. Checks: the parent changes as
 * one undo step that restores the exact document, a nested model that no
 * longer fits its input is refused with the engine's message and the view
 * stays inside, nested-in-nested, and a Sequential shared by three inputs;
 * that boxes moved inside a nested model stay where they were put, also
 * in its copies (Ctrl+D, Ctrl+C/V). */
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include <tw/engine.h>
#include <tw/model_file.h>

#include "designer_canvas.h"
#include "designer_view.h"
#include "gui_helpers.h"
#include "ui_keys.h"
#include "window.h"

typedef struct {
    GtkApplication *app;
    TwModelDoc *doc;
    TwWindow *win;
    TwDesignerView *view;
} Fixture;

static void fixture_setup(Fixture *f, gconstpointer data)
{
    f->app = gtk_application_new("io.github.twb.Workbench.TestNested", G_APPLICATION_NON_UNIQUE);
    g_assert_true(g_application_register(G_APPLICATION(f->app), NULL, NULL));
    f->doc = tw_model_doc_new();
    f->win = tw_window_new(f->app, f->doc);
    gtk_window_set_default_size(GTK_WINDOW(f->win), 1280, 800);
    gtk_window_present(GTK_WINDOW(f->win));
    f->view = TW_DESIGNER_VIEW(find_type(GTK_WIDGET(f->win), TW_TYPE_DESIGNER_VIEW));
    drain();
}

static void fixture_teardown(Fixture *f, gconstpointer data)
{
    designer_window_close(GTK_WIDGET(f->win), f->doc);
    g_object_unref(f->app);
}

static TwDesignerCanvas *canvas(Fixture *f)
{
    return TW_DESIGNER_CANVAS(tw_designer_view_canvas(f->view));
}

static int node_named(TwModelDoc *doc, const char *name)
{
    for (int i = 0; i < tw_model_doc_n_layers(doc); i++)
        if (!strcmp(tw_layer_name(tw_model_doc_layer(doc, i)), name))
            return i;
    g_error("no layer named %s", name);
}

static int64_t total(TwModelDoc *doc)
{
    int64_t trainable, frozen;
    tw_model_doc_totals(doc, &trainable, &frozen);
    return trainable + frozen;
}

typedef struct {
    TwModelDoc *doc;
    char *state;
} Watch;

static gboolean state_changed(gpointer data)
{
    Watch *w = data;
    char *now = tw_model_doc_state(w->doc);
    gboolean changed = strcmp(now, w->state) != 0;
    g_free(now);
    return changed;
}

/* Ctrl+Z or Ctrl+Shift+Z as a person types them (until the shown document
 * changes), else the window's action they are bound to. */
static void key_or_action(Fixture *f, const char *keys, const char *action)
{
    Watch w = {tw_designer_view_doc(f->view), tw_model_doc_state(tw_designer_view_doc(f->view))};
    if (!ui_keys_send(GTK_WIDGET(f->win), keys, state_changed, &w))
        g_assert_true(gtk_widget_activate_action(GTK_WIDGET(f->win), action, NULL));
    drain();
    g_assert_true(state_changed(&w));
    g_free(w.state);
}

static gboolean at_top(gpointer data)
{
    return tw_designer_view_depth(data) == 0;
}

/* The breadcrumb's visible texts, joined by spaces. */
static char *crumbs(Fixture *f)
{
    GString *out = g_string_new(NULL);
    GtkWidget *bar = gtk_widget_get_prev_sibling(gtk_widget_get_parent(GTK_WIDGET(canvas(f))));
    g_assert_true(gtk_widget_has_css_class(bar, "designer-breadcrumb"));
    for (GtkWidget *c = gtk_widget_get_first_child(bar); c; c = gtk_widget_get_next_sibling(c)) {
        if (!gtk_widget_get_visible(c) || gtk_widget_has_css_class(c, "error"))
            continue;
        const char *text = GTK_IS_BUTTON(c) ? gtk_button_get_label(GTK_BUTTON(c)) : gtk_label_get_text(GTK_LABEL(c));
        g_string_append_printf(out, "%s%s", out->len ? " " : "", text);
    }
    return g_string_free(out, FALSE);
}

#define NESTED_JSON(INNER)                                                                                          \
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"outer\", \"layers\": ["                              \
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 8], \"name\": \"in\"}},"           \
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"base\", \"layers\": ["                               \
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 8], \"name\": \"base_in\"}},"      \
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"d1\", \"units\": 4, \"activation\": \"relu\"}}," INNER    \
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"d2\", \"units\": 3}}]}},"                                 \
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"head\", \"units\": 2}}]}}"

/* A Sequential block inside base, between d1 and d2. */
#define BLOCK_JSON                                                                                                   \
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"block\", \"layers\": ["                               \
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4], \"name\": \"block_in\"}},"     \
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"b1\", \"units\": 4}}]}},"

static void load(Fixture *f, const char *json)
{
    GError *error = NULL;
    must(tw_model_doc_load_json(f->doc, json, "nested.json", &error), error);
    drain();
}

/* Enter base, add a Dense after d2 as the palette does, back out: the
 * parent gains its parameters as the edits are made, all of the visit one
 * step that Ctrl+Z undoes exactly. */
static void test_edit_and_undo(Fixture *f, gconstpointer data)
{
    load(f, NESTED_JSON(""));
    char *before = tw_model_doc_to_json(f->doc);
    int base = node_named(f->doc, "base");
    g_assert_cmpint(total(f->doc), ==, 36 + 15 + 8); /* 8*4+4, 4*3+3, 3*2+2 */
    g_assert_false(tw_designer_canvas_edit_nested(canvas(f), node_named(f->doc, "head")));
    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), base));
    drain();
    TwModelDoc *child = tw_designer_view_doc(f->view);
    g_assert_true(child != f->doc);
    g_assert_cmpint(tw_designer_view_depth(f->view), ==, 1);
    char *path = crumbs(f);
    g_assert_cmpstr(path, ==, "outer › base");
    g_free(path);
    g_assert_cmpint(total(child), ==, 36 + 15);

    tw_designer_canvas_select(canvas(f), node_named(child, "d2"));
    g_assert_true(tw_designer_canvas_append_class(canvas(f), "Dense"));
    int added = tw_designer_canvas_primary(canvas(f));
    GError *error = NULL;
    char *appended = tw_model_doc_state(child);
    must(tw_model_doc_set_param(child, added, "units", "5", &error), error);
    g_assert_cmpint(total(child), ==, 36 + 15 + 20);
    /* Undo inside is the child's own, and the window's Ctrl+Z reaches it. */
    key_or_action(f, "ctrl+z", "win.undo");
    char *state = tw_model_doc_state(child);
    g_assert_cmpstr(state, ==, appended);
    g_free(state);
    g_free(appended);
    key_or_action(f, "ctrl+shift+z", "win.redo");
    g_assert_cmpint(total(child), ==, 36 + 15 + 20);
    /* The parent follows, the visit one step of its own. */
    g_assert_cmpint(total(f->doc), ==, 36 + 15 + 20 + 12);
    g_assert_true(tw_model_doc_can_undo(f->doc));

    char *inside = tw_model_doc_to_json(f->doc);
    must(tw_designer_view_leave_to(f->view, 0, &error), error);
    drain();
    g_assert_true(tw_designer_view_doc(f->view) == f->doc);
    g_assert_cmpint(tw_designer_view_depth(f->view), ==, 0);
    g_assert_cmpint(total(f->doc), ==, 36 + 15 + 20 + 12); /* head now reads 5 features: 5*2+2 */
    char *left = tw_model_doc_to_json(f->doc);
    g_assert_cmpstr(left, ==, inside); /* going back had nothing more to write */
    g_free(left);
    g_free(inside);
    g_assert_cmpint(node_named(f->doc, "base"), ==, base);
    g_assert_cmpint(tw_model_nlayers(tw_model_doc_layer(f->doc, base)), ==, 4);
    char *after = tw_model_doc_to_json(f->doc);

    key_or_action(f, "ctrl+z", "win.undo");
    char *undone = tw_model_doc_to_json(f->doc);
    g_assert_cmpstr(undone, ==, before);
    key_or_action(f, "ctrl+shift+z", "win.redo");
    char *redone = tw_model_doc_to_json(f->doc);
    g_assert_cmpstr(redone, ==, after);
    g_free(before);
    g_free(after);
    g_free(undone);
    g_free(redone);
}

/* An edit inside that makes the nested model no longer fit what feeds it
 * does not go into the parent, and going back is refused: the view stays
 * inside and shows the engine's message; the parent is unchanged. Escape
 * leaves once it fits again. */
static void test_misfit_refused(Fixture *f, gconstpointer data)
{
    load(f, NESTED_JSON(""));
    char *before = tw_model_doc_to_json(f->doc);
    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), node_named(f->doc, "base")));
    TwModelDoc *child = tw_designer_view_doc(f->view);
    GError *error = NULL;
    must(tw_model_doc_set_input_shape(child, 0, "6", &error), error);
    g_assert_null(tw_model_doc_error(child)); /* a model on its own */
    g_assert_false(tw_designer_view_leave_to(f->view, 0, &error));
    g_assert_nonnull(error);
    g_test_message("refused: %s", error->message);
    g_clear_error(&error);
    g_assert_true(tw_designer_view_doc(f->view) == child);
    GtkWidget *bar = gtk_widget_get_prev_sibling(gtk_widget_get_parent(GTK_WIDGET(canvas(f))));
    GtkWidget *message = gtk_widget_get_last_child(bar);
    g_assert_true(gtk_widget_get_visible(message));
    g_assert_true(g_str_has_prefix(gtk_label_get_text(GTK_LABEL(message)), "Cannot go back: "));
    char *now = tw_model_doc_to_json(f->doc);
    g_assert_cmpstr(now, ==, before);
    g_free(now);
    g_assert_false(tw_model_doc_can_undo(f->doc));

    /* Fixed, Escape on the canvas goes back. */
    must(tw_model_doc_set_input_shape(child, 0, "8", &error), error);
    gtk_widget_grab_focus(GTK_WIDGET(canvas(f)));
    if (!ui_keys_send(GTK_WIDGET(f->win), "Escape", at_top, f->view))
        must(tw_designer_view_leave_to(f->view, 0, &error), error);
    drain();
    g_assert_cmpint(tw_designer_view_depth(f->view), ==, 0);
    now = tw_model_doc_to_json(f->doc);
    g_assert_cmpstr(now, ==, before);
    g_free(now);
    g_free(before);
}

/* A nested model inside a nested model: the breadcrumb grows, and going
 * back to the top (the outer crumb) writes both levels, one step in the
 * top document. */
static void test_nested_in_nested(Fixture *f, gconstpointer data)
{
    load(f, NESTED_JSON(BLOCK_JSON));
    char *before = tw_model_doc_to_json(f->doc);
    int64_t had = total(f->doc);
    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), node_named(f->doc, "base")));
    TwModelDoc *base = tw_designer_view_doc(f->view);
    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), node_named(base, "block")));
    TwModelDoc *block = tw_designer_view_doc(f->view);
    g_assert_cmpint(tw_designer_view_depth(f->view), ==, 2);
    char *path = crumbs(f);
    g_assert_cmpstr(path, ==, "outer › base › block");
    g_free(path);
    GError *error = NULL;
    tw_designer_canvas_select(canvas(f), node_named(block, "b1"));
    g_assert_true(tw_designer_canvas_append_class(canvas(f), "Dense"));
    must(tw_model_doc_set_param(block, tw_designer_canvas_primary(canvas(f)), "units", "4", &error), error);
    must(tw_designer_view_leave_to(f->view, 0, &error), error);
    drain();
    g_assert_cmpint(tw_designer_view_depth(f->view), ==, 0);
    g_assert_cmpint(total(f->doc), ==, had + 20); /* 4*4+4 */
    path = crumbs(f);
    g_assert_cmpstr(path, ==, "outer");
    g_free(path);
    g_assert_false(gtk_widget_get_visible(gtk_widget_get_prev_sibling(gtk_widget_get_parent(GTK_WIDGET(canvas(f))))));
    key_or_action(f, "ctrl+z", "win.undo");
    char *undone = tw_model_doc_to_json(f->doc);
    g_assert_cmpstr(undone, ==, before);
    g_assert_false(tw_model_doc_can_undo(f->doc));
    g_free(undone);
    g_free(before);
}

/* Where node's box is in the shown document, entering the nested model
 * at outer_node first and going back out after. */
static void position_inside(Fixture *f, int outer_node, const char *name, double *x, double *y)
{
    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), outer_node));
    drain();
    TwModelDoc *child = tw_designer_view_doc(f->view);
    tw_model_doc_node_position(child, node_named(child, name), x, y);
    GError *error = NULL;
    g_assert_false(tw_model_doc_modified(child)); /* placed as kept, not arranged anew */
    must(tw_designer_view_leave_to(f->view, 0, &error), error);
    drain();
}

/* A box of the shown nested model dragged on screen; its new place.
 * Positions are kept to a tenth of a unit, hence the comparisons to
 * 0.05 below. */
static void drag_inside(Fixture *f, const char *name, double *x, double *y)
{
    TwModelDoc *child = tw_designer_view_doc(f->view);
    int node = node_named(child, name);
    double x0, y0, cx, cy;
    tw_model_doc_node_position(child, node, &x0, &y0);
    tw_designer_canvas_box_center(canvas(f), node, &cx, &cy);
    tw_designer_canvas_drag(canvas(f), cx, cy, cx + 150, cy + 70, 0);
    drain();
    tw_model_doc_node_position(child, node, x, y);
    g_assert_cmpfloat(*x, >, x0);
    g_assert_cmpfloat(*y, >, y0);
}

/* The corpus's triplet model: three inputs call one Sequential encoder.
 * Editing it once changes every call. */
static void test_shared_nested(Fixture *f, gconstpointer data)
{
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    char *file = g_build_filename(srcdir ? srcdir : ".", "..", "..", "shared", "corpus", "keras-functional",
                                  "03-triplet-siamese-shared-sequential.json", NULL);
    if (!g_file_test(file, G_FILE_TEST_EXISTS)) {
        g_test_skip("the corpus is not there");
        g_free(file);
        return;
    }
    GError *error = NULL;
    must(tw_model_doc_load(f->doc, file, &error), error);
    g_free(file);
    drain();
    int n = tw_model_doc_n_layers(f->doc), first = -1, calls = 0;
    for (int i = 0; i < n; i++)
        if (tw_layer_is_model(tw_model_doc_layer(f->doc, i))) {
            calls++;
            if (first < 0)
                first = i;
        }
    g_assert_cmpint(calls, ==, 3);
    int64_t had = total(f->doc);
    g_assert_cmpint(tw_model_doc_error_index(f->doc), ==, -1);
    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), first));
    TwModelDoc *child = tw_designer_view_doc(f->view);
    int64_t inner = total(child);
    tw_designer_canvas_select(canvas(f), tw_model_doc_n_layers(child) - 1);
    g_assert_true(tw_designer_canvas_append_class(canvas(f), "Dense"));
    int64_t added = total(child) - inner;
    g_assert_cmpint(added, >, 0);
    must(tw_designer_view_leave_to(f->view, 0, &error), error);
    drain();
    /* One shared layer: its weights count once, and each call has it. */
    g_assert_cmpint(tw_model_doc_error_index(f->doc), ==, -1); /* a model (its Lambda cannot run here) */
    g_assert_cmpint(total(f->doc), ==, had + added);
    tw_layer *shared = tw_model_doc_layer(f->doc, first);
    int last = -1;
    for (int i = 0; i < n; i++)
        if (tw_layer_is_model(tw_model_doc_layer(f->doc, i))) {
            g_assert_true(tw_model_doc_layer(f->doc, i) == shared);
            last = i;
        }

    /* A box moved inside through one call is where it was put through
     * another: the positions are the shared layer's. */
    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), first));
    drain();
    child = tw_designer_view_doc(f->view);
    char *name = g_strdup(tw_layer_name(tw_model_doc_layer(child, 1)));
    double x1, y1, x, y;
    drag_inside(f, name, &x1, &y1);
    must(tw_designer_view_leave_to(f->view, 0, &error), error);
    drain();
    g_assert_cmpint(last, !=, first);
    position_inside(f, last, name, &x, &y);
    g_assert_cmpfloat_with_epsilon(x, x1, 0.05);
    g_assert_cmpfloat_with_epsilon(y, y1, 0.05);
    g_free(name);

    /* An input shape that none of the three calls fits: the reason says
     * so once, not once a call. */
    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), first));
    drain();
    child = tw_designer_view_doc(f->view);
    must(tw_model_doc_set_input_shape(child, 0, "5", &error), error);
    drain();
    const char *why = tw_designer_view_cannot_train(f->view);
    g_assert_nonnull(why);
    g_test_message("shared misfit: %s", why);
    const char *engine = strstr(why, "declares input");
    g_assert_nonnull(engine);
    g_assert_null(strstr(engine + 1, "declares input"));
    key_or_action(f, "ctrl+z", "win.undo");
    g_assert_null(tw_designer_view_cannot_train(f->view));
    must(tw_designer_view_leave_to(f->view, 0, &error), error);
}

/* A box moved inside a nested model stays where it was put: back out and
 * in again, through undo and redo of the parent, and through a save to
 * JSON and opening that file again. The file keeps the place where Keras
 * ignores it: beside the nested model's "class_name" and "config", as at
 * the top, and the engine's reader takes the file as before. */
static void test_positions_kept(Fixture *f, gconstpointer data)
{
    load(f, NESTED_JSON(""));
    int base = node_named(f->doc, "base");
    double x0, y0, x1, y1, x, y;
    position_inside(f, base, "d1", &x0, &y0);
    g_assert_false(tw_model_doc_can_undo(f->doc));

    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), base));
    drain();
    drag_inside(f, "d1", &x1, &y1);
    GError *error = NULL;
    must(tw_designer_view_leave_to(f->view, 0, &error), error);
    drain();
    g_assert_true(tw_model_doc_modified(f->doc));
    position_inside(f, base, "d1", &x, &y);
    g_assert_cmpfloat_with_epsilon(x, x1, 0.05);
    g_assert_cmpfloat_with_epsilon(y, y1, 0.05);

    key_or_action(f, "ctrl+z", "win.undo");
    position_inside(f, base, "d1", &x, &y);
    g_assert_cmpfloat_with_epsilon(x, x0, 0.05);
    g_assert_cmpfloat_with_epsilon(y, y0, 0.05);
    key_or_action(f, "ctrl+shift+z", "win.redo");
    position_inside(f, base, "d1", &x, &y);
    g_assert_cmpfloat_with_epsilon(x, x1, 0.05);
    g_assert_cmpfloat_with_epsilon(y, y1, 0.05);

    char *dir = g_dir_make_tmp("twb-nested-XXXXXX", NULL);
    char *file = g_build_filename(dir, "nested.json", NULL);
    must(tw_model_doc_save(f->doc, file, &error), error);
    char *text = NULL;
    g_assert_true(g_file_get_contents(file, &text, NULL, NULL));
    tw_model *read = tw_model_from_json(text, strlen(text), file);
    g_assert_nonnull(read);
    tw_layer_unref(read);
    JsonParser *parser = json_parser_new();
    g_assert_true(json_parser_load_from_data(parser, text, -1, NULL));
    JsonObject *entry = json_array_get_object_element(
        json_object_get_array_member(json_object_get_object_member(
                                         json_node_get_object(json_parser_get_root(parser)), "config"),
                                     "layers"),
        (guint)base);
    g_assert_cmpstr(json_object_get_string_member(entry, "class_name"), ==, "Sequential");
    JsonArray *kept = json_array_get_array_element(
        json_object_get_array_member(
            json_object_get_object_member(json_object_get_object_member(entry, "twb_designer"), "positions"),
            "d1"),
        0);
    g_assert_cmpfloat_with_epsilon(json_array_get_double_element(kept, 0), x1, 0.05);
    g_assert_cmpfloat_with_epsilon(json_array_get_double_element(kept, 1), y1, 0.05);
    g_object_unref(parser);
    g_free(text);

    must(tw_model_doc_load(f->doc, file, &error), error);
    drain();
    position_inside(f, node_named(f->doc, "base"), "d1", &x, &y);
    g_assert_cmpfloat_with_epsilon(x, x1, 0.05);
    g_assert_cmpfloat_with_epsilon(y, y1, 0.05);
    g_assert_false(tw_model_doc_modified(f->doc));
    g_unlink(file);
    g_rmdir(dir);
    g_free(file);
    g_free(dir);
}

/* The two-level start of the deeper tests: NESTED_JSON(BLOCK_JSON) loaded,
 * base then its block entered, b1 dragged; its new place in x1, y1. */
static void move_b1_in_block(Fixture *f, double *x1, double *y1)
{
    load(f, NESTED_JSON(BLOCK_JSON));
    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), node_named(f->doc, "base")));
    TwModelDoc *base = tw_designer_view_doc(f->view);
    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), node_named(base, "block")));
    drain();
    drag_inside(f, "b1", x1, y1);
}

/* The window's model saved to a file of a scratch folder and read back
 * from it (the folder gone afterwards). */
static void save_and_reopen(Fixture *f)
{
    GError *error = NULL;
    char *dir = g_dir_make_tmp("twb-nested-XXXXXX", NULL);
    char *file = g_build_filename(dir, "nested.json", NULL);
    must(tw_model_doc_save(f->doc, file, &error), error);
    must(tw_model_doc_load(f->doc, file, &error), error);
    drain();
    g_unlink(file);
    g_rmdir(dir);
    g_free(file);
    g_free(dir);
}

/* The shown level, unmodified, has its box named b1 at (x1, y1). */
static void assert_b1_at(Fixture *f, double x1, double y1)
{
    TwModelDoc *shown = tw_designer_view_doc(f->view);
    g_assert_false(tw_model_doc_modified(shown));
    double x, y;
    tw_model_doc_node_position(shown, node_named(shown, "b1"), &x, &y);
    g_assert_cmpfloat_with_epsilon(x, x1, 0.05);
    g_assert_cmpfloat_with_epsilon(y, y1, 0.05);
}

/* Two levels down: the block's positions, kept in its entry inside
 * base's entry, come back after a save and a reopen; renaming base on
 * the way keeps them with it. */
static void test_positions_kept_deeper(Fixture *f, gconstpointer data)
{
    double x1, y1;
    move_b1_in_block(f, &x1, &y1);
    GError *error = NULL;
    must(tw_designer_view_leave_to(f->view, 0, &error), error);
    drain();
    must(tw_model_doc_rename_layer(f->doc, node_named(f->doc, "base"), "trunk", &error), error);
    save_and_reopen(f);
    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), node_named(f->doc, "trunk")));
    drain();
    TwModelDoc *base = tw_designer_view_doc(f->view);
    g_assert_false(tw_model_doc_modified(base));
    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), node_named(base, "block")));
    drain();
    assert_b1_at(f, x1, y1);
    must(tw_designer_view_leave_to(f->view, 0, &error), error);
    drain();
    g_assert_false(tw_model_doc_modified(f->doc));
}

/* The node of the shown document's last nested model, a copy just made. */
static int last_nested(TwModelDoc *doc)
{
    for (int i = tw_model_doc_n_layers(doc) - 1; i >= 0; i--)
        if (tw_layer_is_model(tw_model_doc_layer(doc, i)))
            return i;
    g_error("no nested model");
}

/* Copies of a nested model keep the boxes inside it where the original
 * has them: Ctrl+D on a chain (the window's action, the stack's
 * duplicate), Ctrl+C and Ctrl+V of a block of two boxes on the canvas,
 * and Ctrl+D of the canvas's selection once the model is a graph. Each
 * copy has a name of its own, which its positions go under. */
static void test_copies_keep_positions(Fixture *f, gconstpointer data)
{
    load(f, NESTED_JSON(""));
    int base = node_named(f->doc, "base");
    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), base));
    drain();
    double x1, y1, x, y;
    drag_inside(f, "d1", &x1, &y1);
    GError *error = NULL;
    must(tw_designer_view_leave_to(f->view, 0, &error), error);
    drain();

    tw_designer_canvas_select(canvas(f), base);
    g_assert_false(tw_model_doc_is_graph(f->doc));
    g_assert_true(gtk_widget_activate_action(GTK_WIDGET(f->win), "win.duplicate-layer", NULL));
    drain();
    int copy = last_nested(f->doc);
    g_assert_cmpint(copy, ==, base + 1);
    position_inside(f, copy, "d1", &x, &y);
    g_assert_cmpfloat_with_epsilon(x, x1, 0.05);
    g_assert_cmpfloat_with_epsilon(y, y1, 0.05);

    int n = tw_model_doc_n_layers(f->doc);
    tw_designer_canvas_select_many(canvas(f), (int[]){base, node_named(f->doc, "head")}, 2);
    g_assert_true(tw_designer_canvas_copy(canvas(f)));
    g_assert_true(tw_designer_canvas_paste(canvas(f)));
    drain();
    g_assert_cmpint(tw_model_doc_n_layers(f->doc), ==, n + 2);
    copy = last_nested(f->doc);
    g_assert_cmpint(copy, >=, n);
    position_inside(f, copy, "d1", &x, &y);
    g_assert_cmpfloat_with_epsilon(x, x1, 0.05);
    g_assert_cmpfloat_with_epsilon(y, y1, 0.05);

    g_assert_true(tw_model_doc_is_graph(f->doc));
    tw_designer_canvas_select(canvas(f), copy);
    g_assert_true(gtk_widget_activate_action(GTK_WIDGET(f->win), "win.duplicate-layer", NULL));
    drain();
    g_assert_cmpint(tw_model_doc_n_layers(f->doc), ==, n + 3);
    position_inside(f, last_nested(f->doc), "d1", &x, &y);
    g_assert_cmpfloat_with_epsilon(x, x1, 0.05);
    g_assert_cmpfloat_with_epsilon(y, y1, 0.05);
    /* The names differ, and the original keeps its place too. */
    g_assert_cmpstr(tw_layer_name(tw_model_doc_layer(f->doc, last_nested(f->doc))), !=, "base");
    position_inside(f, base, "d1", &x, &y);
    g_assert_cmpfloat_with_epsilon(x, x1, 0.05);
    g_assert_cmpfloat_with_epsilon(y, y1, 0.05);
}

/* Ctrl+A Ctrl+C Ctrl+V as a person types them on the canvas (until the
 * shown document changes), else the canvas's own actions. */
static void copy_all_keys(Fixture *f)
{
    gtk_widget_grab_focus(GTK_WIDGET(canvas(f)));
    Watch w = {tw_designer_view_doc(f->view), tw_model_doc_state(tw_designer_view_doc(f->view))};
    if (!ui_keys_send(GTK_WIDGET(f->win), "ctrl+a ctrl+c ctrl+v", state_changed, &w)) {
        int n = tw_model_doc_n_layers(w.doc);
        int *all = g_new(int, n);
        for (int i = 0; i < n; i++)
            all[i] = i;
        tw_designer_canvas_select_many(canvas(f), all, n);
        g_free(all);
        g_assert_true(tw_designer_canvas_copy(canvas(f)) && tw_designer_canvas_paste(canvas(f)));
    }
    drain();
    g_assert_true(state_changed(&w));
    g_free(w.state);
}

/* Copies two levels down: a nested model copied inside another keeps its
 * boxes' places, and a copy of the outer one keeps those of the model
 * inside it too, after a save and a reopen. */
static void test_copies_keep_positions_deeper(Fixture *f, gconstpointer data)
{
    double x1, y1;
    move_b1_in_block(f, &x1, &y1);
    GError *error = NULL;
    must(tw_designer_view_leave_to(f->view, 1, &error), error);
    drain();
    TwModelDoc *base = tw_designer_view_doc(f->view);
    /* Inside base, block selected: duplicate it in base's chain (the
     * window's action, which the List's Ctrl+D runs), then enter the
     * copy. */
    g_assert_cmpint(tw_designer_canvas_primary(canvas(f)), ==, node_named(base, "block"));
    g_assert_false(tw_model_doc_is_graph(base));
    g_assert_true(gtk_widget_activate_action(GTK_WIDGET(f->win), "win.duplicate-layer", NULL));
    drain();
    int copy = last_nested(base);
    g_assert_cmpstr(tw_layer_name(tw_model_doc_layer(base, copy)), !=, "block");
    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), copy));
    drain();
    assert_b1_at(f, x1, y1);
    must(tw_designer_view_leave_to(f->view, 0, &error), error);
    drain();

    /* At the top: Ctrl+A Ctrl+C Ctrl+V (a second branch, in_1 -> base_1
     * -> head_1); save, reopen, and enter the copy's block. */
    copy_all_keys(f);
    copy = last_nested(f->doc);
    char *name = g_strdup(tw_layer_name(tw_model_doc_layer(f->doc, copy)));
    g_assert_cmpstr(name, !=, "base");
    save_and_reopen(f);
    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), node_named(f->doc, name)));
    base = tw_designer_view_doc(f->view);
    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), node_named(base, "block")));
    drain();
    assert_b1_at(f, x1, y1);
    must(tw_designer_view_leave_to(f->view, 0, &error), error);
    g_free(name);
}

typedef struct {
    TwWindow *win;
    int count;
    char *model; /* the Keras JSON of the window's model when Train was requested */
} TrainWatch;

/* The app's training controller (app/train_controller.c) trains a copy of
 * the window's document when the panel asks; here, that copy is kept. */
static void count_train(TwTrainPanel *panel, const tw_train_settings *settings, TrainWatch *w)
{
    w->count++;
    GError *error = NULL;
    tw_model *model = tw_model_doc_copy_model(tw_window_doc(w->win), &error);
    must(model != NULL, error);
    g_free(w->model);
    char *json = tw_model_to_json(model);
    w->model = g_strdup(json);
    free(json);
    tw_layer_unref(model);
}

static gboolean trained(gpointer data)
{
    return ((TrainWatch *)data)->count > 0;
}

static gboolean trained_twice(gpointer data)
{
    return ((TrainWatch *)data)->count > 1;
}

/* Train in the header and in the training panel: on, or off with the
 * same reason (why), with Ctrl+Return's action. */
static void assert_train(Fixture *f, const char *why)
{
    GtkWidget *header = titlebar_button(GTK_WINDOW(f->win), "win.train");
    GtkWidget *button = find_named(GTK_WIDGET(tw_window_train_panel(f->win)), "train");
    g_assert_cmpint(g_action_group_get_action_enabled(G_ACTION_GROUP(f->win), "train"), ==, why == NULL);
    g_assert_cmpint(gtk_widget_get_sensitive(header), ==, why == NULL);
    g_assert_cmpint(gtk_widget_get_sensitive(button), ==, why == NULL);
    g_assert_cmpstr(tw_train_panel_cannot_train(tw_window_train_panel(f->win)), ==, why);
    if (why) {
        g_assert_cmpstr(gtk_widget_get_tooltip_text(header), ==, why);
        g_assert_cmpstr(gtk_widget_get_tooltip_text(button), ==, why);
    }
}

static const char *label_text(GtkWidget *label)
{
    return gtk_widget_get_visible(label) ? gtk_label_get_text(GTK_LABEL(label)) : "";
}

/* While the designer shows a nested model, Train (the header's, the
 * panel's, Ctrl+Return) is for the whole model with the edits made
 * inside: on while that model can train, trained with the edits when
 * clicked, and off with the engine's message when an edit does not fit
 * the outer model. The status line gives the nested model's totals,
 * named, and the whole model's under them. */
static void test_train_inside(Fixture *f, gconstpointer data)
{
    load(f, NESTED_JSON(""));
    TwTrainPanel *panel = tw_window_train_panel(f->win);
    TrainWatch watch = {f->win, 0, NULL};
    g_signal_connect(panel, "train-requested", G_CALLBACK(count_train), &watch);
    GtkWidget *status = tw_designer_view_status(f->view), *whole = tw_designer_view_whole_status(f->view);
    GtkWidget *problem = tw_designer_view_problem(f->view);
    assert_train(f, NULL);
    g_assert_true(g_str_has_prefix(label_text(status), "3 layers · Total params: 59 "));
    g_assert_cmpstr(label_text(whole), ==, "");

    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), node_named(f->doc, "base")));
    drain();
    TwModelDoc *child = tw_designer_view_doc(f->view);
    assert_train(f, NULL);
    g_assert_true(g_str_has_prefix(label_text(status), "Inside base: 3 layers · Total params: 51 "));
    g_assert_true(g_str_has_prefix(label_text(whole), "Whole model outer: 3 layers · Total params: 59 "));
    g_assert_cmpstr(label_text(problem), ==, "");

    /* An edit inside: the whole model has it, and Train, clicked, trains
     * it so, the view staying inside. */
    tw_designer_canvas_select(canvas(f), node_named(child, "d2"));
    g_assert_true(tw_designer_canvas_append_class(canvas(f), "Dense"));
    GError *error = NULL;
    must(tw_model_doc_set_param(child, tw_designer_canvas_primary(canvas(f)), "units", "5", &error), error);
    drain();
    assert_train(f, NULL);
    g_assert_true(g_str_has_prefix(label_text(status), "Inside base: 4 layers · Total params: 71 "));
    g_assert_true(g_str_has_prefix(label_text(whole), "Whole model outer: 3 layers · Total params: 83 "));
    GtkWidget *button = find_named(GTK_WIDGET(panel), "train");
    if (!ui_click_send(GTK_WIDGET(f->win), button, gtk_widget_get_width(button) / 2.0,
                       gtk_widget_get_height(button) / 2.0, trained, &watch))
        g_assert_true(tw_train_panel_request_train(panel));
    drain();
    g_assert_cmpint(watch.count, ==, 1);
    g_assert_nonnull(strstr(watch.model, "\"units\": 5"));
    g_assert_cmpint(tw_designer_view_depth(f->view), ==, 1);
    g_assert_true(tw_designer_view_doc(f->view) == child);

    /* An edit that makes base no longer fit its input: Train is off with
     * the engine's message, which names the layer. */
    must(tw_model_doc_set_input_shape(child, 0, "6", &error), error);
    drain();
    const char *why = tw_train_panel_cannot_train(panel);
    g_assert_nonnull(why);
    g_test_message("misfit: %s", why);
    g_assert_true(g_str_has_prefix(why, "Inside base: the edit does not fit outer: "));
    g_assert_nonnull(strstr(why + strlen("Inside base: the edit does not fit outer: "), "base"));
    assert_train(f, why);
    gtk_widget_activate_action(GTK_WIDGET(f->win), "win.train", NULL);
    g_assert_false(tw_train_panel_request_train(panel));
    drain();
    g_assert_cmpint(watch.count, ==, 1);
    g_assert_true(g_str_has_prefix(label_text(whole),
                                   "Whole model outer (without the edit that does not fit): 3 layers · Total params: 83 "));
    char *text = g_strdup_printf("Cannot train: %s", why);
    g_assert_cmpstr(label_text(problem), ==, text);
    g_free(text);

    /* Fixed: on again, Ctrl+Return (as the app binds it) trains, the
     * canvas holding the focus. */
    must(tw_model_doc_set_input_shape(child, 0, "8", &error), error);
    drain();
    assert_train(f, NULL);
    gtk_application_set_accels_for_action(f->app, "win.train", (const char *[]){"<Control>Return", NULL});
    gtk_widget_grab_focus(GTK_WIDGET(canvas(f)));
    if (!ui_keys_send(GTK_WIDGET(f->win), "ctrl+Return", trained_twice, &watch))
        g_assert_true(gtk_widget_activate_action(GTK_WIDGET(f->win), "win.train", NULL));
    drain();
    g_assert_cmpint(watch.count, ==, 2);
    g_assert_nonnull(strstr(watch.model, "\"units\": 5"));

    /* Escape: nothing more to write; the top model trains as it was
     * trained inside. */
    char *inside = tw_model_doc_to_json(f->doc);
    if (!ui_keys_send(GTK_WIDGET(f->win), "Escape", at_top, f->view))
        must(tw_designer_view_leave_to(f->view, 0, &error), error);
    drain();
    g_assert_cmpint(tw_designer_view_depth(f->view), ==, 0);
    char *now = tw_model_doc_to_json(f->doc);
    g_assert_cmpstr(now, ==, inside);
    g_free(now);
    g_free(inside);
    assert_train(f, NULL);
    g_assert_true(g_str_has_prefix(label_text(status), "3 layers · Total params: 83 "));
    g_assert_cmpstr(label_text(whole), ==, "");
    g_signal_handlers_disconnect_by_func(panel, count_train, &watch);
    g_free(watch.model);
}

/* A Functional model whose nested model's output meets another branch
 * in an Add. */
#define ADD_JSON                                                                                                     \
    "{\"class_name\": \"Functional\", \"config\": {\"name\": \"outer\", \"layers\": ["                               \
    "{\"class_name\": \"InputLayer\", \"name\": \"in\", \"inbound_nodes\": [], "                                    \
    "\"config\": {\"batch_input_shape\": [null, 8], \"name\": \"in\"}},"                                             \
    "{\"class_name\": \"Sequential\", \"name\": \"base\", \"inbound_nodes\": [[[\"in\", 0, 0, {}]]], "              \
    "\"config\": {\"name\": \"base\", \"layers\": ["                                                                 \
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 8], \"name\": \"base_in\"}},"      \
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"d1\", \"units\": 3}}]}},"                                  \
    "{\"class_name\": \"Dense\", \"name\": \"side\", \"inbound_nodes\": [[[\"in\", 0, 0, {}]]], "                   \
    "\"config\": {\"name\": \"side\", \"units\": 3}},"                                                               \
    "{\"class_name\": \"Add\", \"name\": \"add\", \"inbound_nodes\": [[[\"base\", 1, 0, {}], [\"side\", 0, 0, {}]]], " \
    "\"config\": {\"name\": \"add\"}},"                                                                              \
    "{\"class_name\": \"Dense\", \"name\": \"head\", \"inbound_nodes\": [[[\"add\", 0, 0, {}]]], "                  \
    "\"config\": {\"name\": \"head\", \"units\": 2}}],"                                                              \
    "\"input_layers\": [[\"in\", 0, 0]], \"output_layers\": [[\"head\", 0, 0]]}}"

/* An edit inside that fits the nested model's input but not the layer
 * after it in the outer model: the whole model has it, so its Add fails,
 * and Train is off with the engine's message about the Add, as the
 * status line says; Ctrl+Z inside puts it right. Save inside writes the
 * whole model with the edits and stays inside. */
static void test_whole_model_inside(Fixture *f, gconstpointer data)
{
    load(f, ADD_JSON);
    g_assert_cmpint(total(f->doc), ==, 27 + 27 + 8);
    char *dir = g_dir_make_tmp("twb-nested-XXXXXX", NULL);
    char *file = g_build_filename(dir, "outer.json", NULL);
    GError *error = NULL;
    must(tw_model_doc_save(f->doc, file, &error), error);
    TwTrainPanel *panel = tw_window_train_panel(f->win);
    assert_train(f, NULL);

    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), node_named(f->doc, "base")));
    drain();
    TwModelDoc *child = tw_designer_view_doc(f->view);
    must(tw_model_doc_set_param(child, node_named(child, "d1"), "units", "5", &error), error);
    drain();
    g_assert_null(tw_model_doc_error(child));
    const char *why = tw_train_panel_cannot_train(panel);
    g_assert_nonnull(why);
    g_test_message("broken after base: %s", why);
    g_assert_cmpstr(why, ==, tw_model_doc_error(f->doc));
    g_assert_nonnull(strstr(why, "add"));
    assert_train(f, why);
    char *text = g_strdup_printf("Cannot train: %s", why);
    g_assert_cmpstr(label_text(tw_designer_view_problem(f->view)), ==, text);
    g_free(text);
    GtkWidget *status = tw_designer_view_status(f->view), *whole = tw_designer_view_whole_status(f->view);
    g_assert_true(g_str_has_prefix(label_text(status), "Inside base: 2 layers · Total params: 45 "));
    g_assert_true(g_str_has_prefix(label_text(whole), "Whole model outer: 5 layers · Total params: "));

    key_or_action(f, "ctrl+z", "win.undo");
    g_assert_null(tw_model_doc_error(f->doc));
    assert_train(f, NULL);
    g_assert_cmpstr(label_text(tw_designer_view_problem(f->view)), ==, "");
    g_assert_true(g_str_has_prefix(label_text(whole), "Whole model outer: 5 layers · Total params: 62 "));

    /* Another edit, saved from inside: the file has it; the view stays. */
    must(tw_model_doc_set_param(child, node_named(child, "d1"), "activation", "relu", &error), error);
    drain();
    g_assert_true(tw_model_doc_modified(f->doc));
    g_assert_true(gtk_widget_activate_action(GTK_WIDGET(f->win), "win.save", NULL));
    drain();
    g_assert_cmpint(tw_designer_view_depth(f->view), ==, 1);
    g_assert_false(tw_model_doc_modified(f->doc));
    char *saved = NULL;
    g_assert_true(g_file_get_contents(file, &saved, NULL, NULL));
    g_assert_nonnull(strstr(saved, "\"activation\": \"relu\""));
    g_free(saved);
    must(tw_designer_view_leave_to(f->view, 0, &error), error);
    drain();
    g_assert_false(tw_model_doc_modified(f->doc));
    g_unlink(file);
    g_rmdir(dir);
    g_free(file);
    g_free(dir);
}

typedef struct {
    Fixture *f;
    int depth;   /* the view's depth to wait for */
    char *name;  /* and the selected layer's name there, or NULL */
} KeyWait;

static gboolean key_done(gpointer data)
{
    KeyWait *w = data;
    if (tw_designer_view_depth(w->f->view) != w->depth)
        return FALSE;
    TwModelDoc *doc = tw_designer_view_doc(w->f->view);
    int at = tw_designer_view_selected(w->f->view);
    return !w->name || (at >= 0 && !strcmp(tw_layer_name(tw_model_doc_layer(doc, at)), w->name));
}

/* keys typed into the window: then the view is depth levels down with the
 * layer called name selected (name NULL: any). */
static void keys_then(Fixture *f, const char *keys, int depth, const char *name)
{
    KeyWait w = {f, depth, (char *)name};
    g_assert_true(ui_keys_send(GTK_WIDGET(f->win), keys, key_done, &w));
    drain();
    g_test_message("%s: depth %d, %s selected", keys, tw_designer_view_depth(f->view),
                   tw_designer_view_selected(f->view) >= 0
                       ? tw_layer_name(tw_model_doc_layer(tw_designer_view_doc(f->view),
                                                          tw_designer_view_selected(f->view)))
                       : "nothing");
    g_assert_true(key_done(&w));
}

/* With the keyboard alone, nested views included: Tab along the edges,
 * Shift+Return into a nested model, Escape back out (on the canvas and
 * on the List page), and the breadcrumb reached with Ctrl+Shift+Tab, a
 * crumb taken with Return. */
static void test_keyboard_only(Fixture *f, gconstpointer data)
{
    load(f, NESTED_JSON(BLOCK_JSON));
    if (!ui_keys_send(GTK_WIDGET(f->win), "shift", at_top, f->view)) {
        g_test_skip("no xdotool");
        return;
    }
    tw_designer_view_select(f->view, node_named(f->doc, "in"));
    gtk_widget_grab_focus(GTK_WIDGET(canvas(f)));
    keys_then(f, "Tab", 0, "base");
    keys_then(f, "shift+Return", 1, "base_in");
    keys_then(f, "Tab", 1, "d1");
    keys_then(f, "Tab", 1, "block");
    keys_then(f, "shift+Return", 2, "block_in");
    keys_then(f, "Tab", 2, "b1");
    keys_then(f, "shift+Tab", 2, "block_in");
    keys_then(f, "Escape", 1, "block");
    keys_then(f, "Escape", 0, "base");

    /* On the List page: Shift+Return in, Escape out. */
    keys_then(f, "shift+Return", 1, "base_in");
    GtkStack *pages = GTK_STACK(gtk_widget_get_parent(GTK_WIDGET(canvas(f))));
    gtk_stack_set_visible_child_name(pages, "list");
    drain();
    GtkWidget *list = tw_designer_view_stack(f->view);
    tw_designer_view_select(f->view, node_named(tw_designer_view_doc(f->view), "block"));
    drain();
    gtk_widget_child_focus(list, GTK_DIR_TAB_FORWARD);
    GtkWidget *focus = gtk_root_get_focus(GTK_ROOT(f->win));
    g_assert_true(focus && gtk_widget_is_ancestor(focus, list));
    keys_then(f, "shift+Return", 2, NULL);
    gtk_stack_set_visible_child_name(pages, "list");
    drain();
    gtk_widget_child_focus(tw_designer_view_stack(f->view), GTK_DIR_TAB_FORWARD);
    keys_then(f, "Escape", 1, "block");
    gtk_widget_child_focus(tw_designer_view_stack(f->view), GTK_DIR_TAB_FORWARD);
    keys_then(f, "Escape", 0, "base");

    /* The breadcrumb: from the canvas two levels down, Ctrl+Shift+Tab to
     * the last crumb above (base), Return: back to base. */
    gtk_stack_set_visible_child_name(GTK_STACK(gtk_widget_get_parent(GTK_WIDGET(canvas(f)))), "canvas");
    gtk_widget_grab_focus(GTK_WIDGET(canvas(f)));
    keys_then(f, "shift+Return", 1, "base_in");
    keys_then(f, "Tab Tab", 1, "block");
    keys_then(f, "shift+Return", 2, "block_in");
    keys_then(f, "ctrl+shift+Tab Return", 1, "block");
}

static gboolean arranged(gpointer data)
{
    return !tw_designer_canvas_arranging(data);
}

/* Arrange inside a nested model (the toolbar's button): the layered
 * layout replaces the column a visit starts with, and the next visit
 * finds it. */
static void test_arranged_kept(Fixture *f, gconstpointer data)
{
    load(f, NESTED_JSON(""));
    int base = node_named(f->doc, "base");
    g_assert_true(tw_designer_canvas_edit_nested(canvas(f), base));
    drain();
    TwModelDoc *child = tw_designer_view_doc(f->view);
    int n = tw_model_doc_n_layers(child);
    double *before = g_new(double, 2 * n), *after = g_new(double, 2 * n);
    for (int i = 0; i < n; i++)
        tw_model_doc_node_position(child, i, &before[2 * i], &before[2 * i + 1]);
    tw_designer_canvas_arrange(canvas(f));
    wait_until(arranged, canvas(f), 10, "the arrangement");
    drain();
    gboolean moved = FALSE;
    for (int i = 0; i < n; i++) {
        tw_model_doc_node_position(child, i, &after[2 * i], &after[2 * i + 1]);
        moved = moved || after[2 * i] != before[2 * i] || after[2 * i + 1] != before[2 * i + 1];
    }
    g_assert_true(moved);
    char **names = g_new0(char *, n + 1);
    for (int i = 0; i < n; i++)
        names[i] = g_strdup(tw_layer_name(tw_model_doc_layer(child, i)));
    GError *error = NULL;
    must(tw_designer_view_leave_to(f->view, 0, &error), error);
    drain();
    for (int i = 0; i < n; i++) {
        double x, y;
        position_inside(f, base, names[i], &x, &y);
        g_assert_cmpfloat_with_epsilon(x, after[2 * i], 0.05);
        g_assert_cmpfloat_with_epsilon(y, after[2 * i + 1], 0.05);
    }
    g_strfreev(names);
    g_free(before);
    g_free(after);
}

#define ADD(path, fn) g_test_add("/ui/designer_nested/" path, Fixture, NULL, fixture_setup, fn, fixture_teardown)

int main(int argc, char **argv)
{
    gtk_test_init(&argc, &argv, NULL);
    ADD("edit_and_undo", test_edit_and_undo);
    ADD("misfit_refused", test_misfit_refused);
    ADD("nested_in_nested", test_nested_in_nested);
    ADD("shared_nested", test_shared_nested);
    ADD("positions_kept", test_positions_kept);
    ADD("positions_kept_deeper", test_positions_kept_deeper);
    ADD("arranged_kept", test_arranged_kept);
    ADD("copies_keep_positions", test_copies_keep_positions);
    ADD("copies_keep_positions_deeper", test_copies_keep_positions_deeper);
    ADD("train_inside", test_train_inside);
    ADD("whole_model_inside", test_whole_model_inside);
    ADD("keyboard_only", test_keyboard_only);
    return g_test_run();
}
