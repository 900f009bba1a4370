/* Box positions inside nested models (nested_positions.h): read from and
 * written into the JSON tree of a Keras model, which the engine's own
 * layout then writes back as text (tw_json_node_to_text). */
#include "nested_positions.h"

#include <stdlib.h>
#include <string.h>

#include <tw/model_file.h>

static JsonObject *object_of(JsonNode *node)
{
    return node && JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
}

static JsonObject *object_member(JsonObject *o, const char *key)
{
    return o ? object_of(json_object_get_member(o, key)) : NULL;
}

/* The layer entries of a model object's config, or NULL. */
static JsonArray *layers_of(JsonObject *model)
{
    JsonObject *config = object_member(model, "config");
    JsonNode *layers = config ? json_object_get_member(config, "layers") : NULL;
    return layers && JSON_NODE_HOLDS_ARRAY(layers) ? json_node_get_array(layers) : NULL;
}

static const char *string_member(JsonObject *o, const char *key)
{
    JsonNode *node = o ? json_object_get_member(o, key) : NULL;
    return node && JSON_NODE_HOLDS_VALUE(node) && json_node_get_value_type(node) == G_TYPE_STRING
               ? json_node_get_string(node)
               : NULL;
}

/* An entry's name when it is a nested model (its config's "name", which
 * Sequential and Functional lists both write), else NULL. */
static const char *nested_model_name(JsonObject *entry)
{
    const char *class_name = string_member(entry, "class_name");
    if (!class_name ||
        (strcmp(class_name, "Sequential") && strcmp(class_name, "Functional") && strcmp(class_name, "Model")))
        return NULL;
    return string_member(object_member(entry, "config"), "name");
}

JsonObject *tw_nested_positions_tree(JsonNode *model_node)
{
    JsonObject *model = object_of(model_node);
    JsonObject *tree = json_object_new(), *nested = json_object_new();
    JsonObject *ours = object_member(model, TW_DESIGNER_KEY);
    if (object_member(ours, "positions"))
        json_object_set_member(tree, "positions", json_node_copy(json_object_get_member(ours, "positions")));
    JsonArray *layers = layers_of(model);
    for (guint i = 0; layers && i < json_array_get_length(layers); i++) {
        JsonNode *entry = json_array_get_element(layers, i);
        const char *name = nested_model_name(object_of(entry));
        JsonObject *inner = name ? tw_nested_positions_tree(entry) : NULL;
        if (inner)
            json_object_set_object_member(nested, name, inner);
    }
    if (json_object_get_size(nested))
        json_object_set_object_member(tree, "nested", nested);
    else
        json_object_unref(nested);
    if (json_object_get_size(tree))
        return tree;
    json_object_unref(tree);
    return NULL;
}

/* Beside "class_name" and "config", as at the top of a file. */
static void write_tree(JsonObject *model, JsonObject *tree)
{
    JsonNode *positions = json_object_get_member(tree, "positions");
    if (positions && JSON_NODE_HOLDS_OBJECT(positions)) {
        JsonObject *ours = json_object_new();
        json_object_set_member(ours, "positions", json_node_copy(positions));
        json_object_set_object_member(model, TW_DESIGNER_KEY, ours);
    }
    JsonObject *nested = object_member(tree, "nested");
    JsonArray *layers = nested ? layers_of(model) : NULL;
    for (guint i = 0; layers && i < json_array_get_length(layers); i++) {
        JsonObject *entry = object_of(json_array_get_element(layers, i));
        const char *name = nested_model_name(entry);
        JsonObject *inner = name ? object_member(nested, name) : NULL;
        if (inner)
            write_tree(entry, inner);
    }
}

char *tw_nested_positions_apply(const char *model_json, JsonObject *tree)
{
    if (!tree)
        return g_strdup(model_json);
    JsonParser *parser = json_parser_new();
    char *out = NULL;
    if (json_parser_load_from_data(parser, model_json, -1, NULL) && object_of(json_parser_get_root(parser))) {
        JsonNode *root = json_parser_get_root(parser);
        write_tree(json_node_get_object(root), tree);
        char *text = tw_json_node_to_text(root);
        out = g_strdup(text);
        free(text);
    }
    g_object_unref(parser);
    return out;
}
