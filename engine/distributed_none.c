/* tw/distributed.h in a build without MPI: one rank, whose averages are
 * its own values. tw_distributed_optimizer leaves the optimizer as it is. */
#include "distributed_internal.h"
#include "internal.h"
#include "tw/distributed.h"

bool tw_distributed_available(void)
{
    return false;
}

int tw_distributed_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

void tw_distributed_finalize(void)
{
}

int tw_distributed_rank(void)
{
    return 0;
}

int tw_distributed_size(void)
{
    return 1;
}

int tw_distributed_local_rank(void)
{
    return 0;
}

bool tw_distributed_failed(void)
{
    return false;
}

bool tw_distributed_replaces_rank0(void)
{
    return false;
}

tw_tensor *tw_allreduce_mean(tw_tensor *t)
{
    if (!t)
        return tw_error_set("allreduce_mean: NULL tensor"), NULL;
    return tw_copy(t);
}

int tw_allreduce_mean_values(double *values, int n)
{
    (void)values;
    (void)n;
    return 0;
}

int tw_allgather_values(const double *mine, int n, double *all)
{
    for (int i = 0; i < n; i++)
        all[i] = mine[i];
    return 0;
}

int tw_broadcast_variables(int n, tw_tensor *const *variables)
{
    (void)n;
    (void)variables;
    return 0;
}

tw_optimizer *tw_distributed_optimizer(tw_optimizer *opt, size_t bucket_bytes)
{
    (void)bucket_bytes;
    if (!opt)
        tw_error_set("distributed_optimizer: NULL optimizer");
    return opt;
}

tw_tensor *tw__allreduce_weighted_mean(tw_tensor *t, double count)
{
    (void)count;
    return t;
}
