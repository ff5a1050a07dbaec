#!/usr/bin/env python3
"""Independent reference numbers for package stats (and the report's v2
claim edges), from the Python standard library only: the Student-t
quantile by bisection on a Simpson-integrated density, the log-scale
t-interval over seeds, the paired prefix ratio from per-position losses,
the paired comparison over seeds, and the power figures.

Run: python3 stats/testdata/reference.py
Its output is pinned in stats/reference_test.go and
stages/report/claimsv2_test.go (the constants there are copied from it);
a change to either side fails the tests.
"""
import math


def t_pdf(x, nu):
    c = math.gamma((nu + 1) / 2) / (math.sqrt(nu * math.pi) * math.gamma(nu / 2))
    return c * (1 + x * x / nu) ** (-(nu + 1) / 2)


def t_cdf(x, nu, steps=20000):
    # 0.5 + integral_0^x pdf, composite Simpson.
    h = x / steps
    s = t_pdf(0, nu) + t_pdf(x, nu)
    for i in range(1, steps):
        s += (4 if i % 2 else 2) * t_pdf(i * h, nu)
    return 0.5 + s * h / 3


_t975 = {}


def t_quantile(n, q):
    """The q quantile of t with n-1 degrees of freedom (q > 0.5)."""
    if (n, q) in _t975:
        return _t975[(n, q)]
    lo, hi = 0.0, 50.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if t_cdf(mid, n - 1) < q:
            lo = mid
        else:
            hi = mid
    _t975[(n, q)] = (lo + hi) / 2
    return _t975[(n, q)]


def t975(n):
    """Two-sided 95% quantile of t with n-1 degrees of freedom."""
    return t_quantile(n, 0.975)


def detectable(sd, n):
    """The log effect a t test on n values detects with 80% power."""
    return (t975(n) + t_quantile(n, 0.80)) * sd / math.sqrt(n)


def mean(x):
    return sum(x) / len(x)


def sd(x):
    m = mean(x)
    return math.sqrt(sum((v - m) ** 2 for v in x) / (len(x) - 1))


def geo(x):
    logs = [math.log(v) for v in x]
    m, s = mean(logs), sd(logs)
    half = t975(len(x)) * s / math.sqrt(len(x))
    return math.exp(m), math.exp(m - half), math.exp(m + half), s


def out(name, *vals):
    print(name, " ".join("%.12g" % v for v in vals))


out("t975_n2", t975(2))
out("t975_n3", t975(3))
out("geo_1.2_1.3_1.5", *geo([1.2, 1.3, 1.5]))

# Paired prefix ratio: 2 windows x 8 positions, T = 2.
losses = [[3.0, 2.5, 2.0, 2.2, 1.9, 2.1, 1.8, 2.0],
          [2.8, 2.6, 2.4, 2.0, 2.3, 1.7, 2.2, 1.9]]
T = 2
d = [mean(w) - mean(w[:T]) for w in losses]
out("prefix_ratio", math.exp(mean(d)))

# Paired comparison over 3 seeds: per-seed per-window differences (nats).
per_seed = [[0.10, 0.20, 0.15], [0.05, 0.10, 0.12], [0.20, 0.18, 0.25]]
out("paired_over_seeds", *geo([math.exp(mean(s)) for s in per_seed])[:3])

# Power (80%): the effect detected, seeds to settle.
out("detectable_sd0.05_n3", math.exp(detectable(0.05, 3)))
n = 2
while detectable(0.05, n) >= 0.03:
    n += 1
out("seeds_to_settle_sd0.05_d0.03", n)

# The v2 edges: three seeds at a*exp(-0.01), a, a*exp(0.01) have log sd
# 0.01 and upper end a*exp(t975(3)*0.01/sqrt(3)); "flat" is upper <= 1.10.
f = math.exp(t975(3) * 0.01 / math.sqrt(3))
out("flat_edge_a", 1.10 / f)
for a in (1.072, 1.074):
    out("flat_upper_a%g" % a, geo([a * math.exp(-0.01), a, a * math.exp(0.01)])[2])
# Paired "beats": per-seed mean log differences c-0.01, c, c+0.01; below 1
# iff c + t975(3)*0.01/sqrt(3) < 0.
out("beats_edge_c", -math.log(f))
# Keep PPL at T: upper <= 1.03 iff c <= log(1.03) - log(f).
out("keep_edge_c", math.log(1.03) - math.log(f))

# Windows for 80% power from a window t half-width 0.2 at 16 windows
# (per-window sd 0.2 * sqrt(16) / t975(16)), to detect 0.1.
sdw = 0.2 * math.sqrt(16) / t975(16)
n = 2
while detectable(sdw, n) >= 0.1:
    n += 1
out("windows_to_settle_h0.2_d0.1_w16", n)
