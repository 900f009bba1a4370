/* The layer graph of a model (see graph_layers.h). A Functional model's
 * calls are written once their inputs are (ids only grow along edges, as
 * graph JSON requires); a Sequential model is its chain. The batch axis
 * is written as 1, which the caller marks as None
 * (tw_graph_model_mark_batch). */
#include "graph_layers.h"

#include <json-glib/json-glib.h>
#include <string.h>
#include <tw/error.h>

#define LAYERS_ERROR g_quark_from_static_string("tw-graph-layers")

static void add_shape(JsonBuilder *b, const tw_shape *shape)
{
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "dtype"); /* none claimed: "" is not shown */
    json_builder_add_string_value(b, "");
    json_builder_set_member_name(b, "shape");
    if (!tw_shape_known(shape)) {
        json_builder_add_null_value(b); /* "?" in the view */
    } else {
        json_builder_begin_array(b);
        for (int d = 0; d < shape->ndim; d++)
            json_builder_add_int_value(b, d == 0 && shape->dims[d] < 0 ? 1 : shape->dims[d]);
        json_builder_end_array(b);
    }
    json_builder_end_object(b);
}

/* One node: an InputLayer is graph JSON's "input", any other layer is its
 * class; inputs are [id, output] pairs. */
static void add_node(JsonBuilder *b, int id, const tw_layer *layer, int node_index, const int (*inputs)[2],
                     int ninputs, const tw_shape *outputs, int noutputs)
{
    const char *klass = tw_layer_class_shown(layer);
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "id");
    json_builder_add_int_value(b, id);
    json_builder_set_member_name(b, "op");
    json_builder_add_string_value(b, ninputs ? klass : "input");
    /* A shared layer's later calls as Keras names them in summaries. */
    char *name = node_index ? g_strdup_printf("%s[%d]", tw_layer_name(layer), node_index)
                            : g_strdup(tw_layer_name(layer));
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, name);
    g_free(name);
    json_builder_set_member_name(b, "scope");
    json_builder_add_string_value(b, "");
    json_builder_set_member_name(b, "inputs");
    json_builder_begin_array(b);
    for (int k = 0; k < ninputs; k++) {
        json_builder_begin_array(b);
        json_builder_add_int_value(b, inputs[k][0]);
        json_builder_add_int_value(b, inputs[k][1]);
        json_builder_end_array(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "outputs");
    json_builder_begin_array(b);
    for (int k = 0; k < noutputs; k++)
        add_shape(b, &outputs[k]);
    json_builder_end_array(b);
    if (tw_layer_check_runnable(layer)) {
        json_builder_set_member_name(b, "cannot_run");
        json_builder_add_string_value(b, tw_last_error());
        tw_error_clear();
    }
    json_builder_end_object(b);
}

static void add_pair(JsonBuilder *b, int id, int output)
{
    json_builder_begin_array(b);
    json_builder_add_int_value(b, id);
    json_builder_add_int_value(b, output);
    json_builder_end_array(b);
}

/* Every call, each after its inputs; returns the ids of the model's
 * outputs in outputs. */
