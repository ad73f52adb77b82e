//! Load-balancing schemes, one file each.
//!
//! A scheme is a [`Balancer`]: the simulation calls it at every switch that has more than one
//! shortest-path next hop for a packet (`choose`), and, on the links where the scheme asks for
//! them (`switch_hooks`), on every packet arriving at or leaving a switch (to read and write
//! overlay fields, as CONGA's leaves and spines do), and whenever the routes are computed
//! (`on_routes`, as WCMP's weights need).
//! It sees the switch's ports (queues, DREs) through [`LbView`] and keeps its own state.
//! Registration: one variant of [`SchemeConfig`] (serde tag `name` is the scheme's name in
//! scenarios, tables and plots) and its arm in [`SchemeConfig::build`]. The compiler's
//! exhaustive `match` is the registry; there is no other list of schemes.

mod clos;
mod conga;
mod drill;
mod ecmp;
mod expeditus;
mod expeditus_socc;
mod flowlet;
mod letflow;
mod path_oracle;
mod spray;
#[cfg(test)]
mod testutil;
mod wcmp;

pub use crate::host::bw_oracle::BwOracleConfig;
pub use crate::host::clove::{CloveConfig, CloveVariant};
pub use crate::host::eman::EmanConfig;
pub use crate::host::flowbender::FlowBenderConfig;
pub use crate::host::hermes::HermesConfig;
pub use crate::host::presto::PrestoConfig;
pub use crate::transport::mptcp::MptcpConfig;
pub use conga::{CongaConfig, CongaVariant};
pub use drill::DrillConfig;
pub use ecmp::{Ecmp, EcmpConfig};
pub use expeditus::ExpeditusConfig;
pub use expeditus_socc::ExpeditusSoccConfig;
pub use letflow::LetFlowConfig;
pub use spray::SprayConfig;
pub use wcmp::WcmpConfig;

use crate::error::Error;
use crate::net::dre::DreParams;
use crate::net::packet::Packet;
use crate::net::port::Port;
use crate::net::routing::Routes;
use crate::net::topology::Graph;
use crate::units::Time;
use schemars::JsonSchema;

/// What a scheme may see of the network at a decision.
pub struct LbView<'a> {
    pub now: Time,
    pub g: &'a Graph,
    pub routes: &'a Routes,
    pub ports: &'a mut [Port],
    pub dre: &'a DreParams,
}

/// Which switch hooks a scheme needs on a directed link ([`Balancer::switch_hooks`]).
pub mod hooks {
    /// [`super::Balancer::on_arrival`] when a packet arrives over the link at a switch.
    pub const ARRIVAL: u8 = 1;
    /// [`super::Balancer::on_departure`] when a switch queues a packet on the link.
    pub const DEPARTURE: u8 = 2;
    pub const BOTH: u8 = ARRIVAL | DEPARTURE;
}

/// Where the overlay header is present on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverlayMode {
    /// No encapsulation.
    None,
    /// Added by the source ToR, removed by the destination ToR (CONGA).
    Leaf,
}

