/* The containers of dashboard_batch.h. */
#include "dashboard_batch.h"

#include <string.h>

#include "series_view.h"

gint64 *tw_id_key_new(gint64 id)
{
    return g_memdup2(&id, sizeof id);
}

GHashTable *tw_id_table_new(GDestroyNotify free_value)
{
    return g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, free_value);
}

void tw_tag_table_free(tw_tag_table *t)
{
    if (!t)
        return;
    g_strfreev(t->names);
    g_free(t->kinds);
    g_free(t->ids);
    g_free(t);
}

tw_tag_table *tw_tag_table_copy(const tw_tag_table *t)
{
    tw_tag_table *copy = g_memdup2(t, sizeof *t);
    copy->names = g_strdupv(t->names);
    copy->kinds = g_memdup2(t->kinds, sizeof *t->kinds * (size_t)t->n_names);
    copy->ids = g_memdup2(t->ids, sizeof *t->ids * (size_t)t->n_names * (size_t)t->n_runs);
    return copy;
}

gboolean tw_tag_table_equal(const tw_tag_table *a, const tw_tag_table *b)
{
    if (!a || !b || a->n_names != b->n_names || a->n_runs != b->n_runs)
        return FALSE;
    for (int i = 0; i < a->n_names; i++)
        if (strcmp(a->names[i], b->names[i]) || a->kinds[i] != b->kinds[i])
            return FALSE;
    return !memcmp(a->ids, b->ids, sizeof *a->ids * (size_t)a->n_names * (size_t)a->n_runs);
}

void tw_histogram_list_free(tw_histogram_list *list)
{
    tw_histogram_free(list->histograms, list->n);
    g_free(list);
}

tw_dashboard_batch *tw_dashboard_batch_new(void)
{
    tw_dashboard_batch *b = g_new0(tw_dashboard_batch, 1);
    b->views = tw_id_table_new((GDestroyNotify)tw_series_view_unref);
    b->histograms = tw_id_table_new((GDestroyNotify)tw_histogram_list_free);
    b->series_errors = tw_id_table_new(g_free);
    return b;
}

void tw_dashboard_batch_free(tw_dashboard_batch *b)
{
    tw_run_info_free(b->runs, b->n_runs);
    tw_tag_table_free(b->tags);
    g_free(b->error);
    g_free(b->path);
    g_hash_table_unref(b->views);
    g_hash_table_unref(b->histograms);
    g_hash_table_unref(b->series_errors);
    g_free(b);
}

gboolean tw_dashboard_batch_empty(const tw_dashboard_batch *b)
{
    return !b->reset && !b->has_runs && !b->tags && !b->has_error && !g_hash_table_size(b->views) &&
           !g_hash_table_size(b->histograms) && !g_hash_table_size(b->series_errors);
}

static void move_entries(GHashTable *into, GHashTable *from)
{
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, from);
    while (g_hash_table_iter_next(&iter, &key, &value)) {
        g_hash_table_iter_steal(&iter);
        g_hash_table_replace(into, key, value);
    }
}

void tw_dashboard_batch_merge(tw_dashboard_batch *into, tw_dashboard_batch *from)
{
    if (from->reset) {
        into->reset = TRUE;
        g_hash_table_remove_all(into->views);
        g_hash_table_remove_all(into->histograms);
        g_hash_table_remove_all(into->series_errors);
    }
    if (from->has_runs) {
        tw_run_info_free(into->runs, into->n_runs);
        into->has_runs = TRUE;
        into->runs = g_steal_pointer(&from->runs);
        into->n_runs = from->n_runs;
    }
    if (from->tags) {
        tw_tag_table_free(into->tags);
        into->tags = g_steal_pointer(&from->tags);
    }
    if (from->has_error) {
        g_free(into->error);
        into->has_error = TRUE;
        into->error = g_steal_pointer(&from->error);
    }
    move_entries(into->views, from->views);
    move_entries(into->histograms, from->histograms);
    move_entries(into->series_errors, from->series_errors);
    tw_dashboard_batch_free(from);
}

void tw_dashboard_requests_init(tw_dashboard_requests *r)
{
    r->path = NULL;
    r->views = tw_id_table_new(g_free);
    r->watches = tw_id_table_new(NULL);
    r->histograms = tw_id_table_new(NULL);
}

void tw_dashboard_requests_clear(tw_dashboard_requests *r)
{
    g_free(r->path);
    g_hash_table_unref(r->views);
    g_hash_table_unref(r->watches);
    g_hash_table_unref(r->histograms);
}
