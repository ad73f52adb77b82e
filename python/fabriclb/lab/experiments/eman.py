"""EMAN (Zhang et al., IFIP Networking 2020): the simulations of §V-A, Figs. 2 and 4-7, with
EMAN, the bandwidth-proportional oracle ("Bw-based") and ECMP, and Clove and Hermes once the
core has them. Topologies and settings follow the paper and `../shared/SCHEMES.md`
§10.1-10.5 (docs/EMAN.md fixes what the paper leaves open): Fig. 1(a) is two leaves joined by
a 6 G and a 3 G path; Fig. 1(b) is three leaves and two spines, Leaf1-Spine1 and Leaf2-Spine1
at 10 G, the other four links at 40 G, flows F1 Leaf1→Leaf3 and F2 Leaf2→Leaf3. The paper
numbers switches from 1: its Leaf 1-3 and Spine 1-2 are our L0-L2 and S0-S1; the "left" path
of a flow is the one through S0.

Throughput is compared on one byte basis: payload. A scheme's optimum is the max-flow of the
fabric (wire capacity) times the payload share of a full segment on the wire,
MSS / (frame + the scheme's tunnel + preamble and gap): 1460 / 1578 for EMAN and the oracle
(40 bytes of tunnel), 1460 / 1538 for ECMP. The paper's numbers are compared as fractions of
its optimum (9 Gbps in Fig. 2, 60 Gbps in Fig. 4)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

from .. import plots
from ..reduce import duration_ms, seed_range
from ..sweep import PointResult, PointSpec
from .common import (
    COMPARABLE,
    NOT_COMPARABLE,
    RUN_LENGTH,
    RUN_LENGTH_BULK,
    Check,
    Claim,
    Ctx,
    Experiment,
    Reduction,
    cdf_axis,
    fct_plot,
    fct_reduce,
    grid_points,
    loads_for,
    lookup,
    pct,
    rate_gbps,
    rows_of,
    run_length,
    scheme_axis,
    scheme_list,
    within,
)

PAPER = "EMAN (IFIP Networking'20)"
#: The paper's comparison schemes: each joins the grids once the core has it.
COMPARED = ("clove", "hermes")
SCHEMES = ["ecmp", "bw-oracle", "eman"]
#: EMAN Fig. 4's table (Gbps of 60).
EMAN4_PAPER = {"clove": 32.5, "hermes": 39.5, "eman": 56.7}
#: The flows of Fig. 1 as the scenarios number them: (name, flow id).
FLOWS_1A = (("F1", 0),)
FLOWS_1B = (("F1", 0), ("F2", 1))
#: A path through S0 is the flow's "left" path (traces name paths by their switches).
LEFT = ">S0>"


# ----------------------------------------------------------------------------- measurements


def max_flow_gbps(scenario: Mapping[str, Any], pairs: Optional[Sequence[Tuple[str, str]]] = None) -> float:
    """Max-flow (Gbps of wire capacity) from the sources to the destinations of ``pairs``
    (default: every flow of the scenario's bulk and explicit workloads) in an explicit
    topology, with degraded and down links applied: the optimum the utilisation of EMAN's
    figures is relative to."""
    topo = scenario.get("topology", {})
    if topo.get("kind") != "explicit":
        return math.nan
    cap: Dict[Tuple[str, str], float] = {}

    def add(a: str, b: str, c: float) -> None:
        cap[(a, b)] = cap.get((a, b), 0.0) + c
        cap.setdefault((b, a), 0.0)

    degraded: Dict[frozenset, Optional[float]] = {}
    for f in scenario.get("failures", []) or []:
        ends = str(f.get("link", "")).split("#")[0].replace("->", "-").split("-")
        if len(ends) == 2:
            degraded[frozenset(ends)] = rate_gbps(f.get("rate")) if f.get("kind") == "degrade" else 0.0
    for l in topo.get("links", []):
        r = rate_gbps(l.get("rate")) * int(l.get("count", 1))
        r2 = degraded.get(frozenset((l["a"], l["b"])))
        if r2 is not None:
            r = r2 * int(l.get("count", 1)) if r2 > 0 else 0.0
        add(l["a"], l["b"], r)
        add(l["b"], l["a"], r)
    for h in topo.get("hosts", []):
        n = int(h.get("count", 1))
        for nm in ([h["name"]] if n == 1 else [f"{h['name']}{j}" for j in range(n)]):
            add(nm, h["attach"], rate_gbps(h.get("rate")))
            add(h["attach"], nm, rate_gbps(h.get("rate")))
    if pairs is None:
        pairs = []
        for w in scenario.get("workload", []):
            pairs += [(str(f["src"]), str(f["dst"])) for f in w.get("flows", []) or []]
            pairs += [(str(a), str(b)) for a, b in zip(w.get("src", []) or [], w.get("dst", []) or [])]
    for s, d in pairs:
        add("__src", s, math.inf)
        add(d, "__dst", math.inf)
    flow = 0.0
    while True:  # Edmonds-Karp
        parent: Dict[str, str] = {"__src": ""}
        queue = ["__src"]
        adj: Dict[str, List[str]] = {}
        for (a, b) in cap:
            adj.setdefault(a, []).append(b)
        while queue and "__dst" not in parent:
            u = queue.pop(0)
            for v in adj.get(u, []):
                if v not in parent and cap[(u, v)] > 1e-12:
                    parent[v] = u
                    queue.append(v)
        if "__dst" not in parent:
            return flow
        v, push = "__dst", math.inf
        while v != "__src":
            push = min(push, cap[(parent[v], v)])
            v = parent[v]
        v = "__dst"
        while v != "__src":
            cap[(parent[v], v)] -= push
            cap[(v, parent[v])] += push
            v = parent[v]
        flow += push


def payload_share(summary: Mapping[str, Any], scenario: Mapping[str, Any]) -> float:
    """Payload of a full segment over its bytes on the wire (frame, the scheme's tunnel,
    preamble and gap): the factor from wire capacity to payload throughput."""
    mss = int(scenario.get("transport", {}).get("mtu", 1500)) - 40
    return mss / (max(64, mss + 58) + int(summary.get("host_encap_bytes", 0) or 0) + 20)


def path_series(traces: pd.DataFrame) -> pd.DataFrame:
    """Per sample and flow: the rate (Gbps) on the left path (through S0), on the right, and
    over the flow as a whole (its in-order delivery), from the per-path traces."""
    cols = ["t_ms", "flow", "left_gbps", "right_gbps", "flow_gbps"]
    if traces.empty:
        return pd.DataFrame(columns=cols)
    path = traces["path"].fillna("").astype(str)
    per = traces[path != ""].assign(left=path[path != ""].str.contains(LEFT, regex=False))
    lr = per.pivot_table(index=["t_ms", "flow"], columns="left", values="rate_gbps", aggfunc="sum", fill_value=0.0)
    out = pd.DataFrame({"left_gbps": lr.get(True, 0.0), "right_gbps": lr.get(False, 0.0)})
    own = traces[path == ""].set_index(["t_ms", "flow"])["rate_gbps"]
    out["flow_gbps"] = own.reindex(out.index).fillna(0.0)
    return out.reset_index()[cols]


def left_right(s: pd.DataFrame) -> float:
    """Left:right over the samples given: their left rates' sum over their right rates'."""
    a, b = float(s["left_gbps"].sum()), float(s["right_gbps"].sum())
    return a / b if b > 0 else (math.inf if a > 0 else math.nan)


def first_split(s: pd.DataFrame) -> float:
    """Left:right in the first sample with traffic on both paths."""
    both = s[(s["left_gbps"] > 0) & (s["right_gbps"] > 0)]
    return left_right(both.iloc[:1]) if len(both) else math.nan


def _measured(s: pd.DataFrame, scenario: Mapping[str, Any]) -> pd.DataFrame:
    """Samples within (warmup, duration]: a sample at t covers the interval before t."""
    t0, t1 = duration_ms(scenario.get("warmup", "0ps")), duration_ms(scenario.get("duration", "0ps"))
    return s[(s["t_ms"] > t0 + 1e-9) & (s["t_ms"] <= t1 + 1e-9)]


# ----------------------------------------------------------------------------- Figs. 2 and 4


def edge_axis(schemes: Sequence[str], hermes_r: float = 0.4) -> Tuple[str, List[Tuple[Any, List[Tuple[str, Any]]]]]:
    """The scheme axis with each scheme's §V-A parameters (their defaults), and Hermes's R:
    off (0) in Fig. 2, 40% in the other figures (footnote 3)."""
    out = []
    for s in schemes:
        sc: Dict[str, Any] = {"name": s}
        if s == "hermes":
            sc["rate_threshold"] = hermes_r
        out.append((s, [("scheme", sc)]))
    return ("scheme", out)


def _bulk_grid(scenario: str, hermes_r: float = 0.4) -> Callable[[Ctx], List[PointSpec]]:
    def grid(ctx: Ctx) -> List[PointSpec]:
        schemes = scheme_list(ctx, SCHEMES, ["bw-oracle", "eman"], COMPARED)
        return grid_points(ctx, scenario, [edge_axis(schemes, hermes_r)], run_length(RUN_LENGTH_BULK, ctx))

    return grid


def _bulk_reduce(flows: Sequence[Tuple[str, int]]) -> Callable[[List[PointResult], Ctx], Reduction]:
    """Per scheme: payload goodput (Gbps), the optimum on the same basis and their ratio;
    per flow its left:right over the measured samples and in its first sample; mean and range
    over seeds. Extra table ``ratio``: each flow's left:right per sample (first seed)."""

    def red(points: List[PointResult], ctx: Ctx) -> Reduction:
        rows, series = [], []
        first = min((p.seed for p in points if p.ok), default=None)
        for p in points:
            if not p.ok:
                continue
            s = path_series(p.table("traces"))
            m = _measured(s, p.scenario)
            opt = max_flow_gbps(p.scenario) * payload_share(p.summary, p.scenario)
            thr = float(p.summary["goodput_gbps"])
            row: Dict[str, Any] = {"scheme": p.labels["scheme"], "seed": p.seed, "throughput_gbps": thr,
                                   "optimum_gbps": opt, "utilization": thr / opt if opt else math.nan}
            for name, f in flows:
                row[f"{name}_gbps"] = float(m[m["flow"] == f]["flow_gbps"].mean()) if len(m) else math.nan
                row[f"{name}_left_right"] = left_right(m[m["flow"] == f])
                row[f"{name}_start"] = first_split(s[s["flow"] == f])
                if p.seed == first:
                    for _, r in s[s["flow"] == f].iterrows():
                        lr = r["left_gbps"] / r["right_gbps"] if r["right_gbps"] > 0 else math.nan
                        series.append({"scheme": p.labels["scheme"], "flow": name, "t_ms": r["t_ms"], "left_gbps": r["left_gbps"],
                                       "right_gbps": r["right_gbps"], "left_right": lr})
            rows.append(row)
        cols = ["throughput_gbps", "utilization", "optimum_gbps"] + [f"{n}_{k}" for n, _ in flows for k in ("gbps", "left_right", "start")]
        df = pd.DataFrame(rows, columns=["scheme", "seed", *cols])
        ratio = pd.DataFrame(series, columns=["scheme", "flow", "t_ms", "left_gbps", "right_gbps", "left_right"])
        if df.empty:
            return Reduction(pd.DataFrame(columns=["scheme", *cols]), {"ratio": ratio})
        return Reduction(seed_range(df, ["scheme"], cols), {"ratio": ratio})

    return red


def _util(scheme: str, lo: float, hi: float) -> Check:
    def check(red: Reduction) -> Optional[Tuple[str, bool]]:
        v = lookup(red.table, "utilization", scheme=scheme)
        g = lookup(red.table, "throughput_gbps", scheme=scheme)
        return None if not np.isfinite(v) else (f"{v:.1%} of the optimum ({g:.2f} Gbps)", within(v, lo, hi))

    return check


def _ratio(a: str, b: str, lo: float, hi: float) -> Check:
    def check(red: Reduction) -> Optional[Tuple[str, bool]]:
        x, y = (lookup(red.table, "throughput_gbps", scheme=s) for s in (a, b))
        if not (np.isfinite(x) and np.isfinite(y)) or y <= 0:
            return None
        return f"{a}/{b} = {x / y:.2f}", within(x / y, lo, hi)

    return check


def _all_below(schemes: Sequence[str], limit: float) -> Check:
    def check(red: Reduction) -> Optional[Tuple[str, bool]]:
        vals = {s: lookup(red.table, "utilization", scheme=s) for s in schemes}
        if not all(np.isfinite(v) for v in vals.values()):
            return None
        return ", ".join(f"{s} {v:.1%}" for s, v in vals.items()), all(v < limit for v in vals.values())

    return check


def _each_flow(scheme: str, flows: Sequence[Tuple[str, int]], col: str, lo: float, hi: float) -> Check:
    def check(red: Reduction) -> Optional[Tuple[str, bool]]:
        vals = {n: lookup(red.table, f"{n}_{col}", scheme=scheme) for n, _ in flows}
        if not all(np.isfinite(v) for v in vals.values()):
            return None
        return ", ".join(f"{n} {v:.2f}" for n, v in vals.items()), all(within(v, lo, hi) for v in vals.values())

    return check


def _flow_util(scheme: str, flows: Sequence[Tuple[str, int]], opt_gbps: float, lo: float, hi: float) -> Check:
    """Each flow's goodput as a fraction of ``opt_gbps`` of wire capacity on the payload basis."""

    def check(red: Reduction) -> Optional[Tuple[str, bool]]:
        share = lookup(red.table, "optimum_gbps", scheme=scheme) / 60.0
        vals = {n: lookup(red.table, f"{n}_gbps", scheme=scheme) / (opt_gbps * share) for n, _ in flows}
        if not all(np.isfinite(v) for v in vals.values()):
            return None
        return ", ".join(f"{n} {v:.0%} of {opt_gbps:g} Gbps" for n, v in vals.items()), all(within(v, lo, hi) for v in vals.values())

    return check


def _hermes_swings(red: Reduction) -> Optional[Tuple[str, bool]]:
    s = rows_of(red.extra.get("ratio", pd.DataFrame()), scheme="hermes")
    s = s[(s["left_gbps"] + s["right_gbps"]) > 0]
    if s.empty:
        return None
    left_share = s["left_gbps"] / (s["left_gbps"] + s["right_gbps"])
    one = ((left_share > 0.8) | (left_share < 0.2)).mean()
    both = bool((left_share > 0.8).any() and (left_share < 0.2).any())
    return f"one path carries > 80% in {one:.0%} of the samples", bool(one >= 0.5 and both)


def _bulk_ours(red: Reduction) -> str:
    t = red.table
    if t.empty:
        return "-"
    ratios = [c for c in t.columns if c.endswith("_left_right") and not c.endswith(("_min", "_max"))]
    return "; ".join(f"{r['scheme']} {r['throughput_gbps']:.2f} Gbps = {r['utilization']:.1%} of the optimum (left:right "
                     + ", ".join(f"{r[c]:.2f}" for c in ratios) + ")" for _, r in t.iterrows())


def _bulk_plot(title: str, target: float) -> Callable[[Reduction, Path], None]:
    def plot(red: Reduction, path: Path) -> None:
        ratio = red.extra.get("ratio", pd.DataFrame(columns=["scheme", "flow", "t_ms", "left_right"]))
        ratio = ratio.assign(line=ratio["scheme"].astype(str) + "/" + ratio["flow"].astype(str)).dropna(subset=["left_right"])
        ratio = ratio[ratio["scheme"] != "ecmp"]  # ECMP keeps a flow on one path: no ratio
        plots.bars_and_series(red.table, ratio, path, x="scheme", y="utilization", t="t_ms", y2="left_right", group="line",
                              ylabel="throughput / optimum (payload)", ylabel2="left : right rate", hline=1.0, hline2=target,
                              log2=True, title=title)

    return plot


# ----------------------------------------------------------------------------- Fig. 5


def _fig5_grid(ctx: Ctx) -> List[PointSpec]:
    fixed = [("duration", "4ms")] if ctx.mode == "smoke" else []
    return grid_points(ctx, "eman/fig5.toml", [scheme_axis(["eman"])], fixed)


def _fig5_reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
    """Per sample (first seed): F1's and F2's throughput and F1's rate on each path; the
    payload optimum of F1 alone and of the two flows go in ``optimum_alone_gbps`` and
    ``optimum_both_gbps``."""
    rows = []
    first = min((p.seed for p in points if p.ok), default=None)
    for p in points:
        if not p.ok or p.seed != first:
            continue
        s = path_series(p.table("traces"))
        share = payload_share(p.summary, p.scenario)
        alone = max_flow_gbps(p.scenario, [("A", "C0")]) * share
        both = max_flow_gbps(p.scenario) * share
        f2 = p.scenario["workload"][0]["flows"][1]
        for t, sub in s.groupby("t_ms"):
            f1, f2r = sub[sub["flow"] == 0], sub[sub["flow"] == 1]
            rows.append({"scheme": p.labels["scheme"], "t_ms": float(t),
                         "F1_gbps": float(f1["flow_gbps"].sum()), "F2_gbps": float(f2r["flow_gbps"].sum()),
                         "F1_left_gbps": float(f1["left_gbps"].sum()), "F1_right_gbps": float(f1["right_gbps"].sum()),
                         "optimum_alone_gbps": alone, "optimum_both_gbps": both,
                         "f2_start_ms": duration_ms(f2.get("start", "0ps")), "f2_stop_ms": duration_ms(f2.get("stop") or "0ps")})
    cols = ["scheme", "t_ms", "F1_gbps", "F2_gbps", "F1_left_gbps", "F1_right_gbps", "optimum_alone_gbps", "optimum_both_gbps",
            "f2_start_ms", "f2_stop_ms"]
    return Reduction(pd.DataFrame(rows, columns=cols))


def _fig5_phases(red: Reduction) -> Optional[Dict[str, Any]]:
    """EMAN's three phases from F2's start and stop: the second half of F1's time alone, the
    second half of the sharing, and the time after F2 stops."""
    t = rows_of(red.table, scheme="eman")
    if t.empty:
        return None
    start, stop = float(t["f2_start_ms"].iloc[0]), float(t["f2_stop_ms"].iloc[0])
    end = float(t["t_ms"].max())
    if not (0 < start < stop < end):
        return None
    half = lambda a, b: t[(t["t_ms"] > (a + b) / 2) & (t["t_ms"] <= b)]  # noqa: E731
    return {"alone": half(0, start), "sharing": half(start, stop), "after": t[t["t_ms"] > stop], "stop": stop,
            "opt_alone": float(t["optimum_alone_gbps"].iloc[0]), "opt_both": float(t["optimum_both_gbps"].iloc[0])}


def _fig5_check(what: str) -> Check:
    def check(red: Reduction) -> Optional[Tuple[str, bool]]:
        ph = _fig5_phases(red)
        if ph is None:
            return None
        a, s, after = ph["alone"], ph["sharing"], ph["after"]
        lr = lambda d: float(d["F1_left_gbps"].sum() / d["F1_right_gbps"].sum()) if d["F1_right_gbps"].sum() > 0 else math.nan  # noqa: E731
        if what == "alone":
            v = float(a["F1_gbps"].mean()) / ph["opt_alone"]
            return f"F1 {v:.0%} of 50 Gbps", within(v, 0.85, 1.15)
        if what == "alone-ratio":
            return f"F1 left:right {lr(a):.2f}", within(lr(a), 0.2, 0.3)
        if what == "sharing":
            half = ph["opt_both"] / 2
            f1, f2 = float(s["F1_gbps"].mean()) / half, float(s["F2_gbps"].mean()) / half
            return f"F1 {f1:.0%}, F2 {f2:.0%} of 30 Gbps", within(f1, 0.85, 1.15) and within(f2, 0.85, 1.15)
        if what == "sharing-ratio":
            return f"F1 left:right {lr(s):.2f}", within(lr(s), 0.4, 0.6)
        back = after[after["F1_gbps"] >= 0.85 * ph["opt_alone"]]
        if back.empty:
            return "F1 never back above 85% of 50 Gbps", False
        dt = float(back["t_ms"].min() - ph["stop"])
        return f"{dt:.0f} ms", within(dt, 15.0, 60.0)

    return check


def _fig5_ours(red: Reduction) -> str:
    ph = _fig5_phases(red)
    if ph is None:
        return "-"
    a, s, after = ph["alone"], ph["sharing"], ph["after"]
    lr = lambda d: d["F1_left_gbps"].sum() / max(d["F1_right_gbps"].sum(), 1e-9)  # noqa: E731
    back = after[after["F1_gbps"] >= 0.85 * ph["opt_alone"]]
    dt = f"{back['t_ms'].min() - ph['stop']:.0f} ms" if len(back) else "never"
    return (f"F1 alone {a['F1_gbps'].mean():.1f} Gbps at {lr(a):.2f}; sharing F1 {s['F1_gbps'].mean():.1f}, "
            f"F2 {s['F2_gbps'].mean():.1f} Gbps, F1 at {lr(s):.2f}; F1 back at 85% of its optimum {dt} after F2 stops "
            f"(payload; optima {ph['opt_alone']:.1f} alone, {ph['opt_both']:.1f} both)")


def _fig5_plot(red: Reduction, path: Path) -> None:
    t = red.table.assign(F1_left_right=red.table["F1_left_gbps"] / red.table["F1_right_gbps"].where(red.table["F1_right_gbps"] > 0))
    long = t.melt(id_vars=["scheme", "t_ms"], value_vars=["F1_gbps", "F2_gbps", "F1_left_gbps", "F1_right_gbps"],
                  var_name="series", value_name="gbps")
    plots.timeseries(long, path, t="t_ms", y="gbps", group="series", ylabel="throughput (Gbps, payload)",
                     title="EMAN Fig. 5: F2 joins at 100 ms and leaves at 200 ms")


# ----------------------------------------------------------------------------- Fig. 6

#: The six leaf-spine links of Fig. 1(b), each downgraded to 10 Gbps in every combination.
FIG6_LINKS = ("L0-S0", "L0-S1", "L1-S0", "L1-S1", "S0-L2", "S1-L2")


def _fig6_grid(ctx: Ctx) -> List[PointSpec]:
    combos = [c for k in range(1, len(FIG6_LINKS) + 1) for c in itertools.combinations(FIG6_LINKS, k)]
    if ctx.mode == "quick":
        combos = combos[::4]
    elif ctx.mode == "smoke":
        combos = combos[:2]
    cases = [("+".join(c), [("failures", [{"link": l, "kind": "degrade", "rate": "10Gbps"} for l in c])]) for c in combos]
    # The quick form runs EMAN, Clove and Hermes on every 4th combination (the full form adds
    # the oracle on all 63).
    schemes = {"full": scheme_list(ctx, ["eman", "bw-oracle"], ["eman"], COMPARED),
               "quick": scheme_list(ctx, ["eman"], ["eman"], COMPARED)}.get(ctx.mode, ["eman"])
    return grid_points(ctx, "eman/fig6.toml", [edge_axis(schemes), ("degraded", cases)], run_length(RUN_LENGTH_BULK, ctx))


def _fig6_reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
    rows = []
    for p in points:
        if not p.ok:
            continue
        thr = float(p.summary["goodput_gbps"])
        opt = max_flow_gbps(p.scenario) * payload_share(p.summary, p.scenario)
        rows.append({"scheme": p.labels["scheme"], "degraded": p.labels["degraded"], "seed": p.seed,
                     "throughput_gbps": thr, "optimum_gbps": opt, "utilization": thr / opt if opt else math.nan})
    df = pd.DataFrame(rows, columns=["scheme", "degraded", "seed", "throughput_gbps", "optimum_gbps", "utilization"])
    if df.empty:
        return Reduction(df)
    return Reduction(seed_range(df, ["scheme", "degraded"], ["throughput_gbps", "optimum_gbps", "utilization"]))


def _fig6_util(red: Reduction) -> pd.Series:
    t = red.table
    return rows_of(t, scheme="eman")["utilization"].astype(float).dropna() if not t.empty else pd.Series(dtype=float)


def _fig6_share(red: Reduction) -> Optional[Tuple[str, bool]]:
    u = _fig6_util(red)
    if u.empty:
        return None
    frac = float((u > 0.85).mean())
    return f"> 85% in {frac:.0%} of {len(u)} cases", frac > 0.8


def _fig6_worst(red: Reduction) -> Optional[Tuple[str, bool]]:
    u = _fig6_util(red)
    return None if u.empty else (f"worst {u.min():.0%}", bool(u.min() >= 0.8))


def _fig6_ours(red: Reduction) -> str:
    t = red.table
    if t.empty:
        return "-"
    parts = []
    for s, g in t.groupby("scheme", sort=False):
        worst = g.loc[g["utilization"].idxmin()]
        parts.append(f"{s}: > 85% utilisation in {(g['utilization'] > 0.85).mean():.0%} of {len(g)} cases, median "
                     f"{g['utilization'].median():.0%}, worst {worst['utilization']:.0%} ({worst['degraded']})")
    return "; ".join(parts)


def _fig6_plot(red: Reduction, path: Path) -> None:
    t = red.table
    curves = {str(s): plots.ecdf(g["utilization"].to_numpy(float)) for s, g in t.groupby("scheme", sort=False)} if not t.empty else {}
    plots.cdfs(curves, path, xlabel="network utilisation (payload goodput / optimum)",
               title="EMAN Fig. 6: every combination of degraded links")


# ----------------------------------------------------------------------------- Fig. 7

#: Permutation traffic (§V-A5): host i of the left half (L0, L1: hosts 0-31) sends to host
#: i + 32 of the right half; `load` is a fraction of each sender's 10 Gbps access link.
FIG7_PAIRS = 32
FIG7_HOST_GBPS = 10.0


def _fig7_load_axis(loads: Sequence[float]) -> Tuple[str, List[Tuple[Any, List[Tuple[str, Any]]]]]:
    return ("load", [(float(x), [(f"workload[0].entries[{i}].rate", f"{x * FIG7_HOST_GBPS:g}Gbps") for i in range(FIG7_PAIRS)])
                     for x in loads])


#: Where a scheme saturates, written down before any run (docs/LAB.md): Leaf 2's uplinks (L1:
#: 10 + 10 + 40 + 40 = 100 Gbps) cannot carry its 16 senders' 160 Gbps x load above 0.625,
#: whatever the scheme; ECMP puts a quarter of L1's flows on each uplink and overloads the two
#: 10 G ones above 0.25. Points above a scheme's bound are *not comparable*: the backlog, and
#: with it the FCT, grows with the run's length.
FIG7_SATURATION = {"ecmp": 0.25}
FIG7_SATURATION_ALL = 0.625


def fig7_comparable(scheme: str, load: float) -> bool:
    return load <= min(FIG7_SATURATION.get(scheme, FIG7_SATURATION_ALL), FIG7_SATURATION_ALL) + 1e-9


def _fig7_grid(ctx: Ctx) -> List[PointSpec]:
    # The quick form has a load below ECMP's saturation (0.2), one between it and Leaf 2's
    # (0.5) and one above both (0.8). The data-mining panel (§V-A5: "similar better
    # performance", no figure or number) runs those three loads in the full form and the
    # middle one in the quick form, with the web-search panel's run length: it is reported,
    # not judged, and three loads keep the full form within its hour.
    loads = loads_for(ctx, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], [0.2, 0.5, 0.8], [0.5])
    schemes = ["ecmp", "clove", "hermes", "eman"] if ctx.mode != "smoke" else ["ecmp", "eman"]
    rl = run_length(RUN_LENGTH, ctx)
    points = grid_points(ctx, "eman/fig7.toml", [edge_axis(schemes), cdf_axis(["web-search"]), _fig7_load_axis(loads)], rl)
    if ctx.mode != "smoke":
        dm_loads = [0.2, 0.5, 0.8] if ctx.mode == "full" else [0.5]
        points += grid_points(ctx, "eman/fig7.toml", [edge_axis(schemes), cdf_axis(["data-mining"]), _fig7_load_axis(dm_loads)], rl)
    return points


