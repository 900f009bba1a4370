/* Whether a run's writer still lives. A run records the host, pid and
 * process start time of the process writing it; on the same host, a pid
 * that is gone, or that now belongs to a process started at another time
 * (pids are reused), means the writer died without closing the run. Runs
 * of other hosts cannot be judged and stay as they are. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tw/error.h"
#include "store_internal.h"

const char *tw__store_host(void)
{
    return g_get_host_name();
}

/* Field 22 of /proc/PID/stat, after the command name in parentheses (which
 * may itself hold spaces and parentheses: the last ')' ends it). */
int64_t tw__process_start_time(int64_t pid)
{
    if (pid <= 0)
        return -1;
    char path[64], *text = NULL;
    snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return -1;
    const char *rest = strrchr(text, ')');
    char state = 0;
    long long start = -1;
    /* state, then fields 4 to 21 skipped, then the start time. */
    if (!rest || sscanf(rest + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %lld",
                        &state, &start) != 2)
        start = -1;
    g_free(text);
    /* A zombie (Z) or dead (X) process writes nothing any more. */
    return state == 'Z' || state == 'X' ? -1 : start;
}

bool tw__writer_dead(const char *host, int64_t pid, int64_t process_start_time)
{
    if (!host || strcmp(host, tw__store_host()) != 0)
        return false;
    int64_t now = tw__process_start_time(pid);
    return now < 0 || now != process_start_time;
}

double tw__run_last_row_time(sqlite3 *db, int64_t run_id)
{
    static const char sql[] =
        "SELECT max(t) FROM ("
        "  SELECT start_time AS t FROM runs WHERE id = ?1"
        "  UNION ALL SELECT max(c.last_wall_time) FROM scalar_chunks c JOIN tags g ON g.id = c.tag_id "
        "    WHERE g.run_id = ?1"
        "  UNION ALL SELECT max(h.wall_time) FROM histograms h JOIN tags g ON g.id = h.tag_id WHERE g.run_id = ?1"
        "  UNION ALL SELECT max(x.wall_time) FROM texts x JOIN tags g ON g.id = x.tag_id WHERE g.run_id = ?1)";
    sqlite3_stmt *stmt = NULL;
    double t = NAN;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) == SQLITE_OK && sqlite3_bind_int64(stmt, 1, run_id) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_type(stmt, 0) != SQLITE_NULL)
        t = sqlite3_column_double(stmt, 0);
    sqlite3_finalize(stmt);
    return t;
}

/* The ids of this host's running runs whose writer is dead. */
static int find_dead(sqlite3 *db, const char *path, GArray *ids)
{
    sqlite3_stmt *find = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT id, pid, process_start_time FROM runs WHERE status = 'running' AND host = ?1",
                                -1, &find, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(find, 1, tw__store_host(), -1, SQLITE_STATIC);
    while (rc == SQLITE_OK && (rc = sqlite3_step(find)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(find, 0);
        if (tw__writer_dead(tw__store_host(), sqlite3_column_int64(find, 1), sqlite3_column_int64(find, 2)))
            g_array_append_val(ids, id);
        rc = SQLITE_OK;
    }
    if (rc != SQLITE_DONE)
        tw__store_sqlite_error(db, path, "cannot read the runs");
    sqlite3_finalize(find);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* One write transaction, taken only when there is something to mark. */
int tw__store_mark_interrupted(sqlite3 *db, const char *path)
{
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(int64_t));
    int status = find_dead(db, path, ids);
    if (status == 0 && ids->len > 0) {
        sqlite3_stmt *mark = NULL;
        int rc = tw__store_exec(db, path, "BEGIN IMMEDIATE") ? SQLITE_ERROR : SQLITE_OK;
        if (rc == SQLITE_OK)
            rc = sqlite3_prepare_v2(db,
                                    "UPDATE runs SET status = 'interrupted', end_time = ?2 "
                                    "WHERE id = ?1 AND status = 'running'",
                                    -1, &mark, NULL);
        for (guint i = 0; rc == SQLITE_OK && i < ids->len; i++) {
            int64_t id = g_array_index(ids, int64_t, i);
            double end = tw__run_last_row_time(db, id);
            sqlite3_bind_int64(mark, 1, id);
            sqlite3_bind_double(mark, 2, isnan(end) ? g_get_real_time() / 1e6 : end);
            rc = sqlite3_step(mark) == SQLITE_DONE ? sqlite3_reset(mark) : sqlite3_errcode(db);
        }
        sqlite3_finalize(mark);
        status = rc == SQLITE_OK ? tw__store_exec(db, path, "COMMIT") : -1;
        if (status) {
            if (rc != SQLITE_OK)
                tw__store_sqlite_error(db, path, "cannot mark the interrupted runs");
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        }
    }
    g_array_free(ids, TRUE);
    return status;
}

/* A survivor's record of why a dead writer's run ended (a data-parallel
 * run whose rank 0 was killed, recorded by rank 1): failed with reason,
 * ending at its last row. Opening the store already marked it interrupted
 * when the writer's process is gone, so both states are taken. */
int tw_run_store_fail_dead_run(tw_run_store *store, int64_t run_id, const char *reason)
{
    if (store->read_only)
        return tw_error_set("%s: opened read-only: cannot mark run %lld failed", store->path, (long long)run_id);
    sqlite3_stmt *stmt = NULL;
    double end = tw__run_last_row_time(store->db, run_id);
    int rc = sqlite3_prepare_v2(store->db,
                                "UPDATE runs SET status = 'failed', end_time = ?2, failure_reason = ?3 "
                                "WHERE id = ?1 AND status IN ('running', 'interrupted')",
                                -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 1, run_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_double(stmt, 2, isnan(end) ? g_get_real_time() / 1e6 : end);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(stmt, 3, reason && *reason ? reason : NULL, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE)
        return tw__store_sqlite_error(store->db, store->path, "cannot mark the run failed");
    return 0;
}
