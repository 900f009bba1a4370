#!/usr/bin/python3
"""The PyTorch side of the benchmarks: the same work as bench/twb_bench.c,
speaking the same protocol.

    /usr/bin/python3 bench/torch_peer.py NAME [--reps N | --serve] [--min-time S] [--products N]
                                          [--device DEVICE] [--batch N]

Sets the benchmark up, warms up, picks the iterations per repetition and
prints a JSON header line (unit, iterations per repetition, checksums of the
results, torch version, threads, the OpenBLAS core, the variant chosen),
then one line {"value": TIME_PER_OP} per repetition: --reps of them, or with
--serve one per line "rep" read on stdin until end of input. mlp_epoch and
cnn_epoch time one training epoch a repetition and add fields to the line
(samples_per_second, test_accuracy, peak_rss_mb, ...). Run with Debian's
PyTorch (python3-torch); it uses two threads. mlp_epoch, cnn_epoch and
resnet50_step train on --device (cpu by default; tools/gpu-check gives
cuda, with TF32 off as the engine computes), the data moved there once;
--batch sets resnet50_step's batch (8).
"""
import argparse
import ctypes
import gc
import gzip
import json
import math
import os
import resource
import statistics
import sys
import time

import numpy as np

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(2)
DEVICE = torch.device("cpu")  # --device


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


def setup_depthwise_conv(args):
    # conv_step's work for a depthwise convolution: twb's NHWC input and
    # (kh, kw, in, 1) filter as PyTorch's NCHW and (in, 1, kh, kw), groups = in.
    x_nhwc, w_hwcm = pattern(1, (16, 56, 56, 144)), pattern(2, (3, 3, 144, 1))
    gy_nhwc = pattern(3, (16, 56, 56, 144))

    def tensors(layout):
        fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
        x = x_nhwc.permute(0, 3, 1, 2).contiguous(memory_format=fmt).requires_grad_()
        w = w_hwcm.permute(2, 3, 0, 1).contiguous(memory_format=fmt).requires_grad_()
        gy = gy_nhwc.permute(0, 3, 1, 2).contiguous(memory_format=fmt)
        return x, w, gy

    def runner(layout):
        x, w, gy = tensors(layout)

        def run(n):
            for _ in range(n):
                y = F.conv2d(x, w, padding=1, groups=144)
                gx, gw = torch.autograd.grad(y, (x, w), gy)

        return run

    variants = {layout: runner(layout) for layout in ("channels_last", "nchw")}
    best, trial = fastest(variants, args.min_time, 1e3)
    x, w, gy = tensors(best)
    y = F.conv2d(x, w, padding=1, groups=144)
    gx, gw = torch.autograd.grad(y, (x, w), gy)
    return variants[best], [sum_squares(y), sum_squares(gx), sum_squares(gw)], {"variant": best, "trial_ms": trial}


def fashion_mnist(split="train"):
    """Fashion-MNIST's images (N, 28, 28) and labels (N,) of a split ("train":
    60,000, "t10k": the 10,000 test images), uint8, read once with gzip +
    numpy from where libtw-data looks: $TWB_DATA_DIR, a fashion-mnist folder
    in it, then /usr/share/datasets/fashion-mnist; raw or .gz."""
    env = os.environ.get("TWB_DATA_DIR")
    folders = ([env, os.path.join(env, "fashion-mnist")] if env else []) + ["/usr/share/datasets/fashion-mnist"]
    names = (split + "-images-idx3-ubyte", split + "-labels-idx1-ubyte")

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

    images, labels = fashion_mnist()
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


# ---- mlp_epoch, cnn_epoch: one epoch of Keras-style training on
# Fashion-MNIST (batch 64, file order, Adam 0.001 with Keras' epsilon,
# sparse cross-entropy from logits), then the test set. A repetition is
# measure(): a fresh model, the epoch timed, then the evaluation. -------------

