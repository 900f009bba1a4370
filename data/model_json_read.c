/* Reading Keras Sequential JSON into a model. Every config value becomes
 * tw_layer_set's text form, so a value a layer refuses is reported exactly
 * as the designer and the command line report it, with its place in the
 * file in front ("layers[3].config.units: ..."). */
#include <errno.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_bytes.h"
#include "model_json_internal.h"
#include "tw/error.h"
#include "tw/json_check.h"
#include "tw/model_file.h"

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *message = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    tw_error_set("%s", message);
    g_free(message);
    return -1;
}

static const char *describe(JsonNode *node)
{
    switch (json_node_get_node_type(node)) {
    case JSON_NODE_OBJECT:
        return "an object";
    case JSON_NODE_ARRAY:
        return "an array";
    case JSON_NODE_NULL:
        return "null";
    case JSON_NODE_VALUE:
        break;
    }
    GType type = json_node_get_value_type(node);
    if (type == G_TYPE_STRING)
        return "a string";
    return type == G_TYPE_BOOLEAN ? "a boolean" : "a number";
}

static JsonObject *object_or_null(JsonNode *node)
{
    return node && JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
}

/* The string member `key` of obj; NULL when absent or not a string. */
static const char *string_member(JsonObject *obj, const char *key)
{
    JsonNode *node = obj ? json_object_get_member(obj, key) : NULL;
    return node && JSON_NODE_HOLDS_VALUE(node) && json_node_get_value_type(node) == G_TYPE_STRING
               ? json_node_get_string(node)
               : NULL;
}

static double number_member(JsonObject *obj, const char *key, double fallback)
{
    JsonNode *node = obj ? json_object_get_member(obj, key) : NULL;
    if (!node || !JSON_NODE_HOLDS_VALUE(node))
        return fallback;
    GType type = json_node_get_value_type(node);
    return type == G_TYPE_INT64 || type == G_TYPE_DOUBLE ? json_node_get_double(node) : fallback;
}

/* ---- values as tw_layer_set's text ---------------------------------------- */

static char *scalar_text(JsonNode *node)
{
    if (JSON_NODE_HOLDS_NULL(node))
        return g_strdup("none");
    GType type = json_node_get_value_type(node);
    if (type == G_TYPE_INT64)
        return g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(node));
    if (type == G_TYPE_DOUBLE) { /* the shortest text that reads back as the same double: 0.1, not 0.10000000000000001 */
        double v = json_node_get_double(node);
        char buf[G_ASCII_DTOSTR_BUF_SIZE], format[8];
        for (int digits = 1; digits <= 17; digits++) {
            snprintf(format, sizeof format, "%%.%dg", digits);
            if (g_ascii_strtod(g_ascii_formatd(buf, sizeof buf, format, v), NULL) == v)
                break;
        }
        return g_strdup(buf);
    }
    if (type == G_TYPE_BOOLEAN)
        return g_strdup(json_node_get_boolean(node) ? "true" : "false");
    return g_strdup(json_node_get_string(node));
}

/* [3, 3] -> "3,3". */
/* Numbers, or pairs of numbers as Keras writes paddings and croppings
 * ([[top, bottom], [left, right]]: read as four in order). */
static bool append_numbers(GString *text, JsonArray *array, const char *path, bool pairs)
{
    for (guint i = 0; i < json_array_get_length(array); i++) {
        JsonNode *element = json_array_get_element(array, i);
        if (pairs && JSON_NODE_HOLDS_ARRAY(element)) {
            char *inner = g_strdup_printf("%s[%u]", path, i);
            bool ok = append_numbers(text, json_node_get_array(element), inner, false);
            g_free(inner);
            if (!ok)
                return false;
            continue;
        }
        if (!JSON_NODE_HOLDS_VALUE(element) && !JSON_NODE_HOLDS_NULL(element)) {
            fail("%s[%u]: expected a number, got %s", path, i, describe(element));
            return false;
        }
        char *item = scalar_text(element);
        g_string_append_printf(text, "%s%s", text->len ? "," : "", item);
        g_free(item);
    }
    return true;
}

static char *array_text(const tw_param_def *def, JsonArray *array, const char *path)
{
    GString *text = g_string_new(NULL);
    if (!append_numbers(text, array, path, def && def->pairs)) {
        g_string_free(text, TRUE);
        return NULL;
    }
    return g_string_free(text, FALSE);
}

/* Keras' class names to its snake_case identifiers: "GlorotUniform" ->
 * "glorot_uniform". */
