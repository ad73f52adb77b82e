"""The registry of published experiments: each a base scenario, a grid, a reduction to the
figure's table, a plot and a comparison with the paper's claim.

``fabriclb reproduce NAME --out DIR`` (or :func:`reproduce`) writes ``DIR/NAME/table.csv``,
``plot.png``, ``report.md`` and ``result.json``. Three sizes of every grid:

- ``full``: the paper's grid (loads, schemes, 5 seeds with the range as error bars);
- ``quick`` (``--quick``): a reduced grid that runs in about two minutes on two cores;
- ``smoke``: a tiny grid (seconds) that the test suite runs to exercise the whole pipeline.

An experiment is ``ready`` when every scheme, workload pattern and scenario file it needs is
present (asked of the compiled core, so statuses follow the code as schemes land), and
``waiting: <what it needs>`` otherwise. Experiment definitions live only here; docs/LAB.md
explains the choices (run lengths, drain rules, name mappings) and tolerances.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from . import plots
from .reduce import (
    duration_ms,
    fct_vs_load,
    flow_stats,
    measured_windows,
    quantile_from_cdf,
    queue_cdf,
    seed_range,
    throughput_into,
)
from .report import write_report, write_result_json
from .sweep import PointResult, PointSpec, run_points

__all__ = [
    "Experiment",
    "Ctx",
    "Reduction",
    "EXPERIMENTS",
    "MODES",
    "experiment_names",
    "experiment_status",
    "experiment_statuses",
    "reproduce",
]

MODES = ("full", "quick", "smoke")
PathLike = Union[str, Path]


# ----------------------------------------------------------------------------- types


@dataclass
class Ctx:
    """What a grid builder or reducer may read: the mode, the number of seeds, the schemes
    the core has, and where the scenarios are."""

    mode: str
    seeds: int
    schemes: Tuple[str, ...]
    scenarios: Path

    def seed_list(self) -> List[int]:
        return list(range(1, self.seeds + 1))

    def has(self, scheme: str) -> bool:
        return scheme in self.schemes


@dataclass
class Reduction:
    """A reduced experiment: the figure's table and extra tables (written as CSV next to it)."""

    table: pd.DataFrame
    extra: Dict[str, pd.DataFrame] = field(default_factory=dict)


@dataclass
class Experiment:
    name: str
    paper: str
    figure: str
    title: str
    claim: str
    #: Base scenarios, relative to the scenarios folder.
    scenarios: Tuple[str, ...] = ()
    #: What it needs: "scheme:NAME", "workload:PATTERN", "analysis:NAME", or a special
    #: requirement ("local-scheme", "mptcp").
    requires: Tuple[str, ...] = ()
    grid: Optional[Callable[[Ctx], List[PointSpec]]] = None
    tables: Tuple[str, ...] = ()
    reduce: Optional[Callable[[List[PointResult], Ctx], Reduction]] = None
    plot: Optional[Callable[[Reduction, Path], None]] = None
    compare: Optional[Callable[[Reduction], Tuple[str, str]]] = None
    notes: Tuple[str, ...] = ()
    #: For the analytic experiments: the name in fabriclb.analysis.experiments.
    delegate: Optional[str] = None
    #: Seeds per point of the full grid (the papers: 5 runs per point).
    full_seeds: int = 5


# ----------------------------------------------------------------------------- availability


@functools.lru_cache(maxsize=1)
def _core_lists() -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    import fabriclb

    return tuple(fabriclb.schemes()), tuple(fabriclb.workloads())


def _refresh() -> None:
    _core_lists.cache_clear()
    _scenario_problem.cache_clear()


LOCAL_SCHEME_NAMES = ("local", "conga-local", "local-aware", "locally-aware")


def local_scheme(schemes: Sequence[str]) -> Optional[str]:
    """The name of the local congestion-aware scheme (CONGA §2.4), if the core has one."""
    for n in LOCAL_SCHEME_NAMES:
        if n in schemes:
            return n
    return None


def _scenarios_dir() -> Path:
    import fabriclb

    return Path(fabriclb.scenarios_dir())


@functools.lru_cache(maxsize=None)
def _scenario_problem(rel: str) -> Optional[str]:
    p = _scenarios_dir() / rel
    if not p.is_file():
        return f"scenario {rel} (missing)"
    try:
        import fabriclb

        fabriclb.load_scenario(p)
    except Exception as e:  # noqa: BLE001
        msg = str(getattr(e, "message", e)).splitlines()[0]
        msg = msg.replace(str(p) + ": ", "")
        return f"scenario {rel} to validate ({msg[:90]})"
    return None


def _analysis_available(name: str) -> bool:
    try:
        from ..analysis import experiments as ax
    except Exception:  # noqa: BLE001
        return False
    return name in getattr(ax, "EXPERIMENTS", {})


def missing(exp: Experiment) -> List[str]:
    """What ``exp`` still needs (empty when ready)."""
    out: List[str] = []
    try:
        schemes, workloads = _core_lists()
    except Exception as e:  # noqa: BLE001 - no compiled core
        if exp.delegate and all(r.startswith("analysis:") for r in exp.requires):
            schemes, workloads = (), ()
        else:
            return [f"the compiled core ({str(e).splitlines()[0][:60]})"]
    for r in exp.requires:
        kind, _, what = r.partition(":")
        if kind == "scheme" and what not in schemes:
            out.append(f"scheme {what}")
        elif kind == "workload" and what not in workloads:
            out.append(f"workload {what}")
        elif kind == "analysis" and not _analysis_available(what):
            out.append(f"fabriclb.analysis experiment {what}")
        elif r == "local-scheme" and local_scheme(schemes) is None:
            out.append("a local congestion-aware scheme (" + " / ".join(LOCAL_SCHEME_NAMES[:2]) + ")")
        elif r == "mptcp" and "mptcp" not in schemes:
            out.append("scheme mptcp")
    if not out:  # validate scenario files only once the features exist (cheap, cached)
        for rel in exp.scenarios:
            prob = _scenario_problem(rel)
            if prob:
                out.append(prob)
    else:
        for rel in exp.scenarios:
            if not (_scenarios_dir() / rel).is_file():
                out.append(f"scenario {rel} (missing)")
    return out


def experiment_status(exp: Union[str, Experiment]) -> str:
    e = EXPERIMENTS[exp] if isinstance(exp, str) else exp
    m = missing(e)
    return "ready" if not m else "waiting: " + ", ".join(m)


def experiment_statuses() -> List[Tuple[str, str]]:
    """(name, status) of every experiment, for ``fabriclb list``."""
    return [(n, experiment_status(e)) for n, e in EXPERIMENTS.items()]


def experiment_names() -> List[str]:
    return list(EXPERIMENTS)


# ----------------------------------------------------------------------------- grid helpers

#: Run-length rules of the empirical-workload experiments (see docs/LAB.md): arrivals for
#: `duration`, statistics over flows that start after `warmup`, then up to `drain` without
#: arrivals so that started flows can finish; flows still open are counted as unfinished.
RUN_LENGTH = {
    "full": {"duration": "1s", "warmup": "100ms", "drain": "1s"},
    # Heavy tails need time: at 200 ms a data-mining run holds ~400 flows and the hotspot never
    # fills; 500 ms is the shortest that shows Fig. 11's effects and keeps --quick near minutes.
    "quick": {"duration": "500ms", "warmup": "50ms", "drain": "500ms"},
    "smoke": {"duration": "4ms", "warmup": "0ps", "drain": "4ms"},
}
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
#: Shorter rules for the large fabrics' FCT experiments (Fig. 15; Expeditus Fig. 2). The drain
#: outlasts a 200 ms minimum RTO and one backed-off retry: a flow whose last segments were
#: dropped waits for its RTO, and a shorter drain would leave exactly those flows out of the
#: finished-flow mean (Fig. 15(b) at 30% with a 15 ms drain: 66 of 325 flows unfinished under
#: ECMP, 56 under CONGA). The quick form's 50 ms of arrivals give ~1200 measured flows: the mean
#: is dominated by the ones that time out.
RUN_LENGTH_LARGE = {
    "full": {"duration": "200ms", "warmup": "20ms", "drain": "1s"},
    "quick": {"duration": "50ms", "warmup": "5ms", "drain": "1s"},
    "smoke": {"duration": "1ms", "warmup": "0ps", "drain": "1ms"},
}
#: Fig. 16 reads the ports' time-averaged queues, which cover warm-up to end of arrivals; it
#: needs no FCTs, so it stops when the arrivals do.
RUN_LENGTH_QUEUES = {
    "full": {"duration": "200ms", "warmup": "20ms", "drain": "0ps"},
    "quick": {"duration": "15ms", "warmup": "3ms", "drain": "0ps"},
    "smoke": RUN_LENGTH_LARGE["smoke"],
}
#: Long-lived-flow experiments (Figs. 2-3, EMAN 2, 4, 6): run, skip the start, average.
RUN_LENGTH_BULK = {
    "full": {"duration": "200ms", "warmup": "50ms"},
    "quick": {"duration": "60ms", "warmup": "20ms"},
    "smoke": {"duration": "4ms", "warmup": "1ms", "measure.window": "1ms"},
}

