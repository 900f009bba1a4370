/* Graph files (tw/graph_file.h): the graph's JSON in a safetensors file's
 * metadata, its constants and variables as the file's tensors. */
#include <stdlib.h>
#include <string.h>

#include <tw/checkpoint.h>
#include <tw/graph_file.h>

int tw_graph_save(const char *path, const tw_graph *g)
{
    if (!path || !g)
        return tw_error_set("graph_save: %s is NULL", path ? "the graph" : "the path");
    int count = tw_graph_node_count(g), n = 0;
    const char **names = calloc((size_t)count + 1, sizeof *names);
    tw_tensor **tensors = calloc((size_t)count + 1, sizeof *tensors);
    char *json = names && tensors ? tw_graph_json(g) : NULL;
    int rc = json ? 0 : tw_error_set("%s: out of memory writing the graph", path);
    for (int id = 0; id < count && rc == 0; id++) {
        tw_node_kind kind = tw_graph_node_kind(g, id);
        if (kind != TW_NODE_CONSTANT && kind != TW_NODE_VARIABLE)
            continue;
        names[n] = tw_graph_node_name(g, id);
        tensors[n++] = (tw_tensor *)tw_graph_node_tensor(g, id); /* only read */
    }
    const char *keys[] = {"format", "version", "graph"};
    const char *values[] = {TW_GRAPH_FILE_FORMAT, "1", json};
    if (rc == 0)
        rc = tw_safetensors_write(path, n, names, tensors, 3, keys, values);
    free(json);
    free(names);
    free(tensors);
    return rc;
}

static tw_tensor *file_tensor(const char *node_name, tw_node_kind kind, void *user_data)
{
    (void)kind;
    tw_safetensors *st = user_data;
    if (!tw_safetensors_has(st, node_name)) {
        tw_error_set("the file has no tensor named '%s'", node_name);
        return NULL;
    }
    return tw_safetensors_get(st, node_name);
}

tw_graph *tw_graph_load(const char *path)
{
    if (!path) {
        tw_error_set("graph_load: the path is NULL");
        return NULL;
    }
    tw_safetensors *st = tw_safetensors_open(path);
    if (!st)
        return NULL;
    const char *format = tw_safetensors_metadata(st, "format");
    const char *version = tw_safetensors_metadata(st, "version");
    const char *json = tw_safetensors_metadata(st, "graph");
    tw_graph *g = NULL;
    if (!format || strcmp(format, TW_GRAPH_FILE_FORMAT) != 0)
        tw_error_set("%s: not a graph file (its metadata's format is %s%s%s; a graph file's is \"%s\")", path,
                     format ? "\"" : "", format ? format : "missing", format ? "\"" : "", TW_GRAPH_FILE_FORMAT);
    else if (!version || strcmp(version, "1") != 0)
        tw_error_set("%s: graph file version %s; this twb reads version 1", path, version ? version : "missing");
    else if (!json)
        tw_error_set("%s: the metadata has no \"graph\"", path);
    else if (!(g = tw_graph_from_json(json, file_tensor, st)))
        tw_error_set("%s: %s", path, tw_last_error());
    tw_safetensors_close(st);
    return g;
}
