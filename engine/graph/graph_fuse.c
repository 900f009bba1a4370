/* Fused elementwise groups: an execution plan over a finalized graph (the
 * nodes stay as traced, so inspection and JSON show the real ops).
 *
 * A group is a set of elementwise float32 or float64 unary and binary nodes
 * on the CPU with one output dtype and shape, whose values are read only
 * inside the group except the root's (the last node). Its other inputs, the
 * externals, must have the output's element count (no broadcasting) or be
 * single values. A run evaluates the group block by block: each step of its
 * program is one loop over a block held in a stack buffer, so memory sees
 * one read of each external and one write of the output, and no tensor is
 * made for the values inside. The loops call the kernels' formulas
 * (kernels/include/elementwise.h) in the kernels' precision, so the values are the
 * same bit for bit; they are
 * compiled for AVX-512 and AVX2 too (never contracted to FMA, which would
 * round differently) and the best the CPU runs is picked at load time.
 * Blocks of 2 KiB keep a step's operands in L1 with the buffers a few
 * cache lines apart (the same offset modulo 4 KiB stalls the loads). No group spans an assignment:
 * every member reads what it would have read running in order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_kernels.h"
#include "cpu/parallel.h"
#include "graph_internal.h"

#define MAX_BUFFERS 12
#define MAX_EXTERNAL 32
#define BLOCK_BYTES 2048
#define SKEW 16 /* elements between two buffers beyond a block: loads and stores of one step never 4K-alias */
#define CHUNK 8192 /* elements a thread takes at a time, as the kernels split */

/* ---- which ops ------------------------------------------------------------------ */

/* Whether a node can join a group: an elementwise op (kernels/include/elementwise.h)
 * with a float result. */
static bool fusable(const tw_gnode *n)
{
    if (n->kind != TW_NODE_OP || n->device.kind != TW_DEVICE_CPU || n->noutputs != 1 || !n->op->elementwise)
        return false;
    tw_dtype dt = n->outputs[0].desc.dtype;
    return (dt == TW_FLOAT32 || dt == TW_FLOAT64) && n->ninputs == n->op->elementwise;
}

static bool same_desc(const tw_desc *a, const tw_desc *b)
{
    return a->dtype == b->dtype && a->ndim == b->ndim &&
           memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim) == 0;
}

/* ---- planning ------------------------------------------------------------------- */

typedef struct {
    tw_graph *g;
    int *fusable; /* 1 for a node that can join a group */
    int *readers; /* uses of each node's outputs, the graph's outputs counted */
    int *epoch;   /* assignments before each node */
    int *seen;    /* the root whose group last counted uses of the node */
    int *inside;  /* uses by that group */
    int *in;      /* the root whose group the node joined */
    int *last;    /* the last step of the group that reads the node */
    int *members; /* the group being grown, descending */
    int *heap;    /* the group's candidates: inputs of its members, a max-heap */
    int nheap;
    int *releaser; /* per slot: the node whose run releases the value, -1 for none */
} planner;

static void clear_group(tw_fgroup *grp)
{
    free(grp->members);
    free(grp->external_slots);
    free(grp->steps);
    free(grp->release);
}

void tw__graph_fuse_clear(tw_graph *g)
{
    for (int i = 0; i < g->nfused; i++)
        clear_group(&g->fused[i]);
    free(g->fused);
    g->fused = NULL;
    g->nfused = 0;
}

static void heap_push(planner *p, int node)
{
    int i = p->nheap++;
    for (; i > 0 && p->heap[(i - 1) / 2] < node; i = (i - 1) / 2)
        p->heap[i] = p->heap[(i - 1) / 2];
    p->heap[i] = node;
}

static int heap_pop(planner *p)
{
    int top = p->heap[0], last = p->heap[--p->nheap], i = 0;
    for (int child; (child = 2 * i + 1) < p->nheap; i = child) {
        if (child + 1 < p->nheap && p->heap[child + 1] > p->heap[child])
            child++;
        if (p->heap[child] <= last)
            break;
        p->heap[i] = p->heap[child];
    }
    p->heap[i] = last;
    return top;
}

