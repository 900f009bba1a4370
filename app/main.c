/* twb — Tensor Workbench's command line: argument parsing and dispatch.
 *
 * Exit status: 0 on success, 1 when a command fails, 2 for a command line
 * twb does not understand. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include <tw/engine.h>
#include <tw/keras_file.h>

#include "application.h"
#include "convert_cmd.h"
#include "data_inspect.h"
#include "example_linear.h"
#include "import_tb_cmd.h"
#include "run_graph_cmd.h"
#include "runs_cmd.h"
#include "sweep_cmd.h"
#include "screenshot_cmd.h"
#include "save_cmd.h"
#include "summary_cmd.h"
#include "trace_cmd.h"
#include "train_cmd.h"

#ifndef TWB_VERSION
#define TWB_VERSION "0.1.0"
#endif

enum { EXIT_USAGE = 2 };

static void print_help(FILE *out);

/* The commands whose parsers print no usage of their own (runs, summary,
 * convert, save, trace, import-tensorboard and run-graph do, more fully):
 * for these `twb COMMAND --help` is the command's entry of twb --help. */
static bool help_from_entry(const char *command)
{
    static const char *const commands[] = {"train", "evaluate", "predict", "sweep", "data", "example"};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(command, commands[i]))
            return true;
    return false;
}

/* `twb COMMAND --help` (or -h): the command's own lines of the help. */
static bool asks_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return true;
    return false;
}

/* The help's entry for command (from its "  COMMAND ..." line to the next
 * command's), on stdout; false when the help has none. */
static bool print_command_help(const char *command)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (!out)
        return false;
    print_help(out);
    fclose(out);
    char *start = NULL;
    size_t n = strlen(command);
    for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        bool entry = line[0] == ' ' && line[1] == ' ' && line[2] != ' ';
        if (start && entry) {
            *line = '\0';
            break;
        }
        if (!start && entry && !strncmp(line + 2, command, n) && line[2 + n] == ' ')
            start = line;
    }
    if (start)
        printf("Usage: twb %s", start + 2);
    free(text);
    return start != NULL;
}

