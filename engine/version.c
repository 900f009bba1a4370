#include "cpu/cpu_kernels.h"
#include "internal.h"

const char *tw_version(void)
{
    return "0.1.0";
}

const char *tw_blas_info(void)
{
    return twk_blas_info();
}
