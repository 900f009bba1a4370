/* twb-logdir-open-bench: a TensorBoard log directory of many runs opened in
 * the Dashboard (tw_dashboard_view_open_logdir, what `twb --logdir DIR`
 * does), timed from the call to the end of the first frame that draws a
 * chart with points, and to the frame after which every run is listed.
 * The directory (RUNS runs x TAGS scalar tags x STEPS steps, written with
 * tw/tfevents.h's writer) is generated once under DIR and reused. Needs a
 * display: bench/run logdir_open runs it under xvfb-run.
 *
 *   twb-logdir-open-bench [--runs N] [--tags N] [--steps N] [--dir DIR] [--first-chart-only 1]
 *   (defaults 1000, 20, 10, build/bench-data/logdir-RUNSxTAGSxSTEPS; with
 *   --first-chart-only 1 it stops at the first chart, all_runs then -1)
 *
 * The window draws with the renderer twb would pick (app/renderer_choice.c:
 * Cairo where GL is Mesa's software one, as under Xvfb): timed with GL on
 * llvmpipe each frame took about 300 ms on the loaded build machine, which
 * twb itself never pays.
 *
 * Prints: logdir_open: first_chart=S s all_runs=S s runs=N tags=N steps=N: target 1 s met|missed
 * (first run in the file S s, listed S s, first card built S s) */
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tw/engine.h>
#include <tw/tfevents.h>

#include "chart_card.h"
#include "renderer_choice.h"
#include "dashboard_data.h"
#include "dashboard_view.h"
#include "tag_sections.h"
#include "widget_tree.h"

#define TARGET_S 1.0
#define GIVE_UP_S 300.0

static int generate(const char *dir, int runs, int tags, int steps)
{
    char *done = g_build_filename(dir, ".complete", NULL);
    gboolean exists = g_file_test(done, G_FILE_TEST_EXISTS);
    if (exists) {
        g_free(done);
        return 0;
    }
    fprintf(stderr, "generating %s (%d runs x %d tags x %d steps)...\n", dir, runs, tags, steps);
    for (int r = 0; r < runs; r++) {
        char *run = g_strdup_printf("%s/run_%04d", dir, r);
        tw_tb_writer *w = tw_tb_writer_open(run);
        g_free(run);
        if (!w)
            return -1;
        for (int s = 0; s < steps; s++)
            for (int t = 0; t < tags; t++) {
                char tag[32];
                snprintf(tag, sizeof tag, "%s/metric_%02d", t % 2 ? "train" : "validation", t);
                if (tw_tb_write_scalar(w, tag, s, 1.7e9 + r * 100 + s, 1.0 / (1 + s + r % 7 + t)))
                    return -1;
            }
        if (tw_tb_writer_close(w))
            return -1;
    }
    g_file_set_contents(done, "", 0, NULL);
    g_free(done);
    return 0;
}

typedef struct {
    TwDashboardView *view;
    GtkWidget *scalars;
    gint64 start;
    double first_run, first_card, first_chart, all_runs;
    double first_in_file; /* the follower's first run row, seen by a reader of our own */
    int runs;
    gboolean chart_seen; /* a chart with points was built; the frame ending now draws it */
} bench;

static void card_has_points(const char *key, GtkWidget *card, gpointer data)
{
    gboolean *found = data;
    int n = 0;
    const gint64 *ids = tw_chart_card_tag_ids(TW_CHART_CARD(card), &n);
    TwDashboardData *d = g_object_get_data(G_OBJECT(card), "bench-data");
    for (int i = 0; i < n && !*found && d; i++) {
        const TwSeriesView *v = tw_dashboard_data_series_view(d, ids[i]);
        *found = v && v->count > 0;
    }
}

static void tag_data(const char *key, GtkWidget *card, gpointer data)
{
    g_object_set_data(G_OBJECT(card), "bench-data", data);
}

