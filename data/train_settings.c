/* Training settings: copies and their JSON record (see tw/train_settings.h). */
#include "tw/train_settings.h"

#include <math.h>

#include <glib.h>
#include <json-glib/json-glib.h>

tw_train_settings tw_train_settings_defaults(void)
{
    return (tw_train_settings){.optimizer = "adam", .learning_rate = NAN, .batch_size = 32, .epochs = 1};
}

tw_train_settings *tw_train_settings_copy(const tw_train_settings *s)
{
    if (!s)
        return NULL;
    tw_train_settings *c = g_new(tw_train_settings, 1);
    *c = *s;
    c->data = g_strdup(s->data);
    c->more_data = g_strdupv(s->more_data);
    c->labels = g_strdup(s->labels);
    c->label_column = g_strdup(s->label_column);
    c->optimizer = g_strdup(s->optimizer);
    c->loss = g_strdup(s->loss);
    c->run_name = g_strdup(s->run_name);
    c->logdb = g_strdup(s->logdb);
    c->device = g_strdup(s->device);
    c->layer_values = s->nlayer_values ? g_new(tw_layer_value, s->nlayer_values) : NULL;
    for (int i = 0; i < s->nlayer_values; i++)
        c->layer_values[i] = (tw_layer_value){g_strdup(s->layer_values[i].layer),
                                              g_strdup(s->layer_values[i].property), s->layer_values[i].value};
    return c;
}

void tw_train_settings_clear(tw_train_settings *s)
{
    g_free(s->data);
    g_strfreev(s->more_data);
    g_free(s->labels);
    g_free(s->label_column);
    g_free(s->optimizer);
    g_free(s->loss);
    g_free(s->run_name);
    g_free(s->logdb);
    g_free(s->device);
    for (int i = 0; i < s->nlayer_values; i++) {
        g_free(s->layer_values[i].layer);
        g_free(s->layer_values[i].property);
    }
    g_free(s->layer_values);
    *s = (tw_train_settings){0};
}

void tw_train_settings_free(tw_train_settings *s)
{
    if (!s)
        return;
    tw_train_settings_clear(s);
    g_free(s);
}

char *tw_train_settings_json(const tw_train_settings *s, double learning_rate)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "data");
    json_builder_add_string_value(b, s->data);
    for (int i = 0; s->more_data && s->more_data[i]; i++) {
        char key[32];
        g_snprintf(key, sizeof key, "data_%d", i + 1);
        json_builder_set_member_name(b, key);
        json_builder_add_string_value(b, s->more_data[i]);
    }
    json_builder_set_member_name(b, "epochs");
    json_builder_add_int_value(b, s->epochs);
    json_builder_set_member_name(b, "batch_size");
    json_builder_add_int_value(b, s->batch_size);
    json_builder_set_member_name(b, "seed");
    json_builder_add_int_value(b, (gint64)s->seed);
    json_builder_set_member_name(b, "optimizer");
    json_builder_add_string_value(b, s->optimizer);
    json_builder_set_member_name(b, "learning_rate");
    if (isnan(learning_rate))
        json_builder_add_null_value(b);
    else
        json_builder_add_double_value(b, learning_rate);
    json_builder_set_member_name(b, "validation_split");
    json_builder_add_double_value(b, s->validation_split);
    if (s->ranks > 1) {
        json_builder_set_member_name(b, "ranks");
        json_builder_add_int_value(b, s->ranks);
    }
    if (s->device) {
        json_builder_set_member_name(b, "device");
        json_builder_add_string_value(b, s->device);
    }
    for (int i = 0; i < s->nlayer_values; i++) {
        const tw_layer_value *v = &s->layer_values[i];
        char *key = g_strdup_printf("%s.%s", v->layer, v->property);
        json_builder_set_member_name(b, key);
        g_free(key);
        /* a whole number as one (units), so it reads back as an integer */
        if (v->value == floor(v->value) && fabs(v->value) < 9007199254740992.0)
            json_builder_add_int_value(b, (gint64)v->value);
        else
            json_builder_add_double_value(b, v->value);
    }
    json_builder_end_object(b);
    JsonNode *root = json_builder_get_root(b);
    char *text = json_to_string(root, FALSE); /* g_malloc is malloc: free() takes it */
    json_node_unref(root);
    g_object_unref(b);
    return text;
}
