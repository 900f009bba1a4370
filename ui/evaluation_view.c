/* The Evaluation tab (evaluation_view.h). */
#include "evaluation_view.h"

#include <math.h>
#include <string.h>

#include <tw/error.h>
#include <tw/evaluation.h>
#include <tw/run_store.h>

#include "evaluation_render.h"

/* Examples on screen at once: a cell's, or the first of all (misclassified first). */
#define MAX_SHOWN 240
/* Each example's image is drawn at least this wide. */
#define THUMB_PX 84

/* ---- what is read from the run database ------------------------------------------------------- */
typedef struct {
    gint64 run_id;
    gint64 step;
    int classes;
    double *counts;    /* classes x classes */
    double *per_class; /* classes x 4: precision, recall, F1, support */
    int nsamples;
    double *samples;   /* nsamples x 4: index, true, predicted, confidence */
    int nvalues;       /* per sample in values (0: images or nothing) */
    double *values;
    char **names;      /* classes names, or NULL */
    GdkTexture **textures; /* nsamples, or NULL */
} EvalData;

static void eval_data_free(EvalData *e)
{
    if (!e)
        return;
    g_free(e->counts);
    g_free(e->per_class);
    g_free(e->samples);
    g_free(e->values);
    g_strfreev(e->names);
    for (int i = 0; e->textures && i < e->nsamples; i++)
        g_clear_object(&e->textures[i]);
    g_free(e->textures);
    g_free(e);
}

typedef struct {
    char *path;
    gint64 wanted; /* -1: the newest evaluated run */
} LoadJob;

typedef struct {
    gint64 *ids; /* the runs with an evaluation */
    int n;
    EvalData *eval; /* the chosen run's, or NULL when none has one */
} LoadResult;

static void load_job_free(gpointer data)
{
    LoadJob *job = data;
    g_free(job->path);
    g_free(job);
}

static void load_result_free(gpointer data)
{
    LoadResult *r = data;
    g_free(r->ids);
    eval_data_free(r->eval);
    g_free(r);
}

/* A stored tensor as a malloc'd copy of its values, checking its shape:
 * rows x cols (cols 0: any). 1 read, 0 absent, -1 with a message. */
static int read_matrix(tw_run_store *store, gint64 run, const char *tag, int64_t rows, int64_t cols, double **out,
                       tw_stored_tensor *t)
{
    int rc = tw_run_store_read_tensor(store, run, tag, t);
    if (rc <= 0)
        return rc;
    if (t->ndim != 2 || (rows >= 0 && t->dims[0] != rows) || (cols > 0 && t->dims[1] != cols)) {
        tw_error_set("%s: run %lld: '%s' has %d dimensions (%lld x %lld), not the evaluation's", tw_run_store_path(store),
                     (long long)run, tag, t->ndim, (long long)t->dims[0], (long long)(t->ndim > 1 ? t->dims[1] : 0));
        tw_stored_tensor_clear(t);
        return -1;
    }
    *out = g_memdup2(t->values, (gsize)t->numel * sizeof(double) + 1);
    return 1;
}

static char **read_names(tw_run_store *store, gint64 run, int classes)
{
    int64_t tag = tw_run_store_find_tag(store, run, TW_EVAL_TAG_CLASS_NAMES);
    tw_series_cursor cursor = {0};
    tw_text_record *texts = NULL;
    int n = 0;
    if (tag < 0 || tw_run_store_read_texts(store, tag, &cursor, &texts, &n) || n == 0) {
        tw_error_clear();
        return NULL;
    }
    char **names = g_strsplit(texts[n - 1].text, "\n", -1);
    tw_text_record_free(texts, n);
    if ((int)g_strv_length(names) < classes) { /* not this evaluation's */
        g_strfreev(names);
        return NULL;
    }
    return names;
}

