/* The Sequential model: a layer whose children run one after another. It is
 * a layer class like any other, so models nest; what a model adds on top
 * (compile state, variables lists) lives in its state (model_internal.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "functional_internal.h"
#include "id_map.h"

/* The children in order, walked once by tw_layer_infer (a Sequential holds
 * no weights of its own). */
static int sequential_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *weights,
                            int *nweights)
{
    (void)weights;
    *nweights = 0;
    if (!self->nchildren) {
        *output = *input;
        return 0;
    }
    return tw_layer_infer(self, input, output, NULL, NULL);
}

static int sequential_build_children(tw_layer *self, const tw_shape *input, tw_rng *rng)
{
    tw_shape shape = *input;
    for (int i = 0; i < self->nchildren; i++) {
        if (tw_layer_build(self->children[i], &shape, rng))
            return -1;
        shape = self->children[i]->output_shape;
    }
    return 0;
}

static tw_tensor *sequential_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    tw_model_state *st = self->state;
    tw_call_context own = *ctx;
    if (!own.rng) {
        if (!st->rng)
            st->rng = tw_rng_new(st->seed);
        own.rng = st->rng;
    }
    for (int i = 0; i < self->nchildren && x; i++)
        x = tw_layer_call_ex(self->children[i], x, &own);
    return x;
}

static void sequential_finalize(tw_layer *self)
{
    tw_model_state *st = self->state;
    if (st->clear_compiled)
        st->clear_compiled(self);
    tw_rng_free(st->rng);
    free(st->trainable.items);
    free(st->all.items);
    free(st->kept_vars.items);
    free(st->kept_grads.items);
    free(st->grads.items);
}

const tw_layer_class tw_layer_class_Sequential = {
    .name = "Sequential",
    .group = "Core",
    .summary = "A stack of layers, each feeding the next; models nest",
    .state_size = sizeof(tw_model_state),
    .infer = sequential_infer,
    .call = sequential_call,
    .finalize = sequential_finalize,
    .build_children = sequential_build_children,
};

bool tw_layer_is_model(const tw_layer *layer)
{
    return layer && (layer->klass == &tw_layer_class_Sequential || tw_layer_is_functional(layer));
}

static int check_model(const tw_layer *model, const char *fn)
{
    if (!model)
        return tw_error_set("%s: model is NULL", fn);
    if (!tw_layer_is_model(model))
        return tw_error_set("%s: '%s' is a %s layer, not a model", fn, model->name, model->klass->name);
    return 0;
}

/* Adding and removing layers is for Sequential models; a Functional
 * model's layers come from its graph. */
static int check_sequential(const tw_layer *model, const char *fn)
{
    if (check_model(model, fn))
        return -1;
    if (tw_layer_is_functional(model))
        return tw_error_set("%s: model '%s' is Functional; its layers come from its graph (tw_functional_new)", fn,
                            model->name);
    return 0;
}

tw_model *tw_sequential_new(const char *name)
{
    return tw_layer_new("Sequential", name ? name : "sequential");
}

/* Keras' to_snake_case: "MaxPooling2D" -> "max_pooling2d", "SimpleRNN" -> "simple_rnn". */
void tw__snake_case(const char *camel, char *out, size_t size)
{
    size_t o = 0;
    for (size_t i = 0; camel[i] && o + 2 < size; i++) {
        char c = camel[i];
        bool upper = isupper((unsigned char)c);
        bool prev_lower = i > 0 && islower((unsigned char)camel[i - 1]);
        bool starts_word = i > 0 && upper && islower((unsigned char)camel[i + 1]);
        if (upper && (prev_lower || starts_word) && o > 0 && out[o - 1] != '_')
            out[o++] = '_';
        out[o++] = (char)tolower((unsigned char)c);
    }
    out[o] = '\0';
}

static bool name_taken(const tw_layer *model, const char *name, const tw_layer *except)
{
    for (int i = 0; i < model->nchildren; i++)
        if (model->children[i] != except && !strcmp(model->children[i]->name, name))
            return true;
    return false;
}

/* 0 when name is base, k when it is base_k (k >= 1, no leading zero), else -1. */
static long suffix_of(const char *name, const char *base)
{
    size_t n = strlen(base);
    if (strncmp(name, base, n) != 0)
        return -1;
    if (!name[n])
        return 0;
    if (name[n] != '_' || name[n + 1] < '1' || name[n + 1] > '9')
        return -1;
    char *end;
    long k = strtol(name + n + 1, &end, 10);
    return *end ? -1 : k;
}

/* Keras' naming: the layer's own name when free, else the first free of
 * base, base_1, base_2, ... One pass over the children marks which of the
 * first nchildren + 1 candidates are taken (one of them is free), so adding
 * n layers costs O(n^2) string tests, not O(n^3). -1 when out of memory. */
