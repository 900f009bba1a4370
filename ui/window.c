/* TwWindow (window.h): the header bar, banner and views from
 * resources/window.ui; the window's actions; open, save and templates; the
 * question before unsaved changes are lost. */
#include "window.h"

#include <string.h>

#include "banner.h"
#include "dashboard_view.h"
#include "graph_view.h"
#include "focus_guard.h"
#include "popover_guard.h"
#include "path_bar_guard.h"
#include "designer_canvas.h"
#include "designer_view.h"
#include "property_editor.h"

#define RESOURCE_PATH "/io/github/twb/Workbench"
#define RECENT_MAX 8
/* The training panel's share of a 1280-pixel window; in a narrower one it
 * gives way and scrolls. */
#define TRAIN_PANEL_WIDTH 320

/* What to do once unsaved changes are saved or discarded. */
typedef void (*TwContinuation)(TwWindow *win, gpointer data);

typedef struct {
    TwContinuation next;
    gpointer data;
    GDestroyNotify free_data;
} Pending;

struct _TwWindow {
    GtkApplicationWindow parent_instance;
    TwModelDoc *doc;
    char *logdb;
    GtkWidget *banner, *stack, *designer_paned, *designer, *train_panel;
    GtkWidget *dashboard_view, *graph_view, *document_title, *train_button;
    GMenu *recent_section;
    GtkRecentManager *recent;
    GtkNativeDialog *chooser;  /* the open or save dialog while it is up */
    Pending after_save;        /* what Save in the unsaved-changes question continues with */
    gboolean closing_confirmed;
    char *focus_text;          /* the focused text field's text when it got the focus */
};

