/* The statements a store runs again and again (store_internal.h): the
 * dashboard's reader polls every 50 ms, and preparing its statements
 * afresh each time was most of its CPU. Each SQL text is prepared once per
 * connection (SQLITE_PREPARE_PERSISTENT: kept in SQLite's long-lived
 * memory) and kept until the store closes. SQLite prepares a kept
 * statement again by itself when the schema has changed under it (another
 * connection created a table, migrated); a file replaced on disk is a new
 * store, with statements of its own. Also the file's data version, which
 * tells a poller whether there is anything new to read at all. */
#include <glib.h>

#include "tw/error.h"
#include "store_internal.h"

int tw__store_statement(tw_run_store *store, const char *sql, sqlite3_stmt **stmt)
{
    *stmt = g_hash_table_lookup(store->statements, sql);
    if (*stmt) {
        /* Each caller is done with it before the next use (statement_done);
         * one in use would be the same SQL nested in itself. */
        g_return_val_if_fail(!sqlite3_stmt_busy(*stmt), SQLITE_MISUSE);
        return SQLITE_OK;
    }
    int rc = sqlite3_prepare_v3(store->db, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(*stmt);
        *stmt = NULL;
        return rc;
    }
    g_hash_table_insert(store->statements, g_strdup(sql), *stmt);
    return SQLITE_OK;
}

/* Reset at once: a statement left stepping would hold its read
 * transaction, so the next poll would see the file as it was. The
 * bindings go too: a text bound SQLITE_STATIC is the caller's, freed
 * after the call. */
void tw__store_statement_done(sqlite3_stmt *stmt)
{
    if (!stmt)
        return;
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
}

int tw__store_run(tw_run_store *store, const char *sql)
{
    sqlite3_stmt *stmt;
    int rc = tw__store_statement(store, sql, &stmt);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    tw__store_statement_done(stmt);
    return rc;
}

int tw__store_read_begin(tw_run_store *store, bool *began)
{
    *began = sqlite3_get_autocommit(store->db) != 0;
    return *began ? tw__store_run(store, "BEGIN") : SQLITE_DONE;
}

/* SQLite may have rolled the transaction back itself (an I/O error):
 * then there is nothing to commit. */
void tw__store_read_end(tw_run_store *store, bool began)
{
    if (began && !sqlite3_get_autocommit(store->db))
        tw__store_run(store, "COMMIT");
}

int tw_run_store_read_begin(tw_run_store *store)
{
    if (!sqlite3_get_autocommit(store->db))
        return tw_error_set("%s: read_begin: a transaction is open already", store->path);
    return tw__store_run(store, "BEGIN") == SQLITE_DONE
               ? 0
               : tw__store_sqlite_error(store->db, store->path, "cannot begin reading");
}

void tw_run_store_read_end(tw_run_store *store)
{
    tw__store_read_end(store, true);
}

static void finalize(gpointer stmt)
{
    sqlite3_finalize(stmt);
}

GHashTable *tw__store_statements_new(void)
{
    return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, finalize);
}

int tw_run_store_data_version(tw_run_store *store, int64_t *version)
{
    sqlite3_stmt *stmt;
    int rc = tw__store_statement(store, "PRAGMA data_version", &stmt);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW)
        *version = sqlite3_column_int64(stmt, 0);
    else
        tw__store_sqlite_error(store->db, store->path, "cannot tell whether the file changed");
    tw__store_statement_done(stmt);
    return rc == SQLITE_ROW ? 0 : -1;
}
