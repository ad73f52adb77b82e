"""The leaderboard (docs/LEADERBOARD.md): every scheme the core registers appears in the table
(numbers or n/a with the core's reason), the HTML report is self-contained, the unstable rule,
the conditions' scenario files, and bad options. The run is the smoke form (one condition, a
few milliseconds per scheme, in-process): seconds."""

from __future__ import annotations

import importlib
import math
import re
from pathlib import Path
from typing import Any, Dict

import numpy as np
import pandas as pd
import pytest

from conftest import CliRunner, assert_clean_failure

lab_exp = importlib.import_module("fabriclb.lab.experiments")
lb = importlib.import_module("fabriclb.lab.experiments.leaderboard")


from conftest import needs_core  # noqa: E402


# ----------------------------------------------------------------------------- pure parts


def test_unstable_rule() -> None:
    assert not lb.unstable([0.0], [1.2])
    assert lb.unstable([0.02], [1.0])  # 2% of the flows unfinished
    assert not lb.unstable([0.005], [math.nan])
    assert lb.unstable([0.0], [1.6])  # the FCT grows with the run
    assert not lb.unstable([0.0, 0.0], [1.6, 1.2])  # growth in every seed, not in one
    assert lb.unstable([0.0, 0.0, 0.0], [1.6, 1.7, 2.5])
    assert not lb.unstable([0.0, 0.0], [1.6, math.nan])
    assert lb.unstable([0.0, 0.03], [1.0, 1.0])  # the mean share: 1.5%
    assert not lb.unstable([], [])


def _flows(fct_first: float, fct_second: float, n: int = 40) -> pd.DataFrame:
    start = np.linspace(10.0, 99.0, n)  # measurement window 10..100 ms
    fct = np.where(start < 55.0, fct_first, fct_second)
    return pd.DataFrame({"start_ms": start, "fct_lb_ms": fct, "fct_ms": fct, "size_bytes": 50_000.0,
                         "warmup": 0, "finished": 1})


def test_fct_growth_compares_the_halves_of_the_window() -> None:
    sc = {"warmup": "10ms", "duration": "100ms"}
    assert lb.fct_growth(_flows(2.0, 2.0), sc) == pytest.approx(1.0)
    assert lb.fct_growth(_flows(2.0, 5.0), sc) == pytest.approx(2.5)
    f = _flows(2.0, 5.0)
    f.loc[f["start_ms"] >= 55.0, "size_bytes"] = 20e6  # only elephants late: not counted
    assert math.isnan(lb.fct_growth(f, sc))
    assert lb.unstable([0.0], [lb.fct_growth(_flows(1.0, 1.6), sc)])


def test_incast_throughput_counts_request_time_only() -> None:
    f = pd.DataFrame({"group": [1, 1, 2, 2], "start_ms": [0.0, 0.0, 100.0, 100.0], "end_ms": [8.0, 10.0, 105.0, 110.0],
                      "size_bytes": [5e6, 5e6, 5e6, 5e6], "finished": [1, 1, 1, 1]})
    # 20 MB in 20 ms of request time = 8 Gbps = 80% of a 10 Gbps link.
    assert lb.incast_throughput_pct(f, 10.0) == pytest.approx(80.0)


def test_conditions_and_modes() -> None:
    names = [c.name for c in lb.CONDITIONS]
    assert len(names) == len(set(names)) == 16
    assert {f"testbed-{w}-{x}" for w in ("websearch", "enterprise", "datamining") for x in (30, 60, 80)} <= set(names)
    assert {"testbed-failure-websearch-60", "asym20-datamining-60", "eman-1b", "incast-32", "fattree-k8"} <= set(names)
    quick = [c.name for c in lb.conditions_for("quick")]
    assert quick and all("websearch" in n or n == "fattree-k8" for n in quick)
    assert [c.name for c in lb.conditions_for("smoke")] == [lb.SMOKE_CONDITION]
    rows = lb.protocol_rows()  # docs/LAB.md rows: no scheme names, so new schemes leave LAB.md as it is
    assert rows and all("every registered scheme" in r[2] for r in rows)


# ----------------------------------------------------------------------------- with the core


@needs_core
def test_every_condition_validates_and_asym20_is_fixed() -> None:
    import fabriclb

    d = Path(fabriclb.scenarios_dir())
    for c in lb.CONDITIONS:
        assert lb.waiting_for(c, d) is None, c.name
        assert lb.cell_problem(c, "ecmp", "full", d) is None, c.name
    sc = fabriclb.load_scenario(d / "leaderboard/asym20.toml")
    deg = [f for f in sc["failures"] if f["kind"] == "degrade"]
    assert len(deg) == 13 and {f["rate"] for f in deg} == {"2Gbps"}
    assert len({f["link"] for f in deg}) == 13
    # The same fabric whatever the run seed: the failures are named links, not random:N.
    assert not any(str(f["link"]).startswith("random:") for f in sc["failures"])