enum { PROP_0, PROP_DOC, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE(TwWindow, tw_window, GTK_TYPE_APPLICATION_WINDOW)

/* ---- pending continuations ------------------------------------------------ */
static void pending_clear(Pending *p)
{
    if (p->free_data && p->data)
        p->free_data(p->data);
    *p = (Pending){0};
}

static void pending_run(TwWindow *win, Pending *p)
{
    Pending taken = *p;
    *p = (Pending){0};
    if (taken.next)
        taken.next(win, taken.data);
    pending_clear(&taken);
}

/* ---- title, actions -------------------------------------------------------- */
static char *document_name(TwWindow *win)
{
    const char *path = tw_model_doc_path(win->doc);
    return path ? g_path_get_basename(path) : g_strdup("Untitled model");
}

static void update_title(TwWindow *win)
{
    char *name = document_name(win);
    char *title = tw_model_doc_modified(win->doc) ? g_strconcat(name, " •", NULL) : g_strdup(name);
    gtk_window_set_title(GTK_WINDOW(win), title);
    gtk_label_set_text(GTK_LABEL(win->document_title), title);
    const char *path = tw_model_doc_path(win->doc);
    gtk_widget_set_tooltip_text(win->document_title, path ? path : "Not saved yet");
    g_free(title);
    g_free(name);
}

static void set_enabled(TwWindow *win, const char *name, gboolean enabled)
{
    GAction *action = g_action_map_lookup_action(G_ACTION_MAP(win), name);
    g_simple_action_set_enabled(G_SIMPLE_ACTION(action), enabled);
}

/* The document the designer shows: the window's, or a nested model of it
 * being edited (designer_view.h); undo, redo and the layer actions act on it. */
static TwModelDoc *shown_doc(TwWindow *win)
{
    return win->designer ? tw_designer_view_doc(TW_DESIGNER_VIEW(win->designer)) : win->doc;
}

/* Changes not saved: the document's, or an edit inside a nested model
 * that does not fit the model above and so is not in the document. */
static gboolean unsaved(TwWindow *win)
{
    return tw_model_doc_modified(win->doc) ||
           (win->designer && tw_designer_view_pending(TW_DESIGNER_VIEW(win->designer)));
}

static void update_actions(TwWindow *win)
{
    set_enabled(win, "undo", tw_model_doc_can_undo(shown_doc(win)));
    set_enabled(win, "redo", tw_model_doc_can_redo(shown_doc(win)));
    gboolean has_layers = tw_model_doc_n_layers(shown_doc(win)) > 0;
    set_enabled(win, "delete-layer", has_layers);
    set_enabled(win, "duplicate-layer", has_layers);
    /* The panel says why Train is off: the model, a run going, the data. */
    const char *why = win->train_panel ? tw_train_panel_cannot_train(TW_TRAIN_PANEL(win->train_panel))
                                       : tw_model_doc_error(win->doc);
    set_enabled(win, "train", why == NULL);
    gtk_widget_set_tooltip_text(win->train_button, why ? why : "Train the model (Ctrl+Return)");
}

/* The designer's shown model changed, or it drilled into a nested model
 * or back: Train trains the whole model, the window's document, which
 * has every edit made inside unless one does not fit (designer_view.h);
 * then Train is off and says why. */
static void on_shown_changed(TwWindow *win)
{
    tw_train_panel_set_blocked(TW_TRAIN_PANEL(win->train_panel),
                               tw_designer_view_cannot_train(TW_DESIGNER_VIEW(win->designer)));
    update_actions(win);
}

static void on_doc_changed(TwWindow *win)
{
    update_actions(win);
    update_title(win);
}

/* ---- messages ---------------------------------------------------------------- */
/* "Could not open “m.json”: <the engine's message>", without the path the
 * engine's message starts with when it is the same file. */
static void show_file_error(TwWindow *win, const char *verb, const char *path, const char *message)
{
    char *name = g_path_get_basename(path);
    char *prefix = g_strconcat(path, ": ", NULL);
    if (g_str_has_prefix(message, prefix))
        message += strlen(prefix);
    char *text = g_strdup_printf("Could not %s “%s”: %s", verb, name, message);
    tw_window_show_banner(win, text, TRUE);
    g_free(text);
    g_free(prefix);
    g_free(name);
}

static void remember_recent(TwWindow *win, const char *path)
{
    char *uri = g_filename_to_uri(path, NULL, NULL);
    if (uri)
        gtk_recent_manager_add_item(win->recent, uri);
    g_free(uri);
}

/* ---- open, save, templates --------------------------------------------------- */
static void load_file(TwWindow *win, const char *path)
{
    GError *error = NULL;
    if (!tw_model_doc_load(win->doc, path, &error)) {
        show_file_error(win, "open", path, error->message);
        g_error_free(error);
        return;
    }
    tw_banner_hide(TW_BANNER(win->banner));
    remember_recent(win, path);
    update_title(win);
}

static gboolean save_file(TwWindow *win, const char *path)
{
    GError *error = NULL;
    /* The edits inside a nested model are in the document as they are
     * made: a save stays where the designer is, unless one does not fit. */
    if (!tw_designer_view_write_back(TW_DESIGNER_VIEW(win->designer), &error) ||
        !tw_model_doc_save(win->doc, path, &error)) {
        show_file_error(win, "save", path, error->message);
        g_error_free(error);
        return FALSE;
    }
    remember_recent(win, path);
    update_title(win);
    return TRUE;
}

static void load_template(TwWindow *win, gpointer data)
{
    const char *name = data;
    char *resource = g_strdup_printf(RESOURCE_PATH "/templates/%s.json", name);
    char *source = g_strdup_printf("the %s template", name);
    GError *error = NULL;
    GBytes *bytes = g_resources_lookup_data(resource, G_RESOURCE_LOOKUP_FLAGS_NONE, &error);
    if (bytes) {
        /* Resource data ends with a NUL byte, so it reads as a string. */
        if (tw_model_doc_load_json(win->doc, g_bytes_get_data(bytes, NULL), source, &error))
            tw_banner_hide(TW_BANNER(win->banner));
        g_bytes_unref(bytes);
    }
    if (error) {
        char *text = g_strdup_printf("Could not load %s: %s", source, error->message);
        tw_window_show_banner(win, text, TRUE);
        g_free(text);
        g_error_free(error);
    }
    update_title(win);
    g_free(source);
    g_free(resource);
}

/* Opening takes every file tw_model_open reads; saving writes JSON. */
static GtkFileFilter *model_filter(gboolean saving)
{
    GtkFileFilter *filter = gtk_file_filter_new();
    gtk_file_filter_set_name(filter, saving ? "Keras model files (JSON)" : "Keras models (JSON, .keras, .h5)");
    gtk_file_filter_add_mime_type(filter, "application/json");
    gtk_file_filter_add_suffix(filter, "json");
    if (!saving) {
        gtk_file_filter_add_suffix(filter, "keras");
        gtk_file_filter_add_suffix(filter, "h5");
    }
    return filter;
}

/* Where Save may write without asking: a JSON file (a .keras or .h5 the
 * model came from is not overwritten with JSON). */
static gboolean saves_in_place(const char *path)
{
    return path && g_str_has_suffix(path, ".json");
}

typedef void (*TwPathChosen)(TwWindow *win, const char *path);

static void on_chooser_response(GtkNativeDialog *dialog, int response, gpointer data)
{
    TwWindow *win = data;
    TwPathChosen chosen = (TwPathChosen)g_object_get_data(G_OBJECT(dialog), "tw-chosen");
    GFile *file = response == GTK_RESPONSE_ACCEPT ? gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog)) : NULL;
    char *path = file ? g_file_get_path(file) : NULL;
    /* The dialog is released by the next choose_file or the window's dispose,
     * not inside its own signal. */
    if (path)
        chosen(win, path);
    else
        pending_clear(&win->after_save); /* cancelled: nothing continues */
    g_free(path);
    g_clear_object(&file);
}