/* The newest evaluation's images: the last nsamples of the samples' step. */
static GdkTexture **read_textures(tw_run_store *store, EvalData *e)
{
    tw_image_info *images;
    int n;
    if (tw_run_store_list_images(store, e->run_id, TW_EVAL_TAG_SAMPLE_IMAGES, &images, &n))
        return NULL;
    int at_step = 0, first = -1;
    for (int i = 0; i < n; i++)
        if (images[i].step == e->step && at_step++ == 0)
            first = i;
    GdkTexture **textures = NULL;
    if (at_step >= e->nsamples && e->nsamples > 0) {
        textures = g_new0(GdkTexture *, e->nsamples);
        for (int s = 0; s < e->nsamples; s++) {
            const tw_image_info *im = &images[first + at_step - e->nsamples + s];
            uint8_t *bytes;
            size_t size;
            if (tw_run_store_read_image(store, im->id, &bytes, &size))
                continue;
            GBytes *b = g_bytes_new_take(bytes, size);
            textures[s] = gdk_texture_new_from_bytes(b, NULL);
            g_bytes_unref(b);
        }
    }
    tw_image_info_free(images, n);
    return textures;
}

static EvalData *read_eval(tw_run_store *store, gint64 run)
{
    EvalData *e = g_new0(EvalData, 1);
    e->run_id = run;
    tw_stored_tensor t;
    int rc = read_matrix(store, run, TW_EVAL_TAG_CONFUSION, -1, 0, &e->counts, &t);
    if (rc == 1) {
        e->classes = (int)t.dims[0];
        e->step = t.step;
        if (t.dims[1] != t.dims[0] || t.dims[0] > 4096)
            rc = tw_error_set("%s: run %lld: the confusion matrix is %lld x %lld, not square (of at most 4096 classes)",
                              tw_run_store_path(store), (long long)run, (long long)t.dims[0], (long long)t.dims[1]);
        tw_stored_tensor_clear(&t);
    }
    if (rc == 1)
        rc = read_matrix(store, run, TW_EVAL_TAG_PER_CLASS, e->classes, 4, &e->per_class, &t);
    if (rc == 1) {
        tw_stored_tensor_clear(&t);
        int s = read_matrix(store, run, TW_EVAL_TAG_SAMPLES, -1, 4, &e->samples, &t);
        if (s == 1) {
            e->nsamples = (int)t.dims[0];
            tw_stored_tensor_clear(&t);
        }
        rc = s < 0 ? -1 : 1;
    }
    if (rc == 1 && e->nsamples) {
        int v = read_matrix(store, run, TW_EVAL_TAG_SAMPLE_VALUES, e->nsamples, 0, &e->values, &t);
        if (v == 1) {
            e->nvalues = (int)t.dims[1];
            tw_stored_tensor_clear(&t);
        }
        rc = v < 0 ? -1 : 1;
    }
    if (rc != 1) {
        if (rc == 0)
            tw_error_set("%s: run %lld: its evaluation is incomplete (no per-class figures)", tw_run_store_path(store),
                         (long long)run);
        eval_data_free(e);
        return NULL;
    }
    e->names = read_names(store, run, e->classes);
    if (!e->values)
        e->textures = read_textures(store, e);
    return e;
}

static void load_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
    LoadJob *job = data;
    tw_run_store *store = tw_run_store_open(job->path, TW_STORE_READ_ONLY);
    LoadResult *r = g_new0(LoadResult, 1);
    int64_t *ids = NULL;
    int rc = store ? tw_run_store_runs_with_tensor(store, TW_EVAL_TAG_CONFUSION, &ids, &r->n) : -1;
    r->ids = (gint64 *)ids;
    if (rc == 0 && r->n > 0) {
        gint64 chosen = r->ids[r->n - 1];
        for (int i = 0; i < r->n; i++)
            if (r->ids[i] == job->wanted)
                chosen = job->wanted;
        r->eval = read_eval(store, chosen);
        rc = r->eval ? 0 : -1;
    }
    tw_run_store_close(store);
    if (rc) {
        load_result_free(r);
        g_task_return_new_error(task, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s", tw_last_error());
        tw_error_clear();
        return;
    }
    g_task_return_pointer(task, r, load_result_free);
}

/* ---- the widget ------------------------------------------------------------------------------- */
struct _TwEvaluationView {
    GtkWidget parent_instance;
    GtkWidget *box, *bar, *run_drop, *summary, *stack, *placeholder, *content;
    GtkWidget *matrix, *per_class, *examples_title, *all_button, *flow;
    GtkStringList *run_names;
    gint64 *run_ids; /* the drop-down's runs */
    int n_runs;
    GHashTable *names; /* run id -> name, from the last sync */
    char *path;
    gint64 wanted;
    GCancellable *loading;
    gboolean stale; /* synced again while reading */
    gboolean filling_drop;
    EvalData *eval;
    int sel_row, sel_col;
    int n_shown;
};

