/* The store handle and its runs: opening the default or a named file,
 * listing runs, renaming, deleting (with all their series), notes, colour,
 * pin, the sweep a run belongs to, and the trash (delete with undo). */
#include <errno.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "tw/error.h"
#include "store_internal.h"

/* ---- names ---------------------------------------------------------------- */

static const char *const status_names[] = {"running", "finished", "stopped", "failed", "interrupted"};
static const char *const kind_names[] = {"scalar", "histogram", "text", "graph", "image", "tensor"};

static int parse_name(const char *const *names, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

const char *tw_run_status_name(tw_run_status status)
{
    return (unsigned)status < G_N_ELEMENTS(status_names) ? status_names[status] : "unknown";
}

int tw__run_status_parse(const char *name)
{
    return parse_name(status_names, G_N_ELEMENTS(status_names), name);
}

const char *tw__series_kind_name(tw_series_kind kind)
{
    return (unsigned)kind < G_N_ELEMENTS(kind_names) ? kind_names[kind] : "unknown";
}

int tw__series_kind_parse(const char *name)
{
    return parse_name(kind_names, G_N_ELEMENTS(kind_names), name);
}

/* ---- opening -------------------------------------------------------------- */

char *tw_run_store_default_path(void)
{
    return g_build_filename(g_get_user_data_dir(), "twb", "runs.db", NULL);
}

tw_run_store *tw_run_store_open(const char *path, unsigned flags)
{
    bool read_only = flags & TW_STORE_READ_ONLY;
    char *file = path ? g_strdup(path) : tw_run_store_default_path();
    if (!path && !read_only) {
        char *folder = g_path_get_dirname(file);
        int made = g_mkdir_with_parents(folder, 0700);
        if (made != 0)
            tw_error_set("%s: cannot create the folder: %s", folder, g_strerror(errno));
        g_free(folder);
        if (made != 0) {
            g_free(file);
            return NULL;
        }
    }
    sqlite3 *db = tw__store_connect(file, read_only);
    int version = db ? tw__store_schema_version(db, file) : -1;
    if (version < 0) {
        sqlite3_close(db);
        g_free(file);
        return NULL;
    }
    tw_run_store *store = g_new(tw_run_store, 1);
    *store = (tw_run_store){db, file, read_only, version, tw__store_statements_new()};
    return store;
}

void tw_run_store_close(tw_run_store *store)
{
    if (!store)
        return;
    g_hash_table_unref(store->statements); /* finalized before the connection closes */
    sqlite3_close(store->db);
    g_free(store->path);
    g_free(store);
}

const char *tw_run_store_path(const tw_run_store *store)
{
    return store->path;
}

/* ---- reading runs --------------------------------------------------------- */

#define RUN_COLUMNS                                                                                                  \
    "id, name, status, start_time, end_time, host, pid, process_start_time, model_json, hparams_json, "              \
    "metrics_json, notes, logs_lost_from_step, logs_lost_reason, "

/* "SELECT <the run columns> FROM runs WHERE <not trashed> AND <where>
 * <order>" (g_free): an older file, read as it is, lacks the later
 * columns (and has no trash). */
static char *select_runs(const tw_run_store *store, const char *where, const char *order)
{
    return g_strconcat("SELECT " RUN_COLUMNS, store->version >= 2 ? "failure_reason, " : "NULL, ",
                       store->version >= 3 ? "color, pinned, sweep" : "NULL, 0, NULL", " FROM runs WHERE ",
                       store->version >= 3 ? "trashed_at IS NULL AND " : "", where, " ", order, NULL);
}

static char *column_text(sqlite3_stmt *stmt, int i)
{
    const unsigned char *text = sqlite3_column_text(stmt, i);
    return text ? g_strdup((const char *)text) : NULL;
}

/* A run row as RUN_COLUMNS selects it. A read-only store cannot mark dead
 * writers' runs, so it reports them as the marking would leave them. */
static void read_run(const tw_run_store *store, sqlite3_stmt *stmt, tw_run_info *run)
{
    int status = tw__run_status_parse((const char *)sqlite3_column_text(stmt, 2));
    *run = (tw_run_info){
        .id = sqlite3_column_int64(stmt, 0),
        .name = column_text(stmt, 1),
        .status = status < 0 ? TW_RUN_FAILED : (tw_run_status)status,
        .start_time = sqlite3_column_double(stmt, 3),
        .end_time = tw__column_real(stmt, 4),
        .host = column_text(stmt, 5),
        .pid = sqlite3_column_int64(stmt, 6),
        .model_json = column_text(stmt, 8),
        .hparams_json = column_text(stmt, 9),
        .metrics_json = column_text(stmt, 10),
        .notes = column_text(stmt, 11),
        .logs_lost_from_step = sqlite3_column_type(stmt, 12) == SQLITE_NULL ? -1 : sqlite3_column_int64(stmt, 12),
        .logs_lost_reason = column_text(stmt, 13),
        .failure_reason = column_text(stmt, 14),
        .color = column_text(stmt, 15),
        .pinned = sqlite3_column_int(stmt, 16) != 0,
        .sweep = column_text(stmt, 17),
    };
    /* A damaged file may hold NULLs where the writer always writes text. */
    if (!run->notes)
        run->notes = g_strdup("");
    if (!run->name)
        run->name = g_strdup("");
    if (!run->host)
        run->host = g_strdup("");
    if (store->read_only && run->status == TW_RUN_RUNNING &&
        tw__writer_dead(run->host, run->pid, sqlite3_column_int64(stmt, 7))) {
        run->status = TW_RUN_INTERRUPTED;
        run->end_time = tw__run_last_row_time(store->db, run->id);
    }
}

void tw_run_info_clear(tw_run_info *run)
{
    g_free(run->name);
    g_free(run->host);
    g_free(run->model_json);
    g_free(run->hparams_json);
    g_free(run->metrics_json);
    g_free(run->notes);
    g_free(run->logs_lost_reason);
    g_free(run->failure_reason);
    g_free(run->color);
    g_free(run->sweep);
    *run = (tw_run_info){0};
}

void tw_run_info_free(tw_run_info *runs, int n)
{
    for (int i = 0; runs && i < n; i++)
        tw_run_info_clear(&runs[i]);
    g_free(runs);
}

int tw_run_store_list_runs(tw_run_store *store, tw_run_info **runs, int *n)
{
    *runs = NULL;
    *n = 0;
    sqlite3_stmt *stmt = NULL;
    char *sql = select_runs(store, "1", "ORDER BY start_time, id");
    int rc = tw__store_statement(store, sql, &stmt);
    g_free(sql);
    GArray *list = g_array_new(FALSE, FALSE, sizeof(tw_run_info));
    while (rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        tw_run_info run;
        read_run(store, stmt, &run);
        g_array_append_val(list, run);
        rc = SQLITE_OK;
    }
    int count = (int)list->len;
    tw_run_info *array = (tw_run_info *)g_array_free(list, FALSE);
    int status = rc == SQLITE_DONE ? 0 : tw__store_sqlite_error(store->db, store->path, "cannot list the runs");
    tw__store_statement_done(stmt);
    if (status) {
        tw_run_info_free(array, count);
        return -1;
    }
    *runs = array;
    *n = count;
    return 0;
}

int tw_run_store_get_run(tw_run_store *store, const char *name, tw_run_info *run)
{
    *run = (tw_run_info){0};
    sqlite3_stmt *stmt = NULL;
    char *sql = select_runs(store, "name = ?1", "");
    int rc = tw__store_statement(store, sql, &stmt);
    g_free(sql);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW)
        read_run(store, stmt, run);
    else if (rc == SQLITE_DONE)
        tw_error_set("%s: no run named '%s'", store->path, name);
    else
        tw__store_sqlite_error(store->db, store->path, "cannot read the run");
    tw__store_statement_done(stmt);
    return rc == SQLITE_ROW ? 0 : -1;
}

