/* TwbApplication (application.h). */
#include "application.h"

#include <stdio.h>

#include "evaluate_action.h"
#include "renderer_choice.h"
#include "train_controller.h"
#include "sweep_queue.h"

#ifndef TWB_VERSION
#define TWB_VERSION "0.1.0"
#endif

#define RESOURCE_PATH "/io/github/twb/Workbench"

struct _TwbApplication {
    GtkApplication parent_instance;
    GSettings *interface_settings; /* the desktop's colour scheme, when it has one */
    char *logdb; /* --logdb of the command line being handled, as an absolute path */
    char *logdir; /* --logdir DIR (a TensorBoard log directory), the same way */
};

G_DEFINE_FINAL_TYPE(TwbApplication, twb_application, GTK_TYPE_APPLICATION)

/* ---- styles ------------------------------------------------------------------ */
static void load_css(void)
{
    GtkCssProvider *provider = gtk_css_provider_new();
    gtk_css_provider_load_from_resource(provider, RESOURCE_PATH "/style.css");
    gtk_style_context_add_provider_for_display(gdk_display_get_default(), GTK_STYLE_PROVIDER(provider),
                                               GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    g_object_unref(provider);
}

static void apply_color_scheme(GSettings *settings)
{
    char *scheme = g_settings_get_string(settings, "color-scheme");
    g_object_set(gtk_settings_get_default(), "gtk-application-prefer-dark-theme",
                 g_strcmp0(scheme, "prefer-dark") == 0, NULL);
    g_free(scheme);
}

/* GTK follows gtk-application-prefer-dark-theme (settings.ini, XSETTINGS)
 * and GTK_THEME by itself; GNOME's newer "color-scheme" key is read here
 * when the desktop has it. GTK_THEME, when set, wins. */
static void follow_color_scheme(TwbApplication *self)
{
    if (g_getenv("GTK_THEME"))
        return;
    GSettingsSchemaSource *source = g_settings_schema_source_get_default();
    GSettingsSchema *schema =
        source ? g_settings_schema_source_lookup(source, "org.gnome.desktop.interface", TRUE) : NULL;
    if (schema && g_settings_schema_has_key(schema, "color-scheme")) {
        self->interface_settings = g_settings_new("org.gnome.desktop.interface");
        g_signal_connect(self->interface_settings, "changed::color-scheme", G_CALLBACK(apply_color_scheme), NULL);
        apply_color_scheme(self->interface_settings);
    }
    if (schema)
        g_settings_schema_unref(schema);
}

/* ---- app.* actions --------------------------------------------------------------- */
static void on_about(GSimpleAction *action, GVariant *parameter, gpointer data)
{
    static const char *const authors[] = {"The Tensor Workbench authors", NULL};
    gtk_show_about_dialog(gtk_application_get_active_window(GTK_APPLICATION(data)),
                          "program-name", "Tensor Workbench",
                          "logo-icon-name", TW_APPLICATION_ID,
                          "version", TWB_VERSION,
                          "comments", "Design, train and inspect deep-learning models.",
                          "license-type", GTK_LICENSE_MIT_X11,
                          "authors", authors,
                          NULL);
}

/* Each window asks about its unsaved changes before it goes. */
static void on_quit(GSimpleAction *action, GVariant *parameter, gpointer data)
{
    GList *windows = g_list_copy(gtk_application_get_windows(GTK_APPLICATION(data)));
    for (GList *l = windows; l; l = l->next)
        gtk_window_close(l->data);
    g_list_free(windows);
}

static const GActionEntry app_actions[] = {
    {"about", on_about, NULL, NULL, NULL, {0}},
    {"quit", on_quit, NULL, NULL, NULL, {0}},
    {"evaluate-run", twb_evaluate_run_activate, "(ss)", NULL, NULL, {0}},
};

/* Keys that text fields do not use; undo, redo, Delete and Ctrl+D are the
 * window's own (ui/window.c). Keep resources/gtk/help-overlay.ui in step. */
static void set_accels(GtkApplication *app)
{
    static const struct {
        const char *action;
        const char *accels[3];
    } table[] = {
        {"win.open", {"<Control>o", NULL}},
        {"win.save", {"<Control>s", NULL}},
        {"win.save-as", {"<Control><Shift>s", NULL}},
        {"win.train", {"<Control>Return", "<Control>KP_Enter", NULL}},
        {"win.show-view::designer", {"<Alt>1", NULL}},
        {"win.show-view::dashboard", {"<Alt>2", NULL}},
        {"win.show-view::graph", {"<Alt>3", NULL}},
        {"app.quit", {"<Control>q", NULL}},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(table); i++)
        gtk_application_set_accels_for_action(app, table[i].action, table[i].accels);
}

/* ---- GApplication ------------------------------------------------------------------ */
static void twb_application_startup(GApplication *app)
{
    G_APPLICATION_CLASS(twb_application_parent_class)->startup(app);
    twb_choose_renderer();
    load_css();
    follow_color_scheme(TWB_APPLICATION(app));
    gtk_window_set_default_icon_name(TW_APPLICATION_ID);
    g_action_map_add_action_entries(G_ACTION_MAP(app), app_actions, G_N_ELEMENTS(app_actions), app);
    set_accels(GTK_APPLICATION(app));
}

/* ---- --logdb FILE ------------------------------------------------------------------ */
/* Read where twb was started (a relative path names a file there), then
 * carried to the running instance in the platform data of the activation
 * or open, which may be another process. */
static int twb_application_handle_local_options(GApplication *app, GVariantDict *options)
{
    TwbApplication *self = TWB_APPLICATION(app);
    const char *logdb = NULL;
    if (g_variant_dict_lookup(options, "logdb", "^&ay", &logdb) && logdb[0]) {
        g_free(self->logdb);
        self->logdb = g_canonicalize_filename(logdb, NULL);
    }
    const char *logdir = NULL;
    if (g_variant_dict_lookup(options, "logdir", "^&ay", &logdir) && logdir[0]) {
        g_free(self->logdir);
        self->logdir = g_canonicalize_filename(logdir, NULL);
    }
    return -1; /* go on: activate or open */
}

static void twb_application_add_platform_data(GApplication *app, GVariantBuilder *builder)
{
    G_APPLICATION_CLASS(twb_application_parent_class)->add_platform_data(app, builder);
    TwbApplication *self = TWB_APPLICATION(app);
    if (self->logdb)
        g_variant_builder_add(builder, "{sv}", "twb-logdb", g_variant_new_bytestring(self->logdb));
    if (self->logdir)
        g_variant_builder_add(builder, "{sv}", "twb-logdir", g_variant_new_bytestring(self->logdir));
}

static void twb_application_before_emit(GApplication *app, GVariant *platform_data)
{
    G_APPLICATION_CLASS(twb_application_parent_class)->before_emit(app, platform_data);
    TwbApplication *self = TWB_APPLICATION(app);
    const char *logdb = NULL;
    g_free(self->logdb);
    self->logdb = g_variant_lookup(platform_data, "twb-logdb", "^&ay", &logdb) ? g_strdup(logdb) : NULL;
    const char *logdir = NULL;
    g_free(self->logdir);
    self->logdir = g_variant_lookup(platform_data, "twb-logdir", "^&ay", &logdir) ? g_strdup(logdir) : NULL;
}

static void twb_application_activate(GApplication *app)
{
    TwbApplication *self = TWB_APPLICATION(app);
    GtkWindow *window = gtk_application_get_active_window(GTK_APPLICATION(app));
    if (!window)
        window = GTK_WINDOW(twb_application_new_window(self, NULL));
    else if (self->logdb) /* `twb --logdb FILE` while a window is open: that window reads FILE */
        tw_window_set_logdb(TW_WINDOW(window), self->logdb);
    else if (self->logdir)
        tw_window_open_logdir(TW_WINDOW(window), self->logdir);
    gtk_window_present(window);
}

static void twb_application_open(GApplication *app, GFile **files, int n_files, const char *hint)
{
    for (int i = 0; i < n_files; i++) {
        char *path = g_file_get_path(files[i]);
        char *name = path ? NULL : g_file_get_uri(files[i]);
        TwWindow *win = twb_application_new_window(TWB_APPLICATION(app), path);
        if (name) {
            char *text = g_strdup_printf("Could not open “%s”: only local files can be opened", name);
            tw_window_show_banner(win, text, TRUE);
            g_free(text);
        }
        gtk_window_present(GTK_WINDOW(win));
        g_free(name);
        g_free(path);
    }
}

static void twb_application_dispose(GObject *object)
{
    g_clear_object(&TWB_APPLICATION(object)->interface_settings);
    G_OBJECT_CLASS(twb_application_parent_class)->dispose(object);
}

static void twb_application_finalize(GObject *object)
{
    g_free(TWB_APPLICATION(object)->logdb);
    g_free(TWB_APPLICATION(object)->logdir);
    G_OBJECT_CLASS(twb_application_parent_class)->finalize(object);
}

static void twb_application_class_init(TwbApplicationClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = twb_application_dispose;
    G_OBJECT_CLASS(klass)->finalize = twb_application_finalize;
    G_APPLICATION_CLASS(klass)->startup = twb_application_startup;
    G_APPLICATION_CLASS(klass)->activate = twb_application_activate;
    G_APPLICATION_CLASS(klass)->open = twb_application_open;
    G_APPLICATION_CLASS(klass)->handle_local_options = twb_application_handle_local_options;
    G_APPLICATION_CLASS(klass)->add_platform_data = twb_application_add_platform_data;
    G_APPLICATION_CLASS(klass)->before_emit = twb_application_before_emit;
}

static void twb_application_init(TwbApplication *self)
{
    g_application_add_main_option(G_APPLICATION(self), "logdb", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_FILENAME,
                                  "The run database for the Dashboard and the training panel", "FILE");
    g_application_add_main_option(G_APPLICATION(self), "logdir", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_FILENAME,
                                  "A TensorBoard log directory to show in the Dashboard, live", "DIR");
}

TwbApplication *twb_application_new(GApplicationFlags flags)
{
    return g_object_new(TWB_TYPE_APPLICATION, "application-id", TW_APPLICATION_ID, "flags",
                        G_APPLICATION_HANDLES_OPEN | flags, NULL);
}

TwWindow *twb_application_new_window(TwbApplication *app, const char *path)
{
    g_return_val_if_fail(TWB_IS_APPLICATION(app), NULL);
    TwModelDoc *doc = tw_model_doc_new();
    TwWindow *win = tw_window_new(GTK_APPLICATION(app), doc);
    g_object_unref(doc);
    twb_train_controller_attach(win);
    twb_sweep_queue_attach(win);
    if (app->logdb)
        tw_window_set_logdb(win, app->logdb);
    if (app->logdir)
        tw_window_open_logdir(win, app->logdir);
    if (path)
        tw_window_open_file(win, path);
    return win;
}

gboolean twb_application_can_open_windows(void)
{
    if (gtk_init_check())
        return TRUE;
    fputs("twb: cannot open the workbench window: no display to show it on (DISPLAY and\n"
          "WAYLAND_DISPLAY are unset or cannot be reached). Run twb in a desktop session,\n"
          "or use the command-line tools: 'twb --help'.\n",
          stderr);
    return FALSE;
}

int twb_application_main(int argc, char **argv)
{
    if (!twb_application_can_open_windows())
        return 1;
    g_set_application_name("Tensor Workbench");
    TwbApplication *app = twb_application_new(G_APPLICATION_DEFAULT_FLAGS);
    int status = g_application_run(G_APPLICATION(app), argc, argv);
    g_object_unref(app);
    return status;
}
