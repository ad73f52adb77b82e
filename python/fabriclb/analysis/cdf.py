"""Flow-size distributions for the analysis package: a small CDF reader, exact moments, sampling.

The files in the repository's ``workloads/`` folder hold lines ``<bytes> <cdf>`` (``#`` starts a
comment; ``hadoop-percent.cdf`` gives the CDF in percent). Between points the CDF is linearly
interpolated — the ns-3 / HPCC traffic-generator convention that ``workloads/README.md`` requires
— so the size is uniform inside each segment, and a CDF value above zero at the first point is a
point mass there. The moments below are exact for that distribution (no sampling), which is what
the Theorem 2 bound (CONGA §6.2, Eq. (2)) needs. The Rust core owns the canonical parser; this one
is deliberately small and independent so the analysis can run without the simulator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "FlowSizeDistribution",
    "read_cdf",
    "default_workload_dir",
    "load_workload",
    "WORKLOAD_NAMES",
]

#: The workloads shipped in ``<repo>/workloads`` (file stem = name).
WORKLOAD_NAMES: tuple[str, ...] = ("web-search", "data-mining", "enterprise", "hadoop-percent")


@dataclass(frozen=True)
class FlowSizeDistribution:
    """A flow-size distribution given by CDF points, linearly interpolated between them.

    ``sizes`` are in bytes (non-decreasing), ``cdf`` is non-decreasing in [0, 1] and ends at 1.
    """

    name: str
    sizes: NDArray[np.float64]
    cdf: NDArray[np.float64]

    def __post_init__(self) -> None:
        if self.sizes.shape != self.cdf.shape or self.sizes.ndim != 1 or self.sizes.size < 1:
            raise ValueError(f"{self.name}: sizes and cdf must be 1-D arrays of equal length")
        if np.any(np.diff(self.sizes) < 0) or np.any(np.diff(self.cdf) < 0):
            raise ValueError(f"{self.name}: sizes and cdf must be non-decreasing")
        if self.sizes[0] < 0 or self.cdf[0] < 0 or abs(self.cdf[-1] - 1.0) > 1e-9:
            raise ValueError(f"{self.name}: need sizes >= 0 and a CDF from >= 0 up to 1")

    def _pieces(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(left, right, probability mass) of each uniform piece; an atom has left == right."""
        left = np.concatenate(([self.sizes[0]], self.sizes[:-1]))
        right = self.sizes.copy()
        mass = np.diff(np.concatenate(([0.0], self.cdf)))
        return left, right, mass

    def moment(self, k: int) -> float:
        """E[S^k], exact for the piecewise-uniform distribution."""
        a, b, m = self._pieces()
        width = b - a
        with np.errstate(divide="ignore", invalid="ignore"):
            uniform = (b ** (k + 1) - a ** (k + 1)) / ((k + 1) * width)
        per_piece = np.where(width > 0, uniform, b**k)
        return float(np.sum(m * per_piece))

    @property
    def mean(self) -> float:
        return self.moment(1)

    @property
    def cv(self) -> float:
        """Coefficient of variation sigma_S / E(S) (the quantity of CONGA Eq. (2))."""
        m1, m2 = self.moment(1), self.moment(2)
        return math.sqrt(max(m2 - m1 * m1, 0.0)) / m1

    @property
    def max_size(self) -> float:
        return float(self.sizes[-1])

    def mean_square_over_chunks(self, chunk_bytes: float) -> float:
        """E[S^2 / K] with K = max(1, ceil(S / chunk_bytes)), exactly.

        A flow cut into K equal flowlets contributes sum_j c_j^2 = S^2 / K to the variance of the
        link-load differences; this replaces E[S^2] in lambda_e when flowlets are balanced.
        """
        total = 0.0
        a_s, b_s, m_s = self._pieces()
        for a, b, m in zip(a_s, b_s, m_s):
            if m <= 0:
                continue
            if b <= a:  # atom
                total += m * b * b / max(1.0, math.ceil(b / chunk_bytes))
                continue
            # K is constant on (j F, (j+1) F]: integrate s^2 / K piece by piece.
            j_lo, j_hi = int(math.floor(a / chunk_bytes)), int(math.ceil(b / chunk_bytes))
            edges = np.clip(np.arange(j_lo, j_hi + 1, dtype=np.float64) * chunk_bytes, a, b)
            lo, hi = edges[:-1], edges[1:]
            k = np.maximum(1.0, np.arange(j_lo, j_hi, dtype=np.float64) + 1.0)
            total += m / (b - a) * float(np.sum((hi**3 - lo**3) / (3.0 * k)))
        return total

    def sample(self, rng: np.random.Generator, count: int) -> NDArray[np.float64]:
        """Draw ``count`` sizes by inverting the interpolated CDF."""
        u = rng.random(count)
        return np.interp(u, self.cdf, self.sizes)


def read_cdf(path: Path | str, name: str | None = None) -> FlowSizeDistribution:
    """Read a ``<bytes> <cdf>`` file; a CDF whose last value exceeds 1 is taken as percent."""
    p = Path(path)
    rows: list[tuple[float, float]] = []
    for lineno, raw in enumerate(p.read_text().splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) < 2:
            raise ValueError(f"{p}:{lineno}: expected '<bytes> <cdf>', got {raw!r}")
        rows.append((float(fields[0]), float(fields[1])))
    if not rows:
        raise ValueError(f"{p}: no CDF points")
    arr = np.asarray(rows, dtype=np.float64)
    sizes, cdf = arr[:, 0], arr[:, 1]
    if cdf[-1] > 1.0 + 1e-9:  # percent form (hadoop-percent.cdf)
        cdf = cdf / 100.0
    return FlowSizeDistribution(name=name or p.stem, sizes=sizes, cdf=cdf)


def default_workload_dir() -> Path:
    """``<repo>/workloads`` for a source checkout (python/fabriclb/analysis/ is 3 levels down)."""
    return Path(__file__).resolve().parents[3] / "workloads"


def load_workload(name: str, directory: Path | str | None = None) -> FlowSizeDistribution:
    """Load ``<directory>/<name>.cdf``; by default from the repository's ``workloads/`` folder,
    then from ``./workloads`` (for an installed package run from a checkout)."""
    candidates = [Path(directory)] if directory is not None else [
        default_workload_dir(),
        Path.cwd() / "workloads",
    ]
    for d in candidates:
        f = d / f"{name}.cdf"
        if f.is_file():
            return read_cdf(f, name=name)
    raise FileNotFoundError(
        f"workload {name!r} not found; looked for {name}.cdf in: "
        + ", ".join(str(d) for d in candidates)
    )
