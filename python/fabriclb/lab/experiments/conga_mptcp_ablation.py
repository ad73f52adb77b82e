"""MPTCP's penalty on the CONGA testbed taken apart (docs/CONGA.md, "MPTCP's enterprise
penalty"): the enterprise workload at 60% (Fig. 9's load range; Fig. 11's MPTCP comparison
is at 70% on the failed fabric) with plain TCP over ECMP as the baseline, and MPTCP with 1, 2,
4 and 8 subflows, with LIA (byte- and ACK-counted) and with uncoupled subflows (each the
profile's CUBIC), and TCP with NewReno and with CUBIC without HyStart; each on the testbed's 12 MB shared buffers and on
100-packet ports.

It is not a figure of the paper (its claim, that MPTCP's subflows congest the edge, has no
number, so its status is n/a): it asks how much of MPTCP's penalty comes with the number of
subflows and how much with the subflows' congestion control. The variants are those of a side
measurement run first (docs/CONGA.md gives its numbers); the table gives each variant's mean
FCT over plain TCP's with the same buffers, as the mean of per-seed ratios (same arrivals per
seed) with their min and max, and drops and timeouts per run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np
import pandas as pd

from .. import plots
from ..reduce import flow_stats, over_baseline, seed_range
from ..sweep import PointResult, PointSpec
from .common import NOT_COMPARABLE, Claim, Ctx, Experiment, Reduction, grid_points, rows_of, run_length

BASELINE = "TCP"

#: (label, overrides from testbed.toml, which runs every host on the linux-3.10 profile).
VARIANTS: Tuple[Tuple[str, Sequence[Tuple[str, Any]]], ...] = (
    (BASELINE, (("scheme", {"name": "ecmp"}),)),
    # Reno's slow start and growth: no HyStart, whose ms clock ends slow start at 16 segments
    # on the first tick of a round at datacenter RTTs (LINUX_TCP.md §5.3).
    ("TCP NewReno", (("scheme", {"name": "ecmp"}), ("transport.cc", "newreno"))),
    # CUBIC as Linux 2.6.26 has it: no HyStart (and none of 3.10's smaller changes: cubic_linux.rs).
    ("TCP CUBIC no HyStart", (("scheme", {"name": "ecmp"}), ("transport.cc", "cubic-linux-2.6.26"))),
    *((f"MPTCP LIA x{n}", (("scheme", {"name": "mptcp", "subflows": n}),)) for n in (1, 2, 4, 8)),
    ("MPTCP LIA-acks x8", (("scheme", {"name": "mptcp", "subflows": 8, "coupling": "lia-acks"}),)),
    *((f"MPTCP uncoupled x{n}", (("scheme", {"name": "mptcp", "subflows": n, "coupling": "uncoupled"}),)) for n in (1, 8)),
)

BUFFERS: Tuple[Tuple[str, Sequence[Tuple[str, Any]]], ...] = (
    ("12 MB shared", ()),
    # Each port at most 100 packets: the pool (36 ports x 100 packets) then never binds.
    ("100-packet ports", (("switch.buffer", "100pkt"),)),
)

#: Fig. 9's run length (its full and settling forms), enterprise at 60%.
RUN_LENGTH = {
    "full": {"duration": "1s", "warmup": "100ms", "drain": "1s"},
    "quick": {"duration": "300ms", "warmup": "50ms", "drain": "500ms"},
    "smoke": {"duration": "4ms", "warmup": "0ps", "drain": "4ms"},
}


def _grid(ctx: Ctx) -> List[PointSpec]:
    variants = VARIANTS if ctx.mode != "smoke" else (VARIANTS[0], VARIANTS[6])
    buffers = BUFFERS if ctx.mode != "smoke" else BUFFERS[:1]
    axes = [("buffer", [(n, list(ov)) for n, ov in buffers]), ("variant", [(n, list(ov)) for n, ov in variants])]
    fixed = [("workload[0].cdf", "enterprise"), ("workload[0].load", 0.6)] + run_length(RUN_LENGTH, ctx)
    return grid_points(ctx, "conga/testbed.toml", axes, fixed)


def _reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
    rows: List[Dict[str, Any]] = []
    for p in points:
        if not p.ok:
            continue
        st = flow_stats(p.table("flows"))
        rows.append({**p.labels, "seed": p.seed, **{k: st[k] for k in ("fct_lb_ms", "small_fct_ms", "small_p99_fct_ms", "large_fct_ms")},
                     "drops": float(p.summary.get("drops", np.nan)), "timeouts": float(p.summary.get("timeouts", np.nan))})
    df = pd.DataFrame(rows)
    if df.empty:
        return Reduction(df)
    ratios = {"fct_lb_ms": "overall", "small_fct_ms": "small", "small_p99_fct_ms": "small_p99", "large_fct_ms": "large"}
    for col, name in ratios.items():
        df[f"{name}_over_tcp"] = over_baseline(df, df["variant"] == BASELINE, ["buffer", "seed"], col)
    cols = [f"{n}_over_tcp" for n in ratios.values()] + ["drops", "timeouts"]
    out = seed_range(df, ["buffer", "variant"], cols)
    keep = ["buffer", "variant", "seeds"] + [c for n in ratios.values() for c in (f"{n}_over_tcp", f"{n}_over_tcp_min", f"{n}_over_tcp_max")]
    return Reduction(out[keep + ["drops", "timeouts"]].reset_index(drop=True))


def _plot(red: Reduction, path: Path) -> None:
    t = red.table
    if t.empty:
        plots.bars(t, path, x="variant", y="overall_over_tcp", title="no points")
        return
    plots.bars(t, path, x="variant", y="overall_over_tcp", group="buffer", ylabel="mean FCT / TCP's", hline=1.0, rotate=True,
               title="Enterprise 60%: MPTCP's penalty by subflows and congestion control")


def _ours(red: Reduction) -> str:
    t = red.table
    parts = []
    for buf, sub in t.groupby("buffer", sort=False):
        cells = [f"{r['variant']} {r['overall_over_tcp']:.2f} (small {r['small_over_tcp']:.2f})"
                 for _, r in sub.iterrows() if r["variant"] != BASELINE]
        parts.append(f"{buf}: mean FCT / TCP's: " + ", ".join(cells))
    return "; ".join(parts) or "-"


EXPERIMENTS = [
    Experiment(
        "conga-mptcp-ablation", "CONGA (SIGCOMM'14)", "Figs. 9-11, MPTCP ablation", "MPTCP's penalty: subflows or congestion control",
        "Not a paper figure: how much of MPTCP's penalty against TCP on the testbed (Figs. 9 and 11) comes with the number "
        "of subflows, and how much with the subflows' congestion control.",
        scenarios=("conga/testbed.toml",), requires=("scheme:ecmp", "mptcp", "workload:client-server"),
        grid=_grid, tables=("flows",), reduce=_reduce, plot=_plot, ours=_ours,
        claims=(
            Claim("MPTCP's 'use of multiple sub-flows actually increases congestion at the edge of the network' and "
                  "'increases the burstiness of traffic as more sub-flows contend at the fabric's access links' (§2.3)",
                  NOT_COMPARABLE, "a mechanism without a number: the table measures the penalty with 1 to 8 subflows and "
                  "with other congestion control on the subflows"),
        ),
        notes=("Enterprise at 60% on the baseline testbed (linux-3.10 profile on every host), Fig. 9's run length.",
               "Variants: TCP over ECMP (the baseline), with NewReno, and with Linux 2.6.26's CUBIC (no HyStart); MPTCP over ECMP with 1, 2, 4 and 8 subflows and "
               "LIA (byte-counted, the default), 8 with LIA counted in ACKs as Linux does, 1 and 8 uncoupled (each subflow "
               "the profile's CUBIC with HyStart); each with the testbed's 12 MB shared buffers and with 100-packet ports.",
               "Ratios: a variant's mean FCT (overall with unfinished flows at their lower bound; small flows < 100 KB: "
               "mean and p99; large > 10 MB) over TCP's with the same buffers and seed, averaged over the seeds."),
        full_seeds=5,
    ),
]
