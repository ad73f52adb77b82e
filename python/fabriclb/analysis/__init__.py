"""Analytic side of fabriclb (CONGA §6 and §2.4), independent of the simulator core.

- :mod:`.game` — the bottleneck routing game on a leaf-spine: optimal bottleneck (LP), Nash
  check (per-user best-response LPs), best-response dynamics, Price of Anarchy, Fig. 17, Remark 2.
- :mod:`.fluid` — fluid fixed points of ECMP, local and CONGA on the Fig. 2 / Fig. 3 examples.
- :mod:`.imbalance` — Theorem 2: traffic imbalance of random placement, bound and Monte Carlo.
- :mod:`.cdf` — a small flow-size CDF reader with exact moments.
- :mod:`.experiments` — ``run_experiment(name, out_dir, quick, seed)`` for the lab
  (``conga-fig17``, ``conga-thm2``, ``conga-fluid``).
"""

from __future__ import annotations

from .cdf import FlowSizeDistribution, load_workload, read_cdf
from .experiments import EXPERIMENTS, run_experiment
from .game import (
    Instance,
    best_response_dynamics,
    check_nash,
    fig17_instance,
    fig17_nash_flow,
    fig17_optimal_flow,
    network_bottleneck,
    optimal_bottleneck,
)

__all__ = [
    "EXPERIMENTS",
    "FlowSizeDistribution",
    "Instance",
    "best_response_dynamics",
    "check_nash",
    "fig17_instance",
    "fig17_nash_flow",
    "fig17_optimal_flow",
    "load_workload",
    "network_bottleneck",
    "optimal_bottleneck",
    "read_cdf",
    "run_experiment",
]
