//! TCP connections: both endpoints of one connection in one record.
//!
//! Data flows one way (from `src`, the sender, to `dst`, the receiver); the receiver answers
//! with ACKs. What is modelled:
//! - three-way handshake (SYN, SYN-ACK, then data; the handshake costs one RTT), or a
//!   pre-established (persistent) connection;
//! - cumulative ACKs with up to three SACK blocks (RFC 2018), per-segment ACKs or delayed ACKs
//!   (every second segment or a timeout; immediate on out-of-order data and on a change of the
//!   CE state, as DCTCP requires);
//! - loss recovery: fast retransmit on three duplicate ACKs (or SACKed bytes past 3 MSS), then
//!   SACK-based recovery with a pipe estimate (RFC 6675), or NewReno partial-ACK recovery
//!   (RFC 6582) without SACK; RTO per RFC 6298 with a configurable floor, exponential backoff,
//!   go-back-N after a timeout that skips SACKed data;
//! - RTT samples from echoed timestamps (RFC 7323), so retransmissions give valid samples;
//! - ECN (RFC 3168 / DCTCP): ECT on data, CE echoed as ECE, one reaction per window;
//! - application data as a byte stream: messages (flows) are appended and complete when their
//!   last byte has arrived in order at the receiver; an optional application rate limit;
//! - TSO-style bursts (see `TcpParams::tso_bytes`) and TCP Small Queues (`tsq_bytes`): the
//!   simulation reports when the host's NIC will have sent each data segment
//!   ([`Conn::nic_accepted`]), and new data waits while the NIC holds the limit.
//!
//! Sequence numbers are 64-bit byte offsets from 0 and never wrap; the SYN takes no sequence
//! space. FIN and connection teardown are not modelled. This module emits packets into an
//! output vector and exposes timer deadlines; the simulation schedules the timer events.

use super::cc::{Cc, CcState, CongestionControl};
use super::TcpParams;
use crate::net::packet::{flags, frame_bytes, Packet};
use crate::units::Time;
use std::collections::VecDeque;

pub const NEVER: Time = Time::MAX;
const DUPTHRESH: u32 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    SynSent,
    Established,
}

/// A message (flow) carried by a connection: bytes [start, end) of the stream.
#[derive(Clone, Copy, Debug)]
pub struct Msg {
    pub flow: u32,
    pub end: u64,
}

/// An application rate limit (`workload::AppLimit`) in force since `t0`, when `base` bytes
/// had been written.
#[derive(Clone, Copy, Debug)]
pub struct AppRate {
    bytes_per_s: f64,
    t0: Time,
    base: u64,
    /// Bytes per write (0: a continuous stream) and the time between writes.
    write_bytes: u64,
    period_ps: Time,
}

