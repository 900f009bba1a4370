/* Writing a model as the JSON Keras 2.x's model.to_json() writes, laid out
 * as Python's json.dumps lays it out (", " and ": "). The text is built by
 * hand rather than with json-glib's generator, which prints 0.2 as
 * 0.20000000000000001 and cannot tell 1.0 from 1 the way Keras' types do. */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "model_json_internal.h"
#include "tw/error.h"
#include "tw/model_file.h"

#define KERAS_VERSION "2.15.0"

static void put_string(GString *out, const char *s)
{
    g_string_append_c(out, '"');
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            g_string_append_printf(out, "\\%c", *c);
        else if (*c == '\n')
            g_string_append(out, "\\n");
        else if (*c == '\t')
            g_string_append(out, "\\t");
        else if (*c < 0x20)
            g_string_append_printf(out, "\\u%04x", *c);
        else
            g_string_append_c(out, (char)*c);
    }
    g_string_append_c(out, '"');
}

static void put_key(GString *out, const char *key)
{
    put_string(out, key);
    g_string_append(out, ": ");
}

/* The shortest text that reads back as the same double, always with a
 * decimal point or exponent so it stays a float ("1.0", "0.001", "1e-07"),
 * in the C locale whatever the program's. As Python's repr, an exponent
 * only below 1e-4 or from 1e16 on: 140.0, not %g's 1.4e+02. Parameter
 * values are finite. */
static void put_float(GString *out, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    int digits = 1;
    for (; digits <= 17; digits++) {
        char format[8];
        g_snprintf(format, sizeof format, "%%.%dg", digits);
        g_ascii_formatd(buf, sizeof buf, format, v);
        if (g_ascii_strtod(buf, NULL) == v)
            break;
    }
    const char *e = strchr(buf, 'e');
    int exponent = e ? atoi(e + 1) : 0;
    if (e && exponent >= 0 && exponent < 16) {
        char format[8];
        g_snprintf(format, sizeof format, "%%.%df", MAX(0, MIN(digits, 17) - 1 - exponent));
        g_ascii_formatd(buf, sizeof buf, format, v);
    }
    g_string_append(out, buf);
    if (!strpbrk(buf, ".e"))
        g_string_append(out, ".0");
}

/* Keras' serialized initializers: class name and config for each of
 * tw_initializer_names; the rest take {"seed": null}. */
static const struct {
    const char *name, *class_name, *config;
} initializer_configs[] = {
    {"zeros", "Zeros", "{}"},
    {"ones", "Ones", "{}"},
    {"random_normal", "RandomNormal", "{\"mean\": 0.0, \"stddev\": 0.05, \"seed\": null}"},
    {"random_uniform", "RandomUniform", "{\"minval\": -0.05, \"maxval\": 0.05, \"seed\": null}"},
    {"truncated_normal", "TruncatedNormal", "{\"mean\": 0.0, \"stddev\": 0.05, \"seed\": null}"},
    {"orthogonal", "Orthogonal", "{\"gain\": 1.0, \"seed\": null}"},
    {"variance_scaling", "VarianceScaling",
     "{\"scale\": 1.0, \"mode\": \"fan_in\", \"distribution\": \"truncated_normal\", \"seed\": null}"},
};

static void put_initializer(GString *out, const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(initializer_configs); i++)
        if (!strcmp(initializer_configs[i].name, name)) {
            g_string_append_printf(out, "{\"class_name\": \"%s\", \"config\": %s}", initializer_configs[i].class_name,
                                   initializer_configs[i].config);
            return;
        }
    /* "glorot_uniform" -> "GlorotUniform" */
    g_string_append(out, "{\"class_name\": \"");
    for (const char *c = name; *c; c++)
        if (*c != '_')
            g_string_append_c(out, c == name || c[-1] == '_' ? g_ascii_toupper(*c) : *c);
    g_string_append(out, "\", \"config\": {\"seed\": null}}");
}

