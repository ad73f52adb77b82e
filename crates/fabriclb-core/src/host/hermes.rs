//! Hermes (Zhang et al., SIGCOMM'17) as the EMAN paper describes and simulates it
//! (`../shared/papers/eman.md` §II-A, §V-A; `../shared/SCHEMES.md` §4, §12.1): comprehensive
//! sensing of each path at the sending host, and timely yet cautious rerouting.
//!
//! - **Path table** per (sending host, destination leaf), shared by the host's flows to that
//!   leaf: the fabric paths (found by `host::paths::discover`; a path is its links between the
//!   two leaves), each with its ECN fraction f_ECN, its RTT, its local sending rate r_p (bytes
//!   this host sent on it, decaying with τ = 150 µs, the ns-3 code's DRE) and its consecutive
//!   retransmission timeouts.
//! - **Sensing**: every data packet goes through EMAN's tunnel (40 bytes) on the path's outer
//!   port; the receiving shim counts, per path, the packets and the CE-marked ones and keeps the
//!   latest send time, and reports one path per packet going back (round robin): the sender
//!   takes an RTT sample (now − the echoed send time; EWMA ½, the ns-3 code's `IsSmooth`) and
//!   updates f_ECN (EWMA per packet, gain 1/16).
//! - **Classes**: failed after `fail_timeouts` timeouts of the path's flows with no report in
//!   between; good if f_ECN < T_ECN and RTT < T_RTT_low; bad (congested) if f_ECN > T_ECN and
//!   RTT > T_RTT_high; gray otherwise. A path with no report for 10 base RTTs is gray, with the
//!   base RTT and no marks (the ns-3 code treats unknown paths as gray).
//! - **New flows** (a connection's first packet in a direction): the good path with the least
//!   r_p, else the gray one with the least r_p, else a random non-failed path (ties at random:
//!   with no traffic yet, "Hermes will randomly pick up one path", EMAN §II-A).
//! - **Rerouting** (checked on each data packet): a flow moves only if its path is failed, or
//!   if its path is bad **and** it has sent at least S on it **and** its own rate is below R ×
//!   the path's capacity (R off: no rate condition, EMAN footnote 3); and only to a good (else
//!   gray) path that is notably better: lower RTT by ΔRTT **and** lower f_ECN by ΔECN (a failed
//!   path's flows move to the best path by the new-flow rule).
//! - **Probes**: every `probe_interval` a host that is sending to a leaf probes 2 random paths
//!   plus the previous best; a probe is modelled by its measurement (the path's queues and
//!   propagation as a 64-byte packet would see them, CE if a queue is above its marking
//!   threshold), applied one probe RTT later.
//!
//! Choices where the Hermes paper's values are not in our material (ΔRTT, ΔECN, the failure
//! threshold, the probe interval) and the others are in docs/CLOVE_HERMES.md. The shim reads and
//! writes only the packets' overlay and size (the tunnel); it never touches a transport.

use super::paths::{bottleneck_bps, discover, DISCOVERY_PORTS};
use super::shim::{EdgeShim, ShimView};
use super::tunnel::{Tunnel, ENCAPSULATED};
use crate::error::Error;
use crate::net::packet::{flags, Packet, MIN_FRAME, PREAMBLE_IFG};
use crate::rng::{stream, Rng};
use crate::units::{ser_ps, Bytes, Duration, Time, PS_PER_US};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// `overlay.aux_flags` bit: the packet carries a path report (`aux[1]`: echoed send time in
/// 100 ns units; `aux[2]`: port | packets << 16 | marked << 24).
const FB_REPORT: u8 = 2;
/// The report's time unit, ps.
const TS_UNIT: u64 = 100_000;
/// The local rate meters' time constant (the ns-3 code's DRE: ×0.8 every 30 µs).
const RATE_TAU_PS: f64 = 150.0 * PS_PER_US as f64;
/// f_ECN's EWMA gain per reported packet.
const ECN_GAIN: f64 = 1.0 / 16.0;
/// A path with no report for this many base RTTs is unknown (gray).
const STALE_RTTS: u64 = 10;

