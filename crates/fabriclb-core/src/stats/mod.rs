//! Turns a finished simulation's counters into the result tables and the summary.
//! Reads what the simulation hands over when a run ends (`Finished`); changes nothing, and
//! never imports the simulator (`sim` calls this layer, not the reverse). Column meanings are documented in docs/OUTPUTS.md.

pub mod flowlets;
pub mod ideal;
pub mod pcap;
mod run;
pub mod tap;
pub(crate) mod windows;

pub use run::RunResult;
pub(crate) use run::{Counters, Finished, TraceRows};

use crate::host::NetRef;
use crate::lb::OverlayMode;
use crate::net::packet::OVERLAY_HDR;
use crate::table::{Column, Table};
use crate::transport::tcp::NEVER;
use crate::workload::UNBOUNDED;
use ideal::{ideal_fct, Hop, IdealParams};
use serde_json::json;
use std::collections::HashMap;

/// Size buckets of the summaries (CONGA §5.2): small < 100 KB, medium, large > 10 MB.
pub const BUCKETS: [(&str, u64, u64); 3] = [
    ("small", 0, 100_000),
    ("medium", 100_000, 10_000_000),
    ("large", 10_000_000, u64::MAX),
];

/// The degrades of the run: (directed link, from, until, rate).
fn degrades(sim: &Finished) -> Vec<(u32, u64, u64, u64)> {
    let links = sim.sc.failure_links(&sim.net.g).unwrap_or_default();
    let mut out = vec![];
    for (f, ls) in sim.sc.failures.iter().zip(links) {
        if let (crate::scenario::FailureKind::Degrade, Some(r)) = (&f.kind, f.rate) {
            for l in ls {
                out.push((l, f.at.0, f.until.map_or(u64::MAX, |u| u.0), r.0));
            }
        }
    }
    out
}

/// The rate of each directed link for a flow that ran over [t0, t1]: the highest rate in force
/// at some time of it, i.e. the nominal rate unless degrades cover the whole span (then the
/// best of them). The ideal FCT is thus never above what the flow could have had.
fn rates_over(sim: &Finished, degrades: &[(u32, u64, u64, u64)], t0: u64, t1: u64) -> Vec<u64> {
    let mut rates: Vec<u64> = sim.net.g.links.iter().map(|l| l.rate_bps).collect();
    let mut covered: HashMap<u32, u64> = HashMap::new();
    for &(l, from, until, r) in degrades {
        if from <= t0 && until >= t1 {
            let e = covered.entry(l).or_insert(0);
            *e = (*e).max(r);
        }
    }
    for (l, r) in covered {
        rates[l as usize] = rates[l as usize].min(r);
    }
    rates
}

/// The highest bottleneck rate of the shortest paths from switch `at` to host `dst`.
fn width(net: &NetRef, at: u32, dst: u32, rate: &[u64], memo: &mut HashMap<u32, u64>) -> u64 {
    let g = net.g;
    let tor = g.host_tor[dst as usize];
    if at == tor {
        return rate[g.links[g.host_uplink[dst as usize] as usize].reverse as usize];
    }
    if let Some(&w) = memo.get(&at) {
        return w;
    }
    let cands = net.routes.group(at, net.routes.tor_index[tor as usize]);
    let w = cands
        .iter()
        .map(|&c| rate[c as usize].min(width(net, g.links[c as usize].to, dst, rate, memo)))
        .max()
        .unwrap_or(0);
    memo.insert(at, w);
    w
}

/// The best shortest path from `src` to `dst` at link rates `rate`: the highest bottleneck
/// rate (ties: port order at each switch). Returns forward and reverse hops.
pub(crate) fn ideal_path(net: &NetRef, src: u32, dst: u32, rate: &[u64]) -> (Vec<Hop>, Vec<Hop>) {
    let g = net.g;
    let mut fwd = vec![];
    let mut rev = vec![];
    let mut l = g.host_uplink[src as usize];
    let mut memo = HashMap::new();
    for _ in 0..64 {
        let d = &g.links[l as usize];
        let overlay = if net.overlay == OverlayMode::Leaf && g.is_fabric(l) {
            OVERLAY_HDR
        } else {
            0
        };
        let scheme = |l: u32| net.hdr_bytes.get(l as usize).copied().unwrap_or(0);
        fwd.push(Hop {
            rate_bps: rate[l as usize],
            delay_ps: d.delay_ps,
            extra_bytes: overlay + scheme(l),
        });
        let r = d.reverse as usize;
        rev.push(Hop {
            rate_bps: rate[r],
            delay_ps: g.links[r].delay_ps,
            extra_bytes: overlay + scheme(d.reverse),
        });
        let at = d.to;
        if at == dst {
            break;
        }
        let tor = g.host_tor[dst as usize];
        l = if tor == at {
            g.links[g.host_uplink[dst as usize] as usize].reverse
        } else {
            let cands = net.routes.group(at, net.routes.tor_index[tor as usize]);
            match cands.iter().max_by_key(|&&c| {
                let w =
                    rate[c as usize].min(width(net, g.links[c as usize].to, dst, rate, &mut memo));
                (w, std::cmp::Reverse(c))
            }) {
                Some(&c) => c,
                None => break,
            }
        };
    }
    rev.reverse();
    (fwd, rev)
}

