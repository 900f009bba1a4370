/* The window's training data (see train_data_cache.h). An entry is shared
 * by the cache and the load running for it (a reference each); the load's
 * thread touches only its own job, and the result moves into the entry on
 * the main loop. */
#include "train_data_cache.h"

#include <string.h>

#include <glib/gstdio.h>
#include <gio/gio.h>

#define KEPT_LOADED 3 /* loaded data choices kept at once */

struct twb_data_cache {
    GHashTable *entries; /* key -> entry */
    void (*loaded)(gpointer user_data);
    gpointer user_data;
    guint64 clock; /* counts lookups, for dropping the least recently used */
};

typedef struct {
    twb_data_cache *cache; /* NULL once the cache is gone */
    twb_data_state state;
    twb_data data;
    char *error;
    guint64 used;
} entry;

/* What a load's thread works on. */
typedef struct {
    char *data, *labels, *label_column;
    char **more_data;
    uint64_t seed;
    twb_data loaded;
    char *error;
} job;

static void entry_clear(gpointer data)
{
    entry *e = data;
    twb_data_clear(&e->data);
    g_free(e->error);
}

static void entry_unref(gpointer e)
{
    g_rc_box_release_full(e, entry_clear);
}

static void job_free(gpointer data)
{
    job *j = data;
    g_free(j->data);
    g_strfreev(j->more_data);
    g_free(j->labels);
    g_free(j->label_column);
    twb_data_clear(&j->loaded);
    g_free(j->error);
    g_free(j);
}

/* A file as its path, size and modification time ("" when it cannot be read:
 * the load then names the problem). */
static void append_file(GString *key, const char *path)
{
    GStatBuf st;
    g_string_append_printf(key, "\x1f%s", path ? path : "");
    if (path && !g_stat(path, &st))
        g_string_append_printf(key, "\x1f%lld\x1f%lld", (long long)st.st_size, (long long)st.st_mtime);
}

/* Everything the loaded data depends on. */
static char *key_of(const twb_data_spec *spec)
{
    GString *key = g_string_new(spec->data);
    bool seeded;
    if (twb_data_is_builtin(spec->data, &seeded)) {
        if (seeded)
            g_string_append_printf(key, "\x1f%" G_GUINT64_FORMAT, spec->seed);
    } else {
        append_file(key, spec->data);
        for (int k = 0; spec->more_data && spec->more_data[k]; k++)
            append_file(key, spec->more_data[k]);
        append_file(key, spec->labels);
        g_string_append_printf(key, "\x1f%s", spec->label_column ? spec->label_column : "");
    }
    return g_string_free(key, FALSE);
}

twb_data_cache *twb_data_cache_new(void (*loaded)(gpointer user_data), gpointer user_data)
{
    twb_data_cache *c = g_new0(twb_data_cache, 1);
    c->entries = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, entry_unref);
    c->loaded = loaded;
    c->user_data = user_data;
    return c;
}

void twb_data_cache_free(twb_data_cache *c)
{
    if (!c)
        return;
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, c->entries);
    while (g_hash_table_iter_next(&it, NULL, &value))
        ((entry *)value)->cache = NULL;
    g_hash_table_destroy(c->entries);
    g_free(c);
}

twb_data_state twb_data_cache_lookup(twb_data_cache *c, const twb_data_spec *spec, const twb_data **data,
                                     const char **error)
{
    char *key = key_of(spec);
    entry *e = g_hash_table_lookup(c->entries, key);
    g_free(key);
    if (!e)
        return TWB_DATA_ABSENT;
    e->used = ++c->clock;
    if (data)
        *data = e->state == TWB_DATA_READY ? &e->data : NULL;
    if (error)
        *error = e->error;
    return e->state;
}

/* Keep the KEPT_LOADED most recently used loaded choices. */
static void drop_old(twb_data_cache *c)
{
    for (;;) {
        GHashTableIter it;
        gpointer key, value, oldest = NULL;
        guint loaded = 0;
        g_hash_table_iter_init(&it, c->entries);
        while (g_hash_table_iter_next(&it, &key, &value)) {
            entry *e = value;
            if (e->state != TWB_DATA_READY)
                continue;
            loaded++;
            if (!oldest || e->used < ((entry *)g_hash_table_lookup(c->entries, oldest))->used)
                oldest = key;
        }
        if (loaded <= KEPT_LOADED)
            return;
        g_hash_table_remove(c->entries, oldest);
    }
}

static void load_on_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
    job *j = data;
    twb_data_spec spec = {.data = j->data, .more_data = (const char *const *)j->more_data, .labels = j->labels,
                          .label_column = j->label_column, .seed = j->seed};
    if (twb_data_load(&spec, &j->loaded))
        j->error = g_strdup(tw_last_error());
    g_task_return_boolean(task, TRUE);
}

static void on_loaded(GObject *source, GAsyncResult *result, gpointer data)
{
    entry *e = data;
    job *j = g_task_get_task_data(G_TASK(result));
    twb_data_cache *c = e->cache;
    if (c) {
        e->state = j->error ? TWB_DATA_FAILED : TWB_DATA_READY;
        e->data = j->loaded;
        e->error = g_steal_pointer(&j->error);
        memset(&j->loaded, 0, sizeof j->loaded);
        e->used = ++c->clock;
        drop_old(c);
    }
    entry_unref(e);
    if (c && c->loaded)
        c->loaded(c->user_data);
}

void twb_data_cache_load(twb_data_cache *c, const twb_data_spec *spec)
{
    char *key = key_of(spec);
    if (g_hash_table_contains(c->entries, key)) {
        g_free(key);
        return;
    }
    entry *e = g_rc_box_new0(entry);
    e->cache = c;
    e->state = TWB_DATA_LOADING;
    e->used = ++c->clock;
    g_hash_table_insert(c->entries, key, e);
    job *j = g_new0(job, 1);
    j->data = g_strdup(spec->data);
    j->more_data = g_strdupv((char **)spec->more_data);
    j->labels = g_strdup(spec->labels);
    j->label_column = g_strdup(spec->label_column);
    j->seed = spec->seed;
    GTask *task = g_task_new(NULL, NULL, on_loaded, g_rc_box_acquire(e));
    g_task_set_task_data(task, j, job_free);
    g_task_set_name(task, "twb-load-data");
    g_task_run_in_thread(task, load_on_thread);
    g_object_unref(task);
}
