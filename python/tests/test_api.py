"""The Python API: loading, overrides, errors, results, GIL release, no shared state, docs."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import fabriclb
from conftest import REPO, TINY_HEAD, tiny_scenario
from fabriclb import _core


def test_load_scenario_same_from_path_text_and_dict(tiny: Path) -> None:
    from_path = fabriclb.load_scenario(tiny)
    from_str_path = fabriclb.load_scenario(str(tiny))
    from_text = fabriclb.load_scenario(tiny.read_text())
    from_dict = fabriclb.load_scenario(from_path)
    assert from_path == from_str_path == from_text == from_dict
    # Canonical: defaults are filled in.
    assert from_path["name"] == "tiny"
    assert from_path["topology"]["kind"] == "leaf-spine"
    assert "switch" in from_path and "transport" in from_path


def test_json_scenario_file(tiny: Path, tmp_path: Path) -> None:
    j = tmp_path / "s.json"
    j.write_text(json.dumps(fabriclb.load_scenario(tiny)))
    assert fabriclb.validate(j) == fabriclb.load_scenario(tiny)


def test_overrides_dict_list_and_tuples_agree(tiny: Path) -> None:
    a = fabriclb.load_scenario(tiny, {"scheme.name": "ecmp", "seed": 5, "topology.fabric_rate": "40Gbps"})
    b = fabriclb.load_scenario(tiny, ["scheme.name=ecmp", "seed=5", "topology.fabric_rate=40Gbps"])
    c = fabriclb.load_scenario(tiny, [("scheme.name", "ecmp"), ("seed", 5), ("topology.fabric_rate", "40Gbps")])
    assert a == b == c
    assert a["seed"] == 5 and a["scheme"]["name"] == "ecmp" and a["topology"]["fabric_rate"] == "40Gbps"


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(fabriclb.ScenarioError) as ei:
        fabriclb.load_scenario(tmp_path / "nope.toml")
    assert "nope.toml" in str(ei.value) and ei.value.kind == "io"


def test_errors_carry_kind_and_field(tiny: Path, tmp_path: Path) -> None:
    with pytest.raises(fabriclb.ScenarioError) as ei:
        fabriclb.load_scenario(tiny, {"warmup": "1s"})
    assert ei.value.kind == "config" and ei.value.field == "warmup"
    assert str(ei.value).startswith(str(tiny))  # the message names the file
    with pytest.raises(fabriclb.ScenarioError) as ei:
        fabriclb.load_scenario('duration = "1ms"\n[topology\n')
    assert ei.value.kind == "syntax"
    assert issubclass(fabriclb.ScenarioError, fabriclb.FabriclbError)
    assert issubclass(fabriclb.SimulationError, fabriclb.FabriclbError)


def test_bad_seed_rejected(tiny: Path) -> None:
    with pytest.raises(fabriclb.ScenarioError):
        fabriclb.run(tiny, seed=-1)


def test_run_result(tiny: Path, tmp_path: Path) -> None:
    fractions: list = []
    res = fabriclb.run(tiny, seed=3, progress=fractions.append)
    assert isinstance(res, fabriclb.Result)
    for t in ["flows", "ports", "windows", "queues", "traces"]:
        assert isinstance(getattr(res, t), pd.DataFrame), t
    assert len(res.flows) == 8 and len(res.ports) > 0 and len(res.windows) > 0
    assert res.summary["seed"] == 3 and res.scenario["seed"] == 3
    assert res.summary["flows_completed"] == 8
    assert all(0.0 <= f <= 1.0 for f in fractions)
    assert fractions == sorted(fractions)
    # write(): the files, with the DataFrame's columns in order.
    out = res.write(tmp_path / "o")
    header = (out / "flows.csv").read_text().splitlines()[0]
    assert header.split(",") == list(res.flows.columns)
    assert json.loads((out / "summary.json").read_text()) == res.summary
    assert (out / "queues.csv").exists() == (len(res.queues) > 0)
    assert (out / "traces.csv").exists() == (len(res.traces) > 0)
    # summary.json: sorted keys, two-space indent.
    text = (out / "summary.json").read_text()
    assert text == json.dumps(res.summary, sort_keys=True, indent=2) + "\n"


def test_run_accepts_dict_and_overrides(tiny: Path) -> None:
    sc = fabriclb.load_scenario(tiny)
    a = fabriclb.run(sc, seed=8)
    b = fabriclb.run(tiny, overrides={"seed": 8})
    pd.testing.assert_frame_equal(a.flows, b.flows)


def test_progress_exception_stops_the_run(tiny: Path) -> None:
    def boom(_: float) -> None:
        raise RuntimeError("stop here")

    long = tiny_scenario(head=TINY_HEAD.replace('duration = "3ms"', 'duration = "20s"'), workload='[[workload]]\npattern = "permutation"\n')
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="stop here"):
        fabriclb.run(long, progress=boom)
    assert time.monotonic() - t0 < 10


def test_gil_is_released_during_a_run() -> None:
    # A Python thread keeps running while the simulation runs in Rust.
    long = tiny_scenario(head=TINY_HEAD.replace('duration = "3ms"', 'duration = "30ms"'), workload='[[workload]]\npattern = "permutation"\n')
    ticks = 0
    done = threading.Event()

    def spin() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1

    t0 = time.monotonic()
    th = threading.Thread(target=spin)
    th.start()
    try:
        fabriclb.run(long)
    finally:
        elapsed = time.monotonic() - t0
        done.set()
        th.join()
    assert elapsed > 0.05, "the run is too short to tell"
    assert ticks > 10_000, ticks


def test_two_runs_in_threads_do_not_interfere(tiny: Path) -> None:
    ref = {s: fabriclb.run(tiny, seed=s).flows for s in (1, 2)}
    got: dict = {}

    def go(s: int) -> None:
        got[s] = fabriclb.run(tiny, seed=s).flows

    ths = [threading.Thread(target=go, args=(s,)) for s in (1, 2)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    for s in (1, 2):
        pd.testing.assert_frame_equal(got[s], ref[s])


def test_catalogue() -> None:
    assert {"ecmp", "spray"} <= set(fabriclb.schemes())
    assert "permutation" in fabriclb.workloads()
    assert fabriclb.bench_names() == ["LS128", "FT432", "LS2048", "FT2048", "TESTBED"]
    assert fabriclb.__version__ == _core.version()
    assert fabriclb.scenarios_dir() == REPO / "scenarios"
    with pytest.raises(fabriclb.ScenarioError):
        fabriclb.bench(["NOPE"])


def test_scenarios_dir_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FABRICLB_SCENARIOS", str(tmp_path))
    assert fabriclb.scenarios_dir() == tmp_path


def test_shipped_scenarios_validate() -> None:
    files = sorted(fabriclb.scenarios_dir().rglob("*.toml"))
    for f in files:
        fabriclb.validate(f)


def test_scenario_reference_is_up_to_date(tmp_path: Path) -> None:
    """docs/SCENARIO_REFERENCE.md and docs/scenario.schema.json match the code (`make docs`)."""
    p = subprocess.run(
        [sys.executable, str(REPO / "tools" / "gen_reference.py"), "--out-dir", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    for f in ["SCENARIO_REFERENCE.md", "scenario.schema.json"]:
        committed = REPO / "docs" / f
        assert committed.exists(), f"{f} is missing: run `make docs`"
        assert (tmp_path / f).read_text() == committed.read_text(), f"docs/{f} is stale: run `make docs`"


def test_json_schema_is_json() -> None:
    schema = json.loads(_core.json_schema())
    assert "properties" in schema and "topology" in schema["properties"]


def test_unfinished_flows_count_at_their_lower_bound() -> None:
    # 8 flows of 50 MB need ~40 ms each; the run stops 5 ms after the arrivals: all unfinished.
    text = tiny_scenario(head='name = "lb"\nduration = "1ms"\ndrain = "5ms"\nseed = 1\n',
                         workload='[[workload]]\npattern = "permutation"\nsize = "50MB"\n')
    res = fabriclb.run(text)
    f, s = res.flows, res.summary
    end_ms = s["sim_time_s"] * 1e3
    assert s["flows_unfinished"] == 8 and s["fct"]["all"]["unfinished"] == 8
    assert f["fct_ms"].isna().all()
    assert (f["fct_lb_ms"] - (end_ms - f["start_ms"])).abs().max() < 1e-6
    assert s["fct"]["mean_lb_ms"] == pytest.approx(f["fct_lb_ms"].mean())
    # finished flows: the lower bound is the FCT itself
    res2 = fabriclb.run(tiny_scenario())
    g = res2.flows
    assert g["finished"].all() and (g["fct_lb_ms"] == g["fct_ms"]).all()
    assert res2.summary["fct"]["mean_lb_ms"] == pytest.approx(res2.summary["fct"]["mean_ms"])