G_DEFINE_FINAL_TYPE(TwEvaluationView, tw_evaluation_view, GTK_TYPE_WIDGET)

static void start_load(TwEvaluationView *self);

static const char *class_name(const EvalData *e, int c, char *buf, size_t size)
{
    if (e->names && e->names[c] && e->names[c][0])
        return e->names[c];
    g_snprintf(buf, size, "class %d", c);
    return buf;
}

static gboolean is_dark(GtkWidget *widget)
{
    GdkRGBA fg;
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
    G_GNUC_END_IGNORE_DEPRECATIONS
    return 0.299 * fg.red + 0.587 * fg.green + 0.114 * fg.blue > 0.5;
}

static tw_confusion_plot plot_of(TwEvaluationView *self, gboolean dark)
{
    const EvalData *e = self->eval;
    return (tw_confusion_plot){.classes = e ? e->classes : 0,
                               .counts = e ? e->counts : NULL,
                               .names = e ? (const char *const *)e->names : NULL,
                               .selected_row = self->sel_row,
                               .selected_col = self->sel_col,
                               .dark = dark};
}

static void draw_matrix(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
    TwEvaluationView *self = data;
    tw_confusion_plot plot = plot_of(self, is_dark(GTK_WIDGET(area)));
    tw_confusion_render(cr, width, height, &plot);
}

static void on_matrix_pressed(GtkGestureClick *gesture, int n_press, double x, double y, TwEvaluationView *self)
{
    tw_confusion_plot plot = plot_of(self, FALSE);
    int row, col;
    GtkWidget *area = self->matrix;
    if (!tw_confusion_hit(gtk_widget_get_width(area), gtk_widget_get_height(area), &plot, x, y, &row, &col))
        return;
    /* the selected cell again: all examples */
    if (row == self->sel_row && col == self->sel_col)
        row = col = -1;
    tw_evaluation_view_select_cell(self, row, col);
}

/* One example: its image (or values), true and predicted class, confidence. */
static GtkWidget *example_widget(const EvalData *e, int s)
{
    const double *row = e->samples + (size_t)s * 4;
    int truth = (int)row[1], pred = (int)row[2];
    char a[32], b[32];
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
    gtk_widget_add_css_class(box, "evaluation-example");
    if (e->textures && e->textures[s]) {
        /* an image of fixed size, a whole multiple of the example's (a picture would grow with its cell) */
        GtkWidget *pic = gtk_image_new_from_paintable(GDK_PAINTABLE(e->textures[s]));
        int w = gdk_texture_get_width(e->textures[s]), h = gdk_texture_get_height(e->textures[s]);
        gtk_image_set_pixel_size(GTK_IMAGE(pic), MAX(w, h) * MAX(1, THUMB_PX / MAX(1, MAX(w, h))));
        gtk_box_append(GTK_BOX(box), pic);
    } else if (e->values) {
        GString *text = g_string_new(NULL);
        for (int v = 0; v < e->nvalues; v++)
            g_string_append_printf(text, "%s%.4g", v ? "  " : "", e->values[(size_t)s * e->nvalues + v]);
        GtkWidget *values = gtk_label_new(text->str);
        gtk_label_set_xalign(GTK_LABEL(values), 0);
        gtk_widget_add_css_class(values, "monospace");
        gtk_box_append(GTK_BOX(box), values);
        g_string_free(text, TRUE);
        gtk_orientable_set_orientation(GTK_ORIENTABLE(box), GTK_ORIENTATION_HORIZONTAL);
        gtk_box_set_spacing(GTK_BOX(box), 12);
    }
    char *caption = truth == pred ? g_strdup_printf("%s · %.0f%%", class_name(e, pred, a, sizeof a), 100 * row[3])
                                  : g_strdup_printf("%s, not %s · %.0f%%", class_name(e, pred, a, sizeof a),
                                                    class_name(e, truth, b, sizeof b), 100 * row[3]);
    GtkWidget *label = gtk_label_new(caption);
    gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
    gtk_label_set_max_width_chars(GTK_LABEL(label), e->values ? 40 : 18);
    gtk_widget_add_css_class(label, truth == pred ? "dim-label" : "error");
    gtk_widget_add_css_class(label, "caption");
    char *tip = g_strdup_printf("Test example %.0f\nTrue: %s\nPredicted: %s (%.1f%%)", row[0],
                                class_name(e, truth, b, sizeof b), class_name(e, pred, a, sizeof a), 100 * row[3]);
    gtk_widget_set_tooltip_text(box, tip);
    gtk_box_append(GTK_BOX(box), label);
    g_free(caption);
    g_free(tip);
    return box;
}