static void print_help(FILE *out)
{
    fputs("Usage: twb [COMMAND [OPTIONS]]\n"
          "       twb [--logdb FILE] [MODEL.json|.keras|.h5...]\n"
          "       twb --logdir DIR\n"
          "\n"
          "Tensor Workbench: design, train and inspect deep-learning models.\n"
          "Without a command, or with model files, twb opens the workbench window\n"
          "(one per file; it needs a display); --logdb FILE gives it that run\n"
          "database for its Dashboard and training panel; --logdir DIR shows a\n"
          "TensorBoard log directory's runs in the Dashboard, following them live.\n"
          "\n"
          "Commands:\n"
          "  example linear-regression [--steps N]\n"
          "                   fit y = 3x + 2 by gradient descent on a gradient tape\n"
          "                   (TensorFlow 2's eager tutorial); prints progress every\n"
          "                   20 steps; N defaults to 200\n"
          "  data inspect FILE [--labels FILE] [--label-column NAME]\n"
          "                   describe a data file before training on it: format,\n"
          "                   examples, shapes and dtypes, value range, label counts;\n"
          "                   FILE is IDX (raw or .gz), NPY or CSV; --labels pairs an\n"
          "                   IDX/NPY labels file, --label-column names a CSV column\n"
          "  data inspect fashion-mnist[:train|:test]\n"
          "                   the same for Fashion-MNIST by name (both splits when\n"
          "                   none is named)\n"
          "  train MODEL.json --data fashion-mnist|spirals|blobs|linear|FILE\n"
          "        [--data FILE ...] [--labels FILE] [--label-column NAME]\n"
          "        [--epochs N] [--batch-size B]\n"
          "        [--optimizer sgd|adam|adamw|rmsprop|adagrad] [--learning-rate LR]\n"
          "        [--loss NAME] [--seed S] [--validation-split F]\n"
          "        [--checkpoint-dir DIR [--resume]] [--json]\n"
          "        [--logdb FILE [--run NAME] [--log-every N] [--histogram-every N]]\n"
          "        [--trace] [--tfevents DIR] [--device cpu|cuda[:N]] [--weights FILE]\n"
          "                   train a Keras model file (Sequential or Functional);\n"
          "                   a model of several inputs takes --data once per\n"
          "                   input, in its input order, or a built-in set of\n"
          "                   two: fashion-mnist-pairs (the siamese template),\n"
          "                   reverse-sequences (the seq2seq template);\n"
          "                   --weights starts from a weight file: a Keras\n"
          "                   save_weights .h5, a .weights.h5, a .keras or a\n"
          "                   checkpoint;\n"
          "                   --device trains there (twb --version lists GPUs);\n"
          "                   Ctrl+C (or SIGTERM, SIGHUP) stops after the current\n"
          "                   step (and checkpoints when DIR is given);\n"
          "                   --json ends with one JSON object of the results;\n"
          "                   --logdb records the run in a run database: the model,\n"
          "                   settings, batch logs every N steps (10), weight and\n"
          "                   gradient histograms every N steps (100; 0: none), epoch\n"
          "                   logs and test metrics (NAME: the model's and the time);\n"
          "                   --trace runs each step as a traced graph (fails for a\n"
          "                   model that cannot be traced, such as one with Dropout)\n"
          "                   and with --logdb stores it as graph/train_step and the\n"
          "                   time of each node over 50 steps as profile/train_step;\n"
          "                   --tfevents also writes the run's logs (and settings as\n"
          "                   hparams) as a TensorBoard event file in DIR;\n"
          "                   under `mpirun -np N` (Open MPI) it trains data-parallel:\n"
          "                   B is each rank's batch, rank 0 writes the run and the\n"
          "                   checkpoints, --resume needs the same N, no --trace\n"
          "                   (docs/distributed.md)\n"
          "  sweep MODEL.json --data ... --logdb FILE [--learning-rate 1e-3,3e-3,1e-2]\n"
          "        [--batch-size 32,64] [--optimizer adam,sgd] [--epochs N,...]\n"
          "        [--seed S,...] [--trials N] [--random] [--sweep NAME]\n"
          "        [--metric test_loss|test_accuracy|...] [--median-stop]\n"
          "        [--validation-split F] [--loss NAME] [--labels FILE]\n"
          "        [--parallel N] [--set LAYER.PROPERTY=V,...]... [--device DEV]\n"
          "        [--checkpoint-dir DIR]\n"
          "                   train one trial after another, each a run NAME-K in\n"
          "                   the run database tagged with the sweep: the grid of\n"
          "                   every combination, or with --random N draws (a range\n"
          "                   MIN:MAX draws the learning rate log-uniform, whole\n"
          "                   numbers uniform); a line per trial, then a table sorted\n"
          "                   by the metric; a failed trial is recorded and the sweep\n"
          "                   goes on; --median-stop stops a trial whose best loss is\n"
          "                   worse than the median of the other trials' means;\n"
          "                   --parallel N trains N trials at once, each in a\n"
          "                   process of its own (twb sweep ... --run NAME-K);\n"
          "                   --set sweeps a numeric layer property (dense_1.units=\n"
          "                   32,64, a nested model's encoder/dense_1.units=8,16;\n"
          "                   recorded as a hyperparameter of each run; over a\n"
          "                   model file with weights, those whose shapes change\n"
          "                   start fresh, the others are kept);\n"
          "                   --device trains there; --checkpoint-dir DIR keeps each\n"
          "                   trial's checkpoint as DIR/RUN.safetensors\n"
          "  evaluate MODEL.json --checkpoint FILE|--weights FILE --data ... [--json]\n"
          "           [--logdb FILE --run NAME]\n"
          "                   loss and accuracy of trained weights on the test set\n"
          "                   (or the data when it has none); a .keras or .h5 model\n"
          "                   saved with its weights needs no --checkpoint; --weights\n"
          "                   as for train; --run stores a classifier's confusion\n"
          "                   matrix, per-class precision/recall/F1 and examples in\n"
          "                   that run\n"
          "  predict MODEL.json --checkpoint FILE|--weights FILE --data ... [--output FILE.npy]\n"
          "                   the model's outputs for the test set (or the data);\n"
          "                   --checkpoint as for evaluate\n"
          "  trace MODEL.json [--checkpoint FILE] --batch N --output FILE.twbgraph\n"
          "                   trace the model's forward pass for batches of N and\n"
          "                   write it with its weights as one graph file\n"
          "  run-graph FILE.twbgraph --input X.npy [--input ...] [--output Y.npy ...]\n"
          "                   run a graph file on NPY inputs without the model file;\n"
          "                   one NPY file per output, or print them\n"
          "  summary MODEL.json\n"
          "                   print a Keras model file's layers, output shapes and\n"
          "                   parameter counts, as Keras' model.summary()\n"
          "  convert IN OUT [--weights FILE]\n"
          "                   convert a model file between Keras JSON, .keras, .h5 and\n"
          "                   .safetensors (by OUT's extension), weights included;\n"
          "                   summary, train, evaluate, predict and trace read all of\n"
          "                   .json, .keras and .h5 models too\n"
          "  save IN.json OUT.json [--format keras2|keras3]\n"
          "                   write a model file again in Keras 2's JSON form or\n"
          "                   Keras 3's (Functional models' graphs)\n"
          "  runs list|show RUN|delete RUN|rename OLD NEW|notes RUN TEXT [--logdb FILE]\n"
          "                   the run database's runs (default file:\n"
          "                   $XDG_DATA_HOME/twb/runs.db)\n"
          "  runs export RUN --tag TAG --format csv|json [--logdb FILE]\n"
          "                   a scalar series as TensorBoard's CSV or JSON download\n"
          "  runs export RUN --format tfevents --output DIR [--logdb FILE]\n"
          "                   the whole run as a TensorBoard event file in DIR\n"
          "  import-tensorboard DIR [--logdb FILE]\n"
          "                   copy a TensorBoard log directory's runs (event files)\n"
          "                   into the run database\n"
          "  help             show this help\n"
          "\n"
          "Options:\n"
          "  -h, --help       show this help\n"
          "  -V, --version    show the version, the BLAS library in use and the GPUs\n"
          "  --screenshot FILE.png [--view designer|dashboard|graph] [--model FILE]\n"
          "        [--logdb FILE] [--size WxH]\n"
          "        [--tab scalars|histograms|distributions|images|text|hparams|\n"
          "        evaluation] [--select RUN,RUN...]\n"
          "                   write the window as it would appear at that size\n"
          "                   (default 1280x800) as a PNG, and exit; the dark style\n"
          "                   with GTK_THEME=Adwaita:dark; --select checks exactly\n"
          "                   those runs (their HParams rows selected, the charts\n"
          "                   drawing them) and shows the first one's evaluation\n",
          out);
}

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("twb: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'twb --help'.\n", stderr);
    return EXIT_USAGE;
}

