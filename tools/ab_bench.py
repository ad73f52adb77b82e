#!/usr/bin/env python3
"""A/B speed test of two builds of the Rust bench binary (the method of docs/BENCHMARKS.md):
run OLD then NEW on each benchmark, N times in one sitting, and print each pair's ratio of
packet-hops per second and the median ratio. Alternating pairs cancels most of a shared
machine's drift. A change meant to be byte-identical must give the same packet-hop and event
counts: the script stops if the two builds differ. Build each binary with
`cargo build --release -p fabriclb-core --bin fabriclb-bench` at its commit.

    python3 tools/ab_bench.py OLD_BINARY NEW_BINARY N [--duration D] [LS128 FT432 LS2048]

`--duration D` (e.g. `20ms`) shortens every benchmark's simulated time, for the long ones
(FT2048 takes over a minute a run).
"""
import json
import statistics
import subprocess
import sys


def hops_per_s(binary: str, bench: str, counts: dict, extra: list) -> float:
    out = subprocess.run([binary, *extra, bench], capture_output=True, text=True, check=True).stdout
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
    extra = []
    if rest[:1] == ["--duration"]:
        extra, rest = rest[:2], rest[2:]
    for bench in rest or ["LS128", "FT432", "LS2048"]:
        olds, news = [], []
        for i in range(n):
            olds.append(hops_per_s(old, bench, counts, extra))
            news.append(hops_per_s(new, bench, counts, extra))
            print(f"{bench} {i} old {olds[-1] / 1e6:.2f} new {news[-1] / 1e6:.2f} ratio {news[-1] / olds[-1]:.3f}", flush=True)
        ratios = [b / a for a, b in zip(olds, news)]
        print(f"RESULT {bench}: old median {statistics.median(olds) / 1e6:.2f} M/s, new median "
              f"{statistics.median(news) / 1e6:.2f} M/s, median pair ratio {statistics.median(ratios):.3f} "
              f"(min {min(ratios):.3f}, max {max(ratios):.3f})", flush=True)


if __name__ == "__main__":
    main()
