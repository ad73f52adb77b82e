"""Expeditus (Wang and Xu, CoNEXT 2014 student workshop): Fig. 1 (leaf-spine, vs CONGA-Flow and
ECMP) and Fig. 2 (16-pod fat-tree, vs ECMP), web search, 150 KB port buffers. The extended
abstract gives topologies and headline gains only; the authors' ns-3 code fills in TCP,
buffers, loads and run length (`../shared/SCHEMES.md` §2.7-2.8), which the scenarios follow."""

from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from ..sweep import PointSpec
from .common import (
    COMPARABLE,
    RUN_LENGTH_LARGE,
    Claim,
    Ctx,
    Experiment,
    Reduction,
    better,
    best_gain,
    fct_plot,
    fct_reduce,
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
_EXP = ("expeditus",)


def _fig1_grid(ctx: Ctx) -> List[PointSpec]:
    # The authors' leaf-spine runs: loads 0.1/0.3/0.5/0.7 (SCHEMES.md §2.7).
    loads = loads_for(ctx, [0.1, 0.3, 0.5, 0.7], [0.3, 0.7], [0.5])
    schemes = ["ecmp", "conga-flow", "expeditus"] if ctx.mode != "smoke" else ["ecmp", "expeditus"]
    return grid_points(ctx, "expeditus/fig1.toml", [scheme_axis(schemes), load_axis(loads)], run_length(RUN_LENGTH_LARGE, ctx))


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
    t = red.table
    parts = []
    for s in ("expeditus", "conga-flow"):
        g, at = best_gain(t, s)
        if np.isfinite(g):
            parts.append(f"{s} at best {better(g)} than ECMP (at {at:.0%})")
    return "; ".join(parts) or "-"


def _fig2_grid(ctx: Ctx) -> List[PointSpec]:
    # The authors' fat-tree runs: loads 0.2-0.8 (SCHEMES.md §2.7).
    loads = loads_for(ctx, [0.2, 0.4, 0.6, 0.8], [0.4, 0.8], [0.4])
    return grid_points(ctx, "expeditus/fig2.toml", [scheme_axis(["ecmp", "expeditus"]), load_axis(loads)], run_length(RUN_LENGTH_LARGE, ctx))


def _fig2_ours(red: Reduction) -> str:
    t = red.table
    mice, at_m = best_gain(t, "expeditus", "small_p99_norm_ecmp")
    big, at_b = best_gain(t, "expeditus", "large_norm_ecmp")
    if not np.isfinite(mice):
        return "-"
    return (f"mice p99 FCT at best {better(mice)} than ECMP (at {at_m:.0%})"
            + (f"; elephants' mean {better(big)} (at {at_b:.0%})" if np.isfinite(big) else "; no elephants measured"))


_NOTES = (
    "Settings from the authors' ns-3 code (SCHEMES.md §2.7): 10 Gbps links, 100-packet drop-tail ports (150 KB), "
    "NewReno without SACK, initial window 1, minRTO 200 µs, 3 s SYN timeout, an ACK per segment, 1400-byte segments; Poisson flows "
    "between uniformly random hosts (same rack included), one new connection each, at a load relative to the "
    "bisection (uplink) capacity.",
    "The authors' code draws web-search sizes from its own CDF in KB (mean 1134 KB); we use the web-search CDF "
    "(DCTCP, mean 1.711 MB), the distribution the paper names.",
)

EXPERIMENTS: List[Experiment] = [
    Experiment(
        "expeditus-fig1", PAPER, "Fig. 1", "leaf-spine: Expeditus vs CONGA-Flow and ECMP",
        "Leaf-spine (one pod of a 16-pod fat-tree, 2:1, 150 KB buffers), web search: Expeditus cuts FCT by 25-30% vs "
        "ECMP for all flows; CONGA-Flow is close to ECMP.",
        scenarios=("expeditus/fig1.toml",), requires=("scheme:ecmp", "scheme:conga-flow", "scheme:expeditus", "workload:poisson"),
        grid=_fig1_grid, tables=("flows",), reduce=fct_reduce(()), ours=_fig1_ours,
        plot=fct_plot("Expeditus Fig. 1: leaf-spine", facet=None, panels=[("fct_norm_ecmp", "mean FCT / ECMP"), ("small_norm_ecmp", "small flows / ECMP"), ("large_norm_ecmp", "large flows / ECMP")]),
        claims=(
            Claim("Expeditus 25-30% better FCT than ECMP for all flows (§3, Fig. 1)", COMPARABLE,
                  "Expeditus's best overall gain over ECMP in [12.5%, 60%] (half of 25% to twice 30%)", _EXP,
                  gain_check("expeditus", 0.125, 0.60)),
            Claim("CONGA-Flow similar to ECMP in most cases", COMPARABLE,
                  "CONGA-Flow/ECMP overall mean FCT within ±15% at more than half of the loads", check=_fig1_conga_flow_similar),
        ),
        notes=_NOTES + ("Topology: one pod of the k = 16 fat-tree as a leaf-spine: 8 leaves x 8 spines, 16 hosts per leaf (2:1).",
                        "The authors' CONGA-Flow decides once per flow (flowlet gap 2 s); ours, 13 ms, does too for these flows."),
    ),
    Experiment(
        "expeditus-fig2", PAPER, "Fig. 2", "16-pod fat-tree, 4:1",
        "16-pod fat-tree, 4:1, web search: Expeditus cuts the 99th-percentile FCT of mice (<100 KB) by 35-50% and the "
        "mean FCT of elephants by ~25% vs ECMP.",
        scenarios=("expeditus/fig2.toml",), requires=("scheme:ecmp", "scheme:expeditus", "workload:poisson"),
        grid=_fig2_grid, tables=("flows",), reduce=fct_reduce(()), ours=_fig2_ours,
        plot=fct_plot("Expeditus Fig. 2: fat-tree k=16, 4:1", facet=None, panels=[("small_p99_norm_ecmp", "mice p99 FCT / ECMP"), ("large_norm_ecmp", "elephant mean FCT / ECMP")]),
        claims=(
            Claim("mice (< 100 KB): 99th-percentile FCT 35-50% lower than ECMP (§3, Fig. 2)", COMPARABLE,
                  "Expeditus's best mice-p99 gain over ECMP at least 17.5% (half of 35%; twice 50% is no bound)", _EXP,
                  gain_check("expeditus", 0.175, 1.0, "small_p99_norm_ecmp")),
            Claim("elephants around 25% faster on average", COMPARABLE,
                  "Expeditus's best large-flow (> 10 MB) mean gain in [12.5%, 50%]", _EXP,
                  gain_check("expeditus", 0.125, 0.50, "large_norm_ecmp")),
        ),
        notes=_NOTES + ("Topology: k = 16 fat-tree with 4:1 at the edge (32 hosts per edge switch, 4096 hosts). The "
                        "authors' split (2:1 at the edge and 2:1 at the aggregation layer, 2048 hosts) needs aggregation "
                        "switches that use half their core ports, which the fat-tree kind does not express.",
                        "Elephants: the abstract does not define them; we use CONGA's > 10 MB."),
    ),
]
