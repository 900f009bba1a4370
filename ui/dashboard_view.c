/* TwDashboardView (dashboard_view.h): a GtkPaned with the sidebar (TwRunList
 * and the chart settings) and the tabs (Scalars, Histograms,
 * Distributions, Images, Text: a TwTagSections each, whose cards the
 * factories here make; HParams, Evaluation) under a tag filter; a
 * placeholder instead of the tabs while there is nothing to show. All of
 * it is the template resources/dashboard_view.ui.
 *
 * Everything here follows TwDashboardData's signals: "runs-changed" and
 * "tags-changed" recompute which cards exist and what each built chart
 * draws (work in the number of runs times tags, once per change, never per
 * frame); the charts and histogram views follow "series-changed" themselves. */
#include "dashboard_view.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

#include <tw/engine.h>
#include <tw/tfevents.h>

#include "chart_card.h"
#include "histogram_view.h"
#include "image_card.h"
#include "image_index.h"
#include "placeholder_view.h"
#include "rank_lanes.h"
#include "run_list.h"
#include "hparams_view.h"
#include "evaluation_view.h"
#include "tag_sections.h"
#include "text_card.h"

#define DASHBOARD_CSS "/io/github/twb/Workbench/dashboard.css"
#define READY_POLL_MS 20
/* While the Images or Text tab is shown, new images and text records are
 * looked for this often (they have no series the data object tails). */
#define MEDIA_POLL_MS 2000

struct _TwDashboardView {
    GtkWidget parent_instance;
    TwDashboardData *data;
    char *logdb;
    /* A TensorBoard log directory being followed into a run database of its
     * own (tw_dashboard_view_open_logdir), or NULL. */
    tw_tb_follower *follower;
    char *logdir, *logdir_db;
    GtkWidget *paned, *runs, *smoothing, *x_axis[3], *y_axis[2], *outliers;
    GtkWidget *pages, *message, *tabs, *tab_stack, *tag_entry, *scalars, *histograms, *distributions, *overlay;
    GtkWidget *rank_lanes; /* above the scalars: runs trained on several MPI ranks */
    GHashTable *tag_index; /* tag name -> index in data's tag table + 1 */
    GRegex *tag_filter;
    double smoothing_weight;
    tw_x_axis x;
    tw_y_axis y;
    gboolean ignore_outliers, have_runs, ready;
    guint ready_poll, cards_idle;
    GtkWidget *hparams; /* the HParams tab */
    GtkWidget *evaluation; /* the Evaluation tab (evaluation_view.c) */
    GtkWidget *pair_check;
    gboolean pair_validation; /* validation/X or val_X drawn in epoch/X's or X's chart (on by default) */
    /* The Images and Text tabs: the checked runs' images, listed off the
     * main loop (image_index.h) while the tab is shown. */
    GtkWidget *images, *texts;
    GtkWidget *switcher, *switcher_scroll; /* the tab row scrolls where it does not fit */
    guint reveal_idle;
    GPtrArray *image_series; /* TwImageSeries, or NULL before the first listing */
    GCancellable *image_listing;
    gboolean images_stale; /* asked for again while a listing was going on (of other runs, maybe) */
    guint media_poll;
};

