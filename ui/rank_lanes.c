/* The rank lanes of data-parallel runs (see rank_lanes.h). */
#include "rank_lanes.h"

#include <math.h>
#include <stdio.h>

#define LANE_SAMPLES 64
#define LANE_HEIGHT 22
#define LABEL_WIDTH 340
#define PAD 8

typedef struct {
    char *run; /* the run's name */
    int rank;
    gint64 tag[2];   /* step_ms, allreduce_ms */
    double value[2]; /* their means; NaN until read */
} lane;

struct _TwRankLanes {
    GtkWidget parent_instance;
    GtkWidget *title, *area;
    TwDashboardData *data;
    gulong series_handler;
    GArray *lanes; /* of lane */
};

G_DEFINE_FINAL_TYPE(TwRankLanes, tw_rank_lanes, GTK_TYPE_WIDGET)

static void clear_lanes(TwRankLanes *self)
{
    for (guint i = 0; i < self->lanes->len; i++) {
        lane *l = &g_array_index(self->lanes, lane, i);
        for (int k = 0; k < 2 && self->data; k++)
            tw_dashboard_data_watch(self->data, l->tag[k], FALSE);
        g_free(l->run);
    }
    g_array_set_size(self->lanes, 0);
}

/* The mean of a view's columns' last points, or NaN while none is read. */
static double view_mean(const TwSeriesView *v)
{
    double sum = 0;
    int n = 0;
    for (int c = 0; v && c < v->ncolumns; c++)
        if (v->columns[c].count > 0 && isfinite(v->columns[c].last.value)) {
            sum += v->columns[c].last.value;
            n++;
        }
    for (int64_t p = 0; v && v->ncolumns == 0 && p < v->npoints; p++)
        if (isfinite(v->points[p].value)) {
            sum += v->points[p].value;
            n++;
        }
    return n ? sum / n : NAN;
}

/* A watched tag answers first with its extent (no columns): then ask for
 * the whole range in LANE_SAMPLES columns. */
static void on_series_changed(TwDashboardData *data, gint64 tag_id, TwRankLanes *self)
{
    for (guint i = 0; i < self->lanes->len; i++) {
        lane *l = &g_array_index(self->lanes, lane, i);
        for (int k = 0; k < 2; k++) {
            if (l->tag[k] != tag_id)
                continue;
            const TwSeriesView *v = tw_dashboard_data_series_view(data, tag_id);
            if (v && v->ncolumns == 0 && v->count > 0)
                tw_dashboard_data_request_view(data, tag_id, TW_AXIS_STEP, v->first_x, v->last_x, LANE_SAMPLES);
            else if (v)
                l->value[k] = view_mean(v);
        }
    }
    gtk_widget_queue_draw(self->area);
}

static int tag_index(TwDashboardData *data, const char *name)
{
    for (int t = 0; t < tw_dashboard_data_n_tag_names(data); t++)
        if (!g_strcmp0(tw_dashboard_data_tag_name(data, t), name))
            return t;
    return -1;
}

static void add_run_lanes(TwRankLanes *self, int run_index)
{
    TwDashboardData *data = self->data;
    for (int rank = 0;; rank++) {
        char step[64], wait[64];
        g_snprintf(step, sizeof step, "dist/rank_%d/step_ms", rank);
        g_snprintf(wait, sizeof wait, "dist/rank_%d/allreduce_ms", rank);
        int ts = tag_index(data, step), tw = tag_index(data, wait);
        gint64 ids[2] = {ts >= 0 ? tw_dashboard_data_tag_id(data, ts, run_index) : -1,
                         tw >= 0 ? tw_dashboard_data_tag_id(data, tw, run_index) : -1};
        if (ids[0] < 0 || ids[1] < 0)
            return;
        lane l = {.run = g_strdup(tw_dashboard_data_run(data, run_index)->name), .rank = rank,
                  .tag = {ids[0], ids[1]}, .value = {NAN, NAN}};
        g_array_append_val(self->lanes, l);
        for (int k = 0; k < 2; k++)
            tw_dashboard_data_watch(data, ids[k], TRUE);
    }
}

void tw_rank_lanes_set_runs(TwRankLanes *self, TwDashboardData *data, int n, const gint64 *run_ids)
{
    clear_lanes(self);
    if (self->data != data) {
        if (self->data) {
            g_signal_handler_disconnect(self->data, self->series_handler);
            g_object_unref(self->data);
        }
        self->data = data ? g_object_ref(data) : NULL;
        self->series_handler =
            data ? g_signal_connect(data, "series-changed", G_CALLBACK(on_series_changed), self) : 0;
    }
    for (int r = 0; data && r < tw_dashboard_data_n_runs(data); r++)
        for (int i = 0; i < n; i++)
            if (tw_dashboard_data_run(data, r)->id == run_ids[i])
                add_run_lanes(self, r);
    /* Values already read (a watch of a tag watched before answers no more). */
    for (guint i = 0; i < self->lanes->len; i++)
        for (int k = 0; k < 2; k++) {
            lane *l = &g_array_index(self->lanes, lane, i);
            const TwSeriesView *v = tw_dashboard_data_series_view(data, l->tag[k]);
            if (v && v->ncolumns > 0)
                l->value[k] = view_mean(v);
        }
    gtk_widget_set_visible(GTK_WIDGET(self), self->lanes->len > 0);
    gtk_widget_set_size_request(self->area, -1, (int)self->lanes->len * LANE_HEIGHT + 2 * PAD);
    gtk_widget_queue_draw(self->area);
}

