/* The floor under an eager op on a GPU: what queuing one empty kernel on a
 * stream costs the host (cudaLaunchKernel) and running it costs the device,
 * back to back. bench/cuda_bench.c's add16 prints it as its reference, so
 * each run says how much of an op's time is the engine's and how much the
 * launch's. */
#include <chrono>

#include <cuda_runtime.h>

static __global__ void empty_kernel(void) {}

/* Seconds per launch over n launches (after 100 to warm up), or -1. */
extern "C" double bench_launch_floor(int n)
{
    cudaStream_t stream;
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
        return -1;
    for (int i = 0; i < 100; i++)
        empty_kernel<<<1, 256, 0, stream>>>();
    cudaStreamSynchronize(stream);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; i++)
        empty_kernel<<<1, 256, 0, stream>>>();
    cudaError_t err = cudaStreamSynchronize(stream);
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cudaStreamDestroy(stream);
    return err == cudaSuccess && cudaGetLastError() == cudaSuccess ? t / n : -1;
}
