"""The bottleneck routing game of CONGA §6.1 on a two-tier leaf-spine, and its Price of Anarchy.

Model (CONGA §6.1, after Banner & Orda): leaves and spines form a bipartite graph; every
leaf-spine pair may have a full-duplex link, i.e. two directed links (leaf->spine "up",
spine->leaf "down"), each with its own capacity (0 = absent). A *user* is a (source leaf,
destination leaf, demand) triple; its paths are the spines reachable up from the source and
down to the destination. A flow ``x`` is a (users x spines) array: x[u, s] = traffic of user u
through spine s. Utilisation of a link is load / capacity; the network bottleneck B(f) is the
largest utilisation and a user's bottleneck b_u(f) the largest utilisation on links it uses.

This module provides
- the optimal bottleneck as a linear program (HiGHS) plus an exact rational certificate of it
  (primal flow and dual prices checked in ``fractions.Fraction``);
- the per-user best response, both as LPs (used to *check* Nash flows) and as an exact
  water-filling (used to *move* in best-response dynamics; it works for floats and Fractions);
- best-response dynamics, the Remark 2 refinement (fewest bottleneck links), a CONGA-like
  simultaneous fluid dynamics with and without that refinement;
- the reconstructed instance of Fig. 17 (Appendix A.1) with its Nash and optimal flows,
  random instances, and a brute-force grid optimum for tests.
Two different spines give link-disjoint paths, which the water-filling relies on.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

__all__ = [
    "Instance",
    "OptimumResult",
    "NashCheck",
    "DynamicsResult",
    "link_loads",
    "link_utilisation",
    "network_bottleneck",
    "user_bottlenecks",
    "optimal_bottleneck",
    "best_response_value_lp",
    "water_fill",
    "best_response",
    "check_nash",
    "best_response_dynamics",
    "ecmp_flow",
    "bottleneck_link_counts",
    "remark2_violations",
    "conga_fluid_dynamics",
    "exact_flow",
    "exact_network_bottleneck",
    "exact_best_response_value",
    "exact_is_nash",
    "exact_optimum_bounds",
    "fig17_instance",
    "fig17_nash_flow",
    "fig17_optimal_flow",
    "random_instance",
    "brute_force_optimum",
]

FloatArray = NDArray[np.float64]
Number = float | Fraction


@dataclass(frozen=True)
class Instance:
    """A leaf-spine bottleneck routing game.

    cap_up[l, s]: capacity of the directed link leaf l -> spine s (0 = no link).
    cap_down[l, s]: capacity of the directed link spine s -> leaf l (0 = no link).
    users: (src leaf, dst leaf, demand) with src != dst.
    """

    cap_up: FloatArray
    cap_down: FloatArray
    users: tuple[tuple[int, int, float], ...]
    name: str = ""
    spine_names: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.cap_up.shape != self.cap_down.shape or self.cap_up.ndim != 2:
            raise ValueError("cap_up and cap_down must be (leaves, spines) arrays of one shape")
        if np.any(self.cap_up < 0) or np.any(self.cap_down < 0):
            raise ValueError("capacities must be >= 0")
        for src, dst, dem in self.users:
            if src == dst or not (0 <= src < self.n_leaves and 0 <= dst < self.n_leaves):
                raise ValueError(f"bad user ({src}, {dst})")
            if dem < 0:
                raise ValueError("demands must be >= 0")
            if dem > 0 and not self.paths(src, dst):
                raise ValueError(f"user {src}->{dst} has demand but no path")

    @property
    def n_leaves(self) -> int:
        return int(self.cap_up.shape[0])

    @property
    def n_spines(self) -> int:
        return int(self.cap_up.shape[1])

    @property
    def n_users(self) -> int:
        return len(self.users)

    @property
    def demands(self) -> FloatArray:
        return np.array([d for _, _, d in self.users], dtype=np.float64)

    def paths(self, src: int, dst: int) -> list[int]:
        """Spines s giving a path src -> s -> dst."""
        return [
            s
            for s in range(self.n_spines)
            if self.cap_up[src, s] > 0 and self.cap_down[dst, s] > 0
        ]

    def path_mask(self) -> NDArray[np.bool_]:
        """mask[u, s] is True when user u has a path through spine s."""
        m = np.zeros((self.n_users, self.n_spines), dtype=bool)
        for u, (src, dst, _) in enumerate(self.users):
            m[u, self.paths(src, dst)] = True
        return m


# --------------------------------------------------------------------------- loads, bottlenecks


def link_loads(inst: Instance, x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(up, down) link loads, each (leaves, spines)."""
    up = np.zeros_like(inst.cap_up)
    down = np.zeros_like(inst.cap_down)
    src = np.array([s for s, _, _ in inst.users], dtype=np.intp)
    dst = np.array([d for _, d, _ in inst.users], dtype=np.intp)
    np.add.at(up, src, x)
    np.add.at(down, dst, x)
    return up, down


