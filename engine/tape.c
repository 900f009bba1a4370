/* Gradient tapes: recording ops and computing gradients in reverse.
 *
 * A tape keeps, in recording order, every op call whose inputs it tracks
 * (watched tensors, trainable variables, and everything computed from them),
 * holding references to the call's inputs and outputs. gradient() walks that
 * list backwards, calling each op's backward rule; the rules dispatch engine
 * ops, so any tape still active records the backward pass too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "id_map.h"
#include "internal.h"
#include "tw/function.h"

#define MAX_ACTIVE_TAPES 64
#define INLINE_INPUTS 4

typedef struct {
    const tw_op_def *op;
    tw_attrs attrs;
    void *ctx;
    int ninputs, noutputs;
    /* Heap arrays when there are more inputs than fit inline; NULL otherwise
     * (nodes live in a realloc'd array, so they must not point into
     * themselves). Use node_inputs() / node_versions(). */
    tw_tensor **heap_inputs;
    unsigned *heap_versions;
    tw_tensor *inline_inputs[INLINE_INPUTS];
    unsigned inline_versions[INLINE_INPUTS];
    tw_tensor *outputs[TW_MAX_OUTPUTS];
} tape_node;

struct tw_tape {
    bool persistent, recording, used;
    tape_node *nodes;
    size_t nnodes, capacity;
    tw_id_map tracked; /* ids of tensors whose history this tape follows */
};

static TW_HOT_THREAD_LOCAL tw_tape *active_tapes[MAX_ACTIVE_TAPES];
static TW_HOT_THREAD_LOCAL int nactive;
static TW_HOT_THREAD_LOCAL int pause_depth;
/* Tapes below this index are hidden from a trace (tw__tapes_hide). */
static TW_HOT_THREAD_LOCAL int hidden_base;

bool tw__recording(void)
{
    return nactive > hidden_base && pause_depth == 0;
}

tw_tapes_hidden tw__tapes_hide(void)
{
    tw_tapes_hidden hidden = {hidden_base, pause_depth};
    hidden_base = nactive;
    pause_depth = 0;
    return hidden;
}

void tw__tapes_unhide(tw_tapes_hidden hidden)
{
    hidden_base = hidden.base < nactive ? hidden.base : nactive;
    pause_depth = hidden.pause_depth;
}

void tw_tape_pause(void)
{
    pause_depth++;
}

void tw_tape_resume(void)
{
    if (pause_depth > 0)
        pause_depth--;
}

tw_tape *tw_tape_begin(bool persistent)
{
    if (nactive == MAX_ACTIVE_TAPES) {
        tw_error_set("tape_begin: more than %d tapes active on this thread", MAX_ACTIVE_TAPES);
        return NULL;
    }
    /* malloc, not calloc: glibc's calloc passes by the per-thread cache
     * (a few hundred instructions a tape, with malloc_consolidate) */
    tw_tape *tape = malloc(sizeof *tape);
    if (!tape) {
        tw_error_set("tape_begin: out of memory");
        return NULL;
    }
    *tape = (tw_tape){.persistent = persistent, .recording = true};
    active_tapes[nactive++] = tape;
    return tape;
}

int tw_tape_end(tw_tape *tape)
{
    if (!tape)
        return tw_error_set("tape_end: tape is NULL");
    for (int i = 0; i < nactive; i++) {
        if (active_tapes[i] != tape)
            continue;
        memmove(&active_tapes[i], &active_tapes[i + 1], sizeof(tw_tape *) * (size_t)(nactive - i - 1));
        nactive--;
        if (i < hidden_base)
            hidden_base--;
        tape->recording = false;
        return 0;
    }
    return 0; /* already ended */
}

static bool is_tracked(tw_tape *tape, const tw_tensor *t)
{
    return tw_id_map_get(&tape->tracked, t->id, NULL);
}

int tw_tape_watch(tw_tape *tape, tw_tensor *t)
{
    if (!tape)
        return tw_error_set("watch: tape is NULL");
    if (tw__check_inputs("watch", 1, &t) < 0)
        return -1;
    if (!tw_dtype_is_float(t->dtype))
        return tw_error_set("watch: only float tensors have gradients; this one is %s", tw_dtype_name(t->dtype));
    if (!tw_id_map_put(&tape->tracked, t->id, NULL))
        return tw_error_set("watch: out of memory");
    return 0;
}

