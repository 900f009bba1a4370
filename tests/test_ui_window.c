/* The workbench window as a person meets it, under Xvfb (tests/meson.build
 * runs this suite through xvfb-run): three views and the switcher's action,
 * the Dashboard following the run database and the Graph view being
 * there, Train following the model's validity with the reason as its
 * tooltip, closing the window or rebuilding its fields with a popover
 * open, templates, opening and saving through the window's actions, the
 * question before unsaved changes are lost, layer actions with undo; and
 * `twb --screenshot` writing a PNG of the requested size for each view. */
#include <gtk/gtk.h>
#include <string.h>
#include <sys/wait.h>

#include <glib/gstdio.h>

#include <tw/summary.h>

#include "application.h"
#include "banner.h"
#include "dashboard_view.h"
#include "designer_view.h"
#include "focus_guard.h"
#include "popover_guard.h"
#include "graph_view.h"
#include "layer_stack.h"
#include "property_editor.h"
#include "ui_keys.h"
#include "gui_helpers.h"
#include "scratch_tree.h"

#define EXAMPLES "/../examples/models/"

static TwbApplication *app;

/* ---- helpers ---------------------------------------------------------------- */
static gboolean is_mapped(gpointer widget)
{
    return gtk_widget_get_mapped(widget);
}

static TwWindow *open_window(void)
{
    TwWindow *win = twb_application_new_window(app, NULL);
    gtk_window_present(GTK_WINDOW(win));
    wait_until(is_mapped, win, 10, "the window to map");
    return win;
}

static void close_window(TwWindow *win)
{
    gtk_window_destroy(GTK_WINDOW(win));
    drain();
}

static void activate(TwWindow *win, const char *action, GVariant *target)
{
    g_action_group_activate_action(G_ACTION_GROUP(win), action, target);
    drain();
}

static gboolean enabled(TwWindow *win, const char *action)
{
    return g_action_group_get_action_enabled(G_ACTION_GROUP(win), action);
}

static char *example_path(const char *name)
{
    return g_strconcat(g_getenv("G_TEST_SRCDIR"), EXAMPLES, name, NULL);
}

static TwBanner *banner_of(TwWindow *win)
{
    GtkWidget *banner = find_type(GTK_WIDGET(win), TW_TYPE_BANNER);
    g_assert_nonnull(banner);
    return TW_BANNER(banner);
}

static GtkWidget *train_button(TwWindow *win)
{
    return titlebar_button(GTK_WINDOW(win), "win.train");
}

static char *read_text(const char *path)
{
    char *text = NULL;
    GError *error = NULL;
    g_file_get_contents(path, &text, NULL, &error);
    g_assert_no_error(error);
    return text;
}

static char *scratch_dir(void)
{
    GError *error = NULL;
    char *dir = g_dir_make_tmp("twb-window-XXXXXX", &error);
    g_assert_no_error(error);
    return dir;
}

/* ---- the views ------------------------------------------------------------------ */
static void test_three_views(void)
{
    TwWindow *win = open_window();
    GtkStack *stack = GTK_STACK(find_type(GTK_WIDGET(win), GTK_TYPE_STACK));
    const char *names[] = {"designer", "dashboard", "graph"};
    const char *titles[] = {"_Designer", "D_ashboard", "_Graph"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        GtkWidget *child = gtk_stack_get_child_by_name(stack, names[i]);
        g_assert_nonnull(child);
        g_assert_cmpstr(gtk_stack_page_get_title(gtk_stack_get_page(stack, child)), ==, titles[i]);
    }
    g_assert_cmpstr(tw_window_visible_view(win), ==, "designer");
    /* The Designer page: the designer beside the training panel. */
    GtkWidget *designer = gtk_stack_get_child_by_name(stack, "designer");
    g_assert_nonnull(find_type(designer, TW_TYPE_DESIGNER_VIEW));
    g_assert_true(find_type(designer, TW_TYPE_TRAIN_PANEL) == GTK_WIDGET(tw_window_train_panel(win)));
    /* The header bar's switcher shows the same stack. */
    GtkWidget *switcher = find_type(gtk_window_get_titlebar(GTK_WINDOW(win)), GTK_TYPE_STACK_SWITCHER);
    g_assert_true(gtk_stack_switcher_get_stack(GTK_STACK_SWITCHER(switcher)) == stack);

    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        activate(win, "show-view", g_variant_new_string(names[(i + 1) % 3]));
        g_assert_cmpstr(tw_window_visible_view(win), ==, names[(i + 1) % 3]);
        g_assert_cmpstr(gtk_stack_get_visible_child_name(stack), ==, names[(i + 1) % 3]);
    }
    /* A name that is no view changes nothing. */
    activate(win, "show-view", g_variant_new_string("charts"));
    g_assert_cmpstr(tw_window_visible_view(win), ==, "designer");
    close_window(win);
}

static void test_placeholders(void)
{
    TwWindow *win = open_window();
    /* The Dashboard reads the run database the training panel writes to. */
    GtkStack *stack = GTK_STACK(find_type(GTK_WIDGET(win), GTK_TYPE_STACK));
    GtkWidget *page = find_type(gtk_stack_get_child_by_name(stack, "dashboard"), TW_TYPE_DASHBOARD_VIEW);
    g_assert_nonnull(page); /* in a scroller for narrow windows */
    TwDashboardData *data = tw_dashboard_view_data(TW_DASHBOARD_VIEW(page));
    char *panel_logdb = NULL;
    g_object_get(tw_window_train_panel(win), "logdb", &panel_logdb, NULL);
    g_assert_nonnull(panel_logdb);
    g_assert_cmpstr(tw_dashboard_data_path(data), ==, panel_logdb);
    g_free(panel_logdb);

    /* --logdb (tw_window_set_logdb) sets both. */
    tw_window_set_logdb(win, "/tmp/a <b>&</b> runs.db");
    g_assert_cmpstr(tw_dashboard_data_path(data), ==, "/tmp/a <b>&</b> runs.db");
    g_object_get(tw_window_train_panel(win), "logdb", &panel_logdb, NULL);
    g_assert_cmpstr(panel_logdb, ==, "/tmp/a <b>&</b> runs.db");
    g_free(panel_logdb);
    /* And the panel's choice reaches the dashboard. */
    g_object_set(tw_window_train_panel(win), "logdb", "/srv/runs/other.db", NULL);
    g_assert_cmpstr(tw_dashboard_data_path(data), ==, "/srv/runs/other.db");

    /* The Graph page is the graph view, listing the same database's graphs. */
    GtkWidget *graph = gtk_stack_get_child_by_name(stack, "graph");
    g_assert_true(TW_IS_GRAPH_VIEW(graph));
    g_assert_cmpuint(tw_graph_view_n_sources(TW_GRAPH_VIEW(graph)), >=, 1);
    char *designer = tw_graph_view_source_label(TW_GRAPH_VIEW(graph), 0);
    g_assert_cmpstr(designer, ==, "Designer model");
    g_free(designer);
    close_window(win);
}

/* ---- Train follows the model --------------------------------------------------- */
static void test_train_follows_validity(void)
{
    TwWindow *win = open_window();
    TwModelDoc *doc = tw_window_doc(win);
    GtkWidget *button = train_button(win);
    GError *error = NULL;

    g_assert_true(tw_model_doc_load_json(doc, invalid_model, "bad.json", &error));
    g_assert_no_error(error);
    drain();
    const char *reason = tw_model_doc_error(doc);
    g_assert_nonnull(reason);
    g_assert_false(enabled(win, "train"));
    g_assert_false(gtk_widget_is_sensitive(button));
    g_assert_cmpstr(gtk_widget_get_tooltip_text(button), ==, reason);

    activate(win, "template", g_variant_new_string("mlp_fashion_mnist"));
    g_assert_null(tw_model_doc_error(doc));
    /* Train turns on once the chosen data (Fashion-MNIST) has loaded on its
     * thread and been checked against the model. */
    if (!g_file_test("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz", G_FILE_TEST_EXISTS)) {
        g_test_skip("Fashion-MNIST is not installed: Train stays off for it");
        close_window(win);
        return;
    }
    gint64 end = g_get_monotonic_time() + 120 * G_USEC_PER_SEC;
    while (!enabled(win, "train") && g_get_monotonic_time() < end) {
        drain();
        g_usleep(10000);
    }
    g_assert_true(enabled(win, "train"));
    g_assert_true(gtk_widget_is_sensitive(button));
    g_assert_cmpstr(gtk_widget_get_tooltip_text(button), ==, "Train the model (Ctrl+Return)");

    /* Breaking the model by an edit disables it again; undo brings it back. */
    g_assert_true(tw_model_doc_insert(doc, tw_model_doc_n_layers(doc), "Conv2D", &error));
    g_assert_no_error(error);
    drain();
    g_assert_false(enabled(win, "train"));
    activate(win, "undo", NULL);
    g_assert_true(enabled(win, "train"));

    /* Ctrl+Return is Train's accelerator. */
    char **accels = gtk_application_get_accels_for_action(GTK_APPLICATION(app), "win.train");
    g_assert_cmpstr(accels[0], ==, "<Control>Return");
    g_strfreev(accels);
    close_window(win);
}

