/* A TensorBoard log directory: which directories are runs, and their event
 * files, named and ordered as TensorBoard does. */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tfevents_internal.h"
#include "tw/engine.h"

/* Below this many levels a directory tree is either a loop (bind mounts)
 * or not a log directory. */
#define MAX_DEPTH 64

bool tw_tb_is_event_file(const char *name)
{
    return strstr(name, "tfevents") != NULL;
}

static int compare(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir (g_strfreev); with files_only, the regular event
 * files, else the subdirectories (symbolic links are not followed, so a
 * link cannot make the walk loop). NULL with a message on error. */
static char **list(const char *dir, bool files_only)
{
    GError *error = NULL;
    GDir *d = g_dir_open(dir, 0, &error);
    if (!d) {
        tw_error_set("%s: cannot read the folder: %s", dir, error->message);
        g_error_free(error);
        return NULL;
    }
    GPtrArray *names = g_ptr_array_new();
    for (const char *name; (name = g_dir_read_name(d));) {
        char *path = g_build_filename(dir, name, NULL);
        GStatBuf st;
        bool take = g_lstat(path, &st) == 0 &&
                    (files_only ? S_ISREG(st.st_mode) && tw_tb_is_event_file(name) : S_ISDIR(st.st_mode));
        g_free(path);
        if (take)
            g_ptr_array_add(names, g_strdup(name));
    }
    g_dir_close(d);
    g_ptr_array_sort(names, compare);
    g_ptr_array_add(names, NULL);
    return (char **)g_ptr_array_free(names, false);
}

char *tw__tb_run_dir(const char *logdir, const char *run)
{
    return strcmp(run, ".") ? g_build_filename(logdir, run, NULL) : g_strdup(logdir);
}

char **tw_tb_run_files(const char *run_dir)
{
    char **names = list(run_dir, true);
    for (int i = 0; names && names[i]; i++) {
        char *path = g_build_filename(run_dir, names[i], NULL);
        g_free(names[i]);
        names[i] = path;
    }
    return names;
}

static void walk(const char *dir, const char *relative, int depth, GPtrArray *runs)
{
    char **files = list(dir, true);
    if (files && files[0])
        g_ptr_array_add(runs, g_strdup(relative));
    g_strfreev(files);
    char **subdirs = depth < MAX_DEPTH ? list(dir, false) : NULL;
    for (int i = 0; subdirs && subdirs[i]; i++) {
        char *path = g_build_filename(dir, subdirs[i], NULL);
        char *rel = strcmp(relative, ".") ? g_build_filename(relative, subdirs[i], NULL) : g_strdup(subdirs[i]);
        walk(path, rel, depth + 1, runs);
        g_free(rel);
        g_free(path);
    }
    g_strfreev(subdirs);
    tw_error_clear(); /* an unreadable subfolder is not the log directory's failure */
}

int tw__tb_check_logdir(const char *logdir)
{
    GStatBuf st;
    if (g_stat(logdir, &st))
        return tw_error_set("%s: %s", logdir, errno == ENOENT ? "no such folder" : g_strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return tw_error_set("%s: not a folder", logdir);
    char **names = list(logdir, false); /* readable */
    if (!names)
        return -1;
    g_strfreev(names);
    return 0;
}

char **tw_tb_list_runs(const char *logdir)
{
    if (tw__tb_check_logdir(logdir))
        return NULL;
    char **top = list(logdir, false);
    if (!top)
        return NULL;
    g_strfreev(top);
    GPtrArray *runs = g_ptr_array_new();
    walk(logdir, ".", 0, runs);
    g_ptr_array_sort(runs, compare);
    g_ptr_array_add(runs, NULL);
    return (char **)g_ptr_array_free(runs, false);
}
