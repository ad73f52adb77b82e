//! The host layer: what runs at the edge of the fabric, between the applications and the NICs.
//!
//! A host has transport endpoints (TCP connections, and MPTCP connections made of TCP
//! subflows), the applications' flows on them, and optionally an edge shim between transport
//! and NIC (`shim`: path choice by the outer header, per-path feedback, reordering). This layer
//! starts flows, hands arriving packets to their endpoint, runs the endpoints' timers, and
//! produces packets into [`Hosts::out`]; the simulation puts them on the hosts' NICs, schedules
//! the timers this layer reports ([`Hosts::touched`]) and tells it when the NIC will have sent a
//! segment (for TCP Small Queues).
//!
//! It may read the fabric (graph, routes, port rates: for path discovery and a pre-established
//! connection's RTT) but never changes it, and never touches the event set or the packet arena.

pub mod bw_oracle;
pub mod cbr;
pub mod clove;
pub mod eman;
pub mod flowbender;
pub mod hdfs;
pub mod hermes;
pub mod paths;
pub mod presto;
pub mod shim;
pub mod tunnel;

use crate::lb::OverlayMode;
use crate::net::packet::{flags, Packet, MIN_FRAME, PREAMBLE_IFG};
use crate::net::port::Port;
use crate::net::routing::Routes;
use crate::net::topology::Graph;
use crate::transport::cc::{Cc, Lia};
use crate::transport::mptcp::{Coupling, Meta, MptcpParams, DSS_ACK_BYTES, DSS_DATA_BYTES};
use crate::transport::tcp::{AppRate, Conn, Events, NEVER};
use crate::transport::{RtoEstimator, TcpParams};
use crate::units::{ser_ps, Time};
use crate::workload::{ConnPolicy, FlowSpec};
use std::collections::HashMap;

/// What a host-layer call may read of the fabric.
pub(crate) struct NetRef<'a> {
    pub g: &'a Graph,
    pub routes: &'a Routes,
    pub ports: &'a [Port],
    pub overlay: OverlayMode,
    /// Per directed link, header bytes the scheme adds to every packet (empty: none).
    pub hdr_bytes: &'a [u32],
}

/// The pending timer event of each kind of one connection (`NEVER`: none). Timers are lazy:
/// a connection moves its deadlines freely and the event re-arms itself when it fires early.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timers {
    pub rto: Time,
    pub delack: Time,
    pub app: Time,
}

/// The timers of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimerKind {
    Rto,
    DelAck,
    AppWake,
}

/// One flow's record.
#[derive(Clone, Debug)]
pub(crate) struct FlowRec {
    pub spec: FlowSpec,
    /// Its TCP connection, or its MPTCP connection's first subflow.
    pub conn: u32,
    /// Its MPTCP connection, if any.
    pub meta: Option<u32>,
    pub end: Time,
    pub new_conn: bool,
    /// Stream offset of the flow's first byte on its connection.
    pub start_off: u64,
    pub base: [u64; 4],
    pub counts: [u64; 4],
}

/// The MPTCP transport of a run: its settings, its subflows' TCP settings, its connections.
pub(crate) struct Mptcp {
    pub params: MptcpParams,
    /// The subflows' TCP: the run's, with room for the DSS option in each segment.
    pub sub_tcp: TcpParams,
    pub metas: Vec<Meta>,
}

pub(crate) struct Hosts {
    pub tcp: TcpParams,
    pub conns: Vec<Conn>,
    pub timers: Vec<Timers>,
    /// Persistent connections per (src, dst): TCP connections, and MPTCP connections.
    pools: HashMap<(u32, u32), Vec<u32>>,
    mpools: HashMap<(u32, u32), Vec<u32>>,
    pub flows: Vec<FlowRec>,
    pub open_flows: usize,
    /// In-order payload bytes delivered to receiving applications.
    pub app_bytes: u64,
    pub mptcp: Option<Mptcp>,
    /// The edge shim between the transports and the NICs, if the scheme has one.
    pub shim: Option<Box<dyn shim::EdgeShim>>,
    /// Constant-rate (UDP-like) flows.
    pub cbr: Vec<cbr::CbrFlow>,
    /// Packets the shim passed up, to deliver.
    up: Vec<Packet>,
    /// Packets to put on their hosts' NICs (each packet's `src` is its host, `conn` set).
    pub out: Vec<Packet>,
    /// Connections whose timers may have moved, and whether their sender side ran (TSQ then
    /// re-arms its wakeup once the NIC has taken the packets).
    pub touched: Vec<(u32, bool)>,
    mp_out: Vec<(u32, Packet)>,
    ev: Events,
    /// The HDFS job, if the scenario has one (`hdfs`), and per TCP / MPTCP connection whether
    /// what it delivers feeds the job's pipelines.
    pub job: Option<Box<hdfs::Job>>,
    feeds: Vec<bool>,
    meta_feeds: Vec<bool>,
    /// What the job has still to hear of: carriers that delivered data, its flows completed.
    job_rx: Vec<hdfs::Carrier>,
    job_done: Vec<u32>,
    /// The job's workload index (`u16::MAX`: no job).
    pub job_workload: u16,
}