static char *snake_case(const char *camel)
{
    GString *out = g_string_new(NULL);
    for (const char *c = camel; *c; c++) {
        if (g_ascii_isupper(*c) && c > camel && (g_ascii_islower(c[-1]) || g_ascii_isdigit(c[-1])))
            g_string_append_c(out, '_');
        g_string_append_c(out, g_ascii_tolower(*c));
    }
    return g_string_free(out, FALSE);
}

/* Keras 2.2 wrote the named initializers as the VarianceScaling they are;
 * its "normal" distribution was already truncated. Scale 1, fan_in and
 * truncated_normal is the engine's own variance_scaling. */
static char *variance_scaling_name(JsonObject *config)
{
    double scale = number_member(config, "scale", 1.0);
    const char *mode = string_member(config, "mode");
    const char *dist = string_member(config, "distribution");
    mode = mode ? mode : "fan_in";
    dist = dist ? dist : "truncated_normal";
    bool uniform = !strcmp(dist, "uniform"), truncated = !strcmp(dist, "truncated_normal");
    bool normal = !strcmp(dist, "normal") || truncated;
    const char *name = "variance_scaling";
    if (scale == 1 && !strcmp(mode, "fan_avg"))
        name = uniform ? "glorot_uniform" : normal ? "glorot_normal" : name;
    else if (scale == 2 && !strcmp(mode, "fan_in"))
        name = uniform ? "he_uniform" : normal ? "he_normal" : name;
    else if (scale == 1 && !strcmp(mode, "fan_in") && !truncated)
        name = uniform ? "lecun_uniform" : normal ? "lecun_normal" : name;
    return g_strdup(name);
}

/* {"class_name": "L1L2", "config": {"l1": 0.0, "l2": 0.01}}, or L1/L2 with
 * Keras' default of 0.01 for the one they set. */
static char *regularizer_text(const char *class_name, JsonObject *config, const char *path)
{
    double l1 = 0, l2 = 0;
    if (!strcmp(class_name, "L1L2")) {
        l1 = number_member(config, "l1", 0);
        l2 = number_member(config, "l2", 0);
    } else if (!strcmp(class_name, "L1")) {
        l1 = number_member(config, "l1", 0.01);
    } else if (!strcmp(class_name, "L2")) {
        l2 = number_member(config, "l2", 0.01);
    } else {
        fail("%s: unsupported regularizer \"%s\" (there are L1L2, L1 and L2)", path, class_name);
        return NULL;
    }
    char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
    return g_strdup_printf("l1=%s,l2=%s", g_ascii_formatd(a, sizeof a, "%.17g", l1),
                           g_ascii_formatd(b, sizeof b, "%.17g", l2));
}

/* A serialized object: an initializer, a regularizer, or Keras 3's dtype
 * policy {"class_name": "DTypePolicy", "config": {"name": "float32"}}. */
static char *object_text(const tw_param_def *def, JsonObject *obj, const char *path)
{
    const char *class_name = string_member(obj, "class_name");
    if (!class_name) {
        fail("%s: expected {\"class_name\": ..., \"config\": ...}, got an object without \"class_name\"", path);
        return NULL;
    }
    JsonObject *config = object_or_null(json_object_get_member(obj, "config"));
    if (def->type == TW_PARAM_REGULARIZER)
        return regularizer_text(class_name, config, path);
    if (def->type != TW_PARAM_CHOICE) {
        fail("%s: expected a value, got a %s object", path, class_name);
        return NULL;
    }
    if (!strcmp(class_name, "VarianceScaling"))
        return variance_scaling_name(config);
    if (string_member(config, "name") && strstr(class_name, "Policy"))
        return g_strdup(string_member(config, "name"));
    return snake_case(class_name);
}

static char *value_text(const tw_param_def *def, JsonNode *node, const char *path)
{
    if (JSON_NODE_HOLDS_ARRAY(node))
        return array_text(def, json_node_get_array(node), path);
    if (JSON_NODE_HOLDS_OBJECT(node))
        return object_text(def, json_node_get_object(node), path);
    return scalar_text(node);
}

/* ---- layers ----------------------------------------------------------------- */

/* tw_layer_set's "units: expected ..." with the path instead of the key.
 * The layer's message ends "got VALUE" with the text it was given in
 * quotes; a JSON number, boolean or null is shown as the file writes it
 * ("got true", not "got \"true\""). */
