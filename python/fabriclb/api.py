"""The Python API: load, validate and run scenarios, run benchmarks, list what is available.

Everything here is a thin layer over the compiled core (``fabriclb._core``): it reads files,
turns Python values into the core's ``path=value`` overrides, and wraps results in
:class:`fabriclb.Result`.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .errors import FabriclbError, ScenarioError

if TYPE_CHECKING:
    from .result import Result

__all__ = [
    "ScenarioLike",
    "Overrides",
    "ProgressArg",
    "load_scenario",
    "validate",
    "check",
    "read_text_file",
    "run",
    "bench",
    "bench_names",
    "schemes",
    "workloads",
    "scenarios_dir",
    "repo_root",
    "core_version",
    "code_hash",
]

#: A scenario: a path to a ``.toml`` / ``.json`` file, a dict, or TOML / JSON text.
ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]
#: Overrides: ``{"workload[0].load": 0.6}``, ``["scheme.name=spray"]`` or ``[("seed", 3)]``.
Overrides = Union[Mapping[str, Any], Sequence[Union[str, Tuple[str, Any]]], None]
#: Progress: ``False`` (none), ``True`` (a bar on stderr) or a callable taking the fraction of
#: simulated time done.
ProgressArg = Union[bool, Callable[[float], Any]]


def _core() -> ModuleType:
    """The compiled core, with a clear error when it has not been built."""
    try:
        from . import _core as core
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise FabriclbError(
            f"fabriclb's compiled core is not available ({e}); build it with `make install` "
            "(or `pip install -e .` in the repository)",
            kind="internal",
        ) from None
    return core


# ----------------------------------------------------------------------------- locations


def repo_root() -> Optional[Path]:
    """The source checkout this package runs from (the folder holding ``pyproject.toml`` and
    ``scenarios/``), or ``None`` for an installed wheel."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "pyproject.toml").is_file() and (parent / "scenarios").is_dir():
            return parent
    return None


def scenarios_dir() -> Path:
    """The folder of shipped scenarios: ``$FABRICLB_SCENARIOS`` if set, else the repository's
    ``scenarios/``."""
    env = os.environ.get("FABRICLB_SCENARIOS")
    if env:
        return Path(env)
    root = repo_root()
    if root is None:
        raise FabriclbError(
            "cannot find the shipped scenarios: this fabriclb is not running from a source "
            "checkout; set FABRICLB_SCENARIOS to the scenarios folder",
            kind="io",
        )
    return root / "scenarios"


# ----------------------------------------------------------------------------- scenarios


def _looks_like_path(s: str) -> bool:
    t = s.strip()
    return bool(t) and "\n" not in t and "=" not in t and not t.startswith("{")


#: Largest scenario file read (the core's `limits::MAX_FILE_BYTES`).
MAX_FILE_BYTES = 64 * 1024 * 1024