enum { PROP_0, PROP_LOGDB, PROP_READY, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE(TwDashboardView, tw_dashboard_view, GTK_TYPE_WIDGET)

static void load_css(GtkWidget *widget)
{
    GdkDisplay *display = gtk_widget_get_display(widget);
    if (g_object_get_data(G_OBJECT(display), "tw-dashboard-css") ||
        !g_resources_get_info(DASHBOARD_CSS, G_RESOURCE_LOOKUP_FLAGS_NONE, NULL, NULL, NULL))
        return;
    GtkCssProvider *provider = gtk_css_provider_new();
    gtk_css_provider_load_from_resource(provider, DASHBOARD_CSS);
    gtk_style_context_add_provider_for_display(display, GTK_STYLE_PROVIDER(provider),
                                               GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    g_object_set_data_full(G_OBJECT(display), "tw-dashboard-css", provider, g_object_unref);
}

/* ---- lookups in data's snapshot ------------------------------------------------- */
static int tag_index_of(TwDashboardView *self, const char *name)
{
    return GPOINTER_TO_INT(g_hash_table_lookup(self->tag_index, name)) - 1;
}

static int run_index_of(TwDashboardView *self, gint64 run_id)
{
    int n = tw_dashboard_data_n_runs(self->data);
    for (int i = 0; i < n; i++)
        if (tw_dashboard_data_run(self->data, i)->id == run_id)
            return i;
    return -1;
}

/* Histogram cards are per tag and run: "TAG\nRUN_ID". */
static char *histogram_key(const char *tag, gint64 run_id)
{
    return g_strdup_printf("%s\n%" G_GINT64_FORMAT, tag, run_id);
}

static gint64 histogram_key_run(const char *key)
{
    return g_ascii_strtoll(strrchr(key, '\n') + 1, NULL, 10);
}

/* ---- scalar cards ----------------------------------------------------------------- */
/* Keras' loss and val_loss in one chart. A run names a metric and its
 * validation in one of these ways: our logger's "epoch/X" and
 * "validation/X" (summary_logger.c), or Keras History's own "X" and
 * "val_X", as older TensorBoard callbacks and tensorboardX users write
 * them. (TF2's callback writes "epoch_X" in runs "train" and "validation":
 * one tag, so one chart already.) With the setting on, the chart of the
 * training tag draws the validation tag too, and the validation tag has no
 * chart of its own while the training tag has one. */
static const struct {
    const char *train, *validation;
} validation_names[] = {{"epoch/", "validation/"}, {"", "val_"}};

/* The index of the tag paired with tag (its validation tag, or with
 * to_train its training tag), or -1 when none is in the table. */
static int paired_tag(TwDashboardView *self, const char *tag, gboolean to_train)
{
    for (size_t i = 0; self->pair_validation && i < G_N_ELEMENTS(validation_names); i++) {
        const char *from = to_train ? validation_names[i].validation : validation_names[i].train;
        const char *to = to_train ? validation_names[i].train : validation_names[i].validation;
        if (!g_str_has_prefix(tag, from))
            continue;
        char *other = g_strconcat(to, tag + strlen(from), NULL);
        int index = tag_index_of(self, other);
        g_free(other);
        if (index >= 0)
            return index;
    }
    return -1;
}

/* The validation series of the runs shown, after theirs: the run's colour
 * lightened, "(validation)" after its name. */
static int add_validation_series(TwDashboardView *self, int vi, int n, gint64 *ids, tw_rgb *colors, char **labels,
                                 double *origins)
{
    for (int r = 0; vi >= 0 && r < tw_dashboard_data_n_runs(self->data); r++) {
        const tw_run_info *run = tw_dashboard_data_run(self->data, r);
        gint64 id = tw_dashboard_data_tag_id(self->data, vi, r);
        if (id < 0 || !tw_run_list_shown(TW_RUN_LIST(self->runs), run->id))
            continue;
        tw_rgb c = tw_run_list_color(TW_RUN_LIST(self->runs), run->id);
        ids[n] = id;
        colors[n] = (tw_rgb){c.r + (1 - c.r) * 0.5, c.g + (1 - c.g) * 0.5, c.b + (1 - c.b) * 0.5};
        labels[n] = g_strdup_printf("%s (validation)", run->name);
        origins[n] = run->start_time;
        n++;
    }
    return n;
}

/* The shown runs having the tag, oldest first (the newest drawn on top). */
static void update_series(TwDashboardView *self, TwChartCard *card)
{
    int ti = tag_index_of(self, tw_chart_card_tag(card)), n_runs = tw_dashboard_data_n_runs(self->data), n = 0;
    int vi = paired_tag(self, tw_chart_card_tag(card), FALSE);
    gint64 *ids = g_new(gint64, MAX(2 * n_runs, 1));
    tw_rgb *colors = g_new(tw_rgb, MAX(2 * n_runs, 1));
    const char **labels = g_new0(const char *, MAX(2 * n_runs, 1));
    double *origins = g_new(double, MAX(2 * n_runs, 1));
    for (int r = 0; ti >= 0 && r < n_runs; r++) {
        const tw_run_info *run = tw_dashboard_data_run(self->data, r);
        gint64 id = tw_dashboard_data_tag_id(self->data, ti, r);
        if (id < 0 || !tw_run_list_shown(TW_RUN_LIST(self->runs), run->id))
            continue;
        ids[n] = id;
        colors[n] = tw_run_list_color(TW_RUN_LIST(self->runs), run->id);
        labels[n] = run->name;
        origins[n] = run->start_time;
        n++;
    }
    int n_train = n;
    n = add_validation_series(self, vi, n, ids, colors, (char **)labels, origins);
    tw_chart_card_set_series(card, n, ids, colors, labels, origins);
    for (int i = n_train; i < n; i++)
        g_free((char *)labels[i]);
    g_free(ids);
    g_free(colors);
    g_free(labels);
    g_free(origins);
}

static void apply_settings(TwDashboardView *self, TwChartCard *card)
{
    TwChartView *chart = tw_chart_card_chart(card);
    tw_chart_view_set_smoothing(chart, self->smoothing_weight);
    tw_chart_view_set_axes(chart, self->x, self->y, self->ignore_outliers);
}

static GtkWidget *make_scalar_card(const char *key, const char *tag, gpointer data)
{
    TwDashboardView *self = data;
    GtkWidget *card = tw_chart_card_new(self->data, tag);
    apply_settings(self, TW_CHART_CARD(card));
    update_series(self, TW_CHART_CARD(card));
    return card;
}

static void series_each(const char *key, GtkWidget *card, gpointer data)
{
    update_series(data, TW_CHART_CARD(card));
}

static void settings_each(const char *key, GtkWidget *card, gpointer data)
{
    apply_settings(data, TW_CHART_CARD(card));
}

/* ---- histogram cards ---------------------------------------------------------------- */
static TwHistogramViewMode histogram_mode(TwDashboardView *self)
{
    return gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(self->overlay)) ? TW_HISTOGRAM_VIEW_OVERLAY
                                                                         : TW_HISTOGRAM_VIEW_OFFSET;
}

static GtkWidget *make_histogram_view(TwDashboardView *self, const char *tag, gint64 run_id,
                                      TwHistogramViewMode mode)
{
    int ti = tag_index_of(self, tag), ri = run_index_of(self, run_id);
    const tw_run_info *run = ri >= 0 ? tw_dashboard_data_run(self->data, ri) : NULL;
    gint64 tag_id = ti >= 0 && run ? tw_dashboard_data_tag_id(self->data, ti, ri) : -1;
    char *title = g_strdup_printf("%s · %s", tag, run ? run->name : "?");
    GtkWidget *view = tw_histogram_view_new(self->data, tag_id, title, tw_run_list_color(TW_RUN_LIST(self->runs), run_id),
                                            mode);
    g_free(title);
    return view;
}

static GtkWidget *make_histogram_card(const char *key, const char *tag, gpointer data)
{
    TwDashboardView *self = data;
    return make_histogram_view(self, tag, histogram_key_run(key), histogram_mode(self));
}

static GtkWidget *make_distribution_card(const char *key, const char *tag, gpointer data)
{
    return make_histogram_view(data, tag, histogram_key_run(key), TW_HISTOGRAM_VIEW_DISTRIBUTION);
}

static void mode_each(const char *key, GtkWidget *view, gpointer data)
{
    tw_histogram_view_set_mode(TW_HISTOGRAM_VIEW(view), histogram_mode(data));
}

/* ---- image and text cards ------------------------------------------------------------- */
static const TwImageSeries *image_series_of(TwDashboardView *self, const char *key)
{
    gint64 run_id = histogram_key_run(key);
    size_t tag_len = (size_t)(strrchr(key, '\n') - key);
    for (guint i = 0; self->image_series && i < self->image_series->len; i++) {
        const TwImageSeries *s = self->image_series->pdata[i];
        if (s->run_id == run_id && strlen(s->tag) == tag_len && !strncmp(s->tag, key, tag_len))
            return s;
    }
    return NULL;
}

static GtkWidget *make_image_card(const char *key, const char *tag, gpointer data)
{
    TwDashboardView *self = data;
    gint64 run_id = histogram_key_run(key);
    int ri = run_index_of(self, run_id);
    GtkWidget *card = tw_image_card_new(tw_dashboard_data_path(self->data),
                                        ri >= 0 ? tw_dashboard_data_run(self->data, ri)->name : "?",
                                        tw_run_list_color(TW_RUN_LIST(self->runs), run_id));
    const TwImageSeries *series = image_series_of(self, key);
    if (series)
        tw_image_card_set_images(TW_IMAGE_CARD(card), series);
    return card;
}

static void images_each(const char *key, GtkWidget *card, gpointer data)
{
    const TwImageSeries *series = image_series_of(data, key);
    if (series)
        tw_image_card_set_images(TW_IMAGE_CARD(card), series);
}

static GtkWidget *make_text_card(const char *key, const char *tag, gpointer data)
{
    TwDashboardView *self = data;
    gint64 run_id = histogram_key_run(key);
    int ti = tag_index_of(self, tag), ri = run_index_of(self, run_id);
    gint64 tag_id = ti >= 0 && ri >= 0 ? tw_dashboard_data_tag_id(self->data, ti, ri) : -1;
    return tw_text_card_new(tw_dashboard_data_path(self->data), tag_id,
                            ri >= 0 ? tw_dashboard_data_run(self->data, ri)->name : "?",
                            tw_run_list_color(TW_RUN_LIST(self->runs), run_id));
}

static void text_refresh_each(const char *key, GtkWidget *card, gpointer data)
{
    tw_text_card_refresh(TW_TEXT_CARD(card));
}

/* The image cards: one per run and tag of the checked runs, by tag. */
static void update_image_cards(TwDashboardView *self)
{
    GPtrArray *keys = g_ptr_array_new_with_free_func(g_free), *tags = g_ptr_array_new();
    for (guint i = 0; self->image_series && i < self->image_series->len; i++) {
        const TwImageSeries *s = self->image_series->pdata[i];
        if (!tw_run_list_shown(TW_RUN_LIST(self->runs), s->run_id))
            continue;
        g_ptr_array_add(keys, histogram_key(s->tag, s->run_id));
        g_ptr_array_add(tags, s->tag);
    }
    tw_tag_sections_set_cards(TW_TAG_SECTIONS(self->images), (int)keys->len, (const char *const *)keys->pdata,
                              (const char *const *)tags->pdata);
    tw_tag_sections_foreach(TW_TAG_SECTIONS(self->images), images_each, self);
    g_ptr_array_free(keys, TRUE);
    g_ptr_array_free(tags, TRUE);
}

static void refresh_images(TwDashboardView *self);

static void images_listed(GObject *source, GAsyncResult *result, gpointer data)
{
    GError *error = NULL;
    GPtrArray *series = tw_image_index_finish(result, &error);
    if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        g_error_free(error);
        return;
    }
    TwDashboardView *self = data;
    g_clear_object(&self->image_listing);
    if (error) { /* the file went away, say: keep what is shown, try again at the next poll */
        g_printerr("twb: %s\n", error->message);
        g_error_free(error);
        return;
    }
    if (self->image_series)
        g_ptr_array_unref(self->image_series);
    self->image_series = series;
    update_image_cards(self);
    if (self->images_stale)
        refresh_images(self);
}