static int give_unique_name(tw_layer *model, tw_layer *layer)
{
    char base[64], name[80];
    if (layer->name[0] && !name_taken(model, layer->name, layer))
        return 0;
    if (layer->name[0])
        snprintf(base, sizeof base, "%s", layer->name);
    else if (!strcmp(layer->klass->name, "InputLayer"))
        snprintf(base, sizeof base, "input");
    else
        tw__snake_case(layer->klass->name, base, sizeof base);
    int candidates = model->nchildren + 1;
    bool *taken = calloc((size_t)candidates, sizeof *taken);
    if (!taken)
        return tw_error_set("model '%s': out of memory naming a layer", model->name);
    for (int i = 0; i < model->nchildren; i++) {
        long k = model->children[i] == layer ? -1 : suffix_of(model->children[i]->name, base);
        if (k >= 0 && k < candidates)
            taken[k] = true;
    }
    int k = 0;
    while (taken[k])
        k++;
    free(taken);
    if (k == 0)
        snprintf(name, sizeof name, "%s", base);
    else
        snprintf(name, sizeof name, "%s_%d", base, k);
    snprintf(layer->name, sizeof layer->name, "%.63s", name);
    return 0;
}

static bool contains(const tw_layer *outer, const tw_layer *inner)
{
    if (outer == inner)
        return true;
    for (int i = 0; i < outer->nchildren; i++)
        if (contains(outer->children[i], inner))
            return true;
    return false;
}

int tw_model_insert(tw_model *model, int index, tw_layer *layer)
{
    if (check_sequential(model, "model insert") || !layer) {
        tw_layer_unref(layer);
        return -1;
    }
    int rc = 0;
    if (index < 0 || index > model->nchildren)
        rc = tw_error_set("model '%s': index %d is out of range for %d layers", model->name, index, model->nchildren);
    else if (model->built)
        rc = tw_error_set("model '%s': cannot add layers after it is built", model->name);
    else if (contains(layer, model))
        rc = tw_error_set("model '%s': cannot contain itself", model->name);
    if (rc) {
        tw_layer_unref(layer);
        return rc;
    }
    if (give_unique_name(model, layer) < 0) {
        tw_layer_unref(layer);
        return -1;
    }
    return tw__layer_insert_child(model, index, layer);
}

int tw_model_add(tw_model *model, tw_layer *layer)
{
    return tw_model_insert(model, model ? model->nchildren : 0, layer);
}

int tw_model_remove(tw_model *model, int index)
{
    if (check_sequential(model, "model remove"))
        return -1;
    if (index < 0 || index >= model->nchildren)
        return tw_error_set("model '%s': index %d is out of range for %d layers", model->name, index,
                            model->nchildren);
    if (model->built)
        return tw_error_set("model '%s': cannot remove layers after it is built", model->name);
    tw_layer_unref(model->children[index]);
    memmove(model->children + index, model->children + index + 1,
            sizeof *model->children * (model->nchildren - index - 1));
    model->nchildren--;
    return 0;
}

int tw_model_nlayers(const tw_model *model)
{
    return check_model(model, "model") ? -1 : model->nchildren;
}

tw_layer *tw_model_layer_at(const tw_model *model, int index)
{
    if (check_model(model, "model") || index < 0 || index >= model->nchildren)
        return NULL;
    return model->children[index];
}

tw_layer *tw_model_find_layer(const tw_model *model, const char *name)
{
    for (int i = 0; model && i < model->nchildren; i++)
        if (!strcmp(model->children[i]->name, name))
            return model->children[i];
    tw_error_set("model '%s': no layer named \"%s\"", model ? model->name : "?", name);
    return NULL;
}

const tw_shape *tw_model_input_shape(const tw_model *model)
{
    if (tw_layer_is_functional(model))
        return tw__functional_input_shape(model, 0);
    if (model->batch_input_shape.ndim)
        return &model->batch_input_shape;
    if (!model->nchildren)
        return NULL;
    const tw_layer *first = model->children[0];
    if (tw_layer_is_model(first))
        return tw_model_input_shape(first);
    return tw_layer_input_shape(first);
}

const tw_shape *tw_model_input_shape_at(const tw_model *model, int k)
{
    if (tw_layer_is_functional(model))
        return k >= 0 && k < tw_model_ninputs(model) ? tw__functional_input_shape(model, k) : NULL;
    return k == 0 ? tw_model_input_shape(model) : NULL;
}

int tw_model_infer(const tw_model *model, const tw_shape *input, tw_layer_info *info)
{
    if (check_model(model, "model infer"))
        return -1;
    if (tw_layer_is_functional(model))
        return tw__functional_layer_info(model, info);
    tw_shape shape = *input;
    for (int i = 0; i < model->nchildren; i++) {
        memset(&info[i], 0, sizeof info[i]);
        tw_shape out[TW_MAX_LAYER_IO];
        int nout = 0;
        int rc = tw_layer_infer_partial(model->children[i], &shape, 1, out, &nout, &info[i].trainable_params,
                                        &info[i].non_trainable_params);
        if (rc >= 0 && nout != 1)
            rc = TW_LAYER_ERROR(model->children[i], "gives %d outputs where one is expected", nout);
        if (rc < 0) {
            snprintf(info[i].error, sizeof info[i].error, "%s", tw_last_error());
            return i;
        }
        info[i].output = out[0];
        info[i].params_unknown = rc > 0; /* after a Lambda of unknown shape */
        shape = info[i].output;
    }
    return model->nchildren;
}

