/* An event file's GraphDef (TensorFlow's graph, as tf.summary.graph, the
 * Keras callback and PyTorch's add_graph write it) as twb's graph JSON
 * (docs/graph_json.md), which the run database stores and the graph view
 * draws: one node per NodeDef, its TensorFlow op name kept, its scope the
 * name up to the last '/' (TensorBoard's name scopes), data inputs as
 * [node, output], each output's dtype and shape from the "_output_shapes"
 * and type attrs when the writer put them there.
 *
 * The JSON lists nodes in an order where every input comes first; a
 * GraphDef need not (and a TF1 while loop's NextIteration feeds its Merge
 * back), so the nodes are put in depth-first post-order, file order kept
 * where it already is one, and an input that closes a cycle is left out.
 * Control inputs ("^name") carry no tensor and are left out too; both are
 * how TensorFlow graphs are, not damage. An input naming no node is
 * damage: left out, and the note says how many.
 *
 * TF2 keeps most of a graph in the GraphDef's function library: the graph
 * holds a StatefulPartitionedCall (or PartitionedCall, or an op named as
 * the function) and the function's body holds the ops. Each such call is
 * drawn as its function's body, in the scope "call/function" (collapsible
 * like a name scope; the call node itself is not written), every use of a
 * body argument wired to the call's input and every reader of the call's
 * output to the node the body returns; calls inside bodies likewise. A
 * function no drawn node calls (If and While branches, gradients) is not
 * drawn, and the note says how many.
 *
 * A body names a node's output "node:arg:k": the k-th tensor of output
 * argument "arg". The graph view numbers outputs flat, so an argument's
 * place comes from the op's output arguments: a library function's
 * signature, or op_outputs.c's table of the common ops with several
 * outputs or lists (Unpack's "output" is num tensors long). An op the
 * table does not know is taken to have the one argument read (output k),
 * which is right for most ops; a node of such an op read through two
 * argument names is said in the note, since its edges may then share an
 * output. */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "graph.pb-c.h"
#include "tfevents_internal.h"

/* An output index above this ("node:99999999") is taken as damage: no op
 * has that many outputs, and the node's outputs are allocated up to it. */
#define MAX_OUTPUT_INDEX 4096
/* Calls drawn as their functions' bodies: while the nodes stay under
 * MAX_NODES, at most MAX_DEPTH calls deep; an input followed through at
 * most MAX_STEPS arguments and returns. Past those a call is one node. */
#define MAX_NODES 200000
#define MAX_DEPTH 32
#define MAX_STEPS 256

typedef struct {
    int node, output; /* -1: left out */
} edge;

/* The graph itself, or one call's copy of a library function's body. */
typedef struct frame {
    const struct frame *parent; /* NULL: the graph */
    int call;                   /* the call node, in the parent's frame; -1 */
    const Tensorflow__FunctionDef *function; /* NULL: the graph */
    int depth;
    GHashTable *local; /* node name in this frame -> node index */
} frame;

typedef struct {
    const Tensorflow__NodeDef *def;
    const frame *frame;
    char *name, *scope;
    const frame *body; /* a call drawn as its function's body (not written itself); NULL */
    edge *inputs;
    int ninputs;
    int noutputs;
    int order; /* position in the JSON */
    char *read_as; /* an op not in the table: the first output argument read by name; NULL */
    bool read_as_several; /* ... and another one too */
} node_info;

/* TensorFlow's DataType (types.proto) by number; reference types (+100)
 * name their base type. */
static const char *dtype_name(int t)
{
    static const char *const names[] = {
        [1] = "float32",  [2] = "float64",  [3] = "int32",     [4] = "uint8",    [5] = "int16",
        [6] = "int8",     [7] = "string",   [8] = "complex64", [9] = "int64",    [10] = "bool",
        [11] = "qint8",   [12] = "quint8",  [13] = "qint32",   [14] = "bfloat16", [15] = "qint16",
        [16] = "quint16", [17] = "uint16",  [18] = "complex128", [19] = "float16", [20] = "resource",
        [21] = "variant", [22] = "uint32",  [23] = "uint64",
    };
    if (t > 100)
        t -= 100;
    return t > 0 && t < (int)G_N_ELEMENTS(names) && names[t] ? names[t] : "?";
}

