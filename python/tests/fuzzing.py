"""The fuzzing harness: scenarios mutated at random, run through the real command line in a
worker process with bounded time and memory.

A :class:`Worker` is a child Python process that runs ``fabriclb.cli.main(argv)`` for each
case it is sent (much faster than a process per case) under an address-space limit. The
parent waits for each answer with a deadline: a case that takes longer is a *hang*, a worker
that dies (an abort, a failed allocation) is a *crash*; either way a fresh worker takes over.
The only acceptable outcomes are exit 0 and exit 2 (bad input), a message without a traceback
or a panic, and for ``validate`` no file written.

Used by ``test_fuzz.py`` (hypothesis drives the mutations; ``make test`` runs a short
deterministic budget, ``make fuzz`` a long one) and by ``tools/fuzz_round.py``.
"""

from __future__ import annotations

import json
import math
import os
import random
import select
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[2]

#: Deadlines (seconds of wall time) and the worker's address-space limit.
VALIDATE_S = 10.0
RUN_S = 60.0
MEMORY_BYTES = 6 * 1024**3

#: What a run case may simulate at most: the fuzzer clamps these so that runs stay short.
RUN_CLAMPS = {"duration": "2ms", "drain": "2ms", "warmup": "1ms"}

_WORKER = r"""
import contextlib, io, json, os, resource, sys
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
os.environ.pop("FABRICLB_DEBUG", None)
from fabriclb.cli import main
out = sys.stdout
for line in sys.stdin:
    argv = json.loads(line)
    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        try:
            code = main(argv)
        except SystemExit as x:
            code = x.code if isinstance(x.code, int) else 2
    out.write(json.dumps({"code": code, "stdout": o.getvalue()[-2000:], "stderr": e.getvalue()[-4000:]}) + "\n")
    out.flush()
"""


@dataclass
class Outcome:
    argv: List[str]
    code: Optional[int]  # None: hang or crash
    stderr: str = ""
    problem: str = ""  # empty when acceptable
    seconds: float = 0.0


class Worker:
    """A child process running CLI commands one after another (see the module doc)."""

    def __init__(self, cwd: Path, memory_bytes: int = MEMORY_BYTES) -> None:
        self.cwd = cwd
        self.memory_bytes = memory_bytes
        self.proc: Optional[subprocess.Popen] = None

    def _start(self) -> subprocess.Popen:
        env = dict(os.environ)
        env.pop("FABRICLB_DEBUG", None)
        return subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(self.memory_bytes)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.cwd,
            env=env,
            text=True,
        )

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def call(self, argv: Sequence[str], timeout: float) -> Tuple[Optional[int], str, str]:
        """(exit code, stderr, what went wrong) of one command; code None on a hang or crash."""
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        p = self.proc
        assert p.stdin is not None and p.stdout is not None
        try:
            p.stdin.write(json.dumps(list(argv)) + "\n")
            p.stdin.flush()
        except BrokenPipeError:
            pass
        ready, _, _ = select.select([p.stdout], [], [], timeout)
        if not ready:
            self.close()
            return None, "", f"hang: no answer within {timeout:.0f} s"
        line = p.stdout.readline()
        if not line:
            p.wait()
            err = p.stderr.read()[-2000:] if p.stderr is not None else ""
            self.proc = None
            return None, err, f"crash: the process died (exit {p.returncode})"
        r = json.loads(line)
        return int(r["code"]), r["stderr"], ""


def judge(code: Optional[int], stderr: str, problem: str) -> str:
    """Why an outcome is not acceptable (empty when it is)."""
    if problem:
        return problem
    if code not in (0, 2):
        return f"exit {code}"
    for bad in ("Traceback", "panicked", "internal error", "a bug in fabriclb"):
        if bad in stderr:
            return f"message contains {bad!r}"
    if code == 2 and not stderr.startswith("fabriclb: "):
        return "exit 2 without a message"
    return ""


@dataclass
class Stats:
    cases: int = 0
    validate_ok: int = 0
    validate_rejected: int = 0
    runs: int = 0
    run_ok: int = 0
    run_rejected: int = 0
    failures: List[Outcome] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{self.cases} cases: validate {self.validate_ok} ok / {self.validate_rejected} rejected (exit 2); "
            f"{self.runs} runs: {self.run_ok} ok / {self.run_rejected} rejected; {len(self.failures)} failures"
        )


