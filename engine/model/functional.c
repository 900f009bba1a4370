/* The Functional model: a layer of class "Functional" holding a graph of
 * layer calls, copied from the thread's symbolic graph when it is made.
 * Its children are its layers in the order of their first call (inputs
 * first when the graph made them first, as Keras lists them), each held
 * once however often it is called; the calls run in the order they were
 * made, which is an order of the graph (a call is made after its inputs).
 *
 * Shapes are fixed when the model is made, as in Keras: infer checks the
 * inputs against the declared ones and gives the declared outputs, and
 * each layer's parameters are counted once from its first call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "functional_internal.h"

static tw_functional_state *state_of(const tw_layer *model)
{
    return model->state;
}

bool tw_layer_is_functional(const tw_layer *layer)
{
    return layer && layer->klass == &tw__functional_class;
}

/* ---- the class ------------------------------------------------------------ */

/* An input fits a declared one when ranks agree and every declared size
 * is unknown or equal. */
static bool fits(const tw_shape *declared, const tw_shape *given)
{
    if (declared->ndim != given->ndim)
        return false;
    for (int i = 1; i < given->ndim; i++)
        if (declared->dims[i] >= 0 && given->dims[i] >= 0 && declared->dims[i] != given->dims[i])
            return false;
    return true;
}

const tw_shape *tw__functional_input_shape(const tw_layer *model, int index)
{
    const tw_functional_state *st = state_of(model);
    const tw_fn_call *c = &st->calls[st->inputs[index]];
    return &st->shapes[c->first_value];
}

static int functional_infer_n(const tw_layer *self, const tw_shape *inputs, int n, tw_shape *outputs,
                              int *noutputs, tw_weight_spec *w, int *nw)
{
    (void)w;
    const tw_functional_state *st = state_of(self);
    *nw = 0;
    if (n != st->ninputs)
        return tw_error_set("model '%s': takes %d input%s, got %d", self->name, st->ninputs,
                            st->ninputs == 1 ? "" : "s", n);
    for (int i = 0; i < n; i++) {
        const tw_shape *declared = tw__functional_input_shape(self, i);
        char a[96], b[96];
        if (!fits(declared, &inputs[i]))
            return tw_error_set("model '%s': input %d ('%s') expects %s, got %s", self->name, i,
                                self->children[st->calls[st->inputs[i]].layer]->name,
                                tw_shape_format(declared, a, sizeof a), tw_shape_format(&inputs[i], b, sizeof b));
    }
    *noutputs = st->noutputs;
    for (int i = 0; i < st->noutputs; i++) {
        outputs[i] = st->shapes[st->outputs[i]];
        if (tw_shape_known(&outputs[i]))
            outputs[i].dims[0] = inputs[0].dims[0];
    }
    return 0;
}

/* The inputs' shapes of call c. */
static int call_input_shapes(const tw_functional_state *st, const tw_fn_call *c, tw_shape *shapes)
{
    for (int k = 0; k < c->ninputs; k++)
        shapes[k] = st->shapes[st->input_values[c->first_input + k]];
    return c->ninputs;
}

/* The shapes layer i was first called with (an InputLayer: its own); for
 * a shared layer whose first call was on an unknown shape, those of its
 * first call on known ones, which fix its weights. */
static int first_call_shapes(const tw_layer *model, int layer, tw_shape *shapes)
{
    const tw_functional_state *st = state_of(model);
    const tw_fn_call *c = &st->calls[st->layer_calls[st->layer_first[layer]]];
    if (!c->ninputs) {
        shapes[0] = st->shapes[c->first_value];
        return 1;
    }
    const tw_layer *l = model->children[layer];
    int n = call_input_shapes(st, c, shapes);
    for (int k = st->layer_first[layer] + 1; k < st->layer_first[layer + 1] && tw__shapes_unknown_to(l, shapes, n);
         k++) {
        tw_shape other[TW_MAX_LAYER_IO];
        int m = call_input_shapes(st, &st->calls[st->layer_calls[k]], other);
        if (!tw__shapes_unknown_to(l, other, m)) {
            memcpy(shapes, other, sizeof *other * (size_t)m);
            n = m;
        }
    }
    return n;
}

