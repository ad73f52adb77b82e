"""CONGA Fig. 14 (§5.4; ../shared/SCHEMES.md §10.7): Hadoop's TestDFSIO writing into HDFS with
3-way replication on the testbed (1 NameNode, 63 DataNodes), beside the enterprise workload,
on the baseline fabric and with one Leaf1-Spine1 link down; the job completion time of each
trial as a CDF, per scheme. The job is the ``hdfs`` workload pattern (docs/HDFS.md).

Everything the paper leaves open was fixed before the first run and is written in
docs/LAB.md ("conga-fig14"): the disk rate, the background load, the slots, the job's size,
new connections per block, the transport, the trials. The headline is relative: each scheme's
mean completion time with the failure over its mean without (the paper gives no disk
throughput, so absolute seconds are not comparable). ``conga-fig14-sensitivity`` repeats the
comparison with the disk rate halved and doubled and the background at 0, 20% and 60%.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

from .. import plots
from ..sweep import PointResult, PointSpec
from .common import COMPARABLE, NOT_COMPARABLE, Axis, Check, Claim, Ctx, Experiment, Reduction, grid_points, rows_of, scheme_axis, scheme_list, within

PAPER = "CONGA (SIGCOMM'14)"
SCENARIO = "conga/hdfs.toml"

#: The failure of Fig. 14(b) (Fig. 7(b)): one of the two Leaf1-Spine1 links down.
FAILURE = [{"link": "L1-S1#1", "kind": "down"}]
TOPOLOGIES = ("baseline", "failure")

#: Fixed before running (docs/LAB.md): 3 disks of 120 MB/s per server, 40% background.
DISK_RATE_GBPS = 2.88
BACKGROUND = 0.4

#: The job per mode: 63 DataNodes x 2 slots = 126 files written at once (one wave), 64 MiB
#: files in 16 MiB blocks, 4 blocks per file (8 GiB; docs/LAB.md, "Scaling the job"); full and
#: quick differ in their trials only; smoke is a toy. Background arrivals last `duration`,
#: which must outlast the slowest trial (the run ends with the job; a warning says when the
#: background stopped first, and the table flags it).
JOB = {
    "full": {"files": 126, "file_size": "64MiB", "block_size": "16MiB", "duration": "8s", "drain": "30s"},
    "quick": {"files": 126, "file_size": "64MiB", "block_size": "16MiB", "duration": "8s", "drain": "30s"},
    "smoke": {"files": 8, "file_size": "4MiB", "block_size": "2MiB", "duration": "200ms", "drain": "2s"},
}
TRIALS = {"full": 40, "quick": 2, "smoke": 1}
SCHEMES = ("ecmp", "conga")


#: The job entry of conga/hdfs.toml, for the runs without background (the workload list is
#: then this entry alone; the test suite checks it against the file).
JOB_ENTRY = {"pattern": "hdfs", "namenode": "H0", "files": 63, "file_size": "16MiB", "block_size": "16MiB",
             "replication": 3, "slots": 2, "disk_rate": "2.88Gbps", "persistent": False}


def _fixed(ctx: Ctx, disk_gbps: float = DISK_RATE_GBPS, background: float = BACKGROUND) -> List[Tuple[str, Any]]:
    j = JOB[ctx.mode]
    ov: List[Tuple[str, Any]] = [("duration", j["duration"]), ("drain", j["drain"])]
    # No background: the job alone.
    ov += [("workload[1].load", background)] if background > 0 else [("workload", [dict(JOB_ENTRY)])]
    ov += [("workload[0].files", j["files"]), ("workload[0].file_size", j["file_size"]),
           ("workload[0].block_size", j["block_size"]), ("workload[0].disk_rate", f"{disk_gbps:g}Gbps")]
    return ov


def _topology_axis() -> Axis:
    return ("topology", [("baseline", []), ("failure", [("failures", FAILURE)])])


def _trials(ctx: Ctx) -> Ctx:
    """The trials of the mode (the paper: 40 per topology), unless --seeds says otherwise."""
    n = ctx.seeds if ctx.seeds > 1 else TRIALS[ctx.mode]
    return Ctx(mode=ctx.mode, seeds=n, schemes=ctx.schemes, scenarios=ctx.scenarios)


def _grid(ctx: Ctx) -> List[PointSpec]:
    c = _trials(ctx)
    schemes = scheme_list(c, SCHEMES, ["ecmp", "conga"], ["mptcp"])
    axes = [scheme_axis(schemes), _topology_axis()]
    return grid_points(c, SCENARIO, axes, _fixed(c))


def _row(p: PointResult) -> Dict[str, Any]:
    s = p.summary
    h = s.get("hdfs") or {}
    jct = h.get("jct_s")
    warnings = " ".join(s.get("warnings", []))
    return {"scheme": p.labels["scheme"], "topology": p.labels["topology"], "trial": p.seed,
            "jct_s": float(jct) if jct is not None else math.nan,
            "finished": bool(h.get("finished", False)),
            "background_outlasted": "after duration" not in warnings,
            "mean_block_s": float(h.get("mean_block_s") or math.nan),
            "timeouts": float(s.get("timeouts", math.nan)), "drops": float(s.get("drops", math.nan)),
            "wall_s": float(s.get("wall_time_s", math.nan))}


def relative(t: pd.DataFrame, keys: Sequence[str] = ("scheme",)) -> pd.DataFrame:
    """Per ``keys``: mean and median JCT on each topology, failure over baseline, the trials'
    spread (max / median) on each."""
    rows = []
    for k, sub in t.groupby(list(keys), sort=False):
        kk = k if isinstance(k, tuple) else (k,)
        row: Dict[str, Any] = dict(zip(keys, kk))
        for topo in TOPOLOGIES:
            v = sub[sub["topology"] == topo]["jct_s"].astype(float).dropna()
            row[f"{topo}_trials"] = int(v.size)
            row[f"{topo}_mean_s"] = float(v.mean()) if v.size else math.nan
            row[f"{topo}_median_s"] = float(v.median()) if v.size else math.nan
            row[f"{topo}_spread"] = float(v.max() / v.median()) if v.size else math.nan
        b, f = row["baseline_mean_s"], row["failure_mean_s"]
        row["failure_over_baseline"] = f / b if b and np.isfinite(b) and np.isfinite(f) else math.nan
        bm, fm = row["baseline_median_s"], row["failure_median_s"]
        row["failure_over_baseline_median"] = fm / bm if bm and np.isfinite(bm) and np.isfinite(fm) else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
    rows = [_row(p) for p in points if p.ok]
    cols = ["scheme", "topology", "trial", "jct_s", "finished", "background_outlasted", "mean_block_s", "timeouts",
            "drops", "wall_s"]
    t = pd.DataFrame(rows, columns=cols)
    return Reduction(t, {"relative": relative(t)})


def _plot(red: Reduction, path: Path) -> None:
    t = red.table
    panels: Dict[str, Dict[str, Tuple[Any, Any]]] = {}
    for topo, title in (("baseline", "(a) baseline"), ("failure", "(b) Leaf1-Spine1 link down")):
        panels[title] = {s: plots.ecdf(sub["jct_s"].astype(float)) for s, sub in t[t["topology"] == topo].groupby("scheme", sort=False)}
    plots.cdfs({}, path, xlabel="job completion time (s)", title="CONGA Fig. 14: HDFS write job", panels=panels)


def _rel(red: Reduction, scheme: str, col: str = "failure_over_baseline") -> float:
    r = red.extra.get("relative", pd.DataFrame())
    sub = rows_of(r, scheme=scheme)
    return float(sub[col].iloc[0]) if len(sub) and col in sub else math.nan


def _mean(red: Reduction, scheme: str, topo: str) -> float:
    return _rel(red, scheme, f"{topo}_mean_s")


def _ours(red: Reduction) -> str:
    r = red.extra.get("relative", pd.DataFrame())
    if r.empty:
        return "-"
    parts = [f"{row['scheme']}: {row['baseline_mean_s']:.2f} s -> {row['failure_mean_s']:.2f} s "
             f"(failure/baseline {row['failure_over_baseline']:.2f}, {row['baseline_trials']}+{row['failure_trials']} trials)"
             for _, row in r.iterrows()]
    return "mean JCT baseline -> failure; " + "; ".join(parts)


def _check_ratio(scheme: str, lo: float, hi: float) -> Check:
    def check(red: Reduction) -> Optional[Tuple[str, bool]]:
        x = _rel(red, scheme)
        if not np.isfinite(x):
            return None
        return f"{scheme} failure/baseline {x:.2f}", within(x, lo, hi)

    return check


def _check_baseline_equal(red: Reduction) -> Optional[Tuple[str, bool]]:
    e, c = _mean(red, "ecmp", "baseline"), _mean(red, "conga", "baseline")
    if not (np.isfinite(e) and np.isfinite(c)):
        return None
    return f"CONGA/ECMP baseline {c / e:.2f}", within(c / e, 0.9, 1.1)


def _check_2x(red: Reduction) -> Optional[Tuple[str, bool]]:
    e, c = _mean(red, "ecmp", "failure"), _mean(red, "conga", "failure")
    if not (np.isfinite(e) and np.isfinite(c)):
        return None
    return f"ECMP/CONGA with the failure {e / c:.2f}", within(e / c, 1.5, 2.5)


def _check_mptcp_volatile(red: Reduction) -> Optional[Tuple[str, bool]]:
    m, e, c = (_rel(red, s, "failure_spread") for s in ("mptcp", "ecmp", "conga"))
    if not all(np.isfinite(x) for x in (m, e, c)):
        return None
    return f"max/median JCT with the failure: MPTCP {m:.2f}, ECMP {e:.2f}, CONGA {c:.2f}", bool(m > max(e, c))


CLAIMS = (
    Claim("baseline: 'ECMP and CONGA have nearly identical performance' (§5.4)", COMPARABLE,
          "CONGA's mean JCT over ECMP's on the baseline fabric in [0.9, 1.1]", check=_check_baseline_equal),
    Claim("with the link failure 'the job completion times for ECMP are nearly twice as large as without' (§5.4)",
          COMPARABLE, "ECMP's mean JCT with the failure over its baseline mean in [1.5, 2.5]",
          check=_check_ratio("ecmp", 1.5, 2.5)),
    Claim("'CONGA is robust ... the link failure has almost no impact on the job completion times with CONGA' (§5.4)",
          COMPARABLE, "CONGA's mean JCT with the failure over its baseline mean in [0.9, 1.15]",
          check=_check_ratio("conga", 0.9, 1.15)),
    Claim("'2x better job completion time' (abstract; CONGA against ECMP with the failure)", COMPARABLE,
          "ECMP's mean JCT over CONGA's with the failure in [1.5, 2.5]", check=_check_2x),
    Claim("'The performance with MPTCP is very volatile with the link failure' and has 'some outlier trials' in the "
          "baseline (§5.4)", COMPARABLE,
          "MPTCP's spread over trials with the failure (max / median JCT) above both ECMP's and CONGA's",
          needs=("mptcp",), check=_check_mptcp_volatile),
    Claim("absolute job completion times (Fig. 14's x axis: a 1 TB job)", NOT_COMPARABLE,
          "the job is scaled down (8 GiB) and the paper gives no disk throughput: only ratios compare"),
)

NOTES = (
    "Fixed before the first run (docs/LAB.md, conga-fig14): disk rate 2.88 Gbps per node (3 x 7200 RPM disks at "
    "120 MB/s), background 40% of the baseline 320 Gbps in wire bytes (the enterprise client-server workload, as "
    "Figs. 9 and 11), 2 map slots per DataNode, 126 files (one per slot: one wave), new connections "
    "for every block, linux-3.10, 40 trials per topology and scheme (quick: 2).",
    "The job: 126 files of 64 MiB in 16 MiB blocks (8 GiB; the paper: 1 TB in 64 MiB blocks). The failure/baseline ratio depends on rates, not on the "
    "job's size: each pipeline moves at the smaller of its disk share and its network share, and a smaller job keeps "
    "both (docs/LAB.md).",
    "Columns: jct_s (the job's completion time), finished, background_outlasted (the background ran the whole job), "
    "mean_block_s, timeouts and drops of the whole run; relative.csv: per scheme, mean/median JCT per topology, "
    "failure_over_baseline (the headline), the spread (max/median) per topology.",
)

# ----------------------------------------------------------------------------- sensitivity

#: One setting changed at a time from the main one (fixed before running, docs/LAB.md).
VARIANTS: Tuple[Tuple[str, float, float], ...] = (
    ("main", DISK_RATE_GBPS, BACKGROUND),
    ("disk x0.5", DISK_RATE_GBPS / 2, BACKGROUND),
    ("disk x2", DISK_RATE_GBPS * 2, BACKGROUND),
    ("background 0", DISK_RATE_GBPS, 0.0),
    ("background 20%", DISK_RATE_GBPS, 0.2),
    ("background 60%", DISK_RATE_GBPS, 0.6),
)
SENS_TRIALS = {"full": 5, "quick": 1, "smoke": 1}


def _sens_grid(ctx: Ctx) -> List[PointSpec]:
    n = ctx.seeds if ctx.seeds > 1 else SENS_TRIALS[ctx.mode]
    c = Ctx(mode=ctx.mode, seeds=n, schemes=ctx.schemes, scenarios=ctx.scenarios)
    variants = VARIANTS if ctx.mode != "smoke" else VARIANTS[:1] + VARIANTS[3:4]
    pts: List[PointSpec] = []
    for name, disk, bg in variants:
        axes = [("variant", [(name, [])]), scheme_axis(list(SCHEMES)), _topology_axis()]
        pts += grid_points(c, SCENARIO, axes, _fixed(c, disk, bg))
    return pts


def _sens_reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
    rows = [{"variant": p.labels["variant"], **_row(p)} for p in points if p.ok]
    cols = ["variant", "scheme", "topology", "trial", "jct_s", "finished", "background_outlasted", "mean_block_s",
            "timeouts", "drops", "wall_s"]
    t = pd.DataFrame(rows, columns=cols)
    return Reduction(t, {"relative": relative(t, ("variant", "scheme"))})


def _sens_plot(red: Reduction, path: Path) -> None:
    r = red.extra.get("relative", pd.DataFrame())
    if r.empty:
        plots.bars(pd.DataFrame({"variant": [], "failure_over_baseline": []}), path, x="variant",
                   y="failure_over_baseline", title="no points")
        return
    plots.bars(r, path, x="variant", y="failure_over_baseline", group="scheme", hline=1.0, rotate=True,
               ylabel="mean JCT: failure / baseline", title="CONGA Fig. 14 sensitivity")


def _sens_ours(red: Reduction) -> str:
    r = red.extra.get("relative", pd.DataFrame())
    if r.empty:
        return "-"
    parts = []
    for v, sub in r.groupby("variant", sort=False):
        parts.append(f"{v}: " + ", ".join(f"{row['scheme']} {row['failure_over_baseline']:.2f}" for _, row in sub.iterrows()))
    return "failure/baseline mean JCT; " + "; ".join(parts)


EXPERIMENTS = [
    Experiment(
        "conga-fig14", PAPER, "Fig. 14", "HDFS write job (TestDFSIO), baseline and one link down",
        "Baseline: ECMP ~ CONGA (MPTCP has outliers); with one Leaf1-Spine1 link down ECMP's job completion time nearly "
        "doubles while CONGA's barely moves; MPTCP is volatile.",
        scenarios=(SCENARIO,), requires=("scheme:ecmp", "scheme:conga", "workload:hdfs", "workload:client-server"),
        grid=_grid, tables=(), reduce=_reduce, plot=_plot, ours=_ours, claims=CLAIMS, notes=NOTES, full_seeds=40,
    ),
    Experiment(
        "conga-fig14-sensitivity", PAPER, "Fig. 14, sensitivity", "the HDFS job's failure/baseline against disk rate and background",
        "Not a paper figure: how the relative completion times of Fig. 14 move with the two settings the paper does not "
        "state (disk throughput, background level).",
        scenarios=(SCENARIO,), requires=("scheme:ecmp", "scheme:conga", "workload:hdfs", "workload:client-server"),
        grid=_sens_grid, tables=(), reduce=_sens_reduce, plot=_sens_plot, ours=_sens_ours,
        claims=(Claim("the disk rate and the background level of §5.4 are not stated", NOT_COMPARABLE,
                      "a sensitivity of our settings; nothing of the paper to compare"),),
        notes=("Variants (one setting changed at a time from conga-fig14's): disk rate x0.5 and x2; background 0 (the "
               "job alone), 20% and 60%. ECMP and CONGA, both topologies, 5 trials each (quick: 1).",),
        full_seeds=5,
    ),
]