EPOCH_BATCH = 64
CHECK_STEPS = 10


def glorot_pattern(seed, shape):
    """twb_bench.c's set_initial_weight(): pattern() times twice Keras'
    glorot_uniform limit for a weight of this Keras-layout shape (fans as
    Keras computes them: the last two axes times the receptive field)."""
    receptive = 1
    for d in shape[:-2]:
        receptive *= d
    fan_in, fan_out = shape[-2] * receptive, shape[-1] * receptive
    return (pattern(seed, shape).double() * (2.0 * math.sqrt(6.0 / (fan_in + fan_out)))).float()


def mlp_model():
    """784-256-128-10; twb's kernels are (in, out), Linear's weights (out, in)."""
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                          nn.Linear(128, 10))
    kernels = [glorot_pattern(1, (784, 256)).t(), glorot_pattern(2, (256, 128)).t(), glorot_pattern(3, (128, 10)).t()]
    return model, kernels


def cnn_model():
    """Conv(32)-pool-Conv(64)-pool-Flatten-Dense(128)-Dense(10). twb's HWIO
    filters become OIHW; its first Dense kernel reads an NHWC (5, 5, 64)
    flatten, this one an NCHW (64, 5, 5) flatten: the rows are permuted to
    match, so both compute the same function."""
    model = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10))
    kernels = [glorot_pattern(1, (3, 3, 1, 32)).permute(3, 2, 0, 1),
               glorot_pattern(2, (3, 3, 32, 64)).permute(3, 2, 0, 1),
               glorot_pattern(3, (1600, 128)).reshape(5, 5, 64, 128).permute(3, 2, 0, 1).reshape(128, 1600),
               glorot_pattern(4, (128, 10)).t()]
    return model, kernels


def fresh_model(make, variant):
    """The model with the shared initial weights (biases zero) and its Adam."""
    model, kernels = make()
    model = model.to(DEVICE)
    with torch.no_grad():
        for layer, kernel in zip([m for m in model if hasattr(m, "weight")], kernels):
            layer.weight.copy_(kernel)
            layer.bias.zero_()
    if variant["channels_last"]:
        model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.Adam(model.parameters(), lr=0.001, betas=(0.9, 0.999), eps=1e-7, foreach=variant["foreach"])
    return model, opt