int tw__functional_count(const tw_layer *model, int64_t *trainable, int64_t *non_trainable, int *unknown)
{
    *unknown = -1;
    for (int i = 0; i < model->nchildren; i++) {
        tw_shape in[TW_MAX_LAYER_IO];
        int n = first_call_shapes(model, i, in);
        int64_t t = 0, nt = 0;
        int rc = tw_layer_infer_partial(model->children[i], in, n, NULL, NULL, &t, &nt);
        if (rc < 0)
            return -1;
        if (rc > 0 && *unknown < 0)
            *unknown = i;
        *trainable += model->trainable ? t : 0;
        *non_trainable += nt + (model->trainable ? 0 : t);
    }
    return 0;
}

static int functional_count_params(const tw_layer *self, int64_t *trainable, int64_t *non_trainable)
{
    int unknown;
    if (tw__functional_count(self, trainable, non_trainable, &unknown))
        return -1;
    return unknown >= 0 ? 1 : 0;
}

static int functional_build_children(tw_layer *self, const tw_shape *input, tw_rng *rng)
{
    (void)input; /* the graph's own shapes: infer_n checked the inputs against them */
    for (int i = 0; i < self->nchildren; i++) {
        tw_shape in[TW_MAX_LAYER_IO];
        int n = first_call_shapes(self, i, in);
        if (!self->children[i]->built && tw_layer_build_n(self->children[i], in, n, rng))
            return -1;
    }
    return 0;
}

static int functional_call_n(tw_layer *self, tw_tensor *const *inputs, int n, tw_tensor **outputs,
                             const tw_call_context *ctx)
{
    tw_functional_state *st = state_of(self);
    tw_call_context own = *ctx;
    if (!own.rng) {
        if (!st->model.rng)
            st->model.rng = tw_rng_new(st->model.seed);
        own.rng = st->model.rng;
    }
    if (n != st->ninputs)
        return tw_error_set("model '%s': takes %d input%s, got %d", self->name, st->ninputs,
                            st->ninputs == 1 ? "" : "s", n);
    tw_tensor **values = calloc((size_t)st->nvalues, sizeof *values);
    if (!values)
        return tw_error_set("model '%s': out of memory", self->name);
    for (int i = 0; i < n; i++) {
        char a[96], b[96];
        const tw_shape *declared = tw__functional_input_shape(self, i);
        tw_shape given = {tw_tensor_ndim(inputs[i])};
        memcpy(given.dims, tw_tensor_shape(inputs[i]), sizeof(int64_t) * (size_t)given.ndim);
        if (!fits(declared, &given)) {
            free(values);
            return tw_error_set("model '%s': input %d ('%s') expects %s, got %s", self->name, i,
                                self->children[st->calls[st->inputs[i]].layer]->name,
                                tw_shape_format(declared, a, sizeof a), tw_shape_format(&given, b, sizeof b));
        }
        values[st->calls[st->inputs[i]].first_value] = inputs[i];
    }
    int rc = 0;
    for (int i = 0; i < st->ncalls && !rc; i++) {
        const tw_fn_call *c = &st->calls[i];
        if (!c->ninputs)
            continue; /* an input: set above */
        tw_tensor *in[TW_MAX_LAYER_IO];
        for (int k = 0; k < c->ninputs; k++)
            in[k] = values[st->input_values[c->first_input + k]];
        int got = tw_layer_call_n(self->children[c->layer], in, c->ninputs, values + c->first_value, &own);
        if (got != c->noutputs)
            rc = got < 0 ? -1 : tw_error_set("model '%s': layer '%s' gave %d outputs where its graph has %d",
                                             self->name, self->children[c->layer]->name, got, c->noutputs);
    }
    for (int i = 0; !rc && i < st->noutputs; i++)
        outputs[i] = values[st->outputs[i]];
    free(values);
    return rc ? -1 : st->noutputs;
}

static void functional_finalize(tw_layer *self)
{
    tw_functional_state *st = state_of(self);
    tw_model_state *ms = &st->model;
    if (ms->clear_compiled)
        ms->clear_compiled(self);
    tw_rng_free(ms->rng);
    free(ms->trainable.items);
    free(ms->all.items);
    free(ms->kept_vars.items);
    free(ms->kept_grads.items);
    free(ms->grads.items);
    free(st->calls);
    free(st->input_values);
    free(st->shapes);
    free(st->value_call);
    free(st->inputs);
    free(st->outputs);
    free(st->layer_calls);
    free(st->layer_first);
}

