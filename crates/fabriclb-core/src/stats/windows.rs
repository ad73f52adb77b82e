//! Per-window throughput of every directed link (windows.csv), accumulated as the run goes.
//!
//! A packet's bytes are credited to the windows its reception crosses, in proportion to the
//! time: its last bit arrives at `now` and its first `wire · 8 / nominal rate` earlier. A link
//! receives one packet at a time, so those intervals never overlap and no window holds more
//! than its length at the nominal rate: utilisation is at most 1 (a degraded link's packets
//! take longer, which only spreads them further). Validation makes a window at least one
//! full-size packet of the slowest link long, so an interval crosses at most one boundary and
//! two windows are open at a time: window `index` is closed (`flush`) one packet time `lag`
//! after its end, when nothing can be credited to it any more.

use crate::net::topology::Graph;
use crate::units::{Time, PS_PER_S};

/// Rows of the windows table.
#[derive(Default)]
pub(crate) struct WindowRows {
    pub window: Vec<u64>,
    pub t_start_ms: Vec<f64>,
    pub name: Vec<String>,
    pub kind: Vec<String>,
    pub tx_bytes: Vec<u64>,
    pub throughput_gbps: Vec<f64>,
    pub utilization: Vec<f64>,
    pub imbalance: Vec<f64>,
}

pub(crate) struct Windows {
    width_ps: Time,
    /// The longest reception of one packet on any link (at its nominal rate).
    pub lag_ps: Time,
    /// The open window: `index`, its end `boundary`, and the bytes credited to it and to the
    /// next one.
    index: u64,
    boundary: Time,
    cur: Vec<f64>,
    next: Vec<f64>,
    ps_per_byte: Vec<f64>,
    nominal_bps: Vec<u64>,
    /// Leaves and their uplinks, for the imbalance rows.
    leaf_uplinks: Vec<(u32, Vec<u32>)>,
    pub rows: WindowRows,
}

