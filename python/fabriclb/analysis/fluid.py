"""Fluid model of the CONGA §2.4 asymmetry examples (Fig. 2 and Fig. 3) and of what ECMP, a
local congestion-aware scheme and CONGA converge to on them.

Fluid model. A user (source leaf -> destination leaf) offers ``demand`` Gbps made of many small
TCP flows, each limited by its access link; a scheme decides the *offered* split of the user's
flows over spines. TCP then shares every link max-min fairly per flow: aggregates grow in
proportion to their offered rate until a link they cross saturates (progressive filling), so a
path's throughput is its offered rate scaled down by its bottleneck. The schemes:

- ECMP: flows hashed equally over the user's spines, whatever the load (§2.4).
- Local (Flare / LocalFlow / local CONGA): moves flows until the utilisation, measured as
  throughput, of the source leaf's own uplinks is equal on the paths it uses — downstream
  congestion is invisible to it, so TCP-throttled paths look idle (§2.4).
- CONGA: moves flows until every used path has the smallest path metric (max utilisation of
  the path's links, §3) — the Nash flow of the bottleneck game of §6.1.
The local and CONGA fixed points are found with damped simultaneous dynamics on the offered
split; the fluid optimum is the min-max LP of :mod:`fabriclb.analysis.game` (and, when it is
<= 1, all demand is carried).

Scenarios (reconstructions documented in docs/ANALYSIS.md): Fig. 2 as described in the text;
Fig. 3 with three leaves, two spines, L0 attached to S0 only, and two L0->L2 demands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .game import Instance, best_response_dynamics, ecmp_flow, network_bottleneck, optimal_bottleneck

__all__ = [
    "tcp_throughput",
    "FluidOutcome",
    "ecmp_outcome",
    "local_outcome",
    "conga_outcome",
    "optimal_outcome",
    "fixed_split_outcome",
    "fig2_instance",
    "fig3_instance",
    "fluid_table",
    "static_weight_sweep",
]

FloatArray = NDArray[np.float64]


def tcp_throughput(inst: Instance, offered: FloatArray) -> FloatArray:
    """Per (user, spine) throughput of the offered split under per-flow max-min fairness.

    Every unit of offered rate is the same kind of access-limited flow, so on a saturated link
    the aggregates get throughput in proportion to their offered rate: all aggregates scale by
    a common factor that rises until a link saturates; those on it freeze (progressive filling).
    """
    U, S = offered.shape
    src = np.array([s for s, _, _ in inst.users], dtype=np.intp)
    dst = np.array([d for _, d, _ in inst.users], dtype=np.intp)
    scale = np.zeros((U, S))
    active = offered > 0
    frozen_scale = np.zeros((U, S))
    while np.any(active):
        fixed = np.where(active, 0.0, offered * frozen_scale)
        act = np.where(active, offered, 0.0)
        up_fixed = np.zeros_like(inst.cap_up)
        dn_fixed = np.zeros_like(inst.cap_down)
        up_act = np.zeros_like(inst.cap_up)
        dn_act = np.zeros_like(inst.cap_down)
        np.add.at(up_fixed, src, fixed)
        np.add.at(dn_fixed, dst, fixed)
        np.add.at(up_act, src, act)
        np.add.at(dn_act, dst, act)
        with np.errstate(divide="ignore", invalid="ignore"):
            su = np.where(up_act > 0, (inst.cap_up - up_fixed) / up_act, np.inf)
            sd = np.where(dn_act > 0, (inst.cap_down - dn_fixed) / dn_act, np.inf)
        level = min(1.0, float(su.min()), float(sd.min()))
        level = max(level, 0.0)
        if level >= 1.0:
            frozen_scale = np.where(active, 1.0, frozen_scale)
            break
        tight_up = su <= level * (1 + 1e-12)
        tight_dn = sd <= level * (1 + 1e-12)
        hit = active & (tight_up[src, :] | tight_dn[dst, :])
        frozen_scale = np.where(hit, level, frozen_scale)
        active &= ~hit
    scale = frozen_scale
    return offered * scale


def _uplink_util(inst: Instance, thr: FloatArray) -> FloatArray:
    """Utilisation (by throughput) of each user's source-leaf uplinks, (users, spines)."""
    src = np.array([s for s, _, _ in inst.users], dtype=np.intp)
    up = np.zeros_like(inst.cap_up)
    np.add.at(up, src, thr)
    with np.errstate(divide="ignore", invalid="ignore"):
        ru = np.where(inst.cap_up > 0, up / np.where(inst.cap_up > 0, inst.cap_up, 1.0), 0.0)
    return ru[src, :]