/* Counts the uses of node's inputs by root's group; an input seen for the
 * first time becomes a candidate. */
static void count_inputs(planner *p, int node, int root)
{
    const tw_gnode *n = &p->g->nodes[node];
    for (int i = 0; i < n->ninputs; i++) {
        int in = n->inputs[i].node;
        if (p->seen[in] != root) {
            p->seen[in] = root;
            p->inside[in] = 0;
            heap_push(p, in);
        }
        p->inside[in]++;
    }
}

/* Whether every value c reads is still there when root's group runs. A
 * member runs late, at the root, so a value whose last reader by order is
 * a node between c and the root, outside this group and outside any group
 * run after it, is released before then (traced LSTM and GRU training
 * steps read a freed slot that way). */
static bool inputs_live(const planner *p, int c, int root)
{
    const tw_gnode *n = &p->g->nodes[c];
    for (int i = 0; i < n->ninputs; i++) {
        int by = p->releaser[n->in_slots[i]];
        if (by > c && by < root && p->in[by] < root)
            return false;
    }
    return true;
}

/* Whether node c joins root's group: all its readers are in it already. */
static bool joins(const planner *p, int c, int root)
{
    const tw_gnode *n = &p->g->nodes[c], *r = &p->g->nodes[root];
    return p->seen[c] == root && p->inside[c] == p->readers[c] && p->fusable[c] && n->fuse_group < 0 &&
           p->epoch[c] == p->epoch[root] && same_desc(&n->outputs[0].desc, &r->outputs[0].desc) &&
           inputs_live(p, c, root);
}

/* Grow root's group; members descending. Candidates are decided in
 * descending order (inputs come before their readers), so each node's
 * readers have all decided before it is; only the members' inputs are
 * looked at, so a group reading an early node (a captured weight) costs
 * its own size, not the distance back to that node. */
static int grow(planner *p, int root)
{
    int n = 0;
    p->members[n++] = root;
    p->in[root] = root;
    p->nheap = 0;
    count_inputs(p, root, root);
    while (p->nheap) {
        int c = heap_pop(p);
        if (joins(p, c, root)) {
            p->members[n++] = c;
            p->in[c] = root;
            count_inputs(p, c, root);
        }
    }
    return n;
}

/* The operand number of input r of a member: a buffer, or an external
 * (added on first use); -1 when the group needs too many. */
static int operand(const planner *p, tw_fgroup *grp, const int *buffer, tw_gref r, int root)
{
    const tw_graph *g = p->g;
    if (p->in[r.node] == root)
        return MAX_EXTERNAL + buffer[r.node];
    int slot = g->nodes[r.node].first_slot + r.output;
    const tw_desc *d = &g->nodes[r.node].outputs[r.output].desc, *out = &g->nodes[root].outputs[0].desc;
    int64_t numel = tw__numel(d->ndim, d->shape);
    if (numel != 1 && numel != tw__numel(out->ndim, out->shape))
        return -1; /* broadcast along some axis */
    for (int k = 0; k < grp->nexternal; k++)
        if (grp->external_slots[k] == slot)
            return k;
    if (grp->nexternal == MAX_EXTERNAL)
        return -1;
    grp->external_slots[grp->nexternal] = slot;
    return grp->nexternal++;
}

