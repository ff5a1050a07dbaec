"""routebench's transformer in one PyTorch file, for reading and for running.

It builds every default variant (nope, rope, alibi, kerple-log, random-qk,
random-qkv, random-qkv-alibi, learned-qk, learned-qkv, learned-proj-qkv, path,
path-fox) from an export of `routebench export` (docs/interop.md):
model.safetensors, whose tensors are this module's state_dict (its names,
nn.Linear's [out, in] layout), and config.json (model_type, the tokenizer,
the variant and every architectural fact). It was written from
modelspec/weights/ARCHITECTURE.md alone, as a fourth implementation beside
the gomlx model, the native trainer and the native evaluator; `make
test-torch` checks its log-probs against the native evaluator's
(interop/torch/test_model.py).

    import model
    m = model.load("path/to/export/train/rope")          # every file checked
    ids = torch.tensor([m.encode("It is a truth universally acknowledged")])
    logp = m.log_probs(ids[:, :-1], ids[:, 1:])           # [B, L] nats

or, with no helper of ours beyond the class:

    m = model.Transformer(json.load(open(".../config.json")))
    m.load_state_dict(safetensors.torch.load_file(".../model.safetensors"), strict=True)

A damaged or mismatched file is an ExportError, one line naming the file and
the fault. Everything runs in float32 except the rotation angles and the
forget gate's prefix sums, which are summed in float64 as the native
evaluator sums them, and KERPLE's bias, computed in float64 and rounded once
(a float32 log1p would add its own rounding for nothing). The attention is
the plain L x L one: fine for a few thousand tokens, not for routebench's
65,536-token windows (the native evaluator streams those).
"""

import hashlib
import json
import math
import os
import struct
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


# ---------------------------------------------------------------------------
# Files: every fault is an ExportError whose message is one line naming the
# file and the fault, never a raw struct, KeyError or UnicodeDecodeError.

FORMAT = "routebench-export/2"


class ExportError(ValueError):
    """A file of an export that this module refuses: str() is one line, "<path>: <fault>"."""


def _fail(path, fault):
    raise ExportError(f"{path}: {' '.join(str(fault).split())}")


DTYPES = {"F32": (torch.float32, 4), "F64": (torch.float64, 8), "I32": (torch.int32, 4)}


def read_safetensors(path):
    """({name: tensor}, metadata, sha256 of the data section) of a safetensors
    file of F32, F64 and I32 tensors. The header, every dtype, shape and byte
    range are checked: the ranges must tile the data section exactly."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        _fail(path, f"cannot read it: {e.strerror}")
    if len(data) < 8:
        _fail(path, f"{len(data)} bytes, shorter than the 8-byte header length (not a safetensors file)")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        _fail(path, f"header length {n} exceeds the file's {len(data)} bytes (truncated, or not a safetensors file)")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        _fail(path, f"the header is not UTF-8 JSON ({e})")
    if not isinstance(header, dict):
        _fail(path, "the header is not a JSON object")
    meta = header.pop("__metadata__", {})
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        _fail(path, "__metadata__ is not a map of strings")
    body = data[8 + n:]
    tensors, spans = {}, []
    for name, e in header.items():
        if not isinstance(e, dict) or set(e) != {"dtype", "shape", "data_offsets"}:
            _fail(path, f"tensor {name!r}: entry {e!r} is not {{dtype, shape, data_offsets}}")
        if e["dtype"] not in DTYPES:
            _fail(path, f"tensor {name!r}: dtype {e['dtype']!r}; an export holds F32, F64 and I32 only")
        dtype, width = DTYPES[e["dtype"]]
        shape, off = e["shape"], e["data_offsets"]
        if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
            _fail(path, f"tensor {name!r}: shape {shape!r} is not a list of non-negative integers")
        if not (isinstance(off, list) and len(off) == 2 and all(isinstance(o, int) for o in off) and 0 <= off[0] <= off[1] <= len(body)):
            _fail(path, f"tensor {name!r}: byte range {off!r} lies outside the {len(body)}-byte data section")
        count = math.prod(shape)
        if off[1] - off[0] != count * width:
            _fail(path, f"tensor {name!r}: byte range {off!r} holds {off[1] - off[0]} bytes, shape {shape} of {e['dtype']} needs {count * width}")
        spans.append((off[0], off[1], name))
        t = torch.frombuffer(bytearray(body[off[0]:off[1]]), dtype=dtype) if count else torch.zeros(0, dtype=dtype)
        if sys.byteorder != "little":
            t = t.byteswap() if hasattr(t, "byteswap") else _fail(path, "this host is big-endian; safetensors is little-endian")
        tensors[name] = t.reshape(shape)
    pos = 0
    for lo, hi, name in sorted(spans):
        if lo != pos:
            _fail(path, f"tensor {name!r} starts at byte {lo} of the data section, where {pos} was expected (overlapping or gapped ranges)")
        pos = hi
    if pos != len(body):
        _fail(path, f"the tensors cover {pos} of the data section's {len(body)} bytes")
    return tensors, meta, hashlib.sha256(body).hexdigest()


def load_safetensors(path):
    """{name: tensor}, metadata of a safetensors file (read_safetensors' checks)."""
    tensors, meta, _ = read_safetensors(path)
    return tensors, meta


CONFIG_KEYS = ["model_type", "routebench_format", "variant", "vocab", "d_model", "layers", "heads", "d_hidden", "norm_eps",
               "rotation", "value_rot", "alibi", "d_head", "rotation_pairs", "attention_scale", "tokenizer", "weights_sha256"]


def read_config(path):
    """config.json of an export, checked for the keys this module reads."""
    try:
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f)
    except OSError as e:
        _fail(path, f"cannot read it: {e.strerror}")
    except ValueError as e:
        _fail(path, f"not JSON ({e})")
    if not isinstance(cfg, dict):
        _fail(path, "not a JSON object")
    if cfg.get("model_type") != "routebench" or cfg.get("routebench_format") != FORMAT:
        _fail(path, f"model_type {cfg.get('model_type')!r}, routebench_format {cfg.get('routebench_format')!r}; this file reads routebench {FORMAT} (re-export with this checkout's routebench)")
    missing = [k for k in CONFIG_KEYS if k not in cfg]
    if missing:
        _fail(path, f"no {', '.join(missing)}")
    return cfg