@needs_core
def test_a_condition_waiting_for_a_workload_is_na_in_every_cell(tmp_path: Path) -> None:
    import fabriclb

    c = lb.Condition("x", "leaderboard/testbed.toml", (), "leaf-spine", lb._FCT, "test", requires=("workload:no-such",))
    why = lb.cell_problem(c, "ecmp", "smoke", Path(fabriclb.scenarios_dir()))
    assert why == "waiting for workload no-such"
    c2 = lb.Condition("y", "leaderboard/none.toml", (), "leaf-spine", lb._FCT, "test")
    assert "scenario leaderboard/none.toml" in str(lb.cell_problem(c2, "ecmp", "smoke", Path(fabriclb.scenarios_dir())))


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    out = tmp_path_factory.mktemp("lb")
    rec = lab_exp.reproduce("leaderboard", out, mode="smoke", jobs=1, progress=False)
    return {"rec": rec, "dir": out / "leaderboard"}


@needs_core
def test_every_registered_scheme_is_in_the_table(smoke: Dict[str, Any]) -> None:
    import fabriclb

    d = smoke["dir"]
    for f in ("table.csv", "heatmap.png", "report.md", "report.html", "points.csv", "result.json"):
        assert (d / f).is_file() and (d / f).stat().st_size > 0, f
    t = pd.read_csv(d / "table.csv", keep_default_na=False, na_values=[""])
    assert list(t.columns[:8]) == ["condition", "scheme", "metric", "value", "seeds", "min", "max", "ratio_to_ecmp"]
    assert set(t["scheme"]) == set(fabriclb.schemes())
    assert set(t["status"]) <= {"ok", "unstable", "n/a"}, t[t["status"] == "failed"][["scheme", "note"]]
    for _, r in t.iterrows():
        if r["status"] == "n/a":
            assert isinstance(r["note"], str) and r["note"], r["scheme"]
            assert not np.isfinite(r["value"])
        elif r["metric"] == lb.MEAN_FCT:
            assert np.isfinite(r["value"]) and r["value"] > 0 and r["seeds"] == 1, (r["scheme"], r["metric"])
    ecmp = t[(t["scheme"] == "ecmp")]
    assert (ecmp["status"] != "n/a").all()
    assert np.allclose(ecmp[ecmp["metric"] == lb.MEAN_FCT]["ratio_to_ecmp"], 1.0)
    best = t[t["status"] == "ok"].groupby("metric")["ratio_to_best"].min()
    assert np.allclose(best, 1.0)
    report = (d / "report.md").read_text()
    assert "Paper's claim" in report and "Status" in report and "The paper's numbers" in report
    assert "smoke run" in report and "## Why cells are n/a" in report


@needs_core
def test_na_reasons_come_from_the_core(smoke: Dict[str, Any]) -> None:
    import fabriclb

    t = pd.read_csv(smoke["dir"] / "table.csv", keep_default_na=False, na_values=[""])
    if "expeditus" in fabriclb.schemes():
        # The testbed has two links per leaf-spine pair, which Expeditus' headers cannot name.
        note = t[(t["scheme"] == "expeditus")]["note"].iloc[0]
        assert "links_per_pair" in note, note
    # Every n/a reason is the core's validation message for that cell.
    d = Path(fabriclb.scenarios_dir())
    c = lb.conditions_for("smoke")[0]
    for _, r in t[t["status"] == "n/a"].drop_duplicates("scheme").iterrows():
        assert lb.cell_problem(c, r["scheme"], "smoke", d) == r["note"]


@needs_core
def test_the_html_report_is_self_contained(smoke: Dict[str, Any]) -> None:
    text = (smoke["dir"] / "report.html").read_text()
    assert text.startswith("<!DOCTYPE html>") and "</html>" in text
    srcs = re.findall(r"""\bsrc\s*=\s*['"]([^'"]*)""", text, flags=re.I)
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs), srcs
    assert not re.search(r"\bhref\s*=", text, flags=re.I)
    assert not re.search(r"<(link|script|iframe|object|embed)\b", text, flags=re.I)
    assert "url(" not in text and "@import" not in text


