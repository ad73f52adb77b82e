//! Presto (He et al., SIGCOMM'15; `../shared/SCHEMES.md` §8): the sender's shim cuts each flow
//! into flowcells of at most `flowcell` bytes of payload (64 KB, the TSO limit) and sends the
//! flowcells round robin over the host pair's paths, from a random first path; the receiver
//! reorders across flowcells, holding packets that arrive ahead of a gap at most `t_reorder`.
//!
//! - Paths: the pair's paths from path discovery (`host::paths::discover`), one outer port
//!   each, as Presto's controller gives one label per spanning tree (per spine). All paths
//!   weigh the same: the weighted variant for asymmetry (the controller's) is not modelled.
//! - A flow is a TCP connection in one direction. A data segment that would take the current
//!   flowcell past `flowcell` bytes starts the next flowcell on the next path; packets without
//!   payload (pure ACKs) stay on the flow's current path. Every data segment counts,
//!   retransmissions too (as the Hermes authors' ns-3 Presto, SCHEMES.md §8).
//! - The receiver is EMAN's tunnel (`host::tunnel`): per-pair sequence numbers in a 40-byte
//!   header (so the edge schemes compare at equal overhead; Presto itself uses shadow MACs and
//!   adds nothing) and its reorder buffer, which stands for Presto's modified GRO: packets go up
//!   in sequence order, a gap waits at most `t_reorder` (Presto's loss-vs-reordering timeout,
//!   a parameter here; the ns-3 resequencing buffer's 100 µs by default) within
//!   `reorder_buffer` bytes.
//! - The Hermes authors' 10-packet cells (10 × 1400 B) are `flowcell = "14000B"`.
//!
//! The shim reads and writes only the packets' overlay and size; it never touches a transport.

use super::paths::{discover, DISCOVERY_PORTS};
use super::shim::{EdgeShim, ShimView};
use super::tunnel::Tunnel;
use crate::error::Error;
use crate::net::packet::Packet;
use crate::rng::{stream, Rng};
use crate::units::{Bytes, Duration, Time, PS_PER_US};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Presto's parameters (`[scheme]` with `name = "presto"`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrestoConfig {
    /// The largest flowcell, in payload bytes (Presto: 64 KB; the Hermes authors' ns-3 code:
    /// 10 packets of 1400 B, "14000B"). At least 1 B.
    #[serde(default = "flowcell")]
    pub flowcell: Bytes,
    /// The receiver's reorder buffer per host pair, in bytes of packets held ("0B": no
    /// reordering).
    #[serde(default = "reorder_buffer")]
    pub reorder_buffer: Bytes,
    /// The longest a packet waits for the ones before it ("0us": no reordering; the ns-3
    /// resequencing buffer: 100 µs).
    #[serde(default = "t_reorder")]
    pub t_reorder: Duration,
}

fn flowcell() -> Bytes {
    Bytes(65_536)
}
fn reorder_buffer() -> Bytes {
    Bytes(1_000_000)
}
fn t_reorder() -> Duration {
    Duration(100 * PS_PER_US)
}

impl Default for PrestoConfig {
    fn default() -> Self {
        PrestoConfig {
            flowcell: flowcell(),
            reorder_buffer: reorder_buffer(),
            t_reorder: t_reorder(),
        }
    }
}

impl PrestoConfig {
    pub fn validate(&self, path: &str) -> Result<(), Error> {
        if self.flowcell.0 == 0 {
            return Err(Error::config(
                &format!("{path}.flowcell"),
                "is 0; allowed: at least 1B (Presto: \"64KB\"; the Hermes authors' ns-3: \"14000B\")",
            ));
        }
        Ok(())
    }

