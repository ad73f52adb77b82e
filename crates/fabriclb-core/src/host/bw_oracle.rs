//! The bandwidth-proportional oracle ("Bw-based" in EMAN §II-B, Fig. 2(a)): per packet, smooth
//! weighted round robin over a host pair's paths in proportion to each path's *current*
//! bottleneck capacity, which the oracle knows (it reads the links' rates whenever routing
//! reconverges or a rate changes, `routing.detection_delay` after the change). It sees neither
//! congestion nor other flows: in EMAN's Fig. 1(b) two flows that each split 10:40 overload
//! the shared 40 G link (§II-B).
//!
//! It is EMAN's tunnel with the oracle's weights: the same 40 bytes of encapsulation (so the
//! two compare at equal overhead), the same per-pair sequence numbers and reorder buffer (the
//! paper's optimum assumes "the packets out-of-order has been handled", §II-B), no feedback
//! and no probes. A pair with one path is not encapsulated.

use super::paths::{bottleneck_bps, discover, DISCOVERY_PORTS};
use super::shim::{EdgeShim, ShimView};
use super::tunnel::{Swrr, Tunnel};
use crate::net::packet::Packet;
use crate::units::{Bytes, Duration, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The oracle's parameters (`[scheme]` with `name = "bw-oracle"`): its reorder buffer, with
/// EMAN's defaults (§V-A).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BwOracleConfig {
    /// The reorder buffer per host pair, in bytes of packets held ("0B": no reordering).
    #[serde(default = "reorder_buffer")]
    pub reorder_buffer: Bytes,
    /// The longest a packet waits for the ones before it ("0us": no reordering).
    #[serde(default = "t_reorder")]
    pub t_reorder: Duration,
}

fn reorder_buffer() -> Bytes {
    super::eman::EmanConfig::default().reorder_buffer
}
fn t_reorder() -> Duration {
    super::eman::EmanConfig::default().t_reorder
}

impl BwOracleConfig {
    pub fn build(&self) -> BwOracle {
        BwOracle {
            tunnel: Tunnel::new(self.reorder_buffer.0, self.t_reorder.0),
            epoch: 0,
            pairs: Vec::new(),
        }
    }
}

/// A pair's paths as the oracle sees them.
#[derive(Default)]
struct Pair {
    /// The routing epoch they were found in (`u32::MAX`: not yet).
    epoch: u32,
    ports: Vec<u16>,
    /// Each path's current bottleneck capacity, bps.
    weights: Vec<u64>,
    swrr: Swrr,
}

pub struct BwOracle {
    tunnel: Tunnel,
    /// Bumped when routes or rates change: pairs look at their paths again.
    epoch: u32,
    /// By tunnel pair id.
    pairs: Vec<Pair>,
}

impl EdgeShim for BwOracle {
    fn on_send(&mut self, _now: Time, pk: &mut Packet, v: &ShimView) {
        let i = self.tunnel.pair(pk.src, pk.dst);
        if self.pairs.len() <= i {
            self.pairs.resize_with(i + 1, || Pair {
                epoch: u32::MAX,
                ..Default::default()
            });
        }
        let p = &mut self.pairs[i];
        if p.epoch != self.epoch {
            let set = discover(v.g, v.routes, v.salts, pk.src, pk.dst, DISCOVERY_PORTS);
            p.weights = set
                .links
                .iter()
                .map(|l| bottleneck_bps(l, |x| v.ports[x as usize].rate_bps))
                .collect();
            p.ports = set.ports;
            p.epoch = self.epoch;
        }
        if p.ports.len() < 2 {
            return;
        }
        let port = p.ports[p.swrr.pick(&p.weights)];
        self.tunnel.encapsulate(i, pk, port);
    }

    fn on_receive(&mut self, now: Time, pk: Packet, deliver: &mut Vec<Packet>) {
        self.tunnel.receive_or_pass(now, pk, deliver);
    }

    fn on_timer(&mut self, now: Time, host: u32, deliver: &mut Vec<Packet>) {
        self.tunnel.on_timer(now, host, deliver);
    }

    fn next_timer(&self, host: u32) -> Time {
        self.tunnel.next_timer(host)
    }

    fn on_routes(&mut self, _v: &ShimView) {
        self.epoch = self.epoch.wrapping_add(1) % u32::MAX;
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.tunnel.counters()
    }
}