impl Windows {
    pub fn new(g: &Graph, width_ps: Time, largest_wire_bytes: u64) -> Windows {
        let nominal_bps: Vec<u64> = g.links.iter().map(|l| l.rate_bps).collect();
        let ps_per_byte: Vec<f64> = nominal_bps
            .iter()
            .map(|&r| 8.0 * PS_PER_S as f64 / r as f64)
            .collect();
        let slowest = nominal_bps.iter().copied().min().unwrap_or(1);
        let lag_ps = crate::units::ser_ps(largest_wire_bytes, slowest).min(width_ps);
        let leaf_uplinks = g
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.role == crate::net::topology::Role::Leaf)
            .map(|(i, n)| {
                (
                    i as u32,
                    n.ports
                        .iter()
                        .copied()
                        .filter(|&l| !g.is_host(g.links[l as usize].to))
                        .collect::<Vec<_>>(),
                )
            })
            .filter(|(_, ups)| ups.len() >= 2)
            .collect();
        let n = g.links.len();
        Windows {
            width_ps,
            lag_ps,
            index: 0,
            boundary: width_ps,
            cur: vec![0.0; n],
            next: vec![0.0; n],
            ps_per_byte,
            nominal_bps,
            leaf_uplinks,
            rows: WindowRows::default(),
        }
    }

    /// When the open window is closed.
    pub fn close_at(&self) -> Time {
        self.boundary + self.lag_ps
    }

    /// A packet of `wire` bytes finished arriving over `link` at `now`.
    #[inline]
    pub fn credit(&mut self, link: usize, now: Time, wire: u32) {
        let b = wire as f64;
        let boundary = self.boundary;
        if now <= boundary {
            self.cur[link] += b;
            return;
        }
        let start = now as f64 - b * self.ps_per_byte[link];
        if start >= boundary as f64 {
            self.next[link] += b;
        } else {
            let before = b * (boundary as f64 - start) / (now as f64 - start);
            self.cur[link] += before;
            self.next[link] += b - before;
        }
    }

    /// Close the open window (at `close_at`, or at the end of the run, `now`), and at the
    /// end also the one after it if the run reached into it.
    pub fn flush(&mut self, g: &Graph, now: Time, at_end: bool) {
        self.emit(g, now);
        std::mem::swap(&mut self.cur, &mut self.next);
        self.next.iter_mut().for_each(|b| *b = 0.0);
        self.index += 1;
        self.boundary += self.width_ps;
        if at_end {
            self.emit(g, now);
        }
    }

    /// Rows of window `index`, ending at the earlier of its end and `now`.
    fn emit(&mut self, g: &Graph, now: Time) {
        let t_start = self.index * self.width_ps;
        let t_end = (t_start + self.width_ps).min(now);
        if t_end <= t_start {
            return;
        }
        let dur_s = (t_end - t_start) as f64 * 1e-12;
        let rows = &mut self.rows;
        for (l, d) in g.links.iter().enumerate() {
            let b = self.cur[l];
            let kind = match (g.is_host(d.from), g.is_host(d.to)) {
                (true, _) => "host-up",
                (_, true) => "host-down",
                _ => "fabric",
            };
            rows.window.push(self.index);
            rows.t_start_ms.push(t_start as f64 * 1e-9);
            rows.name.push(g.link_name(l as u32));
            rows.kind.push(kind.into());
            rows.tx_bytes.push(b.round() as u64);
            let gbps = b * 8.0 / dur_s / 1e9;
            rows.throughput_gbps.push(gbps);
            rows.utilization
                .push(gbps * 1e9 / self.nominal_bps[l] as f64);
            rows.imbalance.push(f64::NAN);
        }
        for (leaf, ups) in &self.leaf_uplinks {
            let vals: Vec<f64> = ups.iter().map(|&l| self.cur[l as usize]).collect();
            let sum = vals.iter().sum::<f64>();
            let avg = sum / vals.len() as f64;
            let (mx, mn) = vals
                .iter()
                .fold((f64::MIN, f64::MAX), |(a, b), &v| (a.max(v), b.min(v)));
            rows.window.push(self.index);
            rows.t_start_ms.push(t_start as f64 * 1e-9);
            rows.name
                .push(format!("{}:uplinks", g.nodes[*leaf as usize].name));
            rows.kind.push("leaf-uplink-imbalance".into());
            rows.tx_bytes.push(sum.round() as u64);
            rows.throughput_gbps.push(sum * 8.0 / dur_s / 1e9);
            rows.utilization.push(f64::NAN);
            rows.imbalance
                .push(if avg > 0.0 { (mx - mn) / avg } else { f64::NAN });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::topology::{LeafSpineConfig, TopologyConfig};
    use crate::units::{Duration, Rate};

    #[test]
    fn bytes_are_split_over_the_windows_a_packet_crosses() {
        let g = TopologyConfig::LeafSpine(LeafSpineConfig {
            leaves: 2,
            spines: 1,
            hosts_per_leaf: 1,
            host_rate: Rate(8_000_000_000), // 1 byte per ns
            fabric_rate: Rate(8_000_000_000),
            links_per_pair: 1,
            host_delay: Duration(0),
            fabric_delay: Duration(0),
        })
        .build()
        .unwrap();
        // 1 B/ns: a 1000-byte packet takes 1000 ns. Windows of 10 us.
        let mut w = Windows::new(&g, 10_000_000, 1000);
        assert_eq!(w.lag_ps, 1_000_000);
        assert_eq!(w.close_at(), 11_000_000);
        // (arrival time ps, bytes) -> (credited to window 0, to window 1)
        let cases = [
            (5_000_000, 1000.0, 1000.0, 0.0),
            (10_000_000, 1000.0, 1000.0, 0.0), // ends exactly at the boundary
            (10_250_000, 1000.0, 750.0, 250.0), // a quarter after the boundary
            (11_000_000, 1000.0, 0.0, 1000.0), // starts at the boundary
        ];
        for (t, b, c0, c1) in cases {
            let (a0, a1) = (w.cur[0], w.next[0]);
            w.credit(0, t, b as u32);
            assert!((w.cur[0] - a0 - c0).abs() < 1e-9, "{t}: {}", w.cur[0] - a0);
            assert!(
                (w.next[0] - a1 - c1).abs() < 1e-9,
                "{t}: {}",
                w.next[0] - a1
            );
        }
        w.flush(&g, 11_000_000, false);
        assert_eq!(w.rows.window[0], 0);
        assert_eq!(w.rows.tx_bytes[0], 2750);
        assert_eq!(w.cur[0], 1250.0);
        assert_eq!(w.close_at(), 21_000_000);
        // Back-to-back packets at line rate fill a window exactly: utilisation 1, not above.
        let mut w = Windows::new(&g, 10_000_000, 1000);
        for k in 1..=25u64 {
            let t = 500_000 + k * 1_000_000;
            while w.close_at() < t {
                let c = w.close_at();
                w.flush(&g, c, false);
            }
            w.credit(0, t, 1000);
        }
        w.flush(&g, 30_000_000, true);
        let util: Vec<f64> = (0..w.rows.window.len())
            .filter(|&i| w.rows.name[i] == g.link_name(0))
            .map(|i| w.rows.utilization[i])
            .collect();
        assert!(util.iter().all(|&u| u <= 1.0 + 1e-12), "{util:?}");
        assert!((util[1] - 1.0).abs() < 1e-9, "{util:?}");
    }
}
