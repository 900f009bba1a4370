#!/usr/bin/python3
"""Reference values for tests/test_layers_resample.c, computed with PyTorch.

Writes tests/layers_resample_reference.h: for each case a Keras layer config,
its input and weights (in Keras' layouts: NHWC, Conv2DTranspose kernels
(kh, kw, filters, in), depthwise kernels (kh, kw, in, multiplier)) and the
output PyTorch computes for it, with TensorFlow's padding rules applied by
hand (TF pads SAME convolutions with the odd row at the end; PyTorch pads
both ends alike). Run it with Debian's python3-torch:

    /usr/bin/python3 tools/resample_reference.py > tests/layers_resample_reference.h

The test needs no PyTorch: it reads the values this wrote.
"""
import math

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def values(seed, *shape):
    """Deterministic inputs in [-1, 1] with 6 decimals (exact in the header)."""
    n = math.prod(shape)
    v = [round(math.sin(seed * 12.9898 + i * 78.233) * 43758.5453 % 2 - 1, 6) for i in range(n)]
    return torch.tensor(v).reshape(shape)


def same_pad(n, k, stride, dilation):
    """TensorFlow's SAME padding (before, after) for one axis."""
    keff = (k - 1) * dilation + 1
    out = -(-n // stride)
    total = max((out - 1) * stride + keff - n, 0)
    return total // 2, total - total // 2


def deconv_length(n, k, stride, dilation, padding, output_padding):
    """Keras' deconv_output_length."""
    keff = (k - 1) * dilation + 1
    if output_padding is None:
        return n * stride if padding == "same" else n * stride + max(keff - stride, 0)
    pad = keff // 2 if padding == "same" else 0
    return (n - 1) * stride + keff - 2 * pad + output_padding


def conv_transpose_tf(x, kernel, strides, dilation, padding, output_padding):
    """tf.nn.conv2d_transpose as Keras calls it: x NHWC, kernel (kh, kw, out, in)."""
    kh, kw = kernel.shape[0], kernel.shape[1]
    lengths = [deconv_length(x.shape[1 + i], (kh, kw)[i], strides[i], dilation[i], padding,
                             None if output_padding is None else output_padding[i]) for i in range(2)]
    w = kernel.permute(3, 2, 0, 1)  # (in, out, kh, kw)
    full = F.conv_transpose2d(x.permute(0, 3, 1, 2), w, stride=strides, dilation=dilation)
    before = [same_pad(lengths[i], (kh, kw)[i], strides[i], dilation[i])[0] if padding == "same" else 0
              for i in range(2)]
    # The full result, cut to what the forward convolution of the output would read.
    need = [before[i] + lengths[i] - full.shape[2 + i] for i in range(2)]
    full = F.pad(full, (0, max(need[1], 0), 0, max(need[0], 0)))
    y = full[:, :, before[0]:before[0] + lengths[0], before[1]:before[1] + lengths[1]]
    return y.permute(0, 2, 3, 1)


def depthwise_tf(x, kernel, strides, dilation, padding):
    """tf.nn.depthwise_conv2d: x NHWC, kernel (kh, kw, in, multiplier)."""
    kh, kw, c, m = kernel.shape
    xc = x.permute(0, 3, 1, 2)
    if padding == "same":
        ph = same_pad(x.shape[1], kh, strides[0], dilation[0])
        pw = same_pad(x.shape[2], kw, strides[1], dilation[1])
        xc = F.pad(xc, (pw[0], pw[1], ph[0], ph[1]))
    w = kernel.permute(2, 3, 0, 1).reshape(c * m, 1, kh, kw)
    return F.conv2d(xc, w, stride=strides, dilation=dilation, groups=c).permute(0, 2, 3, 1)


def pointwise(x, kernel, bias):
    """1x1 convolution, kernel (1, 1, in, out)."""
    y = torch.einsum("nhwc,co->nhwo", x, kernel[0, 0])
    return y + bias if bias is not None else y


def resize_tf(x, height, width, method):
    """tf.image.resize without antialiasing (half-pixel centres)."""
    mode = {"bilinear": "bilinear", "nearest": "nearest-exact"}[method]
    kw = {"align_corners": False} if method == "bilinear" else {}
    return F.interpolate(x.permute(0, 3, 1, 2), size=(height, width), mode=mode, **kw).permute(0, 2, 3, 1)


cases = []


def case(name, class_name, config, x, weights, y):
    cases.append((name, class_name, config, x, weights, y))


# Conv2DTranspose: strides 2 SAME; VALID with the kernel's overhang; explicit
# output_padding; a kernel smaller than the stride; dilation.
x = values(1, 2, 3, 4, 3)
k = values(2, 3, 3, 5, 3)
b = values(3, 5)
case("Conv2DTranspose same strides 2", "Conv2DTranspose",
     {"filters": "5", "kernel_size": "3,3", "strides": "2,2", "padding": "same"},
     x, [k, b], conv_transpose_tf(x, k, (2, 2), (1, 1), "same", None) + b)
case("Conv2DTranspose valid strides 2,1", "Conv2DTranspose",
     {"filters": "5", "kernel_size": "3,3", "strides": "2,1", "padding": "valid"},
     x, [k, b], conv_transpose_tf(x, k, (2, 1), (1, 1), "valid", None) + b)
case("Conv2DTranspose same output_padding 1,0", "Conv2DTranspose",
     {"filters": "5", "kernel_size": "3,3", "strides": "2,3", "padding": "same", "output_padding": "1,0"},
     x, [k, b], conv_transpose_tf(x, k, (2, 3), (1, 1), "same", (1, 0)) + b)
k2 = values(4, 2, 2, 4, 3)
case("Conv2DTranspose kernel 2 strides 3 valid no bias", "Conv2DTranspose",
     {"filters": "4", "kernel_size": "2", "strides": "3", "use_bias": "false"},
     x, [k2], conv_transpose_tf(x, k2, (3, 3), (1, 1), "valid", None))
case("Conv2DTranspose dilation 2 same", "Conv2DTranspose",
     {"filters": "5", "kernel_size": "3,3", "dilation_rate": "2", "padding": "same"},
     x, [k, b], conv_transpose_tf(x, k, (1, 1), (2, 2), "same", None) + b)

# Conv1DTranspose through the 2-D helper on a height-1 image.
s = values(5, 2, 5, 3)
k1 = values(6, 3, 4, 3)
b1 = values(7, 4)
y1 = conv_transpose_tf(s.unsqueeze(1), k1.unsqueeze(0), (1, 2), (1, 1), "same", None).squeeze(1) + b1
case("Conv1DTranspose same strides 2", "Conv1DTranspose",
     {"filters": "4", "kernel_size": "3", "strides": "2", "padding": "same"}, s, [k1, b1], y1)
y1v = conv_transpose_tf(s.unsqueeze(1), k1.unsqueeze(0), (1, 3), (1, 1), "valid", (0, 2)).squeeze(1) + b1
case("Conv1DTranspose valid strides 3 output_padding 2", "Conv1DTranspose",
     {"filters": "4", "kernel_size": "3", "strides": "3", "output_padding": "2"}, s, [k1, b1], y1v)

# DepthwiseConv2D: multiplier 2 strided SAME (TF's uneven padding); dilated
# VALID; 70 channels (a full block of 64 and a tail).
x = values(8, 2, 5, 6, 3)
dk = values(9, 3, 3, 3, 2)
db = values(10, 6)
case("DepthwiseConv2D multiplier 2 same strides 2", "DepthwiseConv2D",
     {"kernel_size": "3", "strides": "2", "padding": "same", "depth_multiplier": "2"},
     x, [dk, db], depthwise_tf(x, dk, (2, 2), (1, 1), "same") + db)
dk1 = values(11, 2, 3, 3, 1)
case("DepthwiseConv2D dilated valid no bias", "DepthwiseConv2D",
     {"kernel_size": "2,3", "dilation_rate": "2,1", "use_bias": "false"},
     x, [dk1], depthwise_tf(x, dk1, (1, 1), (2, 1), "valid"))
xw = values(12, 1, 4, 3, 70)
dkw = values(13, 3, 3, 70, 1)
dbw = values(14, 70)
case("DepthwiseConv2D 70 channels same", "DepthwiseConv2D",
     {"kernel_size": "3", "padding": "same"}, xw, [dkw, dbw], depthwise_tf(xw, dkw, (1, 1), (1, 1), "same") + dbw)

# SeparableConv2D and SeparableConv1D (causal, dilated).
x = values(15, 2, 5, 5, 3)
sdk = values(16, 3, 3, 3, 2)
spk = values(17, 1, 1, 6, 4)
sb = values(18, 4)
case("SeparableConv2D same multiplier 2", "SeparableConv2D",
     {"filters": "4", "kernel_size": "3", "padding": "same", "depth_multiplier": "2"},
     x, [sdk, spk, sb], pointwise(depthwise_tf(x, sdk, (1, 1), (1, 1), "same"), spk, sb))
case("SeparableConv2D valid strides 2", "SeparableConv2D",
     {"filters": "4", "kernel_size": "3", "strides": "2", "depth_multiplier": "2"},
     x, [sdk, spk, sb], pointwise(depthwise_tf(x, sdk, (2, 2), (1, 1), "valid"), spk, sb))
s = values(19, 2, 7, 3)
s1dk = values(20, 3, 3, 1)
s1pk = values(21, 1, 3, 4)
s1b = values(22, 4)
causal = F.pad(s, (0, 0, 4, 0))  # (kernel - 1) * dilation steps before the start
y = pointwise(depthwise_tf(causal.unsqueeze(1), s1dk.unsqueeze(0), (1, 1), (1, 2), "valid"), s1pk.unsqueeze(0), s1b)
case("SeparableConv1D causal dilated", "SeparableConv1D",
     {"filters": "4", "kernel_size": "3", "padding": "causal", "dilation_rate": "2"},
     s, [s1dk, s1pk, s1b], y.squeeze(1))

# UpSampling2D bilinear; Resizing bilinear and nearest, down and up, and
# crop_to_aspect_ratio (Keras' smart_resize box).
x = values(23, 1, 3, 4, 2)
case("UpSampling2D bilinear 2,3", "UpSampling2D", {"size": "2,3", "interpolation": "bilinear"},
     x, [], resize_tf(x, 6, 12, "bilinear"))
x = values(24, 2, 7, 9, 2)
case("Resizing bilinear down", "Resizing", {"height": "4", "width": "5"}, x, [], resize_tf(x, 4, 5, "bilinear"))
case("Resizing nearest down", "Resizing", {"height": "3", "width": "4", "interpolation": "nearest"},
     x, [], resize_tf(x, 3, 4, "nearest"))
case("Resizing nearest up", "Resizing", {"height": "10", "width": "13", "interpolation": "nearest"},
     x, [], resize_tf(x, 10, 13, "nearest"))
case("Resizing bilinear up", "Resizing", {"height": "11", "width": "20"}, x, [], resize_tf(x, 11, 20, "bilinear"))
x = values(25, 1, 6, 10, 1)
# smart_resize for 6x10 to 4x4: crop_h = min(6, 10 * 4 / 4) = 6, crop_w = min(10, 6 * 4 / 4) = 6, left = 2
case("Resizing crop_to_aspect_ratio", "Resizing", {"height": "4", "width": "4", "crop_to_aspect_ratio": "true"},
     x, [], resize_tf(x[:, :, 2:8, :], 4, 4, "bilinear"))


def array(name, t):
    flat = t.reshape(-1).tolist()
    lines = []
    for i in range(0, len(flat), 6):
        lines.append("    " + ", ".join("%.17g" % v for v in flat[i:i + 6]) + ",")
    return "static const double %s[] = {\n%s\n};\n" % (name, "\n".join(lines))


def ref(name, t):
    return "{%d, {%s}, %s}" % (t.dim(), ", ".join(str(d) for d in t.shape), name)


out = ["/* Generated by tools/resample_reference.py with PyTorch %s: do not edit. */" % torch.__version__, ""]
entries = []
for i, (name, cls, config, x, weights, y) in enumerate(cases):
    out.append(array("case%d_input" % i, x))
    for j, w in enumerate(weights):
        out.append(array("case%d_weight%d" % (i, j), w))
    out.append(array("case%d_output" % i, y))
    cfg = ", ".join('"%s", "%s"' % kv for kv in config.items())
    ws = ", ".join(ref("case%d_weight%d" % (i, j), w) for j, w in enumerate(weights))
    entries.append('    {"%s", "%s", {%s, NULL}, %s, %d, {%s}, %s},' % (
        name, cls, cfg, ref("case%d_input" % i, x), len(weights), ws, ref("case%d_output" % i, y)))
out.append("static const ref_case ref_cases[] = {")
out.extend(entries)
out.append("};")
print("\n".join(out))