static void fill_examples(TwEvaluationView *self)
{
    GtkWidget *child;
    while ((child = gtk_widget_get_first_child(self->flow)))
        gtk_flow_box_remove(GTK_FLOW_BOX(self->flow), child);
    self->n_shown = 0;
    const EvalData *e = self->eval;
    if (!e)
        return;
    gtk_flow_box_set_max_children_per_line(GTK_FLOW_BOX(self->flow), e->values ? 1 : 30);
    int matching = 0;
    for (int s = 0; s < e->nsamples; s++) {
        const double *row = e->samples + (size_t)s * 4;
        if (self->sel_row >= 0 && ((int)row[1] != self->sel_row || (int)row[2] != self->sel_col))
            continue;
        matching++;
        if (self->n_shown < MAX_SHOWN) {
            gtk_flow_box_append(GTK_FLOW_BOX(self->flow), example_widget(e, s));
            self->n_shown++;
        }
    }
    char a[32], b[32], *title;
    if (self->sel_row >= 0) {
        double count = e->counts[self->sel_row * e->classes + self->sel_col];
        title = g_strdup_printf("True %s, predicted %s: %.0f example%s, %d stored", class_name(e, self->sel_row, a, sizeof a),
                                class_name(e, self->sel_col, b, sizeof b), count, count == 1 ? "" : "s", matching);
    } else {
        title = g_strdup_printf("%d stored examples, misclassified first (at most %d per cell)%s", matching,
                                TW_EVALUATION_PER_CELL, matching > self->n_shown ? "; the first shown" : "");
    }
    gtk_label_set_text(GTK_LABEL(self->examples_title), title);
    g_free(title);
    gtk_widget_set_sensitive(self->all_button, self->sel_row >= 0);
}

static GtkWidget *cell_label(const char *text, gboolean header, float xalign)
{
    GtkWidget *l = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(l), xalign);
    if (header)
        gtk_widget_add_css_class(l, "heading");
    else
        gtk_widget_add_css_class(l, "numeric");
    return l;
}

static void fill_per_class(TwEvaluationView *self)
{
    GtkWidget *child;
    while ((child = gtk_widget_get_first_child(self->per_class)))
        gtk_grid_remove(GTK_GRID(self->per_class), child);
    const EvalData *e = self->eval;
    if (!e)
        return;
    static const char *const heads[] = {"Class", "Precision", "Recall", "F1", "Support"};
    for (int i = 0; i < 5; i++)
        gtk_grid_attach(GTK_GRID(self->per_class), cell_label(heads[i], TRUE, i ? 1 : 0), i, 0, 1, 1);
    for (int c = 0; c < e->classes; c++) {
        char buf[32], num[4][32];
        const double *f = e->per_class + (size_t)c * 4;
        for (int i = 0; i < 3; i++)
            g_snprintf(num[i], sizeof num[i], "%.3f", f[i]);
        g_snprintf(num[3], sizeof num[3], "%.0f", f[3]);
        gtk_grid_attach(GTK_GRID(self->per_class), cell_label(class_name(e, c, buf, sizeof buf), FALSE, 0), 0, c + 1, 1, 1);
        for (int i = 0; i < 4; i++)
            gtk_grid_attach(GTK_GRID(self->per_class), cell_label(num[i], FALSE, 1), i + 1, c + 1, 1, 1);
    }
}

