/* The hparams plugin's data (HParamsPluginData in a value's
 * metadata.plugin_data.content) as JSON text: the experiment's
 * configuration, a session's hyperparameters, its end. */
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>

#include "hparams.pb-c.h"
#include "tfevents_internal.h"

/* JSON has no NaN or infinities: written as the strings the graph JSON
 * uses ("nan", "inf", "-inf"). */
static void add_number(JsonBuilder *b, double v)
{
    if (isfinite(v))
        json_builder_add_double_value(b, v);
    else
        json_builder_add_string_value(b, isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

static const char *str(const char *s)
{
    return s ? s : "";
}

/* Depth is bounded by tw__pb_check before unpacking. */
static void add_value(JsonBuilder *b, const Tensorboard__Hparams__Value *v)
{
    switch (v ? v->kind_case : TENSORBOARD__HPARAMS__VALUE__KIND__NOT_SET) {
    case TENSORBOARD__HPARAMS__VALUE__KIND_NUMBER_VALUE: add_number(b, v->number_value); break;
    case TENSORBOARD__HPARAMS__VALUE__KIND_STRING_VALUE: json_builder_add_string_value(b, str(v->string_value)); break;
    case TENSORBOARD__HPARAMS__VALUE__KIND_BOOL_VALUE: json_builder_add_boolean_value(b, v->bool_value); break;
    case TENSORBOARD__HPARAMS__VALUE__KIND_STRUCT_VALUE:
        json_builder_begin_object(b);
        for (size_t i = 0; i < v->struct_value->n_fields; i++) {
            json_builder_set_member_name(b, str(v->struct_value->fields[i]->key));
            add_value(b, v->struct_value->fields[i]->value);
        }
        json_builder_end_object(b);
        break;
    case TENSORBOARD__HPARAMS__VALUE__KIND_LIST_VALUE:
        json_builder_begin_array(b);
        for (size_t i = 0; i < v->list_value->n_values; i++)
            add_value(b, v->list_value->values[i]);
        json_builder_end_array(b);
        break;
    default: json_builder_add_null_value(b); break;
    }
}

static void add_experiment(JsonBuilder *b, const Tensorboard__Hparams__Experiment *e)
{
    static const char *const types[] = {"unset", "string", "bool", "float64"};
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, str(e->name));
    json_builder_set_member_name(b, "description");
    json_builder_add_string_value(b, str(e->description));
    json_builder_set_member_name(b, "hparams");
    json_builder_begin_array(b);
    for (size_t i = 0; i < e->n_hparam_infos; i++) {
        const Tensorboard__Hparams__HParamInfo *h = e->hparam_infos[i];
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, str(h->name));
        json_builder_set_member_name(b, "type");
        json_builder_add_string_value(b, h->type >= 0 && h->type < 4 ? types[h->type] : "unset");
        if (h->domain_case == TENSORBOARD__HPARAMS__HPARAM_INFO__DOMAIN_DOMAIN_DISCRETE) {
            json_builder_set_member_name(b, "values");
            json_builder_begin_array(b);
            for (size_t k = 0; k < h->domain_discrete->n_values; k++)
                add_value(b, h->domain_discrete->values[k]);
            json_builder_end_array(b);
        } else if (h->domain_case == TENSORBOARD__HPARAMS__HPARAM_INFO__DOMAIN_DOMAIN_INTERVAL) {
            json_builder_set_member_name(b, "min");
            add_number(b, h->domain_interval->min_value);
            json_builder_set_member_name(b, "max");
            add_number(b, h->domain_interval->max_value);
        }
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "metrics");
    json_builder_begin_array(b);
    for (size_t i = 0; i < e->n_metric_infos; i++) {
        const Tensorboard__Hparams__MetricInfo *m = e->metric_infos[i];
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "group");
        json_builder_add_string_value(b, m->name ? str(m->name->group) : "");
        json_builder_set_member_name(b, "tag");
        json_builder_add_string_value(b, m->name ? str(m->name->tag) : "");
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
}

static void add_session_start(JsonBuilder *b, const Tensorboard__Hparams__SessionStartInfo *s)
{
    json_builder_begin_object(b);
    for (size_t i = 0; i < s->n_hparams; i++) {
        json_builder_set_member_name(b, str(s->hparams[i]->key));
        add_value(b, s->hparams[i]->value);
    }
    json_builder_end_object(b);
}

static void add_session_end(JsonBuilder *b, const Tensorboard__Hparams__SessionEndInfo *s)
{
    static const char *const statuses[] = {"unknown", "success", "failure", "running"};
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "status");
    json_builder_add_string_value(b, s->status >= 0 && s->status < 4 ? statuses[s->status] : "unknown");
    json_builder_set_member_name(b, "end_time");
    add_number(b, s->has_end_time_secs ? s->end_time_secs : NAN);
    json_builder_end_object(b);
}

char *tw__tb_hparams_json(const uint8_t *content, size_t n, ProtobufCAllocator *allocator, tw_tb_kind *kind,
                          char *why, size_t size)
{
    if (tw__pb_check(&tensorboard__hparams__hparams_plugin_data__descriptor, content, n, TW_PB_MAX_DEPTH, why, size))
        return NULL;
    Tensorboard__Hparams__HParamsPluginData *p = tensorboard__hparams__hparams_plugin_data__unpack(allocator, n, content);
    if (!p) {
        snprintf(why, size, "the hparams plugin data is not an HParamsPluginData message");
        return NULL;
    }
    JsonBuilder *b = json_builder_new();
    switch (p->data_case) {
    case TENSORBOARD__HPARAMS__HPARAMS_PLUGIN_DATA__DATA_EXPERIMENT:
        *kind = TW_TB_HPARAMS_EXPERIMENT;
        add_experiment(b, p->experiment);
        break;
    case TENSORBOARD__HPARAMS__HPARAMS_PLUGIN_DATA__DATA_SESSION_START_INFO:
        *kind = TW_TB_HPARAMS_START;
        add_session_start(b, p->session_start_info);
        break;
    case TENSORBOARD__HPARAMS__HPARAMS_PLUGIN_DATA__DATA_SESSION_END_INFO:
        *kind = TW_TB_HPARAMS_END;
        add_session_end(b, p->session_end_info);
        break;
    default:
        g_object_unref(b);
        snprintf(why, size, "the hparams plugin data holds no experiment, session start or session end");
        return NULL;
    }
    JsonNode *root = json_builder_get_root(b);
    char *json = json_to_string(root, false);
    json_node_unref(root);
    g_object_unref(b);
    return json;
}