static void put_param(GString *out, const tw_param_def *def, const tw_param_value *v)
{
    if (v->is_null) {
        g_string_append(out, "null");
        return;
    }
    switch (def->type) {
    case TW_PARAM_INT:
        g_string_append_printf(out, "%lld", (long long)v->number);
        break;
    case TW_PARAM_FLOAT:
        put_float(out, v->number);
        break;
    case TW_PARAM_BOOL:
        g_string_append(out, v->number ? "true" : "false");
        break;
    case TW_PARAM_CHOICE:
        if (def->choices == tw_initializer_names)
            put_initializer(out, v->choice);
        else
            put_string(out, v->choice);
        break;
    case TW_PARAM_INTS: {
        /* ((top, bottom), (left, right)): Keras reads four flat numbers as an error */
        bool nested = def->pairs && v->n == 2 * def->pairs;
        g_string_append_c(out, '[');
        for (int i = 0; i < v->n; i++)
            g_string_append_printf(out, "%s%s%lld%s", i ? ", " : "", nested && i % 2 == 0 ? "[" : "",
                                   (long long)v->ints[i], nested && i % 2 ? "]" : "");
        g_string_append_c(out, ']');
        break;
    }
    case TW_PARAM_FLOATS:
        if (v->n == 1) { /* Keras reads a one-number factor as a number, not as [lower] */
            put_float(out, v->floats[0]);
            break;
        }
        g_string_append_c(out, '[');
        for (int i = 0; i < v->n; i++) {
            g_string_append(out, i ? ", " : "");
            put_float(out, v->floats[i]);
        }
        g_string_append_c(out, ']');
        break;
    case TW_PARAM_REGULARIZER:
        g_string_append(out, "{\"class_name\": \"L1L2\", \"config\": {\"l1\": ");
        put_float(out, v->number);
        g_string_append(out, ", \"l2\": ");
        put_float(out, v->number2);
        g_string_append(out, "}}");
        break;
    }
}

static void put_shape(GString *out, const tw_shape *shape)
{
    g_string_append_c(out, '[');
    for (int i = 0; i < shape->ndim; i++) {
        g_string_append(out, i ? ", " : "");
        if (shape->dims[i] < 0)
            g_string_append(out, "null");
        else
            g_string_append_printf(out, "%lld", (long long)shape->dims[i]);
    }
    g_string_append_c(out, ']');
}

/* Keys of Keras 3's constructors that Keras 2.15's (the version the files
 * are stamped with) does not take: Keras 2 refuses an unknown keyword, so
 * they are left out of the Keras 2 form (reading one back gives the
 * engine's default there). */
static const struct {
    const char *class_name, *key;
} keras3_only_keys[] = {
    {"Cropping1D", "data_format"},      {"ZeroPadding1D", "data_format"},  {"CenterCrop", "data_format"},
    {"RandomFlip", "data_format"},      {"RandomRotation", "data_format"}, {"RandomZoom", "data_format"},
    {"RandomTranslation", "data_format"}, {"RandomContrast", "value_range"}, {"RandomContrast", "data_format"},
    {"Resizing", "pad_to_aspect_ratio"}, {"Resizing", "fill_mode"},       {"Resizing", "fill_value"},
    {"Resizing", "antialias"},          {"Resizing", "data_format"},
};

/* List parameters written as one int when they hold one value, as Keras 2
 * (before a build) and Keras 3 write them: Keras 3's BatchNormalization
 * takes int(axis), which refuses a list (TypeError), and TensorFlow.js'
 * Keras loader reads an int only there (it refuses [-1]: "Axis -14 of
 * input tensor should have a defined dimension"); Keras 2 takes either. */
static const struct {
    const char *class_name, *key;
} one_int_keys[] = {
    {"BatchNormalization", "axis"},
};

static bool written_as_int(const char *class_name, const char *key, const tw_param_value *v)
{
    if (v->is_null || v->n != 1)
        return false;
    for (size_t i = 0; i < G_N_ELEMENTS(one_int_keys); i++)
        if (!strcmp(one_int_keys[i].class_name, class_name) && !strcmp(one_int_keys[i].key, key))
            return true;
    return false;
}

static bool keras2_lacks(const char *class_name, const char *key)
{
    for (size_t i = 0; i < G_N_ELEMENTS(keras3_only_keys); i++)
        if (!strcmp(keras3_only_keys[i].class_name, class_name) && !strcmp(keras3_only_keys[i].key, key))
            return true;
    return false;
}

