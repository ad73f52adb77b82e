//! fabriclb-core: a packet-level simulator of datacenter fabrics and their load balancers.
//!
//! Layers, bottom up (each may use only the layers above it in this list):
//! - [`units`], [`rng`], [`error`], [`table`]: plain values, no simulation state.
//! - [`mem`]: where memory comes from (2 MiB pages for a large world's heap); no simulation
//!   state.
//! - [`engine`]: time and the pending-event set (ordering contract in its docs).
//! - [`net`]: topology, routing, packets, output ports, DRE.
//! - [`transport`]: TCP endpoints and congestion controllers.
//! - [`lb`]: load-balancing schemes, one file each, plugged into switch and host hooks.
//! - [`workload`]: flow-size CDFs and traffic generators.
//! - [`host`]: the hosts: transport endpoints, the applications' flows, the edge shim.
//! - [`scenario`]: the validated input.
//! - [`sim`]: the world that wires them together and runs the event loop; [`stats`] turns its
//!   counters into tables. [`api`] is the front door; [`bench`] the named benchmarks.
//!
//! No global state: everything lives in a `Sim` value; two simulations never interact. (The one
//! process-wide switch, [`mem::prefer_huge_pages`], changes how memory is backed, never what a
//! run computes.)

pub mod api;
pub mod bench;
#[cfg(test)]
mod code_hash;
pub mod engine;
pub mod error;
pub mod host;
pub mod lb;
pub mod limits;
pub mod mem;
pub mod net;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod table;
pub mod transport;
pub mod units;
pub mod workload;

pub use error::Error;