/// Hermes's parameters (`[scheme]` with `name = "hermes"`); the defaults are EMAN's simulation
/// settings (§V-A) at its 160 µs base RTT, and our choices where the paper's are not known.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HermesConfig {
    /// T_ECN: the ECN fraction that separates good from congested paths, in (0, 1) (§V-A: 40%).
    #[serde(default = "t_ecn")]
    pub t_ecn: f64,
    /// The fabric's base RTT: an unknown path's RTT, and the staleness unit (§V-A: 160 µs).
    #[serde(default = "base_rtt")]
    pub base_rtt: Duration,
    /// T_RTT_low: a good path's RTT is below it (§V-A: base RTT + 20 µs).
    #[serde(default = "t_rtt_low")]
    pub t_rtt_low: Duration,
    /// T_RTT_high: a congested path's RTT is above it (§V-A: 2 base RTTs).
    #[serde(default = "t_rtt_high")]
    pub t_rtt_high: Duration,
    /// S: bytes a flow must have sent on its path before it may leave it (§V-A: 600 KB).
    #[serde(default = "size_threshold")]
    pub size_threshold: Bytes,
    /// R: a flow leaves a congested path only if its rate is below this fraction of the path's
    /// capacity, in [0, 1]; 0 turns the condition off (EMAN footnote 3: off in Fig. 2, 40%
    /// elsewhere; §V-A's list says 30%).
    #[serde(default = "rate_threshold")]
    pub rate_threshold: f64,
    /// ΔRTT: a path is notably better if its RTT is lower by at least this (our choice: half a
    /// base RTT, 80 µs).
    #[serde(default = "delta_rtt")]
    pub delta_rtt: Duration,
    /// ΔECN: ... and its ECN fraction lower by at least this, in [0, 1) (our choice: 0.05).
    #[serde(default = "delta_ecn")]
    pub delta_ecn: f64,
    /// How often a sending host probes 2 random paths and the previous best to each leaf it
    /// sends to (our choice: 500 µs); "0us": no probes.
    #[serde(default = "probe_interval")]
    pub probe_interval: Duration,
    /// Consecutive retransmission timeouts of a path's flows, with no report from the path in
    /// between, that make it failed, 1..=100 (our choice: 3).
    #[serde(default = "fail_timeouts")]
    #[schemars(range(min = 1, max = 100))]
    pub fail_timeouts: u32,
}

fn t_ecn() -> f64 {
    0.4
}
fn base_rtt() -> Duration {
    Duration(160 * PS_PER_US)
}
fn t_rtt_low() -> Duration {
    Duration(180 * PS_PER_US)
}
fn t_rtt_high() -> Duration {
    Duration(320 * PS_PER_US)
}
fn size_threshold() -> Bytes {
    Bytes(600_000)
}
fn rate_threshold() -> f64 {
    0.4
}
fn delta_rtt() -> Duration {
    Duration(80 * PS_PER_US)
}
fn delta_ecn() -> f64 {
    0.05
}
fn probe_interval() -> Duration {
    Duration(500 * PS_PER_US)
}
fn fail_timeouts() -> u32 {
    3
}

impl Default for HermesConfig {
    fn default() -> Self {
        HermesConfig {
            t_ecn: t_ecn(),
            base_rtt: base_rtt(),
            t_rtt_low: t_rtt_low(),
            t_rtt_high: t_rtt_high(),
            size_threshold: size_threshold(),
            rate_threshold: rate_threshold(),
            delta_rtt: delta_rtt(),
            delta_ecn: delta_ecn(),
            probe_interval: probe_interval(),
            fail_timeouts: fail_timeouts(),
        }
    }
}

impl HermesConfig {
    pub fn validate(&self, path: &str) -> Result<(), Error> {
        let err = |f: &str, m: String| -> Result<(), Error> {
            Err(Error::config(&format!("{path}.{f}"), m))
        };
        if !(self.t_ecn > 0.0 && self.t_ecn < 1.0) {
            return err(
                "t_ecn",
                format!(
                    "{} is not allowed; use a fraction in (0, 1) (EMAN §V-A: 0.4)",
                    self.t_ecn
                ),
            );
        }
        if !(0.0..=1.0).contains(&self.rate_threshold) {
            return err(
                "rate_threshold",
                format!(
                    "{} is not allowed; use a fraction of the path's capacity in [0, 1], 0 for off (EMAN: 0.4)",
                    self.rate_threshold
                ),
            );
        }
        if !(0.0..1.0).contains(&self.delta_ecn) {
            return err(
                "delta_ecn",
                format!("{} is not allowed; use [0, 1)", self.delta_ecn),
            );
        }
        if self.base_rtt.0 < PS_PER_US {
            return err(
                "base_rtt",
                format!("{} is too short; allowed: at least 1us", self.base_rtt),
            );
        }
        if self.t_rtt_low >= self.t_rtt_high {
            return err(
                "t_rtt_high",
                format!(
                    "{} is not above t_rtt_low ({}); a congested path's RTT threshold must exceed a good path's",
                    self.t_rtt_high, self.t_rtt_low
                ),
            );
        }
        if !(1..=100).contains(&self.fail_timeouts) {
            return err(
                "fail_timeouts",
                format!("{} is out of range; allowed: 1..=100", self.fail_timeouts),
            );
        }
        Ok(())
    }

    pub fn build(&self, seed: u64) -> Hermes {
        Hermes {
            p: self.clone(),
            tunnel: Tunnel::new(0, 0),
            epoch: 0,
            tables: Vec::new(),
            table_of: HashMap::new(),
            pairs: Vec::new(),
            flows: Vec::new(),
            rng: Rng::new(seed, stream::SCHEME + 0x4E53),
            stats: Stats::default(),
        }
    }
}

/// A decaying byte count: the rate of what went through it over the last ~τ.
#[derive(Clone, Copy, Debug, Default)]
struct Meter {
    bytes: f64,
    t: Time,
}

