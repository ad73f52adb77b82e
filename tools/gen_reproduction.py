#!/usr/bin/env python3
"""Write docs/REPRODUCTION.md from experiment reports.

    python tools/gen_reproduction.py OUT_DIR [--doc docs/REPRODUCTION.md] [--keep]

OUT_DIR is the folder given to `fabriclb reproduce ... --out OUT_DIR`: every OUT_DIR/NAME/
result.json found becomes that experiment's row (paper's claim, our number, status, run size);
experiments not run are listed as "not run" (with --keep: keep their rows from the document
as it is, to update only the experiments OUT_DIR holds), and those whose schemes, workloads or
scenarios are missing as "waiting: ...". One row per experiment of the registry, in registry
order.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: "list[str] | None" = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", help="the --out folder of `fabriclb reproduce`")
    ap.add_argument("--doc", default=str(Path(__file__).resolve().parents[1] / "docs" / "REPRODUCTION.md"), help="file to write")
    ap.add_argument("--keep", action="store_true", help="keep the rows of experiments OUT_DIR does not hold")
    args = ap.parse_args(argv)

    from fabriclb.lab.experiments import EXPERIMENTS, experiment_statuses
    from fabriclb.lab.report import read_results, reproduction_markdown, reproduction_rows

    out = Path(args.out_dir)
    if not out.is_dir():
        print(f"gen_reproduction: {out} is not a folder", file=sys.stderr)
        return 2
    results = read_results(out)
    statuses = dict(experiment_statuses())
    doc = Path(args.doc)
    kept = reproduction_rows(doc.read_text(encoding="utf-8")) if args.keep and doc.is_file() else None
    md = reproduction_markdown(list(EXPERIMENTS.values()), results, statuses, source=str(out), kept=kept)
    Path(args.doc).parent.mkdir(parents=True, exist_ok=True)
    Path(args.doc).write_text(md, encoding="utf-8")
    print(f"wrote {args.doc}: {len(results)} experiment report(s) from {out}")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
