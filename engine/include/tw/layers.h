/* Tensor Workbench — layers (Keras' tf.keras.layers).
 *
 * A layer is an object with a class (Dense, Conv2D, ...), a name, a config
 * (typed parameters under Keras' own key names, with Keras' defaults) and,
 * once built, its weights. It builds on first call from the input shape, as
 * Keras' build() does, and is called with a training flag.
 *
 *     tw_layer *dense = tw_layer_new("Dense", NULL);
 *     tw_layer_set(dense, "units", "64");
 *     tw_layer_set(dense, "activation", "relu");
 *     tw_tensor *y = tw_layer_call(dense, x, true);    // builds, then runs
 *
 * Everything static about a layer — its output shape and its weights' shapes
 * for a given input shape — comes from one function of its class, `infer`,
 * so summaries and the designer's live shapes use the same code that builds
 * and runs the layer. Layers are reference counted (a trunk may be shared by
 * two models). A model (tw/model.h) is a layer of class "Sequential".
 *
 * Errors follow tw/error.h: NULL or -1 and a message naming the layer and
 * the offending value or shape.
 */
#ifndef TW_LAYERS_H
#define TW_LAYERS_H

#include "random.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* A static shape; -1 is an unknown size (the batch, Keras' None). */
typedef struct {
    int ndim;
    int64_t dims[TW_MAX_DIMS];
} tw_shape;

/* A shape not known at all, rank included (Keras' TensorShape(None)): the
 * output of Python code whose shape a Keras file does not give (a Lambda)
 * and of the layers after it. Such a model opens and summarizes, and is
 * built only up to it. */
#define TW_SHAPE_UNKNOWN (-1)
static inline bool tw_shape_known(const tw_shape *shape) { return shape->ndim >= 0; }

/* "(None, 28, 28, 1)" into buf, Keras' way of printing shapes; "?" for an
 * unknown shape. */
const char *tw_shape_format(const tw_shape *shape, char *buf, size_t size);
int64_t tw_shape_numel(const tw_shape *shape); /* -1 when a size is unknown */

/* ---- parameters (a layer's config) ---------------------------------------- */
typedef enum {
    TW_PARAM_INT,
    TW_PARAM_FLOAT,
    TW_PARAM_BOOL,
    TW_PARAM_CHOICE,      /* one of a fixed list of words (activation, padding) */
    TW_PARAM_INTS,        /* a tuple of integers (kernel_size, target_shape) */
    TW_PARAM_REGULARIZER, /* L1/L2 weight penalty, Keras' L1L2; None by default */
    TW_PARAM_FLOATS,      /* a list of numbers of any length (Normalization's mean, a factor range) */
} tw_param_type;

typedef struct {
    const char *key;            /* Keras' config key: "units" */
    tw_param_type type;
    const char *default_value;  /* text form, as tw_layer_set takes it; "" for None */
    double min, max;            /* INT, FLOAT and each INTS or FLOATS element, inclusive */
    int length;                 /* INTS, FLOATS: the tuple length, 0 for any length */
    const char *const *choices; /* CHOICE: NULL-terminated */
    bool nullable;              /* accepts None ("" or "none") */
    const char *help;           /* one line for tooltips and `twb layers` */
    int pairs;                  /* INTS: a tuple of this many (start, end) pairs is written
                                   nested, as Keras writes ((top, bottom), (left, right)) */
} tw_param_def;

typedef struct {
    bool is_null;
    double number;      /* INT, FLOAT, BOOL (0 or 1); REGULARIZER: l1 */
    double number2;     /* REGULARIZER: l2 */
    int n;              /* INTS, FLOATS: count */
    int64_t ints[TW_MAX_DIMS];
    /* FLOATS: n numbers, owned by whoever holds the value (a layer keeps its
     * own copy; tw_layer_set_value copies the caller's). */
    double *floats;
    const char *choice; /* CHOICE: one of def->choices (static storage) */
} tw_param_value;

/* Activation names accepted wherever Keras takes an activation. */
extern const char *const tw_activation_names[]; /* NULL-terminated */
/* Initializer names (Keras' snake_case identifiers). */
extern const char *const tw_initializer_names[];

/* ---- layer classes -------------------------------------------------------- */
typedef struct tw_layer tw_layer;

#define TW_MAX_LAYER_WEIGHTS 8
/* The most inputs and outputs one layer call takes and gives (merge layers,
 * attention's query/value/key, a recurrent layer's states). */
