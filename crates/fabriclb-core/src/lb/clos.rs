//! What the schemes that choose a connection's path at its handshake share (`expeditus`,
//! `expeditus-socc`, `path-oracle`; docs/EXPEDITUS.md): the fabric seen by tier and position,
//! per-switch flow entries that pin a connection's path, the vectors a SYN or SYN-ACK carries,
//! link-load meters, and the least-cost choice with random ties.
//!
//! Packet fields (in the overlay record, which these schemes use without encapsulating:
//! the bytes they stand for are added to the packet's size where the paper puts them):
//! `aux_flags` ([`mark`]), `stamp` and `aux[0]` (a stamp: occupancy and stamping switch),
//! `aux[1]` (the slot of a handshake header in [`Headers`], or the oracle's path label).

use super::LbView;
use crate::error::Error;
use crate::net::dre::{Dre, DreParams};
use crate::net::packet::Packet;
use crate::net::topology::{Graph, Role, TopologyConfig};
use crate::rng::{hash64, Rng};
use crate::units::Time;

/// Bits of `overlay.aux_flags`.
pub mod mark {
    /// The packet carries a congestion stamp (`overlay.stamp`, stamping switch in `aux[0]`).
    pub const STAMP: u8 = 1;
    /// The packet carries a handshake header (its slot in `aux[1]`).
    pub const HDR: u8 = 2;
    /// The packet carries a path label (`aux[1]`).
    pub const LABEL: u8 = 4;
}

pub const NONE16: u16 = u16::MAX;

/// Most upstream switches a handshake header can describe (its count field is one byte).
pub const MAX_POSITIONS: usize = 255;

/// Check that `topo` is a fabric these schemes can serve: a leaf-spine with one link per
/// leaf-spine pair, or a fat-tree. Their headers and tables name upstream switches by position
/// (uplink a of every leaf reaches the same spine, or the aggregation switch at position a of
/// its pod, whose core group reaches position a of every pod), which an explicit topology does
/// not define and parallel links break.
pub fn check_topology(topo: &TopologyConfig, scheme: &str) -> Result<(), Error> {
    let needs = "a leaf-spine with links_per_pair = 1 or a fat-tree (its switches name their \
                 upstream neighbours by position, the same at every leaf or pod)";
    match topo {
        TopologyConfig::LeafSpine(c) if c.links_per_pair != 1 => Err(Error::config(
            "topology.links_per_pair",
            format!(
                "{} parallel links per leaf-spine pair: scheme \"{scheme}\" needs {needs}",
                c.links_per_pair
            ),
        )),
        TopologyConfig::LeafSpine(c) if c.spines as usize > MAX_POSITIONS => Err(Error::config(
            "topology.spines",
            format!(
                "{} spines: scheme \"{scheme}\" carries one value per spine in a handshake \
                 header of at most {MAX_POSITIONS}",
                c.spines
            ),
        )),
        TopologyConfig::LeafSpine(_) | TopologyConfig::FatTree(_) => Ok(()),
        TopologyConfig::Explicit(_) => Err(Error::config(
            "topology.kind",
            format!("\"explicit\": scheme \"{scheme}\" needs {needs}"),
        )),
    }
}

/// What the hooks read of a directed link on every packet: the tiers of its two ends and the
/// link back. 8 bytes, where the topology's record is 40 and the tiers a second read: at
/// FT2048 these reads were 58-73% of Expeditus' hooks' samples (docs/BENCHMARKS.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    pub from_tier: u8,
    pub to_tier: u8,
    pub reverse: u32,
}

/// The fabric by tier (hosts 0, leaves / edges 1, spines / aggregation 2, cores 3) and each
/// switch's uplinks (ports to the tier above) in port order: an uplink's position is its
/// index among them.
pub struct Clos {
    tier: Vec<u8>,
    /// Per directed link.
    hops: Vec<Hop>,
    pod: Vec<u32>,
    ups: Vec<Vec<u32>>,
    /// Most uplinks of any switch.
    pub max_ups: usize,
}

