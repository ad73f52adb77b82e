"""The leaderboard (docs/LEADERBOARD.md): every registered scheme on the conditions each paper
argued from, with one transport, the same workloads and seeds, as ``table.csv``, a heatmap
(``heatmap.png``), ``report.md`` and a self-contained ``report.html``.

There is no list of schemes here. The schemes are :func:`fabriclb.schemes`, asked at each run,
and a scheme declares what it needs through the core's validation: for every (condition,
scheme) the condition's scenario is loaded with ``scheme.name`` set, and a validation error
(FlowBender without ECN marks, Expeditus on parallel leaf-spine links or an explicit fabric,
an edge scheme on a fabric with one path, ...) becomes the cell's "n/a: <the error>". A new
scheme is in the table as soon as the core registers it, as numbers or as n/a with the
reason the core gives. A condition that needs something the core lacks (a workload pattern,
a scenario file) shows "n/a: waiting for <it>" in every cell.

Metrics: FCT conditions give the mean FCT of the measured flows (unfinished ones at their
lower bound) and the 99th-percentile FCT of finished flows < 100 KB; ``eman-1b`` the aggregate
goodput as % of the payload optimum (the fabric's max-flow); ``incast-32`` the throughput
as % of the client's link. A cell is "unstable" when the scheme cannot carry the condition's
load (:func:`unstable`, rule fixed before the first run in docs/LEADERBOARD.md).
"""

from __future__ import annotations

import base64
import functools
import html
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

from ..reduce import flow_stats
from ..report import claims_markdown, markdown_table
from ..sweep import PointResult, PointSpec
from .common import NOT_COMPARABLE, Claim, Ctx, Experiment, Reduction, core_lists, rate_gbps, scenarios_dir
from .eman import max_flow_gbps, payload_share

NAME = "leaderboard"

#: Metric names, and whether lower is better.
MEAN_FCT = "mean_fct_ms"
P99_SMALL = "p99_fct_small_ms"
UTIL = "throughput_pct_of_optimum"
INCAST = "throughput_pct_of_link"
LOWER_BETTER = {MEAN_FCT: True, P99_SMALL: True, UTIL: False, INCAST: False}
METRIC_TEXT = {
    MEAN_FCT: "mean FCT (ms), unfinished flows at their lower bound",
    P99_SMALL: "99th-percentile FCT (ms) of flows < 100 KB",
    UTIL: "aggregate goodput, % of the payload optimum",
    INCAST: "incast throughput, % of the client's link",
}

#: The unstable rule (docs/LEADERBOARD.md, fixed before the first run): a cell is unstable when
#: more than UNFINISHED_MAX of its measured flows are unfinished at the end of the drain (mean
#: over seeds), or when in every seed the mean FCT of the measured flows below GROWTH_BYTES that
#: start in the second half of the measurement window exceeds that of the first half by more
#: than GROWTH_MAX: the backlog, and with it the FCT, grows with the run.
UNFINISHED_MAX = 0.01
GROWTH_MAX = 1.5
GROWTH_BYTES = 10e6

#: Run lengths per family and mode: (duration, warmup, drain); None = not in that mode.
RUN_LENGTH: Dict[str, Dict[str, Optional[Tuple[str, str, str]]]] = {
    # Web search and enterprise on the leaf-spines: the quick form's 100 ms of arrivals give
    # ~1300 measured flows at 60% on the testbed; the drains outlast the 5 ms minRTO many times.
    # The smoke form's drain lets its largest flows (30 MB: 24 ms at 10 Gbps) finish.
    "leaf-spine": {"full": ("500ms", "50ms", "500ms"), "quick": ("100ms", "10ms", "200ms"), "smoke": ("2ms", "0ps", "40ms")},
    # Data mining warms up for 1 s: its throughput takes about a second to ramp up (docs/LAB.md).
    "data-mining": {"full": ("2s", "1s", "1s"), "quick": None, "smoke": None},
    # The fat-tree's 256 hosts: the large-fabric lengths of docs/LAB.md.
    "fat-tree": {"full": ("200ms", "20ms", "1s"), "quick": ("50ms", "5ms", "200ms"), "smoke": None},
    # Two long flows (EMAN Fig. 4's lengths); no drain: the flows last the whole run.
    "bulk": {"full": ("200ms", "50ms", "0ps"), "quick": None, "smoke": None},
    # Ten requests 100 ms apart (the scenario's own run).
    "incast": {"full": ("1s", "0ps", "0ps"), "quick": None, "smoke": None},
}