/* List the images again (nothing when a listing is going on). */
static void refresh_images(TwDashboardView *self)
{
    self->images_stale = self->image_listing != NULL;
    if (!self->data || self->image_listing || !tw_dashboard_data_path(self->data))
        return;
    int n_runs = tw_dashboard_data_n_runs(self->data), n = 0;
    gint64 *ids = g_new(gint64, MAX(n_runs, 1));
    for (int r = 0; r < n_runs; r++)
        ids[n++] = tw_dashboard_data_run(self->data, r)->id;
    self->image_listing = g_cancellable_new();
    tw_image_index_load(tw_dashboard_data_path(self->data), ids, n, self->image_listing, images_listed, self);
    g_free(ids);
}

static gboolean media_tab_shown(TwDashboardView *self);

static gboolean poll_media(gpointer data)
{
    TwDashboardView *self = data;
    if (!media_tab_shown(self)) {
        self->media_poll = 0;
        return G_SOURCE_REMOVE;
    }
    GtkWidget *tab = gtk_stack_get_visible_child(GTK_STACK(self->tab_stack));
    if (gtk_widget_is_ancestor(self->images, tab))
        refresh_images(self);
    else
        tw_tag_sections_foreach(TW_TAG_SECTIONS(self->texts), text_refresh_each, self);
    return G_SOURCE_CONTINUE;
}

/* ---- which cards there are ------------------------------------------------------------ */
static gboolean any_visible_run_has(TwDashboardView *self, int ti)
{
    int n_runs = tw_dashboard_data_n_runs(self->data);
    for (int r = 0; r < n_runs; r++)
        if (tw_dashboard_data_tag_id(self->data, ti, r) >= 0 &&
            tw_run_list_shown(TW_RUN_LIST(self->runs), tw_dashboard_data_run(self->data, r)->id))
            return TRUE;
    return FALSE;
}

/* Histogram cards are per run: a tab not shown keeps its cards as they
 * were until it is (hundreds of checked runs need not make thousands of
 * cards nobody sees). */
static gboolean tab_shown(TwDashboardView *self, GtkWidget *sections)
{
    return gtk_widget_is_ancestor(sections, gtk_stack_get_visible_child(GTK_STACK(self->tab_stack)));
}

