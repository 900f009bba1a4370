/* The Evaluation tab: the confusion matrix renderer drawn into an image
 * (row-normalised colours, the selected cell, hits), and, under Xvfb, the
 * Dashboard's tab on stored evaluations (tw/evaluation.h): the newest
 * evaluated run shown, its counts, per-class figures and examples; a
 * cell's examples only; another run from the drop-down; a run evaluated
 * again showing its newest evaluation; non-image data as rows of values;
 * a file with no evaluation saying so; the run list's Evaluate
 * (app/evaluate_action.c) on a run trained by `twb train`. */
#include <math.h>
#include <string.h>

#include <glib/gstdio.h>
#include <gtk/gtk.h>

#include <tw/evaluation.h>
#include <tw/summary.h>

#include "dashboard_view.h"
#include "evaluate_action.h"
#include "evaluation_render.h"
#include "evaluation_view.h"
#include "gui_helpers.h"

/* ---- the renderer ------------------------------------------------------------------------------ */
static const double counts3[] = {8, 2, 0, /**/ 1, 1, 0, /**/ 0, 0, 5};

static void pixel(cairo_surface_t *s, double x, double y, double rgb[3])
{
    cairo_surface_flush(s);
    const unsigned char *data = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    uint32_t p = *(const uint32_t *)(data + (int)y * stride + (int)x * 4);
    rgb[0] = ((p >> 16) & 255) / 255.0;
    rgb[1] = ((p >> 8) & 255) / 255.0;
    rgb[2] = (p & 255) / 255.0;
}

static void test_render(void)
{
    const char *names[] = {"cat", "dog", "emu"};
    tw_confusion_plot plot = {.classes = 3, .counts = counts3, .names = names, .selected_row = -1,
                              .selected_col = -1};
    int w = 400, h = 360;
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
    cairo_t *cr = cairo_create(s);
    tw_confusion_render(cr, w, h, &plot);
    /* row-normalised: (0, 0) is 8/10 of its row, (1, 1) 1/2 of its, (2, 2)
     * all of its: (2, 2) the deepest blue, then (0, 0), then (1, 1); a
     * corner of each cell (clear of its count's digits) has the fill. */
    double x, y, c00[3], c11[3], c22[3], c01[3], c02[3];
    tw_confusion_cell_center(w, h, &plot, 0, 0, &x, &y);
    double cell = 0;
    {
        double x1, y1;
        tw_confusion_cell_center(w, h, &plot, 1, 1, &x1, &y1);
        cell = x1 - x;
    }
    g_assert_cmpfloat(cell, >, 20);
#define CORNER(r, c, out)                                                     \
    do {                                                                      \
        tw_confusion_cell_center(w, h, &plot, r, c, &x, &y);                  \
        pixel(s, x - cell * 0.4, y - cell * 0.4, out);                        \
    } while (0)
    CORNER(0, 0, c00);
    CORNER(1, 1, c11);
    CORNER(2, 2, c22);
    CORNER(0, 1, c01);
    CORNER(0, 2, c02);
    g_assert_cmpfloat(c22[0], <, c00[0]); /* less red, more blue: deeper */
    g_assert_cmpfloat(c00[0], <, c11[0]);
    g_assert_cmpfloat(c22[2], >, c22[0] + 0.3);
    g_assert_cmpfloat(c01[0], >, c01[2] + 0.1); /* a mistake is red */
    /* an empty cell is the background */
    tw_rgb expect = tw_confusion_cell_color(&plot, 0, 2);
    g_assert_cmpfloat_with_epsilon(c02[0], expect.r, 0.01);
    g_assert_cmpfloat_with_epsilon(c02[1], expect.g, 0.01);
    tw_rgb c = tw_confusion_cell_color(&plot, 0, 0);
    g_assert_cmpfloat_with_epsilon(c00[0], c.r, 0.01);
    g_assert_cmpfloat_with_epsilon(c00[2], c.b, 0.01);
    /* hits: each cell's centre is that cell; the labels' margin none */
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) {
            int hr, hc;
            tw_confusion_cell_center(w, h, &plot, r, k, &x, &y);
            g_assert_true(tw_confusion_hit(w, h, &plot, x, y, &hr, &hc));
            g_assert_cmpint(hr, ==, r);
            g_assert_cmpint(hc, ==, k);
        }
    int hr, hc;
    g_assert_false(tw_confusion_hit(w, h, &plot, 5, 5, &hr, &hc));
    /* the selected cell gets an outline in the text's colour */
    plot.selected_row = 0;
    plot.selected_col = 1;
    tw_confusion_render(cr, w, h, &plot);
    double edge[3];
    tw_confusion_cell_center(w, h, &plot, 0, 1, &x, &y);
    pixel(s, x, y - cell / 2 + 2.5, edge);
    g_assert_cmpfloat(edge[0] + edge[1] + edge[2], <, 1.0);
    cairo_destroy(cr);
    cairo_surface_destroy(s);
}