static int print_version(void)
{
    printf("twb %s\n", TWB_VERSION);
    printf("engine %s, BLAS: %s\n", tw_version(), tw_blas_info());
    char line[256];
    int gpus = tw_device_count(TW_DEVICE_CUDA);
    if (gpus == 0) /* the plugin says why: not built, no driver, no GPU */
        printf("CUDA: none (%s)\n", tw_device_describe((tw_device){TW_DEVICE_CUDA, 0}, line, sizeof line));
    for (int i = 0; i < gpus; i++)
        printf("cuda:%d: %s\n", i, tw_device_describe((tw_device){TW_DEVICE_CUDA, i}, line, sizeof line));
    return 0;
}

/* A whole positive decimal number up to max; -1 otherwise. */
static long parse_count(const char *text, long max)
{
    char *end = NULL;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < 1 || value > max)
        return -1;
    return value;
}

static int run_linear_regression(twb_linear_options options)
{
    return twb_example_linear_run(&options, stdout, NULL) == 0 ? 0 : 1;
}

/* twb example linear-regression [--steps N] */
static int command_example(int argc, char **argv)
{
    if (argc < 1)
        return usage_error("example: name an example: linear-regression");
    if (strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0) {
        print_help(stdout);
        return 0;
    }
    if (strcmp(argv[0], "linear-regression") != 0)
        return usage_error("example: unknown example '%s' (there is: linear-regression)", argv[0]);

    twb_linear_options options = TWB_LINEAR_DEFAULTS;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = NULL;
        if (strcmp(arg, "--steps") == 0) {
            if (i + 1 >= argc)
                return usage_error("option '%s' needs a number of steps", arg);
            value = argv[++i];
        } else if (strncmp(arg, "--steps=", 8) == 0) {
            value = arg + 8;
        } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            print_help(stdout);
            return 0;
        } else if (arg[0] == '-') {
            return usage_error("example linear-regression: unknown option '%s'", arg);
        } else {
            return usage_error("example linear-regression: unexpected argument '%s'", arg);
        }
        long steps = parse_count(value, 100000000L);
        if (steps < 0)
            return usage_error("--steps: '%s' is not a number of steps from 1 to 100000000", value);
        options.steps = (int)steps;
    }
    return run_linear_regression(options);
}