static tw_layer *functional_clone(const tw_layer *self, const char *name);

const tw_layer_class tw__functional_class = {
    .name = "Functional",
    .group = "Core",
    .summary = "A graph of layer calls with several inputs and outputs",
    .state_size = sizeof(tw_functional_state),
    .finalize = functional_finalize,
    .build_children = functional_build_children,
    .infer_n = functional_infer_n,
    .call_n = functional_call_n,
    .count_params = functional_count_params,
    .clone = functional_clone,
};

int tw__functional_build(tw_layer *model, const tw_shape *input, uint64_t seed)
{
    tw_functional_state *st = state_of(model);
    st->model.seed = seed;
    tw_rng_free(st->model.rng);
    st->model.rng = tw_rng_new(seed);
    tw_shape in[TW_MAX_LAYER_IO];
    for (int i = 0; i < st->ninputs; i++)
        in[i] = *tw__functional_input_shape(model, i);
    if (input)
        in[0] = *input; /* checked against the declared one by infer_n */
    return tw_layer_build_n(model, in, st->ninputs, st->model.rng);
}

int tw__functional_layer_info(const tw_layer *model, tw_layer_info *info)
{
    const tw_functional_state *st = state_of(model);
    for (int i = 0; i < model->nchildren; i++) {
        memset(&info[i], 0, sizeof info[i]);
        tw_shape in[TW_MAX_LAYER_IO];
        int n = first_call_shapes(model, i, in);
        const tw_fn_call *c = &st->calls[st->layer_calls[st->layer_first[i]]];
        info[i].output = st->shapes[c->first_value];
        int rc = tw_layer_infer_partial(model->children[i], in, n, NULL, NULL, &info[i].trainable_params,
                                        &info[i].non_trainable_params);
        if (rc < 0) {
            snprintf(info[i].error, sizeof info[i].error, "%s", tw_last_error());
            return i;
        }
        info[i].params_unknown = rc > 0;
    }
    return model->nchildren;
}

/* ---- making one from the symbolic graph ------------------------------------ */

typedef struct {
    tw_symbolic_call **calls; /* reachable from the outputs, then sorted */
    int n, capacity;
} call_set;

static bool set_has(const call_set *s, const tw_symbolic_call *c)
{
    for (int i = 0; i < s->n; i++)
        if (s->calls[i] == c)
            return true;
    return false;
}

static void set_add(call_set *s, tw_symbolic_call *c)
{
    if (s->n == s->capacity) {
        s->capacity = s->capacity ? 2 * s->capacity : 64;
        s->calls = realloc(s->calls, sizeof *s->calls * (size_t)s->capacity);
    }
    s->calls[s->n++] = c;
}

static int by_seq(const void *a, const void *b)
{
    int64_t x = (*(tw_symbolic_call *const *)a)->seq, y = (*(tw_symbolic_call *const *)b)->seq;
    return x < y ? -1 : x > y;
}

/* Every call the outputs depend on, stopping at the model's inputs. An
 * InputLayer reached that is not among them is an input the caller left
 * out (Keras' "Graph disconnected"). The marks are the calls' seq made
 * negative while walking, restored after; a stack avoids deep recursion. */
