/* Frame times of a GTK window: see frame_meter.h. */
#include "frame_meter.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <json-glib/json-glib.h>

typedef struct {
    double wall, wait, cpu; /* ms */
} clock_sample;

struct frame_meter {
    char *what;
    GdkFrameClock *clock;
    gulong before, after;
    guint timer;
    clock_sample paint_start, last_turn;
    gboolean painting, turned;
    GArray *wall_ms, *own_ms, *cpu_ms; /* per frame */
    double longest_stall_cpu_ms, longest_block_ms, longest_gap_ms;
};

double frame_meter_thread_cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static clock_sample sample_now(void)
{
    clock_sample s = {.wall = (double)g_get_monotonic_time() / 1000.0, .cpu = frame_meter_thread_cpu_ms()};
    FILE *f = fopen("/proc/thread-self/schedstat", "r"); /* on-CPU ns, run-queue wait ns, slices */
    unsigned long long run_ns = 0, wait_ns = 0;
    if (f && fscanf(f, "%llu %llu", &run_ns, &wait_ns) == 2)
        s.wait = (double)wait_ns / 1e6;
    if (f)
        fclose(f);
    return s;
}

static void on_before_paint(GdkFrameClock *clock, frame_meter *m)
{
    m->paint_start = sample_now();
    m->painting = TRUE;
}

static void on_after_paint(GdkFrameClock *clock, frame_meter *m)
{
    if (!m->painting)
        return;
    m->painting = FALSE;
    clock_sample now = sample_now(), *start = &m->paint_start;
    double wall = now.wall - start->wall, own = wall - (now.wait - start->wait), cpu = now.cpu - start->cpu;
    g_array_append_val(m->wall_ms, wall);
    g_array_append_val(m->own_ms, own);
    g_array_append_val(m->cpu_ms, cpu);
}

static gboolean on_turn(gpointer data)
{
    frame_meter *m = data;
    clock_sample now = sample_now();
    if (m->turned) {
        double gap = now.wall - m->last_turn.wall;
        m->longest_gap_ms = MAX(m->longest_gap_ms, gap);
        m->longest_block_ms = MAX(m->longest_block_ms, gap - (now.wait - m->last_turn.wait));
        m->longest_stall_cpu_ms = MAX(m->longest_stall_cpu_ms, now.cpu - m->last_turn.cpu);
    }
    m->last_turn = now;
    m->turned = TRUE;
    return G_SOURCE_CONTINUE;
}

frame_meter *frame_meter_start(GtkWidget *widget, const char *what)
{
    frame_meter *m = g_new0(frame_meter, 1);
    m->what = g_strdup(what);
    m->wall_ms = g_array_new(FALSE, FALSE, sizeof(double));
    m->own_ms = g_array_new(FALSE, FALSE, sizeof(double));
    m->cpu_ms = g_array_new(FALSE, FALSE, sizeof(double));
    m->clock = gtk_widget_get_frame_clock(widget);
    g_assert_nonnull(m->clock);
    m->before = g_signal_connect(m->clock, "before-paint", G_CALLBACK(on_before_paint), m);
    m->after = g_signal_connect(m->clock, "after-paint", G_CALLBACK(on_after_paint), m);
    m->timer = g_timeout_add_full(G_PRIORITY_HIGH, 1, on_turn, m, NULL);
    return m;
}