impl Hosts {
    pub fn new(tcp: TcpParams, mptcp: Option<MptcpParams>) -> Hosts {
        let mptcp = mptcp.map(|params| {
            let mut sub_tcp = tcp.clone();
            sub_tcp.mss = tcp.mss - DSS_DATA_BYTES;
            Mptcp {
                params,
                sub_tcp,
                metas: Vec::new(),
            }
        });
        Hosts {
            tcp,
            conns: Vec::new(),
            timers: Vec::new(),
            pools: HashMap::new(),
            mpools: HashMap::new(),
            flows: Vec::new(),
            open_flows: 0,
            app_bytes: 0,
            mptcp,
            shim: None,
            cbr: Vec::new(),
            up: Vec::new(),
            out: Vec::with_capacity(64),
            touched: Vec::with_capacity(8),
            mp_out: Vec::new(),
            ev: Events::default(),
            job: None,
            feeds: Vec::new(),
            meta_feeds: Vec::new(),
            job_rx: Vec::new(),
            job_done: Vec::new(),
            job_workload: u16::MAX,
        }
    }

    /// Whether the job has deliveries or completions to hear of.
    #[inline]
    pub fn job_pending(&self) -> bool {
        !self.job_rx.is_empty() || !self.job_done.is_empty()
    }

    /// Tell the job what happened since it last ran (deliveries first, then completions).
    pub fn run_job(&mut self, net: &NetRef, now: Time) {
        let Some(mut job) = self.job.take() else {
            self.job_rx.clear();
            self.job_done.clear();
            return;
        };
        while self.job_pending() {
            let rx = std::mem::take(&mut self.job_rx);
            for c in rx {
                job.on_delivered(self, now, c);
            }
            let done = std::mem::take(&mut self.job_done);
            for f in done {
                job.on_completed(self, net, now, f);
            }
        }
        self.job = Some(job);
    }

    /// `Ev::Job { pipe }` fired.
    pub fn job_event(&mut self, net: &NetRef, now: Time, pipe: u32) {
        if let Some(mut job) = self.job.take() {
            job.on_event(self, net, now, pipe);
            self.job = Some(job);
        }
    }

    /// The packets connection `conn` produced into `out` from `start` on: stamp them with the
    /// connection (and MPTCP's DSS option), and note that its timers may have moved.
    #[inline]
    fn emit(&mut self, conn: u32, sender: bool, start: usize) {
        let meta = self.conns[conn as usize].mp_meta;
        for pk in &mut self.out[start..] {
            pk.conn = conn;
            if meta != u32::MAX {
                // The DSS option: a mapping on data, a data ACK on every ACK.
                if pk.payload > 0 {
                    pk.size += DSS_DATA_BYTES;
                } else if pk.is(flags::ACK) && !pk.is(flags::SYN) {
                    pk.size += DSS_ACK_BYTES;
                    if pk.src == self.conns[conn as usize].dst {
                        pk.seq = self.mptcp.as_ref().unwrap().metas[meta as usize].rcv_nxt;
                    }
                }
            }
        }
        self.touched.push((conn, sender));
    }

