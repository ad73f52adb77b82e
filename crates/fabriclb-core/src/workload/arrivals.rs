//! What the Poisson patterns share: host sets, pair sampling, flow-size fields, the two load
//! conventions and the arrival loop.
//!
//! # Load conventions (`load_basis`)
//! With target load ρ and mean flow size E[S] bytes, the aggregate arrival rate is
//! `λ = ρ · C / (8 · E[S] · p)` flows per second, where
//! - `"host"`: C = Σ host-link rate of the eligible senders (each sender's host→ToR link;
//!   counted once per host), p = 1. Every generated flow counts.
//! - `"fabric"`: C = Σ, over the ToRs (leaves) that have at least one eligible sender, of the
//!   ToR's uplink capacity (all its links to other switches, one direction); p = the
//!   probability that a generated flow goes between different ToRs. Only inter-ToR flows count
//!   toward the load; intra-ToR flows (when the pattern allows them) come on top. This is the
//!   CONGA testbed convention (§5.2): with 2 leaves × 4 × 40 Gbps, C = 320 Gbps and at ρ each
//!   leaf sends ρ · 160 Gbps into the spine.
//! - `capacity`, when set, replaces C (the graph is not consulted): papers that state loads
//!   "as a fraction of the baseline leaf-uplink capacity" keep that baseline even when a link
//!   is missing or failed.

use super::cdf::{Cdf, CdfOptions, CdfScale, CdfUnit, SizeLaw};
use super::{ConnPolicy, FlowSpec, GenCtx};
use crate::error::Error;
use crate::net::topology::Graph;
use crate::rng::Rng;
use crate::units::{Bytes, Rate, PS_PER_S};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Which capacity a target `load` is a fraction of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LoadBasis {
    /// Sum of the host-link rates of the sending hosts: λ = ρ·ΣC_host / (8·E[S]).
    Host,
    /// Sum of the uplink capacity of the leaves (ToRs) of the sending hosts, counting only flows
    /// between different leaves (CONGA §5.2): λ_inter-leaf = ρ·ΣC_uplink / (8·E[S]).
    Fabric,
}

/// Which bytes a target `load` counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LoadBytes {
    /// The flow sizes, as the application counts them.
    #[default]
    Payload,
    /// The bytes the data segments take on the links `load_basis` names: payload, TCP/IP and
    /// Ethernet headers, preamble and inter-frame gap, and on fabric links the overlay header
    /// when the fabric encapsulates. At this load the data fill that fraction of the links.
    Wire,
}

/// What a data segment costs on the wire beyond its payload (for `load_bytes = "wire"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireCost {
    pub mss_bytes: u32,
    /// On a host link.
    pub host_overhead_bytes: u32,
    /// On a link between switches (with the overlay header when the fabric encapsulates).
    pub fabric_overhead_bytes: u32,
}

/// Shape of flow sizes given by `size` (instead of a CDF).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SizeDist {
    /// Every flow has exactly `size` bytes.
    #[default]
    Fixed,
    /// Exponential with mean `size` (rounded to whole bytes, at least 1).
    Exponential,
}

pub fn default_packet_size() -> Bytes {
    Bytes(1460)
}

/// The flow-size fields every CDF-driven pattern has, borrowed from its config.
pub struct SizeFields<'a> {
    pub cdf: &'a Option<String>,
    pub size: Option<Bytes>,
    pub size_dist: SizeDist,
    pub cdf_unit: CdfUnit,
    pub cdf_scale: CdfScale,
    pub packet_size: Bytes,
}