static void show_eval(TwEvaluationView *self)
{
    const EvalData *e = self->eval;
    if (!e) {
        gtk_stack_set_visible_child(GTK_STACK(self->stack), self->placeholder);
        gtk_label_set_text(GTK_LABEL(self->summary), "");
        return;
    }
    double right = 0, total = 0;
    for (int r = 0; r < e->classes; r++)
        for (int c = 0; c < e->classes; c++) {
            total += e->counts[r * e->classes + c];
            right += r == c ? e->counts[r * e->classes + c] : 0;
        }
    char *summary = g_strdup_printf("accuracy %.2f%% on %.0f test examples · %d classes · step %lld",
                                    total > 0 ? 100 * right / total : 0, total, e->classes, (long long)e->step);
    gtk_label_set_text(GTK_LABEL(self->summary), summary);
    g_free(summary);
    /* room for the labels and cells of 40 px (smaller past 16 classes) */
    int side = MIN(e->classes, 16) * 40 + 140;
    gtk_widget_set_size_request(self->matrix, side, side - 20);
    gtk_paned_set_position(GTK_PANED(self->content), side + 16);
    fill_per_class(self);
    fill_examples(self);
    gtk_widget_queue_draw(self->matrix);
    gtk_stack_set_visible_child(GTK_STACK(self->stack), self->content);
}

static void fill_drop(TwEvaluationView *self, const gint64 *ids, int n)
{
    self->filling_drop = TRUE;
    g_free(self->run_ids);
    self->run_ids = g_new0(gint64, MAX(n, 1));
    self->n_runs = 0;
    guint old = g_list_model_get_n_items(G_LIST_MODEL(self->run_names));
    const char **strings = g_new0(const char *, n + 1);
    for (int i = n - 1; i >= 0; i--) { /* newest first */
        const char *name = g_hash_table_lookup(self->names, &ids[i]);
        if (!name) /* a run in the trash */
            continue;
        strings[self->n_runs] = name;
        self->run_ids[self->n_runs++] = ids[i];
    }
    gtk_string_list_splice(self->run_names, 0, old, strings);
    g_free(strings);
    guint pos = GTK_INVALID_LIST_POSITION;
    for (int i = 0; self->eval && i < self->n_runs; i++)
        if (self->run_ids[i] == self->eval->run_id)
            pos = (guint)i;
    gtk_drop_down_set_selected(GTK_DROP_DOWN(self->run_drop), pos);
    self->filling_drop = FALSE;
}

static void loaded(GObject *source, GAsyncResult *result, gpointer data)
{
    GError *error = NULL;
    LoadResult *r = g_task_propagate_pointer(G_TASK(result), &error);
    if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) { /* the view went, or another file */
        g_error_free(error);
        return;
    }
    TwEvaluationView *self = data;
    g_clear_object(&self->loading);
    gint64 before = self->eval ? self->eval->run_id : -1;
    eval_data_free(self->eval);
    self->eval = NULL;
    if (error) {
        gtk_label_set_text(GTK_LABEL(self->placeholder), error->message);
        g_error_free(error);
        fill_drop(self, NULL, 0);
    } else {
        self->eval = r->eval;
        r->eval = NULL;
        gtk_label_set_text(GTK_LABEL(self->placeholder),
                           "No run has an evaluation yet. Training a classifier with a run database stores one; "
                           "so does twb evaluate MODEL --checkpoint FILE --data … --logdb FILE --run NAME.");
        fill_drop(self, r->ids, r->n);
        load_result_free(r);
    }
    if (!self->eval || self->eval->run_id != before)
        self->sel_row = self->sel_col = -1;
    show_eval(self);
    if (self->stale)
        start_load(self);
}

static void start_load(TwEvaluationView *self)
{
    self->stale = self->loading != NULL;
    if (self->loading || !self->path)
        return;
    self->loading = g_cancellable_new();
    LoadJob *job = g_new0(LoadJob, 1);
    job->path = g_strdup(self->path);
    job->wanted = self->wanted;
    GTask *task = g_task_new(NULL, self->loading, loaded, self);
    g_task_set_task_data(task, job, load_job_free);
    g_task_run_in_thread(task, load_thread);
    g_object_unref(task);
}

static void on_run_chosen(GtkDropDown *drop, GParamSpec *pspec, TwEvaluationView *self)
{
    guint pos = gtk_drop_down_get_selected(drop);
    if (self->filling_drop || pos == GTK_INVALID_LIST_POSITION || pos >= (guint)self->n_runs)
        return;
    tw_evaluation_view_show_run(self, self->run_ids[pos]);
}

