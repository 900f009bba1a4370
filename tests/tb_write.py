#!/usr/bin/python3
"""A TensorBoard event-file writer of our own, for the live tests and the
benchmark: Events built with Debian's python3-protobuf from the
descriptors tests/tb_decode.py makes from the format's field numbers,
framed as TFRecords with masked CRC-32C, as PyTorch's SummaryWriter and
the Keras TensorBoard callback write them (nothing shared with Tensor
Workbench's C).

    tb_write.py serve FILE
        Appends to FILE (a file_version record first when FILE is new or
        empty), one event per line read on stdin: "TAG STEP VALUE", a
        simple_value scalar as SummaryWriter.add_scalar writes it. Once
        each event is in the file (written and closed), prints the
        CLOCK_MONOTONIC time (g_get_monotonic_time's clock) in
        microseconds at which its append began, one a line.

    tb_write.py keras DIR
        A log directory as Keras' TensorBoard callback of the TF1 era
        wrote one (histogram_freq=1, write_images): one event file in
        DIR, 20 epochs of the scalars loss and val_loss (simple_value),
        a HistogramProto of a layer's weights (dense/kernel_0) at every
        epoch and a Summary.Image (an RGB PNG) every 5 epochs.

Exit status 2 when python3-protobuf is missing (the caller skips)."""
import math
import os
import struct
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
try:
    import tb_decode
except SystemExit:  # tb_decode exits 2 without python3-protobuf
    sys.exit(2)

C = tb_decode.build_classes()


def record(event):
    data = event.SerializeToString()
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", tb_decode.masked(header)) + data + struct.pack("<I", tb_decode.masked(data))


def file_version(wall):
    e = C["Event"](wall_time=wall, step=0)
    e.file_version = "brain.Event:2"
    return record(e)


def event(step, wall, values):
    e = C["Event"](wall_time=wall, step=step)
    for v in values:
        e.summary.value.append(v)
    return record(e)


def simple_scalar(tag, x):
    return C["SummaryValue"](tag=tag, simple_value=x)


def histogram(tag, samples, k=30):
    """A HistogramProto (TF1's tf.summary.histogram): k equal buckets."""
    lo, hi = min(samples), max(samples)
    width = (hi - lo) / k
    counts = [0.0] * k
    for x in samples:
        counts[min(k - 1, int((x - lo) / width))] += 1
    h = C["HistogramProto"](min=lo, max=hi, num=len(samples), sum=sum(samples), sum_squares=sum(x * x for x in samples),
                            bucket_limit=[lo + (i + 1) * width for i in range(k)], bucket=counts)
    return C["SummaryValue"](tag=tag, histo=h)


def png(width, height, pixel):
    """An 8-bit RGB PNG of pixel(x, y) -> (r, g, b)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\0" + bytes(c for x in range(width) for c in pixel(x, y)) for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def image(tag, width, height, data):
    """A Summary.Image (TF1's tf.summary.image)."""
    return C["SummaryValue"](tag=tag, image=C["SummaryImage"](width=width, height=height, colorspace=3,
                                                            encoded_image_string=data))


def serve(path):
    with open(path, "ab") as f:
        if f.tell() == 0:
            f.write(file_version(time.time()))
    for line in sys.stdin:
        tag, step, value = line.split()
        data = event(int(step), time.time(), [simple_scalar(tag, float(value))])
        started = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        with open(path, "ab") as f:
            f.write(data)
        print(started, flush=True)


def keras(logdir):
    start = 1700000000.0
    epochs = 20
    os.makedirs(logdir, exist_ok=True)
    out = [file_version(start)]
    for epoch in range(epochs):
        wall = start + 30 * epoch
        loss = 2.3 * math.exp(-epoch / 6) + 0.05
        val_loss = 2.3 * math.exp(-epoch / 7) + 0.12 + 0.004 * max(0, epoch - 12) ** 2
        # Weights spreading from a narrow normal as training goes on.
        spread = 0.05 + 0.02 * epoch
        samples = [spread * math.sqrt(-2 * math.log((i + 0.5) / 512)) * math.cos(2 * math.pi * i * 0.618)
                   for i in range(512)]
        values = [simple_scalar("loss", loss), simple_scalar("val_loss", val_loss),
                  histogram("dense/kernel_0", samples)]
        if epoch % 5 == 0:
            # A 64x64 picture that sharpens from noise into rings.
            sharp = epoch / (epochs - 5)
            pixel = lambda x, y: (
                int(127 + 127 * sharp * math.sin(math.hypot(x - 32, y - 32) / 3)),
                int(255 * x / 63), int(((x * 7919 + y * 104729 + epoch) % 256) * (1 - sharp)))
            values.append(image("dense/kernel_0/image", 64, 64, png(64, 64, pixel)))
        out.append(event(epoch, wall, values))
    name = "events.out.tfevents.%d.twb-test" % start
    with open(os.path.join(logdir, name), "wb") as f:
        f.write(b"".join(out))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "serve":
        serve(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "keras":
        keras(sys.argv[2])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
