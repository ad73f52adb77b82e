"""What every experiment is made of: its types (:class:`Experiment`, :class:`Claim`,
:class:`Ctx`, :class:`Reduction`), the judging of a run against the paper's numbers
(:func:`judge`), availability (what an experiment still needs), run-length rules, and the grid,
reduction and plot helpers the paper modules share.

The status vocabulary (docs/LAB.md, "Statuses"): each number a paper states for a figure is a
:class:`Claim`, tagged *comparable* (a packet-level measurement with a tolerance),
*conceptual* (compared by a fluid or analytic experiment, which it names) or *not comparable*
(with the reason); a comparable claim that needs a scheme the core lacks is *waiting* for it.
A run's status is then *match* (every comparable claim within its tolerance), *partial* (some
within, none outside, others waiting or not measured by this grid), *differs* (one outside),
*waiting: <scheme>* (none measured yet, some waiting) or *n/a* (nothing comparable measured).
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from .. import plots
from ..reduce import fct_vs_load, seed_range
from ..sweep import PointResult, PointSpec

#: The forms of an experiment: the paper's whole grid, the settling form (the loads where the
#: paper makes its claims, the full run length and seeds, under an hour on two cores where the
#: claims allow; only experiments with ``settle=True`` have one), a reduced grid, a tiny one.
MODES = ("full", "settle", "quick", "smoke")
PathLike = Union[str, Path]

COMPARABLE = "comparable"
CONCEPTUAL = "conceptual"
NOT_COMPARABLE = "not comparable"
TAGS = (COMPARABLE, CONCEPTUAL, NOT_COMPARABLE)


# ----------------------------------------------------------------------------- types


@dataclass
class Ctx:
    """What a grid builder or reducer may read: the mode, the number of seeds, the schemes
    the core has, where the scenarios are, and the part of the grid to run (``--only``)."""

    mode: str
    seeds: int
    schemes: Tuple[str, ...]
    scenarios: Path
    #: ``--only``: (label, values kept) pairs, for the labels of `Experiment.parts`.
    only: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()

    def seed_list(self) -> List[int]:
        return list(range(1, self.seeds + 1))

    def keeps(self, label: str, value: Any) -> bool:
        """Whether ``--only`` keeps this value of ``label`` (every value of a label it does not
        name); values compare as text."""
        keep = dict(self.only).get(label)
        return keep is None or str(value) in keep

    def has(self, scheme: str) -> bool:
        return scheme in self.schemes


@dataclass
class Reduction:
    """A reduced experiment: the figure's table and extra tables (written as CSV next to it)."""

    table: pd.DataFrame
    extra: Dict[str, pd.DataFrame] = field(default_factory=dict)


#: A claim's check: (our number as text, within tolerance), or None when the run did not
#: measure it (a load or scheme outside this grid, failed points).
Check = Callable[[Reduction], Optional[Tuple[str, bool]]]