def check_metadata(path, meta, cfg, digest=None):
    """The safetensors metadata of an export's file against its config.json."""
    if meta.get("format") != "pt" or meta.get("routebench_format") != FORMAT:
        _fail(path, f"metadata format {meta.get('format')!r}, routebench_format {meta.get('routebench_format')!r}; an export says 'pt' and {FORMAT!r}")
    if meta.get("variant") != cfg["variant"]:
        _fail(path, f"variant {meta.get('variant')!r}, but config.json says {cfg['variant']!r}: the files come from different exports")
    if meta.get("weights_sha256") != cfg["weights_sha256"]:
        _fail(path, f"weights_sha256 {meta.get('weights_sha256', '')[:12]!r}, config.json's {cfg['weights_sha256'][:12]!r}: the files come from different weights")
    if digest is not None and digest != cfg["weights_sha256"]:
        _fail(path, f"its tensor data hash to {digest[:12]}, not the weights_sha256 {cfg['weights_sha256'][:12]} it carries: the file is damaged")


# ---------------------------------------------------------------------------
# The pieces

class RMSNorm(nn.Module):
    """u / sqrt(mean(u^2) + eps) * weight."""

    def __init__(self, d, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


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
        self.norm1, self.norm2 = RMSNorm(D, cfg["norm_eps"]), RMSNorm(D, cfg["norm_eps"])
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(D, D, bias=False) for _ in range(4))
        self.w1, self.w2 = nn.Linear(D, Fh), nn.Linear(Fh, D)
        if cfg.get("angle_proj"):  # learned-proj-qkv: this block's own angles
            self.angle_proj = nn.Linear(D, H * P, bias=False)
        if cfg.get("householder"):  # PaTH
            R, K = cfg["path_rank"], cfg["path_conv"]
            self.wpath_down, self.wpath_up = nn.Linear(D, R, bias=False), nn.Linear(R, D, bias=False)
            self.path_conv = nn.Parameter(torch.zeros(K, D))
            self.wbeta = nn.Linear(D, H)
            if cfg.get("forget_gate"):  # PaTH-FoX
                self.wgate = nn.Linear(D, H)
        if cfg.get("kerple_log"):  # KERPLE's log bias: this block's p_h and a_h
            self.kerple_p, self.kerple_a = nn.Parameter(torch.zeros(H)), nn.Parameter(torch.zeros(H))

    def forward(self, h, psi):
        a = self.norm1(h)
        h = h + self.wo(self.attention(a, psi))
        return h + self.w2(F.gelu(self.w1(self.norm2(h)), approximate="tanh"))

    def attention(self, a, psi):
        """a [B, L, D], the normed block input; psi [B, L, H, P] float64 angles
        or None. Returns the heads' outputs [B, L, D], before wo."""
        cfg = self.cfg
        B, L, D = a.shape
        H, d = cfg["heads"], cfg["d_head"]
        q, k, v = (w(a).view(B, L, H, d) for w in (self.wq, self.wk, self.wv))
        if cfg.get("angle_proj"):
            psi = route_sums(self.angle_proj(a).view(B, L, H, -1))
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
        z = self.wpath_up(self.wpath_down(a))
        # depthwise causal convolution: tap t multiplies z_{i-t} (zero before the window)
        conv = sum(self.path_conv[t] * F.pad(z, (0, 0, t, 0))[:, :L] for t in range(cfg["path_conv"]))
        y = F.silu(conv).view(B, L, H, d)
        w = (y / torch.sqrt((y * y).sum(-1, keepdim=True) + cfg["path_norm_eps"])).transpose(1, 2)
        beta = (2 * torch.sigmoid(self.wbeta(a))).transpose(1, 2)  # [B, H, L]
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
        s = s * cfg["attention_scale"]
        if cfg.get("forget_gate"):  # the gate sits inside the scale, as PaTH's kernel
            s = s + gate_logits(self.wgate(a), cfg["attention_scale"])
        return s


