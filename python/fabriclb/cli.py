"""The command line: ``fabriclb run | validate | bench | flowlets | list``.

Every subcommand is registered in one place, :data:`COMMANDS`, with :func:`register`. More
commands (the lab's ``reproduce`` and ``sweep``) plug in by registering from a module named in
:data:`EXTENSION_MODULES`; more ``fabriclb list`` sections with :func:`register_list_section`.

The CLI never shows a traceback or a Rust panic: every failure is a one-paragraph message on
stderr and an exit code: 2 for bad input (:class:`ScenarioError`, usage errors), 3 when the
simulation fails (:class:`SimulationError`), 130 on Ctrl-C, 1 for anything unexpected.
``FABRICLB_DEBUG=1`` prints the traceback as well.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys
import traceback
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import api
from .errors import FabriclbError, ScenarioError, SimulationError

__all__ = [
    "main",
    "register",
    "register_list_section",
    "COMMANDS",
    "LIST_SECTIONS",
    "EXTENSION_MODULES",
    "EXIT_OK",
    "EXIT_INTERNAL",
    "EXIT_INPUT",
    "EXIT_SIMULATION",
    "EXIT_INTERRUPTED",
]

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INPUT = 2
EXIT_SIMULATION = 3
EXIT_INTERRUPTED = 130

Handler = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    handler: Handler


#: The subcommands, by name, in the order `fabriclb --help` lists them.
COMMANDS: Dict[str, Command] = {}

#: Modules imported before the command line is parsed; each registers more commands with
#: :func:`register`. LAB HOOK: the lab adds its module here (e.g. "fabriclb.lab.commands").
EXTENSION_MODULES: List[str] = ["fabriclb.lab.cli"]


def register(name: str, help: str, configure: Callable[[argparse.ArgumentParser], None]) -> Callable[[Handler], Handler]:
    """Decorator registering ``handler(args) -> exit code`` as subcommand ``name``;
    ``configure(parser)`` adds its arguments."""

    def deco(handler: Handler) -> Handler:
        COMMANDS[name] = Command(name, help, configure, handler)
        return handler

    return deco


#: Sections of `fabriclb list`: (title, function returning (name, description) rows).
LIST_SECTIONS: List[Tuple[str, Callable[[], List[Tuple[str, str]]]]] = []


def register_list_section(title: str) -> Callable[[Callable[[], List[Tuple[str, str]]]], Callable[[], List[Tuple[str, str]]]]:
    """Decorator adding a section to `fabriclb list`."""

    def deco(fn: Callable[[], List[Tuple[str, str]]]) -> Callable[[], List[Tuple[str, str]]]:
        LIST_SECTIONS.append((title, fn))
        return fn

    return deco


# ----------------------------------------------------------------------------- helpers


def printable(msg: str) -> str:
    """``msg`` with control and format characters (escape sequences, carriage returns, bidi
    overrides...) escaped, so that text from a scenario cannot rewrite the terminal.
    Newlines and tabs stay."""
    out = []
    for c in msg:
        if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf"):
            out.append(c)
        else:
            out.append(c.encode("unicode_escape").decode("ascii"))
    return "".join(out)


def _err(msg: str) -> None:
    print(f"fabriclb: {printable(msg.rstrip())}", file=sys.stderr)


def _warn(msg: str) -> None:
    _err(f"warning: {msg}")


def _add_scenario_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenario", help="scenario file (.toml or .json)")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="override a field before validation, e.g. --set workload[0].load=0.6 --set scheme.name=spray (repeatable)",
    )


def _tag(d: Any) -> str:
    """The variant name of a tagged config value (its `kind`)."""
    if isinstance(d, dict):
        for k in ("kind", "type", "pattern", "name"):
            if isinstance(d.get(k), str):
                return str(d[k])
    return str(d)


def describe(sc: Dict[str, Any]) -> str:
    """A one-line description of a canonical scenario."""
    parts: List[str] = []
    topo = sc.get("topology", {})
    kind = _tag(topo)
    if kind == "leaf-spine":
        parts.append(
            f"leaf-spine {topo.get('leaves')} leaves x {topo.get('spines')} spines x "
            f"{topo.get('hosts_per_leaf')} hosts ({topo.get('host_rate')} hosts, {topo.get('fabric_rate')} fabric"
            + (f", {topo.get('links_per_pair')} links/pair" if topo.get("links_per_pair", 1) != 1 else "")
            + ")"
        )
    elif kind == "fat-tree":
        parts.append(f"fat-tree k={topo.get('k')} ({topo.get('host_rate')} hosts, {topo.get('fabric_rate')} fabric)")
    elif kind == "explicit":
        hosts = sum(int(h.get("count", 1)) for h in topo.get("hosts", []))
        parts.append(f"explicit fabric: {len(topo.get('switches', []))} switches, {hosts} hosts, {len(topo.get('links', []))} links")
    else:
        parts.append(f"{kind} topology")
    parts.append(f"scheme {_tag(sc.get('scheme', {}))}")
    loads = []
    for w in sc.get("workload", []):
        t = _tag(w)
        if isinstance(w, dict) and "load" in w:
            t += f" at load {w['load']}"
        loads.append(t)
    parts.append("workload: " + (", ".join(loads) if loads else "none"))
    if sc.get("failures"):
        parts.append(f"{len(sc['failures'])} link event(s)")
    parts.append(f"{sc.get('duration')} simulated, seed {sc.get('seed')}")
    return "; ".join(parts)


def _num(v: Any, fmt: str = "{:.3f}") -> str:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return "-" if v is None else str(v)
    return fmt.format(v)


def format_summary(s: Dict[str, Any]) -> str:
    """The short table `fabriclb run` prints: scheme, flows, FCT (overall and per size bucket
    when the summary has them), goodput."""
    rows: List[Tuple[str, str]] = [
        ("scheme", str(s.get("scheme", "-"))),
        ("seed", str(s.get("seed", "-"))),
        ("flows completed", f"{s.get('flows_completed', '-')} / {s.get('flows_measured', '-')} measured"
         f" ({s.get('flows_unfinished', '-')} unfinished; {s.get('flows_started', '-')} started incl. warm-up)"),
    ]
    fct = s.get("fct") if isinstance(s.get("fct"), dict) else {}

    def fct_row(label: str, d: Dict[str, Any]) -> None:
        cells = [f"{k} {_num(d.get(k + '_ms'))}" for k in ("mean", "p50", "p99")]
        n = d.get("count", d.get("flows"))
        rows.append((label, "   ".join(cells) + (f"   ({n} flows)" if n is not None else "")))

    fct_row("FCT ms", fct)
    # Size buckets: any nested dict that carries the same keys, possibly one level deeper.
    for key, val in fct.items():
        if not isinstance(val, dict) or key == "all":
            continue
        if "mean_ms" in val:
            fct_row(f"  {key}", val)
        else:
            for k2, v2 in val.items():
                if isinstance(v2, dict) and "mean_ms" in v2:
                    fct_row(f"  {k2}", v2)
    rows.append(("goodput", f"{_num(s.get('goodput_gbps'))} Gbps"))
    job = s.get("hdfs")
    if isinstance(job, dict):
        done = f"{job.get('files_done', '-')} / {job.get('files', '-')} files, {job.get('blocks_done', '-')} blocks"
        jct = job.get("jct_s")
        rows.append(("job completion", (f"{_num(jct, '{:.4f}')} s" if jct is not None else "unfinished") + f"   ({done})"))
    width = max(len(r[0]) for r in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


# ----------------------------------------------------------------------------- run


def _run_args(p: argparse.ArgumentParser) -> None:
    _add_scenario_args(p)
    p.add_argument("--seed", type=int, default=None, help="master seed (overrides the scenario's `seed`)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for summary.json and the CSV tables (created)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar and no summary table")


@register("run", "run one scenario and write summary.json, flows.csv, ports.csv, windows.csv", _run_args)
def cmd_run(args: argparse.Namespace) -> int:
    from .progress import ProgressBar
    from .result import check_out_dir

    if args.seed is not None and args.seed < 0:
        raise ScenarioError(f"--seed must be >= 0, not {args.seed}", kind="config", field="seed")
    # Validate first so that input errors come before any output folder is made.
    sc = api.load_scenario(args.scenario, args.overrides)
    check_out_dir(args.out)
    bar = ProgressBar(enabled=not args.quiet)
    try:
        res = api.run(sc, seed=args.seed, progress=bar)
    finally:
        bar.close()
    for w in res.summary.get("warnings", []):
        _warn(w)
    try:
        out = res.write(args.out)
    except OSError as e:
        raise ScenarioError(f"cannot write the results to {args.out}: {e.strerror or e}", kind="io") from None
    if not args.quiet:
        print(format_summary(res.summary))
        files = sorted(p.name for p in out.iterdir() if p.suffix in (".csv", ".json"))
        print(f"results in {out}/: {', '.join(files)}")
    return EXIT_OK


# ----------------------------------------------------------------------------- validate


@register("validate", "check a scenario file and print a one-line description", _add_scenario_args)
def cmd_validate(args: argparse.Namespace) -> int:
    sc, warnings = api.check(args.scenario, args.overrides)
    for w in warnings:
        _warn(w)
    name = sc.get("name") or Path(args.scenario).stem
    print(printable(f"ok: {name}"))
    print(printable(describe(sc)))
    return EXIT_OK


# ----------------------------------------------------------------------------- bench


def _bench_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default: all; see `fabriclb list`)")
    p.add_argument(
        "--probe",
        action="store_true",
        help="also build and run the speed probe (../shared/probe or $FABRICLB_PROBE_DIR) at each "
        "benchmark's size, just before and just after the benchmark, and add "
        "probe_packet_hops_per_s (their mean) and ratio_to_probe",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run each benchmark N times (each bracketed by its probe runs) and report the run "
        "with the median ratio to the probe (or median speed without --probe); all ratios are "
        "listed in `ratios`",
    )


@register("bench", "run named benchmarks; one JSON object per line", _bench_args)
def cmd_bench(args: argparse.Namespace) -> int:
    from . import probe

    if args.repeat < 1:
        raise ScenarioError(f"--repeat must be >= 1, got {args.repeat}", kind="config")
    known = api.bench_names()
    names = args.names or known
    for n in names:
        if n not in known:
            raise ScenarioError(f"unknown benchmark '{n}'; known: {', '.join(known)}", kind="config")
    exe: Optional[Path] = None
    if args.probe:
        src = probe.probe_dir()
        if src is None:
            _err("no probe found (looked for $FABRICLB_PROBE_DIR and ../shared/probe); running without it")
        else:
            try:
                exe = probe.build_probe(src)
            except RuntimeError as e:
                _err(f"{e}; running without the probe")

    def probe_rate(n: str) -> Optional[float]:
        if exe is None or n not in probe.PROBE_ARGS:
            return None
        try:
            return probe.run_probe(exe, n)[0]
        except RuntimeError as e:
            _err(f"{n}: {e}")
            return None

    for n in names:
        runs = []
        for _ in range(args.repeat):
            before = probe_rate(n)
            (r,) = api.bench([n])
            after = probe_rate(n)
            rates = [x for x in (before, after) if x is not None]
            if rates and r.get("packet_hops_per_s"):
                r["probe_packet_hops_per_s"] = sum(rates) / len(rates)
                r["ratio_to_probe"] = round(float(r["packet_hops_per_s"]) / r["probe_packet_hops_per_s"], 4)
                note = probe.PROBE_ARGS[n][1]
                if note:
                    r["probe_note"] = note
            runs.append(r)
        key = "ratio_to_probe" if all("ratio_to_probe" in r for r in runs) else "packet_hops_per_s"
        runs.sort(key=lambda r: float(r[key]))
        r = runs[(len(runs) - 1) // 2]
        if args.repeat > 1:
            r["repeats"] = args.repeat
            r["ratios" if key == "ratio_to_probe" else "packet_hops_per_s_all"] = [x[key] for x in runs]
        print(json.dumps(r), flush=True)
    return EXIT_OK


# ----------------------------------------------------------------------------- flowlets


def _flowlets_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("capture", help="pcap or pcapng file (Ethernet, VLAN, IPv4/IPv6, TCP/UDP, VXLAN)")
    p.add_argument("--gap", default="250ms,500us,100us", help="inactivity gaps, comma-separated (default: %(default)s)")
    p.add_argument("--out", metavar="DIR", help="folder for flowlet_sizes.csv, flowlet_concurrency.csv, summary.json, plot.png")


@register("flowlets", "flowlet sizes and concurrency of a packet capture (CONGA Fig. 5; docs/FLOWLETS.md)", _flowlets_args)
def cmd_flowlets(args: argparse.Namespace) -> int:
    from .capture import flowlets, gap_text

    res = flowlets(args.capture, args.gap, out=args.out)
    s = res.summary
    print(printable(f"{s['capture']}: {s['records']} records, {s['packets']} TCP/UDP packets, "
                    f"{s['payload_bytes']} payload bytes, {s['windows']} windows of 1 ms"))
    if s["skipped"]:
        print("skipped: " + ", ".join(printable(f"{k} {v}") for k, v in s["skipped"].items()))
    fa = s["flows_active"]
    print(f"active flows per 1 ms: median {_num(fa['median'], '{:g}')}, max {_num(fa['max'], '{:g}')}")
    for g in s["gaps"]:
        med = g["median_size_bytes"]
        print(f"gap {gap_text(round(g['gap_us'] * 1000))}: {g['flowlets']} flowlets, half the bytes in flowlets of "
              f"at least {med if med is not None else '-'} B; active per 1 ms: median "
              f"{_num(g['active_median'], '{:g}')}, max {_num(g['active_max'], '{:g}')}")
    if args.out:
        print(f"results in {args.out}/: flowlet_sizes.csv, flowlet_concurrency.csv, summary.json, plot.png")
    return EXIT_OK


# ----------------------------------------------------------------------------- list


_NAME_LINE = re.compile(r'^\s*name\s*=\s*"((?:[^"\\]|\\.)*)"', re.M)


def _scenario_name(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return "(unreadable)"
    if path.suffix == ".json":
        try:
            return str(json.loads(text).get("name", ""))
        except (ValueError, AttributeError):
            return "(not valid JSON)"
    # The top-level `name` is the first `name = "..."` before any [table] header.
    head = re.split(r"^\s*\[", text, maxsplit=1, flags=re.M)[0]
    m = _NAME_LINE.search(head)
    return m.group(1) if m else ""


def shipped_scenarios() -> List[Tuple[str, str]]:
    """(path relative to the scenarios folder, name) of every shipped scenario file."""
    root = api.scenarios_dir()
    if not root.is_dir():
        return []
    files = sorted(p for p in root.rglob("*") if p.suffix in (".toml", ".json") and p.is_file())
    return [(p.relative_to(root).as_posix(), _scenario_name(p)) for p in files]


@register_list_section("schemes (scheme.name)")
def _list_schemes() -> List[Tuple[str, str]]:
    return [(s, "") for s in api.schemes()]


@register_list_section("workload patterns")
def _list_workloads() -> List[Tuple[str, str]]:
    return [(w, "") for w in api.workloads()]


@register_list_section("benchmarks (fabriclb bench)")
def _list_benchmarks() -> List[Tuple[str, str]]:
    return [(b, "") for b in api.bench_names()]


@register_list_section("shipped scenarios")
def _list_scenarios() -> List[Tuple[str, str]]:
    try:
        root = api.scenarios_dir()
    except FabriclbError as e:
        return [("(none)", e.message)]
    rows = shipped_scenarios()
    return [(f"{root.name}/{p}", n) for p, n in rows] or [("(none)", f"no scenario files in {root}")]


# LAB HOOK: the lab registers an "experiments" section here with @register_list_section.


def _list_args(p: argparse.ArgumentParser) -> None:
    pass


@register("list", "list schemes, workload patterns, benchmarks and shipped scenarios", _list_args)
def cmd_list(args: argparse.Namespace) -> int:
    for i, (title, fn) in enumerate(LIST_SECTIONS):
        rows = fn()
        if i:
            print()
        print(f"{title}:")
        width = max((len(r[0]) for r in rows), default=0)
        for name, desc in rows:
            print(f"  {name.ljust(width)}  {desc}".rstrip())
    return EXIT_OK


# ----------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    for mod in EXTENSION_MODULES:
        importlib.import_module(mod)
    parser = argparse.ArgumentParser(
        prog="fabriclb",
        description="Packet-level simulator for datacenter fabric load balancing (CONGA and friends).",
        epilog="Exit codes: 0 ok, 2 bad input, 3 simulation error, 130 interrupted. "
        "FABRICLB_DEBUG=1 shows tracebacks.",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for c in COMMANDS.values():
        sp = sub.add_parser(c.name, help=c.help, description=c.help)
        c.configure(sp)
        sp.set_defaults(_handler=c.handler)
    return parser


def _debug() -> bool:
    return os.environ.get("FABRICLB_DEBUG", "") not in ("", "0")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the `fabriclb` console script; returns the exit code."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.version:
            print(f"fabriclb {api.core_version()}")
            return EXIT_OK
        handler = getattr(args, "_handler", None)
        if handler is None:
            parser.print_help(sys.stderr)
            return EXIT_INPUT
        return int(handler(args))
    except KeyboardInterrupt:
        if _debug():
            traceback.print_exc()
        _err("interrupted")
        return EXIT_INTERRUPTED
    except ScenarioError as e:
        if _debug():
            traceback.print_exc()
        _err(e.message)
        return EXIT_INPUT
    except SimulationError as e:
        if _debug():
            traceback.print_exc()
        _err(e.message)
        return EXIT_SIMULATION
    except FabriclbError as e:
        if _debug():
            traceback.print_exc()
        _err(e.message)
        return EXIT_SIMULATION
    except BrokenPipeError:
        # `fabriclb list | head`: the reader went away; not an error worth a message.
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_OK
    except SystemExit as e:  # argparse usage errors (exit 2) and --help (exit 0)
        return int(e.code) if isinstance(e.code, int) else EXIT_INPUT
    except Exception as e:  # noqa: BLE001 - the last line of defence: never a traceback
        if _debug():
            traceback.print_exc()
        _err(
            f"internal error ({type(e).__name__}: {e}). This is a bug in fabriclb; "
            "run again with FABRICLB_DEBUG=1 for the traceback and report it."
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