def _fig7_reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
    red = fct_reduce(("workload",))(points, ctx)
    t = red.table
    if not t.empty:
        t = t.assign(comparable=[fig7_comparable(str(s), float(x)) for s, x in zip(t["scheme"], t["load"])])
    return Reduction(t, red.extra)


def _fig7_gains(red: Reduction, other: str, workload: str = "web-search") -> pd.Series:
    """EMAN's gain in mean FCT (unfinished flows at their lower bound) over ``other`` in one
    panel, at the loads where both are comparable."""
    t = red.table
    if t.empty:
        return pd.Series(dtype=float)
    if "workload" in t:
        t = t[t["workload"] == workload]
    ok = t["comparable"] if "comparable" in t else pd.Series(True, index=t.index)
    t = t[ok.astype(bool)]
    e = rows_of(t, scheme="eman").set_index("load")["fct_lb_ms"].astype(float)
    o = rows_of(t, scheme=other).set_index("load")["fct_lb_ms"].astype(float)
    return (1 - e / o).dropna()


def _fig7_span(others: Sequence[str], low: float, high: float) -> Check:
    """EMAN's gain over each of ``others``: at least ``low`` at every load and at least
    ``high`` at its best."""

    def check(red: Reduction) -> Optional[Tuple[str, bool]]:
        parts, ok = [], True
        for o in others:
            g = _fig7_gains(red, o)
            if g.empty:
                return None
            parts.append(f"vs {o} {pct(g.min())}-{pct(g.max())}")
            ok = ok and g.min() >= low and g.max() >= high
        return ", ".join(parts), ok

    return check


