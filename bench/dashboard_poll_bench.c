/* twb-dashboard-poll-bench: the CPU time the Dashboard's reader thread
 * (TwDashboardData, ui/dashboard_reader.c) spends on a poll that finds
 * nothing new. A run database of RUNS finished runs x 20 scalar tags (10
 * steps each, written with the summary writer, generated once under DIR
 * and copied for each run of the bench) is opened; once every run is
 * listed, the 20 tags of two runs are watched with a view each (charts on
 * screen), and the process's CPU time (getrusage: every thread, the main
 * loop idle) is taken over SECONDS of polls every 50 ms. Then LIVE runs
 * are opened by writers of this process that write nothing (running,
 * their tags listed again at each poll) and their tags watched too, and
 * the same is measured again.
 *
 *   twb-dashboard-poll-bench [--runs N] [--live N] [--seconds S] [--dir DIR]
 *   (defaults 1000, 4, 3, build/bench-data)
 *
 * Prints: dashboard_poll: finished=X ms running=Y ms CPU per poll (RUNS runs, LIVE running, W watched) */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <tw/engine.h>
#include <tw/summary.h>

#include "dashboard_data.h"

#define TAGS 20
#define STEPS 10
#define POLL_MS 50.0

static void die(const char *what)
{
    fprintf(stderr, "twb-dashboard-poll-bench: %s: %s\n", what, tw_last_error());
    exit(1);
}

static void write_tags(tw_summary_writer *w, int run, int steps)
{
    for (int s = 0; s < steps; s++)
        for (int t = 0; t < TAGS; t++) {
            char tag[32];
            snprintf(tag, sizeof tag, "%s/metric_%02d", t % 2 ? "train" : "validation", t);
            if (tw_summary_scalar(w, tag, 1.0 / (1 + s + run % 7 + t), s))
                die("writing a scalar");
        }
}

static void generate(const char *db, int runs)
{
    if (g_file_test(db, G_FILE_TEST_EXISTS))
        return;
    fprintf(stderr, "generating %s (%d runs x %d tags x %d steps)...\n", db, runs, TAGS, STEPS);
    char *partial = g_strconcat(db, ".partial", NULL);
    g_unlink(partial);
    for (int r = 0; r < runs; r++) {
        char name[32];
        snprintf(name, sizeof name, "run_%04d", r);
        tw_summary_writer *w = tw_summary_writer_open(partial, name, NULL);
        if (!w)
            die("opening a writer");
        write_tags(w, r, STEPS);
        if (tw_summary_writer_close(w, TW_RUN_FINISHED))
            die("closing a writer");
    }
    if (g_rename(partial, db))
        die("renaming the generated file");
    g_free(partial);
}

static gboolean expired(gpointer flag)
{
    *(gboolean *)flag = TRUE;
    return G_SOURCE_REMOVE;
}

static void spin(double seconds)
{
    gboolean late = FALSE;
    g_timeout_add((guint)(seconds * 1000), expired, &late);
    while (!late)
        g_main_context_iteration(NULL, TRUE);
}

/* Until every run is listed and the tag table covers them. */
static void wait_for_runs(TwDashboardData *data, int runs)
{
    gboolean late = FALSE;
    guint timer = g_timeout_add(120000, expired, &late);
    while (!late && (tw_dashboard_data_n_runs(data) < runs || tw_dashboard_data_n_tag_names(data) < TAGS ||
                     tw_dashboard_data_tag_id(data, 0, runs - 1) < 0))
        g_main_context_iteration(NULL, TRUE);
    if (late) {
        fprintf(stderr, "twb-dashboard-poll-bench: waited 120 s for %d runs to be listed\n", runs);
        exit(1);
    }
    g_source_remove(timer);
}

/* A chart per tag of run `index`: watched, with a view of its steps. */
static int watch_run(TwDashboardData *data, int index)
{
    int watched = 0;
    for (int t = 0; t < tw_dashboard_data_n_tag_names(data); t++) {
        gint64 id = tw_dashboard_data_tag_id(data, t, index);
        if (id < 0)
            continue;
        tw_dashboard_data_watch(data, id, TRUE);
        tw_dashboard_data_request_view(data, id, TW_AXIS_STEP, 0, STEPS, 100);
        watched++;
    }
    return watched;
}

static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/* CPU milliseconds per 50 ms poll over `seconds` of idle main loop. */
static double cpu_per_poll(double seconds)
{
    spin(0.5); /* the views asked for are answered */
    double before = cpu_seconds();
    spin(seconds);
    return (cpu_seconds() - before) * 1000.0 / (seconds * 1000.0 / POLL_MS);
}

int main(int argc, char **argv)
{
    int runs = 1000, live = 4;
    double seconds = 3;
    const char *dir = "build/bench-data";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--runs"))
            runs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--live"))
            live = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seconds"))
            seconds = g_ascii_strtod(argv[i + 1], NULL);
        else if (!strcmp(argv[i], "--dir"))
            dir = argv[i + 1];
    }
    if (runs < 2 || live < 0 || seconds <= 0) {
        fprintf(stderr, "usage: twb-dashboard-poll-bench [--runs N>=2] [--live N] [--seconds S] [--dir DIR]\n");
        return 2;
    }
    g_mkdir_with_parents(dir, 0755);
    char *name = g_strdup_printf("dashboard-poll-%dx%d.db", runs, TAGS);
    char *generated = g_build_filename(dir, name, NULL);
    generate(generated, runs);
    /* A copy: the live runs are added to it. */
    char *tmp = g_dir_make_tmp("twb-poll-XXXXXX", NULL), *db = g_build_filename(tmp, name, NULL);
    char *contents;
    gsize length;
    if (!g_file_get_contents(generated, &contents, &length, NULL) || !g_file_set_contents(db, contents, length, NULL))
        die("copying the database");
    g_free(contents);

    TwDashboardData *data = tw_dashboard_data_new(db);
    wait_for_runs(data, runs);
    int watched = watch_run(data, 0) + watch_run(data, 1);
    double finished = cpu_per_poll(seconds);

    tw_summary_writer **writers = g_new0(tw_summary_writer *, MAX(live, 1));
    for (int i = 0; i < live; i++) {
        char run[32];
        snprintf(run, sizeof run, "live_%d", i);
        writers[i] = tw_summary_writer_open(db, run, NULL);
        if (!writers[i])
            die("opening a live writer");
        write_tags(writers[i], i, 1);
        if (tw_summary_flush(writers[i]))
            die("flushing a live writer");
    }
    wait_for_runs(data, runs + live);
    for (int i = 0; i < live; i++)
        watched += watch_run(data, runs + i);
    double running = cpu_per_poll(seconds);

    printf("dashboard_poll: finished=%.3f ms running=%.3f ms CPU per poll (%d runs, %d running, %d watched)\n",
           finished, running, runs, live, watched);
    for (int i = 0; i < live; i++)
        tw_summary_writer_close(writers[i], TW_RUN_FINISHED);
    g_free(writers);
    g_object_unref(data);
    g_unlink(db);
    char *wal = g_strconcat(db, "-wal", NULL), *shm = g_strconcat(db, "-shm", NULL);
    g_unlink(wal);
    g_unlink(shm);
    g_rmdir(tmp);
    g_free(wal);
    g_free(shm);
    g_free(db);
    g_free(tmp);
    g_free(generated);
    g_free(name);
    return 0;
}
