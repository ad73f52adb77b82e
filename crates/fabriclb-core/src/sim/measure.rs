//! What the run records as it goes (interval marks, flow traces, per-path rates) and the
//! hand-over of the finished run to `stats`, which turns it into the result tables. Reads the
//! world; changes nothing the run's results depend on.

use super::Sim;
use crate::stats::Finished;
use crate::units::Time;
use std::collections::HashMap;

/// Per-path rates of the traced flows (`measure.trace_paths`): payload bytes of each traced
/// connection's data arriving at its receiver, by path (`Packet::path_hash`).
#[derive(Default)]
pub(super) struct PathTrace {
    /// Traced connection -> its flow.
    pub(super) conns: HashMap<u32, u32>,
    /// (flow, path hash) -> bytes since the last sample.
    pub(super) bytes: std::collections::BTreeMap<(u32, u32), u64>,
    pub(super) names: HashMap<(u32, u32), String>,
}

impl Sim {
    pub(super) fn mark_ports(&mut self, which: usize, now: Time) {
        self.interval_marks[which] = self.ports.iter_mut().map(|p| p.mark(now)).collect();
    }

    pub(super) fn sample_traces(&mut self, now: Time) {
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
    pub(super) fn path_name(&self, src: u32, dst: u32, h: u32) -> String {
        // Depth-first over the shortest paths: (node, hash so far, name so far).
        let tor = self.g.links[self.g.host_uplink[src as usize] as usize].to;
        let mut stack = vec![(tor, 0u32, self.g.nodes[tor as usize].name.clone())];
        while let Some((at, hash, name)) = stack.pop() {
            for &out in self.routes.next_hops(at, dst) {
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

    /// What the result tables are made of (`stats::collect`).
    pub(super) fn finished(&self) -> Finished<'_> {
        Finished {
            sc: &self.sc,
            net: self.net(),
            hosts: &self.hosts,
            c: &self.c,
            windows: &self.windows,
            traces: &self.traces,
            interval_marks: &self.interval_marks,
            sim_end: self.sim_end,
            end_arrivals: self.end_arrivals,
            wall_s: self.wall_s,
            warnings: &self.warnings,
            lb_counters: self.lb_counters(),
            failure_links: self.failure_links(),
        }
    }
}
