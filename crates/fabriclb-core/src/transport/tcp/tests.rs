//! Unit tests of the connection as a whole (sender and receiver driven together).

use super::*;
use crate::transport::ranges::insert_range;
use crate::transport::TransportConfig;

fn params(sack: bool, cc: &str) -> TcpParams {
    let mut c: TransportConfig = serde_json::from_str(&format!(
        "{{\"cc\": \"{cc}\", \"sack\": {sack}, \"min_rto\": \"1ms\"}}"
    ))
    .unwrap();
    c.init_cwnd = 10;
    c.params()
}

#[test]
fn ranges_merge() {
    let mut v = vec![];
    for (s, e) in [(10, 20), (30, 40), (20, 30), (50, 60), (5, 8), (55, 70)] {
        insert_range(&mut v, s, e);
    }
    assert_eq!(v, vec![(5, 8), (10, 40), (50, 70)]);
}

/// Drive a sender and receiver directly, dropping chosen data segments once.
fn transfer(p: &TcpParams, bytes: u64, drop_seqs: &[u64]) -> (Conn, u64) {
    transfer_n(p, bytes, drop_seqs, 1)
}

/// As `transfer`, dropping the first `times` transmissions of each listed segment.
fn transfer_n(p: &TcpParams, bytes: u64, drop_seqs: &[u64], times: usize) -> (Conn, u64) {
    let mut c = Conn::new(p, 0, 1, 1, 2, true);
    c.write(0, bytes);
    let mut out = vec![];
    let mut now = 1_000_000;
    c.try_send(now, p, &mut out);
    let mut dropped: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    let mut ev = Events::default();
    let mut rounds = 0;
    while !c.msgs.is_empty() && rounds < 10_000 {
        rounds += 1;
        now += 10_000_000; // 10 us per round trip
        let sent: Vec<Packet> = std::mem::take(&mut out);
        let mut acks = vec![];
        for pk in sent {
            if drop_seqs.contains(&pk.seq) {
                let n = dropped.entry(pk.seq).or_insert(0);
                if *n < times {
                    *n += 1;
                    continue;
                }
            }
            c.on_data(now, &pk, p, &mut acks, &mut ev);
        }
        if acks.is_empty() && c.rto_deadline != NEVER {
            now = now.max(c.rto_deadline);
            c.on_rto(now, p, &mut out);
            continue;
        }
        for a in acks {
            c.on_ack(now, &a, p, &mut out);
        }
    }
    (c, rounds)
}

#[test]
fn sack_recovery_repairs_several_holes_without_timeout() {
    let p = params(true, "newreno");
    let mss = p.mss as u64;
    let (c, _) = transfer(&p, 200 * mss, &[20 * mss, 22 * mss, 25 * mss]);
    assert!(c.msgs.is_empty(), "transfer finished");
    assert_eq!(c.rcv_nxt, 200 * mss);
    assert_eq!(c.stats.timeouts, 0);
    assert_eq!(
        c.stats.retx_segments, 3,
        "exactly the lost segments are resent"
    );
}

#[test]
fn a_lost_retransmission_is_detected_without_a_timeout() {
    let p = params(true, "newreno");
    let mss = p.mss as u64;
    let (c, _) = transfer_n(&p, 400 * mss, &[20 * mss], 2);
    assert!(c.msgs.is_empty(), "transfer finished");
    assert_eq!(
        c.stats.timeouts, 0,
        "the second loss of the segment is repaired by SACK"
    );
    assert_eq!(c.stats.retx_segments, 2);
}

#[test]
fn rate_limited_sender_sends_full_segments_and_wakes_up() {
    let p = params(true, "newreno");
    let mut c = Conn::new(&p, 0, 1, 1, 2, true);
    c.app_rate = Some(Box::new(AppRate::new(1_000_000_000, 0, 0, 0))); // 1 Gbps
    c.write(0, 1_000_000);
    let mut out = vec![];
    // After 10 us only 1250 bytes exist: less than one MSS, nothing is sent yet.
    c.try_send(10_000_000, &p, &mut out);
    assert!(out.is_empty());
    let wake = c.app_wake;
    assert_eq!(
        wake,
        (p.mss as f64 * 8.0 / 1e9 * 1e12).ceil() as u64,
        "wakes when a full MSS exists"
    );
    c.try_send(wake, &p, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].payload, p.mss);
    assert!(c.app_wake > wake, "the next wakeup is in the future");
}

