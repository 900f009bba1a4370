/* twb trace MODEL.json [--checkpoint FILE] --batch N --output FILE.twbgraph
 *
 * Loads a Keras model file (and trained weights), traces its inference
 * forward pass (tw_model_call with training off, inside a tw_function) for
 * a float32 batch of N examples of the model's input shape, and writes the
 * graph with its weights as a graph file (tw/graph_file.h) that
 * `twb run-graph` runs without the model file. */
#include <errno.h>
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

static int forward(tw_tensor *const *inputs, int ninputs, tw_tensor **outputs, int max_outputs, void *user_data)
{
    (void)ninputs;
    (void)max_outputs;
    outputs[0] = tw_model_call(user_data, inputs[0], false);
    return outputs[0] ? 1 : -1;
}

/* The model with its weights: restored from the checkpoint, or freshly
 * initialised (seed 0) without one. */
static int prepare(tw_model *model, const trace_options *o, tw_shape *input)
{
    const tw_shape *declared = tw_model_input_shape(model);
    if (!declared)
        return tw_error_set("%s: the model declares no input shape (an InputLayer or batch_input_shape on its first "
                            "layer); a graph needs one",
                            o->model_path);
    *input = *declared;
    input->dims[0] = o->batch;
    for (int i = 1; i < input->ndim; i++)
        if (input->dims[i] < 1)
            return tw_error_set("%s: the input shape's dimension %d is unknown; a graph needs every size", o->model_path,
                                i);
    if (o->checkpoint && tw_checkpoint_restore(o->checkpoint, model, NULL) < 0)
        return -1;
    return tw_layer_built(model) ? 0 : tw_model_build(model, NULL, 0);
}

static int trace_and_save(tw_model *model, const trace_options *o, const tw_shape *input)
{
    tw_function *f = tw_function_new(tw_layer_name(model), forward, model);
    tw_scope_begin();
    tw_tensor *x = f ? tw_zeros(TW_FLOAT32, input->ndim, input->dims) : NULL;
    const tw_graph *g = x ? tw_function_get_graph(f, 1, &x) : NULL;
    int rc = g ? tw_graph_save(o->output, g) : -1;
    if (rc == 0) {
        char in[160], out[160];
        const int64_t *shape;
        int output_node = tw_graph_output(g, 0, NULL);
        int ndim = tw_graph_node_output_shape(g, output_node, 0, &shape);
        printf("%s: traced '%s' for input float32 %s: %d nodes, output %s %s\n", o->output, tw_graph_function_name(g),
               tw_shape_str(input->ndim, input->dims, in, sizeof in), tw_graph_node_count(g),
               tw_dtype_name(tw_graph_node_output_dtype(g, output_node, 0)), tw_shape_str(ndim, shape, out, sizeof out));
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
    tw_shape input;
    rc = model && prepare(model, &o, &input) == 0 ? trace_and_save(model, &o, &input) : -1;
    if (rc)
        fprintf(stderr, "twb trace: %s\n", tw_last_error());
    tw_layer_unref(model);
    return rc ? 1 : 0;
}
