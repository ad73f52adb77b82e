//! Clove-ECN (Katta et al., CoNEXT'17) as the EMAN paper describes and simulates it
//! (`../shared/papers/eman.md` §II-A, §V-A; `../shared/SCHEMES.md` §3, §12.2), and `clove-ns3`,
//! the Hermes authors' ns-3 Clove (SCHEMES.md §3.3).
//!
//! Per host pair (the sender's "destination hypervisor"; all flows of the pair share it):
//! - **Paths**: the pair's k paths from path discovery (`host::paths::discover`), one outer UDP
//!   source port each; weights start equal (1 each).
//! - **Edge flowlets**: a packet of a flow (a TCP connection, one direction) that follows the
//!   flow's previous packet by more than `flowlet_timeout` starts a new flowlet, which takes a
//!   path by smooth weighted round robin on the weights (`clove`; EMAN §II-A: "distributes
//!   traffic on each path proportionally to its weight") or by weighted random choice
//!   (`clove-ns3`, the ns-3 code's `CalPath`).
//! - **ECN relay**: switches mark the outer header; the receiving shim notes, per path, that a
//!   CE mark arrived, and relays it to the sender on the pair's reverse traffic, one path per
//!   reverse packet (round robin over the paths with a mark pending).
//! - **Weight cut**: on a relayed mark for path p, at most once per `cut_interval` (half an
//!   RTT) per path: w_p <- decay x w_p (decay 2/3, §V-A). `clove` leaves the other weights
//!   as they are, as EMAN's worked example computes them (§II-A: "the weight of left path will
//!   decay to 2/3 ... a ratio of 2:3 (2/3:1)"); `clove-ns3` spreads the removed
//!   (1 - decay) x w_p equally over the other paths, as the ns-3 code (and the Clove paper as
//!   SCHEMES.md §3.1 recalls it) does, so the weights always sum to k. `spread` overrides it.
//! - **ECN hiding** (`clove` only): the receiving shim clears CE before TCP sees it unless
//!   every path of the pair has carried a mark within `hide_window` (200 RTTs, §V-A; EMAN
//!   §II-A: "Clove will intercept ECN until it sees ECN on all parallel paths"). `clove-ns3`
//!   hides nothing: its TCP reacts to every mark (SCHEMES.md §3.3 (a)).
//!
//! Choices (docs/CLOVE_HERMES.md has them all): the tunnel is EMAN's (`host::tunnel`: 40 bytes
//! on the wire, so the edge schemes compare at equal overhead) without its reorder buffer (Clove
//! has none); the receiver learns how many paths the pair has from the sender's discovery (a
//! real Clove learns them by the same traceroute); a reroute or rate change finds the paths
//! again and restarts the weights at 1; wire layout in `Packet::overlay`: `aux[2]` = the port of
//! the relayed mark, `aux_flags` bit `FB_CE`.
//!
//! The shim reads and writes only the packets' overlay, their size (the tunnel) and, when it
//! hides a mark, their CE bit; it never touches a transport's state.

use super::paths::{discover, DISCOVERY_PORTS};
use super::shim::{EdgeShim, ShimView};
use super::tunnel::{Swrr, Tunnel, ENCAPSULATED};
use crate::error::Error;
use crate::net::packet::{flags, Packet};
use crate::rng::{stream, Rng};
use crate::units::{Duration, Time, PS_PER_MS, PS_PER_US};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `overlay.aux_flags` bit: the packet relays a CE mark for the port in `aux[2]`.
const FB_CE: u8 = 1;
/// Weights as integers for the round robin: w x 2^20.
const W_SCALE: f64 = (1u64 << 20) as f64;

/// Which Clove.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloveVariant {
    /// Clove-ECN as the EMAN paper simulates it: weighted round robin, ECN hidden.
    Ecn,
    /// The Hermes authors' ns-3 Clove: weighted random choice, no hiding.
    Ns3,
}