static int set_param(tw_layer *layer, const tw_param_def *def, JsonNode *node, const char *text, const char *path)
{
    if (!tw_layer_set(layer, def->key, text))
        return 0;
    char *message = g_strdup(tw_last_error());
    size_t len = strlen(def->key);
    bool keyed = !strncmp(message, def->key, len) && !strncmp(message + len, ": ", 2);
    char *reason = keyed ? message + len + 2 : message;
    char *got = g_strrstr(reason, "got ");
    bool scalar = def->type == TW_PARAM_INT || def->type == TW_PARAM_FLOAT || def->type == TW_PARAM_BOOL ||
                  def->type == TW_PARAM_CHOICE;
    bool unquoted = JSON_NODE_HOLDS_NULL(node) ||
                    (JSON_NODE_HOLDS_VALUE(node) && json_node_get_value_type(node) != G_TYPE_STRING);
    if (got && scalar && unquoted) {
        got[strlen("got ")] = '\0';
        fail("%s: %s%s", path, reason, JSON_NODE_HOLDS_NULL(node) ? "null" : text);
    } else {
        fail("%s: %s", path, reason);
    }
    g_free(message);
    return -1;
}

/* batch_input_shape / batch_shape: [null, 28, 28, 1], null for unknown. */
static int read_input_shape(tw_layer *layer, JsonNode *node, const char *path)
{
    if (!JSON_NODE_HOLDS_ARRAY(node))
        return fail("%s: expected a list such as [null, 28, 28, 1], got %s", path, describe(node));
    JsonArray *array = json_node_get_array(node);
    guint n = json_array_get_length(array);
    if (n < 1 || n > TW_MAX_DIMS)
        return fail("%s: expected 1 to %d dimensions, got %u", path, TW_MAX_DIMS, n);
    tw_shape shape = {.ndim = (int)n};
    for (guint i = 0; i < n; i++) {
        JsonNode *dim = json_array_get_element(array, i);
        bool is_int = JSON_NODE_HOLDS_VALUE(dim) && json_node_get_value_type(dim) == G_TYPE_INT64;
        if (!is_int && !JSON_NODE_HOLDS_NULL(dim))
            return fail("%s[%u]: expected a size or null, got %s", path, i, describe(dim));
        shape.dims[i] = is_int ? json_node_get_int(dim) : -1;
        if (shape.dims[i] < -1 || (i == 0 && shape.dims[i] == 0))
            return fail("%s[%u]: expected a size or null, got %" G_GINT64_FORMAT, path, i, shape.dims[i]);
    }
    if (tw_layer_set_input_shape(layer, &shape))
        return fail("%s: %s", path, tw_last_error());
    return 0;
}

/* Keys with no parameter are ignored, except those whose non-null value
 * would change what the model computes or how it trains. */
static int check_unsupported(const char *key, JsonNode *node, const char *path)
{
    if (JSON_NODE_HOLDS_NULL(node))
        return 0;
    if (!strcmp(key, "activity_regularizer"))
        return fail("%s: activity regularizers are not supported (expected null)", path);
    if (g_str_has_suffix(key, "_constraint"))
        return fail("%s: weight constraints are not supported (expected null)", path);
    return 0;
}

static int read_config_member(tw_layer *layer, const char *key, JsonNode *node, bool first, const char *path)
{
    const tw_param_def *def = tw_layer_class_param(tw_layer_class_of(layer), key);
    if (def) {
        char *text = value_text(def, node, path);
        int rc = text ? set_param(layer, def, node, text, path) : -1;
        g_free(text);
        return rc;
    }
    if (!strcmp(key, "batch_input_shape") || !strcmp(key, "batch_shape"))
        return first ? read_input_shape(layer, node, path) : 0; /* Keras ignores it after the first layer */
    if (!strcmp(key, "name") || !strcmp(key, "trainable"))
        return 0; /* read_name and read_trainable take these */
    return check_unsupported(key, node, path);
}

static int read_trainable(tw_layer *layer, JsonObject *config, const char *path)
{
    JsonNode *node = json_object_get_member(config, "trainable");
    if (!node)
        return 0;
    if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_BOOLEAN)
        return fail("%s.trainable: expected true or false, got %s", path, describe(node));
    /* Only freezing: trainable=true on a nested model would unfreeze the
     * layers inside that the file froze one by one. */
    return json_node_get_boolean(node) ? 0 : tw_layer_set_trainable(layer, false);
}

static int read_name(tw_layer *layer, JsonObject *config, const char *path)
{
    JsonNode *node = json_object_get_member(config, "name");
    if (!node)
        return 0;
    if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_STRING)
        return fail("%s.name: expected a string, got %s", path, describe(node));
    if (tw_layer_set_name(layer, json_node_get_string(node)))
        return fail("%s.name: %s", path, tw_last_error());
    return 0;
}