/// Ideal FCT at the nominal rates, with the paths cached per (src, dst).
#[allow(clippy::too_many_arguments)]
fn ideal_fct_on(
    paths: &mut HashMap<(u32, u32), (Vec<Hop>, Vec<Hop>)>,
    net: &NetRef,
    src: u32,
    dst: u32,
    rate: &[u64],
    p: &IdealParams,
    size: u64,
    handshake: bool,
) -> u64 {
    let (fw, rv) = paths
        .entry((src, dst))
        .or_insert_with(|| ideal_path(net, src, dst, rate));
    ideal_fct(fw, rv, p, size, handshake)
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let idx = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

/// FCT statistics of one bucket: `fcts_ms` and `slow` over its finished flows, `lb_ms` over
/// all its flows with the unfinished ones at their lower bound.
fn fct_summary(fcts_ms: &[f64], slow: &[f64], lb_ms: &[f64]) -> serde_json::Value {
    let mut f = fcts_ms.to_vec();
    f.sort_by(f64::total_cmp);
    // Flows without an ideal FCT (application-limited ones) have no slowdown.
    let mut s: Vec<f64> = slow.iter().copied().filter(|x| x.is_finite()).collect();
    s.sort_by(f64::total_cmp);
    let mean = |v: &[f64]| {
        if v.is_empty() {
            f64::NAN
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    json!({
        "count": f.len(),
        "mean_ms": num(mean(&f)),
        "mean_lb_ms": num(mean(lb_ms)),
        "unfinished": lb_ms.len() - f.len(),
        "p50_ms": num(pct(&f, 50.0)),
        "p99_ms": num(pct(&f, 99.0)),
        "mean_slowdown": num(mean(&s)),
        "p99_slowdown": num(pct(&s, 99.0)),
    })
}

/// JSON numbers; NaN becomes null.
fn num(x: f64) -> serde_json::Value {
    if x.is_finite() {
        json!(x)
    } else {
        serde_json::Value::Null
    }
}

pub(crate) fn collect(sim: &Finished<'_>, flowlets: Option<flowlets::FlowletCounter>) -> RunResult {
    let g = &sim.net.g;
    let warm = sim.sc.warmup.0;
    let p = IdealParams {
        mss: sim.hosts.tcp.mss as u64,
        iw: sim.hosts.tcp.iw_segments as u64,
        rwnd_segments: (sim.hosts.tcp.rwnd_bytes / sim.hosts.tcp.mss as u64).max(1),
    };
    let mut paths: HashMap<(u32, u32), (Vec<Hop>, Vec<Hop>)> = HashMap::new();
    let degr = degrades(sim);
    let nominal: Vec<u64> = g.links.iter().map(|l| l.rate_bps).collect();
    let mut t = Table::default();
    let (mut id, mut src, mut dst, mut size, mut start, mut end, mut fct, mut ideal, mut slow) = (
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
    );
    let mut delivered = vec![];
    let mut fct_lb = vec![];
    let (mut fin, mut retx, mut tos, mut reord, mut pchg, mut conn, mut wl, mut grp, mut inwarm) = (
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
    );
    // Per bucket: FCTs and slowdowns of finished flows, and FCTs of all flows with the
    // unfinished ones at their lower bound (run end - start).
    type Bucket = (Vec<f64>, Vec<f64>, Vec<f64>);
    let mut by_bucket: Vec<Bucket> = vec![(vec![], vec![], vec![]); BUCKETS.len()];
    let mut all: Bucket = (vec![], vec![], vec![]);
    let mut unfinished = 0u64;
    let mut unbounded = 0u64;
    let net = &sim.net;
    for (i, f) in sim.hosts.flows.iter().enumerate() {
        let s = &f.spec;
        id.push(i as u64);
        src.push(g.nodes[s.src as usize].name.clone());
        dst.push(g.nodes[s.dst as usize].name.clone());
        let bounded = s.size_bytes < UNBOUNDED;
        size.push(if bounded {
            s.size_bytes as f64
        } else {
            f64::NAN
        });
        start.push(s.start_ps as f64 * 1e-9);
        let done = f.end != NEVER;
        end.push(if done { f.end as f64 * 1e-9 } else { f64::NAN });
        let fct_ms = if done {
            (f.end - s.start_ps) as f64 * 1e-9
        } else {
            f64::NAN
        };
        fct.push(fct_ms);
        let lb_ms = if done {
            fct_ms
        } else {
            sim.sim_end.saturating_sub(s.start_ps) as f64 * 1e-9
        };
        fct_lb.push(lb_ms);
        let ideal_ms = if bounded && s.app.is_none() {
            let t1 = if done { f.end } else { sim.sim_end };
            let ps = if degr.is_empty() {
                ideal_fct_on(
                    &mut paths,
                    net,
                    s.src,
                    s.dst,
                    &nominal,
                    &p,
                    s.size_bytes,
                    f.new_conn,
                )
            } else {
                let rates = rates_over(sim, &degr, s.start_ps, t1);
                let (fw, rv) = ideal_path(net, s.src, s.dst, &rates);
                ideal_fct(&fw, &rv, &p, s.size_bytes, f.new_conn)
            };
            ps as f64 * 1e-9
        } else {
            f64::NAN
        };
        ideal.push(ideal_ms);
        let sd = fct_ms / ideal_ms;
        slow.push(sd);
        fin.push(done as u64);
        delivered.push(sim.hosts.delivered(f));
        retx.push(f.counts[0]);
        tos.push(f.counts[1]);
        reord.push(f.counts[2]);
        pchg.push(f.counts[3]);
        conn.push(f.conn as u64);
        wl.push(s.workload as u64);
        grp.push(s.group as u64);
        let measured = s.start_ps >= warm;
        inwarm.push((!measured) as u64);
        if !bounded {
            unbounded += 1;
        } else if measured {
            let b = BUCKETS
                .iter()
                .position(|(_, lo, hi)| s.size_bytes >= *lo && s.size_bytes < *hi);
            all.2.push(lb_ms);
            if let Some(b) = b {
                by_bucket[b].2.push(lb_ms);
            }
            if done {
                all.0.push(fct_ms);
                all.1.push(sd);
                if let Some(b) = b {
                    by_bucket[b].0.push(fct_ms);
                    by_bucket[b].1.push(sd);
                }
            } else {
                unfinished += 1;
            }
        }
    }
    t.push("flow", Column::U64(id));
    t.push("src", Column::Str(src));
    t.push("dst", Column::Str(dst));
    t.push("size_bytes", Column::F64(size));
    t.push("start_ms", Column::F64(start));
    t.push("end_ms", Column::F64(end));
    t.push("fct_ms", Column::F64(fct));
    t.push("fct_lb_ms", Column::F64(fct_lb));
    t.push("ideal_fct_ms", Column::F64(ideal));
    t.push("slowdown", Column::F64(slow));
    t.push("finished", Column::U64(fin));
    t.push("delivered_bytes", Column::U64(delivered));
    t.push("retransmissions", Column::U64(retx));
    t.push("timeouts", Column::U64(tos));
    t.push("reordered", Column::U64(reord));
    t.push("path_changes", Column::U64(pchg));
    t.push("conn", Column::U64(conn));
    t.push("workload", Column::U64(wl));
    t.push("group", Column::U64(grp));
    t.push("warmup", Column::U64(inwarm));
    let flows = t;

    // Ports: counters over the whole run, time averages over the measurement interval.
    let meas_ps = sim
        .end_arrivals
        .min(sim.sim_end)
        .saturating_sub(warm)
        .max(1) as f64;
    let mut pt = Table::default();
    let mut name = vec![];
    let (mut from, mut to, mut kind) = (vec![], vec![], vec![]);
    let (
        mut rate,
        mut txb,
        mut txp,
        mut drops,
        mut marks,
        mut losses,
        mut maxq,
        mut avgq,
        mut util,
    ) = (
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
    );
    for (l, d) in g.links.iter().enumerate() {
        let ps = sim.net.ports[l].stats();
        name.push(g.link_name(l as u32));
        from.push(g.nodes[d.from as usize].name.clone());
        to.push(g.nodes[d.to as usize].name.clone());
        kind.push(
            match (g.is_host(d.from), g.is_host(d.to)) {
                (true, _) => "host-up",
                (_, true) => "host-down",
                _ => "fabric",
            }
            .to_string(),
        );
        rate.push(d.rate_bps as f64 / 1e9);
        txb.push(ps.tx_bytes);
        txp.push(ps.tx_pkts);
        drops.push(ps.drops);
        marks.push(ps.ecn_marks);
        losses.push(ps.wire_losses);
        maxq.push(ps.max_q_bytes);
        let [m0, m1] = [&sim.interval_marks[0][l], &sim.interval_marks[1][l]];
        avgq.push((m1.q_area - m0.q_area) as f64 / meas_ps);
        let sent =
            (m1.tx_bytes + m1.tx_partial_bytes) as f64 - (m0.tx_bytes + m0.tx_partial_bytes) as f64;
        util.push(sent * 8.0 / (meas_ps * 1e-12) / d.rate_bps as f64);
    }
    pt.push("link", Column::Str(name));
    pt.push("from", Column::Str(from));
    pt.push("to", Column::Str(to));
    pt.push("kind", Column::Str(kind));
    pt.push("rate_gbps", Column::F64(rate));
    pt.push("tx_bytes", Column::U64(txb));
    pt.push("tx_packets", Column::U64(txp));
    pt.push("drops", Column::U64(drops));
    pt.push("ecn_marks", Column::U64(marks));
    pt.push("wire_losses", Column::U64(losses));
    pt.push("max_queue_bytes", Column::U64(maxq));
    pt.push("mean_queue_bytes", Column::F64(avgq));
    pt.push("utilization", Column::F64(util));
    let ports = pt;

    // Windows.
    let w = &sim.windows.rows;
    let mut wt = Table::default();
    wt.push("window", Column::U64(w.window.clone()));
    wt.push("t_start_ms", Column::F64(w.t_start_ms.clone()));
    wt.push("name", Column::Str(w.name.clone()));
    wt.push("kind", Column::Str(w.kind.clone()));
    wt.push("tx_bytes", Column::U64(w.tx_bytes.clone()));
    wt.push("throughput_gbps", Column::F64(w.throughput_gbps.clone()));
    wt.push("utilization", Column::F64(w.utilization.clone()));
    wt.push("imbalance", Column::F64(w.imbalance.clone()));

    // Queue distributions.
    let mut qt = Table::default();
    let (mut ql, mut qb, mut qlo, mut qtime, mut qfrac) = (vec![], vec![], vec![], vec![], vec![]);
    for (l, port) in sim.net.ports.iter().enumerate() {
        if let Some(h) = port.histogram() {
            let [m0, m1] = [&sim.interval_marks[0][l], &sim.interval_marks[1][l]];
            let in_interval: Vec<u64> = m1
                .hist_ps
                .iter()
                .zip(&m0.hist_ps)
                .map(|(b, a)| b - a)
                .collect();
            let total: u64 = in_interval.iter().sum::<u64>().max(1);
            for (b, &tps) in in_interval.iter().enumerate() {
                ql.push(g.link_name(l as u32));
                qb.push(b as u64);
                qlo.push(b as u64 * h.bin_bytes);
                qtime.push(tps as f64 * 1e-9);
                qfrac.push(tps as f64 / total as f64);
            }
        }
    }
    qt.push("link", Column::Str(ql));
    qt.push("bin", Column::U64(qb));
    qt.push("queue_bytes_from", Column::U64(qlo));
    qt.push("time_ms", Column::F64(qtime));
    qt.push("fraction", Column::F64(qfrac));

    let tr = &sim.traces;
    let mut tt = Table::default();
    tt.push("t_ms", Column::F64(tr.t_ms.clone()));
    tt.push("flow", Column::U64(tr.flow.clone()));
    tt.push("cwnd_bytes", Column::F64(tr.cwnd_bytes.clone()));
    tt.push("srtt_us", Column::F64(tr.srtt_us.clone()));
    tt.push("rate_gbps", Column::F64(tr.rate_gbps.clone()));
    tt.push("dctcp_alpha", Column::F64(tr.dctcp_alpha.clone()));
    tt.push("path", Column::Str(tr.path.clone()));

    // Summary.
    let c = &sim.c;
    let goodput =
        (c.app_bytes_at_end - c.app_bytes_at_warmup) as f64 * 8.0 / (meas_ps * 1e-12) / 1e9;
    let mut fct = serde_json::Map::new();
    fct.insert("all".into(), fct_summary(&all.0, &all.1, &all.2));
    for (b, (nm, _, _)) in BUCKETS.iter().enumerate() {
        fct.insert(
            (*nm).into(),
            fct_summary(&by_bucket[b].0, &by_bucket[b].1, &by_bucket[b].2),
        );
    }
    // Flat copies of the overall numbers, as the summary names them.
    let all_v = fct["all"].clone();
    for k in ["mean_ms", "mean_lb_ms", "p50_ms", "p99_ms"] {
        fct.insert(k.into(), all_v[k].clone());
    }
    let totals = sim
        .net
        .ports
        .iter()
        .map(|p| p.stats())
        .fold((0u64, 0u64, 0u64), |a, s| {
            (a.0 + s.drops, a.1 + s.ecn_marks, a.2 + s.wire_losses)
        });
    let retx: u64 = sim.hosts.conns.iter().map(|c| c.stats.retx_segments).sum();
    let timeouts: u64 = sim.hosts.conns.iter().map(|c| c.stats.timeouts).sum();
    let sum = |f: fn(&crate::transport::tcp::ConnStats) -> u64| -> u64 {
        sim.hosts.conns.iter().map(|c| f(&c.stats)).sum()
    };
    let tcp = json!({
        "recoveries": sum(|s| s.recoveries),
        "early_retransmits": sum(|s| s.early_retransmits),
        "loss_probes": sum(|s| s.loss_probes),
        "undos": sum(|s| s.undos),
    });
    let measured_flows = sim
        .hosts
        .flows
        .iter()
        .filter(|f| f.spec.start_ps >= warm && f.spec.size_bytes < UNBOUNDED)
        .count();
    let mut summary = json!({
        "name": sim.sc.name,
        "scheme": sim.sc.scheme.name(),
        "seed": sim.sc.seed,
        "version": env!("CARGO_PKG_VERSION"),
        "sim_time_s": sim.sim_end as f64 * 1e-12,
        "measured_from_s": warm as f64 * 1e-12,
        "measured_to_s": sim.end_arrivals.min(sim.sim_end) as f64 * 1e-12,
        "wall_time_s": sim.wall_s,
        "events": c.events,
        "packet_hops": c.hops,
        "packet_hops_per_s": c.hops as f64 / sim.wall_s.max(1e-9),
        "flows_started": sim.hosts.flows.len(),
        "flows_measured": measured_flows,
        "flows_completed": all.0.len(),
        "flows_unfinished": unfinished,
        "flows_unbounded": unbounded,
        "goodput_gbps": goodput,
        "fct": fct,
        "packets": {"sent": c.sent, "delivered": c.delivered, "dropped": c.dropped, "in_flight": c.sent - c.delivered - c.dropped},
        "drops": totals.0,
        "no_route_drops": c.no_route_drops,
        "ecn_marks": totals.1,
        "wire_losses": totals.2,
        "retransmissions": retx,
        "timeouts": timeouts,
        "tcp": tcp,
        "connections": sim.hosts.conns.len(),
        "mptcp": sim.hosts.mptcp_counters(),
        "cbr": sim.hosts.cbr_counters(),
        "hdfs": sim.hosts.job.as_ref().map(|j| j.summary()),
        "host_encap_bytes": sim.sc.scheme.host_encap_bytes(),
        "lb": sim.lb_counters,
        "failure_links": sim.failure_links,
        "warnings": sim.warnings,
        "scenario": serde_json::from_str::<serde_json::Value>(&sim.sc.canonical_json()).unwrap(),
    });
    let (flowlet_sizes, flowlet_concurrency) = match flowlets {
        Some(mut c) => {
            let tables = c.finish();
            let m = &sim.sc.measure;
            summary["flowlets"] = json!({
                "links": m.flowlet_links,
                "gaps_us": m.flowlet_gaps.iter().map(|d| d.0 as f64 / 1e6).collect::<Vec<_>>(),
                "from_ms": warm as f64 / 1e9,
                "to_ms": sim.sc.duration.0 as f64 / 1e9,
                "packets": c.packets,
                "payload_packets": c.payload_packets,
                "payload_bytes": c.payload_bytes,
                "windows": c.windows,
                "late_timestamps": c.late,
            });
            tables
        }
        None => Default::default(),
    };
    RunResult {
        summary,
        flows,
        ports,
        windows: wt,
        queues: qt,
        traces: tt,
        flowlet_sizes,
        flowlet_concurrency,
    }
}
