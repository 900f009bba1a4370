#!/usr/bin/python3
"""The PyTorch side of the benchmarks: the same work as bench/twb_bench.c,
speaking the same protocol.

    /usr/bin/python3 bench/torch_peer.py NAME [--reps N | --serve] [--min-time S] [--products N]

Sets the benchmark up, warms up, picks the iterations per repetition and
prints a JSON header line (unit, iterations per repetition, checksums of the
results, torch version, threads, the OpenBLAS core, the variant chosen),
then one line {"value": TIME_PER_OP} per repetition: --reps of them, or with
--serve one per line "rep" read on stdin until end of input. Run with
Debian's PyTorch (python3-torch); it uses two threads.
"""
import argparse
import ctypes
import gc
import gzip
import json
import os
import statistics
import sys
import time

import numpy as np

import torch
import torch.nn.functional as F

torch.set_num_threads(2)


def pattern(seed, shape):
    """twb_bench.c's pattern(): the value at flat index i of input `seed` is
    ((i*7919 + seed*104729) % 1013) / 1013 - 0.5, rounded to float32."""
    n = 1
    for d in shape:
        n *= d
    i = torch.arange(n, dtype=torch.int64)
    v = ((i * 7919 + seed * 104729) % 1013).double() / 1013.0 - 0.5
    return v.float().reshape(shape)


def sum_squares(t):
    return float((t.detach().double() ** 2).sum())


def openblas_cores():
    """The core type of the OpenBLAS PyTorch calls (on Debian libblas.so.3 is
    OpenBLAS's wrapper over libopenblas.so.0 when OpenBLAS is installed)."""
    cores = []
    for name in ("libblas.so.3", "libopenblas.so.0"):
        try:
            fn = ctypes.CDLL(name).openblas_get_corename
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_char_p
        cores.append("%s: %s" % (name, fn().decode()))
    return ", ".join(cores) or "unknown (not OpenBLAS)"


def timed(run, iters, scale):
    gc.disable()  # as timeit does
    try:
        t0 = time.perf_counter()
        run(iters)
        return (time.perf_counter() - t0) / iters * scale
    finally:
        gc.enable()


def calibrate(run, min_time):
    """Iterations that make a repetition of at least min_time seconds (as twb_bench.c)."""
    iters = 1
    while True:
        t0 = time.perf_counter()
        run(iters)
        dt = time.perf_counter() - t0
        if dt >= min_time / 4:
            return max(1, int(min_time / (dt / iters)) + 1)
        iters *= 4 if dt > 0 and min_time / 4 / dt < 16 else 16


def fastest(variants, min_time, scale):
    """PyTorch at its best: time each variant in turn, three times over,
    and keep the one with the lower median."""
    iters = {}
    for name, run in variants.items():
        run(1)
        iters[name] = calibrate(run, min_time / 2)
    times = {name: [] for name in variants}
    for _ in range(3):
        for name, run in variants.items():
            times[name].append(timed(run, iters[name], scale))
    trial = {name: statistics.median(v) for name, v in times.items()}
    return min(trial, key=trial.get), trial


# Each benchmark returns (run(iters), checksums, extra header facts).

def setup_add16(args):
    a, b = pattern(1, (16,)), pattern(2, (16,))

    def run(n):
        for _ in range(n):
            c = a + b  # frees the previous c, as twb-bench's tw_tensor_unref

    return run, [sum_squares(a + b)], {}


def setup_tiny_step(args):
    a, b = pattern(1, (16,)), pattern(2, (16,))
    a.requires_grad_()

    def with_grad(n):
        for _ in range(n):
            y = (a * b + a).sum()
            (g,) = torch.autograd.grad(y, a)

    def with_backward(n):
        for _ in range(n):
            y = (a * b + a).sum()
            y.backward()
            a.grad = None

    variants = {"autograd.grad": with_grad, "backward": with_backward}
    best, trial = fastest(variants, args.min_time, 1e6)
    y = (a * b + a).sum()
    (g,) = torch.autograd.grad(y, a)
    return variants[best], [sum_squares(y), sum_squares(g)], {"variant": best, "trial_us": trial}


def setup_matmul_1000(args):
    a, b = pattern(1, (1000, 1000)), pattern(2, (1000, 1000))

    def run(n):
        for _ in range(n):
            c = torch.matmul(a, b)

    return run, [sum_squares(torch.matmul(a, b))], {}


def setup_conv_step(args):
    # twb's NHWC input and HWIO filter, seen as PyTorch's NCHW and OIHW.
    x_nhwc, w_hwio = pattern(1, (64, 28, 28, 32)), pattern(2, (3, 3, 32, 64))
    gy_nhwc = pattern(3, (64, 28, 28, 64))

    def tensors(layout):
        fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
        x = x_nhwc.permute(0, 3, 1, 2).contiguous(memory_format=fmt).requires_grad_()
        w = w_hwio.permute(3, 2, 0, 1).contiguous(memory_format=fmt).requires_grad_()
        gy = gy_nhwc.permute(0, 3, 1, 2).contiguous(memory_format=fmt)
        return x, w, gy

    def runner(layout):
        x, w, gy = tensors(layout)

        def run(n):
            for _ in range(n):
                y = F.conv2d(x, w, padding=1)
                gx, gw = torch.autograd.grad(y, (x, w), gy)

        return run

    # Which layout oneDNN runs faster depends on the build and the machine.
    variants = {layout: runner(layout) for layout in ("channels_last", "nchw")}
    best, trial = fastest(variants, args.min_time, 1e3)
    x, w, gy = tensors(best)
    y = F.conv2d(x, w, padding=1)
    gx, gw = torch.autograd.grad(y, (x, w), gy)
    return variants[best], [sum_squares(y), sum_squares(gx), sum_squares(gw)], {"variant": best, "trial_ms": trial}


