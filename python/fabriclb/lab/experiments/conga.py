"""CONGA (Alizadeh et al., SIGCOMM 2014): Figs. 2, 3 (§2.4), 9-12 (testbed, §5.2), 13 (incast,
§5.3), 15, 16 (simulations, §5.5), and the analytic Fig. 17 / Theorems 1-2 and fluid examples
(delegated to fabriclb.analysis). Each experiment lists every number the paper states for its
figure as a :class:`Claim` (docs/LAB.md, "The experiments")."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

from .. import plots
from ..reduce import fct_vs_load, measured_windows, quantile_from_cdf, queue_cdf, seed_range
from ..sweep import PointResult, PointSpec
from .common import (
    COMPARABLE,
    CONCEPTUAL,
    NOT_COMPARABLE,
    RUN_LENGTH,
    RUN_LENGTH_BULK,
    RUN_LENGTH_LARGE,
    Check,
    Claim,
    Ctx,
    Experiment,
    LOCAL_SCHEME_NAMES,
    Reduction,
    better,
    best_gain,
    cdf_axis,
    fct_plot,
    fct_reduce,
    gain_check,
    grid_points,
    load_axis,
    loads_for,
    local_scheme,
    lookup,
    overall_norm,
    rate_gbps,
    rows_of,
    run_length,
    scheme_axis,
    scheme_list,
    throughput_reduce,
    within,
)

PAPER = "CONGA (SIGCOMM'14)"

# ----------------------------------------------------------------------------- run lengths

#: Fig. 11: the hotspot only shows once data-mining's large flows have had time to pile up on
#: the single S1->L1 link; at 500 ms of arrivals it often has not, so --quick keeps the full
#: run length (and the quick grid's three loads).
RUN_LENGTH_FAILURE = {**RUN_LENGTH, "quick": RUN_LENGTH["full"]}
#: Fig. 11 with data-mining: past 50% load ECMP overloads S1->L1, and the network is unstable
#: (§5.2.2): the backlog, hence the FCT, grows with the run length. The fabric's throughput
#: takes ~0.5 s to ramp up (elephants of up to 1 GB), and at 1-2 s of arrivals the growth is
#: still lost in the noise of a few elephants (seed 1 at 70%: ECMP/CONGA 1.07x at 2 s, 1.48x
#: at 6 s), so both forms run 6 s of arrivals after 1 s of warm-up. The drain lets every flow
#: finish: ECMP ends the arrivals with gigabytes queued for S1->L1, and with a 2 s drain 29-49 of
#: its flows were unfinished and counted at their lower bound, which hid the blow-up (ECMP/CONGA
#: 1.38 and 1.33 on lower bounds at 70%, seeds 1-2, before TSQ; 1.50 and 1.55 with every flow
#: finished).
RUN_LENGTH_FAILURE_DM = {
    "full": {"duration": "6s", "warmup": "1s", "drain": "10s"},
    "quick": {"duration": "6s", "warmup": "1s", "drain": "10s"},
    "smoke": RUN_LENGTH["smoke"],
}
#: Data-mining on the testbed (Fig. 10; Fig. 12's data-mining half). Its throughput ramps up
#: over the first second (a 1 GB flow alone takes 0.8 s at 10 Gbps): E[min(S, 10 Gbps x t)] /
#: E[S] is 33% at 0.1 s and 88% at 0.5 s, so a measurement that starts at 50 or 100 ms sees a
#: fraction of the offered load, carried by a few elephants. It warms up for 1 s.
RUN_LENGTH_DM = {
    "full": {"duration": "3s", "warmup": "1s", "drain": "1s"},
    "quick": {"duration": "1.5s", "warmup": "1s", "drain": "500ms"},
    "smoke": RUN_LENGTH["smoke"],
}
#: Fig. 12 reads the uplink throughput in 10 ms windows between warm-up and end of arrivals and
#: needs no FCTs, so no drain.
RUN_LENGTH_BALANCE = {k: {**v, "drain": "0ps"} for k, v in RUN_LENGTH.items()}
RUN_LENGTH_BALANCE_DM = {k: {**v, "drain": "0ps"} for k, v in RUN_LENGTH_DM.items()}
#: Fig. 16 reads the ports' time-averaged queues, which cover warm-up to end of arrivals; it
#: needs no FCTs, so it stops when the arrivals do.
RUN_LENGTH_QUEUES = {
    "full": {"duration": "200ms", "warmup": "20ms", "drain": "0ps"},
    "quick": {"duration": "15ms", "warmup": "3ms", "drain": "0ps"},
    "smoke": RUN_LENGTH_LARGE["smoke"],
}

# ----------------------------------------------------------------------------- Figs. 2, 3

FIG2_PAPER = {"ecmp": 90.0, "local": 80.0, "conga": 100.0}


def _fig2_value(t: pd.DataFrame, key: str) -> float:
    names = LOCAL_SCHEME_NAMES if key == "local" else (key,)
    sub = t[t["scheme"].isin(names)] if "scheme" in t else t.iloc[0:0]
    return float(sub["throughput_gbps"].iloc[0]) if len(sub) else math.nan


def _fig2_near(key: str, tol: float) -> Check:
    def check(red: Reduction) -> Optional[Tuple[str, bool]]:
        v = _fig2_value(red.table, key)
        if not np.isfinite(v):
            return None
        return f"{v:.1f} Gbps", abs(v - FIG2_PAPER[key]) <= tol * FIG2_PAPER[key]

    return check


def _fig2_grid(ctx: Ctx) -> List[PointSpec]:
    schemes = ["ecmp", local_scheme(ctx.schemes) or "local", "conga"]
    if ctx.mode == "full":
        schemes += [s for s in ("conga-flow", "spray") if ctx.has(s)]
    return grid_points(ctx, "conga/fig2.toml", [scheme_axis(schemes)], run_length(RUN_LENGTH_BULK, ctx))


def _fig2_ours(red: Reduction) -> str:
    got = {k: _fig2_value(red.table, k) for k in FIG2_PAPER}
    return ", ".join(f"{k} {v:.1f} Gbps" for k, v in got.items() if np.isfinite(v)) or "-"


def _fig2_plot(red: Reduction, path: Path) -> None:
    plots.bars(red.table, path, x="scheme", y="throughput_gbps", ylabel="throughput L0→L1 (Gbps)",
               title="CONGA Fig. 2: asymmetric fabric, 100 Gbps demand", hline=100.0)


def _fig3_grid(ctx: Ctx) -> List[PointSpec]:
    schemes = ["ecmp", local_scheme(ctx.schemes) or "local", "conga"]
    pts: List[PointSpec] = []
    for case in ("a", "b"):
        sub = grid_points(ctx, f"conga/fig3{case}.toml", [scheme_axis(schemes)], run_length(RUN_LENGTH_BULK, ctx))
        pts += [PointSpec(p.scenario, p.overrides, p.seed, (("case", case),) + p.labels) for p in sub]
    return pts


def _fig3_ours(red: Reduction) -> str:
    t = red.table
    if t.empty:
        return "-"
    parts = []
    for case in ("a", "b"):
        sub = t[t["case"] == case]
        loc = sub[sub["scheme"].isin(LOCAL_SCHEME_NAMES)]["throughput_gbps"]
        parts.append(f"({case}) CONGA {lookup(sub, 'throughput_gbps', scheme='conga'):.1f}, "
                     f"ECMP {lookup(sub, 'throughput_gbps', scheme='ecmp'):.1f}"
                     + (f", local {float(loc.iloc[0]):.1f}" if len(loc) else "") + " Gbps")
    return "; ".join(parts)


def _fig3_conga_best(red: Reduction) -> Optional[Tuple[str, bool]]:
    t = red.table
    parts, ok = [], True
    for case in ("a", "b"):
        sub = rows_of(t, case=case)
        conga = lookup(sub, "throughput_gbps", scheme="conga")
        others = sub[sub["scheme"] != "conga"]["throughput_gbps"].astype(float)
        if not np.isfinite(conga) or others.empty:
            return None
        best = float(others.max())
        parts.append(f"({case}) CONGA {conga:.1f} vs best other {best:.1f} Gbps")
        ok = ok and conga >= 0.95 * best
    return "; ".join(parts), ok


def _fig3_plot(red: Reduction, path: Path) -> None:
    plots.bars(red.table, path, x="case", y="throughput_gbps", group="scheme", ylabel="throughput into L2 (Gbps)",
               title="CONGA Fig. 3: the best split depends on the traffic matrix")


# ----------------------------------------------------------------------------- testbed (Figs. 9-12)

TESTBED_LOADS_FULL = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
TESTBED_SCHEMES = ["ecmp", "conga-flow", "conga"]


def _testbed_grid(workloads: Sequence[str], loads_full: Sequence[float], loads_quick: Sequence[float],
                  rules: Dict[str, Dict[str, str]] = RUN_LENGTH, loads_settle: Optional[Sequence[float]] = None) -> Any:
    def grid(ctx: Ctx) -> List[PointSpec]:
        loads = loads_for(ctx, loads_full, loads_quick, [0.5], loads_settle)
        wls = list(workloads) if ctx.mode != "smoke" else list(workloads)[:1]
        axes = [cdf_axis(wls), scheme_axis(scheme_list(ctx, TESTBED_SCHEMES, ["ecmp", "conga"], ["mptcp"])), load_axis(loads)]
        return grid_points(ctx, "conga/testbed.toml", axes, run_length(rules, ctx))

    return grid


def _fct_range(t: pd.DataFrame, scheme: str, col: str, lo_load: float = 0.0, hi_load: float = 1.0) -> pd.Series:
    sub = rows_of(t, scheme=scheme)
    if sub.empty or col not in sub:
        return pd.Series(dtype=float)
    sub = sub[(sub["load"] >= lo_load - 1e-9) & (sub["load"] <= hi_load + 1e-9)]
    return sub.set_index("load")[col].astype(float).dropna()


def _all_loads_within(schemes: Sequence[str], lo: float, hi: float) -> Check:
    """Each scheme's overall FCT / ECMP in [lo, hi] at every load run."""

    def check(red: Reduction) -> Optional[Tuple[str, bool]]:
        t = red.table
        parts, ok = [], True
        for s in schemes:
            v = _fct_range(t, s, overall_norm(t))
            if v.empty:
                return None
            parts.append(f"{s}/ECMP {v.min():.2f}-{v.max():.2f}")
            ok = ok and bool(v.between(lo, hi).all())
        return ", ".join(parts), ok

    return check


