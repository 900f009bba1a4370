#!/usr/bin/python3
"""Reference values for tests/test_layers_attention.c from PyTorch (1.13):
writes tests/layers_attention_ref.h. Run from the repository root:

    /usr/bin/python3 tools/gen_attention_ref.py

The tests need only the header; torch is needed to regenerate it.

MultiHeadAttention as Keras computes it, written with torch.einsum on
Keras' weight layout (EinsumDense kernels (dim, heads, size), output kernel
(heads, value_dim, out)), and cross-checked against PyTorch's own
torch.nn.functional.multi_head_attention_forward running the attention
core on the same projections; with an attention_mask too (Keras' additive
-1e9 against PyTorch's boolean attn_mask).
Attention (dot and concat scores) and AdditiveAttention as Keras 3 writes
them, with given scale weights.
"""
import math

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def values(n, seed, scale=1.0):
    return torch.tensor([math.sin(0.37 * i + seed) * scale + 0.1 * math.cos(1.3 * i) for i in range(n)])


out = []


def emit(name, t):
    flat = t.reshape(-1).tolist()
    body = ",\n    ".join(", ".join(repr(v) for v in flat[i:i + 4]) for i in range(0, len(flat), 4))
    shape = "x".join(str(d) for d in t.shape)
    out.append(f"/* {shape} */\nstatic const double {name}[] = {{\n    {body},\n}};\n")


def keras_mha(q, v, k, w, heads, kd, mask=None):
    """mask (B, T, S), 1 keep and 0 hide: Keras' masked softmax adds
    (1 - mask) * -1e9 to the scores (keras.layers.Softmax), every head alike."""
    wq, bq, wk, bk, wv, bv, wo, bo = w
    Q = torch.einsum("btd,dhk->bthk", q, wq) + bq
    K = torch.einsum("bsd,dhk->bshk", k, wk) + bk
    V = torch.einsum("bsd,dhk->bshk", v, wv) + bv
    scores = torch.einsum("bthk,bshk->bhts", Q / math.sqrt(kd), K)
    if mask is not None:
        scores = scores + (1.0 - mask.unsqueeze(1)) * -1e9
    p = torch.softmax(scores, dim=-1)
    c = torch.einsum("bhts,bshk->bthk", p, V)
    return torch.einsum("bthk,hko->bto", c, wo) + bo


# Case 1: self-attention shapes as in the corpus' transformer block, with
# query (2, 3, 4), value = key (2, 5, 4); heads 2, key_dim 3, value_dim 3.
B, T, S, D, H, KD = 2, 3, 5, 4, 2, 3
q = values(B * T * D, 0.1).reshape(B, T, D)
v = values(B * S * D, 0.7).reshape(B, S, D)
w = [values(D * H * KD, 1.1, 0.5).reshape(D, H, KD), values(H * KD, 1.5, 0.2).reshape(H, KD),
     values(D * H * KD, 2.1, 0.5).reshape(D, H, KD), values(H * KD, 2.5, 0.2).reshape(H, KD),
     values(D * H * KD, 3.1, 0.5).reshape(D, H, KD), values(H * KD, 3.5, 0.2).reshape(H, KD),
     values(H * KD * D, 4.1, 0.5).reshape(H, KD, D), values(D, 4.5, 0.2)]
y = keras_mha(q, v, v, w, H, KD)
# Cross-check with PyTorch's own multi-head attention: its projections need
# embed dim H*KD for query, key and value, so the projections are done here in
# Keras' layout and F.multi_head_attention_forward runs the attention core
# with identity projections; Keras' output kernel is applied after.
E = H * KD
Qp = torch.einsum("btd,dhk->bthk", q, w[0]).reshape(B, T, E) + w[1].reshape(E)
Kp = torch.einsum("bsd,dhk->bshk", v, w[2]).reshape(B, S, E) + w[3].reshape(E)
Vp = torch.einsum("bsd,dhk->bshk", v, w[4]).reshape(B, S, E) + w[5].reshape(E)
eye = torch.eye(E)
core, _ = F.multi_head_attention_forward(Qp.transpose(0, 1), Kp.transpose(0, 1), Vp.transpose(0, 1), E, H,
                                         None, None, None, None, False, 0.0, eye, None,
                                         use_separate_proj_weight=True, q_proj_weight=eye, k_proj_weight=eye,
                                         v_proj_weight=eye, need_weights=False)
y_torch = torch.einsum("bte,eo->bto", core.transpose(0, 1), w[6].reshape(E, D)) + w[7]
assert torch.allclose(y, y_torch, atol=1e-12), (y - y_torch).abs().max()
emit("mha_q", q)
emit("mha_v", v)
for name, t in zip(["wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo"], w):
    emit("mha_" + name, t)
emit("mha_y", y)