@dataclass(frozen=True)
class Condition:
    """One row group of the leaderboard: a scenario file and the overrides that make it."""

    name: str
    scenario: str
    overrides: Tuple[Tuple[str, Any], ...]
    family: str
    metrics: Tuple[str, ...]
    source: str
    #: What the core must have for the condition to run ("workload:incast", "scheme:mptcp").
    requires: Tuple[str, ...] = ()
    web_search: bool = False

    def run_length(self, mode: str) -> Optional[Tuple[str, str, str]]:
        return RUN_LENGTH[self.family][mode]


_CDF = {"websearch": "web-search", "enterprise": "enterprise", "datamining": "data-mining"}
_FCT = (MEAN_FCT, P99_SMALL)


def _conditions() -> List[Condition]:
    out: List[Condition] = []
    for wl in ("websearch", "enterprise", "datamining"):
        for load in (30, 60, 80):
            out.append(Condition(
                f"testbed-{wl}-{load}", "leaderboard/testbed.toml",
                (("workload[0].cdf", _CDF[wl]), ("workload[0].load", load / 100)),
                "data-mining" if wl == "datamining" else "leaf-spine", _FCT,
                "CONGA (SIGCOMM'14) §5.2, Figs. 9-10: the testbed", web_search=wl == "websearch"))
    for wl in ("websearch", "datamining"):
        out.append(Condition(
            f"testbed-failure-{wl}-60", "leaderboard/testbed-failure.toml",
            (("workload[0].cdf", _CDF[wl]), ("workload[0].load", 0.6)),
            "data-mining" if wl == "datamining" else "leaf-spine", _FCT,
            "CONGA (SIGCOMM'14) §5.2.2, Figs. 7(b), 11: one Leaf1-Spine1 link down", web_search=wl == "websearch"))
    for wl in ("websearch", "datamining"):
        out.append(Condition(
            f"asym20-{wl}-60", "leaderboard/asym20.toml",
            (("workload[0].cdf", _CDF[wl]), ("workload[0].load", 0.6)),
            "data-mining" if wl == "datamining" else "leaf-spine", _FCT,
            "Hermes (SIGCOMM'17) simulations: 8x8 leaf-spine, 20% of the leaf-spine links at 1/5",
            web_search=wl == "websearch"))
    out.append(Condition("eman-1b", "leaderboard/eman-1b.toml", (), "bulk", (UTIL,),
                         "EMAN (IFIP Networking'20) Fig. 1(b), Fig. 4: two long flows, 60 Gbps optimum",
                         requires=("workload:explicit",)))
    out.append(Condition("incast-32", "leaderboard/incast-32.toml", (), "incast", (INCAST,),
                         "CONGA (SIGCOMM'14) §5.3, Fig. 13: incast, fan-in 32, minRTO 1 ms, MTU 1500",
                         requires=("workload:incast",)))
    out.append(Condition("fattree-k8", "leaderboard/fattree-k8.toml", (), "fat-tree", _FCT,
                         "Expeditus (CoNEXT'14) Fig. 2: a fat-tree (k = 8 here), 2:1 at the edge, web search at 60%",
                         web_search=True))
    return out


CONDITIONS: List[Condition] = _conditions()
#: The smoke form's one condition (the test suite's: every scheme in the table in seconds).
SMOKE_CONDITION = "testbed-websearch-60"


def conditions_for(mode: str) -> List[Condition]:
    """The conditions of a mode: all (full), the web-search ones (quick), one (smoke)."""
    if mode == "smoke":
        return [c for c in CONDITIONS if c.name == SMOKE_CONDITION]
    if mode == "quick":
        return [c for c in CONDITIONS if c.web_search]
    return list(CONDITIONS)


def _overrides(c: Condition, mode: str) -> List[Tuple[str, Any]]:
    rl = c.run_length(mode) or c.run_length("full")
    assert rl is not None
    ov = list(c.overrides)
    if c.family != "incast":
        ov += [("duration", rl[0]), ("warmup", rl[1]), ("drain", rl[2])]
    if mode == "smoke":
        ov.append(("measure.window", "1ms"))
    return ov