/* ---- the tab ------------------------------------------------------------------------------------ */
typedef struct {
    char *dir, *logdb;
    GtkWidget *window, *dashboard;
    TwEvaluationView *view;
} fixture;

/* A run "name" evaluated on six 2x2 gray images (three classes, as in
 * test_data_evaluation): confusion rows [1 1 0] [1 1 0] [0 0 2]. With
 * values, on rows of 20 values instead of images. */
static void write_run(const char *logdb, const char *name, gboolean values, gboolean annotate, int64_t step)
{
    static const float probs[] = {.7f, .2f, .1f, .1f, .8f, .1f, .2f, .6f, .2f,
                                  .5f, .3f, .2f, .1f, .1f, .8f, .3f, .3f, .4f};
    static const int64_t labels[] = {0, 0, 1, 1, 2, 2};
    tw_tensor *out = tw_tensor_from_data(probs, TW_FLOAT32, 2, (int64_t[]){6, 3});
    tw_tensor *y = tw_tensor_from_data(labels, TW_INT64, 1, (int64_t[]){6});
    float x[6 * 20];
    for (int i = 0; i < 6 * 20; i++)
        x[i] = values ? (float)i : (float)(i / 4) / 10.0f;
    tw_tensor *xt = values ? tw_tensor_from_data(x, TW_FLOAT32, 2, (int64_t[]){6, 20})
                           : tw_tensor_from_data(x, TW_FLOAT32, 4, (int64_t[]){6, 2, 2, 1});
    tw_evaluation e;
    g_assert_cmpint(tw_evaluation_compute(out, y, TW_EVALUATION_PER_CELL, &e), ==, 0);
    tw_summary_writer *w = tw_summary_writer_open(logdb, name, &(tw_summary_run_options){.annotate = annotate});
    g_assert_nonnull(w);
    const char *names[] = {"cat", "dog", "emu"};
    g_assert_cmpint(tw_evaluation_log(w, &e, xt, values ? NULL : names, step), ==, 0);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    tw_evaluation_clear(&e);
    tw_tensor_unref(out);
    tw_tensor_unref(y);
    tw_tensor_unref(xt);
}

static void plain_run(const char *logdb, const char *name)
{
    tw_summary_writer *w = tw_summary_writer_open(logdb, name, NULL);
    tw_summary_scalar(w, "train/loss", 1, 0);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
}

static gboolean loaded(gpointer view)
{
    return !tw_evaluation_view_loading(view);
}

static void fixture_open(fixture *f)
{
    f->logdb = scratch_logdb("twb-evaluation-XXXXXX", &f->dir);
}

static void fixture_show(fixture *f)
{
    f->window = dashboard_window_open(f->logdb, "evaluation", &f->dashboard);
    f->view = TW_EVALUATION_VIEW(find_type(f->dashboard, TW_TYPE_EVALUATION_VIEW));
    g_assert_nonnull(f->view);
    wait_until(loaded, f->view, 10, "the evaluation read");
}

static void fixture_close(fixture *f)
{
    scratch_close(f->window, f->dir, f->logdb);
}

static const char *label_text(GtkWidget *root, const char *name)
{
    GtkWidget *w = find_named(root, name);
    g_assert_nonnull(w);
    return gtk_label_get_text(GTK_LABEL(w));
}