def _path_util(inst: Instance, thr: FloatArray) -> FloatArray:
    """CONGA path metric by throughput: max(uplink, downlink) utilisation, (users, spines)."""
    dst = np.array([d for _, d, _ in inst.users], dtype=np.intp)
    down = np.zeros_like(inst.cap_down)
    np.add.at(down, dst, thr)
    with np.errstate(divide="ignore", invalid="ignore"):
        rd = np.where(inst.cap_down > 0, down / np.where(inst.cap_down > 0, inst.cap_down, 1.0), 0.0)
    return np.maximum(_uplink_util(inst, thr), rd[dst, :])


def _balance(
    inst: Instance, metric: Callable[[Instance, FloatArray], FloatArray],
    iterations: int = 6000, step: float = 0.5,
) -> FloatArray:
    """Damped simultaneous dynamics: each user shifts offered rate from its highest-metric path
    to its lowest, in proportion to the metric gap, until used paths have equal metrics."""
    x = ecmp_flow(inst)
    mask = inst.path_mask()
    dem = inst.demands
    for k in range(iterations):
        m = np.where(mask, metric(inst, tcp_throughput(inst, x)), np.nan)
        eta = step / (1.0 + k / 300.0)
        for u in range(inst.n_users):
            ps = np.nonzero(mask[u])[0]
            if ps.size < 2 or dem[u] <= 0:
                continue
            used = ps[x[u, ps] > 1e-12 * dem[u]]
            hi = used[np.argmax(m[u, used])]
            lo = ps[np.argmin(m[u, ps])]
            gap = m[u, hi] - m[u, lo]
            if gap <= 0:
                continue
            d = min(x[u, hi], eta * gap * dem[u])
            x[u, hi] -= d
            x[u, lo] += d
    return x


@dataclass(frozen=True)
class FluidOutcome:
    scheme: str
    offered: FloatArray
    throughput: FloatArray

    @property
    def total_throughput(self) -> float:
        return float(self.throughput.sum())

    def split(self, u: int) -> FloatArray:
        """Fraction of user u's offered rate on each spine."""
        tot = self.offered[u].sum()
        return self.offered[u] / tot if tot > 0 else self.offered[u]


def ecmp_outcome(inst: Instance) -> FluidOutcome:
    x = ecmp_flow(inst)
    return FluidOutcome("ECMP", x, tcp_throughput(inst, x))


def local_outcome(inst: Instance) -> FluidOutcome:
    x = _balance(inst, _uplink_util)
    return FluidOutcome("Local", x, tcp_throughput(inst, x))


def conga_outcome(inst: Instance) -> FluidOutcome:
    """CONGA's fluid fixed point: balance the throughput-based path metric, then finish with
    exact best-response dynamics of the bottleneck game (the §6.1 Nash flow) when that flow fits
    in the capacities (B <= 1, so offered = carried and the metrics agree)."""
    x = _balance(inst, _path_util, iterations=1500)
    if network_bottleneck(inst, x) <= 1.0 + 1e-9:
        x = best_response_dynamics(inst, x, tol=1e-12).flow
    return FluidOutcome("CONGA", x, tcp_throughput(inst, x))


def optimal_outcome(inst: Instance) -> FluidOutcome:
    x = optimal_bottleneck(inst).flow
    return FluidOutcome("Optimal (min-max LP)", x, tcp_throughput(inst, x))


def fixed_split_outcome(inst: Instance, fractions: FloatArray, name: str) -> FluidOutcome:
    """A static-weight (WCMP-like) split: fractions[u, s] of user u's flows go via spine s."""
    x = fractions * inst.demands[:, None]
    return FluidOutcome(name, x, tcp_throughput(inst, x))


# --------------------------------------------------------------------------- scenarios