def _one_line(e: BaseException, path: str) -> str:
    msg = str(getattr(e, "message", e)).strip().splitlines()
    text = msg[0] if msg else type(e).__name__
    return text.replace(path + ": ", "").strip()


def waiting_for(c: Condition, scen_dir: Path) -> Optional[str]:
    """Why condition ``c`` cannot run at all (every cell "n/a: waiting for ..."), or None."""
    try:
        schemes, workloads = core_lists()
    except Exception as e:  # noqa: BLE001 - no compiled core
        return f"the compiled core ({str(e).splitlines()[0][:60]})"
    lack = []
    for r in c.requires:
        kind, _, what = r.partition(":")
        if (kind == "workload" and what not in workloads) or (kind == "scheme" and what not in schemes):
            lack.append(f"{kind} {what}")
    if not (scen_dir / c.scenario).is_file():
        lack.append(f"scenario {c.scenario}")
    return ", ".join(lack) or None


@functools.lru_cache(maxsize=None)
def _cell_problem(path: str, overrides: str, scheme: str) -> Optional[str]:
    import fabriclb

    try:
        fabriclb.load_scenario(path, list(json.loads(overrides)) + [["scheme", {"name": scheme}]])
    except fabriclb.FabriclbError as e:
        return _one_line(e, path)
    return None


def cell_problem(c: Condition, scheme: str, mode: str, scen_dir: Path) -> Optional[str]:
    """Why ``scheme`` cannot serve condition ``c`` ("waiting for ..." or the core's
    validation error), or None when it can."""
    w = waiting_for(c, scen_dir)
    if w:
        return f"waiting for {w}"
    return _cell_problem(str(scen_dir / c.scenario), json.dumps(_overrides(c, mode)), scheme)


# ----------------------------------------------------------------------------- grid


def _grid(ctx: Ctx) -> List[PointSpec]:
    """(condition, scheme, seed) for every scheme of the core that can serve the condition."""
    out: List[PointSpec] = []
    for c in conditions_for(ctx.mode):
        for s in ctx.schemes:
            if cell_problem(c, s, ctx.mode, ctx.scenarios) is not None:
                continue
            ov = tuple(_overrides(c, ctx.mode)) + (("scheme", {"name": s}),)
            for seed in ctx.seed_list():
                out.append(PointSpec(scenario=str(ctx.scenarios / c.scenario), overrides=ov, seed=seed,
                                     labels=(("workload", c.family), ("condition", c.name), ("scheme", s))))
    return out


def protocol_rows() -> List[List[str]]:
    """docs/LAB.md's grid rows: per mode and family, the conditions, seeds and run length
    (independent of the schemes the core has: every registered scheme runs)."""
    rows = []
    for mode in ("full", "quick", "smoke"):
        seeds = "1-3" if mode == "full" else "1"
        fams: Dict[str, List[str]] = {}
        for c in conditions_for(mode):
            fams.setdefault(c.family, []).append(c.name)
        for fam, names in fams.items():
            rl = RUN_LENGTH[fam][mode] or RUN_LENGTH[fam]["full"]
            assert rl is not None
            run = list(rl) if fam != "incast" else ["(scenario)", "(scenario)", "(scenario)"]
            rows.append([mode, fam, "condition: " + ", ".join(names) + "; scheme: every registered scheme", seeds, *run,
                         f"{len(names)} x schemes x seeds"])
    return rows


# ----------------------------------------------------------------------------- metrics


def fct_growth(flows: pd.DataFrame, scenario: Mapping[str, Any], max_bytes: float = GROWTH_BYTES) -> float:
    """Mean FCT (unfinished flows at their lower bound) of the measured flows below
    ``max_bytes`` that start in the second half of the measurement window, over that of the
    first half (NaN when a half has none)."""
    from ..reduce import duration_ms

    t0, t1 = duration_ms(scenario.get("warmup", "0ps")), duration_ms(scenario.get("duration", "0ps"))
    f = flows
    if "warmup" in f:
        f = f[f["warmup"] == 0]
    f = f[f["size_bytes"].astype(float) < max_bytes]
    if f.empty or t1 <= t0:
        return math.nan
    mid = (t0 + t1) / 2
    start = f["start_ms"].astype(float)
    a, b = f[start < mid]["fct_lb_ms"], f[start >= mid]["fct_lb_ms"]
    if a.empty or b.empty or float(a.mean()) <= 0:
        return math.nan
    return float(b.mean()) / float(a.mean())