/* ---- templates, open, save ------------------------------------------------------ */
static void assert_same_model(TwModelDoc *doc, const char *path)
{
    TwModelDoc *expected = tw_model_doc_new();
    GError *error = NULL;
    g_assert_true(tw_model_doc_load(expected, path, &error));
    g_assert_no_error(error);
    char *a = tw_model_doc_to_json(doc), *b = tw_model_doc_to_json(expected);
    g_assert_cmpstr(a, ==, b);
    g_free(a);
    g_free(b);
    g_object_unref(expected);
}

static void test_templates(void)
{
    TwWindow *win = open_window();
    TwModelDoc *doc = tw_window_doc(win);
    const char *names[] = {"linear_regression", "mlp_fashion_mnist", "cnn_fashion_mnist"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        activate(win, "template", g_variant_new_string(names[i]));
        char *file = g_strconcat(names[i], ".json", NULL);
        char *path = example_path(file);
        assert_same_model(doc, path);
        g_free(path);
        g_free(file);
        /* A template is a new, unsaved model. */
        g_assert_null(tw_model_doc_path(doc));
        g_assert_false(tw_model_doc_modified(doc));
        g_assert_cmpstr(gtk_window_get_title(GTK_WINDOW(win)), ==, "Untitled model");
        g_assert_null(tw_banner_message(banner_of(win)));
    }
    activate(win, "template", g_variant_new_string("resnet"));
    g_assert_true(tw_banner_is_error(banner_of(win)));
    g_assert_nonnull(strstr(tw_banner_message(banner_of(win)), "the resnet template"));
    char *last = example_path("cnn_fashion_mnist.json");
    assert_same_model(doc, last); /* unchanged */
    g_free(last);
    close_window(win);
}

static void test_open_edit_save(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "my_mlp.json", NULL);
    char *source = example_path("mlp_fashion_mnist.json");
    char *text = read_text(source);
    g_assert_true(g_file_set_contents(path, text, -1, NULL));

    TwWindow *win = open_window();
    TwModelDoc *doc = tw_window_doc(win);
    tw_window_open_file(win, path);
    drain();
    g_assert_cmpstr(tw_model_doc_path(doc), ==, path);
    g_assert_cmpstr(gtk_window_get_title(GTK_WINDOW(win)), ==, "my_mlp.json");
    g_assert_false(enabled(win, "undo"));

    /* An edit: the title says so, undo is there. */
    GError *error = NULL;
    g_assert_true(tw_model_doc_set_param(doc, 2, "units", "64", &error));
    g_assert_no_error(error);
    drain();
    g_assert_cmpstr(gtk_window_get_title(GTK_WINDOW(win)), ==, "my_mlp.json •");
    g_assert_true(enabled(win, "undo"));

    /* Save writes the file the model came from; read back, it is the edit. */
    activate(win, "save", NULL);
    g_assert_null(tw_banner_message(banner_of(win)));
    g_assert_false(tw_model_doc_modified(doc));
    g_assert_cmpstr(gtk_window_get_title(GTK_WINDOW(win)), ==, "my_mlp.json");
    TwModelDoc *back = tw_model_doc_new();
    g_assert_true(tw_model_doc_load(back, path, &error));
    g_assert_no_error(error);
    char *a = tw_model_doc_to_json(doc), *b = tw_model_doc_to_json(back);
    g_assert_cmpstr(a, ==, b);
    g_assert_nonnull(strstr(b, "\"units\": 64"));
    g_free(a);
    g_free(b);
    g_object_unref(back);

    /* It is among the recent files. */
    char *uri = g_filename_to_uri(path, NULL, NULL);
    g_assert_true(gtk_recent_manager_has_item(gtk_recent_manager_get_default(), uri));
    g_free(uri);

    close_window(win);
    g_remove(path);
    g_rmdir(dir);
    g_free(text);
    g_free(source);
    g_free(path);
    g_free(dir);
}

static void test_open_errors(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "broken.json", NULL);
    g_assert_true(g_file_set_contents(path, "{\"class_name\": \"Sequential\", \"config\": ", -1, NULL));

    TwWindow *win = open_window();
    TwModelDoc *doc = tw_window_doc(win);
    activate(win, "template", g_variant_new_string("linear_regression"));
    char *before = tw_model_doc_to_json(doc);

    tw_window_open_file(win, path);
    drain();
    TwBanner *banner = banner_of(win);
    g_assert_true(tw_banner_is_error(banner));
    const char *message = tw_banner_message(banner);
    g_assert_true(g_str_has_prefix(message, "Could not open “broken.json”: "));
    g_assert_cmpuint(strlen(message), >, strlen("Could not open “broken.json”: ") + 5); /* the engine's reason */
    char *after = tw_model_doc_to_json(doc);
    g_assert_cmpstr(after, ==, before);

    /* A missing file says so too; opening a good one clears the banner. */
    char *missing = g_build_filename(dir, "missing.json", NULL);
    tw_window_open_file(win, missing);
    g_assert_true(g_str_has_prefix(tw_banner_message(banner), "Could not open “missing.json”: "));
    char *good = example_path("linear_regression.json");
    tw_window_open_file(win, good);
    g_assert_null(tw_banner_message(banner));
    g_assert_cmpstr(tw_model_doc_path(doc), ==, good);

    close_window(win);
    g_remove(path);
    g_rmdir(dir);
    g_free(good);
    g_free(missing);
    g_free(after);
    g_free(before);
    g_free(path);
    g_free(dir);
}

/* ---- banners --------------------------------------------------------------------- */
static void test_banner(void)
{
    TwWindow *win = open_window();
    TwBanner *banner = banner_of(win);
    g_assert_null(tw_banner_message(banner));
    tw_window_show_banner(win, "training failed: loss is NaN at step 12", TRUE);
    g_assert_cmpstr(tw_banner_message(banner), ==, "training failed: loss is NaN at step 12");
    g_assert_true(gtk_widget_has_css_class(GTK_WIDGET(banner), "error"));
    /* The close button hides it. */
    GtkWidget *revealer = find_type(GTK_WIDGET(banner), GTK_TYPE_REVEALER);
    g_assert_true(gtk_revealer_get_reveal_child(GTK_REVEALER(revealer)));
    GtkWidget *label = find_type(GTK_WIDGET(banner), GTK_TYPE_LABEL);
    g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(label)), ==, "training failed: loss is NaN at step 12");
    GtkWidget *close = find_type(GTK_WIDGET(banner), GTK_TYPE_BUTTON);
    g_signal_emit_by_name(close, "clicked");
    g_assert_null(tw_banner_message(banner));
    g_assert_false(gtk_revealer_get_reveal_child(GTK_REVEALER(revealer)));
    /* Not an error: not red. */
    tw_window_show_banner(win, "saved", FALSE);
    g_assert_false(gtk_widget_has_css_class(GTK_WIDGET(banner), "error"));
    g_assert_false(tw_banner_is_error(banner));
    close_window(win);
}

/* ---- unsaved changes ------------------------------------------------------------- */
static GtkWidget *find_question(void)
{
    GListModel *toplevels = gtk_window_get_toplevels();
    for (guint i = 0; i < g_list_model_get_n_items(toplevels); i++) {
        GtkWidget *w = g_list_model_get_item(toplevels, i);
        g_object_unref(w);
        if (GTK_IS_MESSAGE_DIALOG(w) && gtk_widget_get_visible(w))
            return w;
    }
    return NULL;
}

/* Discards the window's edits (a template opened, its question answered
 * "discard") so that closing does not ask, then closes it. */
static void discard_and_close(TwWindow *win)
{
    activate(win, "template", g_variant_new_string("mlp_fashion_mnist"));
    GtkWidget *question = find_question();
    g_assert_nonnull(question);
    gtk_dialog_response(GTK_DIALOG(question), 1);
    drain();
    close_window(win);
}