class KerasAdam:
    """Adam as Keras computes it, for the check only: Keras adds epsilon to
    sqrt(v) before the bias correction, torch.optim.Adam after it, so with
    the same epsilon the two differ where gradients are tiny (at step 1,
    Keras' 1e-7 acts as 3.2e-6 does in PyTorch's form): their mean loss of
    the first 10 steps differs by about 2e-3. With this update PyTorch
    reproduces the engine's losses to 1e-8; the timed epochs use
    torch.optim.Adam, as PyTorch users do."""

    def __init__(self, params, lr=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
        self.params = list(params)
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.lr, self.beta_1, self.beta_2, self.epsilon, self.t = lr, beta_1, beta_2, epsilon, 0

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        self.t += 1
        alpha = self.lr * math.sqrt(1 - self.beta_2 ** self.t) / (1 - self.beta_1 ** self.t)
        for p, m, v in zip(self.params, self.m, self.v):
            m.add_((p.grad - m) * (1 - self.beta_1))
            v.add_((p.grad * p.grad - v) * (1 - self.beta_2))
            p.sub_(m * alpha / (v.sqrt() + self.epsilon))


def train_step(model, opt, x, y):
    """One step as Keras' fit takes it: forward, loss, gradients, Adam; the
    loss and the number right read out for the epoch's running logs."""
    out = model(x)
    loss = F.cross_entropy(out, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss.item(), int((out.argmax(1) == y).sum())


def batches(n):
    return ((start, min(start + EPOCH_BATCH, n)) for start in range(0, n, EPOCH_BATCH))


def evaluate(model, x, y):
    """Test loss and accuracy, batch 64, no gradients."""
    loss = correct = 0.0
    with torch.no_grad():
        for a, b in batches(len(y)):
            out = model(x[a:b])
            loss += float(F.cross_entropy(out, y[a:b], reduction="sum"))
            correct += int((out.argmax(1) == y[a:b]).sum())
    return loss / len(y), correct / len(y)


def epoch_setup(args, make, image_shape, variants):
    """Loads both splits (scaled to [0, 1] float32, int64 labels), picks the
    fastest variant on a trial, records the check (the loss of the first
    step and the mean loss of the first 10, as fit's logs give them, with
    Keras' Adam; torch.optim.Adam's mean goes in the header beside it) and
    returns measure()."""
    images, labels = fashion_mnist("train")
    x, y = images.float().mul_(1.0 / 255.0).reshape(image_shape), labels.long()
    images, labels = fashion_mnist("t10k")
    x_test, y_test = images.float().mul_(1.0 / 255.0).reshape(image_shape), labels.long()
    del images, labels
    x, y, x_test, y_test = (t.to(DEVICE) for t in (x, y, x_test, y_test))
    n = len(y)

    def trial(variant):
        model, opt = fresh_model(make, variant)
        position = [0]

        def run(iters):  # iters steps, carrying on through the epoch
            for _ in range(iters):
                a = position[0] % (n // EPOCH_BATCH) * EPOCH_BATCH
                train_step(model, opt, x[a:a + EPOCH_BATCH], y[a:a + EPOCH_BATCH])
                position[0] += 1

        return run

    best, trial_ms = fastest({name: trial(v) for name, v in variants.items()}, args.min_time, 1e3)
    variant = variants[best]

    def first_losses(keras_adam):
        model, opt = fresh_model(make, variant)
        if keras_adam:
            opt = KerasAdam(model.parameters())
        return [train_step(model, opt, x[a:b], y[a:b])[0] for a, b in list(batches(n))[:CHECK_STEPS]]

    losses = first_losses(True)
    check = [losses[0], statistics.mean(losses)]
    torch_adam_check = statistics.mean(first_losses(False))

    def measure():
        model, opt = fresh_model(make, variant)
        loss = correct = 0.0
        gc.disable()
        try:
            t0 = time.perf_counter()
            for a, b in batches(n):
                batch_loss, batch_correct = train_step(model, opt, x[a:b], y[a:b])
                loss += batch_loss * (b - a)
                correct += batch_correct
            seconds = time.perf_counter() - t0
        finally:
            gc.enable()
        t0 = time.perf_counter()
        test_loss, test_accuracy = evaluate(model, x_test, y_test)
        eval_s = time.perf_counter() - t0
        peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        return seconds, {"samples_per_second": n / seconds, "test_accuracy": test_accuracy,
                         "peak_rss_mb": peak_rss_mb, "loss": loss / n, "accuracy": correct / n,
                         "test_loss": test_loss, "eval_s": eval_s}

    return measure, check, {"variant": best, "trial_ms": trial_ms, "torch_adam_check": torch_adam_check}


def setup_mlp_epoch(args):
    # Adam's default on the CPU is one loop per parameter; foreach batches them.
    variants = {"adam loop": {"foreach": False, "channels_last": False},
                "adam foreach": {"foreach": True, "channels_last": False}}
    return epoch_setup(args, mlp_model, (-1, 28, 28), variants)


def setup_cnn_epoch(args):
    variants = {"%s, adam %s" % ("channels_last" if cl else "nchw", "foreach" if fe else "loop"):
                {"foreach": fe, "channels_last": cl} for cl in (False, True) for fe in (False, True)}
    return epoch_setup(args, cnn_model, (-1, 1, 28, 28), variants)


# ---- traced_mlp_step: mlp_epoch's model, one training step at a time as
# fit takes it (forward, loss, backward, Adam, the loss and the number right
# read out), on STEP_BATCHES batches of 64 pattern() images with labels
# row % 10; twb-bench times its traced and its eager step. The check is the
# mean loss of the first STEP_BATCHES steps with Keras' Adam. --------------

STEP_BATCHES = 20


def setup_traced_mlp_step(args):
    n = STEP_BATCHES * EPOCH_BATCH
    x, y = pattern(1, (n, 28, 28)), torch.arange(n, dtype=torch.int64) % 10

    def trial(variant):
        model, opt = fresh_model(mlp_model, variant)
        position = [0]

        def run(iters):
            for _ in range(iters):
                a = position[0] % STEP_BATCHES * EPOCH_BATCH
                train_step(model, opt, x[a:a + EPOCH_BATCH], y[a:a + EPOCH_BATCH])
                position[0] += 1

        return run

    variants = {"adam loop": {"foreach": False, "channels_last": False},
                "adam foreach": {"foreach": True, "channels_last": False}}
    runs = {name: trial(v) for name, v in variants.items()}
    best, trial_ms = fastest(runs, args.min_time, 1e3)
    model, _ = fresh_model(mlp_model, variants[best])
    opt = KerasAdam(model.parameters())
    losses = [train_step(model, opt, x[a:a + EPOCH_BATCH], y[a:a + EPOCH_BATCH])[0]
              for a in range(0, n, EPOCH_BATCH)]
    return runs[best], [statistics.mean(losses)], {"variant": best, "trial_ms": trial_ms}


CALIBRATED, FIXED, MEASURED = "calibrated", "fixed", "measured"


def small_chain(x, y):
    """twb_bench.c's small_chain: 29 elementwise ops in the same order."""
    t1 = x * y
    t2 = t1 + x
    t3 = t2 * 0.5
    t4 = t3 - y
    t5 = torch.relu(t4)
    t6 = torch.abs(t2)
    t7 = t5 + t6
    t8 = t7 * t7
    t9 = t8 - t3
    t10 = torch.maximum(t9, y)
    t11 = torch.minimum(t10, x)
    t12 = t11 * 1.5
    t13 = t12 + 0.25
    t14 = torch.square(t13)
    t15 = t14 / (torch.abs(y) + 1.0)
    t16 = torch.neg(t15)
    t17 = t16 + t9
    t18 = t17 * x
    t19 = torch.clamp(t18, -2.0, 2.0)
    t20 = t19 - t12
    t21 = torch.relu(t20)
    t22 = t21 * y
    t23 = t22 + t13
    t24 = t23 - 0.1
    t25 = torch.maximum(t24, t5)
    t26 = t25 * 0.9
    return t26 + t1


def setup_traced_small(args):
    x, y = pattern(1, (1000,)), pattern(2, (1000,))
    traced = torch.jit.trace(small_chain, (x, y))
    # The profiling executor specialises a traced function over its first
    # calls; a warm-up before any timing.
    for _ in range(100):
        traced(x, y)

    def run(n):
        for _ in range(n):
            r = traced(x, y)

    def run_eager(n):
        for _ in range(n):
            r = small_chain(x, y)

    eager_us = timed(run_eager, calibrate(run_eager, args.min_time), 1e6)
    return run, [sum_squares(traced(x, y))], {"variant": "torch.jit.trace", "eager_us": eager_us}


# ---- resnet50_step: torchvision's resnet50 (no pretrained weights), one
# training step a repetition on twb_bench.c's batch: RESNET_BATCH pattern()
# images 224x224x3 (NCHW here; the same numbers), labels i * 37 % 1000,
# cross-entropy on the logits, SGD 0.01. Keras' ResNet50 ends in a softmax
# and its convs have biases (26,560 parameters more); the work is otherwise
# the same. The variant, NCHW or channels-last, is whichever is faster. ---

RESNET_BATCH = 8  # --batch


def peak_rss_mb():
    """The process's peak resident memory in MiB (VmHWM), as twb_bench.c reads it."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def setup_resnet50_step(args):
    import torchvision
    x = pattern(1, (RESNET_BATCH, 224, 224, 3)).permute(0, 3, 1, 2).contiguous()
    y = torch.tensor([i * 37 % 1000 for i in range(RESNET_BATCH)], dtype=torch.int64)
    check = [sum_squares(x), float(y.sum())]
    x, y = x.to(DEVICE), y.to(DEVICE)

    def make(channels_last):
        torch.manual_seed(1)
        model = torchvision.models.resnet50(weights=None).to(DEVICE)
        model.train()
        images = x
        if channels_last:
            model = model.to(memory_format=torch.channels_last)
            images = x.contiguous(memory_format=torch.channels_last)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)

        def step():
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(images), y)
            loss.backward()
            opt.step()
            return float(loss)

        return step

    # One warm-up step and one timed step per variant; the faster is kept.
    trials = {}
    for name, channels_last in (("nchw", False), ("channels_last", True)):
        step = make(channels_last)
        step()
        t0 = time.perf_counter()
        step()
        trials[name] = (time.perf_counter() - t0, step)
    best = min(trials, key=lambda k: trials[k][0])
    step = trials[best][1]
    del trials

    def measure():
        gc.disable()
        try:
            t0 = time.perf_counter()
            loss = step()
            seconds = time.perf_counter() - t0
        finally:
            gc.enable()
        return seconds, {"samples_per_second": RESNET_BATCH / seconds, "peak_rss_mb": peak_rss_mb(), "loss": loss}

    return measure, check, {"variant": best, "torchvision": torchvision.__version__}


# ---- resnet_fmnist_step: examples/models/resnet_fashion_mnist.json in
# PyTorch: conv(32)-BN-ReLU, a residual block of two conv(32)-BN, a stride-2
# conv(64)-BN-ReLU, a residual block of two conv(64)-BN, max pool 2,
# Dense(128, relu), Dense(10); 3x3 convolutions with biases, BN momentum
# 0.01 (Keras' 0.99) and epsilon 1.001e-5. Keras' "same" stride-2 conv pads
# below and right, padding=1 on every side: the same shapes and work. A
# repetition is RESNET_FMNIST_STEPS Adam steps (lr 0.001) of EPOCH_BATCH
# pattern() images, labels i % 10, cross-entropy on the logits (Keras ends
# in a softmax), each side from its own random weights. The variant, NCHW
# or channels-last, is whichever is faster. ---

RESNET_FMNIST_STEPS = 10


class ResidualFashion(nn.Module):
    def __init__(self):
        super().__init__()

        def conv_bn(cin, cout, stride=1):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1), nn.BatchNorm2d(cout, eps=1.001e-5, momentum=0.01))

        self.conv1, self.b1a, self.b1b = conv_bn(1, 32), conv_bn(32, 32), conv_bn(32, 32)
        self.conv2, self.b2a, self.b2b = conv_bn(32, 64, 2), conv_bn(64, 64), conv_bn(64, 64)
        self.fc, self.out = nn.Linear(64 * 7 * 7, 128), nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(x + self.b1b(F.relu(self.b1a(x))))
        x = F.relu(self.conv2(x))
        x = F.relu(x + self.b2b(F.relu(self.b2a(x))))
        x = torch.flatten(F.max_pool2d(x, 2), 1)
        return self.out(F.relu(self.fc(x)))


def setup_resnet_fmnist_step(args):
    n = RESNET_FMNIST_STEPS * EPOCH_BATCH
    x = pattern(1, (n, 28, 28, 1)).permute(0, 3, 1, 2).contiguous()
    y = torch.arange(n, dtype=torch.int64) % 10
    check = [sum_squares(x), float(y.sum())]

    def make(channels_last):
        torch.manual_seed(1)
        model = ResidualFashion()
        model.train()
        images = x
        if channels_last:
            model = model.to(memory_format=torch.channels_last)
            images = x.contiguous(memory_format=torch.channels_last)
        opt = torch.optim.Adam(model.parameters(), lr=0.001, eps=1e-7)

        def steps():
            loss = 0.0
            for a, b in batches(n):
                loss = train_step(model, opt, images[a:b], y[a:b])[0]
            return loss

        return steps

    trials = {}
    for name, channels_last in (("nchw", False), ("channels_last", True)):
        steps = make(channels_last)
        steps()
        t0 = time.perf_counter()
        steps()
        trials[name] = (time.perf_counter() - t0, steps)
    best = min(trials, key=lambda k: trials[k][0])
    steps = trials[best][1]
    del trials

    def measure():
        gc.disable()
        try:
            t0 = time.perf_counter()
            loss = steps()
            seconds = time.perf_counter() - t0
        finally:
            gc.enable()
        return seconds / RESNET_FMNIST_STEPS, {"samples_per_second": n / seconds, "peak_rss_mb": peak_rss_mb(),
                                               "loss": loss}

    return measure, check, {"variant": best}


BENCHMARKS = {  # name: (setup, unit, scale, iterations per repetition)
    "add16": (setup_add16, "ns/op", 1e9, CALIBRATED),
    "tiny_step": (setup_tiny_step, "us/step", 1e6, CALIBRATED),
    "matmul_1000": (setup_matmul_1000, "ms/product", 1e3, FIXED),
    "conv_step": (setup_conv_step, "ms/step", 1e3, CALIBRATED),
    "depthwise_conv": (setup_depthwise_conv, "ms/step", 1e3, CALIBRATED),
    "dataset_epoch": (setup_dataset_epoch, "ms/epoch", 1e3, CALIBRATED),
    # Set up returns measure(): one repetition, (seconds, further fields).
    "mlp_epoch": (setup_mlp_epoch, "s/epoch", 1, MEASURED),
    "cnn_epoch": (setup_cnn_epoch, "s/epoch", 1, MEASURED),
    "traced_small": (setup_traced_small, "us/call", 1e6, CALIBRATED),
    "traced_mlp_step": (setup_traced_mlp_step, "ms/step", 1e3, CALIBRATED),
    "resnet50_step": (setup_resnet50_step, "s/step", 1, MEASURED),
    "resnet_fmnist_step": (setup_resnet_fmnist_step, "ms/step", 1e3, MEASURED),
}


def main():
    global DEVICE, RESNET_BATCH
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=sorted(BENCHMARKS))
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--min-time", type=float, default=0.25)
    parser.add_argument("--products", type=int, default=25)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch", type=int, default=RESNET_BATCH)
    args = parser.parse_args()
    DEVICE, RESNET_BATCH = torch.device(args.device), args.batch
    if DEVICE.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False

    setup, unit, scale, iterations = BENCHMARKS[args.name]
    run, check, extra = setup(args)
    if iterations == MEASURED:
        iters = 1  # the setup's trial and check steps warmed up
    else:
        run(1)  # warm up
        iters = args.products if iterations == FIXED else calibrate(run, args.min_time)
    header = {"name": args.name, "unit": unit, "iters_per_rep": iters, "check": check, "torch": torch.__version__,
              "threads": torch.get_num_threads(), "blas": openblas_cores()}
    header.update(extra)
    print(json.dumps(header), flush=True)

    lines = sys.stdin if args.serve else ["rep"] * args.reps
    for line in lines:
        if not line.startswith("rep"):
            break
        if iterations == MEASURED:
            seconds, fields = run()
            print(json.dumps(dict(value=seconds * scale, **fields)), flush=True)
        else:
            print(json.dumps({"value": timed(run, iters, scale)}), flush=True)


if __name__ == "__main__":
    main()