def unstable(unfinished_share: Sequence[float], growth: Sequence[float]) -> bool:
    """The unstable rule (module constants; docs/LAB.md and docs/LEADERBOARD.md), over a cell's
    seeds: the unfinished share's mean above UNFINISHED_MAX, or the FCT growth above
    GROWTH_MAX in every seed."""
    u = [x for x in unfinished_share if np.isfinite(x)]
    g = list(growth)
    if u and float(np.mean(u)) > UNFINISHED_MAX:
        return True
    return bool(g) and all(np.isfinite(x) and x > GROWTH_MAX for x in g)


def incast_throughput_pct(flows: pd.DataFrame, host_rate_gbps: float) -> float:
    """Incast throughput as % of the client's link: bytes of all requests over the time their
    requests took (each request from its first start to its last finish), CONGA §5.3."""
    f = flows[flows["finished"] == 1]
    if f.empty:
        return 0.0
    g = f.groupby("group").agg(start=("start_ms", "min"), end=("end_ms", "max"), size=("size_bytes", "sum"))
    dur = float((g["end"] - g["start"]).sum())
    return float(g["size"].sum()) * 8 / (dur * 1e-3) / (host_rate_gbps * 1e9) * 100 if dur > 0 else math.nan


def _point_metrics(p: PointResult, c: Condition) -> Dict[str, float]:
    if c.family == "bulk":
        opt = max_flow_gbps(p.scenario) * payload_share(p.summary, p.scenario)
        return {UTIL: 100 * float(p.summary["goodput_gbps"]) / opt if opt else math.nan}
    flows = p.table("flows")
    if c.family == "incast":
        rate = rate_gbps(p.scenario.get("topology", {}).get("host_rate", "10Gbps"))
        return {INCAST: incast_throughput_pct(flows, rate)}
    st = flow_stats(flows)
    return {MEAN_FCT: st["fct_lb_ms"], P99_SMALL: st["small_p99_fct_ms"],
            "_unfinished": st["unfinished"], "_share": st["unfinished"] / st["flows"] if st["flows"] else math.nan,
            "_growth": fct_growth(flows, p.scenario)}


TABLE_COLUMNS = ["condition", "scheme", "metric", "value", "seeds", "min", "max", "ratio_to_ecmp", "ratio_to_best", "status",
                 "note", "unfinished", "fct_growth"]


