"""The tidy tables read with pandas (make test-tidy).

usage: /usr/bin/python3 interop/tables/test_tidy.py CSV_DIR

CSV_DIR holds tidy.csv and train_curves.csv as `routebench tables` writes them
from an exported tables folder (the report's results/, or a sweep's
results/study-<name>, whose tables lead with a point column; columns in
docs/interop.md). Debian's pandas has no Parquet reader, so pandas reads the
CSV; interop/tables/check_parquet.mjs (hyparquet) checks the Parquet files and
that every cell equals the CSV's. The test loads tidy.csv as a pandas user
would, checks its columns and types, and recomputes what the aggregate rows
claim from the rows they summarise: from the window rows, ppl =
exp(mean window loss), the paired prefix ratio = exp(mean(window_loss -
prefix_loss)), ratio = ppl(L) / ppl(first length), and each windowed metric's
seed row (its mean over windows); from the seed rows, each all row (the
geometric mean over seeds for ppl, ratio, prefix_ratio and the route windows,
with an interval symmetric on the log scale; the mean, with a symmetric
interval, for the rest; n_seeds the seeds combined). It checks every interval
holds its value and the training curves hold every step once, prints the
perplexity by variant and length and the last held-out loss, and then shows
that its checks can fail: a window loss moved by 0.01 nats, and an all row
recomputed as the arithmetic mean, must each be caught.
"""

import os
import sys

import numpy as np
import pandas as pd

COLUMNS = ["level", "variant", "seed", "corpus", "protocol", "T", "L", "metric", "distance", "pos_start", "pos_end", "gap",
           "window", "n_seeds", "value", "lo", "hi", "interval"]
NULLABLE_INT = ["seed", "L", "distance", "pos_start", "pos_end", "gap", "window", "n_seeds"]
PARAMS = ["distance", "pos_start", "pos_end", "gap"]
INTERVALS = {"t95:windows", "welch95:windows-L-and-T", "t95:window-prefix-pairs", "range:heads", "t95:seeds", "logt95:seeds"}
LOG_SCALE = {"ppl", "ratio", "prefix_ratio", "route_window_median", "route_window_predicted_median"}
CURVE_COLUMNS = ["variant", "seed", "T", "step", "metric", "value"]
TOL = 1e-9


def load(csv_dir):
    path = os.path.join(csv_dir, "tidy.csv")
    df = pd.read_csv(path, dtype={**{c: "Int64" for c in NULLABLE_INT}, "interval": "string"}, keep_default_na=False,
                     na_values={c: [""] for c in NULLABLE_INT + ["lo", "hi", "interval"]})
    return df


def keys(df):
    sweep = "point" in df.columns
    return sweep, (["point"] if sweep else [])


def keyed(df):
    """df with its nullable integer columns' nulls as -1, so that they group and index as plain integers."""
    k = df.copy()
    for c in NULLABLE_INT:
        k[c] = k[c].fillna(-1).astype("int64")
    return k


def window_checks(df, lead):
    """The seed rows against the window rows they summarise; returns (failures, figures)."""
    fails = []
    df = keyed(df)
    key = lead + ["variant", "seed", "corpus", "protocol", "T", "L"]
    win = df[df["level"] == "window"]
    seed = df[df["level"] == "seed"]
    wide = seed[(seed[PARAMS] == -1).all(axis=1)].pivot_table(index=key, columns="metric", values="value", aggfunc="first")
    loss = win[win["metric"] == "window_loss"].set_index(key + ["window"])["value"]
    prefix = win[win["metric"] == "prefix_loss"].set_index(key + ["window"])["value"]
    ppl = np.exp(loss.groupby(level=key).mean())
    rel = (ppl / wide["ppl"].reindex(ppl.index) - 1).abs().max()
    if not rel < TOL:
        fails.append(f"ppl differs from exp(mean window loss) by {rel:.2e} (relative)")
    paired = np.exp((loss - prefix.reindex(loss.index)).groupby(level=key).mean()).dropna()
    prel = (paired / wide["prefix_ratio"].reindex(paired.index) - 1).abs().max() if len(paired) else 0.0
    if not prel < TOL:
        fails.append(f"prefix_ratio differs from exp(mean(window_loss - prefix_loss)) by {prel:.2e}")
    base = wide["ppl"].groupby(level=key[:-1]).transform(lambda s: s.iloc[0])  # the first (smallest) length's
    rrel = ((wide["ppl"] / base) / wide["ratio"] - 1).abs().max()
    if not rrel < TOL:
        fails.append(f"ratio differs from ppl(L) / ppl(first length) by {rrel:.2e}")
    # Every other windowed metric: its seed row is the mean of its window rows.
    full = key + ["metric"] + PARAMS
    other = win[~win["metric"].isin(["window_loss", "prefix_loss"])]
    wmean = other.groupby(full)["value"].mean()
    wseed = seed.set_index(full)["value"]
    wdiff = (wseed.reindex(wmean.index) - wmean).abs().max() if len(wmean) else 0.0
    if not wdiff < TOL:
        fails.append(f"a windowed metric's seed row differs from its window rows' mean by {wdiff:.2e}")
    return fails, (rel, prel, rrel, wdiff, len(wmean))


