"""Sweeps: many points (scenario + overrides + seed) run on all local cores or on a Ray cluster,
through the result cache.

A *point* is a scenario, a list of ``path=value`` overrides, a seed and labels (the grid
coordinates shown as table columns). :func:`run_points` validates every point up front
(an invalid point fails alone, with the validator's message), skips those already in the
cache, computes the others on the chosen backend, stores each result in the cache as soon
as it arrives, and returns the results **in the order of the points**, each read back from
the cache, so the tables built from them do not depend on which backend ran them, in which
order they finished, or whether they were computed now or by an earlier run.

Backends:

- ``jobs`` processes on this machine (default: all cores), a
  :class:`concurrent.futures.ProcessPoolExecutor` with the ``spawn`` start method. When a
  worker process dies (a crash, the OOM killer), the pool breaks; the points that were in
  flight are then rerun one at a time, each in a fresh one-worker pool, so that the point
  that kills its worker is reported failed ("worker process died") and all others complete.
- Ray (``ray=ADDRESS``: ``"auto"``, ``"ray://host:10001"``, ``"local"`` to start a local
  instance; an already initialised Ray is reused): one task per point. Workers return the
  result; the driver writes the cache, so the cluster needs no shared file system.

A point that fails (an error in the simulation, a dead worker) is recorded with its error
(one line) and the sweep goes on; :attr:`SweepResult.failed` lists them.

Test hooks (environment variables read by workers; used by the test suite only):
``FABRICLB_LAB_COMPUTE_LOG`` a file to which each computation appends its key;
``FABRICLB_LAB_TEST_DELAY`` seconds to sleep after each computation;
``FABRICLB_LAB_TEST_CRASH`` a seed: a worker computing a point with that seed exits hard.
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import json
import math
import multiprocessing
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from .cache import Cache, CacheEntry, frame_to_csv_gz, point_key

__all__ = [
    "PointSpec",
    "PointResult",
    "SweepResult",
    "parse_grid",
    "split_values",
    "expand_grid",
    "run_points",
    "sweep",
    "summary_row",
    "default_jobs",
]

PathLike = Union[str, "os.PathLike[str]"]

#: Summary fields that measure the machine rather than the simulation; left out of tables so
#: that tables are identical whichever backend ran them.
VOLATILE_SUMMARY_KEYS = ("wall_time_s", "packet_hops_per_s", "peak_rss_mb", "scenario")


# ----------------------------------------------------------------------------- points


@dataclass(frozen=True)
class PointSpec:
    """One point of a sweep.

    ``scenario``: a path or a dict (anything :func:`fabriclb.load_scenario` accepts);
    ``overrides``: ``(path, value)`` pairs applied in order; ``seed``: the master seed;
    ``labels``: the point's coordinates as ``(column, value)`` pairs for the tables.
    """

    scenario: Any
    overrides: Tuple[Tuple[str, Any], ...] = ()
    seed: int = 1
    labels: Tuple[Tuple[str, Any], ...] = ()

    def label_dict(self) -> Dict[str, Any]:
        return dict(self.labels)


@dataclass
class PointResult:
    spec: PointSpec
    key: Optional[str]
    status: str  # "computed", "cached" or "failed"
    error: Optional[str] = None
    entry: Optional[CacheEntry] = None

    @property
    def ok(self) -> bool:
        return self.status != "failed"

    @property
    def labels(self) -> Dict[str, Any]:
        return self.spec.label_dict()

    @property
    def seed(self) -> int:
        return self.spec.seed

    @property
    def summary(self) -> Dict[str, Any]:
        return self.entry.summary if self.entry is not None else {}

    @property
    def scenario(self) -> Dict[str, Any]:
        if self.entry is None:
            return {}
        sc: Dict[str, Any] = self.entry.meta.get("scenario", {})
        return sc

    def table(self, name: str) -> pd.DataFrame:
        if self.entry is None:
            raise RuntimeError(f"point {self.labels} failed: {self.error}")
        return self.entry.table(name)


@dataclass
class SweepResult:
    points: List[PointResult]
    table: pd.DataFrame
    out: Optional[Path] = None
    computed: int = 0
    cached: int = 0
    failed: List[PointResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed


# ----------------------------------------------------------------------------- grids


def split_values(text: str) -> List[str]:
    """Split ``v1,v2,...`` on commas outside brackets, braces and quotes
    (``[1,2],[3,4]`` is two values)."""
    out: List[str] = []
    depth = 0
    quote: Optional[str] = None
    cur = ""
    for ch in text:
        if quote:
            cur += ch
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip() or out:
        out.append(cur.strip())
    return [v for v in out if v != ""]


def parse_grid(items: Sequence[str]) -> Dict[str, List[str]]:
    """``["scheme.name=ecmp,conga", "workload[0].load=0.3,0.6"]`` -> an ordered dict."""
    grid: Dict[str, List[str]] = {}
    for it in items:
        path, sep, values = it.partition("=")
        if not sep or not path.strip():
            raise ValueError(f"--grid '{it}' is not of the form path=v1,v2,... (e.g. workload[0].load=0.3,0.6)")
        vals = split_values(values)
        if not vals:
            raise ValueError(f"--grid '{it}' has no values")
        grid[path.strip()] = vals
    return grid


def _norm_seed_list(seeds: Union[None, int, Sequence[int]], default: int) -> List[int]:
    if seeds is None:
        return [default]
    if isinstance(seeds, int):
        if seeds < 1:
            raise ValueError("seeds must be >= 1")
        return list(range(1, seeds + 1))
    out = [int(s) for s in seeds]
    if not out or any(s < 0 for s in out):
        raise ValueError("seeds must be a non-empty list of integers >= 0")
    return out


def expand_grid(
    scenario: Any,
    grid: Optional[Mapping[str, Sequence[Any]]] = None,
    *,
    seeds: Union[None, int, Sequence[int]] = None,
    overrides: Optional[Sequence[Tuple[str, Any]]] = None,
    default_seed: int = 1,
) -> List[PointSpec]:
    """The Cartesian product of ``grid`` (an ordered mapping ``override path -> values``; the
    special key ``seed`` lists seeds) times ``seeds`` (an int N means seeds 1..N), in
    row-major order with seeds innermost. ``overrides`` apply to every point, before the
    grid's."""
    grid = dict(grid or {})
    seed_list: Optional[List[int]] = None
    if "seed" in grid:
        if seeds is not None:
            raise ValueError("give the seeds either as a grid key 'seed' or as seeds=, not both")
        seed_list = [int(s) for s in grid.pop("seed")]
    if seed_list is None:
        seed_list = _norm_seed_list(seeds, default_seed)
    keys = list(grid)
    base = tuple((str(k), v) for k, v in (overrides or ()))
    points: List[PointSpec] = []
    for combo in itertools.product(*(list(grid[k]) for k in keys)):
        labels = tuple(zip(keys, combo))
        for s in seed_list:
            points.append(PointSpec(scenario=scenario, overrides=base + labels, seed=int(s), labels=labels))
    return points