def link_utilisation(inst: Instance, x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(up, down) utilisation; absent links report 0 (they never carry traffic)."""
    up, down = link_loads(inst, x)
    with np.errstate(divide="ignore", invalid="ignore"):
        ru = np.where(inst.cap_up > 0, up / np.where(inst.cap_up > 0, inst.cap_up, 1.0), 0.0)
        rd = np.where(inst.cap_down > 0, down / np.where(inst.cap_down > 0, inst.cap_down, 1.0), 0.0)
    return ru, rd


def _path_metrics(inst: Instance, x: FloatArray) -> FloatArray:
    """metric[u, s] = utilisation of the most loaded link on user u's path via s (the CONGA
    path metric, §3: max over hops); -inf where there is no path."""
    ru, rd = link_utilisation(inst, x)
    src = [s for s, _, _ in inst.users]
    dst = [d for _, d, _ in inst.users]
    m = np.maximum(ru[src, :], rd[dst, :])
    return np.where(inst.path_mask(), m, -np.inf)


def network_bottleneck(inst: Instance, x: FloatArray) -> float:
    """B(f) = max utilisation over all links (§6.1)."""
    ru, rd = link_utilisation(inst, x)
    return float(max(ru.max(initial=0.0), rd.max(initial=0.0)))


def _used(x: FloatArray, demands: FloatArray, rel_tol: float = 1e-12) -> NDArray[np.bool_]:
    return x > rel_tol * np.maximum(demands, 1e-300)[:, None]


def user_bottlenecks(inst: Instance, x: FloatArray) -> FloatArray:
    """b_u(f) = max utilisation over the links user u uses (0 for a user with no traffic)."""
    m = _path_metrics(inst, x)
    used = _used(x, inst.demands)
    return np.where(used, m, 0.0).max(axis=1, initial=0.0)


def ecmp_flow(inst: Instance) -> FloatArray:
    """Each user splits its demand equally over its paths (the neutral start)."""
    mask = inst.path_mask().astype(np.float64)
    counts = np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
    return mask / counts * inst.demands[:, None]


# --------------------------------------------------------------------------- optimum (LP)


@dataclass(frozen=True)
class OptimumResult:
    """Minimum over feasible flows of the network bottleneck."""

    value: float
    flow: FloatArray
    #: dual prices of the link constraints: (up, down), each (leaves, spines), >= 0
    prices: tuple[FloatArray, FloatArray]


def optimal_bottleneck(inst: Instance) -> OptimumResult:
    """Solve  min t  s.t.  sum_s x[u,s] = gamma_u,  load_e <= t c_e,  x >= 0  with HiGHS."""
    mask = inst.path_mask()
    var_of: dict[tuple[int, int], int] = {}
    for u, s in zip(*np.nonzero(mask)):
        var_of[(int(u), int(s))] = len(var_of)
    nv = len(var_of) + 1  # last variable is t
    t_idx = nv - 1
    L, S = inst.n_leaves, inst.n_spines
    # one inequality row per directed link that exists: up links first, then down links
    up_row = {(l, s): i for i, (l, s) in enumerate(zip(*np.nonzero(inst.cap_up > 0)))}
    dn_base = len(up_row)
    dn_row = {(l, s): dn_base + i for i, (l, s) in enumerate(zip(*np.nonzero(inst.cap_down > 0)))}
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    for (u, s), j in var_of.items():
        src, dst, _ = inst.users[u]
        rows += [up_row[(src, s)], dn_row[(dst, s)]]
        cols += [j, j]
        vals += [1.0, 1.0]
    for (l, s), i in up_row.items():
        rows.append(i), cols.append(t_idx), vals.append(-float(inst.cap_up[l, s]))
    for (l, s), i in dn_row.items():
        rows.append(i), cols.append(t_idx), vals.append(-float(inst.cap_down[l, s]))
    n_ub = len(up_row) + len(dn_row)
    a_ub = coo_matrix((vals, (rows, cols)), shape=(n_ub, nv)).tocsr()
    eq_r = [u for (u, _s) in var_of]
    eq_c = list(var_of.values())
    a_eq = coo_matrix(([1.0] * len(eq_c), (eq_r, eq_c)), shape=(inst.n_users, nv)).tocsr()
    c = np.zeros(nv)
    c[t_idx] = 1.0
    res = linprog(
        c, A_ub=a_ub, b_ub=np.zeros(n_ub), A_eq=a_eq, b_eq=inst.demands,
        bounds=[(0, None)] * nv, method="highs",
    )
    if res.status != 0:
        raise RuntimeError(f"optimal_bottleneck LP failed: {res.message}")
    x = np.zeros((inst.n_users, S))
    for (u, s), j in var_of.items():
        x[u, s] = res.x[j]
    marg = -np.asarray(res.ineqlin.marginals)  # HiGHS reports <= 0 marginals for a min problem
    pu = np.zeros((L, S))
    pd = np.zeros((L, S))
    for (l, s), i in up_row.items():
        pu[l, s] = max(marg[i], 0.0)
    for (l, s), i in dn_row.items():
        pd[l, s] = max(marg[i], 0.0)
    return OptimumResult(value=float(res.x[t_idx]), flow=x, prices=(pu, pd))


def brute_force_optimum(inst: Instance, steps: int) -> tuple[float, FloatArray]:
    """Grid search over splits: every user puts a multiple of demand/steps on each path.

    Exponential in users x paths: only for tiny instances (tests of the LP).
    """
    mask = inst.path_mask()
    per_user: list[list[NDArray[np.float64]]] = []
    for u in range(inst.n_users):
        ps = np.nonzero(mask[u])[0]
        opts = []
        for comp in itertools.product(range(steps + 1), repeat=len(ps)):
            if sum(comp) == steps:
                row = np.zeros(inst.n_spines)
                row[ps] = np.array(comp, dtype=np.float64) / steps * inst.demands[u]
                opts.append(row)
        per_user.append(opts)
    best, best_x = math.inf, np.zeros((inst.n_users, inst.n_spines))
    for choice in itertools.product(*per_user):
        x = np.array(choice)
        b = network_bottleneck(inst, x)
        if b < best:
            best, best_x = b, x
    return best, best_x


# --------------------------------------------------------------------------- best responses


def _others(inst: Instance, x: FloatArray, u: int) -> tuple[FloatArray, FloatArray]:
    """Loads on user u's up links (its source) and down links (its destination) from the others."""
    up, down = link_loads(inst, x)
    src, dst, _ = inst.users[u]
    return up[src] - x[u], down[dst] - x[u]


