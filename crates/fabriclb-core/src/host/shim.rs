//! The edge shim: code between a host's transport and its NIC, where edge load balancers run
//! (EMAN, Clove, Hermes, Presto, FlowBender). A scheme that has one gives it to the hosts when
//! it is built (`lb::SchemeParts::shim`); the fabric then hashes the outer header
//! (`lb::Ecmp::outer`), so the outer source port a shim writes picks the path.
//!
//! The hooks, all optional but `on_send`:
//! - `on_send`: every TCP packet a host sends (data and ACKs), after its transport made it:
//!   choose the outer source port (`pk.overlay.path`), write the shim's header fields
//!   (`pk.overlay`), add the encapsulation's bytes to `pk.size` (they count on the wire). The
//!   view gives the fabric (for path discovery on a pair's first packet, and path capacities);
//! - `on_receive`: every TCP packet arriving at a host, before its transport: read feedback and
//!   per-path state; pass it up at once, or hold it (a reorder buffer) and pass it later;
//! - `on_timer` / `next_timer`: a per-host timer (e.g. a reorder buffer's flush);
//! - `on_timeout`: a connection's retransmission timeout fired (before its retransmission is
//!   sent, so the shim may move it);
//! - `on_routes`: routing reconverged, or a link's rate changed: the paths to each destination
//!   may have changed (`host::paths::discover` finds them again).
//!
//! Packets of constant-rate (UDP-like) flows do not pass through the shim: the schemes this
//! layer is for balance TCP (EMAN §III-A), and those flows are pinned to a path.
//!
//! With `switch.overlay = "always"` the leaves encapsulate host-encapsulated packets again
//! (both headers on the wire); the leaf derives its outer header's source port from the inner
//! headers, as VXLAN gateways do, so the fabric's choice still follows the host's outer port.

use crate::net::packet::Packet;
use crate::net::port::Port;
use crate::net::routing::Routes;
use crate::net::topology::Graph;
use crate::units::Time;

/// What a shim may read of the fabric (for path discovery and path capacities).
pub struct ShimView<'a> {
    pub g: &'a Graph,
    pub routes: &'a Routes,
    /// Every switch's ECMP salt.
    pub salts: &'a [u64],
    /// The ports, for the links' current rates (`g.links[l].rate_bps` is the nominal one).
    pub ports: &'a [Port],
}

pub trait EdgeShim {
    /// A packet leaves host `pk.src`.
    fn on_send(&mut self, now: Time, pk: &mut Packet, v: &ShimView);
    /// A packet arrives at host `pk.dst`: push what goes up to the transport now.
    fn on_receive(&mut self, _now: Time, pk: Packet, deliver: &mut Vec<Packet>) {
        deliver.push(pk);
    }
    /// The shim's timer at `host` fired.
    fn on_timer(&mut self, _now: Time, _host: u32, _deliver: &mut Vec<Packet>) {}
    /// When the shim next wants `on_timer` at `host` (`Time::MAX`: never). May be early: the
    /// shim then finds nothing due and asks again.
    fn next_timer(&self, _host: u32) -> Time {
        Time::MAX
    }
    /// A connection's retransmission timer expired (`conn` is the connection index).
    fn on_timeout(&mut self, _now: Time, _conn: u32) {}
    /// Routing reconverged, or a link's rate changed.
    fn on_routes(&mut self, _v: &ShimView) {}
    /// The shim's counters for the summary (`lb` in summary.json, beside the balancer's).
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

/// For a shim's config tests: each (field, value, word) set on the defaults must fail
/// validation at `scheme.<field>` with `word` in the message, and the defaults must pass.
#[cfg(test)]
pub(crate) fn assert_bad_fields_named<C>(
    cases: &[(&str, serde_json::Value, &str)],
    validate: impl Fn(&C, &str) -> Result<(), crate::error::Error>,
) where
    C: Default + serde::Serialize + serde::de::DeserializeOwned,
{
    for (field, value, word) in cases {
        let mut v = serde_json::to_value(C::default()).unwrap();
        v[*field] = value.clone();
        let c: C = serde_json::from_value(v).unwrap();
        match validate(&c, "scheme") {
            Err(crate::error::Error::Config { path, msg }) => {
                assert_eq!(path, format!("scheme.{field}"));
                assert!(msg.contains(word), "{msg}");
            }
            other => panic!("{field}: {other:?}"),
        }
    }
    assert!(validate(&C::default(), "scheme").is_ok());
}

/// A small fabric to give shims a view in unit tests.
#[cfg(test)]
pub(crate) struct TestFabric {
    pub g: Graph,
    pub routes: Routes,
    pub salts: Vec<u64>,
    pub ports: Vec<Port>,
}

#[cfg(test)]
impl TestFabric {
    /// Two leaves, two spines, two hosts per leaf, 10 Gbps everywhere.
    pub fn new() -> TestFabric {
        let cfg: crate::net::topology::TopologyConfig = serde_json::from_value(serde_json::json!({
            "kind": "leaf-spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 2,
            "host_rate": "10Gbps", "fabric_rate": "10Gbps"
        }))
        .unwrap();
        let g = cfg.build().unwrap();
        let routes = Routes::compute(&g, &vec![true; g.links.len()]);
        let salts = (0..g.nodes.len() as u32)
            .map(|s| crate::lb::ecmp_salt(s, true))
            .collect();
        let ports = g
            .links
            .iter()
            .map(|l| Port::new(l.rate_bps, 0, 1 << 20, 0))
            .collect();
        TestFabric {
            g,
            routes,
            salts,
            ports,
        }
    }
    pub fn view(&self) -> ShimView<'_> {
        ShimView {
            g: &self.g,
            routes: &self.routes,
            salts: &self.salts,
            ports: &self.ports,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Format, Scenario};
    use crate::sim::RunOptions;
    use crate::sim::Sim;
    use crate::table::Column;