/* Whether the call touches this tape's history; trainable variables are
 * watched the first time an op reads them. */
static bool call_is_tracked(tw_tape *tape, const tw_op_call *call)
{
    bool any = false;
    for (int i = 0; i < call->ninputs; i++) {
        tw_tensor *in = call->inputs[i];
        if (is_tracked(tape, in)) {
            any = true;
        } else if (in->variable && in->variable->trainable && tw_dtype_is_float(in->dtype)) {
            tw_id_map_put(&tape->tracked, in->id, NULL);
            any = true;
        }
    }
    return any;
}

static tw_tensor **node_inputs(const tape_node *node)
{
    return node->heap_inputs ? node->heap_inputs : (tw_tensor **)node->inline_inputs;
}

static unsigned *node_versions(const tape_node *node)
{
    return node->heap_versions ? node->heap_versions : (unsigned *)node->inline_versions;
}

static bool node_init(tape_node *node, const tw_op_call *call, tw_tensor *const *outs, int noutputs)
{
    node->op = call->op;
    node->attrs = *call->attrs;
    node->ctx = call->ctx;
    node->ninputs = call->ninputs;
    node->noutputs = noutputs;
    node->heap_inputs = NULL;
    node->heap_versions = NULL;
    if (call->ninputs > INLINE_INPUTS) {
        node->heap_inputs = malloc(sizeof(tw_tensor *) * (size_t)call->ninputs);
        node->heap_versions = malloc(sizeof(unsigned) * (size_t)call->ninputs);
        if (!node->heap_inputs || !node->heap_versions) {
            free(node->heap_inputs);
            free(node->heap_versions);
            return false;
        }
    }
    tw_tensor **inputs = node_inputs(node);
    unsigned *versions = node_versions(node);
    for (int i = 0; i < call->ninputs; i++) {
        inputs[i] = tw_tensor_ref(call->inputs[i]);
        versions[i] = atomic_load(&call->inputs[i]->storage->version);
    }
    for (int k = 0; k < noutputs; k++)
        node->outputs[k] = tw_tensor_ref(outs[k]);
    if (node->ctx && node->op->ctx_ref)
        node->op->ctx_ref(node->ctx);
    return true;
}

static void node_release(tape_node *node)
{
    tw_tensor **inputs = node_inputs(node);
    for (int i = 0; i < node->ninputs; i++)
        tw_tensor_unref(inputs[i]);
    for (int k = 0; k < node->noutputs; k++)
        tw_tensor_unref(node->outputs[k]);
    free(node->heap_inputs);
    free(node->heap_versions);
    if (node->ctx && node->op->ctx_unref)
        node->op->ctx_unref(node->ctx);
}

static void record_on(tw_tape *tape, const tw_op_call *call, tw_tensor *const *outs, int noutputs)
{
    if (!tape->recording || !call_is_tracked(tape, call))
        return;
    if (tape->nnodes == tape->capacity) {
        size_t cap = tape->capacity ? tape->capacity * 2 : 16;
        tape_node *nodes = realloc(tape->nodes, cap * sizeof *nodes);
        if (!nodes)
            return; /* out of memory: the gradient will report the op as unconnected */
        tape->nodes = nodes;
        tape->capacity = cap;
    }
    if (!node_init(&tape->nodes[tape->nnodes], call, outs, noutputs))
        return;
    tape->nnodes++;
    for (int k = 0; k < noutputs; k++)
        if (tw_dtype_is_float(outs[k]->dtype))
            tw_id_map_put(&tape->tracked, outs[k]->id, NULL);
}

void tw__record(const tw_op_call *call, tw_tensor *const *outs, int noutputs)
{
    for (int i = hidden_base; i < nactive; i++)
        record_on(active_tapes[i], call, outs, noutputs);
}

static void release_nodes(tw_tape *tape)
{
    for (size_t i = 0; i < tape->nnodes; i++)
        node_release(&tape->nodes[i]);
    free(tape->nodes);
    tape->nodes = NULL;
    tape->nnodes = tape->capacity = 0;
}

void tw_tape_free(tw_tape *tape)
{
    if (!tape)
        return;
    tw_tape_end(tape);
    release_nodes(tape);
    tw_id_map_clear(&tape->tracked);
    free(tape);
}

/* ---- gradient ------------------------------------------------------------ */