static int collect(const char *name, int ninputs, tw_node *const *inputs, int noutputs, tw_node *const *outputs,
                   call_set *set)
{
    call_set stack = {0};
    for (int i = 0; i < noutputs; i++)
        set_add(&stack, outputs[i]->call);
    int rc = 0;
    while (stack.n && !rc) {
        tw_symbolic_call *c = stack.calls[--stack.n];
        if (c->seq < 0)
            continue;
        c->seq = -c->seq - 1;
        set_add(set, c);
        if (!c->ninputs) {
            bool listed = false;
            for (int i = 0; i < ninputs; i++)
                listed |= inputs[i]->call == c;
            if (!listed)
                rc = tw_error_set("model '%s': the outputs depend on input '%s', which is not among the model's "
                                  "inputs",
                                  name, c->layer->name);
        }
        for (int k = 0; k < c->ninputs; k++)
            set_add(&stack, c->inputs[k]->call);
    }
    for (int i = 0; i < set->n; i++)
        set->calls[i]->seq = -set->calls[i]->seq - 1;
    free(stack.calls);
    for (int i = 0; !rc && i < ninputs; i++) {
        if (inputs[i]->call->ninputs)
            rc = tw_error_set("model '%s': input %d comes from layer '%s'; model inputs are made by tw_input", name,
                              i, inputs[i]->call->layer->name);
        else if (!set_has(set, inputs[i]->call))
            rc = tw_error_set("model '%s': input '%s' is not connected to any output", name,
                              inputs[i]->call->layer->name);
        for (int j = 0; !rc && j < i; j++)
            if (inputs[j] == inputs[i])
                rc = tw_error_set("model '%s': input '%s' is listed twice", name, inputs[i]->call->layer->name);
    }
    if (!rc)
        qsort(set->calls, (size_t)set->n, sizeof *set->calls, by_seq);
    return rc;
}

/* Layers by pointer: an open-addressing table from layer to child index,
 * so a 1,000-layer graph is made in linear time. */
typedef struct {
    const tw_layer **keys;
    int *values;
    size_t mask;
} layer_table;

static size_t hash_ptr(const void *p)
{
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    return (size_t)(x ^ (x >> 33));
}

static int *table_slot(layer_table *t, const tw_layer *key, bool *found)
{
    size_t i = hash_ptr(key) & t->mask;
    while (t->keys[i] && t->keys[i] != key)
        i = (i + 1) & t->mask;
    *found = t->keys[i] != NULL;
    t->keys[i] = key;
    return &t->values[i];
}

static void fill_model(tw_layer *model, const call_set *set, int ninputs, tw_node *const *inputs, int noutputs,
                       tw_node *const *outputs)
{
    tw_functional_state *st = state_of(model);
    size_t size = 16;
    while (size < 2 * (size_t)set->n)
        size *= 2;
    layer_table table = {calloc(size, sizeof(void *)), calloc(size, sizeof(int)), size - 1};
    st->ncalls = set->n;
    st->calls = calloc((size_t)set->n, sizeof *st->calls);
    int total_inputs = 0;
    for (int i = 0; i < set->n; i++) {
        total_inputs += set->calls[i]->ninputs;
        st->nvalues += set->calls[i]->noutputs;
    }
    st->input_values = malloc(sizeof(int) * (size_t)(total_inputs ? total_inputs : 1));
    st->shapes = malloc(sizeof *st->shapes * (size_t)st->nvalues);
    st->value_call = malloc(sizeof(int) * (size_t)st->nvalues);
    /* A call's value index: its outputs' first, found through its seq. */
    int *first_value_of = malloc(sizeof(int) * (size_t)set->n);
    int *ncalls_of = calloc((size_t)set->n, sizeof(int)); /* per child */
    int nvalues = 0, ninput_values = 0;
    for (int i = 0; i < set->n; i++) {
        tw_symbolic_call *sc = set->calls[i];
        tw_fn_call *c = &st->calls[i];
        bool found;
        int *slot = table_slot(&table, sc->layer, &found);
        if (!found) {
            *slot = model->nchildren;
            tw__layer_insert_child(model, model->nchildren, tw_layer_ref(sc->layer));
        }
        c->layer = *slot;
        c->node_index = ncalls_of[c->layer]++;
        c->ninputs = sc->ninputs;
        c->noutputs = sc->noutputs;
        c->first_input = ninput_values;
        c->first_value = first_value_of[i] = nvalues;
        for (int k = 0; k < sc->noutputs; k++) {
            st->shapes[nvalues] = sc->outputs[k].shape;
            st->value_call[nvalues++] = i;
        }
        for (int k = 0; k < sc->ninputs; k++) {
            /* Inputs were made earlier: binary search by seq. */
            tw_symbolic_call *from = sc->inputs[k]->call;
            int lo = 0, hi = i - 1;
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (set->calls[mid]->seq < from->seq)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            st->input_values[ninput_values++] = first_value_of[lo] + sc->inputs[k]->index;
        }
    }
    /* Per layer, its calls in node order. */
    st->layer_first = calloc((size_t)model->nchildren + 1, sizeof(int));
    st->layer_calls = malloc(sizeof(int) * (size_t)set->n);
    for (int i = 0; i < model->nchildren; i++)
        st->layer_first[i + 1] = st->layer_first[i] + ncalls_of[i];
    for (int i = 0; i < set->n; i++)
        st->layer_calls[st->layer_first[st->calls[i].layer] + st->calls[i].node_index] = i;
    st->ninputs = ninputs;
    st->noutputs = noutputs;
    st->inputs = malloc(sizeof(int) * (size_t)ninputs);
    st->outputs = malloc(sizeof(int) * (size_t)noutputs);
    for (int i = 0; i < set->n; i++) {
        for (int k = 0; k < ninputs; k++)
            if (inputs[k]->call == set->calls[i])
                st->inputs[k] = i;
        for (int k = 0; k < noutputs; k++)
            if (outputs[k]->call == set->calls[i])
                st->outputs[k] = first_value_of[i] + outputs[k]->index;
    }
    free(first_value_of);
    free(ncalls_of);
    free(table.keys);
    free(table.values);
}

