/* twb-tfevents-bench: reading TensorBoard event files. Generates one event
 * file of scalar summaries (the way SummaryWriter.add_scalar writes them:
 * one Event per value, wall time, step, a Summary with one simple_value)
 * of the size asked for, then reports, each from a cold start on the same
 * file:
 *
 *   decode  scalar events per second read, checked and decoded (TFRecord
 *           framing with both CRCs, Event and Summary through protobuf-c),
 *           without storing them
 *   import  scalar events per second through tw_tb_import into a run
 *           database on disk (every point stored), and the process's peak
 *           resident memory, which must not grow with the file
 *   follow  ms from appending one event to a followed file (tw_tb_follow)
 *           until a reader of the database sees it, median and worst of 50;
 *           the dashboard's reader is woken by the commit and draws in the
 *           next frame
 *
 *   twb-tfevents-bench [--size-mb N] [--dir DIR] [--keep]
 *
 * N defaults to 256 (about 5 million events); --size-mb 1024 is the
 * issue's gigabyte. Files go to DIR (default build/bench-data), removed at
 * the end unless --keep. Our side only: TensorBoard has no import to time. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <tw/engine.h>
#include <tw/run_store.h>
#include <tw/tfevents.h>

#define TAGS 10

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds of the whole process (every thread): on a shared machine the
 * rate per CPU second says what the code costs, the wall-clock rate what
 * this run got. */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double peak_rss_mb(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_maxrss / 1024.0;
}

static void put_varint(GByteArray *b, uint64_t v)
{
    do {
        uint8_t byte = (v & 0x7f) | (v >= 0x80 ? 0x80 : 0);
        g_byte_array_append(b, &byte, 1);
        v >>= 7;
    } while (v);
}

static void put_len(GByteArray *b, uint8_t key, size_t n)
{
    g_byte_array_append(b, &key, 1);
    put_varint(b, n);
}

/* One framed record: Event{wall_time, step, summary{value{tag, simple_value}}}. */
static void scalar_record(GByteArray *out, GByteArray *ev, const char *tag, int64_t step, double wall, float x)
{
    g_byte_array_set_size(ev, 0);
    size_t tag_len = strlen(tag);
    size_t value_len = 2 + tag_len + 5, summary_len = 2 + value_len;
    uint8_t k = 0x09;
    g_byte_array_append(ev, &k, 1);
    g_byte_array_append(ev, (const uint8_t *)&wall, 8);
    k = 0x10;
    g_byte_array_append(ev, &k, 1);
    put_varint(ev, (uint64_t)step);
    put_len(ev, 0x2a, summary_len);
    put_len(ev, 0x0a, value_len);
    put_len(ev, 0x0a, tag_len);
    g_byte_array_append(ev, (const uint8_t *)tag, (guint)tag_len);
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
}

static int64_t generate(const char *path, int64_t bytes)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(1);
    }
    GByteArray *buf = g_byte_array_sized_new(1 << 20), *ev = g_byte_array_new();
    char tags[TAGS][32];
    for (int t = 0; t < TAGS; t++)
        snprintf(tags[t], sizeof tags[t], "train/metric_%d", t);
    int64_t written = 0, events = 0;
    for (int64_t step = 0; written < bytes; step++) {
        for (int t = 0; t < TAGS; t++, events++)
            scalar_record(buf, ev, tags[t], step, 1.7e9 + (double)step * 0.01, (float)(t + 1.0 / (double)(step + 1)));
        if (buf->len >= (1 << 20)) {
            fwrite(buf->data, 1, buf->len, f);
            written += buf->len;
            g_byte_array_set_size(buf, 0);
        }
    }
    fwrite(buf->data, 1, buf->len, f);
    fclose(f);
    g_byte_array_unref(buf);
    g_byte_array_unref(ev);
    return events;
}

static void count_item(void *user_data, const tw_tb_item *it)
{
    if (it->kind == TW_TB_SCALAR)
        (*(int64_t *)user_data)++;
}