static const Tensorflow__AttrValue *attr(const Tensorflow__NodeDef *n, const char *key)
{
    for (size_t i = 0; i < n->n_attr; i++)
        if (n->attr[i] && n->attr[i]->key && !strcmp(n->attr[i]->key, key))
            return n->attr[i]->value;
    return NULL;
}

/* Output k's dtype: a list of output types when the op has one (as many as
 * the outputs), else the op's single type attr. */
static const char *output_dtype(const Tensorflow__NodeDef *n, int k, int noutputs)
{
    static const char *const lists[] = {"_output_types", "output_types", "Tout", "out_types"};
    for (size_t i = 0; i < G_N_ELEMENTS(lists); i++) {
        const Tensorflow__AttrValue *a = attr(n, lists[i]);
        if (a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && (int)a->list->n_type == noutputs)
            return dtype_name(a->list->type[k]);
    }
    static const char *const singles[] = {"dtype", "T", "DstT", "out_type", "Tidx"};
    for (size_t i = 0; i < G_N_ELEMENTS(singles); i++) {
        const Tensorflow__AttrValue *a = attr(n, singles[i]);
        if (a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE)
            return dtype_name(a->type);
    }
    return "?";
}

static void append_json_string(GString *out, const char *s)
{
    char *valid = g_utf8_make_valid(s ? s : "", -1);
    g_string_append_c(out, '"');
    for (const char *p = valid; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\')
            g_string_append_printf(out, "\\%c", c);
        else if (c < 0x20)
            g_string_append_printf(out, "\\u%04x", c);
        else
            g_string_append_c(out, (char)c);
    }
    g_string_append_c(out, '"');
    g_free(valid);
}

/* Depth-first post-order from every node in file order, without recursion
 * (a chain of 100,000 nodes is one path); an input to a node still on the
 * path closes a cycle and is cut. Returns the nodes by position. */
static int *order_nodes(node_info *nodes, int n)
{
    enum { UNSEEN, ON_PATH, DONE };
    char *state = g_new0(char, MAX(n, 1));
    int *stack = g_new(int, MAX(n, 1)), *next_input = g_new0(int, MAX(n, 1));
    int *by_position = g_new(int, MAX(n, 1));
    int placed = 0;
    for (int root = 0; root < n; root++) {
        if (state[root] != UNSEEN)
            continue;
        int depth = 0;
        stack[depth++] = root;
        state[root] = ON_PATH;
        while (depth > 0) {
            int v = stack[depth - 1];
            if (next_input[v] < nodes[v].ninputs) {
                edge *e = &nodes[v].inputs[next_input[v]++];
                if (e->node < 0)
                    continue;
                if (state[e->node] == ON_PATH)
                    e->node = e->output = -1;
                else if (state[e->node] == UNSEEN) {
                    state[e->node] = ON_PATH;
                    stack[depth++] = e->node;
                }
                continue;
            }
            state[v] = DONE;
            nodes[v].order = placed;
            by_position[placed++] = v;
            depth--;
        }
    }
    g_free(state), g_free(stack), g_free(next_input);
    return by_position;
}

static void append_shape(GString *out, const Tensorflow__TensorShapeProto *s)
{
    if (!s || s->unknown_rank) {
        g_string_append(out, "null");
        return;
    }
    g_string_append_c(out, '[');
    for (size_t d = 0; d < s->n_dim; d++)
        g_string_append_printf(out, "%s%" G_GINT64_FORMAT, d ? ", " : "",
                               s->dim[d] && s->dim[d]->size >= 0 ? (gint64)s->dim[d]->size : (gint64)-1);
    g_string_append_c(out, ']');
}

