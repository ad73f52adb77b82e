//! Expeditus as its authors' ns-3.10 code runs it (`pengwwang/2016-SoCC-Expeditus`, the
//! SoCC'16 design; SCHEMES.md §2.1-2.4), beside the seed design of `expeditus`:
//!
//! - **Meters, not queues** (§2.1): each port has a DRE of the bytes enqueued on it ("out")
//!   and one of the bytes received on it ("in"), multiplied by `meter_factor` every
//!   `meter_period` (`clos::LoadMeters`). Northbound of X toward U is OutRate(X -> U);
//!   southbound from U is InRate(U -> X) as X receives it. Nothing is stamped; no SCIT.
//! - **Max, not sum**: a candidate's congestion is the larger of the two halves.
//! - **Between pods, two stages** (§2.2): the SYN leaves its edge with the edge's OutRates
//!   (1 + n bytes); the destination edge takes the least max with its InRates and pins the
//!   reverse direction there. The SYN-ACK leaves the destination pod's aggregation switch
//!   (by ECMP) with that switch's InRates from its cores; the source pod's aggregation switch
//!   at the same position takes the least max with its OutRates and pins the data direction;
//!   the source edge pins the data direction to the uplink the SYN-ACK came down.
//! - **In a leaf-spine and within a pod, one stage on the SYN-ACK** (§2.3): the SYN goes
//!   plain; the SYN-ACK leaves the receiver's leaf (by ECMP) with the leaf's InRates, and the
//!   sender's leaf takes the least max with its OutRates and pins the data direction. ACKs go
//!   by ECMP.
//! - **Entries** (§2.4): exact-match, alive for `entry_lifetime` after their last use; a
//!   second entry for a live one is ignored (the first match wins in the authors' list).
//!
//! Left out: the meters' timers start at time 0 here, at a port's first packet there; the
//! out-meter counts a packet when its port's own buffer accepts it (a shared buffer's
//! admission is not looked at).

use super::clos::{fwd_key, mark, rev_key, will_enqueue, Clos, FlowPins, Headers, LoadMeters};
use super::expeditus::entry_lifetime;
use super::{ecmp_pick, ecmp_salts, hooks, Balancer, BuildCtx, LbView};
use crate::error::Error;
use crate::net::packet::{flags, Packet};
use crate::net::topology::Graph;
use crate::rng::{stream, Rng};
use crate::units::{Duration, PS_PER_US};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The link-load meters and entries of `expeditus-socc` and `path-oracle` (`[scheme]` with
/// `name = "expeditus-socc"` or `"path-oracle"`); defaults from the authors' experiments.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpeditusSoccConfig {
    /// The meters' decay period (the authors' `DecrementInterval`).
    #[serde(default = "meter_period")]
    pub meter_period: Duration,
    /// What the meters are multiplied by every period, in (0, 1) (`MultiplicativeFactor`: the
    /// experiments set 0.7, so τ = 66.7 µs).
    #[serde(default = "meter_factor")]
    pub meter_factor: f64,
    /// Levels per link capacity: a link at full rate reads about this many (`CongestionLevel`),
    /// 1..=255.
    #[serde(default = "levels")]
    #[schemars(range(min = 1, max = 255))]
    pub levels: u8,
    /// A flow entry not used for this long is removed (`RoutingEntryLifetime`).
    #[serde(default = "entry_lifetime")]
    pub entry_lifetime: Duration,
}

fn meter_period() -> Duration {
    Duration(20 * PS_PER_US)
}
fn meter_factor() -> f64 {
    0.7
}
fn levels() -> u8 {
    8
}

impl Default for ExpeditusSoccConfig {
    fn default() -> Self {
        ExpeditusSoccConfig {
            meter_period: meter_period(),
            meter_factor: meter_factor(),
            levels: levels(),
            entry_lifetime: entry_lifetime(),
        }
    }
}

/// Bytes of a handshake header with `n` values (a size byte, a byte per value).
fn header_bytes(n: usize) -> u32 {
    1 + n as u32
}

