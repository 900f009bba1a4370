#!/usr/bin/env python3
"""PyTorch's side of bench/cuda_bench.c on the same GPU (tools/gpu-check):

    torch_cuda_peer.py NAME [--reps N]

Same work, inputs and JSON lines as twb-cuda-bench: matmul_1000 (200
products, synchronised at the end), add16 (per op), tiny_step (per step,
each ending with its gradient read back, as ours)."""
import argparse
import json
import time

import torch


def pattern(seed, shape):
    n = 1
    for d in shape:
        n *= d
    i = torch.arange(n, dtype=torch.int64)
    v = ((i * 7919 + seed * 104729) % 1013).double() / 1013.0 - 0.5
    return v.float().reshape(shape).cuda()


def sum_squares(t):
    return float((t.detach().double() ** 2).sum())


def matmul_1000():
    a, b = pattern(1, (1000, 1000)), pattern(2, (1000, 1000))
    for _ in range(5):
        c = a @ b
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(200):
        c = a @ b
    torch.cuda.synchronize()
    return time.perf_counter() - t0, sum_squares(c)


def add16():
    a, b = pattern(1, (16,)), pattern(2, (16,))
    n = 20000
    for _ in range(100):
        c = a + b
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        c = a + b
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n, sum_squares(c)


def tiny_step():
    a, b = pattern(1, (16,)), pattern(2, (16,))
    a.requires_grad_()
    n = 5000

    def step():
        y = (a * b + a).sum()
        (g,) = torch.autograd.grad(y, a)
        return y, g

    for _ in range(50):
        step()
    t0 = time.perf_counter()
    for _ in range(n):
        y, g = step()
        g[0].item()  # read back, as ours
    t = (time.perf_counter() - t0) / n
    y, g = step()
    return t, sum_squares(y) + sum_squares(g)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("name", choices=["matmul_1000", "add16", "tiny_step"])
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args()
    # float32 products as cuBLAS computes them by default (no TF32), as ours
    torch.backends.cuda.matmul.allow_tf32 = False
    run = globals()[args.name]
    for _ in range(args.reps):
        seconds, check = run()
        print(json.dumps({"name": args.name, "seconds": seconds, "check": check}), flush=True)


if __name__ == "__main__":
    main()
