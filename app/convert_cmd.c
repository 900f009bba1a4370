/* twb convert IN OUT [--weights FILE]: opens IN with the one loader
 * (tw_model_open: JSON, .keras, .h5 or a checkpoint), puts the weights of
 * FILE into it when given (a save_weights .h5, say), and writes OUT in the
 * format its extension names. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <tw/engine.h>
#include <tw/keras_file.h>

#include "convert_cmd.h"

__attribute__((format(printf, 1, 2))) static int usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("twb: convert: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'twb convert --help'.\n", stderr);
    return 2;
}

static const char help[] =
    "Usage: twb convert IN OUT [--weights FILE]\n"
    "Convert a model file: IN is Keras JSON, a Keras 3 .keras archive, a Keras 2 .h5\n"
    "file or a twb safetensors checkpoint (told apart by their contents); OUT's\n"
    "extension names the format written: .json (architecture only), .keras, .h5 or\n"
    ".safetensors (weights included). --weights puts a weight file into the model\n"
    "first: a Keras save_weights .h5, a .weights.h5, a .keras or a checkpoint.\n"
    "A model that comes without weights is written with freshly initialised ones.\n";

int twb_convert_command(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL}, *weights = NULL;
    int npaths = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(help, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--weights")) {
            if (i + 1 >= argc)
                return usage("--weights needs a file");
            weights = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return usage("unknown option '%s'", argv[i]);
        } else if (npaths == 2) {
            return usage("unexpected '%s': name one input and one output file", argv[i]);
        } else {
            paths[npaths++] = argv[i];
        }
    }
    if (npaths < 2)
        return usage(npaths ? "name the output file (its extension: .json, .keras, .h5 or .safetensors)"
                            : "name an input and an output model file");
    tw_model_format format = tw_model_format_for_path(paths[1]);
    if (format == TW_MODEL_FORMAT_AUTO)
        return usage("%s", tw_last_error());
    tw_model *model = tw_model_open(paths[0]);
    bool had_weights = model && tw_model_open_had_weights();
    int rc = model ? 0 : -1;
    bool fresh = !rc && !had_weights && !weights && !tw_layer_built(model) && format != TW_MODEL_FORMAT_JSON;
    /* Weights are placed by the input shape the model declares: a model
     * without one is the input file's fault, not the weight or output file's. */
    if (!rc && (weights || format != TW_MODEL_FORMAT_JSON))
        rc = tw_model_build_declared(model, paths[0]);
    if (!rc && weights) {
        rc = tw_model_load_weights(model, weights);
        had_weights = true;
    }
    if (!rc)
        rc = tw_model_write(model, paths[1], format);
    if (rc) {
        fprintf(stderr, "twb convert: %s\n", tw_last_error());
    } else {
        int64_t total = 0;
        /* After a Lambda of unknown shape a count may be unknown: no number. */
        char count[64] = "parameters not all known (after a shape that is unknown)";
        if (!tw_model_count_params(model, &total, NULL, NULL))
            snprintf(count, sizeof count, "%lld parameters", (long long)total);
        tw_error_clear();
        printf("%s: %s, %s%s\n", paths[1], tw_model_format_name(format), count,
               fresh ? " (freshly initialised: the input has no weights)"
                     : format == TW_MODEL_FORMAT_JSON && had_weights ? " (architecture only: the weights are not written)"
                                                                     : "");
    }
    tw_layer_unref(model);
    return rc ? 1 : 0;
}
