/* twb-tfevents-live-bench: how soon an event another process appends to a
 * TensorBoard event file reaches the Dashboard. The Dashboard's path is
 * taken whole, without a window: tw_tb_follow follows the log directory
 * into a run database and the Dashboard's own reader (TwDashboardData)
 * watches the tag there; a writer process (this program with --writer)
 * appends one scalar event at a time when asked, at random moments, and
 * says when each was in the file (CLOCK_MONOTONIC, shared by processes).
 * Reported: median and worst time from the append to the new point on the
 * main loop ("series-changed"), over 50 events; the chart draws it in the
 * next frame.
 *
 *   twb-tfevents-live-bench [--dir DIR]     (default build/bench-data)
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tw/engine.h>
#include <tw/tfevents.h>

#include "dashboard_data.h"

#define EVENTS 50

/* One framed record: Event{wall_time, step, summary{value{tag, simple_value}}}. */
static GByteArray *scalar_record(const char *tag, int64_t step, double wall, float x)
{
    GByteArray *ev = g_byte_array_new(), *out = g_byte_array_new();
    uint8_t k = 0x09;
    g_byte_array_append(ev, &k, 1);
    g_byte_array_append(ev, (const uint8_t *)&wall, 8);
    k = 0x10;
    g_byte_array_append(ev, &k, 1);
    for (uint64_t v = (uint64_t)step;; v >>= 7) {
        uint8_t b = (v & 0x7f) | (v >= 0x80 ? 0x80 : 0);
        g_byte_array_append(ev, &b, 1);
        if (v < 0x80)
            break;
    }
    uint8_t tag_len = (uint8_t)strlen(tag), value_len = (uint8_t)(2 + tag_len + 5);
    uint8_t head[6] = {0x2a, (uint8_t)(2 + value_len), 0x0a, value_len, 0x0a, tag_len};
    g_byte_array_append(ev, head, 6);
    g_byte_array_append(ev, (const uint8_t *)tag, tag_len);
    k = 0x15;
    g_byte_array_append(ev, &k, 1);
    g_byte_array_append(ev, (const uint8_t *)&x, 4);
    uint64_t len = ev->len;
    uint32_t crc = tw_tfrecord_masked_crc(&len, 8);
    g_byte_array_append(out, (const uint8_t *)&len, 8);
    g_byte_array_append(out, (const uint8_t *)&crc, 4);
    g_byte_array_append(out, ev->data, ev->len);
    crc = tw_tfrecord_masked_crc(ev->data, ev->len);
    g_byte_array_append(out, (const uint8_t *)&crc, 4);
    g_byte_array_unref(ev);
    return out;
}

static void append(const char *path, int64_t step)
{
    GByteArray *rec = scalar_record("loss", step, (double)g_get_real_time() / 1e6, (float)step);
    FILE *out = fopen(path, "ab");
    if (!out || fwrite(rec->data, 1, rec->len, out) != rec->len || fclose(out)) {
        perror(path);
        exit(1);
    }
    g_byte_array_unref(rec);
}

/* The writer process: a step per line on stdin, answered with the
 * monotonic time (µs) at which its event was in the file. */
static int writer_main(const char *path)
{
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        append(path, g_ascii_strtoll(line, NULL, 10));
        printf("%" G_GINT64_FORMAT "\n", g_get_monotonic_time());
        fflush(stdout);
    }
    return 0;
}

typedef struct {
    TwDashboardData *data;
    gint64 tag, count, arrived;
} probe;

static void on_series(TwDashboardData *data, gint64 tag, gpointer user_data)
{
    probe *p = user_data;
    const TwSeriesView *v = tw_dashboard_data_series_view(data, p->tag);
    if (tag == p->tag && v && v->count >= p->count && !p->arrived)
        p->arrived = g_get_monotonic_time();
}

static gboolean expired(gpointer flag)
{
    *(gboolean *)flag = TRUE;
    return G_SOURCE_REMOVE;
}

static void iterate_until(gboolean (*done)(probe *), probe *p, double seconds, const char *what)
{
    gboolean late = FALSE;
    guint timer = g_timeout_add((guint)(seconds * 1000), expired, &late);
    while (!done(p) && !late)
        g_main_context_iteration(NULL, TRUE);
    if (late) {
        fprintf(stderr, "twb-tfevents-live-bench: waited %.0f s for %s\n", seconds, what);
        exit(1);
    }
    g_source_remove(timer);
}