#[test]
fn message_writer_sends_whole_writes_then_idles() {
    // 1 Gbps in 100 kB writes: one write every 800 us, sent at once (the last segment
    // partial), then nothing until the next write.
    let p = params(true, "newreno");
    let mut c = Conn::new(&p, 0, 1, 1, 2, true);
    c.w.cwnd = 1e9; // not window-limited
    c.app_rate = Some(Box::new(AppRate::new(1_000_000_000, 100_000, 0, 0)));
    c.write(0, 1_000_000);
    let mut out = vec![];
    c.try_send(0, &p, &mut out);
    let sent: u64 = out.iter().map(|s| s.payload as u64).sum();
    assert_eq!(sent, 100_000, "exactly the first write");
    assert!(
        out.last().unwrap().payload < p.mss,
        "its tail goes out partial"
    );
    assert_eq!(c.app_wake, 800_000_000, "the next write is 800 us later");
    out.clear();
    c.try_send(799_999_999, &p, &mut out);
    assert!(out.is_empty());
    c.try_send(800_000_000, &p, &mut out);
    assert_eq!(out.iter().map(|s| s.payload as u64).sum::<u64>(), 100_000);
    assert_eq!(c.app_wake, 1_600_000_000);
}

#[test]
fn tsq_holds_new_data_while_the_nic_holds_the_limit() {
    // A 10-segment limit. Each case: segments the NIC still holds (sent every 1.2 us, all
    // accepted at t = 0), the time of the call, the window in segments, segments the call
    // may send, and whether it stopped at the limit (and so waits for the NIC).
    let mut p = params(true, "newreno");
    let mss = p.mss as u64;
    p.tsq_bytes = 10 * mss;
    let slot: Time = 1_200_000;
    for (held, now, cwnd, sends, blocked) in [
        (0u64, 0, 100, 10u64, true),     // an idle NIC: up to the limit
        (10, 0, 100, 0, true),           // at the limit: nothing
        (10, slot - 1, 100, 0, true),    // the oldest has not quite left
        (10, 3 * slot, 100, 3, true),    // three have left: three more
        (10, 100 * slot, 100, 10, true), // the NIC has drained
        (4, 0, 100, 6, true),            // room for six
        (0, 0, 5, 5, false),             // the window stops it first: no NIC wakeup
    ] {
        let mut c = Conn::new(&p, 0, 1, 1, 2, true);
        c.w.cwnd = (cwnd * mss) as f64;
        c.write(0, 1_000 * mss);
        for i in 1..=held {
            c.nic_accepted(i * slot, p.mss);
        }
        let mut out = vec![];
        c.try_send(now, &p, &mut out);
        assert_eq!(out.len() as u64, sends, "held {held}, at {now}");
        assert_eq!(c.tsq_blocked, blocked, "held {held}, at {now}");
        // The wakeup: when the oldest segment still in the NIC leaves, if it stopped there.
        for (k, pk) in out.iter().enumerate() {
            c.nic_accepted(now + (held + k as u64 + 1) * slot, pk.payload);
        }
        c.arm_tsq_wakeup();
        let oldest = c.nic.front().map(|e| e.0).unwrap();
        assert!(oldest > now);
        let want = if blocked { oldest } else { NEVER };
        assert_eq!(c.app_wake, want, "held {held}, at {now}");
    }
    // Off (the default): the window alone limits.
    p.tsq_bytes = 0;
    let mut c = Conn::new(&p, 0, 1, 1, 2, true);
    c.w.cwnd = 100.0 * mss as f64;
    c.write(0, 1_000 * mss);
    let mut out = vec![];
    c.try_send(0, &p, &mut out);
    assert_eq!(out.len(), 100);
    assert_eq!(c.app_wake, NEVER);
}

#[test]
fn newreno_without_sack_recovers_by_partial_acks() {
    let p = params(false, "newreno");
    let mss = p.mss as u64;
    let (c, _) = transfer(&p, 200 * mss, &[20 * mss, 22 * mss]);
    assert!(c.msgs.is_empty());
    assert_eq!(c.stats.timeouts, 0);
    assert!(c.stats.retx_segments >= 2);
}

#[test]
fn tail_loss_needs_a_timeout() {
    let p = params(true, "newreno");
    let mss = p.mss as u64;
    let (c, _) = transfer(&p, 5 * mss, &[4 * mss]);
    assert!(c.msgs.is_empty());
    assert_eq!(c.stats.timeouts, 1);
}

#[test]
fn rto_follows_rfc6298_and_floor() {
    let p = params(true, "newreno"); // min_rto = 1 ms
    let mut c = Conn::new(&p, 0, 1, 1, 2, true);
    c.update_rtt(100_000_000, 0 + 1, &p); // ~100 us sample
    assert_eq!(c.rto_ps, p.min_rto_ps, "floored at minRTO");
    let mut c = Conn::new(&p, 0, 1, 1, 2, true);
    c.update_rtt(10_000_000_001, 1, &p); // 10 ms sample: rto = 10 + 4*5 = 30 ms
    assert_eq!(c.rto_ps, 30_000_000_000);
}

