/* Layer internals shared by the layer core, the built-in layer classes and
 * the Sequential model. Not installed. */
#ifndef TW_LAYER_INTERNAL_H
#define TW_LAYER_INTERNAL_H

#include "internal.h"
#include "tw/model.h"

/* A value restored before its layer was built (deferred restore). */
typedef struct tw_pending_weight {
    char *name; /* the weight's name within its layer: "kernel" */
    tw_tensor *value;
    struct tw_pending_weight *next;
} tw_pending_weight;

struct tw_layer {
    const tw_layer_class *klass;
    int refcount;
    char name[64];
    bool trainable;
    tw_dtype dtype; /* of the weights */
    tw_param_value *values; /* klass->nparams */
    tw_shape batch_input_shape; /* ndim 0: unset */
    void *state;                /* klass->state_size bytes, zeroed */

    /* Layers inside (Sequential), each holding a reference. */
    int nchildren, children_capacity;
    tw_layer **children;

    bool built;
    tw_shape input_shape, output_shape;
    /* Layers of several inputs or outputs (infer_n): every shape of the
     * build, inputs then outputs (malloc'd; NULL for one of each). */
    int ninputs, noutputs;
    tw_shape *io_shapes;
    int nweights;
    tw_weight_spec specs[TW_MAX_LAYER_WEIGHTS];
    tw_tensor *weights[TW_MAX_LAYER_WEIGHTS];
    tw_pending_weight *pending;
};

/* params.c: text <-> values for one parameter definition. The message on
 * failure is "expected ..., got \"text\"" (without the key; callers add it). */
int tw__param_parse(const tw_param_def *def, const char *text, tw_param_value *out, char *err, size_t errsize);
int tw__param_check(const tw_param_def *def, const tw_param_value *value, char *err, size_t errsize);
char *tw__param_format(const tw_param_def *def, const tw_param_value *value);
/* A FLOATS value owns its list: copy it deeply, free it with clear. */
int tw__param_value_copy(tw_param_value *dst, const tw_param_value *src);
void tw__param_value_clear(tw_param_value *value);

/* Children management for container layers (sequential.c uses it). */
int tw__layer_insert_child(tw_layer *parent, int index, tw_layer *child);

/* A layer of a class that need not be registered (Functional). */
tw_layer *tw__layer_new_of(const tw_layer_class *klass, const char *name);

/* The class's own infer or infer_n for the inputs (no children walked). */
int tw__layer_class_infer(const tw_layer *layer, const tw_shape *inputs, int ninputs, tw_shape *outputs,
                          int *noutputs, tw_weight_spec *weights, int *nweights);

/* Whether a layer of this class cannot infer from these inputs: one is of
 * unknown shape and the class does not take such (layer.c). */
bool tw__shapes_unknown_to(const tw_layer *layer, const tw_shape *inputs, int ninputs);
/* lambda.c: Lambda's infer_n, which UserLayer (user_layer.c) shares: one
 * output, of the shape the "output_shape" parameter (its first, where the
 * class has parameters) declares after the batch axis, or unknown
 * (TW_SHAPE_UNKNOWN) when it is none; no weights. */
int tw__declared_shape_infer_n(const tw_layer *self, const tw_shape *inputs, int n, tw_shape *outputs,
                               int *noutputs, tw_weight_spec *w, int *nw);

/* Shorthands for class implementations. */
static inline int64_t tw__param_int(const tw_layer *l, int i) { return (int64_t)l->values[i].number; }
static inline double tw__param_float(const tw_layer *l, int i) { return l->values[i].number; }
static inline bool tw__param_bool(const tw_layer *l, int i) { return l->values[i].number != 0; }
static inline const char *tw__param_choice(const tw_layer *l, int i) { return l->values[i].choice; }

/* "Dense 'dense_1': " style prefix for layer error messages. */
#define TW_LAYER_ERROR(layer, fmt, ...) \
    tw_error_set("%s '%s': " fmt, (layer)->klass->name, (layer)->name, ##__VA_ARGS__)

/* The built-in classes, one per file under engine/layers (registry.c). */
#define TW_BUILTIN_LAYER_CLASSES(X) \
    X(Sequential) X(InputLayer) X(Dense) \
    X(SimpleRNN) X(LSTM) X(GRU) \
    X(Rescaling) X(Flatten) X(Reshape) X(Dropout) X(Activation) X(ReLU) X(LeakyReLU) X(ELU) X(Softmax) \
    X(Embedding) X(BatchNormalization) \
    X(LayerNormalization) X(GroupNormalization) X(UnitNormalization) X(GaussianNoise) X(GaussianDropout) X(AlphaDropout) X(SpatialDropout1D) X(SpatialDropout2D) X(ActivityRegularization) X(Permute) X(RepeatVector) X(PReLU) X(ThresholdedReLU) \
    X(Normalization) X(CenterCrop) X(RandomFlip) X(RandomRotation) X(RandomZoom) X(RandomTranslation) X(RandomContrast) \
    X(Conv2D) X(Conv1D) X(MaxPooling2D) X(AveragePooling2D) X(MaxPooling1D) X(AveragePooling1D) \
    X(Conv2DTranspose) X(Conv1DTranspose) X(DepthwiseConv2D) X(SeparableConv2D) X(SeparableConv1D) \
    X(UpSampling2D) X(UpSampling1D) X(ZeroPadding2D) X(ZeroPadding1D) X(Cropping2D) X(Cropping1D) X(Resizing) \
    X(GlobalAveragePooling2D) X(GlobalMaxPooling2D) X(GlobalAveragePooling1D) X(GlobalMaxPooling1D) \
    X(Bidirectional) X(TimeDistributed) X(StringLookup) X(IntegerLookup) \
    X(Add) X(Subtract) X(Multiply) X(Average) X(Maximum) X(Minimum) X(Concatenate) X(Dot) \
    X(Lambda) X(TFOpLambda) \
    X(MultiHeadAttention) X(Attention) X(AdditiveAttention)

#endif
