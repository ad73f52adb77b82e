"""The result of a run: the summary (a dict) and the record tables (pandas DataFrames).

:meth:`Result.write` writes the files the CLI writes (``fabriclb run --out DIR``); every file
and column is described in ``docs/OUTPUTS.md``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple, Union

import numpy as np
import pandas as pd

__all__ = ["Result", "TABLES", "ALWAYS_WRITTEN", "RESULT_FILES", "check_out_dir", "write_csv", "write_json"]

#: The record tables of a run, in the order they are written.
TABLES: Tuple[str, ...] = ("flows", "ports", "windows", "queues", "traces")
#: Tables written even when empty; the others only when they have rows.
ALWAYS_WRITTEN: Tuple[str, ...] = ("flows", "ports", "windows")

#: Every file :meth:`Result.write` may write. A folder holding anything else is not replaced.
RESULT_FILES: Tuple[str, ...] = ("summary.json", "scenario.json") + tuple(f"{t}.csv" for t in TABLES)


def check_out_dir(out_dir: Union[str, "os.PathLike[str]"]) -> Path:
    """The results folder ``out_dir``, checked before a run: a name is given, and it is new,
    empty, or holds the results of an earlier run only (which the new results replace whole).
    Raises :class:`fabriclb.ScenarioError` otherwise."""
    from .errors import ScenarioError

    if not os.fspath(out_dir).strip():
        raise ScenarioError("--out is empty; give a folder for the results", kind="config")
    out = Path(out_dir)
    cwd = Path.cwd().resolve()
    if out.resolve() == cwd or out.resolve() in cwd.parents:
        raise ScenarioError(
            f"--out {out_dir} is the current folder or holds it; the results replace the folder "
            "whole: give a folder of its own",
            kind="io",
        )
    if out.exists() or out.is_symlink():
        if not out.is_dir():
            raise ScenarioError(f"--out {out_dir} exists and is not a folder", kind="io")
        other = sorted(p.name for p in out.iterdir() if p.name not in RESULT_FILES)
        if other:
            shown = ", ".join(other[:5]) + (", ..." if len(other) > 5 else "")
            raise ScenarioError(
                f"--out {out_dir} holds files that are not results of a run ({shown}); "
                "give a new or empty folder (the results replace the folder's content)",
                kind="io",
            )
    return out


_DTYPES = {"u64": np.int64, "i64": np.int64, "f64": np.float64}


def _frame(columns: Sequence[Tuple[str, str, List[Any]]]) -> pd.DataFrame:
    """A DataFrame from the core's (name, type tag, values) triples, column order kept.
    Unsigned counters become int64 (picosecond times fit easily) so that differences work."""
    data: Dict[str, Any] = {}
    for name, tag, values in columns:
        dtype = _DTYPES.get(tag)
        data[name] = np.asarray(values, dtype=dtype) if dtype is not None else pd.Series(values, dtype=object)
    return pd.DataFrame(data, columns=[c[0] for c in columns])


def write_json(path: Union[str, "os.PathLike[str]"], value: Any) -> None:
    """JSON with sorted keys, two-space indent and a final newline (stable bytes)."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(value, f, sort_keys=True, indent=2, allow_nan=False)
        f.write("\n")


def write_csv(path: Union[str, "os.PathLike[str]"], df: pd.DataFrame) -> None:
    """CSV with a header, ``\\n`` line ends, no index; floats in their shortest round-trip
    form, missing values (NaN) as empty cells. Same data, same bytes."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        df.to_csv(f, index=False, lineterminator="\n", na_rep="")


class Result:
    """The result of :func:`fabriclb.run`.

    Attributes:
        summary: the content of ``summary.json`` (a dict).
        scenario: the validated scenario in canonical form (a dict).
        flows: one row per flow.
        ports: one row per directed link (output port).
        windows: per-window throughput and leaf-uplink imbalance.
        queues: time-weighted queue-length distributions of the ports in
            ``measure.queue_ports`` (empty unless asked for).
        traces: cwnd / RTT / rate samples of the connections in ``measure.trace_flows``
            (empty unless asked for).
    """

    summary: Dict[str, Any]
    scenario: Dict[str, Any]
    flows: pd.DataFrame
    ports: pd.DataFrame
    windows: pd.DataFrame
    queues: pd.DataFrame
    traces: pd.DataFrame

    def __init__(
        self,
        summary: Dict[str, Any],
        scenario: Dict[str, Any],
        flows: pd.DataFrame,
        ports: pd.DataFrame,
        windows: pd.DataFrame,
        queues: pd.DataFrame,
        traces: pd.DataFrame,
    ) -> None:
        self.summary = summary
        self.scenario = scenario
        self.flows = flows
        self.ports = ports
        self.windows = windows
        self.queues = queues
        self.traces = traces

    @classmethod
    def _from_core(cls, raw: Dict[str, Any]) -> "Result":
        return cls(
            summary=json.loads(raw["summary"]),
            scenario=json.loads(raw["scenario"]),
            **{t: _frame(raw[t]) for t in TABLES},
        )

    def tables(self) -> Dict[str, pd.DataFrame]:
        """The record tables by name."""
        return {t: getattr(self, t) for t in TABLES}

    def write(self, out_dir: Union[str, "os.PathLike[str]"]) -> Path:
        """Write ``summary.json``, ``scenario.json``, ``flows.csv``, ``ports.csv``,
        ``windows.csv`` (and ``queues.csv`` / ``traces.csv`` when they have rows) into
        ``out_dir``, creating it. Returns the folder.

        The files are written into a new folder beside ``out_dir`` that then takes its place,
        so an interrupted write leaves the previous results or none, never a mix, and no file
        of an earlier run survives next to the new ones. An existing ``out_dir`` must be empty
        or hold results only (see :func:`check_out_dir`)."""
        out = check_out_dir(out_dir)
        parent = out.parent
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))
        try:
            write_json(tmp / "summary.json", self.summary)
            write_json(tmp / "scenario.json", self.scenario)
            for name, df in self.tables().items():
                if name in ALWAYS_WRITTEN or len(df) > 0:
                    write_csv(tmp / f"{name}.csv", df)
            os.chmod(tmp, 0o755)
            if out.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=parent))
                os.replace(out, old / out.name)
                os.replace(tmp, out)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return out

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<fabriclb.Result scheme={s.get('scheme')!r} seed={s.get('seed')!r} "
            f"flows={len(self.flows)} ports={len(self.ports)} windows={len(self.windows)}>"
        )

