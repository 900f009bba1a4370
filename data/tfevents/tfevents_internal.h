/* Insides of the TensorBoard event reader (data/tfevents/), shared by the
 * decoder, the protobuf checks and the importer. Not installed. */
#ifndef TW_TFEVENTS_INTERNAL_H
#define TW_TFEVENTS_INTERNAL_H

#include <glib.h>
#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

#include "tw/run_store.h"
#include "tw/tfevents.h"

/* TensorFlow's DataType numbers (tensorflow/core/framework/types.proto)
 * for the dtypes event files carry. */
enum {
    TW_TB_DT_FLOAT = 1,
    TW_TB_DT_DOUBLE = 2,
    TW_TB_DT_INT32 = 3,
    TW_TB_DT_STRING = 7,
    TW_TB_DT_INT64 = 9,
    TW_TB_DT_HALF = 19,
};

/* Nesting past this is refused before protobuf-c (which recurses without a
 * limit) sees the bytes: Google's own parsers stop at 100 too. */
#define TW_PB_MAX_DEPTH 100

/* Walk a message's wire format against its descriptor without building it:
 * every key, varint and length in bounds, each known field with a wire
 * type its type allows, no deeper than max_depth. 0, or -1 with why (e.g.
 * "field 2 (step) of tensorflow.Event: wire type 2 (length-delimited)
 * where int64 takes a varint"). Unknown fields are skipped, as protobuf-c
 * keeps them. */
int tw__pb_check(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t n, int max_depth, char *why,
                 size_t size);

/* A bump allocator for protobuf-c: a record's messages are freed at once by
 * resetting it, so decoding costs no malloc once it has grown. */
typedef struct tw_pb_arena_block tw_pb_arena_block;
typedef struct {
    ProtobufCAllocator allocator; /* hand &arena->allocator to protobuf-c */
    tw_pb_arena_block *blocks;
} tw_pb_arena;

void tw__pb_arena_init(tw_pb_arena *a);
void tw__pb_arena_reset(tw_pb_arena *a); /* keeps the largest block */
void tw__pb_arena_free(tw_pb_arena *a);

/* 0 when logdir is a folder we can read, else -1 with why (log_dir.c). */
int tw__tb_check_logdir(const char *logdir);

/* A run's folder: logdir itself for the run "." (log_dir.c). g_free. */
char *tw__tb_run_dir(const char *logdir, const char *run);

/* The hparams plugin's data (hparams_json.c). content: a serialized
 * HParamsPluginData. Its JSON (g_free) and, in *kind,
 * TW_TB_HPARAMS_EXPERIMENT, _START or _END; NULL with why when the bytes
 * are not such a message (nesting is checked first). */
char *tw__tb_hparams_json(const uint8_t *content, size_t n, ProtobufCAllocator *allocator, tw_tb_kind *kind,
                          char *why, size_t size);

/* twb's graph JSON as a serialized GraphDef (graph_def.c), g_free; NULL
 * with why when it is not a twb graph. */
uint8_t *tw__tb_graph_def_from_json(const char *json, size_t *n, char *why, size_t size);

/* A serialized GraphDef as twb's graph JSON (graph_def_read.c; g_free),
 * the graph named function. NULL with why when the bytes are not a
 * GraphDef of named nodes; the JSON with why set when inputs naming no
 * node were left out, else why is "". */
char *tw__tb_graph_json_from_graph_def(const uint8_t *data, size_t size, const char *function, char *why,
                                       size_t why_size);

/* One output argument of an op (op_def.proto's ArgDef): its name, and
 * when it is a list, the node attr its length is (number_attr, an int) or
 * the list of types whose length it is (type_list_attr); both NULL: one
 * tensor. */
typedef struct {
    const char *name, *number_attr, *type_list_attr;
} tw_tb_output_arg;
#define TW_TB_MAX_OUTPUT_ARGS 6

/* The output arguments of a common TensorFlow op with several outputs or
 * a list of them, in order (*n of them; op_outputs.c); NULL for an op the
 * table does not know. */
const tw_tb_output_arg *tw__tb_op_output_args(const char *op, int *n);

typedef struct tw_summary_writer tw_summary_writer;
typedef struct sqlite3 sqlite3;

/* The runs of one import or one follower written through one connection
 * (import_batch.c): a run whose event files are small (at most
 * TW_TB_BULK_MAX_BYTES when it opens) goes through a summary writer
 * without a thread, inside the transaction the batch holds, committed at
 * once the first time and then every TW_TB_BATCH_MS (and whenever a run
 * with a thread of its own opens or closes, as that thread's connection
 * waits for the write lock). A thousand runs of a few kilobytes cost a
 * few dozen transactions instead of a thousand threads, connections and
 * several commits each. What a commit wrote stays written (kill -9 loses
 * at most the open batch, whose runs a new import reads again). */
#define TW_TB_BULK_MAX_BYTES (4 << 20)
#define TW_TB_BATCH_MS 200

/* Bytes per value of "float32", "float64", "int32" or "int64"; n values
 * (doubles) packed into out in that dtype, little-endian (tensor_pack.c). */
size_t tw__tb_dtype_width(const char *dtype);
void tw__tb_pack_numbers(const char *dtype, const double *values, int64_t n, void *out);