impl ExpeditusSoccConfig {
    pub fn validate(&self, path: &str) -> Result<(), Error> {
        if self.meter_period.0 == 0 {
            return Err(Error::config(
                &format!("{path}.meter_period"),
                "must be > 0 (e.g. \"20us\")",
            ));
        }
        if !(self.meter_factor > 0.0 && self.meter_factor < 1.0) {
            return Err(Error::config(
                &format!("{path}.meter_factor"),
                format!(
                    "{} is not allowed; use a number in (0, 1) (the authors: 0.7)",
                    self.meter_factor
                ),
            ));
        }
        if self.levels == 0 {
            return Err(Error::config(
                &format!("{path}.levels"),
                "must be in 1..=255 (the authors: 8)",
            ));
        }
        if self.entry_lifetime.0 == 0 {
            return Err(Error::config(
                &format!("{path}.entry_lifetime"),
                "must be > 0 (e.g. \"100ms\")",
            ));
        }
        Ok(())
    }

    pub(super) fn meters(&self, ctx: &BuildCtx, with_in: bool) -> LoadMeters {
        LoadMeters::new(
            ctx.g.links.len(),
            self.meter_period.0,
            self.meter_factor,
            self.levels,
            with_in,
        )
    }

    pub fn build(&self, ctx: &BuildCtx) -> ExpeditusSocc {
        let clos = Clos::new(ctx.g);
        ExpeditusSocc {
            meters: self.meters(ctx, true),
            pins: FlowPins::new(self.entry_lifetime.0, true),
            hdrs: Headers::new(clos.max_ups),
            salts: ecmp_salts(ctx),
            rng: Rng::new(ctx.seed, stream::SCHEME),
            vals: Vec::with_capacity(clos.max_ups),
            costs: Vec::with_capacity(clos.max_ups),
            clos,
            n: [0; 5],
        }
    }
}

pub struct ExpeditusSocc {
    clos: Clos,
    meters: LoadMeters,
    pins: FlowPins,
    hdrs: Headers,
    salts: Vec<u64>,
    rng: Rng,
    vals: Vec<u16>,
    costs: Vec<u32>,
    /// Choices at the sender's or receiver's edge, at the aggregation layer, next hops taken
    /// from an entry, next hops by ECMP, choices drawn at random among equally good candidates.
    n: [u64; 5],
}

/// Which meter a value reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Meter {
    /// OutRate of the uplink.
    Out,
    /// InRate of the uplink's reverse (what the switch receives from that neighbour).
    In,
}

impl ExpeditusSocc {
    #[inline]
    fn level(meters: &mut LoadMeters, v: &mut LbView, up: u32, m: Meter) -> u16 {
        match m {
            Meter::Out => meters.out_level(up, v.now, v.ports[up as usize].rate_bps) as u16,
            Meter::In => {
                let l = v.g.links[up as usize].reverse;
                meters.in_level(l, v.now, v.ports[l as usize].rate_bps) as u16
            }
        }
    }

    /// A header of `sw`'s `m` levels for every uplink, on `pkt`.
    fn attach(&mut self, v: &mut LbView, sw: u32, m: Meter, pkt: &mut Packet) {
        self.vals.clear();
        for &up in self.clos.ups(sw) {
            self.vals.push(Self::level(&mut self.meters, v, up, m));
        }
        let bytes = header_bytes(self.vals.len());
        self.hdrs.attach(pkt, &self.vals, bytes);
    }

    /// The uplink toward `pkt`'s sender with the least max(header, local `m` level), pinned
    /// for the direction opposite to `pkt`; counted in `n[which]`.
    fn stage(&mut self, v: &mut LbView, sw: u32, pkt: &Packet, m: Meter, which: usize) {
        let ExpeditusSocc {
            clos,
            meters,
            rng,
            costs,
            vals,
            ..
        } = self;
        let pick = clos.pick_uplink(v, sw, pkt.src, rng, costs, |v, i, up| {
            let local = Self::level(meters, v, up, m);
            vals.get(i).map_or(u32::MAX, |&h| h.max(local) as u32)
        });
        if let Some((up, tie)) = pick {
            self.pins.install(rev_key(sw, pkt), up, v.now);
            self.n[4] += tie as u64;
            self.n[which] += 1;
        }
    }
}

