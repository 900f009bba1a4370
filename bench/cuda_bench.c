/* GPU benchmarks, our side (tools/gpu-check runs them against
 * bench/torch_cuda_peer.py on the same GPU):
 *
 *   twb-cuda-bench NAME [--reps N]
 *
 * NAME: matmul_1000 (200 products of 1000x1000 float32 on cuda:0 with
 * tw_matmul, and the same 200 with bare cublasSgemm for reference), add16
 * (c = a + b on 16 floats on cuda:0, c released each time; for reference
 * an empty kernel's launch, bench/launch_floor.cu), tiny_step
 * (y = sum(a*b + a) on a tape, then dy/da, on cuda:0). Inputs are
 * twb_bench.c's pattern. Each repetition prints one JSON line,
 * {"name": NAME, "seconds": per op (per 200 products for matmul_1000),
 * "reference": bare cuBLAS seconds (matmul_1000), an empty kernel's launch
 * (add16), "check": sum of
 * squares of a result}; the work is synchronised before the clock stops
 * (one element read back). */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tw/engine.h"

#define CUDA0 ((tw_device){TW_DEVICE_CUDA, 0})

double bench_launch_floor(int n); /* launch_floor.cu */

static void die(const char *what)
{
    fprintf(stderr, "twb-cuda-bench: %s: %s\n", what, tw_last_error());
    exit(1);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* twb_bench.c's pattern: ((i*7919 + seed*104729) % 1013) / 1013 - 0.5. */
static float *pattern(int64_t seed, int64_t n)
{
    float *v = malloc(sizeof(float) * (size_t)n);
    if (!v)
        exit(1);
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)((double)((i * 7919 + seed * 104729) % 1013) / 1013.0 - 0.5);
    return v;
}

static tw_tensor *device_pattern(int64_t seed, int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    float *v = pattern(seed, n);
    tw_tensor *host = tw_tensor_from_data(v, TW_FLOAT32, ndim, shape);
    free(v);
    tw_tensor *t = host ? tw_tensor_to(host, CUDA0) : NULL;
    tw_tensor_unref(host);
    if (!t)
        die("copy to cuda:0");
    return t;
}

/* Waits for the device's stream: one element read back. */
static double sync_read(tw_tensor *t)
{
    int64_t zero[TW_MAX_DIMS] = {0};
    return tw_tensor_get(t, zero);
}

static double sum_squares(tw_tensor *t)
{
    tw_scope_begin();
    tw_tensor *host = tw_tensor_to(tw_sum_all(tw_mul(tw_cast(t, TW_FLOAT64), tw_cast(t, TW_FLOAT64))), TW_CPU);
    double v = host ? tw_tensor_item(host) : -1;
    tw_scope_end(); /* releases host and the intermediates */
    return v;
}

static double bare_cublas_200(const float *a, const float *b)
{
    float *da, *db, *dc;
    size_t bytes = sizeof(float) * 1000 * 1000;
    cublasHandle_t h;
    if (cudaMalloc((void **)&da, bytes) || cudaMalloc((void **)&db, bytes) || cudaMalloc((void **)&dc, bytes) ||
        cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "twb-cuda-bench: bare cuBLAS setup failed\n");
        exit(1);
    }
    cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice);
    const float one = 1, zero = 0;
    for (int i = 0; i < 5; i++) /* warm up as the timed loop */
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 1000, 1000, 1000, &one, db, 1000, da, 1000, &zero, dc, 1000);
    cudaDeviceSynchronize();
    double t0 = now();
    for (int i = 0; i < 200; i++)
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 1000, 1000, 1000, &one, db, 1000, da, 1000, &zero, dc, 1000);
    cudaDeviceSynchronize();
    double t = now() - t0;
    cublasDestroy(h);
    cudaFree(da), cudaFree(db), cudaFree(dc);
    return t;
}

