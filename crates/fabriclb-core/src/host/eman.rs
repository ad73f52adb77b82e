//! EMAN (Zhang et al., IFIP Networking 2020; `../shared/papers/eman.md` §III): each host sends
//! every packet on a path of its choice, in proportion to each path's *available bandwidth*,
//! which the receiver measures and feeds back.
//!
//! Per host pair (§III-A; all flows of the pair share it):
//! - **Sender's path table**: for each path (found by `host::paths::discover`, one outer UDP
//!   source port each) its available bandwidth AB_p, initialised to the path's nominal capacity
//!   (its slowest link before any degradation: the paper's "initialized to 1:1" in Fig. 1(b)).
//!   Each packet takes the path smooth weighted round robin gives with the AB_p as weights
//!   (§III-C). Every packet carries the tunnel: outer IP 20 + UDP 8 + the 12-byte EMAN header
//!   (§III-B, §IV) = 40 bytes on the wire.
//! - **Receiver's feedback table**: for each path (by outer port) a rate measurement over
//!   `c_ratecalc` packets of the pair on that path. A CE mark starts one when none is running
//!   or when a probe started the running one (§III-C: an ECN restarts a probe's measurement;
//!   further marks do not restart an ECN-started one); a probe packet starts one when none is
//!   running. Its result is fed back once, on a packet going back to the sender: one path's
//!   result per packet, the paths taken round robin (§III-D), as FB_Path_ID, FB_Path_RRate and
//!   FBE (started by ECN) or FBP with FB_Probe_ID (started by that probe).
//! - **Updates** (§III-C): on FBE, AB_p ← the rate; on FBP whose probe id is the one the
//!   sender awaits for that path, likewise. After `t_explore` without ECN feedback (or a probe)
//!   on a path, the next `c_ratecalc` packets of the pair are forced onto it with P set and a
//!   new Probe_ID.
//! - **Reordering** (§III-D): the receiver passes packets up in the pair's sequence order,
//!   holding at most `reorder_buffer` bytes for at most `t_reorder` (`host::tunnel::Reorder`).
//! - **ECN**: switches mark the outer header; decapsulation copies the mark into the inner one
//!   (§IV), so TCP reacts as usual (EMAN does not hide ECN). In the simulation the packet has
//!   one CE bit, which the shim leaves as it is.
//!
//! Choices §III leaves open, written down (docs/EMAN.md has them all):
//! - The rate window: the packet that starts a measurement opens it at its arrival; the
//!   measurement ends with the `c_ratecalc`-th packet of the pair on that path counting the
//!   first; rate = the wire bytes (frame, preamble and gap) of packets 2..=C over the time from
//!   packet 1's arrival to packet C's. A saturated path thus measures its capacity.
//! - Each result is fed back once (an entry with nothing new is skipped); a lost feedback is
//!   not repeated. Repeating the last result would keep a path "seeing ECN" and stop its
//!   probes.
//! - FBE also cancels an awaited probe answer on that path (the ECN measurement is the more
//!   accurate, as the receiver's rule says); a probe starts on the path quiet the longest.
//! - A pair with one path (e.g. under one ToR) is not encapsulated; feedback for the other
//!   direction rides only on encapsulated packets.
//! - Wire layout in `Packet::overlay`: `aux[0]` = sequence (24 bits) | Probe_ID << 24,
//!   `aux[1]` = FB_Path_RRate in kbps (32 bits; the paper gives no unit), `aux[2]` =
//!   FB_Path_ID (the outer port, 16 bits) | FB_Probe_ID << 16, `aux_flags` = FBE, P, FBP.

use super::paths::{bottleneck_bps, discover, DISCOVERY_PORTS};
use super::shim::{EdgeShim, ShimView};
use super::tunnel::{Swrr, Tunnel, ENCAPSULATED};
use crate::error::Error;
use crate::net::packet::{flags, Packet};
use crate::units::{Bytes, Duration, Time, PS_PER_MS, PS_PER_S, PS_PER_US};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `overlay.aux_flags` bits of the EMAN header's Flags field.
const FBE: u8 = 1;
const PROBE: u8 = 2;
const FBP: u8 = 4;

