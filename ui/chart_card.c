/* TwChartCard (chart_card.h): the chart, which draws the tag as its title,
 * with the export buttons over its top right corner, and under it a mark
 * for each series that cannot be read (a damaged chunk), saying why. Each
 * export asks for a file with GtkFileChooserNative, suggesting the tag as
 * the name ("train_loss.png"), and says in the window's banner what was
 * written or why not. */
#include "chart_card.h"

#include <string.h>

#include "window.h"

typedef gboolean (*ExportFunc)(TwChartView *view, const char *path, GError **error);

typedef struct {
    const char *label, *extension, *tooltip, *filter_name, *mime;
    ExportFunc export;
} ExportKind;

static const ExportKind export_kinds[] = {
    {"PNG", "png", "Save the chart as a PNG image", "PNG images", "image/png", tw_chart_view_export_png},
    {"SVG", "svg", "Save the chart as an SVG drawing", "SVG drawings", "image/svg+xml", tw_chart_view_export_svg},
    {"CSV", "csv", "Save the visible data as CSV (run, step, wall time, value)", "CSV files", "text/csv",
     tw_chart_view_export_csv},
};

struct _TwChartCard {
    GtkWidget parent_instance;
    GtkWidget *box, *chart, *buttons, *damage;
    TwDashboardData *data;
    gulong series_handler;
    char *tag;
    GArray *tag_ids, *colors;
    GPtrArray *labels;
    GArray *origins;
    GtkNativeDialog *chooser; /* while one is up */
    const ExportKind *exporting;
};

G_DEFINE_FINAL_TYPE(TwChartCard, tw_chart_card, GTK_TYPE_WIDGET)

static void tell(TwChartCard *card, const char *message, gboolean is_error)
{
    GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(card));
    if (root && TW_IS_WINDOW(root))
        tw_window_show_banner(TW_WINDOW(root), message, is_error);
    else if (is_error)
        g_warning("%s", message);
}

static void on_chosen(GtkNativeDialog *chooser, int response, TwChartCard *card)
{
    GFile *file = response == GTK_RESPONSE_ACCEPT ? gtk_file_chooser_get_file(GTK_FILE_CHOOSER(chooser)) : NULL;
    char *path = file ? g_file_get_path(file) : NULL;
    if (path) {
        GError *error = NULL;
        char *name = g_path_get_basename(path);
        char *message = card->exporting->export(TW_CHART_VIEW(card->chart), path, &error)
                            ? g_strdup_printf("Saved “%s”", name)
                            : g_strdup_printf("Could not save “%s”: %s", name, error->message);
        tell(card, message, error != NULL);
        g_clear_error(&error);
        g_free(message);
        g_free(name);
    }
    g_free(path);
    g_clear_object(&file);
    gtk_native_dialog_destroy(chooser);
    g_clear_object(&card->chooser);
}

static void on_export(GtkButton *button, TwChartCard *card)
{
    const ExportKind *kind = g_object_get_data(G_OBJECT(button), "kind");
    if (card->chooser)
        gtk_native_dialog_destroy(card->chooser);
    g_clear_object(&card->chooser);
    GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(card));
    char *title = g_strdup_printf("Export “%s” as %s", card->tag, kind->label);
    GtkFileChooserNative *chooser = gtk_file_chooser_native_new(
        title, GTK_IS_WINDOW(root) ? GTK_WINDOW(root) : NULL, GTK_FILE_CHOOSER_ACTION_SAVE, "_Save", "_Cancel");
    g_free(title);
    char *base = g_strdelimit(g_strdup(card->tag), "/\\:", '_');
    char *name = g_strconcat(base, ".", kind->extension, NULL);
    gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(chooser), name);
    g_free(name);
    g_free(base);
    GtkFileFilter *filter = gtk_file_filter_new();
    gtk_file_filter_set_name(filter, kind->filter_name);
    gtk_file_filter_add_mime_type(filter, kind->mime);
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(chooser), filter);
    g_object_unref(filter);
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(chooser), TRUE);
    card->chooser = GTK_NATIVE_DIALOG(chooser);
    card->exporting = kind;
    g_signal_connect(chooser, "response", G_CALLBACK(on_chosen), card);
    gtk_native_dialog_show(card->chooser);
}

