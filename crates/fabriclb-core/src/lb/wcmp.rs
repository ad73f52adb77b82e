//! WCMP (Zhou et al., EuroSys'14; SCHEMES.md §12.5): ECMP with weights. At every switch with
//! a choice, each next hop toward a destination ToR gets a weight in proportion to the
//! capacity available to that ToR through it, and flows are hashed (5-tuple, salted per switch
//! as ECMP) into the weighted group: all packets of a flow follow one path.
//!
//! Capacity (computed from the ToR outward, in order of hop distance, over the current
//! shortest-path groups and the links' current rates): C(ToR) = ∞; at switch u, the links of
//! its group that lead to the same next switch v carry together min(their summed rate, C(v)),
//! shared among them in proportion to their rates; C(u) = the sum over its next switches. So a
//! leaf whose two uplinks to S1 face a single S1 → ToR link weighs each of them at half that
//! link. Each switch sees the capacity behind it as if it were alone (the paper's per-switch
//! weights, computed "from the leaves up").
//!
//! The weights are recomputed whenever the routes are ([`Balancer::on_routes`]: at the start,
//! and after the detection delay of every link change, `degrade` included). They are exact
//! proportions, not the paper's small integers sized for a switch's group table.

use super::{ecmp_salt, flow_hash, Balancer, BuildCtx, LbView};
use crate::net::packet::Packet;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WcmpConfig {}

impl WcmpConfig {
    pub fn build(&self, ctx: &BuildCtx) -> Wcmp {
        let g = ctx.g;
        // ToRs numbered in node order, as `Routes` numbers them.
        let mut tors = g.host_tor.clone();
        tors.sort_unstable();
        tors.dedup();
        let host_tor = g
            .host_tor
            .iter()
            .map(|t| tors.binary_search(t).unwrap() as u32)
            .collect();
        Wcmp {
            salts: (0..g.nodes.len() as u32)
                .map(|s| ecmp_salt(s, ctx.ecmp_salt))
                .collect(),
            host_tor,
            n_tors: tors.len(),
            groups: Vec::new(),
            cum: Vec::new(),
        }
    }
}

pub struct Wcmp {
    salts: Vec<u64>,
    /// Host -> index of its ToR.
    host_tor: Vec<u32>,
    n_tors: usize,
    /// (offset, len) into `cum` for [switch * n_tors + tor]; empty until the first routes.
    groups: Vec<(u32, u32)>,
    /// Per group member, in the routes' member order: the upper end of its share of the 32-bit
    /// hash range (cumulative weights scaled to 2^32; the last is 2^32).
    cum: Vec<u64>,
}

impl Wcmp {
    #[inline]
    fn pick(&self, sw: u32, pkt: &Packet, cands: &[u32]) -> u32 {
        let h = flow_hash(pkt, self.salts[sw as usize]) >> 32;
        let t = self.host_tor[pkt.dst as usize] as usize;
        if let Some(&(o, n)) = self.groups.get(sw as usize * self.n_tors + t) {
            if n as usize == cands.len() {
                let cum = &self.cum[o as usize..(o + n) as usize];
                return cands[cum.iter().position(|&c| h < c).unwrap_or(cands.len() - 1)];
            }
        }
        // Not reached: the weights follow every routing change. Plain ECMP as a fallback.
        cands[((h * cands.len() as u64) >> 32) as usize]
    }

    /// The weight of each member of every group, from the routes and the ports' rates.
    fn compute(&mut self, v: &LbView) {
        let (g, routes) = (v.g, v.routes);
        let n = g.nodes.len();
        self.groups = vec![(0, 0); n * self.n_tors];
        self.cum.clear();
        let mut cap = vec![0u64; n];
        let mut order: Vec<u32> = Vec::new();
        let mut w: Vec<u64> = Vec::new();
        for t in 0..self.n_tors as u32 {
            order.clear();
            for u in g.n_hosts..n as u32 {
                match routes.distance(u, t) {
                    0 => cap[u as usize] = u64::MAX,
                    u32::MAX => {}
                    _ => order.push(u),
                }
            }
            order.sort_by_key(|&u| routes.distance(u, t));
            for &u in &order {
                let members = routes.group(u, t);
                w.clear();
                for &l in members {
                    let to = g.links[l as usize].to;
                    let rate = v.ports[l as usize].rate_bps as u128;
                    let to_next: u128 = members
                        .iter()
                        .filter(|&&m| g.links[m as usize].to == to)
                        .map(|&m| v.ports[m as usize].rate_bps as u128)
                        .sum();
                    let behind = to_next.min(cap[to as usize] as u128);
                    w.push((rate * behind / to_next.max(1)) as u64);
                }
                let total: u128 = w.iter().map(|&x| x as u128).sum();
                cap[u as usize] = total.min(u64::MAX as u128 - 1) as u64;
                if members.len() >= 2 && total > 0 {
                    let o = self.cum.len() as u32;
                    let mut acc = 0u128;
                    for &x in &w {
                        acc += x as u128;
                        self.cum.push((acc << 32).div_ceil(total) as u64);
                    }
                    self.groups[u as usize * self.n_tors + t as usize] = (o, members.len() as u32);
                }
            }
        }
    }
}