impl Clos {
    pub fn new(g: &Graph) -> Clos {
        let tier: Vec<u8> = g
            .nodes
            .iter()
            .map(|n| match n.role {
                Role::Host => 0,
                Role::Leaf => 1,
                Role::Spine => 2,
                Role::Core => 3,
            })
            .collect();
        let ups: Vec<Vec<u32>> = g
            .nodes
            .iter()
            .enumerate()
            .map(|(n, node)| {
                node.ports
                    .iter()
                    .copied()
                    .filter(|&l| tier[n] > 0 && tier[g.links[l as usize].to as usize] > tier[n])
                    .collect()
            })
            .collect();
        let hops = (g.links.iter())
            .map(|d| Hop {
                from_tier: tier[d.from as usize],
                to_tier: tier[d.to as usize],
                reverse: d.reverse,
            })
            .collect();
        Clos {
            max_ups: ups.iter().map(Vec::len).max().unwrap_or(0),
            pod: g.nodes.iter().map(|n| n.pod).collect(),
            tier,
            hops,
            ups,
        }
    }
    /// Directed link `l`'s ends' tiers and its reverse.
    #[inline]
    pub fn hop(&self, l: u32) -> Hop {
        self.hops[l as usize]
    }
    #[inline]
    pub fn tier(&self, n: u32) -> u8 {
        self.tier[n as usize]
    }
    #[inline]
    pub fn pod(&self, n: u32) -> u32 {
        self.pod[n as usize]
    }
    /// Switch `sw`'s uplinks, by position.
    #[inline]
    pub fn ups(&self, sw: u32) -> &[u32] {
        &self.ups[sw as usize]
    }
    /// The uplink of `sw` toward host `toward` with the least `cost(view, position, uplink)`,
    /// ties broken at random (and whether it was a tie); uplinks that do not lead toward the
    /// host are skipped, and `u32::MAX` is no choice either. `costs` is scratch space.
    pub fn pick_uplink(
        &self,
        v: &mut LbView,
        sw: u32,
        toward: u32,
        rng: &mut Rng,
        costs: &mut Vec<u32>,
        mut cost: impl FnMut(&mut LbView, usize, u32) -> u32,
    ) -> Option<(u32, bool)> {
        let routes = v.routes;
        let tor = v.g.host_tor[toward as usize];
        let cands = routes.group(sw, routes.tor_index[tor as usize]);
        costs.clear();
        for (i, &up) in self.ups(sw).iter().enumerate() {
            costs.push(if cands.contains(&up) {
                cost(v, i, up)
            } else {
                u32::MAX
            });
        }
        least(costs, rng).map(|(i, tie)| (self.ups(sw)[i], tie))
    }
    /// Whether hosts `a` and `b` are in different pods of a three-tier fabric (their path
    /// crosses the cores).
    #[inline]
    pub fn inter_pod(&self, g: &Graph, a: u32, b: u32) -> bool {
        let (ta, tb) = (g.host_tor[a as usize], g.host_tor[b as usize]);
        self.pod(ta) != self.pod(tb)
    }
}

/// The key of switch `sw`'s entry for the packets from `src`:`sport` to `dst`:`dport`.
#[inline]
pub fn key(sw: u32, src: u32, dst: u32, sport: u16, dport: u16) -> u128 {
    (sw as u128) << 96
        | (src as u128) << 64
        | (dst as u128) << 32
        | (sport as u128) << 16
        | dport as u128
}

/// The key for `p`'s own direction at `sw`.
#[inline]
pub fn fwd_key(sw: u32, p: &Packet) -> u128 {
    key(sw, p.src, p.dst, p.sport, p.dport)
}

/// The key for the direction opposite to `p` at `sw` (the answer to `p`).
#[inline]
pub fn rev_key(sw: u32, p: &Packet) -> u128 {
    key(sw, p.dst, p.src, p.dport, p.sport)
}

/// A slot of [`FlowPins`]' table: 32 bytes, aligned so that one cache line holds it all.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(32))]
struct Pin {
    key: u128,
    last: Time,
    val: u32,
    used: bool,
}

