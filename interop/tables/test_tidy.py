"""The tidy results table read with pandas (make test-tidy).

usage: /usr/bin/python3 interop/tables/test_tidy.py RESULTS_DIR

RESULTS_DIR is an exported results/ folder (RESULTS.md's, e.g.
.routebench/smoke/results, or a sweep's results/study-<name>, whose tables
lead with a point column) holding tidy.csv, train_curves.csv and their
Parquet twins (the report stage's; columns in docs/interop.md). The test loads tidy.csv as a pandas
user would, checks its columns and types, recomputes from the per-window
rows what the aggregate rows claim (ppl = exp(mean window loss), the paired
prefix ratio = exp(mean(window_loss - prefix_loss)), the ratio =
ppl(L) / ppl(T)), checks every interval holds its value, checks the
training curves hold every step once, and prints the perplexity by variant
and length and the last held-out loss. Debian has no Parquet reader for pandas
(no pyarrow), so tidy.parquet is only checked to be a Parquet file here;
stages/report's Go test reads it back against the CSV.
"""

import os
import sys

import numpy as np
import pandas as pd

COLUMNS = ["variant", "seed", "corpus", "protocol", "T", "L", "window", "metric", "value", "lo", "hi", "interval", "commit"]
INTERVALS = {"t95:windows", "welch95:windows-L-and-T", "t95:window-prefix-pairs", "range:heads"}
# Metrics kept per window beside a row of their mean over windows (name prefixes;
# copy_gain_controlled is named for the reader, copy_gain would match it too).
WINDOWED = ("position_loss@", "context_gain", "far_mass_probe", "far_coherence", "far_mass_bound", "copy_gain",
            "copy_gain_controlled")
CURVE_COLUMNS = ["variant", "seed", "T", "step", "metric", "value", "commit"]
KEY = ["variant", "seed", "corpus", "protocol", "T", "L"]