static void test_close_asks_when_modified(void)
{
    TwWindow *win = open_window();
    TwModelDoc *doc = tw_window_doc(win);
    activate(win, "template", g_variant_new_string("mlp_fashion_mnist"));
    GError *error = NULL;
    g_assert_true(tw_model_doc_remove(doc, 1, &error));
    g_assert_no_error(error);
    drain();

    /* Closing asks; Cancel keeps the window and the edit. */
    gtk_window_close(GTK_WINDOW(win));
    drain();
    GtkWidget *question = find_question();
    g_assert_nonnull(question);
    char *text = NULL;
    g_object_get(question, "text", &text, NULL);
    g_assert_cmpstr(text, ==, "Save changes to “Untitled model” before closing?");
    g_free(text);
    gtk_dialog_response(GTK_DIALOG(question), GTK_RESPONSE_CANCEL);
    drain();
    g_assert_null(find_question());
    g_assert_true(gtk_widget_get_visible(GTK_WIDGET(win)));
    g_assert_true(tw_model_doc_modified(doc));

    /* A template over unsaved changes asks too; Discard goes ahead. */
    activate(win, "template", g_variant_new_string("linear_regression"));
    question = find_question();
    g_assert_nonnull(question);
    gtk_dialog_response(GTK_DIALOG(question), 1 /* Discard Changes */);
    drain();
    g_assert_cmpint(tw_model_doc_n_layers(doc), ==, 2);
    g_assert_false(tw_model_doc_modified(doc));

    /* Unmodified, closing does not ask. */
    g_object_ref(win);
    gtk_window_close(GTK_WINDOW(win));
    drain();
    g_assert_null(find_question());
    g_assert_false(gtk_widget_get_visible(GTK_WIDGET(win)));
    g_object_unref(win);
}

/* Discard in the question before closing closes the window inside the
 * dialog's response: the dialog, alive until that emission ends, must not
 * keep the freed window as its transient parent (a GObject warning, then a
 * critical, when GTK unset it on finalizing the dialog). */
static void test_close_discard_frees_window(void)
{
    TwWindow *win = open_window();
    activate(win, "template", g_variant_new_string("mlp_fashion_mnist"));
    GError *error = NULL;
    g_assert_true(tw_model_doc_remove(tw_window_doc(win), 1, &error));
    g_assert_no_error(error);
    drain();
    g_object_add_weak_pointer(G_OBJECT(win), (gpointer *)&win);
    gtk_window_close(GTK_WINDOW(win));
    drain();
    GtkWidget *question = find_question();
    g_assert_nonnull(question);
    gtk_dialog_response(GTK_DIALOG(question), 1 /* Discard Changes */);
    drain();
    g_assert_null(win);
    g_assert_null(find_question());
}

/* Closing the window with text typed and not committed in a field: the
 * field commits it on losing the focus, which must happen while the
 * window's widgets are whole (the doc's "changed" reached the disposed
 * Train button: a critical, found by the monkey). */
static void test_close_with_pending_text(void)
{
    TwWindow *win = open_window();
    TwDesignerView *designer = TW_DESIGNER_VIEW(find_type(GTK_WIDGET(win), TW_TYPE_DESIGNER_VIEW));
    TwPropertyEditor *editor = TW_PROPERTY_EDITOR(tw_designer_view_property_editor(designer));
    activate(win, "template", g_variant_new_string("mlp_fashion_mnist"));
    tw_designer_view_select(designer, 1);
    drain();
    GtkWidget *name = tw_property_editor_field(editor, "name");
    g_assert_true(gtk_widget_grab_focus(name));
    gtk_editable_set_text(GTK_EDITABLE(name), "pending_name");
    g_assert_true(tw_property_editor_editing(editor));
    close_window(win);
}

/* Delete with the focus on a button of the card that goes (Tab put it
 * there): the focus must leave the removed card at once. GTK kept it on
 * the removed button until its next frame; the monkey (seed 20261127) then
 * had GTK move it from the freed button into a selectable label, failing a
 * critical in gtk_widget_is_ancestor. */
/* The focused widget is removed and the next focusable one is a selectable
 * label: GTK 4.8 moves the focus at the next frame and, without the focus
 * guard, the label read the removed widget after the window freed it
 * (gtk_widget_is_ancestor's critical, found by the monkey test). */
static void test_removed_focus_before_label(void)
{
    GtkWidget *win = gtk_window_new();
    tw_focus_guard_attach(GTK_WINDOW(win));
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
    GtkWidget *label = gtk_label_new("a selectable message");
    gtk_label_set_selectable(GTK_LABEL(label), TRUE);
    GtkWidget *button = gtk_button_new_with_label("focused");
    gtk_box_append(GTK_BOX(box), label);
    gtk_box_append(GTK_BOX(box), button);
    gtk_window_set_child(GTK_WINDOW(win), box);
    gtk_window_present(GTK_WINDOW(win));
    wait_until(is_mapped, button, 10, "the window to show");
    gtk_widget_grab_focus(button);
    g_assert_true(gtk_root_get_focus(GTK_ROOT(win)) == button);
    gtk_box_remove(GTK_BOX(box), button);
    spin(0.3); /* the frames that move the focus on */
    g_assert_true(gtk_root_get_focus(GTK_ROOT(win)) != button);
    gtk_window_destroy(GTK_WINDOW(win));
    drain();
}

/* Return in an open popover while the window's focus is none (as after
 * its focused widget went): GTK 4.8 asked gtk_widget_is_ancestor about a NULL focus widget, a
 * critical the monkey found (seed 20261129); ui/popover_guard.c. */
static void test_return_in_popover_without_focus(void)
{
    tw_popover_guard_install();
    GtkWidget *win = gtk_window_new();
    GtkWidget *menu_button = gtk_menu_button_new();
    GtkWidget *popover = gtk_popover_new();
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
    GtkWidget *button = gtk_button_new_with_label("focused");
    gtk_box_append(GTK_BOX(box), button);
    gtk_popover_set_child(GTK_POPOVER(popover), box);
    gtk_menu_button_set_popover(GTK_MENU_BUTTON(menu_button), popover);
    gtk_window_set_child(GTK_WINDOW(win), menu_button);
    gtk_window_present(GTK_WINDOW(win));
    wait_until(is_mapped, menu_button, 10, "the window to show");
    gtk_menu_button_popup(GTK_MENU_BUTTON(menu_button));
    wait_until(is_mapped, button, 10, "the popover to show");
    g_assert_true(gtk_widget_grab_focus(button));
    gtk_window_set_focus(GTK_WINDOW(win), NULL); /* as when the focused widget went */
    g_assert_null(gtk_window_get_focus(GTK_WINDOW(win)));
    g_signal_emit_by_name(popover, "activate-default"); /* what Return does there */
    g_assert_true(gtk_widget_get_mapped(popover));
    gtk_window_destroy(GTK_WINDOW(win));
    drain();
}

static void test_delete_focused_card(void)
{
    TwWindow *win = open_window();
    TwModelDoc *doc = tw_window_doc(win);
    activate(win, "template", g_variant_new_string("mlp_fashion_mnist"));
    TwDesignerView *designer = TW_DESIGNER_VIEW(find_type(GTK_WIDGET(win), TW_TYPE_DESIGNER_VIEW));
    int n = tw_model_doc_n_layers(doc);
    tw_designer_view_select(designer, n - 1);
    drain();
    GtkWidget *list = find_type(tw_designer_view_stack(designer), GTK_TYPE_LIST_BOX);
    g_assert_nonnull(list);
    GtkWidget *last = NULL;
    for (GtkWidget *c = gtk_widget_get_first_child(list); c; c = gtk_widget_get_next_sibling(c))
        if (GTK_IS_LIST_BOX_ROW(c))
            last = c;
    g_assert_nonnull(last);
    GtkWidget *button = find_type(last, GTK_TYPE_BUTTON);
    g_assert_nonnull(button);
    g_assert_true(gtk_widget_grab_focus(button));
    g_object_add_weak_pointer(G_OBJECT(last), (gpointer *)&last);

    g_action_group_activate_action(G_ACTION_GROUP(win), "delete-layer", NULL);
    g_assert_cmpint(tw_model_doc_n_layers(doc), ==, n - 1);
    GtkWidget *focus = gtk_window_get_focus(GTK_WINDOW(win));
    g_assert_true(focus == NULL || gtk_widget_get_root(focus) == GTK_ROOT(win));
    spin(0.3);
    g_assert_null(last);

    discard_and_close(win);
}

/* ---- closing with a popover open ---------------------------------------------------- */
/* The header bar's close button, as GtkWindowControls makes it. */
static gboolean is_close_button(GtkWidget *widget, gconstpointer data)
{
    return GTK_IS_BUTTON(widget) && gtk_widget_has_css_class(widget, "close") &&
           gtk_widget_get_ancestor(widget, GTK_TYPE_WINDOW_CONTROLS);
}

