//! Building the world from a scenario: topology, routes, ports, the scheme, the hosts and the
//! pre-generated flows; pinning constant-rate flows to paths. Runs once, before the event loop;
//! schedules only the run's first events (flows, marks, windows, failures).

use super::fabric::{LinkRt, PoolLink, PoolRt};
use super::failures::{LinkAction, LinkChange};
use super::measure::PathTrace;
use super::{Counters, Ev, Later, Sim, TraceRows, LARGE_WORLD_PORT_BYTES, UNPREDICTED};
use crate::engine::EventQueue;
use crate::error::Error;
use crate::host::Hosts;
use crate::lb::{BuildCtx, OverlayMode};
use crate::net::dre::DreParams;
use crate::net::packet::{frame_bytes, Arena, OVERLAY_HDR, PREAMBLE_IFG};
use crate::net::port::Port;
use crate::net::routing::Routes;
use crate::rng::{stream, Rng};
use crate::scenario::{FailureKind, Scenario};
use crate::transport::tcp::NEVER;
use crate::workload::arrivals::WireCost;
use crate::workload::{FlowSpec, GenCtx};

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
        for (p, l) in ports.iter_mut().zip(&g.links) {
            p.to_host = g.is_host(l.to);
        }
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
        let link_hooks: Vec<u8> = (0..g.links.len() as u32)
            .map(|l| lb.switch_hooks(&g, l))
            .collect();
        let lb_hooks = link_hooks.iter().any(|&h| h != 0);
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
        let n_links = g.links.len();
        let n_nodes = g.nodes.len();
        if n_links >= UNPREDICTED as usize {
            return Err(Error::config(
                "topology",
                format!("{n_links} links: at most {} are supported", UNPREDICTED - 1),
            ));
        }
        let mut sim = Sim {
            q: EventQueue::new(),
            later: Later::default(),
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
            link_hooks,
            track_dre,
            links_rt,
            predicted: None,
            predicted_after: None,
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
        sim.set_lookahead(n_links * std::mem::size_of::<Port>() > LARGE_WORLD_PORT_BYTES);
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

    /// Give each constant-rate flow its UDP source port: one whose path (as the scheme's
    /// header hash sends it, on the routes at the start) crosses the flow's `via` switches.
    pub(super) fn pin_cbr_flows(&mut self) -> Result<(), Error> {
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
    pub(super) fn hashed_path(&self, spec: &FlowSpec, port: u16) -> Option<Vec<u32>> {
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