typedef struct {
    tw_tape *tape;
    tw_id_map depends; /* ids that depend on some source */
    tw_id_map grads;   /* id -> accumulated gradient (an owned reference) */
    tw_id_map sources; /* ids whose gradients the caller asked for */
    tw_gradient_ready_fn ready; /* tw_tape_gradient_hooked's, or NULL */
    void *ready_data;
} backward_pass;

static void mark_dependents(backward_pass *bp, int nsources, tw_tensor *const *sources)
{
    /* Only sources the tape follows get gradients (TensorFlow's rule). */
    for (int i = 0; i < nsources; i++)
        if (is_tracked(bp->tape, sources[i]))
            tw_id_map_put(&bp->depends, sources[i]->id, NULL);
    for (size_t n = 0; n < bp->tape->nnodes; n++) {
        tape_node *node = &bp->tape->nodes[n];
        for (int i = 0; i < node->ninputs; i++) {
            if (!tw_id_map_get(&bp->depends, node_inputs(node)[i]->id, NULL))
                continue;
            for (int k = 0; k < node->noutputs; k++)
                tw_id_map_put(&bp->depends, node->outputs[k]->id, NULL);
            break;
        }
    }
}

static int check_versions(const tape_node *node)
{
    for (int i = 0; i < node->ninputs; i++) {
        tw_tensor *in = node_inputs(node)[i];
        if (atomic_load(&in->storage->version) == node_versions(node)[i])
            continue;
        return tw_error_set("gradient: %s%s%s was modified in place after op '%s' used it; compute gradients "
                            "before assigning to it",
                            in->variable ? "variable '" : "an input", in->variable ? in->variable->name : "",
                            in->variable ? "'" : "", node->op->name);
    }
    return 0;
}

/* Add g into input i's gradient. The map owns one reference per entry. */
static int accumulate(backward_pass *bp, const tape_node *node, int i, tw_tensor *g)
{
    tw_tensor *in = node_inputs(node)[i];
    if (g->ndim != in->ndim || memcmp(g->shape, in->shape, sizeof(int64_t) * (size_t)in->ndim) != 0) {
        char a[160], b[160];
        return tw_error_set("gradient: the backward rule of '%s' gave shape %s for input %d of shape %s",
                            node->op->name, tw_shape_str(g->ndim, g->shape, a, sizeof a), i,
                            tw_shape_str(in->ndim, in->shape, b, sizeof b));
    }
    void *prev = NULL;
    tw_id_map_get(&bp->grads, in->id, &prev);
    tw_tensor *sum = prev ? tw_add(prev, g) : g;
    if (!sum)
        return -1;
    if (!tw_id_map_put(&bp->grads, in->id, tw_tensor_ref(sum))) {
        tw_tensor_unref(sum);
        return tw_error_set("gradient: out of memory");
    }
    tw_tensor_unref(prev);
    return 0;
}

/* Once the op that produced an output is done, every use of that output has
 * been seen (records are in order), so its gradient can go, unless it is
 * one the caller asked for. This keeps peak memory near one layer's worth. */
static void release_output_grads(backward_pass *bp, const tape_node *node)
{
    for (int k = 0; k < node->noutputs; k++) {
        uint64_t id = node->outputs[k]->id;
        void *g = NULL;
        if (tw_id_map_get(&bp->grads, id, &g) && g && !tw_id_map_get(&bp->sources, id, NULL)) {
            tw_tensor_unref(g);
            tw_id_map_put(&bp->grads, id, NULL);
        }
    }
}

/* Run one record's backward rule inside its own scope, so the rule's
 * temporaries die with it; only the accumulated sums survive. */
static int run_rule(backward_pass *bp, const tape_node *node, tw_tensor *const *grad_outs, const bool *needs,
                    tw_tensor **grad_ins)
{
    tw_op_call call = {node->op, node->ninputs, node_inputs(node), &node->attrs, node->ctx};
    if (!node->op->backward)
        return tw_error_set("gradient: op '%s' has no gradient", node->op->name);
    tw_scope_begin();
    /* Traced, a rule's ops go under "gradients/" and its op's scope, so the
     * graph view shows the backward pass as one box with a part per layer. */
    const char *forward_scope = tw__tracer ? tw__trace_scope_of(node->outputs[0]) : NULL;
    char scope[512];
    if (forward_scope) {
        snprintf(scope, sizeof scope, "gradients%s%s", *forward_scope ? "/" : "", forward_scope);
        tw_name_scope_push(scope);
    }
    unsigned errors_before = tw__error_count();
    int rc = node->op->backward(&call, node->outputs, grad_outs, needs, grad_ins);
    if (rc == 0 && tw__error_count() != errors_before)
        rc = -1; /* an op inside the rule failed and left a NULL gradient */
    for (int i = 0; i < node->ninputs && rc == 0; i++)
        if (needs[i] && grad_ins[i])
            rc = accumulate(bp, node, i, grad_ins[i]);
    if (forward_scope)
        tw_name_scope_pop();
    tw_scope_end();
    return rc;
}

