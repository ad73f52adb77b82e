"""Reports: ``report.md`` and ``result.json`` per experiment, and the collected
``docs/REPRODUCTION.md`` (see ``tools/gen_reproduction.py``)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import pandas as pd

__all__ = ["markdown_table", "claims_markdown", "write_report", "write_result_json", "read_results", "reproduction_markdown", "rules_markdown",
           "STATUS_TEXT"]

#: The status vocabulary, for reports and docs/REPRODUCTION.md (docs/LAB.md, "Statuses").
STATUS_TEXT = (
    "**match** (every comparable number of the paper within its tolerance), **partial** (some within, none outside, "
    "others waiting for a scheme or not measured by this grid), **differs** (a comparable number outside its tolerance; "
    "the experiment's report says how and why), **waiting: <scheme>** (no comparable number measured yet, some need a "
    "scheme the simulator lacks), **n/a** (nothing comparable: every number is conceptual or not comparable), "
    "**not run**. An experiment that cannot run at all shows what it needs (waiting: scheme X, scenario Y)."
)


def _cell(v: Any) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return f"{v:.4g}"
    return str(v).replace("|", "\\|")


def markdown_table(df: pd.DataFrame, max_rows: int = 60) -> str:
    """A pipe table of ``df`` (floats to 4 significant digits), cut at ``max_rows`` rows."""
    if df is None or df.empty:
        return "(empty table)"
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, row in df.head(max_rows).iterrows():
        lines.append("| " + " | ".join(_cell(row[c]) for c in df.columns) + " |")
    if len(df) > max_rows:
        lines.append(f"\n({len(df) - max_rows} more rows in table.csv)")
    return "\n".join(lines)


def claims_markdown(claims: Sequence[Mapping[str, str]]) -> str:
    """The "paper's numbers" section of a report: one row per claim with our value and verdict."""
    lines = ["## The paper's numbers", "", "| the paper states | tag | rule | ours | verdict |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(_cell(c.get(k, "")) for k in ("paper", "tag", "rule", "ours", "verdict")) + " |" for c in claims]
    return "\n".join(lines) + "\n"


def write_report(
    out_dir: Path,
    *,
    name: str,
    title: str,
    paper: str,
    figure: str,
    claim: str,
    ours: str,
    status: str,
    claims: Sequence[Mapping[str, str]] = (),
    table: pd.DataFrame,
    command: str,
    mode: str,
    notes: Sequence[str] = (),
    failed: Sequence[Tuple[str, str]] = (),
    extra_files: Sequence[str] = (),
) -> Path:
    lines = [
        f"# {name}: {title}",
        "",
        f"- **Paper:** {paper}, {figure}",
        f"- **Paper's claim:** {claim}",
        f"- **Ours:** {ours}",
        f"- **Status:** {status}" + {"full": "", "settle": " (settling form: the paper's claims at the loads it makes them, 5 seeds)"}.get(
            mode, f" ({mode} run: a reduced grid, not the paper's)"),
        f"- **Command:** `{command}`",
        "",
    ]
    if claims:
        lines += [claims_markdown(claims)]
    lines += ["## Table", "", markdown_table(table), ""]
    if failed:
        lines += ["## Failed points", ""] + [f"- {lab}: {err}" for lab, err in failed] + [""]
    if notes:
        lines += ["## Notes and differences", ""] + [f"- {n}" for n in notes] + [""]
    files = ["table.csv", "plot.png", *extra_files]
    lines += ["Files: " + ", ".join(f"`{f}`" for f in files) + ". How experiments are defined: docs/LAB.md.", ""]
    p = out_dir / "report.md"
    p.write_text("\n".join(lines), encoding="utf-8")
    return p


def write_result_json(out_dir: Path, rec: Mapping[str, Any]) -> None:
    with open(out_dir / "result.json", "w", encoding="utf-8") as f:
        json.dump(dict(rec), f, sort_keys=True, indent=2, default=str)
        f.write("\n")


def read_results(out_root: Path) -> Dict[str, Dict[str, Any]]:
    """``result.json`` of every experiment folder under ``out_root`` (by experiment name), but
    not a part's (``--only``)."""
    out: Dict[str, Dict[str, Any]] = {}
    if not out_root.is_dir():
        return out
    for d in sorted(out_root.iterdir()):
        p = d / "result.json"
        if p.is_file():
            try:
                rec = json.loads(p.read_text(encoding="utf-8"))
            except ValueError:
                continue
            if rec.get("only"):
                continue  # a part of the grid (`--only`), not the experiment's run
            out[str(rec.get("name", d.name))] = rec
    return out