def _worst_ratio(scheme: str, col: str, lo: float, hi: float, lo_load: float = 0.0, hi_load: float = 1.0) -> Check:
    """The largest ``col`` (a ratio to ECMP) of ``scheme`` over loads in [lo_load, hi_load]
    lies in [lo, hi]."""

    def check(red: Reduction) -> Optional[Tuple[str, bool]]:
        v = _fct_range(red.table, scheme, col, lo_load, hi_load)
        if v.empty:
            return None
        return f"up to {v.max():.2f}x ECMP (at {v.idxmax():.0%})", within(float(v.max()), lo, hi)

    return check


def _fig10_conga_vs_flow(red: Reduction) -> Optional[Tuple[str, bool]]:
    t = red.table
    col = overall_norm(t)
    c, f = _fct_range(t, "conga", col, 0.5), _fct_range(t, "conga-flow", col, 0.5)
    r = (c / f).dropna()
    if r.empty:
        return None
    return f"CONGA/CONGA-Flow at best {r.min():.2f} (at {r.idxmin():.0%})", bool(r.min() <= 0.95)


def _fig10_mptcp_small(red: Reduction) -> Optional[Tuple[str, bool]]:
    t = red.table
    m = _fct_range(t, "mptcp", "small_norm_ecmp")
    c = _fct_range(t, "conga", "small_norm_ecmp")
    if m.empty or c.empty:
        return None
    top = float(m.index.max())
    ok = bool(m[top] > 1.0 and m[top] > c.get(top, math.inf))
    return f"small flows at {top:.0%}: MPTCP {m[top]:.2f}x ECMP, CONGA {c.get(top, math.nan):.2f}x", ok


def _fig9_ours(red: Reduction) -> str:
    t = red.table
    c = rows_of(t, scheme="conga")
    if c.empty:
        return "-"
    col = overall_norm(t)
    m = rows_of(t, scheme="mptcp").set_index("load")

    def mptcp(load: float) -> str:
        if load not in m.index:
            return ""
        return f"; MPTCP/ECMP overall {m.loc[load, col]:.2f}, small {m.loc[load, 'small_norm_ecmp']:.2f}"

    v = c.set_index("load")
    return "; ".join(f"{load:.0%}: CONGA/ECMP overall {r[col]:.2f}, small {r['small_norm_ecmp']:.2f}, large {r['large_norm_ecmp']:.2f}"
                     + mptcp(load) for load, r in v.iterrows())


def _fig10_ours(red: Reduction) -> str:
    t = red.table
    g, at = best_gain(t, "conga")
    gf, atf = best_gain(t, "conga-flow")
    if not np.isfinite(g):
        return "-"
    gm, atm = best_gain(t, "mptcp")
    return (f"CONGA's mean FCT at best {better(g)} than ECMP's (at {at:.0%})"
            + (f", CONGA-Flow's {better(gf)} (at {atf:.0%})" if np.isfinite(gf) else "")
            + (f", MPTCP's {better(gm)} (at {atm:.0%})" if np.isfinite(gm) else ""))


def _fig11_grid(ctx: Ctx) -> List[PointSpec]:
    """Both workloads; data-mining with the long run length, and in the quick form at 50-70%
    for ECMP and CONGA only (~25 minutes on 2 cores). The settling form runs the loads of the
    claims: 70% (CONGA and CONGA-Flow against MPTCP, both workloads), data-mining 60% (the
    hotspot queue), and enterprise 50% for ECMP's growth past 50%."""
    pts: List[PointSpec] = []
    for wl in (["enterprise", "data-mining"] if ctx.mode != "smoke" else ["enterprise"]):
        dm = wl == "data-mining"
        loads = loads_for(ctx, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7], [0.5, 0.6, 0.7] if dm else [0.3, 0.6, 0.7], [0.5],
                          [0.6, 0.7] if dm else [0.5, 0.7])
        full = ["ecmp", "conga"] if (dm and ctx.mode == "quick") else TESTBED_SCHEMES
        schemes = scheme_list(ctx, full, ["ecmp", "conga"], ["mptcp"])
        axes = [cdf_axis([wl]), scheme_axis(schemes), load_axis(loads)]
        pts += grid_points(ctx, "conga/testbed-failure.toml", axes, run_length(RUN_LENGTH_FAILURE_DM if dm else RUN_LENGTH_FAILURE, ctx))
    return pts


def _fig11_reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
    ok = [p for p in points if p.ok]
    table = fct_vs_load(ok, facets=("workload",))
    rows = []
    qload = 0.6 if any(abs(float(p.labels.get("load", 0)) - 0.6) < 1e-9 for p in ok) else None
    for p in ok:
        lab = p.labels
        if lab.get("workload") != "data-mining" and any(q.labels.get("workload") == "data-mining" for q in ok):
            continue
        if qload is not None and abs(float(lab["load"]) - qload) > 1e-9:
            continue
        try:
            q = p.table("queues")
        except KeyError:
            continue
        x, c = queue_cdf(q)
        for xi, ci in zip(x, c):
            rows.append({"scheme": lab["scheme"], "load": float(lab["load"]), "seed": p.seed, "queue_bytes": xi, "cdf": ci})
    qdf = pd.DataFrame(rows, columns=["scheme", "load", "seed", "queue_bytes", "cdf"])
    return Reduction(table, {"queue_cdf": qdf})


