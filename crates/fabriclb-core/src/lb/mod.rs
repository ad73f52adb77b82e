//! Load-balancing schemes, one file each.
//!
//! A scheme is a [`Balancer`]: the simulation calls it at every switch that has more than one
//! shortest-path next hop for a packet (`choose`), and, if the scheme asks for them, on every
//! packet arriving at or leaving a switch (to read and write overlay fields, as CONGA's leaves
//! and spines do). It sees the switch's ports (queues, DREs) through [`LbView`] and keeps its
//! own state. Registration: one variant of [`SchemeConfig`] (serde tag `name` is the scheme's
//! name in scenarios, tables and plots) and its arm in [`SchemeConfig::build`]. The compiler's
//! exhaustive `match` is the registry; there is no other list of schemes.

mod conga;
mod ecmp;
mod spray;

pub use conga::{CongaConfig, CongaVariant};
pub use ecmp::EcmpConfig;
pub use spray::SprayConfig;

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
    /// The next hop [`Balancer::choose`] would pick, when it depends on the packet alone: a
    /// hint for prefetching the output port one event early, never used to forward.
    fn predict(&self, _sw: u32, _pkt: &Packet, _cands: &[u32]) -> Option<u32> {
        None
    }
    /// Whether the scheme reads the ports' DREs (when none does, the simulator skips updating
    /// them: nothing else can observe them).
    fn reads_dre(&self) -> bool {
        false
    }
    /// Whether [`Balancer::on_arrival`] and [`Balancer::on_departure`] should be called.
    fn wants_switch_hooks(&self) -> bool {
        false
    }
    /// A packet arrived at switch `sw` over `in_link`.
    fn on_arrival(&mut self, _v: &mut LbView, _sw: u32, _in_link: u32, _pkt: &mut Packet) {}
    /// A packet is about to be queued on `out_link` of switch `sw`.
    fn on_departure(&mut self, _v: &mut LbView, _sw: u32, _out_link: u32, _pkt: &mut Packet) {}
    fn overlay(&self) -> OverlayMode {
        OverlayMode::None
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
}

impl SchemeConfig {
    pub fn validate(&self, _path: &str) -> Result<(), Error> {
        match self {
            SchemeConfig::Ecmp(_) | SchemeConfig::Spray(_) => Ok(()),
            SchemeConfig::Conga(c) | SchemeConfig::CongaFlow(c) | SchemeConfig::Local(c) => {
                c.validate(_path)
            }
        }
    }
    pub fn build(&self, ctx: &BuildCtx) -> Box<dyn Balancer> {
        match self {
            SchemeConfig::Ecmp(c) => Box::new(c.build(ctx)),
            SchemeConfig::Spray(c) => Box::new(c.build(ctx)),
            SchemeConfig::Conga(c) => Box::new(c.build(ctx, CongaVariant::Conga)),
            SchemeConfig::CongaFlow(c) => Box::new(c.build(ctx, CongaVariant::Flow)),
            SchemeConfig::Local(c) => Box::new(c.build(ctx, CongaVariant::Local)),
        }
    }
    /// The scheme's name as written in scenarios.
    pub fn name(&self) -> String {
        let v = serde_json::to_value(self).expect("scheme serialises");
        v["name"].as_str().unwrap_or("?").to_string()
    }
    /// Entries of the tables the scheme allocates for a fabric of `leaves` leaves with at most
    /// `uplinks` uplinks each (bounded by `limits::MAX_SCHEME_TABLE_ENTRIES`).
    pub fn table_entries(&self, leaves: u128, uplinks: u128) -> u128 {
        match self {
            SchemeConfig::Ecmp(_) | SchemeConfig::Spray(_) => 0,
            SchemeConfig::Conga(c) | SchemeConfig::CongaFlow(c) | SchemeConfig::Local(c) => {
                leaves * c.flowlet_table_size as u128 + leaves * leaves * uplinks.max(1)
            }
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

/// Per-switch ECMP salt: a stable function of the switch id (0 when salting is off).
pub fn ecmp_salt(sw: u32, on: bool) -> u64 {
    if on {
        crate::rng::hash64(0xEC_3B00 ^ ((sw as u64) << 20))
    } else {
        0
    }
}

/// ECMP next hop for `pkt` among `cands` at a switch with `salt`.
#[inline]
pub fn ecmp_pick(pkt: &Packet, salt: u64, cands: &[u32]) -> u32 {
    let key = pkt.five_tuple() ^ ((pkt.overlay.path as u64) << 32);
    let h = crate::rng::hash64(key ^ salt);
    cands[((h >> 32) * cands.len() as u64 >> 32) as usize]
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