static GtkWidget *close_button(TwWindow *win)
{
    return titlebar_find(GTK_WINDOW(win), is_close_button, NULL);
}

static gboolean is_mapped_selectable_label(GtkWidget *w, gconstpointer data)
{
    return GTK_IS_LABEL(w) && gtk_label_get_selectable(GTK_LABEL(w)) && gtk_widget_get_focusable(w) &&
           gtk_widget_get_mapped(w);
}

static GtkWidget *mapped_selectable_label(GtkWidget *root)
{
    return widget_find(root, is_mapped_selectable_label, NULL);
}

static gboolean has_selectable_label(gpointer root)
{
    return mapped_selectable_label(root) != NULL;
}

/* Moves the X pointer over the middle of a native widget (a window or a
 * popover), in two steps so that GTK sees motion. */
static void pointer_over(GtkWidget *native)
{
    GdkSurface *surface = gtk_native_get_surface(GTK_NATIVE(native));
    char *xdotool = g_find_program_in_path("xdotool");
    if (!xdotool || !GDK_IS_X11_SURFACE(surface)) {
        g_test_message("no xdotool or no X11 display: the pointer stays where it is");
        g_free(xdotool);
        return;
    }
    unsigned long xid = (unsigned long)gdk_x11_surface_get_xid(surface);
    int x = gtk_widget_get_width(native) / 2, y = gtk_widget_get_height(native) / 2;
    char *command =
        g_strdup_printf("%s mousemove --window %lu %d %d mousemove --window %lu %d %d", xdotool, xid, x, y, xid, x + 3, y + 3);
    int status = 0;
    GError *error = NULL;
    g_spawn_command_line_sync(command, NULL, NULL, &status, &error);
    g_assert_no_error(error);
    g_assert_true(g_spawn_check_wait_status(status, NULL));
    spin(0.05); /* the motion arrives */
    g_free(command);
    g_free(xdotool);
}

typedef enum { FOCUS_NONE, FOCUS_FIELD, FOCUS_LABEL } close_focus;

/* Closing the window by its close button while a drop-down's popover is
 * open under the pointer (the focus in its list, or before that in a field
 * with pending text or in the Graph view's selectable label), then working
 * in a new window. GTK 4.8 keeps the grab of a popover unmapped with its
 * window, and with it a reference: the popover outlived the window,
 * unrealized, and GTK's tooltip timer, started by the pointer's motion over
 * it, asked its missing surface for the pointer (the critical the monkey
 * hit with seed 20261126). ui/popover_guard.c pops such popovers down. */
static void close_then_edit(close_focus focus)
{
    TwWindow *win = open_window();
    activate(win, "template", g_variant_new_string("mlp_fashion_mnist"));
    TwDesignerView *designer = TW_DESIGNER_VIEW(find_type(GTK_WIDGET(win), TW_TYPE_DESIGNER_VIEW));
    tw_designer_view_select(designer, 1);
    drain();
    if (focus == FOCUS_FIELD) {
        TwPropertyEditor *editor = TW_PROPERTY_EDITOR(tw_designer_view_property_editor(designer));
        GtkWidget *name = tw_property_editor_field(editor, "name");
        g_assert_true(gtk_widget_grab_focus(name));
        gtk_editable_set_text(GTK_EDITABLE(name), "pending_name");
    } else if (focus == FOCUS_LABEL) {
        /* The Graph view's inspector has one; back in the designer, the
         * focus is on its way out of the hidden view. */
        activate(win, "show-view", g_variant_new_string("graph"));
        wait_until(has_selectable_label, win, 10, "a selectable label to map");
        g_assert_true(gtk_widget_grab_focus(mapped_selectable_label(GTK_WIDGET(win))));
        activate(win, "show-view", g_variant_new_string("designer"));
    }
    drain();

    GtkWidget *dropdown = find_type(GTK_WIDGET(tw_window_train_panel(win)), GTK_TYPE_DROP_DOWN);
    g_assert_nonnull(dropdown);
    GtkWidget *toggle = find_type(dropdown, GTK_TYPE_TOGGLE_BUTTON);
    g_assert_nonnull(toggle);
    g_signal_emit_by_name(toggle, "clicked"); /* as the monkey's click does */
    GtkWidget *popover = find_type(dropdown, GTK_TYPE_POPOVER);
    g_assert_nonnull(popover);
    wait_until(is_mapped, popover, 10, "the drop-down's popover to map");
    pointer_over(popover);

    g_object_add_weak_pointer(G_OBJECT(win), (gpointer *)&win);
    g_object_add_weak_pointer(G_OBJECT(popover), (gpointer *)&popover);
    g_signal_emit_by_name(close_button(win), "clicked");
    drain();
    if (win) { /* the pending name made the model modified: discard it */
        GtkWidget *question = find_question();
        g_assert_nonnull(question);
        gtk_dialog_response(GTK_DIALOG(question), 1 /* Discard Changes */);
        drain();
    }
    g_assert_null(win);
    spin(1.0); /* GTK's tooltip timer (500 ms) fires */
    g_assert_null(popover);

    win = open_window();
    activate(win, "template", g_variant_new_string("mlp_fashion_mnist"));
    designer = TW_DESIGNER_VIEW(find_type(GTK_WIDGET(win), TW_TYPE_DESIGNER_VIEW));
    tw_designer_view_select(designer, 1);
    drain();
    int n = tw_model_doc_n_layers(tw_window_doc(win));
    activate(win, "delete-layer", NULL);
    g_assert_cmpint(tw_model_doc_n_layers(tw_window_doc(win)), ==, n - 1);
    spin(0.5);
    discard_and_close(win);
}

/* A window holding the MLP template with its Dense layer selected (its
 * property editor shows fields and a drop-down). */
static TwDesignerView *mlp_with_dense_selected(TwWindow **win)
{
    *win = open_window();
    activate(*win, "template", g_variant_new_string("mlp_fashion_mnist"));
    TwDesignerView *designer = TW_DESIGNER_VIEW(find_type(GTK_WIDGET(*win), TW_TYPE_DESIGNER_VIEW));
    tw_designer_view_select(designer, 2);
    drain();
    return designer;
}

/* The window still works after the edit: reopen the template, discarding
 * the change, and close. */
static void reopen_and_close(TwWindow *win)
{
    activate(win, "template", g_variant_new_string("mlp_fashion_mnist"));
    GtkWidget *question = find_question();
    if (question)
        gtk_dialog_response(GTK_DIALOG(question), 1);
    drain();
    close_window(win);
}

/* A drop-down's popover open in the property editor when another kind of
 * layer is selected: the editor's fields go, the popover with them. */
static void test_popover_of_removed_field(void)
{
    TwWindow *win;
    TwDesignerView *designer = mlp_with_dense_selected(&win);
    GtkWidget *dropdown = find_type(tw_designer_view_property_editor(designer), GTK_TYPE_DROP_DOWN);
    g_assert_nonnull(dropdown);
    g_signal_emit_by_name(find_type(dropdown, GTK_TYPE_TOGGLE_BUTTON), "clicked");
    GtkWidget *popover = find_type(dropdown, GTK_TYPE_POPOVER);
    wait_until(is_mapped, popover, 10, "the drop-down's popover to map");
    pointer_over(popover);
    g_object_add_weak_pointer(G_OBJECT(popover), (gpointer *)&popover);
    tw_designer_view_select(designer, 0); /* the InputLayer: other fields */
    drain();
    spin(1.0);
    g_assert_null(popover);
    reopen_and_close(win);
}

/* The emoji chooser of a field (its context menu's Insert Emoji) open when
 * the field goes: the chooser must close without calling back the removed
 * text (a critical in gtk_text_grab_focus_without_selecting, found by the
 * monkey, seed 20261127). */
static void test_emoji_chooser_of_removed_field(void)
{
    TwWindow *win;
    TwDesignerView *designer = mlp_with_dense_selected(&win);
    TwPropertyEditor *editor = TW_PROPERTY_EDITOR(tw_designer_view_property_editor(designer));
    GtkWidget *text = find_type(tw_property_editor_field(editor, "name"), GTK_TYPE_TEXT);
    g_assert_nonnull(text);
    g_assert_true(gtk_widget_grab_focus(text));
    g_assert_true(gtk_widget_activate_action(text, "misc.insert-emoji", NULL));
    GtkWidget *chooser = g_object_get_data(G_OBJECT(text), "gtk-emoji-chooser");
    g_assert_nonnull(chooser);
    wait_until(is_mapped, chooser, 10, "the emoji chooser to map");
    g_object_add_weak_pointer(G_OBJECT(chooser), (gpointer *)&chooser);
    tw_designer_view_select(designer, 0); /* the InputLayer: other fields */
    drain();
    spin(0.5);
    g_assert_null(chooser);
    reopen_and_close(win);
}