pub trait Balancer {
    /// Pick one of `cands` (at least two directed links) for `pkt` at switch `sw`.
    fn choose(&mut self, v: &mut LbView, sw: u32, pkt: &mut Packet, cands: &[u32]) -> u32;
    /// The next hop [`Balancer::choose`] would pick, when it depends on the packet and the
    /// routes alone: for prefetching the output port before the packet arrives, and `forward`
    /// uses it instead of `choose` (checked against the tables in debug builds). Not asked of
    /// schemes with switch hooks, whose `on_arrival` runs before the choice.
    fn predict(&self, _sw: u32, _pkt: &Packet, _cands: &[u32]) -> Option<u32> {
        None
    }
    /// Start loading what [`Balancer::choose`] will read of the scheme's own state for `pkt`
    /// at `sw` (a hint: two events before the packet arrives with the look-ahead window, one
    /// without; only for schemes with switch hooks, and only where `choose` will be asked:
    /// with two candidates or more).
    fn prefetch(&self, _sw: u32, _pkt: &Packet) {}
    /// Whether the scheme reads the ports' DREs (when none does, the simulator skips updating
    /// them: nothing else can observe them).
    fn reads_dre(&self) -> bool {
        false
    }
    /// Which of [`Balancer::on_arrival`] and [`Balancer::on_departure`] the scheme needs for
    /// packets crossing directed link `l` (a mask of [`hooks`]; default none). Asked once per
    /// link when the world is built; a hook is not called where the mask leaves it out, so a
    /// scheme may leave out only links where the hook would do nothing (the simulator's tests
    /// compare runs with every hook called). At FT2048 half the hooks Expeditus would get are
    /// of this kind: skipping them saves about 2% of the run's instructions.
    fn switch_hooks(&self, _g: &Graph, _l: u32) -> u8 {
        0
    }
    /// A packet arrived at switch `sw` over `in_link`.
    fn on_arrival(&mut self, _v: &mut LbView, _sw: u32, _in_link: u32, _pkt: &mut Packet) {}
    /// A packet is about to be queued on `out_link` of switch `sw`.
    fn on_departure(&mut self, _v: &mut LbView, _sw: u32, _out_link: u32, _pkt: &mut Packet) {}
    fn overlay(&self) -> OverlayMode {
        OverlayMode::None
    }
    /// The routes were computed: at the start, and whenever a link change takes effect
    /// (after `routing.detection_delay`; rate changes too). `v.routes` are the new routes,
    /// `v.ports` carry the links' current rates.
    fn on_routes(&mut self, _v: &mut LbView) {}
    /// Header bytes the scheme adds to every packet on directed link `l` (counted in the
    /// ideal FCT), e.g. Expeditus's congestion stamp on southbound links.
    fn link_header_bytes(&self, _g: &Graph, _l: u32) -> u32 {
        0
    }
    /// The scheme's own counters for the summary (`lb` in summary.json), e.g. CONGA's flowlets.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

crate::tagged_enum! {
    /// The load-balancing scheme of a run (`[scheme]`, selected by `name`).
    pub enum SchemeConfig tag = "name" {
        /// Per-flow ECMP: hash of the 5-tuple (salted per switch) picks the next hop.
        "ecmp" => Ecmp(EcmpConfig),
        /// Per-packet random spraying over all shortest-path next hops.
        "spray" => Spray(SprayConfig),
        /// CONGA (T_fl = 500 µs): flowlets placed at the source leaf by leaf-to-leaf congestion feedback.
        "conga" => Conga(CongaConfig),
        /// CONGA with T_fl = 13 ms (flowlets effectively disabled: per-flow CONGA).
        "conga-flow" => CongaFlow(CongaConfig),
        /// Local congestion-aware: CONGA's decision with the remote metrics ignored (CONGA §2.4).
        "local" => Local(CongaConfig),
        /// LetFlow: flowlets (T_fl = 500 µs) at every switch, each on a uniformly random next hop.
        "letflow" => LetFlow(LetFlowConfig),
        /// DRILL(d, m): per packet, the shortest queue among d random ports and m remembered ones.
        "drill" => Drill(DrillConfig),
        /// WCMP: per-flow hashing weighted by the capacity behind each next hop.
        "wcmp" => Wcmp(WcmpConfig),
        /// MPTCP in the hosts (n subflows, LIA), ECMP in the fabric (CONGA §5's baseline).
        "mptcp" => Mptcp(MptcpConfig),
        /// EMAN: per-packet weighted round robin at the hosts over each pair's paths, weighted by
        /// available bandwidth measured by the receiver (on ECN and by probes); ECMP on the outer header.
        "eman" => Eman(EmanConfig),
        /// The bandwidth oracle ("Bw-based", EMAN §II-B): per packet, weighted round robin in
        /// proportion to each path's current bottleneck capacity; ECMP on the outer header.
        "bw-oracle" => BwOracle(BwOracleConfig),
        /// Expeditus as the seed paper describes it: egress-queue occupancy, one hop at a time
        /// (stamps, SCITs with a timeout), a two-stage choice of the least sum on the handshake.
        "expeditus" => Expeditus(ExpeditusConfig),
        /// Expeditus as its authors' later code runs it: in and out link-load meters per port,
        /// the least max, the leaf-spine choice on the SYN-ACK at the sender's leaf.
        "expeditus-socc" => ExpeditusSocc(ExpeditusSoccConfig),
        /// At SYN time, the path whose most loaded link is least loaded, by global knowledge
        /// (the Expeditus authors' OPTIMAL baseline), pinned for the connection.
        "path-oracle" => PathOracle(ExpeditusSoccConfig),
        /// FlowBender: ECMP in the fabric; a sender whose ECN-marked fraction exceeds T for N RTTs rehashes its flow.
        "flowbender" => FlowBender(FlowBenderConfig),
        /// Clove-ECN (EMAN's simulation of it): edge flowlets by weighted round robin over each pair's
        /// paths, a path's weight cut to 2/3 on relayed ECN, ECN hidden from TCP until every path is marked.
        "clove" => Clove(CloveConfig),
        /// Clove as the Hermes authors' ns-3 code runs it: weighted random flowlets, no ECN hiding.
        "clove-ns3" => CloveNs3(CloveConfig),
        /// Hermes: per-path ECN fraction, RTT and local rate at the hosts; new flows on the least-loaded
        /// good path; a flow moves only off a congested or failed path, cautiously.
        "hermes" => Hermes(HermesConfig),
        /// Presto: flowcells of at most 64 KB round robin over each pair's paths; the receiver reorders.
        "presto" => Presto(PrestoConfig),
    }
}

impl Default for SchemeConfig {
    fn default() -> Self {
        SchemeConfig::Ecmp(EcmpConfig {})
    }
}

/// What a scheme is built from.
pub struct BuildCtx<'a> {
    pub g: &'a Graph,
    pub seed: u64,
    pub ecmp_salt: bool,
    /// The transport's receive window (an MPTCP connection's default receive buffer).
    pub rcv_window_bytes: u64,
}