def best_response_value_lp(
    inst: Instance, x: FloatArray, u: int, upper: float = math.inf,
) -> float:
    """min over user u's deviations of b_u, others fixed, by LPs (HiGHS).

    b_u counts only the links u uses, so a path whose links the others already load beyond the
    final level must stay empty. The optimal set of used paths is a prefix of the paths sorted by
    r_p = (others' utilisation on p); one LP per prefix (min t s.t. the prefix carries gamma_u
    with every link of the prefix at utilisation <= t) and the minimum over prefixes is exact.
    With ``upper`` (e.g. the user's current b_u) prefixes that cannot go below it are skipped
    and the result is min(best response, upper).
    """
    src, dst, dem = inst.users[u]
    if dem <= 0:
        return 0.0
    o_up, o_dn = _others(inst, x, u)
    ps = inst.paths(src, dst)
    cu = np.array([inst.cap_up[src, s] for s in ps])
    cd = np.array([inst.cap_down[dst, s] for s in ps])
    r = np.maximum(o_up[ps] / cu, o_dn[ps] / cd)
    order = np.argsort(r, kind="stable")
    best = upper
    for k in range(1, len(ps) + 1):
        if r[order[k - 1]] >= best:  # later prefixes cannot beat the current best
            break
        sel = order[:k]
        n = k + 1  # x_p for p in prefix, then t
        a_ub = np.zeros((2 * k, n))
        b_ub = np.zeros(2 * k)
        for i, p in enumerate(sel):
            a_ub[2 * i, i], a_ub[2 * i, k], b_ub[2 * i] = 1.0, -cu[p], -o_up[ps[p]]
            a_ub[2 * i + 1, i], a_ub[2 * i + 1, k], b_ub[2 * i + 1] = 1.0, -cd[p], -o_dn[ps[p]]
        a_eq = np.zeros((1, n))
        a_eq[0, :k] = 1.0
        c = np.zeros(n)
        c[k] = 1.0
        res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[dem],
                      bounds=[(0, None)] * n, method="highs")
        if res.status == 0:
            best = min(best, float(res.x[k]))
    return best