/* The imported runs' final metrics, gathered from their items
 * (import_metrics.c). */
typedef struct {
    GHashTable *runs;      /* run name -> its newest scalars, NULL before the first */
    char *experiment_json; /* the hparams plugin's experiment, the last one read */
    bool dirty;            /* items came since the last write */
    bool all_dirty;        /* an experiment came: every run's metrics are written again */
} tw_tb_metrics;
/* What the item tells of the run's metrics (scalars, a session, the experiment). */
void tw__tb_metrics_note(tw_tb_metrics *m, const char *run, int64_t run_id, const tw_tb_item *it);
/* The runs' metrics_json from what was noted, when anything new was: 0, or
 * -1 with a message. */
int tw__tb_metrics_write(tw_tb_metrics *m, sqlite3 *db, const char *db_path);
void tw__tb_metrics_clear(tw_tb_metrics *m);

typedef struct {
    sqlite3 *db; /* the importer's connection (tw__tb_open_database) */
    const char *db_path;
    bool open;    /* a transaction is open */
    gint64 since; /* when it began (monotonic microseconds) */
    int commits;
    char *error; /* the first failure; the batch is over */
    struct tw_summary_statements *statements; /* the bulk runs' writers', prepared once */
    tw_tb_metrics metrics; /* written with the batch's commits (tw__tb_batch_commit) */
} tw_tb_batch;
/* 0, or -1 with the message (the batch's failure, set and kept). */
int tw__tb_batch_begin(tw_tb_batch *b);
int tw__tb_batch_commit(tw_tb_batch *b);
int tw__tb_batch_commit_due(tw_tb_batch *b);
/* Roll the open transaction back and end the batch with that message. */
void tw__tb_batch_fail(tw_tb_batch *b, const char *message);
/* Free what the batch holds, once its runs are closed and it is committed
 * (before the connection closes). */
void tw__tb_batch_end(tw_tb_batch *b);

/* One run being written into the run database (import.c): its summary
 * writer, and what goes into the run's row rather than its series. The
 * importer and the live follower (follow.c) feed it the same way. */
typedef struct {
    sqlite3 *db; /* the batch's connection, for the run rows */
    const char *db_path, *run;
    tw_tb_batch *batch;
    bool bulk;            /* written within the batch, without a thread */
    tw_summary_writer *w; /* NULL while suspended */
    int64_t run_id;
    bool failed; /* its writer could not be opened again: items are dropped */
    tw_tb_import_stats *stats;
    tw_tb_warn_fn warn;
    void *user_data;
    double last_wall, first_wall; /* first_wall NaN until an event has one */
    char *model_json;   /* the run's model (the Keras callback's config) */
    char *hparams_json; /* not yet handed to the writer */
    bool row_dirty;     /* the run's row lacks the start time or model */
    bool live;          /* followed: its status follows its events (import.c) */
    bool shown_running; /* what the row says now */
    double shown_end;
    GHashTable *refused_tags;        /* tags already warned about */
} tw_tb_sink;

/* The importer's connection to the database (created when missing), held
 * for the whole import: besides writing the run rows, it keeps SQLite
 * from checkpointing the write-ahead log (and syncing the disk) each time
 * a run's writer closes its own connection, which made an import of many
 * small runs wait on the disk. NULL with a message. */
sqlite3 *tw__tb_open_database(const char *path);
/* 0; 1 when the run's name is taken (warned, counted in refused_runs); -1
 * with a message when the database cannot be written. bulk: the run is
 * written within the batch, else by a writer thread of its own (callers
 * choose bulk for event files of at most TW_TB_BULK_MAX_BYTES: a bigger
 * one reads faster with its writing on another core). */
int tw__tb_sink_open(tw_tb_sink *s, tw_tb_batch *batch, const char *run, bool bulk, tw_tb_import_stats *stats,
                     tw_tb_warn_fn warn, void *user_data);
/* A tw_tb_item_fn and a tw_tb_warn_fn taking the sink. */
void tw__tb_sink_item(void *sink, const tw_tb_item *item);
void tw__tb_sink_warn(void *sink, const char *message);
/* Bring the run's row up to date (hyperparameters, start time, model and,
 * for a live run, its status) while the run stays open; a bulk run's
 * queued records are written into the batch. */
int tw__tb_sink_sync(tw_tb_sink *s);
/* A followed run gone quiet: its writer (a thread and a connection) is
 * closed, the run finished at its last event; the next item opens it
 * again, appending. A directory of a thousand old runs then holds no
 * thousand threads. */
int tw__tb_sink_suspend(tw_tb_sink *s);
/* After a followed run's files were read: sync, and suspend the run when
 * its newest event is not recent. */
int tw__tb_sink_settle(tw_tb_sink *s);
/* Close the writer with that status; the row gets the events' times. */
int tw__tb_sink_close(tw_tb_sink *s, tw_run_status status);

/* tw_tb_import with every run through a writer thread of its own
 * (bulk_max_bytes 0) or the runs up to that size within one batch. */
int tw__tb_import_runs(const char *logdir, const char *db_path, uint64_t bulk_max_bytes, tw_tb_warn_fn warn_fn,
                       void *user_data, tw_tb_import_stats *stats);

#endif