    /// A new TCP connection (an MPTCP subflow when `meta` is given).
    fn new_conn(
        &mut self,
        net: &NetRef,
        src: u32,
        dst: u32,
        established: bool,
        meta: Option<(u32, u32)>,
    ) -> u32 {
        let id = self.conns.len() as u32;
        let sport = 1024 + (id % 60_000) as u16;
        let dport = 80 + (id / 60_000) as u16;
        let p = match (&self.mptcp, meta) {
            (Some(m), Some(_)) => &m.sub_tcp,
            _ => &self.tcp,
        };
        let mut c = Conn::new(p, src, dst, sport, dport, established);
        if established && p.rto_estimator == RtoEstimator::Linux {
            // A pre-established connection had its handshake, from which Linux takes an RTT
            // sample (both ends in 3.10; with timestamps in 2.6.26): the idle path's round trip
            // of a minimum frame.
            let rates: Vec<u64> = net.ports.iter().map(|p| p.rate_bps).collect();
            let (fwd, rev) = crate::stats::ideal_path(net, src, dst, &rates);
            let rtt: Time = fwd
                .iter()
                .chain(&rev)
                .map(|h| {
                    h.delay_ps
                        + ser_ps(
                            (MIN_FRAME + PREAMBLE_IFG + h.extra_bytes) as u64,
                            h.rate_bps,
                        )
                })
                .sum();
            c.handshake_sample(rtt, p);
        }
        if let (Some(m), Some(_)) = (&self.mptcp, meta) {
            match m.params.coupling {
                Coupling::Lia => c.cc = Cc::Lia(Lia::new(false)),
                Coupling::LiaAcks => c.cc = Cc::Lia(Lia::new(true)),
                Coupling::Uncoupled => {}
            }
        }
        if let Some((m, i)) = meta {
            c.mp_meta = m;
            c.mp_sub = i;
        }
        self.conns.push(c);
        self.feeds.push(false);
        self.timers.push(Timers {
            rto: NEVER,
            delack: NEVER,
            app: NEVER,
        });
        id
    }

    /// A new MPTCP connection: its first subflow (established, or opening with MP_CAPABLE);
    /// pre-established connections get all their subflows at once, the others open their joins
    /// when the first subflow is up.
    fn new_meta(&mut self, net: &NetRef, src: u32, dst: u32, established: bool) -> u32 {
        let m = self.mptcp.as_mut().unwrap();
        let id = m.metas.len() as u32;
        m.metas.push(Meta::new());
        self.meta_feeds.push(false);
        let n = if established { m.params.subflows } else { 1 };
        for i in 0..n {
            let c = self.new_conn(net, src, dst, established, Some((id, i)));
            self.mptcp.as_mut().unwrap().metas[id as usize].add_subflow(c, i > 0);
        }
        id
    }

    /// Start a flow: its connection (new, or one of the pair's persistent ones) and its first
    /// packets.
    pub fn start_flow(&mut self, net: &NetRef, now: Time, spec: FlowSpec) {
        if self.uses_mptcp(&spec) {
            return self.start_mptcp_flow(net, now, spec);
        }
        let (conn, new_conn) = match spec.conn {
            ConnPolicy::New => (self.new_conn(net, spec.src, spec.dst, false, None), true),
            ConnPolicy::Persistent { per_pair } => {
                let key = (spec.src, spec.dst);
                if !self.pools.contains_key(&key) {
                    let ids = (0..per_pair.max(1))
                        .map(|_| self.new_conn(net, spec.src, spec.dst, true, None))
                        .collect();
                    self.pools.insert(key, ids);
                }
                let pool = &self.pools[&key];
                // An idle connection if there is one, else the least backlogged.
                let best = *pool
                    .iter()
                    .min_by_key(|&&c| {
                        self.conns[c as usize].app_end - self.conns[c as usize].snd_una
                    })
                    .unwrap();
                (best, false)
            }
        };
        self.start_on_conn(now, spec, conn, new_conn, false);
    }

    /// Whether `spec`'s flow runs on MPTCP (the scheme is mptcp and covers its workload).
    fn uses_mptcp(&self, spec: &FlowSpec) -> bool {
        self.mptcp.as_ref().is_some_and(|m| {
            m.params
                .workloads
                .as_ref()
                .is_none_or(|w| w.contains(&spec.workload))
        })
    }

