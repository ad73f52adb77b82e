"""The `fabriclb` command line: clean failures on bad input, outputs, determinism, list, bench."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import pytest

import fabriclb
from conftest import (
    TINY_HEAD,
    TINY_TOPOLOGY,
    CliRunner,
    assert_clean_failure,
    cli_command,
    tiny_scenario,
)

# ----------------------------------------------------------------------------- bad input

# Each case writes a scenario into a folder and returns (scenario path, words the error
# message must contain: the field or the file at fault).
Case = Callable[[Path], Tuple[Path, List[str]]]


def _write(d: Path, text: str, name: str = "s.toml") -> Path:
    p = d / name
    p.write_text(text)
    return p


def _empty(d: Path) -> Tuple[Path, List[str]]:
    return _write(d, "\n  \n"), ["empty"]


def _toml_syntax(d: Path) -> Tuple[Path, List[str]]:
    return _write(d, 'name = "x"\nduration = "3ms\n[topology\n'), ["s.toml", "TOML", "line 2"]


def _missing_file(d: Path) -> Tuple[Path, List[str]]:
    return d / "no-such-scenario.toml", ["no-such-scenario.toml", "does not exist"]


def _unknown_field(d: Path) -> Tuple[Path, List[str]]:
    topo = TINY_TOPOLOGY + 'link_speed = "10Gbps"\n'
    return _write(d, tiny_scenario(topology=topo)), ["topology", "link_speed"]


def _unknown_top_level_field(d: Path) -> Tuple[Path, List[str]]:
    return _write(d, "durration = \"1ms\"\n" + tiny_scenario()), ["durration"]


def _wrong_unit(d: Path) -> Tuple[Path, List[str]]:
    topo = TINY_TOPOLOGY.replace('fabric_rate = "10Gbps"', 'fabric_rate = "40GB"')
    return _write(d, tiny_scenario(topology=topo)), ["fabric_rate", "GB"]


def _unitless_number(d: Path) -> Tuple[Path, List[str]]:
    topo = TINY_TOPOLOGY.replace('host_rate = "10Gbps"', "host_rate = 10")
    return _write(d, tiny_scenario(topology=topo)), ["host_rate", "unit"]


def _zero_rate(d: Path) -> Tuple[Path, List[str]]:
    topo = TINY_TOPOLOGY.replace('host_rate = "10Gbps"', 'host_rate = "0Gbps"')
    return _write(d, tiny_scenario(topology=topo)), ["host_rate"]


def _negative_rate(d: Path) -> Tuple[Path, List[str]]:
    topo = TINY_TOPOLOGY.replace('fabric_rate = "10Gbps"', 'fabric_rate = "-40Gbps"')
    return _write(d, tiny_scenario(topology=topo)), ["fabric_rate", "negative"]


#: A workload drawing flow sizes from a CDF file at a given load (field names of the core's
#: CDF-driven pattern).
def _cdf_workload(cdf: str, load: float) -> str:
    return f'[[workload]]\npattern = "poisson"\ncdf = "{cdf}"\nload = {load}\nload_basis = "host"\n'


def _load_above_one(d: Path) -> Tuple[Path, List[str]]:
    cdf = _write(d, "1000 0.5\n100000 1.0\n", "ok.cdf")
    return _write(d, tiny_scenario(workload=_cdf_workload(str(cdf), 1.5))), ["workload[0].load"]


def _non_monotone_cdf(d: Path) -> Tuple[Path, List[str]]:
    cdf = _write(d, "1000 0.2\n5000 0.7\n8000 0.4\n100000 1.0\n", "bad.cdf")
    return _write(d, tiny_scenario(workload=_cdf_workload(str(cdf), 0.3))), ["bad.cdf", "line 3"]


def _disconnected(d: Path) -> Tuple[Path, List[str]]:
    topo = """\