/* The per-class grid's cell at (column, row), row 0 the header. */
static const char *grid_text(GtkWidget *root, int column, int row)
{
    GtkWidget *grid = find_named(root, "evaluation-per-class");
    GtkWidget *cell = gtk_grid_get_child_at(GTK_GRID(grid), column, row);
    g_assert_nonnull(cell);
    return gtk_label_get_text(GTK_LABEL(cell));
}

static int n_flow_children(GtkWidget *root)
{
    int n = 0;
    for (GtkWidget *c = gtk_widget_get_first_child(find_named(root, "evaluation-examples")); c;
         c = gtk_widget_get_next_sibling(c))
        n++;
    return n;
}

static void test_tab(void)
{
    fixture f = {0};
    fixture_open(&f);
    plain_run(f.logdb, "no-eval");
    write_run(f.logdb, "old", FALSE, FALSE, 3);
    write_run(f.logdb, "new", FALSE, FALSE, 5);
    fixture_show(&f);
    GtkWidget *root = GTK_WIDGET(f.view);
    /* the newest evaluated run */
    g_assert_cmpint(tw_evaluation_view_run(f.view), ==, run_id_of(f.logdb, "new"));
    g_assert_cmpint(tw_evaluation_view_classes(f.view), ==, 3);
    static const double confusion[] = {1, 1, 0, 1, 1, 0, 0, 0, 2};
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            g_assert_cmpfloat(tw_evaluation_view_count(f.view, r, c), ==, confusion[r * 3 + c]);
    g_assert_nonnull(strstr(label_text(root, "evaluation-summary"), "accuracy 66.67% on 6 test examples"));
    g_assert_nonnull(strstr(label_text(root, "evaluation-summary"), "step 5"));
    g_assert_cmpstr(grid_text(root, 0, 1), ==, "cat");
    g_assert_cmpstr(grid_text(root, 1, 1), ==, "0.500"); /* precision */
    g_assert_cmpstr(grid_text(root, 3, 3), ==, "1.000"); /* emu's F1 */
    g_assert_cmpstr(grid_text(root, 4, 2), ==, "2");     /* dog's support */
    /* all six examples, misclassified first: e1 "dog, not cat" */
    g_assert_cmpint(tw_evaluation_view_n_examples_shown(f.view), ==, 6);
    g_assert_cmpint(n_flow_children(root), ==, 6);
    GtkWidget *first = gtk_widget_get_first_child(find_named(root, "evaluation-examples"));
    GtkWidget *pic = find_type(first, GTK_TYPE_IMAGE);
    g_assert_nonnull(pic);
    GdkPaintable *texture = gtk_image_get_paintable(GTK_IMAGE(pic));
    g_assert_cmpint(gdk_paintable_get_intrinsic_width(texture), ==, 2);
    GtkWidget *caption = find_type(first, GTK_TYPE_LABEL);
    g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(caption)), ==, "dog, not cat · 80%");
    /* a cell: only its examples */
    tw_evaluation_view_select_cell(f.view, 2, 2);
    g_assert_cmpint(tw_evaluation_view_n_examples_shown(f.view), ==, 2);
    g_assert_nonnull(strstr(label_text(root, "evaluation-examples-title"), "True emu, predicted emu: 2 examples, 2 stored"));
    tw_evaluation_view_select_cell(f.view, 1, 0);
    g_assert_cmpint(tw_evaluation_view_n_examples_shown(f.view), ==, 1);
    tw_evaluation_view_select_cell(f.view, 0, 2); /* an empty cell */
    g_assert_cmpint(tw_evaluation_view_n_examples_shown(f.view), ==, 0);
    tw_evaluation_view_select_cell(f.view, -1, -1);
    g_assert_cmpint(tw_evaluation_view_n_examples_shown(f.view), ==, 6);
    /* the drop-down lists the two evaluated runs, newest first; choosing the other shows it */
    GtkDropDown *drop = GTK_DROP_DOWN(find_named(root, "evaluation-run"));
    GListModel *model = gtk_drop_down_get_model(drop);
    g_assert_cmpint(g_list_model_get_n_items(model), ==, 2);
    g_assert_cmpstr(gtk_string_list_get_string(GTK_STRING_LIST(model), 0), ==, "new");
    g_assert_cmpint(gtk_drop_down_get_selected(drop), ==, 0);
    gtk_drop_down_set_selected(drop, 1);
    wait_until(loaded, f.view, 10, "the other run's evaluation");
    g_assert_cmpint(tw_evaluation_view_run(f.view), ==, run_id_of(f.logdb, "old"));
    g_assert_nonnull(strstr(label_text(root, "evaluation-summary"), "step 3"));
    /* "old" evaluated again, as non-image data, at the same step: the newest is shown */
    write_run(f.logdb, "old", TRUE, TRUE, 3);
    tw_evaluation_view_sync(f.view, tw_dashboard_view_data(TW_DASHBOARD_VIEW(f.dashboard)));
    wait_until(loaded, f.view, 10, "the evaluation read again");
    g_assert_cmpint(tw_evaluation_view_run(f.view), ==, run_id_of(f.logdb, "old"));
    g_assert_cmpint(tw_evaluation_view_n_examples_shown(f.view), ==, 6);
    first = gtk_widget_get_first_child(find_named(root, "evaluation-examples"));
    g_assert_null(find_type(first, GTK_TYPE_IMAGE));
    GtkWidget *values = find_type(first, GTK_TYPE_LABEL);
    g_assert_true(g_str_has_prefix(gtk_label_get_text(GTK_LABEL(values)), "20  21  22"));
    /* stored without names: the run's earlier names stay (the classes are the data's) */
    g_assert_cmpstr(grid_text(root, 0, 1), ==, "cat");
    fixture_close(&f);
}

