"""Theorem 2 of CONGA (§6.2, Appendix B): traffic imbalance of random per-flow placement.

Flows arrive as a Poisson process of rate lambda, sizes S i.i.d., each placed on one of n links
uniformly at random. With A^k(t) the bytes sent on link k in (0, t), Z = max_k A^k, W = min_k A^k,
the imbalance is chi(t) = (Z - W) / (lambda E(S) t / n). (The paper names the minimum Y in one
place and W in another; it is the same quantity.) Theorem 2 bounds

    E chi(t) <= 1 / sqrt(lambda_e t) + O(1/t),
    lambda_e = lambda / (8 n log n (1 + (sigma_S / E S)^2)).          (Eq. (1)-(2))

chi depends on lambda and t only through the expected number of flows m = lambda t, so everything
here is a function of m. This module gives

- the leading term, and an explicit O(1/t) term from the Appendix B argument with the Taylor
  remainder kept: for S >= 0, e^x - 1 - x - x^2/2 <= x^3 e^x / 6 for x >= 0, and the remainder is
  <= 0 for x <= 0, so with theta* of Appendix B
      E chi <= 1/sqrt(lambda_e t) + n log n E[S^3 e^{theta* S}] / (3 m E(S) E(S^2));
- the non-asymptotic Chernoff form of the same proof (Eq. (6)-(7) optimised over theta
  separately for Z and W, with the exact moment generating function of the CDF);
- a Monte-Carlo estimate of E chi(t) on a grid of m, for flows and for flows cut into flowlets
  (each flow into K = ceil(S / F) equal pieces placed independently — the flowlet model; then
  E[S^2] in lambda_e becomes E[S^2 / K], see :meth:`FlowSizeDistribution.mean_square_over_chunks`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import minimize_scalar

from .cdf import FlowSizeDistribution

__all__ = [
    "effective_rate_per_flow",
    "leading_bound",
    "corrected_bound",
    "chernoff_bound",
    "ImbalanceSample",
    "simulate_imbalance",
    "flows_per_second",
]

FloatArray = NDArray[np.float64]


def _second_moment(dist: FlowSizeDistribution, flowlet_bytes: float | None) -> float:
    return dist.moment(2) if flowlet_bytes is None else dist.mean_square_over_chunks(flowlet_bytes)


def effective_rate_per_flow(n: int, dist: FlowSizeDistribution, flowlet_bytes: float | None = None) -> float:
    """lambda_e / lambda = E(S)^2 / (8 n log n E(S^2)) (Eq. (2): 1 + CV^2 = E(S^2) / E(S)^2).

    With flowlets, the flowlet process has rate lambda E[K] and second moment E[S^2/K]/E[K];
    the product that enters the bound is E[S^2 / K].
    """
    if n < 2:
        raise ValueError("need n >= 2 links")
    m1 = dist.mean
    return m1 * m1 / (8.0 * n * math.log(n) * _second_moment(dist, flowlet_bytes))


def leading_bound(m: FloatArray | float, n: int, dist: FlowSizeDistribution,
                  flowlet_bytes: float | None = None) -> FloatArray:
    """1 / sqrt(lambda_e t) with lambda t = m expected flows (Eq. (1) without the O(1/t))."""
    return 1.0 / np.sqrt(effective_rate_per_flow(n, dist, flowlet_bytes) * np.asarray(m, dtype=np.float64))


def _exp_moment3(dist: FlowSizeDistribution, theta: float) -> float:
    """E[S^3 e^{theta S}] for the piecewise-uniform distribution (sizes in units of E(S))."""
    scale = dist.mean
    total = 0.0
    sizes, cdf = dist.sizes / scale, dist.cdf
    lefts = np.concatenate(([sizes[0]], sizes[:-1]))
    masses = np.diff(np.concatenate(([0.0], cdf)))
    for a, b, w in zip(lefts, sizes, masses):
        if w <= 0:
            continue
        if b <= a:
            total += w * b**3 * math.exp(theta * b)
            continue
        grid = np.linspace(a, b, 257)  # Simpson on a smooth integrand
        f = grid**3 * np.exp(theta * grid)
        h = (b - a) / 256
        total += w / (b - a) * h / 3 * float(f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum())
    return total


def corrected_bound(m: FloatArray | float, n: int, dist: FlowSizeDistribution) -> FloatArray:
    """Leading term plus the explicit O(1/t) term of the Appendix B argument (see module doc).

    Valid for every m: it is the proof of Appendix B with the Taylor remainder bounded instead
    of dropped (the remainder only hurts the max; for the min it has a favourable sign).
    """
    ms = np.atleast_1d(np.asarray(m, dtype=np.float64))
    m1 = dist.mean
    m2 = dist.moment(2) / (m1 * m1)  # E S^2 in units of E(S)
    logn = math.log(n)
    out = np.empty_like(ms)
    lead = leading_bound(ms, n, dist)
    for i, mm in enumerate(ms):
        theta = math.sqrt(2 * n * logn / (mm * m2))
        out[i] = lead[i] + n * logn * _exp_moment3(dist, theta) / (3.0 * mm * m2)
    return out


def _mgf_minus_one_over_theta(dist: FlowSizeDistribution, theta: float) -> float:
    """(M_S(theta) - 1) / theta with sizes in units of E(S), stably for small |theta|."""
    s = dist.sizes / dist.mean
    a = np.concatenate(([s[0]], s[:-1]))
    w = np.diff(np.concatenate(([0.0], dist.cdf)))
    width = s - a
    x = theta * width
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = np.where(np.abs(x) > 1e-12, np.expm1(x) / np.where(x == 0, 1.0, x), 1.0 + x / 2)
        # e^{theta a} * (e^{theta w} - 1)/(theta w) - 1 = expm1(theta a) * ratio + (ratio - 1)
        term = np.expm1(theta * a) * ratio + (ratio - 1.0)
    return float(np.sum(w * term)) / theta


def chernoff_bound(m: FloatArray | float, n: int, dist: FlowSizeDistribution) -> FloatArray:
    """Non-asymptotic form of the Appendix B proof: with E(S) = 1,

        E Z <= min_{theta>0} log n / theta + (m/n) (M(theta) - 1) / theta,
        E W >= max_{theta>0} -log n / theta - (m/n) (M(-theta) - 1) / theta,
        E chi <= (bound on E Z - bound on E W) / (m / n).
    """
    ms = np.atleast_1d(np.asarray(m, dtype=np.float64))
    smax = dist.max_size / dist.mean
    logn = math.log(n)
    out = np.empty_like(ms)
    for i, mm in enumerate(ms):
        hi = math.log(min(600.0 / smax, 1e3))

        def z_bound(lt: float) -> float:
            th = math.exp(lt)
            return logn / th + (mm / n) * _mgf_minus_one_over_theta(dist, th)

        def neg_w_bound(lt: float) -> float:
            th = math.exp(lt)
            # (M(-theta) - 1) / theta = -_mgf_minus_one_over_theta(dist, -theta)
            return logn / th - (mm / n) * _mgf_minus_one_over_theta(dist, -th)

        zb = minimize_scalar(z_bound, bounds=(-30.0, hi), method="bounded",
                             options={"xatol": 1e-10}).fun
        wb = -minimize_scalar(neg_w_bound, bounds=(-30.0, math.log(1e3)), method="bounded",
                              options={"xatol": 1e-10}).fun
        out[i] = (zb - wb) / (mm / n)
    return out


@dataclass(frozen=True)
class ImbalanceSample:
    """Monte-Carlo chi(t): chi[trial, j] at m[j] expected flows."""

    m: FloatArray
    chi: FloatArray

    @property
    def mean(self) -> FloatArray:
        return self.chi.mean(axis=0)

    @property
    def stderr(self) -> FloatArray:
        return self.chi.std(axis=0, ddof=1) / math.sqrt(self.chi.shape[0])


def simulate_imbalance(
    dist: FlowSizeDistribution, n: int, m_grid: FloatArray, trials: int,
    rng: np.random.Generator, flowlet_bytes: float | None = None,
) -> ImbalanceSample:
    """Monte-Carlo of chi at the expected flow counts ``m_grid`` (increasing), one Poisson
    arrival path per trial observed at every grid point (so points of a trial are correlated,
    trials are independent). Normalisation uses the exact E(S) of the CDF, as in the definition.

    With ``flowlet_bytes`` = F each flow is cut into K = ceil(S/F) equal flowlets that are placed
    independently (the counts per link are multinomial(K, 1/n)).
    """
    m_grid = np.asarray(m_grid, dtype=np.float64)
    if np.any(np.diff(m_grid) <= 0) or m_grid[0] <= 0:
        raise ValueError("m_grid must be positive and increasing")
    mean = dist.mean
    chi = np.empty((trials, m_grid.size))
    incr_mean = np.diff(np.concatenate(([0.0], m_grid)))
    pvals = np.full(n, 1.0 / n)
    for r in range(trials):
        counts = rng.poisson(incr_mean)
        total = int(counts.sum())
        sizes = dist.sample(rng, total)
        if flowlet_bytes is None:
            links = rng.integers(0, n, size=total)
        else:
            k = np.maximum(1, np.ceil(sizes / flowlet_bytes)).astype(np.int64)
            per_link = rng.multinomial(k, pvals) * (sizes / k)[:, None]  # (flows, n) bytes
        acc = np.zeros(n)
        start = 0
        for j, c in enumerate(counts):
            stop = start + int(c)
            if flowlet_bytes is None:
                acc += np.bincount(links[start:stop], weights=sizes[start:stop], minlength=n)
            else:
                acc += per_link[start:stop].sum(axis=0)
            start = stop
            chi[r, j] = (acc.max() - acc.min()) / (mean * m_grid[j] / n)
    return ImbalanceSample(m=m_grid, chi=chi)


def flows_per_second(dist: FlowSizeDistribution, load: float, fabric_bps: float) -> float:
    """Fabric-load convention of workloads/README.md: lambda = rho C_fabric / (8 E[S])."""
    return load * fabric_bps / (8.0 * dist.mean)