/// A built scheme: the switches' balancer, and what a host-side scheme adds to the hosts.
pub struct SchemeParts {
    pub lb: Box<dyn Balancer>,
    /// An edge shim between each host's transport and its NIC.
    pub shim: Option<Box<dyn crate::host::shim::EdgeShim>>,
    /// The MPTCP transport in place of TCP.
    pub mptcp: Option<crate::transport::mptcp::MptcpParams>,
}

impl SchemeParts {
    /// An edge scheme: its shim in the hosts, ECMP on the outer header in the fabric.
    fn edge(ctx: &BuildCtx, shim: Box<dyn crate::host::shim::EdgeShim>) -> SchemeParts {
        SchemeParts {
            lb: Box::new(Ecmp::outer(ctx)),
            shim: Some(shim),
            mptcp: None,
        }
    }
}

impl SchemeConfig {
    pub fn validate(&self, path: &str) -> Result<(), Error> {
        match self {
            SchemeConfig::Ecmp(_)
            | SchemeConfig::Spray(_)
            | SchemeConfig::Wcmp(_)
            | SchemeConfig::BwOracle(_) => Ok(()),
            SchemeConfig::Conga(c) | SchemeConfig::CongaFlow(c) | SchemeConfig::Local(c) => {
                c.validate(path)
            }
            SchemeConfig::LetFlow(c) => c.validate(path),
            SchemeConfig::Drill(c) => c.validate(path),
            SchemeConfig::Mptcp(c) => c.validate(path),
            SchemeConfig::Eman(c) => c.validate(path),
            SchemeConfig::Expeditus(c) => c.validate(path),
            SchemeConfig::ExpeditusSocc(c) | SchemeConfig::PathOracle(c) => c.validate(path),
            SchemeConfig::FlowBender(c) => c.validate(path),
            SchemeConfig::Clove(c) | SchemeConfig::CloveNs3(c) => c.validate(path),
            SchemeConfig::Hermes(c) => c.validate(path),
            SchemeConfig::Presto(c) => c.validate(path),
        }
    }
    /// Whether the scheme reacts to ECN marks, so that a run without them would silently be a
    /// different scheme (FlowBender would be ECMP, Clove-ECN edge flowlets, Hermes RTT alone).
    pub fn needs_ecn(&self) -> bool {
        matches!(
            self,
            SchemeConfig::FlowBender(_)
                | SchemeConfig::Clove(_)
                | SchemeConfig::CloveNs3(_)
                | SchemeConfig::Hermes(_)
        )
    }
    /// Whether the scheme chooses a connection's path on its TCP handshake.
    pub fn chooses_on_handshake(&self) -> bool {
        matches!(
            self,
            SchemeConfig::Expeditus(_)
                | SchemeConfig::ExpeditusSocc(_)
                | SchemeConfig::PathOracle(_)
        )
    }
    /// Whether the scheme can run on `topo`; the error names the topology field and says
    /// what the scheme needs.
    pub fn check_topology(&self, topo: &crate::net::topology::TopologyConfig) -> Result<(), Error> {
        if self.chooses_on_handshake() {
            clos::check_topology(topo, &self.name())
        } else {
            Ok(())
        }
    }
    /// Build the scheme: its switch balancer, and for host-side schemes its edge shim or its
    /// transport.
    pub fn build(&self, ctx: &BuildCtx) -> SchemeParts {
        let lb: Box<dyn Balancer> = match self {
            SchemeConfig::Ecmp(c) => Box::new(c.build(ctx)),
            SchemeConfig::Spray(c) => Box::new(c.build(ctx)),
            SchemeConfig::Conga(c) => Box::new(c.build(ctx, CongaVariant::Conga)),
            SchemeConfig::CongaFlow(c) => Box::new(c.build(ctx, CongaVariant::Flow)),
            SchemeConfig::Local(c) => Box::new(c.build(ctx, CongaVariant::Local)),
            SchemeConfig::LetFlow(c) => Box::new(c.build(ctx)),
            SchemeConfig::Drill(c) => Box::new(c.build(ctx)),
            SchemeConfig::Wcmp(c) => Box::new(c.build(ctx)),
            SchemeConfig::Expeditus(c) => Box::new(c.build(ctx)),
            SchemeConfig::ExpeditusSocc(c) => Box::new(c.build(ctx)),
            SchemeConfig::PathOracle(c) => Box::new(c.build_oracle(ctx)),
            SchemeConfig::Mptcp(c) => {
                return SchemeParts {
                    lb: Box::new(EcmpConfig {}.build(ctx)),
                    shim: None,
                    mptcp: Some(c.params(ctx.rcv_window_bytes)),
                }
            }
            SchemeConfig::Eman(c) => return SchemeParts::edge(ctx, Box::new(c.build())),
            SchemeConfig::BwOracle(c) => return SchemeParts::edge(ctx, Box::new(c.build())),
            SchemeConfig::Clove(c) => {
                return SchemeParts::edge(ctx, Box::new(c.build(ctx.seed, CloveVariant::Ecn)))
            }
            SchemeConfig::CloveNs3(c) => {
                return SchemeParts::edge(ctx, Box::new(c.build(ctx.seed, CloveVariant::Ns3)))
            }
            SchemeConfig::Hermes(c) => return SchemeParts::edge(ctx, Box::new(c.build(ctx.seed))),
            SchemeConfig::Presto(c) => return SchemeParts::edge(ctx, Box::new(c.build(ctx.seed))),
            SchemeConfig::FlowBender(c) => {
                return SchemeParts {
                    lb: Box::new(EcmpConfig {}.build(ctx)),
                    shim: Some(Box::new(c.build())),
                    mptcp: None,
                }
            }
        };
        SchemeParts {
            lb,
            shim: None,
            mptcp: None,
        }
    }
    /// Bytes an edge scheme's hosts add to every packet they tunnel (0 for the others).
    pub fn host_encap_bytes(&self) -> u32 {
        match self {
            SchemeConfig::Eman(_)
            | SchemeConfig::BwOracle(_)
            | SchemeConfig::Clove(_)
            | SchemeConfig::CloveNs3(_)
            | SchemeConfig::Hermes(_)
            | SchemeConfig::Presto(_) => crate::host::tunnel::ENCAP_BYTES,
            _ => 0,
        }
    }
    /// The scheme's name as written in scenarios.
    pub fn name(&self) -> String {
        let v = serde_json::to_value(self).expect("scheme serialises");
        v["name"].as_str().unwrap_or("?").to_string()
    }
    /// Entries of the tables the scheme allocates for a fabric of `leaves` leaves and
    /// `switches` switches with at most `uplinks` uplinks per leaf (bounded by
    /// `limits::MAX_SCHEME_TABLE_ENTRIES`).
    pub fn table_entries(&self, leaves: u128, switches: u128, uplinks: u128) -> u128 {
        match self {
            SchemeConfig::Ecmp(_)
            | SchemeConfig::Spray(_)
            | SchemeConfig::Drill(_)
            | SchemeConfig::Wcmp(_)
            | SchemeConfig::Mptcp(_)
            | SchemeConfig::FlowBender(_) => 0,
            // Per communicating host pair, made on its first packet: bounded by the flows.
            SchemeConfig::Eman(_)
            | SchemeConfig::BwOracle(_)
            | SchemeConfig::Clove(_)
            | SchemeConfig::CloveNs3(_)
            | SchemeConfig::Hermes(_)
            | SchemeConfig::Presto(_) => 0,
            // Per-link state (the link count has its own limit) and flow entries, one per
            // connection and switch on its path (the flow count has its own limit).
            SchemeConfig::Expeditus(_)
            | SchemeConfig::ExpeditusSocc(_)
            | SchemeConfig::PathOracle(_) => 0,
            SchemeConfig::Conga(c) | SchemeConfig::CongaFlow(c) | SchemeConfig::Local(c) => {
                leaves * c.flowlet_table_size as u128 + leaves * leaves * uplinks.max(1)
            }
            SchemeConfig::LetFlow(c) => switches * c.flowlet_table_size as u128,
        }
    }
    /// All scheme names, read from this enum's schema.
    pub fn names() -> Vec<String> {
        tag_names::<SchemeConfig>("name")
    }
}