/* Any JSON value, as Python's json.dumps writes it (floats as put_float). */
static void put_node(GString *out, JsonNode *node)
{
    if (JSON_NODE_HOLDS_OBJECT(node)) {
        JsonObject *obj = json_node_get_object(node);
        GList *members = json_object_get_members(obj);
        g_string_append_c(out, '{');
        for (GList *m = members; m; m = m->next) {
            g_string_append(out, m == members ? "" : ", ");
            put_key(out, m->data);
            put_node(out, json_object_get_member(obj, m->data));
        }
        g_string_append_c(out, '}');
        g_list_free(members);
    } else if (JSON_NODE_HOLDS_ARRAY(node)) {
        JsonArray *a = json_node_get_array(node);
        g_string_append_c(out, '[');
        for (guint i = 0; i < json_array_get_length(a); i++) {
            g_string_append(out, i ? ", " : "");
            put_node(out, json_array_get_element(a, i));
        }
        g_string_append_c(out, ']');
    } else if (JSON_NODE_HOLDS_NULL(node)) {
        g_string_append(out, "null");
    } else if (json_node_get_value_type(node) == G_TYPE_STRING) {
        put_string(out, json_node_get_string(node));
    } else if (json_node_get_value_type(node) == G_TYPE_BOOLEAN) {
        g_string_append(out, json_node_get_boolean(node) ? "true" : "false");
    } else if (json_node_get_value_type(node) == G_TYPE_DOUBLE) {
        put_float(out, json_node_get_double(node));
    } else {
        g_string_append_printf(out, "%" G_GINT64_FORMAT, json_node_get_int(node));
    }
}

/* A layer of a class the engine does not know, as the file had it: Keras
 * 3's module, class_name, registered_name and build_config, or Keras 2's
 * class_name (the registered name, "Package>Class", where there is one);
 * its config verbatim after the name and trainable the layer holds. */
static void put_user_layer(GString *out, const tw_layer *layer, const tw_user_class *keras, const char *name,
                           tw_keras_json_format format)
{
    bool k3 = format == TW_KERAS_JSON_3;
    g_string_append_c(out, '{');
    if (k3) {
        g_string_append(out, "\"module\": ");
        if (keras->module)
            put_string(out, keras->module);
        else
            g_string_append(out, "null");
        g_string_append(out, ", ");
    }
    /* Keras 2 names a registered class by its registered name; any other
     * registered_name (a file may say "Functional" there) would change what
     * the class_name means when read again (a nested model, say). */
    bool registered = !k3 && keras->registered_name && strchr(keras->registered_name, '>');
    g_string_append(out, "\"class_name\": ");
    put_string(out, registered ? keras->registered_name : keras->class_name);
    g_string_append(out, ", \"config\": {\"name\": ");
    put_string(out, name ? name : tw_layer_name(layer));
    g_string_append_printf(out, ", \"trainable\": %s", tw_layer_trainable(layer) ? "true" : "false");
    if (strcmp(keras->config, "{}"))
        g_string_append_printf(out, ", %s", keras->config + 1); /* its members and closing brace */
    else
        g_string_append_c(out, '}');
    if (k3) {
        g_string_append(out, ", \"registered_name\": ");
        if (keras->registered_name)
            put_string(out, keras->registered_name);
        else
            g_string_append(out, "null");
        if (keras->build_config)
            g_string_append_printf(out, ", \"build_config\": %s", keras->build_config);
    }
    g_string_append_c(out, '}');
}

static void put_model_config(GString *out, const tw_model *model, tw_keras_json_format format);
static void put_wrapped(GString *out, const tw_layer *wrapper, tw_keras_json_format format);
static void put_lookup(GString *out, const tw_layer *layer);

/* {"class_name": "Dense", "config": {"name": ..., "trainable": ...,
 * "dtype": ..., "batch_input_shape": ..., parameters...}}, under the
 * layer's own name or, when name is not NULL, that one. */