/// Clove's parameters (`[scheme]` with `name = "clove"` or `"clove-ns3"`); the defaults are
/// EMAN's simulation settings (§V-A) at its 160 µs base RTT.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloveConfig {
    /// A gap longer than this between two packets of a flow starts a new flowlet, placed
    /// anew (the Hermes authors' comparisons: 500 µs). At least 1 µs.
    #[serde(default = "flowlet_timeout")]
    pub flowlet_timeout: Duration,
    /// The factor a path's weight is cut to on a relayed ECN mark, in (0, 1) (§V-A: 2/3).
    #[serde(default = "decay")]
    pub decay: f64,
    /// A path's weight is cut at most once per this interval (half an RTT: 80 µs at EMAN's
    /// 160 µs base RTT; ns-3: 40 µs).
    #[serde(default = "cut_interval")]
    pub cut_interval: Duration,
    /// Spread the weight a cut removes equally over the pair's other paths (true: the ns-3
    /// code, the default of `clove-ns3`), or leave the other weights as they are (false: EMAN's
    /// worked example of §II-A, 1 -> 2/3 -> 4/9 against 1, the default of `clove`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<bool>,
    /// `clove`: a CE mark reaches TCP only if every path of the pair carried a mark within this
    /// window (§V-A: 200 RTTs, 32 ms at 160 µs); "0us": never hide. `clove-ns3` ignores it.
    #[serde(default = "hide_window")]
    pub hide_window: Duration,
}

fn flowlet_timeout() -> Duration {
    Duration(500 * PS_PER_US)
}
fn decay() -> f64 {
    2.0 / 3.0
}
fn cut_interval() -> Duration {
    Duration(80 * PS_PER_US)
}
fn hide_window() -> Duration {
    Duration(32 * PS_PER_MS)
}

impl Default for CloveConfig {
    fn default() -> Self {
        CloveConfig {
            flowlet_timeout: flowlet_timeout(),
            decay: decay(),
            cut_interval: cut_interval(),
            spread: None,
            hide_window: hide_window(),
        }
    }
}

impl CloveConfig {
    pub fn validate(&self, path: &str) -> Result<(), Error> {
        if !(self.decay > 0.0 && self.decay < 1.0) {
            return Err(Error::config(
                &format!("{path}.decay"),
                format!(
                    "{} is not allowed; use a factor in (0, 1) (EMAN §V-A: 2/3, written 0.6667)",
                    self.decay
                ),
            ));
        }
        if self.flowlet_timeout.0 < PS_PER_US {
            return Err(Error::config(
                &format!("{path}.flowlet_timeout"),
                format!(
                    "{} is too short; allowed: at least 1us (the Hermes authors' comparisons use 500us)",
                    self.flowlet_timeout
                ),
            ));
        }
        Ok(())
    }

    pub fn build(&self, seed: u64, variant: CloveVariant) -> Clove {
        Clove {
            variant,
            flowlet_timeout: self.flowlet_timeout.0,
            decay: self.decay,
            cut_interval: self.cut_interval.0,
            spread: self.spread.unwrap_or(variant == CloveVariant::Ns3),
            hide_window: match variant {
                CloveVariant::Ecn => self.hide_window.0,
                CloveVariant::Ns3 => 0,
            },
            tunnel: Tunnel::new(0, 0),
            epoch: 0,
            pairs: Vec::new(),
            flows: Vec::new(),
            rng: Rng::new(seed, stream::SCHEME + 0xC10E),
            stats: Stats::default(),
        }
    }
}

/// A host pair (src -> dst): the sender's side at src, the receiver's at dst.
#[derive(Clone, Debug, Default)]
struct Pair {
    /// The routing epoch the paths were found in (`u32::MAX`: not yet).
    epoch: u32,
    ports: Vec<u16>,
    /// Sender: the weights (sum k with `spread`), when each was last cut (`None`: never).
    w: Vec<f64>,
    last_cut: Vec<Option<Time>>,
    swrr: Swrr,
    /// Receiver: per path, the last CE mark's arrival and whether one waits to be relayed.
    last_ce: Vec<Option<Time>>,
    pending: Vec<bool>,
    fb_next: usize,
}

/// One flow (connection and direction): its pair, path, last packet.
#[derive(Clone, Copy, Debug)]
struct Flow {
    pair: u32,
    path: u32,
    last: Time,
}

#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    flowlets: u64,
    cuts: u64,
    marks_relayed: u64,
    ecn_hidden: u64,
    ecn_passed: u64,
}