@needs_core
def test_a_part_of_the_grid_reads_the_cache_and_gives_the_same_cells(smoke: Dict[str, Any], tmp_path: Path) -> None:
    """--only splits a long form into parts: a part reuses the whole run's cache and its cells
    equal the whole's (a condition's ratios need all its schemes, so parts split by condition)."""
    out = smoke["dir"].parent
    whole = pd.read_csv(smoke["dir"] / "table.csv")
    part = lab_exp.reproduce("leaderboard", tmp_path, mode="smoke", jobs=1, progress=False, cache=out / ".cache",
                             only={"condition": [lb.SMOKE_CONDITION]})
    assert part["computed"] == 0 and part["points"] == smoke["rec"]["points"] and "--only condition=" in part["command"]
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "leaderboard" / "table.csv"), whole)
    two = lab_exp.reproduce("leaderboard", tmp_path / "two", mode="smoke", jobs=1, progress=False, cache=out / ".cache",
                            only={"scheme": ["conga", "ecmp"]})
    t = pd.read_csv(tmp_path / "two" / "leaderboard" / "table.csv")
    assert two["computed"] == 0 and set(t["scheme"]) == {"conga", "ecmp"}
    w = whole[whole["scheme"].isin(["conga", "ecmp"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(t[["condition", "scheme", "metric", "value", "ratio_to_ecmp"]],
                                  w[["condition", "scheme", "metric", "value", "ratio_to_ecmp"]])
    assert "only scheme conga, ecmp" in (tmp_path / "two" / "leaderboard" / "report.md").read_text()
    # A part's result.json is not the experiment's (the reproduction table reads the whole run's).
    from fabriclb.lab.report import read_results

    assert "leaderboard" in read_results(out) and "leaderboard" not in read_results(tmp_path / "two")


@needs_core
def test_a_part_reduces_to_its_conditions_only() -> None:
    import fabriclb

    ctx = lab_exp.Ctx(mode="full", seeds=3, schemes=tuple(fabriclb.schemes()), scenarios=Path(fabriclb.scenarios_dir()),
                      only=(("condition", ("eman-1b", "fattree-k8")), ("scheme", ("ecmp", "conga"))))
    t = lb._reduce([], ctx).table
    assert list(dict.fromkeys(t["condition"])) == ["eman-1b", "fattree-k8"]
    assert set(t["scheme"]) == {"ecmp", "conga"} and (t["note"] == "no point ran").all()


@needs_core
def test_bad_options(cli: CliRunner, tmp_path: Path) -> None:
    p = cli("reproduce", "leaderboard", "--smoke", "--only", "workload=fat-tree", "--out", tmp_path / "o")
    assert_clean_failure(p, 2, "leaderboard is run in parts by condition, scheme only")
    p = cli("reproduce", "leaderboard", "--smoke", "--only", "scheme=ecmp,nope", "--out", tmp_path / "o")
    assert_clean_failure(p, 2, "no point of this grid has scheme = nope; its values:")
    p = cli("reproduce", "leaderboard", "--smoke", "--only", "scheme", "--out", tmp_path / "o")
    assert_clean_failure(p, 2, "expected LABEL=V1,V2")
    p = cli("reproduce", "conga-fig2", "--smoke", "--only", "scheme=ecmp", "--out", tmp_path / "o")
    assert_clean_failure(p, 2, "conga-fig2 is not run in parts; experiments that are: leaderboard")
    p = cli("reproduce", "leaderboard", "conga-fig2", "--smoke", "--only", "scheme=ecmp", "--out", tmp_path / "o")
    assert_clean_failure(p, 2, "--only runs a part of one experiment's grid")
    assert not (tmp_path / "o" / "leaderboard").exists() and not (tmp_path / "o" / "conga-fig2").exists()
    p = cli("reproduce", "leaderboard", "--seeds", "0", "--out", tmp_path / "o")
    assert p.returncode == 2 and "--seeds" in p.stderr
    p = cli("reproduce", "leaderboard", "--quick", "--smoke", "--out", tmp_path / "o")
    assert p.returncode == 2 and "not allowed with" in p.stderr
    p = cli("reproduce", "leaderboard", "--quick")
    assert p.returncode == 2 and "--out" in p.stderr
    p = cli("reproduce", "leaderboard", "--smoke", "--out", " ")
    assert_clean_failure(p, 2, "--out is empty")
    try:
        import ray  # noqa: F401
    except ImportError:
        p = cli("reproduce", "leaderboard", "--smoke", "--ray", "auto", "--out", tmp_path / "o")
        assert_clean_failure(p, 2, "--ray needs Ray")
    assert not (tmp_path / "o" / "leaderboard" / "table.csv").exists()