impl SizeFields<'_> {
    fn opts(&self) -> CdfOptions {
        CdfOptions {
            unit: self.cdf_unit,
            packet_bytes: self.packet_size.0,
            scale: self.cdf_scale,
        }
    }
    /// Build the size law (reads the CDF file, if any).
    pub fn law(&self, path: &str, base_dir: Option<&std::path::Path>) -> Result<SizeLaw, Error> {
        match (self.cdf, self.size) {
            (Some(_), Some(_)) => Err(Error::config(path, "give either `cdf` or `size`, not both")),
            (None, None) => Err(Error::config(
                path,
                format!("flow sizes are missing: set `cdf` (one of {}, or a file path) or a fixed `size`", super::cdf::builtin_names().join(", ")),
            )),
            (Some(spec), None) => {
                if self.size_dist != SizeDist::Fixed {
                    return Err(Error::config(&format!("{path}.size_dist"), "applies only with `size`, not with `cdf`"));
                }
                if self.packet_size.0 == 0 {
                    return Err(Error::config(&format!("{path}.packet_size"), "must be > 0 (bytes of payload per packet, e.g. \"1460B\")"));
                }
                Ok(SizeLaw::Cdf(Cdf::load(spec, self.opts(), base_dir, &format!("{path}.cdf"))?))
            }
            (None, Some(s)) => {
                if s.0 == 0 {
                    return Err(Error::config(&format!("{path}.size"), "must be > 0"));
                }
                if self.cdf_unit != CdfUnit::Bytes || self.cdf_scale != CdfScale::Auto {
                    return Err(Error::config(path, "cdf_unit and cdf_scale apply only with `cdf`"));
                }
                Ok(match self.size_dist {
                    SizeDist::Fixed => SizeLaw::Fixed(s.0),
                    SizeDist::Exponential => SizeLaw::Exponential(s.0 as f64),
                })
            }
        }
    }
}

/// Check a target load.
pub fn check_load(path: &str, load: f64) -> Result<(), Error> {
    if !(load > 0.0 && load <= 1.0) {
        return Err(Error::config(
            &format!("{path}.load"),
            format!("is {load}; a load must be in (0, 1], a fraction of the capacity named by `load_basis`"),
        ));
    }
    Ok(())
}

pub fn check_capacity(path: &str, capacity: Option<Rate>) -> Result<(), Error> {
    if capacity.map(|c| c.0 == 0).unwrap_or(false) {
        return Err(Error::config(
            &format!("{path}.capacity"),
            "must be > 0 (omit it to use the topology's capacity)",
        ));
    }
    Ok(())
}