static void choose_file(TwWindow *win, GtkFileChooserAction action, TwPathChosen chosen)
{
    gboolean saving = action == GTK_FILE_CHOOSER_ACTION_SAVE;
    GtkFileChooserNative *chooser = gtk_file_chooser_native_new(saving ? "Save Model As" : "Open Model", GTK_WINDOW(win),
                                                                action, saving ? "_Save" : "_Open", "_Cancel");
    GtkFileFilter *filter = model_filter(saving);
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(chooser), filter);
    g_object_unref(filter);
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(chooser), TRUE);
    const char *path = tw_model_doc_path(win->doc);
    if (saving) {
        char *base = path ? g_path_get_basename(path) : g_strdup("model.json");
        char *dot = strrchr(base, '.');
        if (dot && !saves_in_place(base))
            *dot = 0;
        char *name = saves_in_place(base) ? g_strdup(base) : g_strconcat(base, ".json", NULL);
        g_free(base);
        gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(chooser), name);
        g_free(name);
    }
    if (path) {
        char *dir = g_path_get_dirname(path);
        GFile *folder = g_file_new_for_path(dir);
        gtk_file_chooser_set_current_folder(GTK_FILE_CHOOSER(chooser), folder, NULL);
        g_object_unref(folder);
        g_free(dir);
    }
    g_object_set_data(G_OBJECT(chooser), "tw-chosen", (gpointer)chosen);
    g_signal_connect(chooser, "response", G_CALLBACK(on_chooser_response), win);
    g_clear_object(&win->chooser);
    win->chooser = GTK_NATIVE_DIALOG(chooser);
    gtk_native_dialog_show(win->chooser);
}

static void save_as_chosen(TwWindow *win, const char *path)
{
    /* A name typed without an extension gets the one the filter shows. */
    char *base = g_path_get_basename(path);
    char *target = strchr(base, '.') ? g_strdup(path) : g_strconcat(path, ".json", NULL);
    if (save_file(win, target))
        pending_run(win, &win->after_save);
    else
        pending_clear(&win->after_save);
    g_free(target);
    g_free(base);
}

/* Save where the model came from, or ask where; then continue with
 * win->after_save. */
static void save_then_continue(TwWindow *win)
{
    const char *path = tw_model_doc_path(win->doc);
    if (!saves_in_place(path)) {
        choose_file(win, GTK_FILE_CHOOSER_ACTION_SAVE, save_as_chosen);
        return;
    }
    char *copy = g_strdup(path);
    if (save_file(win, copy))
        pending_run(win, &win->after_save);
    else
        pending_clear(&win->after_save);
    g_free(copy);
}

/* ---- the unsaved-changes question --------------------------------------------- */
enum { RESPONSE_DISCARD = 1, RESPONSE_SAVE = 2 };

static void free_pending(gpointer data)
{
    pending_clear(data);
    g_free(data);
}

static void on_question_response(GtkDialog *dialog, int response, gpointer data)
{
    TwWindow *win = data;
    Pending *pending = g_object_steal_data(G_OBJECT(dialog), "tw-pending");
    /* The answer may close the window (Discard before closing), and the
     * dialog outlives it until this emission ends: GTK 4.8 would then unset
     * the transient parent of a destroyed dialog on the freed window. */
    gtk_window_set_transient_for(GTK_WINDOW(dialog), NULL);
    gtk_window_destroy(GTK_WINDOW(dialog));
    if (response == RESPONSE_DISCARD) {
        pending_run(win, pending);
    } else if (response == RESPONSE_SAVE) {
        pending_clear(&win->after_save);
        win->after_save = *pending;
        *pending = (Pending){0};
        save_then_continue(win);
    }
    free_pending(pending);
}

/* Continue at once when nothing is unsaved; otherwise ask first whether to
 * save, discard or cancel (`doing` ends the question: "before closing"). */
static void confirm_discard(TwWindow *win, const char *doing, TwContinuation next, gpointer data,
                            GDestroyNotify free_data)
{
    Pending *pending = g_new(Pending, 1);
    *pending = (Pending){next, data, free_data};
    if (!unsaved(win)) {
        pending_run(win, pending);
        g_free(pending);
        return;
    }
    char *name = document_name(win);
    GtkWidget *dialog = gtk_message_dialog_new(GTK_WINDOW(win), GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
                                               GTK_MESSAGE_QUESTION, GTK_BUTTONS_NONE,
                                               "Save changes to “%s” %s?", name, doing);
    gtk_message_dialog_format_secondary_text(GTK_MESSAGE_DIALOG(dialog),
                                             "If you do not save, your changes will be lost.");
    GtkWidget *discard = gtk_dialog_add_button(GTK_DIALOG(dialog), "_Discard Changes", RESPONSE_DISCARD);
    gtk_widget_add_css_class(discard, "destructive-action");
    gtk_dialog_add_button(GTK_DIALOG(dialog), "_Cancel", GTK_RESPONSE_CANCEL);
    GtkWidget *save = gtk_dialog_add_button(GTK_DIALOG(dialog), "_Save", RESPONSE_SAVE);
    gtk_widget_add_css_class(save, "suggested-action");
    gtk_dialog_set_default_response(GTK_DIALOG(dialog), RESPONSE_SAVE);
    g_object_set_data_full(G_OBJECT(dialog), "tw-pending", pending, free_pending);
    g_signal_connect(dialog, "response", G_CALLBACK(on_question_response), win);
    gtk_window_present(GTK_WINDOW(dialog));
    g_free(name);
}