WORKLOAD_CDF = {
    "enterprise": "enterprise",
    "data-mining": "data-mining",
    "web-search": "web-search",
}


def _loads(ctx: Ctx, full: Sequence[float], quick: Sequence[float], smoke: Sequence[float]) -> List[float]:
    return list({"full": full, "quick": quick, "smoke": smoke}[ctx.mode])


def _scheme_list(ctx: Ctx, full: Sequence[str], smoke: Sequence[str], optional: Sequence[str] = ()) -> List[str]:
    base = list(smoke if ctx.mode == "smoke" else full)
    if ctx.mode != "smoke":
        base += [s for s in optional if ctx.has(s)]
    return base


def _points(
    ctx: Ctx,
    scenario: str,
    axes: Sequence[Tuple[str, Sequence[Tuple[Any, Sequence[Tuple[str, Any]]]]]],
    fixed: Sequence[Tuple[str, Any]] = (),
) -> List[PointSpec]:
    """The product of ``axes``: each axis is (label, [(value, overrides), ...]); seeds innermost."""
    path = str(ctx.scenarios / scenario)
    out: List[PointSpec] = []
    names = [a[0] for a in axes]
    for combo in itertools.product(*(a[1] for a in axes)):
        labels = tuple((n, v) for n, (v, _) in zip(names, combo))
        ov = tuple(fixed) + tuple(o for _, ovs in combo for o in ovs)
        for s in ctx.seed_list():
            out.append(PointSpec(scenario=path, overrides=ov, seed=s, labels=labels))
    return out


def _scheme_axis(schemes: Sequence[str]) -> Tuple[str, List[Tuple[Any, List[Tuple[str, Any]]]]]:
    return ("scheme", [(s, [("scheme", {"name": s})]) for s in schemes])


def _load_axis(loads: Sequence[float]) -> Tuple[str, List[Tuple[Any, List[Tuple[str, Any]]]]]:
    return ("load", [(float(x), [("workload[0].load", float(x))]) for x in loads])


def _cdf_axis(names: Sequence[str]) -> Tuple[str, List[Tuple[Any, List[Tuple[str, Any]]]]]:
    return ("workload", [(n, [("workload[0].cdf", WORKLOAD_CDF[n])]) for n in names])


def _run_length(rules: Mapping[str, Mapping[str, str]], ctx: Ctx) -> List[Tuple[str, Any]]:
    return list(rules[ctx.mode].items())


def _gain(a: float, b: float) -> float:
    """Relative improvement of a over baseline b: 1 - a/b."""
    if not (b and np.isfinite(a) and np.isfinite(b)):
        return math.nan
    return 1.0 - a / b


def _pct(x: float) -> str:
    return "n/a" if not np.isfinite(x) else f"{100 * x:.0f}%"


def _better(gain: float) -> str:
    """A relative gain (positive: lower FCT) in words: "12% better" or "5% worse"."""
    if not np.isfinite(gain):
        return "n/a"
    return f"{_pct(abs(gain))} {'better' if gain >= 0 else 'worse'}"


def _lookup(df: pd.DataFrame, col: str, **where: Any) -> float:
    sel = df
    for k, v in where.items():
        if k not in sel:
            return math.nan
        sel = sel[sel[k] == v] if not isinstance(v, float) else sel[np.isclose(sel[k].astype(float), v)]
    if sel.empty or col not in sel:
        return math.nan
    return float(sel[col].iloc[0])


# ----------------------------------------------------------------------------- CONGA Figs. 2, 3


FIG2_PAPER = {"ecmp": 90.0, "local": 80.0, "conga": 100.0}


def _throughput_reduce(label_cols: Sequence[str]) -> Callable[[List[PointResult], Ctx], Reduction]:
    def red(points: List[PointResult], ctx: Ctx) -> Reduction:
        rows = []
        for p in points:
            if not p.ok:
                continue
            lab = p.labels
            # Application throughput (payload delivered in order between warm-up and the end of
            # arrivals): what the papers' demand-based numbers mean, not wire bytes.
            rows.append({**{c: lab.get(c) for c in label_cols}, "seed": p.seed,
                         "throughput_gbps": float(p.summary["goodput_gbps"])})
        df = pd.DataFrame(rows)
        if df.empty:
            return Reduction(pd.DataFrame(columns=[*label_cols, "throughput_gbps"]))
        t = seed_range(df, list(label_cols), ["throughput_gbps"])
        cols = [*label_cols, "throughput_gbps", "throughput_gbps_min", "throughput_gbps_max", "seeds"]
        return Reduction(t[cols])

    return red


def _fig2_grid(ctx: Ctx) -> List[PointSpec]:
    schemes = ["ecmp", local_scheme(ctx.schemes) or "local", "conga"]
    if ctx.mode == "full":
        schemes += [s for s in ("conga-flow", "spray") if ctx.has(s)]
    return _points(ctx, "conga/fig2.toml", [_scheme_axis(schemes)], _run_length(RUN_LENGTH_BULK, ctx))


def _fig2_compare(red: Reduction) -> Tuple[str, str]:
    t = red.table
    got = {}
    for s in t["scheme"] if "scheme" in t else []:
        key = "local" if s in LOCAL_SCHEME_NAMES else s
        if key in FIG2_PAPER:
            got[key] = _lookup(t, "throughput_gbps", scheme=s)
    ours = ", ".join(f"{k} {v:.1f} Gbps" for k, v in got.items())
    if len(got) < 3 or not all(np.isfinite(v) for v in got.values()):
        return ours or "-", "n/a"
    ok = all(abs(got[k] - FIG2_PAPER[k]) <= 0.05 * FIG2_PAPER[k] for k in FIG2_PAPER)
    return ours, "match" if ok else "differs"


def _fig2_plot(red: Reduction, path: Path) -> None:
    plots.bars(red.table, path, x="scheme", y="throughput_gbps", ylabel="throughput L0→L1 (Gbps)",
               title="CONGA Fig. 2: asymmetric fabric, 100 Gbps demand", hline=100.0)


def _fig3_grid(ctx: Ctx) -> List[PointSpec]:
    schemes = ["ecmp", local_scheme(ctx.schemes) or "local", "conga"]
    pts: List[PointSpec] = []
    for case in ("a", "b"):
        sub = _points(ctx, f"conga/fig3{case}.toml", [_scheme_axis(schemes)], _run_length(RUN_LENGTH_BULK, ctx))
        pts += [PointSpec(p.scenario, p.overrides, p.seed, (("case", case),) + p.labels) for p in sub]
    return pts


def _fig3_compare(red: Reduction) -> Tuple[str, str]:
    t = red.table
    if t.empty:
        return "-", "n/a"
    parts, ok = [], True
    for case in ("a", "b"):
        sub = t[t["case"] == case]
        conga = _lookup(sub, "throughput_gbps", scheme="conga")
        others = sub[sub["scheme"] != "conga"]["throughput_gbps"].astype(float)
        best = float(others.max()) if len(others) else math.nan
        loc = sub[sub["scheme"].isin(LOCAL_SCHEME_NAMES)]["throughput_gbps"]
        ecmp = _lookup(sub, "throughput_gbps", scheme="ecmp")
        parts.append(f"({case}) CONGA {conga:.1f}, best other {best:.1f}, ECMP {ecmp:.1f}"
                     + (f", local {float(loc.iloc[0]):.1f}" if len(loc) else "") + " Gbps")
        ok = ok and np.isfinite(conga) and conga >= 0.95 * best
    return "; ".join(parts), "match" if ok else "differs"


def _fig3_plot(red: Reduction, path: Path) -> None:
    t = red.table.copy()
    t["case_scheme"] = "(" + t["case"].astype(str) + ") " + t["scheme"].astype(str)
    plots.bars(t, path, x="case", y="throughput_gbps", group="scheme", ylabel="throughput into L2 (Gbps)",
               title="CONGA Fig. 3: the best split depends on the traffic matrix")


# ----------------------------------------------------------------------------- CONGA testbed (Figs. 9-12)

TESTBED_LOADS_FULL = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
TESTBED_SCHEMES = ["ecmp", "conga-flow", "conga"]


