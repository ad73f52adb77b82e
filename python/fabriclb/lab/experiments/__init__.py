"""The registry of published experiments: each a base scenario, a grid, a reduction to the
figure's table, a plot, and every number the paper states for the figure with the rule that
judges it (docs/LAB.md). One module per paper: :mod:`.conga` (Fig. 5 in :mod:`.conga_flowlets`; the host
ablation of its Figs. 9-10 in :mod:`.conga_ablation`, MPTCP's in :mod:`.conga_mptcp_ablation`; Fig. 14, the HDFS job, in :mod:`.conga_hdfs`), :mod:`.expeditus`,
:mod:`.eman`, and the leaderboard of all schemes on all the papers' conditions (:mod:`.leaderboard`);
:mod:`.common` holds the types, the judging and the shared helpers.

``fabriclb reproduce NAME --out DIR`` (or :func:`reproduce`) writes ``DIR/NAME/table.csv``,
``plot.png``, ``report.md`` and ``result.json``. Forms of the grid:

- ``full``: the paper's grid (loads, schemes, 5 seeds with the range as error bars);
- ``settle`` (``--settle``, the experiments that have one): the loads where the paper makes its
  claims, with the full run length and seeds; under an hour on two cores where the claims allow;
- ``quick`` (``--quick``): a reduced grid that runs in minutes on two cores;
- ``smoke``: a tiny grid (seconds) that the test suite runs to exercise the whole pipeline.

An experiment is ``ready`` when every scheme, workload pattern and scenario file it needs is
present (asked of the compiled core, so readiness follows the code as schemes land), and
``waiting: <what it needs>`` otherwise. A run's status (match, partial, differs,
waiting: <scheme>, n/a) is decided by :func:`.common.judge` from the experiment's claims.
"""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from ..report import claims_markdown, write_report, write_result_json
from ..sweep import PointSpec, run_points
from . import conga, conga_ablation, conga_flowlets, conga_hdfs, conga_mptcp_ablation, eman, expeditus, leaderboard
from .common import (
    COMPARABLE,
    CONCEPTUAL,
    MODES,
    NOT_COMPARABLE,
    Claim,
    Ctx,
    Experiment,
    Reduction,
    core_lists,
    default_seeds,
    judge,
    missing,
    modes_of,
    refresh,
    scenarios_dir,
)
from .eman import max_flow_gbps

__all__ = [
    "Experiment",
    "SelectionError",
    "Claim",
    "Ctx",
    "Reduction",
    "EXPERIMENTS",
    "MODES",
    "modes_of",
    "COMPARABLE",
    "CONCEPTUAL",
    "NOT_COMPARABLE",
    "experiment_names",
    "experiment_status",
    "experiment_statuses",
    "max_flow_gbps",
    "reproduce",
]

PathLike = Union[str, Path]

EXPERIMENTS: Dict[str, Experiment] = {
    e.name: e
    for e in (*conga.EXPERIMENTS, *conga_flowlets.EXPERIMENTS, *conga_ablation.EXPERIMENTS, *conga_mptcp_ablation.EXPERIMENTS,
              *conga_hdfs.EXPERIMENTS,
              *expeditus.EXPERIMENTS, *eman.EXPERIMENTS, *leaderboard.EXPERIMENTS)
}


def experiment_status(exp: Union[str, Experiment]) -> str:
    """``ready``, or ``waiting: <what it needs>`` (schemes, workloads, scenario files)."""
    e = EXPERIMENTS[exp] if isinstance(exp, str) else exp
    m = missing(e)
    return "ready" if not m else "waiting: " + ", ".join(m)


def experiment_statuses() -> List[Tuple[str, str]]:
    """(name, status) of every experiment, for ``fabriclb list``."""
    return [(n, experiment_status(e)) for n, e in EXPERIMENTS.items()]


def experiment_names() -> List[str]:
    return list(EXPERIMENTS)