class Harness:
    """Writes each case's scenario into a scratch folder and checks validate (and a clamped
    run of what validates) through a :class:`Worker`."""

    def __init__(self, root: Path, run: bool = True) -> None:
        self.root = root
        self.worker = Worker(root)
        self.stats = Stats()
        self.do_run = run
        self.n = 0

    def close(self) -> None:
        """Stop the worker and remove the scratch folder (failures carry their scenario)."""
        self.worker.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def _one(self, argv: List[str], timeout: float) -> Outcome:
        t0 = time.monotonic()
        code, err, problem = self.worker.call(argv, timeout)
        o = Outcome(argv, code, err, judge(code, err, problem), time.monotonic() - t0)
        if o.problem:
            self.stats.failures.append(o)
        return o

    def case(self, scenario_text: str, suffix: str = ".json", overrides: Sequence[str] = ()) -> Outcome:
        """Validate one scenario (and run it, clamped, when it validates). Returns the
        validate outcome; failures are collected in :attr:`stats`."""
        self.n += 1
        self.stats.cases += 1
        d = self.root / f"c{self.n}"
        d.mkdir()
        sc = d / f"s{suffix}"
        sc.write_text(scenario_text)
        sets = [a for o in overrides for a in ("--set", o)]
        before = sorted(os.listdir(self.root))
        v = self._one(["validate", str(sc), *sets], VALIDATE_S)
        if v.code == 0:
            self.stats.validate_ok += 1
        elif v.code == 2:
            self.stats.validate_rejected += 1
        if sorted(os.listdir(self.root)) != before and not v.problem:
            v.problem = "validate wrote a file"
            self.stats.failures.append(v)
        if v.code == 0 and self.do_run:
            self.stats.runs += 1
            clamps = [f"{k}={_clamp(scenario_text, suffix, k, cap)}" for k, cap in RUN_CLAMPS.items()]
            clamp_sets = [a for o in clamps for a in ("--set", o)]
            r = self._one(["run", str(sc), *sets, *clamp_sets, "--out", str(d / "out"), "-q"], RUN_S)
            if r.code == 0:
                self.stats.run_ok += 1
            elif r.code == 2:
                self.stats.run_rejected += 1
        return v


def _clamp(text: str, suffix: str, key: str, cap: str) -> str:
    """The smaller of the scenario's `key` and `cap` (both durations), as text."""
    import fabriclb

    def ps(s: Any) -> float:
        for unit, mul in (("ps", 1), ("ns", 1e3), ("us", 1e6), ("ms", 1e9), ("s", 1e12)):
            if isinstance(s, str) and s.endswith(unit) and s[: -len(unit)].replace(".", "", 1).isdigit():
                return float(s[: -len(unit)]) * mul
        return math.inf

    try:
        v = fabriclb.load_scenario(text).get(key)
    except Exception:  # noqa: BLE001 - overrides made it valid; keep the cap
        v = None
    return str(v) if v is not None and ps(v) < ps(cap) else cap


# ----------------------------------------------------------------------------- seeds and mutations

TINY = """\
name = "tiny"
duration = "2ms"
drain = "5ms"
[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
host_rate = "10Gbps"
fabric_rate = "10Gbps"
[[workload]]
pattern = "permutation"
size = "50KB"
"""


#: A tiny scenario with one of every failure kind and every measurement: the fields whose
#: values decide how long a run takes and how much it records.
TINY_FULL = TINY.replace('[[workload]]', """[switch]
ecn_threshold = "20pkt"
[[failures]]
link = "L0-S0"
kind = "down"
at = "1ms"
until = "1500us"
[[failures]]
link = "L1-S1"
kind = "flap"
period = "1ms"
[[failures]]
link = "L0-S1"
kind = "lossy"
loss = 0.01
[[failures]]
link = "S0-L1"
kind = "degrade"
rate = "5Gbps"
at = "500us"
[measure]
window = "1ms"
trace_flows = [0, 1]
trace_interval = "100us"
queue_ports = ["L0->S0", "S1->L1"]
[[workload]]
pattern = "poisson"
size = "20KB"
load = 0.3
load_basis = "host"
[[workload]]""")

