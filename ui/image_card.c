/* TwImageCard (image_card.h). */
#include "image_card.h"

#include <math.h>

#include <tw/error.h>

struct _TwImageCard {
    GtkWidget parent_instance;
    GtkWidget *box, *info, *scale, *area, *scroll, *zoom_label, *fit;
    char *db_path, *run_name, *tag;
    tw_image_info *images;
    int n, selected;
    int zoom; /* 0: fit */
    GdkPixbuf *pixbuf;
    char *error;
    gint64 loaded_id; /* the image pixbuf or error is of; -1: none */
    GCancellable *loading;
    double drawn_scale;
    gboolean syncing; /* setting the slider from code */
};

G_DEFINE_FINAL_TYPE(TwImageCard, tw_image_card, GTK_TYPE_WIDGET)

/* ---- reading and decoding --------------------------------------------------------- */
typedef struct {
    char *db_path;
    gint64 id;
} LoadJob;

static void load_job_free(gpointer data)
{
    LoadJob *job = data;
    g_free(job->db_path);
    g_free(job);
}

static void load_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
    LoadJob *job = data;
    tw_run_store *store = tw_run_store_open(job->db_path, TW_STORE_READ_ONLY);
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (!store || tw_run_store_read_image(store, job->id, &bytes, &size)) {
        g_task_return_new_error(task, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s", tw_last_error());
        tw_error_clear();
        tw_run_store_close(store);
        return;
    }
    tw_run_store_close(store);
    GdkPixbufLoader *loader = gdk_pixbuf_loader_new();
    GError *error = NULL;
    if (gdk_pixbuf_loader_write(loader, bytes, size, &error) && gdk_pixbuf_loader_close(loader, &error)) {
        GdkPixbuf *pixbuf = gdk_pixbuf_loader_get_pixbuf(loader);
        if (pixbuf)
            g_task_return_pointer(task, g_object_ref(pixbuf), g_object_unref);
        else
            g_task_return_new_error(task, G_FILE_ERROR, G_FILE_ERROR_FAILED, "no image in the data");
    } else {
        gdk_pixbuf_loader_close(loader, NULL); /* after a failed write: quiet */
        g_task_return_error(task, error);
    }
    g_object_unref(loader);
    free(bytes);
}

static void update_info(TwImageCard *self);

static void load_done(GObject *source, GAsyncResult *result, gpointer data)
{
    GError *error = NULL;
    GdkPixbuf *pixbuf = g_task_propagate_pointer(G_TASK(result), &error);
    if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        g_error_free(error);
        return;
    }
    TwImageCard *self = TW_IMAGE_CARD(source);
    LoadJob *job = g_task_get_task_data(G_TASK(result));
    g_clear_object(&self->loading);
    g_clear_object(&self->pixbuf);
    g_clear_pointer(&self->error, g_free);
    self->loaded_id = job->id;
    self->pixbuf = pixbuf;
    if (error) {
        const tw_image_info *im = self->selected >= 0 ? &self->images[self->selected] : NULL;
        self->error = g_strdup_printf("Cannot show the image of run “%s”, tag “%s”, step %" G_GINT64_FORMAT ": %s",
                                      self->run_name, self->tag ? self->tag : "", im ? im->step : 0, error->message);
        g_error_free(error);
    }
    update_info(self);
    gtk_widget_queue_resize(self->area);
    gtk_widget_queue_draw(self->area);
}

static void load_selected(TwImageCard *self)
{
    if (self->selected < 0 || self->images[self->selected].id == self->loaded_id)
        return;
    if (self->loading)
        g_cancellable_cancel(self->loading);
    g_clear_object(&self->loading);
    self->loading = g_cancellable_new();
    LoadJob *job = g_new0(LoadJob, 1);
    job->db_path = g_strdup(self->db_path);
    job->id = self->images[self->selected].id;
    GTask *task = g_task_new(self, self->loading, load_done, NULL);
    g_task_set_task_data(task, job, load_job_free);
    g_task_run_in_thread(task, load_thread);
    g_object_unref(task);
}