/* twb data inspect FILE [--labels FILE] [--label-column NAME] */
static int command_data(int argc, char **argv)
{
    if (argc < 1)
        return usage_error("data: name a data command: inspect");
    if (strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0) {
        print_help(stdout);
        return 0;
    }
    if (strcmp(argv[0], "inspect") != 0)
        return usage_error("data: unknown command '%s' (there is: inspect)", argv[0]);

    twb_inspect_options options = {NULL, NULL, NULL};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char **target = NULL;
        const char *value = NULL, *name = NULL;
        if (strcmp(arg, "--labels") == 0 || strcmp(arg, "--label-column") == 0) {
            if (i + 1 >= argc)
                return usage_error("data inspect: option '%s' needs %s", arg,
                                   arg[7] == '\0' ? "a labels file" : "a column name");
            name = arg;
            value = argv[++i];
        } else if (strncmp(arg, "--labels=", 9) == 0) {
            name = "--labels";
            value = arg + 9;
        } else if (strncmp(arg, "--label-column=", 15) == 0) {
            name = "--label-column";
            value = arg + 15;
        } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            print_help(stdout);
            return 0;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return usage_error("data inspect: unknown option '%s'", arg);
        } else if (options.path) {
            return usage_error("data inspect: one file at a time ('%s' and '%s')", options.path, arg);
        } else {
            options.path = arg;
            continue;
        }
        target = strcmp(name, "--labels") == 0 ? &options.labels_path : &options.label_column;
        if (value[0] == '\0')
            return usage_error("data inspect: option '%s' needs a value", name);
        if (*target)
            return usage_error("data inspect: option '%s' given twice", name);
        *target = value;
    }
    if (!options.path)
        return usage_error("data inspect: name a file (IDX, NPY or CSV) or fashion-mnist[:train|:test]");

    char *message = NULL;
    int status = twb_data_inspect(&options, stdout, &message);
    if (status == TWB_INSPECT_USAGE) {
        int code = usage_error("%s", message);
        g_free(message);
        return code;
    }
    if (status != TWB_INSPECT_OK) {
        fprintf(stderr, "twb: data inspect: %s\n", tw_last_error());
        return 1;
    }
    return 0;
}

/* A model file the window opens (its Open dialog's filter): Keras JSON,
 * .keras or .h5, named in any case. */
static bool is_window_model(const char *arg)
{
    tw_model_format format = arg[0] == '-' ? TW_MODEL_FORMAT_AUTO : tw_model_format_for_path(arg);
    tw_error_clear(); /* a command name is no failure; only the answer is wanted */
    return format == TW_MODEL_FORMAT_JSON || format == TW_MODEL_FORMAT_KERAS || format == TW_MODEL_FORMAT_H5;
}

/* --screenshot anywhere among the options (`twb --logdb F --screenshot s.png`). */
static bool is_screenshot(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--screenshot") || !strncmp(argv[i], "--screenshot=", 13))
            return true;
    return false;
}