#: Small fabrics of the other kinds.
TINY_FAT_TREE = """duration = "2ms"
[topology]
kind = "fat-tree"
k = 4
host_rate = "10Gbps"
fabric_rate = "10Gbps"
[[workload]]
pattern = "incast"
servers = 3
size = "300KB"
requests = 2
interval = "500us"
"""
TINY_EXPLICIT = """duration = "2ms"
[topology]
kind = "explicit"
switches = [{ name = "L0", role = "leaf" }, { name = "L1", role = "leaf" }, { name = "S0", role = "spine" }]
hosts = [{ name = "a", attach = "L0", rate = "10Gbps", count = 2 }, { name = "b", attach = "L1", rate = "10Gbps", count = 2 }]
links = [{ a = "L0", b = "S0", rate = "10Gbps", count = 2 }, { a = "L1", b = "S0", rate = "40Gbps" }]
[[workload]]
pattern = "matrix"
size = "30KB"
entries = [{ src = "L0", dst = "L1", rate = "5Gbps" }, { src = "b0", dst = "a1", rate = "1Gbps" }]
[[workload]]
pattern = "bulk"
src = ["a0"]
dst = ["b1"]
rate = "1Gbps"
write = "64KB"
"""


def seed_scenarios() -> List[Tuple[str, Dict[str, Any]]]:
    """(name, canonical dict) of small scenarios of every kind and the shipped ones: the
    mutation seeds (the small ones count twice: their runs are quick)."""
    import fabriclb

    small = [("tiny", TINY), ("tiny-full", TINY_FULL), ("fat-tree", TINY_FAT_TREE), ("explicit", TINY_EXPLICIT)]
    out = [(n, fabriclb.load_scenario(t)) for n, t in small] * 2
    for p in sorted((REPO / "scenarios").rglob("*.toml")):
        out.append((p.relative_to(REPO).as_posix(), fabriclb.load_scenario(p)))
    return out


#: Values a mutation may put anywhere: edges of every type the scenario uses.
INTERESTING: List[Any] = [
    0, 1, -1, 2, 3, 255, 256, 65535, 65536, 2**31, 2**32, 2**32 + 1, 2**63, 10**19, 1.5, -0.5, 1e308, 1e-300,
    True, False, "", " ", "abc", "0ps", "1ps", "1ns", "1us", "100s", "86400s", "1e9s", "-1ms",
    "0bps", "1bps", "1Tbps", "1e30Gbps", "0B", "1B", "1GB", "1e30B", "0pkt", "1pkt", "1e9pkt", "9e15pkt",
    "L0-S0", "L0-S0#*", "random:1", "random:99999", "H0", "S0", "L0", "\x1b[2J", "a\nb",
    [], [1], ["300pkt", "5pkt"], {}, {"a": 1}, None,
]

#: `--set` values (TOML text) a mutation may use, including what JSON cannot say.
INTERESTING_TOML: List[str] = ["nan", "inf", "-inf", "+nan", "1e400", "[nan]", '{ x = inf }', "0", "-1", "1e9"]


#: Numbers for type-preserving mutations: plausible values and the edges of every range.
GENTLE_NUMBERS = [
    "0", "1", "2", "3", "4", "8", "16", "64", "100", "1000", "65536", "2147483648", "4294967296",
    "0.5", "0.99", "1.0000001", "1e-3", "1e-6", "1e-9", "1e6", "1e9", "1e15", "1e30", "-1",
]


def gentle(value: Any, number: str) -> Any:
    """`value` with its number replaced by `number`, keeping its type and unit: "10Gbps" ->
    "100Gbps", 4 -> 100, 0.6 -> 0.5, true -> false."""
    import re

    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return int(float(number))
    if isinstance(value, float):
        return float(number)
    if isinstance(value, str):
        m = re.fullmatch(r"[0-9.eE+-]+\s*([A-Za-z]+)", value)
        if m:
            return number + m.group(1)
    return value


def scalar_paths(v: Any, path: str = "") -> List[str]:
    """Paths of the numbers, strings and booleans of a tree."""
    if isinstance(v, dict):
        return [p for k, x in v.items() for p in scalar_paths(x, f"{path}.{k}" if path else k)]
    if isinstance(v, list):
        return [p for i, x in enumerate(v) for p in scalar_paths(x, f"{path}[{i}]")]
    return [path] if path and v is not None else []


def leaf_paths(v: Any, path: str = "") -> List[str]:
    """Dotted paths (`a.b[0].c`) of every value in a tree, tables and lists included."""
    out = [path] if path else []
    if isinstance(v, dict):
        for k, x in v.items():
            out += leaf_paths(x, f"{path}.{k}" if path else k)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += leaf_paths(x, f"{path}[{i}]")
    return out


