//! DRILL(d, m) (Ghorbani et al., SIGCOMM'17; SCHEMES.md §7, §12.4): per packet, at every
//! switch with a choice, the output port with the fewest queued bytes among d candidates drawn
//! at random (distinct, from the switch's own random stream) and the m least-loaded ports
//! remembered from the switch's previous decision; the memory then holds the m least-loaded of
//! the ports just compared. Defaults d = 2, m = 1, the paper's recommended DRILL(2, 1).
//!
//! Choices, written down in docs/COMPANIONS.md:
//! - one memory per switch (the paper's per-engine memory with one engine), shared by all
//!   destinations; a remembered port that is not a candidate for this packet is skipped;
//! - load = the port's instantaneous queue in bytes, the packet in service included;
//! - ties go to the port compared first: remembered ports before samples, so the memory
//!   wins a tie (as in the authors' ns-3 code, strict `<`);
//! - the symmetric form only: the paper's decomposition of an asymmetric fabric into symmetric
//!   components is not in our material. Every candidate counts the same, whatever lies
//!   behind it (tests/companions.rs shows what that does when a link is down).

use super::{switch_rngs, Balancer, BuildCtx, LbView};
use crate::error::Error;
use crate::net::packet::Packet;
use crate::rng::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// DRILL's parameters (`[scheme]` with `name = "drill"`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DrillConfig {
    /// d: random candidate ports sampled per packet, 1..=64 (paper: 2). With d at least the
    /// number of candidates, every candidate is compared.
    #[serde(default = "d")]
    #[schemars(range(min = 1, max = 64))]
    pub d: u32,
    /// m: least-loaded ports remembered from the switch's previous decision, 0..=8 (paper: 1).
    #[serde(default = "m")]
    #[schemars(range(min = 0, max = 8))]
    pub m: u32,
}

fn d() -> u32 {
    2
}
fn m() -> u32 {
    1
}

impl Default for DrillConfig {
    fn default() -> Self {
        DrillConfig { d: d(), m: m() }
    }
}

const NONE: u32 = u32::MAX;

impl DrillConfig {
    pub fn validate(&self, path: &str) -> Result<(), Error> {
        if !(1..=64).contains(&self.d) {
            return Err(Error::config(
                &format!("{path}.d"),
                format!(
                    "{} is not allowed; use 1..=64 random samples per packet (the paper recommends 2)",
                    self.d
                ),
            ));
        }
        if self.m > 8 {
            return Err(Error::config(
                &format!("{path}.m"),
                format!(
                    "{} is not allowed; use 0..=8 remembered ports (the paper recommends 1)",
                    self.m
                ),
            ));
        }
        Ok(())
    }

    pub fn build(&self, ctx: &BuildCtx) -> Drill {
        let n = ctx.g.nodes.len();
        Drill {
            d: self.d as usize,
            m: self.m as usize,
            memory: vec![NONE; n * self.m as usize],
            rngs: switch_rngs(ctx),
            picked: Vec::with_capacity(self.d as usize),
            best: Vec::with_capacity(self.d as usize + self.m as usize),
        }
    }
}

pub struct Drill {
    d: usize,
    m: usize,
    /// Per node, m remembered ports, least loaded first (NONE: empty).
    memory: Vec<u32>,
    /// Per node (used for switches only).
    rngs: Vec<Rng>,
    /// Scratch: indices sampled for this packet.
    picked: Vec<u32>,
    /// Scratch: (queued bytes, port) of the ports compared for this packet.
    best: Vec<(u64, u32)>,
}

impl Drill {
    /// Draw min(d, n) distinct indices below n into `picked`, in a uniformly random order
    /// (ties among samples go to the first drawn, so the order matters).
    fn sample(&mut self, sw: u32, n: usize) {
        self.picked.clear();
        let rng = &mut self.rngs[sw as usize];
        if self.d >= n {
            self.picked.extend(0..n as u32);
            rng.shuffle(&mut self.picked);
            return;
        }
        while self.picked.len() < self.d {
            let t = rng.below(n as u64) as u32;
            if !self.picked.contains(&t) {
                self.picked.push(t);
            }
        }
    }
}

