//! The simulated world: builds every layer from a scenario and runs the event loop.
//!
//! Event kinds (one `match` dispatches them):
//! - `Arrive { pkt, link }`: the packet's last bit reaches the far end of `link`. Counts one
//!   packet-hop. At a switch the packet is routed and offered to an output port at once (output
//!   queueing, no switching delay); at a host it goes to the host layer (`host`).
//! - TCP timers (`Rto`, `DelAck`, `AppWake`): each connection has at most one pending event per
//!   timer; deadlines move freely in the connection and the event re-arms itself when it fires
//!   early (lazy timers), so an ACK never touches the event set.
//! - `Flow`: start the next flows of the pre-generated, time-sorted workload.
//! - `Shim { host }`: an edge shim's timer at a host (same lazy rule).
//! - `Stop { flow }`: a flow's application stops writing; `Cbr { flow }`: a constant-rate flow
//!   sends its next packet.
//!
//! The host layer (`host::Hosts`) owns the endpoints, flows and shim; after each of its calls
//! this file puts the packets it produced on the hosts' NICs and schedules the timers it moved
//! (`flush_hosts`).
//! - `Link`/`Reroute`: link state changes and the routing update that follows after the
//!   detection delay.
//! - `Window`, `Trace`, `Mark`: measurement windows, flow-trace samples, warm-up and end marks.
//!
//! Invariants checked as the run goes (when `measure.check_invariants`): every packet created
//! is delivered, dropped or still in flight (`sent = delivered + dropped + live`); no queue
//! exceeds its limit; no event is scheduled in the past. A violation ends the run with
//! `Error::Invariant`.

use crate::api::{RunOptions, RunResult};
use crate::engine::EventQueue;
use crate::error::Error;
use crate::host::cbr::CBR_CONN;
use crate::host::{Hosts, NetRef, TimerKind};
use crate::lb::{Balancer, BuildCtx, LbView, OverlayMode};
use crate::net::dre::DreParams;
use crate::net::packet::{flags, frame_bytes, Arena, Packet, PktId, OVERLAY_HDR, PREAMBLE_IFG};
use crate::net::port::{Enqueue, Port, PortMark};
use crate::net::routing::Routes;
use crate::net::topology::Graph;
use crate::rng::{stream, Rng};
use crate::scenario::{FailureKind, Scenario};
use crate::transport::tcp::NEVER;
use crate::units::Time;
use crate::workload::arrivals::WireCost;
use crate::workload::{FlowSpec, GenCtx};
use std::collections::HashMap;
use std::sync::atomic::Ordering;

/// What the host layer may read of the fabric, borrowing only those fields of the `Sim` (so
/// that the host layer itself can be borrowed mutably beside it).
macro_rules! net_ref {
    ($s:ident) => {
        NetRef {
            g: &$s.g,
            routes: &$s.routes,
            ports: &$s.ports,
            overlay: $s.overlay,
            hdr_bytes: &$s.hdr_bytes,
        }
    };
}

/// A cache prefetch hint (no effect on results; a no-op off x86-64).
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint; it never faults, even for an invalid address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ev {
    Arrive {
        pkt: PktId,
        link: u32,
    },
    Flow,
    Rto {
        conn: u32,
    },
    DelAck {
        conn: u32,
    },
    AppWake {
        conn: u32,
    },
    Link {
        idx: u32,
    },
    Reroute,
    Window,
    Trace,
    Mark {
        which: u8,
    },
    Shim {
        host: u32,
    },
    Stop {
        flow: u32,
    },
    Cbr {
        flow: u32,
    },
    /// The HDFS job starts (`u32::MAX`) or a writer's next packet is due (`host::hdfs`).
    Job {
        pipe: u32,
    },
}

/// An event packed into 8 bytes, so that a pending entry is 16 bytes (the event set is
/// memory-bound at scale). High half: the link of an `Arrive`, or `KIND0 + kind` for the other
/// events; low half: the packet, connection or index. Link ids stay below `KIND0` (checked when
/// the world is built).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PackedEv(u64);

const KIND0: u32 = u32::MAX - 15;

impl From<Ev> for PackedEv {
    #[inline]
    fn from(ev: Ev) -> PackedEv {
        let (hi, lo) = match ev {
            Ev::Arrive { pkt, link } => (link, pkt),
            Ev::Flow => (KIND0, 0),
            Ev::Rto { conn } => (KIND0 + 1, conn),
            Ev::DelAck { conn } => (KIND0 + 2, conn),
            Ev::AppWake { conn } => (KIND0 + 3, conn),
            Ev::Link { idx } => (KIND0 + 4, idx),
            Ev::Reroute => (KIND0 + 5, 0),
            Ev::Window => (KIND0 + 6, 0),
            Ev::Trace => (KIND0 + 7, 0),
            Ev::Mark { which } => (KIND0 + 8, which as u32),
            Ev::Shim { host } => (KIND0 + 9, host),
            Ev::Stop { flow } => (KIND0 + 10, flow),
            Ev::Cbr { flow } => (KIND0 + 11, flow),
            Ev::Job { pipe } => (KIND0 + 12, pipe),
        };
        PackedEv((hi as u64) << 32 | lo as u64)
    }
}

impl From<PackedEv> for Ev {
    #[inline]
    fn from(p: PackedEv) -> Ev {
        let (hi, lo) = ((p.0 >> 32) as u32, p.0 as u32);
        if hi < KIND0 {
            return Ev::Arrive { pkt: lo, link: hi };
        }
        match hi - KIND0 {
            0 => Ev::Flow,
            1 => Ev::Rto { conn: lo },
            2 => Ev::DelAck { conn: lo },
            3 => Ev::AppWake { conn: lo },
            4 => Ev::Link { idx: lo },
            5 => Ev::Reroute,
            6 => Ev::Window,
            7 => Ev::Trace,
            8 => Ev::Mark { which: lo as u8 },
            9 => Ev::Shim { host: lo },
            10 => Ev::Stop { flow: lo },
            11 => Ev::Cbr { flow: lo },
            _ => Ev::Job { pipe: lo },
        }
    }
}

/// The next hops from switch `sw` toward host `dst`: its ToR's downlink when `sw` is that ToR,
/// else the ECMP group (empty when every path is down).
#[inline]
fn next_hops<'a>(
    g: &Graph,
    routes: &'a Routes,
    host_downlink: &'a [u32],
    sw: u32,
    dst: u32,
) -> &'a [u32] {
    let dst_tor = g.host_tor[dst as usize];
    if dst_tor == sw {
        std::slice::from_ref(&host_downlink[dst as usize])
    } else {
        routes.group(sw, routes.tor_index[dst_tor as usize])
    }
}

/// Per link, what an arrival reads: the far-end node and the link's failure epoch (a copy of
/// the port's, updated when the link fails).
#[derive(Clone, Copy, Debug)]
struct LinkRt {
    to: u32,
    epoch: u32,
}

#[derive(Clone, Debug)]
enum LinkAction {
    Down,
    Up,
    Rate(u64),
    Loss(f64),
}

#[derive(Clone, Debug)]
struct LinkChange {
    t: Time,
    links: Vec<u32>,
    action: LinkAction,
}

