//! An HDFS-like replicated write job (Hadoop 0.20's TestDFSIO write, CONGA §5.4, Fig. 14;
//! `../shared/SCHEMES.md` §10.7): a NameNode and N DataNodes; the job writes `files` files of
//! `file_size` bytes, one map task per file, at most `slots` tasks at a time per DataNode.
//! Each file is written block by block through a pipeline of `replication` DataNodes chosen
//! as HDFS 0.20 does: the first replica on the writer's own node, the second on a node of
//! another rack, the third on another node of the second's rack (further ones anywhere).
//! The writer and every DataNode write at most `disk_rate`, shared by the replicas a disk is
//! writing at the time. A block ends when the pipeline's acknowledgement of its last packet
//! is back at the writer; the job ends with the last block. The model is in docs/HDFS.md.
//!
//! Unlike the other patterns this one is not a list of flows known before the run: what the
//! job does next depends on when its blocks finish. `generate` therefore produces no flows;
//! the host layer runs the job (`host::hdfs`) from [`HdfsConfig::plan`]. This file holds the
//! fields, their checks and the plan; it reads the fabric graph and nothing else.

use super::{host_by_name, GenCtx, Pattern};
use crate::error::Error;
use crate::net::topology::Graph;
use crate::rng::Rng;
use crate::units::{Bytes, Duration, Rate, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// At most this many map slots per DataNode. A slot is a task JVM on a core: the CONGA
/// testbed's servers have 12 cores (24 hardware threads), Hadoop 0.20 defaults to 2.
pub const MAX_SLOTS: u32 = 64;

/// Bytes of a pipeline acknowledgement (Hadoop 0.20 `PipelineAck`): the packet's sequence
/// number (8) and one status (2) per DataNode in the pipeline.
pub fn ack_bytes(replication: u32) -> u64 {
    8 + 2 * replication as u64
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HdfsConfig {
    /// The NameNode's host (name or index): it stores no blocks and runs no map tasks (its
    /// RPCs are not simulated). Omitted: no host is set aside.
    #[serde(default)]
    pub namenode: Option<String>,
    /// The DataNodes (hosts, or leaves standing for their hosts); empty (default) = every host
    /// but the NameNode. Each runs `slots` map slots and stores replicas.
    #[serde(default)]
    pub datanodes: Vec<String>,
    /// Files the job writes (TestDFSIO `nrFiles`), one map task each, >= 1.
    #[schemars(range(min = 1))]
    pub files: u32,
    /// Bytes per file (TestDFSIO `fileSize`), > 0.
    pub file_size: Bytes,
    /// HDFS block size (default "64MiB", Hadoop 0.20's `dfs.block.size`); the last block of a
    /// file may be shorter.
    #[serde(default = "block_64mib")]
    pub block_size: Bytes,
    /// Replicas per block, 2..=the number of DataNodes (default 3).
    #[serde(default = "three")]
    #[schemars(range(min = 2))]
    pub replication: u32,
    /// Map slots per DataNode (Hadoop 0.20's `mapred.tasktracker.map.tasks.maximum`, default
    /// 2), 1..=64.
    #[serde(default = "two")]
    #[schemars(range(min = 1, max = 64))]
    pub slots: u32,
    /// Write rate of one node's disks together (> 0): a DataNode writing k replicas at once
    /// gives each disk_rate / k, and a pipeline moves at the rate of its slowest share.
    pub disk_rate: Rate,
    /// The writer hands data to the pipeline in packets of this size (default "64KiB",
    /// Hadoop 0.20's `dfs.write.packet.size`), as its disk share allows; 1 B..=block_size.
    #[serde(default = "packet_64kib")]
    pub packet_size: Bytes,
    /// When the job starts (default 0); before `duration`.
    #[serde(default)]
    pub start: Duration,
    /// Pipelines reuse one pre-established connection per pair of nodes (true), or open new
    /// connections for every block, with handshakes, as Hadoop 0.20 does (false, default).
    #[serde(default)]
    pub persistent: bool,
    /// The run ends when the job does (default true): background flows still open then are
    /// reported unfinished. false: the run goes on as without a job (duration, drain).
    #[serde(default = "yes")]
    pub end_run: bool,
}
fn block_64mib() -> Bytes {
    Bytes(64 << 20)
}
fn packet_64kib() -> Bytes {
    Bytes(64 << 10)
}
fn three() -> u32 {
    3
}
fn two() -> u32 {
    2
}
fn yes() -> bool {
    true
}

/// The job resolved against the fabric: what the host layer runs.
#[derive(Clone, Debug)]
pub struct JobPlan {
    pub workload: u16,
    /// DataNodes (host ids), in the order given (slots are filled in this order).
    pub datanodes: Vec<u32>,
    /// Per DataNode (same order), its rack (ToR).
    pub rack: Vec<u32>,
    pub files: u32,
    pub file_bytes: u64,
    pub block_bytes: u64,
    pub replication: u32,
    pub slots: u32,
    pub disk_bps: u64,
    pub packet_bytes: u64,
    pub start_ps: Time,
    pub persistent: bool,
    pub end_run: bool,
}

impl JobPlan {
    /// Blocks per file (the last one may be short).
    pub fn blocks_per_file(&self) -> u64 {
        self.file_bytes.div_ceil(self.block_bytes)
    }
}

impl Pattern for HdfsConfig {
    fn validate(&self, path: &str) -> Result<(), Error> {
        let f = |name: &str| format!("{path}.{name}");
        if self.files == 0 {
            return Err(Error::config(&f("files"), "must be >= 1"));
        }
        if self.file_size.0 == 0 {
            return Err(Error::config(&f("file_size"), "must be > 0 (e.g. \"1GB\")"));
        }
        if self.block_size.0 == 0 {
            return Err(Error::config(
                &f("block_size"),
                "must be > 0 (Hadoop 0.20's is \"64MiB\")",
            ));
        }
        if self.disk_rate.0 == 0 {
            return Err(Error::config(
                &f("disk_rate"),
                "must be > 0: the write rate of a node's disks together (e.g. \"2.88Gbps\" for 3 disks of 120 MB/s)",
            ));
        }
        if self.replication < 2 {
            return Err(Error::config(
                &f("replication"),
                format!(
                    "is {}; allowed: 2..=the number of DataNodes (with one replica a block never crosses the network)",
                    self.replication
                ),
            ));
        }
        if self.slots == 0 || self.slots > MAX_SLOTS {
            return Err(Error::config(
                &f("slots"),
                format!(
                    "is {}; a DataNode serves 1..={MAX_SLOTS} map slots (a slot is a task on a core; Hadoop 0.20's default is 2)",
                    self.slots
                ),
            ));
        }
        if self.packet_size.0 == 0 || self.packet_size.0 > self.block_size.0 {
            return Err(Error::config(
                &f("packet_size"),
                format!(
                    "is {}; allowed: 1 B..=block_size ({})",
                    self.packet_size, self.block_size
                ),
            ));
        }
        Ok(())
    }
    /// The job's flows are made while it runs (`host::hdfs`): nothing to generate.
    fn generate(
        &self,
        path: &str,
        ctx: &GenCtx,
        _rng: &mut Rng,
        _out: &mut Vec<super::FlowSpec>,
    ) -> Result<(), Error> {
        self.plan(path, ctx.g, ctx.workload, ctx.duration_ps)
            .map(|_| ())
    }
}

impl HdfsConfig {
    /// Resolve the hosts and check what needs the fabric: the replication against the
    /// DataNodes, the start against `duration`, the flow count against the limit.
    pub fn plan(
        &self,
        path: &str,
        g: &Graph,
        workload: u16,
        duration_ps: Time,
    ) -> Result<JobPlan, Error> {
        self.validate(path)?;
        let namenode = match &self.namenode {
            Some(n) => Some(host_by_name(g, n, &format!("{path}.namenode"))?),
            None => None,
        };
        let mut datanodes = vec![];
        if self.datanodes.is_empty() {
            datanodes.extend((0..g.n_hosts).filter(|&h| Some(h) != namenode));
        } else {
            for (i, d) in self.datanodes.iter().enumerate() {
                let p = format!("{path}.datanodes[{i}]");
                for h in super::arrivals::hosts_of_one(g, d, &p)? {
                    if Some(h) == namenode {
                        return Err(Error::config(
                            &p,
                            format!("'{d}' includes the NameNode; a NameNode stores no blocks"),
                        ));
                    }
                    if datanodes.contains(&h) {
                        return Err(Error::config(
                            &p,
                            format!("'{d}' names a DataNode listed already"),
                        ));
                    }
                    datanodes.push(h);
                }
            }
        }
        if self.replication as usize > datanodes.len() {
            return Err(Error::config(
                &format!("{path}.replication"),
                format!(
                    "is {} but there are {} DataNodes; allowed: 2..={} (each replica of a block is on its own DataNode)",
                    self.replication,
                    datanodes.len(),
                    datanodes.len()
                ),
            ));
        }
        if self.start.0 >= duration_ps {
            return Err(Error::config(
                &format!("{path}.start"),
                format!(
                    "{} is not before duration ({}); a job starts while arrivals run",
                    self.start,
                    Duration(duration_ps)
                ),
            ));
        }
        let plan = JobPlan {
            workload,
            rack: datanodes.iter().map(|&h| g.host_tor[h as usize]).collect(),
            datanodes,
            files: self.files,
            file_bytes: self.file_size.0,
            block_bytes: self.block_size.0,
            replication: self.replication,
            slots: self.slots,
            disk_bps: self.disk_rate.0,
            packet_bytes: self.packet_size.0,
            start_ps: self.start.0,
            persistent: self.persistent,
            end_run: self.end_run,
        };
        // Each block is (replication − 1) transfers and as many acknowledgements.
        let flows = self.files as u128
            * plan.blocks_per_file() as u128
            * 2
            * (self.replication as u128 - 1);
        crate::limits::check(
            &format!("{path}.files"),
            "the flows of the job (files × blocks per file × 2 × (replication − 1))",
            flows,
            crate::limits::MAX_FLOWS,
        )?;
        Ok(plan)
    }
}