#: Which run a docs/REPRODUCTION.md row reports when several forms of an experiment have run:
#: the paper's whole grid, else the settling form, else the quick form.
FORM_RANK = {"full": 3, "settle": 2, "quick": 1, "smoke": 0}


def _run_cell(name: str, rec: Mapping[str, Any]) -> str:
    """The "run" cell: the form, and for the settling and full forms the command and the size
    and wall time of the run that computed every point (that run, or an earlier one when this
    one read the cache: ``first_run``)."""
    mode = str(rec.get("mode", "-"))
    if mode not in ("settle", "full"):
        return mode
    cmd = f"fabriclb reproduce {name}" + (" --settle" if mode == "settle" else "")
    cell = f"{mode}: `{cmd}`"
    first = rec.get("first_run") or {}
    pts, wall = first.get("points"), first.get("wall_time_s")
    if pts and wall is not None:
        minutes = float(wall) / 60
        cell += f" ({pts} runs, {minutes:.0f} min)" if minutes >= 1.5 else f" ({pts} runs, {float(wall):.0f} s)"
    return cell


def reproduction_markdown(
    experiments: Sequence[Any],
    results: Mapping[str, Sequence[Mapping[str, Any]]],
    statuses: Mapping[str, str],
    *,
    source: str = "",
    kept: "Mapping[str, Sequence[str]] | None" = None,
) -> str:
    """docs/REPRODUCTION.md: one row per experiment - paper claim, our number, status - from
    its most complete run (``FORM_RANK``), and the quick form's number and status in a column of
    their own. ``results`` holds each experiment's result records (any forms); ``kept`` the
    (ours, status, run, quick) cells of an earlier version of the document
    (``reproduction_rows``): a kept row stays unless a run of at least its form replaces it,
    and its quick cell unless a quick run replaces it."""
    lines = [
        "# Reproduction status",
        "",
        "Generated by `tools/gen_reproduction.py` from the experiments' `result.json` / `report.md`"
        + (f" in `{source}`" if source else "")
        + (" (rows of experiments not run there kept from the previous version)" if kept else "")
        + "; do not edit by hand. Each experiment runs with `fabriclb reproduce NAME --out DIR`"
        " (`--settle` for the settling form of CONGA Figs. 9-12, 15 and 16, `--quick` for the reduced"
        " grid); how each is defined is in docs/LAB.md. A row reports the most complete form that has"
        " run (full, else settle, else quick); the last column keeps the quick form's result.",
        "",
        "Status: " + STATUS_TEXT + " The rules, per number, are in docs/LAB.md.",
        "",
        "| experiment | paper, figure | paper's claim | ours | status | run | quick form |",
        "|---|---|---|---|---|---|---|",
    ]
    for e in experiments:
        st = statuses.get(e.name, "")
        recs = sorted(results.get(e.name, ()), key=lambda r: FORM_RANK.get(str(r.get("mode")), -1), reverse=True)
        old = list(kept[e.name]) if kept and e.name in kept else None
        quick = next((r for r in recs if r.get("mode") == "quick"), None)
        if st.startswith("waiting"):
            ours, status, run, qcell = "-", st, "-", "-"
        else:
            if recs and (old is None or FORM_RANK.get(str(recs[0].get("mode")), -1) >= FORM_RANK.get(old[2].split(":")[0], -1)):
                ours, status, run = str(recs[0].get("ours", "-")), str(recs[0].get("status", "-")), _run_cell(e.name, recs[0])
            elif old is not None:
                ours, status, run = old[:3]
            else:
                ours, status, run = "-", "not run", "-"
            if run == "quick":
                qcell = "(this row)"
            elif quick is not None:
                qcell = f"{quick.get('status', '-')}: {quick.get('ours', '-')}"
            elif old is not None and old[3] not in ("", "(this row)"):
                qcell = old[3]
            elif old is not None and old[2] == "quick":
                qcell = f"{old[1]}: {old[0]}"
            else:
                qcell = "-"
        cells = [f"`{e.name}`", f"{e.paper} {e.figure}", e.claim, ours, status, run, qcell]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    lines.append("")
    return "\n".join(lines)