static gboolean media_tab_shown(TwDashboardView *self)
{
    return self->data && (tab_shown(self, self->images) || tab_shown(self, self->texts));
}

/* Scalar tags of the checked runs; histogram cards per tag and checked run,
 * the newest run first. */
static void update_cards(TwDashboardView *self)
{
    GPtrArray *scalar_tags = g_ptr_array_new(), *hist_keys = g_ptr_array_new_with_free_func(g_free),
              *hist_tags = g_ptr_array_new();
    GPtrArray *text_keys = g_ptr_array_new_with_free_func(g_free), *text_tags = g_ptr_array_new();
    int n_tags = tw_dashboard_data_n_tag_names(self->data), n_runs = tw_dashboard_data_n_runs(self->data);
    for (int t = 0; t < n_tags; t++) {
        const char *tag = tw_dashboard_data_tag_name(self->data, t);
        tw_series_kind kind = tw_dashboard_data_tag_kind(self->data, t);
        int ei = paired_tag(self, tag, TRUE); /* drawn in its training tag's chart */
        if (kind == TW_SERIES_SCALAR && any_visible_run_has(self, t) && !(ei >= 0 && any_visible_run_has(self, ei)))
            g_ptr_array_add(scalar_tags, (gpointer)tag);
        /* The hparams plugin's records are kept as text; they are not the text plugin's. */
        for (int r = n_runs - 1; kind == TW_SERIES_TEXT && !g_str_has_prefix(tag, "_hparams_/") && r >= 0; r--) {
            gint64 run_id = tw_dashboard_data_run(self->data, r)->id;
            if (tw_dashboard_data_tag_id(self->data, t, r) >= 0 && tw_run_list_shown(TW_RUN_LIST(self->runs), run_id)) {
                g_ptr_array_add(text_keys, histogram_key(tag, run_id));
                g_ptr_array_add(text_tags, (gpointer)tag);
            }
        }
        for (int r = n_runs - 1; kind == TW_SERIES_HISTOGRAM && r >= 0; r--) {
            gint64 run_id = tw_dashboard_data_run(self->data, r)->id;
            if (tw_dashboard_data_tag_id(self->data, t, r) >= 0 && tw_run_list_shown(TW_RUN_LIST(self->runs), run_id)) {
                g_ptr_array_add(hist_keys, histogram_key(tag, run_id));
                g_ptr_array_add(hist_tags, (gpointer)tag);
            }
        }
    }
    const char *const *st = (const char *const *)scalar_tags->pdata;
    tw_tag_sections_set_cards(TW_TAG_SECTIONS(self->scalars), (int)scalar_tags->len, st, st);
    for (GtkWidget **s = (GtkWidget *[]){self->histograms, self->distributions, NULL}; *s; s++)
        if (tab_shown(self, *s))
            tw_tag_sections_set_cards(TW_TAG_SECTIONS(*s), (int)hist_keys->len,
                                      (const char *const *)hist_keys->pdata, (const char *const *)hist_tags->pdata);
    tw_tag_sections_foreach(TW_TAG_SECTIONS(self->scalars), series_each, self);
    if (tab_shown(self, self->texts))
        tw_tag_sections_set_cards(TW_TAG_SECTIONS(self->texts), (int)text_keys->len,
                                  (const char *const *)text_keys->pdata, (const char *const *)text_tags->pdata);
    if (tab_shown(self, self->images)) {
        update_image_cards(self);
        refresh_images(self);
    }
    g_ptr_array_free(text_keys, TRUE);
    g_ptr_array_free(text_tags, TRUE);
    GArray *shown = g_array_new(FALSE, FALSE, sizeof(gint64));
    for (int r = 0; r < n_runs; r++)
        if (tw_run_list_shown(TW_RUN_LIST(self->runs), tw_dashboard_data_run(self->data, r)->id))
            g_array_append_val(shown, tw_dashboard_data_run(self->data, r)->id);
    tw_rank_lanes_set_runs(TW_RANK_LANES(self->rank_lanes), self->data, (int)shown->len, (gint64 *)shown->data);
    g_array_free(shown, TRUE);
    g_ptr_array_free(scalar_tags, TRUE);
    g_ptr_array_free(hist_keys, TRUE);
    g_ptr_array_free(hist_tags, TRUE);
}

/* Check boxes and the run filter change the cards once per main-loop turn,
 * however many runs changed in it. */
static gboolean update_cards_idle(gpointer data)
{
    TwDashboardView *self = data;
    self->cards_idle = 0;
    update_cards(self);
    return G_SOURCE_REMOVE;
}

static void restart_ready(TwDashboardView *self);

/* Other runs shown: other cards, not ready until their data is on screen. */
static void on_runs_shown(TwDashboardView *self)
{
    if (!self->cards_idle)
        self->cards_idle = g_idle_add_full(G_PRIORITY_DEFAULT, update_cards_idle, self, NULL);
    restart_ready(self);
}

/* ---- the placeholder or the tabs --------------------------------------------------------- */
static void show_message(TwDashboardView *self, const char *body, const char *hint)
{
    tw_placeholder_view_set_body(TW_PLACEHOLDER_VIEW(self->message), body);
    tw_placeholder_view_set_hint(TW_PLACEHOLDER_VIEW(self->message), hint);
    gtk_stack_set_visible_child(GTK_STACK(self->pages), self->message);
}