def read_text_file(p: Path, what: str = "scenario file") -> str:
    """The UTF-8 text of a regular file of at most :data:`MAX_FILE_BYTES`. A FIFO, a device or
    a socket is refused before it is opened (reading one could block or never end)."""
    import stat

    try:
        st = p.stat()
    except FileNotFoundError:
        raise ScenarioError(f"{what} {p} does not exist", kind="io") from None
    except OSError as e:
        raise ScenarioError(f"cannot read {what} {p}: {e.strerror or e}", kind="io") from None
    if stat.S_ISDIR(st.st_mode):
        raise ScenarioError(f"{what} {p} is a directory, not a file", kind="io")
    if not stat.S_ISREG(st.st_mode):
        raise ScenarioError(f"{what} {p} is not a regular file (a FIFO, device or socket); give a file", kind="io")
    if st.st_size > MAX_FILE_BYTES:
        raise ScenarioError(f"{what} {p} is {st.st_size} bytes, larger than the limit of {MAX_FILE_BYTES}", kind="io")
    try:
        with open(p, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise ScenarioError(f"cannot read {what} {p}: {e.strerror or e}", kind="io") from None
    if len(data) > MAX_FILE_BYTES:
        raise ScenarioError(f"{what} {p} is larger than the limit of {MAX_FILE_BYTES} bytes", kind="io")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError(f"{what} {p} is not UTF-8 text", kind="io") from None


def _non_finite(v: Any, path: str = "") -> Optional[str]:
    """The path of the first NaN or infinity in a Python scenario value, if any."""
    if isinstance(v, float) and not math.isfinite(v):
        return path
    if isinstance(v, Mapping):
        for k, x in v.items():
            found = _non_finite(x, f"{path}.{k}" if path else str(k))
            if found is not None:
                return found
    if isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            found = _non_finite(x, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def _read(scenario: ScenarioLike) -> Tuple[str, str, Optional[str]]:
    """(text, format, source name) of a scenario given in any accepted form."""
    if isinstance(scenario, Mapping):
        bad = _non_finite(scenario)
        if bad is not None:
            raise ScenarioError(
                f"invalid scenario field `{bad}`: NaN and infinity are not allowed; numbers must be finite",
                kind="config",
                field=bad,
            )
        return json.dumps(scenario), "json", None
    if isinstance(scenario, os.PathLike) or (isinstance(scenario, str) and _looks_like_path(scenario)):
        p = Path(os.fspath(scenario))
        fmt = "json" if p.suffix.lower() == ".json" else "toml"
        return read_text_file(p), fmt, str(p)
    if isinstance(scenario, str):
        return scenario, ("json" if scenario.lstrip().startswith("{") else "toml"), None
    raise TypeError(f"a scenario is a path, a dict or TOML/JSON text, not {type(scenario).__name__}")


def _toml_literal(v: Any) -> str:
    """A Python value as a TOML literal, for an override value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml_literal(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_literal(x) for x in v) + "]"
    raise ScenarioError(f"cannot use {v!r} ({type(v).__name__}) as an override value", kind="config")


def _override_value(v: Any) -> str:
    # Strings go as written, exactly like `--set path=value` on the command line: the core
    # reads them as a TOML value when they are one ("0.6", "true") and as text otherwise
    # ("10Gbps"). Other Python values are encoded as TOML literals.
    return v if isinstance(v, str) else _toml_literal(v)


def _override_pairs(overrides: Overrides) -> List[Tuple[str, str]]:
    if overrides is None:
        return []
    items: List[Tuple[str, Any]] = []
    if isinstance(overrides, Mapping):
        items = [(str(k), v) for k, v in overrides.items()]
    elif isinstance(overrides, str):
        raise TypeError("overrides are a dict or a list of 'path=value' strings, not a single string")
    else:
        for o in overrides:
            if isinstance(o, str):
                path, sep, value = o.partition("=")
                if not sep or not path.strip():
                    raise ScenarioError(
                        f"override '{o}' is not of the form path=value (e.g. workload[0].load=0.6)",
                        kind="config",
                    )
                items.append((path.strip(), value.strip()))
            else:
                path, value = o
                items.append((str(path), value))
    return [(k, _override_value(v)) for k, v in items]


def _with_source(e: FabriclbError, source: Optional[str]) -> FabriclbError:
    if source is None:
        return e
    # Files next to the scenario (CDFs) are named as the user reached them, not by the
    # absolute path the core resolved them to.
    msg = e.message
    base = str(Path(source).resolve().parent) + os.sep
    shown = os.path.join(os.path.dirname(source), "")
    msg = msg.replace(base, shown)
    return type(e)(f"{source}: {msg}", kind=e.kind, field=e.field)


def _load_json(scenario: ScenarioLike, overrides: Overrides = None, seed: Optional[int] = None) -> str:
    """Canonical JSON of the validated scenario."""
    return _load(scenario, overrides, seed)[0]


def _load(scenario: ScenarioLike, overrides: Overrides = None, seed: Optional[int] = None) -> Tuple[str, Optional[str]]:
    """Canonical JSON of the validated scenario, and the file it came from (if any)."""
    text, fmt, source = _read(scenario)
    pairs = _override_pairs(overrides)
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ScenarioError(f"seed must be an integer >= 0, not {seed!r}", kind="config", field="seed")
        pairs.append(("seed", str(seed)))
    try:
        base_dir = str(Path(source).resolve().parent) if source is not None else None
        canonical: str = _core().load_scenario(text, fmt, pairs, base_dir, False)
    except FabriclbError as e:
        raise _with_source(e, source) from None
    return canonical, source


def load_scenario(scenario: ScenarioLike, overrides: Overrides = None) -> Dict[str, Any]:
    """Parse and validate a scenario; return it as a dict in canonical form (every default
    filled in, units in canonical spelling).

    ``scenario`` is a path (``.json`` files are read as JSON, anything else as TOML), a dict,
    or TOML / JSON text. ``overrides`` change fields before validation, as ``--set`` does on
    the command line. Raises :class:`ScenarioError` naming the file and field on bad input.
    """
    out: Dict[str, Any] = json.loads(_load_json(scenario, overrides))
    return out


def validate(scenario: ScenarioLike, overrides: Overrides = None) -> Dict[str, Any]:
    """Check a scenario as far as a run would before simulating: :func:`load_scenario`'s
    validation, then building the network and the traffic (host names in workloads, CDF files,
    pattern limits). Returns the canonical scenario; raises :class:`ScenarioError` on bad input.
    Writes nothing."""
    return check(scenario, overrides)[0]


def check(scenario: ScenarioLike, overrides: Overrides = None) -> Tuple[Dict[str, Any], List[str]]:
    """As :func:`validate`, and the warnings a run of the scenario would report in
    ``summary.json`` (no measured traffic, more load offered than the links can carry...)."""
    sc_json, source = _load(scenario, overrides)
    try:
        warnings: List[str] = list(_core().check(sc_json))
    except FabriclbError as e:
        raise _with_source(e, source) from None
    out: Dict[str, Any] = json.loads(sc_json)
    return out, warnings


# ----------------------------------------------------------------------------- runs


def run(
    scenario: ScenarioLike,
    *,
    seed: Optional[int] = None,
    overrides: Overrides = None,
    progress: ProgressArg = False,
) -> Result:
    """Run a scenario and return its :class:`Result`.

    ``seed`` sets the scenario's master seed; ``overrides`` change fields as in
    :func:`load_scenario`. ``progress=True`` shows a bar over simulated time on stderr (when
    stderr is a terminal); a callable is called now and then with the fraction of simulated
    time done. The interpreter lock is released while the simulation runs; Ctrl-C stops it
    and raises ``KeyboardInterrupt``.
    """
    sc_json = _load_json(scenario, overrides, seed)
    from .progress import ProgressBar
    from .result import Result

    bar: Optional[ProgressBar] = None
    callback: Optional[Callable[[float], Any]]
    if callable(progress):
        callback = progress
    elif progress:
        bar = ProgressBar(enabled=True)
        callback = bar
    else:
        callback = None
    try:
        raw = _core().run(sc_json, callback)
    finally:
        if bar is not None:
            bar.close()
    return Result._from_core(raw)


# ----------------------------------------------------------------------------- catalogue


def bench_names() -> List[str]:
    """Names of the benchmark scenarios (e.g. LS128, FT432, LS2048)."""
    return list(_core().bench_names())


def bench(names: Union[str, Sequence[str], None] = None) -> List[Dict[str, Any]]:
    """Run named benchmarks (all when ``names`` is None); one dict per benchmark with at least
    ``name``, ``packet_hops``, ``events``, ``wall_time_s``, ``packet_hops_per_s``,
    ``peak_rss_mb``."""
    if names is None:
        names = bench_names()
    elif isinstance(names, str):
        names = [names]
    known = bench_names()
    for n in names:
        if n not in known:
            raise ScenarioError(f"unknown benchmark '{n}'; known: {', '.join(known)}", kind="config")
    return [json.loads(_core().bench(n)) for n in names]


def schemes() -> List[str]:
    """Names of the load-balancing schemes, as written in scenarios (``scheme.name``)."""
    return list(_core().scheme_names())


def workloads() -> List[str]:
    """Names of the workload patterns, as written in scenarios."""
    return list(_core().workload_patterns())


def core_version() -> str:
    """Version of the compiled simulator core."""
    return str(_core().version())


def code_hash() -> str:
    """A digest of the compiled core's sources and embedded data (built-in CDFs): it changes
    with any change of either, committed or not. The lab's result cache keys on it."""
    return str(_core().code_hash())