static int resolve_input(const tw_model *model, const tw_shape *input, tw_shape *out)
{
    if (!input)
        input = tw_model_input_shape(model);
    if (!input)
        return tw_error_set("model '%s': no input shape; give the first layer an input shape or add an InputLayer",
                            model->name);
    *out = *input;
    return 0;
}

int tw_model_build(tw_model *model, const tw_shape *input, uint64_t seed)
{
    tw_shape in;
    if (tw_layer_is_functional(model))
        return tw__functional_build(model, input, seed);
    if (check_model(model, "model build") || resolve_input(model, input, &in))
        return -1;
    tw_model_state *st = model->state;
    st->seed = seed;
    tw_rng_free(st->rng);
    st->rng = tw_rng_new(seed);
    return tw_layer_build(model, &in, st->rng);
}

tw_tensor *tw_model_call(tw_model *model, tw_tensor *x, bool training)
{
    if (check_model(model, "model call"))
        return NULL;
    tw_call_context ctx = {.training = training, .rng = NULL};
    return tw_layer_call_ex(model, x, &ctx);
}

/* ---- variables ------------------------------------------------------------ */
/* seen: the ids listed so far, so a layer used twice contributes once and a
 * deep model's list takes linear time. */
static void list_push(tw_var_list *list, tw_id_map *seen, tw_tensor *t)
{
    if (tw_id_map_get(seen, t->id, NULL))
        return;
    tw_id_map_put(seen, t->id, NULL);
    if (list->n == list->capacity) {
        list->capacity = list->capacity ? 2 * list->capacity : 16;
        list->items = realloc(list->items, sizeof *list->items * list->capacity);
    }
    list->items[list->n++] = t;
}

static void gather_into(const tw_layer *layer, tw_var_list *list, tw_id_map *seen, bool trainable_only)
{
    for (int i = 0; i < layer->nweights; i++)
        if (!trainable_only || tw_variable_trainable(layer->weights[i]))
            list_push(list, seen, layer->weights[i]);
    for (int i = 0; i < layer->nchildren; i++)
        gather_into(layer->children[i], list, seen, trainable_only);
}

static void gather(const tw_layer *layer, tw_var_list *list, bool trainable_only)
{
    tw_id_map seen = {0};
    gather_into(layer, list, &seen, trainable_only);
    tw_id_map_clear(&seen);
}

tw_variables tw_model_trainable_variables(tw_model *model)
{
    if (check_model(model, "trainable_variables"))
        return (tw_variables){0, NULL};
    tw_model_state *st = model->state;
    st->trainable.n = 0;
    gather(model, &st->trainable, true);
    return (tw_variables){st->trainable.n, st->trainable.items};
}

tw_variables tw_model_variables(tw_model *model)
{
    if (check_model(model, "variables"))
        return (tw_variables){0, NULL};
    tw_model_state *st = model->state;
    st->all.n = 0;
    gather(model, &st->all, false);
    return (tw_variables){st->all.n, st->all.items};
}

int tw_model_count_params(const tw_model *model, int64_t *total, int64_t *trainable, int64_t *non_trainable)
{
    tw_shape in;
    int64_t t = 0, nt = 0;
    if (check_model(model, "count_params"))
        return -1;
    if (tw_layer_is_functional(model)) {
        int unknown;
        if (tw__functional_count(model, &t, &nt, &unknown))
            return -1;
        if (unknown >= 0)
            return tw_error_set("model '%s': the parameter count of layer '%s' depends on an input shape that is "
                                "unknown (it comes from Python code that cannot run here)",
                                model->name, model->children[unknown]->name);
    } else {
        if (model->built)
            in = model->input_shape;
        else if (resolve_input(model, NULL, &in))
            return -1;
        if (tw_layer_infer(model, &in, NULL, &t, &nt))
            return -1;
    }
    if (total)
        *total = t + nt;
    if (trainable)
        *trainable = t;
    if (non_trainable)
        *non_trainable = nt;
    return 0;
}

int tw_model_ninputs(const tw_model *model)
{
    if (check_model(model, "model"))
        return -1;
    return tw_layer_is_functional(model) ? tw_functional_ninputs(model) : 1;
}

int tw_model_noutputs(const tw_model *model)
{
    if (check_model(model, "model"))
        return -1;
    return tw_layer_is_functional(model) ? tw_functional_noutputs(model) : 1;
}

int tw_model_call_n(tw_model *model, int ninputs, tw_tensor *const *inputs, tw_tensor **outputs, bool training)
{
    if (check_model(model, "model call"))
        return -1;
    tw_call_context ctx = {.training = training, .rng = NULL};
    return tw__model_forward(model, inputs, ninputs, outputs, &ctx);
}
