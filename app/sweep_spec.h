/* What `twb sweep` (sweep_cmd.c) varies: for each of learning rate, batch
 * size, optimizer, epochs and seed, and for any numeric property of a
 * layer of the model ("--set dense_1.units=32,64"; a layer of a nested
 * model by its path, "encoder/dense_1.units", tw_model_find_layer_path), a list of values
 * ("1e-3,3e-3") or a range ("1e-4:1e-2", random search only), and the
 * trials they make — the grid of every combination, or N random draws
 * (ranges: the learning rate log-uniform, whole numbers uniform, other
 * layer properties uniform; lists: one of the values).
 *
 *     twb_sweep_spec spec = {0};
 *     if (twb_sweep_spec_set(&spec, TWB_SWEEP_BATCH_SIZE, "32,64")) ... tw_last_error()
 *     if (twb_sweep_spec_set_layer(&spec, "dense_1.units=32,64")) ...
 *     if (twb_sweep_spec_check_model(&spec, model)) ...   // before the trials
 *     tw_train_settings *trials; int n;
 *     twb_sweep_spec_trials(&spec, &base, &trials, &n);   // g_free(trials)
 *     twb_sweep_spec_clear(&spec);
 *
 * A trial's strings point into the base settings or the spec: keep both.
 * Its layer values (settings.layer_values) lie in the trials' block:
 * g_free(trials) frees them too. */
#ifndef TWB_SWEEP_SPEC_H
#define TWB_SWEEP_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include <tw/model.h>
#include <tw/train_settings.h>

typedef enum {
    TWB_SWEEP_LEARNING_RATE,
    TWB_SWEEP_BATCH_SIZE,
    TWB_SWEEP_OPTIMIZER,
    TWB_SWEEP_EPOCHS,
    TWB_SWEEP_SEED,
    TWB_SWEEP_NPARAMS
} twb_sweep_param;

typedef struct {
    bool given, range;
    int n;          /* values in the list */
    double *values; /* numbers (all but the optimizer) */
    char **names;   /* optimizer names */
    double min, max;
} twb_sweep_axis;

/* A layer property swept: --set LAYER.PROPERTY=VALUES. */
typedef struct {
    char *layer, *property;
    char *option; /* "--set dense_1.units", for messages */
    twb_sweep_axis axis;
    bool whole;   /* an integer property (twb_sweep_spec_check_model): whole draws */
} twb_sweep_layer_axis;

#define TWB_SWEEP_MAX_LAYER_AXES 16

typedef struct {
    twb_sweep_axis axes[TWB_SWEEP_NPARAMS];
    twb_sweep_layer_axis layers[TWB_SWEEP_MAX_LAYER_AXES]; /* in the order given, the last fastest in a grid */
    int nlayers;
    bool random;
    int trials;           /* 0: the whole grid */
    uint64_t sample_seed; /* random search's draws */
} twb_sweep_spec;

/* The command-line option ("--batch-size") and the settings' key ("batch_size"). */
const char *twb_sweep_param_option(twb_sweep_param p);
const char *twb_sweep_param_key(twb_sweep_param p);
/* The option's value parsed and checked: 0, or -1 with a message naming the
 * option and what is wrong (empty, not a number, 0 batch size, min > max). */
int twb_sweep_spec_set(twb_sweep_spec *spec, twb_sweep_param p, const char *text);
/* "LAYER.PROPERTY=VALUES" (the text of --set) parsed: 0, or -1 with a
 * message (not that form, a property given twice, a value that is not a
 * number, min > max). Whether the layer has the property and takes the
 * values, twb_sweep_spec_check_model says. */
int twb_sweep_spec_set_layer(twb_sweep_spec *spec, const char *text);
/* Every layer axis against the model: the layer exists (by path, or a
 * bare name found once; the message names the candidates), the
 * property is a number of its class (INT or FLOAT), each listed value and
 * each end of a range is one the layer takes (tw_layer_set's rules, on a
 * copy of the layer). Marks integer properties whole. 0, or -1 with a
 * message naming the --set. */
int twb_sweep_spec_check_model(twb_sweep_spec *spec, const tw_model *model);
/* Whether the trials differ in p (more than one value, or a range). */
bool twb_sweep_param_swept(const twb_sweep_spec *spec, twb_sweep_param p);
/* The same for layer axis i. */
bool twb_sweep_layer_swept(const twb_sweep_spec *spec, int i);
/* The trials, each base with the swept values: 0, or -1 with a message (a
 * range without --random, --random without --trials, a grid too large). */
int twb_sweep_spec_trials(const twb_sweep_spec *spec, const tw_train_settings *base, tw_train_settings **trials,
                          int *n);
void twb_sweep_spec_clear(twb_sweep_spec *spec);

/* What the CLI sweep and the window's (sweep_queue.c) share about trials: */
/* "sweep-20261126-093000" (g_free). */
char *twb_sweep_default_name(void);
/* Names each trial's run NAME-K (K from 1, zero-padded to the count's
 * width; a g_strdup'd run_name, freed by the caller). */
void twb_sweep_name_trials(tw_train_settings *trials, int n, const char *sweep_name);
/* 0 when no trial's run name is taken in the database (absent or empty: none
 * is), or -1 with a message: a sweep run again under its name would fail
 * every trial one by one. */
int twb_sweep_check_names_free(const char *logdb, const tw_train_settings *trials, int n);
/* The trial's swept values, "learning_rate=0.001 batch_size=32
 * dense_1.units=64" (g_free). */
char *twb_sweep_describe(const twb_sweep_spec *spec, const tw_train_settings *trial);

/* A grid larger than this is refused (name fewer values or use --trials). */
#define TWB_SWEEP_MAX_TRIALS 10000

#endif