static void update_page(TwDashboardView *self)
{
    const char *error = self->data ? tw_dashboard_data_error(self->data) : NULL;
    const char *path = self->data ? tw_dashboard_data_path(self->data) : self->logdb;
    char *file = g_markup_escape_text(self->logdir ? self->logdir : path ? path : "the run database", -1);
    if (self->logdir && !error && (!self->have_runs || tw_dashboard_data_n_runs(self->data) == 0)) {
        char *body = g_strdup_printf("No runs in the TensorBoard log directory <b>%s</b> yet.", file);
        show_message(self, body, "A run is a folder holding <tt>events.out.tfevents.*</tt> files; runs appear "
                                 "here as their files do.");
        g_free(body);
    } else if (error) {
        char *text = g_markup_escape_text(error, -1);
        char *body = g_strdup_printf("Cannot read <b>%s</b>: %s", file, text);
        show_message(self, body, "Choose another run database in the training panel, or start twb with --logdb FILE.");
        g_free(body);
        g_free(text);
    } else if (!self->have_runs) {
        char *body = g_strdup_printf("Reading <b>%s</b>…", file);
        show_message(self, body, "");
        g_free(body);
    } else if (tw_dashboard_data_n_runs(self->data) == 0) {
        char *body = g_strdup_printf("No runs in <b>%s</b> yet.", file);
        char *hint = g_strdup_printf("Train a model (<b>Ctrl+Return</b>) or run <tt>twb train MODEL.json --logdb %s</tt>.",
                                     file);
        show_message(self, body, hint);
        g_free(hint);
        g_free(body);
    } else {
        gtk_stack_set_visible_child(GTK_STACK(self->pages), self->tabs);
    }
    g_free(file);
}

/* ---- ready: the first data on screen ------------------------------------------------------ */
typedef struct {
    TwDashboardData *data;
    gboolean ready;
} ReadyCheck;

static void chart_ready_each(const char *key, GtkWidget *card, gpointer data)
{
    ReadyCheck *check = data;
    int n = 0;
    const gint64 *ids = tw_chart_card_tag_ids(TW_CHART_CARD(card), &n);
    for (int i = 0; i < n && check->ready; i++) /* read, or marked as unreadable */
        check->ready = tw_dashboard_data_series_view(check->data, ids[i]) ||
                       tw_dashboard_data_series_error(check->data, ids[i]);
}

static void histogram_ready_each(const char *key, GtkWidget *view, gpointer data)
{
    ReadyCheck *check = data;
    gint64 id = tw_histogram_view_tag_id(TW_HISTOGRAM_VIEW(view));
    check->ready = check->ready &&
                   (tw_dashboard_data_histograms_read(check->data, id) || tw_dashboard_data_series_error(check->data, id));
}

static void media_ready_each(const char *key, GtkWidget *card, gpointer data)
{
    ReadyCheck *check = data;
    check->ready = check->ready && (TW_IS_IMAGE_CARD(card) ? tw_image_card_loaded(TW_IMAGE_CARD(card))
                                                            : tw_text_card_loaded(TW_TEXT_CARD(card)));
}

static gboolean compute_ready(TwDashboardView *self)
{
    if (!self->data)
        return FALSE;
    if (tw_dashboard_data_error(self->data))
        return TRUE;
    if (!self->have_runs || self->cards_idle)
        return FALSE;
    GtkWidget *tab = gtk_stack_get_visible_child(GTK_STACK(self->tab_stack));
    if (gtk_widget_get_last_child(tab) == self->evaluation) /* read in a thread of its own */
        return !tw_evaluation_view_loading(TW_EVALUATION_VIEW(self->evaluation));
    if (!TW_IS_TAG_SECTIONS(gtk_widget_get_last_child(tab))) /* a tab of its own kind (HParams): the runs are in */
        return TRUE;
    TwTagSections *sections = TW_TAG_SECTIONS(gtk_widget_get_last_child(tab));
    if (tw_dashboard_data_n_runs(self->data) == 0)
        return TRUE;
    if (!gtk_widget_get_mapped(GTK_WIDGET(sections)) || !tw_tag_sections_settled(sections))
        return FALSE;
    ReadyCheck check = {self->data, TRUE};
    if (GTK_WIDGET(sections) == self->images && (!self->image_series || self->image_listing || self->images_stale))
        return FALSE;
    if (GTK_WIDGET(sections) == self->images || GTK_WIDGET(sections) == self->texts) {
        tw_tag_sections_foreach(sections, media_ready_each, &check);
        return check.ready;
    }
    tw_tag_sections_foreach(sections, GTK_WIDGET(sections) == self->scalars ? chart_ready_each : histogram_ready_each,
                            &check);
    return check.ready;
}

static gboolean poll_ready(gpointer data)
{
    TwDashboardView *self = data;
    if (!compute_ready(self))
        return G_SOURCE_CONTINUE;
    self->ready_poll = 0;
    self->ready = TRUE;
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_READY]);
    return G_SOURCE_REMOVE;
}

/* Until ready, a short poll (cards are built from idles, answers come as
 * signals; polling a cheap predicate is simpler than following them all). */
static void restart_ready(TwDashboardView *self)
{
    gboolean was = self->ready;
    self->ready = FALSE;
    if (!self->ready_poll)
        self->ready_poll = g_timeout_add(READY_POLL_MS, poll_ready, self);
    if (was)
        g_object_notify_by_pspec(G_OBJECT(self), props[PROP_READY]);
}

/* The shown tab's button scrolled into view (a narrow window). */
static void reveal_active_tab(TwDashboardView *self)
{
    GtkAdjustment *adj = gtk_scrolled_window_get_hadjustment(GTK_SCROLLED_WINDOW(self->switcher_scroll));
    for (GtkWidget *c = gtk_widget_get_first_child(self->switcher); c; c = gtk_widget_get_next_sibling(c)) {
        graphene_rect_t r;
        if (!GTK_IS_TOGGLE_BUTTON(c) || !gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(c)) ||
            !gtk_widget_compute_bounds(c, self->switcher, &r))
            continue;
        double value = gtk_adjustment_get_value(adj), page = gtk_adjustment_get_page_size(adj);
        if (r.origin.x < value)
            gtk_adjustment_set_value(adj, r.origin.x);
        else if (r.origin.x + r.size.width > value + page)
            gtk_adjustment_set_value(adj, r.origin.x + r.size.width - page);
    }
}

