//! A small fabric for the schemes' unit tests: a graph, its routes and ports, and an
//! [`LbView`] of them at any time.

use super::{Balancer, BuildCtx, LbView};
use crate::net::dre::DreParams;
use crate::net::packet::Packet;
use crate::net::port::Port;
use crate::net::routing::Routes;
use crate::net::topology::{FatTreeConfig, Graph, LeafSpineConfig, TopologyConfig};
use crate::units::{Duration, Rate, Time, PS_PER_US};

pub struct Fx {
    pub g: Graph,
    pub routes: Routes,
    pub ports: Vec<Port>,
    pub dre: DreParams,
}

impl Fx {
    /// 2 leaves x 2 spines x 2 links per pair, 40 Gbps, 2 hosts per leaf (H0, H1 under L0;
    /// H2, H3 under L1): L0 has 4 uplinks.
    pub fn new() -> Fx {
        Fx::leaf_spine(2, 2, 2)
    }

    /// A leaf-spine with 2 hosts per leaf, 10 Gbps hosts, 40 Gbps fabric links, 1 µs delays.
    pub fn leaf_spine(leaves: u32, spines: u32, links_per_pair: u32) -> Fx {
        let g = TopologyConfig::LeafSpine(LeafSpineConfig {
            leaves,
            spines,
            hosts_per_leaf: 2,
            host_rate: Rate(10_000_000_000),
            fabric_rate: Rate(40_000_000_000),
            links_per_pair,
            host_delay: Duration(PS_PER_US),
            fabric_delay: Duration(PS_PER_US),
        })
        .build()
        .unwrap();
        Fx::from_graph(g)
    }

    /// A 3-tier fat-tree, k = 4, all links 10 Gbps (hosts H0, H1 under E0_0, H4 under E1_0).
    pub fn fat_tree4() -> Fx {
        let g = TopologyConfig::FatTree(FatTreeConfig {
            k: 4,
            oversubscription: 1,
            agg_oversubscription: 1,
            host_rate: Rate(10_000_000_000),
            fabric_rate: Rate(10_000_000_000),
            delay: Duration(PS_PER_US),
        })
        .build()
        .unwrap();
        Fx::from_graph(g)
    }

    fn from_graph(g: Graph) -> Fx {
        let routes = Routes::compute(&g, &vec![true; g.links.len()]);
        let ports = g
            .links
            .iter()
            .map(|l| Port::new(l.rate_bps, l.delay_ps, 1 << 20, 0))
            .collect();
        Fx {
            g,
            routes,
            ports,
            dre: DreParams {
                period_ps: 20 * PS_PER_US,
                alpha: 0.125,
            },
        }
    }

    /// Take the links named by `specs` (e.g. "S1-L1#1": both directions) down and recompute
    /// the routes, as the simulation does after a failure.
    pub fn fail(&mut self, specs: &[&str]) {
        let mut up: Vec<bool> = self.ports.iter().map(|p| p.up).collect();
        for s in specs {
            for l in self.g.resolve_link(s, "test").unwrap() {
                up[l as usize] = false;
                self.ports[l as usize].up = false;
            }
        }
        self.routes = Routes::compute(&self.g, &up);
    }

    pub fn view(&mut self, now: Time) -> LbView<'_> {
        LbView {
            now,
            g: &self.g,
            routes: &self.routes,
            ports: &mut self.ports,
            dre: &self.dre,
        }
    }

    pub fn ctx(&self, seed: u64) -> BuildCtx<'_> {
        BuildCtx {
            g: &self.g,
            seed,
            ecmp_salt: true,
            rcv_window_bytes: 16 << 20,
        }
    }

    pub fn node(&self, n: &str) -> u32 {
        self.g.node_id(n).unwrap()
    }

    /// The first directed link named by `s` (e.g. "L0->S1#0").
    pub fn link(&self, s: &str) -> u32 {
        self.g.resolve_link(s, "test").unwrap()[0]
    }

    /// Candidates of `sw` toward the ToR of host `dst`.
    pub fn cands(&self, sw: u32, dst: u32) -> Vec<u32> {
        let tor = self.routes.tor_index[self.g.host_tor[dst as usize] as usize];
        self.routes.group(sw, tor).to_vec()
    }

    /// Queue `n` full frames on link `l` at `now`.
    pub fn fill(&mut self, l: u32, n: u32, now: Time) {
        let p = &mut self.ports[l as usize];
        for _ in 0..n {
            p.offer(now, 1518, 1538, false, u64::MAX);
        }
    }

    /// A data packet H0 (under L0) -> H2 (under L1); `sport` tells flows apart.
    pub fn pkt(sport: u16) -> Packet {
        Packet {
            src: 0,
            dst: 2,
            sport,
            dport: 80,
            size: 1518,
            ..Default::default()
        }
    }

    /// A header-only TCP packet H`src` -> H`dst` (ports 1000 -> 80) with `flags`.
    pub fn tcp(src: u32, dst: u32, flags: u8) -> Packet {
        Packet {
            src,
            dst,
            sport: 1000,
            dport: 80,
            size: crate::net::packet::frame_bytes(0),
            flags,
            ..Default::default()
        }
    }

    /// The header-only answer to `p` (the reverse 5-tuple) with `flags`.
    pub fn answer(p: &Packet, flags: u8) -> Packet {
        Packet {
            src: p.dst,
            dst: p.src,
            sport: p.dport,
            dport: p.sport,
            ..Fx::tcp(0, 0, flags)
        }
    }

    /// Forward `p` from its source host to its destination through `lb` as `sim::forward`
    /// does (arrival hook, next hop, departure hook) at time `t`; the links taken, by name.
    pub fn walk(&mut self, lb: &mut dyn Balancer, t: Time, p: &mut Packet) -> Vec<String> {
        let mut l = self.g.host_uplink[p.src as usize];
        let mut path = vec![];
        while !self.g.is_host(self.g.links[l as usize].to) {
            let sw = self.g.links[l as usize].to;
            lb.on_arrival(&mut self.view(t), sw, l, p);
            let out = if self.g.host_tor[p.dst as usize] == sw {
                self.g.links[self.g.host_uplink[p.dst as usize] as usize].reverse
            } else {
                let cands = self.cands(sw, p.dst);
                if cands.len() == 1 {
                    cands[0]
                } else {
                    lb.choose(&mut self.view(t), sw, p, &cands)
                }
            };
            lb.on_departure(&mut self.view(t), sw, out, p);
            path.push(self.g.link_name(out));
            l = out;
        }
        path
    }
}
