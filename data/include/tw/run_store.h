/* Tensor Workbench — the run database: one SQLite file holding every run's
 * scalars, histograms, text and graphs (what TensorBoard reads from event
 * files), written by the summary writer (tw/summary.h) and read live by the
 * dashboard, the graph view and `twb runs`.
 *
 *     tw_run_store *db = tw_run_store_open(NULL, TW_STORE_READ_ONLY);   // $XDG_DATA_HOME/twb/runs.db
 *     tw_run_info *runs; int n;
 *     tw_run_store_list_runs(db, &runs, &n);
 *     ...
 *     tw_run_info_free(runs, n);
 *     tw_run_store_close(db);
 *
 * The schema is documented in docs/run_database.md and versioned with
 * PRAGMA user_version; older files are migrated when opened for writing,
 * newer ones are refused, and a file that is not a run database is refused
 * without being touched. Opening a file marks the runs whose writer process
 * has died (same host, process gone) as interrupted, ending at their last
 * row. A file that cannot be written (a read-only folder or mount) is
 * still read, read-only, without the side files write-ahead logging
 * would add beside it.
 *
 * A store handle belongs to one thread at a time. Errors follow tw/error.h:
 * NULL or -1 and a message naming the file.
 */
#ifndef TW_RUN_STORE_H
#define TW_RUN_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

typedef struct tw_run_store tw_run_store;

enum {
    TW_STORE_READ_ONLY = 1 << 0, /* never writes, never migrates (interrupted runs are reported, not marked) */
};

/* path NULL: $XDG_DATA_HOME/twb/runs.db (~/.local/share/twb/runs.db), its
 * folder created when opening for writing. */
tw_run_store *tw_run_store_open(const char *path, unsigned flags);
/* Whether path holds no run database yet: absent, empty, or an SQLite file
 * whose schema is not written yet (another process is creating it, so a
 * read-only open would fail with "not a run database yet"). */
bool tw_run_store_is_new(const char *path);
void tw_run_store_close(tw_run_store *store); /* NULL is accepted */
const char *tw_run_store_path(const tw_run_store *store);
/* The default file's path (malloc'd). */
char *tw_run_store_default_path(void);

/* ---- runs ----------------------------------------------------------------- */
typedef enum {
    TW_RUN_RUNNING,
    TW_RUN_FINISHED,
    TW_RUN_STOPPED,
    TW_RUN_FAILED,
    TW_RUN_INTERRUPTED, /* its writer died without closing it */
} tw_run_status;
const char *tw_run_status_name(tw_run_status status); /* "running", ... */

typedef struct {
    int64_t id;
    char *name;
    tw_run_status status;
    double start_time, end_time; /* seconds since the epoch; end_time NAN while running */
    char *host;
    int64_t pid;
    char *model_json;   /* may be NULL */
    char *hparams_json; /* a JSON object, may be NULL */
    char *metrics_json; /* final metrics, a JSON object, may be NULL */
    char *notes;        /* never NULL */
    int64_t logs_lost_from_step; /* -1 unless the writer lost logs (full disk, ...) from that step on */
    char *logs_lost_reason;      /* NULL unless it did */
    char *failure_reason;        /* NULL unless the run failed and its writer said why (a NaN loss, ...) */
    char *color;                 /* "#rrggbb" a person chose, or NULL: the palette's colour by order */
    bool pinned;                 /* kept at the top of the run list */
    char *sweep;                 /* the sweep this run is a trial of, or NULL */
} tw_run_info;

/* Runs by start time, oldest first; runs in the trash are left out. */
int tw_run_store_list_runs(tw_run_store *store, tw_run_info **runs, int *n);
/* A number that changes whenever another connection commits to the file
 * (SQLite's PRAGMA data_version): a reader that finds the number it saw
 * last has nothing new to read. 0, or -1 with a message. */
int tw_run_store_data_version(tw_run_store *store, int64_t *version);
/* One read transaction over the reads that follow, until
 * tw_run_store_read_end: they see the file as it was at the first, and
 * SQLite takes the write-ahead log's read lock once instead of once per
 * read (two fcntl calls and a check of its page cache each), which is
 * most of reading a few points from each of thousands of series. Rows
 * committed meanwhile are seen after the end. Not nested; no writing in
 * between. 0, or -1 with a message. */
