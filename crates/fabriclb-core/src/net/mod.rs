//! The network layer: fabric graph, routing, packets, output ports and rate estimators.
//! It knows nothing about TCP, load-balancing policy or workloads.

pub mod dre;
pub mod packet;
pub mod port;
pub mod routing;
pub mod topology;
