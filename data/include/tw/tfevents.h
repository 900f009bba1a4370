/* Tensor Workbench — TensorBoard event files (events.out.tfevents.*): the
 * TFRecord framing, the Event and Summary messages, and importing a log
 * directory into the run database (tw/run_store.h). docs/tensorboard.md
 * says what is read and how each kind is stored.
 *
 *     tw_tfrecord_reader *r = tw_tfrecord_open(path, warn, NULL);
 *     tw_tb_decoder *d = tw_tb_decoder_new(path, warn, NULL);
 *     const uint8_t *data; size_t n; uint64_t offset;
 *     while (tw_tfrecord_next(r, &data, &n, &offset) == TW_TFRECORD_OK)
 *         tw_tb_decode_event(d, data, n, offset, on_item, NULL);
 *
 * Bad input never stops a file: a damaged record, a message that is not an
 * Event, a value of the wrong shape is reported through the warning
 * callback ("FILE: offset N: what is wrong") and reading goes on with the
 * next record. Files are read in pieces: memory grows with the largest
 * record, not with the file.
 */
#ifndef TW_TFEVENTS_H
#define TW_TFEVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tw/run_store.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* A warning: a whole message naming the file and offset, no newline. */
typedef void (*tw_tb_warn_fn)(void *user_data, const char *message);

/* ---- TFRecord framing ------------------------------------------------------ */
/* Each record: uint64 length, masked CRC-32C of the length, the data, masked
 * CRC-32C of the data (all little-endian). */
uint32_t tw_crc32c(uint32_t crc, const void *data, size_t n);
uint32_t tw_tfrecord_masked_crc(const void *data, size_t n);

/* Records larger than this are refused (skipped with a warning): no event
 * TensorBoard writes comes near it, and a damaged length must not make us
 * allocate gigabytes. */
#define TW_TFRECORD_MAX_LENGTH ((uint64_t)256 << 20)

typedef struct tw_tfrecord_reader tw_tfrecord_reader;

typedef enum {
    TW_TFRECORD_OK,    /* a record whose checksums match */
    TW_TFRECORD_END,   /* the end of the file, every byte accounted for */
    TW_TFRECORD_AGAIN, /* the file ends inside a record: a live file's writer has not finished it */
    TW_TFRECORD_ERROR, /* the file cannot be read (message set, tw_last_error) */
} tw_tfrecord_status;

/* NULL with a message (tw_last_error) when the file cannot be opened. */
tw_tfrecord_reader *tw_tfrecord_open(const char *path, tw_tb_warn_fn warn, void *user_data);
void tw_tfrecord_close(tw_tfrecord_reader *r);
/* The next whole record: *data (valid until the next call), its length and
 * the file offset of its header. Damaged records are skipped with a
 * warning. At the end of the file a record cut short gives AGAIN and the
 * reader stays before it, so a later call reads it once its writer has
 * finished it (a live file). */
tw_tfrecord_status tw_tfrecord_next(tw_tfrecord_reader *r, const uint8_t **data, size_t *n, uint64_t *offset);
/* After AGAIN, for a file that is complete: warn that it ends inside a
 * record, and skip those bytes. */
void tw_tfrecord_report_cut(tw_tfrecord_reader *r);
/* Close the file whenever the reader reaches its end (END or AGAIN) and
 * open it again, at the same place, for the next call: a process following
 * thousands of files holds no descriptor for the idle ones. */
void tw_tfrecord_close_when_idle(tw_tfrecord_reader *r);
/* The offset the next record will be read from. */
uint64_t tw_tfrecord_offset(const tw_tfrecord_reader *r);
const char *tw_tfrecord_path(const tw_tfrecord_reader *r);

/* ---- Event and Summary ------------------------------------------------------- */
typedef enum {
    TW_TB_FILE_VERSION,      /* text: "brain.Event:2" */
    TW_TB_SCALAR,            /* value: simple_value, or a TF2 float/double scalar tensor */
    TW_TB_HISTOGRAM,         /* histogram: HistogramProto, or a TF2 [k, 3] tensor */
    TW_TB_IMAGE,             /* image: Summary.Image, or one of a TF2 image tensor's strings */
    TW_TB_TEXT,              /* text: the text plugin's strings (markdown) */
    TW_TB_GRAPH_DEF,         /* bytes: a serialized GraphDef; text: it as twb's graph JSON (docs/graph_json.md), NULL when it cannot be read (warned) */
    TW_TB_META_GRAPH_DEF,    /* bytes: a serialized MetaGraphDef */
    TW_TB_KERAS_MODEL,       /* text: the Keras callback's model config (JSON) */
    TW_TB_HPARAMS_EXPERIMENT, /* text: the experiment as JSON: {"name", "description", "hparams": [...], "metrics": [...]} */
    TW_TB_HPARAMS_START,     /* text: the session's hyperparameters as a JSON object */
    TW_TB_HPARAMS_END,       /* text: {"status": "success"|"failure"|"running"|"unknown", "end_time": seconds} */
    TW_TB_SESSION_LOG,       /* session_status (1 start, 2 stop, 3 checkpoint), text: its message or checkpoint path */
    TW_TB_TENSOR,            /* tensor: a tensor of numbers of no plugin (not a rank-0 float: a scalar) */
    TW_TB_OTHER,             /* a value of a kind not read (audio, other plugins): text names it */
} tw_tb_kind;