/// The values of the tag field `tag` of an internally tagged enum, from its JSON Schema.
pub fn tag_names<T: JsonSchema>(tag: &str) -> Vec<String> {
    let schema = serde_json::to_value(schemars::schema_for!(T)).expect("schema");
    let variants = schema["oneOf"].as_array().cloned().unwrap_or_default();
    variants
        .iter()
        .filter_map(|v| v["properties"][tag]["enum"].as_array())
        .flatten()
        .filter_map(|t| t.as_str().map(str::to_string))
        .collect()
}

/// Every switch's ECMP salt.
pub fn ecmp_salts(ctx: &BuildCtx) -> Vec<u64> {
    ecmp::salts(ctx)
}

/// Per-switch ECMP salt: a stable function of the switch id (0 when salting is off).
pub fn ecmp_salt(sw: u32, on: bool) -> u64 {
    if on {
        crate::rng::hash64(0xEC_3B00 ^ ((sw as u64) << 20))
    } else {
        0
    }
}

/// The per-flow hash of `pkt` at a switch with `salt` (5-tuple and overlay path label).
#[inline]
pub fn flow_hash(pkt: &Packet, salt: u64) -> u64 {
    let key = pkt.five_tuple() ^ ((pkt.overlay.path as u64) << 32);
    crate::rng::hash64(key ^ salt)
}

