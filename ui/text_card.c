/* TwTextCard (text_card.h). */
#include "text_card.h"

#include <string.h>

#include <tw/error.h>
#include <tw/run_store.h>

#include "markdown.h"

struct _TwTextCard {
    GtkWidget parent_instance;
    GtkWidget *box, *records, *note;
    char *db_path;
    gint64 tag_id;
    tw_series_cursor cursor;
    GCancellable *cancellable;
    gboolean loading, loaded;
    int n_read; /* records read so far */
};

G_DEFINE_FINAL_TYPE(TwTextCard, tw_text_card, GTK_TYPE_WIDGET)

/* ---- markdown blocks as widgets ------------------------------------------------ */
static GtkWidget *markup_label(const char *markup, const char *css_class)
{
    GtkWidget *label = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(label), markup);
    gtk_label_set_wrap(GTK_LABEL(label), TRUE);
    gtk_label_set_wrap_mode(GTK_LABEL(label), PANGO_WRAP_WORD_CHAR);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_label_set_selectable(GTK_LABEL(label), TRUE);
    if (css_class)
        gtk_widget_add_css_class(label, css_class);
    return label;
}

static GtkWidget *table_widget(const TwMdBlock *b)
{
    GtkWidget *grid = gtk_grid_new();
    gtk_widget_add_css_class(grid, "text-table");
    gtk_widget_set_halign(grid, GTK_ALIGN_START);
    for (int r = 0; r < b->nrows; r++)
        for (int c = 0; c < b->ncols; c++) {
            const char *cell = b->cells[r * b->ncols + c];
            char *markup = r == 0 ? g_strconcat("<b>", cell, "</b>", NULL) : g_strdup(cell);
            GtkWidget *label = markup_label(markup, r == 0 ? "text-table-header" : "text-table-cell");
            gtk_label_set_max_width_chars(GTK_LABEL(label), 40);
            gtk_grid_attach(GTK_GRID(grid), label, c, r, 1, 1);
            g_free(markup);
        }
    return grid;
}

void tw_text_card_render(GtkBox *box, const char *text)
{
    GPtrArray *blocks = tw_markdown_parse(text, strlen(text));
    for (guint i = 0; i < blocks->len; i++) {
        const TwMdBlock *b = blocks->pdata[i];
        GtkWidget *w = NULL;
        switch (b->kind) {
        case TW_MD_PARAGRAPH: w = markup_label(b->text, "text-paragraph"); break;
        case TW_MD_HEADING: {
            static const char *const sizes[] = {"xx-large", "x-large", "large", "medium", "medium", "small"};
            char *markup = g_strdup_printf("<span size=\"%s\" weight=\"bold\">%s</span>", sizes[b->level - 1], b->text);
            w = markup_label(markup, "text-heading");
            g_free(markup);
            break;
        }
        case TW_MD_CODE: {
            w = gtk_label_new(b->text);
            gtk_label_set_xalign(GTK_LABEL(w), 0);
            gtk_label_set_selectable(GTK_LABEL(w), TRUE);
            gtk_widget_add_css_class(w, "text-code");
            gtk_widget_add_css_class(w, "monospace");
            break;
        }
        case TW_MD_LIST_ITEM: {
            char *markup = g_markup_printf_escaped("%s ", b->marker);
            char *full = g_strconcat(markup, b->text, NULL);
            w = markup_label(full, "text-list-item");
            gtk_widget_set_margin_start(w, 12 + 16 * b->level);
            g_free(full);
            g_free(markup);
            break;
        }
        case TW_MD_QUOTE: w = markup_label(b->text, "text-quote"); break;
        case TW_MD_RULE: w = gtk_separator_new(GTK_ORIENTATION_HORIZONTAL); break;
        case TW_MD_TABLE: w = table_widget(b); break;
        }
        gtk_box_append(box, w);
    }
    g_ptr_array_free(blocks, TRUE);
}

/* ---- reading ------------------------------------------------------------------------- */
typedef struct {
    char *db_path;
    gint64 tag_id;
    tw_series_cursor cursor;
    tw_text_record *records;
    int n;
} ReadJob;

static void read_job_free(gpointer data)
{
    ReadJob *job = data;
    tw_text_record_free(job->records, job->n);
    g_free(job->db_path);
    g_free(job);
}

static void read_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
    ReadJob *job = data;
    tw_run_store *store = tw_run_store_open(job->db_path, TW_STORE_READ_ONLY);
    if (!store || tw_run_store_read_texts(store, job->tag_id, &job->cursor, &job->records, &job->n)) {
        g_task_return_new_error(task, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s", tw_last_error());
        tw_error_clear();
    } else {
        g_task_return_boolean(task, TRUE);
    }
    tw_run_store_close(store);
}

