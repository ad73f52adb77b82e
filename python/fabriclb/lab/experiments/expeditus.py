"""Expeditus (Wang and Xu, CoNEXT 2014 student workshop): Fig. 1 (leaf-spine, vs CONGA-Flow and
ECMP) and Fig. 2 (16-pod fat-tree, vs ECMP), web search, 150 KB port buffers. The extended
abstract gives topologies and headline gains only; the authors' ns-3 code fills in TCP,
buffers, loads and run length (`../shared/SCHEMES.md` §2.7-2.8), which the scenarios follow.
Both figures also run the authors' later design (`expeditus-socc`) and their oracle
(`path-oracle`), which the paper does not show; Fig. 2 adds the other split of its 4:1 as a
sensitivity (docs/EXPEDITUS.md, docs/LAB.md)."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import pandas as pd

from ..reduce import fct_vs_load, over_baseline, seed_range
from ..sweep import PointResult, PointSpec
from .common import (
    COMPARABLE,
    RUN_LENGTH_LARGE,
    Claim,
    Ctx,
    Experiment,
    Reduction,
    better,
    fct_plot,
    gain_check,
    grid_points,
    load_axis,
    loads_for,
    overall_norm,
    rows_of,
    run_length,
    scheme_axis,
)

PAPER = "Expeditus (CoNEXT'14 student workshop)"
#: The overall comparison column (unfinished flows at their lower bound).
OVERALL = "fct_lb_norm_ecmp"
_EXP = ("expeditus",)


#: Fig. 1's schemes: the paper's three, then the authors' later design and their oracle.
FIG1_SCHEMES = ["ecmp", "conga-flow", "expeditus", "expeditus-socc", "path-oracle"]
#: Elephants: the abstract does not define them; our choice is > 1 MB (mice: < 100 KB, §3).
ELEPHANT_BYTES = 1e6
MICE_BYTES = 100e3


def _fig1_grid(ctx: Ctx) -> List[PointSpec]:
    # The authors' leaf-spine runs: loads 0.1/0.3/0.5/0.7 (SCHEMES.md §2.7).
    loads = loads_for(ctx, [0.1, 0.3, 0.5, 0.7], [0.3, 0.7], [0.5])
    schemes = FIG1_SCHEMES if ctx.mode != "smoke" else ["ecmp", "expeditus"]
    return grid_points(ctx, "expeditus/fig1.toml", [scheme_axis(schemes), load_axis(loads)], run_length(RUN_LENGTH_LARGE, ctx))


def _fig1_reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
    """The figure's table: per (scheme, load), the mean FCT of all flows, of mice (< 100 KB)
    and of elephants (> 1 MB), finished measured flows, mean over seeds; each also divided by
    ECMP's at the same load and seed (the overall one also with unfinished flows at their
    lower bound)."""
    ok = [p for p in points if p.ok]
    t = fct_vs_load(ok)
    if t.empty:
        return Reduction(t)
    rows: List[Dict[str, Any]] = []
    for p in ok:
        f = p.table("flows")
        f = f[(f["warmup"] == 0) & (f["finished"] == 1) & (f["size_bytes"].astype(float) > ELEPHANT_BYTES)]
        rows.append({"scheme": p.labels["scheme"], "load": float(p.labels["load"]), "seed": p.seed,
                     "fct_elephants_ms": float(f["fct_ms"].mean()) if len(f) else math.nan})
    e = pd.DataFrame(rows)
    base = e[e["scheme"] == "ecmp"].set_index(["load", "seed"])["fct_elephants_ms"]
    e["elephants_norm_ecmp"] = [v / base.get((ld, sd), math.nan) for v, ld, sd in zip(e["fct_elephants_ms"], e["load"], e["seed"])]
    e = seed_range(e, ["scheme", "load"], ["fct_elephants_ms", "elephants_norm_ecmp"]).drop(columns="seeds")
    t = t.merge(e, on=["scheme", "load"], how="left")
    t = t.rename(columns={c: c.replace("small_", "mice_").replace("mice_fct_ms", "fct_mice_ms") for c in t.columns
                          if c.startswith("small_") and "p99" not in c})
    first = ["scheme", "load", "fct_ms", "fct_mice_ms", "fct_elephants_ms", "fct_lb_ms", "unfinished", "flows",
             "fct_norm_ecmp", "fct_lb_norm_ecmp", "mice_norm_ecmp", "elephants_norm_ecmp"]
    order = first + [c for c in t.columns if c not in first]
    t["scheme"] = pd.Categorical(t["scheme"], [s for s in FIG1_SCHEMES if s in set(t["scheme"])], ordered=True)
    t = t.sort_values(["scheme", "load"]).reset_index(drop=True)
    t["scheme"] = t["scheme"].astype(str)
    return Reduction(t[order])


def _fig1_conga_flow_similar(red: Reduction) -> Optional[Tuple[str, bool]]:
    t = red.table
    v = rows_of(t, scheme="conga-flow")
    if v.empty:
        return None
    r = v[overall_norm(t)].astype(float).dropna()
    if r.empty:
        return None
    near = float(((r - 1).abs() <= 0.15).mean())
    return f"CONGA-Flow/ECMP {r.min():.2f}-{r.max():.2f}, within ±15% at {near:.0%} of loads", near > 0.5


def _fig1_ours(red: Reduction) -> str:
    """Each scheme's range of gains over ECMP across loads: finished flows, and with unfinished
    flows (lost handshakes waiting for the 3 s SYN timeout) at their lower bound."""
    t = red.table

    def span(v: pd.DataFrame, col: str) -> str:
        g = 1 - v[col].astype(float)
        if g.isna().all():
            return "n/a"
        lo, hi = g.idxmin(), g.idxmax()
        return f"{better(g[lo])} (at {v.loc[lo, 'load']:.0%}) to {better(g[hi])} (at {v.loc[hi, 'load']:.0%})"

    parts = []
    for s in FIG1_SCHEMES[1:]:
        v = rows_of(t, scheme=s)
        if v.empty or "fct_norm_ecmp" not in v:
            continue
        parts.append(f"{s} {span(v, 'fct_norm_ecmp')} [{span(v, OVERALL)}]")
    return ("mean FCT vs ECMP, finished flows [unfinished at their lower bound]: " + "; ".join(parts)) if parts else "-"


#: Fig. 2's schemes: the paper's two, then the authors' later design and their oracle (as Fig. 1).
FIG2_SCHEMES = ["ecmp", "expeditus", "expeditus-socc", "path-oracle"]
#: The paper's 4:1 split between the layers (it gives none): ``MAIN`` is the authors' code's,
#: 2:1 at the edge x 2:1 at the aggregation layer (16 hosts per edge switch, 4 of 8 core ports:
#: 2048 hosts); ``EDGE_ONLY`` is the sensitivity, 4:1 at the edge (32 hosts per edge switch,
#: 4096 hosts) with every core port used. Label -> (oversubscription, agg_oversubscription).
MAIN, EDGE_ONLY = "2x2", "4x1"
SPLITS = {MAIN: (2, 2), EDGE_ONLY: (4, 1)}
#: Loads of Fig. 2, relative to the core (bisection) capacity, fixed before running: the paper
#: gives none; the authors' fat-tree scripts sweep 0.2-0.8 (SCHEMES.md §2.7).
FIG2_LOADS = [0.2, 0.5, 0.8]
#: Seeds of the form that settles the claims (the issue's budget: 90 minutes on 2 cores).
FIG2_SEEDS = 3


def split_axis(splits: List[str]) -> Tuple[str, List[Tuple[str, List[Tuple[str, Any]]]]]:
    """The split as a grid axis: the two oversubscription fields and the core capacity that
    `load` is a fraction of (hosts x 10 Gbps / 4 for both splits: 5.12 and 10.24 Tbps)."""
    out = []
    for sp in splits:
        edge, agg = SPLITS[sp]
        hosts = 16 * 8 * 8 * edge  # k pods x k/2 edge switches x (k/2 x edge) hosts, k = 16
        cap = hosts * 10 // (edge * agg)
        out.append((sp, [("topology.oversubscription", edge), ("topology.agg_oversubscription", agg),
                         ("workload[0].capacity", f"{cap}Gbps")]))
    return ("split", out)


def _fig2_parts(mode: str) -> List[Tuple[str, List[str], List[float]]]:
    """(split, schemes, loads) of each part of a mode's grid. The sensitivity split runs ECMP
    and Expeditus at the middle load only: a point has twice the hosts and the traffic of the
    main split's (one full-length Expeditus point at 80% took 830 s against 251 s on the main
    split), and at all three loads the 3-seed form would take about 105 minutes on 2 cores,
    over the issue's 90; with one load, about 60 (docs/EXPEDITUS.md, "Expeditus Fig. 2")."""
    if mode == "smoke":
        return [(MAIN, ["ecmp", "expeditus"], [0.5]), (EDGE_ONLY, ["ecmp", "expeditus"], [0.5])]
    return [(MAIN, FIG2_SCHEMES, FIG2_LOADS), (EDGE_ONLY, ["ecmp", "expeditus"], [0.5])]