impl Meter {
    fn decay(&mut self, now: Time) {
        if now > self.t {
            self.bytes *= (-((now - self.t) as f64) / RATE_TAU_PS).exp();
            self.t = now;
        }
    }
    fn add(&mut self, now: Time, bytes: u32) {
        self.decay(now);
        self.bytes += bytes as f64;
    }
    fn rate_bps(&self, now: Time) -> f64 {
        let dt = now.saturating_sub(self.t) as f64;
        self.bytes * (-dt / RATE_TAU_PS).exp() * 8.0 * 1e12 / RATE_TAU_PS
    }
}

/// A path's class, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Good,
    Gray,
    Bad,
    Failed,
}

/// What a sending host knows of one path to a leaf.
#[derive(Clone, Debug, Default)]
struct PathInfo {
    /// The path's links between the two leaves.
    key: Vec<u32>,
    /// Its bottleneck's rate when found, bps (R is a fraction of it).
    cap_bps: u64,
    rtt_ps: f64,
    ecn: f64,
    /// The last report or probe answer (`None`: never).
    last: Option<Time>,
    rate: Meter,
    timeouts: u32,
}

/// A sending host's paths to one leaf.
#[derive(Clone, Debug, Default)]
struct Table {
    epoch: u32,
    paths: Vec<PathInfo>,
    next_probe: Time,
    /// The best path of the last probe round.
    best: Option<usize>,
    /// Probe answers in flight: (arrival, path, RTT, marked).
    answers: Vec<(Time, usize, Time, bool)>,
}

/// What the receiver gathered about one path of a pair since its last report.
#[derive(Clone, Copy, Debug, Default)]
struct Recv {
    pkts: u32,
    marked: u32,
    sent_at: Time,
}

/// A host pair (src -> dst).
#[derive(Clone, Debug, Default)]
struct Pair {
    epoch: u32,
    table: usize,
    ports: Vec<u16>,
    /// Per port: the path's index in the table, and its full links (for probes).
    idx: Vec<usize>,
    links: Vec<Vec<u32>>,
    recv: Vec<Recv>,
    fb_next: usize,
}

/// One flow (connection and direction).
#[derive(Clone, Copy, Debug, Default)]
struct Flow {
    pair: u32,
    path: u32,
    /// Payload bytes sent on its current path.
    sent: u64,
    rate: Meter,
}

#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    new_flows: u64,
    reroutes: u64,
    failed_moves: u64,
    reports: u64,
    probes: u64,
}

pub struct Hermes {
    p: HermesConfig,
    tunnel: Tunnel,
    epoch: u32,
    tables: Vec<Table>,
    table_of: HashMap<(u32, u32), usize>,
    /// By tunnel pair id.
    pairs: Vec<Pair>,
    /// By connection x 2 + direction.
    flows: Vec<Option<Flow>>,
    rng: Rng,
    stats: Stats,
}

fn flow_key(pk: &Packet) -> usize {
    pk.conn as usize * 2 + usize::from(pk.src < pk.dst)
}

impl Hermes {
    /// The class of path `k` of table `t` at `now`, with the RTT and f_ECN it is judged on.
    fn class(&self, t: usize, k: usize, now: Time) -> (Class, f64, f64) {
        let p = &self.tables[t].paths[k];
        let stale = STALE_RTTS * self.p.base_rtt.0;
        let fresh = p.last.is_some_and(|l| now <= l + stale);
        let (rtt, ecn) = if fresh {
            (p.rtt_ps, p.ecn)
        } else {
            (self.p.base_rtt.0 as f64, 0.0)
        };
        let c = if p.timeouts >= self.p.fail_timeouts {
            Class::Failed
        } else if !fresh {
            Class::Gray
        } else if ecn < self.p.t_ecn && rtt < self.p.t_rtt_low.0 as f64 {
            Class::Good
        } else if ecn > self.p.t_ecn && rtt > self.p.t_rtt_high.0 as f64 {
            Class::Bad
        } else {
            Class::Gray
        };
        (c, rtt, ecn)
    }

    /// Whether path `b` is notably better than path `a` (table `t`): lower RTT by ΔRTT and
    /// lower f_ECN by ΔECN.
    fn notably_better(&self, t: usize, a: usize, b: usize, now: Time) -> bool {
        let (_, ra, ea) = self.class(t, a, now);
        let (_, rb, eb) = self.class(t, b, now);
        ra - rb >= self.p.delta_rtt.0 as f64 && ea - eb >= self.p.delta_ecn
    }

    /// Among `cands` (table paths), the one with the least local rate; ties at random.
    fn least_rate(&mut self, t: usize, cands: &[usize], now: Time) -> Option<usize> {
        let rates: Vec<f64> = cands
            .iter()
            .map(|&k| self.tables[t].paths[k].rate.rate_bps(now))
            .collect();
        let min = rates.iter().cloned().fold(f64::INFINITY, f64::min);
        let ties: Vec<usize> = cands
            .iter()
            .zip(&rates)
            .filter(|(_, r)| **r <= min * (1.0 + 1e-9) + 1e-9)
            .map(|(&k, _)| k)
            .collect();
        match ties.len() {
            0 => None,
            1 => Some(ties[0]),
            n => Some(ties[self.rng.below(n as u64) as usize]),
        }
    }