def _testbed_grid(workloads: Sequence[str], scenario: str, loads_full: Sequence[float], loads_quick: Sequence[float],
                  run_length: Dict[str, Dict[str, str]] = RUN_LENGTH) -> Callable[[Ctx], List[PointSpec]]:
    def grid(ctx: Ctx) -> List[PointSpec]:
        loads = _loads(ctx, loads_full, loads_quick, [0.5])
        wls = list(workloads) if ctx.mode != "smoke" else list(workloads)[:1]
        axes = [_cdf_axis(wls), _scheme_axis(_scheme_list(ctx, TESTBED_SCHEMES, ["ecmp", "conga"], ["mptcp"])), _load_axis(loads)]
        return _points(ctx, scenario, axes, _run_length(run_length, ctx))

    return grid


def _fct_reduce(facets: Sequence[str] = ("workload",)) -> Callable[[List[PointResult], Ctx], Reduction]:
    def red(points: List[PointResult], ctx: Ctx) -> Reduction:
        return Reduction(fct_vs_load([p for p in points if p.ok], facets=facets))

    return red


def _fct_plot(title: str, facet: Optional[str] = "workload", panels: Optional[Sequence[Tuple[str, str]]] = None) -> Callable[[Reduction, Path], None]:
    panels = panels or [
        ("fct_norm_ideal", "mean FCT / ideal FCT"),
        ("small_norm_ecmp", "small flows (<100KB): FCT / ECMP"),
        ("large_norm_ecmp", "large flows (>10MB): FCT / ECMP"),
    ]

    def plot(red: Reduction, path: Path) -> None:
        plots.lines_vs_x(red.table, path, x="load", panels=panels, facet=facet, title=title)

    return plot


def _overall_norm(t: pd.DataFrame) -> str:
    """The overall FCT-vs-ECMP column the comparisons read: unfinished flows at their lower
    bound when the table has it (a scheme that leaves more flows unfinished must not look
    better for it), else finished flows only."""
    return "fct_lb_norm_ecmp" if "fct_lb_norm_ecmp" in t and t["fct_lb_norm_ecmp"].notna().any() else "fct_norm_ecmp"


def _fig9_compare(red: Reduction) -> Tuple[str, str]:
    t = red.table
    if t.empty:
        return "-", "n/a"
    c = t[(t["scheme"] == "conga") & (t["load"] >= 0.5 - 1e-9)]
    if c.empty:
        return "-", "n/a"
    overall = c[_overall_norm(t)].astype(float)
    large_gain = 1 - float(c["large_norm_ecmp"].astype(float).min())
    small_worse = float(c["small_norm_ecmp"].astype(float).max()) - 1
    ours = (f"CONGA/ECMP overall FCT {overall.min():.2f}-{overall.max():.2f} at 50-90% load; "
            f"large flows at best {_better(large_gain)}, small flows at worst {_better(-small_worse)}")
    ok = overall.between(0.85, 1.15).all() and large_gain >= 0.05
    return ours, "match" if ok else "differs"


def _best_gain(t: pd.DataFrame, scheme: str, col: Optional[str] = None, **where: Any) -> Tuple[float, float]:
    col = col or _overall_norm(t)
    sub = t[t["scheme"] == scheme]
    for k, v in where.items():
        sub = sub[sub[k] == v]
    if sub.empty or sub[col].isna().all():
        return math.nan, math.nan
    i = sub[col].astype(float).idxmin()
    return 1 - float(sub.loc[i, col]), float(sub.loc[i, "load"])


def _fig10_compare(red: Reduction) -> Tuple[str, str]:
    g, at = _best_gain(red.table, "conga")
    if not np.isfinite(g):
        return "-", "n/a"
    ours = f"CONGA's mean FCT at best {_better(g)} than ECMP's (at {at:.0%} load)"
    return ours, "match" if 0.175 <= g <= 0.7 else "differs"


def _fig11_grid(ctx: Ctx) -> List[PointSpec]:
    """Both workloads; data-mining with the long run length, and in the quick form at 50-70%
    for ECMP and CONGA only (~25 minutes on 2 cores)."""
    pts: List[PointSpec] = []
    for wl in (["enterprise", "data-mining"] if ctx.mode != "smoke" else ["enterprise"]):
        dm = wl == "data-mining"
        loads = _loads(ctx, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7], [0.5, 0.6, 0.7] if dm else [0.3, 0.6, 0.7], [0.5])
        full = ["ecmp", "conga"] if (dm and ctx.mode == "quick") else TESTBED_SCHEMES
        schemes = _scheme_list(ctx, full, ["ecmp", "conga"], ["mptcp"])
        axes = [_cdf_axis([wl]), _scheme_axis(schemes), _load_axis(loads)]
        pts += _points(ctx, "conga/testbed-failure.toml", axes, _run_length(RUN_LENGTH_FAILURE_DM if dm else RUN_LENGTH_FAILURE, ctx))
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


def _fig11_compare(red: Reduction) -> Tuple[str, str]:
    t = red.table
    if t.empty:
        return "-", "n/a"
    top = float(t["load"].max())
    parts, ok = [], True
    # Mean FCT with unfinished flows at their lower bound: a mean over finished flows alone
    # would reward the scheme that leaves more elephants unfinished.
    col = "fct_lb_ms" if "fct_lb_ms" in t and t["fct_lb_ms"].notna().any() else "fct_ms"
    for wl in dict.fromkeys(t["workload"]):
        e = _lookup(t, col, workload=wl, scheme="ecmp", load=top)
        c = _lookup(t, col, workload=wl, scheme="conga", load=top)
        m = _lookup(t, col, workload=wl, scheme="mptcp", load=top)
        part = f"{wl} at {top:.0%}: ECMP/CONGA FCT {e / c:.2f}x" + (f", MPTCP/CONGA {m / c:.2f}x" if np.isfinite(m) else "")
        low = t[(t["workload"] == wl) & (t["load"] <= 0.5 + 1e-9)]["load"]
        if len(low):
            lo = float(low.max())
            ge = e / _lookup(t, col, workload=wl, scheme="ecmp", load=lo)
            gc = c / _lookup(t, col, workload=wl, scheme="conga", load=lo)
            part += f" (from {lo:.0%} to {top:.0%}: ECMP x{ge:.2f}, CONGA x{gc:.2f})"
        parts.append(part)
        if wl == "data-mining":
            ok = ok and np.isfinite(e / c) and e / c >= 1.5 and (not np.isfinite(m) or m / c >= 1.4)
    q = red.extra.get("queue_cdf", pd.DataFrame())
    if not q.empty:
        # The paper quotes the p90; the median shows how often the hotspot is backlogged at all.
        for pct in (50, 90):
            qe, qc, qm = (_queue_quantile(q, s, pct / 100) for s in ("ecmp", "conga", "mptcp"))
            parts.append(f"p{pct} hotspot queue ECMP {qe / 1e3:.0f} KB, CONGA {qc / 1e3:.0f} KB" + (f", MPTCP {qm / 1e3:.0f} KB" if np.isfinite(qm) else ""))
    if top < 0.7 - 1e-9:
        return "; ".join(parts), "n/a"
    return "; ".join(parts), "match" if ok else "differs"


