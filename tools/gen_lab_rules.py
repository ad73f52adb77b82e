#!/usr/bin/env python3
"""Write the per-experiment rules of docs/LAB.md from the experiment registry.

    python tools/gen_lab_rules.py [--doc docs/LAB.md] [--check]

Replaces the text between the markers `<!-- rules:begin -->` and `<!-- rules:end -->` with
`fabriclb.lab.report.rules_markdown`: for every experiment its grids (loads, schemes, seeds,
run length per mode) and every number its paper states, with tag and rule. `--check` only
compares (exit 1 when the document is out of date; the test suite does the same).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

BEGIN, END = "<!-- rules:begin -->", "<!-- rules:end -->"


def render(doc: str) -> str:
    from fabriclb.lab.experiments import EXPERIMENTS
    from fabriclb.lab.report import rules_markdown

    head, sep, rest = doc.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not (sep and sep2):
        raise SystemExit(f"gen_lab_rules: the document lacks the markers {BEGIN} ... {END}")
    return f"{head}{BEGIN}\n{rules_markdown(list(EXPERIMENTS.values()))}\n{END}{tail}"


def main(argv: "list[str] | None" = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--doc", default=str(Path(__file__).resolve().parents[1] / "docs" / "LAB.md"), help="file to update")
    ap.add_argument("--check", action="store_true", help="only check that the document is up to date")
    args = ap.parse_args(argv)
    path = Path(args.doc)
    doc = path.read_text(encoding="utf-8")
    new = render(doc)
    if args.check:
        if new != doc:
            print(f"{path} is out of date: run python tools/gen_lab_rules.py", file=sys.stderr)
            return 1
        return 0
    path.write_text(new, encoding="utf-8")
    print(f"wrote the experiment rules into {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