    /// Start flow `spec` on TCP connection `conn` (`new_conn`: it opens now); its id. With
    /// `fed`, its bytes reach the sender only as the connection's feed grows
    /// (`Conn::feed_end`; the job's pipelines, `hdfs`).
    fn start_on_conn(
        &mut self,
        now: Time,
        spec: FlowSpec,
        conn: u32,
        new_conn: bool,
        fed: bool,
    ) -> u32 {
        let fid = self.flows.len() as u32;
        let c = &mut self.conns[conn as usize];
        let st = &c.stats;
        let base = [st.retx_segments, st.timeouts, st.reordered, st.path_changes];
        if let Some(a) = spec.app {
            c.app_rate = Some(Box::new(AppRate::new(
                a.rate_bps,
                a.write_bytes,
                now,
                c.app_end,
            )));
        }
        let start_off = c.app_end;
        if fed && c.feed_end == u64::MAX {
            c.feed_end = start_off;
        }
        c.write(fid, spec.size_bytes);
        self.flows.push(FlowRec {
            spec,
            conn,
            meta: None,
            end: NEVER,
            new_conn,
            start_off,
            base,
            counts: [0; 4],
        });
        self.open_flows += 1;
        let c = &mut self.conns[conn as usize];
        let start = self.out.len();
        if new_conn {
            c.open(now, &self.tcp, &mut self.out);
        } else {
            c.try_send(now, &self.tcp, &mut self.out);
        }
        self.emit(conn, true, start);
        fid
    }

    fn start_mptcp_flow(&mut self, net: &NetRef, now: Time, spec: FlowSpec) {
        let (meta, new_conn) = match spec.conn {
            ConnPolicy::New => (self.new_meta(net, spec.src, spec.dst, false), true),
            ConnPolicy::Persistent { per_pair } => {
                let key = (spec.src, spec.dst);
                if !self.mpools.contains_key(&key) {
                    let ids = (0..per_pair.max(1))
                        .map(|_| self.new_meta(net, spec.src, spec.dst, true))
                        .collect();
                    self.mpools.insert(key, ids);
                }
                let metas = &self.mptcp.as_ref().unwrap().metas;
                let best = *self.mpools[&key]
                    .iter()
                    .min_by_key(|&&m| metas[m as usize].backlog())
                    .unwrap();
                (best, false)
            }
        };
        self.start_on_meta(now, spec, meta, new_conn, false);
    }

    /// Start flow `spec` on MPTCP connection `meta`, as [`Hosts::start_on_conn`].
    fn start_on_meta(
        &mut self,
        now: Time,
        spec: FlowSpec,
        meta: u32,
        new_conn: bool,
        fed: bool,
    ) -> u32 {
        let fid = self.flows.len() as u32;
        let m = &mut self.mptcp.as_mut().unwrap().metas[meta as usize];
        let first = m.subs[0].conn;
        let start_off = m.app_end;
        if fed && m.feed_end == u64::MAX {
            m.feed_end = start_off;
        }
        m.write(fid, spec.size_bytes);
        let base = self.meta_counts(meta);
        self.flows.push(FlowRec {
            spec,
            conn: first,
            meta: Some(meta),
            end: NEVER,
            new_conn,
            start_off,
            base,
            counts: [0; 4],
        });
        self.open_flows += 1;
        if new_conn {
            let start = self.out.len();
            let p = &self.mptcp.as_ref().unwrap().sub_tcp;
            self.conns[first as usize].open(now, p, &mut self.out);
            self.emit(first, true, start);
        } else {
            self.push_meta(now, meta);
        }
        fid
    }

    /// Per-flow counters of an MPTCP connection: the sums over its subflows.
    fn meta_counts(&self, meta: u32) -> [u64; 4] {
        let mut s = [0; 4];
        for sub in &self.mptcp.as_ref().unwrap().metas[meta as usize].subs {
            let st = &self.conns[sub.conn as usize].stats;
            for (k, v) in [st.retx_segments, st.timeouts, st.reordered, st.path_changes]
                .into_iter()
                .enumerate()
            {
                s[k] += v;
            }
        }
        s
    }

    /// Let MPTCP connection `meta` map data onto its subflows.
    fn push_meta(&mut self, now: Time, meta: u32) {
        let m = self.mptcp.as_mut().unwrap();
        let mut out = std::mem::take(&mut self.mp_out);
        m.metas[meta as usize].push(now, &mut self.conns, &m.sub_tcp, &m.params, &mut out);
        for (conn, pk) in out.drain(..) {
            let start = self.out.len();
            self.out.push(pk);
            self.emit(conn, true, start);
        }
        self.mp_out = out;
        // Subflows that were offered nothing still may have moved timers (none here), but the
        // scheduler's view is the subflows': every established subflow is a candidate.
        for i in 0..self.mptcp.as_ref().unwrap().metas[meta as usize].subs.len() {
            let c = self.mptcp.as_ref().unwrap().metas[meta as usize].subs[i].conn;
            self.touched.push((c, true));
        }
    }