/// EMAN's parameters (`[scheme]` with `name = "eman"`); the defaults are the paper's
/// simulation settings (§V-A).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmanConfig {
    /// C_ratecalc: packets of a rate measurement, the packet that starts it included; also the
    /// packets a probe forces onto its path. 2..=10000 (§V-A: 10; §III-E suggests ~20).
    #[serde(default = "c_ratecalc")]
    #[schemars(range(min = 2, max = 10_000))]
    pub c_ratecalc: u32,
    /// T_explore: a path without ECN feedback (or a probe) for this long is probed (§V-A: 50
    /// base RTTs, 8 ms at 160 µs). > 0.
    #[serde(default = "t_explore")]
    pub t_explore: Duration,
    /// L: the reorder buffer per host pair, in bytes of packets held. §V-A says "6Mb", read as
    /// 6 MB: §III-E wants the total buffer of a path ("tens of MBs"), and 6 Mbit would hold
    /// 120 µs at 50 Gbps. "0B" turns reordering off.
    #[serde(default = "reorder_buffer")]
    pub reorder_buffer: Bytes,
    /// T_reorder: the longest a packet waits for the ones before it (§V-A: 5 ms); "0us" turns
    /// reordering off.
    #[serde(default = "t_reorder")]
    pub t_reorder: Duration,
}

fn c_ratecalc() -> u32 {
    10
}
fn t_explore() -> Duration {
    Duration(8 * PS_PER_MS)
}
fn reorder_buffer() -> Bytes {
    Bytes(6_000_000)
}
fn t_reorder() -> Duration {
    Duration(5 * PS_PER_MS)
}

impl Default for EmanConfig {
    fn default() -> Self {
        EmanConfig {
            c_ratecalc: c_ratecalc(),
            t_explore: t_explore(),
            reorder_buffer: reorder_buffer(),
            t_reorder: t_reorder(),
        }
    }
}

impl EmanConfig {
    pub fn validate(&self, path: &str) -> Result<(), Error> {
        if !(2..=10_000).contains(&self.c_ratecalc) {
            return Err(Error::config(
                &format!("{path}.c_ratecalc"),
                format!(
                    "{} is out of range; allowed: 2..=10000 packets (a rate needs two arrivals; the paper uses 10)",
                    self.c_ratecalc
                ),
            ));
        }
        if self.t_explore.0 < PS_PER_US {
            return Err(Error::config(
                &format!("{path}.t_explore"),
                format!(
                    "{} is too short; allowed: at least 1us (the paper: 50 base RTTs, \"8ms\")",
                    self.t_explore
                ),
            ));
        }
        Ok(())
    }

    pub fn build(&self) -> Eman {
        Eman {
            c: self.c_ratecalc,
            t_explore: self.t_explore.0,
            tunnel: Tunnel::new(self.reorder_buffer.0, self.t_reorder.0),
            epoch: 0,
            pairs: Vec::new(),
            stats: Stats::default(),
        }
    }
}

/// One path of a pair, at the sender.
#[derive(Clone, Debug)]
struct PathState {
    port: u16,
    links: Vec<u32>,
    /// AB_p, bps.
    ab_bps: u64,
    /// The last ECN feedback for this path, or the start of its last probe (T_explore counts
    /// from here).
    quiet_since: Time,
    /// The probe round whose answer may update AB_p.
    awaiting: Option<u8>,
}

/// A rate measurement running at the receiver.
#[derive(Clone, Copy, Debug)]
struct Run {
    /// The probe round that started it; `None`: a CE mark did.
    probe: Option<u8>,
    t0: Time,
    /// Packets so far, the first included.
    count: u32,
    /// Wire bytes of packets 2..=count.
    bytes: u64,
}

/// A finished measurement waiting to be fed back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Feedback {
    rate_bps: u64,
    probe: Option<u8>,
}

/// One path of a pair, at the receiver (known by its outer port).
#[derive(Clone, Debug)]
struct Meas {
    port: u16,
    run: Option<Run>,
    result: Option<Feedback>,
}

/// A host pair (src → dst): the sender's side at src, the receiver's at dst.
#[derive(Clone, Debug, Default)]
struct Pair {
    /// The routing epoch the paths were found in (`u32::MAX`: not yet).
    epoch: u32,
    paths: Vec<PathState>,
    /// The AB_p, as weights for the round robin.
    weights: Vec<u64>,
    swrr: Swrr,
    /// The probe being sent: (path, round id, packets left to force).
    probe: Option<(usize, u8, u32)>,
    next_probe: u8,
    meas: Vec<Meas>,
    /// Round-robin position in `meas` for the next feedback.
    fb_next: usize,
}

#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    measurements: u64,
    ecn_updates: u64,
    probes: u64,
    probe_updates: u64,
}

pub struct Eman {
    c: u32,
    t_explore: Time,
    /// The tunnels: pair ids, sequence numbers, reorder buffers.
    tunnel: Tunnel,
    /// Bumped when routes change: pairs find their paths again on their next packet.
    epoch: u32,
    /// By tunnel pair id.
    pairs: Vec<Pair>,
    stats: Stats,
}

impl Eman {
    fn pair(&mut self, src: u32, dst: u32) -> usize {
        let i = self.tunnel.pair(src, dst);
        if self.pairs.len() <= i {
            self.pairs.resize_with(i + 1, || Pair {
                epoch: u32::MAX,
                ..Default::default()
            });
        }
        i
    }