/// Exact-match flow entries of every switch (SCHEMES.md §2.4): (switch, 5-tuple) -> a value
/// (a port, or a path), with the time of last use. An entry is alive while `now <= last +
/// lifetime`; a hit refreshes it; a dead entry is removed when looked up, and all dead entries
/// whenever the table has doubled since the last sweep (so finished flows do not accumulate).
///
/// An open-addressing table (linear probing, at most half full, deletion by backward shift),
/// not a `HashMap`, so that the slot a key starts at can be prefetched ([`FlowPins::prefetch`]):
/// at FT2048 the lookup that every packet makes at every switch missed the cache
/// (docs/BENCHMARKS.md). Nothing depends on where an entry sits.
pub struct FlowPins {
    slots: Vec<Pin>,
    len: usize,
    lifetime: Time,
    /// A new entry for a key with a live one is ignored (the authors' list: the first match
    /// wins) instead of replacing it.
    keep_first: bool,
    sweep_at: usize,
}

impl FlowPins {
    pub fn new(lifetime: Time, keep_first: bool) -> FlowPins {
        FlowPins {
            slots: vec![Pin::default(); 16],
            len: 0,
            lifetime,
            keep_first,
            sweep_at: 1024,
        }
    }
    #[inline]
    fn alive(&self, p: &Pin, now: Time) -> bool {
        now <= p.last.saturating_add(self.lifetime)
    }
    /// The slot where the search for `k` starts (deterministic: no per-process seed).
    #[inline]
    fn home(&self, k: u128) -> usize {
        // One mix of both halves (the high half spread by an odd multiplier first): a lookup
        // and its prefetch each compute this on every hop with a choice.
        hash64(k as u64 ^ ((k >> 64) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) as usize
            & (self.slots.len() - 1)
    }
    /// `Ok(slot)` holding `k`, or `Err(first free slot)` on its probe path.
    #[inline]
    fn find(&self, k: u128) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(k);
        loop {
            let p = &self.slots[i];
            if !p.used {
                return Err(i);
            }
            if p.key == k {
                return Ok(i);
            }
            i = (i + 1) & mask;
        }
    }
    /// Start loading the slot where a lookup of `k` begins (a hint).
    #[inline]
    pub fn prefetch(&self, k: u128) {
        crate::engine::prefetch(&self.slots[self.home(k)] as *const Pin as *const u8);
    }
    /// The live entry's value for `k`, refreshed to `now`.
    #[inline]
    pub fn lookup(&mut self, k: u128, now: Time) -> Option<u32> {
        let i = self.find(k).ok()?;
        if self.alive(&self.slots[i], now) {
            self.slots[i].last = now;
            Some(self.slots[i].val)
        } else {
            self.remove_at(i);
            None
        }
    }
    /// Empty slot `hole`, moving back the entries after it on the probe run that would no
    /// longer be reachable (those whose home slot is not between the hole and them). Out of
    /// line: rare on the lookup path, which then inlines into its callers.
    #[cold]
    #[inline(never)]
    fn remove_at(&mut self, mut hole: usize) {
        let mask = self.slots.len() - 1;
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            if !self.slots[j].used {
                break;
            }
            let h = self.home(self.slots[j].key);
            let reachable = if hole <= j {
                hole < h && h <= j
            } else {
                hole < h || h <= j
            };
            if !reachable {
                self.slots[hole] = self.slots[j];
                hole = j;
            }
        }
        self.slots[hole].used = false;
        self.len -= 1;
    }
    /// Install `val` for `k` at `now`.
    pub fn install(&mut self, k: u128, val: u32, now: Time) {
        match self.find(k) {
            Ok(i) => {
                if self.keep_first && self.alive(&self.slots[i], now) {
                    return;
                }
                self.slots[i].val = val;
                self.slots[i].last = now;
            }
            Err(i) => {
                self.slots[i] = Pin {
                    key: k,
                    last: now,
                    val,
                    used: true,
                };
                self.len += 1;
                if 2 * self.len > self.slots.len() {
                    self.rebuild(2 * self.slots.len(), None);
                }
            }
        }
        if self.len >= self.sweep_at {
            let size = self.slots.len();
            self.rebuild(size, Some(now));
            self.sweep_at = (2 * self.len).max(1024);
        }
    }
    /// Re-insert into `size` slots every entry, or with `alive_at` only those alive then.
    fn rebuild(&mut self, size: usize, alive_at: Option<Time>) {
        let old = std::mem::replace(&mut self.slots, vec![Pin::default(); size]);
        self.len = 0;
        for p in old {
            if p.used && alive_at.is_none_or(|t| self.alive(&p, t)) {
                let i = self.find(p.key).unwrap_err();
                self.slots[i] = p;
                self.len += 1;
            }
        }
    }
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }
}

