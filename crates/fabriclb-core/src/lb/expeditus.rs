//! Expeditus as its seed paper describes it (papers/expeditus.md §2, the CoNEXT'14 extended
//! abstract): one-hop congestion information and a two-stage path choice on the TCP
//! handshake. The authors' later design is `expeditus-socc` (SCHEMES.md §0, §2); where the
//! abstract is silent, the choices are ours (docs/EXPEDITUS.md).
//!
//! Congestion information (§2.1), in 64-byte units of egress-queue occupancy:
//! - **Northbound**: an edge (leaf) or aggregation (spine) switch reads its own egress queue
//!   toward each upstream neighbour.
//! - **Stamps**: a packet leaving a core or aggregation switch downward carries the occupancy
//!   of the queue it joins and the stamping switch (an 8-byte IP option: type, length, the
//!   switch's address, 16 bits of occupancy); each switch below restamps it, and the edge
//!   removes it before the host. Occupancy is read when the packet joins the queue (the
//!   backlog it waits behind): the simulator's ports have no dequeue hook.
//! - **SCIT**: the switch below keeps the last stamp from each upstream neighbour, one entry
//!   per uplink; an entry not updated for `scit_timeout` reads 0 (no congestion).
//!
//! Two-stage choice (§2.2):
//! - **Stage 1.** The SYN leaves its edge by ECMP with a header of the edge's northbound
//!   values, one per aggregation position (2 + 2n bytes). The destination edge adds its own
//!   SCIT and takes the least sum (ties at random): aggregation position a*. It keeps the
//!   choice for the connection as a flow entry for the reverse direction, so the SYN-ACK and
//!   then the ACKs leave through aggregation switch a*.
//! - **Stage 2** (between pods). The SYN-ACK leaves that aggregation switch for a core by
//!   ECMP with a header of the switch's SCIT (its cores' queues toward it). Core group a*
//!   reaches only position a* in every pod, so the SYN-ACK comes down through aggregation
//!   switch a* of the source pod: §2.2's second paragraph ("SYN-ACK will route through the
//!   destination and source aggregation switches determined in the first stage"), not its
//!   first ("SYN and SYN-ACK is routed by ECMP"), which cannot hold with it. There the sum of
//!   the header and the switch's own northbound values picks the core, kept as a flow entry
//!   for the data direction.
//! - The source edge, when the SYN-ACK comes down from aggregation switch a*, keeps a flow
//!   entry for the data direction toward a*.
//! - Data: edge -> a* -> core (stage 2) -> a* -> edge. ACKs: a* by the destination edge's
//!   entry, then a core by ECMP (nothing chose one for them), then down. In a leaf-spine and
//!   within a pod only stage 1 exists.
//!
//! Pinning: exact-match flow entries (`clos::FlowPins`, `entry_lifetime` after their last use,
//! as the authors' code), not the explicit path label of DESIGN.md §4.2: a label would have to
//! be written on every data packet by someone who knows it, i.e. the hosts (Expeditus runs with
//! unmodified hosts) or the source edge, which would need the same per-flow entry anyway.
//! A packet that finds no live entry at a switch goes by ECMP: a lost SYN or SYN-ACK loses its
//! header, TCP's retransmission runs the stage again, and an expired entry falls back to ECMP.

use super::clos::{fwd_key, mark, rev_key, Clos, FlowPins, Headers};
use super::{ecmp_pick, ecmp_salts, hooks, Balancer, BuildCtx, LbView};
use crate::error::Error;
use crate::net::packet::{flags, Packet};
use crate::net::topology::Graph;
use crate::rng::{stream, Rng};
use crate::units::{Duration, Time, PS_PER_MS, PS_PER_US};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Expeditus's parameters (`[scheme]` with `name = "expeditus"`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpeditusConfig {
    /// A SCIT entry not updated for this long reads 0, "no congestion" (§2.1 gives no value).
    /// A busy port sends a packet every few µs, each of which updates the entry; 100 µs
    /// without one means the port has been idle for most of that time (a full 150 KB buffer
    /// drains in 120 µs at 10 Gbps).
    #[serde(default = "scit_timeout")]
    pub scit_timeout: Duration,
    /// A flow entry not used for this long is removed (the authors' code: 100 ms).
    #[serde(default = "entry_lifetime")]
    pub entry_lifetime: Duration,
}

