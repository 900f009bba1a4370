/* twb summary MODEL.json: loads a Keras Sequential model file and prints
 * the table Keras' model.summary() prints (layers, output shapes,
 * parameter counts). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tw/engine.h>
#include <tw/keras_file.h>

#include "summary_cmd.h"

__attribute__((format(printf, 1, 2))) static int usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("twb: summary: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'twb --help'.\n", stderr);
    return 2;
}

int twb_summary_command(int argc, char **argv)
{
    if (argc == 1 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
        puts("Usage: twb summary MODEL\n"
             "Print a Keras model file's layers, output shapes and parameter counts; MODEL is Keras JSON,\n"
             "a Keras 3 .keras archive or a Keras 2 .h5 file.");
        return 0;
    }
    if (argc == 0)
        return usage("name a Keras model file (MODEL.json)");
    if (argv[0][0] == '-' && argv[0][1])
        return usage("unknown option '%s'", argv[0]);
    if (argc > 1)
        return usage("one model file at a time; unexpected '%s'", argv[1]);

    tw_model *model = tw_model_open(argv[0]);
    if (!model) {
        fprintf(stderr, "twb: summary: %s\n", tw_last_error());
        return 1;
    }
    char *text = tw_model_summary(model, 0);
    if (!text) {
        /* The message starts with "summary: " already. */
        fprintf(stderr, "twb: %s: %s\n", argv[0], tw_last_error());
        tw_layer_unref(model);
        return 1;
    }
    tw_layer_unref(model);
    fputs(text, stdout);
    free(text);
    return 0;
}
