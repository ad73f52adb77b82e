//! Ideal flow completion time: the FCT a flow would have alone in the idle fabric with the same
//! TCP settings. One definition, used everywhere (docs/OUTPUTS.md states it as a formula).
//!
//! The path is the shortest path from source to destination with the highest bottleneck rate
//! (ties: the first next hop in port order), with its per-hop rates r_h and delays d_h. With
//! segments i = 0..n-1 (payload MSS, the last one shorter), frame sizes on the wire w_i, ACKs
//! of wire size a, and the sender's window growing by one segment per ACK from IW (slow start
//! with per-segment ACKs, ABC L = 2, capped by the receive window), the times follow a max-plus
//! recursion, store-and-forward at every hop:
//!
//! - ready_i = t_hs for i < IW, else the arrival of the ACK of segment ⌊(i − IW)/2⌋
//!   (each ACK frees one segment and grows the window by one);
//! - depart_{h,i} = max(arrive_{h,i}, depart_{h,i−1}) + 8 w_i / r_h, arrive_{h+1,i} = depart_{h,i} + d_h;
//! - the ACK of segment i leaves the receiver when segment i arrives and crosses the reverse
//!   path by the same recursion;
//! - t_hs = 0 on a persistent connection, else the SYN / SYN-ACK round trip (minimum frames);
//! - ideal FCT = arrival of the last segment at the receiver.
//!
//! Once the window no longer limits the sender (after slow start has filled the path) the
//! remaining full segments leave back to back at the bottleneck rate; the recursion is then
//! closed in one step, so long flows cost O(BDP) to evaluate.

use crate::net::packet::{frame_bytes, PREAMBLE_IFG};
use crate::units::{ser_ps, Time};

#[derive(Clone, Debug)]
pub struct Hop {
    pub rate_bps: u64,
    pub delay_ps: Time,
    /// Header bytes added on this hop (the overlay on fabric links), 0 otherwise.
    pub extra_bytes: u32,
}

pub struct IdealParams {
    pub mss: u64,
    pub iw: u64,
    pub rwnd_segments: u64,
}

/// Each hop's serialization time of a frame of `wire` bytes. Computed once per flow for the
/// full segment and the ACK, not per segment (a division per hop and segment was most of the
/// cost of long flows).
fn sers(hops: &[Hop], wire: u64) -> Vec<Time> {
    hops.iter()
        .map(|hop| ser_ps(wire + hop.extra_bytes as u64, hop.rate_bps))
        .collect()
}

/// One frame across `hops` (serialization times `ser`) from time `t`, store-and-forward after
/// the frames before it (`free`: when each hop is next free); returns its arrival.
fn traverse(hops: &[Hop], ser: &[Time], free: &mut [Time], mut t: Time) -> Time {
    for ((hop, &s), f) in hops.iter().zip(ser).zip(free.iter_mut()) {
        let end = t.max(*f) + s;
        *f = end;
        t = end + hop.delay_ps;
    }
    t
}

/// Ideal FCT in picoseconds of a flow of `size` bytes.
pub fn ideal_fct(fwd: &[Hop], rev: &[Hop], p: &IdealParams, size: u64, handshake: bool) -> Time {
    ideal_impl(fwd, rev, p, size, handshake, true)
}