static void matmul_1000(void)
{
    float *ha = pattern(1, 1000 * 1000), *hb = pattern(2, 1000 * 1000);
    double reference = bare_cublas_200(ha, hb);
    tw_tensor *a = device_pattern(1, TW_SHAPE(1000, 1000)), *b = device_pattern(2, TW_SHAPE(1000, 1000));
    for (int i = 0; i < 5; i++)
        tw_tensor_unref(tw_matmul(a, b));
    tw_tensor *c = tw_matmul(a, b);
    sync_read(c);
    tw_tensor_unref(c);
    double t0 = now();
    for (int i = 0; i < 199; i++) {
        c = tw_matmul(a, b);
        if (!c)
            die("tw_matmul");
        tw_tensor_unref(c);
    }
    c = tw_matmul(a, b);
    sync_read(c);
    double t = now() - t0;
    printf("{\"name\": \"matmul_1000\", \"seconds\": %.6g, \"reference\": %.6g, \"check\": %.10g}\n", t, reference,
           sum_squares(c));
    tw_tensor_unref(c), tw_tensor_unref(a), tw_tensor_unref(b);
    free(ha), free(hb);
}

static void add16(void)
{
    enum { N = 20000 };
    tw_tensor *a = device_pattern(1, TW_SHAPE(16)), *b = device_pattern(2, TW_SHAPE(16));
    for (int i = 0; i < 100; i++)
        tw_tensor_unref(tw_add(a, b));
    double t0 = now();
    for (int i = 0; i < N - 1; i++) {
        tw_tensor *c = tw_add(a, b);
        if (!c)
            die("tw_add");
        tw_tensor_unref(c);
    }
    tw_tensor *c = tw_add(a, b);
    sync_read(c);
    double t = (now() - t0) / N;
    double floor = bench_launch_floor(N);
    if (floor < 0)
        die("empty kernel launches");
    printf("{\"name\": \"add16\", \"seconds\": %.6g, \"reference\": %.6g, \"check\": %.10g}\n", t, floor,
           sum_squares(c));
    tw_tensor_unref(c), tw_tensor_unref(a), tw_tensor_unref(b);
}

static double tiny_step_once(tw_tensor *a, tw_tensor *b, bool check)
{
    tw_scope_begin();
    tw_tape *tape = tw_tape_begin(false);
    if (!tape || tw_tape_watch(tape, a) < 0)
        die("tw_tape_begin/watch");
    tw_tensor *y = tw_sum_all(tw_add(tw_mul(a, b), a));
    tw_tape_end(tape);
    tw_tensor *grad = NULL;
    if (!y || tw_tape_gradient(tape, y, 1, &a, &grad) < 0 || !grad)
        die("tiny_step");
    double v = check ? sum_squares(y) + sum_squares(grad) : sync_read(grad);
    tw_tape_free(tape);
    tw_scope_end();
    return v;
}

static void tiny_step(void)
{
    enum { N = 5000 };
    tw_tensor *a = device_pattern(1, TW_SHAPE(16)), *b = device_pattern(2, TW_SHAPE(16));
    for (int i = 0; i < 50; i++)
        tiny_step_once(a, b, false);
    double t0 = now();
    for (int i = 0; i < N; i++)
        tiny_step_once(a, b, false); /* each step ends with its gradient read: a synchronised step */
    double t = (now() - t0) / N;
    printf("{\"name\": \"tiny_step\", \"seconds\": %.6g, \"check\": %.10g}\n", t, tiny_step_once(a, b, true));
    tw_tensor_unref(a), tw_tensor_unref(b);
}

int main(int argc, char **argv)
{
    int reps = 3;
    const char *name = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else
            name = argv[i];
    }
    if (!name) {
        fprintf(stderr, "usage: twb-cuda-bench matmul_1000|add16|tiny_step [--reps N]\n");
        return 2;
    }
    if (tw_device_count(TW_DEVICE_CUDA) == 0) {
        tw_set_default_device(CUDA0);
        fprintf(stderr, "twb-cuda-bench: %s\n", tw_last_error());
        return 77;
    }
    void (*run)(void) = !strcmp(name, "matmul_1000") ? matmul_1000 : !strcmp(name, "add16") ? add16
                      : !strcmp(name, "tiny_step")   ? tiny_step : NULL;
    if (!run) {
        fprintf(stderr, "twb-cuda-bench: unknown benchmark %s\n", name);
        return 2;
    }
    for (int r = 0; r < reps; r++)
        run();
    return 0;
}