static tw_model *read_sequential(JsonNode *config, const char *path);
static tw_layer *read_layer(JsonNode *node, bool first, const char *path);

/* ---- wrappers: a layer's config holding another layer's -------------------- */

/* config.<key> read as a layer of its own and handed to put (which takes
 * it); absent or null is refused when required, else skipped. */
static int read_inner(tw_layer *wrapper, JsonObject *config, const char *key, bool required, const char *config_path,
                      int (*put)(tw_layer *wrapper, tw_layer *inner))
{
    JsonNode *node = json_object_get_member(config, key);
    if (!node || JSON_NODE_HOLDS_NULL(node)) {
        if (!required)
            return 0;
        return fail("%s: missing \"%s\": a %s holds the layer it wraps, {\"class_name\": ..., \"config\": ...}",
                    config_path, key, tw_layer_class_of(wrapper)->name);
    }
    char *path = g_strdup_printf("%s.%s", config_path, key);
    tw_layer *inner = read_layer(node, false, path);
    int rc = inner ? put(wrapper, inner) : -1;
    if (rc && inner)
        fail("%s: %s", path, tw_last_error());
    g_free(path);
    return rc;
}

/* Bidirectional and TimeDistributed: config.layer, and Bidirectional's
 * config.backward_layer when the file gives one (Keras 3 always does). */
static int read_wrapped(tw_layer *wrapper, JsonObject *config, const char *config_path)
{
    if (!tw_layer_inner(wrapper, 0)) /* not a wrapper: wrappers hold a layer from the start */
        return 0;
    if (read_inner(wrapper, config, "layer", true, config_path, tw_layer_wrap))
        return -1;
    if (strcmp(tw_layer_class_of(wrapper)->name, "Bidirectional"))
        return 0;
    return read_inner(wrapper, config, "backward_layer", false, config_path, tw_bidirectional_set_backward);
}

/* ---- lookup layers: tokens kept inline in the config ----------------------- */

/* A token as text into *out: a string, or a whole number (IntegerLookup's);
 * null leaves *out NULL. */
static int token_text(JsonNode *node, const char *path, char **out)
{
    *out = NULL;
    if (JSON_NODE_HOLDS_NULL(node))
        return 0;
    GType type = JSON_NODE_HOLDS_VALUE(node) ? json_node_get_value_type(node) : G_TYPE_NONE;
    if (type == G_TYPE_STRING)
        *out = g_strdup(json_node_get_string(node));
    else if (type == G_TYPE_INT64)
        *out = g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(node));
    else
        return fail("%s: expected a token (a string or a whole number), got %s", path, describe(node));
    return 0;
}

static int read_special_token(tw_layer *layer, JsonObject *config, const char *key, const char *config_path)
{
    JsonNode *node = json_object_get_member(config, key);
    if (!node)
        return 0;
    char *path = g_strdup_printf("%s.%s", config_path, key), *token;
    int rc = token_text(node, path, &token);
    if (!rc && tw_lookup_set_special_token(layer, key, token))
        rc = fail("%s: %s", path, tw_last_error());
    g_free(token);
    g_free(path);
    return rc;
}

/* StringLookup and IntegerLookup: mask_token, oov_token and the vocabulary
 * as a list. A null vocabulary is a layer still to adapt (Keras 3 keeps an
 * adapted one beside the config, not in it). */
static int read_lookup(tw_layer *layer, JsonObject *config, const char *config_path)
{
    if (tw_lookup_vocabulary_size(layer) < 0)
        return 0;
    if (read_special_token(layer, config, "mask_token", config_path) ||
        read_special_token(layer, config, "oov_token", config_path))
        return -1;
    JsonNode *node = json_object_get_member(config, "vocabulary");
    if (!node || JSON_NODE_HOLDS_NULL(node))
        return 0;
    if (JSON_NODE_HOLDS_VALUE(node) && json_node_get_value_type(node) == G_TYPE_STRING)
        return fail("%s.vocabulary: a vocabulary file (\"%s\") is not supported; expected the tokens inline as a list",
                    config_path, json_node_get_string(node));
    if (!JSON_NODE_HOLDS_ARRAY(node))
        return fail("%s.vocabulary: expected a list of tokens, got %s", config_path, describe(node));
    JsonArray *array = json_node_get_array(node);
    guint n = json_array_get_length(array);
    char **tokens = g_new0(char *, n + 1);
    int rc = 0;
    for (guint i = 0; i < n && !rc; i++) {
        char *path = g_strdup_printf("%s.vocabulary[%u]", config_path, i);
        rc = token_text(json_array_get_element(array, i), path, &tokens[i]);
        if (!rc && !tokens[i])
            rc = fail("%s: expected a token, got null", path);
        g_free(path);
    }
    if (!rc && tw_lookup_set_vocabulary(layer, (int)n, (const char *const *)tokens))
        rc = fail("%s.vocabulary: %s", config_path, tw_last_error());
    g_strfreev(tokens);
    return rc;
}

