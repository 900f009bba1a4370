/* The twb command line as a person uses it: runs the executable named by the
 * TWB environment variable and checks its exit status and output. */
#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

typedef struct {
    int exit_status; /* -1 when killed by a signal */
    char *out, *err;
} twb_run;

static void twb_run_clear(twb_run *run)
{
    g_free(run->out);
    g_free(run->err);
}

/* Runs twb with the given arguments (NULL-terminated). */
static twb_run run_twb(const char *first, ...)
{
    const char *twb = g_getenv("TWB");
    g_assert_nonnull(twb);
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (char *)twb);
    va_list ap;
    va_start(ap, first);
    for (const char *arg = first; arg; arg = va_arg(ap, const char *))
        g_ptr_array_add(argv, (char *)arg);
    va_end(ap);
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

static void test_version(void)
{
    twb_run run = run_twb("--version", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_true(g_str_has_prefix(run.out, "twb 0.1.0\n"));
    /* The second line names the engine and its BLAS. */
    const char *second = run.out + strlen("twb 0.1.0\n");
    g_assert_true(g_str_has_prefix(second, "engine 0.1.0, BLAS: "));
    g_assert_cmpuint(strlen(second), >, strlen("engine 0.1.0, BLAS: \n"));
    g_assert_cmpstr(run.err, ==, "");
    twb_run_clear(&run);
}

static void test_help(void)
{
    const char *spellings[] = {"--help", "-h", "help"};
    for (size_t i = 0; i < G_N_ELEMENTS(spellings); i++) {
        twb_run run = run_twb(spellings[i], NULL);
        g_assert_cmpint(run.exit_status, ==, 0);
        g_assert_true(g_str_has_prefix(run.out, "Usage: twb"));
        g_assert_nonnull(strstr(run.out, "example linear-regression [--steps N]"));
        g_assert_nonnull(strstr(run.out, "--version"));
        g_assert_cmpstr(run.err, ==, "");
        twb_run_clear(&run);
    }
}

/* Exit status 2, nothing on stdout, a message on stderr that quotes `quoted`. */
static void assert_usage_error(twb_run *run, const char *quoted)
{
    g_assert_cmpint(run->exit_status, ==, 2);
    g_assert_cmpstr(run->out, ==, "");
    g_assert_true(g_str_has_prefix(run->err, "twb: "));
    g_assert_nonnull(strstr(run->err, quoted));
    g_assert_nonnull(strstr(run->err, "twb --help"));
    twb_run_clear(run);
}

static void test_unknown_command(void)
{
    twb_run run = run_twb("frobnicate", NULL);
    assert_usage_error(&run, "unknown command 'frobnicate'");
    run = run_twb("--frobnicate", NULL);
    assert_usage_error(&run, "unknown option '--frobnicate'");
    run = run_twb("example", "mnist", NULL);
    assert_usage_error(&run, "'mnist'");
    run = run_twb("example", NULL);
    assert_usage_error(&run, "linear-regression");
}

static void test_bad_options(void)
{
    twb_run run = run_twb("example", "linear-regression", "--fast", NULL);
    assert_usage_error(&run, "unknown option '--fast'");
    run = run_twb("example", "linear-regression", "--steps", NULL);
    assert_usage_error(&run, "'--steps'");
    const char *bad[] = {"0", "-5", "ten", "12x", ""};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        run = run_twb("example", "linear-regression", "--steps", bad[i], NULL);
        char *quoted = g_strdup_printf("'%s'", bad[i]);
        assert_usage_error(&run, quoted);
        g_free(quoted);
    }
}

/* Parses "after N steps: loss=L  W=w  B=b" from the output. */
static void parse_final(const char *out, int *steps, double *loss, double *w, double *b)
{
    const char *line = strstr(out, "after ");
    g_assert_nonnull(line);
    g_assert_cmpint(sscanf(line, "after %d steps: loss=%lf W=%lf B=%lf", steps, loss, w, b), ==, 4);
}

static unsigned count_progress_lines(const char *out)
{
    unsigned n = 0;
    char **lines = g_strsplit(out, "\n", -1);
    for (char **line = lines; *line; line++)
        n += g_str_has_prefix(*line, "step ");
    g_strfreev(lines);
    return n;
}

static void test_linear_regression(void)
{
    twb_run run = run_twb("example", "linear-regression", NULL);
    g_assert_cmpstr(run.err, ==, "");
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_true(g_str_has_prefix(strstr(run.out, "step "), "step    0: loss="));
    g_assert_nonnull(strstr(run.out, "W=5.0000  B=10.0000"));
    g_assert_cmpuint(count_progress_lines(run.out), ==, 10); /* steps 0, 20, ..., 180 */
    int steps = 0;
    double loss = 0, w = 0, b = 0;
    parse_final(run.out, &steps, &loss, &w, &b);
    g_assert_cmpint(steps, ==, 200);
    g_assert_cmpfloat_with_epsilon(w, 3.0, 0.15);
    g_assert_cmpfloat_with_epsilon(b, 2.0, 0.3);
    g_assert_cmpfloat(loss, <, 1.2);
    g_assert_cmpfloat(loss, >, 0.7); /* the noise has variance 1 */
    twb_run_clear(&run);
}

static void test_linear_regression_steps(void)
{
    twb_run run = run_twb("example", "linear-regression", "--steps=41", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_cmpuint(count_progress_lines(run.out), ==, 3); /* steps 0, 20, 40 */
    int steps = 0;
    double loss = 0, w = 0, b = 0;
    parse_final(run.out, &steps, &loss, &w, &b);
    g_assert_cmpint(steps, ==, 41);
    /* Part of the way from (5, 10) towards (3, 2). */
    g_assert_cmpfloat(w, <, 5.0);
    g_assert_cmpfloat(w, >, 3.0);
    g_assert_cmpfloat(b, <, 10.0);
    g_assert_cmpfloat(b, >, 2.5);
    twb_run_clear(&run);
}

static void test_no_arguments(void)
{
    twb_run run = run_twb(NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_nonnull(strstr(run.out, "window"));
    g_assert_nonnull(strstr(run.out, "after 200 steps: "));
    twb_run_clear(&run);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cli/version", test_version);
    g_test_add_func("/cli/help", test_help);
    g_test_add_func("/cli/unknown-command", test_unknown_command);
    g_test_add_func("/cli/bad-options", test_bad_options);
    g_test_add_func("/cli/linear-regression", test_linear_regression);
    g_test_add_func("/cli/linear-regression-steps", test_linear_regression_steps);
    g_test_add_func("/cli/no-arguments", test_no_arguments);
    return g_test_run();
}
