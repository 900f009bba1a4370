/* The one rule for whether a CPU loop gets a team of OpenMP threads, and the
 * loop that applies it (PyTorch's at::parallel_for grain size does the
 * same). Its own header, not cpu_kernels.h: that one is also compiled by
 * nvcc (kernels/cuda), without OpenMP. */
#ifndef TWK_PARALLEL_H
#define TWK_PARALLEL_H

#include <omp.h>
#include <stdbool.h>
#include <stdint.h>

/* Below this many elements loops stay on one thread: forking costs more. */
#define TWK_PARALLEL_MIN 32768

/* Whether a loop over `work` elements is worth a team: enough work to pay
 * for waking the threads, and more than one thread allowed (the cap and
 * engine/threads.c's adaptive count set omp_get_max_threads()). */
static inline bool twk_parallel(int64_t work)
{
    return work >= TWK_PARALLEL_MIN && omp_get_max_threads() > 1;
}

#define TWK__PRAGMA_STR(x) #x

/* Runs the `for` loop given after `clauses` (the `omp parallel for` clauses:
 * schedule(static) or nothing) on a team when `team` holds, else on the
 * calling thread outside any parallel region. Not `omp parallel for
 * if (team)`: libgomp runs a region whose `if` is false on a team of one and
 * still ends it with a wake-up system call (futex) on the team's barrier,
 * a thread waiting or not: 12 a step in the training of bench/run
 * sweep_overhead's 2-64-2 MLP, whose every op is below TWK_PARALLEL_MIN.
 * The loop is compiled twice. */
#define TWK_PARALLEL_FOR(team, clauses, ...)                                                                \
    do {                                                                                                    \
        if (team) {                                                                                         \
            _Pragma(TWK__PRAGMA_STR(omp parallel for clauses)) __VA_ARGS__                                  \
        } else {                                                                                            \
            __VA_ARGS__                                                                                     \
        }                                                                                                   \
    } while (0)

/* The same for a block that splits the work itself by omp_get_thread_num()
 * and omp_get_num_threads() (`clauses`: the `omp parallel` clauses): run
 * once on the calling thread, those say 0 of 1, as in a team of one. */
#define TWK_PARALLEL(team, clauses, ...)                                                                    \
    do {                                                                                                    \
        if (team) {                                                                                         \
            _Pragma(TWK__PRAGMA_STR(omp parallel clauses)) __VA_ARGS__                                      \
        } else {                                                                                            \
            __VA_ARGS__                                                                                     \
        }                                                                                                   \
    } while (0)

#endif
