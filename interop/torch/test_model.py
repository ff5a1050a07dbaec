"""model.py against the native evaluator (make test-torch).

usage: /usr/bin/python3 interop/torch/test_model.py EXPORT_ROOT

EXPORT_ROOT holds one `routebench export --windows N` directory per default
variant (EXPORT_ROOT/<variant>: config.json, model.safetensors,
reference.safetensors with held-out windows and the native evaluator's
log-probs on them). For every variant, model.py's log-probs must match the
native ones within TOLERANCE; then each mutation below must fail that same
check, so the check is known to be able to fail:
  - sign: every rotation turned the other way (q, k, v and the output), for
    each variant that rotates;
  - slopes: ALiBi's slopes in reverse head order, for each ALiBi variant;
  - kerple: KERPLE's p and a in reverse head order in every block, for each
    kerple_log variant.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model  # noqa: E402

# modelspec.DefaultVariants(), in its order; interop/export's Go test keeps
# this list equal to it, so a new default variant needs a port here first.
VARIANTS = ["nope", "rope", "alibi", "kerple-log", "random-qk", "random-qkv", "random-qkv-alibi", "learned-qk", "learned-qkv", "learned-proj-qkv", "path", "path-fox"]

# Largest |log p_torch - log p_native| allowed, in nats. Both compute in
# float32 (angles in float64); their sums run in different orders, so they
# differ by rounding: a few 1e-6 at the smoke shape over 4 T tokens. The
# mutations move log-probs by 0.1 to several nats.
TOLERANCE = 1e-4


def max_diff(m, ref):
    tokens = ref["tokens"].long()
    lp = m.log_probs(tokens[:, :-1], tokens[:, 1:]).double()
    return (lp - ref["logprobs"]).abs().max().item()


def main(root):
    t0 = time.time()
    failures = []
    print(f"{'variant':<18} {'windows x L':>12} {'max |dlogp|':>12}   mutations (max |dlogp|, must exceed {TOLERANCE:g})")
    for v in VARIANTS:
        d = os.path.join(root, v)
        if not os.path.isdir(d):
            failures.append(f"{v}: no export in {d} (run routebench export train --windows N)")
            continue
        m = model.load(d)
        ref, _ = model.load_safetensors(os.path.join(d, "reference.safetensors"))
        if m.cfg["variant"] != v:
            failures.append(f"{v}: {d}/config.json names variant {m.cfg['variant']}")
        diff = max_diff(m, ref)
        if not diff <= TOLERANCE:
            failures.append(f"{v}: log-probs differ from the native evaluator's by {diff:.3e} > {TOLERANCE:g}")
        muts = []
        if m.cfg["rotation"] != "none":
            rotate = model.rotate
            model.rotate = lambda x, cos, sin: rotate(x, cos, -sin)
            try:
                muts.append(("sign", max_diff(m, ref)))
            finally:
                model.rotate = rotate
        if m.cfg["alibi"]:
            cfg = dict(m.cfg, alibi_slopes=m.cfg["alibi_slopes"][::-1])
            tensors, _ = model.load_safetensors(os.path.join(d, "model.safetensors"))
            muts.append(("slopes", max_diff(model.build(cfg, tensors), ref)))
        if m.cfg.get("kerple_log"):
            tensors, _ = model.load_safetensors(os.path.join(d, "model.safetensors"))
            tensors = {n: t.flip(0) if n.endswith(("/kerple_p", "/kerple_a")) else t for n, t in tensors.items()}
            muts.append(("kerple", max_diff(model.build(m.cfg, tensors), ref)))
        for name, md in muts:
            if not md > TOLERANCE:
                failures.append(f"{v}: the {name} mutation was not caught (max difference {md:.3e} <= {TOLERANCE:g})")
        shape = "x".join(str(s) for s in ref["logprobs"].shape)
        print(f"{v:<18} {shape:>12} {diff:>12.3e}   " + ", ".join(f"{n} {md:.3f}" for n, md in muts))
    extra = sorted(set(os.listdir(root)) - set(VARIANTS))
    if extra:
        print(f"(not default variants, not checked: {', '.join(extra)})")
    print(f"test-torch: {len(VARIANTS)} variants in {time.time() - t0:.1f}s")
    if failures:
        print("FAIL\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