    /// A shim that sends everything on one outer port with a 40-byte header, and counts.
    struct Pin {
        port: u16,
        sent: u64,
        received: u64,
    }

    impl EdgeShim for Pin {
        fn on_send(&mut self, _now: Time, pk: &mut Packet, _v: &ShimView) {
            pk.overlay.path = self.port;
            pk.size += 40;
            self.sent += 1;
        }
        fn on_receive(&mut self, _now: Time, mut pk: Packet, deliver: &mut Vec<Packet>) {
            pk.size -= 40;
            self.received += 1;
            deliver.push(pk);
        }
    }

    /// Eight flows of one host pair on one outer port take one path, whatever their inner
    /// 5-tuples; under `switch.overlay = "always"` the leaf encapsulates again, so a full data
    /// frame carries both headers on the fabric links.
    #[test]
    fn one_outer_port_one_path_and_both_headers_on_the_wire() {
        for overlay in ["always", "scheme"] {
            let toml = format!(
                r#"
                duration = "2ms"
                drain = "50ms"
                [transport]
                min_rto = "1ms"
                [topology]
                kind = "leaf-spine"
                leaves = 2
                spines = 4
                hosts_per_leaf = 2
                host_rate = "10Gbps"
                fabric_rate = "10Gbps"
                [switch]
                overlay = "{overlay}"
                [[workload]]
                pattern = "explicit"
                flows = [{{ src = "H0", dst = "H2", size = "146000B", rate = "1Gbps", count = 8 }}]
                "#
            );
            let sc = Scenario::load(&toml, Format::Toml, &[]).unwrap();
            let sim = Sim::build(&sc).unwrap().with_shim(Box::new(Pin {
                port: 17,
                sent: 0,
                received: 0,
            }));
            let r = sim.run(RunOptions::default()).unwrap();
            let names = match r.ports.get("link").unwrap() {
                Column::Str(v) => v.clone(),
                _ => unreachable!(),
            };
            let tx = |name: &str, col: &str| -> f64 {
                let i = names.iter().position(|n| n == name).unwrap();
                match r.ports.get(col).unwrap() {
                    Column::U64(v) => v[i] as f64,
                    _ => unreachable!(),
                }
            };
            let ups: Vec<f64> = (0..4)
                .map(|s| tx(&format!("L0->S{s}#0"), "tx_bytes"))
                .collect();
            let used: Vec<usize> = (0..4).filter(|&i| ups[i] > 0.0).collect();
            assert_eq!(used.len(), 1, "{overlay}: uplink bytes {ups:?}");
            assert_eq!(r.summary["flows_completed"], 8);
            // Paced below the links' rate, nothing is lost: on the used uplink, 8 SYNs (64-byte
            // frames) and 800 full data frames (1518), each with the shim's 40 bytes [and the
            // leaf's 50] (ports count frame bytes: no preamble and gap).
            let s = used[0];
            let link = format!("L0->S{s}#0");
            let (bytes, pkts) = (tx(&link, "tx_bytes"), tx(&link, "tx_packets"));
            let extra = 40.0 + if overlay == "always" { 50.0 } else { 0.0 };
            let want = (pkts - 8.0) * (1518.0 + extra) + 8.0 * (64.0 + extra);
            assert_eq!(pkts, 808.0, "{overlay}");
            assert_eq!(bytes, want, "{overlay}");
        }
    }
}
