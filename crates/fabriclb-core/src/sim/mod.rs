//! The simulated world: builds every layer from a scenario and runs the event loop. The
//! event-ordering contract (time, then FIFO among equal times) is the engine's
//! (`engine/mod.rs`).
//!
//! Event kinds (`run` hands arrivals straight to the datapath; one `match`, `dispatch`, the rest):
//! - an arrival (`PackedEv::arrive`, not an `Ev`: nothing but `transmit` schedules one): the
//!   packet's last bit reaches the far end of its link (`Packet::link`). Counts one
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
//! - `Link`/`Reroute`: link state changes and the routing update that follows after the
//!   detection delay.
//! - `Window`, `Trace`, `Mark`: measurement windows, flow-trace samples, warm-up and end marks.
//!
//! Invariants checked as the run goes (when `measure.check_invariants`): every packet created
//! is delivered, dropped or still in flight (`sent = delivered + dropped + live`); no queue
//! exceeds its limit; no event is scheduled in the past. A violation ends the run with
//! `Error::Invariant`.
//!
//! Where each part lives: this file holds the event loop (`run`, `dispatch`, `schedule`, the
//! prefetches); `build` makes the world from a scenario; `fabric` is the datapath (ports,
//! forwarding, shared buffers); `endpoints` connects the fabric to the host layer
//! (`host::Hosts`, which owns the endpoints, flows and shim: after each of its calls the
//! packets it produced go on the hosts' NICs and the timers it moved are scheduled,
//! `flush_hosts`); `failures` applies `[[failures]]` and reroutes; `measure` records what the
//! run observes and hands the finished run to `stats` (`Finished`). Layering: `api` calls this
//! module, this module calls `stats`; neither `stats` nor anything below imports `sim` or
//! `api` (tests aside).

use crate::engine::{prefetch, EventQueue, LOOKAHEAD};
use crate::error::Error;
use crate::host::{Hosts, NetRef, TimerKind};
use crate::lb::{Balancer, OverlayMode};
use crate::net::dre::DreParams;
use crate::net::packet::{flags, Arena, Packet, PktId, MAX_PACKETS};
use crate::net::port::{Port, PortMark};
use crate::net::routing::Routes;
use crate::net::topology::Graph;
use crate::rng::Rng;
use crate::scenario::Scenario;
use crate::stats::{Counters, RunResult, TraceRows};
use crate::transport::tcp::{Conn, NEVER};
use crate::units::Time;
use crate::workload::FlowSpec;
use std::sync::atomic::{AtomicBool, Ordering};

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

/// The view of the fabric a scheme's balancer gets at `now`, borrowing only those fields of
/// the `Sim` (the balancer itself and the packet arena stay free to borrow beside it).
macro_rules! lb_view {
    ($s:ident, $now:expr) => {
        crate::lb::LbView {
            now: $now,
            g: &$s.g,
            routes: &$s.routes,
            ports: &mut $s.ports,
            dre: &$s.dre,
        }
    };
}

mod build;
mod endpoints;
mod fabric;
mod failures;
mod measure;

use fabric::{LinkRt, PoolLink, PoolRt};
use failures::LinkChange;
use measure::PathTrace;

/// Hooks a caller may give a run.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Called now and then with the fraction of simulated time done (0..=1). Returning false
    /// stops the run with [`Error::Cancelled`].
    pub progress: Option<&'a mut dyn FnMut(f64) -> bool>,
    /// When set to true from another thread, the run stops with [`Error::Cancelled`].
    pub cancel: Option<&'a AtomicBool>,
}

/// A world whose ports alone take more than this many bytes (a core's L2 cache here, 1 MiB) is
/// large (docs/BENCHMARKS.md): the look-ahead window is on (`Sim::set_lookahead`; it costs about
/// a tenth of the instructions of a small run and gains about a fifth at LS2048, whose ports
/// alone are 2 MiB), and the heap grows on 2 MiB pages while it runs
/// (`mem::prefer_huge_pages`; in a small world they cost speed and resident memory).
pub(crate) const LARGE_WORLD_PORT_BYTES: usize = 1 << 20;

/// `Sim::predicted_after`'s port when there is no prediction (no link has this id: link ids
/// stay below it, checked when the world is built).
const UNPREDICTED: u32 = u32::MAX;

/// The events other than arrivals (see the module's doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ev {
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

/// An event packed into 4 bytes, so that most pending entries are 8 (`engine::radix`; the
/// event set is memory-bound at scale). Bit 31 clear: a packet's arrival, the packet in the
/// low 30 bits (its link is in the packet: `Packet::link`) and bit 30 set when the link ends
/// at a host (the first prefetch stage then loads the packet's transport line too, before the
/// packet is read). Bit 31 set: any other event, kept in `Sim::later` at the slot in the low
/// 31 bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PackedEv(u32);

