/* The engine's threads on a busy machine (engine/threads.c): with a core
 * kept busy by another process, the ops a thread runs leave it alone (the
 * thread's OpenMP count drops below the cores while tw_num_threads keeps
 * the cap asked for), unless the process runs at real-time priority, and a
 * cap set by the user is never exceeded. */
#include <omp.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include <tw/engine.h>
#include <tw/ops.h>

/* Long enough for two of threads.c's samples of the load (200 ms apart)
 * on a loaded machine; a catastrophic bound, not a timing. */
#define ADAPT_SECONDS 10.0

/* A few ops, as a training loop runs them. */
static void run_ops(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_ones(TW_FLOAT32, 1, (int64_t[]){64});
    g_assert_nonnull(tw_add(x, x));
    tw_scope_end();
}

/* A child process spinning on the last core this process may run on. */
static pid_t busy_core(void)
{
    cpu_set_t cpus;
    g_assert_cmpint(sched_getaffinity(0, sizeof cpus, &cpus), ==, 0);
    int last = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &cpus))
            last = c;
    pid_t pid = fork();
    g_assert_cmpint(pid, >=, 0);
    if (pid == 0) {
        /* a normal process, even when forked from a real-time one */
        sched_setscheduler(0, SCHED_OTHER, &(struct sched_param){.sched_priority = 0});
        CPU_ZERO(&cpus);
        CPU_SET(last, &cpus);
        sched_setaffinity(0, sizeof cpus, &cpus);
        for (volatile unsigned long i = 0;; i++)
            ;
    }
    return pid;
}

static void test_busy_core_left_alone(void)
{
    int ncpus = omp_get_num_procs();
    if (ncpus < 2) {
        g_test_skip("one core: nothing to leave to another process");
        return;
    }
    tw_set_num_threads(0);
    g_assert_cmpint(tw_num_threads(), ==, ncpus);
    pid_t child = busy_core();
    gint64 until = g_get_monotonic_time() + (gint64)(ADAPT_SECONDS * 1e6);
    while (omp_get_max_threads() >= ncpus && g_get_monotonic_time() < until) {
        run_ops();
        g_usleep(5000);
    }
    int threads = omp_get_max_threads();
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    g_test_message("%d cores, one busy: the ops ran on %d threads", ncpus, threads);
    g_assert_cmpint(threads, <=, ncpus - 1);
    g_assert_cmpint(threads, >=, 1);
    g_assert_cmpint(tw_num_threads(), ==, ncpus); /* the cap asked for */
}

/* A real-time process (chrt -f) preempts the busy child wherever they
 * meet, so its ops keep every core. Needs CAP_SYS_NICE (root). */
static void test_realtime_keeps_cores(void)
{
    int ncpus = omp_get_num_procs();
    if (ncpus < 2) {
        g_test_skip("one core: nothing to keep");
        return;
    }
    if (sched_setscheduler(0, SCHED_FIFO, &(struct sched_param){.sched_priority = 1}) != 0) {
        g_test_skip("SCHED_FIFO not permitted (needs CAP_SYS_NICE)");
        return;
    }
    tw_set_num_threads(0);
    pid_t child = busy_core();
    /* several of threads.c's samples (200 ms apart): the busy-core case
     * drops a thread within two */
    int fewest = ncpus;
    gint64 until = g_get_monotonic_time() + 1500000;
    while (g_get_monotonic_time() < until) {
        run_ops();
        if (omp_get_max_threads() < fewest)
            fewest = omp_get_max_threads();
        g_usleep(5000);
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    g_assert_cmpint(sched_setscheduler(0, SCHED_OTHER, &(struct sched_param){.sched_priority = 0}), ==, 0);
    g_test_message("%d cores, one busy, real-time: the ops ran on at least %d threads", ncpus, fewest);
    g_assert_cmpint(fewest, ==, ncpus);
}

/* A count the user set, through the engine or OpenMP, is a cap the load
 * only lowers. */
static void test_cap_kept(void)
{
    int saved = omp_get_max_threads();
    tw_set_num_threads(1);
    gint64 until = g_get_monotonic_time() + 500000;
    while (g_get_monotonic_time() < until) {
        run_ops();
        g_usleep(5000);
    }
    g_assert_cmpint(omp_get_max_threads(), ==, 1);
    g_assert_cmpint(tw_num_threads(), ==, 1);

    tw_set_num_threads(0);
    omp_set_num_threads(1);
    until = g_get_monotonic_time() + 500000;
    while (g_get_monotonic_time() < until) {
        run_ops();
        g_usleep(5000);
    }
    g_assert_cmpint(omp_get_max_threads(), ==, 1);
    g_assert_cmpint(tw_num_threads(), ==, 1);
    tw_set_num_threads(saved);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/threads/busy-core-left-alone", test_busy_core_left_alone);
    g_test_add_func("/threads/cap-kept", test_cap_kept);
    g_test_add_func("/threads/realtime-keeps-cores", test_realtime_keeps_cores);
    return g_test_run();
}