/* Write the group's program; members ascending. 0, or -1 when it does not fit. */
static int program(planner *p, tw_fgroup *grp, int *buffer)
{
    int root = grp->root;
    for (int s = 0; s < grp->nmembers; s++) {
        const tw_gnode *n = &p->g->nodes[grp->members[s]];
        for (int i = 0; i < n->ninputs; i++)
            p->last[n->inputs[i].node] = s;
    }
    unsigned busy = 0;
    for (int s = 0; s < grp->nmembers; s++) {
        int m = grp->members[s];
        const tw_gnode *n = &p->g->nodes[m];
        tw_fstep *step = &grp->steps[s];
        step->binary = n->op->elementwise == 2;
        step->op = n->op->elementwise_op;
        step->p0 = n->attrs.f[0];
        step->p1 = n->attrs.f[1];
        step->a = operand(p, grp, buffer, n->inputs[0], root);
        step->b = step->binary ? operand(p, grp, buffer, n->inputs[1], root) : step->a;
        if (step->a < 0 || step->b < 0)
            return -1;
        step->dst = -1;
        if (m != root) {
            int free_buffer = __builtin_ctz(~busy | (1u << MAX_BUFFERS));
            if (free_buffer == MAX_BUFFERS)
                return -1;
            busy |= 1u << free_buffer;
            buffer[m] = step->dst = free_buffer;
            grp->nbuffers = free_buffer + 1 > grp->nbuffers ? free_buffer + 1 : grp->nbuffers;
        }
        for (int i = 0; i < n->ninputs; i++) /* after taking dst: a step never writes what it reads */
            if (p->in[n->inputs[i].node] == root && p->last[n->inputs[i].node] == s)
                busy &= ~(1u << buffer[n->inputs[i].node]);
    }
    return 0;
}

/* The members' releases of values made outside the group (the inner ones
 * are never made when the group runs fused). 0 or -1. */
static int plan_release(const tw_graph *g, tw_fgroup *grp)
{
    int n = 0;
    for (int i = 0; i < grp->nmembers; i++)
        n += g->nodes[grp->members[i]].nrelease;
    grp->release = malloc(sizeof *grp->release * (size_t)(n ? n : 1));
    if (!grp->release)
        return -1;
    for (int i = 0; i < grp->nmembers; i++) {
        const tw_gnode *m = &g->nodes[grp->members[i]];
        for (int r = 0; r < m->nrelease; r++) {
            bool inner = false;
            for (int j = 0; j < grp->nmembers && !inner; j++)
                inner = g->nodes[grp->members[j]].first_slot == m->release[r];
            if (!inner)
                grp->release[grp->nrelease++] = m->release[r];
        }
    }
    return 0;
}

/* Make root's group if it has two members or more and fits; 0 or -1 (out of memory). */
static int plan_group(planner *p, int root, int *buffer)
{
    int n = grow(p, root);
    if (n < 2)
        return 0;
    tw_fgroup grp = {.root = root, .nmembers = n, .nsteps = n};
    grp.members = malloc(sizeof *grp.members * (size_t)n);
    grp.external_slots = malloc(sizeof *grp.external_slots * MAX_EXTERNAL);
    grp.steps = malloc(sizeof *grp.steps * (size_t)n);
    if (!grp.members || !grp.external_slots || !grp.steps) {
        clear_group(&grp);
        return -1;
    }
    for (int i = 0; i < n; i++)
        grp.members[i] = p->members[n - 1 - i];
    if (program(p, &grp, buffer) < 0) {
        for (int i = 0; i < n; i++)
            p->in[grp.members[i]] = -1;
        clear_group(&grp);
        return 0;
    }
    tw_fgroup *groups = plan_release(p->g, &grp) == 0 ? realloc(p->g->fused, sizeof *groups * (size_t)(p->g->nfused + 1))
                                                    : NULL;
    if (!groups) {
        clear_group(&grp);
        return -1;
    }
    p->g->fused = groups;
    for (int i = 0; i < n; i++)
        p->g->nodes[grp.members[i]].fuse_group = p->g->nfused;
    groups[p->g->nfused++] = grp;
    return 0;
}

static void count_uses(planner *p)
{
    tw_graph *g = p->g;
    for (int n = 0, assignments = 0; n < g->nnodes; n++) {
        const tw_gnode *node = &g->nodes[n];
        p->fusable[n] = fusable(node);
        p->epoch[n] = assignments;
        assignments += node->kind == TW_NODE_OP && (node->op->flags & TW_OP_STATEFUL);
        p->seen[n] = p->in[n] = -1;
        for (int i = 0; i < node->ninputs; i++)
            p->readers[node->inputs[i].node]++;
        g->nodes[n].fuse_group = -1;
    }
    for (int i = 0; i < g->noutputs; i++)
        p->readers[g->outputs[i].node]++;
    for (int s = 0; s < g->nslots; s++)
        p->releaser[s] = -1;
    for (int n = 0; n < g->nnodes; n++)
        for (int r = 0; r < g->nodes[n].nrelease; r++)
            p->releaser[g->nodes[n].release[r]] = n;
}