static void append_node(GString *out, const node_info *nodes, int v, int id)
{
    const node_info *ni = &nodes[v];
    const Tensorflow__NodeDef *def = ni->def;
    g_string_append_printf(out, "%s\n  {\"id\": %d, \"op\": ", id ? "," : "", id);
    append_json_string(out, def->op && def->op[0] ? def->op : "?");
    g_string_append(out, ", \"name\": ");
    append_json_string(out, ni->name);
    g_string_append(out, ", \"scope\": ");
    append_json_string(out, ni->scope);
    g_string_append(out, ", \"inputs\": [");
    int written = 0;
    for (int k = 0; k < ni->ninputs; k++)
        if (ni->inputs[k].node >= 0)
            g_string_append_printf(out, "%s[%d, %d]", written++ ? ", " : "", nodes[ni->inputs[k].node].order,
                                   ni->inputs[k].output);
    g_string_append(out, "], \"outputs\": [");
    const Tensorflow__AttrValue *shapes = attr(def, "_output_shapes");
    size_t nshapes = shapes && shapes->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST ? shapes->list->n_shape : 0;
    for (int k = 0; k < ni->noutputs; k++) {
        g_string_append_printf(out, "%s{\"dtype\": ", k ? ", " : "");
        append_json_string(out, output_dtype(def, k, ni->noutputs));
        g_string_append(out, ", \"shape\": ");
        append_shape(out, (size_t)k < nshapes ? shapes->list->shape[k] : NULL);
        g_string_append_c(out, '}');
    }
    g_string_append(out, "], \"attrs\": {\"ints\": [], \"floats\": []}}");
}

/* ---- the function library ----------------------------------------------------------------- */

/* The library function a node calls: its op names one (a direct call), or
 * its "f" attr does (StatefulPartitionedCall, PartitionedCall); NULL. If
 * and While name theirs in other attrs and are drawn as they are. */
static const Tensorflow__FunctionDef *called_function(const Tensorflow__NodeDef *def, GHashTable *functions)
{
    const Tensorflow__FunctionDef *f = def->op ? g_hash_table_lookup(functions, def->op) : NULL;
    const Tensorflow__AttrValue *a = attr(def, "f");
    if (!f && a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC && a->func->name)
        f = g_hash_table_lookup(functions, a->func->name);
    return f;
}

static const char *function_name(const Tensorflow__FunctionDef *f)
{
    return f->signature && f->signature->name ? f->signature->name : "";
}

/* A function whose body is being drawn further up this frame's chain
 * (a recursive call) is not drawn again inside itself. */
static bool on_chain(const frame *fr, const Tensorflow__FunctionDef *f)
{
    for (; fr; fr = fr->parent)
        if (fr->function == f)
            return true;
    return false;
}

/* The graph reading: its nodes and frames as they grow, the library. */
typedef struct {
    GArray *nodes;     /* node_info */
    GPtrArray *frames; /* frame *, owned */
    GHashTable *functions; /* signature name -> FunctionDef */
    GHashTable *drawn;     /* FunctionDefs drawn at least once */
    int duplicates;        /* body nodes of a name taken already in their function (left out) */
    int no_such_output;    /* inputs naming an output argument or index the op does not have (left out) */
} reading;

#define NODE(rd, i) (&g_array_index((rd)->nodes, node_info, (i)))

static frame *frame_new(reading *rd, const frame *parent, int call, const Tensorflow__FunctionDef *f)
{
    frame *fr = g_new0(frame, 1);
    *fr = (frame){parent, call, f, parent ? parent->depth + 1 : 0, g_hash_table_new(g_str_hash, g_str_equal)};
    g_ptr_array_add(rd->frames, fr);
    return fr;
}

static void frame_free(gpointer p)
{
    frame *fr = p;
    g_hash_table_unref(fr->local);
    g_free(fr);
}

/* Adds a node of frame fr; FALSE when its name is taken in the frame. */
static bool add_node(reading *rd, frame *fr, const Tensorflow__NodeDef *def, const char *prefix)
{
    const char *local = def->name ? def->name : "";
    if (!local[0] || g_hash_table_contains(fr->local, local))
        return false;
    node_info ni = {.def = def, .frame = fr};
    ni.name = g_strconcat(prefix, local, NULL);
    const char *slash = strrchr(ni.name, '/');
    ni.scope = slash ? g_strndup(ni.name, (gsize)(slash - ni.name)) : g_strdup("");
    g_hash_table_insert(fr->local, (gpointer)local, GINT_TO_POINTER(rd->nodes->len));
    g_array_append_val(rd->nodes, ni);
    return true;
}