def _fig7_ours(red: Reduction) -> str:
    panels = []
    for w in ("web-search", "data-mining"):
        parts = []
        for o in ("ecmp", "clove", "hermes"):
            g = _fig7_gains(red, o, w)
            if len(g):
                parts.append(f"{o} {pct(g.min())} to {pct(g.max())} (loads {', '.join(f'{x:g}' for x in g.index)})")
        if parts:
            panels.append(f"{w}: EMAN's gain in mean FCT over " + ", ".join(parts))
    return ("; ".join(panels) + ", at the loads where both are comparable") if panels else "-"


# ----------------------------------------------------------------------------- Fig. 9

#: The testbed run's length and the UDP flow's interval per mode (full: the paper's 10 s).
FIG9_TIMES = {"full": ("30s", "10s", "20s"), "quick": ("10s", "3s", "8s"), "smoke": ("300ms", "100ms", "200ms")}
FIG9_TWO = [{"src": "H11", "dst": "H21"}, {"src": "H12", "dst": "H22"}]
#: EMAN's testbed settings (§V-B), as in the scenario (a scheme axis replaces the whole table).
FIG9_EMAN = {"name": "eman", "c_ratecalc": 10, "t_explore": "1s", "reorder_buffer": "715KB", "t_reorder": "100ms"}