def reproduction_rows(md: str) -> Dict[str, List[str]]:
    """The (ours, status, run, quick form) cells of each experiment's row in a
    docs/REPRODUCTION.md written by ``reproduction_markdown``, with escaped pipes unescaped (rows
    of the older six-column table get an empty quick cell)."""
    rows: Dict[str, List[str]] = {}
    for line in md.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) in (6, 7):
            rows[cells[0].strip("`")] = (cells[3:] + [""])[:4]
    return rows


def _protocol_rows(exp: Any) -> List[str]:
    """The grid of each mode of ``exp``, read off its grid builder: axes and their values, seeds,
    run length and number of points (one row per workload when it has several)."""
    from .experiments.common import Ctx, default_seeds, modes_of

    known = {r.split(":", 1)[1] for r in exp.requires if r.startswith("scheme:")}
    known |= {s for c in exp.claims for s in c.needs} | {"local", "conga-flow", "spray", "mptcp"}
    rows = []
    for mode in modes_of(exp):
        seeds = default_seeds(exp, mode)
        pts = exp.grid(Ctx(mode=mode, seeds=seeds, schemes=tuple(sorted(known)), scenarios=Path("scenarios")))
        groups: Dict[Any, List[Any]] = {}
        for p in pts:
            groups.setdefault(dict(p.labels).get("workload", ""), []).append(p)
        for wl, gp in groups.items():
            axes: Dict[str, List[str]] = {}
            for p in gp:
                for k, v in p.labels:
                    if k == "workload":
                        continue
                    text = f"{v:.0%}" if k == "load" else str(v)
                    if text not in axes.setdefault(k, []):
                        axes[k].append(text)
            grid = "; ".join(f"{k}: " + (", ".join(v) if len(v) <= 9 else f"{len(v)} values") for k, v in axes.items())
            ov = dict(gp[0].overrides)
            run = [str(ov.get(k, "(scenario)")) for k in ("duration", "warmup", "drain")]
            n = max(p.seed for p in gp)  # the grid's own trials where it sets them
            cells = [mode, str(wl) or "-", grid, f"1-{n}" if n > 1 else "1", *run, str(len(gp))]
            rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return rows


def rules_markdown(experiments: Sequence[Any]) -> str:
    """The per-experiment rules of docs/LAB.md: for each experiment its grids (loads, schemes,
    seeds, run length per mode) and every number its paper states with tag and rule. Generated
    from the registry (``tools/gen_lab_rules.py``) so the document and the code cannot
    disagree."""
    out: List[str] = []
    for e in experiments:
        out += [f"### `{e.name}`: {e.title}", "", f"{e.paper}, {e.figure}. " + (
            f"Base scenario: {', '.join(f'`{s}`' for s in e.scenarios)}." if e.scenarios else
            f"Analytic: `fabriclb.analysis` experiment `{e.delegate}` (docs/ANALYSIS.md).")]
        if e.grid is not None:
            out += ["", "| mode | workload | grid | seeds | duration | warm-up | drain | points |", "|---|---|---|---|---|---|---|---|"]
            if getattr(e, "protocol", None) is not None:
                out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in e.protocol()]
            else:
                out += _protocol_rows(e)
        if getattr(e, "fixed_status", None):
            out += ["", f"Status fixed before any run: **{e.fixed_status}** (the numbers below are reported, not judged)."]
        out += ["", "| the paper states | tag | rule |", "|---|---|---|"]
        out += ["| " + " | ".join(_cell(x) for x in (c.paper, c.tag, c.rule)) + " |" for c in e.claims]
        out += [""]
    return "\n".join(out)
