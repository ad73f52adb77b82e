"""Type stubs of the compiled binding ``fabriclb._core`` (crates/fabriclb-py/src/lib.rs).

Errors are raised as the classes of :mod:`fabriclb.errors`: ``ScenarioError`` for kinds
"config", "syntax", "io", "cdf"; ``SimulationError`` for "invariant" and "panic";
``KeyboardInterrupt`` when a run is interrupted.
"""

from typing import Callable, Dict, List, Literal, Optional, Sequence, Tuple, Union

#: A column: (name, type tag, values). Type tags: "u64", "i64", "f64", "str".
ColumnTriple = Tuple[str, Literal["u64", "i64", "f64", "str"], Union[List[int], List[float], List[str]]]
#: A table: its columns in order.
TableColumns = List[ColumnTriple]

def load_scenario(
    text: str,
    format: Literal["toml", "json"] = "toml",
    overrides: Sequence[Tuple[str, str]] = ...,
    base_dir: Optional[str] = None,
    build: bool = False,
) -> str:
    """Parse and validate a scenario; returns its canonical JSON (sorted keys). With ``build``,
    also build the network and the traffic as a run would, without simulating."""

def run(scenario_json: str, progress: Optional[Callable[[float], object]] = None) -> Dict[str, Union[str, TableColumns]]:
    """Run a scenario given as JSON. Keys: "summary" and "scenario" (JSON strings), "flows",
    "ports", "windows", "queues", "traces" (TableColumns). Releases the GIL; calls
    ``progress(fraction)`` about every 100 ms of wall time."""

def bench(name: str) -> str:
    """Run one named benchmark; returns its result as a JSON object."""

def bench_names() -> List[str]: ...
def scheme_names() -> List[str]: ...
def workload_patterns() -> List[str]: ...
def check(scenario_json: str) -> List[str]:
    """Build a validated scenario as a run would, without simulating; the run's warnings."""

def limits() -> List[Tuple[str, int, str]]:
    """The limits on scenarios: (name, value, what it bounds)."""

def json_schema() -> str:
    """The JSON Schema (draft 7) of scenario files."""

def version() -> str: ...
def code_hash() -> str:
    """A digest of the core's sources and embedded data (changes with any change of either)."""