def gate_logits(pre, scale):
    """FoX's gate term (G_i - G_j) * scale, [B, H, L, L] float32, from the
    gate's pre-activations [B, L, H]: G_i = sum_{t<=i} logsigmoid(pre_t) per
    head, summed and differenced in float64 and rounded once, as the native
    evaluator does. G falls by about a nat every few tokens, so in float32
    G_i - G_j loses digits as i grows: 2.4e-5 nats a token by 512 tokens."""
    G = torch.cumsum(F.logsigmoid(pre.double()), dim=1).transpose(1, 2)  # [B, H, L]
    return ((G[..., :, None] - G[..., None, :]) * scale).float()


class Transformer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        V, D, H, P = cfg["vocab"], cfg["d_model"], cfg["heads"], cfg["rotation_pairs"]
        self.embed = nn.Embedding(V, D)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg["layers"]))
        self.normf = RMSNorm(D, cfg["norm_eps"])
        self.unembed = nn.Linear(D, V, bias=False)
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
        h = self.embed(tokens)
        psi = self.positions(tokens)
        for block in self.blocks:
            h = block(h, psi)
        return self.unembed(self.normf(h))

    @torch.no_grad()
    def log_probs(self, tokens, targets):
        """log p(targets_i | tokens_0..i) in nats, [B, L]."""
        logp = torch.log_softmax(self(tokens), dim=-1)
        return logp.gather(-1, targets[..., None].long()).squeeze(-1)


    # The byte tokenizer (config.json's "tokenizer"; gpt2 exports need tiktoken's r50k_base).

    def _bytes_tokenizer(self):
        tok = self.cfg["tokenizer"]
        if tok.get("kind") != "bytes":
            raise ExportError(f"config.json: tokenizer {tok.get('kind')!r}: model.py encodes the bytes tokenizer only; encode with tiktoken's r50k_base (GPT-2), encode_ordinary")
        return tok

    def encode(self, text, end_of_document=False):
        """Token ids of text, as the tokenize stage made them: CRLF -> LF, then
        the UTF-8 bytes, id = byte value; end_of_document appends the special id."""
        tok = self._bytes_tokenizer()
        ids = list(text.replace("\r\n", "\n").encode("utf-8"))
        return ids + [tok["special_ids"]["end_of_document"]] if end_of_document else ids

    def decode(self, ids, end_of_document="\n\n"):
        """Text of token ids: each end-of-document id becomes the given string,
        the bytes between are read as UTF-8 (a cut character becomes U+FFFD)."""
        tok = self._bytes_tokenizer()
        eod, out, run = tok["special_ids"]["end_of_document"], [], bytearray()
        for i in (int(x) for x in ids):
            if i == eod:
                out += [run.decode("utf-8", errors="replace"), end_of_document]
                run = bytearray()
            else:
                run.append(i)
        return "".join(out) + run.decode("utf-8", errors="replace")


def load(export_dir):
    """The model of one export directory (config.json, model.safetensors),
    every file checked: the header, dtypes, byte ranges, finite weights, the
    variant and the weights digest against config.json, and the tensors
    against the model's state_dict (strict). Raises ExportError."""
    cfg_path, st_path = os.path.join(export_dir, "config.json"), os.path.join(export_dir, "model.safetensors")
    cfg = read_config(cfg_path)
    tensors, meta, digest = read_safetensors(st_path)
    check_metadata(st_path, meta, cfg, digest)
    for name, t in tensors.items():
        if t.dtype != torch.float32:
            _fail(st_path, f"tensor {name!r} is {t.dtype}; weights are F32")
        bad = (~torch.isfinite(t)).sum().item()
        if bad:
            _fail(st_path, f"tensor {name!r} holds {bad} non-finite values (NaN or inf) of {t.numel()}")
    m = Transformer(cfg)
    try:
        m.load_state_dict(tensors, strict=True)
    except RuntimeError as e:
        _fail(st_path, f"does not fit config.json's {cfg['variant']} model: {e}")
    return m.eval()


def load_reference(export_dir):
    """(tokens [N, L+1] int64, logprobs [N, L] float64) of an export's
    reference.safetensors, checked to be scored with its model's weights."""
    cfg = read_config(os.path.join(export_dir, "config.json"))
    path = os.path.join(export_dir, "reference.safetensors")
    ref, meta, _ = read_safetensors(path)
    check_metadata(path, meta, cfg)
    tokens, lp = ref.get("tokens"), ref.get("logprobs")
    if tokens is None or lp is None or tokens.dim() != 2 or lp.dim() != 2 or tokens.shape[0] != lp.shape[0] or tokens.shape[1] != lp.shape[1] + 1:
        _fail(path, "no tokens [N, L+1] and logprobs [N, L] tensors")
    return tokens.long(), lp
