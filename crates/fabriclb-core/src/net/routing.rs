//! Shortest-path routing with ECMP groups per destination ToR.
//!
//! For every switch and every ToR (a switch with hosts), the group of output ports that lie
//! on a shortest path over links that are up; parallel links are separate members. Built by one
//! reverse BFS per ToR. Recomputed by the simulation when link state changes (after the
//! configured detection delay). Reads the graph and a link-up mask; owns no runtime state.

use super::topology::Graph;

/// What forwarding needs of a destination host, in one place (one load on the per-hop path,
/// where separate tables cost a chain of dependent loads): its ToR, the ToR's index in the
/// group table and the ToR's downlink to it.
#[derive(Clone, Copy, Debug)]
struct HostRoute {
    tor: u32,
    tor_index: u32,
    downlink: u32,
}

#[derive(Clone, Debug, Default)]
pub struct Routes {
    /// tor index of each node, u32::MAX when the node has no hosts.
    pub tor_index: Vec<u32>,
    pub n_tors: u32,
    /// Hosts come first in the graph; tables are indexed by switch (node − n_hosts).
    n_hosts: u32,
    /// (offset, len) into `members` for [(switch node − n_hosts) * n_tors + tor]; identical
    /// groups have the same offset.
    groups: Vec<(u32, u32)>,
    members: Vec<u32>,
    /// Hop distance (in switch hops) from each switch to each ToR, u32::MAX if unreachable.
    dist: Vec<u32>,
    /// Per host.
    hosts: Vec<HostRoute>,
}

impl Routes {
    /// The tables for the links marked up in `up`. Cost: ToRs × (switches + switch-to-switch
    /// ports), bounded by `limits::MAX_ROUTING_ENTRIES`; host ports are never scanned.
    pub fn compute(g: &Graph, up: &[bool]) -> Routes {
        let n = g.nodes.len();
        let nh = g.n_hosts as usize;
        let ns = n - nh;
        let mut tor_index = vec![u32::MAX; n];
        let mut tors = vec![];
        for &t in &g.host_tor {
            if tor_index[t as usize] == u32::MAX {
                tor_index[t as usize] = tors.len() as u32;
                tors.push(t);
            }
        }
        // Keep ToR numbering in node order for stability.
        tors.sort_unstable();
        for (i, &t) in tors.iter().enumerate() {
            tor_index[t as usize] = i as u32;
        }
        // Each switch's ports toward other switches, in port order (CSR).
        let mut fab_off = Vec::with_capacity(ns + 1);
        let mut fab = vec![];
        fab_off.push(0usize);
        for u in nh..n {
            fab.extend(
                g.nodes[u]
                    .ports
                    .iter()
                    .copied()
                    .filter(|&l| !g.is_host(g.links[l as usize].to)),
            );
            fab_off.push(fab.len());
        }
        let fabric = |u: usize| &fab[fab_off[u - nh]..fab_off[u - nh + 1]];
        let nt = tors.len();
        let mut dist = vec![u32::MAX; ns * nt];
        let mut groups = vec![(0u32, 0u32); ns * nt];
        let mut members = vec![];
        // Identical groups share their members (a leaf's uplinks serve every remote ToR), so
        // the table every switch hop reads stays in cache: LS2048's is 16 KB, 0.5 MB with a
        // copy per group.
        let mut seen: std::collections::HashMap<Box<[u32]>, u32> = Default::default();
        let mut group = vec![];
        let mut queue = std::collections::VecDeque::new();
        for (ti, &t) in tors.iter().enumerate() {
            let d = |v: usize| (v - nh) * nt + ti;
            dist[d(t as usize)] = 0;
            queue.clear();
            queue.push_back(t);
            while let Some(v) = queue.pop_front() {
                let dv = dist[d(v as usize)];
                for &l in fabric(v as usize) {
                    let r = g.links[l as usize].reverse; // u -> v
                    let u = g.links[r as usize].from;
                    if !up[r as usize] || dist[d(u as usize)] != u32::MAX {
                        continue;
                    }
                    dist[d(u as usize)] = dv + 1;
                    queue.push_back(u);
                }
            }
            for u in nh..n {
                let du = dist[d(u)];
                if du == u32::MAX || du == 0 {
                    continue;
                }
                group.clear();
                for &l in fabric(u) {
                    let v = g.links[l as usize].to as usize;
                    if up[l as usize] && dist[d(v)] == du - 1 {
                        group.push(l);
                    }
                }
                let off = *seen.entry(group.as_slice().into()).or_insert_with(|| {
                    members.extend_from_slice(&group);
                    (members.len() - group.len()) as u32
                });
                groups[d(u)] = (off, group.len() as u32);
            }
        }
        let hosts = (g.host_tor.iter().zip(&g.host_uplink))
            .map(|(&tor, &up)| HostRoute {
                tor,
                tor_index: tor_index[tor as usize],
                downlink: g.links[up as usize].reverse,
            })
            .collect();
        Routes {
            hosts,
            tor_index,
            n_tors: nt as u32,
            n_hosts: g.n_hosts,
            groups,
            members,
            dist,
        }
    }

    /// The next hops from switch `sw` toward host `dst`: its ToR's downlink when `sw` is that
    /// ToR, else the group toward that ToR (empty when every path is down).
    #[inline]
    pub fn next_hops(&self, sw: u32, dst: u32) -> &[u32] {
        let h = &self.hosts[dst as usize];
        if h.tor == sw {
            std::slice::from_ref(&h.downlink)
        } else {
            self.group(sw, h.tor_index)
        }
    }