/// Resolve names into hosts: a host ("H3" or an index) or a switch (all hosts attached to it,
/// e.g. "L0"). Empty `names` means every host. Result is sorted and without duplicates.
pub fn hosts_of(g: &Graph, names: &[String], path: &str) -> Result<Vec<u32>, Error> {
    if names.is_empty() {
        return Ok((0..g.n_hosts).collect());
    }
    let mut out = vec![];
    for (i, n) in names.iter().enumerate() {
        out.extend(hosts_of_one(g, n, &format!("{path}[{i}]"))?);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// One name: a host, or a switch standing for its attached hosts.
pub fn hosts_of_one(g: &Graph, name: &str, path: &str) -> Result<Vec<u32>, Error> {
    if let Some(id) = g.node_id(name) {
        if !g.is_host(id) {
            let hs: Vec<u32> = (0..g.n_hosts)
                .filter(|&h| g.host_tor[h as usize] == id)
                .collect();
            if hs.is_empty() {
                return Err(Error::config(
                    path,
                    format!("switch '{name}' has no hosts attached; name a host or a leaf (ToR)"),
                ));
            }
            return Ok(hs);
        }
    }
    super::host_by_name(g, name, path).map(|h| vec![h])
}

/// Uplink capacity of a ToR: the rates of its links to other switches (one direction), bits/s.
pub fn tor_uplink_bps(g: &Graph, tor: u32) -> u64 {
    g.nodes[tor as usize]
        .ports
        .iter()
        .map(|&l| &g.links[l as usize])
        .filter(|d| !g.is_host(d.to))
        .map(|d| d.rate_bps)
        .sum()
}

/// Uniform random pairs (a, b): `a` uniform over `firsts`, then `b` uniform over the `seconds`
/// that are not `a` (and, with `cross_tor`, not under `a`'s ToR). O(1) per draw.
pub struct PairSampler {
    firsts: Vec<u32>,
    /// Seconds sorted by (ToR, host).
    seconds: Vec<u32>,
    /// ToR -> (start, len) in `seconds`.
    blocks: BTreeMap<u32, (usize, usize)>,
    /// Host -> its index in `seconds`.
    pos: Vec<Option<usize>>,
    cross_tor: bool,
    host_tor: Vec<u32>,
}

impl PairSampler {
    /// Fails when some first has no eligible second; `what` names the roles ("client", "server").
    pub fn new(
        g: &Graph,
        firsts: Vec<u32>,
        mut seconds: Vec<u32>,
        cross_tor: bool,
        path: &str,
        what: (&str, &str),
    ) -> Result<PairSampler, Error> {
        if firsts.is_empty() {
            return Err(Error::config(path, format!("there are no {}s", what.0)));
        }
        seconds.sort_by_key(|&h| (g.host_tor[h as usize], h));
        let mut blocks: BTreeMap<u32, (usize, usize)> = BTreeMap::new();
        let mut pos = vec![None; g.n_hosts as usize];
        for (i, &h) in seconds.iter().enumerate() {
            let e = blocks.entry(g.host_tor[h as usize]).or_insert((i, 0));
            e.1 += 1;
            pos[h as usize] = Some(i);
        }
        let s = PairSampler {
            firsts,
            seconds,
            blocks,
            pos,
            cross_tor,
            host_tor: g.host_tor.clone(),
        };
        for &a in &s.firsts {
            if s.valid(a).0 == 0 {
                let why = if cross_tor {
                    "under another ToR (cross_tor = true)"
                } else {
                    "other than itself"
                };
                return Err(Error::config(
                    path,
                    format!(
                        "{} {} has no {} {why}",
                        what.0, g.nodes[a as usize].name, what.1
                    ),
                ));
            }
        }
        Ok(s)
    }
    /// (eligible seconds for `a`, of which under another ToR).
    fn valid(&self, a: u32) -> (usize, usize) {
        let same_tor = self
            .blocks
            .get(&self.host_tor[a as usize])
            .map(|b| b.1)
            .unwrap_or(0);
        let other = self.seconds.len() - same_tor;
        if self.cross_tor {
            (other, other)
        } else {
            (
                self.seconds.len() - self.pos[a as usize].is_some() as usize,
                other,
            )
        }
    }
    /// Probability that a drawn pair is between different ToRs.
    pub fn p_cross(&self) -> f64 {
        let s: f64 = self
            .firsts
            .iter()
            .map(|&a| {
                let (v, o) = self.valid(a);
                o as f64 / v as f64
            })
            .sum();
        s / self.firsts.len() as f64
    }
    pub fn firsts(&self) -> &[u32] {
        &self.firsts
    }
    pub fn seconds(&self) -> &[u32] {
        &self.seconds
    }
    pub fn draw(&self, rng: &mut Rng) -> (u32, u32) {
        let a = self.firsts[rng.below(self.firsts.len() as u64) as usize];
        let n = self.seconds.len();
        let k = if self.cross_tor {
            let (start, len) = self
                .blocks
                .get(&self.host_tor[a as usize])
                .copied()
                .unwrap_or((0, 0));
            let k = rng.below((n - len) as u64) as usize;
            if k >= start {
                k + len
            } else {
                k
            }
        } else if let Some(p) = self.pos[a as usize] {
            let k = rng.below((n - 1) as u64) as usize;
            if k >= p {
                k + 1
            } else {
                k
            }
        } else {
            rng.below(n as u64) as usize
        };
        (a, self.seconds[k])
    }
}

/// Capacity C (bits/s) of a load basis for the given senders.
pub fn basis_capacity_bps(
    g: &Graph,
    basis: LoadBasis,
    senders: &[u32],
    capacity: Option<Rate>,
    path: &str,
) -> Result<f64, Error> {
    if let Some(c) = capacity {
        return Ok(c.0 as f64);
    }
    let c = match basis {
        LoadBasis::Host => senders
            .iter()
            .map(|&h| g.links[g.host_uplink[h as usize] as usize].rate_bps)
            .sum::<u64>(),
        LoadBasis::Fabric => {
            let mut tors: Vec<u32> = senders.iter().map(|&h| g.host_tor[h as usize]).collect();
            tors.sort_unstable();
            tors.dedup();
            tors.iter().map(|&t| tor_uplink_bps(g, t)).sum::<u64>()
        }
    };
    if c == 0 {
        return Err(Error::config(
            &format!("{path}.load_basis"),
            "the sending hosts' leaves have no uplinks, so a fabric load is undefined; use load_basis = \"host\" or set `capacity`",
        ));
    }
    Ok(c as f64)
}

/// How a target load is stated: the fraction, of which capacity, counting which bytes.
pub struct Load {
    pub load: f64,
    pub basis: LoadBasis,
    pub capacity: Option<Rate>,
    pub bytes: LoadBytes,
}

/// Aggregate arrival rate (flows/s) for a target load.
pub fn arrival_rate(
    ctx: &GenCtx,
    path: &str,
    target: &Load,
    senders: &[u32],
    p_cross: f64,
    law: &SizeLaw,
) -> Result<f64, Error> {
    let c = basis_capacity_bps(ctx.g, target.basis, senders, target.capacity, path)?;
    let (p, overhead) = match target.basis {
        LoadBasis::Host => (1.0, ctx.wire.host_overhead_bytes),
        LoadBasis::Fabric => (p_cross, ctx.wire.fabric_overhead_bytes),
    };
    if p <= 0.0 {
        return Err(Error::config(&format!("{path}.load_basis"), "no flow of this pattern crosses the fabric (all pairs are under one ToR), so a fabric load is undefined; use \"host\""));
    }
    let mean_bytes = match target.bytes {
        LoadBytes::Payload => law.mean(),
        LoadBytes::Wire => law.mean() + overhead as f64 * law.mean_segments(ctx.wire.mss_bytes),
    };
    Ok(target.load * c / (8.0 * mean_bytes * p))
}

/// Poisson arrivals at `rate` flows/s over [0, ctx.duration_ps); each arrival draws a pair
/// (mapped to (src, dst) by `orient`) and a size.
#[allow(clippy::too_many_arguments)]
pub fn poisson_flows(
    ctx: &GenCtx,
    path: &str,
    rng: &mut Rng,
    rate_per_s: f64,
    pairs: &PairSampler,
    sizes: &SizeLaw,
    conn: ConnPolicy,
    orient: impl Fn(u32, u32) -> (u32, u32),
    out: &mut Vec<FlowSpec>,
) -> Result<(), Error> {
    if !(rate_per_s > 0.0 && rate_per_s.is_finite()) {
        return Err(Error::config(
            path,
            format!("the arrival rate {rate_per_s} flows/s is not a positive number"),
        ));
    }
    let expected = rate_per_s * ctx.duration_ps as f64 / PS_PER_S as f64;
    // The expected count (shorten `duration` or lower the load to stay below the limit).
    super::check_flow_count(path, out, expected.min(u64::MAX as f64) as u128)?;
    out.reserve((expected * 1.01) as usize + 16);
    let mean_gap_ps = PS_PER_S as f64 / rate_per_s;
    let mut t = 0.0f64;
    loop {
        t += rng.exp(mean_gap_ps);
        if t >= ctx.duration_ps as f64 {
            break;
        }
        let (a, b) = pairs.draw(rng);
        let (src, dst) = orient(a, b);
        out.push(FlowSpec {
            start_ps: t as u64,
            src,
            dst,
            size_bytes: sizes.sample(rng),
            conn,
            app: None,
            workload: ctx.workload,
            group: 0,
        });
    }
    Ok(())
}
