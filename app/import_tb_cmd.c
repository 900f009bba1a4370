/* twb import-tensorboard: tw_tb_import (tw/tfevents.h) with its warnings
 * on stderr and a summary of what was read and stored on stdout. */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include <tw/engine.h>
#include <tw/tfevents.h>

#include "import_tb_cmd.h"

static void usage(FILE *out)
{
    fputs("Usage: twb import-tensorboard DIR [--logdb FILE]\n"
          "\n"
          "Copy every run of a TensorBoard log directory (each folder under DIR holding\n"
          "events.out.tfevents.* files, named by its path relative to DIR) into the run\n"
          "database (default: $XDG_DATA_HOME/twb/runs.db; --logdb names another file).\n"
          "Scalars, histograms, images, text, hparams, graphs (each GraphDef as the\n"
          "run's graph_def series, drawn by the Graph view) and tensors of numbers\n"
          "(evaluation tables) are stored, and each run's final metrics (the last\n"
          "values of the hparams experiment's metrics, or of every scalar); meta graphs,\n"
          "audio and other plugins' values are counted but not read.\n",
          out);
}

static void print_warning(void *user_data, const char *message)
{
    (void)user_data;
    fprintf(stderr, "twb import-tensorboard: warning: %s\n", message);
}

int twb_import_tb_command(int argc, char **argv)
{
    const char *dir = NULL, *logdb = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--logdb")) {
            if (++i == argc) {
                fputs("twb import-tensorboard: --logdb needs a file\n", stderr);
                return 2;
            }
            logdb = argv[i];
        } else if (argv[i][0] == '-' || dir) {
            fprintf(stderr, "twb import-tensorboard: unexpected '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else {
            dir = argv[i];
        }
    }
    if (!dir) {
        usage(stderr);
        return 2;
    }
    tw_tb_import_stats s;
    gint64 start = g_get_monotonic_time();
    int rc = tw_tb_import(dir, logdb, print_warning, NULL, &s);
    double seconds = (double)(g_get_monotonic_time() - start) / 1e6;
    if (rc) {
        fprintf(stderr, "twb import-tensorboard: %s\n", tw_last_error());
        return 1;
    }
    printf("Imported %lld runs (%lld files, %lld records) in %.2f s: %lld scalar points, %lld histograms, "
           "%lld images, %lld texts, %lld hparams records, %lld graphs, %lld tensors.\n",
           (long long)s.runs, (long long)s.files, (long long)s.records, seconds, (long long)s.scalars,
           (long long)s.histograms, (long long)s.images, (long long)s.texts, (long long)s.hparams,
           (long long)s.graphs, (long long)s.tensors);
    if (s.other)
        printf("Not read: %lld values of other kinds (meta graphs, audio, other plugins).\n", (long long)s.other);
    if (s.warnings)
        printf("%lld warnings (above).\n", (long long)s.warnings);
    if (s.refused_runs)
        printf("%lld runs not imported: their names are already in the database (above).\n",
               (long long)s.refused_runs);
    return s.refused_runs ? 1 : 0;
}