/// The vectors that handshake packets carry (one value per upstream position), kept beside
/// the packet record, which has no room for them: a packet holds its slot in `aux[1]`. A slot
/// is released when its header is read and removed; a header lost with its packet keeps its
/// slot (a few bytes per lost SYN or SYN-ACK).
pub struct Headers {
    vals: Vec<u16>,
    stride: usize,
    free: Vec<u32>,
}

impl Headers {
    pub fn new(max_len: usize) -> Headers {
        Headers {
            vals: vec![],
            stride: max_len + 1,
            free: vec![],
        }
    }
    /// Put `v` on `pkt` as a header of `bytes` bytes.
    pub fn attach(&mut self, pkt: &mut Packet, v: &[u16], bytes: u32) {
        pkt.overlay.aux[1] = self.put(v);
        pkt.overlay.aux_flags |= mark::HDR;
        pkt.size += bytes;
    }
    /// Take `pkt`'s header into `out` and its `bytes(values)` bytes off the packet; false when
    /// it has none.
    pub fn detach(
        &mut self,
        pkt: &mut Packet,
        out: &mut Vec<u16>,
        bytes: fn(usize) -> u32,
    ) -> bool {
        if pkt.overlay.aux_flags & mark::HDR == 0 {
            return false;
        }
        let slot = pkt.overlay.aux[1];
        out.clear();
        out.extend_from_slice(self.get(slot));
        self.release(slot);
        pkt.overlay.aux_flags &= !mark::HDR;
        pkt.size -= bytes(out.len());
        true
    }
    pub fn put(&mut self, v: &[u16]) -> u32 {
        debug_assert!(v.len() < self.stride);
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.vals.resize(self.vals.len() + self.stride, 0);
                (self.vals.len() / self.stride - 1) as u32
            }
        };
        let b = slot as usize * self.stride;
        self.vals[b] = v.len() as u16;
        self.vals[b + 1..b + 1 + v.len()].copy_from_slice(v);
        slot
    }
    pub fn get(&self, slot: u32) -> &[u16] {
        let b = slot as usize * self.stride;
        &self.vals[b + 1..b + 1 + self.vals[b] as usize]
    }
    pub fn release(&mut self, slot: u32) {
        self.free.push(slot);
    }
    #[cfg(test)]
    pub fn in_use(&self) -> usize {
        self.vals.len() / self.stride - self.free.len()
    }
}

/// Link-load meters as the Expeditus authors' code keeps them (SCHEMES.md §2.1): per directed
/// link, a DRE of the bytes its source enqueues ("out") and one of the bytes its destination
/// receives ("in"), both multiplied by `keep` every `period`; a link's level is
/// floor(X / (C·τ/8) · levels) with τ = period / (1 − keep), not saturated (stored in a byte).
pub struct LoadMeters {
    p: DreParams,
    levels: f64,
    out: Vec<Dre>,
    inn: Vec<Dre>,
}

