/* How many threads the calling thread's ops may use. OpenMP keeps the
 * setting per thread, and the OpenMP build of OpenBLAS follows the calling
 * thread's omp_get_max_threads(), so one call covers kernels and BLAS, and
 * a training worker can leave a core to the window's main loop without
 * slowing anyone else.
 *
 * Within that cap the engine leaves alone the cores other processes keep
 * busy. A parallel loop is as slow as its slowest thread, and a thread that
 * shares its core with another process gets a fraction of it in slices of
 * milliseconds: on two cores with one kept busy by someone else, a
 * Fashion-MNIST MLP epoch with two threads ran at 12,000-16,000 samples/s
 * (sometimes 1,100) against about 98,000 on a quiet machine, while one
 * thread, which the scheduler keeps on the free core, runs at the speed of
 * one core. So graph runs and every 16th op call tw__threads_adapt(), which at
 * most every ADAPT_PERIOD_NS measures how much CPU others used on the cores
 * this process may run on (/proc/stat's busy time of those cores minus the
 * CPU time of the calling thread's OpenMP team) and sets the calling
 * thread's OpenMP thread count to its cap minus the cores they occupy, at
 * least one. "Others" includes this process's other threads: the window's
 * main loop drawing beside a training worker takes a core from the worker
 * as another process would. The waiting policy (libgomp's spinning) is read
 * from the environment when libgomp loads, too early for the engine to
 * choose; with no second thread there is no barrier to spin at. A
 * real-time thread keeps its cap: others cannot take its cores.
 * TW_ADAPTIVE_THREADS=0 turns this off. */
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* How often the load of others is measured (and the count reconsidered):
 * long enough for /proc/stat's clock ticks (100 a second on Linux) to add
 * up, short enough to follow a build starting. */
#define ADAPT_PERIOD_NS 200000000LL

/* The cores this process may run on, once. */
static struct {
    pthread_once_t once;
    bool enabled;
    cpu_set_t cpus;
    int ncpus;
} machine = {.once = PTHREAD_ONCE_INIT};

/* The most team threads whose CPU clocks are read. */
#define MAX_TEAM 256

/* Per thread: the count asked for (tw_set_num_threads, omp_set_num_threads
 * or OMP_NUM_THREADS), the count this file last set (0: none), the last
 * sample of the load, and the CPU clocks of the team its parallel regions
 * run on (nclocks 0: to be read again). */
static _Thread_local struct {
    int cap, applied, available;
    long long next_check_ns, measured_ns; /* measured_ns 0: no sample yet */
    double busy_s, team_s;                /* the cores' busy time, the team's CPU time */
    int nclocks;
    clockid_t clocks[MAX_TEAM];
} me;

TW_HOT_THREAD_LOCAL int tw__ops_until_adapt;

static long long clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void machine_init(void)
{
    const char *env = getenv("TW_ADAPTIVE_THREADS");
    machine.enabled = !(env && strcmp(env, "0") == 0);
    if (sched_getaffinity(0, sizeof machine.cpus, &machine.cpus) != 0)
        machine.enabled = false;
    machine.ncpus = CPU_COUNT(&machine.cpus);
}

/* Seconds the cores in machine.cpus spent busy since boot, from /proc/stat's
 * per-core lines (user nice system idle iowait irq softirq steal ...; steal
 * is time the hypervisor gave the virtual core to someone else), or -1. */
static double busy_seconds(void)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    char line[512];
    unsigned long long busy = 0;
    bool any = false;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "cpu", 3) != 0)
            break; /* the per-core lines come first */
        /* strtoull, not sscanf: a sample with sscanf cost about 15,000
         * instructions on two cores */
        if (line[3] < '0' || line[3] > '9')
            continue; /* the "cpu " total (strtol would skip its space) */
        char *p = line + 3, *end;
        long cpu = strtol(p, &end, 10);
        if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &machine.cpus))
            continue; /* a core not ours */
        enum { USER, NICE, SYS, IDLE, IOWAIT, IRQ, SOFTIRQ, STEAL, FIELDS };
        unsigned long long v[FIELDS] = {0};
        int n = 0;
        for (p = end; n < FIELDS; n++, p = end) {
            v[n] = strtoull(p, &end, 10);
            if (end == p)
                break;
        }
        if (n < STEAL)
            continue;
        busy += v[USER] + v[NICE] + v[SYS] + v[IRQ] + v[SOFTIRQ] + v[STEAL];
        any = true;
    }
    fclose(f);
    return any ? (double)busy / (double)sysconf(_SC_CLK_TCK) : -1;
}