def _split(path: str) -> List[Any]:
    parts: List[Any] = []
    for seg in path.split("."):
        name, _, rest = seg.partition("[")
        if name:
            parts.append(name)
        while rest:
            idx, _, rest = rest.partition("]")
            parts.append(int(idx))
            rest = rest[1:] if rest.startswith("[") else rest
    return parts


def get_parent(tree: Any, path: str) -> Tuple[Any, Any]:
    parts = _split(path)
    cur = tree
    for p in parts[:-1]:
        cur = cur[p]
    return cur, parts[-1]


def mutate(tree: Dict[str, Any], op: str, path: str, value: Any) -> None:
    """Apply one mutation in place: `set` a value, `delete` a field, `dup` a list entry,
    `wrap` a value in a list, `unknown` field next to it."""
    parent, key = get_parent(tree, path)
    if op == "set":
        parent[key] = value
    elif op == "gentle":
        parent[key] = gentle(parent[key], value)
    elif op == "delete":
        del parent[key]
    elif op == "dup" and isinstance(parent, list):
        parent.insert(key, json.loads(json.dumps(parent[key])))
    elif op == "wrap":
        parent[key] = [parent[key]]
    elif op == "unknown" and isinstance(parent, dict):
        parent[f"{key}_x"] = value


def random_case(rng: "random.Random", seeds: List[Tuple[str, Dict[str, Any]]]) -> Tuple[str, Dict[str, Any], List[str]]:
    """One mutated scenario: (seed name, tree, `--set` overrides). Mostly one mutation, and
    mostly type-preserving ones (same kind of value, at the edges of its range), so that many
    cases validate and reach the run."""
    name, base = rng.choice(seeds)
    tree = json.loads(json.dumps(base))
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        op = rng.choice(["gentle", "gentle", "gentle", "gentle", "set", "set", "delete", "dup", "wrap", "unknown"])
        paths = scalar_paths(tree) if op == "gentle" else leaf_paths(tree)
        if not paths:
            break
        value = rng.choice(GENTLE_NUMBERS if op == "gentle" else INTERESTING)
        try:
            mutate(tree, op, rng.choice(paths), value)
        except (KeyError, IndexError, TypeError):
            pass
    overrides: List[str] = []
    if rng.random() < 0.2:
        paths = [p for p in scalar_paths(tree) if not p.endswith("]")] or ["seed"]
        overrides.append(f"{rng.choice(paths)}={rng.choice(INTERESTING_TOML)}")
    return name, tree, overrides