#define TW_MAX_LAYER_IO 64

/* One weight a layer creates when built. */
typedef struct {
    const char *name;            /* "kernel", "bias", "moving_mean" */
    tw_shape shape;
    const char *initializer;     /* a name from tw_initializer_names */
    bool trainable;              /* false for statistics such as moving_mean */
    const char *regularizer_key; /* config key of its L1L2 penalty, or NULL */
} tw_weight_spec;

typedef struct {
    bool training;
    tw_rng *rng; /* what random layers (Dropout) draw from; may be NULL in inference */
    /* Where layers add their activity penalties (ActivityRegularization): a
     * 0-d tensor the caller owns (one reference; NULL until a layer adds
     * one) and releases after use. NULL: penalties are not collected. */
    tw_tensor **activity_loss;
    /* Data-parallel training (the model's optimizer averages across MPI
     * ranks, tw/distributed.h): BatchNormalization's batch statistics are
     * those of every rank's batch together (SyncBN), so every rank must
     * make the same calls. */
    bool sync_batch_stats;
} tw_call_context;

typedef struct tw_layer_class {
    const char *name;    /* Keras' class_name: "Dense" */
    const char *group;   /* palette group: "Core", "Convolution", "Pooling", "Normalization",
                            "Regularization", "Recurrent", "Activation" */
    const char *summary; /* one line for the palette */
    const tw_param_def *params;
    int nparams;
    size_t state_size; /* bytes of private state per instance (tw_layer_state), 0 for none */
    /* Reads the parameters (already checked against their defs) into the
     * state and checks them against each other. Called on creation and after
     * every change. Optional. */
    int (*configure)(tw_layer *self);
    /* Output shape and weights for an input shape; -1 with a message when the
     * input cannot work, e.g. "expected input of rank 4 (batch, height,
     * width, channels), got (None, 64)". */
    int (*infer)(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *weights,
                 int *nweights);
    /* The forward pass with engine ops (recorded on tapes). Weights are
     * tw_layer_weight(self, i) in the order infer listed them. */
    tw_tensor *(*call)(tw_layer *self, tw_tensor *x, const tw_call_context *ctx);
    void (*finalize)(tw_layer *self); /* frees what configure allocated; optional */
    /* Containers (Sequential) build the layers they hold after their own
     * weights. Optional. */
    int (*build_children)(tw_layer *self, const tw_shape *input, tw_rng *rng);
    /* Adjusts weight `index` right after its initializer ran, before a
     * restored value replaces it (LSTM's unit_forget_bias). Optional. */
    int (*init_weight)(tw_layer *self, int index);
    /* Wrappers (Bidirectional, TimeDistributed), whose layers inside do not
     * run one after another: the output shape and the parameter counts, the
     * inner layers' included, in one walk. Optional: without it a layer's
     * children are inferred in order, as a Sequential's are. */
    int (*infer_wrapped)(const tw_layer *self, const tw_shape *input, tw_shape *output, int64_t *trainable,
                         int64_t *non_trainable);
    /* Wrappers of several inputs or outputs (Bidirectional given initial
     * states, or giving final states or two outputs): infer_wrapped for any
     * count, used instead of it when set. Optional. */
    int (*infer_wrapped_n)(const tw_layer *self, const tw_shape *inputs, int ninputs, tw_shape *outputs,
                           int *noutputs, int64_t *trainable, int64_t *non_trainable);
    /* Copies what a layer holds besides its parameters (a lookup layer's
     * vocabulary) into a clone. Optional. */
    int (*clone_extra)(tw_layer *copy, const tw_layer *layer);
    /* Layers of several inputs or outputs (Add, Concatenate, Dot; later
     * MultiHeadAttention's query/value/key and recurrent layers' states)
     * set these instead of infer and call; a class may set both pairs, and
     * then infer/call serve the one-input case. infer_n fills outputs and
     * *noutputs (at most TW_MAX_LAYER_IO) and the weights as infer does;
     * call_n fills outputs and returns how many, or -1. Both optional. */
    int (*infer_n)(const tw_layer *self, const tw_shape *inputs, int ninputs, tw_shape *outputs, int *noutputs,
                   tw_weight_spec *weights, int *nweights);
    int (*call_n)(tw_layer *self, tw_tensor *const *inputs, int ninputs, tw_tensor **outputs,
                  const tw_call_context *ctx);
    /* Containers whose children's shapes are fixed when they are made
     * (Functional models): the parameters of the layers inside, each
     * counted once; 1 when some count depends on a shape not known (the
     * rest counted). Their infer_n then gives only the shapes. Optional. */
    int (*count_params)(const tw_layer *self, int64_t *trainable, int64_t *non_trainable);
    /* Containers whose structure is not in their config (Functional)
     * copy themselves for tw_layer_clone. Optional. */
    tw_layer *(*clone)(const tw_layer *self, const char *name);
    /* Layers that open, infer and count but cannot be called here (Python
     * code from a Keras file, string tensors): why, without the layer's
     * name; their call fails with the same reason. NULL when it runs.
     * Optional. */
    const char *(*cannot_run)(const tw_layer *self);
    /* infer/infer_n take inputs of unknown shape (TW_SHAPE_UNKNOWN) and
     * say what comes out (Lambda: the output_shape it declares). Without
     * it, a layer given one gives one unknown output, and its parameters
     * are counted only where they do not depend on that input
     * (tw_layer_infer_n). */
    bool takes_unknown_shapes;
} tw_layer_class;