/// Counters of the whole run.
#[derive(Clone, Debug, Default)]
pub(crate) struct Counters {
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub hops: u64,
    pub events: u64,
    pub app_bytes_at_warmup: u64,
    pub app_bytes_at_end: u64,
    pub no_route_drops: u64,
}

#[derive(Default)]
pub(crate) struct TraceRows {
    pub t_ms: Vec<f64>,
    pub flow: Vec<u64>,
    pub cwnd_bytes: Vec<f64>,
    pub srtt_us: Vec<f64>,
    pub rate_gbps: Vec<f64>,
    pub dctcp_alpha: Vec<f64>,
    /// "" for a flow's own row; a path's name for its per-path rows (`measure.trace_paths`).
    pub path: Vec<String>,
    last_rcv: HashMap<u32, u64>,
}

/// Per-path rates of the traced flows (`measure.trace_paths`): payload bytes of each traced
/// connection's data arriving at its receiver, by path (`Packet::path_hash`).
#[derive(Default)]
struct PathTrace {
    /// Traced connection -> its flow.
    conns: HashMap<u32, u32>,
    /// (flow, path hash) -> bytes since the last sample.
    bytes: std::collections::BTreeMap<(u32, u32), u64>,
    names: HashMap<(u32, u32), String>,
}

pub struct Sim {
    pub(crate) sc: Scenario,
    q: EventQueue<PackedEv>,
    pub(crate) g: Graph,
    pub(crate) routes: Routes,
    pub(crate) ports: Vec<Port>,
    nominal_rate: Vec<u64>,
    link_up: Vec<bool>,
    arena: Arena,
    /// The hosts: endpoints, flows, edge shim.
    pub(crate) hosts: Hosts,
    /// Per host, the pending shim timer event (`NEVER`: none).
    shim_timers: Vec<Time>,
    /// Every switch's ECMP salt (for path discovery).
    salts: Vec<u64>,
    specs: Vec<FlowSpec>,
    next_spec: usize,
    lb: Box<dyn Balancer>,
    lb_hooks: bool,
    /// The scheme reads DREs: keep them up to date.
    track_dre: bool,
    /// What an arrival needs of its link, compact (read one event ahead, and on every hop).
    links_rt: Vec<LinkRt>,
    /// The output port of the next event's packet, (packet, arrival link, port), when
    /// `prefetch_next_out` could predict it exactly.
    predicted: Option<(PktId, u32, u32)>,
    pub(crate) overlay: OverlayMode,
    /// Per directed link, the header bytes the scheme adds to every packet on it (empty when
    /// it adds none): for the ideal FCT.
    hdr_bytes: Vec<u32>,
    dre: DreParams,
    loss_rng: Rng,
    changes: Vec<LinkChange>,
    shared: Option<(u64, f64)>,
    /// With `shared`: per node, its pool's count (switches only); per link, the pool's view.
    pools_rt: Vec<PoolRt>,
    pool_links: Vec<PoolLink>,
    pub(crate) c: Counters,
    /// Per-window link throughput (windows.csv).
    pub(crate) windows: crate::stats::windows::Windows,
    pub(crate) traces: TraceRows,
    /// With `measure.trace_paths`.
    path_trace: Option<PathTrace>,
    /// host -> the ToR's downlink toward it.
    host_downlink: Vec<u32>,
    pub(crate) end_arrivals: Time,
    /// The end-of-arrivals mark has run.
    arrivals_done: bool,
    /// The HDFS job is over and ends the run (`end_run`).
    job_over: bool,
    end_time: Time,
    violation: Option<String>,
    check: bool,
    /// The pcap writer and the flowlet counter of the links the scenario names, if any.
    pub(crate) tap: Option<Box<crate::stats::tap::Tap>>,
    /// Things the user should know about a scenario that runs (summary.json `warnings`).
    pub(crate) warnings: Vec<String>,
    pub(crate) wall_s: f64,
    pub(crate) sim_end: Time,
    /// Every port's marks at the start and the end of the measurement interval (`warmup`,
    /// end of arrivals): the ports table's time averages are taken between them.
    pub(crate) interval_marks: [Vec<PortMark>; 2],
}

/// A switch's shared buffer (`switch.shared_buffer`): the bytes queued at its ports, kept
/// without summing every port on every packet. Each port with packets has one entry in `due`,
/// at or before its oldest packet's departure (other code may advance the port in between,
/// which only makes the entry early); a port is looked at again when its entry comes due.
#[derive(Default)]
struct PoolRt {
    used_bytes: u64,
    /// (time, link), earliest first: at most one entry per port.
    due: std::collections::BinaryHeap<std::cmp::Reverse<(Time, u32)>>,
}

/// The pool's view of one port: its queue when last looked at, and its entry in `due`
/// (`Time::MAX`: none, the port was empty).
#[derive(Clone, Copy)]
struct PoolLink {
    seen_q_bytes: u64,
    due: Time,
}

impl Default for PoolLink {
    fn default() -> Self {
        PoolLink {
            seen_q_bytes: 0,
            due: Time::MAX,
        }
    }
}