fn scit_timeout() -> Duration {
    Duration(100 * PS_PER_US)
}
pub(crate) fn entry_lifetime() -> Duration {
    Duration(100 * PS_PER_MS)
}

impl Default for ExpeditusConfig {
    fn default() -> Self {
        ExpeditusConfig {
            scit_timeout: scit_timeout(),
            entry_lifetime: entry_lifetime(),
        }
    }
}

/// Bytes of the stamp option on a southbound link.
pub const STAMP_BYTES: u32 = 8;
/// Occupancy unit of stamps and headers.
pub const OCC_UNIT_BYTES: u64 = 64;

/// Bytes of a handshake header with `n` values.
fn header_bytes(n: usize) -> u32 {
    2 + 2 * n as u32
}

impl ExpeditusConfig {
    pub fn validate(&self, path: &str) -> Result<(), Error> {
        for (field, d) in [
            ("scit_timeout", self.scit_timeout),
            ("entry_lifetime", self.entry_lifetime),
        ] {
            if d.0 == 0 {
                return Err(Error::config(
                    &format!("{path}.{field}"),
                    "must be > 0 (e.g. \"100us\")",
                ));
            }
        }
        Ok(())
    }

    pub fn build(&self, ctx: &BuildCtx) -> Expeditus {
        let clos = Clos::new(ctx.g);
        let kind = (0..ctx.g.links.len() as u32)
            .map(|l| {
                let h = clos.hop(l);
                let mut k = 0;
                if h.from_tier > h.to_tier && h.to_tier > 0 {
                    k |= kind::DOWN;
                    if h.to_tier == 1 {
                        k |= kind::TO_EDGE;
                    }
                }
                if h.to_tier > h.from_tier && h.from_tier > 0 {
                    k |= kind::UP;
                }
                k
            })
            .collect();
        Expeditus {
            kind,
            scit: vec![(0, 0); ctx.g.links.len()],
            scit_timeout: self.scit_timeout.0,
            pins: FlowPins::new(self.entry_lifetime.0, false),
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

/// What Expeditus' hooks need to know of a directed link, in a byte ([`Expeditus::kind`]).
mod kind {
    /// Between switches, downward: arrivals over it may carry a stamp, departures onto it get
    /// one.
    pub const DOWN: u8 = 1;
    /// `DOWN`, into an edge switch, which removes the stamp.
    pub const TO_EDGE: u8 = 2;
    /// Between switches, upward: a handshake packet leaving over it may get a header.
    pub const UP: u8 = 4;
}

pub struct Expeditus {
    clos: Clos,
    /// Per directed link, its [`kind`] bits: a byte table, so that the hooks read 7 KB at
    /// FT2048 rather than the 57 KB of `clos`'s hops (their load was a third of the departure
    /// hook's samples).
    kind: Vec<u8>,
    /// SCIT, per downward link U -> X: the occupancy of U -> X last stamped, and when (the
    /// entry of X's uplink X -> U; indexed by the link the stamps arrive over, so that an
    /// arrival needs no reverse lookup).
    scit: Vec<(u16, Time)>,
    scit_timeout: Time,
    pins: FlowPins,
    hdrs: Headers,
    salts: Vec<u64>,
    rng: Rng,
    vals: Vec<u16>,
    costs: Vec<u32>,
    /// Stage-1 choices, stage-2 choices, next hops taken from an entry, next hops by ECMP,
    /// choices drawn at random among equally good candidates.
    n: [u64; 5],
}

/// Occupancy of the egress queue of link `l` now, in units.
#[inline]
fn occupancy(v: &mut LbView, l: u32) -> u16 {
    (v.ports[l as usize].queue_bytes(v.now) / OCC_UNIT_BYTES).min(u16::MAX as u64) as u16
}

/// The SCIT entry of uplink `up` (`scit` is indexed by its reverse, see `Expeditus::scit`)
/// read at `now`: zero once not updated for `timeout`.
#[inline]
fn uplink_scit(clos: &Clos, scit: &[(u16, Time)], up: u32, now: Time, timeout: Time) -> u16 {
    let (val, t) = scit[clos.hop(up).reverse as usize];
    if now.saturating_sub(t) >= timeout {
        0
    } else {
        val
    }
}

impl Expeditus {
    /// The SCIT entry of uplink `up`, zero once timed out.
    #[inline]
    fn scit(&self, up: u32, now: Time) -> u16 {
        uplink_scit(&self.clos, &self.scit, up, now, self.scit_timeout)
    }

    /// Attach a header of `self.vals` to `pkt`.
    fn attach(&mut self, pkt: &mut Packet) {
        let bytes = header_bytes(self.vals.len());
        self.hdrs.attach(pkt, &self.vals, bytes);
    }

    /// Stage 1 (`stage2` false) or 2 at switch `sw` on `pkt`, whose header is in `self.vals`:
    /// the uplink toward `pkt`'s sender with the least header value plus the local value
    /// (SCIT, or northbound occupancy), pinned for the direction opposite to `pkt`.
    fn stage(&mut self, v: &mut LbView, sw: u32, pkt: &Packet, stage2: bool) {
        let Expeditus {
            clos,
            scit,
            scit_timeout,
            rng,
            costs,
            vals,
            ..
        } = self;
        let pick = clos.pick_uplink(v, sw, pkt.src, rng, costs, |v, i, up| {
            let local = if stage2 {
                occupancy(v, up)
            } else {
                uplink_scit(clos, scit, up, v.now, *scit_timeout)
            };
            vals.get(i).map_or(u32::MAX, |&h| h as u32 + local as u32)
        });
        if let Some((up, tie)) = pick {
            self.pins.install(rev_key(sw, pkt), up, v.now);
            self.n[4] += tie as u64;
            self.n[stage2 as usize] += 1;
        }
    }
    /// The handshake's part of `on_arrival` (a SYN or SYN-ACK from above at switch `sw`, tier
    /// `ts`, over the link whose reverse is `up`): out of line, so that the hook's common path
    /// saves few registers.
    #[cold]
    #[inline(never)]
    fn syn_arrival(&mut self, v: &mut LbView, sw: u32, up: u32, ts: u8, tf: u8, pkt: &mut Packet) {
        let synack = pkt.is(flags::ACK);
        if ts == 1 && !synack {
            // Stage 1, at the destination edge: the source edge's northbound values plus
            // this edge's southbound ones; the SYN-ACK and the ACKs will go up there.
            if self.hdrs.detach(pkt, &mut self.vals, header_bytes) {
                self.stage(v, sw, pkt, false);
            }
        } else if ts == 1 {
            // The SYN-ACK reaches the source edge from aggregation switch a*: data go there.
            self.pins.install(rev_key(sw, pkt), up, v.now);
        } else if ts == 2
            && tf == 3
            && synack
            && self.hdrs.detach(pkt, &mut self.vals, header_bytes)
        {
            // Stage 2, at the source pod's aggregation switch a*: the destination pod's
            // aggregation switch's southbound values plus this one's northbound ones.
            self.stage(v, sw, pkt, true);
        }
    }

    /// The handshake's part of `on_departure` (a SYN or SYN-ACK without a header going up
    /// from switch `sw`, tier `ts`, to tier `tt`): out of line, as `syn_arrival`.
    #[cold]
    #[inline(never)]
    fn syn_departure(&mut self, v: &mut LbView, sw: u32, ts: u8, tt: u8, pkt: &mut Packet) {
        let synack = pkt.is(flags::ACK);
        if ts == 1 && !synack {
            // The SYN leaves its edge: the edge's northbound values.
            self.vals.clear();
            for i in 0..self.clos.ups(sw).len() {
                let up = self.clos.ups(sw)[i];
                let o = occupancy(v, up);
                self.vals.push(o);
            }
            self.attach(pkt);
        } else if ts == 2 && tt == 3 && synack {
            // The SYN-ACK leaves the destination pod: this switch's southbound values.
            self.vals.clear();
            for &up in self.clos.ups(sw) {
                self.vals.push(self.scit(up, v.now));
            }
            self.attach(pkt);
        }
    }
}

impl Balancer for Expeditus {
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
        // The early returns of the two hooks below: arrivals from above, departures to a switch.
        let k = self.kind[l as usize];
        let arrival = if k & kind::DOWN != 0 {
            hooks::ARRIVAL
        } else {
            0
        };
        let departure = if k & (kind::DOWN | kind::UP) != 0 {
            hooks::DEPARTURE
        } else {
            0
        };
        arrival | departure
    }

    fn prefetch(&self, sw: u32, pkt: &Packet) {
        self.pins.prefetch(fwd_key(sw, pkt));
    }

    fn on_arrival(&mut self, v: &mut LbView, sw: u32, in_link: u32, pkt: &mut Packet) {
        debug_assert_eq!(v.g.links[in_link as usize].to, sw);
        let k = self.kind[in_link as usize];
        if k & kind::DOWN == 0 {
            return; // from a host or from below: nothing to learn
        }
        if pkt.overlay.aux_flags & mark::STAMP != 0 {
            self.scit[in_link as usize] = (pkt.overlay.stamp, v.now);
            if k & kind::TO_EDGE != 0 {
                pkt.overlay.aux_flags &= !mark::STAMP;
                pkt.size -= STAMP_BYTES;
            }
        }
        if pkt.is(flags::SYN) {
            let h = self.clos.hop(in_link);
            // This switch's uplink toward the sender of the packet.
            self.syn_arrival(v, sw, h.reverse, h.to_tier, h.from_tier, pkt);
        }
    }

    fn on_departure(&mut self, v: &mut LbView, sw: u32, out_link: u32, pkt: &mut Packet) {
        debug_assert_eq!(v.g.links[out_link as usize].from, sw);
        let k = self.kind[out_link as usize];
        if k & kind::DOWN != 0 {
            let occ = occupancy(v, out_link);
            if pkt.overlay.aux_flags & mark::STAMP == 0 {
                pkt.overlay.aux_flags |= mark::STAMP;
                pkt.size += STAMP_BYTES;
            }
            pkt.overlay.stamp = occ;
            pkt.overlay.aux[0] = sw;
        } else if k & kind::UP != 0 && pkt.is(flags::SYN) && pkt.overlay.aux_flags & mark::HDR == 0
        {
            let h = self.clos.hop(out_link);
            self.syn_departure(v, sw, h.from_tier, h.to_tier, pkt);
        }
    }

    fn link_header_bytes(&self, g: &Graph, l: u32) -> u32 {
        let d = &g.links[l as usize];
        let (tf, tt) = (self.clos.tier(d.from), self.clos.tier(d.to));
        if tt > 0 && tt < tf {
            STAMP_BYTES
        } else {
            0
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("stage1_choices", self.n[0]),
            ("stage2_choices", self.n[1]),
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

    fn exp(f: &Fx, seed: u64) -> Expeditus {
        ExpeditusConfig::default().build(&f.ctx(seed))
    }

    /// Run `p` through switch `sw` from `in_link` to `out` (hooks in the simulator's order).
    fn through(
        e: &mut Expeditus,
        f: &mut Fx,
        t: Time,
        sw: &str,
        in_l: &str,
        out: &str,
        p: &mut Packet,
    ) {
        let (sw, in_l, out) = (f.node(sw), f.link(in_l), f.link(out));
        e.on_arrival(&mut f.view(t), sw, in_l, p);
        e.on_departure(&mut f.view(t), sw, out, p);
    }

    #[test]
    fn stamps_carry_the_joined_queue_and_fill_the_scit() {
        // k = 4 fat-tree. A packet H4 -> H0 comes down C0 -> A0_0 -> E0_0 -> H0.
        // (frames queued on C0->A0_0, on A0_0->E0_0) -> (stamp seen at A0_0, at E0_0).
        let cases = [(0u32, 0u32), (3, 0), (0, 5), (7, 2), (100, 100)];
        for (qc, qa) in cases {
            let mut f = Fx::fat_tree4();
            let mut e = exp(&f, 1);
            let t = 10 * US;
            f.fill(f.link("C0->A0_0"), qc, t);
            f.fill(f.link("A0_0->E0_0"), qa, t);
            let unit = |n: u32| ((n as u64 * 1518) / OCC_UNIT_BYTES) as u16;
            let mut p = Fx::tcp(4, 0, flags::ACK);
            let size0 = p.size;
            through(&mut e, &mut f, t, "C0", "A1_0->C0", "C0->A0_0", &mut p);
            assert_eq!(p.overlay.aux_flags & mark::STAMP, mark::STAMP);
            assert_eq!(
                (p.overlay.stamp, p.overlay.aux[0]),
                (unit(qc), f.node("C0"))
            );
            assert_eq!(p.size, size0 + STAMP_BYTES);
            through(&mut e, &mut f, t, "A0_0", "C0->A0_0", "A0_0->E0_0", &mut p);
            // Restamped, not stamped twice.
            assert_eq!(
                (p.overlay.stamp, p.overlay.aux[0]),
                (unit(qa), f.node("A0_0"))
            );
            assert_eq!(p.size, size0 + STAMP_BYTES);
            assert_eq!(e.scit(f.link("A0_0->C0"), t), unit(qc));
            through(&mut e, &mut f, t, "E0_0", "A0_0->E0_0", "E0_0->H0", &mut p);
            assert_eq!(e.scit(f.link("E0_0->A0_0"), t), unit(qa));
            // The edge removes the option before the host.
            assert_eq!((p.overlay.aux_flags & mark::STAMP, p.size), (0, size0));
        }
        // Northbound packets are not stamped.
        let mut f = Fx::fat_tree4();
        let mut e = exp(&f, 1);
        let mut p = Fx::tcp(0, 4, flags::ACK);
        through(&mut e, &mut f, 0, "E0_0", "H0->E0_0", "E0_0->A0_1", &mut p);
        through(&mut e, &mut f, 0, "A0_1", "E0_0->A0_1", "A0_1->C2", &mut p);
        assert_eq!((p.overlay.aux_flags, p.size), (0, frame_bytes(0)));
    }

    #[test]
    fn scit_entries_time_out_to_zero() {
        // scit_timeout 100 us: (age of the last stamp in us) -> the entry's value.
        let cases = [(0u64, 40u16), (99, 40), (100, 0), (5_000, 0)];
        for (age, want) in cases {
            let mut f = Fx::fat_tree4();
            let mut e = exp(&f, 1);
            let mut p = Fx::tcp(4, 0, flags::ACK);
            p.overlay.aux_flags = mark::STAMP;
            p.overlay.stamp = 40;
            let t0 = 3 * US;
            let (sw, down) = (f.node("E0_0"), f.link("A0_1->E0_0"));
            e.on_arrival(&mut f.view(t0), sw, down, &mut p);
            let up = f.link("E0_0->A0_1");
            assert_eq!(e.scit(up, t0 + age * US), want, "age {age} us");
            // A fresh stamp restarts the clock.
            let mut q = Fx::tcp(4, 0, flags::ACK);
            q.overlay.aux_flags = mark::STAMP;
            q.overlay.stamp = 9;
            let t1 = t0 + age * US;
            e.on_arrival(&mut f.view(t1), sw, down, &mut q);
            assert_eq!(e.scit(up, t1 + 99 * US), 9);
        }
    }

    /// The positions a stage picks over many connections, with the given per-position costs.
    fn stage1_picks(hdr: [u16; 2], scit: [u16; 2]) -> Vec<usize> {
        let (mut seen, mut tied) = (vec![], vec![]);
        for seed in 0..40 {
            let mut f = Fx::fat_tree4();
            let mut e = exp(&f, seed);
            let t = 50 * US;
            let ups = [f.link("E1_0->A1_0"), f.link("E1_0->A1_1")];
            for a in 0..2 {
                e.scit[f.g.links[ups[a] as usize].reverse as usize] = (scit[a], t);
            }
            // A SYN H0 -> H4 arrives at H4's edge E1_0 with the source edge's values.
            let mut p = Fx::tcp(0, 4, flags::SYN);
            e.vals = hdr.to_vec();
            e.attach(&mut p);
            let size = p.size;
            let (sw, in_l) = (f.node("E1_0"), f.link("A1_1->E1_0"));
            e.on_arrival(&mut f.view(t), sw, in_l, &mut p);
            assert_eq!(p.size, size - header_bytes(2), "the header is removed");
            assert_eq!(e.hdrs.in_use(), 0);
            assert_eq!(e.n[0], 1);
            // The SYN-ACK (H4 -> H0) is pinned to the chosen uplink.
            let mut sa = Fx::tcp(4, 0, flags::SYN | flags::ACK);
            sa.sport = 80;
            sa.dport = 1000;
            let cands = f.cands(sw, 0);
            let out = e.choose(&mut f.view(t), sw, &mut sa, &cands);
            let a = ups.iter().position(|&u| u == out).unwrap();
            if !seen.contains(&a) {
                seen.push(a);
            }
            tied.push(e.n[4] == 1);
        }
        seen.sort_unstable();
        // A tie is counted exactly when more than one position was the least.
        assert!(tied.iter().all(|&t| t == (seen.len() > 1)), "{tied:?}");
        seen
    }

    #[test]
    fn stage1_takes_the_least_sum_with_random_ties() {
        // (source edge's northbound values, destination edge's SCIT) -> positions picked.
        let cases: &[([u16; 2], [u16; 2], &[usize])] = &[
            ([0, 0], [0, 0], &[0, 1]),
            ([5, 0], [0, 0], &[1]),
            ([0, 0], [0, 3], &[0]),
            ([1, 4], [4, 0], &[1]),    // sums 5, 4
            ([3, 1], [1, 3], &[0, 1]), // sums 4, 4
            ([9, 2], [0, 8], &[0]),    // the max of each would tie at 9 vs 8; sums 9, 10
        ];
        for &(hdr, scit, want) in cases {
            assert_eq!(stage1_picks(hdr, scit), want, "hdr {hdr:?} scit {scit:?}");
        }
    }

    fn stage2_picks(hdr: [u16; 2], north_frames: [u32; 2]) -> Vec<usize> {
        let mut seen = vec![];
        for seed in 0..40 {
            let mut f = Fx::fat_tree4();
            let mut e = exp(&f, seed);
            let t = 50 * US;
            // Source pod 0, aggregation position 1 (cores C2, C3): its queues toward the cores.
            let ups = [f.link("A0_1->C2"), f.link("A0_1->C3")];
            for j in 0..2 {
                f.fill(ups[j], north_frames[j], t);
            }
            // The SYN-ACK H4 -> H0 comes down from C3 with A1_1's southbound values.
            let mut sa = Fx::tcp(4, 0, flags::SYN | flags::ACK);
            sa.sport = 80;
            sa.dport = 1000;
            e.vals = hdr.to_vec();
            e.attach(&mut sa);
            let sw = f.node("A0_1");
            let down = f.link("C3->A0_1");
            e.on_arrival(&mut f.view(t), sw, down, &mut sa);
            assert_eq!(e.n[1], 1);
            assert_eq!(sa.overlay.aux_flags & mark::HDR, 0);
            // Data H0 -> H4 at A0_1 go to the chosen core.
            let mut d = Fx::tcp(0, 4, flags::ACK);
            let cands = f.cands(sw, 4);
            let out = e.choose(&mut f.view(t), sw, &mut d, &cands);
            let j = ups.iter().position(|&u| u == out).unwrap();
            if !seen.contains(&j) {
                seen.push(j);
            }
        }
        seen.sort_unstable();
        seen
    }

    #[test]
    fn stage2_takes_the_least_sum_with_random_ties() {
        // One frame = 1518 B = 23 units. (header, frames queued toward C2, C3) -> picks.
        let cases: &[([u16; 2], [u32; 2], &[usize])] = &[
            ([0, 0], [0, 0], &[0, 1]),
            ([0, 0], [1, 0], &[1]),
            ([30, 0], [0, 1], &[1]),    // 30 vs 23
            ([0, 24], [1, 0], &[0]),    // 23 vs 24
            ([23, 0], [0, 1], &[0, 1]), // 23 vs 23
        ];
        for &(hdr, q, want) in cases {
            assert_eq!(stage2_picks(hdr, q), want, "hdr {hdr:?} queues {q:?}");
        }
    }

    #[test]
    fn handshake_headers_are_written_where_the_paper_puts_them() {
        let mut f = Fx::fat_tree4();
        let mut e = exp(&f, 1);
        let t = 5 * US;
        f.fill(f.link("E0_0->A0_1"), 2, t);
        // The SYN leaving its edge carries the edge's northbound values.
        let mut syn = Fx::tcp(0, 4, flags::SYN);
        through(
            &mut e,
            &mut f,
            t,
            "E0_0",
            "H0->E0_0",
            "E0_0->A0_0",
            &mut syn,
        );
        assert_eq!(e.hdrs.get(syn.overlay.aux[1]), &[0, 47][..]);
        assert_eq!(syn.size, frame_bytes(0) + header_bytes(2));
        // Not again at the aggregation switch, and a SYN-ACK leaving an edge gets none.
        through(
            &mut e,
            &mut f,
            t,
            "A0_0",
            "E0_0->A0_0",
            "A0_0->C1",
            &mut syn,
        );
        assert_eq!(syn.size, frame_bytes(0) + header_bytes(2));
        let mut sa = Fx::tcp(4, 0, flags::SYN | flags::ACK);
        through(&mut e, &mut f, t, "E1_0", "H4->E1_0", "E1_0->A1_1", &mut sa);
        assert_eq!(sa.overlay.aux_flags, 0);
        // The SYN-ACK leaving the destination pod's aggregation switch carries its SCIT.
        e.scit[f.link("C3->A1_1") as usize] = (12, t);
        through(&mut e, &mut f, t, "A1_1", "E1_0->A1_1", "A1_1->C2", &mut sa);
        assert_eq!(e.hdrs.get(sa.overlay.aux[1]), &[0, 12][..]);
        // Plain data and ACKs carry none.
        let mut d = Fx::tcp(0, 4, flags::ACK);
        through(&mut e, &mut f, t, "E0_0", "H0->E0_0", "E0_0->A0_0", &mut d);
        assert_eq!(d.overlay.aux_flags, 0);
    }

    #[test]
    fn a_whole_handshake_pins_both_directions() {
        // H0 (pod 0) -> H4 (pod 1). Queues make position 1 and then core C3 the unique best.
        for seed in 0..8 {
            let mut f = Fx::fat_tree4();
            let mut e = exp(&f, seed);
            let t = 20 * US;
            f.fill(f.link("E0_0->A0_0"), 3, t); // source edge, northbound toward A0_0
            f.fill(f.link("A0_1->C2"), 3, t); // source pod's A0_1, northbound toward C2
            let mut syn = Fx::tcp(0, 4, flags::SYN);
            f.walk(&mut e, t, &mut syn); // by ECMP, wherever it goes
            assert_eq!((e.n[0], syn.size), (1, frame_bytes(0)));
            // The SYN-ACK goes up through A1_1 (stage 1), down through A0_1 (stage 2 there).
            let mut sa = Fx::answer(&syn, flags::SYN | flags::ACK);
            let path = f.walk(&mut e, t, &mut sa);
            assert_eq!(path[0], "E1_0->A1_1#0", "{path:?}");
            assert!(path[2].ends_with("->A0_1#0"), "{path:?}");
            assert_eq!((e.n[1], sa.size), (1, frame_bytes(0)));
            assert_eq!(e.hdrs.in_use(), 0);
            // Data H0 -> H4 follow the chosen path.
            let mut d = Fx::tcp(0, 4, flags::ACK);
            let path = f.walk(&mut e, t, &mut d);
            assert_eq!(
                path,
                [
                    "E0_0->A0_1#0",
                    "A0_1->C3#0",
                    "C3->A1_1#0",
                    "A1_1->E1_0#0",
                    "E1_0->H4#0"
                ],
                "seed {seed}"
            );
            // ACKs H4 -> H0 leave through A1_1 (the destination edge's entry), then ECMP.
            let mut a = Fx::answer(&d, flags::ACK);
            assert_eq!(f.walk(&mut e, t, &mut a)[0], "E1_0->A1_1#0");
        }
    }

    #[test]
    fn entries_expire_and_then_ecmp_decides() {
        // An entry pins a flow to the uplink ECMP would not take; after entry_lifetime without
        // use the flow is back on its ECMP uplink.
        let mut f = Fx::fat_tree4();
        let mut e = exp(&f, 1);
        let sw = f.node("E0_0");
        let cands = f.cands(sw, 4);
        let mut d = Fx::tcp(0, 4, flags::ACK);
        let ecmp = ecmp_pick(&d, e.salts[sw as usize], &cands);
        let other = *cands.iter().find(|&&c| c != ecmp).unwrap();
        e.pins.install(fwd_key(sw, &d), other, 0);
        // (time, uplink taken): every use refreshes the 100 ms lifetime.
        let ms = PS_PER_MS;
        let steps = [
            (0, other),
            (100 * ms, other),
            (200 * ms, other),
            (300 * ms + 1, ecmp),
        ];
        for (t, want) in steps {
            assert_eq!(
                e.choose(&mut f.view(t), sw, &mut d, &cands),
                want,
                "t = {t} ps"
            );
        }
        // A pinned uplink that is no longer a candidate (failed) is not used.
        e.pins.install(fwd_key(sw, &d), other, 0);
        assert_eq!(e.choose(&mut f.view(0), sw, &mut d, &[ecmp]), ecmp);
    }

    #[test]
    fn without_a_stage_a_switch_uses_ecmp() {
        // No stage 2 at A0_1 (the SYN-ACK that would carry its header was lost, or came without
        // one): a SYN-ACK without a header pins nothing, and data go by ECMP there.
        let mut f = Fx::fat_tree4();
        let mut e = exp(&f, 1);
        let sw = f.node("A0_1");
        let mut sa = Fx::tcp(4, 0, flags::SYN | flags::ACK);
        sa.sport = 80;
        sa.dport = 1000;
        let down = f.link("C3->A0_1");
        e.on_arrival(&mut f.view(0), sw, down, &mut sa);
        assert_eq!(e.n[1], 0);
        let mut d = Fx::tcp(0, 4, flags::ACK);
        let cands = f.cands(sw, 4);
        let want = ecmp_pick(&d, e.salts[sw as usize], &cands);
        assert_eq!(e.choose(&mut f.view(0), sw, &mut d, &cands), want);
        assert_eq!((e.n[2], e.n[3]), (0, 1));
    }

    #[test]
    fn leaf_spine_has_one_stage() {
        // 2 leaves x 4 spines. L0's queues toward S0, S1, S3 hold a frame each: the SYN tells
        // L1, which picks S2; L0 learns it from the SYN-ACK.
        for seed in 0..8 {
            let mut f = Fx::leaf_spine(2, 4, 1);
            let mut e = exp(&f, seed);
            let t = 30 * US;
            for s in [0, 1, 3] {
                f.fill(f.link(&format!("L0->S{s}")), 1, t);
            }
            let mut syn = Fx::tcp(0, 2, flags::SYN);
            f.walk(&mut e, t, &mut syn);
            let mut sa = Fx::answer(&syn, flags::SYN | flags::ACK);
            assert_eq!(f.walk(&mut e, t, &mut sa)[0], "L1->S2#0");
            let mut d = Fx::tcp(0, 2, flags::ACK);
            assert_eq!(f.walk(&mut e, t, &mut d)[0], "L0->S2#0");
            assert_eq!((e.n[0], e.n[1]), (1, 0));
        }
    }

    #[test]
    fn config_parses_validates_and_names_bad_fields() {
        let s: SchemeConfig = serde_json::from_str(r#"{"name":"expeditus"}"#).unwrap();
        s.validate("scheme").unwrap();
        assert_eq!(s.name(), "expeditus");
        let bad = [
            (
                r#"{"name":"expeditus","scit_timeout":"0us"}"#,
                "scheme.scit_timeout",
            ),
            (
                r#"{"name":"expeditus","entry_lifetime":"0ms"}"#,
                "scheme.entry_lifetime",
            ),
        ];
        for (json, field) in bad {
            let s: SchemeConfig = serde_json::from_str(json).unwrap();
            let e = s.validate("scheme").unwrap_err().to_string();
            assert!(e.contains(field), "{json}: {e}");
        }
        assert!(
            serde_json::from_str::<SchemeConfig>(r#"{"name":"expeditus","timeout":"1us"}"#)
                .is_err()
        );
    }
}
