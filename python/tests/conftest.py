"""Shared fixtures of the Python-surface tests: a tiny fast scenario and a CLI runner.

The scenario field names live here, in one place, so that the tests follow the core's
scenario format with a one-line change.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, List, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]


def core_available() -> bool:
    try:
        import fabriclb

        fabriclb.core_version()
        return True
    except Exception:  # noqa: BLE001
        return False


needs_core = pytest.mark.skipif(not core_available(), reason="compiled core not built")


#: A few hosts, a few milliseconds of simulated time: runs in well under a second.
TINY_TOPOLOGY = """\
[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
host_rate = "10Gbps"
fabric_rate = "10Gbps"
"""

#: Random traffic, so that another seed gives other records.
TINY_WORKLOAD = """\
[[workload]]
pattern = "permutation"
size = "200KB"
"""

TINY_HEAD = """\
name = "tiny"
duration = "3ms"
drain = "20ms"
seed = 1
"""

TINY_SCHEME = """\
[scheme]
name = "spray"
"""


def tiny_scenario(head: str = TINY_HEAD, topology: str = TINY_TOPOLOGY, workload: str = TINY_WORKLOAD, extra: str = "") -> str:
    """TOML text of the tiny scenario, with any part replaced."""
    return "\n".join([head, topology, TINY_SCHEME, workload, extra])


def cli_command() -> List[str]:
    """The installed console script next to this interpreter, else `python -m fabriclb`."""
    exe = Path(sys.executable).with_name("fabriclb")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "fabriclb"]


CliRunner = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def cli(tmp_path: Path) -> CliRunner:
    """Run `fabriclb ARGS...` in tmp_path; returns the completed process (text output)."""

    def run(*args: object, timeout: float = 120, cwd: Optional[Path] = None) -> "subprocess.CompletedProcess[str]":
        env = dict(os.environ)
        env.pop("FABRICLB_DEBUG", None)
        return subprocess.run(
            [*cli_command(), *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=cwd or tmp_path,
        )

    return run


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """The tiny scenario as a file."""
    p = tmp_path / "tiny.toml"
    p.write_text(tiny_scenario())
    return p


def assert_clean_failure(p: "subprocess.CompletedProcess[str]", code: int, *needles: str) -> None:
    """A failure as users should see it: exit `code`, a message naming `needles`, and no
    Python traceback or Rust panic."""
    assert p.returncode == code, f"exit {p.returncode}, expected {code}\nstdout: {p.stdout}\nstderr: {p.stderr}"
    assert "Traceback" not in p.stderr, p.stderr
    assert "panicked" not in p.stderr, p.stderr
    assert p.stderr.startswith("fabriclb: "), p.stderr
    for n in needles:
        assert n in p.stderr, f"{n!r} not in stderr: {p.stderr}"