/* ---- undo and redo ---------------------------------------------------------------- */
/* The focused text (the GtkText of an entry or spin button) while it holds
 * text typed and not yet committed, or NULL. A property editor's field
 * knows what is committed (the layer's value); any other field counts as
 * edited once its text differs from what it held when it got the focus. */
static GtkWidget *text_being_edited(TwWindow *win)
{
    GtkWidget *focus = gtk_root_get_focus(GTK_ROOT(win));
    if (!GTK_IS_TEXT(focus))
        return NULL;
    GtkWidget *editor = gtk_widget_get_ancestor(focus, TW_TYPE_PROPERTY_EDITOR);
    if (editor)
        return tw_property_editor_editing(TW_PROPERTY_EDITOR(editor)) ? focus : NULL;
    return g_strcmp0(gtk_editable_get_text(GTK_EDITABLE(focus)), win->focus_text) ? focus : NULL;
}

static void on_focus_changed(GObject *object, GParamSpec *pspec, gpointer data)
{
    TwWindow *win = TW_WINDOW(object);
    GtkWidget *focus = gtk_root_get_focus(GTK_ROOT(win));
    g_free(win->focus_text);
    win->focus_text = GTK_IS_TEXT(focus) ? g_strdup(gtk_editable_get_text(GTK_EDITABLE(focus))) : NULL;
}

/* Ctrl+Z and Ctrl+Shift+Z (and the menu) act on the model, unless a text
 * field is being edited: then on its typing. */
static void on_undo(GSimpleAction *action, GVariant *parameter, gpointer data)
{
    TwWindow *win = data;
    GtkWidget *text = text_being_edited(win);
    if (text)
        gtk_widget_activate_action(text, "text.undo", NULL);
    else
        tw_model_doc_undo(shown_doc(win));
}

static void on_redo(GSimpleAction *action, GVariant *parameter, gpointer data)
{
    TwWindow *win = data;
    GtkWidget *text = text_being_edited(win);
    if (text)
        gtk_widget_activate_action(text, "text.redo", NULL);
    else
        tw_model_doc_redo(shown_doc(win));
}

/* ---- actions ---------------------------------------------------------------------- */

static void report_edit_error(TwWindow *win, const char *what, GError *error)
{
    char *text = g_strdup_printf("Could not %s the layer: %s", what, error->message);
    tw_window_show_banner(win, text, TRUE);
    g_free(text);
    g_error_free(error);
}

/* Delete reaches this only when the focused widget did not use the key (see
 * add_local_shortcuts), and it acts only on a selected layer. */
static void on_delete_layer(GSimpleAction *action, GVariant *parameter, gpointer data)
{
    TwWindow *win = data;
    TwDesignerView *designer = TW_DESIGNER_VIEW(win->designer);
    if (tw_model_doc_is_graph(shown_doc(win))) { /* the canvas's selection: boxes or an edge */
        tw_designer_canvas_delete_selection(TW_DESIGNER_CANVAS(tw_designer_view_canvas(designer)));
        return;
    }
    int selected = tw_designer_view_selected(designer);
    if (selected < 0)
        return;
    GError *error = NULL;
    if (!tw_model_doc_remove(shown_doc(win), selected, &error)) {
        report_edit_error(win, "delete", error);
        return;
    }
    int n = tw_model_doc_n_layers(shown_doc(win));
    if (n > 0)
        tw_designer_view_select(designer, MIN(selected, n - 1));
}

static void on_duplicate_layer(GSimpleAction *action, GVariant *parameter, gpointer data)
{
    TwWindow *win = data;
    TwDesignerView *designer = TW_DESIGNER_VIEW(win->designer);
    if (tw_model_doc_is_graph(shown_doc(win))) {
        tw_designer_canvas_duplicate(TW_DESIGNER_CANVAS(tw_designer_view_canvas(designer)));
        return;
    }
    int selected = tw_designer_view_selected(designer);
    if (selected < 0)
        return;
    GError *error = NULL;
    if (!tw_model_doc_duplicate(shown_doc(win), selected, &error))
        report_edit_error(win, "duplicate", error);
    else
        tw_designer_view_select(designer, selected + 1);
}

static void on_train(GSimpleAction *action, GVariant *parameter, gpointer data)
{
    TwWindow *win = data;
    tw_train_panel_request_train(TW_TRAIN_PANEL(win->train_panel));
}