impl Sim {
    /// Build the world from a validated scenario.
    pub fn build(sc: &Scenario) -> Result<Sim, Error> {
        let g = sc.topology.build()?;
        let tcp = sc.transport.params();
        let frame_mtu = frame_bytes(tcp.mss) as u64;
        let start_rates = sc.start_rates(&g, &sc.failure_links(&g)?);
        let mut ports: Vec<Port> = g
            .links
            .iter()
            .zip(&start_rates)
            .map(|(l, &rate)| {
                if g.is_host(l.from) {
                    // A host NIC: TCP never overflows its own queue (TSQ-like), no marking.
                    Port::new(l.rate_bps, l.delay_ps, u64::MAX / 2, 0)
                } else {
                    let bdp = sc.switch.bdp_bytes(rate);
                    let cap = sc.switch.buffer.bytes(frame_mtu, bdp);
                    let ecn_k = sc.switch.ecn_threshold.bytes(frame_mtu, bdp);
                    Port::new(l.rate_bps, l.delay_ps, cap, ecn_k)
                }
            })
            .collect();
        let nominal_rate = g.links.iter().map(|l| l.rate_bps).collect();
        let check = sc.measure.check_invariants;

        // Measurement: queue histograms.
        for (i, spec) in sc.measure.queue_ports.iter().enumerate() {
            let links = if spec == "fabric" {
                (0..g.links.len() as u32)
                    .filter(|&l| g.is_fabric(l))
                    .collect()
            } else {
                g.resolve_link(spec, &format!("measure.queue_ports[{i}]"))?
            };
            for l in links {
                let bins = (ports[l as usize].cap_bytes.min(1 << 30) / frame_mtu + 2) as usize;
                ports[l as usize].record_histogram(frame_mtu, bins);
            }
        }
        let tap = crate::stats::tap::Tap::build(sc, &g)?;

        // Failures: expand into a time-sorted list of link changes.
        let mut changes = vec![];
        for (i, (f, links)) in sc.failures.iter().zip(sc.failure_links(&g)?).enumerate() {
            let end = f.until.map(|d| d.0);
            match f.kind {
                FailureKind::Down => {
                    changes.push(LinkChange {
                        t: f.at.0,
                        links: links.clone(),
                        action: LinkAction::Down,
                    });
                    if let Some(e) = end {
                        changes.push(LinkChange {
                            t: e,
                            links,
                            action: LinkAction::Up,
                        });
                    }
                }
                FailureKind::Degrade => {
                    changes.push(LinkChange {
                        t: f.at.0,
                        links: links.clone(),
                        action: LinkAction::Rate(f.rate.unwrap().0),
                    });
                    if let Some(e) = end {
                        changes.push(LinkChange {
                            t: e,
                            links,
                            action: LinkAction::Rate(0),
                        });
                    }
                }
                FailureKind::Lossy => {
                    changes.push(LinkChange {
                        t: f.at.0,
                        links: links.clone(),
                        action: LinkAction::Loss(f.loss.unwrap()),
                    });
                    if let Some(e) = end {
                        changes.push(LinkChange {
                            t: e,
                            links,
                            action: LinkAction::Loss(0.0),
                        });
                    }
                }
                FailureKind::Flap => {
                    let half = f.period.unwrap().0 / 2;
                    let stop = end.unwrap_or(sc.duration.0 + sc.drain.0);
                    let mut t = f.at.0;
                    let mut down = true;
                    while t < stop {
                        changes.push(LinkChange {
                            t,
                            links: links.clone(),
                            action: if down {
                                LinkAction::Down
                            } else {
                                LinkAction::Up
                            },
                        });
                        down = !down;
                        t += half.max(1);
                        if changes.len() > 1_000_000 {
                            return Err(Error::config(&format!("failures[{i}].period"), "the flap period is too short for the run length (over a million changes)"));
                        }
                    }
                    if !down {
                        changes.push(LinkChange {
                            t: stop,
                            links,
                            action: LinkAction::Up,
                        });
                    }
                }
            }
        }
        changes.sort_by_key(|c| c.t);

        let bctx = BuildCtx {
            g: &g,
            seed: sc.seed,
            ecmp_salt: sc.routing.ecmp_salt,
            rcv_window_bytes: tcp.rwnd_bytes,
        };
        let parts = sc.scheme.build(&bctx);
        let salts = crate::lb::ecmp_salts(&bctx);
        let lb = parts.lb;
        let mut hosts = Hosts::new(tcp.clone(), parts.mptcp);
        hosts.shim = parts.shim;
        let lb_hooks = lb.wants_switch_hooks();
        let track_dre = lb.reads_dre();
        let links_rt = g
            .links
            .iter()
            .map(|l| LinkRt { to: l.to, epoch: 0 })
            .collect();
        let hdr_bytes: Vec<u32> = (0..g.links.len() as u32)
            .map(|l| lb.link_header_bytes(&g, l))
            .collect();
        let hdr_bytes = if hdr_bytes.iter().any(|&b| b > 0) {
            hdr_bytes
        } else {
            Vec::new()
        };
        let overlay = match sc.switch.overlay {
            crate::scenario::Overlay::Always => OverlayMode::Leaf,
            crate::scenario::Overlay::Scheme => lb.overlay(),
        };

        // Workload (after the overlay is known: a load in wire bytes counts its header).
        let host_overhead_bytes = frame_bytes(tcp.mss) - tcp.mss + PREAMBLE_IFG;
        let wire = WireCost {
            mss_bytes: tcp.mss,
            host_overhead_bytes,
            fabric_overhead_bytes: host_overhead_bytes
                + if overlay == OverlayMode::Leaf {
                    OVERLAY_HDR
                } else {
                    0
                },
        };
        let mut specs = vec![];
        for (i, w) in sc.workload.iter().enumerate() {
            let mut rng = Rng::new(sc.seed, stream::WORKLOAD + i as u64);
            let ctx = GenCtx {
                g: &g,
                duration_ps: sc.duration.0,
                workload: i as u16,
                base_dir: None,
                wire,
            };
            w.generate(&format!("workload[{i}]"), &ctx, &mut rng, &mut specs)?;
        }
        specs.retain(|s| s.start_ps < sc.duration.0);
        specs.sort_by_key(|s| s.start_ps);
        let mut job_start = None;
        for (i, w) in sc.workload.iter().enumerate() {
            if let Some(c) = w.job() {
                let plan = c.plan(&format!("workload[{i}]"), &g, i as u16, sc.duration.0)?;
                job_start = Some(plan.start_ps);
                hosts.job_workload = i as u16;
                hosts.job = Some(Box::new(crate::host::hdfs::Job::new(
                    plan, sc.seed, g.n_hosts,
                )));
            }
        }
        let warnings = sc.check_with_traffic(&g, &specs)?;
        let windows = crate::stats::windows::Windows::new(
            &g,
            sc.measure.window.0,
            (frame_mtu as u32 + OVERLAY_HDR + PREAMBLE_IFG) as u64,
        );
        let host_downlink = g
            .host_uplink
            .iter()
            .map(|&l| g.links[l as usize].reverse)
            .collect();
        let n_links = g.links.len();
        let n_nodes = g.nodes.len();
        if n_links >= KIND0 as usize {
            return Err(Error::config(
                "topology",
                format!("{n_links} links: at most {} are supported", KIND0 - 1),
            ));
        }
        let mut sim = Sim {
            q: EventQueue::new(),
            routes: Routes::default(),
            nominal_rate,
            link_up: vec![true; n_links],
            arena: Arena::default(),
            hosts,
            shim_timers: vec![NEVER; n_nodes],
            salts,
            specs,
            next_spec: 0,
            lb,
            lb_hooks,
            track_dre,
            links_rt,
            predicted: None,
            overlay,
            hdr_bytes,
            dre: DreParams {
                period_ps: sc.switch.dre_period.0,
                alpha: sc.switch.dre_alpha,
            },
            loss_rng: Rng::new(sc.seed, stream::LINK_LOSS),
            changes,
            shared: sc
                .switch
                .shared_buffer
                .map(|b| (b.bytes(frame_mtu, 0), sc.switch.shared_alpha)),
            pools_rt: match sc.switch.shared_buffer {
                Some(_) => (0..n_nodes).map(|_| PoolRt::default()).collect(),
                None => Vec::new(),
            },
            pool_links: match sc.switch.shared_buffer {
                Some(_) => vec![PoolLink::default(); n_links],
                None => Vec::new(),
            },
            c: Counters::default(),
            windows,
            traces: TraceRows::default(),
            path_trace: sc.measure.trace_paths.then(PathTrace::default),
            host_downlink,
            end_arrivals: sc.duration.0,
            arrivals_done: false,
            job_over: false,
            end_time: sc.duration.0 + sc.drain.0,
            violation: None,
            check,
            tap,
            warnings,
            wall_s: 0.0,
            sim_end: 0,
            interval_marks: Default::default(),
            ports,
            g,
            sc: sc.clone(),
        };
        // Changes at time 0 are the starting state, known to routing from the start.
        let mut first = 0;
        while first < sim.changes.len() && sim.changes[first].t == 0 {
            sim.apply_change(first, 0);
            first += 1;
        }
        sim.reroute(0);
        if sim.hosts.shim.is_some() && !crate::host::paths::any_multipath(&sim.g, &sim.routes) {
            return Err(Error::config(
                "scheme.name",
                format!(
                    "{} balances over the paths between two hosts, but no two hosts of this \
                     fabric have more than one; use a fabric with several paths (e.g. two \
                     spines), or a fabric scheme such as ecmp",
                    sim.sc.scheme.name()
                ),
            ));
        }
        sim.pin_cbr_flows()?;
        for i in first..sim.changes.len() {
            let t = sim.changes[i].t;
            sim.schedule(t, Ev::Link { idx: i as u32 });
        }
        if let Some(s) = sim.specs.first() {
            let t = s.start_ps;
            sim.schedule(t, Ev::Flow);
        }
        if let Some(t) = job_start {
            sim.schedule(t, Ev::Job { pipe: u32::MAX });
        }
        let w = sim.windows.close_at();
        sim.schedule(w, Ev::Window);
        if !sim.sc.measure.trace_flows.is_empty() {
            let t = sim.sc.measure.trace_interval.0;
            sim.schedule(t, Ev::Trace);
        }
        let warm = sim.sc.warmup.0;
        sim.schedule(warm, Ev::Mark { which: 0 });
        let end = sim.end_arrivals;
        sim.schedule(end, Ev::Mark { which: 1 });
        Ok(sim)
    }