static void test_close_with_popover(void)
{
    close_then_edit(FOCUS_NONE);
}

static void test_close_with_popover_field(void)
{
    close_then_edit(FOCUS_FIELD);
}

static void test_close_with_popover_label(void)
{
    close_then_edit(FOCUS_LABEL);
}

/* ---- layer actions ---------------------------------------------------------------- */
static void test_layer_actions(void)
{
    TwWindow *win = open_window();
    TwModelDoc *doc = tw_window_doc(win);
    TwDesignerView *designer = TW_DESIGNER_VIEW(find_type(GTK_WIDGET(win), TW_TYPE_DESIGNER_VIEW));
    activate(win, "template", g_variant_new_string("mlp_fashion_mnist"));
    int n = tw_model_doc_n_layers(doc);
    char *original = tw_model_doc_to_json(doc);

    tw_designer_view_select(designer, 2);
    drain();
    activate(win, "duplicate-layer", NULL);
    g_assert_cmpint(tw_model_doc_n_layers(doc), ==, n + 1);
    g_assert_cmpint(tw_designer_view_selected(designer), ==, 3);
    activate(win, "delete-layer", NULL);
    activate(win, "delete-layer", NULL);
    g_assert_cmpint(tw_model_doc_n_layers(doc), ==, n - 1);

    /* Undo three times is the template again, redo three times the edits. */
    char *edited = tw_model_doc_to_json(doc);
    for (int i = 0; i < 3; i++)
        activate(win, "undo", NULL);
    g_assert_false(enabled(win, "undo"));
    char *undone = tw_model_doc_to_json(doc);
    g_assert_cmpstr(undone, ==, original);
    for (int i = 0; i < 3; i++)
        activate(win, "redo", NULL);
    g_assert_false(enabled(win, "redo"));
    char *redone = tw_model_doc_to_json(doc);
    g_assert_cmpstr(redone, ==, edited);

    /* Nothing selected: Delete does nothing. */
    tw_designer_view_select(designer, -1);
    drain();
    activate(win, "delete-layer", NULL);
    g_assert_cmpint(tw_model_doc_n_layers(doc), ==, n - 1);

    g_free(redone);
    g_free(undone);
    g_free(edited);
    g_free(original);
    discard_and_close(win);
}

/* ---- Ctrl+Z and Ctrl+Shift+Z ------------------------------------------------------ */
typedef struct {
    TwModelDoc *doc;
    int layers;
    GtkWidget *entry;
    const char *text;
} key_wait;

static gboolean layers_are(gpointer data)
{
    key_wait *w = data;
    return tw_model_doc_n_layers(w->doc) == w->layers;
}

static gboolean text_is(gpointer data)
{
    key_wait *w = data;
    return !g_strcmp0(gtk_editable_get_text(GTK_EDITABLE(w->entry)), w->text);
}

static gboolean text_is_not(gpointer data)
{
    return !text_is(data);
}

/* Ctrl+Z in a focused field that holds nothing typed undoes the model's
 * last edit (the field's own history took it and changed its text); with
 * text typed in it, it undoes the typing. Undo and Redo are in the menu
 * with their keys. */
static void test_undo_keys(void)
{
    TwWindow *win = open_window();
    TwModelDoc *doc = tw_window_doc(win);
    TwDesignerView *designer = TW_DESIGNER_VIEW(find_type(GTK_WIDGET(win), TW_TYPE_DESIGNER_VIEW));
    TwPropertyEditor *editor = TW_PROPERTY_EDITOR(tw_designer_view_property_editor(designer));
    activate(win, "template", g_variant_new_string("mlp_fashion_mnist"));
    int n = tw_model_doc_n_layers(doc);
    tw_designer_view_select(designer, 1);
    activate(win, "duplicate-layer", NULL);
    GtkWidget *name = tw_property_editor_field(editor, "name");
    g_assert_true(gtk_widget_grab_focus(name));
    char *shown = g_strdup(gtk_editable_get_text(GTK_EDITABLE(name)));
    key_wait w = {doc, n, name, NULL};
    if (!ui_keys_send(GTK_WIDGET(win), "ctrl+z", layers_are, &w)) {
        g_test_skip("no xdotool or no X11 display to press keys with");
        g_free(shown);
        gtk_window_destroy(GTK_WINDOW(win));
        return;
    }
    g_assert_cmpint(tw_model_doc_n_layers(doc), ==, n);
    w.layers = n + 1;
    ui_keys_send(GTK_WIDGET(win), "ctrl+shift+z", layers_are, &w);
    g_assert_cmpint(tw_model_doc_n_layers(doc), ==, n + 1);

    /* Typing in the field: Ctrl+Z takes the typing back, the model stays. */
    name = tw_property_editor_field(editor, "name");
    g_assert_true(gtk_widget_grab_focus(name));
    g_free(shown);
    shown = g_strdup(gtk_editable_get_text(GTK_EDITABLE(name)));
    w.entry = name;
    w.text = "typed";
    ui_keys_send(GTK_WIDGET(win), "t y p e d", text_is, &w);
    g_assert_cmpstr(gtk_editable_get_text(GTK_EDITABLE(name)), ==, "typed");
    g_assert_true(tw_property_editor_editing(editor));
    ui_keys_send(GTK_WIDGET(win), "ctrl+z", text_is_not, &w); /* GtkText's own steps: "typed", then the selection */
    g_assert_cmpstr(gtk_editable_get_text(GTK_EDITABLE(name)), !=, "typed");
    g_assert_cmpint(tw_model_doc_n_layers(doc), ==, n + 1);
    g_assert_cmpstr(tw_layer_name(tw_model_doc_layer(doc, 2)), ==, shown);
    g_free(shown);

    /* The menu's Undo and Redo, with their keys shown. */
    GtkWidget *menu_button = find_type(gtk_window_get_titlebar(GTK_WINDOW(win)), GTK_TYPE_MENU_BUTTON);
    GMenuModel *menu = gtk_menu_button_get_menu_model(GTK_MENU_BUTTON(menu_button));
    GMenuModel *section = g_menu_model_get_item_link(menu, 0, G_MENU_LINK_SECTION);
    const char *expected[][2] = {{"win.undo", "<Control>z"}, {"win.redo", "<Control><Shift>z"}};
    for (int i = 0; i < 2; i++) {
        char *action = NULL, *accel = NULL;
        g_assert_true(g_menu_model_get_item_attribute(section, i, "action", "s", &action));
        g_assert_true(g_menu_model_get_item_attribute(section, i, "accel", "s", &accel));
        g_assert_cmpstr(action, ==, expected[i][0]);
        g_assert_cmpstr(accel, ==, expected[i][1]);
        g_free(action);
        g_free(accel);
    }
    g_object_unref(section);
    discard_and_close(win);
}

/* ---- twb --logdb FILE ------------------------------------------------------------- */
typedef struct {
    const char *logdb;
    gboolean checked;
} logdb_check;

static gboolean check_logdb_window(gpointer data)
{
    GtkApplication *other = data;
    logdb_check *check = g_object_get_data(G_OBJECT(other), "check");
    GtkWindow *win = gtk_application_get_active_window(other);
    TwDashboardView *dashboard = TW_DASHBOARD_VIEW(find_type(GTK_WIDGET(win), TW_TYPE_DASHBOARD_VIEW));
    g_assert_cmpstr(tw_dashboard_data_path(tw_dashboard_view_data(dashboard)), ==, check->logdb);
    char *panel_logdb = NULL;
    g_object_get(tw_window_train_panel(TW_WINDOW(win)), "logdb", &panel_logdb, NULL);
    g_assert_cmpstr(panel_logdb, ==, check->logdb);
    g_free(panel_logdb);
    check->checked = TRUE;
    gtk_window_destroy(win);
    return G_SOURCE_REMOVE;
}

static void on_window_added(GtkApplication *other, GtkWindow *win)
{
    g_idle_add(check_logdb_window, other);
}

/* `twb --logdb FILE` opens the window on that database (it was refused as
 * an unknown option unless --screenshot was given). */