    /// The path of pair `i` (a port index) for a new flow: good with the least rate, else gray
    /// with the least rate, else a random non-failed one (else any). `avoid`: a port index
    /// not to choose (the failed path a flow leaves).
    fn place(&mut self, i: usize, now: Time, avoid: Option<usize>) -> usize {
        let t = self.pairs[i].table;
        let n = self.pairs[i].idx.len();
        let classes: Vec<Class> = (0..n)
            .map(|j| self.class(t, self.pairs[i].idx[j], now).0)
            .collect();
        for want in [Class::Good, Class::Gray] {
            let cands: Vec<usize> = (0..n)
                .filter(|&j| classes[j] == want && Some(j) != avoid)
                .map(|j| self.pairs[i].idx[j])
                .collect();
            if let Some(k) = self.least_rate(t, &cands, now) {
                return self.pairs[i].idx.iter().position(|&x| x == k).unwrap();
            }
        }
        let ok: Vec<usize> = (0..n)
            .filter(|&j| classes[j] != Class::Failed && Some(j) != avoid)
            .collect();
        if ok.is_empty() {
            return self.rng.below(n as u64) as usize;
        }
        ok[self.rng.below(ok.len() as u64) as usize]
    }

    /// Where an existing flow of pair `i` on port index `cur` goes now (itself: stays).
    fn reroute(&mut self, i: usize, cur: usize, flow: &Flow, now: Time) -> usize {
        let t = self.pairs[i].table;
        let kc = self.pairs[i].idx[cur];
        let (c, ..) = self.class(t, kc, now);
        if c == Class::Failed {
            self.stats.failed_moves += 1;
            return self.place(i, now, Some(cur));
        }
        if c != Class::Bad || flow.sent < self.p.size_threshold.0 {
            return cur;
        }
        let r = self.p.rate_threshold;
        let cap = self.tables[t].paths[kc].cap_bps as f64;
        if r > 0.0 && flow.rate.rate_bps(now) >= r * cap {
            return cur;
        }
        let n = self.pairs[i].idx.len();
        for want in [Class::Good, Class::Gray] {
            let cands: Vec<usize> = (0..n)
                .filter(|&j| j != cur)
                .map(|j| self.pairs[i].idx[j])
                .filter(|&k| self.class(t, k, now).0 == want && self.notably_better(t, kc, k, now))
                .collect();
            if let Some(k) = self.least_rate(t, &cands, now) {
                self.stats.reroutes += 1;
                return self.pairs[i].idx.iter().position(|&x| x == k).unwrap();
            }
        }
        cur
    }

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

    /// Find pair `i`'s paths (again) and their entries in its host's table for the leaf.
    fn refresh(&mut self, i: usize, v: &ShimView) {
        let (src, dst) = self.tunnel.ends[i];
        let set = discover(v.g, v.routes, v.salts, src, dst, DISCOVERY_PORTS);
        let leaf = v.g.host_tor[dst as usize];
        let t = *self.table_of.entry((src, leaf)).or_insert_with(|| {
            self.tables.push(Table {
                epoch: u32::MAX,
                ..Default::default()
            });
            self.tables.len() - 1
        });
        let tab = &mut self.tables[t];
        if tab.epoch != self.epoch {
            *tab = Table {
                epoch: self.epoch,
                ..Default::default()
            };
        }
        let mut idx = Vec::new();
        for links in &set.links {
            let key = links[1..links.len() - 1].to_vec();
            let k = match tab.paths.iter().position(|p| p.key == key) {
                Some(k) => k,
                None => {
                    tab.paths.push(PathInfo {
                        cap_bps: bottleneck_bps(&key, |l| v.ports[l as usize].rate_bps),
                        key,
                        ..Default::default()
                    });
                    tab.paths.len() - 1
                }
            };
            idx.push(k);
        }
        let n = set.ports.len();
        let p = &mut self.pairs[i];
        p.table = t;
        p.ports = set.ports;
        p.idx = idx;
        p.links = set.links;
        p.recv = vec![Recv::default(); n];
        p.epoch = self.epoch;
    }

    /// A report or probe answer about path `k` of table `t`: `pkts` packets, `marked` of them
    /// with CE, and an RTT sample (if any).
    fn sample(&mut self, t: usize, k: usize, now: Time, rtt: Option<Time>, pkts: u32, marked: u32) {
        let p = &mut self.tables[t].paths[k];
        if let Some(r) = rtt {
            p.rtt_ps = if p.last.is_some() {
                0.5 * p.rtt_ps + 0.5 * r as f64
            } else {
                r as f64
            };
        }
        if pkts > 0 {
            let keep = (1.0 - ECN_GAIN).powi(pkts as i32);
            let frac = marked as f64 / pkts as f64;
            p.ecn = if p.last.is_some() {
                p.ecn * keep + frac * (1.0 - keep)
            } else {
                frac
            };
        }
        p.last = Some(now);
        p.timeouts = 0;
    }

    /// Probe answers of table `t` that have arrived by `now`.
    fn apply_answers(&mut self, t: usize, now: Time) {
        if self.tables[t].answers.iter().all(|a| a.0 > now) {
            return;
        }
        let answers = std::mem::take(&mut self.tables[t].answers);
        let (due, later): (Vec<_>, Vec<_>) = answers.into_iter().partition(|a| a.0 <= now);
        self.tables[t].answers = later;
        for (at, k, rtt, ce) in due {
            self.sample(t, k, at, Some(rtt), 1, ce as u32);
        }
    }