const LATER: u32 = 1 << 31;
const TO_HOST: u32 = 1 << 30;
const _: () = assert!(MAX_PACKETS <= TO_HOST);

impl PackedEv {
    #[inline(always)]
    fn arrive(pkt: PktId, to_host: bool) -> PackedEv {
        debug_assert!(pkt < MAX_PACKETS);
        PackedEv(pkt | if to_host { TO_HOST } else { 0 })
    }
    /// The packet of an `Arrive`, and whether its link ends at a host (one comparison: the hot
    /// loop and the prefetches ask this of every event); `None` for the other kinds.
    #[inline(always)]
    fn arrival(self) -> Option<(PktId, bool)> {
        (self.0 & LATER == 0).then_some((self.0 & (TO_HOST - 1), self.0 & TO_HOST != 0))
    }
}

impl crate::engine::Payload for PackedEv {
    #[inline(always)]
    fn bits(self) -> u32 {
        self.0
    }
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        PackedEv(bits)
    }
}

/// The events other than arrivals while they are pending (a small share: timers, flows,
/// measurements), in slots that are reused.
#[derive(Default)]
struct Later {
    evs: Vec<Ev>,
    free: Vec<u32>,
}

impl Later {
    fn put(&mut self, ev: Ev) -> PackedEv {
        let slot = match self.free.pop() {
            Some(i) => {
                self.evs[i as usize] = ev;
                i
            }
            None => {
                self.evs.push(ev);
                self.evs.len() as u32 - 1
            }
        };
        assert!(
            slot < LATER,
            "more than 2^31 timers and other events pending"
        );
        PackedEv(LATER | slot)
    }
    fn take(&mut self, p: PackedEv) -> Ev {
        let slot = p.0 & !LATER;
        self.free.push(slot);
        self.evs[slot as usize]
    }
}

pub struct Sim {
    pub(crate) sc: Scenario,
    q: EventQueue<PackedEv>,
    /// The pending events other than arrivals (`PackedEv`).
    later: Later,
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
    /// Some link has switch hooks (`link_hooks`).
    lb_hooks: bool,
    /// Per directed link, the switch hooks the scheme needs there (`Balancer::switch_hooks`).
    link_hooks: Vec<u8>,
    /// The scheme reads DREs: keep them up to date.
    track_dre: bool,
    /// What an arrival needs of its link, compact (read one event ahead, and on every hop).
    links_rt: Vec<LinkRt>,
    /// The output port of the next event's packet, (packet, arrival link, port), when
    /// `prefetch_next_out` could predict it exactly.
    predicted: Option<(PktId, u32, u32)>,
    /// The same for the event after next (a hint until it becomes the next event; only with
    /// the look-ahead window), the port `UNPREDICTED` when it could not be predicted: it is
    /// then not tried again one event later, unless an event in between could have changed
    /// things.
    predicted_after: Option<(PktId, u32, u32)>,
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

impl Sim {
    fn violate(&mut self, msg: String) {
        if self.check && self.violation.is_none() {
            self.violation = Some(msg);
        }
    }

    /// Schedule `ev` at `t`.
    #[inline]
    fn schedule(&mut self, t: Time, ev: Ev) {
        let p = self.later.put(ev);
        self.push_event(t, p);
    }

    /// Schedule the arrival of packet `pkt` at `t` (its `link` already set; `to_host`: the
    /// link ends at a host). Every packet-hop schedules once: the report of a past time stays
    /// out of line, so that this inlines into `transmit` without the formatting's register
    /// saves.
    #[inline(always)]
    fn schedule_arrival(&mut self, t: Time, pkt: PktId, to_host: bool) {
        self.push_event(t, PackedEv::arrive(pkt, to_host));
    }

    #[inline(always)]
    fn push_event(&mut self, t: Time, p: PackedEv) {
        if !self.q.push(t, p) {
            self.scheduled_in_past(t, p);
        }
    }

    #[cold]
    #[inline(never)]
    fn scheduled_in_past(&mut self, t: Time, p: PackedEv) {
        let what = match p.arrival() {
            Some((pkt, _)) => format!(
                "the arrival of packet {pkt} over link {}",
                self.arena.get(pkt).link
            ),
            // Its slot is freed: the event was not queued.
            None => format!("event {:?}", self.later.take(p)),
        };
        let now = self.q.now();
        self.violate(format!(
            "{what} scheduled at {t} ps, before the current time {now} ps"
        ));
    }

