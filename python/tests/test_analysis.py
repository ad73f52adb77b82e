"""Tests of fabriclb.analysis: the CONGA bottleneck game (§6.1, App. A), the fluid examples of
§2.4, and Theorem 2 (§6.2, App. B). Run with ``PYTHONPATH=python pytest python/tests``."""

from __future__ import annotations

import math
import pathlib
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from fabriclb.analysis import fluid, game, imbalance
from fabriclb.analysis.cdf import FlowSizeDistribution, read_cdf
from fabriclb.analysis.experiments import run_experiment

REPO = pathlib.Path(__file__).resolve().parents[2]


def workload(name: str) -> FlowSizeDistribution:
    """Shipped CDF from <repo>/workloads, else the shared reference copy (tests only)."""
    for d in (REPO / "workloads", pathlib.Path("/work/shared/workloads")):
        if (d / f"{name}.cdf").is_file():
            return read_cdf(d / f"{name}.cdf", name=name)
    pytest.skip(f"workload {name} not available")


def inst2x2(up: list[list[float]], down: list[list[float]],
            users: list[tuple[int, int, float]]) -> game.Instance:
    return game.Instance(cap_up=np.array(up, dtype=float), cap_down=np.array(down, dtype=float),
                         users=tuple(users))


# --------------------------------------------------------------------------- the game: hand-solved

# (name, instance, a hand-built flow, is it Nash, its bottleneck, the optimal bottleneck)
HAND = [
    # one user, two symmetric paths: Nash = optimum = even split, B = 1/2
    ("symmetric", inst2x2([[1, 1], [1, 1]], [[1, 1], [1, 1]], [(0, 1, 1.0)]),
     [[0.5, 0.5]], True, Fraction(1, 2), Fraction(1, 2)),
    # the same, everything on one path: not Nash (moving lowers the user's bottleneck)
    ("symmetric-one-path", inst2x2([[1, 1], [1, 1]], [[1, 1], [1, 1]], [(0, 1, 1.0)]),
     [[1.0, 0.0]], False, Fraction(1), Fraction(1, 2)),
    # Fig. 2 shape: S1 -> L1 at half capacity; x0 = 2 x1 and x0 + x1 = 1 gives B = 2/3
    ("fig2-shape", inst2x2([[1, 1], [1, 1]], [[1, 1], [1, 0.5]], [(0, 1, 1.0)]),
     [[Fraction(2, 3), Fraction(1, 3)]], True, Fraction(2, 3), Fraction(2, 3)),
    # Fig. 3 shape: L0 only on S0; L0->L2 loads (S0, L2) fully, so L1->L2 must avoid S0: B = 1
    ("fig3-shape", game.Instance(cap_up=np.array([[1, 0], [1, 1], [1, 1]], dtype=float),
                                 cap_down=np.array([[1, 0], [1, 1], [1, 1]], dtype=float),
                                 users=((0, 2, 1.0), (1, 2, 1.0))),
     [[1, 0], [0, 1]], True, Fraction(1), Fraction(1)),
    ("fig3-shape-split", game.Instance(cap_up=np.array([[1, 0], [1, 1], [1, 1]], dtype=float),
                                       cap_down=np.array([[1, 0], [1, 1], [1, 1]], dtype=float),
                                       users=((0, 2, 1.0), (1, 2, 1.0))),
     [[1, 0], [Fraction(1, 2), Fraction(1, 2)]], False, Fraction(3, 2), Fraction(1)),
]


@pytest.mark.parametrize("name,inst,flow,is_nash,b,opt", HAND, ids=[h[0] for h in HAND])
def test_hand_solved_instances(name: str, inst: game.Instance, flow: list[list[float]],
                               is_nash: bool, b: Fraction, opt: Fraction) -> None:
    fx = game.exact_flow(flow)
    assert game.exact_network_bottleneck(inst, fx) == b
    assert game.exact_is_nash(inst, fx) is is_nash
    x = np.array([[float(v) for v in r] for r in fx])
    assert game.check_nash(inst, x, tol=1e-9).is_nash is is_nash
    res = game.optimal_bottleneck(inst)
    assert res.value == pytest.approx(float(opt), abs=1e-9)
    lower, upper = game.exact_optimum_bounds(inst, res)
    assert lower == opt == upper
    if is_nash:
        assert b / opt == game.exact_network_bottleneck(inst, fx) / lower  # this flow's ratio
        # one-user and forced instances have a unique Nash bottleneck: PoA = 1
        assert b == opt


