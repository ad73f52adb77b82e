//! Table-driven tests of the behaviours beyond the RFC baseline, one per behaviour, each on a
//! hand-built trace. Every table has rows with the behaviour on and off whose expected outcomes
//! differ, so a behaviour that had no effect would fail its own test.
//!
//! The traces run on [`Wire`]: the two ends of one connection joined by a path with a one-way
//! delay and a bottleneck that serialises data segments back to back; a `fate` function drops
//! or delays chosen transmissions. Time advances event by event (packet arrivals and the
//! connection's timers), as in the simulator.

use super::*;
use crate::transport::TransportConfig;
use crate::units::{PS_PER_MS, PS_PER_US};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

fn params(extra: serde_json::Value) -> TcpParams {
    let mut v = serde_json::json!({
        "cc": "newreno", "min_rto": "200ms", "init_cwnd": 10, "sack": true
    });
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    serde_json::from_value::<TransportConfig>(v)
        .unwrap()
        .params()
}

/// What happens to one transmission of a data segment.
#[derive(Clone, Copy, PartialEq)]
enum Fate {
    Deliver,
    Drop,
    /// Arrives this much later than it would have.
    Late(Time),
}

#[derive(Clone, Copy, Debug)]
struct Sent {
    t: Time,
    seq: u64,
    retx: bool,
}

struct Wire {
    p: TcpParams,
    c: Conn,
    now: Time,
    owd_ps: Time,
    ser_ps: Time,
    link_free: Time,
    heap: BinaryHeap<Reverse<(Time, u64, usize)>>,
    pkts: Vec<Packet>,
    order: u64,
    sent: Vec<Sent>,
    /// ACKs received by the sender: (time, ack, dsack, sacked bytes in blocks).
    acks: Vec<(Time, u64, bool)>,
    tx: HashMap<u64, u32>,
}

impl Wire {
    /// A connection with RTT = 2 × `owd_us` plus 1.2 µs per segment at the bottleneck.
    fn new(p: TcpParams, owd_us: u64, established: bool) -> Wire {
        let c = Conn::new(&p, 0, 1, 1, 2, established);
        Wire {
            p,
            c,
            now: PS_PER_MS,
            owd_ps: owd_us * PS_PER_US,
            ser_ps: 1_200_000,
            link_free: 0,
            heap: BinaryHeap::new(),
            pkts: vec![],
            order: 0,
            sent: vec![],
            acks: vec![],
            tx: HashMap::new(),
        }
    }

    fn push(&mut self, t: Time, pk: Packet) {
        self.pkts.push(pk);
        self.order += 1;
        self.heap
            .push(Reverse((t, self.order, self.pkts.len() - 1)));
    }

    /// Put what the sender produced on the path.
    fn emit_data(&mut self, out: Vec<Packet>, fate: &mut impl FnMut(&Packet, u32) -> Fate) {
        for pk in out {
            if pk.payload > 0 {
                let n = self.tx.entry(pk.seq).or_insert(0);
                *n += 1;
                let nth = *n;
                self.sent.push(Sent {
                    t: self.now,
                    seq: pk.seq,
                    retx: pk.tx_count > 1,
                });
                let start = self.now.max(self.link_free);
                self.link_free = start + self.ser_ps;
                let arrive = start + self.ser_ps + self.owd_ps;
                match fate(&pk, nth) {
                    Fate::Deliver => self.push(arrive, pk),
                    Fate::Late(d) => self.push(arrive + d, pk),
                    Fate::Drop => {}
                }
            } else {
                let t = self.now + self.owd_ps;
                self.push(t, pk);
            }
        }
    }