static void test_logdb_option(void)
{
    char *dir = scratch_dir();
    char *logdb = g_build_filename(dir, "runs.db", NULL);
    TwbApplication *other = twb_application_new(G_APPLICATION_NON_UNIQUE);
    logdb_check check = {logdb, FALSE};
    g_object_set_data(G_OBJECT(other), "check", &check);
    g_signal_connect(other, "window-added", G_CALLBACK(on_window_added), NULL);
    char *argv[] = {"twb", "--logdb", logdb, NULL};
    g_assert_cmpint(g_application_run(G_APPLICATION(other), 3, argv), ==, 0);
    g_assert_true(check.checked);
    g_object_unref(other);

    /* twb itself hands --logdb to the window: without a display it says so. */
    char **env = g_environ_unsetenv(g_environ_unsetenv(g_get_environ(), "DISPLAY"), "WAYLAND_DISPLAY");
    struct {
        const char *args[6];
        int status;
        const char *message;
    } cases[] = {
        {{"--logdb", logdb, NULL}, 1, "cannot open the workbench window: no display"},
        {{"--logdb=runs.db", "m.json", NULL}, 1, "no display"},
        {{"--logdb", NULL}, 2, "option '--logdb' needs a run database file"},
        {{"--logdb", "a.db", "--logdb", "b.db", NULL}, 2, "option '--logdb' given twice"},
        /* The wrong argument is named, not the --logdb before it. */
        {{"--logdb", "a.db", "--frobnicate", NULL}, 2, "unknown option '--frobnicate'"},
        {{"--logdb", "a.db", "notes.txt", NULL}, 2, "'notes.txt' is not a model file the window opens"},
        /* Help, not "unknown option '--help'" (exit 0 where the window
         * itself would fail for want of a display). */
        {{"--logdb", "a.db", "--help", NULL}, 0, ""},
        {{"m.json", "-h", NULL}, 0, ""},
        /* Every model file the window's Open takes, in any case. */
        {{"--logdb", "a.db", "m.keras", "m.h5", "M.JSON", NULL}, 1, "no display"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        GPtrArray *args = g_ptr_array_new();
        g_ptr_array_add(args, (char *)g_getenv("TWB"));
        for (int k = 0; cases[i].args[k]; k++)
            g_ptr_array_add(args, (char *)cases[i].args[k]);
        g_ptr_array_add(args, NULL);
        char *err = NULL;
        int wait_status = 0;
        GError *error = NULL;
        g_spawn_sync(NULL, (char **)args->pdata, env, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                     &wait_status, &error);
        g_assert_no_error(error);
        int status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
        if (status != cases[i].status || !strstr(err, cases[i].message))
            g_error("case %zu: exit %d, stderr '%s'; expected exit %d and '%s'", i, status, err, cases[i].status,
                    cases[i].message);
        g_free(err);
        g_ptr_array_free(args, TRUE);
    }
    g_strfreev(env);
    g_free(logdb);
    g_rmdir(dir);
    g_free(dir);
}
/* ---- small screens ------------------------------------------------------------------ */
static void minimum(GtkWidget *widget, GtkOrientation orientation, int for_size, int *min)
{
    gtk_widget_measure(widget, orientation, for_size, min, NULL, NULL, NULL);
}

/* What asks for the width when the window is too wide: every widget whose
 * minimum width is over limit, indented by depth, for the failure's message. */
static void describe_wide(GtkWidget *widget, int limit, int depth, GString *out)
{
    int min;
    minimum(widget, GTK_ORIENTATION_HORIZONTAL, -1, &min);
    if (min <= limit)
        return;
    g_string_append_printf(out, "%*s%s%s%s: %d px\n", 2 * depth, "", G_OBJECT_TYPE_NAME(widget),
                           gtk_widget_get_name(widget)[0] ? " " : "", gtk_widget_get_name(widget), min);
    for (GtkWidget *c = gtk_widget_get_first_child(widget); c; c = gtk_widget_get_next_sibling(c))
        if (gtk_widget_get_visible(c))
            describe_wide(c, limit, depth + 1, out);
}

/* The smallest the realized window can be on screen, less the frame
 * around its client-side decorations (where resizing grabs; the window's
 * own measure counts it, its width does not), failing the test with what
 * asks for the width when that is over 800x600. */
static void assert_fits(gpointer win, const char *what)
{
    drain();
    GtkWidget *widget = GTK_WIDGET(win);
    int frame_w = gdk_surface_get_width(gtk_native_get_surface(GTK_NATIVE(win))) - gtk_widget_get_width(widget);
    int frame_h = gdk_surface_get_height(gtk_native_get_surface(GTK_NATIVE(win))) - gtk_widget_get_height(widget);
    int width, height;
    minimum(widget, GTK_ORIENTATION_HORIZONTAL, -1, &width);
    minimum(widget, GTK_ORIENTATION_VERTICAL, 800 + frame_w, &height);
    width -= frame_w, height -= frame_h;
    g_test_message("%s: the window is at least %dx%d", what, width, height);
    if (width > 800) {
        GString *wide = g_string_new(NULL);
        describe_wide(widget, 100, 0, wide);
        g_error("%s: the window is at least %d px wide, more than 800:\n%s", what, width, wide->str);
    }
    if (height > 600)
        g_error("%s: the window is at least %d px high, more than 600", what, height);
}

/* The window fits an 800x600 screen with a model open: the realized
 * window itself (its header bar, the views of its stack, the training
 * panel beside the designer, the property editor of each layer) asks for
 * no more than that in every view (panels scroll or give way). */
static void test_fits_800x600(void)
{
    TwWindow *win = open_window();
    TwModelDoc *doc = tw_window_doc(win);
    TwDesignerView *designer = TW_DESIGNER_VIEW(find_type(GTK_WIDGET(win), TW_TYPE_DESIGNER_VIEW));
    assert_fits(win, "no model");
    char *model = example_path("resnet_fashion_mnist.json");
    GError *error = NULL;
    must(tw_model_doc_load(doc, model, &error), error);
    g_free(model);
    g_assert_true(gtk_widget_get_visible(GTK_WIDGET(tw_window_train_panel(win))));
    const char *views[] = {"designer", "dashboard", "graph"};
    for (size_t i = 0; i < G_N_ELEMENTS(views); i++) {
        tw_window_show_view(win, views[i]);
        assert_fits(win, views[i]);
    }
    tw_window_show_view(win, "designer");
    for (int i = 0; i < tw_model_doc_n_layers(doc); i++) {
        tw_designer_view_select(designer, i);
        char *what = g_strdup_printf("the designer, layer %d selected", i);
        assert_fits(win, what);
        g_free(what);
    }
    close_window(win);
}

/* The window's surface, client-side frame included, as --size 800x600 makes it. */
static gboolean is_800_wide(gpointer win)
{
    return gdk_surface_get_width(gtk_native_get_surface(GTK_NATIVE(win))) == 800;
}

/* In an 800x600 window the training panel is all there beside the
 * designer: it asks for no more width than its scroller gets, so the
 * spin buttons' + and Stop show without scrolling sideways, while idle and
 * while paused (Resume in place of Pause). It asked for 301 px of 275 and
 * scrolled. */
static void test_training_panel_at_800(void)
{
    TwWindow *win = open_window();
    char *model = example_path("cnn_fashion_mnist.json");
    GError *error = NULL;
    must(tw_model_doc_load(tw_window_doc(win), model, &error), error);
    g_free(model);
    gtk_window_set_default_size(GTK_WINDOW(win), 800, 600);
    wait_until(is_800_wide, win, 10, "the window to be 800 px wide");
    drain();
    GtkWidget *panel = GTK_WIDGET(tw_window_train_panel(win));
    GtkWidget *scroller = gtk_widget_get_ancestor(panel, GTK_TYPE_SCROLLED_WINDOW);
    const char *states[] = {"idle", "paused"};
    for (size_t i = 0; i < G_N_ELEMENTS(states); i++) {
        if (i == 1) { /* the buttons of a paused run */
            gtk_widget_set_visible(find_named(panel, "pause"), FALSE);
            gtk_widget_set_visible(find_named(panel, "resume"), TRUE);
            drain();
        }
        int min;
        minimum(panel, GTK_ORIENTATION_HORIZONTAL, -1, &min);
        g_test_message("%s: the panel asks for %d px, its scroller is %d px", states[i], min,
                       gtk_widget_get_width(scroller));
        if (min > gtk_widget_get_width(scroller)) {
            GString *wide = g_string_new(NULL);
            describe_wide(panel, 100, 0, wide);
            g_error("%s: the training panel asks for %d px, more than the %d px it has at 800x600:\n%s", states[i],
                    min, gtk_widget_get_width(scroller), wide->str);
        }
        graphene_rect_t stop;
        g_assert_true(gtk_widget_compute_bounds(find_named(panel, "stop"), scroller, &stop));
        g_assert_cmpfloat(stop.origin.x + stop.size.width, <=, gtk_widget_get_width(scroller));
    }
    close_window(win);
}

static gboolean dashboard_ready(gpointer view)
{
    return tw_dashboard_view_ready(view);
}

static gboolean any_visible_of_type(GtkWidget *root, GType type)
{
    if (G_TYPE_CHECK_INSTANCE_TYPE(root, type) && gtk_widget_get_visible(root))
        return TRUE;
    for (GtkWidget *c = gtk_widget_get_first_child(root); c; c = gtk_widget_get_next_sibling(c))
        if (any_visible_of_type(c, type))
            return TRUE;
    return FALSE;
}

/* The Keyboard Shortcuts window (Ctrl+?) holds each section on one page
 * and fits 800x600. With a section of two pages, GTK's own page switcher
 * (buttons "1" and "2") warned "GtkLabel reported min width -4" when the
 * window was dragged narrow; the monkey test found it. */
static void test_shortcuts_window(void)
{
    TwWindow *win = open_window();
    activate(win, "show-help-overlay", NULL);
    GtkShortcutsWindow *help = gtk_application_window_get_help_overlay(GTK_APPLICATION_WINDOW(win));
    g_assert_nonnull(help);
    wait_until(is_mapped, help, 10, "the shortcuts window to map");
    g_assert_false(any_visible_of_type(GTK_WIDGET(help), GTK_TYPE_STACK_SWITCHER));
    assert_fits(help, "the shortcuts window");
    /* Dragged down to its minimum and back: no warning (the suite's
     * warnings are fatal). */
    gtk_window_set_default_size(GTK_WINDOW(help), 1, 1);
    drain();
    gtk_window_set_default_size(GTK_WINDOW(help), 800, 600);
    drain();
    gtk_widget_set_visible(GTK_WIDGET(help), FALSE);
    close_window(win);
}

/* With runs, the Dashboard's pages (every tab: the stack is as wide as its
 * widest page) fit an 800-pixel window too: the HParams tab's two plots
 * used to ask for 728 px beside the 300-pixel run list, which pushed the
 * tabs and charts past the window's edge. */
static void test_dashboard_fits_800(void)
{
    char *dir = scratch_dir();
    char *logdb = g_build_filename(dir, "runs.db", NULL);
    tw_summary_run_options options = {.hparams_json = "{\"learning_rate\": 0.001, \"batch_size\": 32}"};
    tw_summary_writer *w = tw_summary_writer_open(logdb, "run-1", &options);
    g_assert_nonnull(w);
    for (int step = 1; step <= 5; step++)
        g_assert_cmpint(tw_summary_scalar(w, "train/loss", 1.0 / step, step), ==, 0);
    g_assert_cmpint(tw_summary_hparams(w, NULL, "{\"test_loss\": 0.2}"), ==, 0);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);

    TwWindow *win = open_window();
    tw_window_set_logdb(win, logdb);
    tw_window_show_view(win, "dashboard");
    TwDashboardView *dashboard = TW_DASHBOARD_VIEW(find_type(GTK_WIDGET(win), TW_TYPE_DASHBOARD_VIEW));
    wait_until(dashboard_ready, dashboard, 60, "the dashboard's first data");
    const char *tabs[] = {"scalars", "hparams"};
    for (size_t i = 0; i < G_N_ELEMENTS(tabs); i++) {
        tw_dashboard_view_show_tab(dashboard, tabs[i]);
        drain();
        int min;
        gtk_widget_measure(GTK_WIDGET(dashboard), GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL, NULL);
        if (min > 800) {
            GString *wide = g_string_new(NULL);
            describe_wide(GTK_WIDGET(dashboard), 300, 0, wide);
            g_error("the Dashboard with a run (%s tab) is at least %d px wide, more than 800:\n%s", tabs[i], min,
                    wide->str);
        }
    }
    close_window(win);
    g_unlink(logdb);
    g_rmdir(dir);
    g_free(logdb);
    g_free(dir);
}