static GtkWidget *export_buttons(TwChartCard *card)
{
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0);
    gtk_widget_add_css_class(box, "export-buttons");
    gtk_widget_set_halign(box, GTK_ALIGN_END);
    gtk_widget_set_valign(box, GTK_ALIGN_START);
    for (size_t i = 0; i < G_N_ELEMENTS(export_kinds); i++) {
        GtkWidget *button = gtk_button_new_with_label(export_kinds[i].label);
        gtk_widget_add_css_class(button, "flat");
        gtk_widget_add_css_class(button, "export-button");
        gtk_widget_set_tooltip_text(button, export_kinds[i].tooltip);
        g_object_set_data(G_OBJECT(button), "kind", (gpointer)&export_kinds[i]);
        g_signal_connect(button, "clicked", G_CALLBACK(on_export), card);
        gtk_box_append(GTK_BOX(box), button);
    }
    return box;
}

/* The mark: the messages of the series that cannot be read, or hidden. */
static void update_damage(TwChartCard *card)
{
    GString *text = g_string_new(NULL);
    for (guint i = 0; i < card->tag_ids->len; i++) {
        const char *why = tw_dashboard_data_series_error(card->data, g_array_index(card->tag_ids, gint64, i));
        if (why)
            g_string_append_printf(text, "%s⚠ %s", text->len ? "\n" : "", why);
    }
    gtk_label_set_text(GTK_LABEL(card->damage), text->str);
    gtk_widget_set_tooltip_text(card->damage, text->len ? text->str : NULL);
    gtk_widget_set_visible(card->damage, text->len > 0);
    g_string_free(text, TRUE);
}

static void on_series_changed(TwDashboardData *data, gint64 tag_id, TwChartCard *card)
{
    for (guint i = 0; i < card->tag_ids->len; i++)
        if (g_array_index(card->tag_ids, gint64, i) == tag_id) {
            update_damage(card);
            return;
        }
}

/* ---- chart_card.h ------------------------------------------------------------------ */
GtkWidget *tw_chart_card_new(TwDashboardData *data, const char *tag)
{
    TwChartCard *card = g_object_new(TW_TYPE_CHART_CARD, NULL);
    card->tag = g_strdup(tag);
    card->data = g_object_ref(data);
    card->series_handler = g_signal_connect(data, "series-changed", G_CALLBACK(on_series_changed), card);
    card->chart = tw_chart_view_new(data, tag);
    gtk_widget_set_vexpand(card->chart, TRUE);
    GtkWidget *overlay = gtk_overlay_new();
    gtk_overlay_set_child(GTK_OVERLAY(overlay), card->chart);
    card->buttons = export_buttons(card);
    gtk_overlay_add_overlay(GTK_OVERLAY(overlay), card->buttons);
    card->damage = gtk_label_new(NULL);
    gtk_widget_add_css_class(card->damage, "series-damage");
    gtk_label_set_xalign(GTK_LABEL(card->damage), 0);
    gtk_label_set_wrap(GTK_LABEL(card->damage), TRUE);
    gtk_label_set_wrap_mode(GTK_LABEL(card->damage), PANGO_WRAP_WORD_CHAR);
    gtk_label_set_lines(GTK_LABEL(card->damage), 3);
    gtk_label_set_ellipsize(GTK_LABEL(card->damage), PANGO_ELLIPSIZE_END);
    gtk_widget_set_visible(card->damage, FALSE);
    card->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
    gtk_box_append(GTK_BOX(card->box), overlay);
    gtk_box_append(GTK_BOX(card->box), card->damage);
    gtk_widget_set_parent(card->box, GTK_WIDGET(card));
    return GTK_WIDGET(card);
}

TwChartView *tw_chart_card_chart(TwChartCard *card)
{
    g_return_val_if_fail(TW_IS_CHART_CARD(card), NULL);
    return TW_CHART_VIEW(card->chart);
}

const char *tw_chart_card_damage(TwChartCard *card)
{
    g_return_val_if_fail(TW_IS_CHART_CARD(card), NULL);
    return gtk_widget_get_visible(card->damage) ? gtk_label_get_text(GTK_LABEL(card->damage)) : NULL;
}

const char *tw_chart_card_tag(TwChartCard *card)
{
    g_return_val_if_fail(TW_IS_CHART_CARD(card), NULL);
    return card->tag;
}