    /// Run until the message is delivered and acknowledged, or `limit` passes.
    fn run(&mut self, bytes: u64, limit: Time, mut fate: impl FnMut(&Packet, u32) -> Fate) {
        let p = self.p.clone();
        self.c.write(0, bytes);
        let mut out = vec![];
        if self.c.state == State::Closed {
            self.c.open(self.now, &p, &mut out);
        } else {
            self.c.try_send(self.now, &p, &mut out);
        }
        self.emit_data(out, &mut fate);
        let mut ev = Events::default();
        loop {
            let next_pkt = self.heap.peek().map(|r| r.0 .0).unwrap_or(NEVER);
            let timers = [self.c.rto_deadline, self.c.delack_deadline, self.c.app_wake];
            let next_timer = timers.iter().copied().min().unwrap();
            let t = next_pkt.min(next_timer);
            if t == NEVER || t > limit {
                break;
            }
            if self.c.snd_una >= bytes && self.heap.is_empty() {
                break;
            }
            self.now = t;
            let mut out = vec![];
            if next_pkt <= next_timer {
                let Reverse((_, _, i)) = self.heap.pop().unwrap();
                let pk = self.pkts[i];
                if pk.is(flags::SYN) && !pk.is(flags::ACK) {
                    let mut a = vec![];
                    self.c.on_syn(t, &pk, &mut a);
                    self.emit_data(a, &mut fate);
                } else if pk.is(flags::ACK) {
                    if !pk.is(flags::SYN) {
                        self.acks.push((t, pk.ack, pk.is(flags::DSACK)));
                    }
                    self.c.on_ack(t, &pk, &p, &mut out);
                } else {
                    let mut a = vec![];
                    self.c.on_data(t, &pk, &p, &mut a, &mut ev);
                    self.emit_data(a, &mut fate);
                }
            } else if self.c.rto_deadline == t {
                self.c.rto_deadline = NEVER;
                self.c.on_timer(t, &p, &mut out);
            } else if self.c.delack_deadline == t {
                let mut a = vec![];
                self.c.on_delack(&p, &mut a);
                self.emit_data(a, &mut fate);
            } else {
                self.c.try_send(t, &p, &mut out);
            }
            self.emit_data(out, &mut fate);
        }
    }

    /// Time of the first retransmission, if any.
    fn first_retx(&self) -> Option<Time> {
        self.sent.iter().find(|s| s.retx).map(|s| s.t)
    }
}

const MSS: u64 = 1460;

