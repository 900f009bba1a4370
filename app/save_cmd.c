/* twb save IN.json OUT.json [--format keras2|keras3]: reads a Keras model
 * file (Sequential or Functional, any form the reader takes) and writes it
 * atomically in the form asked for: Keras 2's (the default) or Keras 3's
 * (module, registered_name, __keras_tensor__ inbound nodes). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <tw/engine.h>
#include <tw/model_file.h>

#include "save_cmd.h"

__attribute__((format(printf, 1, 2))) static int usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("twb: save: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'twb --help'.\n", stderr);
    return 2;
}

int twb_save_command(int argc, char **argv)
{
    if (argc == 1 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
        puts("Usage: twb save IN.json OUT.json [--format keras2|keras3]\n"
             "Write a Keras model file again in Keras 2's JSON form (the default) or Keras 3's.");
        return 0;
    }
    const char *files[2] = {NULL, NULL};
    int nfiles = 0;
    tw_keras_json_format format = TW_KERAS_JSON_2;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--format")) {
            if (i + 1 == argc)
                return usage("--format needs keras2 or keras3");
            const char *f = argv[++i];
            if (!strcmp(f, "keras2"))
                format = TW_KERAS_JSON_2;
            else if (!strcmp(f, "keras3"))
                format = TW_KERAS_JSON_3;
            else
                return usage("--format takes keras2 or keras3, got '%s'", f);
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return usage("unknown option '%s'", argv[i]);
        } else if (nfiles == 2) {
            return usage("one input and one output file; unexpected '%s'", argv[i]);
        } else {
            files[nfiles++] = argv[i];
        }
    }
    if (nfiles < 2)
        return usage("name the model file to read and the file to write (IN.json OUT.json)");
    tw_model *model = tw_model_load(files[0]);
    if (!model) {
        fprintf(stderr, "twb: save: %s\n", tw_last_error());
        return 1;
    }
    int rc = tw_model_save_format(model, files[1], format);
    if (rc)
        fprintf(stderr, "twb: save: %s\n", tw_last_error());
    tw_layer_unref(model);
    return rc ? 1 : 0;
}