def water_fill(
    cap_up: Sequence[Number], cap_down: Sequence[Number],
    other_up: Sequence[Number], other_down: Sequence[Number], demand: Number,
) -> tuple[Number, list[Number]]:
    """Exact best response over link-disjoint 2-hop paths (works in floats or Fractions).

    Path p can take g_p(t) = max(0, min(t c_up - o_up, t c_down - o_down)) at level t; the best
    response level is the least t with sum_p g_p(t) = demand, and the response puts g_p(t) on p.
    sum_p g_p is piecewise linear and increasing, so t is found exactly between breakpoints.
    """
    n = len(cap_up)

    def g(p: int, t: Number) -> Number:
        v = min(t * cap_up[p] - other_up[p], t * cap_down[p] - other_down[p])
        return v if v > 0 else 0 * v

    def total(t: Number) -> Number:
        return sum((g(p, t) for p in range(n)), 0 * demand)

    if demand <= 0:
        return 0 * demand, [0 * demand for _ in range(n)]
    bps: list[Number] = []
    for p in range(n):
        bps.append(other_up[p] / cap_up[p])
        bps.append(other_down[p] / cap_down[p])
        den = cap_up[p] - cap_down[p]
        if den != 0:
            bps.append((other_up[p] - other_down[p]) / den)
    pts = sorted({b for b in bps if b >= 0} | {0 * demand})
    lo = pts[0]
    f_lo = total(lo)
    if f_lo >= demand:
        t_star = lo
    else:
        t_star = None
        for hi in pts[1:] + [pts[-1] + 1]:
            f_hi = total(hi)
            if f_hi >= demand:
                t_star = lo + (demand - f_lo) * (hi - lo) / (f_hi - f_lo)
                break
            lo, f_lo = hi, f_hi
        if t_star is None:  # beyond the last breakpoint total() is linear: extrapolate
            hi = lo + 1
            f_hi = total(hi)
            t_star = lo + (demand - f_lo) * (hi - lo) / (f_hi - f_lo)
    alloc = [g(p, t_star) for p in range(n)]
    return t_star, alloc