[topology]
kind = "explicit"
switches = [{ name = "A", role = "leaf" }, { name = "B", role = "leaf" }, { name = "S", role = "spine" }]
hosts = [{ name = "ha", attach = "A", rate = "10Gbps", count = 2 }, { name = "hb", attach = "B", rate = "10Gbps", count = 2 }]
links = [{ a = "A", b = "S", rate = "10Gbps" }]
"""
    return _write(d, tiny_scenario(topology=topo)), ["topology", "disconnected"]


def _failure_on_missing_link(d: Path) -> Tuple[Path, List[str]]:
    extra = '[[failures]]\nlink = "L0-S7"\nkind = "down"\n'
    return _write(d, tiny_scenario(extra=extra)), ["failures[0]", "S7"]


def _unknown_host(d: Path) -> Tuple[Path, List[str]]:
    wl = '[[workload]]\npattern = "bulk"\nsrc = ["H0"]\ndst = ["H99"]\n'
    return _write(d, tiny_scenario(workload=wl)), ["workload[0].dst[0]", "H99"]


def _permanent_partition(d: Path) -> Tuple[Path, List[str]]:
    extra = '[[failures]]\nlink = "L0-S0"\nkind = "down"\n[[failures]]\nlink = "L0-S1"\nkind = "down"\n'
    return _write(d, tiny_scenario(extra=extra)), ["failures", "no path", "until"]


def _buffer_below_a_packet(d: Path) -> Tuple[Path, List[str]]:
    return _write(d, tiny_scenario(extra='[switch]\nbuffer = "1KB"\n')), ["switch.buffer", "full-size packet"]


def _bad_scheme_field(d: Path) -> Tuple[Path, List[str]]:
    text = tiny_scenario().replace('name = "spray"', 'name = "conga"\nmetric_aging = "-1ms"')
    return _write(d, text), ["scheme.metric_aging", "negative"]


BAD_INPUTS: Dict[str, Case] = {
    "empty-file": _empty,
    "toml-syntax": _toml_syntax,
    "missing-file": _missing_file,
    "unknown-field": _unknown_field,
    "unknown-top-level-field": _unknown_top_level_field,
    "wrong-unit": _wrong_unit,
    "unitless-number": _unitless_number,
    "zero-rate": _zero_rate,
    "negative-rate": _negative_rate,
    "load-above-one": _load_above_one,
    "non-monotone-cdf": _non_monotone_cdf,
    "disconnected-topology": _disconnected,
    "failure-on-missing-link": _failure_on_missing_link,
    "unknown-host": _unknown_host,
    "permanent-partition": _permanent_partition,
    "buffer-below-a-packet": _buffer_below_a_packet,
    "bad-scheme-field": _bad_scheme_field,
}


@pytest.mark.parametrize("case", list(BAD_INPUTS), ids=list(BAD_INPUTS))
def test_bad_input_validate(case: str, tmp_path: Path, cli: CliRunner) -> None:
    path, needles = BAD_INPUTS[case](tmp_path)
    p = cli("validate", path)
    assert_clean_failure(p, 2, *needles)
    assert "ok:" not in p.stdout


@pytest.mark.parametrize("case", list(BAD_INPUTS), ids=list(BAD_INPUTS))
def test_bad_input_run(case: str, tmp_path: Path, cli: CliRunner) -> None:
    path, needles = BAD_INPUTS[case](tmp_path)
    out = tmp_path / "out"
    p = cli("run", path, "--out", out)
    assert_clean_failure(p, 2, *needles)
    assert not (out / "flows.csv").exists()


def test_bad_override(tiny: Path, cli: CliRunner) -> None:
    p = cli("validate", tiny, "--set", "topology.fabric_rate=fast")
    assert_clean_failure(p, 2, "fabric_rate", "fast")
    p = cli("run", tiny, "--set", "no_equals_sign", "--out", "o")
    assert_clean_failure(p, 2, "no_equals_sign", "path=value")


def test_usage_errors_exit_2(cli: CliRunner) -> None:
    p = cli()
    assert p.returncode == 2 and "Traceback" not in p.stderr
    p = cli("run")  # no scenario, no --out
    assert p.returncode == 2 and "Traceback" not in p.stderr
    p = cli("frobnicate")
    assert p.returncode == 2 and "Traceback" not in p.stderr


# ----------------------------------------------------------------------------- validate / run


def test_validate_ok(tiny: Path, cli: CliRunner) -> None:
    p = cli("validate", tiny)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines[0] == "ok: tiny"
    assert "leaf-spine" in lines[1] and "spray" in lines[1], lines[1]


def test_validate_applies_overrides(tiny: Path, cli: CliRunner) -> None:
    p = cli("validate", tiny, "--set", "scheme.name=ecmp", "--set", "name=renamed")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ok: renamed\n")
    assert "scheme ecmp" in p.stdout


def test_transport_profiles_validate_and_an_unknown_one_names_the_allowed(cli: CliRunner) -> None:
    testbed = Path(fabriclb.scenarios_dir()) / "conga" / "testbed.toml"
    for profile in ["linux-2.6.26", "linux-3.10"]:
        p = cli("validate", testbed, "--set", f"transport.profile={profile}")
        assert p.returncode == 0, p.stderr
        assert p.stdout.startswith("ok: conga-testbed"), p.stdout
        assert "warning" not in p.stderr, p.stderr
    p = cli("validate", testbed, "--set", "transport.profile=linux-9.99")
    assert_clean_failure(p, 2, "transport.profile", "linux-9.99", '"linux-2.6.26"', '"linux-3.10"')


def test_an_override_a_kernel_cannot_do_warns_and_runs(tiny: Path, tmp_path: Path, cli: CliRunner) -> None:
    sets = ["--set", "transport.profile=linux-2.6.26", "--set", "transport.tsq=128KiB"]
    p = cli("validate", tiny, *sets)
    assert p.returncode == 0, p.stderr
    assert "warning: transport.tsq contradicts" in p.stderr and "Linux 3.6" in p.stderr, p.stderr
    out = tmp_path / "out"
    p = cli("run", tiny, *sets, "--out", out, "--quiet")
    assert p.returncode == 0, p.stderr
    assert "warning: transport.tsq" in p.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["warnings"]) == 1 and "transport.tsq" in summary["warnings"][0]
    assert set(summary["tcp"]) == {"recoveries", "early_retransmits", "loss_probes", "undos"}
    # The same from Python; a tunable beside a profile does not warn.
    from fabriclb.api import check

    sc, warnings = check(tiny, {"transport.profile": "linux-3.10", "transport.min_rto": "1ms"})
    assert not [w for w in warnings if "transport" in w], warnings
    assert sc["transport"]["cc"] == "cubic-linux-3.10" and sc["transport"]["min_rto"] == "1ms"
    _, warnings = check(tiny, {"transport.profile": "linux-2.6.26", "transport.tsq": "128KiB"})
    assert any(w.startswith("transport.tsq contradicts") for w in warnings), warnings


REQUIRED_SUMMARY_KEYS = [
    "scheme",
    "seed",
    "sim_time_s",
    "wall_time_s",
    "events",
    "packet_hops",
    "flows_started",
    "flows_completed",
    "goodput_gbps",
    "fct",
]


def test_run_writes_outputs(tiny: Path, tmp_path: Path, cli: CliRunner) -> None:
    out = tmp_path / "out"
    p = cli("run", tiny, "--out", out, "--seed", "4")
    assert p.returncode == 0, p.stderr
    for f in ["summary.json", "flows.csv", "ports.csv", "windows.csv"]:
        assert (out / f).is_file(), f
    summary = json.loads((out / "summary.json").read_text())
    for k in REQUIRED_SUMMARY_KEYS:
        assert k in summary, k
    for k in ["mean_ms", "p50_ms", "p99_ms"]:
        assert k in summary["fct"], k
    assert summary["seed"] == 4
    assert summary["scheme"] == "spray"
    assert summary["flows_started"] == 8 and summary["flows_completed"] == 8
    flows = (out / "flows.csv").read_text().splitlines()
    assert len(flows) == 1 + 8  # header + one row per flow
    assert len((out / "ports.csv").read_text().splitlines()) > 1
    # The summary table on stdout, no progress bar when stderr is not a terminal.
    assert "spray" in p.stdout and "goodput" in p.stdout and "FCT" in p.stdout
    assert "%|" not in p.stderr and "[####" not in p.stderr


def test_run_quiet(tiny: Path, tmp_path: Path, cli: CliRunner) -> None:
    p = cli("run", tiny, "--out", tmp_path / "q", "--quiet")
    assert p.returncode == 0, p.stderr
    assert p.stdout == "" and p.stderr == ""
    assert (tmp_path / "q" / "flows.csv").is_file()


def test_seed_flag_equals_set_seed(tiny: Path, tmp_path: Path, cli: CliRunner) -> None:
    assert cli("run", tiny, "--out", tmp_path / "a", "--seed", "9", "-q").returncode == 0
    assert cli("run", tiny, "--out", tmp_path / "b", "--set", "seed=9", "-q").returncode == 0
    assert (tmp_path / "a" / "flows.csv").read_bytes() == (tmp_path / "b" / "flows.csv").read_bytes()


# ----------------------------------------------------------------------------- determinism

def _is_wall_clock(key: str) -> bool:
    """Wall-clock fields of summary.json: `wall_time_s`, anything named *wall*, and rates per
    wall-clock second (`packet_hops_per_s`, `events_per_s`)."""
    return "wall" in key or key.endswith("_per_s")


def _strip_wall(v: object) -> object:
    """The summary without its wall-clock fields."""
    if isinstance(v, dict):
        return {k: _strip_wall(x) for k, x in v.items() if not _is_wall_clock(k)}
    if isinstance(v, list):
        return [_strip_wall(x) for x in v]
    return v


def test_determinism_same_seed_same_bytes(tiny: Path, tmp_path: Path, cli: CliRunner) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for d, seed in [(a, 11), (b, 11), (c, 12)]:
        p = cli("run", tiny, "--seed", seed, "--out", d, "-q")
        assert p.returncode == 0, p.stderr
    for f in ["flows.csv", "ports.csv", "windows.csv"]:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    sa = json.loads((a / "summary.json").read_text())
    sb = json.loads((b / "summary.json").read_text())
    assert "wall_time_s" in sa
    assert _strip_wall(sa) == _strip_wall(sb)
    # Another seed gives other records.
    assert (a / "flows.csv").read_bytes() != (c / "flows.csv").read_bytes()


def test_cli_and_python_api_agree(tiny: Path, tmp_path: Path, cli: CliRunner) -> None:
    p = cli("run", tiny, "--seed", "21", "--out", tmp_path / "cli", "-q")
    assert p.returncode == 0, p.stderr
    res = fabriclb.run(tiny, seed=21)
    res.write(tmp_path / "py")
    for f in ["flows.csv", "ports.csv", "windows.csv"]:
        assert (tmp_path / "cli" / f).read_bytes() == (tmp_path / "py" / f).read_bytes(), f


# ----------------------------------------------------------------------------- list / bench


def test_list_shows_schemes_workloads_and_scenarios(cli: CliRunner) -> None:
    p = cli("list")
    assert p.returncode == 0, p.stderr
    for s in fabriclb.schemes():
        assert f"  {s}" in p.stdout, s
    for w in fabriclb.workloads():
        assert f"  {w}" in p.stdout, w
    assert "ecmp" in p.stdout and "permutation" in p.stdout
    assert "shipped scenarios:" in p.stdout
    shipped = sorted(fabriclb.scenarios_dir().rglob("*.toml"))
    for s in shipped:
        assert s.name in p.stdout, s


def test_bench_rejects_unknown_names(cli: CliRunner) -> None:
    p = cli("bench", "NOPE")
    assert_clean_failure(p, 2, "NOPE", "LS128")
    assert p.stdout == ""


def test_bench_help_lists_probe(cli: CliRunner) -> None:
    p = cli("bench", "--help")
    assert p.returncode == 0
    assert "--probe" in p.stdout and "--repeat" in p.stdout


def test_bench_rejects_a_repeat_below_one(cli: CliRunner) -> None:
    p = cli("bench", "--repeat", "0", "LS128")
    assert_clean_failure(p, 2, "--repeat", ">= 1")
    assert p.stdout == ""


# ----------------------------------------------------------------------------- Ctrl-C


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_stops_a_run_cleanly(tmp_path: Path) -> None:
    # Long enough that it cannot finish before the interrupt.
    long = tiny_scenario(
        head=TINY_HEAD.replace('duration = "3ms"', 'duration = "60s"'),
        workload='[[workload]]\npattern = "permutation"\n',
    )
    sc = tmp_path / "long.toml"
    sc.write_text(long)
    env = dict(os.environ)
    env.pop("FABRICLB_DEBUG", None)
    proc = subprocess.Popen(
        [*cli_command(), "run", str(sc), "--out", str(tmp_path / "o")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # The test runner may have SIGINT ignored; the child must see it as a user would.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(3.0)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert time.monotonic() - t0 < 5, "the run did not stop promptly"
    assert proc.returncode == 130, (proc.returncode, err)
    assert "interrupted" in err
    assert "Traceback" not in err and "panicked" not in err
    assert not (tmp_path / "o" / "flows.csv").exists()
