/* libFuzzer target for the run database's readers: the fuzzer's bytes as a
 * SQLite file, opened read-only as `twb runs` and the dashboard open it;
 * every run, every tag of each, and every series read whole (scalars, their
 * summaries and ranges, histograms, texts and graphs) and the evaluation's
 * tensor summaries. Any failure must
 * leave a message; opening and listing must name the database (a chunk's
 * message says "run database: scalar chunk N" today). Built into
 * build-fuzz/tests/fuzz/fuzz_run_store (make fuzz) and, renamed, into the
 * fuzz_replay test that runs tests/fuzz/corpus/run_store/ on every build. */
#include <glib.h>
#include <math.h>

#include "fuzz_check.h"
#include "tw/evaluation.h"
#include "tw/run_store.h"

static void check_failure(const char *name)
{
    FUZZ_ASSERT(tw_error_pending());
    fuzz_check_failure(name);
}

static void check_series_failure(void)
{
    FUZZ_ASSERT(tw_error_pending() && tw_last_error()[0]);
    tw_error_clear();
}

static void read_series(tw_run_store *store, const tw_tag_info *tag)
{
    tw_series_cursor cursor = {0};
    if (tag->kind == TW_SERIES_SCALAR) {
        tw_scalar_point *points = NULL;
        int64_t n = 0;
        if (tw_run_store_read_scalars(store, tag->id, &cursor, 0, &points, &n) == 0)
            FUZZ_ASSERT(n >= 0 && (n == 0 || points));
        else
            check_series_failure();
        free(points);
        tw_lod_column columns[8];
        if (tw_run_store_read_lod(store, tag->id, TW_AXIS_STEP, (double)tag->first_step, (double)tag->last_step, 8,
                                  columns))
            check_series_failure();
        points = NULL;
        if (tw_run_store_read_scalar_range(store, tag->id, TW_AXIS_WALL_TIME, -INFINITY, INFINITY, 1000, &points,
                                           &n) == 0)
            FUZZ_ASSERT(n >= 0 && n <= 1000);
        else
            check_series_failure();
        free(points);
        tw_series_cursor end = {0};
        if (tw_run_store_scalar_end(store, tag->id, &end))
            check_series_failure();
    } else if (tag->kind == TW_SERIES_HISTOGRAM) {
        tw_histogram *histograms = NULL;
        int n = 0;
        if (tw_run_store_read_histograms(store, tag->id, INT64_MIN, INT64_MAX, 0, &histograms, &n) == 0) {
            for (int i = 0; i < n; i++)
                FUZZ_ASSERT(histograms[i].nbuckets >= 0 && (histograms[i].nbuckets == 0 || histograms[i].buckets));
            tw_histogram_free(histograms, n);
        } else {
            check_series_failure();
        }
    } else {
        tw_text_record *records = NULL;
        int n = 0;
        if (tw_run_store_read_texts(store, tag->id, &cursor, &records, &n) == 0) {
            for (int i = 0; i < n; i++)
                FUZZ_ASSERT(records[i].text);
            tw_text_record_free(records, n);
        } else {
            check_series_failure();
        }
    }
}

/* SQLite opens a database by a path it can resolve (not /proc/self/fd/N),
 * so the bytes go to a file of this process, in /dev/shm when there is
 * one, removed after each input with the -wal and -shm files SQLite may
 * add (libFuzzer ends its processes without running atexit handlers). */
/* Tensor summaries (the evaluation's tags, the shape as the row says). */
static void read_tensors(tw_run_store *store, int64_t run_id, const char *path)
{
    static const char *const tags[] = {TW_EVAL_TAG_CONFUSION, TW_EVAL_TAG_PER_CLASS, TW_EVAL_TAG_SAMPLES,
                                       TW_EVAL_TAG_SAMPLE_VALUES};
    for (size_t i = 0; i < G_N_ELEMENTS(tags); i++) {
        tw_stored_tensor t;
        int rc = tw_run_store_read_tensor(store, run_id, tags[i], &t);
        if (rc < 0) {
            check_failure(path);
            continue;
        }
        int64_t numel = 1;
        for (int d = 0; rc == 1 && d < t.ndim; d++)
            numel *= t.dims[d];
        FUZZ_ASSERT(rc == 0 || (t.values && numel == t.numel));
        double sum = 0;
        for (int64_t k = 0; rc == 1 && k < t.numel; k++)
            sum += t.values[k];
        (void)sum;
        tw_stored_tensor_clear(&t);
    }
    int64_t *ids;
    int n;
    if (tw_run_store_runs_with_tensor(store, TW_EVAL_TAG_CONFUSION, &ids, &n) == 0)
        free(ids);
    else
        check_failure(path);
}

static const char *input_file(const uint8_t *data, size_t size)
{
    static char *path;
    if (!path) {
        const char *dir = g_file_test("/dev/shm", G_FILE_TEST_IS_DIR) ? "/dev/shm" : g_get_tmp_dir();
        path = g_strdup_printf("%s/twb-fuzz-run-store-%d.db", dir, (int)getpid());
    }
    return g_file_set_contents(path, (const char *)data, (gssize)size, NULL) ? path : NULL;
}

static void remove_input_file(const char *path)
{
    const char *suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < G_N_ELEMENTS(suffixes); i++) {
        char *name = g_strconcat(path, suffixes[i], NULL);
        remove(name);
        g_free(name);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = input_file(data, size);
    if (!path)
        return 0;
    tw_run_store *store = tw_run_store_open(path, TW_STORE_READ_ONLY);
    if (!store) {
        check_failure(path);
        remove_input_file(path);
        return 0;
    }
    tw_run_info *runs = NULL;
    int nruns = 0;
    if (tw_run_store_list_runs(store, &runs, &nruns) == 0) {
        for (int r = 0; r < nruns; r++) {
            FUZZ_ASSERT(runs[r].name && runs[r].notes);
            tw_run_info one;
            if (tw_run_store_get_run(store, runs[r].name, &one) == 0)
                tw_run_info_clear(&one);
            else
                check_failure(path);
            tw_tag_info *tags = NULL;
            int ntags = 0;
            if (tw_run_store_list_tags(store, runs[r].id, &tags, &ntags)) {
                check_failure(path);
                continue;
            }
            for (int t = 0; t < ntags; t++) {
                FUZZ_ASSERT(tags[t].name);
                read_series(store, &tags[t]);
            }
            tw_tag_info_free(tags, ntags);
            read_tensors(store, runs[r].id, path);
        }
        tw_run_info_free(runs, nruns);
    } else {
        check_failure(path);
    }
    tw_run_store_close(store);
    remove_input_file(path);
    return 0;
}