impl LoadMeters {
    pub fn new(n_links: usize, period: Time, keep: f64, levels: u8, with_in: bool) -> LoadMeters {
        LoadMeters {
            p: DreParams {
                period_ps: period,
                alpha: 1.0 - keep,
            },
            levels: levels as f64,
            out: vec![Dre::default(); n_links],
            inn: vec![Dre::default(); if with_in { n_links } else { 0 }],
        }
    }
    #[inline]
    pub fn add_out(&mut self, l: u32, now: Time, bytes: u32) {
        self.out[l as usize].add(now, bytes, &self.p);
    }
    #[inline]
    pub fn add_in(&mut self, l: u32, now: Time, bytes: u32) {
        self.inn[l as usize].add(now, bytes, &self.p);
    }
    #[inline]
    fn level(&self, x: f64, rate_bps: u64) -> u8 {
        let c_tau_bytes = rate_bps as f64 / 8.0 * self.p.tau_ps() * 1e-12;
        ((x / c_tau_bytes * self.levels) as u32).min(255) as u8
    }
    /// OutRate of link `l`: the level of the bytes its source enqueued.
    #[inline]
    pub fn out_level(&mut self, l: u32, now: Time, rate_bps: u64) -> u8 {
        let x = self.out[l as usize].value(now, &self.p);
        self.level(x, rate_bps)
    }
    /// InRate of link `l`: the level of the bytes its destination received.
    #[inline]
    pub fn in_level(&mut self, l: u32, now: Time, rate_bps: u64) -> u8 {
        let x = self.inn[l as usize].value(now, &self.p);
        self.level(x, rate_bps)
    }
}

/// Whether output port `l` will accept a packet of `size` bytes now (drop-tail on the port's
/// own buffer; the meters count enqueued bytes, as the authors' device does).
#[inline]
pub fn will_enqueue(v: &mut LbView, l: u32, size: u32) -> bool {
    let p = &mut v.ports[l as usize];
    p.up && p.queue_bytes(v.now) + size as u64 <= p.cap_bytes
}