    /// Run with an edge shim of the caller's (tests of the shim hooks): the fabric then hashes
    /// the outer header, as under an edge scheme.
    #[cfg(test)]
    pub(crate) fn with_shim(mut self, shim: Box<dyn crate::host::shim::EdgeShim>) -> Sim {
        let ctx = BuildCtx {
            g: &self.g,
            seed: self.sc.seed,
            ecmp_salt: self.sc.routing.ecmp_salt,
            rcv_window_bytes: self.hosts.tcp.rwnd_bytes,
        };
        self.lb = Box::new(crate::lb::Ecmp::outer(&ctx));
        self.hosts.shim = Some(shim);
        self
    }

    fn violate(&mut self, msg: String) {
        if self.check && self.violation.is_none() {
            self.violation = Some(msg);
        }
    }

    #[inline]
    fn schedule(&mut self, t: Time, ev: Ev) {
        if !self.q.push(t, ev.into()) {
            let now = self.q.now();
            self.violate(format!(
                "event {ev:?} scheduled at {t} ps, before the current time {now} ps"
            ));
        }
    }

    fn mark_ports(&mut self, which: usize, now: Time) {
        self.interval_marks[which] = self.ports.iter_mut().map(|p| p.mark(now)).collect();
    }

    /// Every directed link a `[[failures]]` entry acts on, `random:N` resolved, by name in link
    /// order (the summary's `failure_links`: which links a random failure picked).
    pub(crate) fn failure_links(&self) -> Vec<String> {
        let mut ls: Vec<u32> = self
            .changes
            .iter()
            .flat_map(|c| c.links.iter().copied())
            .collect();
        ls.sort_unstable();
        ls.dedup();
        ls.into_iter().map(|l| self.g.link_name(l)).collect()
    }

    /// The scheme's own counters (its balancer's and its edge shim's), as a JSON object
    /// (empty for schemes without any).
    pub(crate) fn lb_counters(&self) -> serde_json::Value {
        let shim = self.hosts.shim.as_ref().map(|s| s.counters());
        let m: serde_json::Map<_, _> = self
            .lb
            .counters()
            .into_iter()
            .chain(shim.into_iter().flatten())
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect();
        m.into()
    }

    /// Run to the end and produce the records.
    pub fn run(mut self, mut opts: RunOptions) -> Result<RunResult, Error> {
        let t0 = std::time::Instant::now();
        if let (Some(path), Some(tap)) = (&self.sc.measure.pcap_file, self.tap.as_mut()) {
            tap.pcap = Some(crate::stats::pcap::PcapWriter::create(path)?);
        }
        let horizon = self.end_time.max(1) as f64;
        let mut next_check = 0u64;
        while let Some((t, ev)) = self.q.pop() {
            if t > self.end_time {
                break;
            }
            self.c.events += 1;
            self.prefetch_next();
            self.dispatch(t, ev.into());
            self.prefetch_next_out();
            if self.c.events >= next_check {
                next_check = self.c.events + (1 << 16);
                if let Some(v) = self.violation.take() {
                    return Err(Error::Invariant(v));
                }
                if let Some(c) = opts.cancel {
                    if c.load(Ordering::Relaxed) {
                        return Err(Error::Cancelled);
                    }
                }
                if let Some(p) = opts.progress.as_mut() {
                    if !p(t as f64 / horizon) {
                        return Err(Error::Cancelled);
                    }
                }
                self.check_pools();
                self.check_conservation()?;
            }
            // Everything finished after the arrivals ended: nothing left to measure. (A job
            // always has a flow open while it runs.)
            if self.arrivals_done
                && self.hosts.open_flows == 0
                && self.next_spec >= self.specs.len()
                && self.hosts.job.as_ref().is_none_or(|j| j.end.is_some())
            {
                break;
            }
            if self.job_over {
                break;
            }
        }
        let now = self.q.now().min(self.end_time);
        self.sim_end = now;
        if let Some(j) = self.hosts.job.as_ref() {
            match j.end {
                None => self.warnings.push(format!(
                    "the hdfs job did not finish by the end of the run ({:.3} s): its jct_s is                      null; lengthen drain",
                    now as f64 * 1e-12
                )),
                Some(e) if e > self.end_arrivals && self.sc.workload.len() > 1 => {
                    self.warnings.push(format!(
                        "the hdfs job ended at {:.3} s, after duration ({:.3} s): the other                          workloads' arrivals stopped before it did; lengthen duration",
                        e as f64 * 1e-12,
                        self.end_arrivals as f64 * 1e-12
                    ))
                }
                _ => {}
            }
        }
        if !self.arrivals_done {
            // The events ran out before the end of arrivals: the interval ends here.
            self.c.app_bytes_at_end = self.hosts.app_bytes;
            for which in 0..2 {
                if self.interval_marks[which].is_empty() {
                    self.mark_ports(which, now);
                }
            }
        }
        for p in self.ports.iter_mut() {
            p.settle(now);
        }
        if let Some(v) = self.violation.take() {
            return Err(Error::Invariant(v));
        }
        self.check_conservation()?;
        // Close the last windows.
        self.windows.flush(&self.g, now, true);
        if let Some(p) = opts.progress.as_mut() {
            p(1.0);
        }
        if let Some(w) = self.tap.as_mut().and_then(|t| t.pcap.take()) {
            w.finish()?;
        }
        self.wall_s = t0.elapsed().as_secs_f64();
        let flowlets = self.tap.as_mut().and_then(|t| t.flowlets.take());
        Ok(crate::stats::collect(&self, flowlets))
    }

    /// Start loading the next event's packet and port while this event runs: at scale the
    /// packet-hop loop is bound by cache misses on exactly these two records.
    #[inline]
    fn prefetch_next(&self) {
        if let Some(Ev::Arrive { pkt, link }) = self.q.peek_ready().map(|&e| Ev::from(e)) {
            // The packet's network line (and its transport line at a host), and when DREs
            // are kept, what `arrive` reads of the port: the delay in the first line, the DRE
            // in the second. (Each prefetch holds a fill buffer: fetch no more than needed.)
            let Some(rt) = self.links_rt.get(link as usize) else {
                return;
            };
            let p = self.arena.slot_ptr(pkt) as *const u8;
            prefetch(p);
            if self.g.is_host(rt.to) {
                prefetch(p.wrapping_add(64));
            }
            if self.track_dre {
                let p = &self.ports[link as usize] as *const Port as *const u8;
                prefetch(p);
                prefetch(p.wrapping_add(64));
            }
        }
    }