def _queue_quantile(qdf: pd.DataFrame, scheme: str, q: float) -> float:
    """The q-quantile of `scheme`'s hotspot queue, as a mean over seeds (NaN without data)."""
    sub = qdf[qdf["scheme"] == scheme]
    vals = [quantile_from_cdf(g["queue_bytes"].to_numpy(float), g["cdf"].to_numpy(float), q) for _, g in sub.groupby("seed")]
    return float(np.mean(vals)) if vals else math.nan


def _fig11_col(t: pd.DataFrame) -> str:
    # Mean FCT with unfinished flows at their lower bound: a mean over finished flows alone
    # would reward the scheme that leaves more elephants unfinished.
    return "fct_lb_ms" if "fct_lb_ms" in t and t["fct_lb_ms"].notna().any() else "fct_ms"


def _fig11_ours(red: Reduction) -> str:
    """ECMP/CONGA at every load of each workload, the growth from 50% to the top load, and the
    hotspot queue's median and p90."""
    t = red.table
    if t.empty:
        return "-"
    col = _fig11_col(t)
    parts = []
    for wl in dict.fromkeys(t["workload"]):
        e = _fct_range(rows_of(t, workload=wl), "ecmp", col)
        c = _fct_range(rows_of(t, workload=wl), "conga", col)
        r = (e / c).dropna()
        part = f"{wl}: ECMP/CONGA FCT " + ", ".join(f"{v:.2f}x at {load:.0%}" for load, v in r.items())
        lo = [x for x in r.index if x <= 0.5 + 1e-9]
        if lo and len(r):
            a, b = max(lo), float(r.index.max())
            part += f" (from {a:.0%} to {b:.0%}: ECMP x{e[b] / e[a]:.2f}, CONGA x{c[b] / c[a]:.2f})"
        m = (_fct_range(rows_of(t, workload=wl), "mptcp", col) / c).dropna()
        if len(m):
            part += ", MPTCP/CONGA FCT " + ", ".join(f"{v:.2f}x at {load:.0%}" for load, v in m.items())
        parts.append(part)
    q = red.extra.get("queue_cdf", pd.DataFrame())
    if not q.empty:
        # The paper quotes the p90; the median shows how often the hotspot is backlogged at all.
        for p in (50, 90):
            qe, qc, qm = (_queue_quantile(q, s, p / 100) for s in ("ecmp", "conga", "mptcp"))
            parts.append(f"p{p} hotspot queue ECMP {qe / 1e3:.0f} KB, CONGA {qc / 1e3:.0f} KB" + (f", MPTCP {qm / 1e3:.0f} KB" if np.isfinite(qm) else ""))
    return "; ".join(parts)


def _fig11_vs_mptcp(workload: str, lo: float, hi: float, as_gain: bool) -> Check:
    """At 70%: CONGA vs MPTCP on the lower-bound mean FCT; as a gain (1 - CONGA/MPTCP) or as a
    ratio (MPTCP/CONGA) in [lo, hi]."""

    def check(red: Reduction) -> Optional[Tuple[str, bool]]:
        t = rows_of(red.table, workload=workload)
        col = _fig11_col(red.table)
        m, c = lookup(t, col, scheme="mptcp", load=0.7), lookup(t, col, scheme="conga", load=0.7)
        if not (np.isfinite(m) and np.isfinite(c)):
            return None
        v = 1 - c / m if as_gain else m / c
        return (f"CONGA {better(v)} than MPTCP" if as_gain else f"MPTCP/CONGA {v:.2f}x"), within(v, lo, hi)

    return check


def _fig11_flow_vs_mptcp(red: Reduction) -> Optional[Tuple[str, bool]]:
    t = red.table
    col = _fig11_col(t)
    parts, ok = [], True
    for wl in ("enterprise", "data-mining"):
        sub = rows_of(t, workload=wl)
        f, m = lookup(sub, col, scheme="conga-flow", load=0.7), lookup(sub, col, scheme="mptcp", load=0.7)
        if not (np.isfinite(f) and np.isfinite(m)):
            return None
        parts.append(f"{wl}: CONGA-Flow/MPTCP {f / m:.2f}")
        ok = ok and f < m
    return ", ".join(parts), ok


def _fig11_queue_vs_mptcp(red: Reduction) -> Optional[Tuple[str, bool]]:
    q = red.extra.get("queue_cdf", pd.DataFrame())
    if q.empty:
        return None
    m, c = _queue_quantile(q, "mptcp", 0.9), _queue_quantile(q, "conga", 0.9)
    if not (np.isfinite(m) and np.isfinite(c)) or c <= 0:
        return None
    return f"p90 MPTCP {m / 1e3:.0f} KB / CONGA {c / 1e3:.0f} KB = {m / c:.1f}x", within(m / c, 2.0, 8.0)


def _fig11_plot(red: Reduction, path: Path) -> None:
    fct_plot("CONGA Fig. 11: one Leaf1-Spine1 link down",
             panels=[("fct_lb_ms", "mean FCT (ms), unfinished at lower bound"), ("fct_norm_ideal", "mean FCT / ideal FCT (finished)")])(red, path)
    q = red.extra.get("queue_cdf", pd.DataFrame())
    if not q.empty:
        curves = {}
        for s, sub in q.groupby("scheme", sort=False):
            g = sub[sub["seed"] == sub["seed"].min()]
            curves[str(s)] = (g["queue_bytes"].to_numpy(float) / 1e3, g["cdf"].to_numpy(float))
        plots.cdfs(curves, path.with_name("queue_cdf.png"), xlabel="queue at S1->L1 (KB)",
                   title="Fig. 11(c): hotspot queue, data-mining 60%")


def _fig12_grid(ctx: Ctx) -> List[PointSpec]:
    wls = ["enterprise", "data-mining"] if ctx.mode != "smoke" else ["enterprise"]
    pts: List[PointSpec] = []
    for wl in wls:
        axes = [cdf_axis([wl]), scheme_axis(scheme_list(ctx, TESTBED_SCHEMES, ["ecmp", "conga"], ["mptcp"])), load_axis([0.6])]
        rules = RUN_LENGTH_BALANCE_DM if wl == "data-mining" else RUN_LENGTH_BALANCE
        pts += grid_points(ctx, "conga/testbed.toml", axes, run_length(rules, ctx))
    return pts


def fig12_reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
    samples = []
    for p in points:
        if not p.ok:
            continue
        w = measured_windows(p.table("windows"), p.scenario)
        w = w[(w["kind"] == "leaf-uplink-imbalance") & (w["name"] == "L0:uplinks")]
        for v in w["imbalance"].astype(float):
            if np.isfinite(v):
                samples.append({"workload": p.labels["workload"], "scheme": p.labels["scheme"], "seed": p.seed, "imbalance": v})
    s = pd.DataFrame(samples, columns=["workload", "scheme", "seed", "imbalance"])
    rows = []
    for (wl, sc), g in s.groupby(["workload", "scheme"], sort=False):
        v = g["imbalance"]
        rows.append({"workload": wl, "scheme": sc, "windows": len(v), "mean": v.mean(), "p50": v.quantile(0.5), "p90": v.quantile(0.9), "max": v.max()})
    return Reduction(pd.DataFrame(rows, columns=["workload", "scheme", "windows", "mean", "p50", "p90", "max"]), {"imbalance_samples": s})


def _fig12_ours(red: Reduction) -> str:
    t = red.table
    if t.empty:
        return "-"
    parts = []
    for wl in dict.fromkeys(t["workload"]):
        meds = ", ".join(f"{r['scheme']} {r['p50']:.2f}" for _, r in rows_of(t, workload=wl).iterrows())
        parts.append(f"{wl}: median imbalance {meds}")
    return "; ".join(parts)