impl Balancer for Drill {
    fn choose(&mut self, v: &mut LbView, sw: u32, _pkt: &mut Packet, cands: &[u32]) -> u32 {
        self.sample(sw, cands.len());
        self.best.clear();
        let mem = sw as usize * self.m..(sw as usize + 1) * self.m;
        for &p in &self.memory[mem.clone()] {
            if p != NONE && cands.contains(&p) {
                self.best.push((v.ports[p as usize].queue_bytes(v.now), p));
            }
        }
        for &i in &self.picked {
            let p = cands[i as usize];
            if !self.best.iter().any(|&(_, q)| q == p) {
                self.best.push((v.ports[p as usize].queue_bytes(v.now), p));
            }
        }
        // Insertion sort (a few entries, no allocation), stable: among equal loads the port
        // compared first, a remembered one, comes first.
        for i in 1..self.best.len() {
            let mut j = i;
            while j > 0 && self.best[j - 1].0 > self.best[j].0 {
                self.best.swap(j - 1, j);
                j -= 1;
            }
        }
        let out = self.best[0].1;
        for (k, slot) in self.memory[mem].iter_mut().enumerate() {
            *slot = self.best.get(k).map_or(NONE, |&(_, p)| p);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::testutil::Fx;
    use crate::lb::SchemeConfig;

    fn drill(f: &Fx, d: u32, m: u32, seed: u64) -> Drill {
        DrillConfig { d, m }.build(&f.ctx(seed))
    }

    /// L0's four uplinks (toward L1), in candidate order.
    fn ups(f: &Fx) -> Vec<u32> {
        f.cands(f.node("L0"), 2)
    }

    /// The uplinks (indices) chosen, over `n` seeds, with these queues (frames) and this
    /// remembered uplink; with their counts.
    fn picks(d: u32, m: u32, queues: [u32; 4], remembered: Option<usize>, n: u64) -> [u32; 4] {
        let mut counts = [0u32; 4];
        for seed in 0..n {
            let mut f = Fx::new();
            let ups = ups(&f);
            for (i, &q) in queues.iter().enumerate() {
                f.fill(ups[i], q, 0);
            }
            let mut dr = drill(&f, d, m, seed);
            let l0 = f.node("L0");
            if let Some(r) = remembered {
                dr.memory[l0 as usize * m as usize] = ups[r];
            }
            let out = dr.choose(&mut f.view(0), l0, &mut Fx::pkt(1), &ups);
            counts[ups.iter().position(|&u| u == out).unwrap()] += 1;
        }
        counts
    }

    #[test]
    fn choice_table() {
        // (d, m, queued frames per uplink, remembered uplink, uplinks that may be chosen).
        type Case = (u32, u32, [u32; 4], Option<usize>, &'static [usize]);
        let cases: &[Case] = &[
            (4, 0, [3, 1, 2, 5], None, &[1]), // all sampled: the least loaded
            (4, 1, [3, 1, 2, 5], Some(3), &[1]),
            (4, 1, [3, 1, 1, 5], Some(2), &[2]), // a tie goes to the remembered port
            (1, 1, [9, 9, 9, 0], Some(3), &[3]), // the remembered best beats any sample
            (1, 1, [0, 9, 9, 9], Some(3), &[0, 3]), // sample 0 wins only when drawn
            (2, 0, [0, 9, 9, 9], None, &[0, 1, 2, 3]), // 0 unless not sampled
            (2, 0, [9, 9, 9, 0], None, &[0, 1, 2, 3]),
            (3, 0, [0, 0, 9, 9], None, &[0, 1]), // 3 of 4 always holds 0 or 1
            (1, 0, [0, 1, 2, 3], None, &[0, 1, 2, 3]), // d = 1, m = 0: random
        ];
        for &(d, m, q, rem, want) in cases {
            let c = picks(d, m, q, rem, 400);
            let got: Vec<usize> = (0..4).filter(|&i| c[i] > 0).collect();
            assert_eq!(got, want, "d={d} m={m} queues={q:?} rem={rem:?}: {c:?}");
        }
    }

    #[test]
    fn sampling_frequencies() {
        // Queues [0, 9, 9, 9], no memory: uplink 0 is chosen iff sampled, P = d/4.
        for (d, p) in [(1u32, 0.25), (2, 0.5), (3, 0.75)] {
            let c = picks(d, 0, [0, 9, 9, 9], None, 2000);
            let f = c[0] as f64 / 2000.0;
            assert!((f - p).abs() < 0.05, "d={d}: {c:?}");
            // Ties among the others: the first sampled, uniform.
            if d == 1 {
                assert!(c[1..].iter().all(|&x| (400..600).contains(&x)), "{c:?}");
            }
        }
        // d distinct indices; every ordered sample equally likely.
        let f = Fx::new();
        let mut dr = drill(&f, 3, 1, 5);
        let mut seen = std::collections::HashMap::new();
        for _ in 0..6000 {
            dr.sample(5, 5);
            let mut s = dr.picked.clone();
            s.sort_unstable();
            s.dedup();
            assert_eq!(s.len(), 3, "{:?}", dr.picked);
            *seen.entry(dr.picked.clone()).or_insert(0u32) += 1;
        }
        // 5 * 4 * 3 = 60 ordered samples, 100 each expected.
        assert_eq!(seen.len(), 60);
        assert!(seen.values().all(|&c| (50..150).contains(&c)), "{seen:?}");
        // d above the number of candidates: all of them, in random order.
        let mut orders = std::collections::HashSet::new();
        for _ in 0..50 {
            dr.sample(5, 2);
            orders.insert(dr.picked.clone());
        }
        assert_eq!(orders.len(), 2, "{orders:?}");
    }

    #[test]
    fn memory_follows_the_decisions() {
        // d = 4 (everything sampled), m = 2: the memory holds the two least-loaded ports of
        // the last decision, least loaded first.
        let mut f = Fx::new();
        let ups = ups(&f);
        let l0 = f.node("L0");
        let mut dr = drill(&f, 4, 2, 1);
        for (i, q) in [4u32, 1, 3, 2].iter().enumerate() {
            f.fill(ups[i], *q, 0);
        }
        let out = dr.choose(&mut f.view(0), l0, &mut Fx::pkt(1), &ups);
        assert_eq!(out, ups[1]);
        let mem = &dr.memory[l0 as usize * 2..l0 as usize * 2 + 2];
        assert_eq!(mem, &[ups[1], ups[3]]);
        // A remembered port that is not a candidate is skipped: S1's candidates toward L1
        // are its own links, and its memory stays its own.
        let s1 = f.node("S1");
        let c1 = f.cands(s1, 2);
        let out = dr.choose(&mut f.view(0), s1, &mut Fx::pkt(1), &c1);
        assert!(c1.contains(&out));
        assert_eq!(
            dr.memory[l0 as usize * 2..l0 as usize * 2 + 2],
            [ups[1], ups[3]]
        );
        // With m = 1 and d = 1: the memory sticks to a port while it stays the least loaded
        // of what was compared.
        let mut f = Fx::new();
        let mut dr = drill(&f, 1, 1, 2);
        for k in 0..4 {
            f.fill(ups[k], if k == 2 { 0 } else { 5 }, 0);
        }
        dr.memory[l0 as usize] = ups[2];
        for _ in 0..50 {
            let out = dr.choose(&mut f.view(0), l0, &mut Fx::pkt(1), &ups);
            assert_eq!(out, ups[2]);
        }
    }

    /// The largest spread (max − min, frames) of L0's four uplink queues after 400 packets
    /// offered at one instant, each queued where DRILL(d, m) sends it, over 20 seeds.
    fn worst_spread(d: u32, m: u32) -> u64 {
        (0..20u64)
            .map(|seed| {
                let mut f = Fx::new();
                let ups = ups(&f);
                let l0 = f.node("L0");
                let mut dr = drill(&f, d, m, seed);
                for _ in 0..400 {
                    let out = dr.choose(&mut f.view(0), l0, &mut Fx::pkt(1), &ups);
                    f.fill(out, 1, 0);
                }
                let q: Vec<u64> = ups
                    .iter()
                    .map(|&u| f.ports[u as usize].q_bytes / 1518)
                    .collect();
                q.iter().max().unwrap() - q.iter().min().unwrap()
            })
            .max()
            .unwrap()
    }

    #[test]
    fn more_choices_keep_the_queues_closer() {
        // (d, m, largest spread allowed, smallest spread required)
        // (measured: 39, 3, 2, 0)
        let cases = [
            (1u32, 0u32, 1_000u64, 15u64),
            (2, 0, 4, 0),
            (2, 1, 4, 0),
            (4, 0, 0, 0),
        ];
        for (d, m, most, least) in cases {
            let s = worst_spread(d, m);
            assert!((least..=most).contains(&s), "d={d} m={m}: spread {s}");
        }
    }

    #[test]
    fn parse_defaults_and_bad_input() {
        let s: SchemeConfig = serde_json::from_str(r#"{"name":"drill"}"#).unwrap();
        s.validate("scheme").unwrap();
        assert_eq!(s.name(), "drill");
        let SchemeConfig::Drill(c) = &s else {
            panic!("{s:?}")
        };
        assert_eq!((c.d, c.m), (2, 1));
        let bad = [
            (r#"{"name":"drill","d":0}"#, "scheme.d"),
            (r#"{"name":"drill","d":65}"#, "scheme.d"),
            (r#"{"name":"drill","m":9}"#, "scheme.m"),
        ];
        for (json, field) in bad {
            let s: SchemeConfig = serde_json::from_str(json).unwrap();
            let e = s.validate("scheme").unwrap_err().to_string();
            assert!(e.contains(field) && e.contains("allowed"), "{json}: {e}");
        }
        for json in [r#"{"name":"drill","d":-1}"#, r#"{"name":"drill","n":2}"#] {
            assert!(
                serde_json::from_str::<SchemeConfig>(json).is_err(),
                "{json}"
            );
        }
    }
}
