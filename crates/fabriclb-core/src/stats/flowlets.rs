//! Flowlets of the packets crossing chosen links (`measure.flowlet_links`), counted during the
//! run: CONGA §2.6.1 (Fig. 5) measures, for flowlet inactivity gaps of 250 ms, 500 µs and
//! 100 µs, how the bytes spread over flowlet sizes and how many flows are active in 1 ms
//! intervals. The definitions are those of `fabriclb flowlets` (python/fabriclb/capture.py,
//! docs/FLOWLETS.md), and the clock is the pcap writer's (nanoseconds, the instant the packet
//! left the port), so a pcap of the same links read back by the tool gives the same tables:
//!
//! - a flow is one direction of a 5-tuple; its bytes are TCP payload bytes; a packet without
//!   payload (pure ACK, SYN) starts and extends nothing;
//! - a payload packet starts a new flowlet of its flow when at least `gap` passed since the
//!   flow's previous payload packet;
//! - a flow or flowlet is active in a 1 ms window (multiples of 1 ms of simulated time) when it
//!   sends payload in it; windows run from the first counted packet's to the last one's.
//!
//! Only packets that left the port in the measurement interval [`warmup`, `duration`) count,
//! as in a capture started and stopped at those instants. Memory: one entry per flow that sent
//! payload within max(largest gap, 1 ms); older ones are flushed into the fixed histograms.

use crate::net::packet::Packet;
use crate::table::{Column, Table};
use crate::units::Time;
use std::collections::{BTreeMap, HashMap};

/// The concurrency windows: 1 ms (§2.6.1).
pub const WINDOW_NS: u64 = 1_000_000;
/// At most this many gaps (`measure.flowlet_gaps`).
pub const MAX_GAPS: usize = 8;
/// Size bins: exact below 64 bytes, then 32 per octave (at most 3% wide), integer edges.
const SUB_BITS: u32 = 5;
const NBINS: usize = (2 << SUB_BITS) + (64 - SUB_BITS as usize - 1) * (1 << SUB_BITS);

/// The bin of a flowlet of `size` >= 1 bytes.
pub fn size_bin(size: u64) -> usize {
    if size < 2 << SUB_BITS {
        return size as usize;
    }
    let e = 64 - size.leading_zeros() - SUB_BITS - 1;
    (2 << SUB_BITS) + (e as usize - 1) * (1 << SUB_BITS) + (size >> e) as usize - (1 << SUB_BITS)
}

/// [from, to) of bin `b`, in bytes.
pub fn bin_edges(b: usize) -> (u64, u64) {
    if b < 2 << SUB_BITS {
        return (b as u64, b as u64 + 1);
    }
    let e = (b - (2 << SUB_BITS)) / (1 << SUB_BITS);
    let m = ((b - (2 << SUB_BITS)) % (1 << SUB_BITS) + (1 << SUB_BITS)) as u64;
    (m << (e + 1), (m + 1) << (e + 1))
}

struct Flow {
    last_ns: u64,
    window: u64,
    /// Per gap: bytes of the open flowlet, and the window it was last counted in.
    bytes: [u64; MAX_GAPS],
    counted: [u64; MAX_GAPS],
}

pub struct FlowletCounter {
    gaps_ns: Vec<u64>,
    from: Time,
    to: Time,
    evict_ns: u64,
    flows: HashMap<(u32, u32, u16, u16), Flow>,
    /// Per gap and size bin: flowlets and their bytes.
    count: Vec<Vec<u64>>,
    bytes: Vec<Vec<u64>>,
    clock: u64,
    win: Option<u64>,
    next_sweep: u64,
    cur_flows: u64,
    cur_flowlets: [u64; MAX_GAPS],
    /// Active count -> windows with that count: flows, and flowlets per gap.
    conc_flows: BTreeMap<u64, u64>,
    conc_flowlets: Vec<BTreeMap<u64, u64>>,
    pub packets: u64,
    pub payload_packets: u64,
    pub payload_bytes: u64,
    pub windows: u64,
    /// Packets whose time was below an earlier packet's (links of different delays in one
    /// count): they count at the latest time seen, as the tool does.
    pub late: u64,
}