def fig2_instance() -> Instance:
    """CONGA Fig. 2: L0, L1; S0, S1; two 40G links per leaf-spine pair (80 Gbps aggregates),
    one (S1, L1) link down (40 Gbps); 100 Gbps of TCP from L0 to L1."""
    cap = np.full((2, 2), 80.0)
    cap_down = cap.copy()
    cap_down[1, 1] = 40.0  # spine S1 -> leaf L1 lost one of its two 40G links
    return Instance(cap_up=cap, cap_down=cap_down, users=((0, 1, 100.0),), name="fig2",
                    spine_names=("S0", "S1"))


#: L0->L2 demand of Fig. 3 cases (a) and (b), Gbps (our reconstruction).
FIG3_L0_DEMAND: dict[str, float] = {"a": 0.0, "b": 30.0}
#: L1->L2 demand of Fig. 3 cases (a) and (b), Gbps (our reconstruction).
FIG3_L1_DEMAND: dict[str, float] = {"a": 70.0, "b": 45.0}


def fig3_instance(case: str) -> Instance:
    """CONGA Fig. 3 (reconstructed): leaves L0, L1, L2; spines S0, S1; 40G links; L0 has no link
    to S1 (the asymmetry elsewhere), so L0->L2 must cross (S0, L2) and squeezes L1->L2's upper
    path. Users: L0->L2 and L1->L2 with the case's demands."""
    if case not in FIG3_L0_DEMAND:
        raise ValueError(f"Fig. 3 case must be 'a' or 'b', got {case!r}")
    cap = np.full((3, 2), 40.0)
    cap[0, 1] = 0.0  # L0 - S1 link absent
    users: list[tuple[int, int, float]] = [(1, 2, FIG3_L1_DEMAND[case])]
    if FIG3_L0_DEMAND[case] > 0:
        users.append((0, 2, FIG3_L0_DEMAND[case]))
    return Instance(cap_up=cap.copy(), cap_down=cap.copy(), users=tuple(users),
                    name=f"fig3{case}", spine_names=("S0", "S1"))


def _describe_split(inst: Instance, out: FluidOutcome) -> str:
    parts = []
    for u, (src, dst, _) in enumerate(inst.users):
        fr = out.split(u)
        ps = inst.paths(src, dst)
        parts.append(f"L{src}->L{dst}: " + " / ".join(f"S{s} {fr[s]:.3f}" for s in ps))
    return "; ".join(parts)


def static_weight_sweep(points: int = 201) -> pd.DataFrame:
    """Fig. 3: carried fraction of demand in (a) and (b) for every static L1->L2 weight w (share
    via S0), to show that no single weight serves both cases."""
    rows = []
    for w in np.linspace(0.0, 1.0, points):
        row: dict[str, float] = {"w_S0": float(w)}
        for case in ("a", "b"):
            inst = fig3_instance(case)
            fr = np.zeros((inst.n_users, 2))
            for u, (src, dst, _) in enumerate(inst.users):
                fr[u] = [w, 1 - w] if src == 1 else [1.0, 0.0]
            out = fixed_split_outcome(inst, fr, "static")
            row[f"carried_{case}"] = out.total_throughput / float(inst.demands.sum())
        rows.append(row)
    return pd.DataFrame(rows)


def fluid_table() -> pd.DataFrame:
    """One row per (scenario, scheme): demand, throughput, max offered utilisation, split."""
    rows = []
    scenarios = [("fig2", fig2_instance()), ("fig3a", fig3_instance("a")), ("fig3b", fig3_instance("b"))]
    for scen, inst in scenarios:
        opt = optimal_bottleneck(inst)
        outs = [ecmp_outcome(inst), local_outcome(inst), conga_outcome(inst), optimal_outcome(inst)]
        for out in outs:
            rows.append({
                "scenario": scen,
                "scheme": out.scheme,
                "demand_gbps": float(inst.demands.sum()),
                "throughput_gbps": out.total_throughput,
                "max_offered_util": network_bottleneck(inst, out.offered),
                "optimal_max_util": opt.value,
                "split": _describe_split(inst, out),
                "l1_to_l2_via_S0": float(out.split(0)[0]) if scen.startswith("fig3") else np.nan,
            })
    return pd.DataFrame(rows)