static void on_all_clicked(GtkButton *button, TwEvaluationView *self)
{
    tw_evaluation_view_select_cell(self, -1, -1);
}

/* ---- public ----------------------------------------------------------------------------------- */
void tw_evaluation_view_sync(TwEvaluationView *self, TwDashboardData *data)
{
    const char *path = data ? tw_dashboard_data_path(data) : NULL;
    if (g_strcmp0(path, self->path)) {
        if (self->loading) { /* its answer is the other file's */
            g_cancellable_cancel(self->loading);
            g_clear_object(&self->loading);
        }
        g_free(self->path);
        self->path = g_strdup(path);
        self->wanted = -1;
    }
    g_hash_table_remove_all(self->names);
    for (int i = 0; data && i < tw_dashboard_data_n_runs(data); i++) {
        const tw_run_info *run = tw_dashboard_data_run(data, i);
        g_hash_table_insert(self->names, g_memdup2(&run->id, sizeof run->id), g_strdup(run->name));
    }
    start_load(self);
}

void tw_evaluation_view_show_run(TwEvaluationView *self, gint64 run_id)
{
    self->wanted = run_id;
    if (self->eval && self->eval->run_id == run_id)
        return;
    start_load(self);
}

gint64 tw_evaluation_view_run(TwEvaluationView *self)
{
    return self->eval ? self->eval->run_id : -1;
}

gboolean tw_evaluation_view_loading(TwEvaluationView *self)
{
    return self->loading != NULL;
}

int tw_evaluation_view_classes(TwEvaluationView *self)
{
    return self->eval ? self->eval->classes : 0;
}

double tw_evaluation_view_count(TwEvaluationView *self, int row, int col)
{
    const EvalData *e = self->eval;
    if (!e || row < 0 || col < 0 || row >= e->classes || col >= e->classes)
        return -1;
    return e->counts[row * e->classes + col];
}

void tw_evaluation_view_select_cell(TwEvaluationView *self, int row, int col)
{
    int k = self->eval ? self->eval->classes : 0;
    if (row < 0 || col < 0 || row >= k || col >= k)
        row = col = -1;
    self->sel_row = row;
    self->sel_col = col;
    fill_examples(self);
    gtk_widget_queue_draw(self->matrix);
}

int tw_evaluation_view_n_examples_shown(TwEvaluationView *self)
{
    return self->n_shown;
}

/* ---- construction ----------------------------------------------------------------------------- */
static void tw_evaluation_view_dispose(GObject *object)
{
    TwEvaluationView *self = TW_EVALUATION_VIEW(object);
    if (self->loading) {
        g_cancellable_cancel(self->loading);
        g_clear_object(&self->loading);
    }
    g_clear_pointer(&self->box, gtk_widget_unparent);
    g_clear_pointer(&self->eval, eval_data_free);
    g_clear_pointer(&self->names, g_hash_table_unref);
    g_clear_pointer(&self->run_ids, g_free);
    g_clear_pointer(&self->path, g_free);
    G_OBJECT_CLASS(tw_evaluation_view_parent_class)->dispose(object);
}

static void tw_evaluation_view_class_init(TwEvaluationViewClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = tw_evaluation_view_dispose;
    gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
}

static GtkWidget *scrolled(GtkWidget *child, gboolean vexpand)
{
    GtkWidget *s = gtk_scrolled_window_new();
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(s), child);
    gtk_widget_set_vexpand(s, vexpand);
    return s;
}

