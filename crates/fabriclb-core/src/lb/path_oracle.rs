//! The path oracle: the Expeditus authors' OPTIMAL baseline (SCHEMES.md §2.5). When a SYN
//! leaves its edge switch, the switch reads the out-meter (`clos::LoadMeters`, as
//! `expeditus-socc`) of every link of every shortest path to the destination's edge, in every
//! switch of the fabric (global knowledge), and takes the path whose most loaded link is least
//! loaded (ties at random). It keeps the choice as a flow entry for the connection's data
//! direction (the SYN follows it too); each packet leaving the edge on it carries the core
//! position as a path label to the aggregation switch (the authors use the IP fragment-offset
//! field: no bytes are added). ACKs go by ECMP.

use super::clos::{fwd_key, least, mark, will_enqueue, Clos, FlowPins, NONE16};
use super::expeditus_socc::ExpeditusSoccConfig;
use super::{ecmp_pick, ecmp_salts, hooks, Balancer, BuildCtx, LbView};
use crate::net::packet::{flags, Packet};
use crate::net::topology::Graph;
use crate::rng::{stream, Rng};

impl ExpeditusSoccConfig {
    pub fn build_oracle(&self, ctx: &BuildCtx) -> PathOracle {
        PathOracle {
            clos: Clos::new(ctx.g),
            meters: self.meters(ctx, false),
            pins: FlowPins::new(self.entry_lifetime.0, false),
            salts: ecmp_salts(ctx),
            rng: Rng::new(ctx.seed, stream::SCHEME),
            costs: vec![],
            paths: vec![],
            n: [0; 4],
        }
    }
}

pub struct PathOracle {
    clos: Clos,
    meters: super::clos::LoadMeters,
    /// At the source edge: the data direction's (edge uplink position | core position << 16).
    pins: FlowPins,
    salts: Vec<u64>,
    rng: Rng,
    costs: Vec<u32>,
    /// (edge uplink position, core position or NONE16), parallel to `costs`.
    paths: Vec<(u16, u16)>,
    /// Choices, next hops taken from an entry or label, next hops by ECMP, choices drawn at
    /// random among equally good paths.
    n: [u64; 4],
}

impl PathOracle {
    #[inline]
    fn load(&mut self, v: &mut LbView, l: u32) -> u32 {
        self.meters
            .out_level(l, v.now, v.ports[l as usize].rate_bps) as u32
    }

    /// The least-loaded path from edge `sw` toward `pkt`'s destination, among the shortest
    /// paths that start on one of `cands`.
    fn decide(
        &mut self,
        v: &mut LbView,
        sw: u32,
        pkt: &Packet,
        cands: &[u32],
    ) -> Option<(u16, u16)> {
        let routes = v.routes;
        let tix = routes.tor_index[v.g.host_tor[pkt.dst as usize] as usize];
        // The single next hop of a switch below the choices (down toward the destination).
        let down = |n: u32| routes.group(n, tix).first().copied();
        let inter = self.clos.inter_pod(v.g, pkt.src, pkt.dst);
        self.costs.clear();
        self.paths.clear();
        for a in 0..self.clos.ups(sw).len() {
            let l1 = self.clos.ups(sw)[a];
            if !cands.contains(&l1) {
                continue;
            }
            let agg = v.g.links[l1 as usize].to;
            let m1 = self.load(v, l1);
            if !inter {
                if let Some(l2) = down(agg) {
                    let m = m1.max(self.load(v, l2));
                    self.costs.push(m);
                    self.paths.push((a as u16, NONE16));
                }
                continue;
            }
            let up2 = routes.group(agg, tix);
            for j in 0..self.clos.ups(agg).len() {
                let l2 = self.clos.ups(agg)[j];
                if !up2.contains(&l2) {
                    continue;
                }
                let Some(l3) = down(v.g.links[l2 as usize].to) else {
                    continue;
                };
                let Some(l4) = down(v.g.links[l3 as usize].to) else {
                    continue;
                };
                let m = [l2, l3, l4].iter().fold(m1, |m, &l| m.max(self.load(v, l)));
                self.costs.push(m);
                self.paths.push((a as u16, j as u16));
            }
        }
        let (i, tie) = least(&self.costs, &mut self.rng)?;
        self.n[3] += tie as u64;
        Some(self.paths[i])
    }
}

