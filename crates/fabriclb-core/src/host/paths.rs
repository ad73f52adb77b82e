//! Path discovery for edge schemes: which outer source ports take which fabric paths between
//! two hosts.
//!
//! An edge scheme steers a packet by the source port of the header it adds (the "outer"
//! header); the fabric's switches hash the outer header (source and destination host and that
//! port) with ECMP. Real systems find the port-to-path map with traceroute-like probes (Clove,
//! EMAN); the simulator knows every switch's hash and the current routes, so it walks them:
//! outer ports 0, 1, 2, ... until every distinct shortest path has a port (or a budget of
//! ports is spent). The map is recomputed when routing changes.

use crate::lb::ecmp_outer_pick;
use crate::net::routing::Routes;
use crate::net::topology::Graph;

/// The distinct fabric paths from one host to another: for each, an outer source port that
/// takes it and its links (host uplink first, ToR downlink last).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathSet {
    pub ports: Vec<u16>,
    pub links: Vec<Vec<u32>>,
}

/// The links a packet with outer source port `port` takes from `src` to `dst`; empty when
/// some switch has no route. `salts` are the switches' ECMP salts.
pub fn walk(g: &Graph, routes: &Routes, salts: &[u64], src: u32, dst: u32, port: u16) -> Vec<u32> {
    let mut links = vec![g.host_uplink[src as usize]];
    let dst_tor = g.host_tor[dst as usize];
    let down = g.links[g.host_uplink[dst as usize] as usize].reverse;
    let mut at = g.links[links[0] as usize].to;
    for _ in 0..64 {
        if at == dst_tor {
            links.push(down);
            return links;
        }
        let cands = routes.group(at, routes.tor_index[dst_tor as usize]);
        if cands.is_empty() {
            return Vec::new();
        }
        let l = if cands.len() == 1 {
            cands[0]
        } else {
            ecmp_outer_pick(src, dst, port, salts[at as usize], cands)
        };
        links.push(l);
        at = g.links[l as usize].to;
    }
    Vec::new()
}

/// Discover the distinct paths from `src` to `dst`, trying outer ports from 0 up to
/// `max_ports` (the first port found for each path is kept; paths in order of discovery).
pub fn discover(
    g: &Graph,
    routes: &Routes,
    salts: &[u64],
    src: u32,
    dst: u32,
    max_ports: u16,
) -> PathSet {
    let mut set = PathSet::default();
    for port in 0..max_ports {
        let l = walk(g, routes, salts, src, dst, port);
        if !l.is_empty() && !set.links.contains(&l) {
            set.ports.push(port);
            set.links.push(l);
        }
    }
    set
}

/// How many outer ports discovery tries per host pair (every distinct path of the fabrics we
/// build is found well within it: 16 paths of a 4-spine, 2-links-per-pair leaf-spine within
/// the first 64 ports, tested).
pub const DISCOVERY_PORTS: u16 = 256;

/// The rate of the slowest of `links`, each link's rate given by `rate` (0 for no links).
pub fn bottleneck_bps(links: &[u32], rate: impl Fn(u32) -> u64) -> u64 {
    links.iter().map(|&l| rate(l)).min().unwrap_or(0)
}

