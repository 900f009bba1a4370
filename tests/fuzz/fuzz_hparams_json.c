/* libFuzzer target for the HParams table's fast reader of run objects
 * (ui/hparams_json.c), against json-glib: whatever the fast reader
 * accepts, json-glib must read as an object with the same flattened
 * members, kinds, numbers and strings; what it refuses it leaves
 * unchanged. */
#include <math.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include <tw/json_check.h>

#include "fuzz_check.h"
#include "hparams_json.h"

/* json-glib's members, flattened as the table does, into name -> member. */
static void flatten(JsonNode *node, const char *prefix, GStringChunk *chunk, GHashTable *out)
{
    if (JSON_NODE_HOLDS_OBJECT(node)) {
        JsonObject *o = json_node_get_object(node);
        GList *members = json_object_get_members(o);
        for (GList *m = members; m; m = m->next) {
            char *name = *prefix ? g_strconcat(prefix, ".", m->data, NULL) : g_strdup(m->data);
            flatten(json_object_get_member(o, m->data), g_string_chunk_insert_const(chunk, name), chunk, out);
            g_free(name);
        }
        g_list_free(members);
        return;
    }
    if (!*prefix)
        return;
    tw_hp_json_member *m = g_new0(tw_hp_json_member, 1);
    m->name = prefix;
    FUZZ_ASSERT(!JSON_NODE_HOLDS_ARRAY(node)); /* the fast reader leaves arrays to json-glib */
    if (JSON_NODE_HOLDS_VALUE(node)) {
        GType type = json_node_get_value_type(node);
        if (type == G_TYPE_BOOLEAN) {
            m->kind = TW_HP_BOOL;
            m->number = json_node_get_boolean(node);
        } else if (type == G_TYPE_INT64 || type == G_TYPE_DOUBLE) {
            m->kind = TW_HP_NUMBER;
            m->number = json_node_get_double(node);
        } else {
            m->kind = TW_HP_STRING;
            m->text = g_string_chunk_insert_const(chunk, json_node_get_string(node));
        }
    }
    g_hash_table_replace(out, (gpointer)m->name, m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = g_strndup((const char *)data, size);
    if (tw_json_too_deep(text, -1) >= 0) { /* the table refuses those before reading */
        g_free(text);
        return 0;
    }
    GStringChunk *chunk = g_string_chunk_new(256);
    GArray *out = g_array_new(FALSE, FALSE, sizeof(tw_hp_json_member));
    tw_hp_json_member sentinel = {"x", TW_HP_MISSING, 0, NULL};
    g_array_append_val(out, sentinel);
    bool ok = tw_hp_json_read(text, chunk, out);
    if (!ok)
        FUZZ_ASSERT(out->len == 1);
    else {
        GHashTable *fast = g_hash_table_new(g_str_hash, g_str_equal);
        for (guint i = 1; i < out->len; i++) {
            tw_hp_json_member *m = &g_array_index(out, tw_hp_json_member, i);
            FUZZ_ASSERT(g_hash_table_insert(fast, (gpointer)m->name, m)); /* each name once */
        }
        JsonParser *parser = json_parser_new();
        FUZZ_ASSERT(json_parser_load_from_data(parser, text, -1, NULL));
        FUZZ_ASSERT(JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser)));
        GHashTable *slow = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
        flatten(json_parser_get_root(parser), "", chunk, slow);
        FUZZ_ASSERT(g_hash_table_size(fast) == g_hash_table_size(slow));
        GHashTableIter it;
        gpointer key, value;
        g_hash_table_iter_init(&it, slow);
        while (g_hash_table_iter_next(&it, &key, &value)) {
            const tw_hp_json_member *s = value, *f = g_hash_table_lookup(fast, key);
            FUZZ_ASSERT(f && f->kind == s->kind);
            if (s->kind == TW_HP_STRING)
                FUZZ_ASSERT(!strcmp(f->text, s->text));
            else
                FUZZ_ASSERT(f->number == s->number || fabs(f->number - s->number) <= 1e-12 * fabs(s->number));
        }
        g_hash_table_unref(slow);
        g_hash_table_unref(fast);
        g_object_unref(parser);
    }
    g_array_unref(out);
    g_string_chunk_free(chunk);
    g_free(text);
    return 0;
}
