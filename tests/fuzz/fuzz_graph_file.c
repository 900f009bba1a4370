/* libFuzzer target for graph files (tw/graph_file.h): tw_graph_load on the
 * fuzzer's bytes as a file (a safetensors file whose metadata holds the
 * graph's JSON and whose tensors are its constants and variables). A graph
 * that loads must save and load again. Built into
 * build-fuzz/tests/fuzz/fuzz_graph_file (make fuzz) and, renamed, into the
 * fuzz_replay test that runs tests/fuzz/corpus/graph_file/ on every build. */
#include <glib.h>

#include "fuzz_check.h"
#include "tw/graph_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_as_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    tw_graph *g = tw_graph_load(path);
    close(fd);
    if (!g) {
        fuzz_check_failure(path);
        return 0;
    }
    char *dir = g_dir_make_tmp("twb-fuzz-graph-XXXXXX", NULL);
    FUZZ_ASSERT(dir);
    char *saved = g_build_filename(dir, "g.twg", NULL);
    FUZZ_ASSERT(tw_graph_save(saved, g) == 0);
    tw_graph *again = tw_graph_load(saved);
    FUZZ_ASSERT(again && tw_graph_node_count(again) == tw_graph_node_count(g));
    tw_graph_unref(again);
    tw_graph_unref(g);
    remove(saved);
    remove(dir);
    g_free(saved);
    g_free(dir);
    return 0;
}
