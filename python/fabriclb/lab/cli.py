"""The lab's subcommands: ``fabriclb reproduce`` and ``fabriclb sweep``, and the
``experiments`` section of ``fabriclb list``.

Two ways to plug in:

- importing this module registers both commands and the list section with
  :mod:`fabriclb.cli` (add ``"fabriclb.lab.cli"`` to ``fabriclb.cli.EXTENSION_MODULES``);
- :func:`register` adds the two subcommands to any ``argparse`` subparsers object.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

__all__ = ["register", "configure_reproduce", "configure_sweep", "cmd_reproduce", "cmd_sweep", "experiment_statuses", "list_rows"]

REPRODUCE_HELP = "run a published experiment of the papers; writes DIR/NAME/table.csv, plot.png, report.md"
SWEEP_HELP = "run a scenario over a grid of overrides and seeds (all cores, or a Ray cluster); writes DIR/table.csv"


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, not {v}")
    return v


def _backend_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", "-j", type=_positive, default=None, metavar="N", help="local worker processes (default: all cores; 1 = in this process)")
    p.add_argument("--ray", default=None, metavar="ADDRESS", help="run on a Ray cluster (\"auto\", \"ray://host:10001\", or \"local\" to start one); needs `pip install fabriclb[ray]`")
    p.add_argument("--cache", default=None, metavar="DIR", help="result cache folder (default: OUT/.cache); points already in it are not recomputed")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def configure_reproduce(p: argparse.ArgumentParser) -> None:
    p.add_argument("names", nargs="+", metavar="NAME", help="experiment name(s) (see `fabriclb list`), or `all` for every ready one")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--settle", action="store_true",
                      help="the settling form: the loads where the paper makes its claims, full run length and seeds (CONGA Figs. 9-12, 15, 16; docs/LAB.md)")
    size.add_argument("--quick", action="store_true", help="the reduced grid (about two minutes on two cores)")
    size.add_argument("--smoke", action="store_true", help="a tiny grid that exercises the pipeline in seconds (CI)")
    p.add_argument("--seeds", type=_positive, default=None, metavar="N", help="runs per point (default: 5 for the full grid and the settling form, 1 otherwise)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder; each experiment writes DIR/NAME/")
    p.add_argument("--force", action="store_true", help="run even if the experiment is waiting for something (it will fail where that is needed)")
    p.add_argument("--skip-waiting", action="store_true", help="skip experiments that are waiting (listed, not an error)")
    p.add_argument("--only", action="append", default=[], metavar="LABEL=V1,V2,...",
                   help="run a part of the grid: the points with these label values, e.g. condition=fattree-k8 "
                        "(repeatable; for the experiments run in parts, such as the leaderboard)")
    _backend_args(p)


def configure_sweep(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenario", help="scenario file (.toml or .json)")
    p.add_argument("--grid", action="append", default=[], metavar="PATH=V1,V2,...",
                   help="an axis of the grid, e.g. --grid scheme.name=ecmp,spray --grid workload[0].load=0.3,0.6 (repeatable; 'seed=1,2,3' lists seeds)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="PATH=VALUE", help="a fixed override for every point (repeatable)")
    p.add_argument("--seeds", type=_positive, default=None, metavar="N", help="seeds 1..N per grid point (default: the scenario's seed)")
    p.add_argument("--keep", default="", metavar="TABLES", help="record tables to keep per point in the cache, e.g. flows,ports")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder: table.csv (one row per point), errors.csv")
    _backend_args(p)


def _fail(msg: str) -> None:
    from ..cli import printable

    print(f"fabriclb: {printable(msg)}", file=sys.stderr)


def _empty_out(args: argparse.Namespace) -> bool:
    if not str(args.out).strip():
        _fail("--out is empty; give a folder for the results")
        return True
    if getattr(args, "ray", None) is not None:
        import importlib.util

        if not str(args.ray).strip():
            _fail("--ray is empty; give a Ray address (\"auto\", \"ray://host:10001\") or \"local\"")
            return True
        if importlib.util.find_spec("ray") is None:
            # A missing backend is bad input (exit 2), found before anything runs.
            _fail("--ray needs Ray, which is not installed: pip install 'fabriclb[ray]' (or pip install ray)")
            return True
    return False


def cmd_reproduce(args: argparse.Namespace) -> int:
    from .experiments import EXPERIMENTS, SelectionError, experiment_status, modes_of, reproduce

    mode = "smoke" if args.smoke else "quick" if args.quick else "settle" if args.settle else "full"
    names: List[str] = []
    for n in args.names:
        if n == "all":
            # `all --settle`: every ready experiment that has a settling form.
            names += [e for e, x in EXPERIMENTS.items() if experiment_status(e) == "ready" and mode in modes_of(x)]
        elif n not in EXPERIMENTS:
            _fail(f"unknown experiment '{n}'; known: {', '.join(EXPERIMENTS)}")
            return 2
        elif mode not in modes_of(EXPERIMENTS[n]):
            having = [e for e, x in EXPERIMENTS.items() if mode in modes_of(x)]
            _fail(f"{n} has no {mode} form (its forms: {', '.join(modes_of(EXPERIMENTS[n]))}); "
                  f"experiments with one: {', '.join(having)}")
            return 2
        else:
            names.append(n)
    only: Dict[str, List[str]] = {}
    for o in args.only:
        k, eq, v = o.partition("=")
        vals = [x.strip() for x in v.split(",") if x.strip()]
        if not eq or not k.strip() or not vals:
            _fail(f"--only {o}: expected LABEL=V1,V2,... (e.g. condition=fattree-k8)")
            return 2
        only.setdefault(k.strip(), []).extend(vals)
    if only and len(names) != 1:
        _fail(f"--only runs a part of one experiment's grid, not of {len(names)} ({', '.join(names)})")
        return 2
    if _empty_out(args):
        return 2
    code = 0
    rows: List[Tuple[str, str, str]] = []
    for n in names:
        st = experiment_status(n)
        if st != "ready" and not args.force:
            if not args.skip_waiting:
                _fail(f"{n} is {st}")
                code = max(code, 2)
            rows.append((n, "-", st))
            continue
        try:
            rec = reproduce(n, args.out, mode=mode, seeds=args.seeds, jobs=args.jobs, ray=args.ray, cache=args.cache,
                            progress=not args.quiet, force=args.force, only=only)
        except SelectionError as e:
            _fail(f"{n}: {e}")
            return 2
        except RuntimeError as e:
            _fail(f"{n}: {e}")
            code = max(code, 3)
            rows.append((n, "-", "error"))
            continue
        rows.append((n, str(rec["ours"]), str(rec["status"])))
        if rec["failed"]:
            for lab, err in rec["failed"]:
                _fail(f"{n}: point {lab} failed: {err}")
            code = max(code, 3)
        if not args.quiet:
            print(f"{n}: {rec['status']}  ->  {Path(args.out) / n}/report.md")
    if len(rows) > 0:
        print()
        w = max(len(r[0]) for r in rows)
        sw = max(9, *(len(st) for _, _, st in rows if not st.startswith("waiting")), 6) if rows else 9
        print(f"{'experiment'.ljust(w)}  {'status'.ljust(sw)}  ours")
        for n, ours, st in rows:
            if st.startswith("waiting"):
                print(f"{n.ljust(w)}  {st}")
            else:
                print(f"{n.ljust(w)}  {st.ljust(sw)}  {ours}")
    return code


def cmd_sweep(args: argparse.Namespace) -> int:
    from .sweep import expand_grid, parse_grid, sweep

    if _empty_out(args):
        return 2
    try:
        grid = parse_grid(args.grid)
    except ValueError as e:
        _fail(str(e))
        return 2
    keep = tuple(t.strip() for t in args.keep.split(",") if t.strip())
    from ..result import TABLES

    bad = [t for t in keep if t not in TABLES]
    if bad:
        _fail(f"--keep: unknown table(s) {', '.join(bad)}; tables: {', '.join(TABLES)}")
        return 2
    import fabriclb

    # Validate the base scenario and every point first: bad input is one clear error (exit 2),
    # not N failed points.
    fabriclb.load_scenario(args.scenario, args.overrides)
    fixed = [(k.strip(), v.strip()) for k, _, v in (o.partition("=") for o in args.overrides)]
    try:
        points = expand_grid(args.scenario, dict(grid), seeds=args.seeds, overrides=fixed)
    except ValueError as e:
        _fail(str(e))
        return 2
    seen = set()
    for pt in points:
        if tuple(pt.overrides) in seen:
            continue
        seen.add(tuple(pt.overrides))
        try:
            fabriclb.load_scenario(args.scenario, list(pt.overrides))
        except fabriclb.ScenarioError as e:
            lab = ", ".join(f"{k}={v}" for k, v in pt.labels)
            _fail(f"point {lab}: {e.message}")
            return 2
    res = sweep(args.scenario, grid, seeds=args.seeds, overrides=args.overrides, out=args.out, cache=args.cache,
                jobs=args.jobs, ray=args.ray, tables=keep, progress=not args.quiet)
    n = len(res.points)
    if not args.quiet:
        print(f"{n} points: {res.computed} computed, {res.cached} from the cache, {len(res.failed)} failed")
        print(f"results in {args.out}/table.csv" + (f", failures in {args.out}/errors.csv" if res.failed else ""))
    for r in res.failed:
        lab = ", ".join(f"{k}={v}" for k, v in r.spec.labels)
        _fail(f"point {lab + ', ' if lab else ''}seed={r.seed} failed: {r.error}")
    return 3 if res.failed else 0


def register(subparsers: Any) -> None:
    """Add ``reproduce`` and ``sweep`` to an argparse subparsers object."""
    p = subparsers.add_parser("reproduce", help=REPRODUCE_HELP, description=REPRODUCE_HELP)
    configure_reproduce(p)
    p.set_defaults(_handler=cmd_reproduce)
    p = subparsers.add_parser("sweep", help=SWEEP_HELP, description=SWEEP_HELP)
    configure_sweep(p)
    p.set_defaults(_handler=cmd_sweep)


def experiment_statuses() -> List[Tuple[str, str]]:
    """(name, status) of every experiment: ``ready`` or ``waiting: <what it needs>``."""
    from .experiments import experiment_statuses as st

    return st()


def list_rows() -> List[Tuple[str, str]]:
    return experiment_statuses()


def _hook_into_main_cli() -> None:
    """Register with fabriclb.cli's registry when it has one (it does: COMMANDS / LIST_SECTIONS)."""
    try:
        from .. import cli as main_cli
    except Exception:  # noqa: BLE001
        return
    reg = getattr(main_cli, "register", None)
    if reg is None or not hasattr(main_cli, "COMMANDS"):
        return
    if "reproduce" not in main_cli.COMMANDS:
        reg("reproduce", REPRODUCE_HELP, configure_reproduce)(cmd_reproduce)
    if "sweep" not in main_cli.COMMANDS:
        reg("sweep", SWEEP_HELP, configure_sweep)(cmd_sweep)
    sections = getattr(main_cli, "LIST_SECTIONS", None)
    if sections is not None and not any(t.startswith("experiments") for t, _ in sections):
        main_cli.register_list_section("experiments (fabriclb reproduce)")(list_rows)


_hook_into_main_cli()
