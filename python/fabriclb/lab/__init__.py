"""The lab: named experiments of the papers (``fabriclb reproduce``), parameter sweeps on all
cores or a Ray cluster (``fabriclb sweep``), the resumable result cache, plots and reports.

    >>> from fabriclb.lab import sweep, reproduce
    >>> res = sweep("scenarios/quickstart.toml", {"scheme.name": ["ecmp", "spray"]}, seeds=3, out="out/sw")
    >>> res.table.groupby("scheme.name")["fct.all.mean_ms"].mean()

See docs/LAB.md.
"""

from __future__ import annotations

from .cache import Cache, point_key
from .experiments import EXPERIMENTS, experiment_status, experiment_statuses, reproduce
from .sweep import PointResult, PointSpec, SweepResult, expand_grid, parse_grid, run_points, sweep

__all__ = [
    "Cache",
    "point_key",
    "EXPERIMENTS",
    "experiment_status",
    "experiment_statuses",
    "reproduce",
    "PointSpec",
    "PointResult",
    "SweepResult",
    "expand_grid",
    "parse_grid",
    "run_points",
    "sweep",
]