def _fig12_median_ratio(a: str, b: str, workloads: Sequence[str], lo: float, hi: float) -> Check:
    """``a``'s median imbalance / ``b``'s in [lo, hi] for each workload."""

    def check(red: Reduction) -> Optional[Tuple[str, bool]]:
        t = red.table
        parts, ok = [], True
        for wl in workloads:
            x, y = lookup(t, "p50", workload=wl, scheme=a), lookup(t, "p50", workload=wl, scheme=b)
            if not (np.isfinite(x) and np.isfinite(y)) or y <= 0:
                return None
            parts.append(f"{wl}: {x:.2f} / {y:.2f} = {x / y:.2f}")
            ok = ok and within(x / y, lo, hi)
        return "; ".join(parts), ok

    return check


def _fig12_plot(red: Reduction, path: Path) -> None:
    s = red.extra.get("imbalance_samples", pd.DataFrame())
    panels: Dict[str, Dict[str, Tuple[Any, Any]]] = {}
    for wl, g in s.groupby("workload", sort=False):
        panels[str(wl)] = {str(sc): plots.ecdf(gg["imbalance"].to_numpy(float)) for sc, gg in g.groupby("scheme", sort=False)}
    plots.cdfs({}, path, xlabel="leaf-0 uplink imbalance (MAX-MIN)/AVG, 10 ms windows", panels=panels or {"": {}},
               title="CONGA Fig. 12: uplink imbalance at 60% load")


# ----------------------------------------------------------------------------- Fig. 13 (incast)


#: Fig. 13's settings the paper does not give, fixed before running (docs/LAB.md), and the
#: variants of the sensitivity table: (label, overrides). "main" is what the claims judge.
FIG13_VARIANTS = [
    ("main", []),
    # Each port at most 100 packets; the 12 MB pool then never binds (64 ports x 100 packets).
    ("100-packet ports", [("switch.buffer", "100pkt")]),
    ("new connection per response", [("workload[0].persistent", False)]),
    ("no delayed ACKs", [("transport.delayed_ack", False)]),
]


def _fig13_grid(ctx: Ctx) -> List[PointSpec]:
    """§5.3: a 10 MB file striped over N servers of both racks, N = 1..63; minRTO x MTU; TCP
    on the CONGA fabric vs MPTCP (8 subflows). Requests are spaced so that one ends before the
    next starts (the throughput counts request time only). The sensitivity variants run at the
    largest fan-in only."""
    fan = {"full": [1, 2, 4, 8, 16, 24, 32, 48, 63], "quick": [1, 16, 63], "smoke": [4]}[ctx.mode]
    rto = {"full": ["200ms", "1ms"], "quick": ["200ms", "1ms"], "smoke": ["1ms"]}[ctx.mode]
    mtu = {"full": [1500, 9000], "quick": [1500, 9000], "smoke": [1500]}[ctx.mode]
    reqs = {"full": 20, "quick": 5, "smoke": 2}[ctx.mode]
    variants = FIG13_VARIANTS if ctx.mode != "smoke" else FIG13_VARIANTS[:1]
    axes = [
        ("transport", [("conga+tcp", [("scheme", {"name": "conga"})]), ("mptcp", [("scheme", {"name": "mptcp"})])]),
        ("min_rto_ms", [(float(r[:-2]), [("transport.min_rto", r)]) for r in rto]),
        ("mtu", [(m, [("transport.mtu", m)]) for m in mtu]),
    ]
    fixed = [("workload[0].requests", reqs), ("duration", f"{reqs}s")]
    out: List[PointSpec] = []
    for name, ov in variants:
        fans = fan if name == "main" else fan[-1:]
        extra = [("variant", [(name, ov)]), ("fan_in", [(n, [("workload[0].servers", n)]) for n in fans])]
        out += grid_points(ctx, "conga/fig13.toml", axes + extra, fixed)
    return out


def _fig13_reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
    rows = []
    for p in points:
        if not p.ok:
            continue
        f = p.table("flows")
        f = f[f["finished"] == 1]
        rate = rate_gbps(p.scenario.get("topology", {}).get("host_rate", "10Gbps"))
        if f.empty:
            thr = 0.0
        else:
            g = f.groupby("group").agg(start=("start_ms", "min"), end=("end_ms", "max"), size=("size_bytes", "sum"))
            dur = float((g["end"] - g["start"]).sum())
            thr = float(g["size"].sum()) * 8 / (dur * 1e-3) / (rate * 1e9) * 100 if dur > 0 else math.nan
        rows.append({**p.labels, "seed": p.seed, "throughput_pct": thr})
    df = pd.DataFrame(rows)
    if df.empty:
        return Reduction(df)
    keys = ["transport", "mtu", "min_rto_ms", "fan_in"]
    main = seed_range(df[df["variant"] == "main"], keys, ["throughput_pct"])
    extra = {}
    sens = df[df["fan_in"] == df["fan_in"].max()]
    if sens["variant"].nunique() > 1:
        extra["sensitivity"] = seed_range(sens, ["variant"] + keys, ["throughput_pct"])
    return Reduction(main, extra)


def _fig13_at_top(t: pd.DataFrame, transport: str, rto: float, mtu: int) -> float:
    if t.empty:
        return math.nan
    return lookup(t[t["fan_in"] == t["fan_in"].max()], "throughput_pct", transport=transport, min_rto_ms=rto, mtu=mtu)


def _fig13_mptcp(rto: float, mtu: int, lo: float, hi: float) -> Check:
    def check(red: Reduction) -> Optional[Tuple[str, bool]]:
        v = _fig13_at_top(red.table, "mptcp", rto, mtu)
        return None if not np.isfinite(v) else (f"{v:.0f}%", within(v, lo, hi))

    return check


def _fig13_min_rto(red: Reduction) -> Optional[Tuple[str, bool]]:
    a, b, c = (_fig13_at_top(red.table, "mptcp", r, m) for r, m in ((1.0, 1500), (200.0, 1500), (1.0, 9000)))
    if not all(np.isfinite(v) for v in (a, b, c)):
        return None
    return f"MTU 1500: {a:.0f}% (1 ms) vs {b:.0f}% (200 ms); MTU 9000 at 1 ms: {c:.0f}%", a > b and c <= 60


def _fig13_ratio(red: Reduction) -> Optional[Tuple[str, bool]]:
    ratios = {}
    for rto in (200.0, 1.0):
        for mtu in (1500, 9000):
            c, m = _fig13_at_top(red.table, "conga+tcp", rto, mtu), _fig13_at_top(red.table, "mptcp", rto, mtu)
            if np.isfinite(c) and np.isfinite(m) and m > 0:
                ratios[(rto, mtu)] = c / m
    if not ratios:
        return None
    (rto, mtu), best = max(ratios.items(), key=lambda kv: kv[1])
    return f"up to {best:.1f}x (minRTO {rto:g} ms, MTU {mtu})", within(best, 1.5, 15.0)


def _fig13_ours(red: Reduction) -> str:
    t = red.table
    if t.empty:
        return "-"
    top = t["fan_in"].max()
    parts = []
    for (rto, mtu), g in t[t["fan_in"] == top].groupby(["min_rto_ms", "mtu"], sort=False):
        parts.append(f"minRTO {rto:g} ms MTU {mtu}: " + ", ".join(f"{r['transport']} {r['throughput_pct']:.0f}%" for _, r in g.iterrows()))
    return f"fan-in {top}: " + "; ".join(parts)


def _fig13_plot(red: Reduction, path: Path) -> None:
    t = red.table.copy()
    t["setting"] = "minRTO " + t["min_rto_ms"].map("{:g} ms".format) + ", MTU " + t["mtu"].astype(str)
    plots.lines_vs_x(t.rename(columns={"transport": "scheme"}), path, x="fan_in", panels=[("throughput_pct", "throughput (% of 10 Gbps)")],
                     facet="setting", xlabel="fan-in N", xpercent=False, title="CONGA Fig. 13: incast")