def _reduce(points: List[PointResult], ctx: Ctx) -> Reduction:
    by_cond = {c.name: c for c in conditions_for(ctx.mode) if ctx.keeps("condition", c.name)}
    per: Dict[Tuple[str, str], List[PointResult]] = {}
    for p in points:
        per.setdefault((p.labels["condition"], p.labels["scheme"]), []).append(p)
    rows: List[Dict[str, Any]] = []
    costs: List[Dict[str, Any]] = []
    schemes = [s for s in ctx.schemes if ctx.keeps("scheme", s)]
    for c in by_cond.values():
        for s in schemes:
            pts = per.get((c.name, s), [])
            problem = None if pts else (cell_problem(c, s, ctx.mode, ctx.scenarios) or "no point ran")
            ok = [p for p in pts if p.ok]
            per_seed = [_point_metrics(p, c) for p in ok]
            for p in pts:
                costs.append({"condition": c.name, "scheme": s, "seed": p.seed, "status": p.status,
                              "wall_time_s": float(p.entry.meta.get("wall_time_s", math.nan)) if p.entry is not None else math.nan})
            failed = [p for p in pts if not p.ok]
            is_unstable = bool(per_seed) and c.family not in ("bulk", "incast") and unstable(
                [m["_share"] for m in per_seed], [m["_growth"] for m in per_seed])
            for metric in c.metrics:
                row: Dict[str, Any] = {"condition": c.name, "scheme": s, "metric": metric, "value": math.nan, "seeds": 0,
                                       "min": math.nan, "max": math.nan, "ratio_to_ecmp": math.nan, "ratio_to_best": math.nan,
                                       "status": "n/a", "note": "", "unfinished": math.nan, "fct_growth": math.nan}
                if problem is not None:
                    row["note"] = problem
                elif not per_seed:
                    row["status"], row["note"] = "failed", (failed[0].error or "failed") if failed else "failed"
                else:
                    v = np.array([m[metric] for m in per_seed], dtype=float)
                    fin = v[np.isfinite(v)]
                    row.update(value=float(fin.mean()) if len(fin) else math.nan, seeds=len(per_seed),
                               min=float(fin.min()) if len(fin) else math.nan, max=float(fin.max()) if len(fin) else math.nan,
                               status="unstable" if is_unstable else "ok")
                    if "_unfinished" in per_seed[0]:
                        row["unfinished"] = float(np.mean([m["_unfinished"] for m in per_seed]))
                        gr = [m["_growth"] for m in per_seed if np.isfinite(m["_growth"])]
                        row["fct_growth"] = float(np.mean(gr)) if gr else math.nan
                    if failed:
                        row["note"] = f"{len(failed)} of {len(pts)} seeds failed: {failed[0].error}"
                rows.append(row)
    t = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    if not t.empty:
        for (cond, metric), sub in t.groupby(["condition", "metric"], sort=False):
            low = LOWER_BETTER[metric]
            ecmp = sub[(sub["scheme"] == "ecmp") & sub["value"].notna()]["value"]
            base = float(ecmp.iloc[0]) if len(ecmp) else math.nan
            good = sub[(sub["status"] == "ok") & sub["value"].notna() & (sub["value"] > 0)]["value"]
            best = (float(good.min()) if low else float(good.max())) if len(good) else math.nan
            idx = sub.index
            vals = t.loc[idx, "value"].astype(float)
            t.loc[idx, "ratio_to_ecmp"] = vals / base if base and np.isfinite(base) else math.nan
            with np.errstate(divide="ignore", invalid="ignore"):
                t.loc[idx, "ratio_to_best"] = (vals / best) if low else (best / vals)
    return Reduction(t, {"points": pd.DataFrame(costs, columns=["condition", "scheme", "seed", "status", "wall_time_s"])})


# ----------------------------------------------------------------------------- heatmap


def _cell_text(r: Mapping[str, Any]) -> str:
    if r["status"] == "n/a":
        return "n/a"
    if r["status"] == "failed":
        return "failed"
    if r["status"] == "unstable":
        return "unstable"
    x = r["ratio_to_best"]
    return f"{x:.2f}" if np.isfinite(x) else "-"


def _plot(red: Reduction, path: Path) -> None:
    from .. import plots

    plt = plots._plt()
    t = red.table
    if t.empty:
        fig, ax = plt.subplots(figsize=(4, 2))
        ax.text(0.5, 0.5, "no cells", ha="center")
        ax.axis("off")
        plots._save(fig, path)
        return
    rows = list(dict.fromkeys(zip(t["condition"], t["metric"])))
    cols = list(dict.fromkeys(t["scheme"]))
    m = np.full((len(rows), len(cols)), np.nan)
    text = [["" for _ in cols] for _ in rows]
    for _, r in t.iterrows():
        i, j = rows.index((r["condition"], r["metric"])), cols.index(r["scheme"])
        text[i][j] = _cell_text(r)
        if r["status"] == "ok" and np.isfinite(r["ratio_to_best"]):
            m[i, j] = math.log(max(1.0, min(float(r["ratio_to_best"]), 4.0)), 4.0)
    fig, ax = plt.subplots(figsize=(2.5 + 0.75 * len(cols), 1.3 + 0.32 * len(rows)))
    cmap = plt.get_cmap("RdYlGn_r").with_extremes(bad="#e6e6e6")
    ax.imshow(np.ma.masked_invalid(m), cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
    from matplotlib.patches import Rectangle

    for i in range(len(rows)):
        for j in range(len(cols)):
            s = text[i][j]
            if s in ("unstable", "failed"):  # set apart from n/a: it ran, and could not carry the load
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor="#d8c8ea" if s == "unstable" else "#f4b6b6",
                                       edgecolor="white", hatch="//", linewidth=0))
            dark = np.isfinite(m[i, j]) and m[i, j] > 0.8
            ax.text(j, i, s, ha="center", va="center", fontsize=6.5 if len(s) > 4 else 7.5,
                    color="white" if dark else "#444444" if s in ("n/a", "unstable", "failed", "-") else "black")
    short = {MEAN_FCT: "mean FCT", P99_SMALL: "p99 <100KB", UTIL: "% of optimum", INCAST: "% of link"}
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{c}: {short.get(mt, mt)}" for c, mt in rows], fontsize=7.5)
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels(cols, rotation=45, ha="right", fontsize=8)
    ax.set_title("Ratio to the best scheme of each condition (1.00 = best; colour log scale, 4x and worse red)", fontsize=8.5)
    plots._save(fig, path)