/* Keras refuses two layers of one name in a model: weights are found by
 * name in checkpoints and files. */
static int check_names(const tw_layer *model)
{
    size_t size = 16;
    while (size < 2 * (size_t)model->nchildren)
        size *= 2;
    const char **seen = calloc(size, sizeof *seen);
    int rc = 0;
    for (int i = 0; i < model->nchildren && !rc; i++) {
        const char *name = model->children[i]->name;
        size_t h = 5381;
        for (const char *p = name; *p; p++)
            h = h * 33 + (unsigned char)*p;
        size_t at = h & (size - 1);
        while (seen[at] && strcmp(seen[at], name))
            at = (at + 1) & (size - 1);
        if (seen[at])
            rc = tw_error_set("model '%s': two layers are named '%s'; layer names must be unique", model->name,
                              name);
        seen[at] = name;
    }
    free(seen);
    return rc;
}

tw_layer *tw_functional_new(const char *name, int ninputs, tw_node *const *inputs, int noutputs,
                            tw_node *const *outputs)
{
    name = name ? name : "functional";
    if (ninputs < 1 || noutputs < 1 || ninputs > TW_MAX_LAYER_IO || noutputs > TW_MAX_LAYER_IO) {
        tw_error_set("model '%s': needs 1 to %d inputs and outputs, got %d and %d", name, TW_MAX_LAYER_IO, ninputs,
                     noutputs);
        return NULL;
    }
    for (int i = 0; i < ninputs; i++)
        if (!inputs[i])
            return NULL; /* the failed tw_input's message stays */
    for (int i = 0; i < noutputs; i++)
        if (!outputs[i])
            return NULL;
    call_set set = {0};
    if (collect(name, ninputs, inputs, noutputs, outputs, &set)) {
        free(set.calls);
        return NULL;
    }
    tw_layer *model = tw__layer_new_of(&tw__functional_class, NULL);
    if (tw_layer_set_name(model, name)) {
        free(set.calls);
        tw_layer_unref(model);
        return NULL;
    }
    fill_model(model, &set, ninputs, inputs, noutputs, outputs);
    free(set.calls);
    if (check_names(model)) {
        tw_layer_unref(model);
        return NULL;
    }
    return model;
}

/* ---- the graph, read back --------------------------------------------------- */

static const tw_functional_state *graph_of(const tw_layer *model)
{
    return tw_layer_is_functional(model) ? state_of(model) : NULL;
}

static void history_of(const tw_functional_state *st, int value, tw_keras_history *out)
{
    const tw_fn_call *c = &st->calls[st->value_call[value]];
    *out = (tw_keras_history){c->layer, c->node_index, value - c->first_value};
}

int tw_functional_ninputs(const tw_layer *model)
{
    const tw_functional_state *st = graph_of(model);
    return st ? st->ninputs : -1;
}

int tw_functional_noutputs(const tw_layer *model)
{
    const tw_functional_state *st = graph_of(model);
    return st ? st->noutputs : -1;
}