static void open_chosen(TwWindow *win, const char *path)
{
    load_file(win, path);
}

static void ask_open(TwWindow *win, gpointer data)
{
    choose_file(win, GTK_FILE_CHOOSER_ACTION_OPEN, open_chosen);
}

static void on_open(GSimpleAction *action, GVariant *parameter, gpointer data)
{
    confirm_discard(TW_WINDOW(data), "before opening another model", ask_open, NULL, NULL);
}

static void load_file_continuation(TwWindow *win, gpointer data)
{
    load_file(win, data);
}

static void on_open_recent(GSimpleAction *action, GVariant *parameter, gpointer data)
{
    confirm_discard(TW_WINDOW(data), "before opening another model", load_file_continuation,
                    g_variant_dup_string(parameter, NULL), g_free);
}

/* A run's model (win.open-run-model, from the run list's menu): the run's
 * name and its Keras model JSON, opened as a model with no file. */
static void load_run_model(TwWindow *win, gpointer data)
{
    const char *name, *json;
    g_variant_get(data, "(&s&s)", &name, &json);
    char *source = g_strdup_printf("the model of run “%s”", name);
    GError *error = NULL;
    if (tw_model_doc_load_json(win->doc, json, source, &error)) {
        tw_banner_hide(TW_BANNER(win->banner));
        tw_window_show_view(win, "designer");
    } else {
        char *text = g_strdup_printf("Could not open %s: %s", source, error->message);
        tw_window_show_banner(win, text, TRUE);
        g_free(text);
        g_error_free(error);
    }
    update_title(win);
    g_free(source);
}

static void on_open_run_model(GSimpleAction *action, GVariant *parameter, gpointer data)
{
    confirm_discard(TW_WINDOW(data), "before opening the run's model", load_run_model, g_variant_ref(parameter),
                    (GDestroyNotify)g_variant_unref);
}

static void on_logdir_chosen(GtkNativeDialog *dialog, int response, gpointer data)
{
    GFile *folder = response == GTK_RESPONSE_ACCEPT ? gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog)) : NULL;
    char *path = folder ? g_file_get_path(folder) : NULL;
    if (path)
        tw_window_open_logdir(TW_WINDOW(data), path);
    g_free(path);
    g_clear_object(&folder);
}

static void on_open_logdir(GSimpleAction *action, GVariant *parameter, gpointer data)
{
    TwWindow *win = data;
    GtkFileChooserNative *chooser = gtk_file_chooser_native_new(
        "Open TensorBoard Log Directory", GTK_WINDOW(win), GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, "_Open", "_Cancel");
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(chooser), TRUE);
    g_signal_connect(chooser, "response", G_CALLBACK(on_logdir_chosen), win);
    g_clear_object(&win->chooser);
    win->chooser = GTK_NATIVE_DIALOG(chooser);
    gtk_native_dialog_show(win->chooser);
}

static void on_save(GSimpleAction *action, GVariant *parameter, gpointer data)
{
    TwWindow *win = data;
    pending_clear(&win->after_save);
    save_then_continue(win);
}

static void on_save_as(GSimpleAction *action, GVariant *parameter, gpointer data)
{
    TwWindow *win = data;
    pending_clear(&win->after_save);
    choose_file(win, GTK_FILE_CHOOSER_ACTION_SAVE, save_as_chosen);
}

static void on_template(GSimpleAction *action, GVariant *parameter, gpointer data)
{
    confirm_discard(TW_WINDOW(data), "before starting from a template", load_template,
                    g_variant_dup_string(parameter, NULL), g_free);
}

static void on_show_view(GSimpleAction *action, GVariant *parameter, gpointer data)
{
    tw_window_show_view(TW_WINDOW(data), g_variant_get_string(parameter, NULL));
}

static const GActionEntry window_actions[] = {
    {"undo", on_undo, NULL, NULL, NULL, {0}},
    {"redo", on_redo, NULL, NULL, NULL, {0}},
    {"delete-layer", on_delete_layer, NULL, NULL, NULL, {0}},
    {"duplicate-layer", on_duplicate_layer, NULL, NULL, NULL, {0}},
    {"train", on_train, NULL, NULL, NULL, {0}},
    {"open", on_open, NULL, NULL, NULL, {0}},
    {"open-recent", on_open_recent, "s", NULL, NULL, {0}},
    {"open-logdir", on_open_logdir, NULL, NULL, NULL, {0}},
    {"open-run-model", on_open_run_model, "(ss)", NULL, NULL, {0}},
    {"save", on_save, NULL, NULL, NULL, {0}},
    {"save-as", on_save_as, NULL, NULL, NULL, {0}},
    {"template", on_template, "s", NULL, NULL, {0}},
    {"show-view", on_show_view, "s", NULL, NULL, {0}},
};