def fashion_mnist_train():
    """Fashion-MNIST's training images (60000, 28, 28) and labels (60000,),
    uint8, read once with gzip + numpy from where libtw-data looks:
    $TWB_DATA_DIR, a fashion-mnist folder in it, then
    /usr/share/datasets/fashion-mnist; raw or .gz."""
    env = os.environ.get("TWB_DATA_DIR")
    folders = ([env, os.path.join(env, "fashion-mnist")] if env else []) + ["/usr/share/datasets/fashion-mnist"]
    names = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte")

    def find(folder, name):
        for path in (os.path.join(folder, name), os.path.join(folder, name + ".gz")):
            if os.path.isfile(path):
                return path
        return None

    for folder in folders:
        paths = [find(folder, name) for name in names]
        if all(paths):
            break
    else:
        sys.exit("torch_peer.py: Fashion-MNIST is not in %s: apt-get install dataset-fashion-mnist "
                 "(or set TWB_DATA_DIR)" % ", ".join(folders))

    def idx(path, offset):
        with (gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")) as f:
            return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)

    images = idx(paths[0], 16).reshape(-1, 28, 28)
    labels = idx(paths[1], 8)
    return torch.from_numpy(images.copy()), torch.from_numpy(labels.copy())


def setup_dataset_epoch(args):
    """DataLoader(TensorDataset(...), batch_size=64, shuffle=True,
    num_workers=0), one pass, every batch touched (its first pixel read).
    Two readings of "scaled to float", the faster one kept: uint8 images
    cast and scaled per batch (the same work as twb's pipeline), or a
    TensorDataset of images scaled to float32 beforehand (no per-batch cast,
    but four times the bytes to gather)."""
    from torch.utils.data import DataLoader, TensorDataset

    images, labels = fashion_mnist_train()
    scaled = images.float().mul_(1.0 / 255.0)
    generator = torch.Generator().manual_seed(42)

    def loader(x):
        return DataLoader(TensorDataset(x, labels), batch_size=64, shuffle=True, num_workers=0, generator=generator)

    uint8_loader, float_loader = loader(images), loader(scaled)

    def per_batch(n):
        for _ in range(n):
            s = 0.0
            for x, y in uint8_loader:
                x = x.float().mul_(1.0 / 255.0)
                s += float(x[0, 0, 0])

    def prescaled(n):
        for _ in range(n):
            s = 0.0
            for x, y in float_loader:
                s += float(x[0, 0, 0])

    variants = {"uint8, scaled per batch": per_batch, "float32 dataset": prescaled}
    best, trial = fastest(variants, args.min_time, 1e3)

    # Checksums that do not depend on the order: batches, examples, the sum
    # of every scaled pixel, the sum of the labels.
    batches = examples = 0
    pixels = label_sum = 0.0
    for x, y in uint8_loader:
        x = x.float().mul_(1.0 / 255.0)
        batches += 1
        examples += x.shape[0]
        pixels += float(x.double().sum())
        label_sum += float(y.double().sum())
    return variants[best], [batches, examples, pixels, label_sum], {"variant": best, "trial_ms": trial}


BENCHMARKS = {  # name: (setup, unit, scale, fixed iterations per repetition)
    "add16": (setup_add16, "ns/op", 1e9, False),
    "tiny_step": (setup_tiny_step, "us/step", 1e6, False),
    "matmul_1000": (setup_matmul_1000, "ms/product", 1e3, True),
    "conv_step": (setup_conv_step, "ms/step", 1e3, False),
    "dataset_epoch": (setup_dataset_epoch, "ms/epoch", 1e3, False),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=sorted(BENCHMARKS))
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--min-time", type=float, default=0.25)
    parser.add_argument("--products", type=int, default=25)
    args = parser.parse_args()

    setup, unit, scale, fixed = BENCHMARKS[args.name]
    run, check, extra = setup(args)
    run(1)  # warm up
    iters = args.products if fixed else calibrate(run, args.min_time)
    header = {"name": args.name, "unit": unit, "iters_per_rep": iters, "check": check, "torch": torch.__version__,
              "threads": torch.get_num_threads(), "blas": openblas_cores()}
    header.update(extra)
    print(json.dumps(header), flush=True)

    lines = sys.stdin if args.serve else ["rep"] * args.reps
    for line in lines:
        if not line.startswith("rep"):
            break
        print(json.dumps({"value": timed(run, iters, scale)}), flush=True)


if __name__ == "__main__":
    main()
