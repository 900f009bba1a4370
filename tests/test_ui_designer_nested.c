/* Editing a nested model in place (drill-down), in the app's window,
 * through the actions the UI uses: Edit Nested Model on the canvas (its
 * context menu and Shift+Enter run tw_designer_canvas_edit_nested), edits
 * inside through the canvas and the document, back out through the
 * breadcrumb's action (tw_designer_view_leave_to) or Escape, and Ctrl+Z /
 * Ctrl+Shift+Z as the window's undo and redo. Checks: the parent changes as
 * one undo step that restores the exact document, a nested model that no
 * longer fits its input is refused with the engine's message and the view
 * stays inside, nested-in-nested, and a Sequential shared by three inputs. */
#include <gtk/gtk.h>
#include <string.h>

#include <tw/engine.h>

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
 * parent gains its parameters as one step that Ctrl+Z undoes exactly. */
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
    char *parent = tw_model_doc_to_json(f->doc);
    g_assert_cmpstr(parent, ==, before); /* the parent untouched meanwhile */
    g_free(parent);

    must(tw_designer_view_leave_to(f->view, 0, &error), error);
    drain();
    g_assert_true(tw_designer_view_doc(f->view) == f->doc);
    g_assert_cmpint(tw_designer_view_depth(f->view), ==, 0);
    g_assert_cmpint(total(f->doc), ==, 36 + 15 + 20 + 12); /* head now reads 5 features: 5*2+2 */
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
 * is refused on the way out: the view stays inside and shows the engine's
 * message; the parent is unchanged. Escape leaves once it fits again. */
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
    for (int i = 0; i < n; i++)
        if (tw_layer_is_model(tw_model_doc_layer(f->doc, i)))
            g_assert_true(tw_model_doc_layer(f->doc, i) == shared);
}

#define ADD(path, fn) g_test_add("/ui/designer_nested/" path, Fixture, NULL, fixture_setup, fn, fixture_teardown)

int main(int argc, char **argv)
{
    gtk_test_init(&argc, &argv, NULL);
    ADD("edit_and_undo", test_edit_and_undo);
    ADD("misfit_refused", test_misfit_refused);
    ADD("nested_in_nested", test_nested_in_nested);
    ADD("shared_nested", test_shared_nested);
    return g_test_run();
}