impl Balancer for PathOracle {
    fn choose(&mut self, v: &mut LbView, sw: u32, pkt: &mut Packet, cands: &[u32]) -> u32 {
        match self.clos.tier(sw) {
            // Only a packet's source edge has a choice at tier 1.
            1 => {
                let k = fwd_key(sw, pkt);
                if pkt.is(flags::SYN) && !pkt.is(flags::ACK) {
                    if let Some((a, j)) = self.decide(v, sw, pkt, cands) {
                        self.pins.install(k, a as u32 | (j as u32) << 16, v.now);
                        self.n[0] += 1;
                    }
                }
                if let Some(p) = self.pins.lookup(k, v.now) {
                    let (a, j) = ((p & 0xffff) as usize, (p >> 16) as u16);
                    if let Some(&l) = self.clos.ups(sw).get(a).filter(|l| cands.contains(l)) {
                        if j != NONE16 {
                            pkt.overlay.aux[1] = j as u32;
                            pkt.overlay.aux_flags |= mark::LABEL;
                        }
                        self.n[1] += 1;
                        return l;
                    }
                }
            }
            // Going up from the source pod: the label names the core.
            2 if pkt.overlay.aux_flags & mark::LABEL != 0 => {
                let j = pkt.overlay.aux[1] as usize;
                if let Some(&l) = self.clos.ups(sw).get(j).filter(|l| cands.contains(l)) {
                    self.n[1] += 1;
                    return l;
                }
            }
            _ => {}
        }
        self.n[2] += 1;
        ecmp_pick(pkt, self.salts[sw as usize], cands)
    }

    fn switch_hooks(&self, g: &Graph, l: u32) -> u8 {
        // Departures toward a switch only (the hook's first test); no arrival hook.
        if self.clos.tier(g.links[l as usize].to) > 0 {
            hooks::DEPARTURE
        } else {
            0
        }
    }