int tw_functional_input(const tw_layer *model, int index, tw_keras_history *out)
{
    const tw_functional_state *st = graph_of(model);
    if (!st || index < 0 || index >= st->ninputs)
        return -1;
    history_of(st, st->calls[st->inputs[index]].first_value, out);
    return 0;
}

int tw_functional_output(const tw_layer *model, int index, tw_keras_history *out)
{
    const tw_functional_state *st = graph_of(model);
    if (!st || index < 0 || index >= st->noutputs)
        return -1;
    history_of(st, st->outputs[index], out);
    return 0;
}

int tw_functional_layer_ncalls(const tw_layer *model, int layer)
{
    const tw_functional_state *st = graph_of(model);
    if (!st || layer < 0 || layer >= model->nchildren)
        return -1;
    return st->layer_first[layer + 1] - st->layer_first[layer];
}

static const tw_fn_call *call_at(const tw_layer *model, int layer, int node_index)
{
    const tw_functional_state *st = graph_of(model);
    int n = tw_functional_layer_ncalls(model, layer);
    if (n < 0 || node_index < 0 || node_index >= n)
        return NULL;
    return &st->calls[st->layer_calls[st->layer_first[layer] + node_index]];
}

int tw_functional_call_inputs(const tw_layer *model, int layer, int node_index, tw_keras_history *inputs)
{
    const tw_fn_call *c = call_at(model, layer, node_index);
    if (!c)
        return -1;
    for (int k = 0; k < c->ninputs; k++)
        history_of(state_of(model), state_of(model)->input_values[c->first_input + k], &inputs[k]);
    return c->ninputs;
}

int tw_functional_call_outputs(const tw_layer *model, int layer, int node_index, tw_shape *outputs)
{
    const tw_fn_call *c = call_at(model, layer, node_index);
    if (!c)
        return -1;
    memcpy(outputs, state_of(model)->shapes + c->first_value, sizeof *outputs * (size_t)c->noutputs);
    return c->noutputs;
}

/* ---- copies ------------------------------------------------------------------ */

/* The same graph over copies of the layers (config, no weights): each call
 * made again on the thread's symbolic graph, then taken off it. */
static tw_layer *functional_clone(const tw_layer *self, const char *name)
{
    const tw_functional_state *st = state_of(self);
    int64_t mark = tw_nodes_mark();
    tw_layer **copies = calloc((size_t)self->nchildren, sizeof *copies);
    tw_node **values = calloc((size_t)st->nvalues, sizeof *values);
    int rc = 0;
    for (int i = 0; i < self->nchildren && !rc; i++)
        if (!(copies[i] = tw_layer_clone(self->children[i], self->children[i]->name)))
            rc = -1;
    for (int i = 0; i < st->ncalls && !rc; i++) {
        const tw_fn_call *c = &st->calls[i];
        tw_layer *layer = tw_layer_ref(copies[c->layer]);
        if (!c->ninputs) {
            rc = (values[c->first_value] = tw_input_from_layer(layer)) ? 0 : -1;
            continue;
        }
        tw_node *in[TW_MAX_LAYER_IO];
        for (int k = 0; k < c->ninputs; k++)
            in[k] = values[st->input_values[c->first_input + k]];
        rc = tw_apply_multi(layer, c->ninputs, in, values + c->first_value) == c->noutputs ? 0 : -1;
    }
    tw_layer *copy = NULL;
    if (!rc) {
        tw_node *inputs[TW_MAX_LAYER_IO], *outputs[TW_MAX_LAYER_IO];
        for (int i = 0; i < st->ninputs; i++)
            inputs[i] = values[st->calls[st->inputs[i]].first_value];
        for (int i = 0; i < st->noutputs; i++)
            outputs[i] = values[st->outputs[i]];
        copy = tw_functional_new(name ? name : self->name, st->ninputs, inputs, st->noutputs, outputs);
    }
    if (copy) {
        copy->trainable = self->trainable;
        copy->dtype = self->dtype;
    }
    for (int i = 0; i < self->nchildren; i++)
        tw_layer_unref(copies[i]);
    free(copies);
    free(values);
    tw_nodes_release(mark);
    return copy;
}