# ----------------------------------------------------------------------------- Figs. 15, 16


def _fig15_grid(ctx: Ctx) -> List[PointSpec]:
    loads = loads_for(ctx, TESTBED_LOADS_FULL, [0.3, 0.6], [0.3], [0.3])  # settling: every claim is at 30%
    servers = [("384x10G", []), ("96x40G", [("topology.hosts_per_leaf", 12), ("topology.host_rate", "40Gbps")])]
    if ctx.mode == "smoke":
        servers = servers[1:]
    axes = [("servers", servers), scheme_axis(["ecmp", "conga"]), load_axis(loads)]
    return grid_points(ctx, "conga/fig15.toml", axes, run_length(RUN_LENGTH_LARGE, ctx))


def _fig15_gain(red: Reduction, servers: str) -> float:
    t = red.table
    return 1 - lookup(rows_of(t, scheme="conga"), overall_norm(t), servers=servers, load=0.3) if not t.empty else math.nan


def _fig15_at30(servers: str, lo: float, hi: float) -> Check:
    def check(red: Reduction) -> Optional[Tuple[str, bool]]:
        g = _fig15_gain(red, servers)
        return None if not np.isfinite(g) else (f"{better(g)} than ECMP", within(g, lo, hi))

    return check


def _fig15_order(red: Reduction) -> Optional[Tuple[str, bool]]:
    g10, g40 = _fig15_gain(red, "384x10G"), _fig15_gain(red, "96x40G")
    if not (np.isfinite(g10) and np.isfinite(g40)):
        return None
    return f"40G {better(g40)}, 10G {better(g10)}", g40 > g10


def _fig15_ours(red: Reduction) -> str:
    t = red.table
    if t.empty:
        return "-"
    col = overall_norm(t)
    c = rows_of(t, scheme="conga")
    return "; ".join(f"{srv}: " + ", ".join(f"{better(1 - r[col])} at {r['load']:.0%}" for _, r in g.iterrows())
                     for srv, g in c.groupby("servers", sort=False)) + " (CONGA vs ECMP, mean FCT)"


def _fig16_grid(ctx: Ctx) -> List[PointSpec]:
    axes = [scheme_axis(["ecmp", "conga"]), load_axis([0.6])]
    return grid_points(ctx, "conga/fig16.toml", axes, run_length(RUN_LENGTH_QUEUES, ctx))


DOWNLINK_NEXT_TO_FAILURE = "spine downlink next to a failure"
_ROLES = {"leaf uplink": "leaf uplinks", "spine downlink": "spine downlinks",
          DOWNLINK_NEXT_TO_FAILURE: "spine downlinks next to a failed link"}


def fig16_reduce(points: List[PointResult], ctx: Optional[Ctx]) -> Reduction:
    rows = []
    for p in points:
        if not p.ok:
            continue
        pt = p.table("ports")
        pt = pt[pt["kind"] == "fabric"]
        # The paper's ~10x is at the spine ports next to a failed link: the surviving parallel
        # links of a (spine, leaf) pair that lost one. Failed links themselves carry nothing.
        failed = set(p.summary.get("failure_links", []))
        failed_pairs = {tuple(l.split("#", 1)[0].split("->", 1)) for l in failed}
        for _, r in pt.iterrows():
            if r["link"] in failed:
                continue
            role = "leaf uplink" if str(r["from"]).startswith("L") else "spine downlink"
            if role == "spine downlink" and (str(r["from"]), str(r["to"])) in failed_pairs:
                role = DOWNLINK_NEXT_TO_FAILURE
            rows.append({"scheme": p.labels["scheme"], "seed": p.seed, "link": r["link"], "role": role,
                         "mean_queue_bytes": float(r["mean_queue_bytes"]), "utilization": float(r["utilization"])})
    df = pd.DataFrame(rows)
    if df.empty:
        return Reduction(df)
    first = df[df["seed"] == df["seed"].min()]
    table = first[["scheme", "link", "role", "mean_queue_bytes", "utilization"]].reset_index(drop=True)
    summ = seed_range(df.groupby(["scheme", "role", "seed"], as_index=False)["mean_queue_bytes"].mean(), ["scheme", "role"], ["mean_queue_bytes"])
    return Reduction(table, {"by_role": summ, "all_seeds": df})


def _fig16_ratio(red: Reduction, role: str) -> float:
    s = red.extra.get("by_role", pd.DataFrame())
    e = lookup(s, "mean_queue_bytes", scheme="ecmp", role=role)
    c = lookup(s, "mean_queue_bytes", scheme="conga", role=role)
    if not (np.isfinite(e) and np.isfinite(c)):
        return math.nan
    return e / c if c > 0 else math.inf


def fig16_ours(red: Reduction) -> str:
    s = red.extra.get("by_role", pd.DataFrame())
    parts = []
    for role, label in _ROLES.items():
        e = lookup(s, "mean_queue_bytes", scheme="ecmp", role=role)
        c = lookup(s, "mean_queue_bytes", scheme="conga", role=role)
        if np.isfinite(e) and np.isfinite(c):
            parts.append(f"{label}: ECMP {e / 1e3:.1f} KB vs CONGA {c / 1e3:.1f} KB mean queue ({_fig16_ratio(red, role):.1f}x)")
    return "; ".join(parts) or "-"


def _fig16_next_to_failure(red: Reduction) -> Optional[Tuple[str, bool]]:
    r = _fig16_ratio(red, DOWNLINK_NEXT_TO_FAILURE)
    return None if np.isnan(r) else (f"{r:.1f}x", within(r, 5.0, 20.0))


def _fig16_remote_larger(red: Reduction) -> Optional[Tuple[str, bool]]:
    r, u = _fig16_ratio(red, DOWNLINK_NEXT_TO_FAILURE), _fig16_ratio(red, "leaf uplink")
    if np.isnan(r) or np.isnan(u):
        return None
    return f"{r:.1f}x next to a failure vs {u:.1f}x at the leaf uplinks", r > u


def _fig16_plot(red: Reduction, path: Path) -> None:
    t = red.table.copy()
    t["kb"] = t["mean_queue_bytes"] / 1e3
    plots.bars(t, path, x="link", y="kb", group="scheme", ylabel="mean queue (KB)", rotate=True,
               title="CONGA Fig. 16: 9 failed links, web search 60%")


# ----------------------------------------------------------------------------- the registry

_TESTBED_NOTES = (
    "Topology names: paper's Leaf 0/1, Spine 0/1 are our L0/L1, S0/S1 (same numbering); hosts H0-H31 under L0, H32-H63 under L1.",
    "Load is a fraction of the 160 Gbps leaf-uplink capacity, counted in bytes on the wire (all traffic crosses the spine: clients under L0 use servers under L1 and vice versa).",
    "Run length and drain rules: docs/LAB.md. Means are over finished flows that started after the warm-up; the `unfinished` column counts the others.",
    "MPTCP joins the grid automatically once the core has an `mptcp` scheme; its claims wait for it until then.",
)

_MPTCP = ("mptcp",)