impl FlowletCounter {
    /// `gaps_ns`: 1..=MAX_GAPS distinct gaps > 0 (checked by validation); packets count when
    /// they left the port in [from, to).
    pub fn new(gaps_ns: Vec<u64>, from: Time, to: Time) -> FlowletCounter {
        assert!(!gaps_ns.is_empty() && gaps_ns.len() <= MAX_GAPS);
        let g = gaps_ns.len();
        FlowletCounter {
            evict_ns: gaps_ns.iter().copied().max().unwrap_or(0).max(WINDOW_NS),
            gaps_ns,
            from,
            to,
            flows: HashMap::new(),
            count: vec![vec![0; NBINS]; g],
            bytes: vec![vec![0; NBINS]; g],
            clock: 0,
            win: None,
            next_sweep: 0,
            cur_flows: 0,
            cur_flowlets: [0; MAX_GAPS],
            conc_flows: BTreeMap::new(),
            conc_flowlets: vec![BTreeMap::new(); g],
            packets: 0,
            payload_packets: 0,
            payload_bytes: 0,
            windows: 0,
            late: 0,
        }
    }

    /// A packet that left a counted port at `t` (picoseconds).
    pub fn packet(&mut self, t: Time, p: &Packet) {
        if t < self.from || t >= self.to {
            return;
        }
        let mut t = t / 1000;
        if t < self.clock {
            self.late += 1;
            t = self.clock;
        }
        self.clock = t;
        let w = t / WINDOW_NS;
        match self.win {
            Some(cur) if cur == w => {}
            Some(cur) => {
                self.close(w - cur - 1);
                self.win = Some(w);
            }
            None => self.win = Some(w),
        }
        if t >= self.next_sweep {
            self.sweep(t);
        }
        self.packets += 1;
        if p.payload == 0 {
            return;
        }
        let n = p.payload as u64;
        self.payload_packets += 1;
        self.payload_bytes += n;
        let g = self.gaps_ns.len();
        let key = (p.src, p.dst, p.sport, p.dport);
        let Some(f) = self.flows.get_mut(&key) else {
            self.flows.insert(
                key,
                Flow {
                    last_ns: t,
                    window: w,
                    bytes: [n; MAX_GAPS],
                    counted: [w; MAX_GAPS],
                },
            );
            self.cur_flows += 1;
            for c in &mut self.cur_flowlets[..g] {
                *c += 1;
            }
            return;
        };
        let dt = t - f.last_ns;
        f.last_ns = t;
        if f.window != w {
            f.window = w;
            self.cur_flows += 1;
        }
        for i in 0..g {
            if dt >= self.gaps_ns[i] {
                let b = size_bin(f.bytes[i]);
                self.count[i][b] += 1;
                self.bytes[i][b] += f.bytes[i];
                f.bytes[i] = n;
                f.counted[i] = w;
                self.cur_flowlets[i] += 1;
            } else {
                f.bytes[i] += n;
                if f.counted[i] != w {
                    f.counted[i] = w;
                    self.cur_flowlets[i] += 1;
                }
            }
        }
    }

    fn flush(count: &mut [Vec<u64>], bytes: &mut [Vec<u64>], f: &Flow) {
        for (i, (c, b)) in count.iter_mut().zip(bytes.iter_mut()).enumerate() {
            let k = size_bin(f.bytes[i]);
            c[k] += 1;
            b[k] += f.bytes[i];
        }
    }

    /// Close the current window, then `empty` windows without payload.
    fn close(&mut self, empty: u64) {
        *self.conc_flows.entry(self.cur_flows).or_default() += 1;
        self.cur_flows = 0;
        for (m, c) in self.conc_flowlets.iter_mut().zip(&mut self.cur_flowlets) {
            *m.entry(*c).or_default() += 1;
            *c = 0;
        }
        self.windows += 1 + empty;
        if empty > 0 {
            *self.conc_flows.entry(0).or_default() += empty;
            for m in &mut self.conc_flowlets {
                *m.entry(0).or_default() += empty;
            }
        }
    }

    /// Flush the flows silent for `evict_ns`: their next packet starts a flowlet at every gap
    /// and is in a later window, so dropping them changes no count.
    fn sweep(&mut self, t: u64) {
        let (count, bytes, evict) = (&mut self.count, &mut self.bytes, self.evict_ns);
        self.flows.retain(|_, f| {
            let keep = t - f.last_ns < evict;
            if !keep {
                Self::flush(count, bytes, f);
            }
            keep
        });
        self.next_sweep = t + evict;
    }