int frame_meter_frames(const frame_meter *m)
{
    return (int)m->wall_ms->len;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The value below which a share q of the frames lie (the median at 0.5),
 * from a sorted copy; 0 without frames. */
static double quantile(GArray *ms, double q)
{
    if (ms->len == 0)
        return 0;
    double *v = g_memdup2(ms->data, sizeof(double) * ms->len);
    qsort(v, ms->len, sizeof *v, compare_doubles);
    guint i = q == 0.5 ? ms->len / 2 : MIN(ms->len - 1, (guint)(q * ms->len));
    double x = v[i];
    g_free(v);
    return x;
}

static double longest(GArray *ms)
{
    double x = 0;
    for (guint i = 0; i < ms->len; i++)
        x = MAX(x, g_array_index(ms, double, i));
    return x;
}

static void add_array(JsonBuilder *b, const char *name, GArray *ms)
{
    json_builder_set_member_name(b, name);
    json_builder_begin_array(b);
    for (guint i = 0; i < ms->len; i++)
        json_builder_add_double_value(b, g_array_index(ms, double, i));
    json_builder_end_array(b);
}

static void add_number(JsonBuilder *b, const char *name, double value)
{
    json_builder_set_member_name(b, name);
    json_builder_add_double_value(b, value);
}

/* One JSON line for bench/run ui_frames. */
static void log_frames(const frame_meter *m, const char *path)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "what");
    json_builder_add_string_value(b, m->what);
    add_array(b, "wall_ms", m->wall_ms);
    add_array(b, "own_ms", m->own_ms);
    add_array(b, "cpu_ms", m->cpu_ms);
    add_number(b, "longest_stall_cpu_ms", m->longest_stall_cpu_ms);
    add_number(b, "longest_block_ms", m->longest_block_ms);
    add_number(b, "longest_gap_ms", m->longest_gap_ms);
    json_builder_end_object(b);
    JsonNode *root = json_builder_get_root(b);
    char *line = json_to_string(root, FALSE);
    FILE *f = fopen(path, "a");
    if (f) {
        fprintf(f, "%s\n", line);
        fclose(f);
    } else {
        g_printerr("# frame meter: cannot append to TW_FRAME_LOG=%s\n", path);
    }
    g_free(line);
    json_node_unref(root);
    g_object_unref(b);
}

frame_stats frame_meter_stop(frame_meter *m)
{
    g_signal_handler_disconnect(m->clock, m->before);
    g_signal_handler_disconnect(m->clock, m->after);
    g_source_remove(m->timer);
    frame_stats s = {
        .frames = (int)m->wall_ms->len,
        .median_ms = quantile(m->wall_ms, 0.5),
        .p99_ms = quantile(m->wall_ms, 0.99),
        .longest_ms = longest(m->wall_ms),
        .median_own_ms = quantile(m->own_ms, 0.5),
        .p99_own_ms = quantile(m->own_ms, 0.99),
        .longest_cpu_ms = longest(m->cpu_ms),
        .longest_stall_cpu_ms = m->longest_stall_cpu_ms,
        .longest_block_ms = m->longest_block_ms,
        .longest_gap_ms = m->longest_gap_ms,
    };
    g_printerr("# %s: %d frames, %.1f ms median / %.1f ms 99th percentile / %.1f ms longest (wall clock), %.1f / "
               "%.1f ms less the waits for a CPU, %.1f ms CPU the longest frame; main loop: %.1f ms CPU the longest "
               "stretch, %.1f ms blocked, %.1f ms the longest gap\n",
               m->what, s.frames, s.median_ms, s.p99_ms, s.longest_ms, s.median_own_ms, s.p99_own_ms,
               s.longest_cpu_ms, s.longest_stall_cpu_ms, s.longest_block_ms, s.longest_gap_ms);
    const char *log = g_getenv("TW_FRAME_LOG");
    if (log && *log)
        log_frames(m, log);
    g_array_unref(m->wall_ms);
    g_array_unref(m->own_ms);
    g_array_unref(m->cpu_ms);
    g_free(m->what);
    g_free(m);
    return s;
}

frame_stats frame_stats_median(const frame_stats *rounds, int n)
{
    g_assert_cmpint(n, >, 0);
    frame_stats s = {0};
    /* Every field after `frames` is a double: each one's median; frames
     * the rounds' total. */
    double *fields = &s.median_ms;
    int nfields = (int)((sizeof s - G_STRUCT_OFFSET(frame_stats, median_ms)) / sizeof(double));
    double *v = g_new(double, n);
    for (int f = 0; f < nfields; f++) {
        for (int r = 0; r < n; r++)
            v[r] = (&rounds[r].median_ms)[f];
        qsort(v, (size_t)n, sizeof *v, compare_doubles);
        fields[f] = v[n / 2];
    }
    for (int r = 0; r < n; r++)
        s.frames += rounds[r].frames;
    g_free(v);
    return s;
}
