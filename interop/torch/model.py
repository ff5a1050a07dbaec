"""routebench's transformer in one PyTorch file, for reading and for running.

It builds every default variant (nope, rope, alibi, kerple-log, random-qk,
random-qkv, random-qkv-alibi, learned-qk, learned-qkv, learned-proj-qkv, path,
path-fox) from an export of `routebench export` (docs/interop.md):
model.safetensors (the tensors of modelspec/weights/ARCHITECTURE.md, under the
same names) and config.json (the variant and every architectural fact). It was
written from ARCHITECTURE.md alone, as a fourth implementation beside the gomlx
model, the native trainer and the native evaluator; `make test-torch` checks
its log-probs against the native evaluator's (interop/torch/test_model.py).

    import model
    m = model.load("path/to/export/train/rope")
    logp = m.log_probs(tokens[:, :-1], tokens[:, 1:])   # [B, L] nats

Everything runs in float32 except the rotation angles, which are summed in
float64 as the spec says, and KERPLE's bias, computed in float64 and rounded
once (a float32 log1p would add its own rounding for nothing). The attention
is the plain L x L one: fine for a few thousand tokens, not for routebench's
65,536-token windows (the native evaluator streams those).
"""

import json
import math
import os
import re
import struct

import torch
import torch.nn as nn
import torch.nn.functional as F


# ---------------------------------------------------------------------------
# Files

def load_safetensors(path):
    """Reads a safetensors file (F32, F64, I32) into {name: tensor}, metadata."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    body = data[8 + n:]
    dtypes = {"F32": torch.float32, "F64": torch.float64, "I32": torch.int32}
    tensors = {}
    for name, e in header.items():
        lo, hi = e["data_offsets"]
        t = torch.frombuffer(bytearray(body[lo:hi]), dtype=dtypes[e["dtype"]])  # little-endian host
        tensors[name] = t.reshape(e["shape"])
    return tensors, meta


def torch_name(name):
    """routebench's tensor name -> this module's: block003/wq -> blocks.3.wq."""
    m = re.fullmatch(r"block(\d+)/(\w+)", name)
    return f"blocks.{int(m.group(1))}.{m.group(2)}" if m else name


# ---------------------------------------------------------------------------
# The pieces

def rms_norm(x, gain, eps):
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps) * gain


def reduce_angle(x):
    """x modulo 2 pi in [-pi, pi] (IEEE remainder, as Go's math.Remainder)."""
    return x - 2 * math.pi * torch.round(x / (2 * math.pi))


def route_sums(steps):
    """psi_i = sum_{s<=i} steps_s along dim 1, in float64. The spec reduces the
    sum after every token; summing first and reducing once differs by far less
    than float32's resolution of cos and sin at the lengths this file handles."""
    return reduce_angle(torch.cumsum(steps.double(), dim=1))


def rotate(x, cos, sin):
    """Turns each interleaved pair (dims 2p, 2p+1) of x [..., d] by the angle
    whose cos and sin are [..., d/2]: (u0, u1) -> (u0 c - u1 s, u0 s + u1 c)."""
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)


# ---------------------------------------------------------------------------
# The model