    /// Close the last window and every open flowlet (the counts are then final); the tables `flowlet_sizes` and
    /// `flowlet_concurrency` (docs/OUTPUTS.md).
    pub fn finish(&mut self) -> (Table, Table) {
        if self.win.take().is_some() {
            self.close(0);
        }
        for (_, f) in self.flows.drain() {
            Self::flush(&mut self.count, &mut self.bytes, &f);
        }
        let (mut gap, mut lo, mut hi, mut n, mut by, mut cdf) =
            (vec![], vec![], vec![], vec![], vec![], vec![]);
        for (i, &g) in self.gaps_ns.iter().enumerate() {
            let total: u64 = self.bytes[i].iter().sum();
            let mut cum = 0u64;
            for (b, (&c, &s)) in self.count[i].iter().zip(&self.bytes[i]).enumerate() {
                if c > 0 {
                    cum += s;
                    let (l, h) = bin_edges(b);
                    gap.push(g as f64 / 1000.0);
                    lo.push(l);
                    hi.push(h);
                    n.push(c);
                    by.push(s);
                    cdf.push(cum as f64 / total as f64);
                }
            }
        }
        let mut sizes = Table::default();
        sizes.push("gap_us", Column::F64(gap));
        sizes.push("size_from_bytes", Column::U64(lo));
        sizes.push("size_to_bytes", Column::U64(hi));
        sizes.push("flowlets", Column::U64(n));
        sizes.push("bytes", Column::U64(by));
        sizes.push("bytes_cdf", Column::F64(cdf));
        let (mut what, mut gap, mut active, mut windows) = (vec![], vec![], vec![], vec![]);
        let all = std::iter::once(("flows", f64::NAN, &self.conc_flows)).chain(
            self.gaps_ns
                .iter()
                .zip(&self.conc_flowlets)
                .map(|(&g, m)| ("flowlets", g as f64 / 1000.0, m)),
        );
        for (w, g, m) in all {
            for (&a, &k) in m {
                what.push(w.to_string());
                gap.push(g);
                active.push(a);
                windows.push(k);
            }
        }
        let mut conc = Table::default();
        conc.push("what", Column::Str(what));
        conc.push("gap_us", Column::F64(gap));
        conc.push("active", Column::U64(active));
        conc.push("windows", Column::U64(windows));
        (sizes, conc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(src: u32, payload: u32) -> Packet {
        Packet {
            src,
            dst: 99,
            sport: 1,
            dport: 2,
            payload,
            ..Packet::default()
        }
    }
    const US: u64 = 1_000_000; // ps

    fn rows(t: &Table, name: &str) -> Vec<f64> {
        match t.get(name).unwrap() {
            Column::U64(v) => v.iter().map(|&x| x as f64).collect(),
            Column::F64(v) => v.clone(),
            _ => panic!(),
        }
    }

    #[test]
    fn bins_are_exact_below_64_then_32_per_octave() {
        // (size, bin, from, to)
        let table = [
            (1, 1, 1, 2),
            (63, 63, 63, 64),
            (64, 64, 64, 66),
            (65, 64, 64, 66),
            (127, 95, 126, 128),
            (128, 96, 128, 132),
            (1460, 205, 1440, 1472),
            (1_000_000, 509, 999_424, 1_015_808),
        ];
        for (s, b, lo, hi) in table {
            assert_eq!(size_bin(s), b, "size {s}");
            assert_eq!(bin_edges(b), (lo, hi), "bin {b}");
            assert!(lo <= s && s < hi);
        }
        assert_eq!(size_bin(u64::MAX), NBINS - 1);
        // Every bin at most 1/32 wide above 64 bytes, and the bins tile the sizes.
        for b in 64..NBINS - 1 {
            let (lo, hi) = bin_edges(b);
            assert_eq!(bin_edges(b + 1).0, hi);
            assert!((hi - lo) * 32 <= lo);
        }
    }

    /// Gaps of 100 µs and 1 ms over one flow's payload packets at the given µs (and one pure
    /// ACK, which must change nothing): (flowlet sizes per gap), as a table.
    #[test]
    fn a_gap_of_at_least_g_starts_a_flowlet_and_acks_do_nothing() {
        let mut c = FlowletCounter::new(vec![100_000, 1_000_000], 0, u64::MAX);
        // t in µs, payload: gaps of 99 (same flowlet), exactly 100 (new at 100 µs), 1000.
        for (t, n) in [(0, 1000), (99, 1000), (150, 0), (199, 1000), (1199, 500)] {
            c.packet(t * US, &pkt(1, n));
        }
        assert_eq!(
            (c.packets, c.payload_packets, c.payload_bytes),
            (5, 4, 3500)
        );
        let (s, k) = c.finish();
        // 100 µs: flowlets of 2000, 1000, 500; 1 ms: 3000 (the 199 -> 1199 gap is exactly
        // 1 ms: a new flowlet) and 500.
        assert_eq!(
            rows(&s, "gap_us"),
            vec![100.0, 100.0, 100.0, 1000.0, 1000.0]
        );
        assert_eq!(rows(&s, "flowlets"), vec![1.0, 1.0, 1.0, 1.0, 1.0]);
        assert_eq!(
            rows(&s, "bytes"),
            vec![500.0, 1000.0, 2000.0, 500.0, 3000.0]
        );
        assert_eq!(
            rows(&s, "bytes_cdf"),
            vec![500.0 / 3500.0, 1500.0 / 3500.0, 1.0, 500.0 / 3500.0, 1.0]
        );
        // Windows 0 and 1 (1 ms each): one flow in each; flowlets of 100 µs: 2 in window 0
        // (the first and the one from 100 µs), 1 in window 1; of 1 ms: 1 and 1.
        let what = match k.get("what").unwrap() {
            Column::Str(v) => v.clone(),
            _ => panic!(),
        };
        assert_eq!(what, ["flows", "flowlets", "flowlets", "flowlets"]);
        assert_eq!(rows(&k, "active"), vec![1.0, 1.0, 2.0, 1.0]);
        assert_eq!(rows(&k, "windows"), vec![2.0, 1.0, 1.0, 2.0]);
    }

    #[test]
    fn windows_without_payload_count_as_zero_and_the_interval_bounds_the_count() {
        // Counting from 1 ms to 5 ms: packets at 0.5 ms and 5 ms are outside.
        let mut c = FlowletCounter::new(vec![100_000], 1000 * US, 5000 * US);
        for t in [500, 1000, 1050, 4500, 5000] {
            c.packet(t * US, &pkt(1, 100));
        }
        for t in [2000, 3000] {
            c.packet(t * US, &pkt(2, 0));
        }
        assert_eq!(c.packets, 5);
        let (s, k) = c.finish();
        assert_eq!(rows(&s, "bytes"), vec![100.0, 200.0]);
        // Windows 1..=4: flows active 1, 0, 0, 1.
        assert_eq!(rows(&k, "active")[..2], [0.0, 1.0]);
        assert_eq!(rows(&k, "windows")[..2], [2.0, 2.0]);
    }

    #[test]
    fn eviction_of_silent_flows_changes_no_count() {
        // The same packets counted twice, once never evicting: flows silent for
        // max(largest gap, 1 ms) are flushed without changing the tables.
        let mut pkts = vec![];
        let mut t = 0;
        for i in 0..2000u64 {
            t += 37 * US + if i % 50 == 0 { 2000 * US } else { 0 };
            pkts.push((t, (i % 13) as u32, 100 + (i % 5) as u32));
        }
        pkts.push((t + 5000 * US, 0, 100));
        let gaps = vec![250_000, 500_000, 100_000];
        let mut a = FlowletCounter::new(gaps.clone(), 0, u64::MAX);
        let mut b = FlowletCounter::new(gaps, 0, u64::MAX);
        b.evict_ns = u64::MAX / 4;
        for &(t, s, n) in &pkts {
            a.packet(t, &pkt(s, n));
            b.packet(t, &pkt(s, n));
        }
        assert_eq!((a.flows.len(), b.flows.len()), (1, 13));
        let (a, b) = (a.finish(), b.finish());
        assert_eq!(a.0, b.0);
        assert_eq!(a.1.to_csv(), b.1.to_csv());
        assert!(a.0.rows() >= 5, "{}", a.0.to_csv());
    }

    #[test]
    fn late_packets_count_at_the_latest_time() {
        let mut c = FlowletCounter::new(vec![100_000], 0, u64::MAX);
        c.packet(2000 * US, &pkt(1, 10));
        c.packet(500 * US, &pkt(1, 10)); // late: counts at 2 ms, same flowlet
        assert_eq!(c.late, 1);
        let (s, _) = c.finish();
        assert_eq!(rows(&s, "bytes"), vec![20.0]);
    }
}
