/* twb trace MODEL.json [--checkpoint FILE] --batch N --output FILE.twbgraph
 *
 * Loads a Keras model file (and trained weights), traces its inference
 * forward pass (tw_model_call_n with training off, inside a tw_function)
 * for a float32 batch of N examples of each of the model's inputs' shapes
 * (a Functional model's several inputs and outputs too), and writes the
 * graph with its weights as a graph file (tw/graph_file.h) that
 * `twb run-graph` runs without the model file. */
#include <errno.h>
#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tw/checkpoint.h>
#include <tw/engine.h>
#include <tw/graph_file.h>
#include <tw/keras_file.h>

#include "trace_cmd.h"

typedef struct {
    const char *model_path, *checkpoint, *output;
    long batch;
} trace_options;

__attribute__((format(printf, 1, 2))) static int usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("twb: trace: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'twb --help'.\n", stderr);
    return 2;
}

static int parse_args(trace_options *o, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        bool takes_value = !strcmp(arg, "--checkpoint") || !strcmp(arg, "--batch") || !strcmp(arg, "--output");
        if (takes_value && i + 1 >= argc)
            return usage("option '%s' needs a value", arg);
        if (!strcmp(arg, "--checkpoint")) {
            o->checkpoint = argv[++i];
        } else if (!strcmp(arg, "--output")) {
            o->output = argv[++i];
        } else if (!strcmp(arg, "--batch")) {
            char *end = NULL;
            errno = 0;
            o->batch = strtol(argv[++i], &end, 10);
            if (errno || end == argv[i] || *end || o->batch < 1 || o->batch > 1000000)
                return usage("--batch: '%s' is not a batch size from 1 to 1000000", argv[i]);
        } else if (arg[0] == '-' && arg[1]) {
            return usage("unknown option '%s'", arg);
        } else if (o->model_path) {
            return usage("one model file at a time; unexpected '%s'", arg);
        } else {
            o->model_path = arg;
        }
    }
    if (!o->model_path)
        return usage("name a Keras model file (MODEL.json)");
    if (!o->batch || !o->output)
        return usage("name the batch size the graph takes (--batch N) and the file to write (--output FILE)");
    return 0;
}

static int forward(tw_tensor *const *inputs, int ninputs, tw_tensor **outputs, int max_outputs, void *model)
{
    if (tw_model_noutputs(model) > max_outputs)
        return tw_error_set("the model has %d outputs; a traced function returns at most %d",
                            tw_model_noutputs(model), max_outputs);
    return tw_model_call_n(model, ninputs, inputs, outputs, false);
}

/* The model with its weights (restored from the checkpoint, or freshly
 * initialised, seed 0, without one) and the shape of each of its inputs
 * for a batch of o->batch. */
static int prepare(tw_model *model, const trace_options *o, int ninputs, tw_shape *inputs)
{
    for (int k = 0; k < ninputs; k++) {
        const tw_shape *declared = tw_model_input_shape_at(model, k);
        if (!declared)
            return tw_error_set("%s: the model declares no input shape (an InputLayer or batch_input_shape on its "
                                "first layer); a graph needs one",
                                o->model_path);
        inputs[k] = *declared;
        inputs[k].dims[0] = o->batch;
        for (int i = 1; i < inputs[k].ndim; i++)
            if (inputs[k].dims[i] < 1)
                return tw_error_set("%s: input %d's shape has dimension %d unknown; a graph needs every size",
                                    o->model_path, k, i);
    }
    if (o->checkpoint && tw_checkpoint_restore(o->checkpoint, model, NULL) < 0)
        return -1;
    return tw_layer_built(model) ? 0 : tw_model_build(model, NULL, 0);
}

/* "float32 (4, 28, 28)" for each output of the graph, comma-separated. */
static void describe_outputs(const tw_graph *g, GString *out)
{
    for (int k = 0; k < tw_graph_noutputs(g); k++) {
        char text[160];
        const int64_t *shape;
        int output;
        int node = tw_graph_output(g, k, &output);
        int ndim = tw_graph_node_output_shape(g, node, output, &shape);
        g_string_append_printf(out, "%s%s %s", k ? ", " : "", tw_dtype_name(tw_graph_node_output_dtype(g, node, output)),
                               tw_shape_str(ndim, shape, text, sizeof text));
    }
}

static int trace_and_save(tw_model *model, const trace_options *o, int ninputs, const tw_shape *inputs)
{
    tw_function *f = tw_function_new(tw_layer_name(model), forward, model);
    tw_scope_begin();
    tw_tensor *x[TW_MAX_LAYER_IO] = {NULL};
    bool made = f != NULL;
    for (int k = 0; made && k < ninputs; k++)
        made = (x[k] = tw_zeros(TW_FLOAT32, inputs[k].ndim, inputs[k].dims)) != NULL;
    const tw_graph *g = made ? tw_function_get_graph(f, ninputs, x) : NULL;
    int rc = g ? tw_graph_save(o->output, g) : -1;
    if (rc == 0) {
        GString *ins = g_string_new(NULL), *outs = g_string_new(NULL);
        for (int k = 0; k < ninputs; k++) {
            char text[160];
            g_string_append_printf(ins, "%sfloat32 %s", k ? ", " : "",
                                   tw_shape_str(inputs[k].ndim, inputs[k].dims, text, sizeof text));
        }
        describe_outputs(g, outs);
        printf("%s: traced '%s' for input%s %s: %d nodes, output%s %s\n", o->output, tw_graph_function_name(g),
               ninputs == 1 ? "" : "s", ins->str, tw_graph_node_count(g), tw_graph_noutputs(g) == 1 ? "" : "s",
               outs->str);
        g_string_free(ins, TRUE);
        g_string_free(outs, TRUE);
    }
    tw_scope_end();
    tw_function_free(f);
    return rc;
}

int twb_trace_command(int argc, char **argv)
{
    if (argc == 1 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
        puts("Usage: twb trace MODEL.json [--checkpoint FILE] --batch N --output FILE.twbgraph\n"
             "Trace a model's forward pass for batches of N and write it with its weights as a graph file\n"
             "that 'twb run-graph' runs without the model file. MODEL may also be a .keras or .h5 file, whose\n"
             "weights are used unless --checkpoint names others.");
        return 0;
    }
    trace_options o = {0};
    int rc = parse_args(&o, argc, argv);
    if (rc)
        return rc;
    tw_model *model = tw_model_open(o.model_path);
    tw_shape inputs[TW_MAX_LAYER_IO];
    int ninputs = model ? tw_model_ninputs(model) : 0;
    if (model && (ninputs < 1 || ninputs > TW_MAX_LAYER_IO))
        rc = tw_error_set("%s: the model has %d inputs; a graph is traced for 1 to %d", o.model_path, ninputs,
                          TW_MAX_LAYER_IO);
    else
        rc = model && prepare(model, &o, ninputs, inputs) == 0 ? trace_and_save(model, &o, ninputs, inputs) : -1;
    if (rc)
        fprintf(stderr, "twb trace: %s\n", tw_last_error());
    tw_layer_unref(model);
    return rc ? 1 : 0;
}