    /// Find pair `i`'s paths (again): paths whose links are unchanged keep their state, new
    /// ones start at their nominal capacity.
    fn refresh(&mut self, now: Time, i: usize, v: &ShimView) {
        let (src, dst) = self.tunnel.ends[i];
        let p = &mut self.pairs[i];
        let set = discover(v.g, v.routes, v.salts, src, dst, DISCOVERY_PORTS);
        let old = std::mem::take(&mut p.paths);
        p.paths = set
            .ports
            .iter()
            .zip(set.links)
            .map(
                |(&port, links)| match old.iter().find(|o| o.links == links) {
                    Some(o) => PathState { port, ..o.clone() },
                    None => PathState {
                        port,
                        ab_bps: bottleneck_bps(&links, |l| v.g.links[l as usize].rate_bps),
                        links,
                        quiet_since: now,
                        awaiting: None,
                    },
                },
            )
            .collect();
        p.weights = p.paths.iter().map(|x| x.ab_bps).collect();
        p.probe = None;
        p.epoch = self.epoch;
    }

    /// The path for the next packet of pair `i`, and the probe round it belongs to.
    fn choose(&mut self, now: Time, i: usize) -> (usize, Option<u8>) {
        let c = self.c;
        let t_explore = self.t_explore;
        let p = &mut self.pairs[i];
        if p.probe.is_none() {
            // The path quiet the longest, if it has been quiet for T_explore.
            let due = (0..p.paths.len())
                .filter(|&k| now >= p.paths[k].quiet_since + t_explore)
                .min_by_key(|&k| p.paths[k].quiet_since);
            if let Some(k) = due {
                let id = p.next_probe;
                p.next_probe = id.wrapping_add(1);
                p.paths[k].awaiting = Some(id);
                p.paths[k].quiet_since = now;
                p.probe = Some((k, id, c));
                self.stats.probes += 1;
            }
        }
        if let Some((k, id, left)) = p.probe {
            p.probe = (left > 1).then_some((k, id, left - 1));
            return (k, Some(id));
        }
        (p.swrr.pick(&p.weights), None)
    }

    /// A feedback about pair (`src` → `dst`)'s path `port` arrived at `src`.
    fn on_feedback(&mut self, now: Time, src: u32, dst: u32, port: u16, fb: Feedback) {
        let Some(p) = self
            .tunnel
            .find(src, dst)
            .and_then(|i| self.pairs.get_mut(i))
        else {
            return;
        };
        let Some(k) = p.paths.iter().position(|x| x.port == port) else {
            return;
        };
        let path = &mut p.paths[k];
        match fb.probe {
            None => {
                path.ab_bps = fb.rate_bps;
                path.quiet_since = now;
                path.awaiting = None;
                self.stats.ecn_updates += 1;
            }
            Some(id) if path.awaiting == Some(id) => {
                path.ab_bps = fb.rate_bps;
                path.awaiting = None;
                self.stats.probe_updates += 1;
            }
            Some(_) => return,
        }
        p.weights[k] = fb.rate_bps;
    }

    /// A packet of pair `i` arrived at its receiver on outer port `port`: the feedback table.
    fn measure(&mut self, now: Time, i: usize, port: u16, pk: &Packet) {
        let c = self.c;
        let p = &mut self.pairs[i];
        let k = match p.meas.iter().position(|m| m.port == port) {
            Some(k) => k,
            None => {
                p.meas.push(Meas {
                    port,
                    run: None,
                    result: None,
                });
                p.meas.len() - 1
            }
        };
        let m = &mut p.meas[k];
        let probe = (pk.overlay.aux_flags & PROBE != 0).then_some((pk.overlay.aux[0] >> 24) as u8);
        let ce = pk.is(flags::CE);
        let start = Run {
            probe: None,
            t0: now,
            count: 1,
            bytes: 0,
        };
        match &mut m.run {
            // A mark (re)starts the measurement unless a mark started the running one.
            Some(r) if ce && r.probe.is_some() => m.run = Some(start),
            None if ce => m.run = Some(start),
            None if probe.is_some() => m.run = Some(Run { probe, ..start }),
            None => {}
            Some(r) => {
                r.count += 1;
                r.bytes += pk.wire_bytes() as u64;
                if r.count >= c {
                    let dt = (now - r.t0).max(1) as u128;
                    let rate = (r.bytes as u128 * 8 * PS_PER_S as u128 / dt) as u64;
                    m.result = Some(Feedback {
                        rate_bps: rate.max(1000),
                        probe: r.probe,
                    });
                    m.run = None;
                    self.stats.measurements += 1;
                }
            }
        }
    }