static void add_shortcuts(TwWindow *win, GtkPropagationPhase phase, const char *const (*shortcuts)[2], size_t n)
{
    GtkEventController *controller = gtk_shortcut_controller_new();
    gtk_event_controller_set_propagation_phase(controller, phase);
    for (size_t i = 0; i < n; i++)
        gtk_shortcut_controller_add_shortcut(GTK_SHORTCUT_CONTROLLER(controller),
                                             gtk_shortcut_new(gtk_shortcut_trigger_parse_string(shortcuts[i][0]),
                                                              gtk_named_action_new(shortcuts[i][1])));
    gtk_widget_add_controller(GTK_WIDGET(win), controller);
}

/* Keys that text fields also use. Delete and Ctrl+D are the window's only
 * when the focused widget leaves them unused: the bubble phase, after the
 * focused entry had its turn. Undo and redo come first (the capture phase):
 * a text field keeps its own undo history, which would take Ctrl+Z even
 * when nothing was typed; on_undo hands the key to it while it is being
 * edited. (Application accelerators also run in the capture phase; these
 * are not ones, so that the menu shows them without taking Delete from the
 * entries: see the "accel" attributes in window.ui.) */
static void add_local_shortcuts(TwWindow *win)
{
    static const char *const history[][2] = {
        {"<Control>z", "win.undo"},
        {"<Control><Shift>z", "win.redo"},
    };
    static const char *const layers[][2] = {
        {"Delete", "win.delete-layer"},
        {"KP_Delete", "win.delete-layer"},
        {"<Control>d", "win.duplicate-layer"},
    };
    add_shortcuts(win, GTK_PHASE_CAPTURE, history, G_N_ELEMENTS(history));
    add_shortcuts(win, GTK_PHASE_BUBBLE, layers, G_N_ELEMENTS(layers));
}

/* ---- recent files ------------------------------------------------------------------ */
static int compare_recent(gconstpointer a, gconstpointer b)
{
    GDateTime *ta = gtk_recent_info_get_modified(*(GtkRecentInfo *const *)a);
    GDateTime *tb = gtk_recent_info_get_modified(*(GtkRecentInfo *const *)b);
    return g_date_time_compare(tb, ta); /* newest first */
}

/* Menu labels read "_" as a mnemonic mark: double it. */
static char *menu_label(const char *text)
{
    char **parts = g_strsplit(text, "_", -1);
    char *label = g_strjoinv("__", parts);
    g_strfreev(parts);
    return label;
}

/* Model files this program opened or saved, newest first. */
static void update_recent_menu(TwWindow *win)
{
    GList *items = gtk_recent_manager_get_items(win->recent);
    GPtrArray *ours = g_ptr_array_new();
    for (GList *l = items; l; l = l->next) {
        GtkRecentInfo *info = l->data;
        if (gtk_recent_info_is_local(info) && gtk_recent_info_has_application(info, g_get_application_name()) &&
            (g_str_has_suffix(gtk_recent_info_get_uri(info), ".json") ||
             g_str_has_suffix(gtk_recent_info_get_uri(info), ".keras") ||
             g_str_has_suffix(gtk_recent_info_get_uri(info), ".h5")) &&
            gtk_recent_info_exists(info))
            g_ptr_array_add(ours, info);
    }
    g_ptr_array_sort(ours, compare_recent);
    g_menu_remove_all(win->recent_section);
    if (ours->len > 0) {
        GMenu *submenu = g_menu_new();
        for (guint i = 0; i < ours->len && i < RECENT_MAX; i++) {
            char *path = g_filename_from_uri(gtk_recent_info_get_uri(ours->pdata[i]), NULL, NULL);
            if (!path)
                continue;
            char *label = menu_label(gtk_recent_info_get_display_name(ours->pdata[i]));
            GMenuItem *item = g_menu_item_new(label, NULL);
            g_menu_item_set_action_and_target_value(item, "win.open-recent", g_variant_new_string(path));
            g_menu_append_item(submenu, item);
            g_object_unref(item);
            g_free(label);
            g_free(path);
        }
        g_menu_append_submenu(win->recent_section, "Open _Recent", G_MENU_MODEL(submenu));
        g_object_unref(submenu);
    }
    g_ptr_array_free(ours, TRUE);
    g_list_free_full(items, (GDestroyNotify)gtk_recent_info_unref);
}

/* ---- the run database ---------------------------------------------------------------- */
static void on_panel_logdb(GObject *panel, GParamSpec *pspec, TwWindow *win)
{
    char *logdb = NULL;
    g_object_get(panel, "logdb", &logdb, NULL);
    if (logdb)
        tw_window_set_logdb(win, logdb);
    g_free(logdb);
}