/* `twb [--logdb FILE] [--logdir DIR] [a.json b.keras]`: the window's command
 * line, which the application reads again (app/application.c). 0 when argv
 * is one; EXIT_USAGE after naming the argument that is wrong in it;
 * WINDOW_ASKS_HELP when --help follows window arguments; -1 when argv is
 * something else (a command, or a screenshot's options). */
#define WINDOW_ASKS_HELP (-2)
static int check_window_arguments(int argc, char **argv)
{
    bool logdb = false, logdir = false;
    for (int i = 0; i < argc; i++) {
        const char *value;
        if (!strcmp(argv[i], "--logdir") || !strncmp(argv[i], "--logdir=", 9)) {
            value = argv[i][8] == '=' ? argv[i] + 9 : i + 1 < argc ? argv[++i] : "";
            if (!value[0])
                return usage_error("option '--logdir' needs a TensorBoard log directory");
            if (logdir)
                return usage_error("option '--logdir' given twice");
            logdir = true;
            continue;
        }
        if (!strcmp(argv[i], "--logdb"))
            value = i + 1 < argc ? argv[++i] : "";
        else if (!strncmp(argv[i], "--logdb=", 8))
            value = argv[i] + 8;
        else if (is_window_model(argv[i]))
            continue;
        else if (i == 0 || is_screenshot(argc, argv))
            return -1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return WINDOW_ASKS_HELP;
        /* After a window argument, this one is what is wrong, not argv[0]. */
        else if (argv[i][0] == '-')
            return usage_error("unknown option '%s'", argv[i]);
        else
            return usage_error("'%s' is not a model file the window opens (.json, .keras or .h5)", argv[i]);
        if (!value[0])
            return usage_error("option '--logdb' needs a run database file");
        if (logdb)
            return usage_error("option '--logdb' given twice");
        logdb = true;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int window = check_window_arguments(argc - 1, argv + 1);
    if (window == WINDOW_ASKS_HELP) {
        print_help(stdout);
        return 0;
    }
    if (window >= 0)
        return window ? window : twb_application_main(argc, argv);

    const char *command = argv[1];
    if (strcmp(command, "-h") == 0 || strcmp(command, "--help") == 0 || strcmp(command, "help") == 0) {
        print_help(stdout);
        return 0;
    }
    if (strcmp(command, "-V") == 0 || strcmp(command, "--version") == 0)
        return print_version();
    if (help_from_entry(command) && asks_help(argc - 2, argv + 2) && print_command_help(command))
        return 0;
    if (command[0] == '-' && is_screenshot(argc - 1, argv + 1))
        return twb_screenshot_command(argc - 1, argv + 1);
    if (strcmp(command, "example") == 0)
        return command_example(argc - 2, argv + 2);
    if (strcmp(command, "data") == 0)
        return command_data(argc - 2, argv + 2);
    if (!strcmp(command, "train") || !strcmp(command, "evaluate") || !strcmp(command, "predict"))
        return twb_train_command(command, argc - 2, argv + 2);
    if (strcmp(command, "summary") == 0)
        return twb_summary_command(argc - 2, argv + 2);
    if (strcmp(command, "convert") == 0)
        return twb_convert_command(argc - 2, argv + 2);
    if (strcmp(command, "save") == 0)
        return twb_save_command(argc - 2, argv + 2);
    if (strcmp(command, "runs") == 0)
        return twb_runs_command(argc - 2, argv + 2);
    if (strcmp(command, "sweep") == 0)
        return twb_sweep_command(argc - 2, argv + 2);
    if (strcmp(command, "trace") == 0)
        return twb_trace_command(argc - 2, argv + 2);
    if (strcmp(command, "import-tensorboard") == 0)
        return twb_import_tb_command(argc - 2, argv + 2);
    if (strcmp(command, "run-graph") == 0)
        return twb_run_graph_command(argc - 2, argv + 2);
    if (command[0] == '-')
        return usage_error("unknown option '%s'", command);
    return usage_error("unknown command '%s'", command);
}