/* ---- drawing --------------------------------------------------------------------------- */
/* Fit: the largest whole factor showing the whole image; below 1 (a large
 * image in a small card) a smooth reduction. */
static double fit_scale(TwImageCard *self, int width, int height)
{
    int w = gdk_pixbuf_get_width(self->pixbuf), h = gdk_pixbuf_get_height(self->pixbuf);
    double s = MIN((double)width / w, (double)height / h);
    return s >= 1 ? floor(s) : s;
}

static void draw(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
    TwImageCard *self = data;
    if (!self->pixbuf)
        return;
    int w = gdk_pixbuf_get_width(self->pixbuf), h = gdk_pixbuf_get_height(self->pixbuf);
    double s = self->zoom ? self->zoom : fit_scale(self, width, height);
    double x = floor((width - w * s) / 2), y = floor((height - h * s) / 2);
    cairo_save(cr);
    cairo_translate(cr, MAX(x, 0), MAX(y, 0));
    cairo_scale(cr, s, s);
    gdk_cairo_set_source_pixbuf(cr, self->pixbuf, 0, 0);
    /* Whole factors: each image pixel an exact square of screen pixels. */
    cairo_pattern_set_filter(cairo_get_source(cr), s >= 1 && s == floor(s) ? CAIRO_FILTER_NEAREST : CAIRO_FILTER_GOOD);
    cairo_rectangle(cr, 0, 0, w, h);
    cairo_fill(cr);
    cairo_restore(cr);
    self->drawn_scale = s;
}

/* A zoomed image is as large as it draws (the scroll shows the rest); fit
 * takes what the card gives. */
static void update_size(TwImageCard *self)
{
    int w = self->pixbuf && self->zoom ? gdk_pixbuf_get_width(self->pixbuf) * self->zoom : 0;
    int h = self->pixbuf && self->zoom ? gdk_pixbuf_get_height(self->pixbuf) * self->zoom : 0;
    gtk_drawing_area_set_content_width(GTK_DRAWING_AREA(self->area), w);
    gtk_drawing_area_set_content_height(GTK_DRAWING_AREA(self->area), h);
    char *label = self->zoom ? g_strdup_printf("%d×", self->zoom) : g_strdup("fit");
    gtk_label_set_text(GTK_LABEL(self->zoom_label), label);
    g_free(label);
}

static void update_info(TwImageCard *self)
{
    update_size(self);
    if (self->error) {
        gtk_label_set_text(GTK_LABEL(self->info), self->error);
        return;
    }
    if (self->selected < 0) {
        gtk_label_set_text(GTK_LABEL(self->info), "No images");
        return;
    }
    const tw_image_info *im = &self->images[self->selected];
    int samples = 0, sample_of = 0;
    for (int i = 0; i < self->n; i++)
        if (self->images[i].step == im->step) {
            samples++;
            if (i <= self->selected)
                sample_of++;
        }
    char *text = samples > 1 ? g_strdup_printf("Step %" G_GINT64_FORMAT " · image %d of %d · %d×%d %s", im->step,
                                               sample_of, samples, im->width, im->height, im->format)
                             : g_strdup_printf("Step %" G_GINT64_FORMAT " · %d×%d %s", im->step, im->width, im->height,
                                               im->format);
    gtk_label_set_text(GTK_LABEL(self->info), text);
    g_free(text);
}

/* ---- controls ------------------------------------------------------------------------ */
static void on_slider(GtkRange *range, TwImageCard *self)
{
    if (self->syncing)
        return;
    int index = (int)lround(gtk_range_get_value(range));
    if (index != self->selected)
        tw_image_card_select(self, index);
}

