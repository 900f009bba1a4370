/* How many threads the calling thread's ops may use. OpenMP keeps the
 * setting per thread, and the OpenMP build of OpenBLAS follows the calling
 * thread's omp_get_max_threads(), so one call covers kernels and BLAS, and
 * a training worker can leave a core to the window's main loop without
 * slowing anyone else. */
#include <omp.h>

#include "internal.h"

void tw_set_num_threads(int n)
{
    omp_set_num_threads(n > 0 ? n : omp_get_num_procs());
}

int tw_num_threads(void)
{
    return omp_get_max_threads();
}
