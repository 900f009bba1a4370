/* The layer object: creation, config, build, call, weights, freezing and
 * regularization. What a layer computes lives in its class (one file per
 * class under engine/layers/); this file is what every layer shares. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layer_internal.h"

const char *tw_shape_format(const tw_shape *shape, char *buf, size_t size)
{
    if (!tw_shape_known(shape)) {
        snprintf(buf, size, "?");
        return buf;
    }
    int len = snprintf(buf, size, "(");
    for (int i = 0; i < shape->ndim && len < (int)size; i++) {
        const char *sep = i ? ", " : "";
        if (shape->dims[i] < 0)
            len += snprintf(buf + len, size - len, "%sNone", sep);
        else
            len += snprintf(buf + len, size - len, "%s%lld", sep, (long long)shape->dims[i]);
    }
    if (len < (int)size)
        snprintf(buf + len, size - len, shape->ndim == 1 ? ",)" : ")");
    return buf;
}

int64_t tw_shape_numel(const tw_shape *shape)
{
    int64_t n = 1;
    for (int i = 0; i < shape->ndim; i++)
        if (shape->dims[i] < 0 || __builtin_mul_overflow(n, shape->dims[i], &n))
            return -1;
    return n;
}

static int configure(tw_layer *layer)
{
    return layer->klass->configure ? layer->klass->configure(layer) : 0;
}

tw_layer *tw_layer_new(const char *class_name, const char *name)
{
    const tw_layer_class *klass = tw_layer_class_find(class_name);
    return klass ? tw__layer_new_of(klass, name) : NULL;
}

tw_layer *tw__layer_new_of(const tw_layer_class *klass, const char *name)
{
    tw_layer *layer = calloc(1, sizeof *layer);
    layer->klass = klass;
    layer->refcount = 1;
    layer->trainable = true;
    layer->dtype = TW_FLOAT32;
    snprintf(layer->name, sizeof layer->name, "%s", name ? name : "");
    layer->values = calloc(klass->nparams ? klass->nparams : 1, sizeof *layer->values);
    layer->state = klass->state_size ? calloc(1, klass->state_size) : NULL;
    for (int i = 0; i < klass->nparams; i++) {
        char err[256];
        /* A default that does not parse is a bug in the class table. */
        int rc = tw__param_parse(&klass->params[i], klass->params[i].default_value, &layer->values[i], err, sizeof err);
        if (rc) {
            fprintf(stderr, "tw: %s.%s: bad default: %s\n", klass->name, klass->params[i].key, err);
            abort();
        }
    }
    if (configure(layer)) {
        tw_layer_unref(layer);
        return NULL;
    }
    return layer;
}

tw_layer *tw_layer_ref(tw_layer *layer)
{
    if (layer)
        __atomic_add_fetch(&layer->refcount, 1, __ATOMIC_RELAXED);
    return layer;
}

static void free_pending(tw_layer *layer)
{
    while (layer->pending) {
        tw_pending_weight *p = layer->pending;
        layer->pending = p->next;
        tw_tensor_unref(p->value);
        free(p->name);
        free(p);
    }
}