def _fig9_grid(ctx: Ctx) -> List[PointSpec]:
    dur, start, stop = FIG9_TIMES[ctx.mode]
    panels = ("panel", [("one", []), ("two", [("workload[0].flows", FIG9_TWO), ("measure.trace_flows", [0, 1])])])
    fixed = [("duration", dur), ("workload[1].flows[0].start", start), ("workload[1].flows[0].stop", stop)]
    schemes = ("scheme", [("ecmp", [("scheme", {"name": "ecmp"})]), ("eman", [("scheme", dict(FIG9_EMAN))])])
    return grid_points(ctx, "eman/fig9.toml", [schemes, panels], fixed)


def _fig9_reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
    """Per (panel, scheme, flow): mean throughput (Mbps, payload) before the UDP flow (its
    second half), during it (from 1 s after its start) and after it (from 1 s after its stop),
    and path 1's share of the flow during it. Extra table ``series``: every 100-ms sample."""
    rows, series = [], []
    first = min((p.seed for p in points if p.ok), default=None)
    for p in points:
        if not p.ok or p.seed != first:
            continue
        s = path_series(p.table("traces"))
        cbr = p.scenario["workload"][1]["flows"][0]
        t0, t1 = duration_ms(cbr.get("start", "0ps")), duration_ms(cbr.get("stop") or "0ps")
        end = duration_ms(p.scenario.get("duration", "0ps"))
        for f, g in s.groupby("flow"):
            name = f"F{int(f) + 1}"
            for _, r in g.iterrows():
                series.append({"panel": p.labels["panel"], "scheme": p.labels["scheme"], "flow": name, "t_ms": r["t_ms"],
                               "mbps": 1e3 * r["flow_gbps"], "path1_mbps": 1e3 * r["left_gbps"], "path2_mbps": 1e3 * r["right_gbps"]})
            span = lambda a, b: g[(g["t_ms"] > a) & (g["t_ms"] <= b)]  # noqa: E731
            settle = min(1000.0, (t1 - t0) / 4)
            before, during, after = span(t0 / 2, t0), span(t0 + settle, t1), span(t1 + settle, end)
            tot = float(during["left_gbps"].sum() + during["right_gbps"].sum())
            rows.append({"panel": p.labels["panel"], "scheme": p.labels["scheme"], "flow": name,
                         "before_mbps": 1e3 * float(before["flow_gbps"].mean()), "during_mbps": 1e3 * float(during["flow_gbps"].mean()),
                         "after_mbps": 1e3 * float(after["flow_gbps"].mean()),
                         "path1_share_before": float(before["left_gbps"].sum() / max(before["left_gbps"].sum() + before["right_gbps"].sum(), 1e-12)),
                         "path1_share_during": float(during["left_gbps"].sum()) / tot if tot > 0 else math.nan})
    cols = ["panel", "scheme", "flow", "before_mbps", "during_mbps", "after_mbps", "path1_share_before", "path1_share_during"]
    return Reduction(pd.DataFrame(rows, columns=cols),
                     {"series": pd.DataFrame(series, columns=["panel", "scheme", "flow", "t_ms", "mbps", "path1_mbps", "path2_mbps"])})


