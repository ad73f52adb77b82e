//! The HDFS job while it runs (the pattern's fields are in `workload/hdfs.rs`, the model in
//! docs/HDFS.md; CONGA §5.4, `../shared/SCHEMES.md` §10.7).
//!
//! Map slots take files in turn; a slot writes its file block by block. A block is a
//! pipeline of `replication` DataNodes `n0 → n1 → … `: `n0` is the writer's own node, so the
//! network carries the stages `n0→n1`, `n1→n2`, …, each a flow on its own connection (new for
//! every block, with its handshake, as Hadoop 0.20 does; or one persistent connection per
//! pair). The writer hands the block to stage 0 packet by packet (`packet_size`) at its
//! disk-limited rate; every DataNode forwards what it has received: stage k+1 may send no
//! more than stage k has delivered (`Conn::feed_end`). Each node's disks write `disk_rate`
//! in all, shared equally by the replicas it is writing; a pipeline's rate is the smallest
//! share along it, so the slowest disk paces the writer, as the acknowledgements do in HDFS.
//! A replica stops counting on its disk when the whole block has reached the last node. Then
//! the acknowledgement of the last packet goes back hop by hop (`n2→n1`, `n1→n0`), as a small
//! message on a pre-established connection (the reverse direction of the pipeline's); when it
//! reaches the writer the block is done and the slot starts its next block, or its next file.
//!
//! This layer starts flows through [`Hosts`] and reports the times at which a writer hands
//! over its next packet (`releases`: the simulation schedules them as `Ev::Job`); it never
//! touches the event set.

use super::{Hosts, NetRef};
use crate::rng::{stream, Rng};
use crate::units::{ser_ps, Time};
use crate::workload::hdfs::{ack_bytes, JobPlan};
use crate::workload::{ConnPolicy, FlowSpec, NO_STOP};
use std::collections::{HashMap, VecDeque};

/// What carries a stage: a TCP connection or an MPTCP connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Carrier {
    Conn(u32),
    Meta(u32),
}

/// One network transfer of a block: `nodes[k] → nodes[k+1]` of its pipeline.
struct Stage {
    pipe: u32,
    k: u32,
    flow: u32,
    carrier: Carrier,
    /// Bytes handed to its sender so far (by the writer's disk, or by the upstream stage).
    fed: u64,
}

/// One block on its way through a pipeline.
struct Pipe {
    slot: u32,
    nodes: Vec<u32>,
    bytes: u64,
    stages: Vec<u32>,
    /// The writer's rate (bits/s): the smallest disk share along the pipeline.
    rate_bps: u64,
    /// When the writer handed over its last packet, and when its next is due.
    last_rel: Time,
    next_rel: Time,
    start: Time,
    /// The whole block is at the last node (the disks no longer count it).
    data_done: bool,
}

struct Slot {
    node: u32,
    /// Bytes of the slot's current file still to write (0: idle).
    left: u64,
}

#[derive(Clone, Copy)]
enum Role {
    Stage(u32),
    /// The acknowledgement of pipe `pipe` arriving at its node `k`.
    Ack {
        pipe: u32,
        k: u32,
    },
}

pub(crate) struct Job {
    pub plan: JobPlan,
    rng: Rng,
    next_file: u32,
    slots: Vec<Slot>,
    pipes: Vec<Pipe>,
    stages: Vec<Stage>,
    /// Per host: the replicas its disks are writing now, and the pipes through it.
    writing: Vec<u32>,
    at_host: Vec<Vec<u32>>,
    /// Per carrier, its stages in stream order, not yet fully delivered.
    queues: HashMap<Carrier, VecDeque<u32>>,
    /// Persistent connections (per ordered pair) for data, and for acknowledgements.
    data_conns: HashMap<(u32, u32), Carrier>,
    ack_conns: HashMap<(u32, u32), u32>,
    roles: HashMap<u32, Role>,
    /// (time, pipe): a writer's next packet is due (the simulation schedules them).
    pub releases: Vec<(Time, u32)>,
    pub started: Option<Time>,
    pub end: Option<Time>,
    files_done: u32,
    blocks_done: u64,
    block_s_sum: f64,
    block_s_max: f64,
}