@dataclass(frozen=True)
class Claim:
    """One number (or stated ordering) the paper gives for a figure, and how we compare it.

    ``paper``: what the paper says, with its section; ``tag``: one of :data:`TAGS`;
    ``rule``: for a comparable claim what we measure and the tolerance, for a conceptual one
    the experiment that compares it, for a not comparable one why; ``needs``: schemes the
    comparison needs (until the core has them the claim is *waiting*); ``check``: comparable
    claims only.
    """

    paper: str
    tag: str
    rule: str
    needs: Tuple[str, ...] = ()
    check: Optional[Check] = None

    def __post_init__(self) -> None:
        assert self.tag in TAGS, self.tag
        assert self.check is None or self.tag == COMPARABLE, self.paper


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
    #: Our headline numbers (the report's "Ours" line), whatever the claims judge.
    ours: Optional[Callable[[Reduction], str]] = None
    #: Every number the paper states for the figure, with its tag and rule (docs/LAB.md).
    claims: Tuple[Claim, ...] = ()
    notes: Tuple[str, ...] = ()
    #: For the analytic experiments: the name in fabriclb.analysis.experiments.
    delegate: Optional[str] = None
    #: Seeds per point of the full grid and the settling form (the papers: 5 runs per point).
    full_seeds: int = 5
    #: Whether the grid builder has a settling form (mode "settle", ``--settle``): the loads
    #: where the paper makes its claims, with the full form's run length and seeds.
    settle: bool = False
    #: A status fixed before any run, whatever the claims (e.g. "n/a: different traffic" when
    #: the paper measured other traffic than any run can make); the claims are then reported only.
    fixed_status: Optional[str] = None
    #: The file the plot function writes (e.g. "heatmap.png" for the leaderboard).
    plot_file: str = "plot.png"
    #: A report writer of its own, in place of the common report.md: (out dir, reduction, the
    #: result record so far: name, title, claim, ours, status, claims, command, mode, notes,
    #: failed, seeds, points, computed, wall_time_s) -> the extra files it wrote.
    report: Optional[Callable[[Path, "Reduction", Mapping[str, Any]], List[str]]] = None
    #: Labels by which the grid may be run in parts (``--only LABEL=V1,V2``): those by which
    #: the reducer's rows are independent, so that a part's rows are the whole run's.
    parts: Tuple[str, ...] = ()
    #: docs/LAB.md's grid rows of its own (mode, workload, grid, seeds, duration, warm-up,
    #: drain, points), when they must not depend on the schemes the core has.
    protocol: Optional[Callable[[], List[List[str]]]] = None


# ----------------------------------------------------------------------------- judging


def judge(claims: Sequence[Claim], red: Reduction, schemes: Sequence[str]) -> Tuple[str, List[Dict[str, str]]]:
    """The status of a run (module docs) and one row per claim: paper, tag, rule, ours,
    verdict ("within", "outside", "not measured", "waiting: X", or the tag)."""
    rows: List[Dict[str, str]] = []
    waiting: List[str] = []
    results: List[Optional[bool]] = []
    for c in claims:
        row = {"paper": c.paper, "tag": c.tag, "rule": c.rule, "ours": "", "verdict": c.tag}
        lacking = [s for s in c.needs if s not in schemes]
        if c.tag == COMPARABLE and lacking:
            waiting += lacking
            row["verdict"] = "waiting: " + ", ".join(lacking)
        elif c.tag == COMPARABLE:
            assert c.check is not None
            got = c.check(red)
            results.append(None if got is None else got[1])
            if got is None:
                row["verdict"] = "not measured by this grid"
            else:
                row["ours"], row["verdict"] = got[0], "within" if got[1] else "outside"
        rows.append(row)
    measured = [r for r in results if r is not None]
    if False in measured:
        status = "differs"
    elif measured and len(measured) == len(results) and not waiting:
        status = "match"
    elif measured:
        status = "partial"
    elif waiting:
        status = "waiting: " + ", ".join(dict.fromkeys(waiting))
    else:
        status = "n/a"
    return status, rows


def within(x: float, lo: float = -math.inf, hi: float = math.inf) -> bool:
    return bool(np.isfinite(x) and lo <= x <= hi)


# ----------------------------------------------------------------------------- availability


@functools.lru_cache(maxsize=1)
def core_lists() -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    import fabriclb

    return tuple(fabriclb.schemes()), tuple(fabriclb.workloads())


def refresh() -> None:
    core_lists.cache_clear()
    _scenario_problem.cache_clear()


LOCAL_SCHEME_NAMES = ("local", "conga-local", "local-aware", "locally-aware")


def local_scheme(schemes: Sequence[str]) -> Optional[str]:
    """The name of the local congestion-aware scheme (CONGA §2.4), if the core has one."""
    for n in LOCAL_SCHEME_NAMES:
        if n in schemes:
            return n
    return None