int tw_rank_lanes_n_lanes(TwRankLanes *self)
{
    return (int)self->lanes->len;
}

char *tw_rank_lanes_lane_text(TwRankLanes *self, int i)
{
    if (i < 0 || i >= (int)self->lanes->len)
        return NULL;
    const lane *l = &g_array_index(self->lanes, lane, i);
    if (isnan(l->value[0]) || isnan(l->value[1]))
        return g_strdup_printf("%s rank %d: reading", l->run, l->rank);
    return g_strdup_printf("%s rank %d: step %.3g ms, allreduce %.3g ms", l->run, l->rank, l->value[0], l->value[1]);
}

/* Each lane: its label, then the step as a bar on the slowest step's
 * scale, the compute part solid and the allreduce wait lighter. */
static void draw(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer user_data)
{
    (void)area;
    (void)height;
    TwRankLanes *self = user_data;
    double longest = 0;
    for (guint i = 0; i < self->lanes->len; i++) {
        const lane *l = &g_array_index(self->lanes, lane, i);
        if (isfinite(l->value[0]) && l->value[0] > longest)
            longest = l->value[0];
    }
    GdkRGBA fg;
    gtk_style_context_get_color(gtk_widget_get_style_context(GTK_WIDGET(self)), &fg);
    double bar_width = width - LABEL_WIDTH - 2 * PAD;
    for (guint i = 0; i < self->lanes->len; i++) {
        const lane *l = &g_array_index(self->lanes, lane, i);
        double y = PAD + i * LANE_HEIGHT;
        char *text = tw_rank_lanes_lane_text(self, (int)i);
        cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, fg.alpha);
        cairo_move_to(cr, PAD, y + LANE_HEIGHT * 0.7);
        cairo_set_font_size(cr, 11);
        cairo_show_text(cr, text);
        g_free(text);
        if (!(longest > 0) || isnan(l->value[0]) || bar_width <= 0)
            continue;
        double wait = isfinite(l->value[1]) ? fmin(l->value[1], l->value[0]) : 0;
        double x0 = LABEL_WIDTH + PAD, total = bar_width * l->value[0] / longest;
        double compute = total * (l->value[0] - wait) / l->value[0];
        cairo_set_source_rgb(cr, 0.20, 0.45, 0.80);
        cairo_rectangle(cr, x0, y + 3, compute, LANE_HEIGHT - 6);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0.93, 0.60, 0.20);
        cairo_rectangle(cr, x0 + compute, y + 3, total - compute, LANE_HEIGHT - 6);
        cairo_fill(cr);
    }
}

static void tw_rank_lanes_dispose(GObject *object)
{
    TwRankLanes *self = TW_RANK_LANES(object);
    clear_lanes(self);
    if (self->data) {
        g_signal_handler_disconnect(self->data, self->series_handler);
        g_clear_object(&self->data);
    }
    GtkWidget *child;
    while ((child = gtk_widget_get_first_child(GTK_WIDGET(self))))
        gtk_widget_unparent(child);
    G_OBJECT_CLASS(tw_rank_lanes_parent_class)->dispose(object);
}

static void tw_rank_lanes_finalize(GObject *object)
{
    g_array_free(TW_RANK_LANES(object)->lanes, TRUE);
    G_OBJECT_CLASS(tw_rank_lanes_parent_class)->finalize(object);
}

static void tw_rank_lanes_class_init(TwRankLanesClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = tw_rank_lanes_dispose;
    G_OBJECT_CLASS(klass)->finalize = tw_rank_lanes_finalize;
    gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BOX_LAYOUT);
    gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "rank-lanes");
}

static void tw_rank_lanes_init(TwRankLanes *self)
{
    self->lanes = g_array_new(FALSE, TRUE, sizeof(lane));
    gtk_orientable_set_orientation(GTK_ORIENTABLE(gtk_widget_get_layout_manager(GTK_WIDGET(self))),
                                   GTK_ORIENTATION_VERTICAL);
    self->title = gtk_label_new("Ranks: step time, compute (blue) and allreduce wait (orange)");
    gtk_label_set_xalign(GTK_LABEL(self->title), 0);
    gtk_widget_set_margin_start(self->title, PAD);
    gtk_widget_set_margin_top(self->title, PAD);
    gtk_widget_set_parent(self->title, GTK_WIDGET(self));
    self->area = gtk_drawing_area_new();
    gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(self->area), draw, self, NULL);
    gtk_widget_set_parent(self->area, GTK_WIDGET(self));
    gtk_widget_set_visible(GTK_WIDGET(self), FALSE);
}

GtkWidget *tw_rank_lanes_new(void)
{
    return g_object_new(TW_TYPE_RANK_LANES, NULL);
}