def _fig9_val(red: Reduction, col: str, panel: str, scheme: str, flow: str) -> float:
    return lookup(red.table, col, panel=panel, scheme=scheme, flow=flow)


def _fig9_eman_one(red: Reduction) -> Optional[Tuple[str, bool]]:
    b, d = _fig9_val(red, "before_mbps", "one", "eman", "F1"), _fig9_val(red, "during_mbps", "one", "eman", "F1")
    if not (np.isfinite(b) and np.isfinite(d)) or b <= 0:
        return None
    return f"{d:.0f} Mbps during the UDP flow, {b:.0f} before ({d / b:.0%})", within(d / b, 0.85, 1.15)


def _fig9_eman_split(red: Reduction) -> Optional[Tuple[str, bool]]:
    x = _fig9_val(red, "path1_share_during", "one", "eman", "F1")
    if not np.isfinite(x):
        return None
    lr = x / (1 - x) if x < 1 else math.inf
    return f"path 1 : path 2 = {lr:.2f}", within(lr, 0.35, 0.65)


def _fig9_ecmp_path1(panel: str) -> Check:
    """ECMP's flow on path 1 during the UDP flow, in Mbps: [100, 400] ("about 200")."""

    def check(red: Reduction) -> Optional[Tuple[str, bool]]:
        t = rows_of(red.table, panel=panel, scheme="ecmp")
        on1 = t[t["path1_share_before"] > 0.5]
        if on1.empty:
            return ("no ECMP flow hashed onto path 1 in this panel", False) if len(t) else None
        v = float(on1["during_mbps"].iloc[0])
        return f"{on1['flow'].iloc[0]} on path 1: {v:.0f} Mbps", within(v, 100.0, 400.0)

    return check


def _fig9_ecmp_apart(red: Reduction) -> Optional[Tuple[str, bool]]:
    t = rows_of(red.table, panel="two", scheme="ecmp")
    if len(t) < 2:
        return None
    sides = (t["path1_share_before"] > 0.5).tolist()
    return f"path 1 shares {', '.join(f'{x:.2f}' for x in t['path1_share_before'])}", sides.count(True) == 1


def _fig9_eman_two(red: Reduction) -> Optional[Tuple[str, bool]]:
    v = [_fig9_val(red, "during_mbps", "two", "eman", f) for f in ("F1", "F2")]
    if not all(np.isfinite(x) for x in v):
        return None
    return f"F1 {v[0]:.0f}, F2 {v[1]:.0f} Mbps", all(within(x, 0.8 * 460, 1.2 * 460) for x in v)