def _command(name: str, mode: str, seeds: Optional[int], out: Path, ray: Optional[str],
             only: Sequence[Tuple[str, Sequence[str]]] = ()) -> str:
    parts = ["fabriclb", "reproduce", name]
    if mode != "full":
        parts.append(f"--{mode}")
    if seeds:
        parts += ["--seeds", str(seeds)]
    for k, vs in only:
        parts += ["--only", f"{k}={','.join(vs)}"]
    if ray:
        parts += ["--ray", ray]
    parts += ["--out", str(out)]
    return " ".join(shlex.quote(p) for p in parts)


def _form(rec: Mapping[str, Any]) -> Tuple[Any, ...]:
    """What makes two runs of an experiment the same form (a record without "only" is whole)."""
    return rec.get("mode"), rec.get("seeds"), rec.get("only") or {}, rec.get("points")


def _first_run(exp_dir: Path, rec: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The wall time of the run that computed every point of this form: this run's, or, when
    this one read all of them from the cache, the one recorded by the previous run of the same
    form in ``exp_dir`` (so a rerun after a report change keeps what the form costs). A run
    that computed some points only has none: no single run computed them all."""
    if rec["computed"] == rec["points"]:
        return {"points": rec["points"], "wall_time_s": rec["wall_time_s"]}
    if rec["computed"] > 0:
        return None
    try:
        prev = json.loads((exp_dir / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if _form(prev) != _form(rec):
        return None
    if prev.get("first_run"):
        return prev["first_run"]
    if prev.get("computed") == prev.get("points"):
        return {"points": prev["points"], "wall_time_s": prev.get("wall_time_s")}
    return None


class SelectionError(ValueError):
    """An ``only`` the experiment cannot take: it is not run in parts, or it names a label it is
    not split by or a value its grid does not have."""


def _only(name: str, exp: Experiment, only: Optional[Mapping[str, Union[str, Sequence[str]]]]) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    """``only`` as sorted (label, values as text) pairs, for the labels ``exp.parts`` allows."""
    if not only:
        return ()
    if not exp.parts:
        can = [n for n, e in EXPERIMENTS.items() if e.parts]
        raise SelectionError(f"--only: {name} is not run in parts; experiments that are: {', '.join(can)}")
    out = []
    for k, vs in sorted(only.items()):
        if k not in exp.parts:
            raise SelectionError(f"--only {k}=...: {name} is run in parts by {', '.join(exp.parts)} only")
        out.append((k, tuple(str(v) for v in ((vs,) if isinstance(vs, str) else vs))))
    return tuple(out)


def _select(points: List[PointSpec], ctx: Ctx) -> List[PointSpec]:
    """The grid's points ``ctx.only`` keeps; a value no point has is an error (a typo would
    otherwise run nothing)."""
    for k, vs in ctx.only:
        have = sorted({str(dict(p.labels)[k]) for p in points if k in dict(p.labels)})
        bad = [v for v in vs if v not in have]
        if bad:
            raise SelectionError(f"--only {k}={','.join(vs)}: no point of this grid has {k} = {', '.join(bad)}; "
                                 f"its values: {', '.join(have) or 'none'}")
    return [p for p in points if all(ctx.keeps(k, dict(p.labels).get(k)) for k, _ in ctx.only)]


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
    only: Optional[Mapping[str, Sequence[str]]] = None,
) -> Dict[str, Any]:
    """Run experiment ``name`` and write ``out/name/{table.csv, plot.png, report.md,
    result.json}``. ``mode``: "full", "settle" (where the experiment has it), "quick" or "smoke"; ``seeds``:
    runs per point (default: the paper's for full and settle, 1 otherwise); ``cache``: the result cache (default ``out/.cache``,
    shared by all experiments written under ``out``); ``only``: for an experiment with
    ``parts``, run only the grid's points whose labels take these values (e.g.
    ``{"condition": ["fattree-k8"]}``): a long form in parts sharing the cache; the part's
    report covers those points, and its result.json is not the experiment's (a run without
    ``only`` afterwards reads every point from the cache and writes the whole). Returns the result record: name, claim,
    ours, status, claims (one row per paper number), mode, failed points, table. Raises
    ``RuntimeError`` when the experiment is waiting for something, ``KeyError`` for an unknown
    name, ``SelectionError`` for an ``only`` it cannot take."""
    if name not in EXPERIMENTS:
        raise KeyError(f"unknown experiment '{name}'; known: {', '.join(EXPERIMENTS)}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    exp = EXPERIMENTS[name]
    if mode not in modes_of(exp):
        raise ValueError(f"{name} has no {mode} form; its forms: {', '.join(modes_of(exp))}")
    refresh()
    status = experiment_status(exp)
    if status != "ready" and not force:
        raise RuntimeError(f"{name} is {status}")
    only_t = _only(name, exp, only)
    out_root = Path(out)
    exp_dir = out_root / name
    command = _command(name, mode, seeds, out_root, ray, only_t)
    t0 = time.time()
    if exp.delegate:
        exp_dir.mkdir(parents=True, exist_ok=True)
        from ...analysis.experiments import run_experiment

        res = run_experiment(exp.delegate, exp_dir, quick=mode != "full", seed=0)
        status = str(res.get("status", "n/a"))
        # The analysis judges its claims together: each row carries that verdict.
        claim_rows = [{"paper": c.paper, "tag": c.tag, "rule": c.rule, "ours": "", "verdict": status} for c in exp.claims]
        with open(exp_dir / "report.md", "a", encoding="utf-8") as f:
            f.write(f"\n{claims_markdown(claim_rows)}\nCommand: `{command}`\n")
        rec = {"name": name, "paper": exp.paper, "figure": exp.figure, "claim": res.get("claim", exp.claim),
               "ours": res.get("ours", ""), "status": status, "claims": claim_rows, "mode": mode, "failed": [],
               "command": command, "wall_time_s": round(time.time() - t0, 2)}
        write_result_json(exp_dir, rec)
        tab = res.get("table")
        rec["table"] = tab if isinstance(tab, pd.DataFrame) else pd.read_csv(exp_dir / "table.csv")
        return rec
    assert exp.grid and exp.reduce and exp.plot and exp.ours
    n_seeds = seeds if seeds else default_seeds(exp, mode)
    schemes, _ = core_lists()
    ctx = Ctx(mode=mode, seeds=n_seeds, schemes=schemes, scenarios=scenarios_dir(), only=only_t)
    points = _select(exp.grid(ctx), ctx)
    exp_dir.mkdir(parents=True, exist_ok=True)
    results = run_points(points, cache=cache or out_root / ".cache", tables=exp.tables, jobs=jobs, ray=ray,
                         progress=progress, desc=name)
    failed = [(", ".join(f"{k}={v}" for k, v in r.spec.labels) + f", seed={r.seed}", r.error or "") for r in results if not r.ok]
    red: Reduction = exp.reduce(results, ctx)
    from ...result import write_csv

    write_csv(exp_dir / "table.csv", red.table)
    extra_files = []
    for k, df in red.extra.items():
        write_csv(exp_dir / f"{k}.csv", df)
        extra_files.append(f"{k}.csv")
    exp.plot(red, exp_dir / exp.plot_file)
    if (exp_dir / "queue_cdf.png").exists():
        extra_files.append("queue_cdf.png")
    ours = exp.ours(red)
    status, claim_rows = judge(exp.claims, red, schemes)
    status = exp.fixed_status or status
    if failed and status in ("match", "partial"):
        status += " (some points failed)"
    rec = {"name": name, "paper": exp.paper, "figure": exp.figure, "claim": exp.claim, "ours": ours, "status": status,
           "claims": claim_rows, "mode": mode, "seeds": n_seeds, "only": {k: list(vs) for k, vs in only_t}, "points": len(points),
           "computed": sum(r.status == "computed" for r in results), "failed": failed, "command": command,
           "wall_time_s": round(time.time() - t0, 2)}
    rec["first_run"] = _first_run(exp_dir, rec)
    if exp.report is not None:
        exp.report(exp_dir, red, {**rec, "title": exp.title, "notes": exp.notes})
    else:
        write_report(exp_dir, name=name, title=exp.title, paper=exp.paper, figure=exp.figure, claim=exp.claim, ours=ours,
                     status=status, claims=claim_rows, table=red.table, command=command, mode=mode, notes=exp.notes,
                     failed=failed, extra_files=extra_files)
    write_result_json(exp_dir, rec)
    rec["table"] = red.table
    return rec