/* ---- construction ----------------------------------------------------------------------- */
static void build_designer_page(TwWindow *win)
{
    win->designer = tw_designer_view_new(win->doc);
    win->train_panel = tw_train_panel_new(win->doc);
    GtkWidget *scroller = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroller), GTK_POLICY_AUTOMATIC, GTK_POLICY_NEVER);
    gtk_scrolled_window_set_propagate_natural_width(GTK_SCROLLED_WINDOW(scroller), TRUE);
    gtk_scrolled_window_set_min_content_width(GTK_SCROLLED_WINDOW(scroller), TRAIN_PANEL_WIDTH / 2);
    gtk_scrolled_window_set_max_content_width(GTK_SCROLLED_WINDOW(scroller), TRAIN_PANEL_WIDTH);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroller), win->train_panel);
    gtk_paned_set_start_child(GTK_PANED(win->designer_paned), win->designer);
    gtk_paned_set_end_child(GTK_PANED(win->designer_paned), scroller);
    tw_designer_paned_initial_width(GTK_PANED(win->designer_paned), TRUE, TRAIN_PANEL_WIDTH, 900);
    g_signal_connect_object(win->train_panel, "notify::logdb", G_CALLBACK(on_panel_logdb), win, 0);
    g_signal_connect_object(win->train_panel, "notify::cannot-train", G_CALLBACK(update_actions), win,
                            G_CONNECT_SWAPPED);
    g_signal_connect_object(win->designer, "shown-changed", G_CALLBACK(on_shown_changed), win, G_CONNECT_SWAPPED);
    on_panel_logdb(G_OBJECT(win->train_panel), NULL, win);
}

static void tw_window_constructed(GObject *object)
{
    TwWindow *win = TW_WINDOW(object);
    G_OBJECT_CLASS(tw_window_parent_class)->constructed(object);
    if (!win->doc)
        win->doc = tw_model_doc_new();
    build_designer_page(win);
    tw_graph_view_set_doc(TW_GRAPH_VIEW(win->graph_view), win->doc);
    g_signal_connect_object(win->doc, "changed", G_CALLBACK(on_doc_changed), win, G_CONNECT_SWAPPED);
    g_signal_connect_object(win->doc, "notify::modified", G_CALLBACK(update_title), win, G_CONNECT_SWAPPED);
    g_signal_connect_object(win->doc, "notify::path", G_CALLBACK(update_title), win, G_CONNECT_SWAPPED);
    on_doc_changed(win);
}

static void close_confirmed(TwWindow *win, gpointer data)
{
    win->closing_confirmed = TRUE;
    gtk_window_close(GTK_WINDOW(win));
}

static gboolean tw_window_close_request(GtkWindow *window)
{
    TwWindow *win = TW_WINDOW(window);
    if (win->closing_confirmed || !unsaved(win))
        return GTK_WINDOW_CLASS(tw_window_parent_class)->close_request(window);
    confirm_discard(win, "before closing", close_confirmed, NULL, NULL);
    return TRUE; /* not yet */
}

static void tw_window_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
    if (id == PROP_DOC)
        TW_WINDOW(object)->doc = g_value_dup_object(value);
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
}

static void tw_window_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    if (id == PROP_DOC)
        g_value_set_object(value, TW_WINDOW(object)->doc);
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
}

static void tw_window_dispose(GObject *object)
{
    TwWindow *win = TW_WINDOW(object);
    /* A field's pending text is committed when it loses the focus: let that
     * happen now, while every widget is whole, rather than while the
     * template's children are being disposed (the doc's "changed" then
     * reached half-disposed widgets); after it, the doc is not listened to. */
    gtk_window_set_focus(GTK_WINDOW(win), NULL);
    if (win->doc)
        g_signal_handlers_disconnect_by_data(win->doc, win);
    if (win->chooser)
        gtk_native_dialog_destroy(win->chooser);
    g_clear_object(&win->chooser);
    pending_clear(&win->after_save);
    if (win->recent)
        g_signal_handlers_disconnect_by_data(win->recent, win);
    win->recent = NULL;
    gtk_widget_dispose_template(GTK_WIDGET(win), TW_TYPE_WINDOW);
    G_OBJECT_CLASS(tw_window_parent_class)->dispose(object);
    g_clear_object(&win->doc);
}

static void tw_window_finalize(GObject *object)
{
    g_free(TW_WINDOW(object)->logdb);
    g_free(TW_WINDOW(object)->focus_text);
    G_OBJECT_CLASS(tw_window_parent_class)->finalize(object);
}