    /// The application of flow `f` stops writing at `now` (its stop time): what it wrote is
    /// the flow's size; a flow whose data has all arrived (or that sent nothing) ends at once.
    /// MPTCP flows are not stopped (validation refuses stop times under mptcp).
    pub fn stop_flow(&mut self, now: Time, f: u32) {
        let rec = &mut self.flows[f as usize];
        if rec.end != NEVER || rec.meta.is_some() {
            return;
        }
        let c = &mut self.conns[rec.conn as usize];
        let end = c.stop_writing(now, f);
        rec.spec.size_bytes = end.saturating_sub(rec.start_off);
        if end <= c.rcv_nxt {
            let st = &c.stats;
            let cur = [st.retx_segments, st.timeouts, st.reordered, st.path_changes];
            self.complete(f as usize, now, cur);
        }
    }

    /// Start constant-rate flow `spec` with UDP source port `sport`; its index.
    pub fn start_cbr(&mut self, spec: &FlowSpec, sport: u16) -> u32 {
        let c = spec.cbr.expect("a constant-rate flow");
        self.cbr.push(cbr::CbrFlow::new(
            spec.src,
            spec.dst,
            sport,
            c.rate_bps,
            spec.start_ps,
            spec.stop_ps,
            self.tcp.mss,
        ));
        self.cbr.len() as u32 - 1
    }

    /// Constant-rate flow `i` sends its next packet; when the one after is due.
    pub fn cbr_send(&mut self, i: u32) -> Option<Time> {
        let (pk, next) = self.cbr[i as usize].emit(i);
        self.out.push(pk);
        next
    }

    /// What the constant-rate flows did, for the summary.
    pub fn cbr_counters(&self) -> Option<serde_json::Value> {
        if self.cbr.is_empty() {
            return None;
        }
        Some(serde_json::json!({
            "flows": self.cbr.len(),
            "sent_packets": self.cbr.iter().map(|f| f.sent).sum::<u64>(),
            "delivered_packets": self.cbr.iter().map(|f| f.delivered).sum::<u64>(),
            "sport": self.cbr.iter().map(|f| f.sport).collect::<Vec<_>>(),
        }))
    }

    /// A packet arrives at its destination host through the edge shim, which may hold it.
    pub fn deliver_through_shim(&mut self, net: &NetRef, now: Time, pk: Packet) {
        self.release_from_shim(net, now, |s, up| s.on_receive(now, pk, up));
    }

    /// The edge shim's timer at `host` fired: deliver what it releases.
    pub fn on_shim_timer(&mut self, net: &NetRef, now: Time, host: u32) {
        self.release_from_shim(net, now, |s, up| s.on_timer(now, host, up));
    }

    /// Deliver the packets a call of the shim passes up.
    fn release_from_shim(
        &mut self,
        net: &NetRef,
        now: Time,
        call: impl FnOnce(&mut dyn shim::EdgeShim, &mut Vec<Packet>),
    ) {
        let mut up = std::mem::take(&mut self.up);
        if let Some(s) = self.shim.as_mut() {
            call(s.as_mut(), &mut up);
        }
        for p in up.drain(..) {
            self.deliver(net, now, &p);
        }
        self.up = up;
    }

    /// A packet arrives at its destination host.
    pub fn deliver(&mut self, net: &NetRef, now: Time, pk: &Packet) {
        let conn = pk.conn;
        if conn & cbr::CBR_CONN != 0 {
            self.cbr[(conn & !cbr::CBR_CONN) as usize].delivered += 1;
            return;
        }
        let ci = conn as usize;
        let c = &mut self.conns[ci];
        if c.mp_meta != u32::MAX {
            return self.deliver_subflow(net, now, pk);
        }
        let start = self.out.len();
        if pk.is(flags::SYN) && !pk.is(flags::ACK) {
            c.on_syn(now, pk, &mut self.out);
            self.emit(conn, false, start);
        } else if pk.is(flags::ACK) {
            c.on_ack(now, pk, &self.tcp, &mut self.out);
            self.emit(conn, true, start);
        } else {
            let before = c.rcv_nxt;
            self.ev.completed.clear();
            c.on_data(now, pk, &self.tcp, &mut self.out, &mut self.ev);
            let got = c.rcv_nxt - before;
            self.app_bytes += got;
            if got > 0 && self.feeds[ci] {
                self.job_rx.push(hdfs::Carrier::Conn(conn));
            }
            self.emit(conn, false, start);
            for i in 0..self.ev.completed.len() {
                let f = self.ev.completed[i] as usize;
                let st = &self.conns[ci].stats;
                let cur = [st.retx_segments, st.timeouts, st.reordered, st.path_changes];
                self.complete(f, now, cur);
            }
        }
    }