impl Balancer for ExpeditusSocc {
    fn choose(&mut self, v: &mut LbView, sw: u32, pkt: &mut Packet, cands: &[u32]) -> u32 {
        if let Some(l) = self.pins.lookup(fwd_key(sw, pkt), v.now) {
            if cands.contains(&l) {
                self.n[2] += 1;
                return l;
            }
        }
        self.n[3] += 1;
        ecmp_pick(pkt, self.salts[sw as usize], cands)
    }

    fn switch_hooks(&self, _g: &Graph, l: u32) -> u8 {
        // The early returns of the two hooks below: arrivals from a switch, departures to one.
        let h = self.clos.hop(l);
        let arrival = if h.from_tier != 0 { hooks::ARRIVAL } else { 0 };
        let departure = if h.to_tier != 0 { hooks::DEPARTURE } else { 0 };
        arrival | departure
    }

    fn prefetch(&self, sw: u32, pkt: &Packet) {
        self.pins.prefetch(fwd_key(sw, pkt));
    }

    fn on_arrival(&mut self, v: &mut LbView, sw: u32, in_link: u32, pkt: &mut Packet) {
        let h = self.clos.hop(in_link);
        debug_assert_eq!(v.g.links[in_link as usize].to, sw);
        let (ts, tf) = (h.to_tier, h.from_tier);
        if tf == 0 {
            return;
        }
        self.meters.add_in(in_link, v.now, pkt.size);
        if tf <= ts || !pkt.is(flags::SYN) {
            return;
        }
        let up = h.reverse;
        let synack = pkt.is(flags::ACK);
        if ts == 1 && !synack {
            // Between pods, at the destination edge: max(InRate(uplink a), header[a]).
            if self.hdrs.detach(pkt, &mut self.vals, header_bytes) {
                self.stage(v, sw, pkt, Meter::In, 0);
            }
        } else if ts == 1 {
            if self.hdrs.detach(pkt, &mut self.vals, header_bytes) {
                // Leaf-spine / within a pod, at the sender's leaf: max(OutRate, header).
                self.stage(v, sw, pkt, Meter::Out, 0);
            } else if self.clos.inter_pod(v.g, pkt.src, pkt.dst) {
                // Between pods, the SYN-ACK came down from aggregation position a*.
                self.pins.install(rev_key(sw, pkt), up, v.now);
            }
        } else if ts == 2
            && tf == 3
            && synack
            && self.hdrs.detach(pkt, &mut self.vals, header_bytes)
        {
            // Between pods, at the source pod's aggregation switch: max(OutRate, header).
            self.stage(v, sw, pkt, Meter::Out, 1);
        }
    }