def main(results):
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    df = pd.read_csv(os.path.join(results, "tidy.csv"), dtype={"window": "Int64", "interval": "string"}, keep_default_na=False,
                     na_values={"window": [""], "lo": [""], "hi": [""], "interval": [""]})
    sweep = "point" in df.columns  # a sweep's study: a point column leads
    cols, curve_cols = (["point"] + COLUMNS, ["point"] + CURVE_COLUMNS) if sweep else (COLUMNS, CURVE_COLUMNS)
    key = (["point"] if sweep else []) + KEY
    check(list(df.columns) == cols, f"columns {list(df.columns)}, want {cols}")
    for c in ["seed", "T", "L"]:
        check(pd.api.types.is_integer_dtype(df[c]), f"column {c} is {df[c].dtype}, want integers")
    for c in ["value", "lo", "hi"]:
        check(pd.api.types.is_float_dtype(df[c]), f"column {c} is {df[c].dtype}, want floats")
    check(len(df) > 0 and df["value"].notna().all(), "empty table or a value missing")

    iv = df[df["interval"].notna()]
    check(set(iv["interval"]) <= INTERVALS, f"unknown interval codes {set(iv['interval']) - INTERVALS}")
    check(((iv["lo"] <= iv["value"] + 1e-12) & (iv["value"] <= iv["hi"] + 1e-12)).all(), "a value outside its interval")
    check(df[df["interval"].isna()][["lo", "hi"]].isna().all().all(), "bounds on a row without an interval")
    per_window = df["metric"].isin(["window_loss", "prefix_loss"])
    windowed = df["metric"].str.startswith(WINDOWED)
    check(df.loc[per_window, "window"].notna().all() and df.loc[~per_window & ~windowed, "window"].isna().all(),
          "window set on an aggregate row or missing on a per-window row")
    # The position curve's and context gain's means against their window rows.
    wkey = key + ["metric"]
    wmean = df[windowed & df["window"].notna()].groupby(wkey)["value"].mean()
    wagg = df[windowed & df["window"].isna()].set_index(wkey)["value"]
    wdiff = (wagg.reindex(wmean.index) - wmean).abs().max() if len(wmean) else 0.0
    check(len(wagg) == len(wmean) and wdiff < 1e-9, f"a windowed metric's mean differs from its window rows' by {wdiff:.2e}")

    # The aggregates against the per-window rows they summarise (random protocol: every scored position counts).
    wide = df[df["window"].isna()].pivot_table(index=key, columns="metric", values="value", aggfunc="first")
    loss = df[df["metric"] == "window_loss"].pivot_table(index=key + ["window"], values="value")["value"]
    prefix = df[df["metric"] == "prefix_loss"].pivot_table(index=key + ["window"], values="value")["value"]
    ppl = np.exp(loss.groupby(level=key).mean())
    rel = (ppl / wide["ppl"].reindex(ppl.index) - 1).abs().max()
    check(rel < 1e-9, f"ppl differs from exp(mean window loss) by {rel:.2e} (relative)")
    paired = np.exp((loss - prefix.reindex(loss.index)).groupby(level=key).mean()).dropna()
    prel = (paired / wide["prefix_ratio"].reindex(paired.index) - 1).abs().max()
    check(prel < 1e-9, f"prefix_ratio differs from exp(mean(window_loss - prefix_loss)) by {prel:.2e}")
    base = wide["ppl"].groupby(level=key[:-2]).transform(
        lambda s: s.xs(s.index.get_level_values("L").min(), level="L").iloc[0])
    rrel = ((wide["ppl"] / base) / wide["ratio"] - 1).abs().max()
    check(rrel < 1e-9, f"ratio differs from ppl(L) / ppl(first length) by {rrel:.2e}")

    for name in ["tidy.parquet", "train_curves.parquet"]:
        with open(os.path.join(results, name), "rb") as f:
            data = f.read()
        check(data[:4] == b"PAR1" and data[-4:] == b"PAR1", f"{name} is not a Parquet file")

    # The training curves: every step of every run once, from step 1.
    cv = pd.read_csv(os.path.join(results, "train_curves.csv"))
    check(list(cv.columns) == curve_cols, f"train_curves.csv columns {list(cv.columns)}, want {curve_cols}")
    check(set(cv["metric"]) == {"train_loss", "grad_norm", "heldout_loss"}, f"curve metrics {set(cv['metric'])}")
    run = (["point"] if sweep else []) + ["variant", "seed"]
    steps = cv[cv["metric"] == "train_loss"].groupby(run)["step"]
    check((steps.min() == 1).all() and (steps.max() == steps.count()).all() and not cv.duplicated(run + ["step", "metric"]).any(),
          "train_loss steps are not 1..N once each per run")
    check(set(cv["variant"]) == set(df["variant"]), "the curves and the results name different variants")

    print(f"{results}/tidy.csv: {len(df)} rows, {df['variant'].nunique()} variants, seeds {sorted(df['seed'].unique())}, "
          f"corpora {sorted(df['corpus'].unique())}, protocols {sorted(df['protocol'].unique())}, commit {df['commit'].iloc[0]}")
    print(f"recomputed from the window rows: ppl to {rel:.1e}, prefix_ratio to {prel:.1e}, ratio to {rrel:.1e} (relative)")
    print("perplexity, random protocol, held-out split:")
    sel = df[(df["metric"] == "ppl") & (df["protocol"] == "random") & (df["corpus"] == "heldout")]
    print(sel.pivot_table(index=(["point"] if sweep else []) + ["variant", "seed"], columns="L", values="value").round(3).to_string())
    last = cv[cv["metric"] == "heldout_loss"].sort_values("step").groupby(run)[["step", "value"]].last()
    print(f"train_curves.csv: {len(cv)} rows; last held-out loss per variant:")
    print(last.round(4).to_string())
    if failures:
        print("FAIL\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