/* Keras before 2.1.3 had no reset_after and computed GRU the way
 * reset_after=false does; every later Keras writes the key. */
static int read_legacy_defaults(tw_layer *layer, JsonObject *config)
{
    if (!strcmp(tw_layer_class_of(layer)->name, "GRU") && !json_object_has_member(config, "reset_after"))
        return tw_layer_set(layer, "reset_after", "false");
    return 0;
}

/* path: the layer's ("layers[3]"); config_path: its config's. */
static tw_layer *read_plain_layer(const char *class_name, JsonObject *config, bool first, const char *path,
                                  const char *config_path)
{
    tw_layer *layer = tw_layer_new(class_name, NULL);
    if (!layer) {
        fail("%s: %s", path, tw_last_error());
        return NULL;
    }
    int rc = read_name(layer, config, config_path);
    GList *members = json_object_get_members(config);
    for (GList *m = members; m && !rc; m = m->next) {
        char *member_path = g_strdup_printf("%s.%s", config_path, (const char *)m->data);
        rc = read_config_member(layer, m->data, json_object_get_member(config, m->data), first, member_path);
        g_free(member_path);
    }
    g_list_free(members);
    if (!rc)
        rc = read_legacy_defaults(layer, config);
    if (!rc)
        rc = read_wrapped(layer, config, config_path);
    if (!rc)
        rc = read_lookup(layer, config, config_path);
    if (!rc)
        rc = read_trainable(layer, config, config_path);
    if (rc) {
        tw_layer_unref(layer);
        return NULL;
    }
    return layer;
}

/* A class_name no layer class has: a UserLayer (tw_user_layer_new) that
 * keeps what the file says of it and, for why it cannot run, what the file
 * says of the class's origin. Keras 3 writes a user class's module and
 * registered_name ("package>Class", from register_keras_serializable),
 * Keras 2 the registered name as the class_name; its Python code is never
 * in the file. */
static tw_layer *read_user_layer(JsonObject *obj, const char *class_name, JsonObject *config, bool first,
                                 const char *config_path)
{
    const char *module = string_member(obj, "module"), *registered = string_member(obj, "registered_name");
    const char *package_end = strchr(class_name, '>');
    GString *origin = g_string_new(NULL);
    if (registered)
        g_string_append_printf(origin, "registered_name \"%s\"", registered);
    else if (package_end)
        g_string_append_printf(origin, "registered in package \"%.*s\"", (int)(package_end - class_name), class_name);
    if (module)
        g_string_append_printf(origin, "%smodule \"%s\"", origin->len ? ", " : "", module);
    bool keras = module && (!strcmp(module, "keras") || g_str_has_prefix(module, "keras."));
    bool user = registered || package_end || (module && !keras);
    char *why = g_strdup_printf(
        "its class \"%s\"%s%s%s is %s; the model can be summarized but not run or trained", class_name,
        origin->len ? " (" : "", origin->str, origin->len ? ")" : "",
        user    ? "a user-defined class whose Python code is not in the file and cannot run here"
        : keras ? "a Keras layer Tensor Workbench does not implement"
                : "not a Keras layer Tensor Workbench implements (a user-defined class's Python code cannot run here)");
    g_string_free(origin, TRUE);
    /* The config as the file has it, less the name and trainable the layer holds. */
    GString *rest = g_string_new("{");
    GList *members = json_object_get_members(config);
    for (GList *m = members; m; m = m->next) {
        if (!strcmp(m->data, "name") || !strcmp(m->data, "trainable"))
            continue;
        g_string_append(rest, rest->len > 1 ? ", " : "");
        tw__json_put_string(rest, m->data);
        g_string_append(rest, ": ");
        tw__json_put_node(rest, json_object_get_member(config, m->data));
    }
    g_list_free(members);
    g_string_append_c(rest, '}');
    JsonNode *bc = json_object_get_member(obj, "build_config");
    GString *build = bc ? g_string_new(NULL) : NULL;
    if (bc)
        tw__json_put_node(build, bc);
    tw_user_class info = {class_name, module, registered, rest->str, build ? build->str : NULL, why};
    tw_layer *layer = tw_user_layer_new(NULL, &info);
    g_free(why);
    g_string_free(rest, TRUE);
    if (build)
        g_string_free(build, TRUE);
    /* The first layer's input shape is the model's, as for any class. */
    const char *shape_key = json_object_has_member(config, "batch_shape") ? "batch_shape" : "batch_input_shape";
    JsonNode *shape = json_object_get_member(config, shape_key);
    char *shape_path = g_strdup_printf("%s.%s", config_path, shape_key);
    int rc = read_name(layer, config, config_path);
    if (!rc && shape && first)
        rc = read_input_shape(layer, shape, shape_path);
    if (!rc)
        rc = read_trainable(layer, config, config_path);
    g_free(shape_path);
    if (rc) {
        tw_layer_unref(layer);
        return NULL;
    }
    return layer;
}