    fn on_departure(&mut self, v: &mut LbView, _sw: u32, out_link: u32, pkt: &mut Packet) {
        if self.clos.tier(v.g.links[out_link as usize].to) > 0
            && will_enqueue(v, out_link, pkt.size)
        {
            self.meters.add_out(out_link, v.now, pkt.size);
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("choices", self.n[0]),
            ("pinned_hops", self.n[1]),
            ("ecmp_hops", self.n[2]),
            ("tied_choices", self.n[3]),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::testutil::Fx;
    use crate::net::packet::frame_bytes;
    use crate::units::PS_PER_MS;

    fn oracle(f: &Fx, seed: u64) -> PathOracle {
        ExpeditusSoccConfig::default().build_oracle(&f.ctx(seed))
    }

    /// Bytes that read `lvl` and a half levels on link `l` with the default meters
    /// (C·τ/8/8, τ = 20 µs / 0.3: 10,417 B per level at 10 Gbps).
    pub(crate) fn level_bytes(f: &Fx, l: u32, lvl: u32) -> u32 {
        let per = f.ports[l as usize].rate_bps as f64 / 8.0 * (20e-6 / 0.3) / 8.0;
        (per * (lvl as f64 + 0.5)) as u32
    }

    #[test]
    fn the_oracle_takes_the_path_with_the_least_loaded_bottleneck() {
        // H0 (pod 0) -> H4 (pod 1) on the k = 4 fat-tree: 4 paths (A0_a, core j of group a).
        // (loaded links and their levels) -> the paths the connection's data take.
        type Case = (&'static [(&'static str, u32)], &'static [&'static str]);
        const ALL: &[&str] = &["A0_0-C0", "A0_0-C1", "A0_1-C2", "A0_1-C3"];
        let cases: &[Case] = &[
            (&[], ALL),
            (&[("E0_0->A0_0", 2)], &["A0_1-C2", "A0_1-C3"]),
            // A remote link decides: C2's downlink to pod 1 and A1_1's to the edge.
            (&[("E0_0->A0_0", 2), ("C2->A1_1", 3)], &["A0_1-C3"]),
            (
                &[("E0_0->A0_0", 2), ("A1_1->E1_0", 3)],
                &["A0_0-C0", "A0_0-C1"],
            ),
            // Bottleneck, not sum: 2 + 2 + 2 on one path beats a single 3 on another.
            (
                &[
                    ("E0_0->A0_1", 2),
                    ("A0_1->C2", 2),
                    ("C2->A1_1", 2),
                    ("A0_0->C0", 3),
                    ("A0_0->C1", 3),
                    ("A0_1->C3", 3),
                ],
                &["A0_1-C2"],
            ),
        ];
        for &(loads, want) in cases {
            let mut seen: Vec<String> = vec![];
            for seed in 0..60 {
                let mut f = Fx::fat_tree4();
                let mut o = oracle(&f, seed);
                for &(l, lvl) in loads {
                    o.meters
                        .add_out(f.link(l), 0, level_bytes(&f, f.link(l), lvl));
                }
                let mut syn = Fx::tcp(0, 4, flags::SYN);
                let sp = f.walk(&mut o, 0, &mut syn);
                let mut d = Fx::tcp(0, 4, flags::ACK);
                let dp = f.walk(&mut o, 0, &mut d);
                assert_eq!(sp, dp, "the SYN took the chosen path too");
                let p = format!("{}-{}", &dp[1][..4], &dp[1][6..8]);
                if !seen.contains(&p) {
                    seen.push(p);
                }
                assert_eq!(d.size, frame_bytes(0), "the label adds no bytes");
            }
            seen.sort();
            assert_eq!(seen, want, "{loads:?}");
        }
    }

    #[test]
    fn within_a_pod_and_on_a_leaf_spine_only_the_uplink_is_chosen() {
        // (fabric, src, dst, loaded links) -> first hops of the data.
        let cases: &[(fn() -> Fx, u32, u32, &[(&str, u32)], &[&str])] = &[
            (Fx::fat_tree4, 0, 2, &[("A0_0->E0_1", 1)], &["E0_0->A0_1#0"]),
            (
                || Fx::leaf_spine(2, 3, 1),
                0,
                2,
                &[("S1->L1", 1), ("L0->S2", 4)],
                &["L0->S0#0"],
            ),
            (
                || Fx::leaf_spine(2, 3, 1),
                0,
                2,
                &[("S0->L1", 1)],
                &["L0->S1#0", "L0->S2#0"],
            ),
        ];
        for &(mk, src, dst, loads, want) in cases {
            let mut seen: Vec<String> = vec![];
            for seed in 0..40 {
                let mut f = mk();
                let mut o = oracle(&f, seed);
                for &(l, lvl) in loads {
                    o.meters
                        .add_out(f.link(l), 0, level_bytes(&f, f.link(l), lvl));
                }
                f.walk(&mut o, 0, &mut Fx::tcp(src, dst, flags::SYN));
                let mut d = Fx::tcp(src, dst, flags::ACK);
                let first = f.walk(&mut o, 0, &mut d)[0].clone();
                assert_eq!(d.overlay.aux_flags & mark::LABEL, 0);
                if !seen.contains(&first) {
                    seen.push(first);
                }
            }
            seen.sort();
            assert_eq!(seen, want, "{loads:?}");
        }
    }

    #[test]
    fn the_choice_is_pinned_until_the_entry_expires() {
        let mut f = Fx::fat_tree4();
        let mut o = oracle(&f, 1);
        o.meters
            .add_out(f.link("E0_0->A0_0"), 0, level_bytes(&f, 0, 5));
        f.walk(&mut o, 0, &mut Fx::tcp(0, 4, flags::SYN));
        // Later loads do not move the connection while its entry lives...
        o.meters
            .add_out(f.link("E0_0->A0_1"), 0, level_bytes(&f, 0, 50));
        let t = 50 * PS_PER_MS;
        assert_eq!(
            f.walk(&mut o, t, &mut Fx::tcp(0, 4, flags::ACK))[0],
            "E0_0->A0_1#0"
        );
        // ... and after 100 ms without a packet the data go by ECMP, without a label.
        let mut d = Fx::tcp(0, 4, flags::ACK);
        let sw = f.node("E0_0");
        let cands = f.cands(sw, 4);
        let want = ecmp_pick(&d, o.salts[sw as usize], &cands);
        let t = t + 100 * PS_PER_MS + 1;
        assert_eq!(o.choose(&mut f.view(t), sw, &mut d, &cands), want);
        assert_eq!(d.overlay.aux_flags & mark::LABEL, 0);
        assert_eq!((o.n[0], o.n[2]), (1, 1));
    }
}