static void put_layer_as(GString *out, const tw_layer *layer, bool first, const char *name,
                         tw_keras_json_format format)
{
    const tw_layer_class *klass = tw_layer_class_of(layer);
    const tw_user_class *keras = tw_user_layer_keras(layer);
    if (keras) {
        put_user_layer(out, layer, keras, name, format);
        return;
    }
    g_string_append(out, "{\"class_name\": ");
    put_string(out, klass->name);
    g_string_append(out, ", \"config\": ");
    if (tw_layer_is_model(layer)) {
        put_model_config(out, layer, format);
        g_string_append_c(out, '}');
        return;
    }
    g_string_append(out, "{\"name\": ");
    put_string(out, name ? name : tw_layer_name(layer));
    /* Keras' InputLayer refuses "trainable", and declares its own dtype. */
    bool input = !strcmp(klass->name, "InputLayer");
    if (!input)
        g_string_append_printf(out, ", \"trainable\": %s", tw_layer_trainable(layer) ? "true" : "false");
    if (!tw_layer_class_param(klass, "dtype"))
        g_string_append_printf(out, ", \"dtype\": \"%s\"", tw_dtype_name(tw_layer_dtype(layer)));
    const tw_shape *shape = tw_layer_input_shape(layer);
    if (first && shape) {
        g_string_append(out, ", \"batch_input_shape\": ");
        put_shape(out, shape);
    }
    for (int i = 0; i < klass->nparams; i++) {
        if (tw__json_is_call_argument(klass->params[i].key) ||
            (format == TW_KERAS_JSON_2 && keras2_lacks(klass->name, klass->params[i].key)))
            continue;
        g_string_append(out, ", ");
        put_key(out, klass->params[i].key);
        const tw_param_value *v = tw_layer_param(layer, i);
        if (written_as_int(klass->name, klass->params[i].key, v))
            g_string_append_printf(out, "%lld", (long long)v->ints[0]);
        else
            put_param(out, &klass->params[i], v);
    }
    put_wrapped(out, layer, format);
    put_lookup(out, layer);
    g_string_append(out, "}}");
}

static void put_layer(GString *out, const tw_layer *layer, bool first, tw_keras_json_format format)
{
    put_layer_as(out, layer, first, NULL, format);
}

/* ---- wrappers: a layer's config holding another layer's -------------------- */

/* name less prefix, as Keras 2 writes the layer it wrapped. */
static const char *unprefixed(const tw_layer *layer, const char *prefix)
{
    const char *name = tw_layer_name(layer);
    return g_str_has_prefix(name, prefix) ? name + strlen(prefix) : name;
}

/* Whether Bidirectional's backward layer is the one Keras derives from the
 * forward layer (its config with go_backwards flipped): then, as Keras 2,
 * no backward_layer is written. */
static bool backward_is_derived(const tw_layer *forward, const tw_layer *backward)
{
    const tw_layer_class *klass = tw_layer_class_of(forward);
    if (klass != tw_layer_class_of(backward) || tw_layer_trainable(forward) != tw_layer_trainable(backward) ||
        strcmp(unprefixed(forward, "forward_"), unprefixed(backward, "backward_")))
        return false;
    bool same = true;
    for (int i = 0; i < klass->nparams && same; i++) {
        if (!strcmp(klass->params[i].key, "go_backwards"))
            continue;
        char *a = tw_layer_get_text(forward, klass->params[i].key), *b = tw_layer_get_text(backward, klass->params[i].key);
        same = !strcmp(a, b);
        free(a);
        free(b);
    }
    return same;
}

/* ", \"layer\": {...}" for Bidirectional and TimeDistributed, and Bidirectional's
 * ", \"backward_layer\": {...}" when it has one of its own. A wrapper with no
 * layer inside writes none (the reader refuses it, naming the place). */
static void put_wrapped(GString *out, const tw_layer *wrapper, tw_keras_json_format format)
{
    const tw_layer *layer = tw_layer_inner(wrapper, 0), *backward = tw_layer_inner(wrapper, 1);
    if (!layer)
        return;
    g_string_append(out, ", \"layer\": ");
    put_layer_as(out, layer, false, backward ? unprefixed(layer, "forward_") : NULL, format);
    if (backward && !backward_is_derived(layer, backward)) {
        g_string_append(out, ", \"backward_layer\": ");
        put_layer_as(out, backward, false, unprefixed(backward, "backward_"), format);
    }
}

/* {"name": ..., "layers": [...]}, with "trainable": false for a frozen
 * model (Keras 3 writes it; Keras 2 ignores it) and the input shape given
 * to the model itself as Keras' "build_input_shape". */
static void put_model_config(GString *out, const tw_model *model, tw_keras_json_format format)
{
    if (tw_layer_is_functional(model)) {
        tw__json_put_functional_config(out, model, format);
        return;
    }
    g_string_append(out, "{\"name\": ");
    put_string(out, tw_layer_name(model));
    if (!tw_layer_trainable(model))
        g_string_append(out, ", \"trainable\": false");
    if (tw_layer_input_shape(model)) {
        g_string_append(out, ", \"build_input_shape\": ");
        put_shape(out, tw_layer_input_shape(model));
    }
    g_string_append(out, ", \"layers\": [");
    for (int i = 0; i < tw_model_nlayers(model); i++) {
        g_string_append(out, i ? ", " : "");
        put_layer(out, tw_model_layer_at(model, i), i == 0, format);
    }
    g_string_append(out, "]}");
}

