#!/usr/bin/env python3
"""Write docs/REPRODUCTION.md from experiment reports.

    python tools/gen_reproduction.py OUT_DIR [OUT_DIR ...] [--doc docs/REPRODUCTION.md] [--keep]

Each OUT_DIR is a folder given to `fabriclb reproduce ... --out OUT_DIR` (e.g. one for the
settling forms, one for the quick forms): every OUT_DIR/NAME/result.json found is a run of that
experiment. Its row reports the most complete form run (full, else settle, else quick: paper's
claim, our number, status, run), and the quick form's number and status in a column of their
own. Experiments not run are listed as "not run" (with --keep: keep their rows from the
document as it is, to update only what OUT_DIR holds), and those whose schemes, workloads or
scenarios are missing as "waiting: ...". One row per experiment of the registry, in registry
order.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: "list[str] | None" = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dirs", nargs="+", metavar="OUT_DIR", help="--out folder(s) of `fabriclb reproduce`")
    ap.add_argument("--doc", default=str(Path(__file__).resolve().parents[1] / "docs" / "REPRODUCTION.md"), help="file to write")
    ap.add_argument("--keep", action="store_true", help="keep the rows of experiments OUT_DIR does not hold")
    args = ap.parse_args(argv)

    from fabriclb.lab.experiments import EXPERIMENTS, experiment_statuses
    from fabriclb.lab.report import read_results, reproduction_markdown, reproduction_rows

    results: "dict[str, list[dict]]" = {}
    for d in map(Path, args.out_dirs):
        if not d.is_dir():
            print(f"gen_reproduction: {d} is not a folder", file=sys.stderr)
            return 2
        for name, rec in read_results(d).items():
            results.setdefault(name, []).append(rec)
    statuses = dict(experiment_statuses())
    doc = Path(args.doc)
    kept = reproduction_rows(doc.read_text(encoding="utf-8")) if args.keep and doc.is_file() else None
    md = reproduction_markdown(list(EXPERIMENTS.values()), results, statuses, source=", ".join(args.out_dirs), kept=kept)
    Path(args.doc).parent.mkdir(parents=True, exist_ok=True)
    Path(args.doc).write_text(md, encoding="utf-8")
    print(f"wrote {args.doc}: {sum(map(len, results.values()))} experiment report(s) from {', '.join(args.out_dirs)}")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