    /// What a probe of pair `i`'s path `j` sent at `now` measures: its RTT (queues on the way
    /// out, propagation both ways, a minimum frame's serialisation) and whether a queue on the
    /// way would mark it.
    fn probe(&self, i: usize, j: usize, now: Time, v: &ShimView) -> (Time, bool) {
        let mut rtt = 0;
        let mut ce = false;
        for &l in &self.pairs[i].links[j] {
            let port = &v.ports[l as usize];
            let wait = port.free_at.saturating_sub(now);
            let ser = ser_ps((MIN_FRAME + PREAMBLE_IFG) as u64, port.rate_bps.max(1));
            rtt += wait + 2 * (ser + port.delay_ps);
            let queued = wait as u128 * port.rate_bps as u128 / 8 / 1_000_000_000_000;
            ce |= port.ecn_k_bytes > 0 && queued > port.ecn_k_bytes as u128;
        }
        (rtt, ce)
    }

    /// Probe round of pair `i`'s table if due: 2 random paths and the previous best.
    fn maybe_probe(&mut self, i: usize, now: Time, v: &ShimView) {
        let t = self.pairs[i].table;
        let every = self.p.probe_interval.0;
        if every == 0 || now < self.tables[t].next_probe {
            return;
        }
        self.tables[t].next_probe = now + every;
        let n = self.pairs[i].idx.len();
        let mut pick: Vec<usize> = Vec::new();
        if let Some(b) = self.tables[t].best {
            if let Some(j) = self.pairs[i].idx.iter().position(|&x| x == b) {
                pick.push(j);
            }
        }
        let mut others: Vec<usize> = (0..n).filter(|j| !pick.contains(j)).collect();
        self.rng.shuffle(&mut others);
        pick.extend(others.into_iter().take(2));
        let mut best: Option<(Time, usize)> = None;
        for &j in &pick {
            let (rtt, ce) = self.probe(i, j, now, v);
            let k = self.pairs[i].idx[j];
            self.tables[t].answers.push((now + rtt, k, rtt, ce));
            if best.is_none_or(|b| rtt < b.0) {
                best = Some((rtt, k));
            }
            self.stats.probes += 1;
        }
        self.tables[t].best = best.map(|b| b.1);
    }

    /// The next report to send back for pair `i` (round robin over its paths).
    fn take_report(&mut self, i: usize) -> Option<(u16, Recv)> {
        let p = &mut self.pairs[i];
        let n = p.recv.len();
        for j in 0..n {
            let k = (p.fb_next + j) % n;
            if p.recv[k].pkts > 0 {
                p.fb_next = (k + 1) % n;
                return Some((p.ports[k], std::mem::take(&mut p.recv[k])));
            }
        }
        None
    }
}

impl EdgeShim for Hermes {
    fn on_send(&mut self, now: Time, pk: &mut Packet, v: &ShimView) {
        let i = self.pair(pk.src, pk.dst);
        if self.pairs[i].epoch != self.epoch {
            self.refresh(i, v);
        }
        let n = self.pairs[i].ports.len();
        if n < 2 {
            return;
        }
        let t = self.pairs[i].table;
        self.apply_answers(t, now);
        self.maybe_probe(i, now, v);
        let key = flow_key(pk);
        if self.flows.len() <= key {
            self.flows.resize(key + 1, None);
        }
        let cur = self.flows[key];
        let mut f = match cur {
            Some(f) if f.pair as usize == i && (f.path as usize) < n => f,
            _ => {
                self.stats.new_flows += 1;
                Flow {
                    pair: i as u32,
                    path: self.place(i, now, None) as u32,
                    ..Default::default()
                }
            }
        };
        if pk.payload > 0 {
            let to = self.reroute(i, f.path as usize, &f, now);
            if to != f.path as usize {
                f.path = to as u32;
                f.sent = 0;
            }
            f.sent += pk.payload as u64;
        }
        let j = f.path as usize;
        let port = self.pairs[i].ports[j];
        self.tunnel.encapsulate(i, pk, port);
        let wire = pk.wire_bytes();
        f.rate.add(now, wire);
        let k = self.pairs[i].idx[j];
        self.tables[t].paths[k].rate.add(now, wire);
        self.flows[key] = Some(f);
        // A report for the other direction, whose receiver is this host.
        if let Some((port, r)) = self
            .tunnel
            .find(pk.dst, pk.src)
            .and_then(|r| self.take_report(r))
        {
            let (mut n, mut m) = (r.pkts, r.marked);
            if n > 255 {
                m = (m as u64 * 255 / n as u64) as u32;
                n = 255;
            }
            let o = &mut pk.overlay;
            o.aux[1] = (r.sent_at / TS_UNIT) as u32;
            o.aux[2] = port as u32 | n << 16 | m << 24;
            o.aux_flags |= FB_REPORT;
        }
    }

