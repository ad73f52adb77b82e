//! CONGA (papers/conga.md §3): congestion-aware flowlet load balancing decided at the source
//! leaf from leaf-to-leaf feedback. One config, one implementation, three scheme names:
//! `conga` (T_fl = 500 µs), `conga-flow` (the same with T_fl = 13 ms, §3.6) and `local` (the
//! same decision with the remote metric taken as 0: a local congestion-aware scheme, §2.4).
//!
//! Where each mechanism lives (hooks as called by `sim::forward`):
//! - **LBTag / CE** (`on_departure`): a packet entering the fabric at its source leaf gets
//!   LBTag = index of the egress port among the leaf's uplinks, CE = 0, and then, like at every
//!   fabric hop, CE = max(CE, DRE metric of the egress port). The source uplink is a link of the
//!   path, so its metric is part of the path metric.
//! - **Congestion-From-Leaf** (`on_arrival` at the destination leaf): entry [src leaf][LBTag]
//!   = CE, time-stamped; it is "changed" while its value differs from the value last fed back.
//! - **Feedback** (`on_departure` at the source leaf): every packet entering the fabric toward
//!   leaf M carries one Congestion-From-Leaf[M] entry (FB_LBTag, FB_Metric): round robin over
//!   M's LBTags from a per-(leaf, M) pointer, taking the first changed entry at or after the
//!   pointer if there is one, else the first entry ever written; the pointer moves past it.
//! - **Congestion-To-Leaf** (`on_arrival` at the destination leaf, i.e. the feedback's
//!   receiver): [src leaf][FB_LBTag] = FB_Metric, time-stamped.
//! - **Metric aging**: a remote metric not refreshed for `metric_aging` (A) has decayed to 0.
//!   "Gradually" is a staircase: one quantisation level is lost per A/2^Q of staleness, so the
//!   largest metric (2^Q − 1) reaches 0 after (1 − 2^−Q)·A and every metric is 0 by A. Metrics
//!   refreshed at RTT time scales (tens of µs) never decay. Aging is computed lazily from the
//!   time stamp, so it is exact. It applies to both tables: a Congestion-From-Leaf entry no
//!   longer refreshed by data (the source stopped using that uplink) is fed back *aged*;
//!   otherwise its stale value, re-fed round robin, would refresh the source's entry forever and
//!   a path that looked congested would never be probed again (§3.3).
//! - **Flowlet table** (`choose` at the source leaf): per leaf, `flowlet_table_size` entries
//!   indexed by a hash of the 5-tuple, with Algorithm 2's valid and age bits
//!   ([`super::flowlet`], `Expiry::AgeBit`): an idle gap below T_fl never ends a flowlet, one
//!   of 2·T_fl or more always does, in between it depends on the phase against the timer.
//! - **Decision** on a flowlet's first packet: argmin over the candidate uplinks of
//!   max(local DRE metric, aged Congestion-To-Leaf[dst leaf][uplink]) (`local`: remote = 0);
//!   if the port cached in the (invalid) entry is among the minima it is kept, otherwise one of
//!   the minima is drawn uniformly with the scheme's own random stream. A valid entry whose
//!   port is no longer a candidate (failed link, or a hash collision with a flow to a leaf not
//!   reachable over that port) is decided anew.
//! - Any other switch (spines, cores, a leaf that is not the packet's source) picks by salted
//!   ECMP, which covers parallel links to the destination leaf.
//!
//! A "leaf" is a switch with hosts (a tunnel endpoint); its uplinks are its ports to switches,
//! in port order (the same list as the leaf-uplink imbalance metric). All tables are allocated
//! at build (leaves² × uplinks for the congestion tables, leaves × table size for flowlets);
//! the per-packet path allocates nothing.

use super::flowlet::{Expiry, FlowletTable, Lookup};
use super::{ecmp_pick, ecmp_salt, hooks, Balancer, BuildCtx, LbView, OverlayMode};
use crate::error::Error;
use crate::net::packet::{flags, Packet};
use crate::net::topology::Graph;
use crate::rng::{stream, Rng};
use crate::units::{Duration, Time, PS_PER_MS, PS_PER_US};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// CONGA's parameters (`[scheme]` with `name = "conga"`, `"conga-flow"` or `"local"`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CongaConfig {
    /// Q: bits of the congestion metrics (DRE quantisation, CE, FB_Metric), 1..=8 (paper: 3).
    #[serde(default = "q_bits")]
    #[schemars(range(min = 1, max = 8))]
    pub q_bits: u8,
    /// Flowlet inactivity timeout T_fl (the flowlet table's aging period). Default: 500 µs for
    /// `conga` and `local`, 13 ms for `conga-flow`.
    #[serde(default)]
    pub flowlet_timeout: Option<Duration>,
    /// Flowlet table entries per leaf (paper: 64K), 1..=2^24.
    #[serde(default = "table_size")]
    #[schemars(range(min = 1, max = 16_777_216))]
    pub flowlet_table_size: u32,
    /// A remote congestion metric not refreshed for this long has decayed to 0, one level per
    /// metric_aging / 2^Q of staleness (paper: "e.g., 10 ms").
    #[serde(default = "aging")]
    pub metric_aging: Duration,
}

fn q_bits() -> u8 {
    3
}
fn table_size() -> u32 {
    65_536
}
fn aging() -> Duration {
    Duration(10 * PS_PER_MS)
}

impl Default for CongaConfig {
    fn default() -> Self {
        CongaConfig {
            q_bits: q_bits(),
            flowlet_timeout: None,
            flowlet_table_size: table_size(),
            metric_aging: aging(),
        }
    }
}