    fn complete(&mut self, f: usize, now: Time, cur: [u64; 4]) {
        let rec = &mut self.flows[f];
        rec.end = now;
        if rec.spec.workload == self.job_workload {
            self.job_done.push(f as u32);
        }
        for k in 0..4 {
            rec.counts[k] = cur[k] - rec.base[k];
        }
        self.open_flows -= 1;
    }

    fn deliver_subflow(&mut self, net: &NetRef, now: Time, pk: &Packet) {
        let conn = pk.conn;
        let ci = conn as usize;
        let (meta, sub) = (self.conns[ci].mp_meta, self.conns[ci].mp_sub);
        let to_receiver = pk.dst == self.conns[ci].dst;
        let start = self.out.len();
        if to_receiver {
            let c = &mut self.conns[ci];
            let p = &self.mptcp.as_ref().unwrap().sub_tcp;
            if pk.is(flags::SYN) {
                c.on_syn(now, pk, &mut self.out);
            } else if pk.payload == 0 {
                // An MP_JOIN's third ACK: the fourth packet answers it.
                c.on_join_ack(now, pk, &mut self.out);
            } else {
                let before = c.rcv_nxt;
                c.on_data(now, pk, p, &mut self.out, &mut self.ev);
                let after = c.rcv_nxt;
                if after > before {
                    let m = &mut self.mptcp.as_mut().unwrap().metas[meta as usize];
                    let dsn = m.rcv_nxt;
                    self.ev.completed.clear();
                    m.on_data(sub as usize, before, after, &mut self.ev);
                    self.app_bytes += m.rcv_nxt - dsn;
                    if m.rcv_nxt > dsn && self.meta_feeds[meta as usize] {
                        self.job_rx.push(hdfs::Carrier::Meta(meta));
                    }
                    let done = std::mem::take(&mut self.ev.completed);
                    let cur = self.meta_counts(meta);
                    for &f in &done {
                        self.complete(f as usize, now, cur);
                    }
                    self.ev.completed = done;
                }
            }
            self.emit(conn, false, start);
            return;
        }
        // At the sender: the subflow's ACK, then the connection level.
        let was_up = self.conns[ci].is_established();
        let m = self.mptcp.as_ref().unwrap();
        m.metas[meta as usize].couple(&mut self.conns, conn, &m.sub_tcp);
        self.conns[ci].on_ack(now, pk, &m.sub_tcp, &mut self.out);
        self.emit(conn, true, start);
        let una = self.conns[ci].snd_una;
        let m = &mut self.mptcp.as_mut().unwrap().metas[meta as usize];
        if !pk.is(flags::SYN) {
            m.on_ack(sub as usize, una, pk.seq);
        }
        if !was_up && self.conns[ci].is_established() && sub == 0 {
            self.open_joins(net, now, meta);
        }
        self.push_meta(now, meta);
    }

    /// The first subflow of a new MPTCP connection is up: open the others with MP_JOIN.
    fn open_joins(&mut self, net: &NetRef, now: Time, meta: u32) {
        let (n, src, dst) = {
            let m = self.mptcp.as_ref().unwrap();
            let c = &self.conns[m.metas[meta as usize].subs[0].conn as usize];
            (m.params.subflows, c.src, c.dst)
        };
        for i in 1..n {
            let c = self.new_conn(net, src, dst, false, Some((meta, i)));
            let m = self.mptcp.as_mut().unwrap();
            m.metas[meta as usize].add_subflow(c, true);
            let start = self.out.len();
            self.conns[c as usize].open_join(now, &m.sub_tcp, &mut self.out);
            self.emit(c, true, start);
        }
    }