static int backward_node(backward_pass *bp, const tape_node *node)
{
    tw_tensor *grad_outs[TW_MAX_OUTPUTS] = {0};
    bool any_grad = false;
    for (int k = 0; k < node->noutputs; k++) {
        void *g = NULL;
        any_grad |= tw_id_map_get(&bp->grads, node->outputs[k]->id, &g) && g;
        grad_outs[k] = g;
    }
    if (!any_grad)
        return 0;
    bool needs_inline[INLINE_INPUTS * 4];
    tw_tensor *grad_ins_inline[INLINE_INPUTS * 4];
    bool small = node->ninputs <= INLINE_INPUTS * 4;
    bool *needs = small ? needs_inline : calloc((size_t)node->ninputs, sizeof *needs);
    tw_tensor **grad_ins = small ? grad_ins_inline : calloc((size_t)node->ninputs, sizeof *grad_ins);
    int rc = 0;
    bool any_need = false;
    if (!needs || !grad_ins) {
        rc = tw_error_set("gradient: out of memory");
        goto out;
    }
    for (int i = 0; i < node->ninputs; i++) {
        needs[i] = tw_dtype_is_float(node_inputs(node)[i]->dtype) &&
                   tw_id_map_get(&bp->depends, node_inputs(node)[i]->id, NULL);
        any_need |= needs[i];
        grad_ins[i] = NULL;
    }
    if (any_need && (rc = check_versions(node)) == 0)
        rc = run_rule(bp, node, grad_outs, needs, grad_ins);
    release_output_grads(bp, node);
out:
    if (!small) {
        free(needs);
        free(grad_ins);
    }
    return rc;
}

static int check_gradient_args(tw_tape *tape, tw_tensor *target, tw_tensor *seed, int nsources,
                               tw_tensor *const *sources)
{
    if (!tape)
        return tw_error_set("gradient: tape is NULL");
    if (tw__check_inputs("gradient", 1, &target) < 0 || tw__check_inputs("gradient", nsources, sources) < 0)
        return -1;
    if (tape->used)
        return tw_error_set("gradient: a non-persistent tape can compute gradients only once; begin it with "
                            "tw_tape_begin(true) to call gradient again");
    if (!tw_dtype_is_float(target->dtype))
        return tw_error_set("gradient: the target must be a float tensor, not %s", tw_dtype_name(target->dtype));
    if (seed && (seed->dtype != target->dtype || seed->ndim != target->ndim ||
                 memcmp(seed->shape, target->shape, sizeof(int64_t) * (size_t)target->ndim) != 0)) {
        char a[160], b[160];
        return tw_error_set("gradient: output gradient %s %s does not match target %s %s",
                            tw_shape_str(seed->ndim, seed->shape, a, sizeof a), tw_dtype_name(seed->dtype),
                            tw_shape_str(target->ndim, target->shape, b, sizeof b), tw_dtype_name(target->dtype));
    }
    return 0;
}

/* A source's gradient is final once the backward walk has passed the first
 * node that read it: no earlier node can add to it. first[i] is that node's
 * index for source i (-1: no node read it). */
static int *first_readers(const tw_tape *tape, int nsources, tw_tensor *const *sources)
{
    int *first = malloc(sizeof *first * (size_t)(nsources ? nsources : 1));
    if (!first)
        return NULL;
    for (int i = 0; i < nsources; i++)
        first[i] = -1;
    for (size_t n = 0; n < tape->nnodes; n++)
        for (int k = 0; k < tape->nodes[n].ninputs; k++)
            for (int i = 0; i < nsources; i++)
                if (first[i] < 0 && node_inputs(&tape->nodes[n])[k] == sources[i])
                    first[i] = (int)n;
    return first;
}

