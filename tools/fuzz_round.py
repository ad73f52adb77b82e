#!/usr/bin/env python3
"""A round of scenario mutations kept apart from the test suite (issue 28): other mutations
than `python/tests/test_fuzz.py`'s, through the same harness (`python/tests/fuzzing.py`:
the real CLI in a worker with a deadline and a memory limit).

    .venv/bin/python tools/fuzz_round.py [--cases N] [--seed S] [--no-run]

Two kinds of cases:
- text mutations of the shipped scenario files (lines deleted, duplicated, swapped or cut;
  numbers, units and values replaced): any exit 0 or 2 is fine, nothing else;
- nonsense built on purpose (a list for a table, nan/inf, out-of-range integers, unknown
  fields, fields a failure kind ignores, a degrade above the nominal rate, hosts on a spine,
  failures cutting a leaf off for the whole run...): these must exit 2.

Prints the counts and every failure; exits 1 when there is any.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from pathlib import Path
from typing import List, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python" / "tests"))

import fuzzing  # noqa: E402

NUMBERS = ["0", "-1", "1", "7", "255", "256", "65536", "4294967296", "1e30", "0.0", "-0.5", "nan", "inf", "3.5"]
UNITS = ["ps", "ns", "us", "ms", "s", "bps", "Gbps", "Tbps", "B", "KB", "GB", "pkt", "x", ""]
VALUES = ["nan", "-inf", "[]", "{}", '""', "true", '"\\u001b[31m"', '["a", "b"]', "{ a = 1 }", "[[1]]", '"0ps"', '"1e40Gbps"']


def text_mutation(rng: random.Random, text: str) -> str:
    lines = text.splitlines()
    for _ in range(rng.randint(1, 3)):
        if not lines:
            break
        i = rng.randrange(len(lines))
        op = rng.choice(["delete", "dup", "swap", "number", "unit", "value", "cut"])
        if op == "delete":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "number":
            lines[i] = re.sub(r"(?<![A-Za-z_])\d+(\.\d+)?", lambda m: rng.choice(NUMBERS), lines[i], count=1)
        elif op == "unit":
            lines[i] = re.sub(r'(\d)(ps|ns|us|ms|s|bps|Kbps|Mbps|Gbps|Tbps|B|KB|MB|GB|KiB|pkt)"', lambda m: m.group(1) + rng.choice(UNITS) + '"', lines[i], count=1)
        elif op == "value" and "=" in lines[i]:
            k = lines[i].split("=", 1)[0]
            lines[i] = f"{k}= {rng.choice(VALUES)}"
        elif op == "cut":
            lines = lines[:i]
    return "\n".join(lines) + "\n"


LS = fuzzing.TINY
ONE_UPLINK = """\
duration = "2ms"
drain = "5ms"
[topology]
kind = "explicit"
switches = [{ name = "L0", role = "leaf" }, { name = "L1", role = "leaf" }, { name = "S0", role = "spine" }]
hosts = [{ name = "a", attach = "L0", rate = "10Gbps", count = 2 }, { name = "b", attach = "L1", rate = "10Gbps", count = 2 }]
links = [{ a = "L0", b = "S0", rate = "10Gbps" }, { a = "L1", b = "S0", rate = "10Gbps" }]
[[workload]]
pattern = "permutation"
size = "50KB"
cross_tor = true
"""


def nonsense(rng: random.Random) -> Tuple[str, List[str], str]:
    """(scenario, overrides, what is wrong): each must be rejected."""
    kind = rng.choice(["list-table", "non-finite", "int-range", "unknown", "kind-field", "degrade-up", "host-spine", "cut", "late", "units"])
    if kind == "list-table":
        sec = rng.choice(["switch", "routing", "transport", "measure", "scheme", "topology"])
        item = rng.choice(["1", '"a"', "true", "[]"])
        return LS, [f"{sec}=[{item}]"], kind
    if kind == "non-finite":
        field = rng.choice(["switch.shared_alpha", "switch.dre_alpha", "transport.dctcp_g"])
        return LS, [f"{field}={rng.choice(['nan', 'inf', '-inf', '-nan'])}"], kind
    if kind == "int-range":
        field, bad = rng.choice([
            ("topology.leaves", rng.choice(["0", "-1", "4294967296"])),
            ("topology.hosts_per_leaf", rng.choice(["0", "-2", "1.5"])),
            ("seed", rng.choice(["-1", "1.5"])),
            ("transport.mtu", rng.choice(["-1", "0", "100000"])),
            ("workload[0].size", rng.choice(['"0B"', '"-1B"', '"1e30B"'])),
        ])
        return LS, [f"{field}={bad}"], kind
    if kind == "unknown":
        sec = rng.choice(["", "topology.", "switch.", "measure.", "workload[0].", "routing."])
        return LS, [f"{sec}zz_{rng.randrange(1000)}=1"], kind
    if kind == "kind-field":
        k, extra = rng.choice([("down", 'rate = "1Gbps"'), ("down", "loss = 0.5"), ("lossy", 'period = "1ms"\nloss = 0.1'), ("flap", 'period = "1ms"\nrate = "1Gbps"'), ("degrade", 'rate = "1Gbps"\nloss = 0.2')])
        return LS + f'[[failures]]\nlink = "L0-S0"\nkind = "{k}"\n{extra}\nuntil = "1ms"\n', [], kind
    if kind == "degrade-up":
        return LS + f'[[failures]]\nlink = "L0-S0"\nkind = "degrade"\nrate = "{rng.choice(["11Gbps", "1Tbps", "40Gbps"])}"\n', [], kind
    if kind == "host-spine":
        return ONE_UPLINK.replace('attach = "L1"', 'attach = "S0"'), [], kind
    if kind == "cut":
        body = rng.choice([
            'kind = "down"\nuntil = "10s"',
            'kind = "down"\nat = "0ps"',
            'kind = "lossy"\nloss = 1.0',
            'kind = "flap"\nperiod = "30ms"',
            'kind = "degrade"\nrate = "10bps"',
            'kind = "down"\nuntil = "7ms"',
        ])
        return ONE_UPLINK + f'[[failures]]\nlink = "{rng.choice(["L0-S0", "S0-L1", "L1-S0#*"])}"\n{body}\n', [], kind
    if kind == "late":
        return LS + f'[[failures]]\nlink = "L0-S0"\nkind = "down"\nat = "{rng.choice(["7ms", "1s", "10s"])}"\n', [], kind
    field = rng.choice(["duration", "topology.host_rate", "measure.window", "switch.buffer"])
    return LS, [f"{field}={rng.choice(['10', '10xs', '1e400ms', '-3ms', 'fast', '1e9pkt'])}"], kind


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=400, help="text mutations (default 400); as many nonsense cases / 2")
    ap.add_argument("--seed", type=int, default=2028)
    ap.add_argument("--no-run", action="store_true", help="validate only")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    seeds = [("tiny", fuzzing.TINY)] + [(p.relative_to(REPO).as_posix(), p.read_text()) for p in sorted((REPO / "scenarios").rglob("*.toml"))]
    h = fuzzing.Harness(fuzzing.new_root(), run=not args.no_run)
    try:
        for _ in range(args.cases):
            name, text = rng.choice(seeds)
            h.case(text_mutation(rng, text), ".toml")
        mutations = h.stats.line()
        accepted: List[str] = []
        n_nonsense = args.cases // 2
        h2 = fuzzing.Harness(fuzzing.new_root(), run=False)
        try:
            for _ in range(n_nonsense):
                text, overrides, kind = nonsense(rng)
                v = h2.case(text, ".toml", overrides)
                if v.code == 0:
                    accepted.append(f"{kind}: {overrides} {text[-200:]!r}")
        finally:
            h2.close()
    finally:
        h.close()
    failures = h.stats.failures + h2.stats.failures
    print(f"text mutations: {mutations}")
    print(f"nonsense: {n_nonsense} cases, {h2.stats.validate_rejected} rejected (exit 2), {len(accepted)} accepted (exit 0), "
          f"{len(h2.stats.failures)} failures")
    for o in failures:
        print(f"FAIL {o.problem}: {' '.join(o.argv)}\n  {o.stderr[-400:]}")
    for a in accepted:
        print(f"ACCEPTED NONSENSE {a}")
    return 1 if failures or accepted else 0


if __name__ == "__main__":
    sys.exit(main())
