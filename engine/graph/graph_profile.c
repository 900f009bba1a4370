/* Per-node time profiles of graphs (tw/function.h, docs/graph_json.md
 * "Profiles"): the switch, and the profile as JSON. The timing itself is in
 * the run (graph_run.c), which reads the switch once per run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

int tw_graph_profile_start(const tw_graph *graph)
{
    if (!graph)
        return tw_error_set("graph_profile_start: graph is NULL");
    tw_graph *g = (tw_graph *)graph; /* the profile is bookkeeping beside the graph, as its arena is */
    if (!g->profile) {
        tw_gprofile *p = calloc(1, sizeof *p);
        double *node_ns = calloc((size_t)(g->nnodes ? g->nnodes : 1), sizeof *node_ns);
        if (!p || !node_ns) {
            free(p);
            free(node_ns);
            return tw_error_set("graph_profile_start: function '%s': out of memory", g->function_name);
        }
        p->node_ns = node_ns;
        g->profile = p;
    }
    g->profile->runs = 0;
    memset(g->profile->node_ns, 0, sizeof *g->profile->node_ns * (size_t)g->nnodes);
    atomic_store(&g->profiling, true);
    return 0;
}

void tw_graph_profile_stop(const tw_graph *graph)
{
    if (graph)
        atomic_store(&((tw_graph *)graph)->profiling, false);
}

void tw__graph_profile_free(tw_graph *g)
{
    if (!g->profile)
        return;
    free(g->profile->node_ns);
    free(g->profile);
    g->profile = NULL;
}

static void put_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

/* One entry per node that computes (ops, cond, while), in node order. */
static void put_profile(FILE *out, const tw_graph *g)
{
    const tw_gprofile *p = g->profile;
    int64_t runs = p ? p->runs : 0;
    fprintf(out, "{\"format\": \"twb-graph-profile\", \"version\": 1, \"function\": ");
    put_string(out, g->function_name);
    fprintf(out, ", \"runs\": %lld, \"nodes\": [", (long long)runs);
    bool first = true;
    for (int id = 0; id < g->nnodes; id++) {
        const tw_gnode *n = &g->nodes[id];
        if (!tw__gnode_computes(n))
            continue;
        double total_us = p ? p->node_ns[id] / 1000 : 0;
        fprintf(out, "%s\n  {\"name\": ", first ? "" : ",");
        put_string(out, n->name);
        fprintf(out, ", \"op\": ");
        put_string(out, tw_graph_node_op(g, id));
        fprintf(out, ", \"total_us\": %.3f, \"mean_us\": %.3f}", total_us, runs ? total_us / (double)runs : 0.0);
        first = false;
    }
    fprintf(out, "]}\n");
}

char *tw_graph_profile_json(const tw_graph *g)
{
    if (!g) {
        tw_error_set("graph_profile_json: graph is NULL");
        return NULL;
    }
    char *json = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&json, &length);
    if (out) {
        put_profile(out, g);
        if (fclose(out) == 0)
            return json;
    }
    free(json);
    tw_error_set("graph_profile_json: function '%s': out of memory writing JSON", g->function_name);
    return NULL;
}
