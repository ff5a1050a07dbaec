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


def t975(n):
    """Two-sided 95% quantile of t with n-1 degrees of freedom."""
    if n in _t975:
        return _t975[n]
    lo, hi = 0.0, 50.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if t_cdf(mid, n - 1) < 0.975:
            lo = mid
        else:
            hi = mid
    _t975[n] = (lo + hi) / 2
    return _t975[n]


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

# Power: half-width of the log-scale interval, seeds to settle.
out("detectable_sd0.05_n3", math.exp(t975(3) * 0.05 / math.sqrt(3)))
n = 2
while t975(n) * 0.05 / math.sqrt(n) >= 0.03:
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