impl Job {
    pub fn new(plan: JobPlan, seed: u64, n_hosts: u32) -> Job {
        let mut slots = vec![];
        // Slot-major: with fewer files than slots, the files spread over the nodes.
        for _ in 0..plan.slots {
            for &node in &plan.datanodes {
                slots.push(Slot { node, left: 0 });
            }
        }
        Job {
            rng: Rng::new(seed, stream::WORKLOAD + (1 << 20) + plan.workload as u64),
            plan,
            next_file: 0,
            slots,
            pipes: vec![],
            stages: vec![],
            writing: vec![0; n_hosts as usize],
            at_host: vec![vec![]; n_hosts as usize],
            queues: HashMap::new(),
            data_conns: HashMap::new(),
            ack_conns: HashMap::new(),
            roles: HashMap::new(),
            releases: vec![],
            started: None,
            end: None,
            files_done: 0,
            blocks_done: 0,
            block_s_sum: 0.0,
            block_s_max: 0.0,
        }
    }

    /// `Ev::Job { pipe }` fired: the job starts (`u32::MAX`) or a writer's packet is due.
    pub fn on_event(&mut self, h: &mut Hosts, net: &NetRef, now: Time, pipe: u32) {
        if pipe == u32::MAX {
            self.started = Some(now);
            for s in 0..self.slots.len() {
                if self.next_file < self.plan.files {
                    self.next_file += 1;
                    self.slots[s].left = self.plan.file_bytes;
                    self.begin_block(h, net, now, s as u32);
                }
            }
        } else {
            self.release(h, now, pipe);
        }
    }

    /// The pipeline of a new block written from `writer`: itself, a node of another rack,
    /// another node of that rack, then any others (HDFS 0.20's default placement; where a
    /// rack has no such node, any node not yet chosen).
    fn place(&mut self, writer: u32) -> Vec<u32> {
        let p = &self.plan;
        let rack_of = |h: u32| p.rack[p.datanodes.iter().position(|&d| d == h).unwrap()];
        let mut nodes = vec![writer];
        let pick = |rng: &mut Rng, cands: Vec<u32>| -> Option<u32> {
            (!cands.is_empty()).then(|| cands[rng.below(cands.len() as u64) as usize])
        };
        let free = |nodes: &[u32]| -> Vec<u32> {
            p.datanodes
                .iter()
                .copied()
                .filter(|d| !nodes.contains(d))
                .collect()
        };
        while nodes.len() < p.replication as usize {
            let cands: Vec<u32> = match nodes.len() {
                1 => free(&nodes)
                    .into_iter()
                    .filter(|&d| rack_of(d) != rack_of(writer))
                    .collect(),
                2 => free(&nodes)
                    .into_iter()
                    .filter(|&d| rack_of(d) == rack_of(nodes[1]))
                    .collect(),
                _ => vec![],
            };
            let n = pick(&mut self.rng, cands)
                .or_else(|| pick(&mut self.rng, free(&nodes)))
                .expect("replication <= DataNodes (validated)");
            nodes.push(n);
        }
        nodes
    }

    fn begin_block(&mut self, h: &mut Hosts, net: &NetRef, now: Time, slot: u32) {
        let writer = self.slots[slot as usize].node;
        let bytes = self.slots[slot as usize].left.min(self.plan.block_bytes);
        let nodes = self.place(writer);
        let pi = self.pipes.len() as u32;
        for &n in &nodes {
            self.writing[n as usize] += 1;
            self.at_host[n as usize].push(pi);
        }
        self.pipes.push(Pipe {
            slot,
            nodes: nodes.clone(),
            bytes,
            stages: vec![],
            rate_bps: 0,
            last_rel: now,
            next_rel: now,
            start: now,
            data_done: false,
        });
        for k in 0..nodes.len() - 1 {
            let (src, dst) = (nodes[k], nodes[k + 1]);
            let spec = FlowSpec {
                start_ps: now,
                src,
                dst,
                size_bytes: bytes,
                conn: if self.plan.persistent {
                    ConnPolicy::Persistent { per_pair: 1 }
                } else {
                    ConnPolicy::New
                },
                app: None,
                workload: self.plan.workload,
                group: pi + 1,
                stop_ps: NO_STOP,
                cbr: None,
            };
            let mptcp = h.uses_mptcp(&spec);
            let (carrier, new) = match self.data_conns.get(&(src, dst)) {
                Some(&c) => (c, false),
                None => {
                    let est = self.plan.persistent;
                    let c = if mptcp {
                        Carrier::Meta(h.new_meta(net, src, dst, est))
                    } else {
                        Carrier::Conn(h.new_conn(net, src, dst, est, None))
                    };
                    if est {
                        self.data_conns.insert((src, dst), c);
                    }
                    (c, !est)
                }
            };
            let flow = match carrier {
                Carrier::Conn(c) => {
                    h.feeds[c as usize] = true;
                    h.start_on_conn(now, spec, c, new, true)
                }
                Carrier::Meta(m) => {
                    h.meta_feeds[m as usize] = true;
                    h.start_on_meta(now, spec, m, new, true)
                }
            };
            let si = self.stages.len() as u32;
            self.stages.push(Stage {
                pipe: pi,
                k: k as u32,
                flow,
                carrier,
                fed: 0,
            });
            self.pipes[pi as usize].stages.push(si);
            self.queues.entry(carrier).or_default().push_back(si);
            self.roles.insert(flow, Role::Stage(si));
        }
        self.rerate(now, &nodes);
    }