def best_response(inst: Instance, x: FloatArray, u: int) -> tuple[float, FloatArray]:
    """(level, new row x[u]) of user u's water-filling best response (float)."""
    src, dst, dem = inst.users[u]
    o_up, o_dn = _others(inst, x, u)
    ps = inst.paths(src, dst)
    t, alloc = water_fill(
        [float(inst.cap_up[src, s]) for s in ps], [float(inst.cap_down[dst, s]) for s in ps],
        [float(o_up[s]) for s in ps], [float(o_dn[s]) for s in ps], float(dem),
    )
    row = np.zeros(inst.n_spines)
    row[ps] = np.asarray(alloc, dtype=np.float64)
    # renormalise away round-off so the demand is met exactly
    if row.sum() > 0:
        row *= dem / row.sum()
    return float(t), row


@dataclass(frozen=True)
class NashCheck:
    is_nash: bool
    #: max over users of b_u(f) - (best-response value); <= tol for a Nash flow
    max_gap: float
    gaps: FloatArray


def check_nash(inst: Instance, x: FloatArray, tol: float = 1e-7, method: str = "lp") -> NashCheck:
    """Nash test of §6.1: no user can lower its own bottleneck b_u with the others fixed.

    method="lp" uses the per-user best-response LPs (the check), "waterfill" the closed form.
    tol is relative to max(1, b_u).
    """
    b = user_bottlenecks(inst, x)
    gaps = np.zeros(inst.n_users)
    for u in range(inst.n_users):
        if inst.users[u][2] <= 0:
            continue
        if method == "lp":
            # only deviations below b_u matter for the test, which prunes the prefix LPs
            br = best_response_value_lp(inst, x, u, upper=float(b[u]) * (1 + 1e-12) + 1e-15)
        else:
            br = best_response(inst, x, u)[0]
        gaps[u] = (b[u] - br) / max(1.0, b[u])
    mg = float(gaps.max(initial=0.0))
    return NashCheck(is_nash=mg <= tol, max_gap=mg, gaps=gaps)


@dataclass(frozen=True)
class DynamicsResult:
    flow: FloatArray
    rounds: int
    converged: bool
    bottleneck_history: tuple[float, ...]


def best_response_dynamics(
    inst: Instance, x0: FloatArray, max_rounds: int = 2000, tol: float = 1e-9,
) -> DynamicsResult:
    """Round-robin (Gauss-Seidel) water-filling best responses until the Nash test passes.

    A best response never raises the mover's bottleneck above its old one, so B(f) never grows:
    the dynamics can only improve on the start. Convergence is tested with the water-filling
    value after every round; callers confirm with :func:`check_nash` (LP).
    """
    x = np.array(x0, dtype=np.float64, copy=True)
    hist = [network_bottleneck(inst, x)]
    for rnd in range(1, max_rounds + 1):
        for u in range(inst.n_users):
            if inst.users[u][2] > 0:
                x[u] = best_response(inst, x, u)[1]
        hist.append(network_bottleneck(inst, x))
        if check_nash(inst, x, tol=tol, method="waterfill").is_nash:
            return DynamicsResult(x, rnd, True, tuple(hist))
    return DynamicsResult(x, max_rounds, False, tuple(hist))


# --------------------------------------------------------------------------- Remark 2


def bottleneck_link_counts(inst: Instance, x: FloatArray, tol: float = 1e-9) -> NDArray[np.int_]:
    """N[u, s] = number of links of path (u, s) at the network bottleneck B(f) (Appendix A.2's
    N_f(p)); -1 where there is no path."""
    ru, rd = link_utilisation(inst, x)
    b = network_bottleneck(inst, x)
    src = [s for s, _, _ in inst.users]
    dst = [d for _, d, _ in inst.users]
    n = (ru[src, :] >= b - tol).astype(int) + (rd[dst, :] >= b - tol).astype(int)
    return np.where(inst.path_mask(), n, -1)


def remark2_violations(inst: Instance, x: FloatArray, tol: float = 1e-9) -> list[tuple[int, int]]:
    """Users at the network bottleneck that use a path with more bottleneck links than their
    best path (Remark 2 / Appendix A.2): returns (user, spine) pairs; empty = refined flow."""
    counts = bottleneck_link_counts(inst, x, tol)
    b_u = user_bottlenecks(inst, x)
    b = network_bottleneck(inst, x)
    used = _used(x, inst.demands)
    out: list[tuple[int, int]] = []
    for u in range(inst.n_users):
        if b_u[u] < b - tol:
            continue
        avail = counts[u][counts[u] >= 0]
        fewest = int(avail.min())
        for s in np.nonzero(used[u])[0]:
            if counts[u, s] > fewest:
                out.append((u, int(s)))
    return out