class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        D, Fh, H, P = cfg["d_model"], cfg["d_hidden"], cfg["heads"], cfg["rotation_pairs"]
        z = lambda *shape: nn.Parameter(torch.zeros(*shape))
        self.norm1, self.norm2 = z(D), z(D)
        self.wq, self.wk, self.wv, self.wo = z(D, D), z(D, D), z(D, D), z(D, D)
        self.w1, self.b1, self.w2, self.b2 = z(D, Fh), z(Fh), z(Fh, D), z(D)
        if cfg.get("angle_proj"):  # learned-proj-qkv: this block's own angles
            self.angle_proj = z(D, H * P)
        if cfg.get("householder"):  # PaTH
            R, K = cfg["path_rank"], cfg["path_conv"]
            self.wpath_down, self.wpath_up, self.path_conv = z(D, R), z(R, D), z(K, D)
            self.wbeta, self.bbeta = z(D, H), z(H)
            if cfg.get("forget_gate"):  # PaTH-FoX
                self.wgate, self.bgate = z(D, H), z(H)
        if cfg.get("kerple_log"):  # KERPLE's log bias: this block's p_h and a_h
            self.kerple_p, self.kerple_a = z(H), z(H)

    def forward(self, h, psi):
        eps = self.cfg["norm_eps"]
        a = rms_norm(h, self.norm1, eps)
        h = h + self.attention(a, psi) @ self.wo
        m = rms_norm(h, self.norm2, eps)
        return h + F.gelu(m @ self.w1 + self.b1, approximate="tanh") @ self.w2 + self.b2

    def attention(self, a, psi):
        """a [B, L, D], the normed block input; psi [B, L, H, P] float64 angles
        or None. Returns the heads' outputs [B, L, D], before wo."""
        cfg = self.cfg
        B, L, D = a.shape
        H, d = cfg["heads"], cfg["d_head"]
        q, k, v = ((a @ w).view(B, L, H, d) for w in (self.wq, self.wk, self.wv))
        if cfg.get("angle_proj"):
            psi = route_sums((a @ self.angle_proj).view(B, L, H, -1))
        if psi is not None:
            cos, sin = torch.cos(psi).float(), torch.sin(psi).float()
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
            if cfg["value_rot"]:  # value transport: v_j turned by psi_j ...
                v = rotate(v, cos, sin)
        if cfg.get("householder"):
            s = self.path_logits(a, q, k)
        else:
            s = torch.einsum("bihd,bjhd->bhij", q, k) * cfg["attention_scale"]
        i = torch.arange(L)
        dist = (i[:, None] - i[None, :]).float()  # i - j
        if cfg["alibi"]:
            slopes = torch.tensor(cfg["alibi_slopes"], dtype=torch.float32)
            s = s - slopes[:, None, None] * dist
        if cfg.get("kerple_log"):
            s = s - self.kerple_bias(dist)
        s = s.masked_fill(dist < 0, float("-inf"))  # causal: j <= i
        o = torch.einsum("bhij,bjhd->bihd", torch.softmax(s, dim=-1), v)
        if psi is not None and cfg["value_rot"]:  # ... and the output by -psi_i
            o = rotate(o, cos, -sin)
        return o.reshape(B, L, D)

    def kerple_bias(self, dist):
        """KERPLE: p' log(1 + a' (i - j)) per head, [H, L, L], to subtract from
        the scaled logits; p' = max(kerple_p, eps), a' = max(kerple_a, eps):
        the stored values may lie below the floor, the bias never uses them
        there. Keys past the query (i - j < 0) get 0; the mask removes them."""
        eps = self.cfg["kerple_eps"]
        p = self.kerple_p.double().clamp(min=eps)[:, None, None]
        a = self.kerple_a.double().clamp(min=eps)[:, None, None]
        return (p * torch.log1p(a * dist.double().clamp(min=0))).float()

    def path_logits(self, a, q, k):
        """PaTH: s_ij = (q_i^T H_i H_{i-1} ... H_{j+1} k_j + G_i - G_j) / sqrt(d),
        H_t = I - beta_t w_t w_t^T, as [B, H, L, L] (upper triangle unused)."""
        cfg = self.cfg
        B, L, D = a.shape
        H, d = cfg["heads"], cfg["d_head"]
        z = (a @ self.wpath_down) @ self.wpath_up
        # depthwise causal convolution: tap t multiplies z_{i-t} (zero before the window)
        conv = sum(self.path_conv[t] * F.pad(z, (0, 0, t, 0))[:, :L] for t in range(cfg["path_conv"]))
        y = F.silu(conv).view(B, L, H, d)
        w = (y / torch.sqrt((y * y).sum(-1, keepdim=True) + cfg["path_norm_eps"])).transpose(1, 2)
        beta = (2 * torch.sigmoid(a @ self.wbeta + self.bbeta)).transpose(1, 2)  # [B, H, L]
        q, k = q.transpose(1, 2), k.transpose(1, 2)  # [B, H, L, d]
        # Walk j from the last position down, keeping u_i = H_{j+1} ... H_i q_i
        # for every i >= j (u_j = q_j): then s_ij = u_i . k_j, and applying
        # H_j to every u_i, i >= j, steps to j - 1.
        u = q.clone()
        s = q.new_zeros(B, H, L, L)
        for j in range(L - 1, -1, -1):
            s[:, :, j:, j] = (u[:, :, j:] * k[:, :, j, None]).sum(-1)
            wj = w[:, :, j, None]  # [B, H, 1, d]
            u[:, :, j:] = u[:, :, j:] - beta[:, :, j, None, None] * (u[:, :, j:] * wj).sum(-1, keepdim=True) * wj
        if cfg.get("forget_gate"):  # FoX: G_i = sum_{t<=i} logsigmoid(a_t wgate + bgate), per head
            G = torch.cumsum(F.logsigmoid(a @ self.wgate + self.bgate), dim=1).transpose(1, 2)
            s = s + G[..., :, None] - G[..., None, :]
        return s * cfg["attention_scale"]  # the gate sits inside the scale, as PaTH's kernel