static void add_functional(JsonBuilder *b, const tw_model *model, int (*outputs)[2])
{
    int n = tw_model_nlayers(model), total = 0;
    int *first = g_new(int, n + 1); /* ids of layer i's calls: ids[first[i] + node] */
    for (int i = 0; i < n; i++) {
        first[i] = total;
        total += tw_functional_layer_ncalls(model, i);
    }
    first[n] = total;
    int *ids = g_new(int, MAX(total, 1));
    for (int i = 0; i < total; i++)
        ids[i] = -1;
    int next = 0;
    for (bool progress = true; progress && next < total;) {
        progress = false;
        for (int i = 0; i < n; i++)
            for (int node = 0; node < first[i + 1] - first[i]; node++) {
                if (ids[first[i] + node] >= 0)
                    continue;
                tw_keras_history in[TW_MAX_LAYER_IO];
                int nin = tw_functional_call_inputs(model, i, node, in), pairs[TW_MAX_LAYER_IO][2];
                bool ready = true;
                for (int k = 0; k < nin && ready; k++) {
                    pairs[k][0] = ids[first[in[k].layer] + in[k].node_index];
                    pairs[k][1] = in[k].tensor_index;
                    ready = pairs[k][0] >= 0;
                }
                if (!ready)
                    continue;
                tw_shape out[TW_MAX_LAYER_IO];
                int nout = tw_functional_call_outputs(model, i, node, out);
                add_node(b, next, tw_model_layer_at(model, i), node, (const int(*)[2])pairs, nin, out, nout);
                ids[first[i] + node] = next++;
                progress = true;
            }
    }
    for (int k = 0; k < tw_model_noutputs(model); k++) {
        tw_keras_history h;
        tw_functional_output(model, k, &h);
        outputs[k][0] = ids[first[h.layer] + h.node_index];
        outputs[k][1] = h.tensor_index;
    }
    g_free(ids);
    g_free(first);
}

/* The chain: the model's input (its InputLayer, or one made for it), then
 * each layer; false with *error set when a layer's shapes do not fit. */
static gboolean add_sequential(JsonBuilder *b, const tw_model *model, int (*outputs)[2], GError **error)
{
    const tw_shape *in = tw_model_input_shape(model);
    if (!in) {
        g_set_error(error, LAYERS_ERROR, 1, "The model has no input shape: give its first layer one");
        return FALSE;
    }
    int n = tw_model_nlayers(model);
    tw_layer_info *info = g_new0(tw_layer_info, MAX(n, 1));
    int done = tw_model_infer(model, in, info);
    if (done < n) {
        g_set_error(error, LAYERS_ERROR, 1, "%s", done >= 0 ? info[done].error : tw_last_error());
        g_free(info);
        return FALSE;
    }
    int next = 0;
    bool has_input = n && !strcmp(tw_layer_class_of(tw_model_layer_at(model, 0))->name, "InputLayer");
    if (!has_input) {
        tw_layer *input = tw_layer_new("InputLayer", "input");
        add_node(b, next++, input, 0, NULL, 0, in, 1);
        tw_layer_unref(input);
    }
    for (int i = 0; i < n; i++) {
        int from[1][2] = {{next - 1, 0}};
        add_node(b, next, tw_model_layer_at(model, i), 0, from, next ? 1 : 0, &info[i].output, 1);
        next++;
    }
    outputs[0][0] = next - 1;
    outputs[0][1] = 0;
    g_free(info);
    return TRUE;
}

char *tw_graph_layers_json(const tw_model *model, const char *note, GError **error)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "format");
    json_builder_add_string_value(b, "twb-graph");
    json_builder_set_member_name(b, "version");
    json_builder_add_int_value(b, 1);
    json_builder_set_member_name(b, "function");
    json_builder_add_string_value(b, tw_layer_name(model));
    json_builder_set_member_name(b, "level");
    json_builder_add_string_value(b, "layers");
    if (note) {
        json_builder_set_member_name(b, "note");
        json_builder_add_string_value(b, note);
    }
    json_builder_set_member_name(b, "nodes");
    json_builder_begin_array(b);
    int outputs[TW_MAX_LAYER_IO][2];
    int noutputs = tw_model_noutputs(model);
    gboolean ok = TRUE;
    if (tw_layer_is_functional(model))
        add_functional(b, model, outputs);
    else
        ok = add_sequential(b, model, outputs, error);
    json_builder_end_array(b);
    json_builder_set_member_name(b, "outputs");
    json_builder_begin_array(b);
    for (int k = 0; ok && k < noutputs; k++)
        add_pair(b, outputs[k][0], outputs[k][1]);
    json_builder_end_array(b);
    json_builder_end_object(b);
    char *json = NULL;
    if (ok) {
        JsonNode *root = json_builder_get_root(b);
        json = json_to_string(root, FALSE);
        json_node_unref(root);
    }
    g_object_unref(b);
    return json;
}