    /// Turn the event queue's look-ahead window and the staged prefetching on or off (before
    /// the run; results are the same either way). `build` turns it on when the ports alone
    /// exceed `LARGE_WORLD_PORT_BYTES`.
    pub(crate) fn set_lookahead(&mut self, on: bool) {
        self.q.set_lookahead(on);
    }

    /// Whether the look-ahead window is on.
    #[cfg(test)]
    pub(crate) fn lookahead(&self) -> bool {
        self.q.lookahead()
    }

    /// Run to the end and produce the records.
    pub fn run(mut self, mut opts: RunOptions) -> Result<RunResult, Error> {
        let t0 = std::time::Instant::now();
        if let (Some(path), Some(tap)) = (&self.sc.measure.pcap_file, self.tap.as_mut()) {
            tap.pcap = Some(crate::stats::pcap::PcapWriter::create(path)?);
        }
        // The window is on in a large world (`LARGE_WORLD_PORT_BYTES`), and only there.
        if self.q.lookahead() {
            crate::mem::prefer_huge_pages();
        }
        let horizon = self.end_time.max(1) as f64;
        let mut next_check = 0u64;
        while let Some((t, ev)) = self.q.pop() {
            if t > self.end_time {
                break;
            }
            self.c.events += 1;
            self.prefetch_next();
            // Packet arrivals (nearly every event) go straight to the datapath; the rest to
            // `dispatch`, out of line.
            let arrival = ev.arrival();
            if let Some((pkt, _)) = arrival {
                self.arrive(t, pkt);
            } else {
                let ev = self.later.take(ev);
                self.dispatch(t, ev);
            }
            self.prefetch_next_out(arrival.is_some());
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
        Ok(crate::stats::collect(&self.finished(), flowlets))
    }

    /// At the start of an event, start loading the packet of an event to come: at scale the
    /// packet-hop loop is bound by cache misses on the packets, ports and connections of the
    /// next events. Without the queue's look-ahead window: the next event's packet here, its
    /// port or connection after this event (`prefetch_next_out`). With it (large worlds, see
    /// `build`), in stages, each reading only what an earlier one brought in, since one event
    /// is too short to hide a miss there: the packet `LOOKAHEAD` events ahead (here: its event
    /// says whether the transport line is wanted too); two events ahead, the port it will take
    /// or the connection it is for; one event ahead, the port's oldest waiting packet.
    #[inline]
    fn prefetch_next(&self) {
        let n = if self.q.lookahead() { LOOKAHEAD - 1 } else { 0 };
        if let Some((pkt, to_host)) = self.q.peek_ready(n).and_then(|e| e.arrival()) {
            // The packet's network line (and its transport line at a host). (Each prefetch
            // holds a fill buffer: fetch no more than needed.)
            let p = self.arena.slot_ptr(pkt) as *const u8;
            prefetch(p);
            if to_host {
                prefetch(p.wrapping_add(64));
            }
        }
    }

    /// After an event (see `prefetch_next`); without the window, `predict_next`. With it: for
    /// the next event, predict its output port exactly (nothing runs in between), so that
    /// `forward` uses it, and start loading the port's oldest waiting packet (the port's lines
    /// were loaded one event earlier); for the event after next, whose packet is in cache by
    /// now, start loading the port it will take (predicted) or its connection. A prediction made
    /// one event earlier stands when the event in between was an arrival (an arrival changes
    /// no route, and the schemes that predict keep no state).
    #[inline]
    fn prefetch_next_out(&mut self, after_arrival: bool) {
        // A prediction lives for two events at most.
        self.predicted = None;
        if !self.q.lookahead() {
            self.predict_next();
            return;
        }
        let before = self.predicted_after.take();
        if let Some((pkt, _)) = self.q.peek_ready(0).and_then(|e| e.arrival()) {
            let link = self.arena.get(pkt).link;
            let sw = self.links_rt[link as usize].to;
            let out = match before {
                Some((p, l, out)) if after_arrival && p == pkt && l == link => {
                    (out != UNPREDICTED).then_some(out)
                }
                _ if self.g.is_host(sw) => None,
                _ => self.predict_out(sw, self.arena.get(pkt)),
            };
            if let Some(out) = out {
                self.predicted = Some((pkt, link, out));
                if let Some(p) = self.ports.get(out as usize).and_then(Port::waiting_hint) {
                    prefetch(p);
                }
            }
        }
        if let Some((pkt, _)) = self.q.peek_ready(1).and_then(|e| e.arrival()) {
            let link = self.arena.get(pkt).link;
            match self.prefetch_out(pkt, link) {
                Some(out) => self.predicted_after = Some((pkt, link, out)),
                // Under switch hooks a missing prediction (a host, or a choice: never
                // predicted) is remembered, so that it is not asked for again one event later.
                None if self.lb_hooks => self.predicted_after = Some((pkt, link, UNPREDICTED)),
                None => {}
            }
        }
    }

    /// Without the window: the next event's packet is in cache (it was prefetched when this
    /// event started); predict its output port, exactly, and start loading that port, or at a
    /// host its connection.
    #[inline]
    fn predict_next(&mut self) {
        let Some((pkt, _)) = self.q.peek_ready(0).and_then(|e| e.arrival()) else {
            return;
        };
        let link = self.arena.get(pkt).link;
        if let Some(out) = self.prefetch_out(pkt, link) {
            self.predicted = Some((pkt, link, out));
        }
    }

    /// For an arrival of packet `pkt` over `link` whose packet is in cache: when DREs are kept,
    /// the lines of the link's port that `arrive` reads; at a host, start loading its
    /// connection and its NIC's port; at a switch, what the scheme will read of its own state
    /// (`Balancer::prefetch`, only for schemes with switch hooks: the others pay no call) and
    /// the output port it will take, predicted. Returns the prediction. (Inlined at both
    /// callers: out of line it cost LS128 3% more instructions.)
    #[inline(always)]
    fn prefetch_out(&self, pkt: PktId, link: u32) -> Option<u32> {
        let sw = self.links_rt[link as usize].to;
        let pk = self.arena.get(pkt);
        if self.track_dre {
            // What `arrive` reads of the port: the delay in the first line, the DRE in the
            // second.
            let p = &self.ports[link as usize] as *const Port as *const u8;
            prefetch(p);
            prefetch(p.wrapping_add(64));
        }
        if self.g.is_host(sw) {
            self.prefetch_conn(pk);
            // Almost every arrival at a host makes it send (an ACK, or data on an ACK): its
            // NIC's port.
            if let Some(&nic) = self.g.host_uplink.get(sw as usize) {
                self.prefetch_port(nic);
            }
            return None;
        }
        let cands = self.routes.next_hops(sw, pk.dst);
        // `choose` runs only where there is a choice: elsewhere its state would be loaded for
        // nothing (FT2048: 60% of switch hops have one candidate).
        if self.lb_hooks && cands.len() > 1 {
            self.lb.prefetch(sw, pk);
        }
        let out = self.predict_among(sw, pk, cands)?;
        self.prefetch_port(out);
        Some(out)
    }

    /// The two lines of a port an offer touches (see the layout of `Port`), and the third,
    /// with the ring, which it reads when the port holds two packets or more.
    #[inline]
    fn prefetch_port(&self, out: u32) {
        if let Some(port) = self.ports.get(out as usize) {
            let p = port as *const Port as *const u8;
            prefetch(p);
            prefetch(p.wrapping_add(64));
            prefetch(p.wrapping_add(128));
        }
    }

    /// At a host, what `Hosts::deliver` reads first of the packet's connection: the lines of
    /// the record for the end it is for (`Conn::lines_read`) and its timer record. (A CBR
    /// packet's connection id is out of range: nothing to fetch.)
    #[inline]
    fn prefetch_conn(&self, pk: &Packet) {
        let ci = pk.conn as usize;
        let (Some(c), Some(t)) = (self.hosts.conns.get(ci), self.hosts.timers.get(ci)) else {
            return;
        };
        let base = c as *const Conn as *const u8;
        for &line in Conn::lines_read(pk.is(flags::ACK)) {
            prefetch(base.wrapping_add(64 * line));
        }
        prefetch(t as *const _ as *const u8);
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

    /// Every event other than a packet's arrival (`run` hands those to `arrive` itself).
    #[inline(never)]
    fn dispatch(&mut self, now: Time, ev: Ev) {
        match ev {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::hooks;

    /// A leaf-spine with a flapping and a lossy link (routes change while packets are on
    /// their way), under Poisson web-search flows with losses and timeouts; no `[scheme]`.
    const LEAF_SPINE_FAILURES: &str = r#"
        duration = "3ms"
        drain = "10ms"
        [topology]
        kind = "leaf-spine"
        leaves = 4
        spines = 2
        hosts_per_leaf = 4
        host_rate = "10Gbps"
        fabric_rate = "10Gbps"
        [transport]
        min_rto = "1ms"
        [switch]
        buffer = "30pkt"
        [[failures]]
        link = "L0-S0"
        kind = "flap"
        at = "1ms"
        period = "500us"
        [[failures]]
        link = "L1-S1"
        kind = "lossy"
        loss = 0.01
        [[workload]]
        pattern = "poisson"
        cdf = "web-search"
        load = 0.8
        load_basis = "fabric"
        cross_tor = true
        "#;

    fn with_scheme(fabric: &str, scheme: &str) -> Scenario {
        let text = format!("{fabric}\n[scheme]\nname = \"{scheme}\"\n");
        Scenario::load(&text, crate::scenario::Format::Toml, &[]).unwrap()
    }

    /// Two runs that must not differ produced the same records (and enough of them to say so).
    fn assert_same_records(a: &RunResult, b: &RunResult, what: &str) {
        assert!(a.flows.rows() > 20, "{what}: {} flows", a.flows.rows());
        assert_eq!(a.flows.to_csv(), b.flows.to_csv(), "{what}");
        assert_eq!(a.ports.to_csv(), b.ports.to_csv(), "{what}");
        for k in ["packet_hops", "events", "drops", "packets", "lb"] {
            assert_eq!(a.summary[k], b.summary[k], "{what}: {k}");
        }
    }

    /// The look-ahead window changes what is prefetched, never a result: one run with it and
    /// one without give the same records. ECMP, so output ports are predicted, reused one
    /// event later and used by `forward` (which checks them against the tables in debug
    /// builds), while routes change under the predictions.
    #[test]
    fn the_lookahead_window_changes_no_result() {
        let sc = with_scheme(LEAF_SPINE_FAILURES, "ecmp");
        let run = |on: bool| {
            let mut sim = Sim::build(&sc).unwrap();
            sim.set_lookahead(on);
            sim.run(Default::default()).unwrap()
        };
        assert_same_records(&run(false), &run(true), "ecmp");
    }

    /// The switch hooks a scheme leaves out on some links (`Balancer::switch_hooks`) would
    /// have done nothing there: a run with every hook called on every link gives the same
    /// records. Each scheme with hooks, on a fabric where they act: a fat-tree at 2:1 with
    /// drops for the Expeditus family, the leaf-spine with failures for CONGA.
    #[test]
    fn switch_hooks_left_out_change_no_result() {
        const FAT_TREE: &str = r#"
            duration = "2ms"
            drain = "10ms"
            [topology]
            kind = "fat-tree"
            k = 4
            agg_oversubscription = 2
            host_rate = "10Gbps"
            fabric_rate = "10Gbps"
            [transport]
            cc = "newreno"
            min_rto = "1ms"
            [switch]
            buffer = "20pkt"
            [[workload]]
            pattern = "poisson"
            cdf = "web-search"
            load = 0.7
            load_basis = "host"
            "#;
        for (fabric, scheme) in [
            (FAT_TREE, "expeditus"),
            (FAT_TREE, "expeditus-socc"),
            (FAT_TREE, "path-oracle"),
            (LEAF_SPINE_FAILURES, "conga"),
            (LEAF_SPINE_FAILURES, "local"),
        ] {
            let sc = with_scheme(fabric, scheme);
            let run = |every: bool| {
                let mut sim = Sim::build(&sc).unwrap();
                // Something is left out, or the comparison would test nothing.
                assert!(sim.lb_hooks, "{scheme}");
                assert!(sim.link_hooks.iter().any(|&h| h != hooks::BOTH), "{scheme}");
                if every {
                    sim.link_hooks.iter_mut().for_each(|h| *h = hooks::BOTH);
                }
                sim.run(Default::default()).unwrap()
            };
            assert_same_records(&run(false), &run(true), scheme);
        }
    }

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
    fn events_pack_into_four_bytes_and_back() {
        // Arrivals: the packet and whether the link ends at a host, at the ends of the range.
        for (pkt, to_host) in [
            (0, false),
            (0, true),
            (MAX_PACKETS - 1, false),
            (MAX_PACKETS - 1, true),
        ] {
            let p = PackedEv::arrive(pkt, to_host);
            assert_eq!(p.arrival(), Some((pkt, to_host)));
        }
        // The others go through their slab and come back whole; slots are reused.
        let others = [
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
            Ev::Job { pipe: u32::MAX },
        ];
        let mut later = Later::default();
        let packed: Vec<PackedEv> = others.iter().map(|&ev| later.put(ev)).collect();
        for (p, ev) in packed.iter().zip(others) {
            assert_eq!(p.arrival(), None, "{ev:?}");
            assert_eq!(later.take(*p), ev);
        }
        let again = later.put(Ev::Flow);
        assert!(packed.contains(&again));
        assert_eq!(later.evs.len(), others.len());
        assert_eq!(std::mem::size_of::<PackedEv>(), 4);
    }
}
