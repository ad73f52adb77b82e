#!/usr/bin/env python3
"""Generate docs/scenario.schema.json and docs/SCENARIO_REFERENCE.md from the JSON Schema the
simulator core emits (the scenario types are the only source; never edit the outputs by hand).

    python tools/gen_reference.py [--out-dir docs] [--check]

`--check` exits 1 when the files in the output folder are not up to date. `make docs` runs
this; python/tests/test_api.py checks the committed files are current.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]
Schema = Dict[str, Any]


def load_limits() -> List[Tuple[str, int, str]]:
    from fabriclb import _core

    return [(str(n), int(v), str(w)) for n, v, w in _core.limits()]


def limits_section(limits: List[Tuple[str, int, str]]) -> str:
    rows = [
        "## Limits",
        "",
        "Everything a scenario can make the simulator allocate or compute is bounded, and checked",
        "(without overflow) when the scenario is validated, before anything large is built: a",
        "scenario within the limits validates in seconds and runs without exhausting memory; one",
        "beyond them is rejected (exit 2) with an error naming the field. Files (scenarios, CDFs)",
        "must be regular files: a FIFO or a device is refused. (`crates/fabriclb-core/src/limits.rs`.)",
        "",
        "| limit | value | what it bounds |",
        "|---|---|---|",
    ]
    rows += [f"| {n} | {v:,} | {cell(w)} |" for n, v, w in limits]
    return "\n".join(rows) + "\n\n"


def load_schema() -> Schema:
    try:
        from fabriclb import _core
    except ImportError:
        sys.path.insert(0, str(REPO / "python"))
        from fabriclb import _core  # type: ignore[no-redef]
    out: Schema = json.loads(_core.json_schema())
    return out


class Ref:
    """Resolves `$ref`s and the `allOf: [{$ref}]` wrappers schemars puts around described
    fields."""

    def __init__(self, root: Schema) -> None:
        self.defs: Dict[str, Schema] = root.get("definitions", {})

    def name(self, node: Schema) -> Optional[str]:
        """Definition name behind a node, if it is (a wrapper around) a reference."""
        if "$ref" in node:
            return str(node["$ref"]).rsplit("/", 1)[-1]
        parts = node.get("allOf")
        if isinstance(parts, list) and len(parts) == 1 and "$ref" in parts[0]:
            return str(parts[0]["$ref"]).rsplit("/", 1)[-1]
        return None

    def resolve(self, node: Schema) -> Schema:
        n = self.name(node)
        return self.defs[n] if n is not None else node

    def optional_inner(self, node: Schema) -> Optional[Schema]:
        """For `anyOf: [X, {type: null}]` (an Option), X; else None."""
        alts = node.get("anyOf")
        if isinstance(alts, list) and len(alts) == 2 and {"type": "null"} in alts:
            return alts[0] if alts[1] == {"type": "null"} else alts[1]
        return None


def is_struct(node: Schema) -> bool:
    return node.get("type") == "object" and "properties" in node


def tagged_variants(node: Schema) -> Optional[Tuple[str, List[Tuple[str, Schema]]]]:
    """For an internally tagged enum (`oneOf` of objects with a one-value tag), the tag name
    and (tag value, variant schema) pairs."""
    alts = node.get("oneOf")
    if not isinstance(alts, list) or not alts or not all(is_struct(a) for a in alts):
        return None
    tags = None
    for a in alts:
        cands = {k for k, v in a["properties"].items() if isinstance(v.get("enum"), list) and len(v["enum"]) == 1}
        tags = cands if tags is None else tags & cands
    if not tags:
        return None
    tag = sorted(tags)[0]
    return tag, [(str(a["properties"][tag]["enum"][0]), a) for a in alts]


def string_enum(node: Schema) -> Optional[List[Tuple[str, str]]]:
    """For an enum of strings (plain `enum` or `oneOf` of one-value enums), (value, meaning)."""
    if isinstance(node.get("enum"), list):
        return [(str(v), "") for v in node["enum"]]
    alts = node.get("oneOf")
    if isinstance(alts, list) and alts and all(isinstance(a.get("enum"), list) for a in alts):
        return [(str(v), a.get("description", "")) for a in alts for v in a["enum"]]
    return None


def cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ").strip()


def code(v: Any) -> str:
    if isinstance(v, str):
        return f'`"{v}"`'
    return f"`{json.dumps(v)}`"


class Doc:
    def __init__(self, root: Schema) -> None:
        self.root = root
        self.ref = Ref(root)
        self.sections: List[str] = []

    # -- one field ------------------------------------------------------------------------
    def type_and_allowed(self, node: Schema) -> Tuple[str, str]:
        inner = self.ref.optional_inner(node)
        if inner is not None:
            t, allowed = self.type_and_allowed(inner)
            return f"{t} (optional)", allowed
        name = self.ref.name(node)
        target = self.ref.resolve(node)
        enum = string_enum(target)
        if enum is not None:
            allowed = "; ".join(f"`{v}`" + (f": {d}" if d else "") for v, d in enum)
            return "string", allowed
        tv = tagged_variants(target)
        if tv is not None:
            tag, variants = tv
            return "table", f"`{tag}` = " + ", ".join(f"`{v}`" for v, _ in variants) + " (see below)"
        if name is not None and target.get("type") == "string":
            # A unit type (Rate, Duration, Bytes, BufSize): its description lists the units.
            desc = str(target.get("description", ""))
            return name.lower(), cell(desc.split("with a unit: ", 1)[-1])
        if is_struct(target):
            return "table", "see below"
        t = target.get("type", "any")
        if isinstance(t, list):
            opt = "null" in t
            t = " or ".join(x for x in t if x != "null") + (" (optional)" if opt else "")
        allowed = []
        fmt = target.get("format", "")
        if t == "array":
            items = target.get("items", {})
            it, ia = self.type_and_allowed(items)
            t = f"list of {it}"
            if ia and ia != "see below":
                allowed.append(ia)
        if fmt.startswith("uint"):
            lo = target.get("minimum", 0)
            hi = target.get("maximum", {"uint8": 255, "uint16": 65535}.get(fmt))
            allowed.append(f"integer {lo:g}..={hi:g}" if hi is not None else f"integer >= {lo:g}")
        else:
            if "minimum" in target:
                allowed.append(f">= {target['minimum']:g}")
            if "maximum" in target:
                allowed.append(f"<= {target['maximum']:g}")
        if "pattern" in target:
            allowed.append(f"pattern `{target['pattern']}`")
        if fmt in ("double", "float"):
            t = "number"
        return str(t), "; ".join(allowed)

    def rows(self, node: Schema, skip: Optional[str] = None) -> List[str]:
        required = set(node.get("required", []))
        out = ["| field | type / unit | default | allowed | meaning |", "|---|---|---|---|---|"]
        for key in sorted(node.get("properties", {})):
            if key == skip:
                continue
            prop = node["properties"][key]
            t, allowed = self.type_and_allowed(prop)
            if key in required:
                default = "**required**"
            elif "default" in prop:
                d = prop["default"]
                default = "none" if d is None else ("(see below)" if isinstance(d, dict) else code(d))
            else:
                default = ""
            desc = prop.get("description", "")
            if not desc:
                target = self.ref.resolve(self.ref.optional_inner(prop) or prop)
                if target.get("type") != "string":  # unit types are described in `allowed`
                    desc = target.get("description", "")
            out.append(f"| `{key}` | {cell(t)} | {cell(default)} | {cell(allowed)} | {cell(desc or '')} |")
        return out

    # -- sections -------------------------------------------------------------------------
    def section(self, title: str, node: Schema, level: int, skip: Optional[str] = None, intro: str = "") -> None:
        self.sections.append(f"{'#' * level} {title}\n")
        desc = intro or node.get("description", "")
        if desc:
            self.sections.append(cell(desc) + "\n")
        rows = self.rows(node, skip)
        self.sections.append("\n".join(rows) + "\n" if len(rows) > 2 else "No other fields.\n")
        # Nested tables, in field order.
        for key in sorted(node.get("properties", {})):
            if key == skip:
                continue
            self.nested(f"{title.split(' ')[0].strip('`[]')}.{key}" if title != "Top level" else key, node["properties"][key], level + 1)

    def nested(self, path: str, prop: Schema, level: int) -> None:
        inner = self.ref.optional_inner(prop)
        if inner is not None:
            prop = inner
        is_list = prop.get("type") == "array"
        target = self.ref.resolve(prop.get("items", {}) if is_list else prop)
        header = f"[[{path}]]" if is_list else f"[{path}]"
        tv = tagged_variants(target)
        if tv is not None:
            tag, variants = tv
            self.sections.append(f"{'#' * level} `{header}`\n")
            if target.get("description"):
                self.sections.append(cell(target["description"]) + f" Selected by `{tag}`.\n")
            for value, v in variants:
                self.section(f"`{header}` {tag} = \"{value}\"", v, level + 1, skip=tag, intro=v.get("description", ""))
        elif is_struct(target):
            self.section(f"`{header}`", target, level)

    def render(self) -> str:
        head = [
            "# Scenario reference",
            "",
            "<!-- Generated by tools/gen_reference.py from the scenario types of fabriclb-core",
            "     (`make docs`). Do not edit by hand. -->",
            "",
            "A scenario is a TOML file (or JSON, or a Python dict with the same shape). Every field",
            "below is checked when the scenario is loaded: unknown fields are rejected, and each error",
            "names the field (`topology.fabric_rate`, `workload[0].load`). Quantities carry their unit",
            'as a string: rates `"10Gbps"`, durations `"500us"`, sizes `"100KB"` (powers of 1000;',
            '`KiB` for 1024), buffers `"100pkt"` or bytes. Any field can be overridden from the command',
            "line with `--set path=value` (e.g. `--set workload[0].load=0.6`). The machine-readable",
            "schema is [scenario.schema.json](scenario.schema.json).",
            "",
            "Column `allowed` lists the units of unit-typed fields (rate, duration, bytes, bufsize),",
            "the values of string choices and the range of numbers. Range checks that involve more",
            "than the type (e.g. `leaves` >= 1, a load in (0, 1]) are stated in `meaning` and",
            "enforced when the scenario is validated.",
            "",
            "",
        ]
        self.section("Top level", self.root, 2)
        return "\n".join(head) + "\n".join(self.sections) + "\n" + limits_section(load_limits())


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--out-dir", default=str(REPO / "docs"), help="output folder (default: docs/)")
    ap.add_argument("--check", action="store_true", help="only check that the files are up to date")
    args = ap.parse_args(argv)
    schema = load_schema()
    files = {
        "scenario.schema.json": json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
        "SCENARIO_REFERENCE.md": Doc(schema).render(),
    }
    out = Path(args.out_dir)
    if args.check:
        stale = [n for n, text in files.items() if not (out / n).exists() or (out / n).read_text(encoding="utf-8") != text]
        for n in stale:
            print(f"{out / n} is not up to date: run `make docs`", file=sys.stderr)
        return 1 if stale else 0
    out.mkdir(parents=True, exist_ok=True)
    for n, text in files.items():
        (out / n).write_text(text, encoding="utf-8")
        print(f"wrote {out / n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