void tw_layer_unref(tw_layer *layer)
{
    if (!layer || __atomic_sub_fetch(&layer->refcount, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    if (layer->klass->finalize)
        layer->klass->finalize(layer);
    for (int i = 0; i < layer->nchildren; i++)
        tw_layer_unref(layer->children[i]);
    for (int i = 0; i < layer->nweights; i++)
        tw_tensor_unref(layer->weights[i]);
    free_pending(layer);
    free(layer->children);
    for (int i = 0; i < layer->klass->nparams; i++)
        tw__param_value_clear(&layer->values[i]);
    free(layer->io_shapes);
    free(layer->values);
    free(layer->state);
    free(layer);
}

const tw_layer_class *tw_layer_class_of(const tw_layer *layer)
{
    return layer->klass;
}

const char *tw_layer_name(const tw_layer *layer)
{
    return layer->name;
}

int tw_layer_set_name(tw_layer *layer, const char *name)
{
    if (!name || !name[0] || strchr(name, '/') || strlen(name) >= sizeof layer->name)
        return tw_error_set("%s: a layer name must be 1 to %zu characters without '/', got \"%s\"",
                            layer->klass->name, sizeof layer->name - 1, name ? name : "");
    snprintf(layer->name, sizeof layer->name, "%s", name);
    return 0;
}

tw_layer *tw_layer_clone(const tw_layer *layer, const char *name)
{
    if (layer->klass->clone)
        return layer->klass->clone(layer, name);
    /* Its own class, registered or not (UserLayer is not). */
    tw_layer *copy = tw__layer_new_of(layer->klass, name);
    if (!copy)
        return NULL;
    for (int i = 0; i < layer->klass->nparams; i++) {
        tw__param_value_clear(&copy->values[i]);
        if (tw__param_value_copy(&copy->values[i], &layer->values[i])) {
            tw_layer_unref(copy);
            return NULL;
        }
    }
    copy->batch_input_shape = layer->batch_input_shape;
    copy->trainable = layer->trainable;
    copy->dtype = layer->dtype;
    /* A new wrapper holds a default layer: the clones replace it. */
    for (int i = 0; i < layer->nchildren; i++) {
        tw_layer *child = tw_layer_clone(layer->children[i], layer->children[i]->name);
        if (!child) {
            tw_layer_unref(copy);
            return NULL;
        }
        if (i < copy->nchildren) {
            tw_layer_unref(copy->children[i]);
            copy->children[i] = child;
        } else {
            tw__layer_insert_child(copy, i, child);
        }
    }
    if ((layer->klass->clone_extra && layer->klass->clone_extra(copy, layer)) || configure(copy)) {
        tw_layer_unref(copy);
        return NULL;
    }
    return copy;
}

static int param_index(const tw_layer *layer, const char *key)
{
    for (int i = 0; i < layer->klass->nparams; i++)
        if (!strcmp(layer->klass->params[i].key, key))
            return i;
    return tw_error_set("%s: no parameter \"%s\"", layer->klass->name, key);
}

const tw_param_def *tw_layer_class_param(const tw_layer_class *klass, const char *key)
{
    for (int i = 0; i < klass->nparams; i++)
        if (!strcmp(klass->params[i].key, key))
            return &klass->params[i];
    return NULL;
}

/* Replace one value with a copy of it, re-run configure, and roll back if
 * the layer refuses. */
static int store_value(tw_layer *layer, int index, const tw_param_value *value)
{
    if (layer->built)
        return tw_error_set("%s '%s': cannot change %s after the layer is built", layer->klass->name, layer->name,
                            layer->klass->params[index].key);
    tw_param_value old = layer->values[index];
    if (tw__param_value_copy(&layer->values[index], value))
        return -1;
    if (configure(layer)) {
        tw__param_value_clear(&layer->values[index]);
        layer->values[index] = old;
        configure(layer);
        return -1;
    }
    tw__param_value_clear(&old);
    return 0;
}

int tw_layer_set(tw_layer *layer, const char *key, const char *text)
{
    int i = param_index(layer, key);
    if (i < 0)
        return -1;
    tw_param_value value;
    char err[512];
    if (tw__param_parse(&layer->klass->params[i], text ? text : "", &value, err, sizeof err))
        return tw_error_set("%s: %s", key, err);
    int rc = store_value(layer, i, &value);
    tw__param_value_clear(&value);
    return rc;
}

int tw_layer_set_value(tw_layer *layer, const char *key, const tw_param_value *value)
{
    int i = param_index(layer, key);
    if (i < 0)
        return -1;
    char err[512];
    if (tw__param_check(&layer->klass->params[i], value, err, sizeof err))
        return tw_error_set("%s: %s", key, err);
    return store_value(layer, i, value);
}

const tw_param_value *tw_layer_get(const tw_layer *layer, const char *key)
{
    int i = param_index(layer, key);
    return i < 0 ? NULL : &layer->values[i];
}

char *tw_layer_get_text(const tw_layer *layer, const char *key)
{
    int i = param_index(layer, key);
    return i < 0 ? NULL : tw__param_format(&layer->klass->params[i], &layer->values[i]);
}

const tw_param_value *tw_layer_param(const tw_layer *layer, int index)
{
    return &layer->values[index];
}

void *tw_layer_state(const tw_layer *layer)
{
    return layer->state;
}

int tw_layer_set_input_shape(tw_layer *layer, const tw_shape *shape)
{
    if (shape && (shape->ndim < 0 || shape->ndim > TW_MAX_DIMS))
        return tw_error_set("%s '%s': input shape has %d dimensions; at most %d are supported", layer->klass->name,
                            layer->name, shape->ndim, TW_MAX_DIMS);
    for (int i = 1; shape && i < shape->ndim; i++)
        if (shape->dims[i] == 0 || shape->dims[i] < -1)
            return tw_error_set("%s '%s': input shape dimension %d is %lld", layer->klass->name, layer->name, i,
                                (long long)shape->dims[i]);
    if (shape)
        layer->batch_input_shape = *shape;
    else
        memset(&layer->batch_input_shape, 0, sizeof layer->batch_input_shape);
    return 0;
}

const tw_shape *tw_layer_input_shape(const tw_layer *layer)
{
    return layer->batch_input_shape.ndim ? &layer->batch_input_shape : NULL;
}

int tw_layer_set_dtype(tw_layer *layer, tw_dtype dtype)
{
    if (!tw_dtype_is_float(dtype))
        return TW_LAYER_ERROR(layer, "weights must be a float dtype, got %s", tw_dtype_name(dtype));
    if (layer->built && layer->dtype != dtype)
        return TW_LAYER_ERROR(layer, "cannot change the dtype after the layer is built");
    layer->dtype = dtype;
    for (int i = 0; i < layer->nchildren; i++)
        if (tw_layer_set_dtype(layer->children[i], dtype))
            return -1;
    return 0;
}

tw_dtype tw_layer_dtype(const tw_layer *layer)
{
    return layer->dtype;
}

static int infer_n(const tw_layer *layer, const tw_shape *inputs, int ninputs, tw_shape *outputs, int *noutputs,
                   int64_t *t, int64_t *nt, bool count, bool *unknown);

/* A container's output is its children's in order, and its parameters are
 * theirs: one walk gives both (asking its class's infer too would infer
 * every child twice per level, exponential in the nesting depth). */
static int infer_children(const tw_layer *layer, const tw_shape *input, tw_shape *out, int64_t *t, int64_t *nt,
                          bool count, bool *unknown)
{
    *out = *input;
    for (int i = 0; i < layer->nchildren; i++) {
        int64_t ct = 0, cnt = 0;
        tw_shape outs[TW_MAX_LAYER_IO];
        int nout = 1;
        if (infer_n(layer->children[i], out, 1, outs, &nout, &ct, &cnt, count, unknown))
            return -1;
        if (nout != 1)
            return TW_LAYER_ERROR(layer->children[i], "gives %d outputs where one is expected", nout);
        *out = outs[0];
        *t += layer->trainable ? ct : 0;
        *nt += cnt + (layer->trainable ? 0 : ct);
    }
    return 0;
}

bool tw__shapes_unknown_to(const tw_layer *layer, const tw_shape *inputs, int ninputs)
{
    if (layer->klass->takes_unknown_shapes)
        return false;
    for (int i = 0; i < ninputs; i++)
        if (!tw_shape_known(&inputs[i]))
            return true;
    return false;
}

int tw__layer_class_infer(const tw_layer *layer, const tw_shape *inputs, int ninputs, tw_shape *outputs,
                          int *noutputs, tw_weight_spec *weights, int *nweights)
{
    *nweights = 0;
    /* Weights need sizes: what calls this builds or checks them. */
    if (tw__shapes_unknown_to(layer, inputs, ninputs))
        return TW_LAYER_ERROR(layer, "its input shape is unknown (it comes from Python code that cannot run "
                                     "here), so its weights cannot be made");
    if (ninputs == 1 && layer->klass->infer) {
        *noutputs = 1;
        return layer->klass->infer(layer, inputs, outputs, weights, nweights);
    }
    if (layer->klass->infer_n)
        return layer->klass->infer_n(layer, inputs, ninputs, outputs, noutputs, weights, nweights);
    return TW_LAYER_ERROR(layer, "takes one input, got %d", ninputs);
}

/* A layer given an input of unknown shape: its parameters are counted
 * when they come out the same for every stand-in of that input that the
 * layer takes, at least two, or none at all for the one it takes: weights
 * that do not depend on that input (an Embedding's, a Dropout's none).
 * The stand-ins: 1 to 5 axes besides the batch, every size 32, then 48,
 * and the shapes of the call's known inputs (a merge takes only those).
 * Dense's kernel takes the last size, so its count changes and stays
 * unknown. A nested model counts its own graph. */
static int counts_without_shape(const tw_layer *layer, const tw_shape *inputs, int ninputs, int64_t *t, int64_t *nt)
{
    if (layer->klass->count_params)
        return layer->klass->count_params(layer, t, nt); /* 1: some count inside it is unknown */
    tw_shape stand_ins[10 + TW_MAX_LAYER_IO];
    int nstand = 0;
    for (int rank = 2; rank <= 6; rank++)
        for (int64_t size = 32; size <= 48; size += 16) {
            tw_shape *p = &stand_ins[nstand++];
            *p = (tw_shape){rank, {-1}};
            for (int d = 1; d < rank; d++)
                p->dims[d] = size;
        }
    for (int k = 0; k < ninputs; k++)
        if (tw_shape_known(&inputs[k]))
            stand_ins[nstand++] = inputs[k];
    int agreeing = 0, s;
    for (s = 0; s < nstand; s++) {
        tw_shape probe[TW_MAX_LAYER_IO];
        for (int k = 0; k < ninputs; k++)
            probe[k] = tw_shape_known(&inputs[k]) ? inputs[k] : stand_ins[s];
        int64_t pt = 0, pnt = 0;
        if (tw_layer_infer_n(layer, probe, ninputs, NULL, NULL, &pt, &pnt))
            continue;
        if (agreeing && (pt != *t || pnt != *nt))
            break;
        *t = pt, *nt = pnt;
        agreeing++;
    }
    tw_error_clear(); /* the stand-ins' refusals are no error of the model */
    if (s == nstand && (agreeing >= 2 || (agreeing == 1 && *t + *nt == 0)))
        return 0;
    *t = *nt = 0; /* nothing counted */
    return 1;
}

/* tw_layer_infer_n's work. count: the counts are wanted (an unknown
 * input's stand-ins are tried only then); *unknown is set when one depends
 * on a shape not known, the counts then being the known part. */
static int infer_n(const tw_layer *layer, const tw_shape *inputs, int ninputs, tw_shape *outputs, int *noutputs,
                   int64_t *trainable_params, int64_t *non_trainable_params, bool count, bool *unknown)
{
    tw_weight_spec specs[TW_MAX_LAYER_WEIGHTS];
    int n = 0, nout = 1;
    tw_shape out[TW_MAX_LAYER_IO];
    int64_t t = 0, nt = 0;
    if (ninputs < 1 || ninputs > TW_MAX_LAYER_IO)
        return TW_LAYER_ERROR(layer, "takes 1 to %d inputs, got %d", TW_MAX_LAYER_IO, ninputs);
    int rc = 0;
    if (tw__shapes_unknown_to(layer, inputs, ninputs)) {
        out[0] = (tw_shape){TW_SHAPE_UNKNOWN};
        int c = count ? counts_without_shape(layer, inputs, ninputs, &t, &nt) : 0;
        rc = c < 0 ? -1 : 0;
        *unknown |= c > 0;
    } else if (layer->klass->count_params) {
        rc = tw__layer_class_infer(layer, inputs, ninputs, out, &nout, specs, &n);
        int c = rc ? 0 : layer->klass->count_params(layer, &t, &nt);
        rc = rc || c < 0 ? -1 : 0;
        *unknown |= c > 0;
    } else if (layer->klass->infer_wrapped_n)
        rc = layer->klass->infer_wrapped_n(layer, inputs, ninputs, out, &nout, &t, &nt);
    else if ((layer->klass->infer_wrapped || layer->nchildren) && ninputs != 1)
        rc = TW_LAYER_ERROR(layer, "takes one input, got %d", ninputs);
    else if (layer->klass->infer_wrapped)
        rc = layer->klass->infer_wrapped(layer, inputs, out, &t, &nt);
    else if (layer->nchildren)
        rc = infer_children(layer, inputs, out, &t, &nt, count, unknown);
    else
        rc = tw__layer_class_infer(layer, inputs, ninputs, out, &nout, specs, &n);
    if (rc)
        return -1;
    for (int i = 0; i < n; i++) {
        int64_t count = tw_shape_numel(&specs[i].shape);
        char buf[96];
        if (count < 0)
            return TW_LAYER_ERROR(layer, "weight %s has shape %s, too large to hold", specs[i].name,
                                  tw_shape_format(&specs[i].shape, buf, sizeof buf));
        if (specs[i].trainable && layer->trainable)
            t += count;
        else
            nt += count;
    }
    if (outputs)
        memcpy(outputs, out, sizeof *out * nout);
    if (noutputs)
        *noutputs = nout;
    *trainable_params = t;
    *non_trainable_params = nt;
    return 0;
}

int tw_layer_infer_partial(const tw_layer *layer, const tw_shape *inputs, int ninputs, tw_shape *outputs,
                           int *noutputs, int64_t *trainable, int64_t *non_trainable)
{
    bool unknown = false;
    if (infer_n(layer, inputs, ninputs, outputs, noutputs, trainable, non_trainable, true, &unknown))
        return -1;
    return unknown ? 1 : 0;
}

int tw_layer_infer_n(const tw_layer *layer, const tw_shape *inputs, int ninputs, tw_shape *outputs, int *noutputs,
                     int64_t *trainable_params, int64_t *non_trainable_params)
{
    bool count = trainable_params || non_trainable_params, unknown = false;
    int64_t t, nt;
    if (infer_n(layer, inputs, ninputs, outputs, noutputs, &t, &nt, count, &unknown))
        return -1;
    if (count && unknown)
        return TW_LAYER_ERROR(layer, "its parameter count depends on an input shape that is unknown (it comes "
                                     "from Python code that cannot run here)");
    if (trainable_params)
        *trainable_params = t;
    if (non_trainable_params)
        *non_trainable_params = nt;
    return 0;
}

int tw_layer_infer(const tw_layer *layer, const tw_shape *input, tw_shape *output, int64_t *trainable_params,
                   int64_t *non_trainable_params)
{
    tw_shape out[TW_MAX_LAYER_IO];
    int nout;
    if (tw_layer_infer_n(layer, input, 1, out, &nout, trainable_params, non_trainable_params))
        return -1;
    if (nout != 1)
        return TW_LAYER_ERROR(layer, "gives %d outputs where one is expected", nout);
    if (output)
        *output = out[0];
    return 0;
}

static bool same_shape_ignoring_batch(const tw_shape *a, const tw_shape *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int i = 1; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

/* Restored values must match exactly (tw_assign alone would broadcast). */
static int assign_exact(const char *path, tw_tensor *w, tw_tensor *value)
{
    char a[96], b[96];
    if (tw_tensor_ndim(w) != tw_tensor_ndim(value) ||
        memcmp(tw_tensor_shape(w), tw_tensor_shape(value), sizeof(int64_t) * tw_tensor_ndim(w)))
        return tw_error_set("%s: shape %s does not match the layer's %s", path,
                            tw_shape_str(tw_tensor_ndim(value), tw_tensor_shape(value), a, sizeof a),
                            tw_shape_str(tw_tensor_ndim(w), tw_tensor_shape(w), b, sizeof b));
    if (tw_tensor_dtype(value) != tw_tensor_dtype(w))
        return tw_error_set("%s: dtype %s does not match the layer's %s", path, tw_dtype_name(tw_tensor_dtype(value)),
                            tw_dtype_name(tw_tensor_dtype(w)));
    return tw_assign(w, value);
}

static int take_pending(tw_layer *layer, int index)
{
    tw_pending_weight **link = &layer->pending;
    for (; *link; link = &(*link)->next) {
        tw_pending_weight *p = *link;
        if (strcmp(p->name, layer->specs[index].name))
            continue;
        char path[160];
        snprintf(path, sizeof path, "%s/%s", layer->name, p->name);
        if (assign_exact(path, layer->weights[index], p->value))
            return -1;
        *link = p->next;
        tw_tensor_unref(p->value);
        free(p->name);
        free(p);
        return 0;
    }
    return 0;
}

/* Builds may happen inside the caller's scope (a first call), so the
 * temporaries live in a scope of their own and the layer takes its own
 * reference to each weight. */
static int create_weights(tw_layer *layer, tw_rng *rng)
{
    int rc = 0;
    tw_scope_begin();
    for (int i = 0; i < layer->nweights && !rc; i++) {
        const tw_weight_spec *spec = &layer->specs[i];
        tw_tensor *init = tw_initializer_run(spec->initializer, rng, layer->dtype, &spec->shape);
        if (!init) {
            rc = TW_LAYER_ERROR(layer, "initialising %s: %s", spec->name, tw_last_error());
            break;
        }
        char name[160];
        snprintf(name, sizeof name, "%s/%s", layer->name, spec->name);
        layer->weights[i] = tw_tensor_ref(tw_variable(init, name, spec->trainable && layer->trainable));
        if (!layer->weights[i] || (layer->klass->init_weight && layer->klass->init_weight(layer, i)) ||
            take_pending(layer, i))
            rc = -1;
    }
    tw_scope_end();
    return rc;
}

/* Whether inputs are the shapes the layer was built for, batch aside. */
static bool built_for(const tw_layer *layer, const tw_shape *inputs, int ninputs)
{
    if (ninputs != layer->ninputs)
        return false;
    for (int i = 0; i < ninputs; i++)
        if (!same_shape_ignoring_batch(i ? &layer->io_shapes[i] : &layer->input_shape, &inputs[i]))
            return false;
    return true;
}

static const char *shapes_format(const tw_shape *shapes, int n, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && len + 2 < size; i++) {
        char one[96];
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " and " : "",
                                tw_shape_format(&shapes[i], one, sizeof one));
    }
    return buf;
}

int tw_layer_build_n(tw_layer *layer, const tw_shape *inputs, int ninputs, tw_rng *rng)
{
    char a[256], b[256];
    if (layer->built) {
        if (built_for(layer, inputs, ninputs))
            return 0;
        const tw_shape *had = layer->io_shapes ? layer->io_shapes : &layer->input_shape;
        return TW_LAYER_ERROR(layer, "was built for input %s and cannot take %s",
                              shapes_format(had, layer->ninputs, a, sizeof a),
                              shapes_format(inputs, ninputs, b, sizeof b));
    }
    tw_shape out[TW_MAX_LAYER_IO];
    int n = 0, nout = 1;
    if (ninputs < 1 || ninputs > TW_MAX_LAYER_IO)
        return TW_LAYER_ERROR(layer, "takes 1 to %d inputs, got %d", TW_MAX_LAYER_IO, ninputs);
    if (tw__layer_class_infer(layer, inputs, ninputs, out, &nout, layer->specs, &n))
        return -1;
    layer->nweights = n;
    if (create_weights(layer, rng))
        goto fail;
    if (layer->klass->build_children && layer->klass->build_children(layer, inputs, rng))
        goto fail;
    layer->input_shape = inputs[0];
    layer->output_shape = out[0];
    layer->ninputs = ninputs;
    layer->noutputs = nout;
    if (ninputs > 1 || nout > 1) {
        layer->io_shapes = malloc(sizeof *layer->io_shapes * (size_t)(ninputs + nout));
        memcpy(layer->io_shapes, inputs, sizeof *inputs * ninputs);
        memcpy(layer->io_shapes + ninputs, out, sizeof *out * nout);
    }
    layer->built = true;
    return 0;
fail:
    for (int i = 0; i < layer->nweights; i++) {
        tw_tensor_unref(layer->weights[i]);
        layer->weights[i] = NULL;
    }
    layer->nweights = 0;
    return -1;
}

int tw_layer_build(tw_layer *layer, const tw_shape *input, tw_rng *rng)
{
    return tw_layer_build_n(layer, input, 1, rng);
}

bool tw_layer_built(const tw_layer *layer)
{
    return layer->built;
}

const tw_shape *tw_layer_output_shape(const tw_layer *layer)
{
    return layer->built ? &layer->output_shape : NULL;
}

static tw_shape shape_of(const tw_tensor *x)
{
    tw_shape s = {.ndim = tw_tensor_ndim(x)};
    memcpy(s.dims, tw_tensor_shape(x), sizeof(int64_t) * s.ndim);
    if (s.ndim)
        s.dims[0] = -1;
    return s;
}

/* Builds the layer on its first call, from the inputs' shapes. */
static int build_on_call(tw_layer *layer, tw_tensor *const *inputs, int ninputs, const tw_call_context *ctx)
{
    if (layer->built)
        return 0;
    /* Building inside a traced call: the initialisers' draws are not
     * part of the computation, the variables they fill are. */
    struct tw_tracer *tracer = tw__trace_suspend();
    tw_shape in[TW_MAX_LAYER_IO];
    for (int i = 0; i < ninputs; i++)
        in[i] = shape_of(inputs[i]);
    tw_rng *rng = ctx->rng ? ctx->rng : tw_rng_new(0);
    int rc = tw_layer_build_n(layer, in, ninputs, rng);
    if (!ctx->rng)
        tw_rng_free(rng);
    tw__trace_resume(tracer);
    return rc;
}

int tw_layer_check_runnable(const tw_layer *layer)
{
    if (!layer)
        return tw_error_set("layer: NULL");
    const char *why = layer->klass->cannot_run ? layer->klass->cannot_run(layer) : NULL;
    if (why)
        return TW_LAYER_ERROR(layer, "%s", why);
    /* Containers and wrappers hold their layers as children. */
    for (int i = 0; i < layer->nchildren; i++)
        if (tw_layer_check_runnable(layer->children[i]))
            return -1;
    return 0;
}

tw_tensor *tw_layer_call_ex(tw_layer *layer, tw_tensor *x, const tw_call_context *ctx)
{
    if (!x)
        return NULL;
    if (!layer->klass->call) {
        tw_tensor *out[TW_MAX_LAYER_IO];
        int n = tw_layer_call_n(layer, &x, 1, out, ctx);
        if (n > 1)
            TW_LAYER_ERROR(layer, "gives %d outputs where one is expected", n);
        return n == 1 ? out[0] : NULL;
    }
    if (build_on_call(layer, &x, 1, ctx))
        return NULL;
    /* Like a composite op: the intermediates die with this scope. Traced
     * nodes carry the layer's name as their scope. */
    tw_scope_begin();
    tw_name_scope_push(layer->name);
    tw_tensor *y = layer->klass->call(layer, x, ctx);
    tw_name_scope_pop();
    return tw__scope_return(y);
}

int tw_layer_call_n(tw_layer *layer, tw_tensor *const *inputs, int ninputs, tw_tensor **outputs,
                    const tw_call_context *ctx)
{
    if (ninputs < 1 || ninputs > TW_MAX_LAYER_IO)
        return TW_LAYER_ERROR(layer, "takes 1 to %d inputs, got %d", TW_MAX_LAYER_IO, ninputs);
    for (int i = 0; i < ninputs; i++)
        if (!inputs[i])
            return -1; /* an earlier op failed: keep its message */
    if (ninputs == 1 && layer->klass->call) {
        outputs[0] = tw_layer_call_ex(layer, inputs[0], ctx);
        return outputs[0] ? 1 : -1;
    }
    if (!layer->klass->call_n)
        return TW_LAYER_ERROR(layer, "takes one input, got %d", ninputs);
    if (build_on_call(layer, inputs, ninputs, ctx))
        return -1;
    tw_scope_begin();
    tw_name_scope_push(layer->name);
    int n = layer->klass->call_n(layer, inputs, ninputs, outputs, ctx);
    tw_name_scope_pop();
    for (int i = 0; i < n; i++)
        tw_tensor_ref(outputs[i]);
    tw_scope_end();
    for (int i = 0; i < n; i++)
        tw__track(outputs[i]);
    return n;
}

tw_tensor *tw_layer_call(tw_layer *layer, tw_tensor *x, bool training)
{
    tw_call_context ctx = {.training = training, .rng = NULL};
    return tw_layer_call_ex(layer, x, &ctx);
}

int tw_layer_nweights(const tw_layer *layer)
{
    return layer->nweights;
}

tw_tensor *tw_layer_weight(const tw_layer *layer, int index)
{
    return index >= 0 && index < layer->nweights ? layer->weights[index] : NULL;
}

const tw_weight_spec *tw_layer_weight_spec(const tw_layer *layer, int index)
{
    return index >= 0 && index < layer->nweights ? &layer->specs[index] : NULL;
}

bool tw_layer_trainable(const tw_layer *layer)
{
    return layer->trainable;
}

int tw_layer_set_trainable(tw_layer *layer, bool trainable)
{
    layer->trainable = trainable;
    for (int i = 0; i < layer->nweights; i++)
        tw_variable_set_trainable(layer->weights[i], trainable && layer->specs[i].trainable);
    for (int i = 0; i < layer->nchildren; i++)
        tw_layer_set_trainable(layer->children[i], trainable);
    return 0;
}

static tw_tensor *penalty(const tw_param_value *r, tw_tensor *w)
{
    tw_tensor *sum = tw_scalar(0);
    if (r->number > 0)
        sum = tw_add(sum, tw_mul_scalar(tw_sum_all(tw_abs(w)), r->number));
    if (r->number2 > 0)
        sum = tw_add(sum, tw_mul_scalar(tw_sum_all(tw_square(w)), r->number2));
    return sum;
}

tw_tensor *tw_layer_regularization_loss(const tw_layer *layer)
{
    tw_scope_begin();
    tw_tensor *total = tw_scalar_of(0, TW_FLOAT32);
    for (int i = 0; i < layer->nweights; i++) {
        const char *key = layer->specs[i].regularizer_key;
        const tw_param_value *r = key ? tw_layer_get(layer, key) : NULL;
        if (r && !r->is_null && layer->trainable)
            total = tw_add(total, penalty(r, layer->weights[i]));
    }
    for (int i = 0; i < layer->nchildren; i++)
        total = tw_add(total, tw_layer_regularization_loss(layer->children[i]));
    return tw__scope_return(total);
}

/* ---- weights by path ------------------------------------------------------ */
static int foreach_weight(const tw_layer *layer, const char *prefix, tw_weight_fn fn, void *user_data)
{
    char path[512];
    for (int i = 0; i < layer->nweights; i++) {
        snprintf(path, sizeof path, "%s%s", prefix, layer->specs[i].name);
        int rc = fn(path, layer->weights[i], tw_variable_trainable(layer->weights[i]), user_data);
        if (rc)
            return rc;
    }
    for (int i = 0; i < layer->nchildren; i++) {
        snprintf(path, sizeof path, "%s%s/", prefix, layer->children[i]->name);
        int rc = foreach_weight(layer->children[i], path, fn, user_data);
        if (rc)
            return rc;
    }
    return 0;
}

int tw_layer_foreach_weight(const tw_layer *layer, tw_weight_fn fn, void *user_data)
{
    /* A plain layer's weights are "dense/kernel"; a model's children are
     * named from the model down, without the model's own name. */
    if (layer->nchildren || tw_layer_is_model(layer))
        return foreach_weight(layer, "", fn, user_data);
    char prefix[80];
    snprintf(prefix, sizeof prefix, "%s/", layer->name);
    return foreach_weight(layer, prefix, fn, user_data);
}

static int restore_own(tw_layer *layer, const char *name, const char *path, tw_tensor *value)
{
    if (!layer->built) {
        for (tw_pending_weight *p = layer->pending; p; p = p->next)
            if (!strcmp(p->name, name)) {
                tw_tensor_unref(p->value);
                p->value = tw_tensor_ref(value);
                return 0;
            }
        tw_pending_weight *p = calloc(1, sizeof *p);
        p->name = strdup(name);
        p->value = tw_tensor_ref(value);
        p->next = layer->pending;
        layer->pending = p;
        return 0;
    }
    for (int i = 0; i < layer->nweights; i++)
        if (!strcmp(layer->specs[i].name, name))
            return assign_exact(path, layer->weights[i], value);
    return tw_error_set("%s: layer '%s' has no weight \"%s\"", path, layer->name, name);
}

int tw_layer_restore_weight(tw_layer *layer, const char *path, tw_tensor *value)
{
    const char *rest = path;
    tw_layer *at = layer;
    if (!layer->nchildren && !tw_layer_is_model(layer)) {
        size_t len = strlen(layer->name);
        if (strncmp(path, layer->name, len) || path[len] != '/')
            return tw_error_set("%s: not a weight of layer '%s'", path, layer->name);
        rest = path + len + 1;
    }
    for (const char *slash; (slash = strchr(rest, '/'));) {
        tw_layer *next = NULL;
        for (int i = 0; i < at->nchildren; i++)
            if (strlen(at->children[i]->name) == (size_t)(slash - rest) &&
                !strncmp(at->children[i]->name, rest, slash - rest))
                next = at->children[i];
        if (!next)
            return tw_error_set("%s: no layer \"%.*s\" in '%s'", path, (int)(slash - rest), rest, at->name);
        at = next;
        rest = slash + 1;
    }
    return restore_own(at, rest, path, value);
}

static int count_pending(const tw_layer *layer)
{
    int n = 0;
    for (tw_pending_weight *p = layer->pending; p; p = p->next)
        n++;
    for (int i = 0; i < layer->nchildren; i++)
        n += count_pending(layer->children[i]);
    return n;
}

int tw_layer_pending_restores(const tw_layer *layer)
{
    return count_pending(layer);
}

int tw__layer_insert_child(tw_layer *parent, int index, tw_layer *child)
{
    if (!child)
        return -1;
    if (parent->nchildren == parent->children_capacity) {
        parent->children_capacity = parent->children_capacity ? 2 * parent->children_capacity : 8;
        parent->children = realloc(parent->children, sizeof *parent->children * parent->children_capacity);
    }
    memmove(parent->children + index + 1, parent->children + index,
            sizeof *parent->children * (parent->nchildren - index));
    parent->children[index] = child;
    parent->nchildren++;
    return 0;
}
