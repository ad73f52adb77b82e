//! TCP connections: both endpoints of one connection in one record.
//!
//! Data flows one way (from `src`, the sender, to `dst`, the receiver); the receiver answers
//! with ACKs. What is modelled, by file:
//! - this file: the connection, the three-way handshake (SYN, SYN-ACK, then data; the
//!   handshake costs one RTT) or a pre-established (persistent) connection, sending within the
//!   congestion and receive windows, TSO-style bursts (`TcpParams::tso_bytes`) and TCP Small
//!   Queues (`tsq_bytes`: the simulation reports when the host's NIC will have sent each data
//!   segment, [`Conn::nic_accepted`], and new data waits while the NIC holds the limit), the
//!   ACK clock, slow start after idle (`idle_restart`), the retransmission timeout (RFC 6298
//!   backoff, go-back-N that skips SACKed data), ECN (RFC 3168 / DCTCP: ECT on data, CE echoed
//!   as ECE, one reaction per window);
//! - `scoreboard`: SACK (RFC 2018) bookkeeping, the pipe and loss marking of RFC 6675 (or
//!   FACK), D-SACK (RFC 2883) on the sender, and the adaptive duplicate threshold;
//! - `recovery`: entering and leaving fast recovery, the window during it (RFC 6675, PRR of
//!   RFC 6937, or Linux 2.6's rate halving), NewReno partial ACKs (RFC 6582) without SACK, and
//!   the undo of spurious recoveries;
//! - `probe`: Early Retransmit (RFC 5827) and Tail Loss Probe, on the retransmission timer;
//! - `rtt`: RTT samples from echoed timestamps (RFC 7323, so retransmissions give samples) and
//!   the RTO (RFC 6298 or Linux's estimator);
//! - `receiver`: cumulative ACKs with up to three SACK blocks, per-segment or delayed ACKs
//!   (simple or Linux rules), D-SACK, reordering and path-change counts;
//! - `app`: application data as a byte stream: messages (flows) are appended and complete when
//!   their last byte has arrived in order at the receiver; an optional application rate limit.
//!
//! Every behaviour beyond the RFC baseline is a transport option that is off by default; with
//! all of them off, the code paths are those of the baseline (tested by the behaviour golden
//! test). Sequence numbers are 64-bit byte offsets from 0 and never wrap; the SYN takes no
//! sequence space. FIN and connection teardown are not modelled. This module emits packets
//! into an output vector and exposes timer deadlines; the simulation schedules the timer
//! events.

mod app;
#[cfg(test)]
mod linux_tests;
mod probe;
mod receiver;
mod recovery;
mod rtt;
mod scoreboard;
#[cfg(test)]
mod tests;

pub use app::{AppRate, Msg};

use super::cc::{Cc, CcState, CongestionControl};
use super::{IdleRestart, TcpParams};
use crate::net::packet::{flags, frame_bytes, Packet};
use crate::units::Time;
use recovery::{Reduction, Undo};
use rtt::Rtt;
use std::collections::VecDeque;

pub const NEVER: Time = Time::MAX;
/// The initial duplicate threshold (RFC 5681; Linux `tcp_reordering`).
const DUPTHRESH: u32 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    SynSent,
    Established,
    /// An MPTCP join (MP_JOIN) sent its SYN.
    JoinSent,
    /// A join got its SYN-ACK and sent the third ACK; it may carry data once that ACK is
    /// acknowledged (the fourth packet, RFC 6824 §3.2).
    JoinWait,
}

/// What the retransmission timer is armed for. Linux multiplexes the three on one timer
/// (`icsk_retransmit_timer`), and so do we: at most one of them is pending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RtxTimer {
    Rto,
    /// The delayed Early Retransmit (`ICSK_TIME_EARLY_RETRANS`).
    EarlyRetransmit,
    /// A Tail Loss Probe (`ICSK_TIME_LOSS_PROBE`).
    LossProbe,
}