void tw__json_put_string(GString *out, const char *s)
{
    put_string(out, s);
}

void tw__json_put_node(GString *out, JsonNode *node)
{
    put_node(out, node);
}

char *tw_json_node_to_text(JsonNode *node)
{
    GString *out = g_string_new(NULL);
    put_node(out, node);
    char *text = strdup(out->str); /* malloc'd, as the header promises */
    g_string_free(out, TRUE);
    return text;
}

void tw__json_put_shape(GString *out, const tw_shape *shape)
{
    put_shape(out, shape);
}

void tw__json_put_layer(GString *out, const tw_layer *layer, tw_keras_json_format format)
{
    put_layer(out, layer, false, format);
}

char *tw_model_to_json_format(const tw_model *model, tw_keras_json_format format)
{
    if (!tw_layer_is_model(model)) {
        tw_error_set("model to_json: %s", model ? "the layer is not a model" : "model is NULL");
        return NULL;
    }
    GString *out = g_string_new(NULL);
    bool functional = tw_layer_is_functional(model);
    if (functional && format == TW_KERAS_JSON_3)
        g_string_append(out, "{\"module\": \"keras.src.models.functional\", \"class_name\": \"Functional\", "
                             "\"config\": ");
    else
        g_string_append_printf(out, "{\"class_name\": \"%s\", \"config\": ", functional ? "Functional" : "Sequential");
    put_model_config(out, model, format);
    if (functional && format == TW_KERAS_JSON_3)
        g_string_append(out, ", \"registered_name\": \"Functional\", \"build_config\": {\"input_shape\": null}}");
    else
        g_string_append(out, ", \"keras_version\": \"" KERAS_VERSION "\", \"backend\": \"tensorflow\"}");
    /* malloc'd, as the header promises, not g_malloc'd. */
    char *json = strdup(out->str);
    g_string_free(out, TRUE);
    return json;
}

char *tw_model_to_json(const tw_model *model)
{
    return tw_model_to_json_format(model, TW_KERAS_JSON_2);
}

int tw_model_save_format(const tw_model *model, const char *path, tw_keras_json_format format)
{
    if (!path)
        return tw_error_set("model save: the path is NULL");
    char *json = tw_model_to_json_format(model, format);
    if (!json)
        return -1;
    tw_atomic_file file;
    int rc = tw__atomic_open(&file, path, "model");
    if (!rc)
        rc = tw__atomic_write(&file, json, strlen(json));
    if (!rc)
        rc = tw__atomic_commit(&file);
    free(json);
    return rc;
}

int tw_model_save(const tw_model *model, const char *path)
{
    return tw_model_save_format(model, path, TW_KERAS_JSON_2);
}

/* ---- lookup layers: tokens kept inline in the config ----------------------- */

/* IntegerLookup's tokens are numbers (canonical text), StringLookup's strings. */
static void put_token(GString *out, const char *token, bool integer)
{
    if (!token)
        g_string_append(out, "null");
    else if (integer)
        g_string_append(out, token);
    else
        put_string(out, token);
}

/* ", \"mask_token\": ..., \"oov_token\": ..., \"vocabulary\": [...]" for StringLookup
 * and IntegerLookup. */
static void put_lookup(GString *out, const tw_layer *layer)
{
    int n = tw_lookup_vocabulary_size(layer);
    if (n < 0)
        return;
    bool integer = !strcmp(tw_layer_class_of(layer)->name, "IntegerLookup");
    g_string_append(out, ", \"mask_token\": ");
    put_token(out, tw_lookup_special_token(layer, "mask_token"), integer);
    g_string_append(out, ", \"oov_token\": ");
    put_token(out, tw_lookup_special_token(layer, "oov_token"), integer);
    g_string_append(out, ", \"vocabulary\": [");
    for (int i = 0; i < n; i++) {
        g_string_append(out, i ? ", " : "");
        put_token(out, tw_lookup_token(layer, i), integer);
    }
    g_string_append_c(out, ']');
}