def seed_checks(df, lead):
    """The all rows against the seed rows they combine; returns (failures, figures)."""
    fails = []
    df = keyed(df)
    full = lead + ["variant", "corpus", "protocol", "T", "L", "metric"] + PARAMS
    seed = df[df["level"] == "seed"].copy()
    al = df[df["level"] == "all"].set_index(full)
    logv = seed["metric"].isin(LOG_SCALE)
    seed["x"] = np.where(logv, np.log(seed["value"].where(seed["value"] > 0)), seed["value"])
    g = seed.groupby(full)
    n = g["value"].count()
    mean = g["x"].mean()
    mean = pd.Series(np.where(n.index.get_level_values("metric").isin(LOG_SCALE), np.exp(mean), mean), index=mean.index)
    censored = g["value"].min() < 0
    mean[censored & n.index.get_level_values("metric").isin(LOG_SCALE)] = -1.0
    if len(al) != len(n) or not al.index.sort_values().equals(n.index.sort_values()):
        fails.append(f"{len(al)} all rows for {len(n)} seed-level figures")
        return fails, (np.nan, 0)
    got = al["value"].reindex(mean.index)
    diff = ((got - mean).abs() / mean.abs().clip(lower=1)).max()
    if not diff < TOL:
        fails.append(f"an all row differs from its seed rows' combination by {diff:.2e}")
    if not (al["n_seeds"].reindex(n.index) == n).all():
        fails.append("n_seeds is not the number of seed rows combined")
    multi = al[al["n_seeds"] > 1].dropna(subset=["lo"])
    lg = multi.index.get_level_values("metric").isin(LOG_SCALE)
    sym_log = (np.log(multi["lo"][lg]) + np.log(multi["hi"][lg]) - 2 * np.log(multi["value"][lg])).abs().max() if lg.any() else 0.0
    sym = (multi["lo"][~lg] + multi["hi"][~lg] - 2 * multi["value"][~lg]).abs().max() if (~lg).any() else 0.0
    if not (sym_log < 1e-9 and sym < 1e-9):
        fails.append(f"an all row's interval is not symmetric on its scale (log {sym_log:.1e}, linear {sym:.1e})")
    codes = set(multi["interval"][lg]) | set(multi["interval"][~lg])
    if not codes <= {"t95:seeds", "logt95:seeds"}:
        fails.append(f"all rows over several seeds with interval codes {codes}")
    return fails, (diff, int((n > 1).sum()))