    fn on_departure(&mut self, v: &mut LbView, sw: u32, out_link: u32, pkt: &mut Packet) {
        let h = self.clos.hop(out_link);
        debug_assert_eq!(v.g.links[out_link as usize].from, sw);
        let (ts, tt) = (h.from_tier, h.to_tier);
        if tt == 0 {
            return;
        }
        if tt > ts && pkt.is(flags::SYN) && pkt.overlay.aux_flags & mark::HDR == 0 {
            let synack = pkt.is(flags::ACK);
            let inter = self.clos.inter_pod(v.g, pkt.src, pkt.dst);
            match (ts, synack, inter) {
                (1, false, true) => self.attach(v, sw, Meter::Out, pkt),
                (1, true, false) | (2, true, true) => self.attach(v, sw, Meter::In, pkt),
                _ => {}
            }
        }
        if will_enqueue(v, out_link, pkt.size) {
            self.meters.add_out(out_link, v.now, pkt.size);
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("edge_choices", self.n[0]),
            ("aggregation_choices", self.n[1]),
            ("pinned_hops", self.n[2]),
            ("ecmp_hops", self.n[3]),
            ("tied_choices", self.n[4]),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::testutil::Fx;
    use crate::lb::SchemeConfig;
    use crate::net::packet::frame_bytes;

    const US: u64 = PS_PER_US;

    fn socc(f: &Fx, seed: u64) -> ExpeditusSocc {
        ExpeditusSoccConfig::default().build(&f.ctx(seed))
    }

    /// Bytes that read `lvl` and a half levels on link `l` with the default meters
    /// (C·τ/8/8, τ = 20 µs / 0.3: 10,417 B per level at 10 Gbps).
    pub(crate) fn level_bytes(f: &Fx, l: u32, lvl: u32) -> u32 {
        let per = f.ports[l as usize].rate_bps as f64 / 8.0 * (20e-6 / 0.3) / 8.0;
        (per * (lvl as f64 + 0.5)) as u32
    }

    #[test]
    fn meters_count_enqueued_and_received_bytes() {
        // A frame enqueued at E0_0 toward A0_1 counts in E0_0->A0_1's out-meter; its arrival
        // at A0_1 counts in the same link's in-meter. 9 such frames of 1518 B = 1.3 levels.
        let mut f = Fx::fat_tree4();
        let mut e = socc(&f, 1);
        let (sw, l, agg) = (f.node("E0_0"), f.link("E0_0->A0_1"), f.node("A0_1"));
        for _ in 0..9 {
            let mut p = Fx::tcp(0, 4, flags::ACK);
            p.size = 1518;
            e.on_departure(&mut f.view(0), sw, l, &mut p);
            e.on_arrival(&mut f.view(0), agg, l, &mut p);
        }
        let rate = 10_000_000_000;
        assert_eq!(e.meters.out_level(l, 0, rate), 1);
        assert_eq!(e.meters.in_level(l, 0, rate), 1);
        assert_eq!(e.meters.out_level(f.link("E0_0->A0_0"), 0, rate), 0);
        // Host-facing ports are not metered; a packet the full port drops is not counted.
        let mut g = Fx::fat_tree4();
        let mut e = socc(&g, 1);
        let l = g.link("E0_0->A0_1");
        g.ports[l as usize].cap_bytes = 1518;
        g.fill(l, 1, 0);
        let mut p = Fx::tcp(0, 4, flags::ACK);
        p.size = level_bytes(&g, l, 10);
        let sw = g.node("E0_0");
        e.on_departure(&mut g.view(0), sw, l, &mut p);
        assert_eq!(e.meters.out_level(l, 0, rate), 0);
    }

    /// Meter values set directly: `lvl` and a half levels' worth of bytes at time 0.
    fn set(e: &mut ExpeditusSocc, f: &Fx, out: bool, l: u32, lvl: u32) {
        let b = level_bytes(f, l, lvl);
        if out {
            e.meters.add_out(l, 0, b);
        } else {
            e.meters.add_in(l, 0, b);
        }
    }

    /// Over 40 seeds, the set of first-hop uplinks (by name) `p`'s direction takes after one
    /// handshake H`src` -> H`dst` on a fabric prepared by `prep`.
    fn data_paths(
        mk: fn() -> Fx,
        src: u32,
        dst: u32,
        prep: &dyn Fn(&mut ExpeditusSocc, &Fx),
        hop: usize,
    ) -> Vec<String> {
        let mut seen: Vec<String> = vec![];
        for seed in 0..40 {
            let mut f = mk();
            let mut e = socc(&f, seed);
            prep(&mut e, &f);
            let mut syn = Fx::tcp(src, dst, flags::SYN);
            f.walk(&mut e, 0, &mut syn);
            let mut sa = Fx::answer(&syn, flags::SYN | flags::ACK);
            f.walk(&mut e, 0, &mut sa);
            assert_eq!((syn.size, sa.size), (frame_bytes(0), frame_bytes(0)));
            assert_eq!(e.hdrs.in_use(), 0);
            let mut d = Fx::tcp(src, dst, flags::ACK);
            let l = f.walk(&mut e, 0, &mut d)[hop].clone();
            if !seen.contains(&l) {
                seen.push(l);
            }
        }
        seen.sort();
        seen
    }

    #[test]
    fn stage1_between_pods_takes_the_least_max() {
        // H0 (pod 0) -> H4 (pod 1): (E0_0's out levels toward A0_0, A0_1; E1_0's in levels
        // from A1_0, A1_1) -> the source edge's uplinks data take.
        let cases: &[([u32; 2], [u32; 2], &[&str])] = &[
            ([0, 0], [0, 0], &["E0_0->A0_0#0", "E0_0->A0_1#0"]),
            ([3, 0], [0, 0], &["E0_0->A0_1#0"]),
            ([0, 0], [0, 2], &["E0_0->A0_0#0"]),
            ([3, 1], [1, 3], &["E0_0->A0_0#0", "E0_0->A0_1#0"]), // max 3, 3 (sums 4, 4)
            ([4, 0], [0, 5], &["E0_0->A0_0#0"]),                 // max 4 vs 5 (sum 4 vs 5)
            ([2, 3], [2, 0], &["E0_0->A0_0#0"]),                 // max 2 vs 3 (sum 4 vs 3)
        ];
        for &(out, inn, want) in cases {
            let prep = |e: &mut ExpeditusSocc, f: &Fx| {
                for a in 0..2 {
                    set(e, f, true, f.link(&format!("E0_0->A0_{a}")), out[a]);
                    set(e, f, false, f.link(&format!("A1_{a}->E1_0")), inn[a]);
                }
            };
            assert_eq!(
                data_paths(Fx::fat_tree4, 0, 4, &prep, 0),
                want,
                "out {out:?} in {inn:?}"
            );
        }
    }

    #[test]
    fn stage2_between_pods_takes_the_least_max() {
        // Position 1 forced by stage 1. (A0_1's out levels toward C2, C3; A1_1's in levels
        // from C2, C3) -> the core data take.
        let cases: &[([u32; 2], [u32; 2], &[&str])] = &[
            ([0, 0], [0, 0], &["A0_1->C2#0", "A0_1->C3#0"]),
            ([1, 0], [0, 0], &["A0_1->C3#0"]),
            ([0, 0], [6, 0], &["A0_1->C3#0"]),
            ([2, 5], [5, 1], &["A0_1->C2#0", "A0_1->C3#0"]), // max 5, 5
            ([1, 4], [3, 0], &["A0_1->C2#0"]),               // max 3 vs 4 (sums 4 vs 4)
        ];
        for &(out, inn, want) in cases {
            let prep = |e: &mut ExpeditusSocc, f: &Fx| {
                set(e, f, true, f.link("E0_0->A0_0"), 9);
                for (j, c) in ["C2", "C3"].iter().enumerate() {
                    set(e, f, true, f.link(&format!("A0_1->{c}")), out[j]);
                    set(e, f, false, f.link(&format!("{c}->A1_1")), inn[j]);
                }
            };
            assert_eq!(
                data_paths(Fx::fat_tree4, 0, 4, &prep, 1),
                want,
                "out {out:?} in {inn:?}"
            );
        }
    }

    #[test]
    fn leaf_spine_chooses_on_the_syn_ack_at_the_senders_leaf() {
        // 2 leaves x 3 spines, H0 (L0) -> H2 (L1): (L0's out levels toward S0..S2, L1's in
        // levels from S0..S2) -> L0's uplinks data take.
        let ls = || Fx::leaf_spine(2, 3, 1);
        let cases: &[([u32; 3], [u32; 3], &[&str])] = &[
            ([0, 0, 0], [0, 0, 0], &["L0->S0#0", "L0->S1#0", "L0->S2#0"]),
            ([1, 0, 1], [0, 0, 0], &["L0->S1#0"]),
            ([0, 0, 0], [0, 7, 7], &["L0->S0#0"]),
            ([2, 1, 3], [1, 2, 0], &["L0->S0#0", "L0->S1#0"]), // max 2, 2, 3
        ];
        for &(out, inn, want) in cases {
            let prep = |e: &mut ExpeditusSocc, f: &Fx| {
                for s in 0..3 {
                    set(e, f, true, f.link(&format!("L0->S{s}")), out[s]);
                    set(e, f, false, f.link(&format!("S{s}->L1")), inn[s]);
                }
            };
            assert_eq!(
                data_paths(ls, 0, 2, &prep, 0),
                want,
                "out {out:?} in {inn:?}"
            );
        }
        // The SYN goes plain, the receiver's leaf keeps nothing for the ACKs.
        let mut f = ls();
        let mut e = socc(&f, 1);
        let mut syn = Fx::tcp(0, 2, flags::SYN);
        let l0 = f.node("L0");
        let cands = f.cands(l0, 2);
        let out = e.choose(&mut f.view(0), l0, &mut syn, &cands);
        e.on_departure(&mut f.view(0), l0, out, &mut syn);
        assert_eq!((syn.overlay.aux_flags, syn.size), (0, frame_bytes(0)));
        let mut syn = Fx::tcp(0, 2, flags::SYN);
        f.walk(&mut e, 0, &mut syn);
        let mut sa = Fx::answer(&syn, flags::SYN | flags::ACK);
        f.walk(&mut e, 0, &mut sa);
        let ack = Fx::answer(&syn, flags::ACK);
        assert_eq!(e.pins.lookup(fwd_key(f.node("L1"), &ack), 0), None);
        assert_eq!((e.n[0], e.n[1]), (1, 0));
    }

    #[test]
    fn the_first_entry_wins_while_it_lives() {
        // A second handshake of the same connection (a retransmitted SYN) under other loads
        // does not move the data: the live entry wins.
        let mut f = Fx::leaf_spine(2, 2, 1);
        let mut e = socc(&f, 1);
        set(&mut e, &f, true, f.link("L0->S0"), 5);
        let mut syn = Fx::tcp(0, 2, flags::SYN);
        f.walk(&mut e, 0, &mut syn);
        f.walk(&mut e, 0, &mut Fx::answer(&syn, flags::SYN | flags::ACK));
        set(&mut e, &f, true, f.link("L0->S1"), 9);
        let t = 10 * US;
        f.walk(&mut e, t, &mut Fx::tcp(0, 2, flags::SYN));
        f.walk(&mut e, t, &mut Fx::answer(&syn, flags::SYN | flags::ACK));
        assert_eq!(e.n[0], 2);
        assert_eq!(
            f.walk(&mut e, t, &mut Fx::tcp(0, 2, flags::ACK))[0],
            "L0->S1#0"
        );
    }

    #[test]
    fn config_parses_validates_and_names_bad_fields() {
        for name in ["expeditus-socc", "path-oracle"] {
            let s: SchemeConfig = serde_json::from_str(&format!(r#"{{"name":"{name}"}}"#)).unwrap();
            s.validate("scheme").unwrap();
            assert_eq!(s.name(), name);
            let bad = [
                (r#""meter_period":"0us""#, "scheme.meter_period"),
                (r#""meter_factor":1.0"#, "scheme.meter_factor"),
                (r#""meter_factor":0"#, "scheme.meter_factor"),
                (r#""levels":0"#, "scheme.levels"),
                (r#""entry_lifetime":"0ms""#, "scheme.entry_lifetime"),
            ];
            for (field, path) in bad {
                let json = format!(r#"{{"name":"{name}",{field}}}"#);
                let s: SchemeConfig = serde_json::from_str(&json).unwrap();
                let e = s.validate("scheme").unwrap_err().to_string();
                assert!(e.contains(path), "{json}: {e}");
            }
        }
    }
}