int tw__graph_fuse(tw_graph *g)
{
    tw__graph_fuse_clear(g);
    size_t n = (size_t)(g->nnodes ? g->nnodes : 1);
    int *all = calloc(10 * n, sizeof *all);
    if (!all)
        return -1;
    planner p = {g,         all + n,     all + 2 * n, all + 3 * n, all + 4 * n,
                 all + 5 * n, all + 6 * n, all + 7 * n, all + 8 * n, all + 9 * n};
    int *buffer = all;
    p.releaser = malloc(sizeof *p.releaser * (size_t)(g->nslots ? g->nslots : 1));
    if (!p.releaser) {
        free(all);
        return -1;
    }
    count_uses(&p);
    int rc = 0;
    for (int root = g->nnodes - 1; root >= 0 && rc == 0; root--)
        if (p.fusable[root] && g->nodes[root].fuse_group < 0)
            rc = plan_group(&p, root, buffer);
    free(p.releaser);
    free(all);
    if (rc < 0)
        tw__graph_fuse_clear(g);
    return rc;
}

/* ---- running ---------------------------------------------------------------------- */

/* The evaluators are compiled once per ISA; the step loops are inlined into
 * each, so a step is a switch, not a call through the clones' resolver. No
 * FMA contraction: values stay bit-identical to the kernels'. */
#define NO_CONTRACT optimize("fp-contract=off")
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default"), NO_CONTRACT))
#define STEP static inline __attribute__((always_inline, NO_CONTRACT))

#define UNARY_LOOP(FN)                                                                                      \
    for (int64_t i = 0; i < n; i++)                                                                         \
        d[i] = FN(x[i], p0, p1);                                                                            \
    return;

/* A single value on one side is read once, as the kernels do. */
#define BINARY_LOOP(FN)                                                                                     \
    if (single_a) {                                                                                         \
        TWK_T x = a[0];                                                                                     \
        for (int64_t i = 0; i < n; i++)                                                                     \
            d[i] = FN(x, b[i]);                                                                             \
    } else if (single_b) {                                                                                  \
        TWK_T y = b[0];                                                                                     \
        for (int64_t i = 0; i < n; i++)                                                                     \
            d[i] = FN(a[i], y);                                                                             \
    } else {                                                                                                \
        for (int64_t i = 0; i < n; i++)                                                                     \
            d[i] = FN(a[i], b[i]);                                                                          \
    }                                                                                                       \
    return;

/* The kernels' own formulas (kernels/include/elementwise.h), so fused values are
 * theirs bit for bit: every float-valued row. */
#define UNARY_CASE(name, takes, nattrs, f, i) TWK__FLOAT_##takes(case TWK_UNARY_##name: UNARY_LOOP(TWK_FN_NAME(name)))
#define BINARY_CASE(name, takes, f, i) FLOAT_RESULT_##takes(case TWK_BINARY_##name: BINARY_LOOP(TWK_FN_NAME(name)))
#define FLOAT_RESULT_ARITH(...) __VA_ARGS__
#define FLOAT_RESULT_FLOAT(...) __VA_ARGS__
#define FLOAT_RESULT_COMPARE(...)
#define FLOAT_RESULT_LOGICAL(...)

/* A unary and a binary step function for the dtype TWK_T stands for. */
#define STEP_FUNCTIONS(UNARY, BINARY)                                                                       \
    STEP void UNARY(int op, int64_t n, TWK_T *restrict d, const TWK_T *restrict x, double p0, double p1)    \
    {                                                                                                       \
        switch (op) { TWK_UNARY_OPS(UNARY_CASE) default: return; }                                          \
    }                                                                                                       \
    STEP void BINARY(int op, int64_t n, TWK_T *restrict d, const TWK_T *a, bool single_a, const TWK_T *b,   \
                     bool single_b)                                                                         \
    {                                                                                                       \
        switch (op) { TWK_BINARY_OPS(BINARY_CASE) default: return; }                                        \
    }