    /// The disk shares at `nodes` changed: new rates for the pipes through them (the next
    /// packet of each comes one packet time after its last at the new rate).
    fn rerate(&mut self, now: Time, nodes: &[u32]) {
        let mut pipes: Vec<u32> = nodes
            .iter()
            .flat_map(|&n| self.at_host[n as usize].iter().copied())
            .collect();
        pipes.sort_unstable();
        pipes.dedup();
        for pi in pipes {
            let p = &self.pipes[pi as usize];
            let rate = p
                .nodes
                .iter()
                .map(|&n| self.plan.disk_bps / self.writing[n as usize].max(1) as u64)
                .min()
                .unwrap()
                .max(1);
            let fed0 = self.stages[p.stages[0] as usize].fed;
            if rate == p.rate_bps || fed0 >= p.bytes {
                continue;
            }
            let pkt = self.plan.packet_bytes.min(p.bytes - fed0);
            let next = (p.last_rel + ser_ps(pkt, rate)).max(now);
            let p = &mut self.pipes[pi as usize];
            p.rate_bps = rate;
            p.next_rel = next;
            self.releases.push((next, pi));
        }
    }

    /// The writer of pipe `pi` hands over its next packet, if it is due.
    fn release(&mut self, h: &mut Hosts, now: Time, pi: u32) {
        let p = &self.pipes[pi as usize];
        let s0 = p.stages[0];
        let fed0 = self.stages[s0 as usize].fed;
        if now < p.next_rel || fed0 >= p.bytes {
            return; // an event made stale by a new rate
        }
        let fed = (fed0 + self.plan.packet_bytes).min(p.bytes);
        self.stages[s0 as usize].fed = fed;
        let p = &mut self.pipes[pi as usize];
        p.last_rel = now;
        if fed < p.bytes {
            let pkt = self.plan.packet_bytes.min(p.bytes - fed);
            p.next_rel = now + ser_ps(pkt, p.rate_bps);
            self.releases.push((p.next_rel, pi));
        }
        let c = self.stages[s0 as usize].carrier;
        self.refeed(h, now, c);
    }

    /// Set carrier `c`'s feed from its stages and let it send.
    fn refeed(&mut self, h: &mut Hosts, now: Time, c: Carrier) {
        let mut feed = u64::MAX;
        for &si in self.queues.get(&c).into_iter().flatten() {
            let st = &self.stages[si as usize];
            let rec = &h.flows[st.flow as usize];
            if st.fed < rec.spec.size_bytes {
                feed = rec.start_off + st.fed;
                break;
            }
        }
        match c {
            Carrier::Conn(ci) => {
                let conn = &mut h.conns[ci as usize];
                if conn.feed_end == feed {
                    return;
                }
                conn.feed_end = feed;
                let start = h.out.len();
                conn.try_send(now, &h.tcp, &mut h.out);
                h.emit(ci, true, start);
            }
            Carrier::Meta(m) => {
                let meta = &mut h.mptcp.as_mut().unwrap().metas[m as usize];
                if meta.feed_end == feed {
                    return;
                }
                meta.feed_end = feed;
                h.push_meta(now, m);
            }
        }
    }

    /// Data arrived on carrier `c`: what its stages delivered feeds the next stages.
    pub fn on_delivered(&mut self, h: &mut Hosts, now: Time, c: Carrier) {
        let r = self.plan.replication;
        let mut downstream = vec![];
        if let Some(q) = self.queues.get_mut(&c) {
            while let Some(&si) = q.front() {
                let st = &self.stages[si as usize];
                let rec = &h.flows[st.flow as usize];
                let got = h.delivered(rec);
                if st.k + 2 < r {
                    let next = self.pipes[st.pipe as usize].stages[st.k as usize + 1];
                    if self.stages[next as usize].fed < got {
                        downstream.push((next, got));
                    }
                }
                if got < rec.spec.size_bytes {
                    break;
                }
                q.pop_front();
            }
        }
        for (next, got) in downstream {
            self.stages[next as usize].fed = got;
            let c = self.stages[next as usize].carrier;
            self.refeed(h, now, c);
        }
    }