/* Built-in classes are registered from the start; programs may add theirs. */
int tw_layer_class_register(const tw_layer_class *klass);
const tw_layer_class *tw_layer_class_find(const char *name);
int tw_layer_class_count(void);
const tw_layer_class *tw_layer_class_at(int index);
const tw_param_def *tw_layer_class_param(const tw_layer_class *klass, const char *key);

/* ---- layers --------------------------------------------------------------- */
/* Every parameter at its default. name NULL: the model names it when added
 * ("dense", "dense_1", ...). */
tw_layer *tw_layer_new(const char *class_name, const char *name);
tw_layer *tw_layer_ref(tw_layer *layer);
void tw_layer_unref(tw_layer *layer); /* NULL is accepted */

const tw_layer_class *tw_layer_class_of(const tw_layer *layer);
const char *tw_layer_name(const tw_layer *layer);
int tw_layer_set_name(tw_layer *layer, const char *name);
/* A copy with the same config and no weights (the designer's Duplicate). */
tw_layer *tw_layer_clone(const tw_layer *layer, const char *name);

/* Set a parameter from text: "64", "0.5", "true", "relu", "3,3" or "(3, 3)",
 * "none"; regularizers as "l2=0.01" or "l1=0.001,l2=0.01". The message on
 * failure is "units: expected a positive integer, got \"abc\"". Changing a
 * parameter of a built layer is refused (it would invalidate its weights). */
int tw_layer_set(tw_layer *layer, const char *key, const char *text);
int tw_layer_set_value(tw_layer *layer, const char *key, const tw_param_value *value);
const tw_param_value *tw_layer_get(const tw_layer *layer, const char *key);
/* The value as text in tw_layer_set's form (malloc'd). */
char *tw_layer_get_text(const tw_layer *layer, const char *key);
/* Typed reads by index into the class's params (for class implementations). */
const tw_param_value *tw_layer_param(const tw_layer *layer, int index);
void *tw_layer_state(const tw_layer *layer);

/* Keras' input_shape/batch_input_shape on a layer: only the first layer of a
 * model uses it (as Keras does). ndim 0 clears it. */
int tw_layer_set_input_shape(tw_layer *layer, const tw_shape *batch_input_shape);
const tw_shape *tw_layer_input_shape(const tw_layer *layer); /* NULL when unset */

/* The dtype weights are created in (float32 unless set before the build;
 * float64 is what gradient checks use). Applies to every layer inside. */
int tw_layer_set_dtype(tw_layer *layer, tw_dtype dtype);
tw_dtype tw_layer_dtype(const tw_layer *layer);

/* Static inference, no weights allocated: output shape and parameter counts
 * (either count pointer may be NULL). */
int tw_layer_infer(const tw_layer *layer, const tw_shape *input, tw_shape *output, int64_t *trainable_params,
                   int64_t *non_trainable_params);

/* The same for a layer of several inputs and outputs (any layer: a
 * one-input class takes ninputs 1). outputs has room for TW_MAX_LAYER_IO;
 * *noutputs gets the count. An input of unknown shape gives an unknown
 * output; asked for counts that depend on it, it fails saying so. */
int tw_layer_infer_n(const tw_layer *layer, const tw_shape *inputs, int ninputs, tw_shape *outputs, int *noutputs,
                     int64_t *trainable_params, int64_t *non_trainable_params);