/// Whether some two hosts (under different ToRs) have more than one shortest path between
/// them: some switch on a path between two ToRs has two next hops or more. An edge scheme
/// has nothing to balance without one.
pub fn any_multipath(g: &Graph, routes: &Routes) -> bool {
    let mut tors: Vec<u32> = g.host_tor.clone();
    tors.sort_unstable();
    tors.dedup();
    let mut stack = Vec::new();
    let mut seen = vec![false; g.nodes.len()];
    for &a in &tors {
        for &b in &tors {
            if a == b {
                continue;
            }
            let ti = routes.tor_index[b as usize];
            seen.iter_mut().for_each(|x| *x = false);
            stack.clear();
            stack.push(a);
            while let Some(at) = stack.pop() {
                if at == b || std::mem::replace(&mut seen[at as usize], true) {
                    continue;
                }
                let next = routes.group(at, ti);
                if next.len() >= 2 {
                    return true;
                }
                stack.extend(next.iter().map(|&l| g.links[l as usize].to));
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::ecmp_salt;
    use crate::net::topology::TopologyConfig;

    fn fabric(links_per_pair: u32) -> (Graph, Routes, Vec<u64>) {
        let cfg: TopologyConfig = serde_json::from_value(serde_json::json!({
            "kind": "leaf-spine", "leaves": 2, "spines": 4, "hosts_per_leaf": 2,
            "host_rate": "10Gbps", "fabric_rate": "40Gbps", "links_per_pair": links_per_pair
        }))
        .unwrap();
        let g = cfg.build().unwrap();
        let routes = Routes::compute(&g, &vec![true; g.links.len()]);
        let salts = (0..g.nodes.len() as u32)
            .map(|s| ecmp_salt(s, true))
            .collect();
        (g, routes, salts)
    }

    #[test]
    fn discovery_finds_every_path_and_each_port_takes_its_own() {
        // (links per leaf-spine pair, distinct paths between hosts under different leaves)
        // 4 spines x links up x links down.
        for (lpp, paths) in [(1, 4), (2, 16)] {
            let (g, routes, salts) = fabric(lpp);
            let (a, b) = (0, 2); // H0 under L0, H2 under L1
            let set = discover(&g, &routes, &salts, a, b, 256);
            assert_eq!(set.links.len(), paths, "{lpp} links per pair");
            for (port, links) in set.ports.iter().zip(&set.links) {
                assert_eq!(&walk(&g, &routes, &salts, a, b, *port), links);
                assert_eq!(links.len(), 4, "host, leaf, spine, leaf");
            }
            // Under one leaf there is one path.
            assert_eq!(discover(&g, &routes, &salts, 0, 1, 64).links.len(), 1);
            // All of them within the discovery budget's first quarter.
            let first = discover(&g, &routes, &salts, a, b, DISCOVERY_PORTS / 4);
            assert_eq!(first.links.len(), paths);
        }
    }

    #[test]
    fn multipath_needs_two_next_hops_somewhere() {
        // (spines, links per pair, leaves): a single spine with one link per leaf pair leaves
        // one path between any two hosts; a second spine or a second parallel link adds one.
        for (spines, lpp, leaves, want) in [
            (1, 1, 2, false),
            (1, 1, 4, false),
            (2, 1, 2, true),
            (1, 2, 2, true),
            (4, 1, 1, false), // one leaf: no host pair crosses the fabric
        ] {
            let cfg: TopologyConfig = serde_json::from_value(serde_json::json!({
                "kind": "leaf-spine", "leaves": leaves, "spines": spines, "hosts_per_leaf": 2,
                "host_rate": "10Gbps", "fabric_rate": "40Gbps", "links_per_pair": lpp
            }))
            .unwrap();
            let g = cfg.build().unwrap();
            let routes = Routes::compute(&g, &vec![true; g.links.len()]);
            assert_eq!(any_multipath(&g, &routes), want, "{spines} {lpp} {leaves}");
        }
    }

    #[test]
    fn bottleneck_is_the_slowest_link() {
        let rates = [10, 3, 40, 6];
        let cases: [(&[u32], u64); 4] = [(&[0, 1, 2], 3), (&[2], 40), (&[0, 2, 3], 6), (&[], 0)];
        for (links, want) in cases {
            assert_eq!(
                bottleneck_bps(links, |l| rates[l as usize]),
                want,
                "{links:?}"
            );
        }
    }

    #[test]
    fn a_port_keeps_its_path_whatever_the_inner_flow() {
        // The outer hash ignores the inner 5-tuple: one outer port, one path for every flow.
        let (g, routes, salts) = fabric(2);
        let p0 = walk(&g, &routes, &salts, 0, 3, 17);
        for _ in 0..10 {
            assert_eq!(walk(&g, &routes, &salts, 0, 3, 17), p0);
        }
        // Different ports spread over the paths.
        let distinct: std::collections::HashSet<Vec<u32>> = (0..64)
            .map(|port| walk(&g, &routes, &salts, 0, 3, port))
            .collect();
        assert!(distinct.len() > 4);
    }
}