# ----------------------------------------------------------------------------- report


def _pivot(t: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """Conditions x schemes, each cell "value (ratio to best)", "unstable (value)" or "n/a"."""
    sub = t[t["metric"].isin(metrics)]
    if sub.empty:
        return pd.DataFrame()
    cols = list(dict.fromkeys(sub["scheme"]))
    out = []
    for (cond, metric), g in sub.groupby(["condition", "metric"], sort=False):
        row: Dict[str, Any] = {"condition": cond, "metric": metric}
        for _, r in g.iterrows():
            if r["status"] == "ok":
                row[r["scheme"]] = f"{r['value']:.3g} ({r['ratio_to_best']:.2f})" if np.isfinite(r["value"]) else "-"
            elif r["status"] == "unstable":
                row[r["scheme"]] = f"unstable ({r['value']:.3g})"
            else:
                row[r["scheme"]] = r["status"]
        out.append(row)
    return pd.DataFrame(out, columns=["condition", "metric", *cols])


def _na_reasons(t: pd.DataFrame) -> List[str]:
    """One line per (scheme, reason): the conditions it cannot serve and why."""
    na = t[t["status"].isin(["n/a", "failed"])].drop_duplicates(["condition", "scheme"])
    out = []
    for (s, note), g in na.groupby(["scheme", "note"], sort=False):
        out.append(f"`{s}` on {', '.join(g['condition'])}: {note}")
    return out


def _conditions_table(mode: str, names: Sequence[str]) -> pd.DataFrame:
    rows = []
    for c in conditions_for(mode):
        if c.name not in names:
            continue
        rl = c.run_length(mode) or c.run_length("full")
        assert rl is not None
        rows.append({"condition": c.name, "scenario": f"scenarios/{c.scenario}",
                     "overrides": ", ".join(f"{k}={v}" for k, v in c.overrides) or "-", "source": c.source,
                     "metric": "; ".join(c.metrics),
                     "arrivals / warm-up / drain": " / ".join(rl) if c.family != "incast" else "10 requests, 100 ms apart"})
    return pd.DataFrame(rows)


def _html_table(df: pd.DataFrame) -> str:
    if df is None or df.empty:
        return "<p>(empty table)</p>"
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = []
    for _, r in df.iterrows():
        cells = []
        for c in df.columns:
            v = r[c]
            s = "" if isinstance(v, float) and math.isnan(v) else (f"{v:.4g}" if isinstance(v, float) else str(v))
            cls = " class='na'" if s in ("n/a", "failed") else (" class='unstable'" if s.startswith("unstable") else "")
            cells.append(f"<td{cls}>{html.escape(s)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


_CSS = ("body{font-family:sans-serif;margin:2em;max-width:110em}table{border-collapse:collapse;font-size:0.85em;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:0.25em 0.5em;text-align:left}th{background:#f0f0f0}td.na{color:#888}"
        "td.unstable{color:#a33}img{max-width:100%}code{background:#f4f4f4}")


def _report(exp_dir: Path, red: Reduction, rec: Mapping[str, Any]) -> List[str]:
    """report.md and the self-contained report.html (the heatmap embedded as a data URI)."""
    t = red.table
    mode = str(rec["mode"])
    if mode == "quick":
        mode_text = ("quick run: a pipeline check (web-search conditions only, short runs, one seed), "
                     "not the leaderboard; docs/LEADERBOARD.md shows the standard form")
    elif mode == "smoke":
        mode_text = "smoke run: one condition, a few milliseconds; it checks the pipeline only"
    else:
        mode_text = f"standard form, {rec['seeds']} seed(s) per cell"
    if rec.get("only"):
        mode_text += "; only " + "; ".join(f"{k} {', '.join(vs)}" for k, vs in rec["only"].items())
    costs = red.extra.get("points", pd.DataFrame())
    head = [
        ("Paper", "every paper of the field; the conditions each argued from (below)"),
        ("Paper's claim", str(rec["claim"])),
        ("Ours", str(rec["ours"])),
        ("Status", f"{rec['status']} ({mode_text})"),
        ("Command", f"`{rec['command']}`"),
        ("Wall time", f"{rec['wall_time_s']:.0f} s for {rec['points']} points ({rec['computed']} computed, "
                      f"{rec['points'] - rec['computed']} from the cache or failed); summed point time "
                      f"{float(costs['wall_time_s'].sum()) if len(costs) else 0.0:.0f} s"),
    ]
    groups = [("Flow completion times", [MEAN_FCT, P99_SMALL]), ("Throughput", [UTIL, INCAST])]
    rule = (f"A cell is **unstable** when the scheme cannot carry the condition's load: more than {UNFINISHED_MAX:.0%} of "
            f"its measured flows are unfinished at the end of the drain (mean over seeds), or, in every seed, the mean "
            f"FCT (unfinished flows at their lower bound) of the measured flows below {GROWTH_BYTES / 1e6:.0f} MB that "
            f"start in the second half of the measurement window is more than {GROWTH_MAX}x that of the first half. "
            f"Its value is in table.csv; it is not a candidate for the best scheme.")
    cells = "Cells: value (ratio to the best scheme of the condition; 1.00 = best). Ratios to ECMP are in table.csv."
    na = _na_reasons(t)
    notes = list(rec.get("notes", ()))
    failed = list(rec.get("failed", ()))
    files = ["table.csv", "heatmap.png", "points.csv", "report.md", "report.html", "result.json"]

    md = [f"# {rec['name']}: {rec['title']}", ""] + [f"- **{k}:** {v}" for k, v in head] + ["", "![heatmap](heatmap.png)", ""]
    for title, metrics in groups:
        pv = _pivot(t, metrics)
        if not pv.empty:
            md += [f"## {title}", "", cells, "", markdown_table(pv, max_rows=200), ""]
    md += ["## Unstable cells", "", rule, ""]
    if na:
        md += ["## Why cells are n/a", ""] + [f"- {x}" for x in na] + [""]
    if failed:
        md += ["## Failed points", ""] + [f"- {lab}: {err}" for lab, err in failed] + [""]
    md += ["## Conditions", "", markdown_table(_conditions_table(mode, list(t["condition"].unique())), max_rows=100), ""]
    md += [claims_markdown(rec.get("claims", ())), "## Notes", ""] + [f"- {n}" for n in notes] + [""]
    md += ["Files: " + ", ".join(f"`{f}`" for f in files) + ". How the leaderboard is defined: docs/LEADERBOARD.md.", ""]
    (exp_dir / "report.md").write_text("\n".join(md), encoding="utf-8")

    png = exp_dir / "heatmap.png"
    img = base64.b64encode(png.read_bytes()).decode("ascii") if png.is_file() else ""

    def inline(s: str) -> str:
        parts = html.escape(s).split("`")
        return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts)).replace("**", "")

    h = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>", f"<title>fabriclb {html.escape(str(rec['name']))}</title>",
         f"<style>{_CSS}</style></head><body>", f"<h1>{html.escape(str(rec['name']))}: {html.escape(str(rec['title']))}</h1>",
         "<ul>" + "".join(f"<li><b>{html.escape(k)}:</b> {inline(v)}</li>" for k, v in head) + "</ul>"]
    if img:
        h.append(f"<img alt='heatmap' src='data:image/png;base64,{img}'>")
    for title, metrics in groups:
        pv = _pivot(t, metrics)
        if not pv.empty:
            h += [f"<h2>{html.escape(title)}</h2>", f"<p>{inline(cells)}</p>", _html_table(pv)]
    h += ["<h2>Unstable cells</h2>", f"<p>{inline(rule)}</p>"]
    if na:
        h += ["<h2>Why cells are n/a</h2>", "<ul>" + "".join(f"<li>{inline(x)}</li>" for x in na) + "</ul>"]
    if failed:
        h += ["<h2>Failed points</h2>", "<ul>" + "".join(f"<li>{inline(f'{a}: {b}')}</li>" for a, b in failed) + "</ul>"]
    h += ["<h2>Conditions</h2>", _html_table(_conditions_table(mode, list(t["condition"].unique())))]
    claims = pd.DataFrame(list(rec.get("claims", ())), columns=["paper", "tag", "rule", "ours", "verdict"])
    h += ["<h2>The paper's numbers</h2>", _html_table(claims)]
    h += ["<h2>Notes</h2>", "<ul>" + "".join(f"<li>{inline(n)}</li>" for n in notes) + "</ul>"]
    h += ["<h2>Table</h2>", _html_table(t), "</body></html>", ""]
    (exp_dir / "report.html").write_text("\n".join(h), encoding="utf-8")
    return ["heatmap.png", "points.csv", "report.html"]


