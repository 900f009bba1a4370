/* The graph view's shape-only trace (tw_graph_trace_model) against the full
 * trace that runs every kernel (tw_graph_trace_model_with_values): the
 * same graph JSON, byte for byte (nodes, edges, shapes, attributes, scopes),
 * for every template of examples/models and every Keras JSON file of the
 * shared corpus (../../shared/corpus/keras and keras-functional; skipped
 * with a message when absent). A model the engine cannot load is listed,
 * not traced; one that cannot be traced must fail alike both ways. */
#include <glib.h>
#include <string.h>

#include "graph_model.h"
#include "tw/model_file.h"

/* Trace the model at path both ways; false when it does not load. */
static bool check_model(const char *path, GString *report)
{
    char *name = g_path_get_basename(path);
    tw_error_clear();
    tw_model *model = tw_model_load(path);
    if (!model) {
        g_string_append_printf(report, "\n  %s: not loaded: %s", name, tw_last_error());
        g_free(name);
        return false;
    }
    GError *full_error = NULL, *shapes_error = NULL;
    char *full = tw_graph_trace_model_with_values(model, &full_error);
    char *shapes = tw_graph_trace_model(model, &shapes_error);
    if (!full && !shapes) {
        g_assert_cmpstr(shapes_error->message, ==, full_error->message);
        g_string_append_printf(report, "\n  %s: not traced either way: %s", name, full_error->message);
    } else if (!full || !shapes) {
        g_error("%s: the full trace %s; the shape-only trace %s", name, full ? "traced" : full_error->message,
                shapes ? "traced" : shapes_error->message);
    } else if (strcmp(full, shapes) != 0) {
        size_t at = 0;
        while (full[at] == shapes[at])
            at++;
        size_t from = at > 200 ? at - 200 : 0;
        g_error("%s: the shape-only graph differs from the full trace's at byte %zu:\n  full:       ...%.400s\n  "
                "shape-only: ...%.400s",
                name, at, full + from, shapes + from);
    }
    g_clear_error(&full_error);
    g_clear_error(&shapes_error);
    g_free(full);
    g_free(shapes);
    tw_layer_unref(model);
    g_free(name);
    return true;
}

static gint by_path(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.json of dir, sorted; NULL when dir cannot be read. */
static GPtrArray *json_files(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    if (!d)
        return NULL;
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    for (const char *n; (n = g_dir_read_name(d));)
        if (g_str_has_suffix(n, ".json"))
            g_ptr_array_add(files, g_build_filename(dir, n, NULL));
    g_dir_close(d);
    g_ptr_array_sort(files, by_path);
    return files;
}

static void test_templates(void)
{
    char *dir = g_test_build_filename(G_TEST_DIST, "..", "examples", "models", NULL);
    GPtrArray *files = json_files(dir);
    g_assert_nonnull(files);
    g_assert_cmpuint(files->len, >=, 8);
    GString *report = g_string_new(NULL);
    for (guint i = 0; i < files->len; i++)
        if (!check_model(files->pdata[i], report))
            g_error("template %s does not load: %s", (char *)files->pdata[i], report->str);
    g_string_free(report, TRUE);
    g_ptr_array_unref(files);
    g_free(dir);
}

static void test_corpus(gconstpointer kind)
{
    char *dir = g_test_build_filename(G_TEST_DIST, "..", "..", "shared", "corpus", kind, NULL);
    GPtrArray *files = json_files(dir);
    if (!files) {
        char *why = g_strdup_printf("the shared corpus (%s) is not here", (const char *)kind);
        g_test_skip(why);
        g_free(why);
        g_free(dir);
        return;
    }
    GString *report = g_string_new(NULL);
    guint traced = 0;
    for (guint i = 0; i < files->len; i++)
        traced += check_model(files->pdata[i], report);
    g_test_message("%s: %u of %u files loaded and compared%s", (const char *)kind, traced, files->len,
                   report->len ? "; the others:" : "");
    if (report->len)
        g_test_message("%s", report->str);
    g_assert_cmpuint(traced, >, 0);
    g_string_free(report, TRUE);
    g_ptr_array_unref(files);
    g_free(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/graph_trace_shapes/templates", test_templates);
    g_test_add_data_func("/graph_trace_shapes/corpus-keras", "keras", test_corpus);
    g_test_add_data_func("/graph_trace_shapes/corpus-keras-functional", "keras-functional", test_corpus);
    return g_test_run();
}