/* A call whose function has a body becomes that body, in the scope
 * "call/function", while the nodes stay under MAX_NODES and the calls
 * under MAX_DEPTH deep. Nodes added are expanded in turn (a function
 * calling others). */
static void expand_calls(reading *rd)
{
    for (guint i = 0; i < rd->nodes->len; i++) {
        node_info *ni = NODE(rd, i);
        const Tensorflow__FunctionDef *f = called_function(ni->def, rd->functions);
        if (!f || f->n_node_def == 0 || ni->frame->depth >= MAX_DEPTH || on_chain(ni->frame, f) ||
            rd->nodes->len + f->n_node_def > MAX_NODES)
            continue;
        frame *body = frame_new(rd, ni->frame, (int)i, f);
        ni->body = body;
        g_hash_table_add(rd->drawn, (gpointer)f);
        char *prefix = g_strconcat(ni->name, "/", function_name(f), "/", NULL);
        for (size_t k = 0; k < f->n_node_def; k++)
            if (!add_node(rd, body, f->node_def[k], prefix))
                rd->duplicates++;
        g_free(prefix);
    }
}

static bool all_digits(const char *s)
{
    return s[0] && strspn(s, "0123456789") == strlen(s) && strlen(s) < 6;
}

static edge resolve(reading *rd, const frame *fr, const char *text, int steps);

/* The call's k-th data input (control inputs skipped), in the call's frame. */
static edge call_input(reading *rd, const frame *body, int k, int steps)
{
    const node_info *call = NODE(rd, body->call);
    for (size_t i = 0; i < call->def->n_input; i++) {
        const char *in = call->def->input[i] ? call->def->input[i] : "";
        if (in[0] != '^' && k-- == 0)
            return resolve(rd, call->frame, in, steps + 1);
    }
    return (edge){-1, -1};
}

/* Output k of a call drawn as its body: the body's return for the k-th
 * output argument (a function's output arguments are one tensor each, as
 * tf.function writes them: a StatefulPartitionedCall's "output:k" is its
 * function's k-th). */
static edge body_output(reading *rd, const frame *body, int k, int steps)
{
    const Tensorflow__OpDef *sig = body->function->signature;
    if (!sig || k < 0 || (size_t)k >= sig->n_output_arg || !sig->output_arg[k]->name)
        return (edge){-1, -1};
    for (size_t i = 0; i < body->function->n_ret; i++) {
        const Tensorflow__FunctionDef__RetEntry *r = body->function->ret[i];
        if (r->key && r->value && !strcmp(r->key, sig->output_arg[k]->name))
            return resolve(rd, body, r->value, steps + 1);
    }
    return (edge){-1, -1};
}

/* A list output argument's length on node def: the int attr number_attr
 * names or the length of the type list type_list_attr names; 1 for a
 * single tensor; -1 when the node lacks the attr. */
static int arg_length(const Tensorflow__NodeDef *def, const tw_tb_output_arg *arg)
{
    if (!arg->number_attr && !arg->type_list_attr)
        return 1;
    const Tensorflow__AttrValue *a = attr(def, arg->number_attr ? arg->number_attr : arg->type_list_attr);
    if (arg->number_attr)
        return a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_I && a->i >= 0 && a->i <= MAX_OUTPUT_INDEX
                   ? (int)a->i
                   : -1;
    return a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && a->list->n_type <= MAX_OUTPUT_INDEX
               ? (int)a->list->n_type
               : -1;
}

/* The output arguments of a node's op: a library function's signature
 * (each argument one tensor unless it says otherwise) or the table's;
 * NULL when neither knows the op. *copy is what to g_free. */