typedef struct {
    double min, max, num;  /* num: how many values */
    double sum, sum_squares; /* NaN where the format does not carry them (TF2) */
    int nbuckets;
    const double *left, *right, *count; /* bucket k holds count[k] values in [left[k], right[k]] */
} tw_tb_histogram;

typedef struct {
    int width, height;   /* from the image's own header (PNG, GIF) or as declared (JPEG) */
    int colorspace;      /* channels as declared, 0 when not */
    const char *format;  /* "png", "jpeg" or "gif" */
    const uint8_t *data; /* the encoded image */
    size_t size;
} tw_tb_image;

#define TW_TB_TENSOR_MAX_DIMS 8
typedef struct {
    const char *dtype; /* "float32", "float64", "int32" or "int64" (a half tensor's values read as float32) */
    int ndim;
    int64_t dims[TW_TB_TENSOR_MAX_DIMS];
    int64_t numel;
    const double *values; /* numel, row-major */
} tw_tb_tensor;

typedef struct {
    tw_tb_kind kind;
    const char *tag;   /* "" for an event's own fields (file_version, graph_def, session_log) */
    const char *plugin; /* the value's plugin name, "" when none */
    int64_t step;       /* 0 when the event has none (proto3's default) */
    double wall_time;   /* NaN when the event has none */
    uint64_t offset;    /* the record's offset in its file */
    double value;
    int session_status;
    tw_tb_histogram histogram;
    tw_tb_image image;
    tw_tb_tensor tensor;
    const char *text; /* NUL-terminated */
    size_t text_len;
    const uint8_t *bytes;
    size_t nbytes;
} tw_tb_item;

/* Everything an item points to lives until the callback returns. */
typedef void (*tw_tb_item_fn)(void *user_data, const tw_tb_item *item);

/* One decoder per file: TensorBoard's writers send a tag's plugin only with
 * its first value, so the decoder remembers each tag's plugin. */
typedef struct tw_tb_decoder tw_tb_decoder;
tw_tb_decoder *tw_tb_decoder_new(const char *path, tw_tb_warn_fn warn, void *user_data);
void tw_tb_decoder_free(tw_tb_decoder *d);
/* Decode one record and call fn for each item in it. -1 (after a warning)
 * when the record is not an Event; values that cannot be read are warned
 * about and left out, the rest of the event still delivered. */
int tw_tb_decode_event(tw_tb_decoder *d, const uint8_t *data, size_t n, uint64_t offset, tw_tb_item_fn fn,
                       void *user_data);

/* ---- a log directory ----------------------------------------------------------- */
/* Whether a file name is an event file's: TensorBoard's rule, "tfevents"
 * anywhere in the name. */
bool tw_tb_is_event_file(const char *name);

/* The runs of a log directory: every directory at or under logdir holding
 * event files, named by its path relative to logdir ("." for logdir
 * itself), as TensorBoard names them; sorted by name. A NULL-terminated
 * array (g_strfreev), or NULL with a message when logdir cannot be read. */
char **tw_tb_list_runs(const char *logdir);

/* A run directory's event files (paths), by name: TensorBoard reads them in
 * that order (their names start with the time they were created). */
char **tw_tb_run_files(const char *run_dir);

/* The graph series an imported run's GraphDef is stored under (as twb's
 * graph JSON, which the graph view draws). */
#define TW_TB_GRAPH_TAG "graph_def"

typedef struct {
    int64_t runs, files, records;
    int64_t refused_runs; /* their names were already in the database */
    int64_t scalars, histograms, texts, hparams, images;
    int64_t graphs;        /* GraphDefs stored as the graph series "graph_def" */
    int64_t tensors;       /* tensors of numbers of no plugin (evaluation tables) */
    int64_t other;         /* read but not stored (meta graphs, audio, other plugins: docs/tensorboard.md) */
    int64_t warnings;
} tw_tb_import_stats;

/* Import every run of logdir into the run database at db_path (NULL: the
 * default file), each as a finished run with the run's name; a run whose
 * name is already in the database is refused (a warning) and the rest go
 * on. Warnings (damaged records, values not read) go to warn. -1 with a
 * message when logdir cannot be read or the database cannot be opened or
 * written. */
int tw_tb_import(const char *logdir, const char *db_path, tw_tb_warn_fn warn, void *user_data,
                 tw_tb_import_stats *stats);

