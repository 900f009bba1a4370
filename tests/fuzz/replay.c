/* Runs saved inputs through the fuzz targets without libFuzzer: every
 * input that ever crashed a parser stays in tests/fuzz/corpus/<target>/ and
 * this program, the 'fuzz_replay' test, feeds them all to the same target
 * functions on every `meson test` (and under ASan and valgrind in `make
 * test`). A crash, a sanitizer report or a broken invariant fails it.
 *
 *   fuzz_replay CORPUS_DIR            every <target>/ folder in it
 *   fuzz_replay TARGET PATH...        files, or folders of files, for one target
 *
 * The targets are the fuzz_<target>.c files, compiled once more with their
 * LLVMFuzzerTestOneInput renamed to tw_fuzz_<target>. */
#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int tw_fuzz_idx(const uint8_t *data, size_t size);
int tw_fuzz_npy(const uint8_t *data, size_t size);
int tw_fuzz_csv(const uint8_t *data, size_t size);
int tw_fuzz_safetensors(const uint8_t *data, size_t size);
int tw_fuzz_model_json(const uint8_t *data, size_t size);
int tw_fuzz_graph_json(const uint8_t *data, size_t size);
int tw_fuzz_graph_file(const uint8_t *data, size_t size);
int tw_fuzz_run_store(const uint8_t *data, size_t size);
int tw_fuzz_keras_archive(const uint8_t *data, size_t size);
int tw_fuzz_keras_h5(const uint8_t *data, size_t size);
int tw_fuzz_keras_functional(const uint8_t *data, size_t size);
int tw_fuzz_tfrecord(const uint8_t *data, size_t size);
int tw_fuzz_tb_event(const uint8_t *data, size_t size);
int tw_fuzz_graph_view(const uint8_t *data, size_t size);
int tw_fuzz_designer_doc(const uint8_t *data, size_t size);
int tw_fuzz_sweep_spec(const uint8_t *data, size_t size);
int tw_fuzz_hparams_json(const uint8_t *data, size_t size);
int tw_fuzz_markdown(const uint8_t *data, size_t size);
int tw_fuzz_graph_def(const uint8_t *data, size_t size);
int tw_fuzz_graph_def_read(const uint8_t *data, size_t size);

static const struct {
    const char *name;
    int (*run)(const uint8_t *data, size_t size);
} targets[] = {{"idx", tw_fuzz_idx}, {"npy", tw_fuzz_npy}, {"csv", tw_fuzz_csv},
               {"safetensors", tw_fuzz_safetensors}, {"model_json", tw_fuzz_model_json},
               {"graph_json", tw_fuzz_graph_json}, {"graph_file", tw_fuzz_graph_file},
               {"run_store", tw_fuzz_run_store},
               {"keras_archive", tw_fuzz_keras_archive}, {"keras_h5", tw_fuzz_keras_h5},
               {"keras_functional", tw_fuzz_keras_functional},
               {"tfrecord", tw_fuzz_tfrecord}, {"tb_event", tw_fuzz_tb_event},
               {"graph_view", tw_fuzz_graph_view},
               {"designer_doc", tw_fuzz_designer_doc},
               {"sweep_spec", tw_fuzz_sweep_spec},
               {"hparams_json", tw_fuzz_hparams_json},
               {"markdown", tw_fuzz_markdown},
               {"graph_def", tw_fuzz_graph_def},
               {"graph_def_read", tw_fuzz_graph_def_read}};

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_file(int target, const char *path)
{
    char *data;
    gsize size;
    GError *err = NULL;
    if (!g_file_get_contents(path, &data, &size, &err)) {
        fprintf(stderr, "fuzz_replay: %s\n", err->message);
        g_error_free(err);
        return -1;
    }
    /* A copy of exactly `size` bytes, so ASan sees reads past the end. */
    uint8_t *exact = g_memdup2(data, size);
    g_free(data);
    targets[target].run(exact, size);
    g_free(exact);
    return 0;
}

/* A file, or every file in a folder (sorted, so runs repeat). Returns the
 * number of inputs run, or -1. */
static int run_path(int target, const char *path)
{
    if (!g_file_test(path, G_FILE_TEST_IS_DIR))
        return run_file(target, path) < 0 ? -1 : 1;
    GError *err = NULL;
    GDir *dir = g_dir_open(path, 0, &err);
    if (!dir) {
        fprintf(stderr, "fuzz_replay: %s\n", err->message);
        g_error_free(err);
        return -1;
    }
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    for (const char *name; (name = g_dir_read_name(dir));)
        if (name[0] != '.')
            g_ptr_array_add(names, g_strdup(name));
    g_dir_close(dir);
    g_ptr_array_sort(names, compare_names);
    int count = 0;
    for (guint i = 0; i < names->len && count >= 0; i++) {
        char *file = g_build_filename(path, names->pdata[i], NULL);
        if (g_file_test(file, G_FILE_TEST_IS_REGULAR))
            count = run_file(target, file) < 0 ? -1 : count + 1;
        g_free(file);
    }
    g_ptr_array_free(names, TRUE);
    return count;
}

static int find_target(const char *name)
{
    for (int i = 0; i < (int)G_N_ELEMENTS(targets); i++)
        if (strcmp(targets[i].name, name) == 0)
            return i;
    return -1;
}

int main(int argc, char **argv)
{
    if (argc == 2) {
        int total = 0;
        for (int t = 0; t < (int)G_N_ELEMENTS(targets); t++) {
            char *dir = g_build_filename(argv[1], targets[t].name, NULL);
            int n = run_path(t, dir);
            g_free(dir);
            if (n < 0)
                return 1;
            if (n == 0) {
                fprintf(stderr, "fuzz_replay: no inputs in %s/%s\n", argv[1], targets[t].name);
                return 1;
            }
            printf("%s: %d inputs replayed\n", targets[t].name, n);
            total += n;
        }
        printf("all %d inputs replayed without a failure\n", total);
        return 0;
    }
    int target = argc >= 3 ? find_target(argv[1]) : -1;
    if (target < 0) {
        fprintf(stderr, "usage: fuzz_replay CORPUS_DIR | fuzz_replay "
                        "idx|npy|csv|safetensors|model_json|graph_json|graph_file|run_store|tfrecord|tb_event PATH...\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        int n = run_path(target, argv[i]);
        if (n < 0)
            return 1;
        printf("%s: %d inputs from %s replayed\n", targets[target].name, n, argv[i]);
    }
    return 0;
}