int tw_run_store_read_begin(tw_run_store *store);
void tw_run_store_read_end(tw_run_store *store);
int tw_run_store_get_run(tw_run_store *store, const char *name, tw_run_info *run);
void tw_run_info_clear(tw_run_info *run);
void tw_run_info_free(tw_run_info *runs, int n);
int tw_run_store_rename_run(tw_run_store *store, const char *name, const char *new_name);
int tw_run_store_delete_run(tw_run_store *store, const char *name); /* and all its series */
int tw_run_store_set_notes(tw_run_store *store, const char *name, const char *notes);
/* color "#rrggbb" (lower or upper case), or NULL / "" for the palette's. */
int tw_run_store_set_color(tw_run_store *store, const char *name, const char *color);
int tw_run_store_set_pinned(tw_run_store *store, const char *name, bool pinned);
/* sweep NULL or "": not a trial of any. */
int tw_run_store_set_sweep(tw_run_store *store, const char *name, const char *sweep);
/* A run whose writer died (still "running", or "interrupted" by an open)
 * marked failed with reason, by another process that knows why: rank 1 of
 * a data-parallel run whose rank 0 was killed. A run its writer closed is
 * left as it is. */
int tw_run_store_fail_dead_run(tw_run_store *store, int64_t run_id, const char *reason);
/* Deleting with undo: a trashed run is out of every list (and the window's
 * charts) but kept until tw_run_store_empty_trash, which the window runs
 * as it closes; tw_run_store_untrash_run brings it back. A run still being
 * written is refused as by delete. The trash keeps the run's name: a new
 * run cannot take it before the trash is emptied. */
int tw_run_store_trash_run(tw_run_store *store, const char *name);
int tw_run_store_untrash_run(tw_run_store *store, const char *name);
/* Deletes every trashed run (with its series); how many in *n (may be NULL). */
int tw_run_store_empty_trash(tw_run_store *store, int *n);

/* ---- tags (series) -------------------------------------------------------- */
typedef enum {
    TW_SERIES_SCALAR,
    TW_SERIES_HISTOGRAM,
    TW_SERIES_TEXT,
    TW_SERIES_GRAPH,
    TW_SERIES_IMAGE, /* in the images table, by tag name: never listed by tw_run_store_list_tags */
    TW_SERIES_TENSOR, /* in the tensors table, by tag name: never listed by tw_run_store_list_tags */
} tw_series_kind;

typedef struct {
    int64_t id;
    int64_t run_id;
    char *name; /* "train/loss" */
    tw_series_kind kind;
    int64_t count;                /* points (scalars) or records (the rest) */
    int64_t first_step, last_step;
} tw_tag_info;

int tw_run_store_list_tags(tw_run_store *store, int64_t run_id, tw_tag_info **tags, int *n);
void tw_tag_info_free(tw_tag_info *tags, int n);
int64_t tw_run_store_find_tag(tw_run_store *store, int64_t run_id, const char *name); /* -1 when absent (no error) */

/* ---- scalars -------------------------------------------------------------- */
typedef struct {
    int64_t step;
    double wall_time;
    double value; /* NaN and +-Inf as written */
} tw_scalar_point;

/* Where a reader stopped in a series; zero-initialised means "the start". */
typedef struct {
    int64_t chunk;
    int64_t index;
} tw_series_cursor;

/* Points written after the cursor, in writing order, at most max (0: no
 * limit), into a malloc'd array; the cursor moves past them. Cheap when
 * nothing is new: the dashboard calls it every frame. */
int tw_run_store_read_scalars(tw_run_store *store, int64_t tag_id, tw_series_cursor *cursor, int64_t max,
                              tw_scalar_point **points, int64_t *n);

/* A cursor past every point written so far: reading from it returns only
 * what comes next (a live view that starts at the end of a long series
 * without reading it). */
int tw_run_store_scalar_end(tw_run_store *store, int64_t tag_id, tw_series_cursor *cursor);

/* A step range reduced to ncolumns equal-width columns: per column the
 * number of points, the first and last point and the minimum and maximum
 * value, so a single spike survives at any zoom. Reads summaries, not every
 * point: the cost grows with ncolumns, not with the series' length.
 * Columns without points have count 0. NaN values count but are left out
 * of min/max (nan_count says how many). */
typedef struct {
    int64_t count, nan_count;
    tw_scalar_point first, last;
    double min, max;
    int64_t min_step, max_step; /* where the extremes are */
} tw_lod_column;

typedef enum { TW_AXIS_STEP, TW_AXIS_WALL_TIME } tw_axis;
/* The range [lo, hi] is in steps or in wall-time seconds (TW_AXIS_WALL_TIME). */
int tw_run_store_read_lod(tw_run_store *store, int64_t tag_id, tw_axis axis, double lo, double hi, int ncolumns,
                          tw_lod_column *columns);