static void test_none(void)
{
    fixture f = {0};
    fixture_open(&f);
    plain_run(f.logdb, "no-eval");
    write_run(f.logdb, "values", TRUE, FALSE, 0);
    fixture_show(&f);
    /* names never stored: numbered */
    g_assert_cmpstr(grid_text(GTK_WIDGET(f.view), 0, 1), ==, "class 0");
    fixture_close(&f);

    fixture_open(&f);
    plain_run(f.logdb, "no-eval");
    fixture_show(&f);
    g_assert_cmpint(tw_evaluation_view_run(f.view), ==, -1);
    g_assert_nonnull(strstr(label_text(GTK_WIDGET(f.view), "evaluation-placeholder"), "No run has an evaluation yet"));
    g_assert_true(gtk_widget_get_mapped(find_named(GTK_WIDGET(f.view), "evaluation-placeholder")));

    /* a damaged evaluation: a matrix that is not square, said with the file */
    tw_summary_writer *w = tw_summary_writer_open(f.logdb, "bad", NULL);
    tw_tensor *m = tw_zeros(TW_INT64, 2, (int64_t[]){2, 3});
    g_assert_cmpint(tw_summary_tensor(w, TW_EVAL_TAG_CONFUSION, m, 0), ==, 0);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    tw_tensor_unref(m);
    tw_evaluation_view_sync(f.view, tw_dashboard_view_data(TW_DASHBOARD_VIEW(f.dashboard)));
    wait_until(loaded, f.view, 10, "the damaged evaluation read");
    g_assert_cmpint(tw_evaluation_view_run(f.view), ==, -1);
    const char *message = label_text(GTK_WIDGET(f.view), "evaluation-placeholder");
    g_assert_nonnull(strstr(message, "the confusion matrix is 2 x 3, not square"));
    g_assert_nonnull(strstr(message, f.logdb));
    fixture_close(&f);
}

/* A run trained by twb with its checkpoint where the window keeps them:
 * evaluated from its stored model, settings and checkpoint. */