pub struct Clove {
    variant: CloveVariant,
    flowlet_timeout: Time,
    decay: f64,
    cut_interval: Time,
    spread: bool,
    hide_window: Time,
    tunnel: Tunnel,
    /// Bumped when routes change: pairs find their paths again on their next packet.
    epoch: u32,
    /// By tunnel pair id.
    pairs: Vec<Pair>,
    /// By connection x 2 + direction; `None`: no packet yet.
    flows: Vec<Option<Flow>>,
    rng: Rng,
    stats: Stats,
}

/// The flow key of a packet: its connection and which way it goes.
fn flow_key(pk: &Packet) -> usize {
    pk.conn as usize * 2 + usize::from(pk.src < pk.dst)
}

impl Clove {
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

    /// Find pair `i`'s paths (again); the weights restart equal.
    fn refresh(&mut self, i: usize, v: &ShimView) {
        let (src, dst) = self.tunnel.ends[i];
        let set = discover(v.g, v.routes, v.salts, src, dst, DISCOVERY_PORTS);
        let k = set.ports.len();
        let p = &mut self.pairs[i];
        p.ports = set.ports;
        p.w = vec![1.0; k];
        p.last_cut = vec![None; k];
        p.last_ce = vec![None; k];
        p.pending = vec![false; k];
        p.swrr = Swrr::default();
        p.epoch = self.epoch;
    }

    /// The path for a new flowlet of pair `i`.
    fn pick(&mut self, i: usize) -> usize {
        let p = &mut self.pairs[i];
        match self.variant {
            CloveVariant::Ecn => {
                let w: Vec<u64> = p.w.iter().map(|&x| (x * W_SCALE) as u64).collect();
                p.swrr.pick(&w)
            }
            CloveVariant::Ns3 => {
                // ns-3's CalPath: r uniform in [0, 1); the first path whose running sum of
                // weights over their total reaches r.
                let total: f64 = p.w.iter().sum();
                let r = self.rng.f64() * total;
                let mut acc = 0.0;
                for (k, &x) in p.w.iter().enumerate() {
                    acc += x;
                    if r < acc {
                        return k;
                    }
                }
                p.w.len() - 1
            }
        }
    }

    /// A relayed mark for path `port` of pair `i` reached its sender at `now`: cut the path's
    /// weight (at most once per `cut_interval`).
    fn on_mark(&mut self, now: Time, i: usize, port: u16) {
        let (decay, spread, interval) = (self.decay, self.spread, self.cut_interval);
        let p = &mut self.pairs[i];
        let Some(k) = p.ports.iter().position(|&x| x == port) else {
            return;
        };
        if p.last_cut[k].is_some_and(|t| now < t + interval) {
            return;
        }
        p.last_cut[k] = Some(now);
        let old = p.w[k];
        p.w[k] = decay * old;
        let n = p.w.len();
        if spread && n > 1 {
            let share = (1.0 - decay) * old / (n - 1) as f64;
            for (q, w) in p.w.iter_mut().enumerate() {
                if q != k {
                    *w += share;
                }
            }
        } else {
            // Only the ratios matter: keep the largest weight at 1 so that they never vanish.
            let max = p.w.iter().cloned().fold(0.0, f64::max);
            if max > 0.0 && max < 1e-3 {
                p.w.iter_mut().for_each(|w| *w /= max);
            }
        }
        self.stats.cuts += 1;
    }

    /// A packet of pair `i` arrived at its receiver on `port`: note a mark; whether TCP may see
    /// it (every path marked within the hiding window).
    fn note_mark(&mut self, now: Time, i: usize, port: u16) -> bool {
        let hide = self.hide_window;
        let p = &mut self.pairs[i];
        if let Some(k) = p.ports.iter().position(|&x| x == port) {
            p.last_ce[k] = Some(now);
            p.pending[k] = true;
        }
        hide == 0 || p.last_ce.iter().all(|t| t.is_some_and(|t| now <= t + hide))
    }

    /// The next mark to relay for pair `i` (round robin over its paths).
    fn take_mark(&mut self, i: usize) -> Option<u16> {
        let p = &mut self.pairs[i];
        let n = p.pending.len();
        for j in 0..n {
            let k = (p.fb_next + j) % n;
            if std::mem::take(&mut p.pending[k]) {
                p.fb_next = (k + 1) % n;
                return Some(p.ports[k]);
            }
        }
        None
    }
}