    /// Candidate output ports at switch `sw` toward ToR `tor` (empty when unreachable).
    #[inline]
    pub fn group(&self, sw: u32, tor: u32) -> &[u32] {
        let (o, l) =
            self.groups[(sw - self.n_hosts) as usize * self.n_tors as usize + tor as usize];
        &self.members[o as usize..(o + l) as usize]
    }

    /// Switch hops from switch `sw` to ToR `tor`.
    pub fn distance(&self, sw: u32, tor: u32) -> u32 {
        self.dist[(sw - self.n_hosts) as usize * self.n_tors as usize + tor as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::topology::*;
    use crate::units::*;

    /// A leaf-spine fabric with one host per leaf.
    fn leaf_spine(leaves: u32, spines: u32, links_per_pair: u32) -> Graph {
        TopologyConfig::LeafSpine(LeafSpineConfig {
            leaves,
            spines,
            hosts_per_leaf: 1,
            host_rate: Rate(1),
            fabric_rate: Rate(1),
            links_per_pair,
            host_delay: Duration(1),
            fabric_delay: Duration(1),
        })
        .build()
        .unwrap()
    }

    #[test]
    fn ecmp_groups_table() {
        let g = leaf_spine(2, 2, 2);
        let mut up = vec![true; g.links.len()];
        let r = Routes::compute(&g, &up);
        let l0 = g.node_id("L0").unwrap();
        let s1 = g.node_id("S1").unwrap();
        let l1 = g.node_id("L1").unwrap();
        let t1 = r.tor_index[l1 as usize];
        assert_eq!(r.group(l0, t1).len(), 4); // 2 spines x 2 parallel links
        assert_eq!(r.group(s1, t1).len(), 2);
        // one S1-L1 link down (both directions): S1 keeps 1 link to L1, L0 keeps all 4 uplinks
        for l in g.resolve_link("S1-L1#0", "x").unwrap() {
            up[l as usize] = false;
        }
        let r = Routes::compute(&g, &up);
        assert_eq!(r.group(s1, t1).len(), 1);
        assert_eq!(r.group(l0, t1).len(), 4);
        // both S1-L1 links down: L0 uses only S0
        for l in g.resolve_link("S1->L1#1", "x").unwrap() {
            up[l as usize] = false;
        }
        let r = Routes::compute(&g, &up);
        assert_eq!(r.group(l0, t1).len(), 2);
        for &p in r.group(l0, t1) {
            assert_eq!(g.nodes[g.links[p as usize].to as usize].name, "S0");
        }
    }

    #[test]
    fn identical_groups_share_their_members() {
        let g = leaf_spine(4, 3, 1);
        let mut up = vec![true; g.links.len()];
        let tor = |n: &str| g.node_id(n).unwrap();
        let (l0, l1, l2, l3) = (tor("L0"), tor("L1"), tor("L2"), tor("L3"));
        let ti = |r: &Routes, n: u32| r.tor_index[n as usize];
        let r = Routes::compute(&g, &up);
        // L0's three remote ToRs share one copy of its uplinks. Members: each leaf's three
        // uplinks once, and each spine's four downlinks, one group each.
        let a = r.group(l0, ti(&r, l1));
        assert_eq!(a.len(), 3);
        for t in [l2, l3] {
            assert_eq!(r.group(l0, ti(&r, t)).as_ptr(), a.as_ptr());
        }
        assert_eq!(r.members.len(), 4 * 3 + 3 * 4);
        // A failed S1-L3 link: L0's group toward L3 differs from the others, and is its own.
        for l in g.resolve_link("S1-L3", "x").unwrap() {
            up[l as usize] = false;
        }
        let r = Routes::compute(&g, &up);
        let to_l3 = r.group(l0, ti(&r, l3));
        assert_eq!(to_l3.len(), 2);
        assert_eq!(r.group(l0, ti(&r, l1)).len(), 3);
        assert_eq!(r.group(l0, ti(&r, l1)), r.group(l0, ti(&r, l2)));
        assert_eq!(
            r.group(l0, ti(&r, l1)).as_ptr(),
            r.group(l0, ti(&r, l2)).as_ptr()
        );
        assert_ne!(to_l3.as_ptr(), r.group(l0, ti(&r, l1)).as_ptr());
    }

    #[test]
    fn fat_tree_distances() {
        let g = TopologyConfig::FatTree(FatTreeConfig {
            k: 4,
            oversubscription: 1,
            agg_oversubscription: 1,
            host_rate: Rate(1),
            fabric_rate: Rate(1),
            delay: Duration(1),
        })
        .build()
        .unwrap();
        let r = Routes::compute(&g, &vec![true; g.links.len()]);
        let e00 = g.node_id("E0_0").unwrap();
        let e01 = r.tor_index[g.node_id("E0_1").unwrap() as usize];
        let e10 = r.tor_index[g.node_id("E1_0").unwrap() as usize];
        assert_eq!(r.distance(e00, e01), 2);
        assert_eq!(r.distance(e00, e10), 4);
        assert_eq!(r.group(e00, e10).len(), 2);
        let a00 = g.node_id("A0_0").unwrap();
        assert_eq!(r.group(a00, e10).len(), 2); // two cores
    }
}
