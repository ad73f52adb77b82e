"""The speed yardstick: the dependency-free `mininet` probe in ``../shared/probe``.

The machines the benchmarks run on are shared and noisy, so a benchmark's packet-hop rate is
best read as a ratio to the probe measured in the same session (see docs/BENCHMARKS.md). The
probe is an upper bound (a leaf-spine engine with no TCP, no statistics), not a simulator.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Dict, Optional, Tuple

from .api import repo_root

__all__ = ["PROBE_ARGS", "probe_dir", "build_probe", "run_probe"]

#: mininet arguments (leaves, spines, hosts per leaf, simulated ms, window, pending-event set)
#: matching each benchmark's size, and a note when the match is not exact.
PROBE_ARGS: Dict[str, Tuple[Tuple[str, ...], str]] = {
    "LS128": (("16", "8", "8", "100", "20", "radix"), ""),
    "LS2048": (("64", "32", "32", "5", "20", "radix"), ""),
    # FT2048 (2048 hosts, a fat-tree) against the probe at its largest size, as LS2048.
    "FT2048": (
        ("64", "32", "32", "5", "20", "radix"),
        "there is no fat-tree probe; the probe at its largest size (LS2048's) is the yardstick",
    ),
    "FT432": (
        ("16", "8", "8", "100", "20", "radix"),
        "there is no fat-tree probe; the LS128-size leaf-spine probe is the yardstick",
    ),
}


def probe_dir() -> Optional[Path]:
    """``$FABRICLB_PROBE_DIR``, else ``../shared/probe`` next to the repository; None if absent."""
    env = os.environ.get("FABRICLB_PROBE_DIR")
    candidates = [Path(env)] if env else []
    root = repo_root()
    if root is not None:
        candidates.append(root.parent / "shared" / "probe")
    for c in candidates:
        if (c / "Cargo.toml").is_file():
            return c
    return None


def build_probe(src: Path) -> Path:
    """Build the probe (release) into ``target/probe`` of the repository (or a folder next to
    the probe sources); returns the path of the `mininet` binary. Raises RuntimeError."""
    root = repo_root()
    target = (root / "target" / "probe") if root is not None else (src / "target")
    cmd = ["cargo", "build", "--release", "--quiet", "--manifest-path", str(src / "Cargo.toml"), "--target-dir", str(target)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        raise RuntimeError("cargo is not on PATH") from None
    if p.returncode != 0:
        raise RuntimeError(f"building the probe failed: {p.stderr.strip()[-500:]}")
    exe = target / "release" / "mininet"
    if not exe.is_file():
        raise RuntimeError(f"the probe build did not produce {exe}")
    return exe


_RATE = re.compile(r"pkthops/s=([0-9.eE+-]+)")


def run_probe(exe: Path, bench_name: str) -> Tuple[float, str]:
    """Packet-hops per second of the probe at the size of `bench_name`, and a note."""
    args, note = PROBE_ARGS[bench_name]
    p = subprocess.run([str(exe), *args], capture_output=True, text=True)
    m = _RATE.search(p.stdout)
    if p.returncode != 0 or m is None:
        raise RuntimeError(f"the probe failed: {(p.stderr or p.stdout).strip()[-300:]}")
    return float(m.group(1)), note
