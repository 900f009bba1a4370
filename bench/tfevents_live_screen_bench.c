/* twb-tfevents-live-screen-bench: how soon a scalar that another process
 * appends to a TensorBoard event file is on screen, the whole way: a
 * Python writer of our own (tests/tb_write.py on Debian's python3-protobuf,
 * SummaryWriter-style simple_value events with masked CRC-32C framing)
 * appends to a file of a log directory that a window's Dashboard follows
 * (tw_dashboard_view_open_logdir, what `twb --logdir DIR` does); timed from
 * the moment the writer starts the append until the end of the frame that
 * paints the chart with the new point (tw_chart_view_points_shown, read
 * after each frame's paint). The writer appends when asked, at random
 * moments, so every phase of the follower's and the Dashboard's timers is
 * met. The window draws with the renderer twb would pick
 * (app/renderer_choice.c). Needs a display: bench/run tfevents_live_screen
 * runs it under xvfb-run.
 *
 *   twb-tfevents-live-screen-bench [--dir DIR] [--events N]
 *   (defaults build/bench-data, 50)
 *
 * Prints: tfevents_live_screen: median=X ms max=Y ms of N events: target 100 ms met|missed */
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tw/engine.h>

#include "chart_card.h"
#include "dashboard_view.h"
#include "renderer_choice.h"
#include "tag_sections.h"

#define TARGET_MS 100.0
#define WAIT_S 30.0 /* for one point: the benchmark fails past it */

typedef struct {
    GtkWidget *scalars;
    TwChartView *chart; /* the card of "loss", once built */
    int64_t expected;   /* points the chart must show */
    gint64 shown;       /* the end of the frame that showed them, or 0 */
    GString *answer;    /* the writer's output not yet read as lines */
    gint64 written;     /* the writer's last time, or 0 */
} bench;

static void after_paint(GdkFrameClock *clock, bench *b)
{
    if (!b->chart) {
        GtkWidget *card = tw_tag_sections_card(TW_TAG_SECTIONS(b->scalars), "loss");
        if (card)
            b->chart = tw_chart_card_chart(TW_CHART_CARD(card));
    }
    if (b->chart && !b->shown && tw_chart_view_points_shown(b->chart) >= b->expected)
        b->shown = g_get_monotonic_time();
}

static gboolean on_answer(gint fd, GIOCondition condition, gpointer data)
{
    bench *b = data;
    char buffer[256];
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) {
        fputs("twb-tfevents-live-screen-bench: the writer (tests/tb_write.py) stopped\n", stderr);
        exit(1);
    }
    g_string_append_len(b->answer, buffer, n);
    char *end;
    while ((end = strchr(b->answer->str, '\n'))) {
        b->written = g_ascii_strtoll(b->answer->str, NULL, 10);
        g_string_erase(b->answer, 0, end - b->answer->str + 1);
    }
    return G_SOURCE_CONTINUE;
}

/* Runs the main loop until the point is on screen and the writer said
 * when it wrote it. */