/// `repr(C)`: the receiver's per-segment counters first, next to its state in [`Conn`].
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct ConnStats {
    pub data_pkts_rcvd: u64,
    pub reordered: u64,
    pub path_changes: u64,
    pub retx_segments: u64,
    pub timeouts: u64,
    /// Tail loss probes sent.
    pub loss_probes: u64,
    /// Fast recoveries started by Early Retransmit.
    pub early_retransmits: u64,
    /// Window reductions undone as spurious (D-SACK or timestamps).
    pub undos: u64,
    /// Fast recoveries (and Linux CWR episodes) started.
    pub recoveries: u64,
}

/// One TCP connection, both ends (the sender's and the receiver's state live together: a
/// packet names its connection, and each end touches only its own fields).
///
/// `repr(C)`, fields in the order of use: the fields every packet touches (identity, flags)
/// and the receiver's per-segment state first, then its counters, then the sender's
/// per-ACK state, then what only loss, the Linux rules or an application limit touch. A
/// data segment's arrival then reads three or four adjacent cache lines of the record and an
/// ACK's about six, instead of spreading over all eleven (the record is touched on every
/// endpoint event and, at scale, is not in cache: docs/BENCHMARKS.md).
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Conn {
    // ---- both ends: identity and flags (first cache line) ----
    /// For an MPTCP subflow, its connection and subflow index (the host layer's; `u32::MAX`:
    /// a plain TCP connection).
    pub mp_meta: u32,
    pub mp_sub: u32,
    pub src: u32,
    pub dst: u32,
    pub sport: u16,
    pub dport: u16,
    pub state: State,
    last_ce: bool,
    pushed: bool,
    rtx_timer: RtxTimer,
    in_recovery: bool,
    /// The last `try_send` stopped at the TSQ limit (it resumes when the NIC sends a segment).
    tsq_blocked: bool,
    /// FACK and Early Retransmit are on for this connection (both turn off once reordering
    /// is seen, as in Linux).
    fack_on: bool,
    er_on: bool,
    // ---- receiver ----
    pub rcv_nxt: u64,
    rcv_high: u64,
    /// The end of the oldest message not yet wholly received (`msgs`' front; `u64::MAX`: none),
    /// kept here so that an arriving segment does not read the queue's heap buffer, a cache
    /// miss of its own at scale (docs/BENCHMARKS.md).
    next_msg_end: u64,
    pub delack_deadline: Time,
    last_ts: Time,
    ooo: Vec<(u64, u64)>,
    msgs: VecDeque<Msg>,
    delack_count: u32,
    last_path: u32,
    /// Linux ACK rules: quick ACKs left, the delayed-ACK timeout (0: no data yet), the last
    /// data arrival, rcv_nxt when the last ACK left (`rcv_wup`), whether a short segment came
    /// since (`pushed`, above), and the receive window offered, in segments (it sets the
    /// quick-ACK count).
    quick: u32,
    rcv_wnd_segs: u32,
    ato_ps: Time,
    /// ATO_MIN (`delayed_ack_timeout`), set when the first data arrives.
    ato_floor: Time,
    lrcv: Time,
    rcv_wup: u64,
    /// A duplicate segment to report in the next ACK's D-SACK block (empty, start == end:
    /// none; not an `Option`, which would take 8 bytes more of the receiver's lines).
    dsack: (u64, u64),
    pub stats: ConnStats,
    // ---- sender ----
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Highest sequence sent + 1.
    pub snd_max: u64,
    /// Bytes the application has written so far.
    pub app_end: u64,
    /// Bytes of the stream the application has handed over so far when something else feeds
    /// it (a pipeline's upstream, a disk; `u64::MAX`: everything written is available). While
    /// it holds the sender back, only full segments go out, as from a continuous writer.
    pub feed_end: u64,
    pub w: CcState,
    pub cc: Cc,
    rtt: Rtt,
    pub rto_ps: Time,
    /// Deadline of the retransmission timer ([`RtxTimer`] says what for).
    pub rto_deadline: Time,
    /// When `try_send` wants to run again: the application's next data (rate limit) or,
    /// with TSQ, the NIC sending the oldest segment it holds.
    pub app_wake: Time,
    /// When data was last sent (Linux `lsndtime`), for slow start after idle.
    last_send: Time,
    dupacks: u32,
    /// The duplicate threshold in segments (Linux `tp->reordering`).
    reordering: u32,
    recover: u64,
    high_rxt: u64,
    ecn_cwr_until: u64,
    /// snd_max when snd_una's segment was last retransmitted: SACKs for data above it show
    /// that the retransmission itself was lost (RFC 6675 leaves this to the RTO; Linux
    /// detects it, and so do we).
    rtx_mark: u64,
    /// SACKed ranges above snd_una, sorted, disjoint.
    sacked: Vec<(u64, u64)>,
    /// Ranges retransmitted since they were last cumulatively acknowledged, sorted.
    rexmit: Vec<(u64, u64)>,
    /// The window reduction under way (PRR, rate halving), if any.
    red: Option<Box<Reduction>>,
    /// What an undo needs (undo marker, retransmissions not yet D-SACKed, prior window).
    undo: Option<Box<Undo>>,
    /// Linux's ECN window reduction (CWR state) lasts until snd_una passes this.
    cwr_high: Option<u64>,
    /// The highest sequence a tail loss probe retransmitted, while its outcome is unknown.
    tlp_high: Option<u64>,
    /// With TSQ: this sender's data segments still in its host's NIC queue, oldest first, as
    /// (time the NIC finishes sending it, payload bytes), and their sum.
    nic: VecDeque<(Time, u32)>,
    nic_bytes: u64,
    /// Application rate limit (boxed: most connections have none).
    pub app_rate: Option<Box<AppRate>>,
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
            mp_meta: u32::MAX,
            mp_sub: u32::MAX,
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
            feed_end: u64::MAX,
            cc: Cc::new(p.cc, p.dctcp_g, p.tick_ps),
            w: CcState {
                cwnd: p.iw_segments as f64 * mss,
                ssthresh: f64::INFINITY,
                mss,
            },
            rtt: Rtt::new(p),
            rto_ps: p.initial_rto_ps,
            rto_deadline: NEVER,
            rtx_timer: RtxTimer::Rto,
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
            reordering: DUPTHRESH,
            fack_on: p.fack,
            er_on: p.early_retransmit != super::EarlyRetransmit::Off,
            rexmit: Vec::new(),
            red: None,
            cwr_high: None,
            undo: None,
            tlp_high: None,
            last_send: NEVER,
            rcv_nxt: 0,
            next_msg_end: u64::MAX,
            ooo: Vec::new(),
            rcv_high: 0,
            delack_count: 0,
            delack_deadline: NEVER,
            last_ce: false,
            last_ts: 0,
            last_path: u32::MAX,
            dsack: (0, 0),
            quick: 0,
            ato_ps: 0,
            ato_floor: 0,
            lrcv: 0,
            rcv_wup: 0,
            pushed: false,
            rcv_wnd_segs: p.init_rwnd_segments,
            msgs: VecDeque::new(),
            stats: ConnStats::default(),
        }
    }

    /// The cache lines of the record (64-byte units) an arriving segment reads first, which
    /// the simulator prefetches one event ahead: the identity line and the receiver's three
    /// for data; the identity line and the first three of the sender's block for an ACK (the
    /// layout above; a test keeps the two in step).
    pub fn lines_read(ack: bool) -> &'static [usize] {
        if ack {
            &[0, 4, 5, 6]
        } else {
            &[0, 1, 2, 3]
        }
    }

    /// The RTT sample of a handshake that happened before the simulation (a pre-established
    /// connection): a round trip of `rtt_ps`, whatever the simulation's clock reads now.
    pub fn handshake_sample(&mut self, rtt_ps: Time, p: &TcpParams) {
        self.rto_ps = self
            .rtt
            .sample(rtt_ps.max(1), 0, self.snd_una, self.snd_max, p)
            .clamp(p.min_rto_ps, p.max_rto_ps);
    }

    /// The sender's smoothed RTT in picoseconds (0 before the first sample).
    pub fn srtt_ps(&self, p: &TcpParams) -> f64 {
        self.rtt.srtt_ps(p)
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

    /// Open an MPTCP subflow with MP_JOIN: SYN, SYN-ACK, third ACK, and the fourth packet
    /// (the ACK of the third) before data.
    pub fn open_join(&mut self, now: Time, p: &TcpParams, out: &mut Vec<Packet>) {
        self.open(now, p, out);
        self.state = State::JoinSent;
    }

    fn send_third_ack(&mut self, now: Time, out: &mut Vec<Packet>) {
        let mut pk = self.base_packet(now);
        pk.flags = flags::ACK;
        pk.size = frame_bytes(0);
        pk.tx_count = 1;
        out.push(pk);
    }

    /// The receiving end of a join gets its third ACK: answer with the fourth packet.
    pub fn on_join_ack(&mut self, now: Time, pk: &Packet, out: &mut Vec<Packet>) {
        self.last_ts = pk.ts;
        let s = self.rcv_nxt;
        let _ = now;
        self.make_ack(s, out);
    }

    pub fn is_established(&self) -> bool {
        self.state == State::Established
    }

    /// New bytes this connection could send now: its window's room less what is written and
    /// not yet sent (an MPTCP scheduler maps no more than that onto it).
    pub fn send_room(&self, p: &TcpParams) -> u64 {
        if self.state != State::Established {
            return 0;
        }
        if p.tsq_bytes > 0 && self.nic_bytes >= p.tsq_bytes {
            return 0;
        }
        let mss = p.mss as u64;
        let cwnd = self.w.cwnd.min(p.rwnd_bytes as f64).max(mss as f64) as u64;
        let unsent = self.app_end.saturating_sub(self.snd_nxt);
        let room = cwnd.saturating_sub(self.pipe() + unsent);
        room.min((self.snd_una + p.rwnd_bytes).saturating_sub(self.app_end))
    }

    /// Append `len` bytes mapped by MPTCP to this subflow's stream; returns where they start.
    pub fn write_mapped(&mut self, len: u64) -> u64 {
        let start = self.app_end;
        self.app_end += len;
        start
    }

    /// The application writes a message of `bytes` (u64::MAX-ish for unbounded) as flow `flow`.
    pub fn write(&mut self, flow: u32, bytes: u64) {
        self.app_end = self.app_end.saturating_add(bytes);
        self.msgs.push_back(Msg {
            flow,
            end: self.app_end,
        });
        self.sync_next_msg_end();
    }

    /// After a change to `msgs`: the end of its front message.
    fn sync_next_msg_end(&mut self) {
        self.next_msg_end = self.msgs.front().map_or(u64::MAX, |m| m.end);
    }

    /// The application stops writing at `now`: flow `flow` (the last message) ends with what
    /// it has written, i.e. what was sent, or what a rate-limited application had made by
    /// then. Returns the stream offset where it now ends.
    pub fn stop_writing(&mut self, now: Time, flow: u32) -> u64 {
        let written = match self.app_rate {
            Some(_) => self.available(now).max(self.snd_max),
            None => self.snd_max,
        }
        .min(self.app_end);
        if let Some(m) = self.msgs.iter_mut().rev().find(|m| m.flow == flow) {
            m.end = m.end.min(written);
        }
        self.app_end = written;
        // All of it has arrived already: the receiver will not see its end go by.
        let rcv = self.rcv_nxt;
        self.msgs.retain(|m| m.flow != flow || m.end > rcv);
        self.sync_next_msg_end();
        written
    }

    /// Bytes the application has made available by `now`.
    #[inline]
    fn available(&self, now: Time) -> u64 {
        let made = match self.app_rate.as_deref() {
            None => self.app_end,
            Some(r) => r.made(now).min(self.app_end),
        };
        made.min(self.feed_end)
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
            self.note_retransmission(now, seq, len);
        }
        if let Some(r) = self.red.as_mut() {
            r.prr_out += len;
        }
        out.push(pk);
        if seq + len > self.snd_max {
            self.snd_max = seq + len;
        }
        self.last_send = now;
        if self.rto_deadline == NEVER {
            self.arm_rto(now);
        }
    }

    #[inline]
    fn arm_rto(&mut self, now: Time) {
        self.rto_deadline = now + self.rto_ps;
        self.rtx_timer = RtxTimer::Rto;
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
        if p.idle_restart != IdleRestart::Off && self.flight() == 0 {
            self.restart_after_idle(now, p);
        }
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
        let mut sent_new = false;
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
            if len < mss
                && avail < self.app_end
                && (self.app_rate.as_ref().is_some_and(|r| r.is_stream())
                    || (avail == self.feed_end && !self.msgs.iter().any(|m| m.end == avail)))
            {
                // A continuous writer (or a feed in the middle of a message) will write more
                // at once: send full segments only (no silly windows); the wakeup below (or
                // the feed) comes back for it. (A writer of whole messages gets its last
                // partial segment sent, as with Nagle off.)
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
            sent_new = true;
        }
        if sent_new && p.tlp {
            self.schedule_loss_probe(now, p);
        }
        // Application-rate limited: wake up when the next full segment (continuous writer) or
        // the next write exists.
        if let Some(r) = self.app_rate.as_deref() {
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

    /// Slow start after idle: the first data after more than an RTO without sending (and
    /// nothing in flight) restarts from a smaller window (LINUX_TCP.md §6).
    fn restart_after_idle(&mut self, now: Time, p: &TcpParams) {
        if self.last_send == NEVER || now.saturating_sub(self.last_send) <= self.rto_ps {
            return;
        }
        if self.snd_nxt >= self.available(now) {
            return; // nothing to send: the restart happens when data is sent
        }
        let mss = self.w.mss;
        let iw = p.iw_segments as f64 * mss;
        let restart = iw.min(self.w.cwnd);
        match p.idle_restart {
            IdleRestart::Off => {}
            IdleRestart::Rfc5681 => self.w.cwnd = restart,
            IdleRestart::Linux => {
                // `tcp_cwnd_restart`: ssthresh = tcp_current_ssthresh() from the old window,
                // then one halving per full RTO of idle (integer segments), not below restart.
                self.w.ssthresh = self.w.ssthresh.max(0.75 * self.w.cwnd);
                let restart_segs = (restart / mss) as u64;
                let mut segs = (self.w.cwnd / mss) as u64;
                let mut delta = (now - self.last_send) as i128;
                loop {
                    delta -= self.rto_ps as i128;
                    if delta <= 0 || segs <= restart_segs {
                        break;
                    }
                    segs >>= 1;
                }
                self.w.cwnd = (segs.max(restart_segs) as f64 * mss).max(mss);
            }
        }
        // The idle period ends with this restart.
        self.last_send = now;
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
        self.rto_ps = self
            .rtt
            .sample(now, echoed, self.snd_una, self.snd_max, p)
            .clamp(p.min_rto_ps, p.max_rto_ps);
    }

    /// An ACK (or SYN-ACK) arrives at the sender.
    pub fn on_ack(&mut self, now: Time, pk: &Packet, p: &TcpParams, out: &mut Vec<Packet>) {
        if pk.is(flags::SYN) {
            if self.state == State::SynSent {
                self.state = State::Established;
                self.update_rtt(now, pk.ts, p);
                self.rto_deadline = NEVER;
                self.try_send(now, p, out);
            } else if self.state == State::JoinSent {
                self.state = State::JoinWait;
                self.update_rtt(now, pk.ts, p);
                self.send_third_ack(now, out);
                self.arm_rto(now);
            }
            return;
        }
        if self.state == State::JoinWait {
            // The fourth packet: the join may carry data.
            self.state = State::Established;
            self.rto_deadline = NEVER;
            self.try_send(now, p, out);
            return;
        }
        if self.state != State::Established {
            return;
        }
        let ece = pk.is(flags::ECE);
        if self.rtx_timer != RtxTimer::Rto {
            // Linux `tcp_ack`: any valid ACK puts a pending early retransmit or loss probe back
            // to the RTO (`tcp_rearm_rto`); the rules below may arm them again.
            self.rto_deadline = if self.flight() > 0 {
                now + self.rto_ps
            } else {
                NEVER
            };
            self.rtx_timer = RtxTimer::Rto;
        }
        // What PRR needs to count this ACK's deliveries.
        let prior_unsacked = if p.cwnd_reduction != super::CwndReduction::Rfc6675 {
            self.flight() - self.sacked_bytes()
        } else {
            0
        };
        let dsacked = p.dsack && pk.is(flags::DSACK) && self.on_dsack(pk);
        if pk.ack > self.snd_una {
            let acked = pk.ack - self.snd_una;
            let prior_flight = self.flight();
            let prior_una = self.snd_una;
            let prior_high_sack = self.high_sacked();
            if p.max_reordering > DUPTHRESH && !self.sacked.is_empty() {
                self.check_cumulative_reordering(pk.ack, prior_high_sack, p);
            }
            let retx_acked = !self.rexmit.is_empty() && self.rexmit[0].0 < pk.ack;
            self.snd_una = pk.ack;
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            if p.sack {
                self.merge_sacks(pk, p);
            }
            if !self.rexmit.is_empty() {
                let una = self.snd_una;
                self.rexmit.retain(|r| r.1 > una);
            }
            self.update_rtt(now, pk.ts, p);
            self.dupacks = 0;
            self.cc.on_ack_ecn(acked, ece, self.snd_una, self.snd_max);
            if self.cc.wants_samples() {
                let rtt_ps = (!retx_acked && pk.ts != 0 && pk.ts <= now).then(|| now - pk.ts);
                let open = self.ca_open();
                self.cc.pkts_acked(
                    &mut self.w,
                    acked,
                    now,
                    rtt_ps,
                    self.snd_una,
                    self.snd_max,
                    open,
                );
            }
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
                    if !(p.undo && self.undo_recovery(pk.ts)) {
                        self.end_reduction(p);
                    }
                } else {
                    if p.undo {
                        let reordered = self.high_sacked().max(self.snd_una) - prior_una;
                        self.undo_partial(pk.ts, reordered, p);
                    }
                    if !p.sack {
                        // NewReno partial ACK: the next hole starts at snd_una.
                        let len = (self.snd_max - self.snd_una).min(p.mss as u64);
                        self.send_data(now, p, self.snd_una, len, out);
                    }
                    self.reduction_step(p, prior_unsacked, false, false);
                }
            } else if self.cwr_high.is_some() {
                self.reduction_step(p, prior_unsacked, false, false);
                if self.cwr_high.is_some_and(|h| self.snd_una >= h) {
                    self.cwr_high = None;
                    self.end_reduction(p);
                }
            } else {
                let limited = self.cwnd_limited(prior_flight);
                let srtt = self.rtt.srtt_ps(p);
                self.cc.on_ack(&mut self.w, acked, now, srtt, limited);
            }
            if dsacked && !self.in_recovery {
                self.try_undo_dsack();
            }
            if self.tlp_high.is_some() {
                self.tlp_ack(pk.ack, true, dsacked, now);
            }
            // RFC 6298 (5.3): restart the timer when new data is acknowledged (a pending early
            // retransmit or loss probe gives way to it, as in Linux's `tcp_rearm_rto`).
            self.rto_deadline = if self.flight() > 0 {
                now + self.rto_ps
            } else {
                NEVER
            };
            self.rtx_timer = RtxTimer::Rto;
        } else if pk.ack == self.snd_una && self.flight() > 0 && pk.payload == 0 {
            let sacked_before = if self.tlp_high.is_some() {
                self.sacked_bytes()
            } else {
                0
            };
            if p.sack {
                self.merge_sacks(pk, p);
            }
            if self.tlp_high.is_some() {
                let news = self.sacked_bytes() != sacked_before;
                self.tlp_ack(pk.ack, news, dsacked, now);
            }
            self.dupacks += 1;
            if !self.in_recovery && self.snd_una >= self.recover && self.cwr_high.is_none() {
                match self.time_to_recover(now, pk, p) {
                    recovery::Trigger::No => {}
                    recovery::Trigger::Now => self.enter_recovery(now, p, ece, prior_unsacked, out),
                    recovery::Trigger::After(delay) => {
                        // Delayed Early Retransmit: recovery starts when the timer fires,
                        // unless an ACK moves snd_una first.
                        self.rto_deadline = now + delay;
                        self.rtx_timer = RtxTimer::EarlyRetransmit;
                    }
                }
            } else if self.in_recovery {
                if self.red.is_some() {
                    self.reduction_step(p, prior_unsacked, false, true);
                } else if !p.sack {
                    // NewReno: inflate by one segment per duplicate ACK.
                    self.w.cwnd += self.w.mss;
                }
                if p.sack && self.lost_retransmission(p) {
                    self.high_rxt = self.snd_una;
                }
            }
            if dsacked && !self.in_recovery {
                self.try_undo_dsack();
            }
        } else if dsacked && !self.in_recovery {
            self.try_undo_dsack();
        }
        if ece && p.ecn && self.snd_una > self.ecn_cwr_until && !self.in_recovery {
            self.on_ecn_echo(now, p);
        }
        self.try_send(now, p, out);
        if p.tlp && self.rtx_timer == RtxTimer::Rto && self.rto_deadline != NEVER {
            self.schedule_loss_probe(now, p);
        }
    }

    /// Whether the window may grow on this ACK: RFC 7661 (the window was nearly full), or
    /// Linux's `tcp_is_cwnd_limited` for the Linux congestion controls (at most 3 segments
    /// left, or with GSO less than a third of the window and under 64 KB).
    fn cwnd_limited(&self, prior_flight: u64) -> bool {
        let cwnd = self.w.cwnd;
        match self.cc.linux_gso() {
            None => prior_flight as f64 + self.w.mss >= cwnd,
            Some(gso) => {
                let left = cwnd - prior_flight as f64;
                left <= 3.0 * self.w.mss || (gso && left * 3.0 < cwnd && left < 65536.0)
            }
        }
    }

    /// Linux's `icsk_ca_state == TCP_CA_Open`: no recovery, CWR, loss or disorder.
    fn ca_open(&self) -> bool {
        !self.in_recovery
            && self.cwr_high.is_none()
            && self.snd_una >= self.recover
            && self.dupacks == 0
            && self.sacked.is_empty()
    }

    /// The retransmission timer expired (RTO, delayed early retransmit or loss probe).
    pub fn on_timer(&mut self, now: Time, p: &TcpParams, out: &mut Vec<Packet>) {
        match self.rtx_timer {
            RtxTimer::Rto => self.on_rto(now, p, out),
            RtxTimer::EarlyRetransmit => self.fire_early_retransmit(now, p, out),
            RtxTimer::LossProbe => self.send_loss_probe(now, p, out),
        }
    }

    /// The retransmission timeout.
    fn on_rto(&mut self, now: Time, p: &TcpParams, out: &mut Vec<Packet>) {
        self.stats.timeouts += 1;
        self.rto_ps = (self.rto_ps.saturating_mul(2)).min(p.max_rto_ps);
        match self.state {
            State::SynSent | State::JoinSent => {
                self.send_syn(now, out);
                self.rto_deadline = now + self.rto_ps;
                return;
            }
            State::JoinWait => {
                self.send_third_ack(now, out);
                self.rto_deadline = now + self.rto_ps;
                return;
            }
            _ => {}
        }
        let flight = self.flight();
        self.cc.on_timeout(&mut self.w, flight);
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = self.snd_max;
        self.high_rxt = self.snd_una;
        self.snd_nxt = self.snd_una; // go-back-N (SACKed data is skipped)
        self.rto_deadline = NEVER;
        self.rtx_timer = RtxTimer::Rto;
        // Linux `tcp_enter_loss`: no undo of the timeout, the threshold back to the default.
        self.red = None;
        self.cwr_high = None;
        self.undo = None;
        self.tlp_high = None;
        self.reordering = self.reordering.min(DUPTHRESH);
        self.try_send(now, p, out);
        if self.rto_deadline == NEVER && self.flight() > 0 {
            self.rto_deadline = now + self.rto_ps;
        }
    }
}