def main(csv_dir):
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    df = load(csv_dir)
    sweep, lead = keys(df)
    cols, curve_cols = (["point"] + COLUMNS, ["point"] + CURVE_COLUMNS) if sweep else (COLUMNS, CURVE_COLUMNS)
    check(list(df.columns) == cols, f"columns {list(df.columns)}, want {cols}")
    for c in ["T"] + NULLABLE_INT:
        check(pd.api.types.is_integer_dtype(df[c]), f"column {c} is {df[c].dtype}, want integers")
    for c in ["value", "lo", "hi"]:
        check(pd.api.types.is_float_dtype(df[c]), f"column {c} is {df[c].dtype}, want floats")
    check(len(df) > 0 and df["value"].notna().all(), "empty table or a value missing")
    check(not df["metric"].str.contains("@").any(), "a parameter inside a metric name")
    check(set(df["level"]) == {"window", "seed", "all"}, f"levels {set(df['level'])}")

    iv = df[df["interval"].notna()]
    check(set(iv["interval"]) <= INTERVALS, f"unknown interval codes {set(iv['interval']) - INTERVALS}")
    check(((iv["lo"] <= iv["value"] + 1e-12) & (iv["value"] <= iv["hi"] + 1e-12)).all(), "a value outside its interval")
    check(df[df["interval"].isna()][["lo", "hi"]].isna().all().all(), "bounds on a row without an interval")
    check((df["window"].notna() == (df["level"] == "window")).all(), "window set off a window row or missing on one")
    check((df["seed"].isna() == (df["level"] == "all")).all(), "seed missing off an all row or set on one")
    check(not df.duplicated(lead + ["level", "variant", "seed", "corpus", "protocol", "T", "L", "metric"] + PARAMS + ["window"]).any(),
          "two rows share their coordinates")

    wf, (rel, prel, rrel, wdiff, nwin) = window_checks(df, lead)
    sf, (sdiff, nmulti) = seed_checks(df, lead)
    failures += wf + sf

    # The checks can fail: a window loss moved by 0.01 nats, and all rows
    # recomputed as plain means, must each be caught.
    moved = df.copy()
    k = moved.index[(moved["level"] == "window") & (moved["metric"] == "window_loss")][0]
    moved.loc[k, "value"] += 0.01
    check(len(window_checks(moved, lead)[0]) > 0, "control: a window loss moved by 0.01 nats is not caught")
    if nmulti:
        arith = df.copy()
        sel = (arith["level"] == "all") & arith["metric"].isin(["ppl"]) & (arith["n_seeds"] > 1)
        fig = lead + ["variant", "corpus", "protocol", "T", "L", "metric"]
        seeds = keyed(arith)[arith["level"] == "seed"].groupby(fig)["value"].mean()
        ka = keyed(arith)
        for i in arith.index[sel]:
            arith.loc[i, "value"] = seeds[tuple(ka.loc[i, c] for c in fig)]
        check(len(seed_checks(arith, lead)[0]) > 0, "control: ppl's all rows as arithmetic means over seeds are not caught")

    # The training curves: every step of every run once, from step 1.
    cv = pd.read_csv(os.path.join(csv_dir, "train_curves.csv"))
    check(list(cv.columns) == curve_cols, f"train_curves.csv columns {list(cv.columns)}, want {curve_cols}")
    check(set(cv["metric"]) == {"train_loss", "grad_norm", "heldout_loss"}, f"curve metrics {set(cv['metric'])}")
    run = lead + ["variant", "seed"]
    steps = cv[cv["metric"] == "train_loss"].groupby(run)["step"]
    check((steps.min() == 1).all() and (steps.max() == steps.count()).all() and not cv.duplicated(run + ["step", "metric"]).any(),
          "train_loss steps are not 1..N once each per run")
    check(set(cv["variant"]) == set(df["variant"]), "the curves and the results name different variants")

    levels = df["level"].value_counts().to_dict()
    print(f"{csv_dir}/tidy.csv: {len(df)} rows {levels}, {df['variant'].nunique()} variants, seeds {sorted(df['seed'].dropna().unique())}, "
          f"corpora {sorted(df['corpus'].unique())}, protocols {sorted(df['protocol'].unique())}")
    print(f"recomputed from the window rows: ppl to {rel:.1e}, prefix_ratio to {prel:.1e}, ratio to {rrel:.1e} (relative), "
          f"{nwin} windowed seed rows to {wdiff:.1e}; the all rows from the seed rows to {sdiff:.1e} ({nmulti} over several seeds)")
    print("perplexity, random protocol, held-out split, per seed:")
    sel = df[(df["level"] == "seed") & (df["metric"] == "ppl") & (df["protocol"] == "random") & (df["corpus"] == "heldout")]
    print(sel.pivot_table(index=lead + ["variant", "seed"], columns="L", values="value").round(3).to_string())
    last = cv[cv["metric"] == "heldout_loss"].sort_values("step").groupby(run)[["step", "value"]].last()
    print(f"train_curves.csv: {len(cv)} rows; last held-out loss per run:")
    print(last.round(4).to_string())
    if failures:
        print("FAIL\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
