/* libtw-nccl.so: the NCCL side of data-parallel training (see
 * distributed_nccl.h). One communicator a process, on one device, with its
 * own non-blocking stream; the engine makes sure a gradient is complete on
 * its compute stream before handing it here. */
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdio.h>
#include <string.h>

#include "distributed_nccl.h"

_Static_assert(sizeof(ncclUniqueId) == TW_NCCL_ID_BYTES, "ncclUniqueId's size changed");

static struct {
    ncclComm_t comm;
    cudaStream_t stream;
    int device;
    char error[512];
} nccl;

static int nccl_failed(const char *what, ncclResult_t rc)
{
    snprintf(nccl.error, sizeof nccl.error, "NCCL: %s: %s%s%s", what, ncclGetErrorString(rc),
             nccl.comm && ncclGetLastError(nccl.comm) ? ": " : "", nccl.comm ? ncclGetLastError(nccl.comm) : "");
    return -1;
}

static int cuda_failed(const char *what, cudaError_t rc)
{
    snprintf(nccl.error, sizeof nccl.error, "NCCL: %s: %s", what, cudaGetErrorString(rc));
    return -1;
}

static int unique_id(void *id)
{
    ncclUniqueId u;
    ncclResult_t rc = ncclGetUniqueId(&u);
    if (rc != ncclSuccess)
        return nccl_failed("ncclGetUniqueId", rc);
    memcpy(id, &u, sizeof u);
    return 0;
}

static int init(const void *id, int nranks, int rank, int device)
{
    if (nccl.comm)
        return 0;
    cudaError_t crc = cudaSetDevice(device);
    if (crc == cudaSuccess)
        crc = cudaStreamCreateWithFlags(&nccl.stream, cudaStreamNonBlocking);
    if (crc != cudaSuccess)
        return cuda_failed("cuda device setup", crc);
    ncclUniqueId u;
    memcpy(&u, id, sizeof u);
    ncclResult_t rc = ncclCommInitRank(&nccl.comm, nranks, u, rank);
    if (rc != ncclSuccess) {
        nccl.comm = NULL;
        return nccl_failed("ncclCommInitRank", rc);
    }
    nccl.device = device;
    return 0;
}

static int allreduce_mean(void *buf, int64_t count, tw_dtype dtype)
{
    if (!nccl.comm) {
        snprintf(nccl.error, sizeof nccl.error, "NCCL: allreduce before the communicator was made");
        return -1;
    }
    if (dtype != TW_FLOAT32 && dtype != TW_FLOAT64) {
        snprintf(nccl.error, sizeof nccl.error, "NCCL: allreduce takes float32 or float64");
        return -1;
    }
    ncclResult_t rc = ncclAllReduce(buf, buf, (size_t)count, dtype == TW_FLOAT64 ? ncclFloat64 : ncclFloat32, ncclAvg,
                                    nccl.comm, nccl.stream);
    return rc == ncclSuccess ? 0 : nccl_failed("ncclAllReduce", rc);
}

static int wait_all(void)
{
    if (!nccl.comm)
        return 0;
    cudaError_t rc = cudaStreamSynchronize(nccl.stream);
    return rc == cudaSuccess ? 0 : cuda_failed("cudaStreamSynchronize", rc);
}

static void finalize(void)
{
    if (nccl.comm)
        ncclCommDestroy(nccl.comm);
    if (nccl.stream)
        cudaStreamDestroy(nccl.stream);
    nccl.comm = NULL;
    nccl.stream = NULL;
}

static const char *error(void)
{
    return nccl.error;
}

static const tw_nccl_plugin plugin = {
    .abi = TW_NCCL_PLUGIN_ABI,
    .unique_id = unique_id,
    .init = init,
    .allreduce_mean = allreduce_mean,
    .wait = wait_all,
    .finalize = finalize,
    .error = error,
};

__attribute__((visibility("default"))) const tw_nccl_plugin *tw_nccl_plugin_get(void)
{
    return &plugin;
}