fn ideal_impl(
    fwd: &[Hop],
    rev: &[Hop],
    p: &IdealParams,
    size: u64,
    handshake: bool,
    shortcut: bool,
) -> Time {
    let ack_wire = (frame_bytes(0) + PREAMBLE_IFG) as u64;
    let mut ffree = vec![0; fwd.len()];
    let mut rfree = vec![0; rev.len()];
    let ack_ser = sers(rev, ack_wire);
    let t_hs = if handshake {
        let t = traverse(fwd, &sers(fwd, ack_wire), &mut ffree, 0);
        traverse(rev, &ack_ser, &mut rfree, t)
    } else {
        0
    };
    let n = size.div_ceil(p.mss).max(1);
    let wire_of = |i: u64| -> u64 {
        let len = if i + 1 == n {
            size - (n - 1) * p.mss
        } else {
            p.mss
        };
        (frame_bytes(len.max(1) as u32) + PREAMBLE_IFG) as u64
    };
    let bottleneck = fwd
        .iter()
        .min_by_key(|h| h.rate_bps)
        .cloned()
        .unwrap_or(Hop {
            rate_bps: 1,
            delay_ps: 0,
            extra_bytes: 0,
        });
    let full_ser = sers(fwd, wire_of(0));
    let mut acks: Vec<Time> = Vec::with_capacity(n.min(1 << 16) as usize);
    let mut last_arrival = 0;
    let mut unblocked_run = 0u32;
    let mut i = 0u64;
    while i < n {
        let ready = if i < p.iw {
            t_hs
        } else {
            let j = ((i - p.iw) / 2) as usize;
            // Receive-window cap: segment i also waits for the ACK of segment i - rwnd.
            let mut r = acks[j];
            if i >= p.rwnd_segments {
                r = r.max(acks[(i - p.rwnd_segments) as usize]);
            }
            r
        };
        let blocked = ready > ffree[0];
        let arr = if i + 1 < n {
            traverse(fwd, &full_ser, &mut ffree, ready)
        } else {
            traverse(fwd, &sers(fwd, wire_of(i)), &mut ffree, ready)
        };
        last_arrival = arr;
        let ack = traverse(rev, &ack_ser, &mut rfree, arr);
        acks.push(ack);
        i += 1;
        unblocked_run = if blocked { 0 } else { unblocked_run + 1 };
        // Steady state: the window has not bound for a long run and cannot bind again while
        // it keeps growing faster than the path drains; close the rest in one step.
        if shortcut && unblocked_run > 64 && i + 1 < n && i > p.iw * 4 && p.rwnd_segments > 4 * i {
            let full = n - 1 - i; // full segments before the last one
            let per = ser_ps(
                wire_of(0) + bottleneck.extra_bytes as u64,
                bottleneck.rate_bps,
            );
            let last = ser_ps(
                wire_of(n - 1) + bottleneck.extra_bytes as u64,
                bottleneck.rate_bps,
            );
            return last_arrival + full * per + last;
        }
    }
    last_arrival
}

#[cfg(test)]
mod tests {
    use super::*;
    const G10: u64 = 10_000_000_000;
    fn path(n: usize) -> Vec<Hop> {
        (0..n)
            .map(|_| Hop {
                rate_bps: G10,
                delay_ps: 1_000_000,
                extra_bytes: 0,
            })
            .collect()
    }
    fn params() -> IdealParams {
        IdealParams {
            mss: 1460,
            iw: 10,
            rwnd_segments: 1 << 30,
        }
    }

    #[test]
    fn one_packet_is_store_and_forward_plus_propagation() {
        let p = path(4);
        let t = ideal_fct(&p, &p, &params(), 1000, false);
        let want = 4 * (ser_ps(frame_bytes(1000) as u64 + 20, G10) + 1_000_000);
        assert_eq!(t, want);
        let with_hs = ideal_fct(&p, &p, &params(), 1000, true);
        let rtt_min = 8 * (ser_ps(84, G10) + 1_000_000);
        assert_eq!(with_hs, want + rtt_min);
    }

    #[test]
    fn long_flows_approach_line_rate_and_shortcut_matches_full_recursion() {
        let p = path(4);
        let size = 100_000_000u64;
        let t = ideal_fct(&p, &p, &params(), size, false);
        let line = ser_ps(1538, G10) * size.div_ceil(1460);
        assert!(t > line && (t as f64) < line as f64 * 1.01, "{t} vs {line}");
        // The closed-form tail equals the full recursion.
        for size in [200_000u64, 2_000_000, 20_000_001] {
            assert_eq!(
                ideal_impl(&p, &p, &params(), size, true, true),
                ideal_impl(&p, &p, &params(), size, true, false),
                "{size}"
            );
        }
    }
}