static void tw_window_class_init(TwWindowClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    object_class->constructed = tw_window_constructed;
    object_class->set_property = tw_window_set_property;
    object_class->get_property = tw_window_get_property;
    object_class->dispose = tw_window_dispose;
    object_class->finalize = tw_window_finalize;
    GTK_WINDOW_CLASS(klass)->close_request = tw_window_close_request;
    props[PROP_DOC] = g_param_spec_object("doc", NULL, NULL, TW_TYPE_MODEL_DOC,
                                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(object_class, N_PROPS, props);

    tw_popover_guard_install();
    tw_path_bar_guard_install();
    g_type_ensure(TW_TYPE_BANNER);
    g_type_ensure(TW_TYPE_DASHBOARD_VIEW);
    g_type_ensure(TW_TYPE_GRAPH_VIEW);
    gtk_widget_class_set_template_from_resource(widget_class, RESOURCE_PATH "/window.ui");
    gtk_widget_class_bind_template_child(widget_class, TwWindow, banner);
    gtk_widget_class_bind_template_child(widget_class, TwWindow, stack);
    gtk_widget_class_bind_template_child(widget_class, TwWindow, designer_paned);
    gtk_widget_class_bind_template_child(widget_class, TwWindow, dashboard_view);
    gtk_widget_class_bind_template_child(widget_class, TwWindow, graph_view);
    gtk_widget_class_bind_template_child(widget_class, TwWindow, document_title);
    gtk_widget_class_bind_template_child(widget_class, TwWindow, train_button);
    gtk_widget_class_bind_template_child(widget_class, TwWindow, recent_section);
}

static void tw_window_init(TwWindow *win)
{
    gtk_widget_init_template(GTK_WIDGET(win));
    g_action_map_add_action_entries(G_ACTION_MAP(win), window_actions, G_N_ELEMENTS(window_actions), win);
    add_local_shortcuts(win);
    g_signal_connect(win, "notify::focus-widget", G_CALLBACK(on_focus_changed), NULL);
    tw_focus_guard_attach(GTK_WINDOW(win));
    win->recent = gtk_recent_manager_get_default();
    g_signal_connect_swapped(win->recent, "changed", G_CALLBACK(update_recent_menu), win);
    update_recent_menu(win);
}

/* ---- window.h ------------------------------------------------------------------------------ */
TwWindow *tw_window_new(GtkApplication *app, TwModelDoc *doc)
{
    return g_object_new(TW_TYPE_WINDOW, "application", app, "doc", doc, NULL);
}

TwModelDoc *tw_window_doc(TwWindow *win)
{
    g_return_val_if_fail(TW_IS_WINDOW(win), NULL);
    return win->doc;
}

TwTrainPanel *tw_window_train_panel(TwWindow *win)
{
    g_return_val_if_fail(TW_IS_WINDOW(win), NULL);
    return TW_TRAIN_PANEL(win->train_panel);
}

void tw_window_show_view(TwWindow *win, const char *name)
{
    g_return_if_fail(TW_IS_WINDOW(win) && name);
    if (gtk_stack_get_child_by_name(GTK_STACK(win->stack), name))
        gtk_stack_set_visible_child_name(GTK_STACK(win->stack), name);
}

const char *tw_window_visible_view(TwWindow *win)
{
    g_return_val_if_fail(TW_IS_WINDOW(win), NULL);
    return gtk_stack_get_visible_child_name(GTK_STACK(win->stack));
}

void tw_window_show_banner(TwWindow *win, const char *message, gboolean is_error)
{
    g_return_if_fail(TW_IS_WINDOW(win) && message);
    tw_banner_show(TW_BANNER(win->banner), message, is_error);
}

void tw_window_open_logdir(TwWindow *win, const char *dir)
{
    g_return_if_fail(TW_IS_WINDOW(win));
    GError *error = NULL;
    if (!tw_dashboard_view_open_logdir(TW_DASHBOARD_VIEW(win->dashboard_view), dir, &error)) {
        char *text = g_strdup_printf("Could not open the TensorBoard log directory: %s", error->message);
        tw_window_show_banner(win, text, TRUE);
        g_free(text);
        g_error_free(error);
        return;
    }
    /* The directory's graphs (imported GraphDefs) are in the dashboard's
     * database of it; the training panel keeps its own file. */
    char *db = NULL;
    g_object_get(win->dashboard_view, "logdb", &db, NULL);
    tw_graph_view_set_logdb(TW_GRAPH_VIEW(win->graph_view), db);
    g_free(db);
    tw_window_show_view(win, "dashboard");
}

void tw_window_set_logdb(TwWindow *win, const char *path)
{
    g_return_if_fail(TW_IS_WINDOW(win) && path);
    if (!g_strcmp0(win->logdb, path))
        return;
    g_free(win->logdb);
    win->logdb = g_strdup(path);
    tw_dashboard_view_set_logdb(TW_DASHBOARD_VIEW(win->dashboard_view), path);
    tw_graph_view_set_logdb(TW_GRAPH_VIEW(win->graph_view), path);
    /* --logdb sets the panel's file too; the panel telling us is a no-op. */
    g_object_set(win->train_panel, "logdb", path, NULL);
}

void tw_window_open_file(TwWindow *win, const char *path)
{
    g_return_if_fail(TW_IS_WINDOW(win) && path);
    load_file(win, path);
}