#define TWK_T float
#define TWK__SFX _f32
STEP_FUNCTIONS(unary_f32, binary_f32)
#undef TWK_T
#undef TWK__SFX
#define TWK_T double
#define TWK__SFX _f64
STEP_FUNCTIONS(unary_f64, binary_f64)
#undef TWK_T
#undef TWK__SFX

typedef struct {
    const tw_fgroup *grp;
    const void *external[MAX_EXTERNAL];
    bool single[MAX_EXTERNAL + MAX_BUFFERS];
    void *out;
} fused_run;

/* Evaluate elements [start, start + count) block by block. */
#define EVALUATE(NAME, T, UNARY, BINARY)                                                                    \
    CLONES static void NAME(const fused_run *r, int64_t start, int64_t count)                               \
    {                                                                                                       \
        enum { BLOCK = BLOCK_BYTES / sizeof(T) };                                                           \
        T buffers[MAX_BUFFERS][BLOCK + SKEW];                                                               \
        const tw_fgroup *grp = r->grp;                                                                      \
        const T *src[MAX_EXTERNAL + MAX_BUFFERS];                                                           \
        for (int j = 0; j < grp->nbuffers; j++)                                                             \
            src[MAX_EXTERNAL + j] = buffers[j];                                                             \
        for (int64_t i0 = start; i0 < start + count; i0 += BLOCK) {                                         \
            int64_t n = start + count - i0 < BLOCK ? start + count - i0 : BLOCK;                            \
            for (int k = 0; k < grp->nexternal; k++)                                                        \
                src[k] = (const T *)r->external[k] + (r->single[k] ? 0 : i0);                               \
            for (int s = 0; s < grp->nsteps; s++) {                                                         \
                const tw_fstep *st = &grp->steps[s];                                                        \
                T *d = st->dst < 0 ? (T *)r->out + i0 : buffers[st->dst];                                   \
                if (st->binary)                                                                             \
                    BINARY(st->op, n, d, src[st->a], r->single[st->a], src[st->b], r->single[st->b]);      \
                else                                                                                        \
                    UNARY(st->op, n, d, src[st->a], st->p0, st->p1);                                        \
            }                                                                                               \
        }                                                                                                   \
    }

EVALUATE(evaluate_f32, float, unary_f32, binary_f32)
EVALUATE(evaluate_f64, double, unary_f64, binary_f64)

int tw__fgroup_run(const tw_graph *g, const tw_fgroup *grp, tw_tensor **slots, tw_storage *arena)
{
    const tw_gnode *root = &g->nodes[grp->root];
    const tw_desc *d = &root->outputs[0].desc;
    int64_t numel = tw__numel(d->ndim, d->shape);
    fused_run r = {.grp = grp};
    for (int k = 0; k < grp->nexternal; k++) {
        const tw_tensor *t = slots[grp->external_slots[k]];
        if (t->numel != 1 && !tw_tensor_is_contiguous(t))
            return 0;
        r.external[k] = tw__data(t);
        r.single[k] = t->numel == 1 && numel != 1;
    }
    tw_tensor *out = tw__graph_value(g, arena, root->first_slot, d, root->device);
    if (!out)
        return -1;
    out->weak = root->outputs[0].weak;
    r.out = tw__data(out);
    void (*evaluate)(const fused_run *, int64_t, int64_t) = d->dtype == TW_FLOAT32 ? evaluate_f32 : evaluate_f64;
    if (!twk_parallel(numel)) {
        evaluate(&r, 0, numel);
    } else {
        int64_t nchunks = (numel + CHUNK - 1) / CHUNK;
#pragma omp parallel for
        for (int64_t c = 0; c < nchunks; c++)
            evaluate(&r, c * CHUNK, numel - c * CHUNK < CHUNK ? numel - c * CHUNK : CHUNK);
    }
    slots[root->first_slot] = out;
    return 1;
}