/* After a layout: a value set while the viewport is being allocated is
 * not kept. */
static gboolean reveal_after_layout(gpointer data)
{
    TwDashboardView *self = data;
    self->reveal_idle = 0;
    reveal_active_tab(self);
    return G_SOURCE_REMOVE;
}

static void on_tab_row_changed(TwDashboardView *self)
{
    if (!self->reveal_idle)
        self->reveal_idle = g_idle_add(reveal_after_layout, self);
}

static void on_tab_shown(TwDashboardView *self)
{
    reveal_active_tab(self);
    if (!self->data)
        return;
    if (tab_shown(self, self->hparams))
        tw_hparams_view_sync(TW_HPARAMS_VIEW(self->hparams), self->data);
    if (tab_shown(self, self->evaluation))
        tw_evaluation_view_sync(TW_EVALUATION_VIEW(self->evaluation), self->data);
    update_cards(self);
    restart_ready(self);
    if (media_tab_shown(self) && !self->media_poll)
        self->media_poll = g_timeout_add(MEDIA_POLL_MS, poll_media, self);
}

/* ---- data's signals ------------------------------------------------------------------------- */
static void rebuild_tag_index(TwDashboardView *self)
{
    g_hash_table_remove_all(self->tag_index);
    int n = tw_dashboard_data_n_tag_names(self->data);
    for (int t = 0; t < n; t++)
        g_hash_table_insert(self->tag_index, g_strdup(tw_dashboard_data_tag_name(self->data, t)), GINT_TO_POINTER(t + 1));
}

static void on_runs_changed(TwDashboardView *self)
{
    self->have_runs = TRUE;
    rebuild_tag_index(self);
    tw_run_list_sync(TW_RUN_LIST(self->runs), self->data);
    if (tab_shown(self, self->hparams)) /* a hidden tab catches up when shown: 1,000 runs take ~0.2 s */
        tw_hparams_view_sync(TW_HPARAMS_VIEW(self->hparams), self->data);
    if (tab_shown(self, self->evaluation))
        tw_evaluation_view_sync(TW_EVALUATION_VIEW(self->evaluation), self->data);
    update_cards(self);
    update_page(self);
}

static void on_tags_changed(TwDashboardView *self)
{
    rebuild_tag_index(self);
    update_cards(self);
}

/* ---- the settings ---------------------------------------------------------------------------- */
static void on_smoothing(GtkRange *range, TwDashboardView *self)
{
    self->smoothing_weight = gtk_range_get_value(range);
    tw_tag_sections_foreach(TW_TAG_SECTIONS(self->scalars), settings_each, self);
}

static void on_axes(GtkWidget *button, TwDashboardView *self)
{
    if (GTK_IS_TOGGLE_BUTTON(button) && !gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(button)))
        return; /* the group's other button reports the change */
    for (int i = 0; i < 3; i++)
        if (gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(self->x_axis[i])))
            self->x = (tw_x_axis)i;
    self->y = gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(self->y_axis[1])) ? TW_Y_LOG : TW_Y_LINEAR;
    self->ignore_outliers = gtk_check_button_get_active(GTK_CHECK_BUTTON(self->outliers));
    tw_tag_sections_foreach(TW_TAG_SECTIONS(self->scalars), settings_each, self);
}

static void on_pair_validation(GtkCheckButton *check, TwDashboardView *self)
{
    self->pair_validation = gtk_check_button_get_active(check);
    if (self->data)
        update_cards(self);
}

static void on_histogram_mode(GtkToggleButton *button, TwDashboardView *self)
{
    if (gtk_toggle_button_get_active(button))
        tw_tag_sections_foreach(TW_TAG_SECTIONS(self->histograms), mode_each, self);
}

static void on_tag_filter(GtkEditable *entry, TwDashboardView *self)
{
    const char *text = gtk_editable_get_text(entry);
    GError *error = NULL;
    GRegex *regex = *text ? g_regex_new(text, G_REGEX_CASELESS | G_REGEX_OPTIMIZE, 0, &error) : NULL;
    if (error) {
        gtk_widget_add_css_class(GTK_WIDGET(entry), "error");
        gtk_widget_set_tooltip_text(GTK_WIDGET(entry), error->message);
        g_error_free(error);
        return;
    }
    gtk_widget_remove_css_class(GTK_WIDGET(entry), "error");
    gtk_widget_set_tooltip_text(GTK_WIDGET(entry), "Show tags matching a regular expression");
    for (GtkWidget **s = (GtkWidget *[]){self->scalars, self->histograms, self->distributions, NULL}; *s; s++)
        tw_tag_sections_set_filter(TW_TAG_SECTIONS(*s), regex);
    tw_tag_sections_set_filter(TW_TAG_SECTIONS(self->images), regex);
    tw_tag_sections_set_filter(TW_TAG_SECTIONS(self->texts), regex);
    if (regex)
        g_regex_unref(regex);
}

/* The reader starts when the page is first shown (or its data asked for),
 * with the file chosen by then: a window that sets the file after making
 * the page starts one reader, on that file, and a hidden page reads nothing. */
static void ensure_data(TwDashboardView *self)
{
    if (self->data)
        return;
    self->data = tw_dashboard_data_new(self->logdb);
    g_signal_connect_swapped(self->data, "runs-changed", G_CALLBACK(on_runs_changed), self);
    g_signal_connect_swapped(self->data, "tags-changed", G_CALLBACK(on_tags_changed), self);
    update_page(self);
    restart_ready(self);
}

static void tw_dashboard_view_map(GtkWidget *widget)
{
    ensure_data(TW_DASHBOARD_VIEW(widget));
    GTK_WIDGET_CLASS(tw_dashboard_view_parent_class)->map(widget);
}

static void tw_dashboard_view_constructed(GObject *object)
{
    TwDashboardView *self = TW_DASHBOARD_VIEW(object);
    G_OBJECT_CLASS(tw_dashboard_view_parent_class)->constructed(object);
    update_page(self);
}

