"""The host ablation of CONGA Figs. 9 and 10 (docs/CONGA.md, "What each host behaviour does"):
the testbed on the ``linux-3.10`` profile with each behaviour of the profile switched off
alone, the profile in full, and the transport the testbed scenarios used before the profiles;
ECMP and CONGA at 60% and 90% load, enterprise (Fig. 9) and data-mining (Fig. 10).

It is not a figure of the paper, so it has no claims (status n/a): it answers which host
behaviour moves ECMP/CONGA, the question behind the distance between our Figs. 9-10 and the
paper's. Rules fixed before its first run (docs/LAB.md): per (variant, workload, load, seed)
ECMP's and CONGA's runs see the same arrivals; the table gives ECMP/CONGA as the mean of the
per-seed ratios with their min and max, and the mean timeouts and drops per run of each scheme.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np
import pandas as pd

from .. import plots
from ..reduce import flow_stats, seed_range
from ..sweep import PointResult, PointSpec
from .common import Ctx, Experiment, Reduction, cdf_axis, grid_points, load_axis, loads_for, rows_of, run_length, scheme_axis

#: Each variant: the overrides that make it from testbed.toml (which sets linux-3.10).
VARIANTS: Tuple[Tuple[str, Sequence[Tuple[str, Any]]], ...] = (
    ("linux-3.10", ()),
    ("no ER/TLP", (("transport.early_retransmit", "off"), ("transport.tail_loss_probe", False))),
    ("no PRR", (("transport.cwnd_reduction", "rfc6675"),)),
    # D-SACK undo with the adaptive duplicate threshold: undo off, the threshold fixed at 3.
    ("no undo/reordering", (("transport.undo", False), ("transport.max_reordering", 3))),
    ("no idle restart", (("transport.idle_restart", "off"),)),
    ("RFC CUBIC", (("transport.cc", "cubic"),)),
    ("simple ACK rules", (("transport.ack_rules", "simple"),)),
    ("no TSQ", (("transport.tsq", "0B"),)),
    # The testbed's transport before the profiles (commit bca9a5b): CUBIC (RFC 8312), 200 ms
    # minimum RTO, an ACK per two full segments, TSQ; the rest at the transport's defaults.
    ("pre-profile", (("transport", {"cc": "cubic", "min_rto": "200ms", "delayed_ack": True, "tsq": "128KiB"}),)),
)

#: Run length: the arrivals of Figs. 9-10's quick form (the ablation pairs ECMP and CONGA on
#: the same arrivals per seed, which removes much of the workload's variance from the ratio);
#: the drain outlasts a 200 ms RTO and one backed-off retry.
RUN_LENGTH_ABLATION = {
    "full": {"duration": "500ms", "warmup": "50ms", "drain": "600ms"},
    "quick": {"duration": "150ms", "warmup": "15ms", "drain": "600ms"},
    "smoke": {"duration": "4ms", "warmup": "0ps", "drain": "4ms"},
}


def _grid(ctx: Ctx) -> List[PointSpec]:
    variants = VARIANTS if ctx.mode != "smoke" else VARIANTS[:2]
    axis = ("variant", [(name, list(ov)) for name, ov in variants])
    wls = ["enterprise", "data-mining"] if ctx.mode != "smoke" else ["enterprise"]
    loads = loads_for(ctx, [0.6, 0.9], [0.6, 0.9], [0.6])
    axes = [axis, cdf_axis(wls), scheme_axis(["ecmp", "conga"]), load_axis(loads)]
    return grid_points(ctx, "conga/testbed.toml", axes, run_length(RUN_LENGTH_ABLATION, ctx))


def _reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
    rows: List[Dict[str, Any]] = []
    for p in points:
        if not p.ok:
            continue
        lab, s = p.labels, p.summary
        st = flow_stats(p.table("flows"))
        rows.append({"variant": lab["variant"], "workload": lab["workload"], "load": float(lab["load"]),
                     "scheme": lab["scheme"], "seed": p.seed, "fct_lb_ms": st["fct_lb_ms"],
                     "small_fct_ms": st["small_fct_ms"], "unfinished": st["unfinished"],
                     "timeouts": float(s.get("timeouts", np.nan)), "drops": float(s.get("drops", np.nan))})
    df = pd.DataFrame(rows)
    if df.empty:
        return Reduction(df)
    key = ["variant", "workload", "load", "seed"]
    e = df[df["scheme"] == "ecmp"].set_index(key)
    c = df[df["scheme"] == "conga"].set_index(key)
    both = e.join(c, lsuffix="_ecmp", rsuffix="_conga", how="inner").reset_index()
    both["ecmp_over_conga"] = both["fct_lb_ms_ecmp"] / both["fct_lb_ms_conga"]
    both["small_ecmp_over_conga"] = both["small_fct_ms_ecmp"] / both["small_fct_ms_conga"]
    cols = ["ecmp_over_conga", "small_ecmp_over_conga", "timeouts_ecmp", "timeouts_conga", "drops_ecmp",
            "drops_conga", "unfinished_ecmp", "unfinished_conga"]
    out = seed_range(both, ["variant", "workload", "load"], cols)
    keep = ["variant", "workload", "load", "seeds", "ecmp_over_conga", "ecmp_over_conga_min", "ecmp_over_conga_max",
            "small_ecmp_over_conga", "small_ecmp_over_conga_min", "small_ecmp_over_conga_max",
            "timeouts_ecmp", "timeouts_conga", "drops_ecmp", "drops_conga", "unfinished_ecmp", "unfinished_conga"]
    order = {name: i for i, (name, _) in enumerate(VARIANTS)}
    out = out.sort_values(by=["workload", "load", "variant"], key=lambda s: s.map(order) if s.name == "variant" else s,
                          kind="stable")
    return Reduction(out[keep].reset_index(drop=True))


def _plot(red: Reduction, path: Path) -> None:
    t = red.table.copy()
    if t.empty:
        plots.bars(t, path, x="variant", y="ecmp_over_conga", title="no points")
        return
    t["case"] = t["workload"] + " " + (100 * t["load"]).round().astype(int).astype(str) + "%"
    plots.bars(t, path, x="variant", y="ecmp_over_conga", group="case", ylabel="ECMP / CONGA mean FCT", hline=1.0,
               rotate=True, title="Host ablation: ECMP/CONGA with each linux-3.10 behaviour off")


def _ours(red: Reduction) -> str:
    t = red.table
    parts = []
    for (wl, load), sub in t.groupby(["workload", "load"], sort=False):
        full = rows_of(sub, variant="linux-3.10")
        if full.empty:
            continue
        ref = float(full["ecmp_over_conga"].iloc[0])
        others = sub[sub["variant"] != "linux-3.10"]
        far = others.iloc[(others["ecmp_over_conga"] - ref).abs().argmax()] if len(others) else None
        parts.append(f"{wl} {load:.0%}: ECMP/CONGA {ref:.2f} with the profile"
                     + (f", farthest with '{far['variant']}' ({far['ecmp_over_conga']:.2f})" if far is not None else ""))
    return "; ".join(parts) or "-"


EXPERIMENTS = [
    Experiment(
        "conga-ablation", "CONGA (SIGCOMM'14)", "Figs. 9-10, host ablation", "each Linux host behaviour switched off alone",
        "Not a paper figure: which behaviour of the hosts' TCP moves ECMP/CONGA on the testbed (Figs. 9 and 10).",
        scenarios=("conga/testbed.toml",), requires=("scheme:ecmp", "scheme:conga", "workload:client-server"),
        grid=_grid, tables=("flows",), reduce=_reduce, plot=_plot, ours=_ours,
        notes=("Variants: the linux-3.10 profile in full; each of its behaviours off alone (Early Retransmit and Tail Loss "
               "Probe; PRR, replaced by RFC 6675's reduction; D-SACK undo with the adaptive duplicate threshold; slow "
               "start after idle; Linux's CUBIC, replaced by RFC 8312's; Linux's delayed-ACK rules, replaced by an ACK "
               "per two segments; TSQ); and 'pre-profile', the transport the testbed scenarios ran before the profiles.",
               "ECMP/CONGA > 1: CONGA faster. Ratios are per seed (same arrivals for both schemes), then averaged; "
               "overall means count unfinished flows at their lower bound (fct_lb_ms). Timeouts and drops are per run."),
        full_seeds=5,
    ),
]
