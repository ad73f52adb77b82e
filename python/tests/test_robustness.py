"""Robustness (issue 28): every input that validates runs without hanging or aborting, nonsense
is refused with exit 2 naming the field, checks write nothing, results are replaced whole.
Each example of the issue is a case here; they failed on the code before the fix."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import List

import pandas as pd
import pytest

import fabriclb
from conftest import CliRunner, assert_clean_failure

LS = """\
name = "ls"
duration = "3ms"
drain = "20ms"
[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
host_rate = "10Gbps"
fabric_rate = "10Gbps"
"""
PERM = '[[workload]]\npattern = "permutation"\nsize = "200KB"\n'
CROSS = '[[workload]]\npattern = "permutation"\nsize = "200KB"\ncross_tor = true\n'
FT = """\
duration = "3ms"
[topology]
kind = "fat-tree"
k = 4
host_rate = "10Gbps"
fabric_rate = "10Gbps"
"""
# Two leaves joined by one spine: each leaf has a single uplink.
ONE_UPLINK = """\
duration = "3ms"
drain = "20ms"
[topology]
kind = "explicit"
switches = [{ name = "L0", role = "leaf" }, { name = "L1", role = "leaf" }, { name = "S0", role = "spine" }]
hosts = [{ name = "a", attach = "L0", rate = "10Gbps", count = 2 }, { name = "b", attach = "L1", rate = "10Gbps", count = 2 }]
links = [{ a = "L0", b = "S0", rate = "10Gbps" }, { a = "L1", b = "S0", rate = "10Gbps" }]
"""


def _file(d: Path, text: str, name: str = "s.toml") -> Path:
    p = d / name
    p.write_text(text)
    return p


def _timed(cli: CliRunner, *args: object) -> "tuple":
    t0 = time.monotonic()
    p = cli(*args, timeout=60)
    return p, time.monotonic() - t0


# ----------------------------------------------------------------------------- the issue's examples

#: (scenario text, overrides, words the message must contain). Each gave a hang, an abort or
#: exit 0 before.
REJECTED = {
    "fat-tree-k64": (FT + PERM, ["topology.k=64"], ["topology.k", "2..=44"]),
    "routing-table-too-large": (LS + PERM, ["topology.leaves=1000", "topology.spines=100"], ["topology", "routing table", "limit"]),
    "fat-tree-oversubscription-wraps": (FT, ["topology.oversubscription=2147483648"], ["topology", "hosts", "limit"]),
    "leaf-spine-size-wraps": (LS + PERM, ["topology.spines=65536", "topology.links_per_pair=65536"], ["topology.spines", "limit"]),
    "window-1ps": (LS + PERM, ["measure.window=1ps"], ["measure.window"]),
    "trace-interval-1ps": (LS + PERM, ["measure.trace_interval=1ps", "measure.trace_flows=[0]"], ["measure.trace_interval", "limit"]),
    "only-uplink-down-past-the-end": (
        ONE_UPLINK + CROSS + '[[failures]]\nlink = "L0-S0"\nkind = "down"\nuntil = "100s"\n', [], ["failures", "no path", "until"]),
    "switch-as-array": ('switch = ["300pkt", "5pkt"]\n' + LS + PERM, [], ["switch", "list", "table"]),
    "switch-as-array-override": (LS + PERM, ['switch=["300pkt", "5pkt"]'], ["switch", "list"]),
}


@pytest.mark.parametrize("case", list(REJECTED), ids=list(REJECTED))
def test_issue_examples_exit_2_naming_the_field(case: str, tmp_path: Path, cli: CliRunner) -> None:
    text, overrides, needles = REJECTED[case]
    sc = _file(tmp_path, text)
    sets: List[str] = [a for o in overrides for a in ("--set", o)]
    p, dt = _timed(cli, "validate", sc, *sets)
    assert_clean_failure(p, 2, *needles)
    assert dt < 10, f"validate took {dt:.1f} s"
    p, dt = _timed(cli, "run", sc, *sets, "--out", tmp_path / "o")
    assert_clean_failure(p, 2, *needles)
    assert dt < 10 and not (tmp_path / "o").exists()


def test_the_documented_largest_leaf_spine_validates_in_seconds(tmp_path: Path, cli: CliRunner) -> None:
    # leaves x hosts_per_leaf = the host limit; building the graph used to be quadratic. With
    # 10 ms windows its windows.csv would pass the row limit: refused at once, naming the field;
    # with longer windows it validates.
    sc = _file(tmp_path, LS + PERM)
    big = ["--set", "topology.leaves=1000", "--set", "topology.hosts_per_leaf=1000"]
    p, dt = _timed(cli, "validate", sc, *big)
    assert_clean_failure(p, 2, "measure.window", "windows.csv")
    assert dt < 10, f"validate took {dt:.1f} s"
    p, dt = _timed(cli, "validate", sc, *big, "--set", "measure.window=100ms")
    assert p.returncode == 0, p.stderr
    assert dt < 30, f"validate took {dt:.1f} s"


def test_degrade_to_1bps_keeps_a_sane_ideal_fct(tmp_path: Path) -> None:
    # One of L0's two uplinks degraded to 1 bps: the ideal FCT is the best path's (through
    # S1, at the nominal rate), not 19.5 days.
    base = LS + PERM
    failed = base + '[[failures]]\nlink = "L0-S0"\nkind = "degrade"\nrate = "1bps"\n'
    ok = fabriclb.run(base).flows.set_index("flow")["ideal_fct_ms"]
    deg = fabriclb.run(failed).flows.set_index("flow")["ideal_fct_ms"]
    assert (deg < 1.0).all(), deg
    assert (deg - ok).abs().max() < 1e-9, (deg, ok)


def test_validate_does_not_touch_the_pcap_file(tmp_path: Path, cli: CliRunner) -> None:
    sc = _file(tmp_path, LS + PERM)
    keep = tmp_path / "SOMEFILE"
    keep.write_text("keep")
    p = cli("validate", sc, "--set", "measure.pcap_file=SOMEFILE", "--set", 'measure.pcap_links=["L0->S0"]')
    assert p.returncode == 0, p.stderr
    assert keep.read_text() == "keep"
    # A pcap file without links would never be written: an error, not silence.
    p = cli("validate", sc, "--set", "measure.pcap_file=OTHER")
    assert_clean_failure(p, 2, "measure.pcap_file", "pcap_links")
    assert not (tmp_path / "OTHER").exists()


def test_sweep_with_a_bad_grid_value_exits_2(tmp_path: Path, cli: CliRunner) -> None:
    sc = _file(tmp_path, LS + PERM)
    p = cli("sweep", sc, "--grid", "scheme.name=ecmp,bogus", "--out", tmp_path / "sw", "-q")
    assert_clean_failure(p, 2, "scheme.name=bogus", "bogus", "ecmp")
    p = cli("sweep", sc, "--grid", "scheme.name=ecmp", "--out", "", "-q")
    assert_clean_failure(p, 2, "--out")


def test_reproduce_bad_input_exits_2(cli: CliRunner) -> None:
    assert_clean_failure(cli("reproduce", "no-such-figure", "--out", "o"), 2, "no-such-figure")
    assert_clean_failure(cli("reproduce", "conga-fig2", "--out", ""), 2, "--out")
    # A form the experiment does not have: which forms it has, and which experiments have this one.
    assert_clean_failure(cli("reproduce", "conga-fig2", "--settle", "--out", "o"), 2, "conga-fig2 has no settle form",
                         "full, quick, smoke", "conga-fig9")


# ----------------------------------------------------------------------------- no silent nonsense

NONSENSE = {
    "nan-load-override": (LS + '[[workload]]\npattern = "poisson"\nsize = "10KB"\nload = 0.5\nload_basis = "host"\n',
                          ["workload[0].load=nan"], ["workload[0].load", "finite"]),
    "inf-in-toml": ("[switch]\nshared_alpha = inf\n" + LS + PERM, [], ["switch.shared_alpha", "finite"]),
    "host-on-a-spine": (ONE_UPLINK.replace('attach = "L1"', 'attach = "S0"') + PERM, [], ["topology.hosts[1].attach", "spine"]),
    "rate-on-a-down-failure": (LS + PERM + '[[failures]]\nlink = "L0-S0"\nkind = "down"\nrate = "1Gbps"\nuntil = "1ms"\n', [],
                               ["failures[0].rate", "degrade"]),
    "period-on-a-lossy-link": (LS + PERM + '[[failures]]\nlink = "L0-S0"\nkind = "lossy"\nloss = 0.1\nperiod = "1ms"\n', [],
                               ["failures[0].period", "flap"]),
    "degrade-above-nominal": (LS + PERM + '[[failures]]\nlink = "L0-S0"\nkind = "degrade"\nrate = "40Gbps"\n', [],
                              ["failures[0].rate", "nominal"]),
    "down-before-any-traffic": (
        ONE_UPLINK + CROSS.replace("cross_tor = true", 'cross_tor = true\nstart = "2ms"')
        + '[[failures]]\nlink = "L0-S0"\nkind = "down"\nat = "1ms"\n', [], ["failures", "no path", "2ms"]),
    "flap-longer-than-the-run": (ONE_UPLINK + CROSS + '[[failures]]\nlink = "L0-S0"\nkind = "flap"\nperiod = "1s"\n', [],
                                 ["failures", "no path"]),
    "loss-1": (ONE_UPLINK + CROSS + '[[failures]]\nlink = "L0-S0"\nkind = "lossy"\nloss = 1.0\n', [], ["failures", "no path"]),
    "degrade-below-a-packet-per-run": (ONE_UPLINK + CROSS + '[[failures]]\nlink = "L0-S0"\nkind = "degrade"\nrate = "100bps"\n', [],
                                       ["failures", "no path"]),
    "failure-after-the-end": (LS + PERM + '[[failures]]\nlink = "L0-S0"\nkind = "down"\nat = "1s"\n', [], ["failures[0].at", "end"]),
    "q-bits-range": (LS + PERM + '[scheme]\nname = "local"\nq_bits = -1\n', [], ["scheme.q_bits", "1..=8"]),
}


@pytest.mark.parametrize("case", list(NONSENSE), ids=list(NONSENSE))
def test_nonsense_is_an_error(case: str, tmp_path: Path, cli: CliRunner) -> None:
    text, overrides, needles = NONSENSE[case]
    sets: List[str] = [a for o in overrides for a in ("--set", o)]
    p = cli("validate", _file(tmp_path, text), *sets)
    assert_clean_failure(p, 2, *needles)
    for word in ("u8", "u32", "f64", "Config", "struct"):
        assert word not in p.stderr, p.stderr


def test_duplicate_json_keys_and_python_nan_are_errors(tmp_path: Path, cli: CliRunner) -> None:
    sc = fabriclb.load_scenario(LS + PERM)
    text = json.dumps(sc)
    dup = text.replace('"duration": "3ms"', '"duration": "3ms", "duration": "9ms"')
    assert dup != text
    p = cli("validate", _file(tmp_path, dup, "s.json"))
    assert_clean_failure(p, 2, "duplicate key", "duration")
    sc["switch"]["dre_alpha"] = float("nan")
    with pytest.raises(fabriclb.ScenarioError, match="switch.dre_alpha"):
        fabriclb.validate(sc)


def test_warnings_for_no_measured_traffic_and_overload(tmp_path: Path, cli: CliRunner) -> None:
    # Every flow starts before the warm-up ends: nothing is measured.
    late = LS.replace('drain = "20ms"', 'drain = "20ms"\nwarmup = "2ms"') + PERM.replace(
        'size = "200KB"', 'size = "200KB"\nstart = "1ms"'
    )
    sc = _file(tmp_path, late)
    p = cli("validate", sc)
    assert p.returncode == 0, p.stderr
    assert "warning" in p.stderr and "measured interval" in p.stderr
    p = cli("run", sc, "--out", tmp_path / "o", "-q")
    assert p.returncode == 0 and "measured interval" in p.stderr
    assert any("measured interval" in w for w in json.loads((tmp_path / "o" / "summary.json").read_text())["warnings"])
    over = LS + '[[workload]]\npattern = "poisson"\nsize = "100KB"\nload = 0.9\nload_basis = "host"\ncapacity = "400Gbps"\n'
    p = cli("validate", _file(tmp_path, over, "over.toml"))
    assert p.returncode == 0, p.stderr
    assert "warning" in p.stderr and "workload[0]" in p.stderr and "capacity" in p.stderr


# ----------------------------------------------------------------------------- derived numbers


def test_utilisation_and_window_throughput_never_exceed_one(tmp_path: Path) -> None:
    # Long flows saturate the host links; short windows used to count up to one packet too
    # many when packets straddled a boundary.
    text = LS + '[[workload]]\npattern = "permutation"\n[measure]\nwindow = "50us"\n'
    res = fabriclb.run(text)
    w = res.windows[res.windows.kind != "leaf-uplink-imbalance"]
    assert w.utilization.max() <= 1.0 + 1e-12, w.sort_values("utilization").tail()
    assert w.utilization.max() > 0.9  # the links are busy
    assert res.ports.utilization.max() <= 1.0 + 1e-12


# ----------------------------------------------------------------------------- side effects and files


def test_validate_writes_nothing(tmp_path: Path, cli: CliRunner) -> None:
    sc = _file(tmp_path, LS + PERM)
    before = sorted(os.listdir(tmp_path))
    assert cli("validate", sc).returncode == 0
    assert sorted(os.listdir(tmp_path)) == before


def test_run_replaces_the_results_folder_whole(tmp_path: Path, cli: CliRunner) -> None:
    sc = _file(tmp_path, LS + PERM + '[measure]\nqueue_ports = ["L0->S0"]\n')
    out = tmp_path / "out"
    assert cli("run", sc, "--out", out, "-q").returncode == 0
    assert (out / "queues.csv").is_file()
    # Without queue_ports, the stale queues.csv of the first run must not survive.
    assert cli("run", sc, "--set", "measure.queue_ports=[]", "--out", out, "-q").returncode == 0
    assert not (out / "queues.csv").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    # A folder with other files is not results: refused before running.
    (out / "notes.txt").write_text("mine")
    assert_clean_failure(cli("run", sc, "--out", out, "-q"), 2, "notes.txt")
    assert (out / "notes.txt").read_text() == "mine"
    assert_clean_failure(cli("run", sc, "--out", "", "-q"), 2, "--out")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_clean_failure(cli("run", sc, "--out", ".", "-q", cwd=empty), 2, "current folder")


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs")
def test_fifos_devices_and_huge_files_are_refused(tmp_path: Path, cli: CliRunner) -> None:
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    p, dt = _timed(cli, "validate", fifo)
    assert_clean_failure(p, 2, "pipe.toml", "regular file")
    assert dt < 10
    assert_clean_failure(cli("validate", "/dev/zero"), 2, "/dev/zero", "regular file")
    cdf_fifo = tmp_path / "pipe.cdf"
    os.mkfifo(cdf_fifo)
    wl = f'[[workload]]\npattern = "poisson"\ncdf = "{cdf_fifo.name}"\nload = 0.3\nload_basis = "host"\n'
    p, dt = _timed(cli, "validate", _file(tmp_path, LS + wl))
    assert_clean_failure(p, 2, "workload[0].cdf", "regular file")
    assert dt < 10
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(fabriclb.api.MAX_FILE_BYTES + 1)
    assert_clean_failure(cli("validate", big), 2, "big.toml", "limit")


def test_messages_name_what_the_user_wrote(tmp_path: Path, cli: CliRunner) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "bad.cdf").write_text("1000 0.5\n10 1\n")
    wl = '[[workload]]\npattern = "poisson"\ncdf = "bad.cdf"\nload = 0.3\nload_basis = "host"\n'
    _file(sub, LS + wl)
    p = cli("validate", "sub/s.toml")
    assert_clean_failure(p, 2, "sub/bad.cdf", "line 2")
    assert str(tmp_path) not in p.stderr, p.stderr
    # Control characters from the scenario are shown escaped, never sent to the terminal.
    p = cli("validate", _file(tmp_path, LS + PERM + '[[failures]]\nlink = "L0-\\u001b[2JS9"\nkind = "down"\n'))
    assert_clean_failure(p, 2, "failures[0].link", "\\x1b[2J")
    assert "\x1b" not in p.stderr


def test_limits_are_listed_in_the_reference() -> None:
    ref = (Path(__file__).resolve().parents[2] / "docs" / "SCENARIO_REFERENCE.md").read_text()
    for name, value, _ in fabriclb._core.limits():
        assert f"{value:,}" in ref, (name, value)