    /// The next result to feed back for pair `i` (round robin over its paths).
    fn take_feedback(&mut self, i: usize) -> Option<(u16, Feedback)> {
        let p = &mut self.pairs[i];
        let n = p.meas.len();
        for j in 0..n {
            let k = (p.fb_next + j) % n;
            if let Some(fb) = p.meas[k].result.take() {
                p.fb_next = (k + 1) % n;
                return Some((p.meas[k].port, fb));
            }
        }
        None
    }
}

impl EdgeShim for Eman {
    fn on_send(&mut self, now: Time, pk: &mut Packet, v: &ShimView) {
        let i = self.pair(pk.src, pk.dst);
        if self.pairs[i].epoch != self.epoch {
            self.refresh(now, i, v);
        }
        if self.pairs[i].paths.len() < 2 {
            return;
        }
        let (k, probe) = self.choose(now, i);
        self.tunnel.encapsulate(i, pk, self.pairs[i].paths[k].port);
        let o = &mut pk.overlay;
        if let Some(id) = probe {
            o.aux[0] |= (id as u32) << 24;
            o.aux_flags |= PROBE;
        }
        // Feedback for the other direction, whose receiver is this host.
        if let Some((port, fb)) = self
            .tunnel
            .find(pk.dst, pk.src)
            .and_then(|r| self.take_feedback(r))
        {
            o.aux[1] = (fb.rate_bps / 1000).min(u32::MAX as u64) as u32;
            o.aux[2] = port as u32;
            match fb.probe {
                None => o.aux_flags |= FBE,
                Some(id) => {
                    o.aux_flags |= FBP;
                    o.aux[2] |= (id as u32) << 16;
                }
            }
        }
    }

    fn on_receive(&mut self, now: Time, pk: Packet, deliver: &mut Vec<Packet>) {
        let o = pk.overlay;
        if o.aux_flags & ENCAPSULATED == 0 {
            deliver.push(pk);
            return;
        }
        if o.aux_flags & (FBE | FBP) != 0 {
            let fb = Feedback {
                rate_bps: o.aux[1] as u64 * 1000,
                probe: (o.aux_flags & FBP != 0).then_some((o.aux[2] >> 16) as u8),
            };
            self.on_feedback(now, pk.dst, pk.src, o.aux[2] as u16, fb);
        }
        let i = self.pair(pk.src, pk.dst);
        self.measure(now, i, o.path, &pk);
        // Decapsulation leaves the outer header's CE mark on the packet (TCP sees it).
        self.tunnel.receive(now, i, pk, deliver);
    }

    fn on_timer(&mut self, now: Time, host: u32, deliver: &mut Vec<Packet>) {
        self.tunnel.on_timer(now, host, deliver);
    }

    fn next_timer(&self, host: u32) -> Time {
        self.tunnel.next_timer(host)
    }

    fn on_routes(&mut self, _v: &ShimView) {
        self.epoch = self.epoch.wrapping_add(1) % u32::MAX;
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let s = self.stats;
        let mut c = vec![
            ("eman_measurements", s.measurements),
            ("eman_ecn_updates", s.ecn_updates),
            ("eman_probes", s.probes),
            ("eman_probe_updates", s.probe_updates),
        ];
        c.extend(self.tunnel.counters());
        c
    }
}

#[cfg(test)]
mod tests {
    use super::super::tunnel::ENCAP_BYTES;
    use super::*;
    use crate::lb::ecmp_salt;
    use crate::net::port::Port;
    use crate::net::routing::Routes;
    use crate::net::topology::{Graph, TopologyConfig};
    use crate::units::PS_PER_US;

    /// EMAN's Fig. 1(a): A and A2 under L0, B under L1, two paths (via S0, via S1) of 6 Gbps;
    /// S0->L1 runs at `left_bps` (a degradation the shim cannot see in the nominal rates).
    struct Fab {
        g: Graph,
        routes: Routes,
        salts: Vec<u64>,
        ports: Vec<Port>,
    }

    const A: u32 = 0;
    const A2: u32 = 1;
    const B: u32 = 2;