static gboolean same_series(TwChartCard *card, int n, const gint64 *tag_ids, const tw_rgb *colors,
                            const char *const *labels, const double *time_origins)
{
    if ((int)card->tag_ids->len != n)
        return FALSE;
    for (int i = 0; i < n; i++)
        if (g_array_index(card->tag_ids, gint64, i) != tag_ids[i] ||
            memcmp(&g_array_index(card->colors, tw_rgb, i), &colors[i], sizeof(tw_rgb)) ||
            g_strcmp0(card->labels->pdata[i], labels[i]) ||
            g_array_index(card->origins, double, i) != time_origins[i])
            return FALSE;
    return TRUE;
}

void tw_chart_card_set_series(TwChartCard *card, int n, const gint64 *tag_ids, const tw_rgb *colors,
                              const char *const *labels, const double *time_origins)
{
    g_return_if_fail(TW_IS_CHART_CARD(card));
    if (same_series(card, n, tag_ids, colors, labels, time_origins))
        return;
    g_array_set_size(card->tag_ids, 0);
    g_array_set_size(card->colors, 0);
    g_array_set_size(card->origins, 0);
    g_ptr_array_set_size(card->labels, 0);
    g_array_append_vals(card->tag_ids, tag_ids, n);
    g_array_append_vals(card->colors, colors, n);
    g_array_append_vals(card->origins, time_origins, n);
    for (int i = 0; i < n; i++)
        g_ptr_array_add(card->labels, g_strdup(labels[i]));
    tw_chart_view_set_series(TW_CHART_VIEW(card->chart), n, tag_ids, colors, labels, time_origins);
    update_damage(card);
}

const gint64 *tw_chart_card_tag_ids(TwChartCard *card, int *n)
{
    g_return_val_if_fail(TW_IS_CHART_CARD(card), NULL);
    *n = (int)card->tag_ids->len;
    return (const gint64 *)card->tag_ids->data;
}

/* ---- the widget -------------------------------------------------------------------- */
static void tw_chart_card_dispose(GObject *object)
{
    TwChartCard *card = TW_CHART_CARD(object);
    if (card->chooser)
        gtk_native_dialog_destroy(card->chooser);
    g_clear_object(&card->chooser);
    if (card->data) {
        g_clear_signal_handler(&card->series_handler, card->data);
        g_clear_object(&card->data);
    }
    g_clear_pointer(&card->box, gtk_widget_unparent);
    G_OBJECT_CLASS(tw_chart_card_parent_class)->dispose(object);
}

static void tw_chart_card_finalize(GObject *object)
{
    TwChartCard *card = TW_CHART_CARD(object);
    g_free(card->tag);
    g_array_unref(card->tag_ids);
    g_array_unref(card->colors);
    g_array_unref(card->origins);
    g_ptr_array_unref(card->labels);
    G_OBJECT_CLASS(tw_chart_card_parent_class)->finalize(object);
}

/* As wide and high as its least: the dashboard's grid gives cards their
 * size, and the chart's own wish (its export size) would make one column. */
static void tw_chart_card_measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *min, int *nat,
                                  int *min_baseline, int *nat_baseline)
{
    gtk_widget_measure(TW_CHART_CARD(widget)->box, orientation, for_size, min, nat, min_baseline, nat_baseline);
    *nat = *min;
}

/* The chart's header keeps its text left of the export buttons. */
static void tw_chart_card_size_allocate(GtkWidget *widget, int width, int height, int baseline)
{
    TwChartCard *card = TW_CHART_CARD(widget);
    int buttons = 0;
    gtk_widget_measure(card->buttons, GTK_ORIENTATION_HORIZONTAL, -1, NULL, &buttons, NULL, NULL);
    tw_chart_view_set_header_reserve(TW_CHART_VIEW(card->chart), buttons + 6);
    gtk_widget_allocate(card->box, width, height, baseline, NULL);
}

static void tw_chart_card_class_init(TwChartCardClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = tw_chart_card_dispose;
    G_OBJECT_CLASS(klass)->finalize = tw_chart_card_finalize;
    GTK_WIDGET_CLASS(klass)->measure = tw_chart_card_measure;
    GTK_WIDGET_CLASS(klass)->size_allocate = tw_chart_card_size_allocate;
    gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "chartcard");
}

static void tw_chart_card_init(TwChartCard *card)
{
    card->tag_ids = g_array_new(FALSE, FALSE, sizeof(gint64));
    card->colors = g_array_new(FALSE, FALSE, sizeof(tw_rgb));
    card->origins = g_array_new(FALSE, FALSE, sizeof(double));
    card->labels = g_ptr_array_new_with_free_func(g_free);
}