def _ours(red: Reduction) -> str:
    t = red.table
    if t.empty:
        return "-"
    parts = []
    for (cond, metric), g in t.groupby(["condition", "metric"], sort=False):
        if metric == P99_SMALL:
            continue
        ok = g[(g["status"] == "ok") & g["value"].notna()]
        if ok.empty:
            parts.append(f"{cond}: no stable cell")
            continue
        best = ok.loc[ok["value"].idxmin() if LOWER_BETTER[metric] else ok["value"].idxmax()]
        n_un = int((g["status"] == "unstable").sum())
        parts.append(f"{cond}: best {best['scheme']}" + (f", {n_un} unstable" if n_un else ""))
    return "; ".join(parts)


_NOTES = (
    "One transport for all (the Hermes authors' simulation settings, ../shared/SCHEMES.md §9, §12.1.7): DCTCP, IW 10, "
    "minRTO 5 ms (incast-32: 1 ms), SYN timeout 5 ms, no delayed ACKs, MTU 1500; switch ports of 600 full-size packets "
    "with ECN marking at 65 packets per 10 Gbps of port rate (1 bdp at base_rtt 78 us); the overlay header on every packet "
    "between leaves whatever the scheme. mptcp keeps its LIA subflows (ECN-capable).",
    "A scheme declares what it needs through the core's validation: each (condition, scheme) is validated before it "
    "runs and an error becomes the cell's n/a with the core's reason. No list of schemes is kept in Python.",
    "FCT metrics count the flows that start after the warm-up; the mean puts unfinished flows at their lower bound "
    "(the run's end minus their start), the p99 of flows < 100 KB counts finished ones (unfinished in table.csv).",
    "Seeds: run seeds 1..N; the asym20 fabric's 13 degraded links are fixed in its scenario file (a topology seed of "
    "its own), so every run seed sees the same fabric.",
)


EXPERIMENTS = [
    Experiment(
        NAME, "Every paper of the field", "leaderboard", "every scheme on every paper's conditions",
        "No two papers' numbers can be put side by side (each its own simulator, settings and workloads); here every "
        "registered scheme runs each paper's conditions with one transport, the same workloads and seeds.",
        scenarios=tuple(sorted({c.scenario for c in CONDITIONS})),
        requires=("workload:poisson",),
        grid=_grid, tables=("flows",), reduce=_reduce, plot=_plot, ours=_ours,
        claims=(
            Claim("each paper compares its scheme with two or three others on its own simulator (CONGA §5, Hermes §5, "
                  "EMAN §V, Expeditus §3)", NOT_COMPARABLE,
                  "the leaderboard judges no paper's number: each paper's figures are its own experiments "
                  "(conga-fig*, eman-fig*, expeditus-fig*); here all schemes meet on common conditions"),
        ),
        notes=_NOTES,
        full_seeds=3,
        fixed_status="n/a: leaderboard",
        plot_file="heatmap.png",
        report=_report,
        protocol=protocol_rows,
        # A condition's cells need only its own points (its ratios are within it).
        parts=("condition", "scheme"),
    ),
]