/// Which of the three registered schemes a [`CongaConfig`] is built as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongaVariant {
    /// `conga`: flowlets with T_fl = 500 µs.
    Conga,
    /// `conga-flow`: T_fl = 13 ms (the testbed's worst-case leaf-to-leaf latency, §3.6).
    Flow,
    /// `local`: remote metrics ignored (§2.4).
    Local,
}

impl CongaVariant {
    pub fn default_flowlet_timeout(self) -> Duration {
        match self {
            CongaVariant::Conga | CongaVariant::Local => Duration(500 * PS_PER_US),
            CongaVariant::Flow => Duration(13 * PS_PER_MS),
        }
    }
}

impl CongaConfig {
    pub fn validate(&self, path: &str) -> Result<(), Error> {
        if !(1..=8).contains(&self.q_bits) {
            return Err(Error::config(
                &format!("{path}.q_bits"),
                format!(
                    "{} is not allowed; use 1..=8 (the paper uses 3)",
                    self.q_bits
                ),
            ));
        }
        if let Some(d) = self.flowlet_timeout {
            if d.0 == 0 {
                return Err(Error::config(
                    &format!("{path}.flowlet_timeout"),
                    "must be > 0 (e.g. \"500us\")",
                ));
            }
        }
        if !(1..=1 << 24).contains(&self.flowlet_table_size) {
            return Err(Error::config(
                &format!("{path}.flowlet_table_size"),
                "must be in 1..=16777216 (the paper uses 65536)",
            ));
        }
        if self.metric_aging.0 == 0 {
            return Err(Error::config(
                &format!("{path}.metric_aging"),
                "must be > 0 (e.g. \"10ms\")",
            ));
        }
        Ok(())
    }

    pub fn build(&self, ctx: &BuildCtx, variant: CongaVariant) -> Conga {
        let g = ctx.g;
        let n_nodes = g.nodes.len();
        // Leaves = switches with hosts, numbered in node order.
        let mut leaf_of = vec![NONE; n_nodes];
        let mut tors: Vec<u32> = g.host_tor.clone();
        tors.sort_unstable();
        tors.dedup();
        for (i, &t) in tors.iter().enumerate() {
            leaf_of[t as usize] = i as u32;
        }
        let n_leaves = tors.len();
        let host_leaf = g.host_tor.iter().map(|&t| leaf_of[t as usize]).collect();
        let mut uplink_idx = vec![NONE16; g.links.len()];
        let mut n_up = vec![0u16; n_leaves];
        for (li, &t) in tors.iter().enumerate() {
            let mut k = 0u16;
            for &l in &g.nodes[t as usize].ports {
                if !g.is_host(g.links[l as usize].to) {
                    uplink_idx[l as usize] = k;
                    k += 1;
                }
            }
            n_up[li] = k;
        }
        let u_max = n_up.iter().copied().max().unwrap_or(0).max(1) as usize;
        let is_fabric = (0..g.links.len() as u32).map(|l| g.is_fabric(l)).collect();
        let cells = n_leaves * n_leaves * u_max;
        let t_fl = self
            .flowlet_timeout
            .unwrap_or(variant.default_flowlet_timeout())
            .0;
        Conga {
            q_bits: self.q_bits,
            aging: self.metric_aging.0,
            local_only: variant == CongaVariant::Local,
            leaf_of,
            host_leaf,
            uplink_idx,
            n_up,
            u_max,
            n_leaves,
            is_fabric,
            salts: (0..n_nodes as u32)
                .map(|s| ecmp_salt(s, ctx.ecmp_salt))
                .collect(),
            to_metric: vec![0; cells],
            to_stamp: vec![0; cells],
            from_metric: vec![0; cells],
            from_stamp: vec![0; cells],
            from_fed: vec![0; cells],
            from_flags: vec![0; cells],
            fb_rr: vec![0; n_leaves * n_leaves],
            fl: FlowletTable::new(
                n_leaves,
                self.flowlet_table_size as usize,
                t_fl,
                Expiry::AgeBit,
            ),
            rng: Rng::new(ctx.seed, stream::SCHEME),
        }
    }
}

const NONE: u32 = u32::MAX;
const NONE16: u16 = u16::MAX;
/// Congestion-From-Leaf entry flags.
const SET: u8 = 1;
const CHANGED: u8 = 2;
/// Fed back at least once (`from_fed` is meaningful).
const FED: u8 = 4;

pub struct Conga {
    q_bits: u8,
    aging: Time,
    local_only: bool,
    /// Node -> leaf index (NONE for hosts and switches without hosts).
    leaf_of: Vec<u32>,
    /// Host -> leaf index of its ToR.
    host_leaf: Vec<u32>,
    /// Directed link -> index among its (leaf) source's uplinks (NONE16 otherwise).
    uplink_idx: Vec<u16>,
    n_up: Vec<u16>,
    /// Row stride of the congestion tables (most uplinks of any leaf).
    u_max: usize,
    n_leaves: usize,
    is_fabric: Vec<bool>,
    salts: Vec<u64>,
    /// Congestion-To-Leaf at leaf s: [(s * L + dst leaf) * U + uplink of s].
    to_metric: Vec<u8>,
    to_stamp: Vec<Time>,
    /// Congestion-From-Leaf at leaf d: [(d * L + src leaf) * U + LBTag of src].
    from_metric: Vec<u8>,
    from_stamp: Vec<Time>,
    /// Value last fed back (meaningful once fed).
    from_fed: Vec<u8>,
    from_flags: Vec<u8>,
    /// Round-robin pointer of the feedback from leaf s to leaf m: [s * L + m].
    fb_rr: Vec<u16>,
    /// One row per leaf. Its counters (decisions on a flowlet's first packet, and those that
    /// changed the cached port) say how much room the traffic leaves for rebalancing (§2.6).
    fl: FlowletTable,
    rng: Rng,
}