/* tw_layer_infer_n with the counts wanted, for inputs of any shape:
 * 0 all counted; 1 some count depends on an input shape that is unknown
 * (after a Lambda whose file gives none), the counts being the known part;
 * -1 an error. outputs and noutputs may be NULL. */
int tw_layer_infer_partial(const tw_layer *layer, const tw_shape *inputs, int ninputs, tw_shape *outputs,
                           int *noutputs, int64_t *trainable, int64_t *non_trainable);

/* Create the weights for an input shape (initialised from rng), then apply
 * weights waiting from a deferred restore. Building twice with the same
 * shape is a no-op; with another shape, an error. */
int tw_layer_build(tw_layer *layer, const tw_shape *input, tw_rng *rng);
int tw_layer_build_n(tw_layer *layer, const tw_shape *inputs, int ninputs, tw_rng *rng);
bool tw_layer_built(const tw_layer *layer);
const tw_shape *tw_layer_output_shape(const tw_layer *layer); /* NULL before build */

/* Run the layer; builds it first when needed (weights drawn from ctx->rng,
 * or a fixed seed when that is NULL). */
tw_tensor *tw_layer_call_ex(tw_layer *layer, tw_tensor *x, const tw_call_context *ctx);
tw_tensor *tw_layer_call(tw_layer *layer, tw_tensor *x, bool training);
/* Several inputs and outputs: fills outputs (room for TW_MAX_LAYER_IO) and
 * returns their count, or -1. The outputs belong to the open scope as any
 * op's do. */
int tw_layer_call_n(tw_layer *layer, tw_tensor *const *inputs, int ninputs, tw_tensor **outputs,
                    const tw_call_context *ctx);
/* Whether the layer can be called here, asked before running it (the
 * designer marks and Train buttons): 0, or -1 with the reason as the last
 * error ("Lambda 'scale': runs Python code saved in the Keras file ..."),
 * the layer's own or that of the first layer inside it (wrapped layers,
 * nested models) that cannot run. */
int tw_layer_check_runnable(const tw_layer *layer);

/* Weights in creation order (borrowed references; variables). */
int tw_layer_nweights(const tw_layer *layer);
tw_tensor *tw_layer_weight(const tw_layer *layer, int index);
const tw_weight_spec *tw_layer_weight_spec(const tw_layer *layer, int index);

/* Frozen layers keep their weights out of trainable_variables and off the
 * tape (Keras' layer.trainable = False). Applies to every layer inside. */
bool tw_layer_trainable(const tw_layer *layer);
int tw_layer_set_trainable(tw_layer *layer, bool trainable);

/* The sum of this layer's L1/L2 weight penalties (a 0-d tensor; 0 when it
 * has none), recorded on active tapes. */
tw_tensor *tw_layer_regularization_loss(const tw_layer *layer);

/* ---- layers of a class the engine does not know ---------------------------- */
/* A Keras file's layer of a user's Python class (Keras 3's module and
 * registered_name, Keras 2's "Package>Class" class_name) or of a Keras
 * class not implemented here, kept so the model opens, summarizes and is
 * written back: what the file says of it verbatim (module,
 * registered_name and build_config NULL where the file has none; config
 * and build_config as JSON text, config without its "name" and
 * "trainable", which the layer holds) and why it cannot run. Its output
 * shape is its "output_shape" parameter (without the batch axis, as the
 * file records it: none, unknown, by default); its parameter count is
 * unknown unless a weights file gives it (tw_user_layer_set_param_count);
 * calling it fails with why, prefixed "UserLayer 'name': ". */
typedef struct {
    const char *class_name, *module, *registered_name, *config, *build_config, *why;
} tw_user_class;
tw_layer *tw_user_layer_new(const char *name, const tw_user_class *keras);
/* What the file said of it; NULL for a layer of another class. */
const tw_user_class *tw_user_layer_keras(const tw_layer *layer);
/* Its Python class's name, as Keras' summary prints it and Keras 3 names
 * its weights' group: the class_name without a package ("MyPkg>MyLayer"
 * in Keras 2's form -> "MyLayer"); NULL for a layer of another class. */
const char *tw_user_layer_python_class(const tw_layer *layer);
/* The class shown for a layer (summaries, the designer's boxes, the
 * layer graph): tw_user_layer_python_class for a class the engine does not
 * know, else its class's name. */
const char *tw_layer_class_shown(const tw_layer *layer);
/* Its parameter count as a weights file gives it (the sizes of what is
 * saved under its name; the file does not say which are trainable, so
 * the reader counts them all trainable): known from then on. */