def conga_fluid_dynamics(
    inst: Instance, x0: FloatArray, refined: bool, iterations: int = 4000,
    step: float = 0.2, tol: float = 1e-9,
) -> tuple[FloatArray, FloatArray]:
    """CONGA-like simultaneous dynamics: every user shifts a share of its traffic from its worse
    paths to its best path(s), all users at once (flowlets of all leaves move in parallel).

    Path key = CONGA's metric (max link utilisation, §3). With ``refined`` (Remark 2), ties in the
    metric are broken by the number of links on the path at that metric, fewest first. The share
    moved decays like step / (1 + k/100) so that the fluid limit settles. Returns the final flow
    and the history of B(f).
    """
    x = np.array(x0, dtype=np.float64, copy=True)
    mask = inst.path_mask()
    src = [s for s, _, _ in inst.users]
    dst = [d for _, d, _ in inst.users]
    hist = np.zeros(iterations + 1)
    hist[0] = network_bottleneck(inst, x)
    for k in range(iterations):
        ru, rd = link_utilisation(inst, x)
        up_m, dn_m = ru[src, :], rd[dst, :]
        metric = np.where(mask, np.maximum(up_m, dn_m), np.inf)
        nlinks = (up_m >= metric - tol).astype(int) + (dn_m >= metric - tol).astype(int)
        eta = step / (1.0 + k / 100.0)
        new = x.copy()
        for u in range(inst.n_users):
            m = metric[u]
            best_m = m.min()
            key = np.where(np.abs(m - best_m) <= tol, 0, 1)
            if refined:
                cand = np.nonzero(key == 0)[0]
                fewest = nlinks[u, cand].min()
                best = cand[nlinks[u, cand] == fewest]
            else:
                best = np.nonzero(key == 0)[0]
            worse = np.setdiff1d(np.nonzero(mask[u])[0], best)
            if worse.size == 0:
                continue
            # move more from paths whose metric is further above the best (at least eta for ties)
            gap = np.clip(m[worse] - best_m, 0.0, None)
            share = np.minimum(1.0, eta * (1.0 + gap / max(best_m, 1e-12)))
            moved = x[u, worse] * share
            new[u, worse] -= moved
            new[u, best] += moved.sum() / best.size
        x = new
        hist[k + 1] = network_bottleneck(inst, x)
    return x, hist


# --------------------------------------------------------------------------- exact arithmetic


def exact_flow(rows: Sequence[Sequence[Number]]) -> list[list[Fraction]]:
    return [[Fraction(v) for v in row] for row in rows]


def _exact_caps(inst: Instance) -> tuple[list[list[Fraction]], list[list[Fraction]]]:
    cu = [[Fraction(float(c)) for c in row] for row in inst.cap_up]
    cd = [[Fraction(float(c)) for c in row] for row in inst.cap_down]
    return cu, cd


def _exact_loads(inst: Instance, x: list[list[Fraction]]) -> tuple[list[list[Fraction]], list[list[Fraction]]]:
    up = [[Fraction(0)] * inst.n_spines for _ in range(inst.n_leaves)]
    dn = [[Fraction(0)] * inst.n_spines for _ in range(inst.n_leaves)]
    for u, (src, dst, _) in enumerate(inst.users):
        for s in range(inst.n_spines):
            up[src][s] += x[u][s]
            dn[dst][s] += x[u][s]
    return up, dn


def _exact_check_feasible(inst: Instance, x: list[list[Fraction]]) -> None:
    mask = inst.path_mask()
    for u, (_, _, dem) in enumerate(inst.users):
        if sum(x[u], Fraction(0)) != Fraction(float(dem)):
            raise ValueError(f"user {u}: flow does not sum to its demand")
        for s in range(inst.n_spines):
            if x[u][s] < 0 or (x[u][s] > 0 and not mask[u, s]):
                raise ValueError(f"user {u}: negative flow or flow on a missing path via {s}")


