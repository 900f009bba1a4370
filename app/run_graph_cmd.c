/* twb run-graph FILE --input X.npy [--input ...] [--output Y.npy ...]
 *
 * Loads a graph file (tw/graph_file.h), reads one NPY file per graph input
 * in order, runs the graph, and writes one NPY file per output in order
 * (or prints the outputs when no --output is given). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tw/data.h>
#include <tw/engine.h>
#include <tw/graph_file.h>

#include "run_graph_cmd.h"

#define MAX_FILES 64

typedef struct {
    const char *graph_path;
    const char *inputs[MAX_FILES], *outputs[MAX_FILES];
    int ninputs, noutputs;
} run_options;

__attribute__((format(printf, 1, 2))) static int usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("twb: run-graph: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'twb --help'.\n", stderr);
    return 2;
}

static int parse_args(run_options *o, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        bool input = !strcmp(arg, "--input"), output = !strcmp(arg, "--output");
        if ((input || output) && i + 1 >= argc)
            return usage("option '%s' needs a file", arg);
        if ((input && o->ninputs == MAX_FILES) || (output && o->noutputs == MAX_FILES))
            return usage("at most %d files for '%s'", MAX_FILES, arg);
        if (input)
            o->inputs[o->ninputs++] = argv[++i];
        else if (output)
            o->outputs[o->noutputs++] = argv[++i];
        else if (arg[0] == '-' && arg[1])
            return usage("unknown option '%s'", arg);
        else if (o->graph_path)
            return usage("one graph file at a time; unexpected '%s'", arg);
        else
            o->graph_path = arg;
    }
    if (!o->graph_path)
        return usage("name a graph file (written by 'twb trace')");
    return 0;
}

/* A graph is traced for one shape: when only the batch differs, say how
 * to get a graph for it. */
static void explain_mismatch(const tw_graph *g, int n, tw_tensor *const *inputs)
{
    for (int i = 0; i < n && i < tw_graph_ninputs(g); i++) {
        const int64_t *shape;
        int node = tw_graph_input_node(g, i);
        int ndim = tw_graph_node_output_shape(g, node, 0, &shape);
        const tw_tensor *x = inputs[i];
        if (ndim < 1 || tw_tensor_ndim(x) != ndim || tw_tensor_dim(x, 0) == shape[0])
            continue;
        bool rest_same = true;
        for (int d = 1; d < ndim; d++)
            rest_same &= tw_tensor_dim(x, d) == shape[d];
        if (rest_same)
            fprintf(stderr, "twb run-graph: the graph takes batches of %lld; trace it for %lld with 'twb trace "
                            "MODEL.json --batch %lld ...'\n",
                    (long long)shape[0], (long long)tw_tensor_dim(x, 0), (long long)tw_tensor_dim(x, 0));
        return;
    }
}

static int write_outputs(const run_options *o, int n, tw_tensor *const *outputs)
{
    if (o->noutputs == 0) {
        for (int k = 0; k < n; k++)
            tw_tensor_print(outputs[k], stdout);
        return 0;
    }
    for (int k = 0; k < n; k++)
        if (tw_npy_save(o->outputs[k], outputs[k]) < 0)
            return -1;
    return 0;
}

static int run(const run_options *o, const tw_graph *g)
{
    int n = tw_graph_noutputs(g);
    if (o->noutputs && o->noutputs != n)
        return tw_error_set("%s has %d output%s; give one --output per output (or none to print them)", o->graph_path,
                            n, n == 1 ? "" : "s");
    if (o->ninputs != tw_graph_ninputs(g))
        return tw_error_set("%s takes %d input%s; give one --input NPY file per input, in order", o->graph_path,
                            tw_graph_ninputs(g), tw_graph_ninputs(g) == 1 ? "" : "s");
    tw_tensor *inputs[MAX_FILES] = {0}, **outputs = calloc((size_t)n + 1, sizeof *outputs);
    int rc = outputs ? 0 : tw_error_set("out of memory");
    for (int i = 0; i < o->ninputs && rc == 0; i++)
        rc = (inputs[i] = tw_npy_load(o->inputs[i])) ? 0 : -1;
    if (rc == 0 && tw_graph_run(g, o->ninputs, inputs, outputs, n) < 0) {
        rc = -1;
        fprintf(stderr, "twb run-graph: %s\n", tw_last_error());
        explain_mismatch(g, o->ninputs, inputs);
        tw_error_clear();
    } else if (rc == 0) {
        rc = write_outputs(o, n, outputs);
    }
    for (int i = 0; i < o->ninputs; i++)
        tw_tensor_unref(inputs[i]);
    for (int k = 0; outputs && k < n; k++)
        tw_tensor_unref(outputs[k]);
    free(outputs);
    return rc;
}

int twb_run_graph_command(int argc, char **argv)
{
    if (argc == 1 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
        puts("Usage: twb run-graph FILE --input X.npy [--input ...] [--output Y.npy ...]\n"
             "Run a graph file written by 'twb trace' on NPY inputs, one per graph input in order;\n"
             "write one NPY file per output, or print the outputs.");
        return 0;
    }
    run_options o = {0};
    int rc = parse_args(&o, argc, argv);
    if (rc)
        return rc;
    tw_graph *g = tw_graph_load(o.graph_path);
    rc = g ? run(&o, g) : -1;
    if (rc && tw_error_pending())
        fprintf(stderr, "twb run-graph: %s\n", tw_last_error());
    tw_graph_unref(g);
    return rc ? 1 : 0;
}