/// The index of the least of `costs` (`u32::MAX`: not a choice), ties broken uniformly at
/// random with `rng`, and whether it was a tie; None when nothing is a choice.
pub fn least(costs: &[u32], rng: &mut Rng) -> Option<(usize, bool)> {
    let best = *costs.iter().min()?;
    if best == u32::MAX {
        return None;
    }
    let ties = costs.iter().filter(|&&c| c == best).count();
    let mut r = if ties > 1 { rng.below(ties as u64) } else { 0 };
    for (i, &c) in costs.iter().enumerate() {
        if c == best {
            if r == 0 {
                return Some((i, ties > 1));
            }
            r -= 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::testutil::Fx;
    use crate::units::PS_PER_US;

    #[test]
    fn positions_follow_port_order() {
        // k = 4 fat-tree: E0_0's uplinks reach A0_0, A0_1; A0_1's reach cores 2 and 3.
        let f = Fx::fat_tree4();
        let c = Clos::new(&f.g);
        let name = |l: u32| f.g.nodes[f.g.links[l as usize].to as usize].name.clone();
        let e = f.node("E0_0");
        let a = f.node("A0_1");
        assert_eq!(
            c.ups(e).iter().map(|&l| name(l)).collect::<Vec<_>>(),
            ["A0_0", "A0_1"]
        );
        assert_eq!(
            c.ups(a).iter().map(|&l| name(l)).collect::<Vec<_>>(),
            ["C2", "C3"]
        );
        assert_eq!(
            (c.tier(0), c.tier(e), c.tier(a), c.tier(f.node("C0"))),
            (0, 1, 2, 3)
        );
        assert!(c.ups(f.node("C0")).is_empty() && c.ups(0).is_empty());
        assert_eq!(c.max_ups, 2);
        assert!(c.inter_pod(&f.g, 0, 4) && !c.inter_pod(&f.g, 0, 2));
    }

    #[test]
    fn pins_live_for_their_lifetime_after_the_last_use() {
        let us = PS_PER_US;
        // (keep_first, steps: (time us, op, expected)) with op: 'i' install value, 'l' lookup.
        type Step = (u64, char, u32, Option<u32>);
        let cases: &[(bool, &[Step])] = &[
            // Lifetime 100 us: alive at last + 100, gone after; a hit refreshes.
            (
                false,
                &[
                    (0, 'i', 7, None),
                    (100, 'l', 0, Some(7)),
                    (200, 'l', 0, Some(7)),
                    (301, 'l', 0, None),
                    (302, 'l', 0, None),
                ],
            ),
            // A newer entry replaces a live one...
            (
                false,
                &[(0, 'i', 7, None), (10, 'i', 8, None), (20, 'l', 0, Some(8))],
            ),
            // ... unless the first match wins, as long as it lives.
            (
                true,
                &[
                    (0, 'i', 7, None),
                    (10, 'i', 8, None),
                    (20, 'l', 0, Some(7)),
                    (200, 'i', 9, None),
                    (210, 'l', 0, Some(9)),
                ],
            ),
        ];
        for (keep_first, steps) in cases {
            let mut p = FlowPins::new(100 * us, *keep_first);
            let k = key(3, 1, 2, 10, 80);
            for &(t, op, v, want) in steps.iter() {
                match op {
                    'i' => p.install(k, v, t * us),
                    _ => assert_eq!(p.lookup(k, t * us), want, "{keep_first} t={t}"),
                }
            }
            // Another switch, or the other direction, has no entry.
            assert_eq!(p.lookup(key(4, 1, 2, 10, 80), 0), None);
            assert_eq!(p.lookup(key(3, 2, 1, 80, 10), 0), None);
        }
    }

    #[test]
    fn the_table_answers_as_a_map_would() {
        // Against a HashMap with the same lifetime rules: many keys over few slots, so probe
        // runs wrap around the table and lookups of dead entries delete from their middle.
        use std::collections::HashMap;
        for keep_first in [false, true] {
            let mut rng = crate::rng::Rng::new(11, 2);
            let lifetime = 50;
            let mut p = FlowPins::new(lifetime, keep_first);
            let mut m: HashMap<u128, (u32, Time)> = HashMap::new();
            let mut now = 0;
            let mut sweeps = 0;
            for step in 0..200_000u32 {
                now += rng.below(3);
                // Enough keys for the table to pass 1024 entries and be swept.
                let k = key(rng.below(4) as u32, rng.below(2000) as u32, 0, 0, 0);
                let before = p.len();
                if rng.below(2) == 0 {
                    p.install(k, step, now);
                    // An install removes entries only by sweeping (the map keeps dead ones).
                    sweeps += (p.len() < before) as u32;
                    let live = m.get(&k).is_some_and(|&(_, last)| now <= last + lifetime);
                    if !(keep_first && live) {
                        m.insert(k, (step, now));
                    }
                } else {
                    let want = match m.get_mut(&k) {
                        Some((v, last)) if now <= *last + lifetime => {
                            *last = now;
                            Some(*v)
                        }
                        Some(_) => {
                            m.remove(&k);
                            None
                        }
                        None => None,
                    };
                    assert_eq!(p.lookup(k, now), want, "step {step}");
                }
                assert!(2 * p.len() <= p.slots.len());
                if sweeps == 0 {
                    assert_eq!(p.len(), m.len(), "step {step}");
                }
            }
            assert!(sweeps > 5, "{sweeps} sweeps");
        }
    }

    #[test]
    fn a_removal_across_the_end_of_the_table_keeps_the_rest_reachable() {
        // Three keys whose search starts at the last slot (they sit in 15, 0 and 1) and one
        // that starts at 0 (it sits in 2); removing the first (dead when looked up) must move
        // the others back across the end of the table, where they can still be found.
        let mut p = FlowPins::new(50, false);
        assert_eq!(p.slots.len(), 16);
        let probe = &FlowPins::new(1, false);
        let with_home = |h: usize| {
            (0..)
                .map(|i| key(0, i, 0, 0, 0))
                .filter(move |&k| probe.home(k) == h)
        };
        let last: Vec<u128> = with_home(15).take(3).collect();
        let first = with_home(0).next().unwrap();
        p.install(last[0], 1, 0);
        for (i, &k) in [last[1], last[2], first].iter().enumerate() {
            p.install(k, 2 + i as u32, 100);
        }
        assert_eq!((p.find(last[2]), p.find(first)), (Ok(1), Ok(2)));
        assert_eq!(p.lookup(last[0], 120), None); // dead: removed
        assert_eq!(
            (p.find(last[1]), p.find(last[2]), p.find(first)),
            (Ok(15), Ok(0), Ok(1))
        );
        assert_eq!(
            [
                p.lookup(last[1], 120),
                p.lookup(last[2], 120),
                p.lookup(first, 120)
            ],
            [Some(2), Some(3), Some(4)]
        );
        assert_eq!(p.len(), 3);
    }

    #[test]
    fn hops_hold_the_tiers_of_each_links_ends() {
        let f = Fx::fat_tree4();
        let c = Clos::new(&f.g);
        for (l, d) in f.g.links.iter().enumerate() {
            let h = c.hop(l as u32);
            assert_eq!(
                (h.from_tier, h.to_tier, h.reverse),
                (c.tier(d.from), c.tier(d.to), d.reverse)
            );
        }
    }

    #[test]
    fn dead_pins_are_swept() {
        let mut p = FlowPins::new(10, false);
        for i in 0..5000u32 {
            p.install(key(0, i, 0, 0, 0), i, i as u64 * 100);
        }
        assert!(p.len() < 1024, "{}", p.len());
        assert_eq!(p.lookup(key(0, 4999, 0, 0, 0), 499_900), Some(4999));
    }

    #[test]
    fn keys_tell_directions_and_switches_apart() {
        let p = Packet {
            src: 1,
            dst: 2,
            sport: 1000,
            dport: 80,
            ..Default::default()
        };
        let q = Packet {
            src: 2,
            dst: 1,
            sport: 80,
            dport: 1000,
            ..Default::default()
        };
        assert_eq!(fwd_key(5, &p), rev_key(5, &q));
        assert_ne!(fwd_key(5, &p), fwd_key(5, &q));
        assert_ne!(fwd_key(5, &p), fwd_key(6, &p));
    }

    #[test]
    fn headers_round_trip_and_reuse_slots() {
        let mut h = Headers::new(4);
        let a = h.put(&[1, 2, 3]);
        let b = h.put(&[9]);
        assert_eq!((h.get(a), h.get(b)), (&[1u16, 2, 3][..], &[9u16][..]));
        h.release(a);
        let c = h.put(&[4, 5, 6, 7]);
        assert_eq!((c, h.get(c)), (a, &[4u16, 5, 6, 7][..]));
        assert_eq!(h.in_use(), 2);
    }

    #[test]
    fn meter_levels_table() {
        // 10 Gbps, 20 us, keep 0.7 (the authors' settings): C·τ/8 = 83,333 B, 8 levels of
        // 10,417 B. (bytes added at t = 0, read at t us, level)
        let cases = [
            (0u32, 0u64, 0u8),
            (10_416, 0, 0),
            (10_417, 0, 1),
            (83_334, 0, 8),
            (200_000, 0, 19), // not saturated at 7
            (20_834, 19, 2),
            (20_834, 20, 1), // one decay: 14,584 B
            (1_000_000, 1_000_000, 0),
        ];
        for (bytes, t_us, want) in cases {
            let mut m = LoadMeters::new(2, 20 * PS_PER_US, 0.7, 8, true);
            m.add_out(1, 0, bytes);
            m.add_in(0, 0, bytes);
            let t = t_us * PS_PER_US;
            assert_eq!(
                m.out_level(1, t, 10_000_000_000),
                want,
                "{bytes} B at {t_us} us"
            );
            assert_eq!(m.in_level(0, t, 10_000_000_000), want);
            assert_eq!(m.out_level(0, t, 10_000_000_000), 0);
        }
    }

    #[test]
    fn least_breaks_ties_at_random_and_skips_non_choices() {
        let mut rng = Rng::new(1, 2);
        let cases: &[(&[u32], &[usize])] = &[
            (&[3, 1, 2], &[1]),
            (&[0, 5, 0, 0], &[0, 2, 3]),
            (&[u32::MAX, 4, 4], &[1, 2]),
            (&[u32::MAX, u32::MAX], &[]),
            (&[], &[]),
        ];
        for (costs, want) in cases {
            let mut seen = vec![];
            for _ in 0..200 {
                if let Some((i, tie)) = least(costs, &mut rng) {
                    assert_eq!(tie, want.len() > 1, "{costs:?}");
                    if !seen.contains(&i) {
                        seen.push(i);
                    }
                }
            }
            seen.sort_unstable();
            assert_eq!(&seen[..], *want, "{costs:?}");
        }
    }
}