/// ECMP next hop among `cands` for a host-encapsulated packet: the outer header alone (source
/// and destination host, outer source port) is hashed, with the switch's `salt`.
#[inline]
pub fn ecmp_outer_pick(src: u32, dst: u32, port: u16, salt: u64, cands: &[u32]) -> u32 {
    let key = ((src as u64) << 40) ^ ((dst as u64) << 16) ^ ((port as u64) << 48) ^ 0x0ED6E;
    let h = crate::rng::hash64(key ^ salt);
    cands[((h >> 32) * cands.len() as u64 >> 32) as usize]
}

/// ECMP next hop for `pkt` among `cands` at a switch with `salt`.
#[inline]
pub fn ecmp_pick(pkt: &Packet, salt: u64, cands: &[u32]) -> u32 {
    let h = flow_hash(pkt, salt);
    cands[((h >> 32) * cands.len() as u64 >> 32) as usize]
}

/// One random stream per node, derived from the seed and the node id (schemes that draw at
/// every switch: a switch's draws do not depend on the others').
pub fn switch_rngs(ctx: &BuildCtx) -> Vec<crate::rng::Rng> {
    (0..ctx.g.nodes.len() as u64)
        .map(|n| crate::rng::Rng::new(ctx.seed, crate::rng::stream::SCHEME + 1 + n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn names_come_from_the_enum() {
        let n = SchemeConfig::names();
        assert!(
            n.iter().any(|x| x == "ecmp") && n.iter().any(|x| x == "spray"),
            "{n:?}"
        );
        assert_eq!(SchemeConfig::default().name(), "ecmp");
    }
    #[test]
    fn unknown_scheme_is_rejected_with_the_allowed_names() {
        let e = serde_json::from_str::<SchemeConfig>("{\"name\": \"magic\"}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("magic") && e.contains("ecmp"), "{e}");
    }
}
