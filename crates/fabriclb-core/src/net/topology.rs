//! Fabric descriptions and their expansion into a flat graph of nodes and directed links.
//!
//! Three ways to describe a fabric: a two-tier leaf-spine, a k-ary fat-tree (optionally
//! oversubscribed at the edge, the aggregation layer or both), or an explicit list of switches, hosts and links (the papers'
//! small examples). All become the same [`Graph`]: hosts first (ids 0..H), then switches;
//! every physical link becomes two directed links (one per direction, each its own output
//! port), parallel links stay separate ports.
//!
//! This module only describes; the runtime state of ports lives in `net::port`.

use crate::error::Error;
use crate::limits;
use crate::units::{Duration, Rate, Time, PS_PER_US};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

crate::tagged_enum! {
    /// The fabric.
    pub enum TopologyConfig tag = "kind" {
        /// Two-tier leaf-spine: every leaf joined to every spine by `links_per_pair` links.
        "leaf-spine" => LeafSpine(LeafSpineConfig),
        /// Three-tier k-ary fat-tree (k pods; k/2 edge and k/2 aggregation switches per pod;
        /// (k/2)^2 cores), optionally oversubscribed at the edge and at the aggregation layer.
        "fat-tree" => FatTree(FatTreeConfig),
        /// Any fabric given as switches, hosts and links.
        "explicit" => Explicit(ExplicitConfig),
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeafSpineConfig {
    /// Number of leaf (top-of-rack) switches, >= 1.
    #[schemars(range(min = 1))]
    pub leaves: u32,
    /// Number of spine switches, >= 1.
    #[schemars(range(min = 1))]
    pub spines: u32,
    /// Hosts under each leaf, >= 1.
    #[schemars(range(min = 1))]
    pub hosts_per_leaf: u32,
    /// Host-to-leaf link rate.
    pub host_rate: Rate,
    /// Leaf-to-spine link rate.
    pub fabric_rate: Rate,
    /// Parallel links between each leaf-spine pair (link aggregation), >= 1.
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub links_per_pair: u32,
    /// One-way propagation delay of host links.
    #[serde(default = "us1")]
    pub host_delay: Duration,
    /// One-way propagation delay of fabric links.
    #[serde(default = "us1")]
    pub fabric_delay: Duration,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FatTreeConfig {
    /// Switch radix k (even, >= 2).
    #[schemars(range(min = 2, max = 44))] // limits::MAX_FAT_TREE_K
    pub k: u32,
    /// Edge oversubscription: hosts per edge switch are `oversubscription * k/2` against k/2
    /// uplinks (1 = non-blocking), >= 1.
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub oversubscription: u32,
    /// Aggregation oversubscription: each aggregation switch uses `k/2 / agg_oversubscription`
    /// of its k/2 core ports (1 = all), so it must divide k/2; the cores left without links
    /// are not built ((k/2)^2 / agg_oversubscription cores). The Expeditus authors' code builds
    /// its 4:1 fabric as `oversubscription = 2` with `agg_oversubscription = 2`.
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub agg_oversubscription: u32,
    /// Host link rate.
    pub host_rate: Rate,
    /// Switch-to-switch link rate.
    pub fabric_rate: Rate,
    /// One-way propagation delay of every link.
    #[serde(default = "us1")]
    pub delay: Duration,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplicitConfig {
    /// Switches with their role. Hosts may attach only to switches of role "leaf"/"edge".
    pub switches: Vec<SwitchSpec>,
    /// Hosts, each attached by one link to one switch.
    pub hosts: Vec<HostSpec>,
    /// Switch-to-switch links.
    pub links: Vec<LinkSpec>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchSpec {
    pub name: String,
    /// "leaf" (or "edge"), "spine" (or "agg"), "core".
    pub role: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    /// Host name; `count` > 1 makes hosts `name0`, `name1`, ...
    pub name: String,
    /// The switch it hangs off.
    pub attach: String,
    pub rate: Rate,
    #[serde(default = "us1")]
    pub delay: Duration,
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub count: u32,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub a: String,
    pub b: String,
    pub rate: Rate,
    #[serde(default = "us1")]
    pub delay: Duration,
    /// Parallel links between a and b.
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub count: u32,
}

fn one() -> u32 {
    1
}
fn us1() -> Duration {
    Duration(PS_PER_US)
}

/// Role of a node. Tier 0 = host, 1 = leaf/edge, 2 = spine/aggregation, 3 = core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Host,
    Leaf,
    Spine,
    Core,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub role: Role,
    /// For a fat-tree, the pod (edge and aggregation); otherwise 0.
    pub pod: u32,
    /// Outgoing directed links (this node's output ports), in a stable order.
    pub ports: Vec<u32>,
}

/// One direction of a physical link: an output port at `from`.
#[derive(Clone, Debug)]
pub struct LinkDesc {
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    pub delay_ps: Time,
    /// The directed link going the other way on the same cable.
    pub reverse: u32,
    /// Index among parallel links between the same pair (0, 1, ...).
    pub parallel_index: u32,
}

/// The expanded fabric. Hosts are nodes 0..n_hosts.
#[derive(Clone, Debug)]
pub struct Graph {
    pub nodes: Vec<Node>,
    pub links: Vec<LinkDesc>,
    pub n_hosts: u32,
    /// For each host, the switch it attaches to (its "ToR").
    pub host_tor: Vec<u32>,
    /// For each host, its uplink (host -> ToR) directed link.
    pub host_uplink: Vec<u32>,
    /// Node ids by name.
    names: HashMap<String, u32>,
}

impl Graph {
    pub fn node_id(&self, name: &str) -> Option<u32> {
        self.names.get(name).copied()
    }
    pub fn is_host(&self, n: u32) -> bool {
        n < self.n_hosts
    }
    /// A directed link is a fabric link when both ends are switches.
    pub fn is_fabric(&self, l: u32) -> bool {
        let d = &self.links[l as usize];
        !self.is_host(d.from) && !self.is_host(d.to)
    }
    /// Directed links from `a` to `b`, in parallel-index order.
    pub fn links_between(&self, a: u32, b: u32) -> Vec<u32> {
        self.nodes[a as usize]
            .ports
            .iter()
            .copied()
            .filter(|&l| self.links[l as usize].to == b)
            .collect()
    }
    /// Resolve "A->B", "A->B#i", "A-B", "A-B#i", "A-B#*" into directed links (A to B).
    pub fn resolve_link(&self, spec: &str, path: &str) -> Result<Vec<u32>, Error> {
        let (body, idx) = match spec.split_once('#') {
            Some((b, i)) => (b, Some(i)),
            None => (spec, None),
        };
        let (a, b) = body
            .split_once("->")
            .or_else(|| body.split_once('-'))
            .ok_or_else(|| {
                Error::config(
                    path,
                    format!("'{spec}' is not a link; write it as \"A-B\", \"A-B#i\" or \"A->B\""),
                )
            })?;
        let na = self.node_id(a.trim()).ok_or_else(|| {
            Error::config(path, format!("'{spec}': there is no node named '{a}'"))
        })?;
        let nb = self.node_id(b.trim()).ok_or_else(|| {
            Error::config(path, format!("'{spec}': there is no node named '{b}'"))
        })?;
        let all = self.links_between(na, nb);
        if all.is_empty() {
            return Err(Error::config(
                path,
                format!("'{spec}': there is no link between {a} and {b}"),
            ));
        }
        match idx {
            None => Ok(vec![all[0]]),
            Some("*") => Ok(all),
            Some(i) => {
                let i: usize = i.parse().map_err(|_| {
                    Error::config(path, format!("'{spec}': '#{i}' is not a link index"))
                })?;
                all.get(i).map(|&l| vec![l]).ok_or_else(|| {
                    Error::config(
                        path,
                        format!(
                            "'{spec}': there are only {} links between {a} and {b} (#0..#{})",
                            all.len(),
                            all.len() - 1
                        ),
                    )
                })
            }
        }
    }
    /// A pair of hosts (from, to) such that no path from `from` to `to` avoids the directed
    /// links marked in `dead`, or None when every host can reach every other. A link may be dead
    /// in one direction only, so reachability is checked both ways from the first host.
    pub fn unreachable_hosts(&self, dead: &[bool]) -> Option<(u32, u32)> {
        let reach = |backward: bool| {
            let mut seen = vec![false; self.nodes.len()];
            let mut stack = vec![0u32];
            seen[0] = true;
            while let Some(u) = stack.pop() {
                for &l in &self.nodes[u as usize].ports {
                    // Forward: u -> v over l. Backward: v -> u over l's reverse.
                    let live = if backward {
                        self.links[l as usize].reverse
                    } else {
                        l
                    };
                    let v = self.links[l as usize].to;
                    if !dead[live as usize] && !seen[v as usize] {
                        seen[v as usize] = true;
                        stack.push(v);
                    }
                }
            }
            seen
        };
        let (to, from) = (reach(false), reach(true));
        (0..self.n_hosts).find_map(|h| {
            if !to[h as usize] {
                Some((0, h))
            } else if !from[h as usize] {
                Some((h, 0))
            } else {
                None
            }
        })
    }
    /// A readable name of a directed link: "A->B#i".
    pub fn link_name(&self, l: u32) -> String {
        let d = &self.links[l as usize];
        format!(
            "{}->{}#{}",
            self.nodes[d.from as usize].name, self.nodes[d.to as usize].name, d.parallel_index
        )
    }
}

#[derive(Default)]
struct Builder {
    nodes: Vec<Node>,
    links: Vec<LinkDesc>,
    /// Cables so far per (a, b): the next parallel index (keeps building linear in links).
    parallel: HashMap<(u32, u32), u32>,
}

impl Builder {
    fn node(&mut self, name: String, role: Role, pod: u32) -> u32 {
        self.nodes.push(Node {
            name,
            role,
            pod,
            ports: vec![],
        });
        (self.nodes.len() - 1) as u32
    }
    fn cable(&mut self, a: u32, b: u32, rate_bps: u64, delay_ps: Time) {
        let next = self.parallel.entry((a, b)).or_insert(0);
        let idx = *next;
        *next += 1;
        let ab = self.links.len() as u32;
        self.links.push(LinkDesc {
            from: a,
            to: b,
            rate_bps,
            delay_ps,
            reverse: ab + 1,
            parallel_index: idx,
        });
        self.links.push(LinkDesc {
            from: b,
            to: a,
            rate_bps,
            delay_ps,
            reverse: ab,
            parallel_index: idx,
        });
        self.nodes[a as usize].ports.push(ab);
        self.nodes[b as usize].ports.push(ab + 1);
    }
    fn finish(self, n_hosts: u32) -> Result<Graph, Error> {
        let mut host_tor = vec![];
        let mut host_uplink = vec![];
        for h in 0..n_hosts {
            let ports = &self.nodes[h as usize].ports;
            if ports.len() != 1 {
                return Err(Error::config(
                    "topology",
                    format!(
                        "host {} must have exactly one link (it has {})",
                        self.nodes[h as usize].name,
                        ports.len()
                    ),
                ));
            }
            host_uplink.push(ports[0]);
            host_tor.push(self.links[ports[0] as usize].to);
        }
        let names = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.clone(), i as u32))
            .collect();
        let g = Graph {
            nodes: self.nodes,
            links: self.links,
            n_hosts,
            host_tor,
            host_uplink,
            names,
        };
        check_connected(&g)?;
        Ok(g)
    }
}

fn check_connected(g: &Graph) -> Result<(), Error> {
    let n = g.nodes.len();
    let mut seen = vec![false; n];
    let mut stack = vec![0usize];
    seen[0] = true;
    while let Some(u) = stack.pop() {
        for &l in &g.nodes[u].ports {
            let v = g.links[l as usize].to as usize;
            if !seen[v] {
                seen[v] = true;
                stack.push(v);
            }
        }
    }
    let cut: Vec<&str> = (0..n)
        .filter(|&i| !seen[i])
        .map(|i| g.nodes[i].name.as_str())
        .take(5)
        .collect();
    if !cut.is_empty() {
        return Err(Error::config(
            "topology",
            format!(
                "the topology is disconnected: {} cannot be reached from {}",
                cut.join(", "),
                g.nodes[0].name
            ),
        ));
    }
    Ok(())
}

fn positive(path: &str, field: &str, v: u64) -> Result<(), Error> {
    if v == 0 {
        return Err(Error::config(&format!("{path}.{field}"), "must be > 0"));
    }
    Ok(())
}

/// What a topology would build, counted without building it (for the limits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    pub hosts: u128,
    pub switches: u128,
    /// Physical links, host links included.
    pub cables: u128,
    /// Switches with hosts attached.
    pub tors: u128,
    /// Directed switch-to-switch links (output ports between switches).
    pub fabric_ports: u128,
}

impl Size {
    /// Routing table entries: ToRs × (switches + fabric ports); see [`limits::MAX_ROUTING_ENTRIES`].
    pub fn routing_entries(&self) -> u128 {
        self.tors * (self.switches + self.fabric_ports)
    }
}

impl TopologyConfig {
    /// Counts of what [`TopologyConfig::build`] would make, in u128 (no overflow).
    pub fn size(&self) -> Size {
        match self {
            TopologyConfig::LeafSpine(c) => {
                let (l, s, h, p) = (
                    c.leaves as u128,
                    c.spines as u128,
                    c.hosts_per_leaf as u128,
                    c.links_per_pair as u128,
                );
                Size {
                    hosts: l * h,
                    switches: l + s,
                    cables: l * h + l * s * p,
                    tors: l,
                    fabric_ports: 2 * l * s * p,
                }
            }
            TopologyConfig::FatTree(c) => {
                let (k, o) = (c.k as u128, c.oversubscription as u128);
                let half = k / 2;
                let hosts = k * half * half * o;
                Size {
                    hosts,
                    switches: 2 * k * half + half * half,
                    cables: hosts + 2 * k * half * half,
                    tors: k * half,
                    fabric_ports: 4 * k * half * half,
                }
            }
            TopologyConfig::Explicit(c) => {
                let hosts: u128 = c.hosts.iter().map(|h| h.count as u128).sum();
                let fabric: u128 = c.links.iter().map(|l| l.count as u128).sum();
                let tors = c
                    .hosts
                    .iter()
                    .map(|h| h.attach.as_str())
                    .collect::<std::collections::HashSet<_>>()
                    .len() as u128;
                Size {
                    hosts,
                    switches: c.switches.len() as u128,
                    cables: hosts + fabric,
                    tors,
                    fabric_ports: 2 * fabric,
                }
            }
        }
    }

    pub fn validate(&self, path: &str) -> Result<(), Error> {
        match self {
            TopologyConfig::LeafSpine(c) => {
                positive(path, "leaves", c.leaves as u64)?;
                positive(path, "spines", c.spines as u64)?;
                positive(path, "hosts_per_leaf", c.hosts_per_leaf as u64)?;
                positive(path, "links_per_pair", c.links_per_pair as u64)?;
                positive(path, "host_rate", c.host_rate.0)?;
                positive(path, "fabric_rate", c.fabric_rate.0)?;
                limits::check(
                    &format!("{path}.spines"),
                    "the uplinks per leaf (spines × links_per_pair)",
                    c.spines as u128 * c.links_per_pair as u128,
                    limits::MAX_UPLINKS_PER_LEAF,
                )?;
            }
            TopologyConfig::FatTree(c) => {
                if c.k < 2 || c.k % 2 != 0 || c.k as u64 > limits::MAX_FAT_TREE_K {
                    return Err(Error::config(
                        &format!("{path}.k"),
                        format!(
                            "k = {} is not allowed; k must be even, from 2 to {}",
                            c.k,
                            limits::MAX_FAT_TREE_K
                        ),
                    ));
                }
                positive(path, "oversubscription", c.oversubscription as u64)?;
                let half = c.k / 2;
                if c.agg_oversubscription == 0 || half % c.agg_oversubscription != 0 {
                    let allowed: Vec<String> = (1..=half)
                        .filter(|d| half % d == 0)
                        .map(|d| d.to_string())
                        .collect();
                    return Err(Error::config(
                        &format!("{path}.agg_oversubscription"),
                        format!(
                            "{} does not divide k/2 = {half}: each aggregation switch uses k/2 / agg_oversubscription core ports; allowed: {}",
                            c.agg_oversubscription,
                            allowed.join(", ")
                        ),
                    ));
                }
                positive(path, "host_rate", c.host_rate.0)?;
                positive(path, "fabric_rate", c.fabric_rate.0)?;
            }
            TopologyConfig::Explicit(c) => {
                if c.switches.is_empty() || c.hosts.is_empty() {
                    return Err(Error::config(
                        path,
                        "an explicit topology needs at least one switch and one host",
                    ));
                }
                for (i, h) in c.hosts.iter().enumerate() {
                    positive(&format!("{path}.hosts[{i}]"), "rate", h.rate.0)?;
                    positive(&format!("{path}.hosts[{i}]"), "count", h.count as u64)?;
                }
                for (i, l) in c.links.iter().enumerate() {
                    positive(&format!("{path}.links[{i}]"), "rate", l.rate.0)?;
                    positive(&format!("{path}.links[{i}]"), "count", l.count as u64)?;
                }
                for (i, s) in c.switches.iter().enumerate() {
                    parse_role(&s.role)
                        .map_err(|m| Error::config(&format!("{path}.switches[{i}].role"), m))?;
                }
            }
        }
        let sz = self.size();
        limits::check(path, "the number of hosts", sz.hosts, limits::MAX_HOSTS)?;
        limits::check(
            path,
            "the number of switches",
            sz.switches,
            limits::MAX_SWITCHES,
        )?;
        limits::check(
            path,
            "the number of links (host links included)",
            sz.cables,
            limits::MAX_LINKS,
        )?;
        limits::check(
            path,
            "the routing table (ToRs × (switches + switch-to-switch ports))",
            sz.routing_entries(),
            limits::MAX_ROUTING_ENTRIES,
        )?;
        Ok(())
    }

    /// Expand into a graph. Errors name the offending field.
    pub fn build(&self) -> Result<Graph, Error> {
        let mut b = Builder::default();
        match self {
            TopologyConfig::LeafSpine(c) => {
                let nh = c.leaves * c.hosts_per_leaf;
                for h in 0..nh {
                    b.node(format!("H{h}"), Role::Host, 0);
                }
                let leaf0 = b.nodes.len() as u32;
                for l in 0..c.leaves {
                    b.node(format!("L{l}"), Role::Leaf, 0);
                }
                let spine0 = b.nodes.len() as u32;
                for s in 0..c.spines {
                    b.node(format!("S{s}"), Role::Spine, 0);
                }
                for h in 0..nh {
                    b.cable(
                        h,
                        leaf0 + h / c.hosts_per_leaf,
                        c.host_rate.0,
                        c.host_delay.0,
                    );
                }
                // Leaf ports: hosts first, then uplinks spine-major (S0#0, S0#1, S1#0, ...).
                for l in 0..c.leaves {
                    for s in 0..c.spines {
                        for _ in 0..c.links_per_pair {
                            b.cable(leaf0 + l, spine0 + s, c.fabric_rate.0, c.fabric_delay.0);
                        }
                    }
                }
                b.finish(nh)
            }
            TopologyConfig::FatTree(c) => {
                let k = c.k;
                let half = k / 2;
                let hpe = half * c.oversubscription;
                let nh = k * half * hpe;
                for h in 0..nh {
                    b.node(format!("H{h}"), Role::Host, h / (half * hpe));
                }
                let edge0 = b.nodes.len() as u32;
                for p in 0..k {
                    for e in 0..half {
                        b.node(format!("E{p}_{e}"), Role::Leaf, p);
                    }
                }
                let agg0 = b.nodes.len() as u32;
                for p in 0..k {
                    for a in 0..half {
                        b.node(format!("A{p}_{a}"), Role::Spine, p);
                    }
                }
                // Core ports used per aggregation switch.
                let used = half / c.agg_oversubscription;
                let core0 = b.nodes.len() as u32;
                for cidx in 0..half * used {
                    b.node(format!("C{cidx}"), Role::Core, 0);
                }
                for h in 0..nh {
                    b.cable(h, edge0 + h / hpe, c.host_rate.0, c.delay.0);
                }
                for p in 0..k {
                    for e in 0..half {
                        for a in 0..half {
                            b.cable(
                                edge0 + p * half + e,
                                agg0 + p * half + a,
                                c.fabric_rate.0,
                                c.delay.0,
                            );
                        }
                    }
                }
                // Aggregation switch a of every pod connects to cores a*used .. a*used+used-1
                // (core group a).
                for p in 0..k {
                    for a in 0..half {
                        for j in 0..used {
                            b.cable(
                                agg0 + p * half + a,
                                core0 + a * used + j,
                                c.fabric_rate.0,
                                c.delay.0,
                            );
                        }
                    }
                }
                b.finish(nh)
            }
            TopologyConfig::Explicit(c) => {
                let mut names: HashMap<String, u32> = HashMap::new();
                let mut nh = 0u32;
                // Hosts first.
                let mut host_attach = vec![];
                for (i, h) in c.hosts.iter().enumerate() {
                    for j in 0..h.count {
                        let name = if h.count > 1 {
                            format!("{}{}", h.name, j)
                        } else {
                            h.name.clone()
                        };
                        if names.contains_key(&name) {
                            return Err(Error::config(
                                &format!("topology.hosts[{i}].name"),
                                format!("'{name}' is used twice"),
                            ));
                        }
                        let id = b.node(name.clone(), Role::Host, 0);
                        names.insert(name, id);
                        host_attach.push((id, i));
                        nh += 1;
                    }
                }
                for (i, s) in c.switches.iter().enumerate() {
                    if names.contains_key(&s.name) {
                        return Err(Error::config(
                            &format!("topology.switches[{i}].name"),
                            format!("'{}' is used twice", s.name),
                        ));
                    }
                    let role = parse_role(&s.role)
                        .map_err(|m| Error::config(&format!("topology.switches[{i}].role"), m))?;
                    let id = b.node(s.name.clone(), role, 0);
                    names.insert(s.name.clone(), id);
                }
                for (id, i) in host_attach {
                    let h = &c.hosts[i];
                    let sw = *names.get(&h.attach).ok_or_else(|| {
                        Error::config(
                            &format!("topology.hosts[{i}].attach"),
                            format!("there is no switch named '{}'", h.attach),
                        )
                    })?;
                    if sw < nh {
                        return Err(Error::config(
                            &format!("topology.hosts[{i}].attach"),
                            format!("'{}' is a host; hosts attach to switches", h.attach),
                        ));
                    }
                    if b.nodes[sw as usize].role != Role::Leaf {
                        return Err(Error::config(
                            &format!("topology.hosts[{i}].attach"),
                            format!(
                                "'{}' is a {} switch; hosts attach only to switches of role \"leaf\" (or \"edge\", \"tor\")",
                                h.attach,
                                if b.nodes[sw as usize].role == Role::Spine { "spine" } else { "core" }
                            ),
                        ));
                    }
                    b.cable(id, sw, h.rate.0, h.delay.0);
                }
                for (i, l) in c.links.iter().enumerate() {
                    let find = |n: &str, f: &str| -> Result<u32, Error> {
                        let id = *names.get(n).ok_or_else(|| {
                            Error::config(
                                &format!("topology.links[{i}].{f}"),
                                format!("there is no switch named '{n}'"),
                            )
                        })?;
                        if id < nh {
                            return Err(Error::config(
                                &format!("topology.links[{i}].{f}"),
                                format!("'{n}' is a host; hosts are attached through `hosts`"),
                            ));
                        }
                        Ok(id)
                    };
                    let (a, bb) = (find(&l.a, "a")?, find(&l.b, "b")?);
                    if a == bb {
                        return Err(Error::config(
                            &format!("topology.links[{i}]"),
                            "a link must join two different switches",
                        ));
                    }
                    for _ in 0..l.count {
                        b.cable(a, bb, l.rate.0, l.delay.0);
                    }
                }
                b.finish(nh)
            }
        }
    }
}

fn parse_role(s: &str) -> Result<Role, String> {
    match s {
        "leaf" | "edge" | "tor" => Ok(Role::Leaf),
        "spine" | "agg" | "aggregation" => Ok(Role::Spine),
        "core" => Ok(Role::Core),
        other => Err(format!(
            "role '{other}' is not allowed; allowed: leaf (edge), spine (agg), core"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ls(leaves: u32, spines: u32, hpl: u32, lpp: u32) -> TopologyConfig {
        TopologyConfig::LeafSpine(LeafSpineConfig {
            leaves,
            spines,
            hosts_per_leaf: hpl,
            host_rate: Rate(10_000_000_000),
            fabric_rate: Rate(40_000_000_000),
            links_per_pair: lpp,
            host_delay: us1(),
            fabric_delay: us1(),
        })
    }

    fn ft(k: u32, edge: u32, agg: u32) -> TopologyConfig {
        TopologyConfig::FatTree(FatTreeConfig {
            k,
            oversubscription: edge,
            agg_oversubscription: agg,
            host_rate: Rate(1),
            fabric_rate: Rate(1),
            delay: us1(),
        })
    }

    #[test]
    fn sizes_table() {
        // (config, hosts, switches, directed links)
        let cases = [
            (ls(2, 2, 32, 2), 64, 4, 2 * (64 + 8)),
            (ls(16, 8, 8, 1), 128, 24, 2 * (128 + 128)),
            (ft(4, 1, 1), 16, 20, 2 * (16 + 16 + 16)),
            (ft(4, 2, 1), 32, 20, 2 * (32 + 16 + 16)),
            // Aggregation oversubscription 2: each aggregation switch uses 1 of its 2 core
            // ports, and only the 2 cores with links are built.
            (ft(4, 1, 2), 16, 18, 2 * (16 + 16 + 8)),
            // The Expeditus Fig. 2 fabric, 4:1 as 2:1 at each layer: 16 hosts per edge, 4 of 8
            // core ports per aggregation switch, 32 cores.
            (
                ft(16, 2, 2),
                2048,
                256 + 32,
                2 * (2048 + 16 * 64 + 16 * 8 * 4),
            ),
        ];
        for (c, h, s, l) in cases {
            let g = c.build().unwrap();
            assert_eq!(g.n_hosts, h);
            assert_eq!(g.nodes.len() as u32 - g.n_hosts, s);
            assert_eq!(g.links.len(), l);
            for (i, d) in g.links.iter().enumerate() {
                assert_eq!(g.links[d.reverse as usize].reverse as usize, i);
            }
        }
    }

    #[test]
    fn oversubscribed_fat_tree_ports_and_capacities() {
        // Expeditus Fig. 2's two splits of 4:1 (issue 22): (edge, agg) -> ports per edge,
        // aggregation and core switch, and the capacity of each layer boundary, upward, in
        // units of one 10 Gbps link: hosts' links, edge uplinks, aggregation-to-core links.
        // Overall oversubscription = hosts' capacity / core capacity = 4 in both.
        let rate = 10_000_000_000u64;
        for (edge, agg, ports, caps) in [
            (2u32, 2u32, (24, 12, 16), (2048u64, 1024u64, 512u64)),
            (4, 1, (40, 16, 16), (4096, 1024, 1024)),
            (1, 1, (16, 16, 16), (1024, 1024, 1024)),
        ] {
            let mut c = ft(16, edge, agg);
            if let TopologyConfig::FatTree(f) = &mut c {
                f.host_rate = Rate(rate);
                f.fabric_rate = Rate(rate);
            }
            let g = c.build().unwrap();
            let role_of = |n: u32| g.nodes[n as usize].role;
            let mut up = [0u64; 3];
            for l in &g.links {
                let i = match (role_of(l.from), role_of(l.to)) {
                    (Role::Host, Role::Leaf) => 0,
                    (Role::Leaf, Role::Spine) => 1,
                    (Role::Spine, Role::Core) => 2,
                    _ => continue,
                };
                up[i] += l.rate_bps;
            }
            let want = [caps.0 * rate, caps.1 * rate, caps.2 * rate];
            assert_eq!(up, want, "edge {edge} agg {agg}");
            assert_eq!(up[0] / up[2], (edge * agg) as u64);
            let h = g.n_hosts as u64;
            assert_eq!(h, caps.0);
            for n in &g.nodes {
                let p = n.ports.len() as u32;
                match n.role {
                    Role::Leaf => assert_eq!(p, ports.0, "{}", n.name),
                    Role::Spine => assert_eq!(p, ports.1, "{}", n.name),
                    Role::Core => assert_eq!(p, ports.2, "{}", n.name),
                    _ => assert_eq!(p, 1, "{}", n.name),
                }
            }
            let cores = g.nodes.iter().filter(|n| n.role == Role::Core).count() as u64;
            assert_eq!(cores, 64 / agg as u64);
        }
    }

    #[test]
    fn aggregation_oversubscription_wires_each_core_group_to_its_position() {
        // k = 8, 4 aggregation switches per pod, 2 of 4 core ports used: core group a is
        // cores 2a and 2a + 1, joined to aggregation switch a of every pod and nothing else.
        let g = ft(8, 1, 2).build().unwrap();
        let cores: Vec<u32> = (0..g.nodes.len() as u32)
            .filter(|&n| g.nodes[n as usize].role == Role::Core)
            .collect();
        assert_eq!(cores.len(), 8);
        for (i, &c) in cores.iter().enumerate() {
            let aggs: Vec<String> = g.nodes[c as usize]
                .ports
                .iter()
                .map(|&l| g.nodes[g.links[l as usize].to as usize].name.clone())
                .collect();
            let want: Vec<String> = (0..8).map(|p| format!("A{p}_{}", i / 2)).collect();
            assert_eq!(aggs, want, "core C{i}");
        }
        for n in &g.nodes {
            if n.role == Role::Spine {
                let up = n
                    .ports
                    .iter()
                    .filter(|&&l| g.nodes[g.links[l as usize].to as usize].role == Role::Core)
                    .count();
                assert_eq!(up, 2, "{}", n.name);
            }
        }
    }

    #[test]
    fn fat_tree_oversubscription_must_be_allowed() {
        // (k, edge, agg) -> the field named in the error, or None when valid.
        let cases = [
            (16, 2, 2, None),
            (16, 1, 8, None),
            (
                16,
                1,
                3,
                Some(("topology.agg_oversubscription", "1, 2, 4, 8")),
            ),
            (
                16,
                1,
                16,
                Some(("topology.agg_oversubscription", "k/2 = 8")),
            ),
            (
                12,
                1,
                4,
                Some(("topology.agg_oversubscription", "1, 2, 3, 6")),
            ),
            (16, 1, 0, Some(("topology.agg_oversubscription", "divide"))),
            (16, 0, 1, Some(("topology.oversubscription", "> 0"))),
            (2, 1, 1, None),
        ];
        for (k, e, a, want) in cases {
            let r = ft(k, e, a).validate("topology");
            match (r, want) {
                (Ok(()), None) => {}
                (Err(Error::Config { path, msg }), Some((field, word))) => {
                    assert_eq!(path, field, "k={k} e={e} a={a}: {msg}");
                    assert!(msg.contains(word), "k={k} e={e} a={a}: {msg}");
                }
                (r, w) => panic!("k={k} e={e} a={a}: got {r:?}, want {w:?}"),
            }
        }
    }

    #[test]
    fn resolve_links_by_name() {
        let g = ls(2, 2, 1, 2).build().unwrap();
        assert_eq!(g.resolve_link("L1-S1#*", "f").unwrap().len(), 2);
        let l = g.resolve_link("S1->L1#1", "f").unwrap()[0];
        assert_eq!(g.link_name(l), "S1->L1#1");
        let e = g
            .resolve_link("L1-S9", "failures[0].link")
            .unwrap_err()
            .to_string();
        assert!(e.contains("failures[0].link") && e.contains("S9"), "{e}");
        let e = g.resolve_link("L1-S1#2", "f").unwrap_err().to_string();
        assert!(e.contains("only 2 links"), "{e}");
    }

    #[test]
    fn disconnected_explicit_topology_is_rejected() {
        let c = TopologyConfig::Explicit(ExplicitConfig {
            switches: vec![
                SwitchSpec {
                    name: "L0".into(),
                    role: "leaf".into(),
                },
                SwitchSpec {
                    name: "L1".into(),
                    role: "leaf".into(),
                },
            ],
            hosts: vec![
                HostSpec {
                    name: "A".into(),
                    attach: "L0".into(),
                    rate: Rate(1),
                    delay: us1(),
                    count: 1,
                },
                HostSpec {
                    name: "B".into(),
                    attach: "L1".into(),
                    rate: Rate(1),
                    delay: us1(),
                    count: 1,
                },
            ],
            links: vec![],
        });
        let e = c.build().unwrap_err().to_string();
        assert!(e.contains("disconnected"), "{e}");
    }
}