impl Balancer for Wcmp {
    #[inline]
    fn choose(&mut self, _v: &mut LbView, sw: u32, pkt: &mut Packet, cands: &[u32]) -> u32 {
        self.pick(sw, pkt, cands)
    }
    #[inline]
    fn predict(&self, sw: u32, pkt: &Packet, cands: &[u32]) -> Option<u32> {
        Some(self.pick(sw, pkt, cands))
    }
    fn on_routes(&mut self, v: &mut LbView) {
        self.compute(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::testutil::Fx;
    use crate::lb::SchemeConfig;

    fn wcmp(f: &mut Fx) -> Wcmp {
        let mut w = WcmpConfig {}.build(&f.ctx(1));
        w.on_routes(&mut f.view(0));
        w
    }

    /// The share of the hash range each candidate of `sw` toward L1 gets.
    fn shares(w: &Wcmp, f: &Fx, sw: &str) -> Vec<f64> {
        let sw = f.node(sw);
        let t = w.host_tor[2] as usize;
        let (o, n) = w.groups[sw as usize * w.n_tors + t];
        assert_eq!(n as usize, f.cands(sw, 2).len());
        let cum = &w.cum[o as usize..(o + n) as usize];
        assert_eq!(*cum.last().unwrap(), 1 << 32);
        let mut prev = 0;
        cum.iter()
            .map(|&c| {
                let s = (c - prev) as f64 / (1u64 << 32) as f64;
                prev = c;
                (s * 1e6).round() / 1e6
            })
            .collect()
    }

    #[test]
    fn weights_follow_the_capacity_behind_each_next_hop() {
        // 2 leaves x 2 spines x 2 links per pair at 40 G. (links down, links degraded to
        // 10 G, L0's shares over S0#0, S0#1, S1#0, S1#1, S1's shares toward L1)
        type Case = (
            &'static [&'static str],
            &'static [&'static str],
            [f64; 4],
            &'static [f64],
        );
        let cases: &[Case] = &[
            (&[], &[], [0.25; 4], &[0.5, 0.5]),
            // One S1-L1 link down: 80 G behind S0, 40 G behind S1 (2:1), S1 has one link left.
            (&["S1-L1#1"], &[], [1. / 3., 1. / 3., 1. / 6., 1. / 6.], &[]),
            // An uplink down: the other S1 uplink carries S1's whole share.
            (
                &["L0-S1#0"],
                &[],
                [1. / 3., 1. / 3., 0., 1. / 3.],
                &[0.5, 0.5],
            ),
            // A degraded S1-L1 link: 40 + 10 G behind S1, shared by S1 by rate (4:1).
            (
                &[],
                &["S1-L1#1"],
                [40. / 130., 40. / 130., 25. / 130., 25. / 130.],
                &[0.8, 0.2],
            ),
            // A degraded uplink limits only itself: 40 + 10 G toward S1 (80 G behind it).
            (
                &[],
                &["L0-S1#0"],
                [40. / 130., 40. / 130., 10. / 130., 40. / 130.],
                &[0.5, 0.5],
            ),
        ];
        for &(down, slow, want_l0, want_s1) in cases {
            let mut f = Fx::new();
            f.fail(down);
            for s in slow {
                for l in f.g.resolve_link(s, "test").unwrap() {
                    f.ports[l as usize].rate_bps = 10_000_000_000;
                }
            }
            let w = wcmp(&mut f);
            // A link that is down is not a candidate: leave its zero share out.
            let want: Vec<f64> = if down == ["L0-S1#0"] {
                vec![want_l0[0], want_l0[1], want_l0[3]]
            } else {
                want_l0.to_vec()
            };
            let got = shares(&w, &f, "L0");
            for (g, x) in got.iter().zip(&want) {
                assert!((g - x).abs() < 1e-6, "down {down:?} slow {slow:?}: {got:?}");
            }
            if !want_s1.is_empty() {
                assert_eq!(shares(&w, &f, "S1"), want_s1, "down {down:?} slow {slow:?}");
            } else {
                assert_eq!(f.cands(f.node("S1"), 2).len(), 1);
            }
        }
    }