static void tw_dashboard_view_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
    if (id == PROP_LOGDB)
        tw_dashboard_view_set_logdb(TW_DASHBOARD_VIEW(object), g_value_get_string(value));
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
}

static void tw_dashboard_view_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    TwDashboardView *self = TW_DASHBOARD_VIEW(object);
    if (id == PROP_LOGDB)
        g_value_set_string(value, self->data ? tw_dashboard_data_path(self->data) : self->logdb);
    else if (id == PROP_READY)
        g_value_set_boolean(value, self->ready);
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
}

static void stop_following(TwDashboardView *self)
{
    g_clear_pointer(&self->follower, tw_tb_follower_stop);
    g_clear_pointer(&self->logdir, g_free);
    g_clear_pointer(&self->logdir_db, g_free);
}

static void tw_dashboard_view_dispose(GObject *object)
{
    TwDashboardView *self = TW_DASHBOARD_VIEW(object);
    stop_following(self);
    if (self->ready_poll)
        g_source_remove(self->ready_poll);
    if (self->cards_idle)
        g_source_remove(self->cards_idle);
    if (self->media_poll)
        g_source_remove(self->media_poll);
    if (self->reveal_idle)
        g_source_remove(self->reveal_idle);
    self->reveal_idle = 0;
    self->ready_poll = self->cards_idle = self->media_poll = 0;
    if (self->image_listing)
        g_cancellable_cancel(self->image_listing);
    g_clear_object(&self->image_listing);
    g_clear_pointer(&self->image_series, g_ptr_array_unref);
    if (self->data)
        g_signal_handlers_disconnect_by_data(self->data, self);
    gtk_widget_dispose_template(GTK_WIDGET(self), TW_TYPE_DASHBOARD_VIEW);
    g_clear_object(&self->data);
    g_clear_pointer(&self->tag_index, g_hash_table_unref);
    G_OBJECT_CLASS(tw_dashboard_view_parent_class)->dispose(object);
}

static void tw_dashboard_view_finalize(GObject *object)
{
    g_free(TW_DASHBOARD_VIEW(object)->logdb);
    G_OBJECT_CLASS(tw_dashboard_view_parent_class)->finalize(object);
}

static void tw_dashboard_view_class_init(TwDashboardViewClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    object_class->constructed = tw_dashboard_view_constructed;
    object_class->set_property = tw_dashboard_view_set_property;
    object_class->get_property = tw_dashboard_view_get_property;
    object_class->dispose = tw_dashboard_view_dispose;
    object_class->finalize = tw_dashboard_view_finalize;
    props[PROP_LOGDB] = g_param_spec_string("logdb", NULL, NULL, NULL,
                                            G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
    props[PROP_READY] = g_param_spec_boolean("ready", NULL, NULL, FALSE,
                                             G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(object_class, N_PROPS, props);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    widget_class->map = tw_dashboard_view_map;
    gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
    gtk_widget_class_set_css_name(widget_class, "dashboardview");
    g_type_ensure(TW_TYPE_RUN_LIST);
    g_type_ensure(TW_TYPE_PLACEHOLDER_VIEW);
    g_type_ensure(TW_TYPE_RANK_LANES);
    g_type_ensure(TW_TYPE_TAG_SECTIONS);
    g_type_ensure(TW_TYPE_HPARAMS_VIEW);
    g_type_ensure(TW_TYPE_EVALUATION_VIEW);
    gtk_widget_class_set_template_from_resource(widget_class, "/io/github/twb/Workbench/dashboard_view.ui");
#define BIND(field, id) \
    gtk_widget_class_bind_template_child_full(widget_class, id, FALSE, G_STRUCT_OFFSET(TwDashboardView, field))
    BIND(paned, "paned"); /* the template's one child, which dispose_template unparents */
    BIND(runs, "runs");
    BIND(smoothing, "smoothing");
    BIND(x_axis[TW_X_STEP], "x_step");
    BIND(x_axis[TW_X_RELATIVE_TIME], "x_relative");
    BIND(x_axis[TW_X_WALL_TIME], "x_wall");
    BIND(y_axis[TW_Y_LINEAR], "y_linear");
    BIND(y_axis[TW_Y_LOG], "y_log");
    BIND(outliers, "outliers");
    BIND(pair_check, "pair_check");
    BIND(pages, "pages");
    BIND(message, "message");
    BIND(tabs, "tabs");
    BIND(tag_entry, "tag_entry");
    BIND(switcher_scroll, "switcher_scroll");
    BIND(switcher, "switcher");
    BIND(tab_stack, "tab_stack");
    BIND(rank_lanes, "rank_lanes");
    BIND(scalars, "scalars");
    BIND(overlay, "overlay");
    BIND(histograms, "histograms");
    BIND(distributions, "distributions");
    BIND(hparams, "hparams");
    BIND(images, "images");
    BIND(texts, "texts");
    BIND(evaluation, "evaluation");
#undef BIND
    gtk_widget_class_bind_template_callback(widget_class, on_runs_shown);
    gtk_widget_class_bind_template_callback(widget_class, on_smoothing);
    gtk_widget_class_bind_template_callback(widget_class, on_axes);
    gtk_widget_class_bind_template_callback(widget_class, on_pair_validation);
    gtk_widget_class_bind_template_callback(widget_class, on_tag_filter);
    gtk_widget_class_bind_template_callback(widget_class, on_tab_shown);
    gtk_widget_class_bind_template_callback(widget_class, on_histogram_mode);
}

static void tw_dashboard_view_init(TwDashboardView *self)
{
    load_css(GTK_WIDGET(self));
    gtk_widget_init_template(GTK_WIDGET(self));
    self->tag_index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    /* The template's settings are the defaults. */
    self->smoothing_weight = gtk_range_get_value(GTK_RANGE(self->smoothing));
    self->pair_validation = gtk_check_button_get_active(GTK_CHECK_BUTTON(self->pair_check));
    tw_tag_sections_set_factory(TW_TAG_SECTIONS(self->scalars), make_scalar_card, self);
    tw_tag_sections_set_factory(TW_TAG_SECTIONS(self->histograms), make_histogram_card, self);
    tw_tag_sections_set_factory(TW_TAG_SECTIONS(self->distributions), make_distribution_card, self);
    tw_tag_sections_set_factory(TW_TAG_SECTIONS(self->images), make_image_card, self);
    tw_tag_sections_set_factory(TW_TAG_SECTIONS(self->texts), make_text_card, self);
    /* Each tab as wide as its name (a .ui file cannot reach the switcher's
     * own layout manager). */
    gtk_box_layout_set_homogeneous(GTK_BOX_LAYOUT(gtk_widget_get_layout_manager(self->switcher)), FALSE);
    /* Laid out (or resized): the shown tab in view again. */
    g_signal_connect_swapped(gtk_scrolled_window_get_hadjustment(GTK_SCROLLED_WINDOW(self->switcher_scroll)), "changed",
                             G_CALLBACK(on_tab_row_changed), self);
}

/* ---- dashboard_view.h ------------------------------------------------------------------------------ */
GtkWidget *tw_dashboard_view_new(const char *logdb_path)
{
    return g_object_new(TW_TYPE_DASHBOARD_VIEW, "logdb", logdb_path, NULL);
}

void tw_dashboard_view_set_logdb(TwDashboardView *self, const char *path)
{
    g_return_if_fail(TW_IS_DASHBOARD_VIEW(self));
    if (!g_strcmp0(path, self->data ? tw_dashboard_data_path(self->data) : self->logdb))
        return;
    if (self->logdir_db && g_strcmp0(path, self->logdir_db))
        stop_following(self); /* another database chosen: the log directory is left */
    g_free(self->logdb);
    self->logdb = g_strdup(path);
    if (!self->data) {
        update_page(self);
        g_object_notify_by_pspec(G_OBJECT(self), props[PROP_LOGDB]);
        return;
    }
    tw_dashboard_data_set_path(self->data, path);
    /* Another file: its runs are other runs, even under the same ids. */
    self->have_runs = FALSE;
    tw_run_list_reset(TW_RUN_LIST(self->runs));
    g_hash_table_remove_all(self->tag_index);
    for (GtkWidget **s = (GtkWidget *[]){self->scalars, self->histograms, self->distributions, NULL}; *s; s++)
        tw_tag_sections_set_cards(TW_TAG_SECTIONS(*s), 0, NULL, NULL);
    if (self->image_listing)
        g_cancellable_cancel(self->image_listing);
    g_clear_object(&self->image_listing);
    g_clear_pointer(&self->image_series, g_ptr_array_unref);
    self->images_stale = FALSE;
    tw_tag_sections_set_cards(TW_TAG_SECTIONS(self->images), 0, NULL, NULL);
    tw_tag_sections_set_cards(TW_TAG_SECTIONS(self->texts), 0, NULL, NULL);
    update_page(self);
    restart_ready(self);
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_LOGDB]);
}