def _fig9_overhead(red: Reduction) -> Optional[Tuple[str, bool]]:
    e, c = _fig9_val(red, "before_mbps", "one", "eman", "F1"), _fig9_val(red, "before_mbps", "one", "ecmp", "F1")
    if not (np.isfinite(e) and np.isfinite(c)) or c <= 0:
        return None
    return f"EMAN {e:.0f}, TCP alone {c:.0f} Mbps ({1 - e / c:.1%} less)", within(1 - e / c, 0.015, 0.06)


def _fig9_ours(red: Reduction) -> str:
    t = red.table
    if t.empty:
        return "-"
    return "; ".join(f"({r['panel']}) {r['scheme']} {r['flow']}: {r['before_mbps']:.0f} before, {r['during_mbps']:.0f} during "
                     f"(path 1 share {r['path1_share_during']:.2f}), {r['after_mbps']:.0f} after Mbps" for _, r in t.iterrows())


def _fig9_plot(red: Reduction, path: Path) -> None:
    s = red.extra.get("series", pd.DataFrame(columns=["panel", "scheme", "flow", "t_ms", "mbps"]))
    s = s.assign(line=s["scheme"].astype(str) + "/" + s["flow"].astype(str), t_s=s["t_ms"] / 1e3)
    plots.timeseries(s, path, t="t_s", y="mbps", group="line", facet="panel", xlabel="time (s)", ylabel="throughput (Mbps, payload)",
                     title="EMAN Fig. 9: testbed, 500 Mbps UDP on path 1")


# ----------------------------------------------------------------------------- the registry

_SETTINGS = ("Settings fixed before running (docs/LAB.md, 'EMAN Figs. 2, 4, 5, 6'): base RTT 160 µs (20 µs per link, 8 link "
             "crossings per round trip); per switch port ECN at 1 BDP and a buffer of 3 BDP, BDP = the port's rate x 160 µs; "
             "minRTO 5 ms; NewReno without SACK and classic ECN (RFC 3168), the paper naming no TCP; host links 100 Gbps.")
_SCHEME_SETTINGS = ("Scheme parameters of §V-A: EMAN C_ratecalc 10 packets, T_explore 50 base RTTs (8 ms), L = 6 MB ('6Mb'), "
                    "T_reorder 5 ms; the oracle the same tunnel and reorder buffer; Clove (Clove-ECN) weight decay 2/3, the other "
                    "weights left as they are (§II-A's worked example), at most one cut per path per 80 µs (half a base RTT), ECN hidden from TCP "
                    "until every path was marked within 200 RTTs (32 ms), flowlet timeout 500 µs; Hermes T_ECN 40%, T_RTT_low "
                    "180 µs (RTT + 20 µs), T_RTT_high 320 µs (2 RTTs), S = 600 KB, R = 40% of the path's capacity (off in "
                    "Fig. 2: footnote 3), and our choices ΔRTT 80 µs, ΔECN 5%, probes every 500 µs, failed after 3 timeouts "
                    "(docs/CLOVE_HERMES.md). All three edge schemes use the same 40-byte tunnel.")
_BASIS = ("Throughput is payload goodput (summary goodput_gbps); the optimum is the max-flow times the payload share of a full "
          "segment on the wire (1460/1578 with the 40-byte tunnel, 1460/1538 without); the paper's numbers are compared as "
          "fractions of its optimum.")
_FIG7_SETTINGS = ("Settings of §V-A: base RTT 160 µs (20 µs per link, 8 link crossings per round trip), ECN threshold 1 BDP and "
                  "buffers 3 BDP (one value for all ports, from the base link rate; the paper does not say per port or global), "
                  "minRTO 5 ms, DCTCP senders (EMAN relies on instant ECN marking as in DCTCP [23]).")