/// Early Retransmit (RFC 5827; Linux 3.5+ `tcp_time_to_recover`): three segments, the first
/// lost. Two SACKs can never make three duplicate ACKs: without ER only the RTO repairs it.
#[test]
fn early_retransmit() {
    // (mode, retransmission this long after the last SACK before it, timeouts). Linux starts
    // ER on any SACK while fewer than four segments are out (`packets_out >= sacked_out + 1`).
    let cases = [
        ("off", None, 1),
        ("on", Some(0), 0),
        // Delayed: max(SRTT/4, 2 ms) = 2 ms at a 100 µs RTT.
        ("delayed", Some(2 * PS_PER_MS), 0),
    ];
    for (mode, after, timeouts) in cases {
        let p = params(serde_json::json!({ "early_retransmit": mode }));
        let mut w = Wire::new(p, 50, false);
        w.run(3 * MSS, 5_000 * PS_PER_MS, |pk, n| {
            if pk.seq == 0 && n == 1 {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        });
        assert_eq!(w.c.snd_una, 3 * MSS, "{mode}: delivered");
        assert_eq!(w.c.stats.timeouts, timeouts, "{mode}");
        let rtx = w.first_retx().unwrap();
        let sack = w
            .acks
            .iter()
            .filter(|a| a.1 == 0 && a.0 <= rtx)
            .last()
            .unwrap()
            .0;
        match after {
            Some(d) => assert_eq!(rtx - sack, d, "{mode}"),
            None => assert!(rtx - sack > 150 * PS_PER_MS, "{mode}: the RTO"),
        }
        assert_eq!(
            w.c.stats.early_retransmits,
            (mode != "off") as u64,
            "{mode}"
        );
    }
}

/// Tail Loss Probe (Linux 3.10): the last segments of a flow are lost, so no duplicate ACKs
/// come back. The probe resends the last segment after max(2 SRTT, 10 ms) instead of waiting
/// for the RTO; its SACK then lets Early Retransmit repair the rest.
#[test]
fn tail_loss_probe() {
    // (tlp, early retransmit, segments, segments lost from the tail, retransmission this long
    // after the last ACK (None: the RTO), timeouts)
    let cases = [
        (false, "off", 10u64, 2u64, None, 1u64),
        (true, "on", 10, 2, Some(10 * PS_PER_MS), 0),
        // One segment outstanding: PTO = 1.5 SRTT + 200 ms, but never after the RTO: the probe
        // takes the RTO's place (and is not a timeout).
        (true, "off", 1, 1, Some(0), 0),
        (false, "off", 1, 1, None, 1),
    ];
    for (tlp, er, segs, lost, after, timeouts) in cases {
        let p = params(serde_json::json!({ "tail_loss_probe": tlp, "early_retransmit": er }));
        let mut w = Wire::new(p, 50, false);
        let first_lost = (segs - lost) * MSS;
        w.run(segs * MSS, 5_000 * PS_PER_MS, |pk, n| {
            if pk.seq >= first_lost && n == 1 {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        });
        let case = format!("tlp {tlp}, {segs} segments");
        assert_eq!(w.c.snd_una, segs * MSS, "{case}: delivered");
        assert_eq!(w.c.stats.timeouts, timeouts, "{case}");
        assert_eq!(w.c.stats.loss_probes, tlp as u64, "{case}");
        let rtx = w.first_retx().unwrap();
        let since = match w.acks.iter().filter(|a| a.0 < rtx).last() {
            Some(a) => rtx - a.0,
            None => rtx - w.sent[0].t, // nothing ACKed: from the first transmission
        };
        match after {
            Some(d) if segs > 1 => assert_eq!(since, d, "{case}"),
            _ => assert!(
                (200 * PS_PER_MS..=201 * PS_PER_MS).contains(&since),
                "{case}: {since}"
            ),
        }
    }
}

/// The window during fast recovery (RFC 6937 §3's example: 20 segments in flight, one lost,
/// ssthresh 10 with NewReno): what the sender sends for each duplicate ACK.
#[test]
fn cwnd_reduction_in_recovery() {
    // (mode, new segments sent for duplicate ACKs 4..=11, for 12..=19, cwnd at the end)
    // RFC 6675: the pipe (about 19) is above cwnd (10) for the first ACKs: nothing, then one
    // per ACK. PRR spreads the same sending over the episode: about one per two ACKs. Rate
    // halving: also about one per two ACKs, and cwnd never below ssthresh.
    let cases = [
        ("rfc6675", (0, 8)),
        ("prr", (4, 4)),
        ("rate-halving", (4, 4)),
    ];
    for (mode, (early, late)) in cases {
        let p = params(serde_json::json!({ "cwnd_reduction": mode, "init_cwnd": 20 }));
        let mut w = Wire::new(p, 500, true);
        w.c.w.ssthresh = 1e12;
        w.run(40 * MSS, 3 * PS_PER_S_TEST, |pk, n| {
            if pk.seq == 0 && n == 1 {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        });
        assert_eq!(w.c.stats.timeouts, 0, "{mode}");
        // Duplicate ACKs in order of arrival, and the new data each triggered.
        // (New data sent during recovery brings more duplicate ACKs later: take the first 19.)
        let dups: Vec<Time> = w.acks.iter().filter(|a| a.1 == 0).map(|a| a.0).collect();
        assert!(dups.len() >= 19, "{mode}");
        let new_after = |i: usize| {
            let t = dups[i];
            w.sent
                .iter()
                .filter(|s| s.t == t && !s.retx && s.seq >= 20 * MSS)
                .count()
        };
        let e: usize = (3..11).map(new_after).sum();
        let l: usize = (11..19).map(new_after).sum();
        assert!(
            (e as i64 - early).abs() <= 1 && (l as i64 - late).abs() <= 1,
            "{mode}: {e} then {l} new segments"
        );
        assert!(
            w.c.w.cwnd >= 10.0 * MSS as f64 - 1.0,
            "{mode}: cwnd {}",
            w.c.w.cwnd
        );
    }
}

const PS_PER_S_TEST: Time = 1_000 * PS_PER_MS;

/// D-SACK and undo: segment 5 arrives late, so the third SACK starts a spurious fast
/// retransmit. Undo restores the window: by the timestamp the late original's ACK echoes
/// (Eifel, RFC 3522) when the original beats the retransmission, or by the D-SACK of the
/// duplicate (RFC 2883, RFC 3708) when it comes after it.
#[test]
fn dsack_and_undo() {
    // (lateness, dsack, undo, window restored, a D-SACK reached the sender)
    let short = 6 * 1_200_000; // six segments' time: before the retransmission
    let long = 300 * PS_PER_US; // three RTTs: after it
    let cases = [
        (short, false, false, false, false),
        (short, false, true, true, false),
        (long, true, false, false, true),
        (long, false, true, false, false),
        (long, true, true, true, true),
    ];
    for (late, dsack, undo, restored, saw_dsack) in cases {
        let case = format!("late {late}, dsack {dsack}, undo {undo}");
        let p = params(serde_json::json!({ "dsack": dsack, "undo": undo, "init_cwnd": 20 }));
        let mut w = Wire::new(p, 50, true);
        w.c.w.ssthresh = 1e12;
        w.run(20 * MSS, PS_PER_S_TEST, |pk, n| {
            if pk.seq == 5 * MSS && n == 1 {
                Fate::Late(late)
            } else {
                Fate::Deliver
            }
        });
        assert_eq!(w.c.stats.recoveries, 1, "{case}");
        assert_eq!(w.c.stats.retx_segments, 1, "{case}");
        assert_eq!(w.c.stats.undos, restored as u64, "{case}");
        assert_eq!(w.acks.iter().any(|a| a.2), saw_dsack, "{case}");
        // NewReno halves the window (about 25 segments after slow start); undo restores it.
        let cwnd = w.c.w.cwnd / MSS as f64;
        assert_eq!(cwnd >= 20.0, restored, "{case}: cwnd {cwnd}");
    }
}

/// Adaptive reordering (Linux `tcp_update_reordering`): every 30th segment arrives seven
/// segments late. With a fixed threshold each event is a spurious fast retransmit; once the
/// threshold has adapted, later events are not.
#[test]
fn adaptive_reordering() {
    // (max_reordering, spurious retransmissions over 8 reordering events)
    let cases = [(3, 8), (127, 1)];
    for (max, retx) in cases {
        let p = params(serde_json::json!({
            "max_reordering": max, "dsack": true, "undo": true, "init_cwnd": 40
        }));
        let mut w = Wire::new(p, 50, true);
        w.c.w.ssthresh = 1e12;
        w.run(240 * MSS, 10 * PS_PER_S_TEST, |pk, n| {
            if (pk.seq / MSS) % 30 == 10 && n == 1 {
                Fate::Late(8 * 1_200_000)
            } else {
                Fate::Deliver
            }
        });
        assert_eq!(w.c.snd_una, 240 * MSS);
        assert_eq!(w.c.stats.retx_segments, retx, "max_reordering {max}");
        if max > 3 {
            assert!(w.c.reordering >= 7, "threshold {}", w.c.reordering);
        }
    }
}

/// FACK: three consecutive segments lost. FACK starts recovery as soon as a SACK is more than
/// three segments above snd_una; RFC 6675 waits for three segments to be SACKed.
#[test]
fn fack() {
    // (fack, SACKs received before the fast retransmit)
    for (fack, sacks) in [(true, 1), (false, 3)] {
        let p = params(serde_json::json!({ "fack": fack, "init_cwnd": 20 }));
        let mut w = Wire::new(p, 50, true);
        w.run(20 * MSS, PS_PER_S_TEST, |pk, n| {
            if (5..8).contains(&(pk.seq / MSS)) && n == 1 {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        });
        assert_eq!(w.c.stats.timeouts, 0);
        let rtx = w.first_retx().unwrap();
        // The first ACK of 5 segments is the cumulative ACK of segment 4; the rest are SACKs.
        let before = w
            .acks
            .iter()
            .filter(|a| a.0 <= rtx && a.1 == 5 * MSS)
            .count()
            - 1;
        assert_eq!(before, sacks, "fack {fack}");
    }
}

/// Slow start after idle (LINUX_TCP.md §6's example): cwnd 80, IW 10, idle 2.5 RTOs.
#[test]
fn slow_start_after_idle() {
    // (mode, idle in RTOs, cwnd after, ssthresh after) in segments
    let cases = [
        ("off", 2.5, 80.0, 1000.0),
        ("linux", 2.5, 20.0, 1000.0),
        ("linux", 0.9, 80.0, 1000.0),
        ("rfc5681", 2.5, 10.0, 1000.0),
        // ssthresh rises to 3/4 of the old window (Linux `tcp_current_ssthresh`).
        ("linux", 1.5, 40.0, 60.0),
    ];
    for (mode, idle, cwnd, ss) in cases {
        let p = params(serde_json::json!({ "idle_restart": mode }));
        let mut c = Conn::new(&p, 0, 1, 1, 2, true);
        c.w.cwnd = 80.0 * MSS as f64;
        c.w.ssthresh = if ss == 60.0 { 10.0 } else { 1000.0 } * MSS as f64;
        c.rto_ps = 200 * PS_PER_MS;
        c.last_send = PS_PER_MS;
        c.write(0, 1_000 * MSS);
        let mut out = vec![];
        c.try_send(PS_PER_MS + (idle * 200.0) as Time * PS_PER_MS, &p, &mut out);
        assert_eq!(c.w.cwnd / MSS as f64, cwnd, "{mode} after {idle} RTOs");
        assert_eq!(c.w.ssthresh / MSS as f64, ss, "{mode} after {idle} RTOs");
        assert_eq!(out.len() as f64, cwnd, "it sends the restarted window");
    }
}

/// Linux ACK rules at the receiver (3.10: a 10-segment initial window gives 5 quick ACKs).
#[test]
fn linux_ack_rules() {
    // Segments arriving (time in µs, payload).
    let full = MSS as u32;
    let trace = [
        (0u64, full),
        (10, full),
        (20, full),
        (30, full),
        (40, full),
        (50, full),      // quick ACKs used up, one segment unacknowledged: delayed
        (60, full),      // more than one full segment unacknowledged: ACK
        (70, 100),       // a short segment the application reads at once: ACK
        (80, full),      // delayed, for 40 ms
        (900_000, full), // after an idle gap longer than the RTO: quick ACKs again
        (900_010, full),
    ];
    // (rules, ACK at once for each segment)
    let cases = [
        (
            "linux",
            [
                true, true, true, true, true, false, true, true, false, true, true,
            ],
        ),
        (
            "simple",
            [
                false, true, false, true, false, true, false, true, false, false, true,
            ],
        ),
    ];
    for (rules, want) in cases {
        let p = params(serde_json::json!({
            "ack_rules": rules, "delayed_ack": true, "delayed_ack_timeout": "40ms",
            "initial_rcv_window": 10
        }));
        let mut c = Conn::new(&p, 0, 1, 1, 2, true);
        c.rto_ps = 201 * PS_PER_MS;
        c.write(0, 100 * MSS);
        let mut seq = 0;
        let mut ev = Events::default();
        for (i, &(t_us, len)) in trace.iter().enumerate() {
            let now = PS_PER_MS + t_us * PS_PER_US;
            if c.delack_deadline <= now {
                c.on_delack(&p, &mut vec![]);
            }
            let pk = Packet {
                seq,
                payload: len,
                tx_count: 1,
                ts: 1,
                ..Default::default()
            };
            seq += len as u64;
            let mut out = vec![];
            c.on_data(now, &pk, &p, &mut out, &mut ev);
            assert_eq!(!out.is_empty(), want[i], "{rules}: segment {i}");
            if i == 8 {
                // The delayed-ACK timer: ATO_MIN, 40 ms.
                assert_eq!(c.delack_deadline, now + 40 * PS_PER_MS, "{rules}");
            }
        }
    }
}

/// The receiver reports a duplicate in a D-SACK block, below the cumulative ACK.
#[test]
fn receiver_sends_dsack_for_a_duplicate() {
    for dsack in [true, false] {
        let p = params(serde_json::json!({ "dsack": dsack }));
        let mut c = Conn::new(&p, 0, 1, 1, 2, true);
        c.write(0, 10 * MSS);
        let mut ev = Events::default();
        let seg = |i: u64| Packet {
            seq: i * MSS,
            payload: MSS as u32,
            tx_count: 1,
            ..Default::default()
        };
        let mut out = vec![];
        for i in 0..3 {
            c.on_data(1, &seg(i), &p, &mut out, &mut ev);
        }
        out.clear();
        c.on_data(2, &seg(1), &p, &mut out, &mut ev);
        let a = out.last().unwrap();
        assert_eq!(a.ack, 3 * MSS);
        assert_eq!(a.is(flags::DSACK), dsack);
        if dsack {
            let s = a.ack.wrapping_add(a.sack[0].0 as i32 as i64 as u64);
            let e = a.ack.wrapping_add(a.sack[0].1 as i32 as i64 as u64);
            assert_eq!((s, e), (MSS, 2 * MSS));
        }
    }
}