def scenarios_dir() -> Path:
    import fabriclb

    return Path(fabriclb.scenarios_dir())


@functools.lru_cache(maxsize=None)
def _scenario_problem(rel: str) -> Optional[str]:
    p = scenarios_dir() / rel
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
        from ...analysis import experiments as ax
    except Exception:  # noqa: BLE001
        return False
    return name in getattr(ax, "EXPERIMENTS", {})


def missing(exp: Experiment) -> List[str]:
    """What ``exp`` still needs (empty when ready)."""
    out: List[str] = []
    try:
        schemes, workloads = core_lists()
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
            if not (scenarios_dir() / rel).is_file():
                out.append(f"scenario {rel} (missing)")
    return out


# ----------------------------------------------------------------------------- run lengths

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
#: Shorter rules for the large fabrics' FCT experiments (Fig. 15; Expeditus). The drain
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


# ----------------------------------------------------------------------------- grid helpers


def modes_of(exp: "Experiment") -> Tuple[str, ...]:
    """The forms ``exp`` has, in MODES order."""
    return tuple(m for m in MODES if m != "settle" or exp.settle)


def default_seeds(exp: "Experiment", mode: str) -> int:
    """Seeds per point when none are asked for: the paper's for the full and settling forms."""
    return exp.full_seeds if mode in ("full", "settle") else 1


def loads_for(ctx: Ctx, full: Sequence[float], quick: Sequence[float], smoke: Sequence[float],
              settle: Optional[Sequence[float]] = None) -> List[float]:
    """The loads of ``ctx.mode``; the settling form's default to the full grid's."""
    return list({"full": full, "settle": full if settle is None else settle, "quick": quick, "smoke": smoke}[ctx.mode])


def scheme_list(ctx: Ctx, full: Sequence[str], smoke: Sequence[str], optional: Sequence[str] = ()) -> List[str]:
    """``full`` (``smoke`` in smoke mode), plus each of ``optional`` the core has."""
    base = list(smoke if ctx.mode == "smoke" else full)
    if ctx.mode != "smoke":
        base += [s for s in optional if ctx.has(s)]
    return base


Axis = Tuple[str, Sequence[Tuple[Any, Sequence[Tuple[str, Any]]]]]


def grid_points(ctx: Ctx, scenario: str, axes: Sequence[Axis], fixed: Sequence[Tuple[str, Any]] = ()) -> List[PointSpec]:
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


def scheme_axis(schemes: Sequence[str]) -> Axis:
    return ("scheme", [(s, [("scheme", {"name": s})]) for s in schemes])


def load_axis(loads: Sequence[float]) -> Axis:
    return ("load", [(float(x), [("workload[0].load", float(x))]) for x in loads])


def cdf_axis(names: Sequence[str]) -> Axis:
    return ("workload", [(n, [("workload[0].cdf", WORKLOAD_CDF[n])]) for n in names])


def run_length(rules: Mapping[str, Mapping[str, str]], ctx: Ctx) -> List[Tuple[str, Any]]:
    """The run length of ``ctx.mode``; the settling form runs the full form's unless ``rules``
    has one of its own."""
    return list(rules.get(ctx.mode, rules["full"]).items())


# ----------------------------------------------------------------------------- numbers


def gain(a: float, b: float) -> float:
    """Relative improvement of a over baseline b: 1 - a/b."""
    if not (b and np.isfinite(a) and np.isfinite(b)):
        return math.nan
    return 1.0 - a / b


def pct(x: float) -> str:
    return "n/a" if not np.isfinite(x) else f"{100 * x:.0f}%"


def better(g: float) -> str:
    """A relative gain (positive: lower FCT) in words: "12% better" or "5% worse"."""
    if not np.isfinite(g):
        return "n/a"
    return f"{pct(abs(g))} {'better' if g >= 0 else 'worse'}"