    #[test]
    fn weights_are_recomputed_with_the_routes() {
        let mut f = Fx::new();
        let mut w = wcmp(&mut f);
        assert_eq!(shares(&w, &f, "L0"), vec![0.25; 4]);
        f.fail(&["S1-L1#1"]);
        w.on_routes(&mut f.view(0));
        let s = shares(&w, &f, "L0");
        assert!(
            (s[0] - 1. / 3.).abs() < 1e-6 && (s[3] - 1. / 6.).abs() < 1e-6,
            "{s:?}"
        );
    }

    #[test]
    fn flows_hash_in_proportion_to_the_weights() {
        // 3:3:1:1 (one S1-L1 link down) over 8000 flows; every flow sticks to its port.
        let mut f = Fx::new();
        f.fail(&["S1-L1#1"]);
        let mut w = wcmp(&mut f);
        let l0 = f.node("L0");
        let cands = f.cands(l0, 2);
        let mut n = [0u32; 4];
        for sport in 0..8000u16 {
            let mut p = Fx::pkt(sport);
            let out = w.choose(&mut f.view(0), l0, &mut p, &cands);
            assert_eq!(w.predict(l0, &p, &cands), Some(out));
            assert_eq!(w.choose(&mut f.view(5), l0, &mut p, &cands), out);
            n[cands.iter().position(|&c| c == out).unwrap()] += 1;
        }
        for (i, want) in [8000f64 / 3., 8000. / 3., 8000. / 6., 8000. / 6.]
            .iter()
            .enumerate()
        {
            // ±5 standard deviations of a binomial count.
            let p = want / 8000.;
            let sd = (8000. * p * (1. - p)).sqrt();
            assert!((n[i] as f64 - want).abs() < 5. * sd, "{n:?}");
        }
    }

    #[test]
    fn multi_tier_capacity_is_taken_from_the_tor_outward() {
        // 3-tier fat-tree, k = 4, 10 G links: an edge switch has 2 aggregation switches
        // toward another pod, each with 2 cores (A*_0: C0, C1; A*_1: C2, C3). With the links
        // from C0 and C1 into pod 1 at 2.5 G, A0_0 has 5 G behind it, A0_1 20 G; the edge
        // uplinks (10 G) cap that at 5 : 10.
        let mut f = Fx::fat_tree4();
        for s in ["C0->A1_0", "C1->A1_0"] {
            let l = f.link(s);
            f.ports[l as usize].rate_bps = 2_500_000_000;
        }
        let w = wcmp(&mut f);
        let e = f.node("E0_0");
        let dst = f.g.node_id("H4").unwrap(); // under E1_0
        let t = w.host_tor[dst as usize] as usize;
        let (o, n) = w.groups[e as usize * w.n_tors + t];
        let cum = &w.cum[o as usize..(o + n) as usize];
        let cands = f.cands(e, dst);
        assert_eq!(cands.len(), 2);
        let a = cum[0] as f64 / (1u64 << 32) as f64;
        let via_a00 = if f.g.links[cands[0] as usize].to == f.node("A0_0") {
            a
        } else {
            1.0 - a
        };
        assert!((via_a00 - 1. / 3.).abs() < 1e-6, "{via_a00}");
    }

    #[test]
    fn parses() {
        let s: SchemeConfig = serde_json::from_str(r#"{"name":"wcmp"}"#).unwrap();
        s.validate("scheme").unwrap();
        assert_eq!(s.name(), "wcmp");
        assert!(serde_json::from_str::<SchemeConfig>(r#"{"name":"wcmp","w":1}"#).is_err());
    }
}