/* Source i's packed gradient into grads[i] (rules may leave broadcast views;
 * a recorded copy, so outer tapes still see it), handed to the hook. */
static int finish_source(backward_pass *bp, int i, tw_tensor *const *sources, tw_tensor **grads)
{
    void *g = NULL;
    tw_id_map_get(&bp->grads, sources[i]->id, &g);
    grads[i] = g ? tw_tensor_ref(tw_contiguous(g)) : NULL;
    if (g && !grads[i])
        return -1;
    if (bp->ready)
        bp->ready(i, sources[i], grads[i], bp->ready_data);
    return 0;
}

static int run_backward(backward_pass *bp, tw_tensor *target, tw_tensor *seed, int nsources,
                        tw_tensor *const *sources, tw_tensor **grads)
{
    mark_dependents(bp, nsources, sources);
    for (int i = 0; i < nsources; i++)
        tw_id_map_put(&bp->sources, sources[i]->id, NULL);
    if (!seed)
        seed = tw_ones_like(target);
    if (!seed || !tw_id_map_put(&bp->grads, target->id, tw_tensor_ref(seed)))
        return -1;
    int *first = bp->ready ? first_readers(bp->tape, nsources, sources) : NULL;
    if (bp->ready && !first)
        return tw_error_set("gradient: out of memory");
    /* A hooked source finished during the walk gets first[i] = FINISHED;
     * the rest (all of them without a hook) are finished after it. */
    enum { FINISHED = -2 };
    int rc = 0;
    for (size_t n = bp->tape->nnodes; !rc && n-- > 0;) {
        rc = backward_node(bp, &bp->tape->nodes[n]);
        for (int i = 0; !rc && first && i < nsources; i++)
            if (first[i] == (int)n) {
                first[i] = FINISHED;
                rc = finish_source(bp, i, sources, grads);
            }
    }
    for (int i = 0; !rc && i < nsources; i++)
        if (!first || first[i] != FINISHED)
            rc = finish_source(bp, i, sources, grads);
    free(first);
    return rc;
}

/* Drop the references the gradient map still owns. */
static void release_grads(tw_id_map *grads)
{
    for (size_t i = 0; i < grads->capacity; i++)
        if (grads->keys[i])
            tw_tensor_unref(grads->values[i]);
    tw_id_map_clear(grads);
}

static int gradient(tw_tape *tape, tw_tensor *target, tw_tensor *output_gradient, int nsources,
                    tw_tensor *const *sources, tw_tensor **grads, tw_gradient_ready_fn ready, void *ready_data)
{
    for (int i = 0; i < nsources; i++)
        grads[i] = NULL;
    if (check_gradient_args(tape, target, output_gradient, nsources, sources) < 0)
        return -1;
    backward_pass bp = {.tape = tape, .ready = ready, .ready_data = ready_data};
    bool was_recording = tape->recording;
    tape->recording = false; /* a tape does not record its own backward pass */
    tw_scope_begin();
    int rc = run_backward(&bp, target, output_gradient, nsources, sources, grads);
    release_grads(&bp.grads);
    tw_scope_end();
    tape->recording = was_recording;
    tw_id_map_clear(&bp.depends);
    tw_id_map_clear(&bp.sources);
    for (int i = 0; i < nsources; i++) {
        if (rc < 0) {
            tw_tensor_unref(grads[i]);
            grads[i] = NULL;
        } else {
            tw__track(grads[i]);
        }
    }
    if (!tape->persistent) {
        tape->used = true;
        release_nodes(tape);
    }
    return rc;
}

int tw_tape_gradient_ex(tw_tape *tape, tw_tensor *target, tw_tensor *output_gradient, int nsources,
                        tw_tensor *const *sources, tw_tensor **grads)
{
    return gradient(tape, target, output_gradient, nsources, sources, grads, NULL, NULL);
}

int tw_tape_gradient(tw_tape *tape, tw_tensor *target, int nsources, tw_tensor *const *sources, tw_tensor **grads)
{
    return gradient(tape, target, NULL, nsources, sources, grads, NULL, NULL);
}

int tw_tape_gradient_hooked(tw_tape *tape, tw_tensor *target, int nsources, tw_tensor *const *sources,
                            tw_tensor **grads, tw_gradient_ready_fn ready, void *user_data)
{
    return gradient(tape, target, NULL, nsources, sources, grads, ready, user_data);
}