static gboolean tag_found(probe *p)
{
    for (int t = 0; t < tw_dashboard_data_n_tag_names(p->data); t++)
        if (!strcmp(tw_dashboard_data_tag_name(p->data, t), "loss") && tw_dashboard_data_n_runs(p->data) > 0)
            return (p->tag = tw_dashboard_data_tag_id(p->data, t, 0)) >= 0;
    return FALSE;
}

static gboolean has_arrived(probe *p)
{
    return p->arrived != 0;
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

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--writer"))
        return writer_main(argv[2]);
    const char *dir = argc == 3 && !strcmp(argv[1], "--dir") ? argv[2] : "build/bench-data";
    char *logdir = g_build_filename(dir, "tfevents-live", NULL), *run = g_build_filename(logdir, "live", NULL);
    char *file = g_build_filename(run, "events.out.tfevents.1700000000.live", NULL);
    char *db = g_build_filename(dir, "tfevents-live.db", NULL);
    g_mkdir_with_parents(run, 0755);
    g_unlink(file);
    g_unlink(db);
    append(file, 0);
    tw_tb_follower *follower = tw_tb_follow(logdir, db, NULL, NULL);
    if (!follower) {
        fprintf(stderr, "twb-tfevents-live-bench: %s\n", tw_last_error());
        return 1;
    }
    probe p = {.data = tw_dashboard_data_new(db), .count = 1};
    iterate_until(tag_found, &p, 20, "the run's tag");
    tw_dashboard_data_watch(p.data, p.tag, TRUE);
    tw_dashboard_data_request_view(p.data, p.tag, TW_AXIS_STEP, 0, 1000, 100);
    g_signal_connect(p.data, "series-changed", G_CALLBACK(on_series), &p);
    iterate_until(has_arrived, &p, 20, "the first point");

    char *self = g_file_read_link("/proc/self/exe", NULL);
    char *child_argv[] = {self, "--writer", file, NULL};
    int to_writer, from_writer;
    GPid pid;
    if (!g_spawn_async_with_pipes(NULL, child_argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &pid, &to_writer, &from_writer,
                                  NULL, NULL)) {
        fprintf(stderr, "twb-tfevents-live-bench: cannot start the writer\n");
        return 1;
    }
    FILE *ask = fdopen(to_writer, "w"), *answer = fdopen(from_writer, "r");
    GRand *rand = g_rand_new_with_seed(17);
    double latency[EVENTS];
    for (int i = 0; i < EVENTS; i++) {
        spin(g_rand_double_range(rand, 0.005, 0.08)); /* at every phase of the writer's and reader's timers */
        p.count = 2 + i;
        p.arrived = 0;
        fprintf(ask, "%d\n", i + 1);
        fflush(ask);
        char line[64];
        if (!fgets(line, sizeof line, answer))
            return 1;
        gint64 written = g_ascii_strtoll(line, NULL, 10);
        iterate_until(has_arrived, &p, 20, "a point");
        latency[i] = (double)(p.arrived - written) / 1000.0;
    }
    fclose(ask);
    fclose(answer);
    g_spawn_close_pid(pid);
    g_rand_free(rand);
    qsort(latency, EVENTS, sizeof *latency, compare_doubles);
    printf("live: from another process's append to the Dashboard's main loop: median %.1f ms, worst %.1f ms of %d "
           "events\n",
           latency[EVENTS / 2], latency[EVENTS - 1], EVENTS);
    g_object_unref(p.data);
    tw_tb_follower_stop(follower);
    g_unlink(file);
    g_rmdir(run);
    g_rmdir(logdir);
    for (const char *const *suffix = (const char *const[]){"", "-wal", "-shm", NULL}; *suffix; suffix++) {
        char *path = g_strconcat(db, *suffix, NULL);
        g_unlink(path);
        g_free(path);
    }
    g_free(self);
    g_free(logdir);
    g_free(run);
    g_free(file);
    g_free(db);
    return 0;
}