static const tw_tb_output_arg *output_args(reading *rd, const Tensorflow__NodeDef *def, int *n,
                                           tw_tb_output_arg **copy)
{
    *copy = NULL;
    const Tensorflow__FunctionDef *f = def->op ? g_hash_table_lookup(rd->functions, def->op) : NULL;
    if (f && f->signature) {
        *n = (int)MIN(f->signature->n_output_arg, (size_t)MAX_OUTPUT_INDEX);
        *copy = g_new0(tw_tb_output_arg, MAX(*n, 1));
        for (int i = 0; i < *n; i++) { /* an empty attr name is none (proto3 writers) */
            const Tensorflow__OpDef__ArgDef *arg = f->signature->output_arg[i];
            const char *number = arg->number_attr, *types = arg->type_list_attr;
            (*copy)[i] = (tw_tb_output_arg){arg->name, number && number[0] ? number : NULL,
                                            types && types[0] ? types : NULL};
        }
        return *copy;
    }
    return tw__tb_op_output_args(def->op, n);
}

/* How many outputs a node's op has, when its output arguments and their
 * lengths are known; else 0. */
static int known_outputs(reading *rd, const Tensorflow__NodeDef *def)
{
    tw_tb_output_arg *copy;
    int n, total = 0;
    const tw_tb_output_arg *args = output_args(rd, def, &n, &copy);
    for (int i = 0; args && i < n && total >= 0; i++) {
        int len = arg_length(def, &args[i]);
        total = len < 0 ? -1 : total + len;
    }
    g_free(copy);
    return CLAMP(total, 0, MAX_OUTPUT_INDEX + 1);
}

/* Output "arg:k" of node v as a flat output index: the lengths of the
 * output arguments before arg added to k. -1 when the op has no such
 * output (left out, counted). An op nobody here knows, or a length its
 * node does not give, leaves k as it is (see the top of the file). */
static int flat_output(reading *rd, int v, const char *arg, int k)
{
    node_info *ni = NODE(rd, v);
    tw_tb_output_arg *copy;
    int n;
    const tw_tb_output_arg *args = output_args(rd, ni->def, &n, &copy);
    if (!args) {
        if (!ni->read_as)
            ni->read_as = g_strdup(arg);
        else if (strcmp(ni->read_as, arg))
            ni->read_as_several = true;
        return k;
    }
    int flat = 0, found = -1;
    for (int i = 0; i < n; i++) {
        int len = arg_length(ni->def, &args[i]);
        if (args[i].name && !strcmp(args[i].name, arg)) {
            found = (len < 0 || k < len) && flat + k <= MAX_OUTPUT_INDEX ? flat + k : -1;
            break;
        }
        if (len < 0) { /* a length before arg is not on the node */
            g_free(copy);
            return k;
        }
        flat += len;
    }
    g_free(copy);
    if (found < 0)
        rd->no_such_output++;
    return found;
}

/* An input as its frame writes it, to the node and output it reads. The
 * graph writes "node" or "node:k" (k a flat output index). A function
 * body writes "arg" or "arg:0" for its k-th input argument (the call's
 * k-th input; an argument that is a list counts as one) and "node:out:k"
 * for the k-th tensor of a node's output argument "out" (flat_output).
 * A call drawn as its body is read through its return. A chain of more
 * than MAX_STEPS such hops (calls wired in a loop) is left out. */
static edge resolve(reading *rd, const frame *fr, const char *text, int steps)
{
    edge none = {-1, -1};
    if (steps > MAX_STEPS || text[0] == '^')
        return none;
    const char *first = strchr(text, ':'), *last = strrchr(text, ':');
    int k = last && all_digits(last + 1) ? atoi(last + 1) : 0;
    char *name;
    if (!fr->function) /* "node:k"; a ':' not followed by a number is part of the name */
        name = last && all_digits(last + 1) ? g_strndup(text, (gsize)(last - text)) : g_strdup(text);
    else
        name = first ? g_strndup(text, (gsize)(first - text)) : g_strdup(text);
    const Tensorflow__OpDef *sig = fr->function ? fr->function->signature : NULL;
    for (size_t a = 0; sig && first == last && a < sig->n_input_arg; a++)
        if (sig->input_arg[a]->name && !strcmp(sig->input_arg[a]->name, name)) {
            g_free(name);
            return call_input(rd, fr, (int)a, steps);
        }
    gpointer found;
    edge e = none;
    if (k <= MAX_OUTPUT_INDEX && g_hash_table_lookup_extended(fr->local, name, NULL, &found)) {
        int v = GPOINTER_TO_INT(found);
        if (fr->function && first != last) { /* "node:out:k" */
            char *arg = g_strndup(first + 1, (gsize)(last - first - 1));
            k = flat_output(rd, v, arg, k);
            g_free(arg);
        }
        const node_info *producer = NODE(rd, v);
        if (k >= 0)
            e = producer->body ? body_output(rd, producer->body, k, steps) : (edge){v, k};
    }
    g_free(name);
    return e;
}

