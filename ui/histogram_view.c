/* TwHistogramView (histogram_view.h): the widget holds the tag, the mode
 * and the colour; the histograms stay in TwDashboardData (borrowed at each
 * draw) and the drawing is tw_histogram_render / tw_distribution_render
 * into the snapshot's cairo node, which GTK keeps until the next answer.
 * A mapped view watches its tag (data re-reads a watched tag's histograms
 * when it grows). */
#include "histogram_view.h"

struct _TwHistogramView {
    GtkWidget parent_instance;
    TwDashboardData *data;
    gint64 tag_id;
    char *title;
    tw_rgb color;
    TwHistogramViewMode mode;
    gboolean watching;
    int n_drawn;
};

G_DEFINE_FINAL_TYPE(TwHistogramView, tw_histogram_view, GTK_TYPE_WIDGET)

static void request(TwHistogramView *view)
{
    tw_dashboard_data_request_histograms(view->data, view->tag_id, TW_HISTOGRAM_VIEW_RECORDS);
}

static void on_series_changed(TwDashboardData *data, gint64 tag_id, TwHistogramView *view)
{
    if (tag_id == view->tag_id)
        gtk_widget_queue_draw(GTK_WIDGET(view));
}

/* data counts the watches, so views of one tag each hold their own. */
static void watch(TwHistogramView *view, gboolean on)
{
    if (view->watching == on)
        return;
    view->watching = on;
    tw_dashboard_data_watch(view->data, view->tag_id, on);
}

/* Light text on a dark theme: the renderers' dark style. */
static gboolean is_dark(GtkWidget *widget)
{
    GdkRGBA fg;
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
    G_GNUC_END_IGNORE_DEPRECATIONS
    return 0.299 * fg.red + 0.587 * fg.green + 0.114 * fg.blue > 0.5;
}

static void tw_histogram_view_snapshot(GtkWidget *widget, GtkSnapshot *snapshot)
{
    TwHistogramView *view = TW_HISTOGRAM_VIEW(widget);
    int width = gtk_widget_get_width(widget), height = gtk_widget_get_height(widget);
    if (width <= 0 || height <= 0)
        return;
    int n = 0;
    const tw_histogram *histograms = tw_dashboard_data_histograms(view->data, view->tag_id, &n);
    tw_histogram_chart chart = {
        .mode = view->mode == TW_HISTOGRAM_VIEW_OVERLAY ? TW_HISTOGRAM_OVERLAY : TW_HISTOGRAM_OFFSET,
        .n = histograms ? n : 0,
        .histograms = histograms,
        .color = view->color,
        .title = view->title,
        .dark = is_dark(widget),
        .damage = tw_dashboard_data_series_error(view->data, view->tag_id),
        .loading = !tw_dashboard_data_histograms_read(view->data, view->tag_id),
    };
    cairo_t *cr = gtk_snapshot_append_cairo(snapshot, &GRAPHENE_RECT_INIT(0, 0, width, height));
    if (view->mode == TW_HISTOGRAM_VIEW_DISTRIBUTION)
        tw_distribution_render(cr, width, height, &chart);
    else
        tw_histogram_render(cr, width, height, &chart);
    cairo_destroy(cr);
    view->n_drawn = chart.n;
}

static void tw_histogram_view_map(GtkWidget *widget)
{
    TwHistogramView *view = TW_HISTOGRAM_VIEW(widget);
    GTK_WIDGET_CLASS(tw_histogram_view_parent_class)->map(widget);
    request(view);
    watch(view, TRUE);
}

static void tw_histogram_view_unmap(GtkWidget *widget)
{
    GTK_WIDGET_CLASS(tw_histogram_view_parent_class)->unmap(widget);
    watch(TW_HISTOGRAM_VIEW(widget), FALSE);
}

static void tw_histogram_view_dispose(GObject *object)
{
    TwHistogramView *view = TW_HISTOGRAM_VIEW(object);
    if (view->data) {
        watch(view, FALSE);
        g_signal_handlers_disconnect_by_data(view->data, view);
    }
    g_clear_object(&view->data);
    G_OBJECT_CLASS(tw_histogram_view_parent_class)->dispose(object);
}

static void tw_histogram_view_finalize(GObject *object)
{
    g_free(TW_HISTOGRAM_VIEW(object)->title);
    G_OBJECT_CLASS(tw_histogram_view_parent_class)->finalize(object);
}

static void tw_histogram_view_class_init(TwHistogramViewClass *klass)
{
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    G_OBJECT_CLASS(klass)->dispose = tw_histogram_view_dispose;
    G_OBJECT_CLASS(klass)->finalize = tw_histogram_view_finalize;
    widget_class->snapshot = tw_histogram_view_snapshot;
    widget_class->map = tw_histogram_view_map;
    widget_class->unmap = tw_histogram_view_unmap;
    gtk_widget_class_set_css_name(widget_class, "histogramview");
}

static void tw_histogram_view_init(TwHistogramView *view)
{
    view->n_drawn = -1;
    gtk_widget_set_hexpand(GTK_WIDGET(view), TRUE);
    gtk_widget_set_vexpand(GTK_WIDGET(view), TRUE);
}

/* ---- histogram_view.h -------------------------------------------------------------- */
GtkWidget *tw_histogram_view_new(TwDashboardData *data, gint64 tag_id, const char *title, tw_rgb color,
                                 TwHistogramViewMode mode)
{
    TwHistogramView *view = g_object_new(TW_TYPE_HISTOGRAM_VIEW, NULL);
    view->data = g_object_ref(data);
    view->tag_id = tag_id;
    view->title = g_strdup(title);
    view->color = color;
    view->mode = mode;
    g_signal_connect(data, "series-changed", G_CALLBACK(on_series_changed), view);
    return GTK_WIDGET(view);
}

void tw_histogram_view_set_mode(TwHistogramView *view, TwHistogramViewMode mode)
{
    g_return_if_fail(TW_IS_HISTOGRAM_VIEW(view));
    if (view->mode == mode)
        return;
    view->mode = mode;
    gtk_widget_queue_draw(GTK_WIDGET(view));
}

gint64 tw_histogram_view_tag_id(TwHistogramView *view)
{
    g_return_val_if_fail(TW_IS_HISTOGRAM_VIEW(view), -1);
    return view->tag_id;
}

int tw_histogram_view_n_drawn(TwHistogramView *view)
{
    g_return_val_if_fail(TW_IS_HISTOGRAM_VIEW(view), -1);
    return view->n_drawn;
}