impl AppRate {
    pub fn new(rate_bps: u64, write_bytes: u64, t0: Time, base: u64) -> AppRate {
        // Integer write period, so that "which write" and "when" agree exactly.
        let period_ps = if write_bytes == 0 {
            0
        } else {
            (write_bytes as u128 * 8 * 1_000_000_000_000 / rate_bps as u128).max(1) as Time
        };
        AppRate {
            bytes_per_s: rate_bps as f64 / 8.0,
            t0,
            base,
            write_bytes,
            period_ps,
        }
    }
    #[inline]
    fn is_stream(&self) -> bool {
        self.write_bytes == 0
    }
    /// Bytes written by `now` (the first write happens at `t0`).
    #[inline]
    fn made(&self, now: Time) -> u64 {
        let dt = now.saturating_sub(self.t0);
        if self.is_stream() {
            self.base + (dt as f64 * 1e-12 * self.bytes_per_s) as u64
        } else {
            self.base + (dt / self.period_ps + 1) * self.write_bytes
        }
    }
    /// The first time at which `target` bytes have been written.
    fn time_of(&self, target: u64) -> Time {
        let need = target.saturating_sub(self.base);
        if self.is_stream() {
            self.t0 + (need as f64 / self.bytes_per_s * 1e12).ceil() as Time
        } else {
            let writes = need.div_ceil(self.write_bytes).max(1);
            self.t0 + (writes - 1) * self.period_ps
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct ConnStats {
    pub retx_segments: u64,
    pub timeouts: u64,
    pub reordered: u64,
    pub path_changes: u64,
    pub data_pkts_rcvd: u64,
}

#[derive(Clone, Debug)]
pub struct Conn {
    pub src: u32,
    pub dst: u32,
    pub sport: u16,
    pub dport: u16,
    pub state: State,
    // ---- sender ----
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Highest sequence sent + 1.
    pub snd_max: u64,
    /// Bytes the application has written so far.
    pub app_end: u64,
    /// Application rate limit.
    pub app_rate: Option<AppRate>,
    pub cc: Cc,
    pub w: CcState,
    srtt: f64,
    rttvar: f64,
    pub rto_ps: Time,
    pub rto_deadline: Time,
    dupacks: u32,
    in_recovery: bool,
    recover: u64,
    high_rxt: u64,
    /// SACKed ranges above snd_una, sorted, disjoint.
    sacked: Vec<(u64, u64)>,
    ecn_cwr_until: u64,
    /// snd_max when snd_una's segment was last retransmitted: SACKs for data above it show
    /// that the retransmission itself was lost (RFC 6675 leaves this to the RTO; Linux
    /// detects it, and so do we).
    rtx_mark: u64,
    /// When `try_send` wants to run again: the application's next data (rate limit) or,
    /// with TSQ, the NIC sending the oldest segment it holds.
    pub app_wake: Time,
    /// With TSQ: this sender's data segments still in its host's NIC queue, oldest first, as
    /// (time the NIC finishes sending it, payload bytes), and their sum.
    nic: VecDeque<(Time, u32)>,
    nic_bytes: u64,
    /// The last `try_send` stopped at the TSQ limit (it resumes when the NIC sends a segment).
    tsq_blocked: bool,
    // ---- receiver ----
    pub rcv_nxt: u64,
    ooo: Vec<(u64, u64)>,
    rcv_high: u64,
    delack_count: u32,
    pub delack_deadline: Time,
    last_ce: bool,
    last_ts: Time,
    last_path: u32,
    pub msgs: VecDeque<Msg>,
    pub stats: ConnStats,
}

/// What a call produced besides packets.
#[derive(Default)]
pub struct Events {
    /// Flows whose last byte arrived at the receiver.
    pub completed: Vec<u32>,
}

impl Conn {
    pub fn new(
        p: &TcpParams,
        src: u32,
        dst: u32,
        sport: u16,
        dport: u16,
        established: bool,
    ) -> Conn {
        let mss = p.mss as f64;
        Conn {
            src,
            dst,
            sport,
            dport,
            state: if established {
                State::Established
            } else {
                State::Closed
            },
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            app_end: 0,
            app_rate: None,
            cc: Cc::new(p.cc, p.dctcp_g),
            w: CcState {
                cwnd: p.iw_segments as f64 * mss,
                ssthresh: f64::INFINITY,
                mss,
            },
            srtt: 0.0,
            rttvar: 0.0,
            rto_ps: p.initial_rto_ps,
            rto_deadline: NEVER,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            high_rxt: 0,
            sacked: Vec::new(),
            ecn_cwr_until: 0,
            rtx_mark: 0,
            app_wake: NEVER,
            nic: VecDeque::new(),
            nic_bytes: 0,
            tsq_blocked: false,
            rcv_nxt: 0,
            ooo: Vec::new(),
            rcv_high: 0,
            delack_count: 0,
            delack_deadline: NEVER,
            last_ce: false,
            last_ts: 0,
            last_path: u32::MAX,
            msgs: VecDeque::new(),
            stats: ConnStats::default(),
        }
    }

    pub fn srtt_ps(&self) -> f64 {
        self.srtt
    }

    /// Bytes sent and not yet cumulatively acknowledged.
    pub fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    fn base_packet(&self, now: Time) -> Packet {
        Packet {
            src: self.src,
            dst: self.dst,
            sport: self.sport,
            dport: self.dport,
            ts: now,
            ..Default::default()
        }
    }

    /// Open the connection: send a SYN.
    pub fn open(&mut self, now: Time, p: &TcpParams, out: &mut Vec<Packet>) {
        self.state = State::SynSent;
        self.send_syn(now, out);
        self.rto_deadline = now + self.rto_ps.max(p.min_rto_ps);
    }

    fn send_syn(&mut self, now: Time, out: &mut Vec<Packet>) {
        let mut pk = self.base_packet(now);
        pk.flags = flags::SYN;
        pk.size = frame_bytes(0);
        pk.tx_count = 1;
        out.push(pk);
    }

    /// The application writes a message of `bytes` (u64::MAX-ish for unbounded) as flow `flow`.
    pub fn write(&mut self, flow: u32, bytes: u64) {
        self.app_end = self.app_end.saturating_add(bytes);
        self.msgs.push_back(Msg {
            flow,
            end: self.app_end,
        });
    }

    /// Bytes the application has made available by `now`.
    #[inline]
    fn available(&self, now: Time) -> u64 {
        match self.app_rate {
            None => self.app_end,
            Some(r) => r.made(now).min(self.app_end),
        }
    }

    fn sacked_bytes(&self) -> u64 {
        self.sacked.iter().map(|r| r.1 - r.0).sum()
    }

    /// RFC 6675 pipe: bytes believed in the network.
    fn pipe(&self) -> u64 {
        let out = self.snd_nxt.max(self.snd_una) - self.snd_una;
        if self.sacked.is_empty() {
            return out;
        }
        let sacked = self
            .sacked
            .iter()
            .filter(|r| r.0 < self.snd_nxt)
            .map(|r| r.1.min(self.snd_nxt) - r.0)
            .sum::<u64>();
        // Holes below the loss frontier that were not retransmitted yet are lost, not in flight.
        let frontier = self.loss_frontier();
        let mut lost = 0;
        let mut cur = self.snd_una.max(self.high_rxt);
        for &(a, b) in &self.sacked {
            if cur >= frontier {
                break;
            }
            if a > cur {
                lost += a.min(frontier) - cur;
            }
            cur = cur.max(b);
        }
        out.saturating_sub(sacked + lost)
    }

    /// Sequence below which an un-SACKed hole counts as lost: DupThresh segments' worth of
    /// SACKed bytes above it (RFC 6675 IsLost, by bytes).
    fn loss_frontier(&self) -> u64 {
        let need = DUPTHRESH as u64 * self.w.mss as u64;
        let mut acc = 0;
        for &(a, b) in self.sacked.iter().rev() {
            acc += b - a;
            if acc >= need {
                return a;
            }
        }
        self.snd_una
    }

    /// In SACK recovery: data sent after the last retransmission of the first hole has been
    /// SACKed (DupThresh segments' worth), yet the hole is still open: that retransmission was
    /// lost too. Re-arm it (once per such episode).
    fn lost_retransmission(&mut self, p: &TcpParams) -> bool {
        let Some(&(_, top)) = self.sacked.last() else {
            return false;
        };
        if self.rtx_mark > self.snd_una
            && top > self.rtx_mark + DUPTHRESH as u64 * p.mss as u64
            && self.high_rxt > self.snd_una
        {
            self.rtx_mark = self.snd_max;
            return true;
        }
        false
    }

    /// Next hole to retransmit in SACK recovery, as (seq, len).
    fn next_hole(&self, mss: u64) -> Option<(u64, u64)> {
        let frontier = self.loss_frontier();
        let mut cur = self.snd_una.max(self.high_rxt);
        for &(a, b) in &self.sacked {
            if cur >= frontier {
                return None;
            }
            if a > cur {
                let end = a.min(cur + mss).min(frontier.max(cur + 1));
                return Some((cur, end - cur));
            }
            cur = cur.max(b);
        }
        None
    }

    fn send_data(&mut self, now: Time, p: &TcpParams, seq: u64, len: u64, out: &mut Vec<Packet>) {
        let mut pk = self.base_packet(now);
        pk.seq = seq;
        pk.payload = len as u32;
        pk.size = frame_bytes(len as u32);
        pk.flags = if p.ecn { flags::ECT } else { 0 };
        let retx = seq < self.snd_max;
        pk.tx_count = if retx { 2 } else { 1 };
        if retx {
            self.stats.retx_segments += 1;
        }
        out.push(pk);
        if seq + len > self.snd_max {
            self.snd_max = seq + len;
        }
        if self.rto_deadline == NEVER {
            self.rto_deadline = now + self.rto_ps;
        }
    }

    /// Send whatever the windows allow.
    pub fn try_send(&mut self, now: Time, p: &TcpParams, out: &mut Vec<Packet>) {
        // Any wakeup computed by an earlier call is void: a stale deadline at `now` would
        // re-arm itself at the same instant forever.
        self.app_wake = NEVER;
        self.tsq_blocked = false;
        if self.state != State::Established {
            return;
        }
        while let Some(&(end, bytes)) = self.nic.front() {
            if end > now {
                break;
            }
            self.nic.pop_front();
            self.nic_bytes -= bytes as u64;
        }
        let mss = p.mss as u64;
        let cwnd = self.w.cwnd.min(p.rwnd_bytes as f64).max(mss as f64) as u64;
        // Retransmissions first (SACK recovery).
        let mut window_full = false;
        if self.in_recovery && p.sack {
            while let Some((seq, len)) = self.next_hole(mss) {
                if self.pipe() + len > cwnd {
                    window_full = true;
                    break;
                }
                self.send_data(now, p, seq, len, out);
                self.high_rxt = seq + len;
                if seq == self.snd_una {
                    self.rtx_mark = self.snd_max;
                }
            }
        }
        let avail = self.available(now);
        let mut burst_checked = false;
        // Bytes in the NIC, counting the segments already on their way into it.
        let mut queued = if p.tsq_bytes > 0 {
            self.nic_bytes + out.iter().map(|pk| pk.payload as u64).sum::<u64>()
        } else {
            0
        };
        while !window_full {
            // Skip data the receiver already SACKed (after go-back-N).
            if let Some(r) = self
                .sacked
                .iter()
                .find(|r| r.0 <= self.snd_nxt && self.snd_nxt < r.1)
            {
                self.snd_nxt = r.1;
            }
            if self.snd_nxt >= avail {
                break;
            }
            let mut len = (avail - self.snd_nxt).min(mss);
            if len < mss && avail < self.app_end && self.app_rate.is_some_and(|r| r.is_stream()) {
                // A continuous writer will write more at once: send full segments only (no
                // silly windows); the wakeup below comes back for it. (A writer of whole
                // messages gets its last partial segment sent, as with Nagle off.)
                break;
            }
            if let Some(r) = self.sacked.iter().find(|r| r.0 > self.snd_nxt) {
                len = len.min(r.0 - self.snd_nxt);
            }
            let in_flight = self.pipe();
            // Congestion window on the pipe, receive window on the sequence space.
            if in_flight + len > cwnd || self.snd_nxt + len - self.snd_una > p.rwnd_bytes {
                break;
            }
            // TSQ (Linux `tcp_small_queue_check`): no new data while the NIC holds the limit.
            if p.tsq_bytes > 0 && queued >= p.tsq_bytes {
                self.tsq_blocked = true;
                break;
            }
            if p.tso_bytes > 0 && !burst_checked && in_flight > 0 {
                // TSO deferral: wait for room for a whole burst while ACKs are still coming.
                let room = cwnd - in_flight;
                let want = p.tso_bytes.min(avail - self.snd_nxt);
                if room < want {
                    break;
                }
                burst_checked = true;
            }
            let seq = self.snd_nxt;
            self.snd_nxt += len;
            self.send_data(now, p, seq, len, out);
            queued += len;
        }
        // Application-rate limited: wake up when the next full segment (continuous writer) or
        // the next write exists.
        if let Some(r) = self.app_rate {
            if avail < self.app_end && self.snd_nxt + mss > avail {
                let target = if r.is_stream() {
                    self.snd_nxt + mss
                } else {
                    avail + 1
                };
                self.app_wake = r.time_of(target.min(self.app_end)).max(now + 1);
            }
        }
    }

    /// With TSQ: the host's NIC accepted a data segment of `bytes` payload bytes from this
    /// sender and will have sent it at `end`.
    pub fn nic_accepted(&mut self, end: Time, bytes: u32) {
        self.nic.push_back((end, bytes));
        self.nic_bytes += bytes as u64;
    }

    /// With TSQ, after the NIC took this call's segments: when `try_send` stopped at the limit,
    /// wake it when the oldest segment leaves the NIC (Linux resumes on that TX completion).
    pub fn arm_tsq_wakeup(&mut self) {
        if self.tsq_blocked {
            if let Some(&(end, _)) = self.nic.front() {
                self.app_wake = self.app_wake.min(end);
            }
        }
    }

    fn update_rtt(&mut self, now: Time, echoed: Time, p: &TcpParams) {
        if echoed == 0 || echoed > now {
            return;
        }
        let r = (now - echoed) as f64;
        if self.srtt == 0.0 {
            self.srtt = r;
            self.rttvar = r / 2.0;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        }
        let rto = self.srtt + (4.0 * self.rttvar).max(1e6); // clock granularity G = 1 us
        self.rto_ps = (rto as Time).clamp(p.min_rto_ps, p.max_rto_ps);
    }

    fn merge_sacks(&mut self, pk: &Packet) {
        for &(a, b) in &pk.sack {
            if b <= a {
                continue;
            }
            let (s, e) = (pk.ack + a as u64, pk.ack + b as u64);
            insert_range(&mut self.sacked, s, e);
        }
        let una = self.snd_una;
        self.sacked.retain(|r| r.1 > una);
        if let Some(f) = self.sacked.first_mut() {
            f.0 = f.0.max(una);
        }
    }

    /// An ACK (or SYN-ACK) arrives at the sender.
    pub fn on_ack(&mut self, now: Time, pk: &Packet, p: &TcpParams, out: &mut Vec<Packet>) {
        if pk.is(flags::SYN) {
            if self.state == State::SynSent {
                self.state = State::Established;
                self.update_rtt(now, pk.ts, p);
                self.rto_deadline = NEVER;
                self.try_send(now, p, out);
            }
            return;
        }
        if self.state != State::Established {
            return;
        }
        let ece = pk.is(flags::ECE);
        if pk.ack > self.snd_una {
            let acked = pk.ack - self.snd_una;
            self.snd_una = pk.ack;
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            if p.sack {
                self.merge_sacks(pk);
            }
            self.update_rtt(now, pk.ts, p);
            self.dupacks = 0;
            self.cc.on_ack_ecn(acked, ece, self.snd_una, self.snd_max);
            if self.in_recovery
                && p.sack
                && self.snd_una < self.recover
                && self.lost_retransmission(p)
            {
                self.high_rxt = self.snd_una;
            }
            if self.in_recovery {
                if self.snd_una >= self.recover {
                    self.in_recovery = false;
                    self.w.cwnd = self.w.ssthresh.max(self.w.mss);
                } else if !p.sack {
                    // NewReno partial ACK: the next hole starts at snd_una.
                    let len = (self.snd_max - self.snd_una).min(p.mss as u64);
                    self.send_data(now, p, self.snd_una, len, out);
                }
            } else {
                // cwnd-limited if the window was (nearly) full when this ACK arrived.
                let limited = (self.flight() + acked) as f64 + self.w.mss >= self.w.cwnd;
                self.cc.on_ack(&mut self.w, acked, now, self.srtt, limited);
            }
            // RFC 6298 (5.3): restart the timer when new data is acknowledged.
            self.rto_deadline = if self.flight() > 0 {
                now + self.rto_ps
            } else {
                NEVER
            };
        } else if pk.ack == self.snd_una && self.flight() > 0 && pk.payload == 0 {
            if p.sack {
                self.merge_sacks(pk);
            }
            self.dupacks += 1;
            let sack_loss = p.sack && self.sacked_bytes() >= DUPTHRESH as u64 * p.mss as u64;
            if !self.in_recovery
                && (self.dupacks >= DUPTHRESH || sack_loss)
                && self.snd_una >= self.recover
            {
                self.in_recovery = true;
                self.recover = self.snd_max;
                self.cc.on_loss(&mut self.w, now);
                self.ecn_cwr_until = self.snd_max;
                self.high_rxt = self.snd_una;
                // Fast retransmit of the first unacknowledged segment.
                let len = (self.snd_max - self.snd_una).min(p.mss as u64);
                if let Some(r) = self.sacked.first() {
                    let len = len.min(r.0.saturating_sub(self.snd_una)).max(1);
                    self.send_data(now, p, self.snd_una, len, out);
                    self.high_rxt = self.snd_una + len;
                } else {
                    self.send_data(now, p, self.snd_una, len, out);
                    self.high_rxt = self.snd_una + len;
                }
                self.rtx_mark = self.snd_max;
            } else if self.in_recovery && !p.sack {
                // NewReno: inflate by one segment per duplicate ACK.
                self.w.cwnd += self.w.mss;
            } else if self.in_recovery && self.lost_retransmission(p) {
                self.high_rxt = self.snd_una;
            }
        }
        if ece && p.ecn && self.snd_una > self.ecn_cwr_until && !self.in_recovery {
            self.cc.on_ecn(&mut self.w, now);
            self.ecn_cwr_until = self.snd_max;
        }
        self.try_send(now, p, out);
    }

    /// The retransmission timer expired.
    pub fn on_rto(&mut self, now: Time, p: &TcpParams, out: &mut Vec<Packet>) {
        self.stats.timeouts += 1;
        self.rto_ps = (self.rto_ps.saturating_mul(2)).min(p.max_rto_ps);
        if self.state == State::SynSent {
            self.send_syn(now, out);
            self.rto_deadline = now + self.rto_ps;
            return;
        }
        let flight = self.flight();
        self.cc.on_timeout(&mut self.w, flight);
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = self.snd_max;
        self.high_rxt = self.snd_una;
        self.snd_nxt = self.snd_una; // go-back-N (SACKed data is skipped)
        self.rto_deadline = NEVER;
        self.try_send(now, p, out);
        if self.rto_deadline == NEVER && self.flight() > 0 {
            self.rto_deadline = now + self.rto_ps;
        }
    }

    // ------------------------------------------------------------------ receiver

    /// A SYN arrives at the receiver: answer with a SYN-ACK.
    pub fn on_syn(&mut self, now: Time, pk: &Packet, out: &mut Vec<Packet>) {
        let mut a = Packet {
            src: self.dst,
            dst: self.src,
            sport: self.dport,
            dport: self.sport,
            ts: pk.ts,
            ..Default::default()
        };
        let _ = now;
        a.flags = flags::SYN | flags::ACK;
        a.size = frame_bytes(0);
        a.tx_count = 1;
        out.push(a);
    }

    fn make_ack(&mut self, pk_seq: u64, out: &mut Vec<Packet>) {
        let mut a = Packet {
            src: self.dst,
            dst: self.src,
            sport: self.dport,
            dport: self.sport,
            ts: self.last_ts,
            ..Default::default()
        };
        a.flags = flags::ACK | if self.last_ce { flags::ECE } else { 0 };
        a.ack = self.rcv_nxt;
        a.size = frame_bytes(0);
        a.tx_count = 1;
        // First block: the one holding the segment just received (RFC 2018); then the others.
        let mut n = 0;
        if let Some(r) = self.ooo.iter().find(|r| r.0 <= pk_seq && pk_seq < r.1) {
            a.sack[0] = ((r.0 - self.rcv_nxt) as u32, (r.1 - self.rcv_nxt) as u32);
            n = 1;
        }
        for r in self.ooo.iter().rev() {
            if n == 3 {
                break;
            }
            if r.0 <= pk_seq && pk_seq < r.1 {
                continue;
            }
            a.sack[n] = ((r.0 - self.rcv_nxt) as u32, (r.1 - self.rcv_nxt) as u32);
            n += 1;
        }
        self.delack_count = 0;
        self.delack_deadline = NEVER;
        out.push(a);
    }

    /// A data segment arrives at the receiver.
    pub fn on_data(
        &mut self,
        now: Time,
        pk: &Packet,
        p: &TcpParams,
        out: &mut Vec<Packet>,
        ev: &mut Events,
    ) {
        let (s, e) = (pk.seq, pk.seq + pk.payload as u64);
        self.stats.data_pkts_rcvd += 1;
        if self.last_path != u32::MAX && pk.path_hash != self.last_path {
            self.stats.path_changes += 1;
        }
        self.last_path = pk.path_hash;
        if pk.tx_count == 1 && e <= self.rcv_high {
            self.stats.reordered += 1;
        }
        self.rcv_high = self.rcv_high.max(e);
        let ce = pk.is(flags::CE);
        let ce_changed = ce != self.last_ce;
        if ce_changed && p.delack_ps.is_some() && self.delack_count > 0 {
            // DCTCP: ACK what came before with the old CE state first.
            self.make_ack(s, out);
        }
        self.last_ce = ce;
        self.last_ts = pk.ts;
        let mut immediate = p.delack_ps.is_none() || ce_changed;
        if e <= self.rcv_nxt {
            immediate = true; // duplicate
        } else if s <= self.rcv_nxt {
            let had_ooo = !self.ooo.is_empty();
            self.rcv_nxt = e;
            while let Some(&(a, b)) = self.ooo.first() {
                if a > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(b);
                self.ooo.remove(0);
            }
            if had_ooo {
                immediate = true;
            }
            while let Some(m) = self.msgs.front() {
                if m.end > self.rcv_nxt {
                    break;
                }
                ev.completed.push(m.flow);
                self.msgs.pop_front();
            }
        } else {
            insert_range(&mut self.ooo, s, e);
            immediate = true;
        }
        if immediate {
            self.make_ack(s, out);
        } else {
            self.delack_count += 1;
            if self.delack_count >= 2 {
                self.make_ack(s, out);
            } else if self.delack_deadline == NEVER {
                self.delack_deadline = now + p.delack_ps.unwrap_or(0);
            }
        }
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack(&mut self, out: &mut Vec<Packet>) {
        if self.delack_count > 0 {
            let s = self.rcv_nxt;
            self.make_ack(s, out);
        }
        self.delack_deadline = NEVER;
    }
}

/// Insert [s, e) into a sorted list of disjoint ranges, merging overlaps.
fn insert_range(v: &mut Vec<(u64, u64)>, s: u64, e: u64) {
    let i = v.partition_point(|r| r.1 < s);
    let mut j = i;
    let (mut ns, mut ne) = (s, e);
    while j < v.len() && v[j].0 <= e {
        ns = ns.min(v[j].0);
        ne = ne.max(v[j].1);
        j += 1;
    }
    v.splice(i..j, std::iter::once((ns, ne)));
}

#[cfg(test)]
mod tests {
    use super::*;
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
        c.app_rate = Some(AppRate::new(1_000_000_000, 0, 0, 0)); // 1 Gbps
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
        c.app_rate = Some(AppRate::new(1_000_000_000, 100_000, 0, 0));
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
        c.on_delack(&mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(out[2].ack, 5000);
    }
}
