"""fabriclb: a fast packet-level simulator and lab for datacenter fabric load balancing.

    >>> import fabriclb
    >>> res = fabriclb.run("scenarios/quickstart.toml", seed=2)
    >>> res.summary["fct"]["p99_ms"], res.flows.head()
    >>> res.write("out/quickstart")

See the README for the command line (``fabriclb run | validate | bench | list``) and
``docs/SCENARIO_REFERENCE.md`` / ``docs/OUTPUTS.md`` for inputs and outputs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .api import (
    Overrides,
    ProgressArg,
    ScenarioLike,
    bench,
    bench_names,
    code_hash,
    core_version,
    load_scenario,
    run,
    scenarios_dir,
    schemes,
    validate,
    workloads,
)
from .errors import FabriclbError, ScenarioError, SimulationError

if TYPE_CHECKING:
    from .result import Result

__all__ = [
    "FabriclbError",
    "ScenarioError",
    "SimulationError",
    "Result",
    "ScenarioLike",
    "Overrides",
    "ProgressArg",
    "load_scenario",
    "validate",
    "run",
    "bench",
    "bench_names",
    "schemes",
    "workloads",
    "scenarios_dir",
    "code_hash",
    "core_version",
    "sweep",
    "reproduce",
    "__version__",
]


def __getattr__(name: str) -> Any:
    # Loaded on first use: the version comes from the compiled core (so that the pure-Python
    # parts, fabriclb.analysis, import without it), and Result needs pandas (which the CLI's
    # quick commands, validate and list, do without).
    if name == "__version__":
        return core_version()
    if name == "Result":
        from .result import Result

        return Result
    if name in ("sweep", "reproduce"):
        from . import lab

        return getattr(lab, name)
    raise AttributeError(f"module 'fabriclb' has no attribute {name!r}")