    /// Once the next event's packet has arrived in cache (it was prefetched when this event
    /// started), predict the output port it will take and start loading that port too. The
    /// prediction is exact when the scheme neither rewrites packets nor encapsulates (the
    /// next event is the one peeked: nothing runs in between), and `forward` then uses it.
    #[inline]
    fn prefetch_next_out(&mut self) {
        // A prediction lives for one event at most.
        self.predicted = None;
        let Some(Ev::Arrive { pkt, link }) = self.q.peek_ready().map(|&e| Ev::from(e)) else {
            return;
        };
        let sw = self.links_rt[link as usize].to;
        if self.g.is_host(sw) {
            return;
        }
        let Some(out) = self.predict_out(sw, self.arena.get(pkt)) else {
            return;
        };
        if !self.lb_hooks && self.overlay == OverlayMode::None {
            self.predicted = Some((pkt, link, out));
        }
        // The two lines an offer touches (see the layout of `Port`), and the third, with the
        // ring, which it reads when the port holds two packets or more.
        if let Some(port) = self.ports.get(out as usize) {
            let p = port as *const Port as *const u8;
            prefetch(p);
            prefetch(p.wrapping_add(64));
            prefetch(p.wrapping_add(128));
        }
    }

    /// The output port of `p` at switch `sw` when the tables alone (and the scheme's
    /// [`Balancer::predict`]) determine it.
    #[inline]
    fn predict_out(&self, sw: u32, p: &Packet) -> Option<u32> {
        let cands = next_hops(&self.g, &self.routes, &self.host_downlink, sw, p.dst);
        match cands.len() {
            0 => None,
            1 => Some(cands[0]),
            _ => self.lb.predict(sw, p, cands),
        }
    }

    /// The bytes queued at switch `sw`'s ports at `now` (its shared pool's use). Only ports
    /// whose pool entry has come due are brought up to date: the others have sent nothing
    /// since the pool last looked at them.
    fn pool_used(&mut self, sw: usize, now: Time) -> u64 {
        while let Some(&std::cmp::Reverse((t, link))) = self.pools_rt[sw].due.peek() {
            if t > now {
                break;
            }
            self.pools_rt[sw].due.pop();
            self.ports[link as usize].advance(now);
            self.pool_sync(sw, link);
            let next = self.ports[link as usize].next_departure();
            self.pool_links[link as usize].due = next;
            if next != Time::MAX {
                self.pools_rt[sw].due.push(std::cmp::Reverse((next, link)));
            }
        }
        self.pools_rt[sw].used_bytes
    }

    /// Bring the pool's count up to port `link`'s queue as it stands.
    #[inline]
    fn pool_sync(&mut self, sw: usize, link: u32) {
        let q = self.ports[link as usize].q_bytes;
        let pl = &mut self.pool_links[link as usize];
        self.pools_rt[sw].used_bytes = self.pools_rt[sw].used_bytes - pl.seen_q_bytes + q;
        pl.seen_q_bytes = q;
    }

    /// The shared pools' counts must equal the sums of their ports' queues (checked while the
    /// run goes, and after every link change: the end of the run empties the ports, not the
    /// pools).
    fn check_pools(&mut self) {
        if !self.check {
            return;
        }
        let now = self.q.now();
        for sw in 0..self.pools_rt.len() {
            if self.g.is_host(sw as u32) {
                continue;
            }
            let used = self.pool_used(sw, now);
            let ports = &self.g.nodes[sw].ports;
            let sum: u64 = ports
                .iter()
                .map(|&p| self.ports[p as usize].queue_bytes(now))
                .sum();
            if used != sum {
                let name = self.g.nodes[sw].name.clone();
                self.violate(format!(
                    "shared buffer of {name} at {now} ps: counted {used} bytes queued, its ports hold {sum}"
                ));
            }
        }
    }

    fn check_conservation(&self) -> Result<(), Error> {
        let live = self.arena.live() as u64;
        if self.check && self.c.sent != self.c.delivered + self.c.dropped + live {
            return Err(Error::Invariant(format!(
                "packet conservation: sent {} != delivered {} + dropped {} + in flight {}",
                self.c.sent, self.c.delivered, self.c.dropped, live
            )));
        }
        Ok(())
    }

    #[inline]
    fn dispatch(&mut self, now: Time, ev: Ev) {
        match ev {
            Ev::Arrive { pkt, link } => self.arrive(now, pkt, link),
            Ev::Rto { conn } => self.host_timer(now, TimerKind::Rto, conn),
            Ev::DelAck { conn } => self.host_timer(now, TimerKind::DelAck, conn),
            Ev::AppWake { conn } => self.host_timer(now, TimerKind::AppWake, conn),
            Ev::Shim { host } => {
                self.shim_timers[host as usize] = NEVER;
                let net = net_ref!(self);
                self.hosts.on_shim_timer(&net, now, host);
                self.flush_hosts(now);
                // The shim may still hold packets at this host, due later.
                self.sync_shim_timer(host);
            }
            Ev::Flow => self.start_flows(now),
            Ev::Stop { flow } => {
                self.hosts.stop_flow(now, flow);
                self.flush_hosts(now);
            }
            Ev::Cbr { flow } => {
                if let Some(t) = self.hosts.cbr_send(flow) {
                    self.schedule(t, Ev::Cbr { flow });
                }
                self.flush_hosts(now);
            }
            Ev::Job { pipe } => {
                let net = net_ref!(self);
                self.hosts.job_event(&net, now, pipe);
                self.flush_hosts(now);
            }
            Ev::Link { idx } => {
                self.apply_change(idx as usize, now);
                let d = self.sc.routing.detection_delay.0;
                if d == 0 {
                    self.reroute(now);
                } else {
                    self.schedule(now + d, Ev::Reroute);
                }
            }
            Ev::Reroute => self.reroute(now),
            Ev::Window => {
                self.windows.flush(&self.g, now, false);
                let t = self.windows.close_at();
                self.schedule(t, Ev::Window);
            }
            Ev::Trace => {
                self.sample_traces(now);
                let dt = self.sc.measure.trace_interval.0;
                if now + dt <= self.end_time {
                    self.schedule(now + dt, Ev::Trace);
                }
            }
            Ev::Mark { which } => {
                if which == 0 {
                    self.c.app_bytes_at_warmup = self.hosts.app_bytes;
                } else {
                    self.c.app_bytes_at_end = self.hosts.app_bytes;
                    self.arrivals_done = true;
                }
                self.mark_ports(which as usize, now);
            }
        }
    }

    /// Routing converges on the links that are up; the scheme learns the new routes.
    fn reroute(&mut self, now: Time) {
        self.routes = Routes::compute(&self.g, &self.link_up);
        let mut v = LbView {
            now,
            g: &self.g,
            routes: &self.routes,
            ports: &mut self.ports,
            dre: &self.dre,
        };
        self.lb.on_routes(&mut v);
        if let Some(s) = self.hosts.shim.as_mut() {
            s.on_routes(&crate::host::shim::ShimView {
                g: &self.g,
                routes: &self.routes,
                salts: &self.salts,
                ports: &self.ports,
            });
        }
    }