/* ---- twb --screenshot ------------------------------------------------------------- */
typedef struct {
    int status;
    char *out, *err;
} run_result;

static run_result run_twb(const char *const *args)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (char *)g_getenv("TWB"));
    for (int i = 0; args[i]; i++)
        g_ptr_array_add(argv, (char *)args[i]);
    g_ptr_array_add(argv, NULL);
    run_result r = {0};
    int wait_status = 0;
    GError *error = NULL;
    g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &r.out, &r.err, &wait_status,
                 &error);
    g_assert_no_error(error);
    r.status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
    g_ptr_array_free(argv, TRUE);
    return r;
}

static void run_result_clear(run_result *r)
{
    g_free(r->out);
    g_free(r->err);
}

/* How many distinct colours a sample of the picture has: a blank or
 * broken render has one or two. */
static guint colours(GdkPixbuf *pixbuf)
{
    GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    const guchar *pixels = gdk_pixbuf_get_pixels(pixbuf);
    int stride = gdk_pixbuf_get_rowstride(pixbuf), channels = gdk_pixbuf_get_n_channels(pixbuf);
    for (int y = 0; y < gdk_pixbuf_get_height(pixbuf); y += 3)
        for (int x = 0; x < gdk_pixbuf_get_width(pixbuf); x += 3) {
            const guchar *p = pixels + y * stride + x * channels;
            g_hash_table_add(seen, GUINT_TO_POINTER(p[0] << 16 | p[1] << 8 | p[2]));
        }
    guint n = g_hash_table_size(seen);
    g_hash_table_destroy(seen);
    return n;
}

static void test_screenshot(void)
{
    char *dir = scratch_dir();
    char *model = example_path("cnn_fashion_mnist.json");
    const char *views[] = {"designer", "dashboard", "graph"};
    GdkPixbuf *shots[3];
    for (size_t i = 0; i < G_N_ELEMENTS(views); i++) {
        char *file = g_strdup_printf("%s/%s.png", dir, views[i]);
        const char *args[] = {"--screenshot", file, "--view", views[i], "--model", model,
                              "--logdb", "/tmp/twb-test-runs.db", "--size", "1440x900", NULL};
        run_result r = run_twb(args);
        if (r.status != 0)
            g_error("twb --screenshot --view %s: exit %d: %s", views[i], r.status, r.err);
        GError *error = NULL;
        shots[i] = gdk_pixbuf_new_from_file(file, &error);
        g_assert_no_error(error);
        g_assert_cmpint(gdk_pixbuf_get_width(shots[i]), ==, 1440);
        g_assert_cmpint(gdk_pixbuf_get_height(shots[i]), ==, 900);
        g_assert_cmpuint(colours(shots[i]), >, 20);
        run_result_clear(&r);
        g_remove(file);
        g_free(file);
    }
    /* Three different pictures. */
    for (int i = 0; i < 3; i++) {
        GBytes *a = gdk_pixbuf_read_pixel_bytes(shots[i]), *b = gdk_pixbuf_read_pixel_bytes(shots[(i + 1) % 3]);
        g_assert_false(g_bytes_equal(a, b));
        g_bytes_unref(a);
        g_bytes_unref(b);
    }
    for (int i = 0; i < 3; i++)
        g_object_unref(shots[i]);

    /* The default size is 1280x800. */
    char *file = g_strdup_printf("%s/default.png", dir);
    run_result r = run_twb((const char *[]){"--screenshot", file, NULL});
    g_assert_cmpint(r.status, ==, 0);
    GdkPixbuf *pixbuf = gdk_pixbuf_new_from_file(file, NULL);
    g_assert_nonnull(pixbuf);
    g_assert_cmpint(gdk_pixbuf_get_width(pixbuf), ==, 1280);
    g_assert_cmpint(gdk_pixbuf_get_height(pixbuf), ==, 800);
    g_object_unref(pixbuf);
    run_result_clear(&r);
    g_remove(file);
    g_free(file);
    g_rmdir(dir);
    g_free(dir);
    g_free(model);
}

/* At 800x600, with and without a model, each view's picture is that size:
 * twb --screenshot refuses a window that its smallest size made larger. */
static void test_screenshot_800x600(void)
{
    char *dir = scratch_dir();
    char *model = example_path("resnet_fashion_mnist.json");
    const char *views[] = {"designer", "dashboard", "graph"};
    for (int with_model = 0; with_model < 2; with_model++)
        for (size_t i = 0; i < G_N_ELEMENTS(views); i++) {
            char *file = g_strdup_printf("%s/%s.png", dir, views[i]);
            const char *args[] = {"--screenshot", file, "--view", views[i], "--size", "800x600",
                                  with_model ? "--model" : NULL, model, NULL};
            run_result r = run_twb(args);
            if (r.status != 0)
                g_error("twb --screenshot --view %s --size 800x600%s: exit %d: %s", views[i],
                        with_model ? " --model resnet_fashion_mnist.json" : "", r.status, r.err);
            GError *error = NULL;
            GdkPixbuf *shot = gdk_pixbuf_new_from_file(file, &error);
            g_assert_no_error(error);
            g_assert_cmpint(gdk_pixbuf_get_width(shot), ==, 800);
            g_assert_cmpint(gdk_pixbuf_get_height(shot), ==, 600);
            g_object_unref(shot);
            run_result_clear(&r);
            g_remove(file);
            g_free(file);
        }
    g_rmdir(dir);
    g_free(dir);
    g_free(model);
}