static void print_warning(void *user_data, const char *message)
{
    (void)user_data;
    fprintf(stderr, "warning: %s\n", message);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define FOLLOW_EVENTS 50

/* Append events one at a time to a followed file; time each until the
 * database shows it. */
static void follow_latency(const char *dir)
{
    char *logdir = g_build_filename(dir, "tfevents-follow", NULL), *run = g_build_filename(logdir, "live", NULL);
    char *file = g_build_filename(run, "events.out.tfevents.1700000000.follow", NULL);
    char *db = g_build_filename(dir, "tfevents-follow.db", NULL);
    g_mkdir_with_parents(run, 0755);
    g_unlink(db);
    GByteArray *rec = g_byte_array_new(), *ev = g_byte_array_new();
    scalar_record(rec, ev, "loss", 0, 1.7e9, 1.0f);
    FILE *out = fopen(file, "wb");
    fwrite(rec->data, 1, rec->len, out);
    fflush(out);
    tw_tb_follower *f = tw_tb_follow(logdir, db, print_warning, NULL);
    tw_run_store *store = NULL;
    int64_t tag = -1;
    while (tag < 0) { /* the run and its tag, once the follower made them */
        g_usleep(1000);
        if (!store && g_file_test(db, G_FILE_TEST_EXISTS))
            store = tw_run_store_open(db, TW_STORE_READ_ONLY);
        tw_run_info info;
        if (store && tw_run_store_get_run(store, "live", &info) == 0) {
            tag = tw_run_store_find_tag(store, info.id, "loss");
            tw_run_info_clear(&info);
        }
        tw_error_clear();
    }
    tw_series_cursor cursor = {0};
    tw_scalar_point *points;
    int64_t n = 0, seen = 0;
    while (seen < 1) {
        tw_run_store_read_scalars(store, tag, &cursor, 0, &points, &n);
        seen += n;
        g_free(points);
    }
    double latency[FOLLOW_EVENTS];
    for (int i = 0; i < FOLLOW_EVENTS; i++) {
        g_usleep(20000); /* a training step's pace: the writer's thread is idle between events */
        g_byte_array_set_size(rec, 0);
        scalar_record(rec, ev, "loss", i + 1, 1.7e9 + i + 1, (float)i);
        double t0 = now();
        fwrite(rec->data, 1, rec->len, out);
        fflush(out);
        for (n = 0; n == 0;) {
            tw_run_store_read_scalars(store, tag, &cursor, 0, &points, &n);
            g_free(points);
            if (n == 0)
                g_usleep(200);
        }
        latency[i] = (now() - t0) * 1e3;
    }
    fclose(out);
    tw_run_store_close(store);
    tw_tb_follower_stop(f);
    qsort(latency, FOLLOW_EVENTS, sizeof *latency, compare_doubles);
    printf("follow: append to visible in the database: median %.1f ms, worst %.1f ms of %d events\n",
           latency[FOLLOW_EVENTS / 2], latency[FOLLOW_EVENTS - 1], FOLLOW_EVENTS);
    g_unlink(file);
    g_rmdir(run);
    g_rmdir(logdir);
    for (const char *suffix = ""; suffix; suffix = *suffix ? NULL : "-wal") {
        char *p = g_strconcat(db, suffix, NULL);
        g_unlink(p);
        g_free(p);
    }
    char *shm = g_strconcat(db, "-shm", NULL);
    g_unlink(shm);
    g_free(shm);
    g_byte_array_unref(rec);
    g_byte_array_unref(ev);
    g_free(logdir);
    g_free(run);
    g_free(file);
    g_free(db);
}


int main(int argc, char **argv)
{
    int64_t size_mb = 256;
    const char *dir = "build/bench-data";
    bool keep = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size-mb") && i + 1 < argc)
            size_mb = g_ascii_strtoll(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--keep"))
            keep = true;
        else {
            fprintf(stderr, "usage: twb-tfevents-bench [--size-mb N] [--dir DIR] [--keep]\n");
            return 2;
        }
    }
    char *logdir = g_build_filename(dir, "tfevents-bench", NULL), *run = g_build_filename(logdir, "run", NULL);
    char *file = g_build_filename(run, "events.out.tfevents.1700000000.bench", NULL);
    char *db = g_build_filename(dir, "tfevents-bench.db", NULL);
    g_mkdir_with_parents(run, 0755);
    g_unlink(db);

    double t0 = now();
    int64_t events = generate(file, size_mb << 20);
    printf("generated %s: %lld MB, %lld scalar events in %.1f s\n", file, (long long)size_mb, (long long)events,
           now() - t0);

    t0 = now();
    double c0 = cpu_seconds();
    tw_tfrecord_reader *r = tw_tfrecord_open(file, print_warning, NULL);
    tw_tb_decoder *d = tw_tb_decoder_new(file, print_warning, NULL);
    int64_t decoded = 0;
    const uint8_t *data;
    size_t n;
    uint64_t offset;
    while (tw_tfrecord_next(r, &data, &n, &offset) == TW_TFRECORD_OK)
        tw_tb_decode_event(d, data, n, offset, count_item, &decoded);
    tw_tb_decoder_free(d);
    tw_tfrecord_close(r);
    double dt = now() - t0, dc = cpu_seconds() - c0;
    printf("decode: %lld scalar events in %.2f s: %.0f events/s; %.2f CPU s: %.0f events per CPU second (peak RSS "
           "%.0f MB)\n",
           (long long)decoded, dt, (double)decoded / dt, dc, (double)decoded / dc, peak_rss_mb());

    t0 = now();
    c0 = cpu_seconds();
    tw_tb_import_stats stats;
    if (tw_tb_import(logdir, db, print_warning, NULL, &stats)) {
        fprintf(stderr, "import: %s\n", tw_last_error());
        return 1;
    }
    dt = now() - t0;
    dc = cpu_seconds() - c0;
    printf("import: %lld scalar events in %.2f s: %.0f events/s; %.2f CPU s (both threads): %.0f events per CPU "
           "second; into %s (peak RSS %.0f MB)\n",
           (long long)stats.scalars, dt, (double)stats.scalars / dt, dc, (double)stats.scalars / dc, db,
           peak_rss_mb());
    follow_latency(dir);
    if (!keep) {
        g_unlink(file);
        g_rmdir(run);
        g_rmdir(logdir);
        g_unlink(db);
        char *side = g_strconcat(db, "-wal", NULL);
        g_unlink(side);
        g_free(side);
        side = g_strconcat(db, "-shm", NULL);
        g_unlink(side);
        g_free(side);
    }
    g_free(logdir);
    g_free(run);
    g_free(file);
    g_free(db);
    return decoded == events && stats.scalars == events ? 0 : 1;
}