static void wait_for_point(bench *b, const char *what)
{
    gint64 give_up = g_get_monotonic_time() + (gint64)(WAIT_S * 1e6);
    while (!(b->shown && b->written) && g_get_monotonic_time() < give_up)
        g_main_context_iteration(NULL, TRUE);
    if (!(b->shown && b->written)) {
        fprintf(stderr, "twb-tfevents-live-screen-bench: waited %.0f s for %s\n", WAIT_S, what);
        exit(1);
    }
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

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void ask(FILE *to_writer, bench *b, int step)
{
    b->expected = step + 1;
    b->shown = 0;
    b->written = 0;
    fprintf(to_writer, "loss %d %.6f\n", step, 1.0 / (1 + step));
    fflush(to_writer);
}

int main(int argc, char **argv)
{
    const char *dir = "build/bench-data";
    int events = 50;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--dir"))
            dir = argv[i + 1];
        else if (!strcmp(argv[i], "--events"))
            events = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "twb-tfevents-live-screen-bench: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (events < 1) {
        fputs("twb-tfevents-live-screen-bench: --events takes a positive number\n", stderr);
        return 2;
    }
    char *logdir = g_build_filename(dir, "tfevents-live-screen", NULL), *run = g_build_filename(logdir, "live", NULL);
    char *file = g_build_filename(run, "events.out.tfevents.1700000000.live", NULL);
    char *cache = g_build_filename(dir, "tfevents-live-screen-cache", NULL);
    g_mkdir_with_parents(run, 0755);
    g_unlink(file);
    /* The window follows the directory into a database under the cache:
     * one of the benchmark's own, rebuilt at each opening anyway. */
    g_setenv("XDG_CACHE_HOME", cache, TRUE);

    char *writer[] = {"/usr/bin/python3", TW_SOURCE_DIR "/tests/tb_write.py", "serve", file, NULL};
    int to_fd, from_fd;
    GPid pid;
    GError *error = NULL;
    if (!g_spawn_async_with_pipes(NULL, writer, NULL, G_SPAWN_DEFAULT, NULL, NULL, &pid, &to_fd, &from_fd, NULL,
                                  &error)) {
        fprintf(stderr, "twb-tfevents-live-screen-bench: cannot start tests/tb_write.py: %s\n", error->message);
        return 1;
    }
    FILE *to_writer = fdopen(to_fd, "w");
    bench b = {.answer = g_string_new(NULL)};
    g_unix_fd_add(from_fd, G_IO_IN | G_IO_HUP, on_answer, &b);
    ask(to_writer, &b, 0); /* the file, with its file_version record and a first point */
    while (!b.written)
        g_main_context_iteration(NULL, TRUE);

    gtk_init();
    twb_choose_renderer();
    GtkWidget *window = gtk_window_new();
    gtk_window_set_default_size(GTK_WINDOW(window), 1280, 800);
    TwDashboardView *view = TW_DASHBOARD_VIEW(tw_dashboard_view_new(NULL));
    gtk_window_set_child(GTK_WINDOW(window), GTK_WIDGET(view));
    gtk_window_present(GTK_WINDOW(window));
    while (!gtk_widget_get_mapped(window))
        g_main_context_iteration(NULL, TRUE);
    GtkWidget *stack[64] = {GTK_WIDGET(view)}; /* the Scalars tab's sections, by name */
    for (int top = 1; top > 0 && !b.scalars;) { /* depth first */
        GtkWidget *w = stack[--top];
        if (!g_strcmp0(gtk_widget_get_name(w), "scalars"))
            b.scalars = w;
        for (GtkWidget *c = gtk_widget_get_first_child(w); c && top < 64; c = gtk_widget_get_next_sibling(c))
            stack[top++] = c;
    }
    if (!b.scalars) {
        fputs("twb-tfevents-live-screen-bench: the Dashboard has no widget named 'scalars'\n", stderr);
        return 1;
    }
    g_signal_connect(gtk_widget_get_frame_clock(window), "after-paint", G_CALLBACK(after_paint), &b);
    if (!tw_dashboard_view_open_logdir(view, logdir, &error)) {
        fprintf(stderr, "twb-tfevents-live-screen-bench: %s\n", error->message);
        return 1;
    }
    b.written = 1; /* the first point's answer came above */
    wait_for_point(&b, "the chart of the directory's first point");

    GRand *rand = g_rand_new_with_seed(17);
    double *latency = g_new(double, events);
    for (int i = 0; i < events; i++) {
        spin(g_rand_double_range(rand, 0.02, 0.15)); /* at every phase of the follower's and Dashboard's timers */
        ask(to_writer, &b, i + 1);
        wait_for_point(&b, "a point");
        latency[i] = (double)(b.shown - b.written) / 1000.0;
    }
    fclose(to_writer);
    g_spawn_close_pid(pid);
    qsort(latency, events, sizeof *latency, compare_doubles);
    double median = latency[events / 2], max = latency[events - 1];
    printf("tfevents_live_screen: median=%.1f ms max=%.1f ms of %d events (from another process's append to the "
           "frame showing the point, min %.1f ms): target %g ms %s\n",
           median, max, events, latency[0], TARGET_MS, max <= TARGET_MS ? "met" : "missed");
    gtk_window_destroy(GTK_WINDOW(window));
    g_rand_free(rand);
    g_free(latency);
    g_string_free(b.answer, TRUE);
    g_free(logdir);
    g_free(run);
    g_free(file);
    g_free(cache);
    return 0;
}
