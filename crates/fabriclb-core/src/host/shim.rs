//! The edge shim: code between a host's transport and its NIC, where edge load balancers run
//! (EMAN, Clove, Hermes, Presto, FlowBender). A scheme that has one gives it to the hosts when
//! it is built (`lb::SchemeParts::shim`); the fabric then hashes the outer header
//! (`lb::Ecmp::outer`), so the outer source port a shim writes picks the path.
//!
//! The hooks, all optional but `on_send`:
//! - `on_send`: every packet a host sends (data and ACKs), after its transport made it: choose
//!   the outer source port (`pk.overlay.path`), write the shim's header fields
//!   (`pk.overlay`), add the encapsulation's bytes to `pk.size` (they count on the wire);
//! - `on_receive`: every packet arriving at a host, before its transport: read feedback and
//!   per-path state; pass it up at once, or hold it (a reorder buffer) and pass it later;
//! - `on_timer` / `next_timer`: a per-host timer (e.g. a reorder buffer's flush);
//! - `on_routes`: routing reconverged: the paths to each destination may have changed
//!   (`host::paths::discover` finds them again).
//!
//! With `switch.overlay = "always"` the leaves encapsulate host-encapsulated packets again
//! (both headers on the wire); the leaf derives its outer header's source port from the inner
//! headers, as VXLAN gateways do, so the fabric's choice still follows the host's outer port.

use crate::net::packet::Packet;
use crate::net::routing::Routes;
use crate::net::topology::Graph;
use crate::units::Time;

/// What a shim may read of the fabric when routes change (for path discovery).
pub struct ShimView<'a> {
    pub g: &'a Graph,
    pub routes: &'a Routes,
    /// Every switch's ECMP salt.
    pub salts: &'a [u64],
}

pub trait EdgeShim {
    /// A packet leaves host `pk.src`.
    fn on_send(&mut self, now: Time, pk: &mut Packet);
    /// A packet arrives at host `pk.dst`: push what goes up to the transport now.
    fn on_receive(&mut self, _now: Time, pk: Packet, deliver: &mut Vec<Packet>) {
        deliver.push(pk);
    }
    /// The shim's timer at `host` fired.
    fn on_timer(&mut self, _now: Time, _host: u32, _deliver: &mut Vec<Packet>) {}
    /// When the shim next wants `on_timer` at `host` (`Time::MAX`: never).
    fn next_timer(&self, _host: u32) -> Time {
        Time::MAX
    }
    /// Routing reconverged.
    fn on_routes(&mut self, _v: &ShimView) {}
    /// The shim's counters for the summary.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}