impl EdgeShim for Clove {
    fn on_send(&mut self, now: Time, pk: &mut Packet, v: &ShimView) {
        let i = self.pair(pk.src, pk.dst);
        if self.pairs[i].epoch != self.epoch {
            self.refresh(i, v);
        }
        let n = self.pairs[i].ports.len();
        if n < 2 {
            return;
        }
        let key = flow_key(pk);
        if self.flows.len() <= key {
            self.flows.resize(key + 1, None);
        }
        let cur = self.flows[key];
        let path = match cur {
            Some(f)
                if f.pair as usize == i
                    && (f.path as usize) < n
                    && now <= f.last + self.flowlet_timeout =>
            {
                f.path as usize
            }
            _ => {
                self.stats.flowlets += 1;
                self.pick(i)
            }
        };
        self.flows[key] = Some(Flow {
            pair: i as u32,
            path: path as u32,
            last: now,
        });
        let port = self.pairs[i].ports[path];
        self.tunnel.encapsulate(i, pk, port);
        // Marks for the other direction, whose receiver is this host.
        if let Some(m) = self
            .tunnel
            .find(pk.dst, pk.src)
            .and_then(|r| self.take_mark(r))
        {
            pk.overlay.aux[2] = m as u32;
            pk.overlay.aux_flags |= FB_CE;
            self.stats.marks_relayed += 1;
        }
    }

    fn on_receive(&mut self, now: Time, mut pk: Packet, deliver: &mut Vec<Packet>) {
        let o = pk.overlay;
        if o.aux_flags & ENCAPSULATED == 0 {
            deliver.push(pk);
            return;
        }
        if o.aux_flags & FB_CE != 0 {
            if let Some(s) = self.tunnel.find(pk.dst, pk.src) {
                self.on_mark(now, s, o.aux[2] as u16);
            }
        }
        let i = self.pair(pk.src, pk.dst);
        if pk.is(flags::CE) {
            if self.note_mark(now, i, o.path) {
                self.stats.ecn_passed += 1;
            } else {
                pk.flags &= !flags::CE;
                self.stats.ecn_hidden += 1;
            }
        }
        self.tunnel.receive(now, i, pk, deliver);
    }

    fn on_routes(&mut self, _v: &ShimView) {
        self.epoch = self.epoch.wrapping_add(1) % u32::MAX;
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let s = self.stats;
        let mut c = vec![
            ("clove_flowlets", s.flowlets),
            ("clove_cuts", s.cuts),
            ("clove_marks_relayed", s.marks_relayed),
            ("clove_ecn_hidden", s.ecn_hidden),
            ("clove_ecn_passed", s.ecn_passed),
        ];
        c.extend(
            self.tunnel
                .counters()
                .into_iter()
                .filter(|(n, _)| *n == "encapsulated"),
        );
        c
    }
}

#[cfg(test)]
mod tests {
    use super::super::shim::TestFabric;
    use super::*;

    // TestFabric: two leaves, two spines, two hosts per leaf: H0, H1 under L0; H2, H3 under L1.
    const A: u32 = 0;
    const B: u32 = 2;

    fn clove(variant: CloveVariant, spread: bool, hide_us: u64) -> Clove {
        CloveConfig {
            spread: Some(spread),
            hide_window: Duration(hide_us * PS_PER_US),
            ..Default::default()
        }
        .build(1, variant)
    }

    fn data(src: u32, dst: u32, conn: u32) -> Packet {
        Packet {
            src,
            dst,
            conn,
            payload: 1460,
            size: 1518,
            flags: flags::ECT,
            ..Default::default()
        }
    }

    /// Set up pair A -> B (and B -> A) and return A -> B's pair id.
    fn setup(c: &mut Clove, f: &TestFabric) -> usize {
        c.on_send(0, &mut data(A, B, 0), &f.view());
        c.on_send(0, &mut data(B, A, 1), &f.view());
        c.tunnel.find(A, B).unwrap()
    }

    fn weights(c: &Clove, i: usize) -> Vec<f64> {
        c.pairs[i]
            .w
            .iter()
            .map(|w| (w * 1e4).round() / 1e4)
            .collect()
    }

