/* The Dashboard's rank lanes (ui/rank_lanes.c) on a stored two-rank run,
 * under Xvfb: one lane per rank with its mean step and allreduce times,
 * none for a run without rank tags, and the lanes gone when the two-rank
 * run is unchecked. */
#include <math.h>
#include <string.h>

#include <glib/gstdio.h>
#include <gtk/gtk.h>

#include <tw/summary.h>

#include "dashboard_view.h"
#include "rank_lanes.h"
#include "run_list.h"
#include "gui_helpers.h"

/* A data-parallel run of two ranks: rank 0 waits 6 ms of its 10 ms steps
 * for rank 1, the straggler, which waits 1 ms; and a plain run. */
static void write_runs(const char *logdb)
{
    tw_summary_writer *w = tw_summary_writer_open(logdb, "dp", NULL);
    g_assert_nonnull(w);
    for (int64_t step = 10; step <= 500; step += 10) {
        tw_summary_scalar(w, "dist/rank_0/step_ms", 10, step);
        tw_summary_scalar(w, "dist/rank_0/allreduce_ms", step % 20 ? 5 : 7, step);
        tw_summary_scalar(w, "dist/rank_1/step_ms", 10, step);
        tw_summary_scalar(w, "dist/rank_1/allreduce_ms", 1, step);
        tw_summary_scalar(w, "train/loss", 1.0 / (double)step, step);
    }
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    w = tw_summary_writer_open(logdb, "single", NULL);
    g_assert_nonnull(w);
    for (int64_t step = 10; step <= 100; step += 10)
        tw_summary_scalar(w, "train/loss", 2.0 / (double)step, step);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
}

typedef struct {
    TwRankLanes *lanes;
    const char *expected[2];
} lanes_check;

static gboolean lanes_read(gpointer data)
{
    lanes_check *c = data;
    if (tw_rank_lanes_n_lanes(c->lanes) != 2)
        return FALSE;
    for (int i = 0; i < 2; i++) {
        char *text = tw_rank_lanes_lane_text(c->lanes, i);
        gboolean same = !g_strcmp0(text, c->expected[i]);
        g_free(text);
        if (!same)
            return FALSE;
    }
    return TRUE;
}

static gboolean lanes_hidden(gpointer data)
{
    return !gtk_widget_get_visible(GTK_WIDGET(data)) && tw_rank_lanes_n_lanes(data) == 0;
}

static gboolean has_runs(gpointer data)
{
    return tw_dashboard_data_n_runs(data) == 2;
}

static void test_two_ranks(void)
{
    GError *error = NULL;
    char *dir = g_dir_make_tmp("twb-rank-lanes-XXXXXX", &error);
    g_assert_no_error(error);
    char *logdb = g_build_filename(dir, "runs.db", NULL);
    write_runs(logdb);
    GtkWidget *window = gtk_window_new();
    gtk_window_set_default_size(GTK_WINDOW(window), 1280, 800);
    GtkWidget *view = tw_dashboard_view_new(logdb);
    gtk_window_set_child(GTK_WINDOW(window), view);
    gtk_window_present(GTK_WINDOW(window));
    TwDashboardData *data = tw_dashboard_view_data(TW_DASHBOARD_VIEW(view));
    wait_until(has_runs, data, 10, "the two runs");
    TwRankLanes *lanes = TW_RANK_LANES(find_type(view, TW_TYPE_RANK_LANES));
    g_assert_nonnull(lanes);
    TwRunList *runs = TW_RUN_LIST(find_type(view, TW_TYPE_RUN_LIST));
    gint64 dp = -1;
    for (int i = 0; i < tw_dashboard_data_n_runs(data); i++)
        if (!strcmp(tw_dashboard_data_run(data, i)->name, "dp"))
            dp = tw_dashboard_data_run(data, i)->id;
    tw_run_list_set_checked(runs, dp, TRUE);
    /* rank 0's waits alternate 5 and 7 ms: 6 on average. */
    lanes_check check = {lanes, {"dp rank 0: step 10 ms, allreduce 6 ms", "dp rank 1: step 10 ms, allreduce 1 ms"}};
    wait_until(lanes_read, &check, 10, "two lanes with the stored times");
    g_assert_true(gtk_widget_get_visible(GTK_WIDGET(lanes)));
    tw_run_list_set_checked(runs, dp, FALSE);
    wait_until(lanes_hidden, lanes, 10, "the lanes gone with the two-rank run unchecked");
    gtk_window_destroy(GTK_WINDOW(window));
    char *wal = g_strconcat(logdb, "-wal", NULL), *shm = g_strconcat(logdb, "-shm", NULL);
    g_remove(wal);
    g_remove(shm);
    g_remove(logdb);
    g_rmdir(dir);
    g_free(wal);
    g_free(shm);
    g_free(logdb);
    g_free(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!gtk_init_check()) {
        g_test_skip("no display");
        return 77;
    }
    g_test_add_func("/ui/rank-lanes/two-ranks", test_two_ranks);
    return g_test_run();
}