/* {"class_name": "Dense", "config": {...}} at path "layers[3]". */
static tw_layer *read_layer(JsonNode *node, bool first, const char *path)
{
    JsonObject *obj = object_or_null(node);
    if (!obj) {
        fail("%s: expected a layer {\"class_name\": ..., \"config\": ...}, got %s", path, describe(node));
        return NULL;
    }
    JsonNode *class_node = json_object_get_member(obj, "class_name");
    JsonNode *config = json_object_get_member(obj, "config");
    if (!class_node || !config) {
        fail("%s: missing \"%s\"", path, class_node ? "config" : "class_name");
        return NULL;
    }
    if (!JSON_NODE_HOLDS_VALUE(class_node) || json_node_get_value_type(class_node) != G_TYPE_STRING) {
        fail("%s.class_name: expected a string, got %s", path, describe(class_node));
        return NULL;
    }
    const char *class_name = json_node_get_string(class_node);
    char *config_path = g_strdup_printf("%s.config", path);
    tw_layer *layer = NULL;
    if (!strcmp(class_name, "Sequential"))
        layer = read_sequential(config, config_path);
    else if (!strcmp(class_name, "Functional") || !strcmp(class_name, "Model"))
        layer = tw__json_read_functional(config, config_path);
    else if (!JSON_NODE_HOLDS_OBJECT(config))
        fail("%s: expected an object, got %s", config_path, describe(config));
    else if (!tw_layer_class_find(class_name)) {
        tw_error_clear();
        layer = read_user_layer(obj, class_name, json_node_get_object(config), first, config_path);
    }
    else
        layer = read_plain_layer(class_name, json_node_get_object(config), first, path, config_path);
    g_free(config_path);
    return layer;
}

static int read_layers(tw_model *model, JsonArray *layers, const char *prefix)
{
    for (guint i = 0; i < json_array_get_length(layers); i++) {
        char *path = g_strdup_printf("%slayers[%u]", prefix, i);
        tw_layer *layer = read_layer(json_array_get_element(layers, i), i == 0, path);
        g_free(path);
        if (!layer || tw_model_add(model, layer))
            return -1;
    }
    return 0;
}

/* A Sequential's config: {"name": ..., "layers": [...]} (and the
 * "build_input_shape" of a model built without an input layer) or, before
 * Keras 2.2.3, the bare list of layers. path is where it sits ("config" at the
 * top, "layers[2].config" nested); its layers are named from the top. */
static tw_model *read_sequential(JsonNode *config, const char *path)
{
    JsonObject *obj = object_or_null(config);
    JsonNode *layers = obj ? json_object_get_member(obj, "layers") : config;
    if (!obj && !JSON_NODE_HOLDS_ARRAY(config)) {
        fail("%s: expected an object with \"layers\", got %s", path, describe(config));
        return NULL;
    }
    if (!layers) {
        fail("%s: missing \"layers\"", path);
        return NULL;
    }
    if (!JSON_NODE_HOLDS_ARRAY(layers)) {
        fail("%s.layers: expected a list of layers, got %s", path, describe(layers));
        return NULL;
    }
    tw_model *model = tw_sequential_new(NULL);
    /* The top level's layers are "layers[3]"; a nested model's carry its path. */
    char *prefix = strcmp(path, "config") ? g_strdup_printf("%s.", path) : g_strdup("");
    int rc = obj ? read_name(model, obj, path) : 0;
    JsonNode *build_shape = obj ? json_object_get_member(obj, "build_input_shape") : NULL;
    if (!rc && build_shape && !JSON_NODE_HOLDS_NULL(build_shape)) {
        char *shape_path = g_strdup_printf("%s.build_input_shape", path);
        rc = read_input_shape(model, build_shape, shape_path);
        g_free(shape_path);
    }
    if (!rc)
        rc = read_layers(model, json_node_get_array(layers), prefix);
    if (!rc && obj)
        rc = read_trainable(model, obj, path);
    g_free(prefix);
    if (rc) {
        tw_layer_unref(model);
        return NULL;
    }
    return model;
}