static void show_records(TwTextCard *self, const tw_text_record *records, int n)
{
    /* Only the newest TW_TEXT_CARD_RECORDS stay on the card. */
    int from = MAX(0, n - TW_TEXT_CARD_RECORDS);
    for (int i = from; i < n; i++) {
        GtkWidget *record = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
        gtk_widget_add_css_class(record, "text-record");
        char *step = g_strdup_printf("Step %" G_GINT64_FORMAT, records[i].step);
        GtkWidget *label = gtk_label_new(step);
        g_free(step);
        gtk_label_set_xalign(GTK_LABEL(label), 0);
        gtk_widget_add_css_class(label, "text-step");
        gtk_box_append(GTK_BOX(record), label);
        tw_text_card_render(GTK_BOX(record), records[i].text);
        gtk_box_append(GTK_BOX(self->records), record);
    }
    int shown = 0;
    for (GtkWidget *c = gtk_widget_get_first_child(self->records); c; c = gtk_widget_get_next_sibling(c))
        shown++;
    while (shown > TW_TEXT_CARD_RECORDS) {
        gtk_box_remove(GTK_BOX(self->records), gtk_widget_get_first_child(self->records));
        shown--;
    }
    self->n_read += n;
    if (self->n_read > shown) {
        char *note = g_strdup_printf("The newest %d of %d records.", shown, self->n_read);
        gtk_label_set_text(GTK_LABEL(self->note), note);
        g_free(note);
    }
    gtk_widget_set_visible(self->note, self->n_read > shown);
}

static void read_done(GObject *source, GAsyncResult *result, gpointer data)
{
    GError *error = NULL;
    gboolean ok = g_task_propagate_boolean(G_TASK(result), &error);
    if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        g_error_free(error);
        return;
    }
    TwTextCard *self = TW_TEXT_CARD(source);
    ReadJob *job = g_task_get_task_data(G_TASK(result));
    self->loading = FALSE;
    self->loaded = TRUE;
    if (!ok) {
        gtk_label_set_text(GTK_LABEL(self->note), error->message);
        gtk_widget_set_visible(self->note, TRUE);
        g_error_free(error);
        return;
    }
    self->cursor = job->cursor;
    if (job->n)
        show_records(self, job->records, job->n);
}

void tw_text_card_refresh(TwTextCard *self)
{
    g_return_if_fail(TW_IS_TEXT_CARD(self));
    if (self->loading)
        return;
    self->loading = TRUE;
    ReadJob *job = g_new0(ReadJob, 1);
    job->db_path = g_strdup(self->db_path);
    job->tag_id = self->tag_id;
    job->cursor = self->cursor;
    GTask *task = g_task_new(self, self->cancellable, read_done, NULL);
    g_task_set_task_data(task, job, read_job_free);
    g_task_run_in_thread(task, read_thread);
    g_object_unref(task);
}

gboolean tw_text_card_loaded(TwTextCard *self)
{
    g_return_val_if_fail(TW_IS_TEXT_CARD(self), FALSE);
    return self->loaded;
}

int tw_text_card_n_records(TwTextCard *self)
{
    int n = 0;
    for (GtkWidget *c = gtk_widget_get_first_child(self->records); c; c = gtk_widget_get_next_sibling(c))
        n++;
    return n;
}

/* ---- the widget --------------------------------------------------------------------- */
static void tw_text_card_dispose(GObject *object)
{
    TwTextCard *self = TW_TEXT_CARD(object);
    g_cancellable_cancel(self->cancellable);
    g_clear_object(&self->cancellable);
    g_clear_pointer(&self->box, gtk_widget_unparent);
    G_OBJECT_CLASS(tw_text_card_parent_class)->dispose(object);
}

static void tw_text_card_finalize(GObject *object)
{
    g_free(TW_TEXT_CARD(object)->db_path);
    G_OBJECT_CLASS(tw_text_card_parent_class)->finalize(object);
}

static void tw_text_card_class_init(TwTextCardClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = tw_text_card_dispose;
    G_OBJECT_CLASS(klass)->finalize = tw_text_card_finalize;
    gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
    gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "textcard");
}

static void tw_text_card_init(TwTextCard *self)
{
    self->cancellable = g_cancellable_new();
}

GtkWidget *tw_text_card_new(const char *db_path, gint64 tag_id, const char *title, tw_rgb color)
{
    TwTextCard *self = g_object_new(TW_TYPE_TEXT_CARD, NULL);
    self->db_path = g_strdup(db_path);
    self->tag_id = tag_id;
    self->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    gtk_widget_add_css_class(self->box, "card");
    gtk_widget_add_css_class(self->box, "text-card");
    char *markup = g_markup_printf_escaped("<span foreground=\"#%02x%02x%02x\">●</span> %s",
                                           (int)(color.r * 255), (int)(color.g * 255), (int)(color.b * 255), title);
    GtkWidget *heading = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(heading), markup);
    g_free(markup);
    gtk_label_set_xalign(GTK_LABEL(heading), 0);
    gtk_label_set_ellipsize(GTK_LABEL(heading), PANGO_ELLIPSIZE_MIDDLE);
    gtk_widget_add_css_class(heading, "card-title");
    gtk_box_append(GTK_BOX(self->box), heading);
    self->note = gtk_label_new(NULL);
    gtk_label_set_xalign(GTK_LABEL(self->note), 0);
    gtk_label_set_wrap(GTK_LABEL(self->note), TRUE);
    gtk_widget_add_css_class(self->note, "dim-label");
    gtk_widget_set_visible(self->note, FALSE);
    gtk_box_append(GTK_BOX(self->box), self->note);
    self->records = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
    GtkWidget *scroll = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroll), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroll), self->records);
    gtk_widget_set_vexpand(scroll, TRUE);
    gtk_box_append(GTK_BOX(self->box), scroll);
    gtk_widget_set_parent(self->box, GTK_WIDGET(self));
    tw_text_card_refresh(self);
    return GTK_WIDGET(self);
}