# --------------------------------------------------------------------------- LP vs brute force


def small_random(rng: np.random.Generator) -> game.Instance:
    """2 leaves-or-3, 2-3 spines, 1-2 users: small enough for a grid over splits."""
    while True:
        L, S = int(rng.integers(2, 4)), int(rng.integers(2, 4))
        cap = np.where(rng.random((L, S)) < 0.85, rng.choice([0.5, 1.0, 2.0], size=(L, S)), 0.0)
        down = np.where(cap > 0, cap * rng.choice([0.5, 1.0], size=(L, S)), 0.0)
        pairs = [(a, b) for a in range(L) for b in range(L) if a != b]
        users = []
        for idx in rng.choice(len(pairs), size=min(2, len(pairs)), replace=False):
            a, b = pairs[int(idx)]
            if np.any((cap[a] > 0) & (down[b] > 0)):
                users.append((a, b, float(rng.choice([0.5, 1.0, 1.5]))))
        if users:
            return game.Instance(cap_up=cap, cap_down=down, users=tuple(users))


@pytest.mark.parametrize("seed", range(12))
def test_lp_matches_brute_force(seed: int) -> None:
    inst = small_random(np.random.default_rng(seed))
    steps = 24
    grid_best, _ = game.brute_force_optimum(inst, steps)
    lp = game.optimal_bottleneck(inst)
    # LP is a lower bound on any grid point; rounding the LP split to the grid moves each
    # user's path flows by <= demand/steps per path, so the grid is within that of the LP
    slack = sum(d for _, _, d in inst.users) * inst.n_spines / steps / min(
        inst.cap_up[inst.cap_up > 0].min(), inst.cap_down[inst.cap_down > 0].min())
    assert lp.value <= grid_best + 1e-9
    assert grid_best <= lp.value + slack
    assert game.network_bottleneck(inst, lp.flow) == pytest.approx(lp.value, abs=1e-9)
    np.testing.assert_allclose(lp.flow.sum(axis=1), inst.demands, atol=1e-9)


def test_lp_exact_on_grid_optimum() -> None:
    # optimum at split (3/4, 1/4): S1 path has a third of S0's capacity -> B = 3/4 exactly
    inst = inst2x2([[1, 1], [1, 1]], [[1, 1], [1, 1 / 3]], [(0, 1, 1.0)])
    grid_best, x = game.brute_force_optimum(inst, 8)
    lp = game.optimal_bottleneck(inst)
    assert grid_best == pytest.approx(0.75) and lp.value == pytest.approx(0.75)
    np.testing.assert_allclose(x[0], [0.75, 0.25])


# --------------------------------------------------------------------------- best responses