    /// Timer `kind` of connection `conn` fired at `now` (its event was due).
    pub fn on_timer(&mut self, now: Time, kind: TimerKind, conn: u32) {
        let ci = conn as usize;
        let pending = match kind {
            TimerKind::Rto => self.timers[ci].rto,
            TimerKind::DelAck => self.timers[ci].delack,
            TimerKind::AppWake => self.timers[ci].app,
        };
        if pending != now {
            // A superseded event: the deadline moved before it and `sync_timers` scheduled
            // the live one, at `pending`. Taking this one for the live one would clear the
            // record and arm a second chain of events beside the first, and each later such
            // move would add another (issue 22: 23 M RTO events of 447 M at 80% load on the
            // Expeditus Fig. 2 fabric). Nothing is due that the live event will not find.
            self.touched.push((conn, false));
            return;
        }
        let meta = self.conns[ci].mp_meta;
        // The connection's TCP settings (an MPTCP subflow's have room for the DSS option).
        let p = match (&self.mptcp, meta) {
            (Some(m), x) if x != u32::MAX => &m.sub_tcp,
            _ => &self.tcp,
        };
        let c = &mut self.conns[ci];
        let start = self.out.len();
        let (due, sender) = match kind {
            TimerKind::Rto => {
                self.timers[ci].rto = NEVER;
                let due = c.rto_deadline != NEVER && c.rto_deadline <= now;
                if due {
                    c.rto_deadline = NEVER;
                    let timeouts = c.stats.timeouts;
                    c.on_timer(now, p, &mut self.out);
                    if c.stats.timeouts > timeouts {
                        if let Some(s) = self.shim.as_mut() {
                            s.on_timeout(now, conn);
                        }
                    }
                }
                (due, true)
            }
            TimerKind::DelAck => {
                self.timers[ci].delack = NEVER;
                let due = c.delack_deadline != NEVER && c.delack_deadline <= now;
                if due {
                    c.on_delack(p, &mut self.out);
                }
                (due, false)
            }
            TimerKind::AppWake => {
                self.timers[ci].app = NEVER;
                let due = c.app_wake != NEVER && c.app_wake <= now;
                if due {
                    c.try_send(now, p, &mut self.out);
                }
                (due, true)
            }
        };
        if !due {
            self.touched.push((conn, false));
            return;
        }
        self.emit(conn, sender, start);
        if meta != u32::MAX {
            let sub = self.conns[ci].mp_sub as usize;
            let m = &mut self.mptcp.as_mut().unwrap().metas[meta as usize];
            let rto = kind == TimerKind::Rto && m.after_timer(sub, &self.conns[ci]);
            if rto || kind == TimerKind::AppWake {
                self.push_meta(now, meta);
            }
        }
    }

    /// The NIC of `conn`'s sender took a data segment of `bytes` that it will have sent at
    /// `end` (TCP Small Queues).
    #[inline]
    pub fn nic_accepted(&mut self, conn: u32, end: Time, bytes: u32) {
        self.conns[conn as usize].nic_accepted(end, bytes);
    }

    /// Whether `pk` is a data segment of its connection's sender side (what TSQ tracks).
    #[inline]
    pub fn sent_by_sender(&self, pk: &Packet) -> bool {
        pk.payload > 0 && pk.conn & cbr::CBR_CONN == 0 && pk.src == self.conns[pk.conn as usize].src
    }

    /// What the MPTCP connections did, for the summary.
    pub fn mptcp_counters(&self) -> Option<serde_json::Value> {
        let m = self.mptcp.as_ref()?;
        let sum = |f: fn(&crate::transport::mptcp::MptcpStats) -> u64| -> u64 {
            m.metas.iter().map(|x| f(&x.stats)).sum()
        };
        Some(serde_json::json!({
            "connections": m.metas.len(),
            "subflows_opened": sum(|s| s.subflows_opened),
            "joins": sum(|s| s.joins),
            "reinjected_segments": sum(|s| s.reinjected_segments),
            "penalizations": sum(|s| s.penalizations),
            "opportunistic_retransmissions": sum(|s| s.opportunistic_retransmissions),
        }))
    }

    /// Bytes of flow `f` delivered in order to its receiver.
    pub fn delivered(&self, f: &FlowRec) -> u64 {
        let rcv = match (f.meta, &self.mptcp) {
            (Some(m), Some(mp)) => mp.metas[m as usize].rcv_nxt,
            _ => self.conns[f.conn as usize].rcv_nxt,
        };
        rcv.saturating_sub(f.start_off).min(f.spec.size_bytes)
    }
}