TwDashboardData *tw_dashboard_view_data(TwDashboardView *self)
{
    g_return_val_if_fail(TW_IS_DASHBOARD_VIEW(self), NULL);
    ensure_data(self);
    return self->data;
}

gboolean tw_dashboard_view_ready(TwDashboardView *self)
{
    g_return_val_if_fail(TW_IS_DASHBOARD_VIEW(self), FALSE);
    return self->ready;
}

void tw_dashboard_view_show_tab(TwDashboardView *self, const char *name)
{
    g_return_if_fail(TW_IS_DASHBOARD_VIEW(self) && name);
    if (gtk_stack_get_child_by_name(GTK_STACK(self->tab_stack), name))
        gtk_stack_set_visible_child_name(GTK_STACK(self->tab_stack), name);
}

/* Warnings come on the follower's thread: to stderr, which is safe there. */
static void print_follow_warning(void *user_data, const char *message)
{
    g_printerr("twb: %s\n", message);
}

/* The database a log directory is followed into: one per directory, in the
 * user's cache, rebuilt from the event files each time it is opened. */
static char *logdir_database(const char *dir)
{
    char *digest = g_compute_checksum_for_string(G_CHECKSUM_SHA1, dir, -1);
    char *name = g_strconcat(digest, ".db", NULL);
    char *path = g_build_filename(g_get_user_cache_dir(), "twb", "tensorboard", name, NULL);
    g_free(name);
    g_free(digest);
    return path;
}

gboolean tw_dashboard_view_open_logdir(TwDashboardView *self, const char *dir, GError **error)
{
    g_return_val_if_fail(TW_IS_DASHBOARD_VIEW(self), FALSE);
    char *canonical = g_canonicalize_filename(dir, NULL);
    char *db = logdir_database(canonical);
    stop_following(self);
    char *folder = g_path_get_dirname(db);
    g_mkdir_with_parents(folder, 0700);
    g_free(folder);
    for (const char *const *suffix = (const char *const[]){"", "-wal", "-shm", NULL}; *suffix; suffix++) {
        char *file = g_strconcat(db, *suffix, NULL);
        if (g_unlink(file) && errno != ENOENT)
            g_printerr("twb: cannot remove %s: %s\n", file, g_strerror(errno));
        g_free(file);
    }
    self->follower = tw_tb_follow(canonical, db, print_follow_warning, NULL);
    if (!self->follower) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s", tw_last_error());
        tw_error_clear();
        g_free(db);
        g_free(canonical);
        return FALSE;
    }
    self->logdir = canonical;
    self->logdir_db = db;
    tw_dashboard_view_set_logdb(self, db);
    update_page(self);
    return TRUE;
}

const char *tw_dashboard_view_logdir(TwDashboardView *self)
{
    g_return_val_if_fail(TW_IS_DASHBOARD_VIEW(self), NULL);
    return self->logdir;
}
