"""Reductions shared by the experiments: from point results (their summaries and record
tables) to the tidy tables of the figures.

Everything here takes *records*: objects with ``labels`` (dict), ``seed``, ``summary`` (dict),
``scenario`` (canonical dict) and ``table(name) -> DataFrame`` - the sweep's
:class:`~fabriclb.lab.sweep.PointResult`, or any stand-in (the tests use synthetic ones).
"""

from __future__ import annotations

import math
import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

__all__ = [
    "duration_ms",
    "flow_stats",
    "fct_vs_load",
    "seed_range",
    "measured_windows",
    "throughput_into",
    "bulk_destinations",
    "queue_cdf",
    "quantile_from_cdf",
]

_UNITS_MS = {"ps": 1e-9, "ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3}


def duration_ms(text: Any) -> float:
    """A canonical duration (``"10ms"``, ``"0ps"``, ``"1.5s"``) in milliseconds."""
    if isinstance(text, (int, float)):
        return float(text)
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(ps|ns|us|µs|ms|s)\s*", str(text))
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    return float(m.group(1)) * _UNITS_MS[m.group(2)]


SMALL_BYTES = 100e3
LARGE_BYTES = 10e6


def flow_stats(flows: pd.DataFrame) -> Dict[str, float]:
    """Per-point FCT statistics over the measured flows (started after the warm-up; bounded
    sizes): counts, unfinished flows, and means over the finished ones - overall, small
    (< 100 KB) and large (> 10 MB) - of FCT and of ideal FCT (CONGA §5.2's buckets); and
    ``fct_lb_ms``, the mean over all of them with unfinished flows at their lower bound."""
    f = flows
    if "warmup" in f:
        f = f[f["warmup"] == 0]
    if "size_bytes" in f:
        f = f[np.isfinite(f["size_bytes"].astype(float)) & (f["size_bytes"].astype(float) < 1e15)]
    fin = f[f["finished"] == 1] if "finished" in f else f
    small = fin[fin["size_bytes"] < SMALL_BYTES]
    large = fin[fin["size_bytes"] > LARGE_BYTES]

    def mean(s: pd.Series) -> float:
        return float(s.mean()) if len(s) else math.nan

    return {
        "flows": float(len(f)),
        "unfinished": float(len(f) - len(fin)),
        "fct_ms": mean(fin["fct_ms"]),
        "fct_lb_ms": mean(f["fct_lb_ms"]) if "fct_lb_ms" in f else math.nan,
        "ideal_ms": mean(fin["ideal_fct_ms"]),
        "small_fct_ms": mean(small["fct_ms"]),
        "small_ideal_ms": mean(small["ideal_fct_ms"]),
        "large_fct_ms": mean(large["fct_ms"]),
        "large_ideal_ms": mean(large["ideal_fct_ms"]),
        "p99_fct_ms": float(fin["fct_ms"].quantile(0.99)) if len(fin) else math.nan,
        "small_p99_fct_ms": float(small["fct_ms"].quantile(0.99)) if len(small) else math.nan,
    }


def over_baseline(df: pd.DataFrame, is_base: Any, key: Sequence[str], col: str) -> np.ndarray:
    """``df[col]`` of each row over ``col`` of the baseline row (``df[is_base]``) with the same
    ``key`` values, NaN where there is none: the per-seed ratios that the papers' normalised
    figures average."""
    base = df[is_base].set_index(list(key))[col]
    ref = df.set_index(list(key)).index.map(lambda k: base.get(k, math.nan))
    return df[col].to_numpy(dtype=float) / np.asarray(ref, dtype=float)


def seed_range(df: pd.DataFrame, keys: Sequence[str], cols: Sequence[str]) -> pd.DataFrame:
    """Mean over seeds of each column in ``cols`` per ``keys`` group, with ``<col>_min`` and
    ``<col>_max`` (the papers' error bars: the range over runs) and ``seeds``."""
    rows: List[Dict[str, Any]] = []
    for k, sub in df.groupby(list(keys), sort=False, dropna=False):
        kk = k if isinstance(k, tuple) else (k,)
        row: Dict[str, Any] = dict(zip(keys, kk))
        row["seeds"] = int(sub["seed"].nunique()) if "seed" in sub else len(sub)
        for c in cols:
            v = sub[c].astype(float)
            row[c] = float(v.mean()) if v.notna().any() else math.nan
            row[f"{c}_min"] = float(v.min()) if v.notna().any() else math.nan
            row[f"{c}_max"] = float(v.max()) if v.notna().any() else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def fct_vs_load(records: Iterable[Any], *, facets: Sequence[str] = (), baseline: str = "ecmp") -> pd.DataFrame:
    """The table of CONGA Figs. 9-11 / 15: per (facets..., scheme, load) over seeds -
    overall mean FCT normalised to the ideal (idle-fabric) FCT, small- and large-flow mean
    FCT and overall FCT normalised to ``baseline``'s at the same facets, load and seed (overall
    also with unfinished flows at their lower bound: ``fct_lb_norm_<baseline>``; and the small
    flows' 99th percentile: ``small_p99_norm_<baseline>``), and the raw
    means, flow counts and unfinished flows.

    Records carry labels ``scheme`` and ``load`` (and the ``facets``)."""
    rows = []
    for r in records:
        lab = dict(r.labels)
        st = flow_stats(r.table("flows"))
        rows.append({**{k: lab.get(k) for k in (*facets, "scheme", "load")}, "seed": r.seed, **st})
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df["load"] = df["load"].astype(float)
    df["fct_norm_ideal"] = df["fct_ms"] / df["ideal_ms"]
    key = [*facets, "load", "seed"]
    is_base = df["scheme"] == baseline
    pairs = (("fct_ms", "fct_norm_base"), ("fct_lb_ms", "fct_lb_norm_base"), ("small_fct_ms", "small_norm_base"),
             ("large_fct_ms", "large_norm_base"), ("small_p99_fct_ms", "small_p99_norm_base"))
    for col, out in pairs:
        df[out] = over_baseline(df, is_base, key, col)
    cols = ["fct_norm_ideal", "fct_norm_base", "fct_lb_norm_base", "small_norm_base", "large_norm_base", "small_p99_norm_base", "fct_ms",
            "fct_lb_ms", "small_fct_ms", "large_fct_ms", "flows", "unfinished"]
    out = seed_range(df, [*facets, "scheme", "load"], cols)
    out = out.rename(columns={c: c.replace("_base", f"_{baseline}") for c in out.columns if "_base" in c})
    return out.sort_values([*facets, "scheme", "load"], kind="stable").reset_index(drop=True)


def measured_windows(windows: pd.DataFrame, scenario: Mapping[str, Any]) -> pd.DataFrame:
    """Window rows that lie wholly inside [warmup, duration) (no warm-up, no drain, no partial
    window)."""
    w = duration_ms(scenario.get("measure", {}).get("window", "10ms"))
    t0 = duration_ms(scenario.get("warmup", "0ps"))
    t1 = duration_ms(scenario.get("duration", "0ps"))
    if windows.empty:
        return windows
    ts = windows["t_start_ms"].astype(float)
    sel = (ts >= t0 - 1e-9) & (ts + w <= t1 + 1e-9)
    if not sel.any():  # runs shorter than a window: keep the first window
        sel = windows["window"] == windows["window"].min()
    return windows[sel]


def _link_to(name: str) -> str:
    return name.split("->", 1)[1].split("#", 1)[0] if "->" in name else ""


def bulk_destinations(scenario: Mapping[str, Any]) -> List[str]:
    """Destination hosts of the scenario's bulk workloads (as written)."""
    out: List[str] = []
    for w in scenario.get("workload", []):
        for d in w.get("dst", []) or []:
            if str(d) not in out:
                out.append(str(d))
    return out


def throughput_into(windows: pd.DataFrame, scenario: Mapping[str, Any], hosts: Optional[Sequence[str]] = None) -> float:
    """Mean over measured windows of the total rate (Gbps) delivered to ``hosts`` (default: the
    bulk workloads' destinations): the sum over the host-down links into them."""
    hosts = list(hosts) if hosts is not None else bulk_destinations(scenario)
    w = measured_windows(windows, scenario)
    if w.empty:
        return math.nan
    hd = w[(w["kind"] == "host-down") & w["name"].map(lambda n: _link_to(str(n)) in hosts)]
    if hd.empty:
        return math.nan
    per_window = hd.groupby("window")["throughput_gbps"].sum()
    return float(per_window.mean())


def queue_cdf(queues: pd.DataFrame, link: Optional[str] = None) -> Tuple[np.ndarray, np.ndarray]:
    """The time-weighted queue-length CDF of one port from the ``queues`` table:
    (queue bytes at bin start, cumulative fraction of time)."""
    q = queues if link is None else queues[queues["link"] == link]
    if q.empty:
        return np.array([]), np.array([])
    q = q.sort_values("queue_bytes_from")
    x = q["queue_bytes_from"].to_numpy(dtype=float)
    frac = q["fraction"].to_numpy(dtype=float)
    c = np.cumsum(frac)
    if c[-1] > 0:
        c = c / c[-1]
    return x, c


def quantile_from_cdf(x: np.ndarray, c: np.ndarray, p: float) -> float:
    """The smallest x whose cumulative fraction reaches p."""
    if len(x) == 0:
        return math.nan
    i = int(np.searchsorted(c, p - 1e-12))
    return float(x[min(i, len(x) - 1)])