def lookup(df: pd.DataFrame, col: str, **where: Any) -> float:
    """``df[col]`` of the first row matching ``where`` (floats compared with isclose); NaN
    when there is none."""
    sel = df
    for k, v in where.items():
        if k not in sel:
            return math.nan
        sel = sel[sel[k] == v] if not isinstance(v, float) else sel[np.isclose(sel[k].astype(float), v)]
    if sel.empty or col not in sel:
        return math.nan
    return float(sel[col].iloc[0])


def rows_of(t: pd.DataFrame, **where: Any) -> pd.DataFrame:
    """The rows of ``t`` matching ``where`` (empty when a column is missing)."""
    sel = t
    for k, v in where.items():
        if k not in sel:
            return sel.iloc[0:0]
        sel = sel[sel[k] == v]
    return sel


def overall_norm(t: pd.DataFrame) -> str:
    """The overall FCT-vs-ECMP column the comparisons read: unfinished flows at their lower
    bound when the table has it (a scheme that leaves more flows unfinished must not look
    better for it), else finished flows only."""
    return "fct_lb_norm_ecmp" if "fct_lb_norm_ecmp" in t and t["fct_lb_norm_ecmp"].notna().any() else "fct_norm_ecmp"


def best_gain(t: pd.DataFrame, scheme: str, col: Optional[str] = None, **where: Any) -> Tuple[float, float]:
    """(1 - the smallest ``col`` of ``scheme``, the load where it is): a scheme's best gain
    over ECMP on an FCT table."""
    col = col or overall_norm(t)
    sub = rows_of(t, scheme=scheme, **where)
    if sub.empty or col not in sub or sub[col].isna().all():
        return math.nan, math.nan
    i = sub[col].astype(float).idxmin()
    return 1 - float(sub.loc[i, col]), float(sub.loc[i, "load"])


def rate_gbps(text: Any) -> float:
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(bps|Kbps|Mbps|Gbps|Tbps)\s*", str(text))
    if not m:
        return 10.0
    return float(m.group(1)) * {"bps": 1e-9, "Kbps": 1e-6, "Mbps": 1e-3, "Gbps": 1.0, "Tbps": 1e3}[m.group(2)]


# ----------------------------------------------------------------------------- shared reductions


def throughput_reduce(label_cols: Sequence[str]) -> Callable[[List[PointResult], Ctx], Reduction]:
    """Application throughput per label combination, mean and range over seeds."""

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


def fct_reduce(facets: Sequence[str] = ("workload",)) -> Callable[[List[PointResult], Ctx], Reduction]:
    def red(points: List[PointResult], ctx: Ctx) -> Reduction:
        return Reduction(fct_vs_load([p for p in points if p.ok], facets=facets))

    return red


def fct_plot(title: str, facet: Optional[str] = "workload", panels: Optional[Sequence[Tuple[str, str]]] = None) -> Callable[[Reduction, Path], None]:
    panels = panels or [
        ("fct_norm_ideal", "mean FCT / ideal FCT"),
        ("small_norm_ecmp", "small flows (<100KB): FCT / ECMP"),
        ("large_norm_ecmp", "large flows (>10MB): FCT / ECMP"),
    ]

    def plot(red: Reduction, path: Path) -> None:
        plots.lines_vs_x(red.table, path, x="load", panels=panels, facet=facet, title=title)

    return plot


def gain_check(scheme: str, lo: float, hi: float, col: Optional[str] = None, vs: str = "ECMP", **where: Any) -> Check:
    """A claim check: ``scheme``'s best gain over ECMP (on ``col``, default the overall
    column) in [lo, hi]."""

    def check(red: Reduction) -> Optional[Tuple[str, bool]]:
        g, at = best_gain(red.table, scheme, col, **where)
        if not np.isfinite(g):
            return None
        return f"{better(g)} than {vs} at best (at {at:.0%})", within(g, lo, hi)

    return check