# ----------------------------------------------------------------------------- worker


def _one_line(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    text = msg[0] if msg else ""
    name = type(e).__name__
    return f"{name}: {text}" if text else name


def compute_point(payload: Dict[str, Any]) -> Dict[str, Any]:
    """Run one point (in a worker). ``payload``: key, scenario (canonical dict), seed, tables.
    Returns ``{"ok": True, "summary", "tables": {name: csv.gz bytes}, "wall_time_s", "code"}`` or
    ``{"ok": False, "error": one line}``. Never raises for a simulation error."""
    key = payload["key"]
    log = os.environ.get("FABRICLB_LAB_COMPUTE_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(key + "\n")
    crash = os.environ.get("FABRICLB_LAB_TEST_CRASH")
    if crash and crash.strip() == str(payload["seed"]):
        os._exit(17)
    t0 = time.perf_counter()
    try:
        import fabriclb

        res = fabriclb.run(payload["scenario"])
        tables = {}
        for name in payload.get("tables", ()):
            tables[name] = frame_to_csv_gz(getattr(res, name))
        out = {"ok": True, "summary": res.summary, "tables": tables, "wall_time_s": time.perf_counter() - t0,
               "code": fabriclb.code_hash()}
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 - a point fails alone
        out = {"ok": False, "error": _one_line(e)}
    delay = os.environ.get("FABRICLB_LAB_TEST_DELAY")
    if delay:
        time.sleep(float(delay))
    return out


# ----------------------------------------------------------------------------- progress


class _Progress:
    """A bar over finished points on stderr: tqdm when installed, plain text otherwise,
    nothing when stderr is not a terminal (or when disabled)."""

    def __init__(self, total: int, enabled: bool, desc: str) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self.desc = desc
        try:
            tty = sys.stderr.isatty()
        except (AttributeError, ValueError):
            tty = False
        self.enabled = bool(enabled) and tty and total > 0
        self._bar: Any = None
        if self.enabled:
            try:
                from tqdm import tqdm

                self._bar = tqdm(total=total, desc=desc, unit="pt", file=sys.stderr, leave=False)
            except ImportError:
                self._bar = None

    def update(self, n: int = 1, failed: bool = False) -> None:
        self.done += n
        self.failed += int(failed)
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(n)
            if self.failed:
                self._bar.set_postfix(failed=self.failed)
        else:
            width = 30
            k = self.done * width // max(self.total, 1)
            extra = f" ({self.failed} failed)" if self.failed else ""
            sys.stderr.write(f"\r{self.desc}: [{'#' * k}{'.' * (width - k)}] {self.done}/{self.total}{extra}")
            sys.stderr.flush()

    def close(self) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.close()
        else:
            sys.stderr.write("\r" + " " * (len(self.desc) + 60) + "\r")
            sys.stderr.flush()


# ----------------------------------------------------------------------------- backends


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


OnDone = Callable[[int, Dict[str, Any]], None]


def _run_pool(payloads: List[Tuple[int, Dict[str, Any]]], jobs: int, on_done: OnDone) -> None:
    """Process pool with recovery from dead workers (see the module docs)."""
    ctx = multiprocessing.get_context("spawn")
    pending = list(payloads)
    suspects: List[Tuple[int, Dict[str, Any]]] = []
    while pending:
        broken_at: List[Tuple[int, Dict[str, Any]]] = []
        with cf.ProcessPoolExecutor(max_workers=min(jobs, len(pending)), mp_context=ctx) as ex:
            futs = {ex.submit(compute_point, p): (i, p) for i, p in pending}
            for fut in cf.as_completed(futs):
                i, p = futs[fut]
                try:
                    out = fut.result()
                except cf.process.BrokenProcessPool:
                    broken_at.append((i, p))
                    continue
                except BaseException as e:  # noqa: BLE001 - e.g. an unpicklable result
                    out = {"ok": False, "error": _one_line(e)}
                on_done(i, out)
        pending = []
        if broken_at:
            suspects.extend(sorted(broken_at, key=lambda t: t[0]))
    # Each point that was in flight when a worker died runs alone: the one that kills its
    # worker is the culprit; the others complete.
    for i, p in suspects:
        with cf.ProcessPoolExecutor(max_workers=1, mp_context=ctx) as ex:
            try:
                out = ex.submit(compute_point, p).result()
            except cf.process.BrokenProcessPool:
                out = {"ok": False, "error": "worker process died while running this point (crash or out of memory)"}
            except BaseException as e:  # noqa: BLE001
                out = {"ok": False, "error": _one_line(e)}
        on_done(i, out)


def _run_inline(payloads: List[Tuple[int, Dict[str, Any]]], on_done: OnDone) -> None:
    for i, p in payloads:
        on_done(i, compute_point(p))


def _ray_init(address: str) -> Any:
    try:
        import ray
    except ImportError:
        raise RuntimeError("the Ray backend needs Ray: pip install 'fabriclb[ray]' (or pip install ray)") from None
    if not ray.is_initialized():
        if address in ("local", ""):
            ray.init(include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    return ray


def _run_ray(payloads: List[Tuple[int, Dict[str, Any]]], address: str, on_done: OnDone) -> None:
    ray = _ray_init(address)
    remote = ray.remote(num_cpus=1, max_retries=0)(compute_point)
    refs = {remote.remote(p): i for i, p in payloads}
    todo = list(refs)
    while todo:
        ready, todo = ray.wait(todo, num_returns=1)
        for r in ready:
            i = refs[r]
            try:
                out = ray.get(r)
            except Exception as e:  # noqa: BLE001 - RayTaskError, WorkerCrashedError, ...
                cause = getattr(e, "cause", None)
                if type(e).__name__ in ("WorkerCrashedError", "ActorDiedError") or "worker died" in str(e).lower():
                    out = {"ok": False, "error": "worker process died while running this point (crash or out of memory)"}
                else:
                    out = {"ok": False, "error": _one_line(cause if isinstance(cause, BaseException) else e)}
            on_done(i, out)


# ----------------------------------------------------------------------------- driver


def _code() -> str:
    """The core's code hash: part of every cache key (the tests replace it)."""
    import fabriclb

    return str(fabriclb.code_hash())


def run_points(
    points: Sequence[PointSpec],
    *,
    cache: Union[Cache, PathLike],
    tables: Sequence[str] = (),
    jobs: Optional[int] = None,
    ray: Optional[str] = None,
    progress: bool = True,
    desc: str = "points",
) -> List[PointResult]:
    """Run ``points`` through ``cache`` (see the module docs); results in point order.
    ``tables``: the record tables to keep per point (e.g. ``("flows", "windows")``);
    ``jobs``: local processes (default: all cores; 1 = in this process);
    ``ray``: a Ray address to run on a Ray cluster instead."""
    import fabriclb

    c = cache if isinstance(cache, Cache) else Cache(cache)
    tables = tuple(tables)
    code = _code()
    version = str(fabriclb.core_version())
    results: List[Optional[PointResult]] = [None] * len(points)
    todo: List[Tuple[int, Dict[str, Any]]] = []
    keys: List[Optional[str]] = [None] * len(points)
    canon: List[Optional[Dict[str, Any]]] = [None] * len(points)
    first_of_key: Dict[str, int] = {}
    dup_of: Dict[int, int] = {}
    bar = _Progress(len(points), progress, desc)
    for i, pt in enumerate(points):
        try:
            sc = fabriclb.load_scenario(pt.scenario, list(pt.overrides) + [("seed", int(pt.seed))])
        except Exception as e:  # noqa: BLE001 - an invalid point fails alone
            results[i] = PointResult(pt, None, "failed", error=_one_line(e) if not hasattr(e, "message") else str(getattr(e, "message")))
            bar.update(failed=True)
            continue
        key = point_key(sc, pt.seed, code)
        keys[i] = key
        canon[i] = sc
        entry = c.get(key, tables)
        if entry is not None:
            results[i] = PointResult(pt, key, "cached", entry=entry)
            bar.update()
            continue
        if key in first_of_key:  # the same point twice in one sweep: compute once
            dup_of[i] = first_of_key[key]
            continue
        first_of_key[key] = i
        todo.append((i, {"key": key, "scenario": sc, "seed": pt.seed, "tables": tables}))

    def on_done(i: int, out: Dict[str, Any]) -> None:
        pt = points[i]
        key = keys[i]
        assert key is not None
        if out.get("ok") and out.get("code", code) != code:
            # A Ray worker built from other sources: its result must not be stored under this key.
            out = {"ok": False, "error": f"the worker runs another build of the core (code hash {out['code'][:12]}, "
                                         f"this process {code[:12]}); install the same build on every node"}
        if out.get("ok"):
            entry = c.put(
                key,
                scenario=canon[i] or {},
                seed=pt.seed,
                code=code,
                version=version,
                summary=out["summary"],
                tables=out["tables"],
                wall_time_s=float(out.get("wall_time_s", 0.0)),
                extra={"labels": {k: _jsonable(v) for k, v in pt.labels}},
            )
            results[i] = PointResult(pt, key, "computed", entry=c.get(key, tables) or entry)
            bar.update()
        else:
            err = str(out.get("error", "unknown error"))
            c.put_error(key, err, seed=pt.seed, labels={k: _jsonable(v) for k, v in pt.labels})
            results[i] = PointResult(pt, key, "failed", error=err)
            bar.update(failed=True)

    try:
        if todo:
            if ray:
                _run_ray(todo, ray, on_done)
            else:
                n = jobs if jobs is not None else default_jobs()
                if n <= 1:
                    _run_inline(todo, on_done)
                else:
                    _run_pool(todo, n, on_done)
        for i, j in dup_of.items():
            r = results[j]
            assert r is not None
            results[i] = PointResult(points[i], r.key, r.status if r.status == "failed" else "cached", error=r.error, entry=r.entry)
            bar.update(failed=not r.ok)
    finally:
        bar.close()
    return [r for r in results if r is not None]


def _jsonable(v: Any) -> Any:
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


def _flatten(prefix: str, d: Mapping[str, Any], out: Dict[str, Any]) -> None:
    for k, v in d.items():
        name = f"{prefix}{k}"
        if isinstance(v, Mapping):
            _flatten(name + ".", v, out)
        elif isinstance(v, (list, tuple)):
            continue
        else:
            out[name] = v


def summary_row(r: PointResult) -> Dict[str, Any]:
    """One table row for a point: its labels, seed, status, error and the summary's scalar
    fields flattened with dots (``fct.all.mean_ms``), machine-dependent fields left out."""
    row: Dict[str, Any] = {}
    for k, v in r.spec.labels:
        row[k] = v
    row["seed"] = r.seed
    row["ok"] = r.ok
    row["error"] = r.error or ""
    if r.entry is not None:
        s = {k: v for k, v in r.summary.items() if k not in VOLATILE_SUMMARY_KEYS}
        _flatten("", s, row)
    return row


def _table(results: Sequence[PointResult]) -> pd.DataFrame:
    rows = [summary_row(r) for r in results]
    df = pd.DataFrame(rows)
    return df


def sweep(
    scenario: Any,
    grid: Union[None, Mapping[str, Sequence[Any]], Sequence[str]] = None,
    *,
    seeds: Union[None, int, Sequence[int]] = None,
    overrides: Union[None, Mapping[str, Any], Sequence[Union[str, Tuple[str, Any]]]] = None,
    out: Optional[PathLike] = None,
    cache: Optional[PathLike] = None,
    jobs: Optional[int] = None,
    ray: Optional[str] = None,
    tables: Sequence[str] = (),
    progress: bool = True,
) -> SweepResult:
    """Run a scenario over a grid of overrides and seeds; return (and write) one row per point.

    ``grid``: ``{"scheme.name": ["ecmp", "spray"], "workload[0].load": [0.3, 0.6]}`` or the
    command line's ``["scheme.name=ecmp,spray", ...]``; ``seeds``: N (seeds 1..N) or a list
    (default: the scenario's own seed... i.e. 1); ``overrides``: fixed ``--set`` overrides;
    ``out``: folder for ``table.csv`` (and ``errors.csv``), default cache ``out/.cache``;
    ``cache``: another cache folder (share it between sweeps to reuse points);
    ``jobs`` / ``ray``: the backend (see :func:`run_points`); ``tables``: record tables to keep
    per point in the cache (read them from :attr:`SweepResult.points`).

    Failed points are rows with ``ok == False`` and their ``error``; the others complete.
    """
    if grid is not None and not isinstance(grid, Mapping):
        grid = parse_grid(list(grid))
    ov: List[Tuple[str, Any]] = []
    if isinstance(overrides, Mapping):
        ov = [(str(k), v) for k, v in overrides.items()]
    elif overrides:
        for o in overrides:
            if isinstance(o, str):
                k, sep, v = o.partition("=")
                if not sep:
                    raise ValueError(f"override '{o}' is not of the form path=value")
                ov.append((k.strip(), v.strip()))
            else:
                ov.append((str(o[0]), o[1]))
    if isinstance(scenario, (str, os.PathLike)) and Path(os.fspath(scenario)).is_file():
        scenario = str(Path(os.fspath(scenario)).resolve())
    default_seed = 1
    try:
        import fabriclb

        default_seed = int(fabriclb.load_scenario(scenario, ov).get("seed", 1))
    except Exception:  # noqa: BLE001 - reported per point below
        pass
    points = expand_grid(scenario, grid, seeds=seeds, overrides=ov, default_seed=default_seed)
    out_dir = Path(out) if out is not None else None
    if cache is None:
        if out_dir is None:
            raise ValueError("sweep needs out= (results and cache) or cache=")
        cache = out_dir / ".cache"
    results = run_points(points, cache=cache, tables=tables, jobs=jobs, ray=ray, progress=progress, desc="sweep")
    table = _table(results)
    failed = [r for r in results if not r.ok]
    if out_dir is not None:
        from ..result import write_csv

        out_dir.mkdir(parents=True, exist_ok=True)
        write_csv(out_dir / "table.csv", table)
        err_path = out_dir / "errors.csv"
        if failed:
            write_csv(err_path, pd.DataFrame([{**r.labels, "seed": r.seed, "error": r.error} for r in failed]))
        elif err_path.exists():
            err_path.unlink()
    return SweepResult(
        points=list(results),
        table=table,
        out=out_dir,
        computed=sum(r.status == "computed" for r in results),
        cached=sum(r.status == "cached" for r in results),
        failed=failed,
    )
