#!/usr/bin/env python3
"""A/B speed test of two builds of the Rust bench binary (the method of docs/BENCHMARKS.md):
run OLD then NEW on each benchmark, N times in one sitting, and print each pair's ratio of
packet-hops per second and the median ratio. Alternating pairs cancels most of a shared
machine's drift. A change meant to be byte-identical must give the same packet-hop and event
counts: the script stops if the two builds differ. Build each binary with
`cargo build --release -p fabriclb-core --bin fabriclb-bench` at its commit.

    python3 tools/ab_bench.py OLD_BINARY NEW_BINARY N [--side] [--duration D] [LS128 FT432 LS2048]

`--duration D` (e.g. `20ms`) shortens every benchmark's simulated time, for the long ones
(FT2048 takes over a minute a run). `--side` runs each pair's two builds at once, one on each
of the first two cores (`taskset`; swapped every pair), so that the machine's drift hits both
alike; they then share the last-level cache and memory, a busier machine than a run alone.
"""
import json
import statistics
import subprocess
import sys


def start(binary: str, bench: str, extra: list, core: int | None) -> subprocess.Popen:
    pin = ["taskset", "-c", str(core)] if core is not None else []
    return subprocess.Popen([*pin, binary, *extra, bench], stdout=subprocess.PIPE, text=True)


def hops_per_s(run: subprocess.Popen, binary: str, bench: str, counts: dict) -> float:
    out, _ = run.communicate()
    if run.returncode != 0:
        sys.exit(f"{bench}: {binary} exited with {run.returncode}")
    r = json.loads([line for line in out.splitlines() if line.startswith("{")][-1])
    c = counts.setdefault(bench, (r["packet_hops"], r["events"]))
    if c != (r["packet_hops"], r["events"]):
        sys.exit(f"{bench}: {binary} gives {r['packet_hops']} packet-hops and {r['events']} events, "
                 f"the other build {c[0]} and {c[1]}")
    return r["packet_hops_per_s"]


def main() -> None:
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    old, new, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    counts: dict = {}
    rest = sys.argv[4:]
    side = rest[:1] == ["--side"]
    rest = rest[1:] if side else rest
    extra = []
    if rest[:1] == ["--duration"]:
        extra, rest = rest[:2], rest[2:]
    for bench in rest or ["LS128", "FT432", "LS2048"]:
        olds, news = [], []
        for i in range(n):
            if side:
                a = start(old, bench, extra, i % 2)
                b = start(new, bench, extra, 1 - i % 2)
                olds.append(hops_per_s(a, old, bench, counts))
                news.append(hops_per_s(b, new, bench, counts))
            else:
                olds.append(hops_per_s(start(old, bench, extra, None), old, bench, counts))
                news.append(hops_per_s(start(new, bench, extra, None), new, bench, counts))
            print(f"{bench} {i} old {olds[-1] / 1e6:.2f} new {news[-1] / 1e6:.2f} ratio {news[-1] / olds[-1]:.3f}", flush=True)
        ratios = [b / a for a, b in zip(olds, news)]
        print(f"RESULT {bench}: old median {statistics.median(olds) / 1e6:.2f} M/s, new median "
              f"{statistics.median(news) / 1e6:.2f} M/s, median pair ratio {statistics.median(ratios):.3f} "
              f"(min {min(ratios):.3f}, max {max(ratios):.3f})", flush=True)


if __name__ == "__main__":
    main()