    /// Relayed marks cut the marked path to 2/3 at most once per cut interval; with `spread`
    /// the removed third goes to the other path, without it the other weight stays (EMAN
    /// §II-A's 1 -> 2/3 -> 4/9 sequence).
    #[test]
    fn weight_cut_and_redistribution() {
        let us = PS_PER_US;
        // (spread, marks as (µs, path), weights after)
        #[allow(clippy::type_complexity)]
        let cases: &[(bool, &[(u64, usize)], [f64; 2])] = &[
            (true, &[], [1.0, 1.0]),
            (true, &[(0, 0)], [0.6667, 1.3333]),
            // A second mark within 80 µs is ignored; after it, it cuts again.
            (true, &[(0, 0), (50, 0)], [0.6667, 1.3333]),
            (true, &[(0, 0), (80, 0)], [0.4444, 1.5556]),
            // The other path's own interval is independent.
            (true, &[(0, 0), (10, 1)], [1.1111, 0.8889]),
            // Without spreading: EMAN's worked example, 2/3 then 4/9 against 1, then the
            // right path cut: 4/9 : 2/3.
            (false, &[(0, 0)], [0.6667, 1.0]),
            (false, &[(0, 0), (100, 0)], [0.4444, 1.0]),
            (false, &[(0, 0), (100, 0), (200, 1)], [0.4444, 0.6667]),
        ];
        for &(spread, marks, want) in cases {
            let f = TestFabric::new();
            let mut c = clove(CloveVariant::Ecn, spread, 0);
            let i = setup(&mut c, &f);
            for &(t, k) in marks {
                let port = c.pairs[i].ports[k];
                c.on_mark(t * us, i, port);
            }
            assert_eq!(weights(&c, i), want, "spread {spread} marks {marks:?}");
            if spread {
                let sum: f64 = c.pairs[i].w.iter().sum();
                assert!((sum - 2.0).abs() < 1e-9, "weights sum to k");
            }
        }
    }

    /// New flowlets follow the weights: round robin for `clove`, in proportion over many draws
    /// for `clove-ns3`; a flow keeps its path within the flowlet timeout.
    #[test]
    fn flowlets_follow_the_weights() {
        for variant in [CloveVariant::Ecn, CloveVariant::Ns3] {
            let f = TestFabric::new();
            let mut c = clove(variant, false, 0);
            let i = setup(&mut c, &f);
            let p0 = c.pairs[i].ports[0];
            c.on_mark(0, i, p0); // 2/3 : 1 -> 2 : 3
            let mut counts = [0usize; 2];
            let n = 3000u64;
            for k in 0..n {
                // Every packet a new flow (new connection): each its own flowlet.
                let mut pk = data(A, B, 10 + k as u32);
                c.on_send(k * PS_PER_US, &mut pk, &f.view());
                counts[c.pairs[i]
                    .ports
                    .iter()
                    .position(|&x| x == pk.overlay.path)
                    .unwrap()] += 1;
            }
            let share = counts[0] as f64 / n as f64;
            match variant {
                CloveVariant::Ecn => assert!(counts[0].abs_diff(1200) <= 2, "2:3: {counts:?}"),
                CloveVariant::Ns3 => assert!((share - 0.4).abs() < 0.03, "{counts:?}"),
            }
            // One flow, packets 10 µs apart: one flowlet, one path; after a 600 µs gap a new one.
            let before = c.stats.flowlets;
            let mut seen = Vec::new();
            for t in [0u64, 10, 20, 30, 630, 640] {
                let mut pk = data(A, B, 5000);
                c.on_send((10_000 + t) * PS_PER_US, &mut pk, &f.view());
                seen.push(pk.overlay.path);
            }
            assert_eq!(c.stats.flowlets - before, 2, "{variant:?}");
            assert!(seen[..4].iter().all(|&p| p == seen[0]));
            assert!(seen[4..].iter().all(|&p| p == seen[4]));
        }
    }