/* Nodes of ops output_args does not know, read through several output
 * argument names: each name was drawn as output k, so they may share one.
 * The note names the first three ops. */
static void append_several_note(GString *note, reading *rd)
{
    int several = 0;
    GPtrArray *ops = g_ptr_array_new();
    for (guint i = 0; i < rd->nodes->len; i++) {
        const node_info *ni = NODE(rd, i);
        if (!ni->read_as_several)
            continue;
        several++;
        const char *op = ni->def->op ? ni->def->op : "?";
        bool listed = false;
        for (guint j = 0; j < ops->len; j++)
            listed |= !strcmp(g_ptr_array_index(ops, j), op);
        if (!listed)
            g_ptr_array_add(ops, (gpointer)op);
    }
    if (several) {
        g_string_append_printf(note, "%s%d node%s of ops whose outputs are not known here (", note->len ? "; " : "",
                               several, several == 1 ? "" : "s");
        for (guint j = 0; j < MIN(ops->len, 3); j++)
            g_string_append_printf(note, "%s%.60s", j ? ", " : "", (const char *)g_ptr_array_index(ops, j));
        g_string_append_printf(note, "%s) read through several output arguments (each drawn as output k)",
                               ops->len > 3 ? ", ..." : "");
    }
    g_ptr_array_free(ops, TRUE);
}