/* ---- the document --------------------------------------------------------- */

/* Whether s[0..n) is a number as JSON writes them: -?(0|[1-9][0-9]*), then
 * an optional fraction and exponent. */
static bool json_number(const char *s, size_t n)
{
    size_t i = s[0] == '-';
    if (i < n && s[i] == '0')
        i++;
    else if (i < n && s[i] >= '1' && s[i] <= '9')
        i += strspn(s + i, "0123456789");
    else
        return false;
    if (i < n && s[i] == '.') {
        size_t digits = strspn(s + i + 1, "0123456789");
        if (!digits)
            return false;
        i += 1 + digits;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i += 1 + (i + 1 < n && (s[i + 1] == '+' || s[i + 1] == '-'));
        size_t digits = strspn(s + i, "0123456789");
        if (!digits)
            return false;
        i += digits;
    }
    return i == n;
}

/* json-glib reads more than JSON (0x10 as 16, 0777 as octal 511; its
 * escapes are tw_json_check_text's) and reads 18446744073709551616 as -1
 * and 1e400 as inf, silently; a model file's values must mean what they
 * say, and what the writer writes must read back. The offset and length of
 * the first number that is not written as JSON writes numbers or that does
 * not fit (a whole number in 64 bits, any other in a finite double), with
 * why in *problem; or -1. Numbers are only sure to be numbers in text that
 * json-glib parsed. */
static ptrdiff_t bad_literal(const char *json, size_t length, size_t *literal_length, const char **problem)
{
    for (size_t i = 0; i < length; i++) {
        char c = json[i];
        if (c == '"' || c == '\'') { /* past the string (single-quoted ones have no escapes) */
            for (i++; i < length && json[i] != c; i++)
                if (c == '"' && json[i] == '\\')
                    i++;
        } else if (c == '/' && i + 1 < length && json[i + 1] == '*') {
            for (i += 2; i + 1 < length && !(json[i] == '*' && json[i + 1] == '/'); i++)
                ;
            i++;
        } else if (c == '-' || c == '.' || g_ascii_isdigit(c)) {
            size_t n = 1;
            while (i + n < length && (g_ascii_isalnum(json[i + n]) || strchr("+-.", json[i + n])))
                n++;
            char *literal = g_strndup(json + i, n);
            bool whole = strcspn(literal, ".eE") == n;
            errno = 0;
            if (!json_number(literal, n))
                *problem = "is not a number as JSON writes them (such as 12, -0.5 or 1e-3)";
            else if (whole ? (g_ascii_strtoll(literal, NULL, 10), errno == ERANGE) : isinf(g_ascii_strtod(literal, NULL)))
                *problem = whole ? "does not fit in 64 bits" : "is too large for a double";
            else
                *problem = NULL;
            g_free(literal);
            if (*problem) {
                *literal_length = n;
                return (ptrdiff_t)i;
            }
            i += n - 1;
        }
    }
    return -1;
}

/* "model.json:3:14: 0x10 is not a number as JSON writes them ..." */
static void fail_at_literal(const char *json, size_t at, size_t length, const char *problem, const char *source,
                            const char *colon)
{
    int line, column;
    tw_json_line_column(json, (ptrdiff_t)at, &line, &column);
    fail("%s%s%d:%d: %.*s %s", source, colon, line, column, (int)length, json + at, problem);
}