def exact_network_bottleneck(inst: Instance, x: list[list[Fraction]]) -> Fraction:
    """B(f) in rational arithmetic (validates feasibility first)."""
    _exact_check_feasible(inst, x)
    cu, cd = _exact_caps(inst)
    up, dn = _exact_loads(inst, x)
    best = Fraction(0)
    for l in range(inst.n_leaves):
        for s in range(inst.n_spines):
            if cu[l][s] > 0:
                best = max(best, up[l][s] / cu[l][s])
            if cd[l][s] > 0:
                best = max(best, dn[l][s] / cd[l][s])
    return best


def _exact_user_bottleneck(inst: Instance, x: list[list[Fraction]], u: int) -> Fraction:
    cu, cd = _exact_caps(inst)
    up, dn = _exact_loads(inst, x)
    src, dst, _ = inst.users[u]
    b = Fraction(0)
    for s in range(inst.n_spines):
        if x[u][s] > 0:
            b = max(b, up[src][s] / cu[src][s], dn[dst][s] / cd[dst][s])
    return b


def exact_best_response_value(inst: Instance, x: list[list[Fraction]], u: int) -> Fraction:
    """Best-response level of user u in rational arithmetic (exact water-filling)."""
    cu, cd = _exact_caps(inst)
    up, dn = _exact_loads(inst, x)
    src, dst, dem = inst.users[u]
    ps = inst.paths(src, dst)
    t, _ = water_fill(
        [cu[src][s] for s in ps], [cd[dst][s] for s in ps],
        [up[src][s] - x[u][s] for s in ps], [dn[dst][s] - x[u][s] for s in ps],
        Fraction(float(dem)),
    )
    return Fraction(t)


def exact_is_nash(inst: Instance, x: list[list[Fraction]]) -> bool:
    """Every user's bottleneck equals its exact best-response level."""
    _exact_check_feasible(inst, x)
    return all(
        _exact_user_bottleneck(inst, x, u) <= exact_best_response_value(inst, x, u)
        for u in range(inst.n_users)
        if inst.users[u][2] > 0
    )


def exact_optimum_bounds(
    inst: Instance, opt: OptimumResult, max_den: int = 10**6,
    primal: list[list[Fraction]] | None = None,
) -> tuple[Fraction, Fraction]:
    """Rational (lower, upper) bounds on the optimal bottleneck from an LP solution.

    Lower bound by weak duality: for prices y >= 0 on links with sum_e c_e y_e = 1, every
    feasible flow has  B >= sum_e y_e load_e >= sum_u gamma_u min_{p in P_u} sum_{e in p} y_e.
    The LP's dual prices are rounded to rationals and renormalised, so the bound is exact.
    Upper bound: B of the rounded primal flow (or of ``primal`` if given). Equal bounds prove
    the optimum exactly.
    """
    cu, cd = _exact_caps(inst)
    pu, pd = opt.prices
    yu = [[Fraction(float(v)).limit_denominator(max_den) for v in row] for row in pu]
    yd = [[Fraction(float(v)).limit_denominator(max_den) for v in row] for row in pd]
    norm = sum(
        (cu[l][s] * yu[l][s] + cd[l][s] * yd[l][s]
         for l in range(inst.n_leaves) for s in range(inst.n_spines)),
        Fraction(0),
    )
    lower = Fraction(0)
    if norm > 0:
        for src, dst, dem in inst.users:
            z = min(yu[src][s] + yd[dst][s] for s in inst.paths(src, dst))
            lower += Fraction(float(dem)) * z
        lower /= norm
    if primal is None:
        primal = []
        for u, (_, _, dem) in enumerate(inst.users):
            row = [max(Fraction(0), Fraction(float(v)).limit_denominator(max_den)) for v in opt.flow[u]]
            j = int(np.argmax(opt.flow[u]))
            row[j] += Fraction(float(dem)) - sum(row, Fraction(0))  # meet the demand exactly
            primal.append(row)
    upper = exact_network_bottleneck(inst, primal)
    return lower, upper