def random_scenario(rng: "random.Random") -> Dict[str, Any]:
    """A scenario built from scratch: every knob that sizes a run drawn from small values most
    of the time and from the edges of its range otherwise."""

    def pick(normal: List[Any], edge: List[Any]) -> Any:
        return rng.choice(edge) if rng.random() < 0.08 else rng.choice(normal)

    def num() -> int:
        return pick([1, 1, 2, 2, 3, 4, 8], [0, 64, 1000, 65536, 2**31, 2**32 - 1])

    def dur() -> str:
        return pick(["100us", "500us", "1ms", "2ms", "5ms"], ["0ps", "1ps", "1ns", "1us", "1s", "100s", "86400s", "1e9s"])

    def rate() -> str:
        return pick(["1Gbps", "10Gbps", "10Gbps", "40Gbps"], ["1bps", "100bps", "1Mbps", "1Tbps", "1e30Gbps"])

    def size() -> str:
        return pick(["1KB", "20KB", "50KB", "200KB"], ["0B", "1B", "1GB", "1e12B"])

    kind = rng.choice(["leaf-spine", "leaf-spine", "fat-tree", "explicit"])
    if kind == "leaf-spine":
        topo: Dict[str, Any] = {"kind": kind, "leaves": num(), "spines": num(), "hosts_per_leaf": num(),
                                "links_per_pair": num(), "host_rate": rate(), "fabric_rate": rate()}
        links = ["L0-S0", "S0-L1", "L0-S0#*", "L1-S0#1", "random:1", "random:3"]
    elif kind == "fat-tree":
        topo = {"kind": kind, "k": pick([2, 4, 4, 6], [64, 128, 130, 3]), "oversubscription": num(),
                "host_rate": rate(), "fabric_rate": rate()}
        links = ["E0_0-A0_0", "A0_0-C0", "random:2"]
    else:
        topo = {"kind": kind, "switches": [{"name": "L0", "role": "leaf"}, {"name": "L1", "role": "leaf"},
                                           {"name": "S0", "role": pick(["spine"], ["core", "leaf", "switch"])}],
                "hosts": [{"name": "a", "attach": "L0", "rate": rate(), "count": num()},
                          {"name": "b", "attach": pick(["L1"], ["S0", "a0", "nowhere"]), "rate": rate(), "count": num()}],
                "links": [{"a": "L0", "b": "S0", "rate": rate(), "count": num()}, {"a": "L1", "b": "S0", "rate": rate()}]}
        links = ["L0-S0", "S0-L1", "L0-S0#*"]
    pattern = rng.choice(["permutation", "poisson", "client-server", "incast", "bulk", "explicit", "matrix"])
    w: Dict[str, Any] = {"pattern": pattern}
    if pattern == "permutation":
        w.update(size=size(), start=dur()) if rng.random() < 0.7 else None
    elif pattern in ("poisson", "client-server"):
        w.update(load=pick([0.1, 0.3, 0.6], [0.0, 1.0, 1.5, -1]), load_basis=rng.choice(["host", "fabric"]))
        w.update(size=size()) if rng.random() < 0.5 else w.update(cdf=pick(["web-search", "hadoop", "enterprise"], ["no-such.cdf", ""]))
        if rng.random() < 0.3:
            w["capacity"] = rate()
        if pattern == "client-server" and rng.random() < 0.3:
            w["connections_per_pair"] = rng.choice([1, 3, 255])
    elif pattern == "incast":
        w.update(servers=num(), size=size(), requests=num(), interval=dur())
    elif pattern == "bulk":
        w.update(src=["0"], dst=["1", "2"], flows_per_src=num(), rate=rate())
    elif pattern == "explicit":
        w["flows"] = [{"src": "0", "dst": "1", "size": size(), "count": num(), "start": dur()}]
    else:
        w.update(size=size(), entries=[{"src": "0", "dst": "1", "rate": rate()}])
    sc: Dict[str, Any] = {"duration": rng.choice(["1ms", "2ms", "2ms", "10ms"]), "topology": topo, "workload": [w]}
    if rng.random() < 0.3:
        sc["drain"] = dur()
    if rng.random() < 0.2:
        sc["warmup"] = dur()
    if rng.random() < 0.5:
        sc["failures"] = []
        for _ in range(rng.randint(1, 3)):
            fk = rng.choice(["down", "degrade", "lossy", "flap"])
            f: Dict[str, Any] = {"link": rng.choice(links), "kind": fk}
            if rng.random() < 0.5:
                f["at"] = dur()
            if rng.random() < 0.5:
                f["until"] = dur()
            own = {"degrade": ("rate", rate()), "lossy": ("loss", pick([0.01, 0.1, 0.5], [0.0, 1.0, 1.5])), "flap": ("period", dur())}
            if fk in own and rng.random() < 0.95:
                f[own[fk][0]] = own[fk][1]
            if rng.random() < 0.05:
                k, v = own[rng.choice(list(own))]
                f[k] = v
            sc["failures"].append(f)
    if rng.random() < 0.6:
        m: Dict[str, Any] = {}
        if rng.random() < 0.6:
            m["window"] = pick(["1ms", "10ms", "500us"], ["0ps", "1ps", "1ns", "1us", "1s", "86400s"])
        if rng.random() < 0.4:
            m["trace_flows"] = pick([[0], [0, 1]], [[10**6], [-1], list(range(100))])
            m["trace_interval"] = pick(["10us", "100us"], ["0ps", "1ps", "1ns", "1s"])
        if rng.random() < 0.3:
            m["queue_ports"] = rng.choice([["fabric"], [links[0].replace("-", "->")]])
        sc["measure"] = m
    if rng.random() < 0.4:
        sc["switch"] = {"buffer": pick(["20pkt", "100pkt", "1MB"], ["1pkt", "1e6pkt", "1e9pkt", "1GB", "10KB"])}
        if rng.random() < 0.3:
            sc["switch"]["shared_buffer"] = rng.choice(["1MB", "1GB"])
    if rng.random() < 0.4:
        sc["scheme"] = {"name": rng.choice(["ecmp", "spray", "conga", "conga-flow", "local"])}
        if sc["scheme"]["name"].startswith(("conga", "local")) and rng.random() < 0.5:
            sc["scheme"]["flowlet_table_size"] = rng.choice([1, 65536, 16777216])
    return sc


def new_root() -> Path:
    return Path(tempfile.mkdtemp(prefix="fabriclb-fuzz-"))