static void tw_evaluation_view_init(TwEvaluationView *self)
{
    self->sel_row = self->sel_col = -1;
    self->wanted = -1;
    self->names = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    self->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    gtk_widget_set_parent(self->box, GTK_WIDGET(self));

    self->bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8);
    gtk_widget_set_margin_start(self->bar, 8);
    gtk_widget_set_margin_top(self->bar, 6);
    gtk_box_append(GTK_BOX(self->bar), gtk_label_new("Run"));
    self->run_names = gtk_string_list_new(NULL);
    self->run_drop = gtk_drop_down_new(G_LIST_MODEL(self->run_names), NULL);
    gtk_widget_set_name(self->run_drop, "evaluation-run");
    gtk_widget_set_tooltip_text(self->run_drop, "The runs that have an evaluation, newest first");
    g_signal_connect(self->run_drop, "notify::selected", G_CALLBACK(on_run_chosen), self);
    gtk_box_append(GTK_BOX(self->bar), self->run_drop);
    self->summary = gtk_label_new("");
    gtk_widget_set_name(self->summary, "evaluation-summary");
    gtk_label_set_ellipsize(GTK_LABEL(self->summary), PANGO_ELLIPSIZE_END);
    gtk_box_append(GTK_BOX(self->bar), self->summary);
    gtk_box_append(GTK_BOX(self->box), self->bar);

    self->matrix = gtk_drawing_area_new();
    gtk_widget_set_name(self->matrix, "evaluation-matrix");
    gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(self->matrix), draw_matrix, self, NULL);
    gtk_widget_set_tooltip_text(self->matrix, "Rows: true class; columns: predicted class. Colours are each row's "
                                              "shares. Click a cell for its examples.");
    GtkGesture *click = gtk_gesture_click_new();
    g_signal_connect(click, "pressed", G_CALLBACK(on_matrix_pressed), self);
    gtk_widget_add_controller(self->matrix, GTK_EVENT_CONTROLLER(click));
    self->per_class = gtk_grid_new();
    gtk_widget_set_name(self->per_class, "evaluation-per-class");
    gtk_grid_set_column_spacing(GTK_GRID(self->per_class), 14);
    gtk_grid_set_row_spacing(GTK_GRID(self->per_class), 2);
    gtk_widget_set_margin_start(self->per_class, 12);
    gtk_widget_set_margin_bottom(self->per_class, 8);
    GtkWidget *left = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8);
    gtk_box_append(GTK_BOX(left), self->matrix);
    gtk_box_append(GTK_BOX(left), self->per_class);

    GtkWidget *right = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    GtkWidget *head = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8);
    self->examples_title = gtk_label_new("");
    gtk_widget_set_name(self->examples_title, "evaluation-examples-title");
    gtk_label_set_xalign(GTK_LABEL(self->examples_title), 0);
    gtk_label_set_wrap(GTK_LABEL(self->examples_title), TRUE);
    gtk_widget_set_hexpand(self->examples_title, TRUE);
    self->all_button = gtk_button_new_with_label("All Examples");
    g_signal_connect(self->all_button, "clicked", G_CALLBACK(on_all_clicked), self);
    gtk_box_append(GTK_BOX(head), self->examples_title);
    gtk_box_append(GTK_BOX(head), self->all_button);
    gtk_widget_set_margin_end(head, 8);
    self->flow = gtk_flow_box_new();
    gtk_widget_set_name(self->flow, "evaluation-examples");
    gtk_flow_box_set_selection_mode(GTK_FLOW_BOX(self->flow), GTK_SELECTION_NONE);
    gtk_flow_box_set_homogeneous(GTK_FLOW_BOX(self->flow), TRUE);
    gtk_widget_set_valign(self->flow, GTK_ALIGN_START);
    gtk_box_append(GTK_BOX(right), head);
    gtk_box_append(GTK_BOX(right), scrolled(self->flow, TRUE));

    self->content = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL);
    gtk_paned_set_start_child(GTK_PANED(self->content), scrolled(left, TRUE));
    gtk_paned_set_end_child(GTK_PANED(self->content), right);
    gtk_paned_set_resize_start_child(GTK_PANED(self->content), FALSE);
    gtk_paned_set_shrink_start_child(GTK_PANED(self->content), TRUE);

    self->placeholder = gtk_label_new("Reading the evaluations…");
    gtk_widget_set_name(self->placeholder, "evaluation-placeholder");
    gtk_label_set_wrap(GTK_LABEL(self->placeholder), TRUE);
    gtk_widget_add_css_class(self->placeholder, "dim-label");
    self->stack = gtk_stack_new();
    gtk_stack_add_child(GTK_STACK(self->stack), self->placeholder);
    gtk_stack_add_child(GTK_STACK(self->stack), self->content);
    gtk_widget_set_vexpand(self->stack, TRUE);
    gtk_box_append(GTK_BOX(self->box), self->stack);
}

GtkWidget *tw_evaluation_view_new(void)
{
    return g_object_new(TW_TYPE_EVALUATION_VIEW, NULL);
}