#[test]
fn receiver_counts_reordering_and_sacks() {
    let p = params(true, "newreno");
    let mut c = Conn::new(&p, 0, 1, 1, 2, true);
    c.write(0, 3000);
    let mut out = vec![];
    let mut ev = Events::default();
    let mk = |seq: u64| Packet {
        seq,
        payload: 1000,
        tx_count: 1,
        ..Default::default()
    };
    c.on_data(1, &mk(1000), &p, &mut out, &mut ev);
    assert_eq!(out[0].ack, 0);
    assert_eq!(out[0].sack[0], (1000, 2000));
    c.on_data(2, &mk(0), &p, &mut out, &mut ev);
    assert_eq!(c.stats.reordered, 1);
    assert_eq!(out[1].ack, 2000);
    c.on_data(3, &mk(2000), &p, &mut out, &mut ev);
    assert_eq!(ev.completed, vec![0]);
}

#[test]
fn delayed_acks_ack_every_second_segment() {
    let mut cfg: TransportConfig = serde_json::from_str("{\"delayed_ack\": true}").unwrap();
    cfg.cc = crate::transport::cc::CcKind::NewReno;
    let p = cfg.params();
    let mut c = Conn::new(&p, 0, 1, 1, 2, true);
    c.write(0, 10_000);
    let mut out = vec![];
    let mut ev = Events::default();
    for i in 0..4u64 {
        let pk = Packet {
            seq: i * 1000,
            payload: 1000,
            tx_count: 1,
            ..Default::default()
        };
        c.on_data(10, &pk, &p, &mut out, &mut ev);
    }
    assert_eq!(out.len(), 2);
    assert_eq!(out[1].ack, 4000);
    let pk = Packet {
        seq: 4000,
        payload: 1000,
        tx_count: 1,
        ..Default::default()
    };
    c.on_data(10, &pk, &p, &mut out, &mut ev);
    assert_eq!(out.len(), 2);
    assert_ne!(c.delack_deadline, NEVER);
    c.on_delack(&p, &mut out);
    assert_eq!(out.len(), 3);
    assert_eq!(out[2].ack, 5000);
}

/// The record's layout (docs/BENCHMARKS.md): a data segment's arrival reads only the first
/// four cache lines (identity, flags, the receiver's state, its counters), an ACK's the first
/// line and the sender's block after them, and the record is a whole number of lines.
#[test]
fn connection_record_keeps_each_ends_fields_together() {
    use std::mem::{align_of, offset_of, size_of};
    assert_eq!(align_of::<Conn>(), 64);
    assert_eq!(size_of::<Conn>() % 64, 0);
    assert!(
        size_of::<Conn>() <= 640,
        "Conn grew to {} bytes",
        size_of::<Conn>()
    );
    let receiver_ends = [
        offset_of!(Conn, mp_meta) + 4,
        offset_of!(Conn, state) + 1,
        offset_of!(Conn, last_ce) + 1,
        offset_of!(Conn, rcv_nxt) + 8,
        offset_of!(Conn, rcv_high) + 8,
        offset_of!(Conn, next_msg_end) + 8,
        offset_of!(Conn, delack_deadline) + 8,
        offset_of!(Conn, last_ts) + 8,
        offset_of!(Conn, ooo) + size_of::<Vec<(u64, u64)>>(),
        offset_of!(Conn, msgs) + size_of::<VecDeque<Msg>>(),
        offset_of!(Conn, last_path) + 4,
        offset_of!(Conn, dsack) + size_of::<(u64, u64)>(),
        offset_of!(Conn, stats) + offset_of!(ConnStats, path_changes) + 8,
    ];
    assert!(
        receiver_ends.iter().all(|&e| e <= 4 * 64),
        "{receiver_ends:?}"
    );
    let sender = [
        offset_of!(Conn, snd_una),
        offset_of!(Conn, w),
        offset_of!(Conn, cc),
        offset_of!(Conn, rtt),
        offset_of!(Conn, rto_deadline),
        offset_of!(Conn, sacked),
        offset_of!(Conn, red),
        offset_of!(Conn, nic),
    ];
    let first = offset_of!(Conn, stats) + size_of::<ConnStats>();
    assert!(sender.iter().all(|&o| o >= first), "{sender:?}");
    // What the simulator prefetches: the receiver's lines for data, the sender's block from
    // its first line for an ACK.
    let data = Conn::lines_read(false);
    assert_eq!(
        data.last(),
        receiver_ends.iter().max().map(|e| (e - 1) / 64).as_ref()
    );
    let ack = Conn::lines_read(true);
    assert_eq!((ack[0], ack[1]), (0, offset_of!(Conn, snd_una) / 64));
    assert!(ack.windows(2).all(|w| w[1] == w[0] + 1 || w[0] == 0));
}