    pub fn build(&self, seed: u64) -> Presto {
        Presto {
            flowcell: self.flowcell.0,
            tunnel: Tunnel::new(self.reorder_buffer.0, self.t_reorder.0),
            epoch: 0,
            pairs: Vec::new(),
            flows: Vec::new(),
            rng: Rng::new(seed, stream::SCHEME + 0x9E57),
            cells: 0,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Pair {
    epoch: u32,
    ports: Vec<u16>,
}

/// One flow (connection and direction): its pair, path, and the payload of its current cell.
#[derive(Clone, Copy, Debug)]
struct Flow {
    pair: u32,
    path: u32,
    cell_bytes: u64,
}

pub struct Presto {
    flowcell: u64,
    tunnel: Tunnel,
    epoch: u32,
    pairs: Vec<Pair>,
    flows: Vec<Option<Flow>>,
    rng: Rng,
    cells: u64,
}

impl EdgeShim for Presto {
    fn on_send(&mut self, _now: Time, pk: &mut Packet, v: &ShimView) {
        let i = self.tunnel.pair(pk.src, pk.dst);
        if self.pairs.len() <= i {
            self.pairs.resize_with(i + 1, || Pair {
                epoch: u32::MAX,
                ..Default::default()
            });
        }
        if self.pairs[i].epoch != self.epoch {
            let set = discover(v.g, v.routes, v.salts, pk.src, pk.dst, DISCOVERY_PORTS);
            self.pairs[i] = Pair {
                epoch: self.epoch,
                ports: set.ports,
            };
        }
        let n = self.pairs[i].ports.len() as u32;
        if n < 2 {
            return;
        }
        let key = pk.conn as usize * 2 + usize::from(pk.src < pk.dst);
        if self.flows.len() <= key {
            self.flows.resize(key + 1, None);
        }
        let cur = self.flows[key];
        let mut f = match cur {
            Some(f) if f.pair as usize == i && f.path < n => f,
            _ => {
                self.cells += 1;
                Flow {
                    pair: i as u32,
                    path: self.rng.below(n as u64) as u32,
                    cell_bytes: 0,
                }
            }
        };
        let len = pk.payload as u64;
        if len > 0 && f.cell_bytes > 0 && f.cell_bytes + len > self.flowcell {
            f.path = (f.path + 1) % n;
            f.cell_bytes = 0;
            self.cells += 1;
        }
        f.cell_bytes += len;
        self.flows[key] = Some(f);
        let port = self.pairs[i].ports[f.path as usize];
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
        let mut c = vec![("presto_flowcells", self.cells)];
        c.extend(self.tunnel.counters());
        c
    }
}

#[cfg(test)]
mod tests {
    use super::super::shim::TestFabric;
    use super::*;
    use crate::net::packet::flags;

    fn seg(conn: u32, payload: u32) -> Packet {
        Packet {
            src: 0,
            dst: 2,
            conn,
            payload,
            size: 58 + payload,
            flags: if payload == 0 { flags::ACK } else { 0 },
            ..Default::default()
        }
    }

    /// Flowcells close before a segment would take them past the limit; cells go round robin
    /// over the paths (two in the test fabric: cell k on path (start + k) mod 2); pure ACKs
    /// stay on the current cell's path.
    #[test]
    fn flowcell_boundaries_and_round_robin() {
        let rep = |n: usize, v: u32| vec![v; n];
        // (flowcell bytes, segment payloads, cell of each segment mod 2)
        let cases: Vec<(u64, Vec<u32>, Vec<u32>)> = vec![
            // 44 x 1460 = 64240 fits in 64 KB, a 45th would not.
            (65_536, rep(46, 1460), [rep(44, 0), rep(2, 1)].concat()),
            (4000, rep(4, 1460), vec![0, 0, 1, 1]),
            (2920, vec![1460, 1460, 1460, 0, 1460], vec![0, 0, 1, 1, 1]),
            // A segment larger than a cell is a cell of its own.
            (1000, vec![1460, 1460, 0, 1460], vec![0, 1, 1, 0]),
            // The Hermes authors' 10-packet cells.
            (
                14_000,
                rep(21, 1400),
                [rep(10, 0), rep(10, 1), rep(1, 0)].concat(),
            ),
        ];
        for (cell, payloads, want) in cases {
            let f = TestFabric::new();
            let mut p = PrestoConfig {
                flowcell: Bytes(cell),
                ..Default::default()
            }
            .build(3);
            let mut paths = Vec::new();
            for &len in &payloads {
                let mut pk = seg(1, len);
                p.on_send(0, &mut pk, &f.view());
                paths.push(pk.overlay.path);
            }
            let ports = p.pairs[p.tunnel.find(0, 2).unwrap()].ports.clone();
            assert_eq!(ports.len(), 2);
            let got: Vec<u32> = paths.iter().map(|&x| u32::from(x != paths[0])).collect();
            assert_eq!(got, want, "cell {cell} payloads {payloads:?}");
            let changes = want.windows(2).filter(|w| w[0] != w[1]).count();
            assert_eq!(p.cells as usize, 1 + changes, "cells counted");
        }
    }

    /// The first path is random (both taken over seeds); flows are independent.
    #[test]
    fn random_start_per_flow() {
        let f = TestFabric::new();
        let mut seen = std::collections::HashSet::new();
        let mut p = PrestoConfig::default().build(1);
        for conn in 0..40 {
            let mut pk = seg(conn, 1460);
            p.on_send(0, &mut pk, &f.view());
            seen.insert(pk.overlay.path);
        }
        assert_eq!(seen.len(), 2);
    }

    /// Across flowcells the receiver passes segments up in order; a gap waits t_reorder.
    #[test]
    fn receiver_reorders_across_flowcells() {
        let f = TestFabric::new();
        let us = PS_PER_US;
        let mut p = PrestoConfig {
            flowcell: Bytes(2920),
            t_reorder: Duration(100 * us),
            ..Default::default()
        }
        .build(3);
        let sent: Vec<Packet> = (0..6)
            .map(|k| {
                let mut pk = seg(1, 1460);
                pk.seq = k * 1460;
                p.on_send(0, &mut pk, &f.view());
                pk
            })
            .collect();
        // The second cell (segments 2, 3) overtakes the first.
        let mut up = Vec::new();
        for (t, k) in [(1, 2), (2, 3), (3, 0), (4, 1), (5, 4)] {
            p.on_receive(t * us, sent[k], &mut up);
        }
        let seqs: Vec<u64> = up.iter().map(|x| x.seq / 1460).collect();
        assert_eq!(seqs, [0, 1, 2, 3, 4]);
        assert!(up.iter().all(|x| x.size == 58 + 1460), "decapsulated");
        // Segment 5 is lost; segment 6's... nothing after it: a lone gap before a later
        // packet waits t_reorder, then goes up.
        let mut late = seg(1, 1460);
        late.seq = 7 * 1460;
        p.on_send(0, &mut late, &f.view()); // sequence 6 in the tunnel, 5 never arrives
        p.on_receive(10 * us, late, &mut up);
        assert_eq!(up.len(), 5, "held");
        assert!(p.next_timer(2) <= 110 * us, "the timer may be early");
        p.on_timer(109 * us, 2, &mut up);
        assert_eq!(up.len(), 5);
        p.on_timer(110 * us, 2, &mut up);
        assert_eq!(up.len(), 6);
    }

    #[test]
    fn bad_fields_are_named() {
        let c = PrestoConfig {
            flowcell: Bytes(0),
            ..Default::default()
        };
        match c.validate("scheme") {
            Err(Error::Config { path, .. }) => assert_eq!(path, "scheme.flowcell"),
            other => panic!("{other:?}"),
        }
        assert!(PrestoConfig::default().validate("scheme").is_ok());
    }
}