/* ---- changing runs -------------------------------------------------------- */

static int check_writable(const tw_run_store *store, const char *name)
{
    if (!name)
        return tw_error_set("%s: no run named", store->path);
    if (store->read_only)
        return tw_error_set("%s: opened read-only: cannot change run '%s'", store->path, name);
    return 0;
}

/* Runs one statement binding the run's name and up to one more text; fails
 * with "no run named" when it changed no row. */
static int change_run(tw_run_store *store, const char *sql, const char *name, const char *value, const char *what)
{
    if (check_writable(store, name))
        return -1;
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(store->db, sql, -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK && value)
        rc = sqlite3_bind_text(stmt, 2, value, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    int status = -1;
    if (rc == SQLITE_DONE && sqlite3_changes(store->db) == 1)
        status = 0;
    else if (rc == SQLITE_DONE)
        tw_error_set("%s: no run named '%s'", store->path, name);
    else if (rc == SQLITE_CONSTRAINT && value) /* the unique name */
        tw_error_set("%s: cannot rename run '%s': a run named '%s' exists already", store->path, name, value);
    else
        tw__store_sqlite_error(store->db, store->path, what);
    sqlite3_finalize(stmt);
    return status;
}

int tw_run_store_rename_run(tw_run_store *store, const char *name, const char *new_name)
{
    if (!new_name || !new_name[0])
        return tw_error_set("%s: cannot rename run '%s': the new name is empty", store->path, name ? name : "");
    return change_run(store, "UPDATE runs SET name = ?2 WHERE name = ?1", name, new_name, "cannot rename the run");
}

int tw_run_store_set_notes(tw_run_store *store, const char *name, const char *notes)
{
    return change_run(store, "UPDATE runs SET notes = ?2 WHERE name = ?1", name, notes ? notes : "",
                      "cannot set the notes");
}

/* A run still being written would have its writer fail on every row. */
int tw_run_store_delete_run(tw_run_store *store, const char *name)
{
    if (check_writable(store, name))
        return -1;
    tw_run_info run;
    if (tw_run_store_get_run(store, name, &run))
        return -1;
    int status = 0;
    if (run.status == TW_RUN_RUNNING && strcmp(run.host, tw__store_host()) == 0)
        status = tw_error_set("%s: run '%s' is still being written (process %lld); stop it first", store->path, name,
                              (long long)run.pid);
    tw_run_info_clear(&run);
    if (status)
        return -1;
    return change_run(store, "DELETE FROM runs WHERE name = ?1", name, NULL, "cannot delete the run");
}

/* "#rrggbb": what the window's colour chooser writes and reads back. */
static bool is_hex_color(const char *color)
{
    if (strlen(color) != 7 || color[0] != '#')
        return false;
    for (int i = 1; i < 7; i++)
        if (!g_ascii_isxdigit(color[i]))
            return false;
    return true;
}

int tw_run_store_set_color(tw_run_store *store, const char *name, const char *color)
{
    if (color && !*color)
        color = NULL;
    if (color && !is_hex_color(color))
        return tw_error_set("%s: cannot colour run '%s': '%s' is not a colour of the form #rrggbb", store->path,
                            name ? name : "", color);
    return change_run(store, "UPDATE runs SET color = ?2 WHERE name = ?1", name, color, "cannot set the colour");
}

int tw_run_store_set_pinned(tw_run_store *store, const char *name, bool pinned)
{
    return change_run(store, "UPDATE runs SET pinned = ?2 WHERE name = ?1", name, pinned ? "1" : "0",
                      "cannot pin the run");
}

int tw_run_store_set_sweep(tw_run_store *store, const char *name, const char *sweep)
{
    return change_run(store, "UPDATE runs SET sweep = ?2 WHERE name = ?1", name, sweep && *sweep ? sweep : NULL,
                      "cannot tag the run with its sweep");
}

/* ---- the trash ------------------------------------------------------------ */

#define NOW_SQL "((julianday('now') - 2440587.5) * 86400.0)"

int tw_run_store_trash_run(tw_run_store *store, const char *name)
{
    if (check_writable(store, name))
        return -1;
    tw_run_info run;
    if (tw_run_store_get_run(store, name, &run)) /* a trashed run is not found: trashed once */
        return -1;
    int status = 0;
    if (run.status == TW_RUN_RUNNING && strcmp(run.host, tw__store_host()) == 0)
        status = tw_error_set("%s: run '%s' is still being written (process %lld); stop it first", store->path, name,
                              (long long)run.pid);
    tw_run_info_clear(&run);
    if (status)
        return -1;
    return change_run(store, "UPDATE runs SET trashed_at = " NOW_SQL " WHERE name = ?1 AND trashed_at IS NULL", name,
                      NULL, "cannot move the run to the trash");
}

int tw_run_store_untrash_run(tw_run_store *store, const char *name)
{
    if (change_run(store, "UPDATE runs SET trashed_at = NULL WHERE name = ?1 AND trashed_at IS NOT NULL", name, NULL,
                   "cannot take the run out of the trash") == 0)
        return 0;
    return check_writable(store, name) ? -1
                                       : tw_error_set("%s: no run named '%s' in the trash", store->path, name);
}

int tw_run_store_empty_trash(tw_run_store *store, int *n)
{
    if (n)
        *n = 0;
    if (store->read_only)
        return tw_error_set("%s: opened read-only: cannot empty the trash", store->path);
    if (tw__store_exec(store->db, store->path, "DELETE FROM runs WHERE trashed_at IS NOT NULL"))
        return -1;
    if (n)
        *n = sqlite3_changes(store->db);
    return 0;
}
