//! Between the fabric and the host layer (`host::Hosts`): delivering packets to hosts, putting
//! what the hosts produce on their NICs, and keeping each connection's and shim's timer
//! events in step with the deadlines the host layer moved (lazy timers). May not change
//! transport state itself: it reads connections' deadlines and calls the host layer.

use super::{Ev, Sim};
use crate::host::cbr::CBR_CONN;
use crate::host::{NetRef, TimerKind};
use crate::net::packet::PktId;
use crate::transport::tcp::NEVER;
use crate::units::Time;

impl Sim {
    /// What the host layer and the result tables may read of the fabric.
    pub(crate) fn net(&self) -> NetRef<'_> {
        net_ref!(self)
    }

    pub(super) fn host_timer(&mut self, now: Time, kind: TimerKind, conn: u32) {
        self.hosts.on_timer(now, kind, conn);
        self.flush_hosts(now);
    }

    pub(super) fn sync_timers(&mut self, conn: u32) {
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

    pub(super) fn start_flows(&mut self, now: Time) {
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
    pub(super) fn flush_hosts(&mut self, now: Time) {
        if self.hosts.job.is_some() {
            self.run_job(now);
        }
        let mut out = std::mem::take(&mut self.hosts.out);
        // TSQ needs to know when the NIC will have sent each of the sender's data segments.
        let tsq = self.hosts.tcp.tsq_bytes > 0;
        // In place: a packet is 128 bytes, copied once, into the arena.
        for pk in out.iter_mut() {
            // Constant-rate flows bypass the shim (pinned by their own header).
            let shim = self.hosts.shim.as_mut().filter(|_| pk.conn & CBR_CONN == 0);
            if let Some(s) = shim {
                let v = crate::host::shim::ShimView {
                    g: &self.g,
                    routes: &self.routes,
                    salts: &self.salts,
                    ports: &self.ports,
                };
                s.on_send(now, pk, &v);
            }
            self.c.sent += 1;
            let (payload, conn, host) = (pk.payload, pk.conn, pk.src);
            let by_sender = tsq && self.hosts.sent_by_sender(pk);
            let id = self.arena.alloc(*pk);
            let link = self.g.host_uplink[host as usize];
            let end = self.transmit(now, link, id);
            if let (true, Some(end)) = (by_sender, end) {
                self.hosts.nic_accepted(conn, end, payload);
            }
            if self.hosts.shim.is_some() {
                self.sync_shim_timer(host);
            }
        }
        out.clear();
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
    pub(super) fn run_job(&mut self, now: Time) {
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

    pub(super) fn sync_shim_timer(&mut self, host: u32) {
        let Some(s) = self.hosts.shim.as_ref() else {
            return;
        };
        let t = s.next_timer(host);
        if t != NEVER && self.shim_timers[host as usize] > t {
            self.shim_timers[host as usize] = t;
            self.schedule(t, Ev::Shim { host });
        }
    }

    pub(super) fn deliver(&mut self, now: Time, id: PktId) {
        self.c.delivered += 1;
        let net = net_ref!(self);
        // Read in place (no copy of the 128-byte packet); its slot is freed before the hosts'
        // new packets take slots, as if freed first (the host layer takes none).
        let pk = self.arena.get(id);
        if let Some(pt) = self.path_trace.as_mut() {
            if let (true, Some(&f)) = (pk.payload > 0, pt.conns.get(&pk.conn)) {
                *pt.bytes.entry((f, pk.path_hash)).or_default() += pk.payload as u64;
            }
        }
        if self.hosts.shim.is_some() && pk.conn & CBR_CONN == 0 {
            let pk = *pk;
            self.arena.free(id);
            let host = pk.dst;
            self.hosts.deliver_through_shim(&net, now, pk);
            self.flush_hosts(now);
            self.sync_shim_timer(host);
        } else {
            self.hosts.deliver(&net, now, pk);
            self.arena.free(id);
            self.flush_hosts(now);
        }
    }
}