/// Staircase aging: `m` loses one level per `aging / 2^q` since `stamp`.
#[inline]
fn aged(m: u8, stamp: Time, now: Time, aging: Time, q: u8) -> u8 {
    if m == 0 {
        return 0;
    }
    let age = now.saturating_sub(stamp) as u128;
    let steps = age * (1u128 << q) / aging as u128;
    if steps >= m as u128 {
        0
    } else {
        m - steps as u8
    }
}

impl Conga {
    #[inline]
    fn cell(&self, a: u32, b: u32, u: usize) -> usize {
        (a as usize * self.n_leaves + b as usize) * self.u_max + u
    }
    #[inline]
    fn metric(&self, v: &mut LbView, l: u32) -> u8 {
        let p = &mut v.ports[l as usize];
        p.dre.metric(v.now, v.dre, p.rate_bps, self.q_bits)
    }
    /// The remote metric of uplink `u` of leaf `s` toward leaf `d`, aged to `now`.
    #[inline]
    fn remote(&self, s: u32, d: u32, u: usize, now: Time) -> u8 {
        let i = self.cell(s, d, u);
        aged(
            self.to_metric[i],
            self.to_stamp[i],
            now,
            self.aging,
            self.q_bits,
        )
    }
    /// The source-leaf decision (§3.5) for a new flowlet of `pkt` at leaf `s` toward leaf `d`.
    fn decide(
        &mut self,
        v: &mut LbView,
        s: u32,
        d: u32,
        cands: &[u32],
        cached: Option<u32>,
    ) -> u32 {
        let cost = |me: &Self, v: &mut LbView, c: u32| -> u8 {
            let local = me.metric(v, c);
            let u = me.uplink_idx[c as usize] as usize;
            if me.local_only || u == NONE16 as usize {
                local
            } else {
                local.max(me.remote(s, d, u, v.now))
            }
        };
        let mut best = u8::MAX;
        let mut ties = 0u64;
        let mut first = cands[0];
        let mut cached_cost = None;
        for &c in cands {
            let x = cost(self, v, c);
            if Some(c) == cached {
                cached_cost = Some(x);
            }
            if x < best {
                best = x;
                ties = 1;
                first = c;
            } else if x == best {
                ties += 1;
            }
        }
        if cached_cost == Some(best) {
            return cached.unwrap();
        }
        if ties == 1 {
            return first;
        }
        let mut r = self.rng.below(ties);
        for &c in cands {
            if cost(self, v, c) == best {
                if r == 0 {
                    return c;
                }
                r -= 1;
            }
        }
        first
    }

    /// Flowlet table lookup and update (Algorithm 2) at source leaf `s`.
    fn flowlet(&mut self, v: &mut LbView, s: u32, pkt: &Packet, cands: &[u32]) -> u32 {
        let slot = self.fl.slot(s as usize, pkt);
        let found = self.fl.lookup(slot, v.now, cands);
        let out = match found {
            Lookup::Active(port) => port,
            Lookup::New(cached) => {
                let d = self.host_leaf[pkt.dst as usize];
                self.decide(v, s, d, cands, cached)
            }
        };
        self.fl.record(slot, v.now, out, found);
        out
    }

    /// Piggyback one Congestion-From-Leaf[m] entry of leaf `s` on `pkt`.
    fn piggyback(&mut self, s: u32, m: u32, now: Time, pkt: &mut Packet) {
        let n = self.n_up[m as usize] as usize;
        let rr_i = s as usize * self.n_leaves + m as usize;
        let start = self.fb_rr[rr_i] as usize;
        let base = self.cell(s, m, 0);
        let mut pick = NONE16 as usize;
        let mut any = NONE16 as usize;
        for i in 0..n {
            let j = if start + i >= n {
                start + i - n
            } else {
                start + i
            };
            let f = self.from_flags[base + j];
            if f & CHANGED != 0 {
                pick = j;
                break;
            }
            if f & SET != 0 && any == NONE16 as usize {
                any = j;
            }
        }
        if pick == NONE16 as usize {
            pick = any;
        }
        if pick == NONE16 as usize {
            pkt.overlay.fb_valid = false;
            return;
        }
        let i = base + pick;
        let raw = self.from_metric[i];
        pkt.overlay.fb_valid = true;
        pkt.overlay.fb_lbtag = pick as u8;
        pkt.overlay.fb_metric = aged(raw, self.from_stamp[i], now, self.aging, self.q_bits);
        self.from_fed[i] = raw;
        self.from_flags[i] = (self.from_flags[i] & !CHANGED) | FED;
        self.fb_rr[rr_i] = if pick + 1 >= n { 0 } else { pick as u16 + 1 };
    }
}

impl Balancer for Conga {
    fn choose(&mut self, v: &mut LbView, sw: u32, pkt: &mut Packet, cands: &[u32]) -> u32 {
        let s = self.leaf_of[sw as usize];
        if s != NONE
            && s == self.host_leaf[pkt.src as usize]
            && cands.iter().all(|&c| self.uplink_idx[c as usize] != NONE16)
        {
            self.flowlet(v, s, pkt, cands)
        } else {
            ecmp_pick(pkt, self.salts[sw as usize], cands)
        }
    }