    fn on_receive(&mut self, now: Time, pk: Packet, deliver: &mut Vec<Packet>) {
        let o = pk.overlay;
        if o.aux_flags & ENCAPSULATED == 0 {
            deliver.push(pk);
            return;
        }
        if o.aux_flags & FB_REPORT != 0 {
            if let Some(s) = self.tunnel.find(pk.dst, pk.src) {
                let port = (o.aux[2] & 0xFFFF) as u16;
                if let Some(j) = self.pairs[s].ports.iter().position(|&x| x == port) {
                    let (t, k) = (self.pairs[s].table, self.pairs[s].idx[j]);
                    let sent = ((now / TS_UNIT) as u32).wrapping_sub(o.aux[1]) as u64 * TS_UNIT;
                    let (n, m) = ((o.aux[2] >> 16) & 0xFF, o.aux[2] >> 24);
                    self.sample(t, k, now, Some(sent), n, m);
                    self.stats.reports += 1;
                }
            }
        }
        let i = self.pair(pk.src, pk.dst);
        if pk.payload > 0 {
            if let Some(j) = self.pairs[i].ports.iter().position(|&x| x == o.path) {
                let r = &mut self.pairs[i].recv[j];
                r.pkts += 1;
                r.marked += pk.is(flags::CE) as u32;
                // The send time: a real shim stamps its header; the simulated packet's TCP
                // timestamp is that same instant (the shim runs as the packet leaves TCP).
                r.sent_at = pk.ts;
            }
        }
        self.tunnel.receive(now, i, pk, deliver);
    }

    fn on_timeout(&mut self, _now: Time, conn: u32) {
        for key in [conn as usize * 2, conn as usize * 2 + 1] {
            if let Some(Some(f)) = self.flows.get(key) {
                if f.sent == 0 {
                    continue;
                }
                let p = &self.pairs[f.pair as usize];
                if let Some(&k) = p.idx.get(f.path as usize) {
                    self.tables[p.table].paths[k].timeouts += 1;
                }
            }
        }
    }

