/* Running twb for the command-line tests. */
#include "twb_run.h"

#include <glib.h>
#include <stdarg.h>
#include <sys/wait.h>

void twb_run_clear(twb_run *run)
{
    g_free(run->out);
    g_free(run->err);
}

twb_run run_twb_argv(const char *const *args)
{
    const char *twb = g_getenv("TWB");
    g_assert_nonnull(twb);
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (char *)twb);
    for (int i = 0; args[i]; i++)
        g_ptr_array_add(argv, (char *)args[i]);
    g_ptr_array_add(argv, NULL);

    twb_run run = {0};
    int wait_status = 0;
    GError *error = NULL;
    gboolean spawned = g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &run.out,
                                    &run.err, &wait_status, &error);
    g_assert_no_error(error);
    g_assert_true(spawned);
    run.exit_status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
    g_ptr_array_free(argv, TRUE);
    return run;
}

twb_run run_twb(const char *first, ...)
{
    GPtrArray *args = g_ptr_array_new();
    va_list ap;
    va_start(ap, first);
    for (const char *arg = first; arg; arg = va_arg(ap, const char *))
        g_ptr_array_add(args, (char *)arg);
    va_end(ap);
    g_ptr_array_add(args, NULL);
    twb_run run = run_twb_argv((const char *const *)args->pdata);
    g_ptr_array_free(args, TRUE);
    return run;
}