class Transformer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        V, D, H, P = cfg["vocab"], cfg["d_model"], cfg["heads"], cfg["rotation_pairs"]
        self.embed = nn.Parameter(torch.zeros(V, D))
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg["layers"]))
        self.normf = nn.Parameter(torch.zeros(D))
        self.unembed = nn.Parameter(torch.zeros(D, V))
        if cfg["rotation"] == "accumulated" and not cfg.get("angle_proj"):
            self.angles = nn.Parameter(torch.zeros(V, H, P))  # per-token steps of the route sums

    def positions(self, tokens):
        """Rotation angles psi [B, L, H, P] in float64, or None (nope, alibi,
        path, and learned-proj-qkv whose blocks form their own)."""
        cfg = self.cfg
        B, L = tokens.shape
        H, P = cfg["heads"], cfg["rotation_pairs"]
        if cfg["rotation"] == "rope":  # psi_i = i theta_p, the same for every head
            freqs = torch.tensor(cfg["rope_frequencies"], dtype=torch.float64)
            psi = reduce_angle(torch.arange(L, dtype=torch.float64)[:, None] * freqs)
            return psi[None, :, None, :].expand(B, L, H, P)
        if hasattr(self, "angles"):  # accumulated: psi_i = sum_{s<=i} angles[x_s]
            return route_sums(self.angles[tokens])
        return None

    def forward(self, tokens):
        """Logits [B, L, V] of every position of tokens [B, L]."""
        h = self.embed[tokens]
        psi = self.positions(tokens)
        for block in self.blocks:
            h = block(h, psi)
        return rms_norm(h, self.normf, self.cfg["norm_eps"]) @ self.unembed

    @torch.no_grad()
    def log_probs(self, tokens, targets):
        """log p(targets_i | tokens_0..i) in nats, [B, L]."""
        logp = torch.log_softmax(self(tokens), dim=-1)
        return logp.gather(-1, targets[..., None].long()).squeeze(-1)


def build(cfg, tensors):
    """A Transformer of config cfg holding tensors (routebench names); every
    tensor the variant needs must be there and no other (load_state_dict's
    strict check)."""
    m = Transformer(cfg)
    m.load_state_dict({torch_name(n): t.float() for n, t in tensors.items()}, strict=True)
    return m.eval()


def load(export_dir):
    """The model of one export directory (config.json, model.safetensors)."""
    with open(os.path.join(export_dir, "config.json")) as f:
        cfg = json.load(f)
    if cfg.get("format") != "routebench-export/1":
        raise ValueError(f"{export_dir}/config.json: format {cfg.get('format')!r}, this file reads routebench-export/1")
    tensors, _ = load_safetensors(os.path.join(export_dir, "model.safetensors"))
    return build(cfg, tensors)
