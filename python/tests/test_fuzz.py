"""A fuzzer in the test suite (issue 28): the shipped scenarios and a tiny one, mutated at
random by hypothesis, through `fabriclb validate` and a short `fabriclb run` of whatever
validates. Every case must end with exit 0 or 2 (never a hang, an abort, a traceback or a
panic), in bounded time (`fuzzing.VALIDATE_S`, `RUN_S`) and memory (`fuzzing.MEMORY_BYTES`),
and `validate` must write nothing.

`make test` runs a short deterministic budget; `make fuzz` sets FABRICLB_FUZZ_EXAMPLES (and
FABRICLB_FUZZ_SEED for a fresh random stream) for a long one. The counts are printed at the
end (pytest -s, or in the failure message).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import fuzzing  # noqa: E402

#: Examples per test (two tests: random scenarios, mutations of the seeds).
EXAMPLES = int(os.environ.get("FABRICLB_FUZZ_EXAMPLES", "250"))
SEED = os.environ.get("FABRICLB_FUZZ_SEED")
SEEDS = fuzzing.seed_scenarios()


@pytest.fixture(scope="module")
def harness() -> Iterator[fuzzing.Harness]:
    h = fuzzing.Harness(fuzzing.new_root())
    yield h
    h.close()
    print(f"\nfuzz: {h.stats.line()}")


@st.composite
def mutated(draw: Any) -> Tuple[str, Dict[str, Any], List[str]]:
    # hypothesis draws the seed of a uniform stream: with choices drawn one by one it would
    # favour the first seed scenario, path and value, and explore little.
    return fuzzing.random_case(random.Random(draw(st.integers(0, 2**64 - 1))), SEEDS)


_settings = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=SEED is None,
    database=None,
    suppress_health_check=list(HealthCheck),
    print_blob=False,
)


@_settings
@given(seed=st.integers(0, 2**64 - 1))
def test_random_scenarios_exit_0_or_2(harness: fuzzing.Harness, seed: int) -> None:
    tree = fuzzing.random_scenario(random.Random(seed))
    before = len(harness.stats.failures)
    harness.case(json.dumps(tree), ".json")
    new = harness.stats.failures[before:]
    assert not new, "\n".join(f"{' '.join(o.argv)}\n  {o.problem}\n  {o.stderr[-600:]}\n  scenario: {json.dumps(tree)}" for o in new)


@_settings
@given(case=mutated())
def test_mutated_scenarios_exit_0_or_2(harness: fuzzing.Harness, case: Tuple[str, Dict[str, Any], List[str]]) -> None:
    name, tree, overrides = case
    before = len(harness.stats.failures)
    harness.case(json.dumps(tree), ".json", overrides)
    new = harness.stats.failures[before:]
    assert not new, "\n".join(
        f"{name}: {' '.join(o.argv)}\n  {o.problem}\n  {o.stderr[-600:]}\n  scenario: {json.dumps(tree)[:1500]}" for o in new
    )


if SEED is not None:
    test_mutated_scenarios_exit_0_or_2 = hypothesis.seed(int(SEED))(test_mutated_scenarios_exit_0_or_2)
    test_random_scenarios_exit_0_or_2 = hypothesis.seed(int(SEED))(test_random_scenarios_exit_0_or_2)