/* Messages about the text as a whole: "model.json:3:14: ..." */
static JsonParser *parse(const char *json, size_t length, const char *source)
{
    if (tw_json_too_deep(json, (ptrdiff_t)length) >= 0) { /* its message; escapes are placed below */
        tw_json_check_text(json, (ptrdiff_t)length, source ? source : "model JSON");
        return NULL;
    }
    const char *colon = source ? ":" : "";
    source = source ? source : "";
    /* Escapes first (tw/json_check.h), placed as the numbers below are:
     * json-glib stops on some (a lone low surrogate) with a message quoting
     * the bytes it made, which are not UTF-8. */
    size_t escape_length;
    ptrdiff_t escape = tw_json_bad_escape(json, (ptrdiff_t)length, &escape_length);
    if (escape >= 0) {
        fail_at_literal(json, (size_t)escape, escape_length, tw_json_not_an_escape, source, colon);
        return NULL;
    }
    JsonParser *parser = json_parser_new_immutable();
    GError *error = NULL;
    if (!json_parser_load_from_data(parser, json, (gssize)length, &error)) {
        /* json-glib names the text "<data>"; the file's name is better. */
        const char *message = error->message;
        if (g_str_has_prefix(message, "<data>:"))
            message += strlen("<data>:");
        /* A place (line:column) follows the colon directly; words need a space. */
        fail("%s%s%s%s", source, colon, g_ascii_isdigit(message[0]) || !colon[0] ? "" : " ", message);
        g_error_free(error);
        g_object_unref(parser);
        return NULL;
    }
    if (!json_parser_get_root(parser)) {
        fail("%s%sthe text is empty; expected a Keras model's JSON", source, source[0] ? ": " : "");
        g_object_unref(parser);
        return NULL;
    }
    size_t literal_length;
    const char *problem;
    ptrdiff_t literal = bad_literal(json, length, &literal_length, &problem);
    if (literal >= 0) {
        fail_at_literal(json, (size_t)literal, literal_length, problem, source, colon);
        g_object_unref(parser);
        return NULL;
    }
    return parser;
}

static tw_model *read_encoded(const char *inner);

static tw_model *read_document(JsonNode *root)
{
    if (JSON_NODE_HOLDS_VALUE(root) && json_node_get_value_type(root) == G_TYPE_STRING)
        return read_encoded(json_node_get_string(root));
    JsonObject *obj = object_or_null(root);
    if (!obj) {
        fail("expected a Keras model {\"class_name\": \"Sequential\", \"config\": ...}, got %s", describe(root));
        return NULL;
    }
    const char *class_name = string_member(obj, "class_name");
    if (!class_name) {
        fail("class_name: missing or not a string; expected \"Sequential\" or \"Functional\"");
        return NULL;
    }
    bool functional = !strcmp(class_name, "Functional") || !strcmp(class_name, "Model");
    if (strcmp(class_name, "Sequential") && !functional) {
        fail("class_name: only Sequential and Functional models can be read, got \"%s\"", class_name);
        return NULL;
    }
    JsonNode *config = json_object_get_member(obj, "config");
    if (!config) {
        fail("missing \"config\"");
        return NULL;
    }
    return functional ? tw__json_read_functional(config, "config") : read_sequential(config, "config");
}

/* A file holding the model JSON as one JSON string, what
 * json.dump(model.to_json(), f) writes: the string is the document. Its
 * messages name places in the decoded text. */
static tw_model *read_encoded(const char *inner)
{
    JsonParser *parser = parse(inner, strlen(inner), "the JSON string's text");
    if (!parser)
        return NULL;
    JsonNode *root = json_parser_get_root(parser);
    tw_model *model = NULL;
    if (JSON_NODE_HOLDS_VALUE(root) && json_node_get_value_type(root) == G_TYPE_STRING)
        fail("the JSON string holds another JSON string; expected a Keras model's JSON in it");
    else
        model = read_document(root);
    g_object_unref(parser);
    return model;
}

tw_layer *tw__json_read_layer(JsonNode *node, bool first, const char *path)
{
    return read_layer(node, first, path);
}

const char *tw__json_describe(JsonNode *node)
{
    return describe(node);
}

tw_model *tw_model_from_json(const char *json, size_t length, const char *source_name)
{
    if (!json) {
        tw_error_set("model JSON: the text is NULL");
        return NULL;
    }
    JsonParser *parser = parse(json, length, source_name);
    if (!parser)
        return NULL;
    tw_model *model = read_document(json_parser_get_root(parser));
    if (!model && source_name)
        fail("%s: %s", source_name, tw_last_error());
    g_object_unref(parser);
    return model;
}

/* Far more than any model file holds (a Dense layer's JSON is about 600
 * bytes), and little enough for json-glib's tree of it to fit in memory. */
#define MODEL_FILE_MAX ((size_t)64 << 20)

tw_model *tw_model_load(const char *path)
{
    size_t size;
    uint8_t *bytes = tw__file_bytes_at_most(path, NULL, MODEL_FILE_MAX, &size);
    if (!bytes)
        return NULL;
    tw_model *model = tw_model_from_json((const char *)bytes, size, path);
    free(bytes);
    return model;
}
