"""The result cache: one entry per simulated point, keyed by what determines its result.

A point's key is the SHA-256 of (canonical scenario JSON, seed, code hash): the canonical
scenario is what :func:`fabriclb.load_scenario` returns after the grid's overrides are applied
(every default filled in, units spelled one way), so two spellings of the same scenario share
an entry; the code hash (:func:`fabriclb.code_hash`) is a build-time digest of the core's
sources and embedded CDFs, so any change of code or built-in data, committed or not, misses
the old entries instead of serving them.

Layout of a cache folder (``<out>/.cache`` unless told otherwise)::

    <key[:2]>/<key>.json               summary, scenario, seed, code hash, version, tables, timing
    <key[:2]>/<key>.<table>.csv.gz     each record table the caller asked to keep
    <key[:2]>/<key>.error.json         the last failure of the point (cleared on success)

Writes are atomic: each file goes to a temporary name in the same folder and is moved into
place with :func:`os.replace`; the tables are written before the JSON, and an entry exists
only once its JSON does. A sweep killed at any instant leaves either a complete entry or
none (plus, at worst, a stray ``.tmp`` file that the next write replaces).

Failures are recorded but never cached as results: a rerun retries them.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import pandas as pd

__all__ = ["point_key", "Cache", "CacheEntry", "frame_to_csv_gz", "frame_from_csv_gz"]

PathLike = Union[str, "os.PathLike[str]"]


def _canonical_text(scenario: Union[str, Mapping[str, Any]]) -> str:
    if isinstance(scenario, str):
        scenario = json.loads(scenario)
    return json.dumps(scenario, sort_keys=True, separators=(",", ":"), allow_nan=False)


def point_key(scenario: Union[str, Mapping[str, Any]], seed: int, code: str) -> str:
    """The cache key of a point: hex SHA-256 of the canonical scenario JSON (keys sorted,
    no whitespace), the seed and the core's code hash."""
    blob = json.dumps(
        {"scenario": json.loads(_canonical_text(scenario)), "seed": int(seed), "code": str(code)},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def frame_to_csv_gz(df: pd.DataFrame) -> bytes:
    """A DataFrame as gzip-compressed CSV (floats in shortest round-trip form, so a table read
    back with :func:`frame_from_csv_gz` is equal to the one written). ``mtime=0`` makes the
    bytes depend on the data only."""
    text = df.to_csv(index=False, lineterminator="\n")
    return gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0)


def frame_from_csv_gz(data: bytes) -> pd.DataFrame:
    text = gzip.decompress(data).decode("utf-8")
    if not text.strip():
        return pd.DataFrame()
    kw = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
    return pd.read_csv(io.StringIO(text), keep_default_na=True, **kw)


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class CacheEntry:
    """A stored point: its metadata and lazily read tables."""

    def __init__(self, cache: "Cache", key: str, meta: Dict[str, Any]) -> None:
        self.cache = cache
        self.key = key
        self.meta = meta
        self._tables: Dict[str, pd.DataFrame] = {}

    @property
    def summary(self) -> Dict[str, Any]:
        out: Dict[str, Any] = self.meta.get("summary", {})
        return out

    @property
    def table_names(self) -> List[str]:
        return list(self.meta.get("tables", []))

    def table(self, name: str) -> pd.DataFrame:
        if name not in self._tables:
            if name not in self.table_names:
                raise KeyError(f"table {name!r} was not stored for point {self.key[:12]}")
            self._tables[name] = frame_from_csv_gz(self.cache._table_path(self.key, name).read_bytes())
        return self._tables[name]


class Cache:
    """A folder of point results (see the module docs)."""

    def __init__(self, root: PathLike) -> None:
        self.root = Path(root)

    # -- paths
    def _dir(self, key: str) -> Path:
        return self.root / key[:2]

    def _meta_path(self, key: str) -> Path:
        return self._dir(key) / f"{key}.json"

    def _table_path(self, key: str, table: str) -> Path:
        return self._dir(key) / f"{key}.{table}.csv.gz"

    def _error_path(self, key: str) -> Path:
        return self._dir(key) / f"{key}.error.json"

    # -- queries
    def get(self, key: str, tables: Sequence[str] = ()) -> Optional[CacheEntry]:
        """The entry of ``key`` if it is stored with (at least) ``tables``; else None."""
        p = self._meta_path(key)
        try:
            meta = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return None  # unreadable: treat as missing, it will be recomputed and replaced
        stored = set(meta.get("tables", []))
        if not set(tables) <= stored:
            return None
        if not all(self._table_path(key, t).is_file() for t in tables):
            return None
        return CacheEntry(self, key, meta)

    def __contains__(self, key: str) -> bool:
        return self._meta_path(key).is_file()

    def keys(self) -> List[str]:
        if not self.root.is_dir():
            return []
        out = []
        for d in sorted(self.root.iterdir()):
            if d.is_dir() and len(d.name) == 2:
                for f in sorted(d.glob("*.json")):
                    stem = f.name[: -len(".json")]
                    if "." not in stem:
                        out.append(stem)
        return out

    def error(self, key: str) -> Optional[Dict[str, Any]]:
        try:
            out: Dict[str, Any] = json.loads(self._error_path(key).read_text(encoding="utf-8"))
            return out
        except (OSError, ValueError):
            return None

    # -- writes
    def put(
        self,
        key: str,
        *,
        scenario: Mapping[str, Any],
        seed: int,
        code: str,
        version: str,
        summary: Mapping[str, Any],
        tables: Mapping[str, bytes],
        wall_time_s: float,
        extra: Optional[Mapping[str, Any]] = None,
    ) -> CacheEntry:
        """Store a computed point. ``tables`` are gzip CSV bytes (:func:`frame_to_csv_gz`)."""
        for name, data in sorted(tables.items()):
            _atomic_write(self._table_path(key, name), data)
        meta = {
            "key": key,
            "seed": int(seed),
            "code": code,
            "version": version,
            "scenario": scenario,
            "summary": summary,
            "tables": sorted(tables),
            "wall_time_s": wall_time_s,
            "stored_at": time.time(),
        }
        if extra:
            meta.update(extra)
        _atomic_write(self._meta_path(key), json.dumps(meta, sort_keys=True, allow_nan=True).encode("utf-8"))
        try:
            self._error_path(key).unlink()
        except FileNotFoundError:
            pass
        return CacheEntry(self, key, meta)

    def put_error(self, key: str, error: str, *, seed: int, labels: Optional[Mapping[str, Any]] = None) -> None:
        """Record a failure of ``key`` (one line of text). Not a result: reruns retry it."""
        rec = {"key": key, "seed": int(seed), "error": error, "labels": dict(labels or {}), "at": time.time()}
        _atomic_write(self._error_path(key), json.dumps(rec, sort_keys=True, default=str).encode("utf-8"))

    def remove(self, keys: Iterable[str]) -> None:
        for key in keys:
            for p in self._dir(key).glob(f"{key}.*"):
                try:
                    p.unlink()
                except FileNotFoundError:
                    pass
