/* Tensor Workbench — the settings of one training run and what a running
 * one reports: plain data shared by the window's training panel (ui/), the
 * training session that both `twb train` and the window's worker run
 * (app/train_session.c), and the record of the settings that checkpoints
 * and the run database keep (tw_train_settings_json).
 *
 *     tw_train_settings s = tw_train_settings_defaults();
 *     s.data = "fashion-mnist";
 *     s.epochs = 3;
 *     char *json = tw_train_settings_json(&s, 0.001);
 *     ... tw_model_checkpoint_new(path, NULL, model_json, json) ...
 *     free(json);
 */
#ifndef TW_TRAIN_SETTINGS_H
#define TW_TRAIN_SETTINGS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* A layer property set on the model before it is compiled: a sweep
 * trial's ("--set dense_1.units=32"). */
typedef struct {
    char *layer;    /* the layer's path, "dense_1" or "encoder/dense_1" (tw_model_find_layer_path) */
    char *property; /* its config key, "units" */
    double value;
} tw_layer_value;

typedef struct {
    char *data;             /* "fashion-mnist", "spirals", ... (twb_data_load), or a file path: input 0's */
    char **more_data;       /* the files of a model's later inputs (NULL-terminated), or NULL */
    char *labels;           /* labels file beside an IDX/NPY features file, or NULL */
    char *label_column;     /* CSV, or NULL */
    double validation_split;
    char *optimizer;        /* "adam", "sgd", ... */
    char *loss;             /* a Keras loss name, or NULL: the usual loss for the labels */
    double learning_rate;   /* NAN: the optimizer's default */
    int64_t batch_size;
    int epochs;
    uint64_t seed;
    char *run_name;         /* NULL: the session names it */
    char *logdb;            /* run database file, or NULL: no run database */
    int ranks;              /* data-parallel processes (mpirun -np; batch_size is each one's); 0 or 1: one */
    char *device;           /* where the model trains ("cuda:0", tw_device_parse), or NULL: the CPU */
    int nlayer_values;
    tw_layer_value *layer_values; /* set on the model's layers before it is compiled, or NULL */
} tw_train_settings;

/* Adam with its default rate, batch size 32, one epoch, seed 0, no
 * validation split, strings NULL, no layer values. */
tw_train_settings tw_train_settings_defaults(void);
/* A deep copy (tw_train_settings_free); NULL for NULL. */
tw_train_settings *tw_train_settings_copy(const tw_train_settings *s);
/* Frees a copy and its strings; NULL is accepted. */
void tw_train_settings_free(tw_train_settings *s);
/* Frees the strings (and the layer values) of settings filled with
 * copies (g_strdup or strdup, g_new) and zeroes them. */
void tw_train_settings_clear(tw_train_settings *s);

/* The record of how a run was trained, a JSON object (free()):
 * {"data", "epochs", "batch_size", "seed", "optimizer", "learning_rate",
 * "validation_split"}, "data_1", "data_2", ... for more_data's files,
 * "ranks" when more than one and "device" when set,
 * and each layer value as "LAYER.PROPERTY" ("dense_1.units": 32), so a
 * sweep's layer properties are hyperparameters of its runs.
 * learning_rate: the rate the optimizer was built with (NAN writes null). */
char *tw_train_settings_json(const tw_train_settings *s, double learning_rate);

/* What a running training reports after a step. */
typedef struct {
    int epoch, epochs;        /* 0-based epoch */
    int64_t step, steps;
    double samples_per_second;
    double eta_seconds;
    double loss, accuracy;    /* NAN when not known */
    /* -1, or the first step whose logs the run database could not take
     * (full disk, read-only file): training goes on without them. */
    int64_t logs_lost_from_step;
    const char *logs_lost_reason; /* the writer's message then (borrowed, for the callback's time) */
} tw_train_progress;

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