static void test_evaluate_action(void)
{
    fixture f = {0};
    fixture_open(&f);
    char *model = g_build_filename(f.dir, "sp.json", NULL), *ck = g_build_filename(f.dir, "ck", NULL);
    g_assert_true(g_file_set_contents(
        model,
        "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"sp\", \"layers\": [{\"class_name\": \"Dense\", "
        "\"config\": {\"name\": \"d\", \"units\": 8, \"activation\": \"relu\", \"batch_input_shape\": [null, 2]}}, "
        "{\"class_name\": \"Dense\", \"config\": {\"name\": \"out\", \"units\": 2, \"activation\": \"softmax\"}}]}}",
        -1, NULL));
    const char *twb = g_getenv("TWB");
    g_assert_nonnull(twb);
    char *argv[] = {(char *)twb, "train", model, "--data", "spirals", "--logdb", f.logdb, "--run", "r",
                    "--checkpoint-dir", ck, NULL};
    int status;
    g_assert_true(g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                               NULL, NULL, &status, NULL));
    g_assert_cmpint(status, ==, 0);
    char *src = g_build_filename(ck, "checkpoint.safetensors", NULL), *dir = g_build_filename(f.dir, "checkpoints", NULL);
    char *dst = g_build_filename(dir, "r.safetensors", NULL);
    g_mkdir(dir, 0700);
    g_assert_cmpint(g_rename(src, dst), ==, 0);
    plain_run(f.logdb, "no-checkpoint");

    tw_run_store *store = tw_run_store_open(f.logdb, 0);
    tw_run_info info;
    g_assert_cmpint(tw_run_store_get_run(store, "r", &info), ==, 0);
    /* twb train stored one at its end, at the step training reached */
    tw_stored_tensor t;
    g_assert_cmpint(tw_run_store_read_tensor(store, info.id, TW_EVAL_TAG_CONFUSION, &t), ==, 1);
    int64_t trained_step = t.step;
    g_assert_cmpint(trained_step, >, 0);
    tw_stored_tensor_clear(&t);
    tw_run_store_close(store);
    g_assert_cmpint(twb_evaluate_stored_run(f.logdb, "r"), ==, 0);
    store = tw_run_store_open(f.logdb, TW_STORE_READ_ONLY);
    int64_t *ids;
    int n;
    g_assert_cmpint(tw_run_store_runs_with_tensor(store, TW_EVAL_TAG_CONFUSION, &ids, &n), ==, 0);
    g_assert_cmpint(n, ==, 1);
    g_assert_cmpint(ids[0], ==, info.id);
    gint64 info_id = info.id;
    g_free(ids);
    g_assert_cmpint(tw_run_store_read_tensor(store, info.id, TW_EVAL_TAG_CONFUSION, &t), ==, 1);
    g_assert_cmpint(t.dims[0], ==, 2);
    /* the action's is the newest, at the run's last step, though the model
     * read back from the checkpoint has no optimizer */
    g_assert_cmpint(t.step, ==, trained_step);
    tw_stored_tensor_clear(&t);
    tw_run_info after;
    g_assert_cmpint(tw_run_store_get_run(store, "r", &after), ==, 0);
    g_assert_cmpfloat(after.end_time, ==, info.end_time);
    tw_run_info_clear(&after);
    tw_run_info_clear(&info);
    tw_run_store_close(store);

    g_assert_cmpint(twb_evaluate_stored_run(f.logdb, "no-checkpoint"), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "run 'no-checkpoint' has no"));
    g_assert_cmpint(twb_evaluate_stored_run(f.logdb, "absent"), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "absent"));

    g_remove(dst);
    g_rmdir(dir);
    g_rmdir(ck);
    g_remove(model);
    g_free(src);
    g_free(dst);
    g_free(dir);
    g_free(model);
    g_free(ck);
    /* the tab says the step the model reached */
    fixture_show(&f);
    g_assert_cmpint(tw_evaluation_view_run(f.view), ==, info_id);
    char *step = g_strdup_printf("step %lld", (long long)trained_step);
    g_assert_nonnull(strstr(label_text(GTK_WIDGET(f.view), "evaluation-summary"), step));
    g_free(step);
    fixture_close(&f);
}

int main(int argc, char **argv)
{
    gtk_test_init(&argc, &argv, NULL);
    g_test_add_func("/ui/evaluation/render", test_render);
    g_test_add_func("/ui/evaluation/tab", test_tab);
    g_test_add_func("/ui/evaluation/none", test_none);
    g_test_add_func("/ui/evaluation/evaluate-action", test_evaluate_action);
    return g_test_run();
}