EXPERIMENTS: List[Experiment] = [
    Experiment(
        "conga-fig2", PAPER, "Fig. 2", "asymmetry needs non-local information",
        "L0 sends 100 Gbps of TCP to L1 over a fabric whose (S1, L1) link has half capacity: ECMP gets 90 Gbps, "
        "local congestion-aware 80 Gbps, CONGA the full 100 Gbps.",
        scenarios=("conga/fig2.toml",), requires=("scheme:ecmp", "scheme:conga", "local-scheme", "workload:bulk"),
        grid=_fig2_grid, tables=("windows",), reduce=throughput_reduce(["scheme"]), plot=_fig2_plot, ours=_fig2_ours,
        claims=(
            Claim("ECMP 90 Gbps (§2.4)", COMPARABLE, "mean goodput within 5% of 90 Gbps", check=_fig2_near("ecmp", 0.05)),
            Claim("local congestion-aware 80 Gbps (§2.4)", CONCEPTUAL,
                  "conga-fluid. The paper's 80 is a fluid argument: as TCP slows the flows on the S1 path, the local "
                  "scheme shifts more traffic there until the upper path also carries 40 G. At packet level a flow moves "
                  "only at a flowlet boundary, which the paper's traffic leaves unspecified (64-88 Gbps by write size, "
                  "docs/CONGA.md, 'Fig. 2'); reported, not judged."),
            Claim("CONGA ~100 Gbps (§2.4)", COMPARABLE, "mean goodput within 5% of 100 Gbps", check=_fig2_near("conga", 0.05)),
        ),
        notes=("Throughput = application goodput delivered to the destination hosts between warm-up and end of arrivals.",
               "Goodput counts payload: with the overlay every scheme carries here, a 40 G link delivers 36.8 G of it.",
               "Why `local` is not 80: the paper's 80 is a fluid equal split. Our flows are paced at 1 Gbps and never pause "
               "for T_fl = 500 µs, so `local` decides once per flow and cannot shift traffic as TCP slows the S1 path "
               "(with 128 KB writes it shifts too much: 64-67 Gbps). docs/CONGA.md, 'Fig. 2'. The fluid model "
               "(`fabriclb reproduce conga-fluid`, docs/ANALYSIS.md §2) gives the paper's 90 / 80 / 100."),
    ),
    Experiment(
        "conga-fig3", PAPER, "Fig. 3", "the optimal split depends on the traffic matrix",
        "The right L1→L2 split depends on the L0→L2 traffic, so no static weights serve both (a) and (b); a local "
        "scheme can be worse than ECMP in (b); CONGA finds the best split in both.",
        scenarios=("conga/fig3a.toml", "conga/fig3b.toml"), requires=("scheme:ecmp", "scheme:conga", "local-scheme", "workload:bulk"),
        grid=_fig3_grid, tables=("windows",), reduce=throughput_reduce(["case", "scheme"]), plot=_fig3_plot, ours=_fig3_ours,
        claims=(
            Claim("the L1→L2 split must follow the L0→L2 traffic, so static weights cannot serve both (a) and (b) (§2.4)",
                  CONCEPTUAL, "conga-fluid: CONGA's fixed-point split in (a) and (b) and the best single static weight over both"),
            Claim("a local congestion-aware scheme could do worse than ECMP in (b) (§2.4)", CONCEPTUAL,
                  "conga-fluid (local vs ECMP in (b)). A possibility the paper argues in fluid terms; at packet level our "
                  "long flows never pause for a flowlet, so local, like ECMP, decides once per flow (docs/CONGA.md, 'Fig. 3')."),
            Claim("global congestion awareness (CONGA) finds the right split in both cases (§2.4)", COMPARABLE,
                  "CONGA's goodput into L2 at least 95% of the best scheme's, in (a) and in (b)", check=_fig3_conga_best),
        ),
        notes=("Throughput = total goodput into L2's hosts. The figure's numbers are not in the paper's text: the "
               "scenarios reconstruct it (docs/CONGA.md, 'Fig. 3').",),
    ),
    Experiment(
        "conga-fig9", PAPER, "Fig. 9", "enterprise workload, baseline testbed",
        "Enterprise workload: overall mean FCT similar for all schemes (MPTCP up to ~25% worse); CONGA ~12-19% worse "
        "than ECMP for small flows at 50-80% load but up to ~20% better for large flows.",
        scenarios=("conga/testbed.toml",), requires=("scheme:ecmp", "scheme:conga", "scheme:conga-flow", "workload:client-server"),
        # Settling form: the small-flow claim's 50-80%, and 30% and 90% for "similar at every load"
        # (at 10-20% the fabric is nearly idle and every scheme alike).
        grid=_testbed_grid(["enterprise"], TESTBED_LOADS_FULL, [0.3, 0.6, 0.9], loads_settle=[0.3, 0.5, 0.6, 0.7, 0.8, 0.9]),
        tables=("flows",), settle=True,
        reduce=fct_reduce(), plot=fct_plot("CONGA Fig. 9: enterprise workload"), ours=_fig9_ours,
        claims=(
            Claim("overall mean FCT similar for all schemes but MPTCP (§5.2.1, Fig. 9(a))", COMPARABLE,
                  "CONGA/ECMP and CONGA-Flow/ECMP overall mean FCT within ±15% at every load",
                  check=_all_loads_within(["conga", "conga-flow"], 0.85, 1.15)),
            Claim("MPTCP up to ~25% worse overall than the others", COMPARABLE,
                  "MPTCP/ECMP overall, largest over loads, in [1.125, 1.5] (half to twice the 25%)", _MPTCP,
                  _worst_ratio("mptcp", "fct_lb_norm_ecmp", 1.125, 1.5)),
            Claim("MPTCP up to ~50% worse than ECMP for small flows", COMPARABLE,
                  "MPTCP/ECMP small flows, largest over loads, in [1.25, 2.0]", _MPTCP,
                  _worst_ratio("mptcp", "small_norm_ecmp", 1.25, 2.0)),
            Claim("CONGA ~12-19% worse than ECMP for small flows at 50-80% load", COMPARABLE,
                  "CONGA/ECMP small flows, largest over loads 50-80%, in [1.06, 1.38] (half of 12% to twice 19%)",
                  check=_worst_ratio("conga", "small_norm_ecmp", 1.06, 1.38, 0.5, 0.8)),
            Claim("CONGA-Flow similarly (~12-19% worse for small flows at 50-80%)", COMPARABLE, "as for CONGA",
                  check=_worst_ratio("conga-flow", "small_norm_ecmp", 1.06, 1.38, 0.5, 0.8)),
            Claim("CONGA improves large flows by as much as ~20%", COMPARABLE,
                  "CONGA's best large-flow gain over ECMP in [10%, 40%]", check=gain_check("conga", 0.10, 0.40, "large_norm_ecmp")),
            Claim("CONGA-Flow similarly (large flows up to ~20% better)", COMPARABLE, "as for CONGA",
                  check=gain_check("conga-flow", 0.10, 0.40, "large_norm_ecmp")),
        ),
        notes=_TESTBED_NOTES + ("Why ours differs: enterprise's mean is decided by 200 ms retransmission timeouts, which CONGA "
                                "meets less often, so it comes out ahead overall and on small flows. docs/CONGA.md, 'Figs. 9 and 10'.",),
    ),
    Experiment(
        "conga-fig10", PAPER, "Fig. 10", "data-mining workload, baseline testbed",
        "Data-mining workload: ECMP is noticeably worse at high load; CONGA (and MPTCP) reach up to ~35% lower overall "
        "mean FCT than ECMP.",
        scenarios=("conga/testbed.toml",), requires=("scheme:ecmp", "scheme:conga", "scheme:conga-flow", "workload:client-server"),
        # Settling form: the claims are "at high load" and at loads >= 50%.
        grid=_testbed_grid(["data-mining"], TESTBED_LOADS_FULL, [0.3, 0.6, 0.9], RUN_LENGTH_DM, loads_settle=[0.5, 0.7, 0.9]),
        tables=("flows",), settle=True,
        reduce=fct_reduce(), plot=fct_plot("CONGA Fig. 10: data-mining workload"), ours=_fig10_ours,
        claims=(
            Claim("ECMP noticeably worse at high load: CONGA up to ~35% better overall mean FCT (§5.2.1)", COMPARABLE,
                  "CONGA's best overall gain over ECMP in [17.5%, 70%] (half to twice)", check=gain_check("conga", 0.175, 0.70)),
            Claim("MPTCP up to ~35% better overall than ECMP", COMPARABLE, "MPTCP's best overall gain in [17.5%, 70%]", _MPTCP,
                  gain_check("mptcp", 0.175, 0.70)),
            Claim("MPTCP's small flows degrade compared with the other schemes", COMPARABLE,
                  "at the highest load, MPTCP's small-flow FCT above ECMP's and CONGA's", _MPTCP, _fig10_mptcp_small),
            Claim("CONGA notably better than CONGA-Flow (§6.2, on Fig. 10)", COMPARABLE,
                  "CONGA/CONGA-Flow overall mean FCT at most 0.95 at some load >= 50%", check=_fig10_conga_vs_flow),
        ),
        notes=_TESTBED_NOTES + ("Over the full run length (old ns-3 data-mining CDF) CONGA was 5-8% better at 70-90%, not 35%: the "
                                "spines' ECMP between parallel links, drops at the server ports and elephants that rarely pause "
                                "take the rest. docs/CONGA.md, 'Figs. 9 and 10'.",),
    ),
    Experiment(
        "conga-fig11", PAPER, "Fig. 11", "link failure: FCT and hotspot queue",
        "With one Leaf1-Spine1 link down, ECMP degrades sharply above 50% load (the single S1→L1 link carries twice its "
        "share); CONGA is ~30% (enterprise) and ~2x (data-mining) better than MPTCP at 70% and keeps a 4x smaller 90th "
        "percentile queue at the S1→L1 hotspot.",
        scenarios=("conga/testbed-failure.toml",), requires=("scheme:ecmp", "scheme:conga", "scheme:conga-flow", "workload:client-server"),
        grid=_fig11_grid, tables=("flows", "queues"), reduce=_fig11_reduce, plot=_fig11_plot, ours=_fig11_ours, settle=True,
        claims=(
            Claim("CONGA has more than 5x better FCT than ECMP even with a single link failure (abstract, §1)", NOT_COMPARABLE,
                  "the paper ties it to no load or run length. Past 50% ECMP overloads the single S1→L1 link and the "
                  "network is unstable (§5.2.2): its FCT, and the ratio, grow with the run (seed 1 at 70%: 1.07x with 2 s "
                  "of arrivals, 1.48x with 6 s; docs/LAB.md). ECMP/CONGA is reported at every load."),
            Claim("ECMP deteriorates drastically beyond 50% load (§5.2.2)", NOT_COMPARABLE,
                  "no number, and in the unstable regime the size of the deterioration grows with the run length; "
                  "reported: ECMP's and CONGA's FCT growth from 50% to 70%"),
            Claim("CONGA ~30% lower overall mean FCT than MPTCP, enterprise, 70%", COMPARABLE,
                  "1 - CONGA/MPTCP (unfinished flows at their lower bound) in [15%, 60%]", _MPTCP,
                  _fig11_vs_mptcp("enterprise", 0.15, 0.60, True)),
            Claim("CONGA close to 2x lower overall mean FCT than MPTCP, data-mining, 70%", COMPARABLE,
                  "MPTCP/CONGA in [1.5, 3.0] (half to twice the excess)", _MPTCP, _fig11_vs_mptcp("data-mining", 1.5, 3.0, False)),
            Claim("CONGA-Flow also better than MPTCP (70%)", COMPARABLE, "CONGA-Flow's mean FCT below MPTCP's at 70%, both workloads",
                  _MPTCP, _fig11_flow_vs_mptcp),
            Claim("CONGA's 90th percentile hotspot queue 4x smaller than MPTCP's (Fig. 11(c), data-mining, 60%)", COMPARABLE,
                  "MPTCP/CONGA p90 of the S1→L1 queue in [2, 8]", _MPTCP, _fig11_queue_vs_mptcp),
        ),
        notes=_TESTBED_NOTES + (
            "The failed link is L1-S1#1; the hotspot port is the surviving S1->L1#0 (recorded with measure.queue_ports).",
            "Every comparable number of this figure compares CONGA with MPTCP: until the core has MPTCP the status is "
            "'waiting: mptcp', and ECMP/CONGA is reported at every load (unfinished flows at their lower bound, fct_lb_ms).",
            "Data-mining runs 6 s of arrivals after 1 s of warm-up and a 10 s drain, so that every flow finishes: the instability past 50% load shows as growth with run length.",
            "queue_cdf.csv / queue_cdf.png: the Fig. 11(c) CDF (data-mining, 60% load).",
        ),
    ),
    Experiment(
        "conga-fig12", PAPER, "Fig. 12", "leaf-uplink throughput imbalance at 60% load",
        "At 60% load the (MAX-MIN)/AVG imbalance of Leaf 0's four uplinks over 10 ms windows is much lower with CONGA "
        "than with ECMP, and at least as low as MPTCP's.",
        scenarios=("conga/testbed.toml",), requires=("scheme:ecmp", "scheme:conga", "scheme:conga-flow", "workload:client-server"),
        # The full form is the settling form: the figure is one load, 60%.
        grid=_fig12_grid, tables=("windows",), reduce=fig12_reduce, plot=_fig12_plot, ours=_fig12_ours, settle=True,
        claims=(
            Claim("CONGA significantly better balanced than ECMP (§5.2.3)", COMPARABLE,
                  "CONGA's median imbalance at most 0.75x ECMP's, each workload",
                  check=_fig12_median_ratio("conga", "ecmp", ("enterprise", "data-mining"), 0.0, 0.75)),
            Claim("CONGA at least as efficient as MPTCP", COMPARABLE, "CONGA's median at most 1.1x MPTCP's, each workload", _MPTCP,
                  _fig12_median_ratio("conga", "mptcp", ("enterprise", "data-mining"), 0.0, 1.1)),
            Claim("CONGA's imbalance even lower than MPTCP's with enterprise", COMPARABLE, "CONGA's median below MPTCP's (enterprise)",
                  _MPTCP, _fig12_median_ratio("conga", "mptcp", ("enterprise",), 0.0, 0.999)),
            Claim("CONGA-Flow slightly better than MPTCP with enterprise", COMPARABLE, "CONGA-Flow's median at most MPTCP's (enterprise)",
                  _MPTCP, _fig12_median_ratio("conga-flow", "mptcp", ("enterprise",), 0.0, 1.0)),
            Claim("CONGA-Flow worse than MPTCP with data-mining", COMPARABLE, "CONGA-Flow's median above MPTCP's (data-mining)",
                  _MPTCP, _fig12_median_ratio("conga-flow", "mptcp", ("data-mining",), 1.001, math.inf)),
        ),
        notes=_TESTBED_NOTES + ("Imbalance: windows rows of kind leaf-uplink-imbalance for L0, inside [warm-up, duration).",),
    ),
    Experiment(
        "conga-fig13", PAPER, "Fig. 13", "incast: MPTCP vs TCP",
        "In incast (a 10 MB file striped over N servers), MPTCP's throughput falls below 30% (MTU 1500) and to ~5% "
        "(MTU 9000) at large fan-in with minRTO 200 ms; CONGA+TCP gets 2-8x more.",
        scenarios=("conga/fig13.toml",), requires=("scheme:conga", "mptcp", "workload:incast"),
        grid=_fig13_grid, tables=("flows",), reduce=_fig13_reduce, plot=_fig13_plot, ours=_fig13_ours,
        claims=(
            Claim("MPTCP below 30% at large fan-in, MTU 1500, minRTO 200 ms (§5.3)", COMPARABLE,
                  "MPTCP at the largest fan-in at most 60% (twice)", _MPTCP, _fig13_mptcp(200.0, 1500, 0.0, 60.0)),
            Claim("MPTCP ~5% at large fan-in, MTU 9000, minRTO 200 ms", COMPARABLE, "in [2.5%, 10%]", _MPTCP,
                  _fig13_mptcp(200.0, 9000, 2.5, 10.0)),
            Claim("minRTO 1 ms mitigates the loss with 1500 B but not with jumbo frames", COMPARABLE,
                  "MPTCP (1 ms, 1500) above MPTCP (200 ms, 1500), and MPTCP (1 ms, 9000) at most 60%, at the largest fan-in",
                  _MPTCP, _fig13_min_rto),
            Claim("CONGA+TCP 2-8x better throughput than MPTCP in similar settings", COMPARABLE,
                  "the largest CONGA+TCP/MPTCP ratio over the four settings, at the largest fan-in, in [1.5, 15]", _MPTCP, _fig13_ratio),
        ),
        notes=("Throughput = total bytes of the requests / total request time (first response start to last byte), in % of the "
               "client's 10 Gbps link, over all requests (SCHEMES.md §1.7).",
               "Topology: the baseline testbed (conga/fig13.toml); servers drawn once among the 63 other hosts of both racks; "
               "requests one second apart, so each ends before the next begins.",
               "Fixed before running, where the paper is silent: the testbed's switches (one 12 MB shared buffer per switch, "
               "dynamic threshold, as testbed.toml); persistent connections (one per server, reused by every request, as incast "
               "applications do); the hosts' Linux 3.10 TCP with its 40 ms delayed ACKs also with a 1 ms minimum RTO; 20 "
               "requests per point (quick: 5); MPTCP with 8 subflows and LIA. The claims judge these settings only.",
               "Sensitivity (sensitivity.csv, at the largest fan-in, beside the main result): 100-packet dedicated port "
               "buffers instead of the shared 12 MB; a new connection (handshake, joins) per response; delayed ACKs off."),
    ),
    Experiment(
        "conga-fig15", PAPER, "Fig. 15", "large fabrics: 10G vs 40G servers",
        "Web search on 3:1 oversubscribed fabrics with 40G links: CONGA's gain over ECMP at 30% load is ~5-10% with "
        "384 x 10G servers but ~30% with 96 x 40G servers.",
        scenarios=("conga/fig15.toml",), requires=("scheme:ecmp", "scheme:conga", "workload:poisson"),
        grid=_fig15_grid, tables=("flows",), reduce=fct_reduce(("servers",)), settle=True,
        plot=fct_plot("CONGA Fig. 15: web search, 3:1", facet="servers", panels=[("fct_norm_ecmp", "mean FCT / ECMP"), ("fct_norm_ideal", "mean FCT / ideal")]),
        ours=_fig15_ours,
        claims=(
            Claim("10 G edge, 40 G fabric: improvement at 30% load typically 5-10% (§5.5)", COMPARABLE,
                  "CONGA's overall gain over ECMP at 30% in [2.5%, 20%] (384 x 10G)", check=_fig15_at30("384x10G", 0.025, 0.20)),
            Claim("40 G everywhere: 30% better FCT than ECMP even at 30% load", COMPARABLE,
                  "CONGA's overall gain at 30% in [15%, 60%] (96 x 40G)", check=_fig15_at30("96x40G", 0.15, 0.60)),
            Claim("the improvement is more pronounced the closer the access speed is to the fabric speed", COMPARABLE,
                  "gain at 30% larger with 40G servers than with 10G servers", check=_fig15_order),
        ),
        notes=("(a) 8 leaves x 48 hosts x 10G, (b) 8 leaves x 12 hosts x 40G; both 4 spines x 1 x 40G per leaf (160G up: 3:1).",),
    ),
    Experiment(
        "conga-fig16", PAPER, "Fig. 16", "9 random link failures: queue per fabric port",
        "6 leaves x 4 spines, 3 x 40G per pair, 9 random failed links, web search at 60%: queues at the spine ports next "
        "to failed links are ~10x larger with ECMP than with CONGA.",
        scenarios=("conga/fig16.toml",), requires=("scheme:ecmp", "scheme:conga", "workload:poisson"),
        # The full form is the settling form: the figure is one load, 60%.
        grid=_fig16_grid, tables=("ports",), reduce=fig16_reduce, plot=_fig16_plot, ours=fig16_ours, settle=True,
        claims=(
            Claim("queues at the spine links next to the failed link ~10x larger with ECMP than with CONGA (§5.5)", COMPARABLE,
                  "ECMP/CONGA mean queue at the spine downlinks next to a failure in [5, 20]", check=_fig16_next_to_failure),
            Claim("the improvement is much larger at the (remote) spine downlinks than at the leaf uplinks (caption)", COMPARABLE,
                  "ECMP/CONGA at the spine downlinks next to a failure above ECMP/CONGA at the leaf uplinks",
                  check=_fig16_remote_larger),
        ),
        notes=("The 9 failed links are drawn from the scenario seed (`random:9`), so both schemes see the same failures per seed; table.csv shows the first seed.",
               "Spine downlinks next to a failure: the surviving links of a (spine, leaf) pair that lost one (the paper's links 10 and 12 around the failed 11); failed links are left out (summary `failure_links`).",
               "Why ours differs: ECMP runs the surviving links next to a failure at 0.83 of their capacity on average, not at "
               "saturation, and 100-packet ports cap its queue at 150 KB. docs/CONGA.md, 'Fig. 16'."),
    ),
    Experiment(
        "conga-fig17", PAPER, "Fig. 17 / Theorem 1", "Price of Anarchy = 2",
        "The Price of Anarchy of the bottleneck routing game is 2: some Nash flows have twice the optimal maximum link utilisation.",
        requires=("analysis:conga-fig17",), delegate="conga-fig17",
        claims=(
            Claim("Theorem 1: the PoA of the CONGA game is 2, attained by Fig. 17 (§6.1)", COMPARABLE,
                  "analytic (docs/ANALYSIS.md §1): Fig. 17's Nash bottleneck / optimum = 2 exactly, the Nash flow verified by LP; "
                  "best-response dynamics on random instances never above 2"),
            Claim("Remark 2: preferring paths with the fewest bottlenecks gives PoA 1", COMPARABLE,
                  "analytic: the refinement's ratio on Fig. 17 within 1e-6 of 1"),
        ),
    ),
    Experiment(
        "conga-thm2", PAPER, "Theorem 2", "traffic imbalance bound vs Monte Carlo",
        "The traffic imbalance of flowlet-level random load balancing is bounded by Theorem 2's expression; the bound tracks simulation.",
        requires=("analysis:conga-thm2",), delegate="conga-thm2",
        claims=(
            Claim("Theorem 2: E chi(t) <= 1/sqrt(lambda_e t) + O(1/t) (§6.2)", COMPARABLE,
                  "analytic (docs/ANALYSIS.md §3): the Monte Carlo mean within 3 standard errors below the rigorous forms at "
                  "every t, and below the leading term for the largest t"),
            Claim("heavy workloads are harder to balance; flowlets make a difference for them (§6.2)", COMPARABLE,
                  "analytic: data-mining with 500 KB flowlets less imbalanced than with whole flows"),
        ),
    ),
    Experiment(
        "conga-fluid", PAPER, "Figs. 2 and 3 (fluid)", "the §2.4 examples as fluid fixed points",
        "Fig. 2: ECMP 90, local 80, CONGA ~100 Gbps. Fig. 3: the right L1→L2 split depends on the L0→L2 demand, static "
        "weights cannot serve both cases, local can be worse than ECMP in (b).",
        requires=("analysis:conga-fluid",), delegate="conga-fluid",
        claims=(
            Claim("Fig. 2: ECMP 90, local 80, CONGA ~100 Gbps (§2.4)", COMPARABLE,
                  "fluid fixed points (docs/ANALYSIS.md §2) within 0.5 Gbps of each"),
            Claim("Fig. 3: CONGA carries the demand in (a) and (b); no single static weight does", COMPARABLE,
                  "fluid: CONGA's throughput equals the demand in both cases; the best static weight carries less than all of it in one"),
            Claim("Fig. 3(b): a local scheme can be worse than ECMP", COMPARABLE, "fluid: local's throughput below ECMP's in (b)"),
        ),
    ),
]