    fn reads_dre(&self) -> bool {
        true
    }
    fn switch_hooks(&self, g: &Graph, l: u32) -> u8 {
        // The hooks act on overlay packets only, which exist on fabric links alone (the source
        // leaf adds the overlay as the packet leaves it): departures onto fabric links, and
        // arrivals over them at a leaf (the destination leaf's part).
        if !self.is_fabric[l as usize] {
            return 0;
        }
        let to_leaf = self.leaf_of[g.links[l as usize].to as usize] != NONE;
        hooks::DEPARTURE | if to_leaf { hooks::ARRIVAL } else { 0 }
    }

    fn overlay(&self) -> OverlayMode {
        OverlayMode::Leaf
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.fl.counters()
    }

    fn on_arrival(&mut self, v: &mut LbView, sw: u32, _in_link: u32, pkt: &mut Packet) {
        if !pkt.is(flags::OVERLAY) {
            return;
        }
        let d = self.leaf_of[sw as usize];
        if d == NONE || d != self.host_leaf[pkt.dst as usize] {
            return;
        }
        // Destination leaf: store the path metric, take the feedback.
        let s = pkt.overlay.src_tor as u32;
        if s as usize >= self.n_leaves {
            return;
        }
        let o = pkt.overlay;
        if (o.lbtag as u16) < self.n_up[s as usize] {
            let i = self.cell(d, s, o.lbtag as usize);
            self.from_metric[i] = o.ce;
            self.from_stamp[i] = v.now;
            // Changed = differs from the value last fed back (or never fed back).
            let f = self.from_flags[i];
            let changed = f & FED == 0 || self.from_fed[i] != o.ce;
            self.from_flags[i] = if changed {
                f | SET | CHANGED
            } else {
                (f | SET) & !CHANGED
            };
        }
        if o.fb_valid && (o.fb_lbtag as u16) < self.n_up[d as usize] {
            let i = self.cell(d, s, o.fb_lbtag as usize);
            self.to_metric[i] = o.fb_metric;
            self.to_stamp[i] = v.now;
        }
    }