    /// Flow `f` of the job completed.
    pub fn on_completed(&mut self, h: &mut Hosts, net: &NetRef, now: Time, f: u32) {
        let Some(role) = self.roles.remove(&f) else {
            return;
        };
        let r = self.plan.replication;
        match role {
            Role::Stage(si) => {
                let (pi, k) = (self.stages[si as usize].pipe, self.stages[si as usize].k);
                if k + 2 == r {
                    // The block is whole at the last node: the disks are done with it, and
                    // the last packet's acknowledgement starts back.
                    let nodes = self.pipes[pi as usize].nodes.clone();
                    self.pipes[pi as usize].data_done = true;
                    for &n in &nodes {
                        self.writing[n as usize] -= 1;
                        self.at_host[n as usize].retain(|&x| x != pi);
                    }
                    self.rerate(now, &nodes);
                    self.ack(h, net, now, pi, r - 1);
                }
            }
            Role::Ack { pipe, k } => {
                if k == 0 {
                    self.end_block(h, net, now, pipe);
                } else {
                    self.ack(h, net, now, pipe, k);
                }
            }
        }
    }

    /// Send the acknowledgement of pipe `pi` from its node `from` to the node before it.
    fn ack(&mut self, h: &mut Hosts, net: &NetRef, now: Time, pi: u32, from: u32) {
        let nodes = &self.pipes[pi as usize].nodes;
        let (src, dst) = (nodes[from as usize], nodes[from as usize - 1]);
        let conn = match self.ack_conns.get(&(src, dst)) {
            Some(&c) => c,
            None => {
                let c = h.new_conn(net, src, dst, true, None);
                self.ack_conns.insert((src, dst), c);
                c
            }
        };
        let spec = FlowSpec {
            start_ps: now,
            src,
            dst,
            size_bytes: ack_bytes(self.plan.replication),
            conn: ConnPolicy::Persistent { per_pair: 1 },
            app: None,
            workload: self.plan.workload,
            group: pi + 1,
            stop_ps: NO_STOP,
            cbr: None,
        };
        let f = h.start_on_conn(now, spec, conn, false, false);
        self.roles.insert(
            f,
            Role::Ack {
                pipe: pi,
                k: from - 1,
            },
        );
    }

    fn end_block(&mut self, h: &mut Hosts, net: &NetRef, now: Time, pi: u32) {
        let p = &self.pipes[pi as usize];
        let (slot, bytes) = (p.slot, p.bytes);
        let took = (now - p.start) as f64 * 1e-12;
        self.blocks_done += 1;
        self.block_s_sum += took;
        self.block_s_max = self.block_s_max.max(took);
        let s = &mut self.slots[slot as usize];
        s.left -= bytes;
        if s.left == 0 {
            self.files_done += 1;
            if self.next_file < self.plan.files {
                self.next_file += 1;
                self.slots[slot as usize].left = self.plan.file_bytes;
            }
        }
        if self.slots[slot as usize].left > 0 {
            self.begin_block(h, net, now, slot);
        } else if self.files_done == self.plan.files {
            self.end = Some(now);
        }
    }

    /// summary.json `hdfs`.
    pub fn summary(&self) -> serde_json::Value {
        let p = &self.plan;
        let jct = match (self.started, self.end) {
            (Some(s), Some(e)) => Some((e - s) as f64 * 1e-12),
            _ => None,
        };
        serde_json::json!({
            "workload": p.workload,
            "finished": self.end.is_some(),
            "jct_s": jct,
            "start_s": p.start_ps as f64 * 1e-12,
            "files": p.files,
            "files_done": self.files_done,
            "blocks": p.files as u64 * p.blocks_per_file(),
            "blocks_done": self.blocks_done,
            "bytes": p.files as u64 * p.file_bytes,
            "datanodes": p.datanodes.len(),
            "replication": p.replication,
            "slots": p.slots,
            "disk_rate_bps": p.disk_bps,
            "mean_block_s": if self.blocks_done > 0 { Some(self.block_s_sum / self.blocks_done as f64) } else { None },
            "max_block_s": if self.blocks_done > 0 { Some(self.block_s_max) } else { None },
        })
    }
}