def _fig2_grid(ctx: Ctx) -> List[PointSpec]:
    out: List[PointSpec] = []
    for split, schemes, loads in _fig2_parts(ctx.mode):
        out += grid_points(ctx, "expeditus/fig2.toml", [split_axis([split]), scheme_axis(schemes), load_axis(loads)],
                           run_length(RUN_LENGTH_LARGE, ctx))
    return out


def _fig2_protocol() -> List[List[str]]:
    """docs/LAB.md's grid rows: one per mode and split."""
    rows = []
    for mode in ("full", "quick", "smoke"):
        rl = RUN_LENGTH_LARGE[mode]
        seeds = FIG2_SEEDS if mode == "full" else 1
        for split, schemes, loads in _fig2_parts(mode):
            edge, agg = SPLITS[split]
            grid = (f"split: {split} (edge {edge}:1, aggregation {agg}:1, {16 * 64 * edge} hosts); scheme: "
                    f"{', '.join(schemes)}; load: {', '.join(f'{x:.0%}' for x in loads)}")
            rows.append([mode, "web-search", grid, f"1-{seeds}" if seeds > 1 else "1", rl["duration"], rl["warmup"],
                         rl["drain"], str(len(schemes) * len(loads) * seeds)])
    return rows


def _fig2_reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
    """Per (split, scheme, load): the 99th percentile of the mice's FCT (< 100 KB) and the mean
    FCT of the elephants (> 1 MB), over finished flows that start after the warm-up, mean and
    range over seeds; each also divided by ECMP's at the same split, load and seed."""
    rows: List[Dict[str, Any]] = []
    for p in points:
        if not p.ok:
            continue
        f = p.table("flows")
        f = f[f["warmup"] == 0]
        size = f["size_bytes"].astype(float)
        fin = f[f["finished"] == 1]
        fsize = fin["size_bytes"].astype(float)
        mice, eleph = fin[fsize < MICE_BYTES]["fct_ms"], fin[fsize > ELEPHANT_BYTES]["fct_ms"]
        rows.append({"split": p.labels["split"], "scheme": p.labels["scheme"], "load": float(p.labels["load"]),
                     "seed": p.seed,
                     "p99_mice_ms": float(mice.quantile(0.99)) if len(mice) else math.nan,
                     "fct_elephants_ms": float(eleph.mean()) if len(eleph) else math.nan,
                     "fct_mice_ms": float(mice.mean()) if len(mice) else math.nan,
                     "fct_ms": float(fin["fct_ms"].mean()) if len(fin) else math.nan,
                     "mice": float(len(mice)), "elephants": float(len(eleph)), "flows": float(len(f)),
                     "unfinished": float(len(f) - len(fin)),
                     "unfinished_mice": float(((f["finished"] != 1) & (size < MICE_BYTES)).sum())})
    d = pd.DataFrame(rows)
    if d.empty:
        return Reduction(pd.DataFrame(columns=["scheme", "load", "split", "p99_mice_ms", "fct_elephants_ms"]))
    for col, out in (("p99_mice_ms", "p99_mice_norm_ecmp"), ("fct_elephants_ms", "elephants_norm_ecmp")):
        d[out] = over_baseline(d, d["scheme"] == "ecmp", ["split", "load", "seed"], col)
    cols = ["p99_mice_ms", "fct_elephants_ms", "p99_mice_norm_ecmp", "elephants_norm_ecmp", "fct_mice_ms", "fct_ms",
            "mice", "elephants", "flows", "unfinished", "unfinished_mice"]
    t = seed_range(d, ["split", "scheme", "load"], cols)
    t["scheme"] = pd.Categorical(t["scheme"], [s for s in FIG2_SCHEMES if s in set(t["scheme"])], ordered=True)
    t["split"] = pd.Categorical(t["split"], [s for s in SPLITS if s in set(t["split"])], ordered=True)
    t = t.sort_values(["split", "scheme", "load"]).reset_index(drop=True)
    t["scheme"], t["split"] = t["scheme"].astype(str), t["split"].astype(str)
    first = ["scheme", "load", "split", "p99_mice_ms", "fct_elephants_ms", "p99_mice_norm_ecmp", "elephants_norm_ecmp"]
    return Reduction(t[first + [c for c in t.columns if c not in first]])