    fn on_departure(&mut self, v: &mut LbView, sw: u32, out_link: u32, pkt: &mut Packet) {
        if !pkt.is(flags::OVERLAY) || !self.is_fabric[out_link as usize] {
            return;
        }
        let s = self.leaf_of[sw as usize];
        let m = self.metric(v, out_link);
        if s != NONE && s == self.host_leaf[pkt.src as usize] {
            // Entering the fabric at the source leaf.
            let u = self.uplink_idx[out_link as usize];
            pkt.overlay.lbtag = u as u8;
            pkt.overlay.ce = m;
            pkt.overlay.src_tor = s as u16;
            let dl = self.host_leaf[pkt.dst as usize];
            self.piggyback(s, dl, v.now, pkt);
        } else {
            pkt.overlay.ce = pkt.overlay.ce.max(m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::testutil::Fx;
    use crate::lb::SchemeConfig;

    const US: u64 = PS_PER_US;
    /// Bytes of one metric level on a 40 Gbps port with τ = 160 µs (C·τ / 8 = 100 kB).
    const LEVEL: u32 = 100_000;

    fn fx() -> Fx {
        Fx::new()
    }

    impl Fx {
        /// L0's uplinks in LBTag order.
        fn ups(&self) -> Vec<u32> {
            ["L0->S0#0", "L0->S0#1", "L0->S1#0", "L0->S1#1"]
                .iter()
                .map(|s| self.link(s))
                .collect()
        }
        /// Make the DRE metric of `l` equal `m` at time `t` (within the same T_dre tick).
        fn set_metric(&mut self, l: u32, m: u8, t: Time) {
            let p = self.dre;
            let port = &mut self.ports[l as usize];
            port.dre = Default::default();
            if m > 0 {
                port.dre.add(t, m as u32 * LEVEL + LEVEL / 2, &p);
            }
            assert_eq!(port.dre.metric(t, &p, port.rate_bps, 3), m);
        }
        fn conga(&self, variant: CongaVariant, seed: u64) -> Conga {
            CongaConfig::default().build(&self.ctx(seed), variant)
        }
    }

    /// Host H0 (under L0) to H2 (under L1); `sport` tells flows apart.
    fn pkt(sport: u16) -> Packet {
        Packet {
            src: 0,
            dst: 2,
            sport,
            dport: 80,
            size: 1518,
            flags: flags::OVERLAY,
            ..Default::default()
        }
    }
    fn rev(sport: u16) -> Packet {
        Packet {
            src: 2,
            dst: 0,
            sport: 80,
            dport: sport,
            size: 1518,
            flags: flags::OVERLAY,
            ..Default::default()
        }
    }

    #[test]
    fn ce_update_table() {
        // (metric of the source uplink, of the spine's egress port) -> CE at the destination,
        // and the Congestion-From-Leaf entry it leaves there.
        let cases = [
            (0u8, 0u8, 0u8),
            (3, 0, 3),
            (0, 5, 5),
            (2, 6, 6),
            (7, 1, 7),
            (4, 4, 4),
        ];
        for (up_m, sp_m, want) in cases {
            let mut f = fx();
            let mut c = f.conga(CongaVariant::Conga, 1);
            let t = 100 * US;
            let up = f.link("L0->S1#1");
            let down = f.link("S1->L1#0");
            f.set_metric(up, up_m, t);
            f.set_metric(down, sp_m, t);
            let (l0, s1, l1) = (f.node("L0"), f.node("S1"), f.node("L1"));
            let mut p = pkt(1);
            p.overlay.ce = 6; // garbage from a previous life is reset at the source
            c.on_departure(&mut f.view(t), l0, up, &mut p);
            assert_eq!(
                (p.overlay.lbtag, p.overlay.ce, p.overlay.src_tor),
                (3, up_m, 0)
            );
            c.on_arrival(&mut f.view(t), s1, up, &mut p);
            c.on_departure(&mut f.view(t), s1, down, &mut p);
            assert_eq!(p.overlay.ce, want, "up {up_m} spine {sp_m}");
            c.on_arrival(&mut f.view(t), l1, down, &mut p);
            let i = c.cell(1, 0, 3);
            assert_eq!((c.from_metric[i], c.from_flags[i]), (want, SET | CHANGED));
            // A host-facing port is not a fabric hop: CE is left alone.
            let mut q = p;
            let hl = f.link("L1->H2");
            c.on_departure(&mut f.view(t), l1, hl, &mut q);
            assert_eq!(q.overlay.ce, want);
        }
    }

    #[test]
    fn packets_without_overlay_are_untouched() {
        let mut f = fx();
        let mut c = f.conga(CongaVariant::Conga, 1);
        let up = f.link("L0->S0#0");
        f.set_metric(up, 5, 0);
        let mut p = pkt(1);
        p.flags = 0;
        let before = p;
        let l0 = f.node("L0");
        c.on_departure(&mut f.view(0), l0, up, &mut p);
        let (l1, dl) = (f.node("L1"), f.link("S0->L1#0"));
        c.on_arrival(&mut f.view(0), l1, dl, &mut p);
        assert_eq!(p.overlay, before.overlay);
        assert!(c.from_flags.iter().all(|&x| x == 0));
    }

    #[test]
    fn feedback_round_robin_prefers_changed() {
        // L1 holds Congestion-From-Leaf[L0] for L0's 4 LBTags; packets L1 -> L0 carry it.
        let mut f = fx();
        let mut c = f.conga(CongaVariant::Conga, 1);
        let (l1, l0) = (f.node("L1"), f.node("L0"));
        let out = f.link("L1->S0#0");
        let t = 50 * US;
        let send = |c: &mut Conga, f: &mut Fx| {
            let mut p = rev(1);
            c.on_departure(&mut f.view(t), l1, out, &mut p);
            p.overlay
                .fb_valid
                .then_some((p.overlay.fb_lbtag, p.overlay.fb_metric))
        };
        let arrive = |c: &mut Conga, f: &mut Fx, tag: u8, ce: u8| {
            let mut p = pkt(1);
            p.overlay = crate::net::packet::Overlay {
                lbtag: tag,
                ce,
                src_tor: 0,
                ..Default::default()
            };
            let dl = f.link("S0->L1#0");
            c.on_arrival(&mut f.view(t), l1, dl, &mut p);
        };
        // Nothing known yet: no feedback.
        assert_eq!(send(&mut c, &mut f), None);
        // Steps: (arrivals (tag, ce) before sending, expected feedback).
        type Step = (&'static [(u8, u8)], Option<(u8, u8)>);
        let steps: &[Step] = &[
            (&[(2, 5)], Some((2, 5))),         // the only entry
            (&[], Some((2, 5))),               // unchanged entries still go round robin
            (&[(0, 1), (3, 4)], Some((3, 4))), // pointer is at 3 (after 2): changed 3 first
            (&[], Some((0, 1))),               // then the other changed one, wrapping
            (&[], Some((2, 5))),               // nothing changed: round robin over known tags
            (&[(2, 5)], Some((3, 4))),         // same value as last fed back is not a change
            (&[(0, 1), (2, 6)], Some((2, 6))), // 2 changed (5 -> 6); 0 did not (1 -> 1)
            (&[(3, 2), (3, 4)], Some((3, 4))), // 3 went 4 -> 2 -> 4: back to the fed value,
            (&[], Some((0, 1))),               //   so it is only sent in its round-robin turn
            (&[], Some((2, 6))),
            (&[(1, 3)], Some((1, 3))), // a new tag is a change: out of turn
            (&[], Some((2, 6))),       //   and the round robin continues after it
        ];
        for (k, (arr, want)) in steps.iter().enumerate() {
            for &(tag, ce) in arr.iter() {
                arrive(&mut c, &mut f, tag, ce);
            }
            assert_eq!(send(&mut c, &mut f), *want, "step {k}");
        }
        // Feedback is for the destination leaf of the packet: toward L0 only.
        let _ = l0;
    }

    #[test]
    fn feedback_is_taken_into_congestion_to_leaf() {
        let mut f = fx();
        let mut c = f.conga(CongaVariant::Conga, 1);
        let l0 = f.node("L0");
        let dl = f.link("S1->L0#0");
        let mut p = rev(1);
        p.overlay = crate::net::packet::Overlay {
            lbtag: 0,
            ce: 0,
            src_tor: 1,
            fb_valid: true,
            fb_lbtag: 2,
            fb_metric: 6,
            ..Default::default()
        };
        c.on_arrival(&mut f.view(300 * US), l0, dl, &mut p);
        assert_eq!(c.remote(0, 1, 2, 300 * US), 6);
        assert_eq!(c.remote(0, 1, 1, 300 * US), 0);
        // fb_valid = false carries nothing.
        p.overlay.fb_valid = false;
        p.overlay.fb_lbtag = 1;
        c.on_arrival(&mut f.view(300 * US), l0, dl, &mut p);
        assert_eq!(c.remote(0, 1, 1, 300 * US), 0);
    }

    #[test]
    fn metric_aging_table() {
        // A = 10 ms, Q = 3: one level per 1.25 ms of staleness; 0 by 10 ms whatever the value.
        let a = 10 * PS_PER_MS;
        let cases = [
            (7u8, 0u64, 7u8),
            (7, 1_249, 7),
            (7, 1_250, 6),
            (7, 2_500, 5),
            (7, 8_749, 1),
            (7, 8_750, 0),
            (3, 3_749, 1),
            (3, 3_750, 0),
            (1, 1_249, 1),
            (1, 1_250, 0),
            (0, 0, 0),
            (7, 10_000, 0),
            (7, 1_000_000_000, 0),
        ];
        for (m, age_us, want) in cases {
            let t0 = 5 * PS_PER_MS;
            assert_eq!(
                aged(m, t0, t0 + age_us * US, a, 3),
                want,
                "m={m} age={age_us}us"
            );
        }
        // Q = 1: two steps of A/2.
        assert_eq!(aged(1, 0, 4_999 * US, a, 1), 1);
        assert_eq!(aged(1, 0, 5_000 * US, a, 1), 0);
        // Through the scheme: a stale remote metric stops repelling flowlets.
        let mut f = fx();
        let mut c = f.conga(CongaVariant::Conga, 1);
        let i = c.cell(0, 1, 0);
        c.to_metric[i] = 5;
        c.to_stamp[i] = 0;
        assert_eq!(c.remote(0, 1, 0, 3 * PS_PER_MS), 3);
        assert_eq!(c.remote(0, 1, 0, 10 * PS_PER_MS), 0);
        // The Congestion-From-Leaf side is fed back aged too.
        let j = c.cell(1, 0, 1);
        c.from_metric[j] = 6;
        c.from_stamp[j] = 0;
        c.from_flags[j] = SET | CHANGED;
        let mut p = rev(1);
        let (l1, out) = (f.node("L1"), f.link("L1->S0#0"));
        c.on_departure(&mut f.view(5 * PS_PER_MS), l1, out, &mut p);
        assert_eq!(
            (p.overlay.fb_valid, p.overlay.fb_lbtag, p.overlay.fb_metric),
            (true, 1, 2)
        );
    }

    /// Send one packet of flow `sport` from L0 at `t`; returns the chosen uplink's LBTag.
    fn send(c: &mut Conga, f: &mut Fx, sport: u16, t: Time) -> usize {
        let l0 = f.node("L0");
        let cands = f.cands(l0, 2);
        let mut p = pkt(sport);
        let out = c.choose(&mut f.view(t), l0, &mut p, &cands);
        f.ups().iter().position(|&u| u == out).unwrap()
    }

    #[test]
    fn flowlet_expiry_between_tfl_and_2tfl() {
        // T_fl = 500 us. (time of the first packet, gap) -> does the second packet start a new
        // flowlet? Ticks at multiples of 500 us; tick k+1 sets the age bit, tick k+2 expires.
        let cases = [
            (0u64, 499u64, false),
            (0, 999, false),    // tick 500 ages, tick 1000 not reached
            (0, 1_000, true),   // tick 1000 expires (tick before packet at the same instant)
            (499, 500, false),  // t = 999: crossed only tick 500
            (499, 501, true),   // gap just over T_fl, but crossed ticks 500 and 1000
            (500, 999, false),  // gap just under 2·T_fl, crossed only tick 1000
            (499, 499, false),  // gap below T_fl never expires
            (250, 749, false),  // 999
            (250, 750, true),   // 1000
            (100, 1_500, true), // 2·T_fl and more always expires
            (1, 1_998, true),
            (0, 2_000, true),
        ];
        for (t1, gap, new) in cases {
            let mut f = fx();
            let mut c = f.conga(CongaVariant::Conga, 7);
            let ups = f.ups();
            // Make uplink 1 the unique best for the first packet...
            for (i, &u) in ups.iter().enumerate() {
                f.set_metric(u, if i == 1 { 0 } else { 3 }, t1 * US);
            }
            assert_eq!(send(&mut c, &mut f, 9, t1 * US), 1);
            // ... and uplink 2 the unique best for the second.
            let t2 = (t1 + gap) * US;
            for (i, &u) in ups.iter().enumerate() {
                f.set_metric(u, if i == 2 { 0 } else { 3 }, t2);
            }
            let got = send(&mut c, &mut f, 9, t2);
            assert_eq!(got == 2, new, "t1={t1}us gap={gap}us got uplink {got}");
            // The summary counters: one decision per flowlet, a move when it left uplink 1.
            let want = vec![("flowlets", 1 + new as u64), ("flowlet_moves", new as u64)];
            assert_eq!(c.counters(), want, "t1={t1}us gap={gap}us");
        }
    }

    #[test]
    fn every_packet_refreshes_the_flowlet() {
        // Packets every 400 us keep a flowlet alive forever even though each tick interval
        // is crossed (Algorithm 2: a packet clears the age bit).
        let mut f = fx();
        let mut c = f.conga(CongaVariant::Conga, 3);
        let ups = f.ups();
        for (i, &u) in ups.iter().enumerate() {
            f.set_metric(u, if i == 3 { 0 } else { 2 }, 0);
        }
        assert_eq!(send(&mut c, &mut f, 5, 0), 3);
        for k in 1..20u64 {
            let t = k * 400 * US;
            for (i, &u) in ups.iter().enumerate() {
                f.set_metric(u, if i == 0 { 0 } else { 2 }, t);
            }
            assert_eq!(send(&mut c, &mut f, 5, t), 3, "k={k}");
        }
    }

    #[test]
    fn conga_flow_uses_13ms() {
        let mut f = fx();
        let mut c = f.conga(CongaVariant::Flow, 3);
        assert_eq!(c.fl.t_fl(), 13 * PS_PER_MS);
        let ups = f.ups();
        for (i, &u) in ups.iter().enumerate() {
            f.set_metric(u, if i == 0 { 0 } else { 2 }, 0);
        }
        assert_eq!(send(&mut c, &mut f, 5, 0), 0);
        for (i, &u) in ups.iter().enumerate() {
            f.set_metric(u, if i == 1 { 0 } else { 2 }, 12 * PS_PER_MS);
        }
        assert_eq!(send(&mut c, &mut f, 5, 12 * PS_PER_MS), 0);
        let t = 12 * PS_PER_MS + 26 * PS_PER_MS;
        for (i, &u) in ups.iter().enumerate() {
            f.set_metric(u, if i == 1 { 0 } else { 2 }, t);
        }
        assert_eq!(send(&mut c, &mut f, 5, t), 1);
    }

    /// Set L0's local uplink metrics and its Congestion-To-Leaf[L1] row, at time `t`.
    fn set_state(c: &mut Conga, f: &mut Fx, local: [u8; 4], remote: [u8; 4], t: Time) {
        for (i, &u) in f.ups().iter().enumerate() {
            f.set_metric(u, local[i], t);
            let j = c.cell(0, 1, i);
            c.to_metric[j] = remote[i];
            c.to_stamp[j] = t;
        }
    }

    /// The set of uplinks new flowlets pick under (local, remote), over many flows.
    fn picks(variant: CongaVariant, local: [u8; 4], remote: [u8; 4]) -> Vec<usize> {
        let mut f = fx();
        let mut c = f.conga(variant, 11);
        set_state(&mut c, &mut f, local, remote, 0);
        let mut seen = vec![];
        for sport in 0..400u16 {
            let u = send(&mut c, &mut f, sport, 0);
            if !seen.contains(&u) {
                seen.push(u);
            }
        }
        seen.sort_unstable();
        seen
    }

    #[test]
    fn decision_table() {
        // (local metrics, remote metrics) -> the uplinks new flowlets may take (all of them
        // must be taken when tied: the random tie-break covers every minimum).
        type Case = ([u8; 4], [u8; 4], &'static [usize], &'static [usize]);
        // (local, remote, conga's picks, local's picks)
        let cases: &[Case] = &[
            ([0, 0, 0, 0], [0, 0, 0, 0], &[0, 1, 2, 3], &[0, 1, 2, 3]),
            ([1, 0, 0, 0], [0, 0, 0, 0], &[1, 2, 3], &[1, 2, 3]),
            ([0, 0, 0, 0], [5, 5, 1, 5], &[2], &[0, 1, 2, 3]),
            ([3, 0, 0, 0], [0, 4, 4, 4], &[0], &[1, 2, 3]), // max(3,0)=3 < 4
            ([2, 2, 0, 0], [0, 0, 6, 6], &[0, 1], &[2, 3]), // the §2.4 trap for local
            ([7, 6, 5, 4], [0, 1, 2, 3], &[3], &[3]),
            ([1, 4, 2, 3], [4, 1, 3, 2], &[2, 3], &[0]), // costs 4,4,3,3
            ([0, 0, 0, 0], [7, 7, 7, 7], &[0, 1, 2, 3], &[0, 1, 2, 3]),
        ];
        for &(local, remote, want_conga, want_local) in cases {
            assert_eq!(
                picks(CongaVariant::Conga, local, remote),
                want_conga,
                "conga local={local:?} remote={remote:?}"
            );
            assert_eq!(
                picks(CongaVariant::Flow, local, remote),
                want_conga,
                "conga-flow local={local:?} remote={remote:?}"
            );
            assert_eq!(
                picks(CongaVariant::Local, local, remote),
                want_local,
                "local local={local:?} remote={remote:?}"
            );
        }
    }

    #[test]
    fn random_tie_break_is_roughly_uniform() {
        let mut f = fx();
        let mut c = f.conga(CongaVariant::Conga, 5);
        set_state(&mut c, &mut f, [0, 3, 0, 0], [0, 0, 0, 3], 0);
        let mut n = [0u32; 4];
        for sport in 0..3000u16 {
            n[send(&mut c, &mut f, sport, 0)] += 1;
        }
        assert_eq!((n[1], n[3]), (0, 0), "{n:?}");
        assert!(n[0] > 800 && n[2] > 800, "{n:?}");
    }

    #[test]
    fn cached_port_is_kept_unless_strictly_worse() {
        // (cached uplink, costs after expiry as (local, remote)) -> chosen uplink(s).
        type Case = (usize, [u8; 4], [u8; 4], &'static [usize]);
        let cases: &[Case] = &[
            (2, [1, 1, 1, 1], [0, 0, 0, 0], &[2]),       // all tied: stay
            (2, [1, 1, 1, 1], [0, 0, 1, 2], &[2]),       // tied with 0, 1: stay
            (2, [1, 1, 1, 1], [0, 0, 2, 0], &[0, 1, 3]), // strictly better elsewhere: move
            (0, [4, 3, 3, 3], [0, 0, 0, 0], &[1, 2, 3]),
            (3, [0, 0, 0, 5], [0, 0, 0, 0], &[0, 1, 2]),
            (3, [0, 0, 0, 0], [2, 2, 2, 2], &[3]),
        ];
        for &(cached, local, remote, want) in cases {
            let mut seen = vec![];
            for seed in 0..60u64 {
                let mut f = fx();
                let mut c = f.conga(CongaVariant::Conga, seed);
                // First flowlet forced onto `cached`.
                let mut first = [5u8; 4];
                first[cached] = 0;
                set_state(&mut c, &mut f, first, [0; 4], 0);
                assert_eq!(send(&mut c, &mut f, 42, 0), cached);
                // Expired (2 ms later), decide again.
                let t = 2 * PS_PER_MS;
                set_state(&mut c, &mut f, local, remote, t);
                let u = send(&mut c, &mut f, 42, t);
                if !seen.contains(&u) {
                    seen.push(u);
                }
            }
            seen.sort_unstable();
            assert_eq!(
                seen, want,
                "cached={cached} local={local:?} remote={remote:?}"
            );
        }
    }

    #[test]
    fn valid_entry_with_a_vanished_port_is_decided_again() {
        let mut f = fx();
        let mut c = f.conga(CongaVariant::Conga, 1);
        set_state(&mut c, &mut f, [5, 5, 0, 5], [0; 4], 0);
        assert_eq!(send(&mut c, &mut f, 1, 0), 2);
        // Uplink 2 is no longer a candidate (failed): the packet goes elsewhere at once.
        let l0 = f.node("L0");
        let ups = f.ups();
        let cands = [ups[0], ups[1], ups[3]];
        let out = c.choose(&mut f.view(US), l0, &mut pkt(1), &cands);
        assert!(cands.contains(&out));
    }

    #[test]
    fn spines_and_non_source_switches_use_ecmp() {
        let f = fx();
        let mut c = f.conga(CongaVariant::Conga, 1);
        let mut f = f;
        let s1 = f.node("S1");
        let cands = f.cands(s1, 2);
        assert_eq!(cands.len(), 2);
        let mut hit = [false; 2];
        for sport in 0..64u16 {
            let mut p = pkt(sport);
            let want = ecmp_pick(&p, ecmp_salt(s1, true), &cands);
            let got = c.choose(&mut f.view(0), s1, &mut p, &cands);
            assert_eq!(got, want);
            hit[cands.iter().position(|&x| x == got).unwrap()] = true;
        }
        assert_eq!(hit, [true, true], "both parallel links are used");
        // Repeatable: a flow keeps its spine link.
        let mut p = pkt(3);
        let a = c.choose(&mut f.view(0), s1, &mut p, &cands);
        let b = c.choose(&mut f.view(5 * PS_PER_MS), s1, &mut p, &cands);
        assert_eq!(a, b);
    }

    #[test]
    fn variants_parse_validate_and_default() {
        let cases = [
            (r#"{"name":"conga"}"#, "conga", 500 * US),
            (r#"{"name":"conga-flow"}"#, "conga-flow", 13 * PS_PER_MS),
            (r#"{"name":"local"}"#, "local", 500 * US),
            (
                r#"{"name":"conga","flowlet_timeout":"300us"}"#,
                "conga",
                300 * US,
            ),
            (
                r#"{"name":"conga-flow","flowlet_timeout":"1ms"}"#,
                "conga-flow",
                PS_PER_MS,
            ),
        ];
        let f = fx();
        for (json, name, tfl) in cases {
            let s: SchemeConfig = serde_json::from_str(json).unwrap();
            s.validate("scheme").unwrap();
            assert_eq!(s.name(), name);
            let (cfg, var) = match &s {
                SchemeConfig::Conga(c) => (c, CongaVariant::Conga),
                SchemeConfig::CongaFlow(c) => (c, CongaVariant::Flow),
                SchemeConfig::Local(c) => (c, CongaVariant::Local),
                _ => unreachable!(),
            };
            let b = cfg.build(&f.ctx(1), var);
            assert_eq!(
                (b.fl.t_fl(), b.q_bits, b.fl.size(), b.aging),
                (tfl, 3, 65_536, 10 * PS_PER_MS),
                "{json}"
            );
            let bx = s.build(&f.ctx(1)).lb;
            assert_eq!(bx.overlay(), OverlayMode::Leaf);
            assert!((0..f.g.links.len() as u32).any(|l| bx.switch_hooks(&f.g, l) == hooks::BOTH));
        }
        let names = SchemeConfig::names();
        for n in ["conga", "conga-flow", "local"] {
            assert!(names.iter().any(|x| x == n), "{names:?}");
        }
        let bad = [
            (r#"{"name":"conga","q_bits":0}"#, "q_bits"),
            (r#"{"name":"conga","q_bits":9}"#, "q_bits"),
            (
                r#"{"name":"local","flowlet_timeout":"0us"}"#,
                "flowlet_timeout",
            ),
            (
                r#"{"name":"conga","flowlet_table_size":0}"#,
                "flowlet_table_size",
            ),
            (r#"{"name":"conga","metric_aging":"0ms"}"#, "metric_aging"),
        ];
        for (json, field) in bad {
            let s: SchemeConfig = serde_json::from_str(json).unwrap();
            let e = s.validate("scheme").unwrap_err().to_string();
            assert!(e.contains(field), "{json}: {e}");
        }
        assert!(serde_json::from_str::<SchemeConfig>(r#"{"name":"conga","tau":"1us"}"#).is_err());
    }

    #[test]
    fn tables_are_sized_by_leaves_and_uplinks() {
        let f = fx();
        let c = f.conga(CongaVariant::Conga, 1);
        assert_eq!((c.n_leaves, c.u_max), (2, 4));
        assert_eq!(c.n_up, vec![4, 4]);
        assert_eq!(c.to_metric.len(), 2 * 2 * 4);
        assert_eq!(c.fl.len(), 2 * 65_536);
        for (i, &u) in f.ups().iter().enumerate() {
            assert_eq!(c.uplink_idx[u as usize] as usize, i);
        }
        assert_eq!(c.uplink_idx[f.link("L0->H0") as usize], NONE16);
        assert_eq!(c.uplink_idx[f.link("S0->L0#0") as usize], NONE16);
    }
}