    fn on_routes(&mut self, _v: &ShimView) {
        self.epoch = self.epoch.wrapping_add(1) % u32::MAX;
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let s = self.stats;
        let mut c = vec![
            ("hermes_new_flows", s.new_flows),
            ("hermes_reroutes", s.reroutes),
            ("hermes_failed_moves", s.failed_moves),
            ("hermes_reports", s.reports),
            ("hermes_probes", s.probes),
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

    const A: u32 = 0;
    const B: u32 = 2;
    const US: u64 = PS_PER_US;

    fn hermes(r: f64, probes: bool) -> Hermes {
        HermesConfig {
            rate_threshold: r,
            probe_interval: Duration(if probes { 500 * US } else { 0 }),
            ..Default::default()
        }
        .build(7)
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

    /// Pair A -> B set up (first packet at t = 0); its id.
    fn setup(h: &mut Hermes, f: &TestFabric) -> usize {
        h.on_send(0, &mut data(A, B, 0), &f.view());
        h.tunnel.find(A, B).unwrap()
    }

    /// Give table path `k` of pair `i` a state: RTT (µs), f_ECN, reported at `at`.
    fn set(h: &mut Hermes, i: usize, j: usize, rtt_us: u64, ecn: f64, at: Time) {
        let (t, k) = (h.pairs[i].table, h.pairs[i].idx[j]);
        let p = &mut h.tables[t].paths[k];
        p.rtt_ps = (rtt_us * US) as f64;
        p.ecn = ecn;
        p.last = Some(at);
    }

    /// T_ECN 0.4, T_RTT_low 180 µs, T_RTT_high 320 µs: good needs both low, bad both high.
    #[test]
    fn classification() {
        let f = TestFabric::new();
        // (RTT µs, f_ECN, reported µs before now (None: never), timeouts, class)
        let cases: &[(u64, f64, Option<u64>, u32, Class)] = &[
            (170, 0.1, Some(0), 0, Class::Good),
            (179, 0.39, Some(0), 0, Class::Good),
            (180, 0.1, Some(0), 0, Class::Gray), // RTT not below T_RTT_low
            (170, 0.4, Some(0), 0, Class::Gray), // f_ECN not below T_ECN
            (400, 0.1, Some(0), 0, Class::Gray), // high RTT, few marks
            (200, 0.9, Some(0), 0, Class::Gray), // marks, RTT not above T_RTT_high
            (321, 0.41, Some(0), 0, Class::Bad),
            (321, 0.41, Some(1600), 0, Class::Bad), // 10 base RTTs: still fresh
            (321, 0.41, Some(1601), 0, Class::Gray), // stale: unknown
            (321, 0.41, None, 0, Class::Gray),
            (170, 0.1, Some(0), 2, Class::Good),
            (170, 0.1, Some(0), 3, Class::Failed),
        ];
        for &(rtt, ecn, ago, timeouts, want) in cases {
            let mut h = hermes(0.4, false);
            let i = setup(&mut h, &f);
            let now = 10_000 * US;
            set(&mut h, i, 0, rtt, ecn, now - ago.unwrap_or(0) * US);
            let (t, k) = (h.pairs[i].table, h.pairs[i].idx[0]);
            if ago.is_none() {
                h.tables[t].paths[k].last = None;
            }
            h.tables[t].paths[k].timeouts = timeouts;
            assert_eq!(
                h.class(t, k, now).0,
                want,
                "{rtt} µs, {ecn}, {ago:?}, {timeouts}"
            );
        }
    }

    /// ΔRTT 80 µs and ΔECN 0.05: both must hold.
    #[test]
    fn notably_better() {
        let f = TestFabric::new();
        // ((RTT µs, f_ECN) of the current path, of the other, notably better)
        let cases = [
            ((400, 0.5), (320, 0.44), true),  // exactly ΔRTT lower
            ((400, 0.5), (321, 0.0), false),  // 79 µs lower
            ((400, 0.5), (200, 0.46), false), // 0.04 lower
            ((400, 0.5), (100, 0.0), true),
            ((200, 0.0), (100, 0.0), false), // no marks on either: ΔECN fails
        ];
        for ((ra, ea), (rb, eb), want) in cases {
            let mut h = hermes(0.4, false);
            let i = setup(&mut h, &f);
            let now = 100 * US;
            set(&mut h, i, 0, ra, ea, now);
            set(&mut h, i, 1, rb, eb, now);
            let (t, a, b) = (h.pairs[i].table, h.pairs[i].idx[0], h.pairs[i].idx[1]);
            assert_eq!(
                h.notably_better(t, a, b, now),
                want,
                "{ra} {ea} -> {rb} {eb}"
            );
        }
    }

    /// A flow on a bad path moves only if it sent S, its rate is below R x capacity (unless R
    /// is off) and the other path is notably better; a failed path's flow moves regardless.
    #[test]
    fn rerouting_conditions() {
        let f = TestFabric::new();
        let g = 1e9;
        // (R, current path (RTT µs, f_ECN, timeouts), other (RTT µs, f_ECN), sent bytes, flow
        //  Gbps, moves)
        #[allow(clippy::type_complexity)]
        let cases: &[(f64, (u64, f64, u32), (u64, f64), u64, f64, bool)] = &[
            (0.4, (400, 0.6, 0), (170, 0.0), 600_000, 1.0, true),
            (0.4, (400, 0.6, 0), (170, 0.0), 599_999, 1.0, false), // S not reached
            (0.4, (400, 0.6, 0), (170, 0.0), 600_000, 4.5, false), // above 0.4 x 10 G
            (0.0, (400, 0.6, 0), (170, 0.0), 600_000, 9.0, true),  // R off
            (0.4, (300, 0.6, 0), (170, 0.0), 600_000, 1.0, false), // gray, not bad
            (0.4, (400, 0.6, 0), (330, 0.0), 600_000, 1.0, false), // not notably better
            (0.4, (400, 0.6, 0), (250, 0.0), 600_000, 1.0, true),  // a gray target is allowed
            (0.4, (170, 0.0, 3), (400, 0.6), 0, 9.0, true),        // failed: moves anyway
        ];
        for &(r, (rc, ec, to), (ro, eo), sent, gbps, want) in cases {
            let mut h = hermes(r, false);
            let i = setup(&mut h, &f);
            let now = 1_000 * US;
            set(&mut h, i, 0, rc, ec, now);
            set(&mut h, i, 1, ro, eo, now);
            let (t, k0) = (h.pairs[i].table, h.pairs[i].idx[0]);
            h.tables[t].paths[k0].timeouts = to;
            // A meter in steady state at `gbps`: bytes = rate x τ / 8.
            let flow = Flow {
                pair: i as u32,
                path: 0,
                sent,
                rate: Meter {
                    bytes: gbps * g * RATE_TAU_PS / 8.0 / 1e12,
                    t: now,
                },
            };
            let to_path = h.reroute(i, 0, &flow, now);
            assert_eq!(
                to_path != 0,
                want,
                "R {r} cur ({rc}, {ec}, {to}) other ({ro}, {eo}) sent {sent} {gbps} Gbps"
            );
        }
    }

    /// New flows: the good path with the least local rate, else the gray one, else any
    /// non-failed; all unknown: at random (both paths taken over many seeds).
    #[test]
    fn new_flows_go_to_the_least_loaded_good_path() {
        let f = TestFabric::new();
        let now = 1_000 * US;
        // (path states (RTT µs, f_ECN, timeouts), local rates (Gbps), expected port index)
        #[allow(clippy::type_complexity)]
        let cases: &[([(u64, f64, u32); 2], [f64; 2], usize)] = &[
            ([(170, 0.0, 0), (170, 0.0, 0)], [5.0, 1.0], 1),
            ([(170, 0.0, 0), (170, 0.0, 0)], [1.0, 5.0], 0),
            ([(170, 0.0, 0), (250, 0.0, 0)], [5.0, 1.0], 0), // good beats a quieter gray
            ([(400, 0.6, 0), (250, 0.0, 0)], [0.0, 5.0], 1), // gray beats bad
            ([(170, 0.0, 3), (400, 0.6, 0)], [0.0, 5.0], 1), // bad beats failed
        ];
        for (states, rates, want) in cases {
            let mut h = hermes(0.4, false);
            let i = setup(&mut h, &f);
            for j in 0..2 {
                let (r, e, to) = states[j];
                set(&mut h, i, j, r, e, now);
                let (t, k) = (h.pairs[i].table, h.pairs[i].idx[j]);
                h.tables[t].paths[k].timeouts = to;
                h.tables[t].paths[k].rate = Meter {
                    bytes: rates[j] * 1e9 * RATE_TAU_PS / 8.0 / 1e12,
                    t: now,
                };
            }
            assert_eq!(h.place(i, now, None), *want, "{states:?} {rates:?}");
        }
        let mut seen = [false; 2];
        for seed in 0..20 {
            let mut h = HermesConfig::default().build(seed);
            let mut pk = data(A, B, 0);
            h.on_send(0, &mut pk, &f.view());
            let i = h.tunnel.find(A, B).unwrap();
            seen[h.pairs[i]
                .ports
                .iter()
                .position(|&x| x == pk.overlay.path)
                .unwrap()] = true;
        }
        assert_eq!(seen, [true, true]);
    }

    /// Reports: the receiver counts packets and marks per path and echoes the send time; the
    /// sender's RTT and f_ECN follow.
    #[test]
    fn reports_carry_rtt_and_marks() {
        let f = TestFabric::new();
        let mut h = hermes(0.4, false);
        let i = setup(&mut h, &f);
        let mut up = Vec::new();
        // Four data packets A -> B on port index 0, sent at 100 µs, two marked, arriving at 300.
        let port = h.pairs[i].ports[0];
        for k in 0..4 {
            let mut pk = data(A, B, 0);
            pk.ts = 100 * US;
            h.tunnel.encapsulate(i, &mut pk, port);
            if k < 2 {
                pk.flags |= flags::CE;
            }
            h.on_receive(300 * US, pk, &mut up);
        }
        assert_eq!(up.len(), 4);
        // B answers at 300 µs; the report reaches A at 400 µs: RTT 300 µs, f_ECN 2/4.
        let mut back = data(B, A, 0);
        back.payload = 0;
        h.on_send(300 * US, &mut back, &f.view());
        assert_ne!(back.overlay.aux_flags & FB_REPORT, 0);
        h.on_receive(400 * US, back, &mut up);
        let (t, k) = (h.pairs[i].table, h.pairs[i].idx[0]);
        let p = &h.tables[t].paths[k];
        assert_eq!((p.rtt_ps / US as f64).round(), 300.0);
        assert!((p.ecn - 0.5).abs() < 1e-9, "{}", p.ecn);
        assert_eq!(h.class(t, k, 400 * US).0, Class::Gray);
        // Nothing new: the next packet back carries no report.
        let mut back = data(B, A, 0);
        h.on_send(310 * US, &mut back, &f.view());
        assert_eq!(back.overlay.aux_flags & FB_REPORT, 0);
    }

    /// Probes: every interval, 2 random paths plus the previous best (here both of the two
    /// paths), answered one probe RTT later; a busy queue raises the RTT and marks.
    #[test]
    fn probes_measure_the_paths() {
        let mut f = TestFabric::new();
        let mut h = hermes(0.4, true);
        let i = setup(&mut h, &f); // the first round at t = 0
        assert_eq!(h.stats.probes, 2);
        let t = h.pairs[i].table;
        assert_eq!(h.tables[t].answers.len(), 2);
        // Answers arrive after the idle paths' RTT (4 links, no delay in the test fabric:
        // serialisation only), well under 1 µs; then both paths are good.
        h.on_send(US, &mut data(A, B, 0), &f.view());
        assert!(h.tables[t].answers.is_empty());
        for j in 0..2 {
            assert_eq!(h.class(t, h.pairs[i].idx[j], US).0, Class::Good);
        }
        // Path 0's spine downlink holds 1 ms of queue: its next probe sees it.
        let l = h.pairs[i].links[0][2];
        f.ports[l as usize].free_at = 600 * US + 1_000 * US;
        f.ports[l as usize].ecn_k_bytes = 100_000;
        h.on_send(600 * US, &mut data(A, B, 0), &f.view());
        assert_eq!(h.stats.probes, 4, "the second round at 500 µs or later");
        h.on_send(3_000 * US, &mut data(A, B, 0), &f.view());
        let (k0, k1) = (h.pairs[i].idx[0], h.pairs[i].idx[1]);
        assert!(h.tables[t].paths[k0].rtt_ps > 400.0 * US as f64);
        assert!(h.tables[t].paths[k0].ecn > 0.0);
        assert!(h.tables[t].paths[k1].rtt_ps < US as f64);
    }

    #[test]
    fn bad_fields_are_named() {
        super::super::shim::assert_bad_fields_named::<HermesConfig>(
            &[
                ("t_ecn", serde_json::json!(1.0), "(0, 1)"),
                ("rate_threshold", serde_json::json!(1.5), "[0, 1]"),
                ("delta_ecn", serde_json::json!(-0.1), "[0, 1)"),
                ("t_rtt_high", serde_json::json!("100us"), "not above"),
                ("fail_timeouts", serde_json::json!(0), "1..=100"),
            ],
            HermesConfig::validate,
        );
    }
}