static void on_zoom(GtkButton *button, TwImageCard *self)
{
    int step = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(button), "zoom-step"));
    int zoom = self->zoom;
    if (step == 0)
        zoom = 0;
    else if (step == 1 && zoom == 0 && self->pixbuf) /* from fit: the next factor up from the one drawn */
        zoom = MAX(1, (int)floor(self->drawn_scale) * 2);
    else if (step == 1)
        zoom = MAX(1, zoom * 2);
    else if (step == -1)
        zoom = zoom == 0 ? MAX(1, (int)floor(self->drawn_scale) / 2) : MAX(1, zoom / 2);
    else
        zoom = 1;
    tw_image_card_set_zoom(self, zoom);
}

static GtkWidget *zoom_button(TwImageCard *self, const char *label, const char *tip, int step)
{
    GtkWidget *b = gtk_button_new_with_label(label);
    gtk_widget_set_tooltip_text(b, tip);
    g_object_set_data(G_OBJECT(b), "zoom-step", GINT_TO_POINTER(step));
    g_signal_connect(b, "clicked", G_CALLBACK(on_zoom), self);
    return b;
}

/* ---- the widget ----------------------------------------------------------------------- */
static void tw_image_card_dispose(GObject *object)
{
    TwImageCard *self = TW_IMAGE_CARD(object);
    if (self->loading)
        g_cancellable_cancel(self->loading);
    g_clear_object(&self->loading);
    g_clear_object(&self->pixbuf);
    g_clear_pointer(&self->box, gtk_widget_unparent);
    G_OBJECT_CLASS(tw_image_card_parent_class)->dispose(object);
}

static void tw_image_card_finalize(GObject *object)
{
    TwImageCard *self = TW_IMAGE_CARD(object);
    g_free(self->db_path);
    g_free(self->run_name);
    g_free(self->tag);
    g_free(self->images);
    g_free(self->error);
    G_OBJECT_CLASS(tw_image_card_parent_class)->finalize(object);
}

static void tw_image_card_class_init(TwImageCardClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = tw_image_card_dispose;
    G_OBJECT_CLASS(klass)->finalize = tw_image_card_finalize;
    gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
    gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "imagecard");
}

static void tw_image_card_init(TwImageCard *self)
{
    self->selected = -1;
    self->loaded_id = -1;
}

GtkWidget *tw_image_card_new(const char *db_path, const char *run_name, tw_rgb color)
{
    TwImageCard *self = g_object_new(TW_TYPE_IMAGE_CARD, NULL);
    self->db_path = g_strdup(db_path);
    self->run_name = g_strdup(run_name);
    self->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    gtk_widget_add_css_class(self->box, "card");
    gtk_widget_add_css_class(self->box, "image-card");
    GtkWidget *title = gtk_label_new(NULL);
    char *markup = g_markup_printf_escaped("<span foreground=\"#%02x%02x%02x\">●</span> %s", (int)(color.r * 255),
                                           (int)(color.g * 255), (int)(color.b * 255), run_name);
    gtk_label_set_markup(GTK_LABEL(title), markup);
    g_free(markup);
    gtk_label_set_xalign(GTK_LABEL(title), 0);
    gtk_label_set_ellipsize(GTK_LABEL(title), PANGO_ELLIPSIZE_MIDDLE);
    gtk_widget_add_css_class(title, "card-title");
    gtk_box_append(GTK_BOX(self->box), title);
    self->info = gtk_label_new("Reading…");
    gtk_label_set_xalign(GTK_LABEL(self->info), 0);
    gtk_label_set_ellipsize(GTK_LABEL(self->info), PANGO_ELLIPSIZE_END);
    gtk_widget_add_css_class(self->info, "dim-label");
    gtk_box_append(GTK_BOX(self->box), self->info);
    self->scale = gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, 0, 1, 1);
    gtk_scale_set_draw_value(GTK_SCALE(self->scale), FALSE);
    gtk_widget_set_tooltip_text(self->scale, "Step (and image of the step's batch)");
    g_signal_connect(self->scale, "value-changed", G_CALLBACK(on_slider), self);
    gtk_box_append(GTK_BOX(self->box), self->scale);
    GtkWidget *bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 4);
    self->fit = zoom_button(self, "Fit", "The largest whole zoom that fits", 0);
    gtk_box_append(GTK_BOX(bar), self->fit);
    gtk_box_append(GTK_BOX(bar), zoom_button(self, "1:1", "One image pixel per screen pixel", 2));
    gtk_box_append(GTK_BOX(bar), zoom_button(self, "−", "Zoom out (half)", -1));
    gtk_box_append(GTK_BOX(bar), zoom_button(self, "+", "Zoom in (double)", 1));
    self->zoom_label = gtk_label_new("fit");
    gtk_widget_add_css_class(self->zoom_label, "dim-label");
    gtk_box_append(GTK_BOX(bar), self->zoom_label);
    gtk_box_append(GTK_BOX(self->box), bar);
    self->area = gtk_drawing_area_new();
    gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(self->area), draw, self, NULL);
    gtk_widget_set_hexpand(self->area, TRUE);
    gtk_widget_set_vexpand(self->area, TRUE);
    self->scroll = gtk_scrolled_window_new();
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(self->scroll), self->area);
    gtk_widget_set_vexpand(self->scroll, TRUE);
    gtk_box_append(GTK_BOX(self->box), self->scroll);
    gtk_widget_set_parent(self->box, GTK_WIDGET(self));
    return GTK_WIDGET(self);
}