/* ---- following a log directory live --------------------------------------- */
/* A thread that imports every run of logdir into the run database at
 * db_path (runs whose names are already there are refused, as by
 * tw_tb_import), then follows it: what writers append to event files, new
 * event files and new run folders go into the database as they appear
 * (inotify), each run through its own summary writer, its status
 * "running" until the follower stops. warn is called on the follower's
 * thread. NULL with a message when logdir cannot be read or watched. */
typedef struct tw_tb_follower tw_tb_follower;
tw_tb_follower *tw_tb_follow(const char *logdir, const char *db_path, tw_tb_warn_fn warn, void *user_data);
/* Stop the thread and close the runs (finished). NULL is accepted. */
void tw_tb_follower_stop(tw_tb_follower *f);

/* ---- writing event files ----------------------------------------------------- */
/* An event file that TensorBoard reads: DIR/events.out.tfevents.<seconds>.
 * <host>.<pid>.<n>.v2 (DIR created when missing), opening with the file
 * version record. Records are buffered and reach the file whole, at
 * tw_tb_writer_flush, at close and whenever 64 KiB are waiting. What each
 * kind is written as: docs/tensorboard.md. Errors name the file; after a
 * failed write every call fails. */
typedef struct tw_tb_writer tw_tb_writer;
tw_tb_writer *tw_tb_writer_open(const char *dir);
const char *tw_tb_writer_path(const tw_tb_writer *w);
int tw_tb_writer_flush(tw_tb_writer *w);
int tw_tb_writer_close(tw_tb_writer *w); /* flushes; NULL is accepted */
/* A float64 rank-0 tensor of plugin "scalars" (every value exact). */
int tw_tb_write_scalar(tw_tb_writer *w, const char *tag, int64_t step, double wall_time, double value);
/* A HistogramProto whose buckets are h's (equal width over [min, max]). */
int tw_tb_write_histogram(tw_tb_writer *w, const char *tag, const tw_histogram *h);
/* A Summary.Image of encoded bytes (PNG, JPEG, GIF); channels 0: unknown. */
int tw_tb_write_image(tw_tb_writer *w, const char *tag, int64_t step, double wall_time, int width, int height,
                      int channels, const uint8_t *data, size_t size);
/* A rank-0 string tensor of plugin "text" (markdown). */
int tw_tb_write_text(tw_tb_writer *w, const char *tag, int64_t step, double wall_time, const char *text);
/* A tensor of numbers ("float32", "float64", "int32" or "int64"; data:
 * its values row-major, little-endian, size bytes) as a TF2 tensor summary
 * without a plugin; our reader reads it back as a tensor (TW_TB_TENSOR). */
int tw_tb_write_tensor(tw_tb_writer *w, const char *tag, int64_t step, double wall_time, const char *dtype, int ndim,
                       const int64_t *dims, const void *data, size_t size);
/* A traced graph (twb's graph JSON, docs/graph_json.md) as the event's
 * GraphDef: its top-level nodes with their scope-path names, ops, inputs
 * and output shapes (_output_shapes). 1, with a message, when the JSON is
 * not a twb graph (nothing written); -1 when the file cannot be written. */
int tw_tb_write_graph(tw_tb_writer *w, int64_t step, double wall_time, const char *graph_json);
/* A Keras model config (JSON) as the Keras TensorBoard callback writes it:
 * tag "keras", plugin "graph_keras_model" (read back as the run's
 * model_json). */
int tw_tb_write_keras_model(tw_tb_writer *w, int64_t step, double wall_time, const char *model_json);
/* A JSON object of hyperparameters as the hparams plugin's session start. */
int tw_tb_write_hparams(tw_tb_writer *w, const char *hparams_json, double wall_time);

typedef struct {
    int64_t scalars, histograms, images, texts, hparams, graphs;
    int64_t models; /* the run's model_json, written as the Keras callback's model config */
    int64_t graphs_left_out; /* graph records that are not twb graphs */
    int64_t tensors;         /* tensor records (an evaluation's tables) */
    int64_t left_out;        /* series (or images) that could not be read, a damaged chunk say */
    char *left_out_messages; /* one line each, naming the file, run and tag (g_free); NULL when none */
} tw_tb_export_stats;

/* Write the stored run run_name of the database at db_path (NULL: the
 * default) as one event file in dir: its scalars, histograms, images,
 * texts (the hparams plugin's text records left out: the run's
 * hyperparameters are written as the plugin's session start instead),
 * graphs and the run's model_json (as the Keras callback's model config).
 * *file (g_free; may be NULL) gets the file's path. A series that cannot
 * be read is left out, the rest written, and stats->left_out_messages says
 * which and why. -1 with a message when the file cannot be written (no
 * partial file is left) or the run cannot be found. */
int tw_tb_export_run(const char *db_path, const char *run_name, const char *dir, char **file,
                     tw_tb_export_stats *stats);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