    fn apply_change(&mut self, idx: usize, now: Time) {
        let ch = self.changes[idx].clone();
        for &l in &ch.links {
            let li = l as usize;
            match ch.action {
                LinkAction::Down => {
                    if self.link_up[li] {
                        self.link_up[li] = false;
                        self.ports[li].fail(now);
                        // The flush frees the pool at once (the port's pool entry, if any,
                        // comes due later and finds it empty).
                        if !self.pools_rt.is_empty() {
                            let from = self.g.links[li].from as usize;
                            self.pool_sync(from, l);
                        }
                        self.links_rt[li].epoch = self.ports[li].epoch;
                    }
                }
                LinkAction::Up => {
                    self.link_up[li] = true;
                    self.ports[li].recover();
                }
                LinkAction::Rate(r) => {
                    self.ports[li].rate_bps = if r == 0 { self.nominal_rate[li] } else { r }
                }
                LinkAction::Loss(p) => self.ports[li].set_loss(p),
            }
        }
        self.check_pools();
    }

    /// What the host layer and the result tables may read of the fabric.
    pub(crate) fn net(&self) -> NetRef<'_> {
        net_ref!(self)
    }

    fn host_timer(&mut self, now: Time, kind: TimerKind, conn: u32) {
        self.hosts.on_timer(now, kind, conn);
        self.flush_hosts(now);
    }

    fn sync_timers(&mut self, conn: u32) {
        let c = &self.hosts.conns[conn as usize];
        let (rto, del, app) = (c.rto_deadline, c.delack_deadline, c.app_wake);
        let t = self.hosts.timers[conn as usize];
        if rto != NEVER && t.rto > rto {
            self.hosts.timers[conn as usize].rto = rto;
            self.schedule(rto, Ev::Rto { conn });
        }
        if del != NEVER && t.delack > del {
            self.hosts.timers[conn as usize].delack = del;
            self.schedule(del, Ev::DelAck { conn });
        }
        if app != NEVER && t.app > app {
            self.hosts.timers[conn as usize].app = app;
            self.schedule(app, Ev::AppWake { conn });
        }
    }

    fn start_flows(&mut self, now: Time) {
        while self.next_spec < self.specs.len() && self.specs[self.next_spec].start_ps <= now {
            let spec = self.specs[self.next_spec];
            self.next_spec += 1;
            if let Some(c) = spec.cbr {
                let i = self.hosts.start_cbr(&spec, c.sport);
                self.schedule(now, Ev::Cbr { flow: i });
                continue;
            }
            let net = net_ref!(self);
            let fid = self.hosts.flows.len() as u32;
            self.hosts.start_flow(&net, now, spec);
            if spec.stop_ps != crate::workload::NO_STOP {
                self.schedule(spec.stop_ps, Ev::Stop { flow: fid });
            }
            if let Some(pt) = self.path_trace.as_mut() {
                if self.sc.measure.trace_flows.contains(&fid) {
                    pt.conns.insert(self.hosts.flows[fid as usize].conn, fid);
                }
            }
            self.flush_hosts(now);
        }
        if let Some(s) = self.specs.get(self.next_spec) {
            let t = s.start_ps;
            self.schedule(t, Ev::Flow);
        }
    }

    /// Put the packets the host layer produced on their hosts' NICs (through the edge shim, if
    /// any), then schedule the timers it moved.
    fn flush_hosts(&mut self, now: Time) {
        if self.hosts.job.is_some() {
            self.run_job(now);
        }
        let mut out = std::mem::take(&mut self.hosts.out);
        // TSQ needs to know when the NIC will have sent each of the sender's data segments.
        let tsq = self.hosts.tcp.tsq_bytes > 0;
        for mut pk in out.drain(..) {
            // Constant-rate flows bypass the shim (pinned by their own header).
            let shim = self.hosts.shim.as_mut().filter(|_| pk.conn & CBR_CONN == 0);
            if let Some(s) = shim {
                let v = crate::host::shim::ShimView {
                    g: &self.g,
                    routes: &self.routes,
                    salts: &self.salts,
                    ports: &self.ports,
                };
                s.on_send(now, &mut pk, &v);
            }
            self.c.sent += 1;
            let (payload, conn, host) = (pk.payload, pk.conn, pk.src);
            let by_sender = tsq && self.hosts.sent_by_sender(&pk);
            let id = self.arena.alloc(pk);
            let link = self.g.host_uplink[host as usize];
            let end = self.transmit(now, link, id);
            if let (true, Some(end)) = (by_sender, end) {
                self.hosts.nic_accepted(conn, end, payload);
            }
            if self.hosts.shim.is_some() {
                self.sync_shim_timer(host);
            }
        }
        self.hosts.out = out;
        for i in 0..self.hosts.touched.len() {
            let (conn, sender) = self.hosts.touched[i];
            if tsq && sender {
                self.hosts.conns[conn as usize].arm_tsq_wakeup();
            }
            self.sync_timers(conn);
        }
        self.hosts.touched.clear();
    }

    /// Let the HDFS job hear of what happened, schedule its writers' next packets, and end
    /// the run when it is over (`end_run`).
    fn run_job(&mut self, now: Time) {
        if self.hosts.job_pending() {
            let net = net_ref!(self);
            self.hosts.run_job(&net, now);
        }
        let job = self.hosts.job.as_mut().unwrap();
        let rel = std::mem::take(&mut job.releases);
        if job.end.is_some() && job.plan.end_run {
            self.job_over = true;
        }
        for (t, pipe) in rel {
            self.schedule(t, Ev::Job { pipe });
        }
    }

    fn sync_shim_timer(&mut self, host: u32) {
        let Some(s) = self.hosts.shim.as_ref() else {
            return;
        };
        let t = s.next_timer(host);
        if t != NEVER && self.shim_timers[host as usize] > t {
            self.shim_timers[host as usize] = t;
            self.schedule(t, Ev::Shim { host });
        }
    }

    /// Offer packet `id` to output port `link` at `now`; the time its last bit leaves, unless
    /// the port dropped it.
    #[inline]
    fn transmit(&mut self, now: Time, link: u32, id: PktId) -> Option<Time> {
        let li = link as usize;
        // The switch whose shared pool this port draws from, if any.
        let pool_sw = match self.shared {
            Some(_) if !self.g.is_host(self.g.links[li].from) => {
                Some(self.g.links[li].from as usize)
            }
            _ => None,
        };
        let limit = match (self.shared, pool_sw) {
            (Some((pool, alpha)), Some(sw)) => {
                let used = self.pool_used(sw, now);
                let dyn_limit = (alpha * pool.saturating_sub(used) as f64) as u64;
                // The packet must also fit in what is left of the pool.
                let q = self.ports[li].queue_bytes(now);
                dyn_limit
                    .min(self.ports[li].cap_bytes)
                    .min(q + pool.saturating_sub(used))
            }
            _ => self.ports[li].cap_bytes,
        };
        let (size, wire, ect) = {
            let p = self.arena.get(id);
            (p.size, p.wire_bytes(), p.is(flags::ECT))
        };
        let port = &mut self.ports[li];
        match port.offer(now, size, wire, ect, limit) {
            Enqueue::Sent { end, marked } => {
                if let Some(sw) = pool_sw {
                    let pl = &mut self.pool_links[li];
                    pl.seen_q_bytes += size as u64;
                    self.pools_rt[sw].used_bytes += size as u64;
                    if pl.due == Time::MAX {
                        // The port was empty when the pool last looked: `end` is its head.
                        pl.due = end;
                        self.pools_rt[sw].due.push(std::cmp::Reverse((end, link)));
                    }
                }
                let over =
                    (port.q_bytes > port.cap_bytes).then_some((port.q_bytes, port.cap_bytes));
                let epoch = port.epoch;
                let corrupt = port.corrupts(|| self.loss_rng.f64());
                let arrive = end + port.delay_ps;
                if let Some((q, cap)) = over {
                    self.violate(format!(
                        "queue of link {} holds {q} bytes, above its capacity {cap}",
                        self.g.link_name(link)
                    ));
                }
                let p = self.arena.get_mut(id);
                if marked {
                    p.flags |= flags::CE;
                }
                if corrupt {
                    p.flags |= flags::CORRUPT;
                }
                p.link_epoch = epoch;
                self.schedule(arrive, Ev::Arrive { pkt: id, link });
                Some(end)
            }
            Enqueue::Dropped => {
                self.drop_packet(id);
                None
            }
        }
    }

    #[inline]
    fn drop_packet(&mut self, id: PktId) {
        self.c.dropped += 1;
        self.arena.free(id);
    }

    #[inline]
    fn arrive(&mut self, now: Time, id: PktId, link: u32) {
        let li = link as usize;
        self.c.hops += 1;
        let (wire, epoch, corrupt) = {
            let p = self.arena.get(id);
            (p.wire_bytes(), p.link_epoch, p.is(flags::CORRUPT))
        };
        let LinkRt { to, epoch: current } = self.links_rt[li];
        if epoch != current {
            // The link failed while the packet was queued or on the wire.
            self.ports[li].wire_losses += 1;
            self.drop_packet(id);
            return;
        }
        if self.track_dre {
            let port = &mut self.ports[li];
            port.dre.add(now - port.delay_ps, wire, &self.dre);
        }
        self.windows.credit(li, now, wire);
        if let Some(tap) = self.tap.as_deref_mut() {
            tap.packet(li, now - self.ports[li].delay_ps, self.arena.get(id));
        }
        if corrupt {
            self.ports[li].wire_losses += 1;
            self.drop_packet(id);
            return;
        }
        if self.g.is_host(to) {
            self.deliver(now, id);
        } else {
            self.forward(now, to, link, id);
        }
    }

    #[inline]
    fn forward(&mut self, now: Time, sw: u32, in_link: u32, id: PktId) {
        let dst;
        let src;
        {
            let p = self.arena.get_mut(id);
            p.hops += 1;
            if p.hops > 64 {
                dst = u32::MAX;
                src = 0;
            } else {
                dst = p.dst;
                src = p.src;
            }
        }
        if dst == u32::MAX {
            self.violate(format!(
                "a packet looped (over 64 switch hops) at {}",
                self.g.nodes[sw as usize].name
            ));
            self.drop_packet(id);
            return;
        }
        if self.lb_hooks {
            let mut v = LbView {
                now,
                g: &self.g,
                routes: &self.routes,
                ports: &mut self.ports,
                dre: &self.dre,
            };
            self.lb
                .on_arrival(&mut v, sw, in_link, self.arena.get_mut(id));
        }
        let dst_tor = self.g.host_tor[dst as usize];
        let predicted = match self.predicted.take() {
            Some((p, l, out)) if p == id && l == in_link => Some(out),
            _ => None,
        };
        let out = if let Some(out) = predicted {
            debug_assert_eq!(Some(out), self.predict_out(sw, self.arena.get(id)));
            out
        } else {
            let cands = next_hops(&self.g, &self.routes, &self.host_downlink, sw, dst);
            match cands.len() {
                0 => {
                    self.c.no_route_drops += 1;
                    self.drop_packet(id);
                    return;
                }
                1 => cands[0],
                _ => {
                    let mut v = LbView {
                        now,
                        g: &self.g,
                        routes: &self.routes,
                        ports: &mut self.ports,
                        dre: &self.dre,
                    };
                    self.lb.choose(&mut v, sw, self.arena.get_mut(id), cands)
                }
            }
        };
        if self.overlay == OverlayMode::Leaf && dst_tor == sw {
            // Leaving the fabric: the destination leaf removes the overlay.
            let p = self.arena.get_mut(id);
            if p.is(flags::OVERLAY) {
                p.flags &= !flags::OVERLAY;
                p.size -= OVERLAY_HDR;
            }
        }
        if self.overlay == OverlayMode::Leaf && self.g.host_tor[src as usize] == sw {
            let p = self.arena.get_mut(id);
            if !p.is(flags::OVERLAY) && dst_tor != sw {
                p.flags |= flags::OVERLAY;
                p.size += OVERLAY_HDR;
            }
        }
        if self.lb_hooks {
            let mut v = LbView {
                now,
                g: &self.g,
                routes: &self.routes,
                ports: &mut self.ports,
                dre: &self.dre,
            };
            self.lb
                .on_departure(&mut v, sw, out, self.arena.get_mut(id));
        }
        let p = self.arena.get_mut(id);
        p.path_hash = p.path_hash.wrapping_mul(0x9E37_79B1).wrapping_add(out + 1);
        let _ = self.transmit(now, out, id);
    }

    fn deliver(&mut self, now: Time, id: PktId) {
        let pk = *self.arena.get(id);
        self.arena.free(id);
        self.c.delivered += 1;
        let net = net_ref!(self);
        if let Some(pt) = self.path_trace.as_mut() {
            if let (true, Some(&f)) = (pk.payload > 0, pt.conns.get(&pk.conn)) {
                *pt.bytes.entry((f, pk.path_hash)).or_default() += pk.payload as u64;
            }
        }
        if self.hosts.shim.is_some() && pk.conn & CBR_CONN == 0 {
            let host = pk.dst;
            self.hosts.deliver_through_shim(&net, now, pk);
            self.flush_hosts(now);
            self.sync_shim_timer(host);
        } else {
            self.hosts.deliver(&net, now, &pk);
            self.flush_hosts(now);
        }
    }

    fn sample_traces(&mut self, now: Time) {
        let dt_s = self.sc.measure.trace_interval.0 as f64 * 1e-12;
        for &f in &self.sc.measure.trace_flows {
            let Some(rec) = self.hosts.flows.get(f as usize) else {
                continue;
            };
            let c = &self.hosts.conns[rec.conn as usize];
            let last = self.traces.last_rcv.insert(f, c.rcv_nxt).unwrap_or(0);
            let t = &mut self.traces;
            t.t_ms.push(now as f64 * 1e-9);
            t.flow.push(f as u64);
            t.cwnd_bytes.push(c.w.cwnd);
            t.srtt_us.push(c.srtt_ps(&self.hosts.tcp) * 1e-6);
            t.rate_gbps
                .push((c.rcv_nxt - last) as f64 * 8.0 / dt_s / 1e9);
            t.dctcp_alpha.push(c.cc.alpha());
            t.path.push(String::new());
        }
        let Some(mut pt) = self.path_trace.take() else {
            return;
        };
        for (&(f, h), bytes) in pt.bytes.iter_mut() {
            let name = pt.names.entry((f, h)).or_insert_with(|| {
                let spec = &self.hosts.flows[f as usize].spec;
                self.path_name(spec.src, spec.dst, h)
            });
            let t = &mut self.traces;
            t.t_ms.push(now as f64 * 1e-9);
            t.flow.push(f as u64);
            t.cwnd_bytes.push(f64::NAN);
            t.srtt_us.push(f64::NAN);
            t.rate_gbps.push(*bytes as f64 * 8.0 / dt_s / 1e9);
            t.dctcp_alpha.push(f64::NAN);
            t.path.push(name.clone());
            *bytes = 0;
        }
        self.path_trace = Some(pt);
    }

    /// The name of the path from host `src` to host `dst` whose output links hash to `h`
    /// (`Packet::path_hash`), among the current shortest paths: its switches, "L0>S0>L2", a
    /// switch reached over the i-th of parallel links (i > 0) written "S0#1"; `#<hash>` when no
    /// current path matches (routes changed since).
    fn path_name(&self, src: u32, dst: u32, h: u32) -> String {
        // Depth-first over the shortest paths: (node, hash so far, name so far).
        let tor = self.g.links[self.g.host_uplink[src as usize] as usize].to;
        let mut stack = vec![(tor, 0u32, self.g.nodes[tor as usize].name.clone())];
        while let Some((at, hash, name)) = stack.pop() {
            for &out in next_hops(&self.g, &self.routes, &self.host_downlink, at, dst) {
                let hash = hash.wrapping_mul(0x9E37_79B1).wrapping_add(out + 1);
                let l = &self.g.links[out as usize];
                if l.to == dst {
                    if hash == h {
                        return name;
                    }
                    continue;
                }
                let mut next = format!("{name}>{}", self.g.nodes[l.to as usize].name);
                if l.parallel_index > 0 {
                    next += &format!("#{}", l.parallel_index);
                }
                stack.push((l.to, hash, next));
            }
        }
        format!("#{h:08x}")
    }

    /// Give each constant-rate flow its UDP source port: one whose path (as the scheme's
    /// header hash sends it, on the routes at the start) crosses the flow's `via` switches.
    fn pin_cbr_flows(&mut self) -> Result<(), Error> {
        const PORTS: u16 = 4096;
        for k in 0..self.specs.len() {
            let spec = self.specs[k];
            let Some(mut c) = spec.cbr else {
                continue;
            };
            let via: Vec<u32> = c.via.iter().copied().filter(|&n| n != u32::MAX).collect();
            let field = format!("workload[{}]", spec.workload);
            if via.is_empty() {
                c.sport = 50_000 + (k % 10_000) as u16;
            } else {
                let mut found = None;
                for port in 0..PORTS {
                    let nodes = self.hashed_path(&spec, port).ok_or_else(|| {
                        Error::config(
                            &field,
                            format!(
                                "a flow pinned with `via` needs a scheme that picks paths by a hash of the header (ecmp, wcmp, or an edge scheme: the fabric hashes its outer header); {} does not",
                                self.sc.scheme.name()
                            ),
                        )
                    })?;
                    if via.iter().all(|v| nodes.contains(v)) {
                        found = Some(port);
                        break;
                    }
                }
                let names: Vec<&str> = via
                    .iter()
                    .map(|&v| self.g.nodes[v as usize].name.as_str())
                    .collect();
                c.sport = found.ok_or_else(|| {
                    Error::config(
                        &field,
                        format!(
                            "no path from {} to {} crosses {} (tried {PORTS} source ports)",
                            self.g.nodes[spec.src as usize].name,
                            self.g.nodes[spec.dst as usize].name,
                            names.join(", ")
                        ),
                    )
                })?;
            }
            self.specs[k].cbr = Some(c);
        }
        Ok(())
    }

    /// The switches a packet of constant-rate flow `spec` with source port `port` crosses, as
    /// the scheme's header hash sends it (`None`: the scheme does not choose by the header).
    fn hashed_path(&self, spec: &FlowSpec, port: u16) -> Option<Vec<u32>> {
        let mut f = crate::host::cbr::CbrFlow::new(spec.src, spec.dst, port, 1, 0, 1, 1);
        let pk = f.emit(0).0;
        let mut at = self.g.links[self.g.host_uplink[spec.src as usize] as usize].to;
        let mut nodes = vec![];
        while !self.g.is_host(at) && nodes.len() < 64 {
            nodes.push(at);
            let out = self.predict_out(at, &pk)?;
            at = self.g.links[out as usize].to;
        }
        Some(nodes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// "3bdp" and "1bdp" size each switch port by its own rate when the run starts (a
    /// degradation from time 0 counted, a later one not); host NICs are never sized.
    #[test]
    fn bdp_sizes_follow_each_port_at_the_start() {
        let sc = Scenario::load(
            r#"
            duration = "1ms"
            [topology]
            kind = "leaf-spine"
            leaves = 2
            spines = 2
            hosts_per_leaf = 1
            host_rate = "100Gbps"
            fabric_rate = "6Gbps"
            [switch]
            base_rtt = "160us"
            buffer = "3bdp"
            ecn_threshold = "1bdp"
            [[failures]]
            link = "S0-L1"
            kind = "degrade"
            rate = "3Gbps"
            [[failures]]
            link = "S1-L1"
            kind = "degrade"
            rate = "1Gbps"
            at = "500us"
            "#,
            crate::scenario::Format::Toml,
            &[],
        )
        .unwrap();
        let sim = Sim::build(&sc).unwrap();
        // (port, buffer, ECN threshold): 6 Gbps x 160 us = 120 KB.
        for (link, cap, k) in [
            ("L0->S0", 360_000, 120_000),
            ("S0->L1", 180_000, 60_000),
            ("L1->S0", 180_000, 60_000),
            ("S1->L1", 360_000, 120_000),
            ("L1->H1", 6_000_000, 2_000_000),
        ] {
            let l = sim.g.resolve_link(link, "test").unwrap()[0] as usize;
            assert_eq!(
                (sim.ports[l].cap_bytes, sim.ports[l].ecn_k_bytes),
                (cap, k),
                "{link}"
            );
        }
        let nic = sim.g.host_uplink[0] as usize;
        assert_eq!(sim.ports[nic].ecn_k_bytes, 0, "host NICs never mark");
    }

    #[test]
    fn events_pack_into_eight_bytes_and_back() {
        let max = KIND0 - 1;
        let cases = [
            Ev::Arrive { pkt: 0, link: 0 },
            Ev::Arrive {
                pkt: u32::MAX,
                link: max,
            },
            Ev::Flow,
            Ev::Rto { conn: 7 },
            Ev::DelAck { conn: u32::MAX },
            Ev::AppWake { conn: 3 },
            Ev::Link { idx: 9 },
            Ev::Reroute,
            Ev::Window,
            Ev::Trace,
            Ev::Mark { which: 1 },
            Ev::Shim { host: 5 },
            Ev::Stop { flow: 8 },
            Ev::Cbr { flow: u32::MAX },
        ];
        for ev in cases {
            assert_eq!(Ev::from(PackedEv::from(ev)), ev);
        }
        assert_eq!(std::mem::size_of::<PackedEv>(), 8);
    }
}