/* The raw points with coordinates in [lo, hi] on the axis, in writing
 * order, at most max (0: no limit), into a malloc'd array: what a chart
 * zoomed in to a few points per column draws. Decodes only the chunks
 * overlapping the range; *n == max says there may be more. */
int tw_run_store_read_scalar_range(tw_run_store *store, int64_t tag_id, tw_axis axis, double lo, double hi,
                                   int64_t max, tw_scalar_point **points, int64_t *n);

/* ---- histograms ----------------------------------------------------------- */
/* A histogram as written: exact count, min, max, sum and sum of squares,
 * and counts in nbuckets equal-width buckets spanning [min, max]. */
typedef struct {
    int64_t step;
    double wall_time;
    double count, min, max, sum, sum_squares;
    int nbuckets;
    double *buckets; /* nbuckets counts */
} tw_histogram;

/* Histograms with steps in [step_lo, step_hi], at most max_records of them
 * spread evenly over the range (0: all), by step. */
int tw_run_store_read_histograms(tw_run_store *store, int64_t tag_id, int64_t step_lo, int64_t step_hi,
                                 int max_records, tw_histogram **out, int *n);
void tw_histogram_free(tw_histogram *histograms, int n);

/* ---- text and graphs ------------------------------------------------------ */
typedef struct {
    int64_t step;
    double wall_time;
    char *text; /* the text, or the graph's JSON */
} tw_text_record;

/* Records after the cursor (same rules as scalars). */
int tw_run_store_read_texts(tw_run_store *store, int64_t tag_id, tw_series_cursor *cursor, tw_text_record **out,
                            int *n);
void tw_text_record_free(tw_text_record *records, int n);

/* ---- images --------------------------------------------------------------- */
/* An image as stored: encoded (PNG from tw_summary_image, PNG, JPEG or GIF
 * as an imported event file held it). Several images of one tag and step
 * are told apart by sample (0, 1, ... in writing order). */
typedef struct {
    int64_t id; /* for tw_run_store_read_image */
    char *tag;
    int64_t step;
    int sample;
    double wall_time;
    int width, height;
    char format[8]; /* "png", "jpeg", "gif" */
    int64_t size;   /* encoded bytes */
} tw_image_info;

/* A run's images (tag NULL: every tag), by tag, step and sample, without
 * their bytes. An older file with no images table has none. */
int tw_run_store_list_images(tw_run_store *store, int64_t run_id, const char *tag, tw_image_info **out, int *n);
void tw_image_info_free(tw_image_info *images, int n);
/* One image's encoded bytes (malloc'd). */
int tw_run_store_read_image(tw_run_store *store, int64_t image_id, uint8_t **data, size_t *size);

/* ---- tensors -------------------------------------------------------------- */
/* A tensor summary as stored (tw_summary_tensor): its dtype, shape and
 * values, read back as doubles (exact for the int32 and float values and
 * int64 values within 2^53). */
#define TW_STORED_TENSOR_MAX_DIMS 8
typedef struct {
    int64_t step;
    double wall_time;
    char dtype[12]; /* "float32", "float64", "int32", "int64" */
    int ndim;
    int64_t dims[TW_STORED_TENSOR_MAX_DIMS];
    int64_t numel;
    double *values; /* numel, row-major */
} tw_stored_tensor;

/* The tensor last written under a run's tag (whatever its step: a run
 * evaluated again has its newest evaluation read):
 * 1 and *out filled, 0 when the run has none under that tag (an older file
 * without the table included), -1 with a message (a damaged row names the
 * file, run and tag). */
int tw_run_store_read_tensor(tw_run_store *store, int64_t run_id, const char *tag, tw_stored_tensor *out);
void tw_stored_tensor_clear(tw_stored_tensor *t);
/* Every tensor record of a run, in writing order, each with its tag
 * (tags[i], NULL-terminated): 0, or -1 with a message. */
int tw_run_store_read_run_tensors(tw_run_store *store, int64_t run_id, tw_stored_tensor **tensors, char ***tags,
                                  int *n);
void tw_stored_tensors_free(tw_stored_tensor *tensors, char **tags, int n);
/* The ids of the runs with a tensor under tag (malloc'd, ascending; none
 * in an older file without the table). */
int tw_run_store_runs_with_tensor(tw_run_store *store, const char *tag, int64_t **ids, int *n);
#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