# --------------------------------------------------------------------------- Fig. 17


FIG17_N = 5


def fig17_instance() -> Instance:
    """Reconstruction of CONGA Fig. 17 (Appendix A.1): 5 leaves, 5 spines, capacities 1.

    Leaf i is linked to every spine except spine (i + 2) mod 5 (20 full-duplex links). Users:
    leaves i and i+1 (mod 5, so the last and first leaf too) send 1 unit to each other (10
    users). Derivation in docs/ANALYSIS.md: it is the choice for which the single-path flow
    "pair {i, i+1} via spine i" is a Nash flow with half the links unused.
    """
    n = FIG17_N
    cap = np.ones((n, n))
    for i in range(n):
        cap[i, (i + 2) % n] = 0.0
    users: list[tuple[int, int, float]] = []
    for i in range(n):
        j = (i + 1) % n
        users.append((i, j, 1.0))
        users.append((j, i, 1.0))
    return Instance(cap_up=cap.copy(), cap_down=cap.copy(), users=tuple(users), name="conga-fig17",
                    spine_names=tuple(f"S{s}" for s in range(n)))


def fig17_nash_flow() -> list[list[Fraction]]:
    """Fig. 17(a): pair {i, i+1} sends all its traffic (both ways) through spine i."""
    inst = fig17_instance()
    x = [[Fraction(0)] * FIG17_N for _ in range(inst.n_users)]
    for u, (src, dst, _) in enumerate(inst.users):
        i = src if (src + 1) % FIG17_N == dst else dst  # the pair is {i, i+1}
        x[u][i] = Fraction(1)
    return x


def fig17_optimal_flow() -> list[list[Fraction]]:
    """Fig. 17(b): pair {i, i+1} splits 1/2 - 1/2 over spines i-1 and i+1; every link at 1/2."""
    inst = fig17_instance()
    x = [[Fraction(0)] * FIG17_N for _ in range(inst.n_users)]
    for u, (src, dst, _) in enumerate(inst.users):
        i = src if (src + 1) % FIG17_N == dst else dst
        x[u][(i - 1) % FIG17_N] = Fraction(1, 2)
        x[u][(i + 1) % FIG17_N] = Fraction(1, 2)
    return x


# --------------------------------------------------------------------------- random instances


def random_instance(rng: np.random.Generator, max_leaves: int = 5, max_spines: int = 4) -> Instance:
    """A random leaf-spine game: 3..max_leaves leaves, 2..max_spines spines, each full-duplex
    link present with probability 0.75 and capacity in {1, 2, 4} (the same both ways, as after
    a partial link-aggregation failure) or degraded to a random value in one direction with
    probability 0.1; 2..(pairs) users with demands uniform in (0.1, 1)."""
    while True:
        L = int(rng.integers(3, max_leaves + 1))
        S = int(rng.integers(2, max_spines + 1))
        present = rng.random((L, S)) < 0.75
        cap = np.where(present, rng.choice([1.0, 2.0, 4.0], size=(L, S)), 0.0)
        cap_up, cap_down = cap.copy(), cap.copy()
        degrade = present & (rng.random((L, S)) < 0.1)
        cap_down = np.where(degrade, cap_down * rng.uniform(0.25, 1.0, size=(L, S)), cap_down)
        pairs = [(a, b) for a in range(L) for b in range(L) if a != b]
        k = int(rng.integers(2, len(pairs) + 1))
        chosen = rng.choice(len(pairs), size=k, replace=False)
        users = []
        for idx in chosen:
            a, b = pairs[int(idx)]
            if np.any((cap_up[a] > 0) & (cap_down[b] > 0)):
                users.append((a, b, float(rng.uniform(0.1, 1.0))))
        if len(users) >= 2:
            return Instance(cap_up=cap_up, cap_down=cap_down, users=tuple(users), name="random")