# Case 1 with an attention_mask (B, T, S), no query step hidden from every
# key step, cross-checked against PyTorch's attention with its boolean
# attn_mask (True: not allowed; per batch and head); and the same mask
# combined with use_causal_mask (Keras ANDs the two).
mask = torch.tensor([[[1, 1, 0, 1, 0], [1, 0, 1, 1, 1], [0, 1, 1, 0, 1]],
                     [[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [1, 0, 1, 0, 1]]], dtype=torch.float64)
y_mask = keras_mha(q, v, v, w, H, KD, mask)
hidden = (mask == 0).repeat_interleave(H, dim=0)
core, _ = F.multi_head_attention_forward(Qp.transpose(0, 1), Kp.transpose(0, 1), Vp.transpose(0, 1), E, H,
                                         None, None, None, None, False, 0.0, eye, None,
                                         use_separate_proj_weight=True, q_proj_weight=eye, k_proj_weight=eye,
                                         v_proj_weight=eye, need_weights=False, attn_mask=hidden)
y_torch = torch.einsum("bte,eo->bto", core.transpose(0, 1), w[6].reshape(E, D)) + w[7]
assert torch.allclose(y_mask, y_torch, atol=1e-12), (y_mask - y_torch).abs().max()
causal = torch.tril(torch.ones(T, S))
emit("mha_mask", mask)
emit("mha_mask_y", y_mask)
emit("mha_mask_causal_y", keras_mha(q, v, v, w, H, KD, mask * causal))

# Case 2: a separate key of another width, value_dim 2, output_shape 3.
KD2, VD2, O2, DK = 3, 2, 3, 5
k2 = values(B * S * DK, 5.3).reshape(B, S, DK)
w2 = [w[0], w[1], values(DK * H * KD2, 6.1, 0.5).reshape(DK, H, KD2), w[3],
      values(D * H * VD2, 6.7, 0.5).reshape(D, H, VD2), values(H * VD2, 7.1, 0.2).reshape(H, VD2),
      values(H * VD2 * O2, 7.7, 0.5).reshape(H, VD2, O2), values(O2, 8.3, 0.2)]
emit("mha2_k", k2)
for name, t in zip(["wk", "wv", "bv", "wo", "bo"], [w2[2], w2[4], w2[5], w2[6], w2[7]]):
    emit("mha2_" + name, t)
emit("mha2_y", keras_mha(q, v, k2, w2, H, KD2))

# Attention and AdditiveAttention on query (2, 3, 4), value (2, 5, 4) and a
# key (2, 5, 4), written out with torch.bmm / tanh as Keras computes them
# (Keras 3's Attention._calculate_scores and AdditiveAttention's).
kq = values(B * S * D, 9.1).reshape(B, S, D)
emit("att_k", kq)


def attend(scores, value):
    return torch.bmm(torch.softmax(scores, dim=-1), value)


scale = torch.tensor(0.7)
emit("att_dot_y", attend(scale * torch.bmm(q, kq.transpose(1, 2)), v))
cw = torch.tensor(1.3)
pair = q.unsqueeze(2) + kq.unsqueeze(1)
emit("att_concat_y", attend(cw * torch.tanh(scale * pair).sum(-1), v))
vscale = values(D, 9.7, 0.8)
emit("add_scale", vscale)
emit("add_y", attend((vscale * torch.tanh(pair)).sum(-1), v))
emit("add_noscale_y", attend(torch.tanh(q.unsqueeze(2) + v.unsqueeze(1)).sum(-1), v))

# The keras-functional corpus' transformer (11-k3-transformer-mha-h5.h5, a
# Keras 3.11 model with its trained weights): the whole model in inference
# on a fixed input, from the weights as h5py reads them, so the engine's
# MultiHeadAttention is checked on Keras' own saved layout.
import h5py  # noqa: E402

H5 = "../shared/corpus/keras-functional/11-k3-transformer-mha-h5.h5"
with h5py.File(H5, "r") as h5:
    def wt(path):
        return torch.tensor(h5["model_weights/" + path][()], dtype=torch.float64)

    def mha_layer(name, x):
        p = f"{name}/{name}/"
        w = [wt(p + part + "/" + kind) for part in ("query", "key", "value", "attention_output")
             for kind in ("kernel", "bias")]
        return keras_mha(x, x, x, w, 4, 8)

    def layer_norm(name, x):
        p = f"{name}/{name}/"
        return F.layer_norm(x, [x.shape[-1]], wt(p + "gamma"), wt(p + "beta"), eps=1e-6)

    def dense(path, x):
        return x @ wt(path + "/kernel") + wt(path + "/bias")

    def block(mha_name, ln1, seq, d1, d2, ln2, x):
        x = layer_norm(ln1, x + mha_layer(mha_name, x))
        ff = dense(f"{seq}/{seq}/{d2}", torch.relu(dense(f"{seq}/{seq}/{d1}", x)))
        return layer_norm(ln2, x + ff)

    tx = values(2 * 30 * 8, 0.3).reshape(2, 30, 8)
    h = block("multi_head_attention_6", "layer_normalization_12", "sequential_9", "dense_24", "dense_25",
              "layer_normalization_13", tx)
    h = block("multi_head_attention_7", "layer_normalization_14", "sequential_10", "dense_26", "dense_27",
              "layer_normalization_15", h)
    h = h.mean(1)
    h = torch.relu(dense("dense_28/dense_28", h))
    h = torch.relu(dense("dense_29/dense_29", h))
    emit("transformer_x", tx)
    emit("transformer_y", dense("dense_30/dense_30", h))

with open("tests/layers_attention_ref.h", "w") as f:
    f.write(f"/* Generated by tools/gen_attention_ref.py (PyTorch {torch.__version__.split('a')[0]}); do not edit. "
            "Reference values for test_layers_attention.c. */\n")
    f.write("#ifndef LAYERS_ATTENTION_REF_H\n#define LAYERS_ATTENTION_REF_H\n\n")
    f.write("\n".join(out))
    f.write("\n#endif\n")