static void after_paint(GdkFrameClock *clock, bench *b)
{
    double now = (double)(g_get_monotonic_time() - b->start) / 1e6;
    TwDashboardData *d = tw_dashboard_view_data(b->view);
    if (b->first_chart < 0) {
        /* The check is made after the frame: a chart found now was drawn
         * in it if its points arrived before (the frame that follows
         * draws it otherwise: counted at the next check). */
        if (b->chart_seen)
            b->first_chart = now;
        tw_tag_sections_foreach(TW_TAG_SECTIONS(b->scalars), tag_data, d);
        gboolean found = FALSE;
        tw_tag_sections_foreach(TW_TAG_SECTIONS(b->scalars), card_has_points, &found);
        b->chart_seen = found;
    }
    if (b->first_in_file < 0) {
        tw_run_store *s = tw_run_store_open(tw_dashboard_data_path(d), TW_STORE_READ_ONLY);
        tw_run_info *runs = NULL;
        int n = 0;
        if (s && tw_run_store_list_runs(s, &runs, &n) == 0 && n > 0)
            b->first_in_file = now;
        tw_run_info_free(runs, n);
        tw_run_store_close(s);
        tw_error_clear();
    }
    if (b->first_run < 0 && tw_dashboard_data_n_runs(d) > 0)
        b->first_run = now;
    if (b->first_card < 0 && tw_tag_sections_n_built(TW_TAG_SECTIONS(b->scalars)) > 0)
        b->first_card = now;
    if (b->all_runs < 0 && tw_dashboard_data_n_runs(d) >= b->runs)
        b->all_runs = now;
    gtk_widget_queue_draw(GTK_WIDGET(b->view)); /* keep frames coming */
}

int main(int argc, char **argv)
{
    int runs = 1000, tags = 20, steps = 10;
    const char *dir_arg = NULL;
    gboolean first_chart_only = FALSE;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--runs"))
            runs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--tags"))
            tags = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--steps"))
            steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--dir"))
            dir_arg = argv[i + 1];
        else if (!strcmp(argv[i], "--first-chart-only"))
            first_chart_only = atoi(argv[i + 1]) != 0;
        else {
            fprintf(stderr, "twb-logdir-open-bench: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (runs < 1 || tags < 1 || steps < 1) {
        fputs("twb-logdir-open-bench: --runs, --tags and --steps take positive numbers\n", stderr);
        return 2;
    }
    char *dir = dir_arg ? g_strdup(dir_arg) : g_strdup_printf("build/bench-data/logdir-%dx%dx%d", runs, tags, steps);
    if (generate(dir, runs, tags, steps)) {
        fprintf(stderr, "twb-logdir-open-bench: %s\n", tw_last_error());
        return 1;
    }
    gtk_init();
    twb_choose_renderer();
    GtkWidget *window = gtk_window_new();
    gtk_window_set_default_size(GTK_WINDOW(window), 1280, 800);
    bench b = {.first_run = -1, .first_card = -1, .first_chart = -1, .all_runs = -1, .first_in_file = -1, .runs = runs};
    b.view = TW_DASHBOARD_VIEW(tw_dashboard_view_new(NULL));
    gtk_window_set_child(GTK_WINDOW(window), GTK_WIDGET(b.view));
    gtk_window_present(GTK_WINDOW(window));
    while (!gtk_widget_get_mapped(window))
        g_main_context_iteration(NULL, TRUE);
    b.scalars = find_named(GTK_WIDGET(b.view), "scalars");
    g_signal_connect(gtk_widget_get_frame_clock(window), "after-paint", G_CALLBACK(after_paint), &b);
    GError *error = NULL;
    b.start = g_get_monotonic_time();
    if (!tw_dashboard_view_open_logdir(b.view, dir, &error)) {
        fprintf(stderr, "twb-logdir-open-bench: %s\n", error->message);
        return 1;
    }
    while ((b.first_chart < 0 || (b.all_runs < 0 && !first_chart_only)) &&
           (g_get_monotonic_time() - b.start) / 1e6 < GIVE_UP_S)
        g_main_context_iteration(NULL, TRUE);
    printf("logdir_open: first_chart=%.3f s all_runs=%.3f s runs=%d tags=%d steps=%d: target %g s %s "
           "(first run in the file %.3f s, listed %.3f s, first card built %.3f s)\n",
           b.first_chart, b.all_runs, runs, tags, steps, TARGET_S,
           b.first_chart >= 0 && b.first_chart <= TARGET_S ? "met" : "missed", b.first_in_file, b.first_run, b.first_card);
    gtk_window_destroy(GTK_WINDOW(window));
    g_free(dir);
    return 0;
}