int tw_user_layer_set_param_count(tw_layer *layer, int64_t trainable, int64_t non_trainable);

/* ---- wrappers (Bidirectional, TimeDistributed) ----------------------------- */
/* A wrapper holds the layer it wraps as a layer inside it, like a model's
 * layers: its weights are the inner layer's ("bidirectional/forward_lstm/
 * kernel"), and clones, freezing, dtypes and checkpoints reach them. A new
 * wrapper holds a layer at its defaults (Bidirectional an LSTM,
 * TimeDistributed a Dense) until one is wrapped.
 *
 *     tw_layer *bi = tw_layer_new("Bidirectional", NULL);
 *     tw_layer_wrap(bi, tw_layer_new("GRU", NULL));   // forward_gru, backward_gru
 *
 * tw_layer_wrap puts `layer` inside `wrapper`, taking the reference, before
 * the wrapper is built. Bidirectional takes a recurrent layer: its forward
 * layer is `layer` renamed "forward_<name>", its backward layer a copy named
 * "backward_<name>" reading the sequence the other way (Keras' default).
 * An unnamed layer is named after its class first ("gru"). */
int tw_layer_wrap(tw_layer *wrapper, tw_layer *layer);
/* Bidirectional's backward_layer: replaces the copy with a layer of its own
 * config (taking the reference), named "backward_<name>". Keras' rules hold:
 * the same return_sequences as the forward layer and the other
 * go_backwards; merge modes other than concat need outputs of one size. */
int tw_bidirectional_set_backward(tw_layer *bidirectional, tw_layer *backward);
/* The layers inside a wrapper: 0 is the wrapped layer (Bidirectional's
 * forward one), 1 Bidirectional's backward one; NULL past them (borrowed). */
tw_layer *tw_layer_inner(const tw_layer *wrapper, int index);

/* ---- lookup layers (StringLookup, IntegerLookup) --------------------------- */
/* The vocabulary Keras keeps inline in the config, as text: tokens for
 * StringLookup, decimal integers ("42") for IntegerLookup. Index 0 is the
 * mask token's when there is one, then come num_oov_indices OOV indices,
 * then the vocabulary in order. Replaces the previous one; refused for other
 * layers, for repeated tokens, for the mask or OOV token among them (except
 * leading the list, as Keras' get_vocabulary gives them: they are dropped),
 * and once the layer is built. The engine has no string tensors: a
 * StringLookup opens, infers and counts (no parameters), and refuses to run. */
int tw_lookup_set_vocabulary(tw_layer *layer, int n, const char *const *tokens);
int tw_lookup_vocabulary_size(const tw_layer *layer); /* -1 for other layers */
const char *tw_lookup_token(const tw_layer *layer, int index); /* NULL out of range */
/* "mask_token" (None by default) and "oov_token" ("[UNK]", IntegerLookup's
 * -1) as text; NULL is None. */
int tw_lookup_set_special_token(tw_layer *layer, const char *key, const char *token);
const char *tw_lookup_special_token(const tw_layer *layer, const char *key);

/* ---- weights by path (checkpoints) ---------------------------------------- */
/* Calls fn for every weight, depth first, with its path: "dense_1/kernel",
 * "trunk/dense/bias" for a layer inside a nested model. */
typedef int (*tw_weight_fn)(const char *path, tw_tensor *weight, bool trainable, void *user_data);
int tw_layer_foreach_weight(const tw_layer *layer, tw_weight_fn fn, void *user_data);
/* Assign a weight by path. If the layer holding it is not built yet, the
 * value waits and is assigned when it is (the deferred restore of TF2's
 * checkpoints). Shape or dtype mismatches fail, naming the path. */
int tw_layer_restore_weight(tw_layer *layer, const char *path, tw_tensor *value);
/* Values still waiting for their layer to be built. */
int tw_layer_pending_restores(const tw_layer *layer);

/* ---- initializers --------------------------------------------------------- */
/* Keras' initializers by name ("glorot_uniform", "he_normal", "orthogonal",
 * "zeros", "ones", ...), fans computed from the shape as Keras does. */
tw_tensor *tw_initializer_run(const char *name, tw_rng *rng, tw_dtype dtype, const tw_shape *shape);

/* The activation function by name ("relu", "softmax", "linear", ...). */
tw_tensor *tw_activation_apply(const char *name, tw_tensor *x);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