def _fig2_ours(red: Reduction) -> str:
    """Each scheme against ECMP at each load: the mice's p99 and the elephants' mean, main split
    first, then the sensitivity split."""
    t = red.table

    def word(x: float) -> str:
        return better(1 - x) if np.isfinite(x) else "n/a"

    parts = []
    for split in SPLITS:
        for s in FIG2_SCHEMES[1:]:
            v = rows_of(t, scheme=s, split=split)
            if v.empty:
                continue
            per = ", ".join(f"at {ld:.0%} {word(m)} / {word(e)}"
                            for ld, m, e in zip(v["load"], v["p99_mice_norm_ecmp"].astype(float),
                                                v["elephants_norm_ecmp"].astype(float)))
            parts.append(f"[{split}] {s} {per}")
    if not parts:
        return "-"
    return "vs ECMP, mice p99 / elephants' mean FCT: " + "; ".join(parts)


_NOTES = (
    "Settings from the authors' ns-3 code (SCHEMES.md §2.7): 10 Gbps links, 100-packet drop-tail ports (150 KB), "
    "NewReno without SACK, initial window 1, minRTO 200 µs, 3 s SYN timeout, an ACK per segment, 1400-byte segments, "
    "128 KB socket buffers; Poisson flows "
    "between uniformly random hosts (same rack included), one new connection each, at a load relative to the "
    "bisection (uplink) capacity.",
    "The authors' code draws web-search sizes from its own, coarser CDF in KB (mean 1134 KB); we use the project's "
    "web-search CDF (DCTCP, mean 1.711 MB), the distribution the paper names.",
)