static void test_screenshot_errors(void)
{
    struct {
        const char *args[8];
        int status;
        const char *message;
    } cases[] = {
        {{"--screenshot", NULL}, 2, "option '--screenshot' needs a value"},
        {{"--screenshot", "shot.jpg", NULL}, 2, "PNG"},
        {{"--screenshot", "shot.png", "--view", "charts", NULL}, 2, "'charts' is not a view"},
        {{"--screenshot", "shot.png", "--size", "1280", NULL}, 2, "'1280' is not WIDTHxHEIGHT"},
        {{"--screenshot", "shot.png", "--size", "10x10", NULL}, 2, "'10x10'"},
        {{"--screenshot", "shot.png", "--zoom", "2", NULL}, 2, "unknown option '--zoom'"},
        {{"--screenshot", "shot.png", "--model", "/nonexistent/m.json", NULL}, 1, "/nonexistent/m.json"},
        {{"--screenshot", "/nonexistent/dir/shot.png", NULL}, 1, "cannot write '/nonexistent/dir/shot.png'"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        run_result r = run_twb(cases[i].args);
        if (r.status != cases[i].status || !strstr(r.err, cases[i].message))
            g_error("case %zu: exit %d, stderr '%s'; expected exit %d and '%s'", i, r.status, r.err,
                    cases[i].status, cases[i].message);
        g_assert_true(g_str_has_prefix(r.err, "twb: --screenshot: "));
        run_result_clear(&r);
    }
}

/* ---- a file chooser drawn before its folder is known ------------------------ */
static gboolean is_path_bar(GtkWidget *widget, gconstpointer data)
{
    return !strcmp(G_OBJECT_TYPE_NAME(widget), "GtkPathBar"); /* a private GTK type */
}

static GtkWidget *open_chooser_dialog(void)
{
    GListModel *toplevels = gtk_window_get_toplevels();
    for (guint i = 0; i < g_list_model_get_n_items(toplevels); i++) {
        GtkWidget *w = g_list_model_get_item(toplevels, i);
        g_object_unref(w);
        if (GTK_IS_FILE_CHOOSER(w) && gtk_widget_get_visible(w))
            return w;
    }
    return NULL;
}

/* The Open dialog of a model with a path opens on the model's folder. Its
 * path bar (GtkFileChooserNative's GTK dialog under Xvfb) asks GIO about the
 * folder in a thread; until the answer comes, GTK 4.8's path bar lays out
 * nothing, yet it mapped its two scroll buttons: every frame drawn meanwhile
 * warned "Trying to snapshot GtkButton ... without a current allocation"
 * twice (fatal here). On a loaded machine the answer came after the first
 * frame, about one make test in eight (the monkey, opening the data file's
 * chooser); here the answer is held back in a main context of its own,
 * not run until the frames are drawn (ui/path_bar_guard.c). */
static void test_chooser_before_its_folder(void)
{
    TwWindow *win = open_window();
    char *path = example_path("linear_regression.json");
    tw_window_open_file(win, path);
    GMainContext *held = g_main_context_new();
    g_main_context_push_thread_default(held);
    activate(win, "open", NULL);
    GtkWidget *dialog = open_chooser_dialog();
    g_assert_nonnull(dialog);
    wait_until(is_mapped, dialog, 10, "the chooser to map");
    spin(0.5); /* frames drawn while the folder's answer waits in `held` */
    GtkWidget *bar = widget_find(dialog, is_path_bar, NULL);
    g_assert_nonnull(bar);
    g_assert_true(gtk_widget_get_mapped(bar));
    int scroll_buttons = 0;
    for (GtkWidget *c = gtk_widget_get_first_child(bar); c; c = gtk_widget_get_next_sibling(c)) {
        g_assert_false(GTK_IS_TOGGLE_BUTTON(c)); /* no folder buttons yet */
        if (gtk_widget_has_css_class(c, "slider-button")) {
            scroll_buttons++;
            g_assert_false(gtk_widget_get_mapped(c));
        }
    }
    g_assert_cmpint(scroll_buttons, ==, 2);
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    gtk_dialog_response(GTK_DIALOG(dialog), GTK_RESPONSE_CANCEL);
    G_GNUC_END_IGNORE_DEPRECATIONS
    g_main_context_pop_thread_default(held);
    for (int i = 0; i < 50; i++) { /* the held answers, now cancelled */
        while (g_main_context_iteration(held, FALSE))
            ;
        spin(0.01);
    }
    g_main_context_unref(held);
    g_free(path);
    close_window(win);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    /* The recent-files list and settings go to a folder of the test's own.
     * (G_TEST_OPTION_ISOLATE_DIRS would also hide the system's MIME data,
     * which GTK needs to load the SVG icons.) */
    char *home = scratch_dir();
    g_setenv("XDG_DATA_HOME", home, TRUE);
    g_setenv("XDG_CONFIG_HOME", home, TRUE);
    g_setenv("XDG_CACHE_HOME", home, TRUE);
    g_setenv("GTK_A11Y", "none", TRUE); /* no accessibility bus under Xvfb */
    /* The file choosers' own settings: no dconf under Xvfb. */
    g_setenv("GSETTINGS_BACKEND", "memory", TRUE);
    if (!twb_application_can_open_windows())
        g_error("no display: run under xvfb-run (meson test --suite gui does)");
    g_set_application_name("Tensor Workbench");
    app = twb_application_new(G_APPLICATION_NON_UNIQUE);
    g_assert_true(g_application_register(G_APPLICATION(app), NULL, NULL));

    g_test_add_func("/ui/window/three_views", test_three_views);
    g_test_add_func("/ui/window/placeholders", test_placeholders);
    g_test_add_func("/ui/window/train_follows_validity", test_train_follows_validity);
    g_test_add_func("/ui/window/templates", test_templates);
    g_test_add_func("/ui/window/open_edit_save", test_open_edit_save);
    g_test_add_func("/ui/window/open_errors", test_open_errors);
    g_test_add_func("/ui/window/banner", test_banner);
    g_test_add_func("/ui/window/close_asks_when_modified", test_close_asks_when_modified);
    g_test_add_func("/ui/window/close_discard_frees_window", test_close_discard_frees_window);
    g_test_add_func("/ui/window/close_with_pending_text", test_close_with_pending_text);
    g_test_add_func("/ui/window/delete_focused_card", test_delete_focused_card);
    g_test_add_func("/ui/window/removed_focus_before_label", test_removed_focus_before_label);
    g_test_add_func("/ui/window/popover_of_removed_field", test_popover_of_removed_field);
    g_test_add_func("/ui/window/return_in_popover_without_focus", test_return_in_popover_without_focus);
    g_test_add_func("/ui/window/emoji_chooser_of_removed_field", test_emoji_chooser_of_removed_field);
    g_test_add_func("/ui/window/close_with_popover", test_close_with_popover);
    g_test_add_func("/ui/window/close_with_popover_field", test_close_with_popover_field);
    g_test_add_func("/ui/window/close_with_popover_label", test_close_with_popover_label);
    g_test_add_func("/ui/window/layer_actions", test_layer_actions);
    g_test_add_func("/ui/window/fits_800x600", test_fits_800x600);
    g_test_add_func("/ui/window/training_panel_at_800", test_training_panel_at_800);
    g_test_add_func("/ui/window/undo_keys", test_undo_keys);
    g_test_add_func("/ui/window/dashboard_fits_800", test_dashboard_fits_800);
    g_test_add_func("/ui/window/shortcuts_window", test_shortcuts_window);
    g_test_add_func("/ui/window/logdb_option", test_logdb_option);
    g_test_add_func("/ui/window/screenshot", test_screenshot);
    g_test_add_func("/ui/window/screenshot_800x600", test_screenshot_800x600);
    g_test_add_func("/ui/window/screenshot_errors", test_screenshot_errors);
    g_test_add_func("/ui/window/chooser_before_its_folder", test_chooser_before_its_folder);
    int status = g_test_run();
    g_object_unref(app);
    scratch_remove_tree(home);
    g_free(home);
    return status;
}