EXPERIMENTS: List[Experiment] = [
    Experiment(
        "eman-fig2", PAPER, "Fig. 2", "one flow over a 6G and a 3G path (Fig. 1(a))",
        "One flow over two paths (9 Gbps in total): EMAN gets almost all of it, as the bandwidth-proportional split does, "
        "~40% more than Clove and ~90% more than Hermes (both use less than 70% of the capacity); EMAN's split goes from "
        "1:1 to 1:2.",
        scenarios=("eman/fig2.toml",), requires=("scheme:eman", "scheme:bw-oracle", "workload:explicit"),
        grid=_bulk_grid("eman/fig2.toml", hermes_r=0.0), tables=("traces",), reduce=_bulk_reduce(FLOWS_1A),
        plot=_bulk_plot("EMAN Fig. 2: 6G + 3G paths", 0.5), ours=_bulk_ours,
        claims=(
            Claim("Bw-based (traffic split in proportion to path bandwidth) reaches the optimum, 9 Gbps (§II-B, Fig. 2(a))",
                  COMPARABLE, "the oracle's goodput within 5% of the optimum (payload basis)", (), _util("bw-oracle", 0.95, 1.05)),
            Claim("EMAN gets almost the same throughput as Bw-based (§V-A1)", COMPARABLE,
                  "EMAN/oracle goodput within ±15% ('similar')", (), _ratio("eman", "bw-oracle", 0.85, 1.15)),
            Claim("EMAN's traffic ratio is initialised to 1:1 (§V-A1)", COMPARABLE,
                  "EMAN's left:right in its first 1-ms sample with traffic on both paths in [0.67, 1.5]",
                  (), _each_flow("eman", FLOWS_1A, "start", 0.67, 1.5)),
            Claim("EMAN converges to the right ratio 1:2 (left:right) (Fig. 2(d))", COMPARABLE,
                  "EMAN's left:right over the measured samples in [0.4, 0.6]", (), _each_flow("eman", FLOWS_1A, "left_right", 0.4, 0.6)),
            Claim("Clove and Hermes use less than 70% of the 9 Gbps (§II-A)", COMPARABLE,
                  "each below 75% of the optimum (5 points of slack)", ("clove", "hermes"), _all_below(("clove", "hermes"), 0.75)),
            Claim("EMAN ~40% better than Clove (§V-A1)", COMPARABLE, "EMAN/Clove in [1.2, 1.8] (half to twice the 40%)", ("clove",),
                  _ratio("eman", "clove", 1.2, 1.8)),
            Claim("EMAN ~90% better than Hermes (§V-A1)", COMPARABLE, "EMAN/Hermes in [1.45, 2.8]", ("hermes",),
                  _ratio("eman", "hermes", 1.45, 2.8)),
            Claim("Clove's ratio keeps cycling between 4:9 and 2:3 from ~25 ms on (§II-A, Fig. 2(b))", COMPARABLE,
                  "Clove's left:right over the measured samples in [0.34, 0.77] (the cycle's ends ± 0.1)", ("clove",),
                  _each_flow("clove", FLOWS_1A, "left_right", 0.34, 0.77)),
            Claim("Hermes's traffic oscillates between the two paths (§II-A, Fig. 2(c))", COMPARABLE,
                  "one path carries more than 80% of Hermes's traffic in at least half the 1-ms samples, each path in some",
                  ("hermes",), _hermes_swings),
        ),
        notes=("Fig. 1(a): host A under L0 sends one long TCP flow to host B under L1 over L0-S0-L1 (left) and L0-S1-L1; all four "
               "fabric links 6 Gbps, S0-L1 degraded to 3 Gbps from the start (EMAN's path table starts at the nominal 6:6); "
               "100 Gbps host links.", _SETTINGS, _SCHEME_SETTINGS, _BASIS,
               "ECMP keeps the flow on one path (6 Gbps at most); it is run as the baseline the paper's Fig. 2 does not show. "
               "ratio.csv: the left:right ratio per 1-ms sample (per-path traces, first seed)."),
    ),
    Experiment(
        "eman-fig4", PAPER, "Fig. 4", "two competing flows on Fig. 1(b), 60 Gbps maximum",
        "Two competing flows on the asymmetric fabric of Fig. 1(b) (60 Gbps max): Clove 32.5, Hermes 39.5, EMAN 56.7 Gbps; "
        "each flow's split goes from 1:1 to 1:2.",
        scenarios=("eman/fig4.toml",), requires=("scheme:eman", "scheme:bw-oracle", "workload:explicit"),
        grid=_bulk_grid("eman/fig4.toml"), tables=("traces",), reduce=_bulk_reduce(FLOWS_1B),
        plot=_bulk_plot("EMAN Fig. 4: two competing flows", 0.5), ours=_bulk_ours,
        claims=tuple(
            Claim(f"{s.capitalize() if s != 'eman' else 'EMAN'} {v} Gbps aggregate of 60 (§V-A2, table)"
                  + (" (the text says 57.4; we compare with the table)" if s == "eman" else ""),
                  COMPARABLE, f"utilisation within 20% of {v}/60 = {v / 60:.1%}", tuple(x for x in (s,) if x in COMPARED),
                  _util(s, 0.8 * v / 60, 1.2 * v / 60))
            for s, v in EMAN4_PAPER.items()
        ) + (
            Claim("EMAN ~46% better than Hermes and ~97% better than Clove (§V-A2)", NOT_COMPARABLE,
                  "ratios of the table's numbers, which are compared directly (and the table gives 74%, not 97%, for Clove)"),
            Claim("EMAN first sends 1:1 on the two paths (§V-A2; §II-C says 10:40, the paths' capacities)", COMPARABLE,
                  "each flow's left:right in its first 1-ms sample with traffic on both paths in [0.67, 1.5] (§V-A2's 1:1, "
                  "which EMAN's path table at nominal capacities gives; §II-C's 10:40 would be 0.25)",
                  (), _each_flow("eman", FLOWS_1B, "start", 0.67, 1.5)),
            Claim("EMAN converges to 1:2 (left:right) for each flow (Fig. 4(b)-(d))", COMPARABLE,
                  "each flow's left:right over the measured samples in [0.4, 0.6]", (), _each_flow("eman", FLOWS_1B, "left_right", 0.4, 0.6)),
            Claim("Splitting by path bandwidth (10:40) gives each flow only 25 Gbps (§I, §II-B)", COMPARABLE,
                  "each flow's goodput under the oracle within 20% of 25 Gbps (payload basis)",
                  (), _flow_util("bw-oracle", FLOWS_1B, 25.0, 0.8, 1.2)),
            Claim("Hermes uses only the 40 G path (its rate stays above R = 0.4 x 40 G) (§V-A2)", COMPARABLE,
                  "Hermes's left:right at most 0.1 for each flow", ("hermes",), _each_flow("hermes", FLOWS_1B, "left_right", 0.0, 0.1)),
        ),
        notes=("Fig. 1(b): hosts A (L0) and B (L1) send F1 to C0 and F2 to C1 (both under L2); leaf-spine links 40 Gbps with "
               "L0-S0 and L1-S0 degraded to 10 Gbps; 100 Gbps host links. Optimum 60 Gbps (10 + 20 per flow, S1->L2 shared).",
               _SETTINGS, _SCHEME_SETTINGS, _BASIS, "ratio.csv: each flow's left:right per 1-ms sample (first seed)."),
    ),
    Experiment(
        "eman-fig5", PAPER, "Fig. 5", "a flow joins and leaves",
        "F1 alone reaches 50 Gbps at 1:4; when F2 joins, F1 moves to 1:2 and both converge to ~30 Gbps; after F2 leaves, F1 is "
        "back at 1:4 and 50 Gbps in about 30 ms.",
        scenarios=("eman/fig5.toml",), requires=("scheme:eman", "workload:explicit"),
        grid=_fig5_grid, tables=("traces",), reduce=_fig5_reduce, plot=_fig5_plot, ours=_fig5_ours,
        claims=(
            Claim("before F2 starts, F1 converges to the maximum, 50 Gbps (§V-A3)", COMPARABLE,
                  "F1's mean over the second half of its time alone within 15% of 50 Gbps (payload basis)", (), _fig5_check("alone")),
            Claim("F1 alone splits 1:4 (left:right)", COMPARABLE, "F1's left:right then in [0.2, 0.3]", (), _fig5_check("alone-ratio")),
            Claim("when F2 joins, the two flows gradually converge to 30 Gbps", COMPARABLE,
                  "each flow's mean over the second half of the sharing within 15% of 30 Gbps (payload basis)",
                  (), _fig5_check("sharing")),
            Claim("F1 quickly moves from 1:4 to 1:2", COMPARABLE, "F1's left:right over the second half of the sharing in [0.4, 0.6]",
                  (), _fig5_check("sharing-ratio")),
            Claim("after F2 leaves, F1 is back at 1:4 and 50 Gbps in about 30 ms", COMPARABLE,
                  "time from F2's stop until F1 reaches 85% of 50 Gbps (payload basis) in [15, 60] ms (half to twice)",
                  (), _fig5_check("recovery")),
        ),
        notes=("Fig. 1(b) topology as in Fig. 4. F1 (A to C0) runs throughout; F2 (B to C1) joins at 100 ms and its application "
               "stops writing at 200 ms of a 300 ms run (the paper gives neither time). Per-flow rates from the traces, 1-ms "
               "samples.", _SETTINGS, _SCHEME_SETTINGS, _BASIS),
        full_seeds=1,
    ),
    Experiment(
        "eman-fig6", PAPER, "Fig. 6", "every combination of degraded links",
        "Over all combinations of the six links of Fig. 1(b) degraded to 10 Gbps, EMAN reaches more than 85% "
        "utilisation in more than 80% of the cases and at least 80% in the worst.",
        scenarios=("eman/fig6.toml",), requires=("scheme:eman", "workload:explicit"),
        grid=_fig6_grid, tables=(), reduce=_fig6_reduce, plot=_fig6_plot, ours=_fig6_ours,
        claims=(
            Claim("EMAN achieves more than 85% utilisation in more than 80% of the cases (§V-A4)", COMPARABLE,
                  "as stated: the share of cases with utilisation > 85% above 80%", (), _fig6_share),
            Claim("EMAN achieves 80% utilisation even in the most extreme cases", COMPARABLE,
                  "as stated: the worst case at least 80%", (), _fig6_worst),
        ),
        notes=("Fig. 1(b)'s three leaves and two spines, all six leaf-spine links at 40 Gbps as the base, each of the 63 "
               "non-empty combinations degraded to 10 Gbps; F1 (A to C0) and F2 (B to C1) as in Fig. 4. The quick form "
               "runs EMAN, Clove and Hermes on every 4th combination; the full form adds the oracle on all 63.",
               "Utilisation = payload goodput / (max-flow of the degraded fabric x the payload share of a full segment).",
               _SETTINGS, _SCHEME_SETTINGS),
        full_seeds=1,
    ),
    Experiment(
        "eman-fig7", PAPER, "Fig. 7", "4 leaves x 16 hosts, two degraded links, web search and data mining",
        "4 x 16 hosts, 4 spines, leaf2-spine1 and leaf2-spine2 degraded to 10G, web search: EMAN improves mean FCT by "
        "~5-66% vs Clove and Hermes and ~17-75% vs ECMP.",
        scenarios=("eman/fig7.toml",), requires=("scheme:ecmp", "scheme:clove", "scheme:hermes", "scheme:eman", "workload:matrix"),
        grid=_fig7_grid, tables=("flows",), reduce=_fig7_reduce, ours=_fig7_ours,
        plot=fct_plot("EMAN Fig. 7: two degraded links", facet="workload", panels=[("fct_lb_ms", "mean FCT (ms)"), ("fct_norm_ecmp", "mean FCT / ECMP")]),
        claims=(
            Claim("EMAN has the lowest average FCT at every load (§V-A5)", COMPARABLE,
                  "EMAN's mean FCT below Clove's, Hermes's and ECMP's at every load where both are comparable (ECMP "
                  "up to 0.25, every scheme up to 0.625)", ("eman", "clove", "hermes"),
                  _fig7_span(("clove", "hermes", "ecmp"), 1e-9, 1e-9)),
            Claim("~5-66% lower FCT than Clove and Hermes", COMPARABLE,
                  "EMAN's gain over each at least 2.5% at every comparable load and at least 33% at its best (half the ends)",
                  ("eman", "clove", "hermes"), _fig7_span(("clove", "hermes"), 0.025, 0.33)),
            Claim("~17-75% lower FCT than ECMP", COMPARABLE, "EMAN's gain over ECMP at least 8.5% at every comparable load (up to 0.25) "
                  "and at least 37.5% at its best",
                  ("eman",), _fig7_span(("ecmp",), 0.085, 0.375)),
            Claim("data-mining: similar improvements (not plotted)", NOT_COMPARABLE, "the paper gives no number or figure: the "
                  "data-mining panel is reported (table rows with workload data-mining), not judged"),
        ),
        notes=("4 leaves x 16 hosts at 10 Gbps, 4 spines, one 40 Gbps link per leaf-spine pair; L1-S0 and L1-S1 (the paper's "
               "leaf 2-spine 1, leaf 2-spine 2) degraded to 10 Gbps.",
               "Permutation traffic: host i under L0/L1 sends to host i + 32 under L2/L3, Poisson web-search flows at load x "
               "10 Gbps per sender (the paper does not name the load's reference).",
               "Means with unfinished flows at their lower bound (fct_lb_ms).",
               "A second panel runs data-mining flows (the paper: similar improvements, no figure) at 0.2, 0.5 and 0.8 in "
               "the full form and at 0.5 in the quick form, with the web-search panel's run length; the claims read the "
               "web-search panel.",
               "Saturation, written down before running: Leaf 2's uplinks (100 Gbps) cannot carry its senders' 160 Gbps x "
               "load above 0.625 whatever the scheme, and ECMP (a quarter of L1's flows on each uplink) overloads the two "
               "10 G uplinks above 0.25. Points beyond a scheme's bound are tagged not comparable (table column "
               "`comparable`; their FCT grows with the run) and left out of the claims.", _FIG7_SETTINGS, _SCHEME_SETTINGS,
               "The full form runs one seed per point (36 points; from the quick form's 30 s per point, about 25 minutes on 2 free cores, five seeds two hours)."),
        full_seeds=1,
    ),
    Experiment(
        "eman-fig9", PAPER, "Fig. 9", "the testbed: a 500 Mbps UDP flow on one of two 1 G paths",
        "Testbed, two 1 Gbps paths, 500 Mbps UDP on path 1 for 10 s: one EMAN flow drops only briefly and moves to 1:2; "
        "an ECMP flow on path 1 drops to ~200 Mbps; with two flows EMAN keeps both at ~460 Mbps while ECMP's flow on "
        "path 1 drops to ~200 Mbps.",
        scenarios=("eman/fig9.toml",), requires=("scheme:eman", "scheme:ecmp", "workload:explicit", "workload:cbr"),
        grid=_fig9_grid, tables=("traces",), reduce=_fig9_reduce, plot=_fig9_plot, ours=_fig9_ours,
        claims=(
            Claim("(a) EMAN's throughput only drops temporarily when the UDP flow joins, then recovers (§V-B2)", COMPARABLE,
                  "EMAN's mean from 1 s after the UDP flow starts until it stops within 15% of its mean before", (), _fig9_eman_one),
            Claim("(a) EMAN switches most of the flow to path 2 (1:2 on the two paths)", COMPARABLE,
                  "path 1 : path 2 of EMAN's flow during the UDP flow in [0.35, 0.65]", (), _fig9_eman_split),
            Claim("(a) an ECMP flow on path 1 drops to about 200 Mbps", COMPARABLE,
                  "if ECMP hashes the flow onto path 1: its mean during the UDP flow in [100, 400] Mbps", (), _fig9_ecmp_path1("one")),
            Claim("(b) ECMP with the two flows forced onto different paths", COMPARABLE,
                  "the two flows' paths differ under ECMP (one carries > 50% on path 1 before the UDP flow)", (), _fig9_ecmp_apart),
            Claim("(b) ECMP's flow on path 1 drops to about 200 Mbps", COMPARABLE,
                  "its mean during the UDP flow in [100, 400] Mbps", (), _fig9_ecmp_path1("two")),
            Claim("(c) with EMAN both flows stay at about 460 Mbps during the UDP flow", COMPARABLE,
                  "each flow's mean during the UDP flow within 20% of 460 Mbps", (), _fig9_eman_two),
            Claim("EMAN's header costs ~3% of throughput (930 vs 900 Mbps, §V-B1)", COMPARABLE,
                  "EMAN's one flow before the UDP flow 1.5-6% below ECMP's (the same TCP without the tunnel)", (), _fig9_overhead),
            Claim("EMAN's CPU overhead (~8% of a core at the receiver)", NOT_COMPARABLE, "the simulator has no CPU model"),
        ),
        notes=("The testbed of §V-B as a simulation (scenarios/eman/fig9.toml): two switches (L0, L1) joined by two 1 Gbps "
               "paths (S0 = path 1, S1 = path 2), hosts H11, H12 / H21, H22 with 1 Gbps NICs, ~1 ms RTT (125 µs per link), ECN "
               "at 128 KB per port, 1 MB buffers (our choice). The UDP-like flow (500 Mbps on the wire) comes from a host of "
               "its own, U1 -> U2, pinned to path 1; full form: 10-20 s of a 30 s run (the paper's 10 s; its start is our "
               "choice), quick form 3-8 s of 10 s.",
               "TCP: the linux-3.10 profile with ECN on, the closest to the testbed's Linux 4.15 (RACK, 4.x CUBIC and pacing "
               "are not modelled); MSS 1350. EMAN's testbed settings: C_ratecalc 10, T_explore 1 s, L = 500 packets "
               "(715 KB), T_reorder 100 ms.",
               "Panel one: F1 H11 -> H21 under ECMP and EMAN; panel two adds F2 H12 -> H22 (ECMP: the flows' hashes put them "
               "on different paths, checked as a claim). Throughput is payload goodput per 100-ms sample (series.csv)."),
        full_seeds=1,
    ),
]