void tw_image_card_set_images(TwImageCard *self, const TwImageSeries *series)
{
    g_return_if_fail(TW_IS_IMAGE_CARD(self) && series);
    gint64 shown = self->selected >= 0 ? self->images[self->selected].id : -1;
    gboolean at_end = self->selected < 0 || self->selected == self->n - 1;
    g_free(self->images);
    g_free(self->tag);
    self->tag = g_strdup(series->tag);
    self->n = series->n;
    self->images = g_memdup2(series->images, sizeof *series->images * (gsize)MAX(series->n, 1));
    for (int i = 0; i < self->n; i++)
        self->images[i].tag = self->tag;
    int keep = -1;
    for (int i = 0; !at_end && i < self->n; i++)
        if (self->images[i].id == shown)
            keep = i;
    self->syncing = TRUE;
    gtk_range_set_range(GTK_RANGE(self->scale), 0, MAX(self->n - 1, 1));
    self->syncing = FALSE;
    gtk_widget_set_visible(self->scale, self->n > 1);
    tw_image_card_select(self, keep >= 0 ? keep : self->n - 1);
}

int tw_image_card_n_images(TwImageCard *self)
{
    return self->n;
}

void tw_image_card_select(TwImageCard *self, int index)
{
    g_return_if_fail(TW_IS_IMAGE_CARD(self));
    self->selected = self->n ? CLAMP(index, 0, self->n - 1) : -1;
    self->syncing = TRUE;
    gtk_range_set_value(GTK_RANGE(self->scale), MAX(self->selected, 0));
    self->syncing = FALSE;
    if (self->selected >= 0 && self->images[self->selected].id != self->loaded_id) {
        g_clear_pointer(&self->error, g_free);
        load_selected(self);
    }
    update_info(self);
}

int tw_image_card_selected(TwImageCard *self)
{
    return self->selected;
}

void tw_image_card_set_zoom(TwImageCard *self, int zoom)
{
    g_return_if_fail(TW_IS_IMAGE_CARD(self));
    self->zoom = CLAMP(zoom, 0, TW_IMAGE_CARD_MAX_ZOOM);
    update_size(self);
    gtk_widget_queue_draw(self->area);
}

GdkPixbuf *tw_image_card_pixbuf(TwImageCard *self)
{
    return self->selected >= 0 && self->loaded_id == self->images[self->selected].id ? self->pixbuf : NULL;
}

gboolean tw_image_card_loaded(TwImageCard *self)
{
    return self->selected >= 0 && self->loaded_id == self->images[self->selected].id;
}

const char *tw_image_card_error(TwImageCard *self)
{
    return tw_image_card_loaded(self) ? self->error : NULL;
}

double tw_image_card_drawn_scale(TwImageCard *self)
{
    return self->drawn_scale;
}