@pytest.mark.parametrize("seed", range(20))
def test_waterfill_equals_lp_best_response(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    inst = game.random_instance(rng)
    x = game.ecmp_flow(inst) * rng.uniform(0.2, 1.0, size=(inst.n_users, 1))
    x = x / x.sum(axis=1, keepdims=True) * inst.demands[:, None]
    for u in range(inst.n_users):
        t, row = game.best_response(inst, x, u)
        assert t == pytest.approx(game.best_response_value_lp(inst, x, u), rel=1e-7, abs=1e-9)
        assert row.sum() == pytest.approx(inst.demands[u])
        y = x.copy()
        y[u] = row
        assert game.user_bottlenecks(inst, y)[u] == pytest.approx(t, rel=1e-7, abs=1e-9)


# --------------------------------------------------------------------------- Fig. 17 and Remark 2


def test_fig17_poa_is_exactly_two() -> None:
    inst = game.fig17_instance()
    assert inst.n_leaves == 5 and inst.n_spines == 5 and inst.n_users == 10
    assert int((inst.cap_up > 0).sum()) == 20
    nash = game.fig17_nash_flow()
    xa = np.array([[float(v) for v in r] for r in nash])
    up, down = game.link_loads(inst, xa)
    assert int((up > 0).sum()) == 10 and int((down > 0).sum()) == 10  # half the links unused
    assert all(int((row > 0).sum()) == 1 for row in xa)  # one path per user
    assert game.check_nash(inst, xa, tol=1e-12, method="lp").is_nash
    assert game.exact_is_nash(inst, nash)
    b_nash = game.exact_network_bottleneck(inst, nash)
    opt = game.optimal_bottleneck(inst)
    assert opt.value == pytest.approx(0.5, abs=1e-9)
    lower, upper = game.exact_optimum_bounds(inst, opt, primal=game.fig17_optimal_flow())
    assert lower == upper == Fraction(1, 2)
    assert b_nash / lower == Fraction(2)


def test_fig17_optimum_uses_all_links_and_is_nash_too() -> None:
    inst = game.fig17_instance()
    xb = game.fig17_optimal_flow()
    assert game.exact_network_bottleneck(inst, xb) == Fraction(1, 2)
    x = np.array([[float(v) for v in r] for r in xb])
    up, down = game.link_loads(inst, x)
    np.testing.assert_allclose(up[inst.cap_up > 0], 0.5)
    np.testing.assert_allclose(down[inst.cap_down > 0], 0.5)
    assert game.exact_is_nash(inst, xb)


def test_remark2_refinement_gives_ratio_one_on_fig17() -> None:
    inst = game.fig17_instance()
    xa = np.array([[float(v) for v in r] for r in game.fig17_nash_flow()])
    assert game.remark2_violations(inst, xa)  # (a) uses 2-bottleneck paths when 1 exists
    plain, _ = game.conga_fluid_dynamics(inst, xa, refined=False, iterations=30)
    assert game.network_bottleneck(inst, plain) == pytest.approx(1.0)  # plain CONGA stays stuck
    refined, hist = game.conga_fluid_dynamics(inst, xa, refined=True, iterations=300)
    final = game.best_response_dynamics(inst, refined, tol=1e-12)
    b = game.network_bottleneck(inst, final.flow)
    assert b / 0.5 == pytest.approx(1.0, abs=1e-6)
    assert game.check_nash(inst, final.flow, tol=1e-9).is_nash
    assert not game.remark2_violations(inst, final.flow, tol=1e-7)
    assert not game.remark2_violations(
        inst, np.array([[float(v) for v in r] for r in game.fig17_optimal_flow()]))


# --------------------------------------------------------------------------- dynamics, random


def test_best_response_dynamics_never_exceed_two() -> None:
    rng = np.random.default_rng(7)
    ratios, unconverged = [], 0
    for i in range(250):
        inst = game.random_instance(rng)
        opt = game.optimal_bottleneck(inst).value
        if i % 2 == 0:
            x0 = game.ecmp_flow(inst)
        else:  # single-path starts reach bad equilibria more often
            x0 = np.zeros((inst.n_users, inst.n_spines))
            for u, row in enumerate(inst.path_mask()):
                x0[u, rng.choice(np.nonzero(row)[0])] = inst.demands[u]
        res = game.best_response_dynamics(inst, x0)
        unconverged += not res.converged
        b = game.network_bottleneck(inst, res.flow)
        # B never increases along best responses
        assert np.all(np.diff(res.bottleneck_history) <= 1e-9)
        if i % 25 == 0:
            assert game.check_nash(inst, res.flow, tol=1e-6).is_nash
        ratios.append(b / opt)
    ratios_a = np.array(ratios)
    assert unconverged == 0
    assert ratios_a.min() >= 1 - 1e-7
    assert ratios_a.max() <= 2 + 1e-7


def test_fig17_bad_equilibria_found_from_single_path_starts() -> None:
    # best-response dynamics from single-path starts land on Nash flows worse than optimal;
    # all of them within the PoA of 2
    inst = game.fig17_instance()
    rng = np.random.default_rng(3)
    ratios = []
    for _ in range(15):
        x0 = np.zeros((inst.n_users, inst.n_spines))
        for u, row in enumerate(inst.path_mask()):
            x0[u, rng.choice(np.nonzero(row)[0])] = 1.0
        res = game.best_response_dynamics(inst, x0)
        ratios.append(game.network_bottleneck(inst, res.flow) / 0.5)
    assert max(ratios) > 1.05
    assert max(ratios) <= 2 + 1e-7


# --------------------------------------------------------------------------- fluid Fig. 2 / 3


def test_fig2_fluid_throughputs() -> None:
    inst = fluid.fig2_instance()
    assert fluid.ecmp_outcome(inst).total_throughput == pytest.approx(90.0)
    assert fluid.local_outcome(inst).total_throughput == pytest.approx(80.0, abs=0.05)
    conga = fluid.conga_outcome(inst)
    assert conga.total_throughput == pytest.approx(100.0, abs=1e-6)
    np.testing.assert_allclose(conga.split(0), [2 / 3, 1 / 3], atol=1e-6)  # x/80 = (100-x)/40


def test_fig3_fluid_local_worse_than_ecmp_and_split_depends_on_matrix() -> None:
    a, b = fluid.fig3_instance("a"), fluid.fig3_instance("b")
    ca, cb = fluid.conga_outcome(a), fluid.conga_outcome(b)
    assert ca.total_throughput == pytest.approx(a.demands.sum())
    assert cb.total_throughput == pytest.approx(b.demands.sum())
    assert ca.split(0)[0] == pytest.approx(0.5, abs=1e-6)
    assert cb.split(0)[0] == pytest.approx(7.5 / 45, abs=1e-6)  # (30 + x)/40 = (45 - x)/40
    ecmp_b, local_b = fluid.ecmp_outcome(b), fluid.local_outcome(b)
    assert ecmp_b.total_throughput == pytest.approx(62.5)
    # hand solution: 40 d/(30 + d) = 45 - d  ->  d = (-25 + sqrt(6025)) / 2, total 40 + 45 - d
    d = (-25 + math.sqrt(6025)) / 2
    assert local_b.total_throughput == pytest.approx(85 - d, abs=0.05)
    assert local_b.total_throughput < ecmp_b.total_throughput
    sweep = fluid.static_weight_sweep(101)
    assert np.minimum(sweep.carried_a, sweep.carried_b).max() < 0.95


def test_tcp_throughput_max_min() -> None:
    inst = fluid.fig2_instance()
    thr = fluid.tcp_throughput(inst, np.array([[50.0, 50.0]]))
    np.testing.assert_allclose(thr, [[50.0, 40.0]])


# --------------------------------------------------------------------------- Theorem 2


def test_cdf_moments_exact() -> None:
    # uniform on [0, 2] plus an atom: E S = 0.5*0 + 0.5*1... built from points (0,0.5),(2,1)
    dist = FlowSizeDistribution("t", np.array([0.0, 2.0]), np.array([0.5, 1.0]))
    assert dist.mean == pytest.approx(0.5)          # 0.5 * 0 + 0.5 * 1
    assert dist.moment(2) == pytest.approx(0.5 * 4 / 3)
    rng = np.random.default_rng(0)
    assert dist.sample(rng, 200_000).mean() == pytest.approx(0.5, rel=0.01)
    ws = workload("web-search")
    assert ws.mean == pytest.approx(1.711e6, rel=1e-3)  # README: 1.711 MB
    assert workload("data-mining").mean == pytest.approx(7.47e6, rel=1e-3)
    assert workload("data-mining-ns3").mean == pytest.approx(12.66e6, rel=1e-3)
    assert workload("hadoop-percent").cdf[-1] == pytest.approx(1.0)


def test_chunked_second_moment() -> None:
    dist = FlowSizeDistribution("c", np.array([10.0, 10.0]), np.array([0.0, 1.0]))  # S = 10
    assert dist.mean_square_over_chunks(3.0) == pytest.approx(100 / 4)  # K = ceil(10/3) = 4
    ws = workload("web-search")
    rng = np.random.default_rng(1)
    s = ws.sample(rng, 400_000)
    k = np.maximum(1, np.ceil(s / 5e5))
    assert ws.mean_square_over_chunks(5e5) == pytest.approx(np.mean(s**2 / k), rel=0.03)


def test_mc_constant_sizes_two_links_matches_gaussian() -> None:
    # n = 2, S = 1: chi = |N1 - N2| / (m/2) with N_i ~ Poisson(m/2): E chi ~ 2 sqrt(2/(pi m))
    dist = FlowSizeDistribution("one", np.array([1.0, 1.0]), np.array([0.0, 1.0]))
    m = np.array([1e4])
    mc = imbalance.simulate_imbalance(dist, 2, m, 400, np.random.default_rng(2))
    assert mc.mean[0] == pytest.approx(2 * math.sqrt(2 / (math.pi * 1e4)), rel=0.08)


@pytest.mark.parametrize("name", ["web-search", "data-mining"])
def test_mc_mean_below_theorem2_bound_at_large_t(name: str) -> None:
    dist = workload(name)
    n = 4
    m = np.array([3e4, 1e5, 3e5])
    mc = imbalance.simulate_imbalance(dist, n, m, 40, np.random.default_rng(11))
    lead = imbalance.leading_bound(m, n, dist)
    corrected = imbalance.corrected_bound(m, n, dist)
    chern = imbalance.chernoff_bound(m, n, dist)
    # the O(1/t) term is explicit and shrinks relative to the leading term as t grows
    assert np.all(corrected >= lead) and np.all(np.diff((corrected - lead) * m) <= 1e-9 * m[1:])
    # the rigorous forms agree with the leading term at large t ...
    np.testing.assert_allclose(chern[-1], lead[-1], rtol=0.02)
    # ... and the Monte-Carlo mean stays below them (with 3 standard errors of slack)
    assert np.all(mc.mean <= np.minimum(corrected, chern) + 3 * mc.stderr)
    assert np.all(mc.mean <= lead)
    # the bound is not vacuous: for n = 4 a Gaussian limit gives ~0.6 of the bound
    assert np.all(mc.mean >= 0.35 * lead)
    # chi ~ 1/sqrt(t): ten times more flows -> about sqrt(10) less imbalance
    assert mc.mean[0] / mc.mean[2] == pytest.approx(math.sqrt(10), rel=0.3)


def test_flowlets_and_cv_effects() -> None:
    dm, ent = workload("data-mining"), workload("enterprise")
    m = np.array([1e4])
    rng = np.random.default_rng(5)
    flows = imbalance.simulate_imbalance(dm, 4, m, 30, rng)
    flowlets = imbalance.simulate_imbalance(dm, 4, m, 30, rng, flowlet_bytes=5e5)
    assert flowlets.mean[0] < flows.mean[0] / 5
    assert flowlets.mean[0] <= imbalance.leading_bound(m, 4, dm, 5e5)[0]
    # lambda_e falls with the CV: the bound orders workloads by 1 + CV^2
    ratio = imbalance.leading_bound(1e4, 4, ent) / imbalance.leading_bound(1e4, 4, dm)
    assert ratio == pytest.approx(math.sqrt((1 + ent.cv**2) / (1 + dm.cv**2)), rel=1e-9)


# --------------------------------------------------------------------------- lab interface


@pytest.mark.parametrize("name", ["conga-fig17", "conga-thm2", "conga-fluid"])
def test_run_experiment_quick(name: str, tmp_path: pathlib.Path) -> None:
    res = run_experiment(name, tmp_path, quick=True, seed=0)
    assert set(res) >= {"claim", "ours", "status", "table"}
    assert res["status"] == "match"
    assert isinstance(res["table"], pd.DataFrame) and len(res["table"]) > 0
    for f in ("table.csv", "plot.png", "report.md"):
        assert (tmp_path / f).stat().st_size > 0
    if name == "conga-fig17":
        t = pd.read_csv(tmp_path / "table.csv")
        assert {"instance", "nash_bottleneck", "optimal_bottleneck", "poa"} <= set(t.columns)
        row = t[t.instance == "fig17"].iloc[0]
        assert row.poa == 2.0 and row.nash_bottleneck == 1.0 and row.optimal_bottleneck == pytest.approx(0.5)


def test_run_experiment_deterministic(tmp_path: pathlib.Path) -> None:
    a = run_experiment("conga-thm2", tmp_path / "a", quick=True, seed=3)["table"]
    b = run_experiment("conga-thm2", tmp_path / "b", quick=True, seed=3)["table"]
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(ValueError):
        run_experiment("nope", tmp_path)