EXPERIMENTS: List[Experiment] = [
    Experiment(
        "expeditus-fig1", PAPER, "Fig. 1", "leaf-spine: Expeditus vs CONGA-Flow and ECMP",
        "Leaf-spine (one pod of a 16-pod fat-tree, 2:1, 150 KB buffers), web search: Expeditus cuts FCT by 25-30% vs "
        "ECMP for all flows; CONGA-Flow is close to ECMP.",
        scenarios=("expeditus/fig1.toml",),
        requires=("scheme:ecmp", "scheme:conga-flow", "scheme:expeditus", "scheme:expeditus-socc", "scheme:path-oracle",
                  "workload:poisson"),
        grid=_fig1_grid, tables=("flows",), reduce=_fig1_reduce, ours=_fig1_ours,
        plot=fct_plot("Expeditus Fig. 1: leaf-spine 8x8, 2:1", facet=None,
                      panels=[("fct_norm_ecmp", "mean FCT / ECMP (finished)"),
                              (OVERALL, "mean FCT / ECMP (unfinished at lower bound)"),
                              ("mice_norm_ecmp", "mice (<100KB) / ECMP"), ("elephants_norm_ecmp", "elephants (>1MB) / ECMP")]),
        claims=(
            Claim("Expeditus 25-30% better FCT than ECMP for all flows (§3, Fig. 1)", COMPARABLE,
                  "Expeditus's best overall gain over ECMP in [12.5%, 60%] (half of 25% to twice 30%)", _EXP,
                  gain_check("expeditus", 0.125, 0.60)),
            Claim("CONGA-Flow similar to ECMP in most cases", COMPARABLE,
                  "CONGA-Flow/ECMP overall mean FCT within ±15% at more than half of the loads", check=_fig1_conga_flow_similar),
        ),
        notes=_NOTES + (
            "Our reading of \"unmodified TCP\" (§3): the TCP of the authors' ns-3.10 code, as the scenario sets it: NewReno "
            "without SACK, 1400-byte segments (MTU 1440), initial window 1 segment, an ACK for every segment, minRTO "
            "200 µs, a 3 s SYN timeout, 128 KB socket buffers (our receive window: 131072 B in flight at most). Not "
            "modelled: ns-3.10's initial ssthresh of 65535 B, and its hosts' 100-packet NIC queues (ours never drop).",
            "Topology: one pod of the k = 16 fat-tree as a leaf-spine: 8 leaves x 8 spines, 16 hosts per leaf (2:1), "
            "10 Gbps, 5 ns links; load = offered bytes of all flows (same-rack ones included) / the leaves' uplink "
            "capacity, 640 Gbps, as the authors' script.",
            "Flow sizes: mice < 100 KB (the paper's bound for mice); elephants > 1 MB, our choice (the abstract does "
            "not define them). FCTs are means over finished flows that start after the warm-up; the overall "
            "comparison with ECMP counts unfinished flows at their lower bound (fct_lb_norm_ecmp).",
            "CONGA-Flow: the authors' CONGA never updated CE at the spine (a bug in their code: the path metric is "
            "only the source leaf's uplink meter) and ran with a 2 s flowlet gap; ours updates CE at every hop and "
            "uses CONGA-Flow's 13 ms (SCHEMES.md §2.6). So the paper's \"CONGA-Flow ~ ECMP\" partly reflects their "
            "CONGA.",
            "expeditus is the seed design (egress-queue occupancy, sums); expeditus-socc is the authors' later code "
            "(link-load meters, max, the choice on the SYN-ACK at the sender's leaf), which is what produced the "
            "authors' later figures; path-oracle picks the least-loaded bottleneck at SYN time with global knowledge. "
            "The paper shows only the first. docs/EXPEDITUS.md.",
        ),
    ),
    Experiment(
        "expeditus-fig2", PAPER, "Fig. 2", "16-pod fat-tree, 4:1: Expeditus vs ECMP",
        "16-pod fat-tree, 4:1, web search: Expeditus cuts the 99th-percentile FCT of mice (<100 KB) by 35-50% and the "
        "mean FCT of elephants by ~25% vs ECMP.",
        scenarios=("expeditus/fig2.toml",),
        requires=("scheme:ecmp", "scheme:expeditus", "scheme:expeditus-socc", "scheme:path-oracle", "workload:poisson"),
        grid=_fig2_grid, tables=("flows",), reduce=_fig2_reduce, ours=_fig2_ours, full_seeds=FIG2_SEEDS,
        protocol=_fig2_protocol,
        plot=fct_plot("Expeditus Fig. 2: fat-tree k=16, 4:1 (split edge x aggregation)", facet="split",
                      panels=[("p99_mice_norm_ecmp", "mice (<100KB) p99 FCT / ECMP"),
                              ("elephants_norm_ecmp", "elephants (>1MB) mean FCT / ECMP")]),
        claims=(
            Claim("mice (< 100 KB): 99th-percentile FCT 35-50% lower than ECMP (§3, Fig. 2)", COMPARABLE,
                  "on the 2:1 x 2:1 split, Expeditus's best mice-p99 gain over ECMP at least 17.5% (half of 35%; "
                  "twice 50% is no bound)", _EXP,
                  gain_check("expeditus", 0.175, 1.0, "p99_mice_norm_ecmp", split=MAIN)),
            Claim("elephants around 25% faster on average", COMPARABLE,
                  "on the 2:1 x 2:1 split, Expeditus's best elephant (> 1 MB) mean-FCT gain over ECMP in [12.5%, 50%]",
                  _EXP, gain_check("expeditus", 0.125, 0.50, "elephants_norm_ecmp", split=MAIN)),
        ),
        notes=_NOTES + (
            "Our reading of \"unmodified TCP\" as in Fig. 1: the TCP of the authors' ns-3.10 code (NewReno without SACK, "
            "1400-byte segments, initial window 1, an ACK per segment, minRTO 200 µs, 3 s SYN timeout, 128 KB socket "
            "buffers).",
            "Topology: k = 16 fat-tree at 4:1. The paper does not say how the 4:1 splits between the layers. Main split "
            "(2x2), the authors' code's: 2:1 at the edge (16 hosts per edge switch, 2048 hosts) and 2:1 at the "
            "aggregation layer (4 of 8 core ports used, 32 cores); load = offered bytes / 5.12 Tbps. Sensitivity (4x1): "
            "4:1 at the edge (32 hosts per edge switch, 4096 hosts), every core port used (64 cores); load = offered "
            "bytes / 10.24 Tbps, ECMP and Expeditus at 50% only. The claims are judged on the main split.",
            "Loads 20%, 50%, 80% of the core capacity, fixed before running (the paper gives none; the authors' scripts "
            "sweep 0.2-0.8). Mice < 100 KB (the paper's bound), elephants > 1 MB as in Fig. 1 (the abstract does not "
            "define them); the p99 of mice and the elephants' mean are over finished flows that start after the "
            "warm-up (unfinished flows: lost handshakes waiting for the 3 s SYN timeout, counted in the table).",
            "expeditus-socc (the authors' later code) and path-oracle (their OPTIMAL) run beside the paper's two "
            "schemes on the main split; the paper shows only Expeditus and ECMP. docs/EXPEDITUS.md.",
        ),
    ),
]