char *tw__tb_graph_json_from_graph_def(const uint8_t *data, size_t size, const char *function, char *why,
                                       size_t why_size)
{
    why[0] = '\0';
    Tensorflow__GraphDef *g = tensorflow__graph_def__unpack(NULL, size, data);
    if (!g) {
        char detail[200];
        if (tw__pb_check(&tensorflow__graph_def__descriptor, data, size, TW_PB_MAX_DEPTH, detail, sizeof detail))
            snprintf(why, why_size, "not a GraphDef message: %s", detail);
        else
            snprintf(why, why_size, "not a GraphDef message");
        return NULL;
    }
    int n_graph = (int)MIN(g->n_node, (size_t)G_MAXINT / 2);
    if (n_graph == 0) {
        snprintf(why, why_size, "the GraphDef has no nodes");
        tensorflow__graph_def__free_unpacked(g, NULL);
        return NULL;
    }
    reading rd = {g_array_new(FALSE, TRUE, sizeof(node_info)), g_ptr_array_new_with_free_func(frame_free),
                  g_hash_table_new(g_str_hash, g_str_equal), g_hash_table_new(NULL, NULL), 0};
    const Tensorflow__FunctionDefLibrary *library = g->library;
    for (size_t i = 0; library && i < library->n_function; i++) /* the first of a name */
        if (!g_hash_table_contains(rd.functions, function_name(library->function[i])))
            g_hash_table_insert(rd.functions, (gpointer)function_name(library->function[i]), library->function[i]);
    char *result = NULL;
    frame *top = frame_new(&rd, NULL, -1, NULL);
    for (int i = 0; i < n_graph; i++)
        if (!add_node(&rd, top, g->node[i], "")) {
            const char *name = g->node[i]->name ? g->node[i]->name : "";
            snprintf(why, why_size, name[0] ? "node %d: a second node named '%.100s'" : "node %d has no name", i,
                     name);
            goto out;
        }
    expand_calls(&rd);
    int n = (int)rd.nodes->len, unknown = 0;
    for (int i = 0; i < n; i++) {
        node_info *ni = NODE(&rd, i);
        const Tensorflow__NodeDef *def = ni->def;
        const Tensorflow__AttrValue *shapes = attr(def, "_output_shapes");
        if (shapes && shapes->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST)
            ni->noutputs = (int)MIN(shapes->list->n_shape, (size_t)MAX_OUTPUT_INDEX + 1);
        ni->noutputs = MAX(ni->noutputs, known_outputs(&rd, def));
        ni->inputs = g_new(edge, MAX(def->n_input, 1));
        if (ni->body) /* drawn as its body: read through it */
            continue;
        for (size_t k = 0; k < def->n_input; k++) {
            const char *in = def->input[k] ? def->input[k] : "";
            int no_such_output = rd.no_such_output;
            edge e = resolve(&rd, ni->frame, in, 0);
            unknown += in[0] != '^' && e.node < 0 && rd.no_such_output == no_such_output; /* counted there */
            ni->inputs[ni->ninputs++] = e;
        }
    }
    for (int i = 0; i < n; i++) /* a producer has at least the outputs read from it */
        for (int k = 0; k < NODE(&rd, i)->ninputs; k++) {
            edge e = NODE(&rd, i)->inputs[k];
            if (e.node >= 0 && NODE(&rd, e.node)->noutputs <= e.output)
                NODE(&rd, e.node)->noutputs = e.output + 1;
        }
    node_info *nodes = NODE(&rd, 0);
    int *by_position = order_nodes(nodes, n);
    for (int p = 0, id = 0; p < n; p++) /* the JSON's ids: a call drawn as its body is not written */
        nodes[by_position[p]].order = nodes[by_position[p]].body ? -1 : id++;
    GString *out = g_string_new("{\"format\": \"twb-graph\", \"version\": 1, \"function\": ");
    append_json_string(out, function);
    g_string_append(out, ", \"inputs\": [], \"outputs\": [], \"nodes\": [");
    for (int p = 0, id = 0; p < n; p++)
        if (!nodes[by_position[p]].body)
            append_node(out, nodes, by_position[p], id++);
    g_string_append(out, "]}\n");
    g_free(by_position);
    result = g_string_free(out, FALSE);
    int unused = library ? (int)g_hash_table_size(rd.functions) - (int)g_hash_table_size(rd.drawn) : 0;
    GString *note = g_string_new(NULL);
    if (unknown)
        g_string_append_printf(note, "%d input%s name%s no node of the graph (left out)", unknown,
                               unknown == 1 ? "" : "s", unknown == 1 ? "s" : "");
    if (rd.duplicates)
        g_string_append_printf(note, "%s%d function node%s of a name taken in %s function (left out)",
                               note->len ? "; " : "", rd.duplicates, rd.duplicates == 1 ? "" : "s",
                               rd.duplicates == 1 ? "its" : "their");
    if (unused > 0)
        g_string_append_printf(note, "%s%d library function%s called by no node drawn (not drawn)",
                               note->len ? "; " : "", unused, unused == 1 ? "" : "s");
    if (rd.no_such_output)
        g_string_append_printf(note, "%s%d input%s name%s an output its op does not have (left out)",
                               note->len ? "; " : "", rd.no_such_output, rd.no_such_output == 1 ? "" : "s",
                               rd.no_such_output == 1 ? "s" : "");
    append_several_note(note, &rd);
    g_strlcpy(why, note->str, why_size);
    g_string_free(note, TRUE);
out:
    for (guint i = 0; i < rd.nodes->len; i++) {
        g_free(NODE(&rd, i)->read_as);
        g_free(NODE(&rd, i)->inputs);
        g_free(NODE(&rd, i)->name);
        g_free(NODE(&rd, i)->scope);
    }
    g_array_free(rd.nodes, TRUE);
    g_ptr_array_free(rd.frames, TRUE);
    g_hash_table_unref(rd.functions);
    g_hash_table_unref(rd.drawn);
    tensorflow__graph_def__free_unpacked(g, NULL);
    return result;
}