def _fig11_plot(red: Reduction, path: Path) -> None:
    _fct_plot("CONGA Fig. 11: one Leaf1-Spine1 link down",
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
        axes = [_cdf_axis([wl]), _scheme_axis(_scheme_list(ctx, TESTBED_SCHEMES, ["ecmp", "conga"], ["mptcp"])), _load_axis([0.6])]
        rules = RUN_LENGTH_BALANCE_DM if wl == "data-mining" else RUN_LENGTH_BALANCE
        pts += _points(ctx, "conga/testbed.toml", axes, _run_length(rules, ctx))
    return pts


def _fig12_reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
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


def _fig12_compare(red: Reduction) -> Tuple[str, str]:
    t = red.table
    if t.empty:
        return "-", "n/a"
    parts, ok = [], True
    for wl in dict.fromkeys(t["workload"]):
        e, c = _lookup(t, "p50", workload=wl, scheme="ecmp"), _lookup(t, "p50", workload=wl, scheme="conga")
        parts.append(f"{wl}: median imbalance ECMP {e:.2f}, CONGA {c:.2f}")
        ok = ok and np.isfinite(e) and np.isfinite(c) and c <= 0.75 * e
    return "; ".join(parts), "match" if ok else "differs"


def _fig12_plot(red: Reduction, path: Path) -> None:
    s = red.extra.get("imbalance_samples", pd.DataFrame())
    panels: Dict[str, Dict[str, Tuple[Any, Any]]] = {}
    for wl, g in s.groupby("workload", sort=False):
        panels[str(wl)] = {str(sc): plots.ecdf(gg["imbalance"].to_numpy(float)) for sc, gg in g.groupby("scheme", sort=False)}
    plots.cdfs({}, path, xlabel="leaf-0 uplink imbalance (MAX-MIN)/AVG, 10 ms windows", panels=panels or {"": {}},
               title="CONGA Fig. 12: uplink imbalance at 60% load")


# ----------------------------------------------------------------------------- CONGA Fig. 13 (incast)


def _fig13_grid(ctx: Ctx) -> List[PointSpec]:
    fan = {"full": [1, 4, 8, 16, 24, 32, 48, 63], "quick": [1, 16, 63], "smoke": [4]}[ctx.mode]
    rto = {"full": ["200ms", "1ms"], "quick": ["200ms", "1ms"], "smoke": ["1ms"]}[ctx.mode]
    mtu = {"full": [1500, 9000], "quick": [1500, 9000], "smoke": [1500]}[ctx.mode]
    reqs = {"full": 50, "quick": 10, "smoke": 2}[ctx.mode]
    axes = [
        ("transport", [("conga+tcp", [("scheme", {"name": "conga"})]), ("mptcp", [("scheme", {"name": "mptcp"})])]),
        ("min_rto", [(r, [("transport.min_rto", r)]) for r in rto]),
        ("mtu", [(m, [("transport.mtu", m)]) for m in mtu]),
        ("fan_in", [(n, [("workload[0].servers", n)]) for n in fan]),
    ]
    return _points(ctx, "conga/fig13.toml", axes, [("workload[0].requests", reqs)])


def _fig13_reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
    rows = []
    for p in points:
        if not p.ok:
            continue
        f = p.table("flows")
        f = f[f["finished"] == 1]
        rate = _rate_gbps(p.scenario.get("topology", {}).get("host_rate", "10Gbps"))
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
    return Reduction(seed_range(df, ["transport", "min_rto", "mtu", "fan_in"], ["throughput_pct"]))


def _rate_gbps(text: Any) -> float:
    import re

    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(bps|Kbps|Mbps|Gbps|Tbps)\s*", str(text))
    if not m:
        return 10.0
    return float(m.group(1)) * {"bps": 1e-9, "Kbps": 1e-6, "Mbps": 1e-3, "Gbps": 1.0, "Tbps": 1e3}[m.group(2)]


def _fig13_compare(red: Reduction) -> Tuple[str, str]:
    t = red.table
    if t.empty:
        return "-", "n/a"
    top = t["fan_in"].max()
    parts, ratios = [], []
    for (rto, mtu), g in t[t["fan_in"] == top].groupby(["min_rto", "mtu"], sort=False):
        c = _lookup(g, "throughput_pct", transport="conga+tcp")
        m = _lookup(g, "throughput_pct", transport="mptcp")
        parts.append(f"minRTO {rto} MTU {mtu}: CONGA+TCP {c:.0f}%, MPTCP {m:.0f}%")
        if np.isfinite(c) and np.isfinite(m) and m > 0:
            ratios.append(c / m)
    status = "n/a" if not ratios else ("match" if max(ratios) >= 1.5 else "differs")
    return f"fan-in {top}: " + "; ".join(parts), status


def _fig13_plot(red: Reduction, path: Path) -> None:
    t = red.table.copy()
    t["setting"] = "minRTO " + t["min_rto"].astype(str) + ", MTU " + t["mtu"].astype(str)
    plots.lines_vs_x(t.rename(columns={"transport": "scheme"}), path, x="fan_in", panels=[("throughput_pct", "throughput (% of 10 Gbps)")],
                     facet="setting", xlabel="fan-in N", xpercent=False, title="CONGA Fig. 13: incast")


# ----------------------------------------------------------------------------- CONGA Figs. 15, 16


def _fig15_grid(ctx: Ctx) -> List[PointSpec]:
    loads = _loads(ctx, TESTBED_LOADS_FULL, [0.3, 0.6], [0.3])
    servers = [("384x10G", []), ("96x40G", [("topology.hosts_per_leaf", 12), ("topology.host_rate", "40Gbps")])]
    if ctx.mode == "smoke":
        servers = servers[1:]
    axes = [("servers", servers), _scheme_axis(["ecmp", "conga"]), _load_axis(loads)]
    return _points(ctx, "conga/fig15.toml", axes, _run_length(RUN_LENGTH_LARGE, ctx))


def _fig15_compare(red: Reduction) -> Tuple[str, str]:
    t = red.table
    if t.empty:
        return "-", "n/a"
    sub = t[t["scheme"] == "conga"]
    load = 0.3 if np.isclose(sub["load"].astype(float), 0.3).any() else float(sub["load"].min())
    col = _overall_norm(t)
    g10 = 1 - _lookup(sub, col, servers="384x10G", load=load)
    g40 = 1 - _lookup(sub, col, servers="96x40G", load=load)
    ours = f"CONGA vs ECMP at {load:.0%} load: {_better(g10)} with 10G servers, {_better(g40)} with 40G servers"
    if not (np.isfinite(g10) and np.isfinite(g40)):
        return ours, "n/a"
    return ours, "match" if (g40 > g10 and g40 >= 0.15) else "differs"


def _fig16_grid(ctx: Ctx) -> List[PointSpec]:
    axes = [_scheme_axis(["ecmp", "conga"]), _load_axis([0.6])]
    return _points(ctx, "conga/fig16.toml", axes, _run_length(RUN_LENGTH_QUEUES, ctx))


DOWNLINK_NEXT_TO_FAILURE = "spine downlink next to a failure"


def _fig16_reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
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


def _fig16_compare(red: Reduction) -> Tuple[str, str]:
    s = red.extra.get("by_role", pd.DataFrame())
    if s.empty:
        return "-", "n/a"
    parts, ratios = [], {}
    plural = {"leaf uplink": "leaf uplinks", "spine downlink": "spine downlinks",
              DOWNLINK_NEXT_TO_FAILURE: "spine downlinks next to a failed link"}
    for role, label in plural.items():
        e = _lookup(s, "mean_queue_bytes", scheme="ecmp", role=role)
        c = _lookup(s, "mean_queue_bytes", scheme="conga", role=role)
        if not (np.isfinite(e) and np.isfinite(c)):
            continue
        ratios[role] = e / c if c > 0 else math.inf
        parts.append(f"{label}: ECMP {e / 1e3:.1f} KB vs CONGA {c / 1e3:.1f} KB mean queue ({ratios[role]:.1f}x)")
    if DOWNLINK_NEXT_TO_FAILURE not in ratios:
        return "; ".join(parts) or "-", "n/a"
    return "; ".join(parts), "match" if ratios[DOWNLINK_NEXT_TO_FAILURE] >= 4 else "differs"


def _fig16_plot(red: Reduction, path: Path) -> None:
    t = red.table.copy()
    t["kb"] = t["mean_queue_bytes"] / 1e3
    plots.bars(t, path, x="link", y="kb", group="scheme", ylabel="mean queue (KB)", rotate=True,
               title="CONGA Fig. 16: 9 failed links, web search 60%")


# ----------------------------------------------------------------------------- Expeditus


def _exp1_grid(ctx: Ctx) -> List[PointSpec]:
    loads = _loads(ctx, TESTBED_LOADS_FULL, [0.3, 0.6, 0.8], [0.5])
    schemes = ["ecmp", "conga-flow", "expeditus"] if ctx.mode != "smoke" else ["ecmp", "expeditus"]
    return _points(ctx, "expeditus/fig1.toml", [_scheme_axis(schemes), _load_axis(loads)], _run_length(RUN_LENGTH, ctx))


def _exp1_compare(red: Reduction) -> Tuple[str, str]:
    g, at = _best_gain(red.table, "expeditus")
    gc, _ = _best_gain(red.table, "conga-flow")
    if not np.isfinite(g):
        return "-", "n/a"
    ours = f"Expeditus up to {_pct(g)} lower mean FCT than ECMP (at {at:.0%}); CONGA-Flow up to {_pct(gc)}"
    return ours, "match" if 0.125 <= g <= 0.6 else "differs"


def _exp2_grid(ctx: Ctx) -> List[PointSpec]:
    loads = _loads(ctx, TESTBED_LOADS_FULL, [0.3, 0.6], [0.3])
    return _points(ctx, "expeditus/fig2.toml", [_scheme_axis(["ecmp", "expeditus"]), _load_axis(loads)], _run_length(RUN_LENGTH_LARGE, ctx))


def _exp2_compare(red: Reduction) -> Tuple[str, str]:
    t = red.table
    sub = t[t["scheme"] == "expeditus"] if not t.empty else t
    if sub.empty:
        return "-", "n/a"
    mice = 1 - sub["small_p99_norm_ecmp"].astype(float)
    big = 1 - sub["large_norm_ecmp"].astype(float)
    ours = f"mice p99 FCT {_pct(mice.min())}-{_pct(mice.max())} lower than ECMP; elephants up to {_pct(big.max())} faster"
    ok = mice.max() >= 0.175 and big.max() >= 0.125
    return ours, "match" if ok else "differs"


# ----------------------------------------------------------------------------- EMAN

EMAN_SCHEMES = ["clove", "hermes", "eman"]
EMAN4_PAPER = {"clove": 32.5, "hermes": 39.5, "eman": 56.7}


def _eman_bulk_grid(scenario: str, schemes: Sequence[str] = EMAN_SCHEMES) -> Callable[[Ctx], List[PointSpec]]:
    def grid(ctx: Ctx) -> List[PointSpec]:
        return _points(ctx, scenario, [_scheme_axis(schemes)], _run_length(RUN_LENGTH_BULK, ctx))

    return grid


def _eman2_compare(red: Reduction) -> Tuple[str, str]:
    t = red.table
    e, c, h = (_lookup(t, "throughput_gbps", scheme=s) for s in ("eman", "clove", "hermes"))
    ours = f"EMAN {e:.2f}, Clove {c:.2f}, Hermes {h:.2f} Gbps (of 9)"
    if not all(np.isfinite(v) for v in (e, c, h)):
        return ours, "n/a"
    return ours, "match" if (e >= 0.85 * 9 and e >= 1.15 * max(c, h)) else "differs"


def _eman4_compare(red: Reduction) -> Tuple[str, str]:
    t = red.table
    got = {s: _lookup(t, "throughput_gbps", scheme=s) for s in EMAN4_PAPER}
    ours = ", ".join(f"{k} {v:.1f}" for k, v in got.items()) + " Gbps (of 60)"
    if not all(np.isfinite(v) for v in got.values()):
        return ours, "n/a"
    ok = all(abs(got[k] - EMAN4_PAPER[k]) <= 0.2 * EMAN4_PAPER[k] for k in got)
    return ours, "match" if ok else "differs"


def _eman_bars(title: str, cap: float) -> Callable[[Reduction, Path], None]:
    def plot(red: Reduction, path: Path) -> None:
        plots.bars(red.table, path, x="scheme", y="throughput_gbps", ylabel="throughput (Gbps)", title=title, hline=cap)

    return plot


def _eman5_grid(ctx: Ctx) -> List[PointSpec]:
    fixed = [("measure.window", "1ms")] if ctx.mode != "smoke" else [("measure.window", "500us")]
    return _points(ctx, "eman/fig5.toml", [_scheme_axis(["eman"] if ctx.mode != "full" else EMAN_SCHEMES)], fixed)


def _eman5_reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
    from .reduce import _link_to, bulk_destinations

    rows = []
    for p in points:
        if not p.ok or p.seed != min(q.seed for q in points):
            continue
        w = p.table("windows")
        dsts = bulk_destinations(p.scenario)
        hd = w[w["kind"] == "host-down"]
        for i, d in enumerate(dsts):
            sub = hd[hd["name"].map(lambda n: _link_to(str(n)) == d)]
            for _, r in sub.iterrows():
                rows.append({"scheme": p.labels["scheme"], "flow": f"F{i + 1}", "t_ms": float(r["t_start_ms"]), "throughput_gbps": float(r["throughput_gbps"])})
    return Reduction(pd.DataFrame(rows, columns=["scheme", "flow", "t_ms", "throughput_gbps"]))


def _eman5_compare(red: Reduction) -> Tuple[str, str]:
    t = red.table
    t = t[t["scheme"] == "eman"] if not t.empty else t
    if t.empty:
        return "-", "n/a"
    f1 = t[t["flow"] == "F1"].set_index("t_ms")["throughput_gbps"]
    f2 = t[t["flow"] == "F2"].set_index("t_ms")["throughput_gbps"].reindex(f1.index).fillna(0.0)
    both = f2 > 1.0
    if not both.any():
        return f"F1 alone {f1.max():.1f} Gbps; F2 never ran", "n/a"
    first, last = both.idxmax(), both[both].index.max()
    alone = f1[f1.index < first]
    alone = alone.iloc[len(alone) // 2:]
    shared = f1[both]
    shared = shared.iloc[len(shared) // 2:]
    shared2 = f2[both].iloc[len(f2[both]) // 2:]
    ours = f"F1 alone {alone.mean():.1f} Gbps; sharing F1 {shared.mean():.1f}, F2 {shared2.mean():.1f} Gbps"
    ok = abs(alone.mean() - 50) <= 7.5 and abs(shared.mean() - 30) <= 4.5 and abs(shared2.mean() - 30) <= 4.5
    return ours, "match" if ok else "differs"


def _eman5_plot(red: Reduction, path: Path) -> None:
    plots.timeseries(red.table, path, t="t_ms", y="throughput_gbps", group="flow", facet="scheme",
                     ylabel="throughput (Gbps)", title="EMAN Fig. 5: F2 joins and leaves")


#: The six links of EMAN Fig. 1(b), degraded in every combination (Fig. 6).
EMAN6_LINKS = ("L0-S0", "L0-S1", "S0-L1", "S1-L1", "L0-S2", "S2-L1")


def _eman6_grid(ctx: Ctx) -> List[PointSpec]:
    combos = [c for k in range(1, len(EMAN6_LINKS) + 1) for c in itertools.combinations(EMAN6_LINKS, k)]
    if ctx.mode == "quick":
        combos = combos[::4]
    elif ctx.mode == "smoke":
        combos = combos[:2]
    cases = [("+".join(c), [("failures", [{"link": l, "kind": "degrade", "rate": "10Gbps"} for l in c])]) for c in combos]
    schemes = EMAN_SCHEMES if ctx.mode == "full" else ["eman"]
    return _points(ctx, "eman/fig6.toml", [_scheme_axis(schemes), ("degraded", cases)], _run_length(RUN_LENGTH_BULK, ctx))


def max_flow_gbps(scenario: Mapping[str, Any]) -> float:
    """Max-flow (Gbps) from the bulk workloads' sources to their destinations in an explicit
    topology, with degraded and down links applied: the capacity the utilisation of EMAN
    Fig. 6 is relative to."""
    topo = scenario.get("topology", {})
    if topo.get("kind") != "explicit":
        return math.nan
    cap: Dict[Tuple[str, str], float] = {}

    def add(a: str, b: str, c: float) -> None:
        cap[(a, b)] = cap.get((a, b), 0.0) + c
        cap.setdefault((b, a), 0.0)

    degraded: Dict[frozenset, Optional[float]] = {}
    for f in scenario.get("failures", []):
        ends = str(f.get("link", "")).split("#")[0].replace("->", "-").split("-")
        if len(ends) == 2:
            degraded[frozenset(ends)] = _rate_gbps(f.get("rate")) if f.get("kind") == "degrade" else 0.0
    for l in topo.get("links", []):
        r = _rate_gbps(l.get("rate")) * int(l.get("count", 1))
        r2 = degraded.get(frozenset((l["a"], l["b"])))
        if r2 is not None:
            r = r2 * int(l.get("count", 1)) if r2 > 0 else 0.0
        add(l["a"], l["b"], r)
        add(l["b"], l["a"], r)
    hosts: List[str] = []
    for h in topo.get("hosts", []):
        n = int(h.get("count", 1))
        names = [h["name"]] if n == 1 else [f"{h['name']}{j}" for j in range(n)]
        for nm in names:
            hosts.append(nm)
            add(nm, h["attach"], _rate_gbps(h.get("rate")))
            add(h["attach"], nm, _rate_gbps(h.get("rate")))
    srcs, dsts = set(), set()
    for w in scenario.get("workload", []):
        srcs.update(str(s) for s in w.get("src", []) or [])
        dsts.update(str(d) for d in w.get("dst", []) or [])
    for s in srcs:
        add("__src", s, math.inf)
    for d in dsts:
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


def _eman6_reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
    rows = []
    for p in points:
        if not p.ok:
            continue
        thr = throughput_into(p.table("windows"), p.scenario)
        capg = max_flow_gbps(p.scenario)
        rows.append({"scheme": p.labels["scheme"], "degraded": p.labels["degraded"], "seed": p.seed,
                     "throughput_gbps": thr, "capacity_gbps": capg, "utilization": thr / capg if capg else math.nan})
    df = pd.DataFrame(rows, columns=["scheme", "degraded", "seed", "throughput_gbps", "capacity_gbps", "utilization"])
    if df.empty:
        return Reduction(df)
    return Reduction(seed_range(df, ["scheme", "degraded"], ["throughput_gbps", "capacity_gbps", "utilization"]))


def _eman6_compare(red: Reduction) -> Tuple[str, str]:
    t = red.table
    u = t[t["scheme"] == "eman"]["utilization"].astype(float) if not t.empty else pd.Series(dtype=float)
    if u.empty:
        return "-", "n/a"
    frac85 = float((u > 0.85).mean())
    ours = f"EMAN > 85% utilisation in {frac85:.0%} of {len(u)} cases; worst {u.min():.0%}"
    return ours, "match" if (frac85 >= 0.7 and u.min() >= 0.7) else "differs"


def _eman6_plot(red: Reduction, path: Path) -> None:
    t = red.table
    curves = {str(s): plots.ecdf(g["utilization"].to_numpy(float)) for s, g in t.groupby("scheme", sort=False)} if not t.empty else {}
    plots.cdfs(curves, path, xlabel="network utilisation", title="EMAN Fig. 6: every combination of degraded links")


def _eman7_grid(ctx: Ctx) -> List[PointSpec]:
    loads = _loads(ctx, TESTBED_LOADS_FULL, [0.3, 0.6, 0.8], [0.5])
    schemes = ["ecmp", *EMAN_SCHEMES] if ctx.mode != "smoke" else ["ecmp", "eman"]
    return _points(ctx, "eman/fig7.toml", [_scheme_axis(schemes), _load_axis(loads)], _run_length(RUN_LENGTH, ctx))


def _eman7_compare(red: Reduction) -> Tuple[str, str]:
    g, at = _best_gain(red.table, "eman")
    if not np.isfinite(g):
        return "-", "n/a"
    t = red.table
    vs = []
    for other in ("clove", "hermes"):
        e = t[t["scheme"] == "eman"].set_index("load")["fct_ms"]
        o = t[t["scheme"] == other].set_index("load")["fct_ms"]
        if len(o):
            vs.append(f"vs {other} {_pct((1 - e / o).min())} to {_pct((1 - e / o).max())}")
    ours = f"EMAN up to {_pct(g)} lower mean FCT than ECMP (at {at:.0%})" + ("; " + ", ".join(vs) if vs else "")
    return ours, "match" if g >= 0.085 else "differs"


# ----------------------------------------------------------------------------- the registry

_TESTBED_NOTES = (
    "Topology names: paper's Leaf 0/1, Spine 0/1 are our L0/L1, S0/S1 (same numbering); hosts H0-H31 under L0, H32-H63 under L1.",
    "Load is a fraction of the 160 Gbps leaf-uplink capacity, counted in bytes on the wire (all traffic crosses the spine: clients under L0 use servers under L1 and vice versa).",
    "Run length and drain rules: docs/LAB.md. Means are over finished flows that started after the warm-up; the `unfinished` column counts the others.",
    "MPTCP joins the grid automatically once the core has an `mptcp` scheme.",
)

_EXPERIMENTS: List[Experiment] = [
    Experiment(
        "conga-fig2", "CONGA (SIGCOMM'14)", "Fig. 2", "asymmetry needs non-local information",
        "L0 sends 100 Gbps of TCP to L1 over a fabric whose (S1, L1) link has half capacity: ECMP gets 90 Gbps, "
        "local congestion-aware 80 Gbps, CONGA the full 100 Gbps.",
        scenarios=("conga/fig2.toml",), requires=("scheme:ecmp", "scheme:conga", "local-scheme", "workload:bulk"),
        grid=_fig2_grid, tables=("windows",), reduce=_throughput_reduce(["scheme"]), plot=_fig2_plot, compare=_fig2_compare,
        notes=("Throughput = mean over 10 ms windows after the warm-up of the rate delivered to the destination hosts.",
               "Goodput counts payload: with the overlay every scheme carries here, a 40 G link delivers 36.8 G of it.",
               "match = each scheme within 5% of the paper's number.",
               "Why `local` differs: the paper's 80 is a fluid equal split. Our flows are paced at 1 Gbps and never pause "
               "for T_fl = 500 µs, so `local` decides once per flow and cannot shift traffic as TCP slows the S1 path "
               "(with 128 KB writes it shifts too much: 64-67 Gbps). docs/CONGA.md, 'Fig. 2'. The fluid model "
               "(`fabriclb reproduce conga-fluid`, docs/ANALYSIS.md §2) gives the paper's 90 / 80 / 100."),
    ),
    Experiment(
        "conga-fig3", "CONGA (SIGCOMM'14)", "Fig. 3", "the optimal split depends on the traffic matrix",
        "The right L1→L2 split depends on the L0→L2 traffic, so no static weights serve both (a) and (b); a local "
        "scheme can be worse than ECMP in (b); CONGA finds the best split in both.",
        scenarios=("conga/fig3a.toml", "conga/fig3b.toml"), requires=("scheme:ecmp", "scheme:conga", "local-scheme", "workload:bulk"),
        grid=_fig3_grid, tables=("windows",), reduce=_throughput_reduce(["case", "scheme"]), plot=_fig3_plot, compare=_fig3_compare,
        notes=("Throughput = total rate into L2's hosts. match = CONGA within 5% of the best scheme in both cases.",),
    ),
    Experiment(
        "conga-fig9", "CONGA (SIGCOMM'14)", "Fig. 9", "enterprise workload, baseline testbed",
        "Enterprise workload: overall mean FCT similar for all schemes (MPTCP up to ~25% worse); CONGA ~12-19% worse "
        "than ECMP for small flows at 50-80% load but up to ~20% better for large flows.",
        scenarios=("conga/testbed.toml",), requires=("scheme:ecmp", "scheme:conga", "scheme:conga-flow", "workload:client-server"),
        grid=_testbed_grid(["enterprise"], "conga/testbed.toml", TESTBED_LOADS_FULL, [0.3, 0.6, 0.9]), tables=("flows",),
        reduce=_fct_reduce(), plot=_fct_plot("CONGA Fig. 9: enterprise workload"), compare=_fig9_compare,
        notes=_TESTBED_NOTES + ("match = CONGA/ECMP overall FCT within ±15% at 50-90% load and CONGA's large flows >= 5% faster somewhere.",
                                "Why ours differs: enterprise's mean is decided by 200 ms retransmission timeouts, which CONGA "
                                "meets less often, so it comes out ahead overall and on small flows. docs/CONGA.md, 'Figs. 9 and 10'."),
    ),
    Experiment(
        "conga-fig10", "CONGA (SIGCOMM'14)", "Fig. 10", "data-mining workload, baseline testbed",
        "Data-mining workload: ECMP is noticeably worse at high load; CONGA (and MPTCP) reach up to ~35% lower overall "
        "mean FCT than ECMP.",
        scenarios=("conga/testbed.toml",), requires=("scheme:ecmp", "scheme:conga", "scheme:conga-flow", "workload:client-server"),
        grid=_testbed_grid(["data-mining"], "conga/testbed.toml", TESTBED_LOADS_FULL, [0.3, 0.6, 0.9], RUN_LENGTH_DM), tables=("flows",),
        reduce=_fct_reduce(), plot=_fct_plot("CONGA Fig. 10: data-mining workload"), compare=_fig10_compare,
        notes=_TESTBED_NOTES + ("match = CONGA's best gain over ECMP between 17.5% and 70% (half to twice the paper's 35%).",
                                "Why ours differs: the quick form's 500 ms is decided by a few elephants. Over the full run length "
                                "CONGA is 5-8% better at 70-90%, not 35%: the spines' ECMP between parallel links, drops at the "
                                "server ports and elephants that rarely pause take the rest. docs/CONGA.md, 'Figs. 9 and 10'."),
    ),
    Experiment(
        "conga-fig11", "CONGA (SIGCOMM'14)", "Fig. 11", "link failure: FCT and hotspot queue",
        "With one Leaf1-Spine1 link down, ECMP degrades sharply above 50% load (the single S1→L1 link carries twice its "
        "share); CONGA is ~30% (enterprise) and ~2x (data-mining) better than MPTCP at 70% and keeps a 4x smaller 90th "
        "percentile queue at the S1→L1 hotspot.",
        scenarios=("conga/testbed-failure.toml",), requires=("scheme:ecmp", "scheme:conga", "scheme:conga-flow", "workload:client-server"),
        grid=_fig11_grid,
        tables=("flows", "queues"), reduce=_fig11_reduce, plot=_fig11_plot, compare=_fig11_compare,
        notes=_TESTBED_NOTES + (
            "The failed link is L1-S1#1; the hotspot port is the surviving S1->L1#0 (recorded with measure.queue_ports).",
            "Without MPTCP in the core the comparison is CONGA vs ECMP: match = ECMP/CONGA mean FCT >= 1.5 for data-mining at 70% (and MPTCP/CONGA >= 1.4 when MPTCP runs), "
            "on the mean with unfinished flows at their lower bound (fct_lb_ms).",
            "Data-mining runs 6 s of arrivals after 1 s of warm-up and a 10 s drain, so that every flow finishes: the instability past 50% load shows as growth with run length.",
            "queue_cdf.csv / queue_cdf.png: the Fig. 11(c) CDF (data-mining, 60% load).",
        ),
    ),
    Experiment(
        "conga-fig12", "CONGA (SIGCOMM'14)", "Fig. 12", "leaf-uplink throughput imbalance at 60% load",
        "At 60% load the (MAX-MIN)/AVG imbalance of Leaf 0's four uplinks over 10 ms windows is much lower with CONGA "
        "than with ECMP, and at least as low as MPTCP's.",
        scenarios=("conga/testbed.toml",), requires=("scheme:ecmp", "scheme:conga", "scheme:conga-flow", "workload:client-server"),
        grid=_fig12_grid, tables=("windows",), reduce=_fig12_reduce, plot=_fig12_plot, compare=_fig12_compare,
        notes=_TESTBED_NOTES + ("Imbalance: windows rows of kind leaf-uplink-imbalance for L0, inside [warm-up, duration). match = CONGA's median <= 0.75 x ECMP's for each workload.",
                                "The quick form's 100 windows do not separate CONGA from CONGA-Flow with data-mining; the full "
                                "form (1000 windows) does, and matches. docs/CONGA.md, 'Fig. 12'."),
    ),
    Experiment(
        "conga-fig13", "CONGA (SIGCOMM'14)", "Fig. 13", "incast: MPTCP vs TCP",
        "In incast (a 10 MB file striped over N servers), MPTCP's throughput falls below 30% (MTU 1500) and to ~5% "
        "(MTU 9000) at large fan-in with minRTO 200 ms; CONGA+TCP gets 2-8x more.",
        scenarios=("conga/fig13.toml",), requires=("scheme:conga", "mptcp", "workload:incast"),
        grid=_fig13_grid, tables=("flows",), reduce=_fig13_reduce, plot=_fig13_plot, compare=_fig13_compare,
        notes=("Throughput = total bytes of the requests / total request time, in % of the client's 10 Gbps link.",
               "match = CONGA+TCP at least 1.5x MPTCP at the largest fan-in in some setting."),
    ),
    Experiment(
        "conga-fig15", "CONGA (SIGCOMM'14)", "Fig. 15", "large fabrics: 10G vs 40G servers",
        "Web search on 3:1 oversubscribed fabrics with 40G links: CONGA's gain over ECMP at 30% load is ~5-10% with "
        "384 x 10G servers but ~30% with 96 x 40G servers.",
        scenarios=("conga/fig15.toml",), requires=("scheme:ecmp", "scheme:conga", "workload:poisson"),
        grid=_fig15_grid, tables=("flows",), reduce=_fct_reduce(("servers",)),
        plot=_fct_plot("CONGA Fig. 15: web search, 3:1", facet="servers", panels=[("fct_norm_ecmp", "mean FCT / ECMP"), ("fct_norm_ideal", "mean FCT / ideal")]),
        compare=_fig15_compare,
        notes=("(a) 8 leaves x 48 hosts x 10G, (b) 8 leaves x 12 hosts x 40G; both 4 spines x 1 x 40G per leaf (160G up: 3:1).",
               "match = 40G-server gain > 10G-server gain and >= 15% at 30% load."),
    ),
    Experiment(
        "conga-fig16", "CONGA (SIGCOMM'14)", "Fig. 16", "9 random link failures: queue per fabric port",
        "6 leaves x 4 spines, 3 x 40G per pair, 9 random failed links, web search at 60%: queues at the spine ports next "
        "to failed links are ~10x larger with ECMP than with CONGA.",
        scenarios=("conga/fig16.toml",), requires=("scheme:ecmp", "scheme:conga", "workload:poisson"),
        grid=_fig16_grid, tables=("ports",), reduce=_fig16_reduce, plot=_fig16_plot, compare=_fig16_compare,
        notes=("The 9 failed links are drawn from the scenario seed (`random:9`), so both schemes see the same failures per seed; table.csv shows the first seed.",
               "Spine downlinks next to a failure: the surviving links of a (spine, leaf) pair that lost one (the paper's links 10 and 12 around the failed 11); failed links are left out (summary `failure_links`).",
               "match = ECMP/CONGA mean queue at the spine downlinks next to a failure >= 4 (within 2.5x of the paper's ~10x).",
               "Why ours differs: ECMP runs the surviving links next to a failure at 0.83 of their capacity on average, not at "
               "saturation, and 100-packet ports cap its queue at 150 KB. docs/CONGA.md, 'Fig. 16'."),
    ),
    Experiment(
        "conga-fig17", "CONGA (SIGCOMM'14)", "Fig. 17 / Theorem 1", "Price of Anarchy = 2",
        "The Price of Anarchy of the bottleneck routing game is 2: some Nash flows have twice the optimal maximum link utilisation.",
        requires=("analysis:conga-fig17",), delegate="conga-fig17",
    ),
    Experiment(
        "conga-thm2", "CONGA (SIGCOMM'14)", "Theorem 2", "traffic imbalance bound vs Monte Carlo",
        "The traffic imbalance of flowlet-level random load balancing is bounded by Theorem 2's expression; the bound tracks simulation.",
        requires=("analysis:conga-thm2",), delegate="conga-thm2",
    ),
    Experiment(
        "conga-fluid", "CONGA (SIGCOMM'14)", "Figs. 2 and 3 (fluid)", "the §2.4 examples as fluid fixed points",
        "Fig. 2: ECMP 90, local 80, CONGA ~100 Gbps. Fig. 3: the right L1→L2 split depends on the L0→L2 demand, static "
        "weights cannot serve both cases, local can be worse than ECMP in (b).",
        requires=("analysis:conga-fluid",), delegate="conga-fluid",
    ),
    Experiment(
        "expeditus-fig1", "Expeditus (CoNEXT'14 student)", "Fig. 1", "leaf-spine: Expeditus vs CONGA-Flow and ECMP",
        "Leaf-spine (one pod of a 16-pod fat-tree, 2:1, 150 KB buffers), web search: Expeditus cuts FCT by 25-30% vs "
        "ECMP for all flows; CONGA-Flow is close to ECMP.",
        scenarios=("expeditus/fig1.toml",), requires=("scheme:ecmp", "scheme:conga-flow", "scheme:expeditus", "workload:poisson"),
        grid=_exp1_grid, tables=("flows",), reduce=_fct_reduce(()),
        plot=_fct_plot("Expeditus Fig. 1: leaf-spine", facet=None, panels=[("fct_norm_ecmp", "mean FCT / ECMP"), ("small_norm_ecmp", "small flows / ECMP"), ("large_norm_ecmp", "large flows / ECMP")]),
        compare=_exp1_compare, notes=("match = Expeditus's best gain over ECMP between 12.5% and 60%.",),
    ),
    Experiment(
        "expeditus-fig2", "Expeditus (CoNEXT'14 student)", "Fig. 2", "16-pod fat-tree, 4:1",
        "16-pod fat-tree, 4:1, web search: Expeditus cuts the 99th-percentile FCT of mice (<100 KB) by 35-50% and the "
        "mean FCT of elephants by ~25% vs ECMP.",
        scenarios=("expeditus/fig2.toml",), requires=("scheme:ecmp", "scheme:expeditus", "workload:poisson"),
        grid=_exp2_grid, tables=("flows",), reduce=_fct_reduce(()),
        plot=_fct_plot("Expeditus Fig. 2: fat-tree k=16, 4:1", facet=None, panels=[("small_p99_norm_ecmp", "mice p99 FCT / ECMP"), ("large_norm_ecmp", "elephant mean FCT / ECMP")]),
        compare=_exp2_compare, notes=("match = mice p99 gain >= 17.5% and elephant gain >= 12.5% at some load.",),
    ),
    Experiment(
        "eman-fig2", "EMAN (ICNP'19 / ToN)", "Fig. 2", "one flow over a 6G and a 3G path",
        "One flow over two paths (9 Gbps in total): EMAN gets almost all of it, ~40% more than Clove and ~90% more "
        "than Hermes (both use less than 70% of the capacity).",
        scenarios=("eman/fig2.toml",), requires=("scheme:clove", "scheme:hermes", "scheme:eman", "workload:bulk"),
        grid=_eman_bulk_grid("eman/fig2.toml"), tables=("windows",), reduce=_throughput_reduce(["scheme"]),
        plot=_eman_bars("EMAN Fig. 2: 6G + 3G paths", 9.0), compare=_eman2_compare,
        notes=("match = EMAN >= 85% of 9 Gbps and >= 1.15x the better of Clove and Hermes.",
               "Hermes runs with R off, as the paper's footnote 3 says for this figure."),
    ),
    Experiment(
        "eman-fig4", "EMAN (ICNP'19 / ToN)", "Fig. 4", "two competing flows, 60 Gbps maximum",
        "Two competing flows on the asymmetric fabric of Fig. 1(b) (60 Gbps max): Clove 32.5, Hermes 39.5, EMAN 56.7 Gbps.",
        scenarios=("eman/fig4.toml",), requires=("scheme:clove", "scheme:hermes", "scheme:eman", "workload:bulk"),
        grid=_eman_bulk_grid("eman/fig4.toml"), tables=("windows",), reduce=_throughput_reduce(["scheme"]),
        plot=_eman_bars("EMAN Fig. 4: two competing flows", 60.0), compare=_eman4_compare,
        notes=("match = every scheme within 20% of the paper's number.", "Hermes R = 40% (footnote 3)."),
    ),
    Experiment(
        "eman-fig5", "EMAN (ICNP'19 / ToN)", "Fig. 5", "a flow joins and leaves",
        "F1 alone reaches 50 Gbps; when F2 joins both converge to ~30 Gbps; after F2 leaves F1 is back at 50 Gbps within ~30 ms.",
        scenarios=("eman/fig5.toml",), requires=("scheme:eman", "workload:bulk"),
        grid=_eman5_grid, tables=("windows",), reduce=_eman5_reduce, plot=_eman5_plot, compare=_eman5_compare,
        notes=("Per-flow throughput from the host-down link into each flow's destination, 1 ms windows.",
               "match = F1 alone within 15% of 50 Gbps and both flows within 15% of 30 Gbps while sharing."),
        full_seeds=1,
    ),
    Experiment(
        "eman-fig6", "EMAN (ICNP'19 / ToN)", "Fig. 6", "every combination of degraded links",
        "Over all combinations of the six links of Fig. 1(b) degraded to 10 Gbps, EMAN reaches more than 85% "
        "utilisation in more than 80% of the cases and at least 80% in the worst.",
        scenarios=("eman/fig6.toml",), requires=("scheme:eman", "workload:bulk"),
        grid=_eman6_grid, tables=("windows",), reduce=_eman6_reduce, plot=_eman6_plot, compare=_eman6_compare,
        notes=("Utilisation = delivered rate / max-flow capacity of the degraded fabric (computed from the scenario).",
               "The 63 non-empty combinations; quick runs every 4th. match = >85% in >=70% of cases and worst >= 70%."),
        full_seeds=1,
    ),
    Experiment(
        "eman-fig7", "EMAN (ICNP'19 / ToN)", "Fig. 7", "4 leaves x 16 hosts, two degraded links, web search",
        "4 x 16 hosts, 4 spines, leaf2-spine1 and leaf2-spine2 degraded to 10G, web search: EMAN improves mean FCT by "
        "~5-66% vs Clove and Hermes and ~17-75% vs ECMP.",
        scenarios=("eman/fig7.toml",), requires=("scheme:ecmp", "scheme:clove", "scheme:hermes", "scheme:eman", "workload:poisson"),
        grid=_eman7_grid, tables=("flows",), reduce=_fct_reduce(()),
        plot=_fct_plot("EMAN Fig. 7: web search, two degraded links", facet=None, panels=[("fct_ms", "mean FCT (ms)"), ("fct_norm_ecmp", "mean FCT / ECMP")]),
        compare=_eman7_compare,
        notes=("The paper numbers leaves and spines from 1: its leaf 2, spine 1, spine 2 are our L1, S0, S1.",
               "match = EMAN's best gain over ECMP >= 8.5% (half the paper's lower end)."),
    ),
]

EXPERIMENTS: Dict[str, Experiment] = {e.name: e for e in _EXPERIMENTS}


# ----------------------------------------------------------------------------- reproduce


def _command(name: str, mode: str, seeds: Optional[int], out: Path, jobs: Optional[int], ray: Optional[str]) -> str:
    parts = ["fabriclb", "reproduce", name]
    if mode == "quick":
        parts.append("--quick")
    elif mode == "smoke":
        parts.append("--smoke")
    if seeds:
        parts += ["--seeds", str(seeds)]
    if ray:
        parts += ["--ray", ray]
    parts += ["--out", str(out)]
    return " ".join(shlex.quote(p) for p in parts)


def reproduce(
    name: str,
    out: PathLike,
    *,
    mode: str = "full",
    seeds: Optional[int] = None,
    jobs: Optional[int] = None,
    ray: Optional[str] = None,
    cache: Optional[PathLike] = None,
    progress: bool = True,
    force: bool = False,
) -> Dict[str, Any]:
    """Run experiment ``name`` and write ``out/name/{table.csv, plot.png, report.md,
    result.json}``. ``mode``: "full", "quick" or "smoke"; ``seeds``: runs per point (default:
    the paper's for full, 1 otherwise); ``cache``: the result cache (default ``out/.cache``,
    shared by all experiments written under ``out``). Returns the result record: name, claim,
    ours, status, mode, failed points, table. Raises ``RuntimeError`` when the experiment is
    waiting for something, ``KeyError`` for an unknown name."""
    if name not in EXPERIMENTS:
        raise KeyError(f"unknown experiment '{name}'; known: {', '.join(EXPERIMENTS)}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    exp = EXPERIMENTS[name]
    _refresh()
    status = experiment_status(exp)
    if status != "ready" and not force:
        raise RuntimeError(f"{name} is {status}")
    out_root = Path(out)
    exp_dir = out_root / name
    exp_dir.mkdir(parents=True, exist_ok=True)
    command = _command(name, mode, seeds, out_root, jobs, ray)
    t0 = time.time()
    if exp.delegate:
        from ..analysis.experiments import run_experiment

        res = run_experiment(exp.delegate, exp_dir, quick=mode != "full", seed=0)
        with open(exp_dir / "report.md", "a", encoding="utf-8") as f:
            f.write(f"\nCommand: `{command}`\n")
        rec = {"name": name, "paper": exp.paper, "figure": exp.figure, "claim": res.get("claim", exp.claim),
               "ours": res.get("ours", ""), "status": res.get("status", "n/a"), "mode": mode, "failed": [],
               "command": command, "wall_time_s": round(time.time() - t0, 2)}
        write_result_json(exp_dir, rec)
        tab = res.get("table")
        rec["table"] = tab if isinstance(tab, pd.DataFrame) else pd.read_csv(exp_dir / "table.csv")
        return rec
    assert exp.grid and exp.reduce and exp.plot and exp.compare
    n_seeds = seeds if seeds else (exp.full_seeds if mode == "full" else 1)
    schemes, _ = _core_lists()
    ctx = Ctx(mode=mode, seeds=n_seeds, schemes=schemes, scenarios=_scenarios_dir())
    points = exp.grid(ctx)
    results = run_points(points, cache=cache or out_root / ".cache", tables=exp.tables, jobs=jobs, ray=ray,
                         progress=progress, desc=name)
    failed = [(", ".join(f"{k}={v}" for k, v in r.spec.labels) + f", seed={r.seed}", r.error or "") for r in results if not r.ok]
    red = exp.reduce(results, ctx)
    from ..result import write_csv

    write_csv(exp_dir / "table.csv", red.table)
    extra_files = []
    for k, df in red.extra.items():
        write_csv(exp_dir / f"{k}.csv", df)
        extra_files.append(f"{k}.csv")
    exp.plot(red, exp_dir / "plot.png")
    if (exp_dir / "queue_cdf.png").exists():
        extra_files.append("queue_cdf.png")
    ours, status = exp.compare(red)
    if failed and status == "match":
        status = "match (some points failed)"
    write_report(exp_dir, name=name, title=exp.title, paper=exp.paper, figure=exp.figure, claim=exp.claim, ours=ours,
                 status=status, table=red.table, command=command, mode=mode, notes=exp.notes, failed=failed,
                 extra_files=extra_files)
    rec = {"name": name, "paper": exp.paper, "figure": exp.figure, "claim": exp.claim, "ours": ours, "status": status,
           "mode": mode, "seeds": n_seeds, "points": len(points), "computed": sum(r.status == "computed" for r in results),
           "failed": failed, "command": command, "wall_time_s": round(time.time() - t0, 2)}
    write_result_json(exp_dir, rec)
    rec["table"] = red.table
    return rec