    impl Fab {
        fn new(left_bps: u64) -> Fab {
            let cfg: TopologyConfig = serde_json::from_value(serde_json::json!({
                "kind": "explicit",
                "switches": [{"name": "L0", "role": "leaf"}, {"name": "L1", "role": "leaf"},
                             {"name": "S0", "role": "spine"}, {"name": "S1", "role": "spine"}],
                "hosts": [{"name": "A", "attach": "L0", "rate": "100Gbps"},
                          {"name": "A2", "attach": "L0", "rate": "100Gbps"},
                          {"name": "B", "attach": "L1", "rate": "100Gbps"}],
                "links": [{"a": "L0", "b": "S0", "rate": "6Gbps"}, {"a": "S0", "b": "L1", "rate": "6Gbps"},
                          {"a": "L0", "b": "S1", "rate": "6Gbps"}, {"a": "S1", "b": "L1", "rate": "6Gbps"}]
            }))
            .unwrap();
            let g = cfg.build().unwrap();
            assert_eq!(g.node_id("A"), Some(A));
            assert_eq!(g.node_id("B"), Some(B));
            let routes = Routes::compute(&g, &vec![true; g.links.len()]);
            let salts = (0..g.nodes.len() as u32)
                .map(|s| ecmp_salt(s, true))
                .collect();
            let mut ports: Vec<Port> = g
                .links
                .iter()
                .map(|l| Port::new(l.rate_bps, 0, 1 << 20, 0))
                .collect();
            let left = g.resolve_link("S0->L1", "test").unwrap()[0];
            ports[left as usize].rate_bps = left_bps;
            Fab {
                g,
                routes,
                salts,
                ports,
            }
        }
        fn view(&self) -> ShimView<'_> {
            ShimView {
                g: &self.g,
                routes: &self.routes,
                salts: &self.salts,
                ports: &self.ports,
            }
        }
        /// 0 for the path of outer port `port` from `src` to `dst` through S0, 1 through S1.
        fn side(&self, src: u32, dst: u32, port: u16) -> usize {
            let links =
                super::super::paths::walk(&self.g, &self.routes, &self.salts, src, dst, port);
            let s0 = self.g.node_id("S0").unwrap();
            usize::from(!links.iter().any(|&l| self.g.links[l as usize].to == s0))
        }
        /// The outer port of the path through S0 (side 0) or S1 from `src` to `dst`.
        fn port(&self, src: u32, dst: u32, side: usize) -> u16 {
            (0..64).find(|&p| self.side(src, dst, p) == side).unwrap()
        }
    }

    fn eman(c: u32, t_explore: Time) -> Eman {
        EmanConfig {
            c_ratecalc: c,
            t_explore: Duration(t_explore),
            ..Default::default()
        }
        .build()
    }

    /// A full-size data segment from `src` to `dst` (1518-byte frame).
    fn data(src: u32, dst: u32) -> Packet {
        Packet {
            src,
            dst,
            payload: 1460,
            size: 1518,
            flags: flags::ECT,
            ..Default::default()
        }
    }

    /// Send `n` packets A -> B at 1 µs spacing from `t0`; how many took each side.
    fn split(e: &mut Eman, f: &Fab, t0: Time, n: usize) -> [usize; 2] {
        let mut c = [0; 2];
        for k in 0..n {
            let mut pk = data(A, B);
            e.on_send(t0 + k as Time * PS_PER_US, &mut pk, &f.view());
            c[f.side(A, B, pk.overlay.path)] += 1;
        }
        c
    }

    /// A packet B -> A carrying feedback about A -> B's path on `side`.
    fn feedback(f: &Fab, side: usize, rate_bps: u64, probe: Option<u8>) -> Packet {
        let mut pk = data(B, A);
        pk.size += ENCAP_BYTES;
        pk.overlay.path = f.port(B, A, 0);
        pk.overlay.aux = [0, (rate_bps / 1000) as u32, f.port(A, B, side) as u32];
        pk.overlay.aux_flags = ENCAPSULATED | FBE;
        if let Some(id) = probe {
            pk.overlay.aux_flags = ENCAPSULATED | FBP;
            pk.overlay.aux[2] |= (id as u32) << 16;
        }
        pk
    }

    #[test]
    fn path_table_starts_at_nominal_capacity_and_splits_by_available_bandwidth() {
        // (feedback on (side, Gbps, probe id), packets A->B per side out of 90)
        let g = 1_000_000_000;
        #[allow(clippy::type_complexity)]
        let cases: &[(&[(usize, u64, Option<u8>)], [usize; 2])] = &[
            // AB starts at the nominal 6:6 although S0->L1 runs at 3 (the paper's 1:1).
            (&[], [45, 45]),
            // FBE: AB_left <- 3 Gbps: 1:2.
            (&[(0, 3, None)], [30, 60]),
            (&[(0, 3, None), (1, 6, None)], [30, 60]),
            (&[(0, 3, None), (1, 4, None)], [39, 51]), // 3:4, rounded by the round robin
            // A probe answer nobody awaits changes nothing.
            (&[(0, 3, Some(0))], [45, 45]),
            (&[(0, 3, None), (0, 6, Some(5))], [30, 60]),
        ];
        for (fbs, want) in cases {
            let f = Fab::new(3 * g);
            let mut e = eman(10, 1_000 * PS_PER_US * 1000);
            split(&mut e, &f, 0, 2); // the pair exists, its paths found
            e.on_send(0, &mut data(B, A), &f.view());
            for &(side, gbps, probe) in fbs.iter() {
                let mut up = Vec::new();
                e.on_receive(PS_PER_US, feedback(&f, side, gbps * g, probe), &mut up);
            }
            let got = split(&mut e, &f, 10 * PS_PER_US, 90);
            assert!(
                got[0].abs_diff(want[0]) <= 1,
                "{fbs:?}: {got:?}, want {want:?}"
            );
        }
    }

    /// Deliver packets A->B on the path through S0 at the given (µs, CE, probe id); then send
    /// packets B->A and return the feedback each carries: (side, Gbps, FBE, probe id).
    fn measured(
        c: u32,
        arrivals: &[(u64, bool, Option<u8>)],
        replies: usize,
    ) -> Vec<Option<(usize, f64, bool, Option<u8>)>> {
        let f = Fab::new(6_000_000_000);
        let mut e = eman(c, 1_000_000 * PS_PER_US);
        e.on_send(0, &mut data(B, A), &f.view());
        let port = f.port(A, B, 0);
        let mut up = Vec::new();
        for (seq, &(us, ce, probe)) in arrivals.iter().enumerate() {
            let mut pk = data(A, B);
            pk.size += ENCAP_BYTES;
            pk.overlay.path = port;
            pk.overlay.aux = [seq as u32, 0, 0];
            pk.overlay.aux_flags = ENCAPSULATED;
            if ce {
                pk.flags |= flags::CE;
            }
            if let Some(id) = probe {
                pk.overlay.aux[0] |= (id as u32) << 24;
                pk.overlay.aux_flags |= PROBE;
            }
            e.on_receive(us * PS_PER_US, pk, &mut up);
        }
        assert_eq!(up.len(), arrivals.len(), "all in order, all passed up");
        (0..replies)
            .map(|_| {
                let mut pk = data(B, A);
                e.on_send(1_000 * PS_PER_US, &mut pk, &f.view());
                let o = pk.overlay;
                (o.aux_flags & (FBE | FBP) != 0).then(|| {
                    (
                        f.side(A, B, o.aux[2] as u16),
                        o.aux[1] as f64 / 1e6,
                        o.aux_flags & FBE != 0,
                        (o.aux_flags & FBP != 0).then_some((o.aux[2] >> 16) as u8),
                    )
                })
            })
            .collect()
    }

    #[test]
    fn the_receiver_measures_on_ecn_and_probes_as_the_paper_says() {
        // A wire packet is 1518 + 40 + 20 = 1578 bytes; packets 1 µs apart carry 12.624 Gbps.
        let rate = |n: f64, us: f64| n * 1578.0 * 8.0 / us / 1e3;
        let (no, ce) = (false, true);
        // (C, arrivals (µs, CE, probe id), feedback expected on the next 3 packets back)
        #[allow(clippy::type_complexity)]
        let cases: Vec<(
            u32,
            Vec<(u64, bool, Option<u8>)>,
            Vec<Option<(usize, f64, bool, Option<u8>)>>,
        )> = vec![
            // No mark, no probe: nothing measured.
            (
                4,
                vec![(1, no, None), (2, no, None), (3, no, None), (4, no, None)],
                vec![None],
            ),
            // A mark starts a measurement over C packets (itself first): 3 packets in 3 µs.
            (
                4,
                vec![(1, ce, None), (2, no, None), (3, no, None), (4, no, None)],
                vec![Some((0, rate(3.0, 3.0), true, None)), None],
            ),
            // Not yet C packets: nothing to feed back.
            (
                4,
                vec![(1, ce, None), (2, no, None), (3, no, None)],
                vec![None],
            ),
            // Every packet marked: later marks do not restart an ECN-started measurement, so two
            // complete (packets 1-4 and 5-8, spaced 1 and 2 µs).
            (
                4,
                vec![
                    (1, ce, None),
                    (2, ce, None),
                    (3, ce, None),
                    (4, ce, None),
                    (6, ce, None),
                    (8, ce, None),
                    (10, ce, None),
                    (12, ce, None),
                ],
                vec![Some((0, rate(3.0, 6.0), true, None)), None],
            ),
            // A probe packet starts one, answered with its id.
            (
                4,
                vec![
                    (1, no, Some(7)),
                    (2, no, Some(7)),
                    (4, no, Some(7)),
                    (5, no, Some(7)),
                ],
                vec![Some((0, rate(3.0, 4.0), false, Some(7))), None],
            ),
            // A mark restarts a probe's measurement: ECN from packet 2 to 5.
            (
                4,
                vec![
                    (1, no, Some(7)),
                    (2, ce, Some(7)),
                    (3, no, Some(7)),
                    (4, no, Some(7)),
                    (6, no, None),
                ],
                vec![Some((0, rate(3.0, 4.0), true, None)), None],
            ),
            // A probe does not restart a running measurement.
            (
                4,
                vec![
                    (1, ce, None),
                    (2, no, Some(3)),
                    (3, no, Some(3)),
                    (4, no, Some(3)),
                ],
                vec![Some((0, rate(3.0, 3.0), true, None)), None],
            ),
            // Only the latest result of a path is kept for feedback.
            (
                2,
                vec![(1, ce, None), (2, no, None), (3, ce, None), (5, no, None)],
                vec![Some((0, rate(1.0, 2.0), true, None)), None],
            ),
        ];
        for (c, arr, want) in cases {
            let got = measured(c, &arr, want.len());
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                match (g, w) {
                    (None, None) => {}
                    (Some(g), Some(w)) => {
                        assert_eq!((g.0, g.2, g.3), (w.0, w.2, w.3), "{arr:?}: {got:?}");
                        assert!(
                            (g.1 - w.1).abs() < 1e-3,
                            "{arr:?}: {} Gbps, want {}",
                            g.1,
                            w.1
                        );
                    }
                    _ => panic!("{arr:?}: got {got:?}, want {want:?}"),
                }
            }
        }
    }

    #[test]
    fn feedback_takes_one_path_per_packet_round_robin_and_each_result_once() {
        let f = Fab::new(6_000_000_000);
        let mut e = eman(2, 1_000_000 * PS_PER_US);
        e.on_send(0, &mut data(B, A), &f.view());
        let mut up = Vec::new();
        let mut seq = 0;
        // Two packets on `side`, the first marked: one finished ECN measurement.
        let mut result = |e: &mut Eman, side: usize, t: u64| {
            for (k, ce) in [true, false].into_iter().enumerate() {
                let mut pk = data(A, B);
                pk.size += ENCAP_BYTES;
                pk.overlay.path = f.port(A, B, side);
                pk.overlay.aux = [seq, 0, 0];
                pk.overlay.aux_flags = ENCAPSULATED;
                seq += 1;
                if ce {
                    pk.flags |= flags::CE;
                }
                e.on_receive((t + k as u64) * PS_PER_US, pk, &mut up);
            }
        };
        let reply = |e: &mut Eman| {
            let mut pk = data(B, A);
            e.on_send(100 * PS_PER_US, &mut pk, &f.view());
            (pk.overlay.aux_flags & FBE != 0).then(|| f.side(A, B, pk.overlay.aux[2] as u16))
        };
        result(&mut e, 0, 1);
        result(&mut e, 1, 3);
        assert_eq!(reply(&mut e), Some(0));
        result(&mut e, 0, 5); // a new result on the left before the right's was sent
        assert_eq!(reply(&mut e), Some(1), "round robin: the right's turn");
        assert_eq!(reply(&mut e), Some(0));
        assert_eq!(reply(&mut e), None, "each result once");
    }

    #[test]
    fn a_path_quiet_for_t_explore_is_probed_with_c_packets() {
        let t_explore = 1_000 * PS_PER_US;
        // (ECN feedback on side at µs, then (from µs, packets): the probes seen as
        // (side, id, count of consecutive P packets))
        #[allow(clippy::type_complexity)]
        let cases: &[(Option<(usize, u64)>, Vec<(usize, u8, usize)>)] = &[
            // Both paths quiet since the pair's first packet (t = 0): at 1 ms the left is probed
            // (the first of the two quietest), then the right; then no probe until 2 ms.
            (None, vec![(0, 0, 5), (1, 1, 5)]),
            // ECN feedback on the left at 0.5 ms: only the right is due at 1 ms, the left at 1.5.
            (Some((0, 500)), vec![(1, 0, 5), (0, 1, 5)]),
        ];
        for (fb, want) in cases {
            let f = Fab::new(6_000_000_000);
            let mut e = eman(5, t_explore);
            split(&mut e, &f, 0, 10);
            e.on_send(0, &mut data(B, A), &f.view());
            if let Some((side, us)) = fb {
                let mut up = Vec::new();
                e.on_receive(
                    us * PS_PER_US,
                    feedback(&f, *side, 3_000_000_000, None),
                    &mut up,
                );
            }
            // Packets every 10 µs from 0.9 ms to 1.95 ms.
            let mut probes: Vec<(usize, u8, usize)> = Vec::new();
            for k in 0..106 {
                let t = 900 * PS_PER_US + k * 10 * PS_PER_US;
                let mut pk = data(A, B);
                e.on_send(t, &mut pk, &f.view());
                let o = pk.overlay;
                if o.aux_flags & PROBE == 0 {
                    continue;
                }
                let side = f.side(A, B, o.path);
                let id = (o.aux[0] >> 24) as u8;
                match probes.last_mut() {
                    Some(p) if p.0 == side && p.1 == id => p.2 += 1,
                    _ => {
                        // A probe starts only once its path has been quiet for T_explore.
                        let since = match fb {
                            Some((s, us)) if *s == side => us * PS_PER_US,
                            _ => 0,
                        };
                        assert!(t >= since + t_explore, "{fb:?}: probe at {t}");
                        probes.push((side, id, 1));
                    }
                }
            }
            let want2: Vec<_> = want.clone();
            assert_eq!(probes, want2, "{fb:?}");
        }
    }

    #[test]
    fn a_probe_answer_with_the_awaited_id_updates_the_path() {
        let f = Fab::new(6_000_000_000);
        let mut e = eman(2, 1_000 * PS_PER_US);
        split(&mut e, &f, 0, 2);
        e.on_send(0, &mut data(B, A), &f.view());
        // At 1 ms the left is probed with id 0, then the right with id 1.
        let mut ids = Vec::new();
        for k in 0..4 {
            let mut pk = data(A, B);
            e.on_send(1_000 * PS_PER_US + k, &mut pk, &f.view());
            ids.push((
                f.side(A, B, pk.overlay.path),
                (pk.overlay.aux[0] >> 24) as u8,
            ));
        }
        assert_eq!(ids, [(0, 0), (0, 0), (1, 1), (1, 1)]);
        let mut up = Vec::new();
        // The right's answer with the left's id is ignored; the left's own answer counts.
        for (side, id) in [(1, 0), (0, 0)] {
            e.on_receive(
                1_100 * PS_PER_US,
                feedback(&f, side, 2_000_000_000, Some(id)),
                &mut up,
            );
        }
        assert_eq!(split(&mut e, &f, 1_200 * PS_PER_US, 80), [20, 60], "AB 2:6");
        // A second answer to the same probe is no longer awaited.
        e.on_receive(
            1_300 * PS_PER_US,
            feedback(&f, 0, 6_000_000_000, Some(0)),
            &mut up,
        );
        assert_eq!(split(&mut e, &f, 1_400 * PS_PER_US, 80), [20, 60]);
    }

    #[test]
    fn forty_bytes_on_the_wire_the_mark_reaches_tcp_and_one_path_pairs_pass_through() {
        let f = Fab::new(6_000_000_000);
        let mut e = eman(10, 1_000 * PS_PER_US);
        // (src, dst, encapsulated)
        for (src, dst, encap) in [(A, B, true), (B, A, true), (A, A2, false), (A2, A, false)] {
            let mut pk = data(src, dst);
            pk.flags |= flags::CE;
            let before = pk;
            e.on_send(0, &mut pk, &f.view());
            if encap {
                assert_eq!(pk.size, before.size + 40);
                assert_ne!(pk.overlay.aux_flags & ENCAPSULATED, 0);
            } else {
                assert_eq!(
                    (pk.size, pk.overlay, pk.flags),
                    (before.size, before.overlay, before.flags),
                    "a pair with one path is left alone"
                );
            }
            let mut up = Vec::new();
            e.on_receive(PS_PER_US, pk, &mut up);
            assert_eq!(up.len(), 1);
            assert_eq!(up[0].size, before.size, "decapsulated");
            assert!(up[0].is(flags::CE), "the outer mark is copied in");
        }
    }

    #[test]
    fn packets_overtaking_on_the_faster_path_go_up_in_order() {
        let f = Fab::new(6_000_000_000);
        let mut e = eman(10, 1_000 * PS_PER_US);
        let mut sent: Vec<Packet> = (0..6)
            .map(|k| {
                let mut pk = data(A, B);
                pk.seq = k * 1460;
                e.on_send(0, &mut pk, &f.view());
                pk
            })
            .collect();
        // The left path's packets arrive late.
        sent.sort_by_key(|p| f.side(A, B, p.overlay.path) == 0);
        let mut up = Vec::new();
        for (k, pk) in sent.into_iter().enumerate() {
            e.on_receive(k as u64 * PS_PER_US, pk, &mut up);
        }
        let seqs: Vec<u64> = up.iter().map(|p| p.seq).collect();
        assert_eq!(seqs, [0, 1460, 2920, 4380, 5840, 7300]);
        assert!(
            e.counters().contains(&("reorder_held", 3)),
            "{:?}",
            e.counters()
        );
    }

    #[test]
    fn bad_parameters_name_the_field() {
        // (field, value, word in the message)
        let cases = [
            ("c_ratecalc", serde_json::json!(1), "2..=10000"),
            ("c_ratecalc", serde_json::json!(20000), "2..=10000"),
            ("t_explore", serde_json::json!("0us"), "at least 1us"),
        ];
        super::super::shim::assert_bad_fields_named::<EmanConfig>(&cases, EmanConfig::validate);
    }
}