/* The CPU clocks of the calling thread and the OpenMP threads its parallel
 * regions of n threads run on: libgomp gives a thread's regions the same
 * pool threads in the same order, so one region of n asks each of them.
 * Reading the clocks later wakes no thread (waking them every sample made
 * an idle pool thread spin after each, about a fifth of a core). */
static void read_team_clocks(int n)
{
    clockid_t *clocks = me.clocks; /* me is per thread: the team writes through this */
    if (n > MAX_TEAM)
        n = MAX_TEAM;
    int got = 1;
    if (n <= 1) {
        pthread_getcpuclockid(pthread_self(), &clocks[0]);
    } else {
#pragma omp parallel num_threads(n)
        {
            pthread_getcpuclockid(pthread_self(), &clocks[omp_get_thread_num()]);
#pragma omp single
            got = omp_get_num_threads();
        }
    }
    me.nclocks = got;
    me.measured_ns = 0; /* another set of threads: measure afresh */
}

/* CPU seconds of the team's threads, or -1 when one of them is gone. */
static double team_seconds(void)
{
    double sum = 0;
    for (int i = 0; i < me.nclocks; i++) {
        struct timespec ts;
        if (clock_gettime(me.clocks[i], &ts) != 0)
            return -1;
        sum += (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    }
    return sum;
}

/* The cores others took since the last sample, turned into a count of cores
 * left, with hysteresis: a core is given up when others use half of one,
 * taken back when they use less than 0.3 of it, so a load near a boundary
 * does not switch the count at every sample. */
static void sample(long long now)
{
    double busy = busy_seconds(), team = team_seconds();
    if (team < 0)
        me.nclocks = 0; /* read the clocks again at the next check */
    if (busy < 0 || team < 0)
        return;
    if (me.measured_ns) {
        double wall = (double)(now - me.measured_ns) * 1e-9;
        double others = ((busy - me.busy_s) - (team - me.team_s)) / wall;
        if (others < 0)
            others = 0;
        int fewer = machine.ncpus - (int)(others + 0.5), more = machine.ncpus - (int)(others + 0.7);
        int next = fewer < me.available ? fewer : more > me.available ? more : me.available;
        me.available = next < 1 ? 1 : next;
    }
    me.measured_ns = now;
    me.busy_s = busy;
    me.team_s = team;
}

/* A real-time thread (chrt -f or -r: SCHED_FIFO, SCHED_RR) preempts every
 * normal process, so others run only on what its team leaves idle: their
 * busy time is no reason to shrink the team, and shrinking it would hand
 * them the core (under chrt -f, the MLP epoch took twice as long). */
static bool realtime(void)
{
    int policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
    return policy == SCHED_FIFO || policy == SCHED_RR;
}

void tw__threads_adapt(void)
{
    long long now = clock_ns(CLOCK_MONOTONIC_COARSE);
    if (now < me.next_check_ns)
        return;
    me.next_check_ns = now + ADAPT_PERIOD_NS;
    pthread_once(&machine.once, machine_init);
    if (!machine.enabled || omp_in_parallel())
        return;
    int current = omp_get_max_threads();
    if (!me.applied || current != me.applied) {
        me.cap = current; /* set by someone else since: the new cap */
        me.available = machine.ncpus;
        me.nclocks = 0;
    }
    if (realtime()) {
        me.available = machine.ncpus;
        me.measured_ns = 0; /* measure afresh should it turn normal again */
    } else {
        if (!me.nclocks)
            read_team_clocks(current);
        sample(now);
    }
    int want = me.cap < me.available ? me.cap : me.available;
    if (want != current) {
        omp_set_num_threads(want);
        me.nclocks = 0; /* another team from the next check on */
    }
    me.applied = want;
}

void tw_set_num_threads(int n)
{
    me.cap = n > 0 ? n : omp_get_num_procs();
    me.applied = 0;
    me.next_check_ns = 0; /* adapt to the load at the next op */
    tw__ops_until_adapt = 0;
    omp_set_num_threads(me.cap);
}

int tw_num_threads(void)
{
    return me.applied ? me.cap : omp_get_max_threads();
}