    /// The receiver relays each path's mark once, one per reverse packet, round robin; the
    /// sender cuts the relayed path.
    #[test]
    fn marks_are_relayed_on_reverse_traffic() {
        let f = TestFabric::new();
        let mut c = clove(CloveVariant::Ecn, true, 0);
        let i = setup(&mut c, &f);
        let ports = c.pairs[i].ports.clone();
        let mut up = Vec::new();
        for (k, &port) in ports.iter().enumerate() {
            let mut pk = data(A, B, 0);
            c.tunnel.encapsulate(i, &mut pk, port);
            pk.flags |= flags::CE;
            c.on_receive(k as u64 * PS_PER_US, pk, &mut up);
        }
        assert_eq!(up.len(), 2);
        let mut relayed = Vec::new();
        for _ in 0..3 {
            let mut back = data(B, A, 0);
            c.on_send(10 * PS_PER_US, &mut back, &f.view());
            if back.overlay.aux_flags & FB_CE != 0 {
                relayed.push(back.overlay.aux[2] as u16);
                c.on_receive(20 * PS_PER_US, back, &mut up);
            }
        }
        assert_eq!(relayed, ports, "each path once, in turn");
        assert_eq!(c.stats.cuts, 2);
        assert_eq!(weights(&c, i), [1.1111, 0.8889]);
    }

    /// `clove` hides a mark from TCP until every path carried one within the window;
    /// `clove-ns3` (and a zero window) never hides.
    #[test]
    fn ecn_is_hidden_until_every_path_is_marked() {
        let ms = PS_PER_MS;
        // (variant, window ms, marks (ms, path), whether TCP sees each)
        #[allow(clippy::type_complexity)]
        let cases: &[(CloveVariant, u64, &[(u64, usize)], &[bool])] = &[
            (
                CloveVariant::Ecn,
                32,
                &[(0, 0), (1, 0), (2, 1), (3, 0)],
                &[false, false, true, true],
            ),
            // The left's mark is older than the window when the right is marked.
            (
                CloveVariant::Ecn,
                32,
                &[(0, 0), (40, 1), (41, 0), (42, 1)],
                &[false, false, true, true],
            ),
            (CloveVariant::Ecn, 0, &[(0, 0), (1, 0)], &[true, true]),
            (CloveVariant::Ns3, 32, &[(0, 0), (1, 0)], &[true, true]),
        ];
        for &(variant, window, marks, want) in cases {
            let f = TestFabric::new();
            let mut c = clove(variant, true, window * 1000);
            let i = setup(&mut c, &f);
            let mut got = Vec::new();
            for &(t, k) in marks {
                let mut pk = data(A, B, 0);
                let port = c.pairs[i].ports[k];
                c.tunnel.encapsulate(i, &mut pk, port);
                pk.flags |= flags::CE;
                let mut up = Vec::new();
                c.on_receive(t * ms, pk, &mut up);
                assert_eq!(up[0].size, 1518, "decapsulated");
                got.push(up[0].is(flags::CE));
            }
            assert_eq!(got, want, "{variant:?} window {window} ms: {marks:?}");
        }
    }

    #[test]
    fn one_path_pairs_pass_through_and_bad_fields_are_named() {
        let f = TestFabric::new();
        let mut c = clove(CloveVariant::Ecn, true, 0);
        let mut pk = data(0, 1, 0); // both under L0
        let before = pk;
        c.on_send(0, &mut pk, &f.view());
        assert_eq!((pk.size, pk.overlay), (before.size, before.overlay));
        let mut pk = data(A, B, 0);
        c.on_send(0, &mut pk, &f.view());
        assert_eq!(pk.size, 1558, "40 bytes of tunnel");
        super::super::shim::assert_bad_fields_named::<CloveConfig>(
            &[
                ("decay", serde_json::json!(1.0), "(0, 1)"),
                ("decay", serde_json::json!(0.0), "(0, 1)"),
                ("flowlet_timeout", serde_json::json!("0us"), "at least 1us"),
            ],
            CloveConfig::validate,
        );
        // `clove` keeps the other weights (EMAN §II-A), `clove-ns3` spreads the cut.
        let d = CloveConfig::default();
        assert!(!d.build(1, CloveVariant::Ecn).spread);
        assert!(d.build(1, CloveVariant::Ns3).spread);
        assert_eq!(
            d.build(1, CloveVariant::Ns3).hide_window,
            0,
            "ns-3 hides nothing"
        );
    }
}
