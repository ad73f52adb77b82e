//! Timers that repair a tail faster than the RTO: the delayed Early Retransmit (RFC 5827 App.
//! A.3, Linux 3.5+) and the Tail Loss Probe (Linux 3.10, draft-dukkipati-tcpm-tcp-loss-probe-01;
//! `tcp_schedule_loss_probe`, `tcp_send_loss_probe`, `tcp_process_tlp_ack`; LINUX_TCP.md §4.4,
//! §4.5). Both share the retransmission timer with the RTO, as in Linux.
//!
//! TLP: after a transmission in the Open state with data outstanding and the sender window-
//! or application-limited, the timer is set to PTO = max(2·SRTT, 10 ms) (with one segment
//! outstanding at least 1.5·SRTT + 200 ms, for the delayed ACK), never after the RTO. When it
//! fires, one new segment goes out regardless of cwnd if there is one, else the last segment
//! is sent again (one probe outstanding at most), and the RTO is re-armed. If an ACK beyond the
//! probe arrives without a D-SACK for it, the probe repaired a loss: cwnd drops to the
//! congestion control's ssthresh (a CWR reduction completed at once).

use super::{Conn, RtxTimer, TcpParams};
use crate::net::packet::Packet;
use crate::transport::cc::CongestionControl;
use crate::units::{Time, PS_PER_MS};

/// Linux TCP_DELACK_MAX, the delayed-ACK allowance of a single-segment probe.
const DELACK_MAX_PS: Time = 200 * PS_PER_MS;
/// The PTO floor of Linux 3.10 (`msecs_to_jiffies(10)`).
const PTO_MIN_PS: Time = 10 * PS_PER_MS;

impl Conn {
    /// Linux `tcp_may_send_now`: new data could go out now.
    pub(super) fn may_send_now(&self, now: Time, p: &TcpParams) -> bool {
        let avail = self.available(now);
        if self.snd_nxt >= avail {
            return false;
        }
        let len = (avail - self.snd_nxt).min(p.mss as u64);
        let cwnd = self.w.cwnd.min(p.rwnd_bytes as f64).max(p.mss as f64) as u64;
        self.pipe() + len <= cwnd && self.snd_nxt + len - self.snd_una <= p.rwnd_bytes
    }

    /// The delayed Early Retransmit fires (Linux `tcp_resume_early_retransmit`).
    pub(super) fn fire_early_retransmit(
        &mut self,
        now: Time,
        p: &TcpParams,
        out: &mut Vec<Packet>,
    ) {
        self.arm_rto(now);
        if !self.er_on || self.in_recovery || self.flight() == 0 {
            return;
        }
        self.stats.early_retransmits += 1;
        let prior_unsacked = self.flight() - self.sacked_bytes();
        self.enter_recovery(now, p, false, prior_unsacked, out);
        self.try_send(now, p, out);
    }

    /// Arm a loss probe in place of the RTO, when the rules allow one.
    pub(super) fn schedule_loss_probe(&mut self, now: Time, p: &TcpParams) {
        match self.rtx_timer {
            RtxTimer::EarlyRetransmit => return,
            // No consecutive probes: back to the RTO.
            RtxTimer::LossProbe => {
                self.arm_rto(now);
                return;
            }
            RtxTimer::Rto => {}
        }
        if self.rto_deadline == super::NEVER
            || !self.rtt.has_sample()
            || self.flight() == 0
            || !p.sack
            || !self.ca_open()
        {
            return;
        }
        // Only when window- or application-limited.
        if self.may_send_now(now, p) {
            return;
        }
        let srtt = self.rtt.srtt_ps(p) as Time;
        let mut pto = 2 * srtt;
        if self.flight() <= p.mss as u64 {
            pto = pto.max(srtt + srtt / 2 + DELACK_MAX_PS);
        }
        pto = pto.max(PTO_MIN_PS);
        let deadline = (now + pto).min(self.rto_deadline);
        self.rto_deadline = deadline.max(now + 1);
        self.rtx_timer = RtxTimer::LossProbe;
    }

    /// The loss probe fires (Linux `tcp_send_loss_probe`).
    pub(super) fn send_loss_probe(&mut self, now: Time, p: &TcpParams, out: &mut Vec<Packet>) {
        let mss = p.mss as u64;
        let avail = self.available(now);
        if self.snd_nxt < avail
            && self.snd_nxt + mss.min(avail - self.snd_nxt) - self.snd_una <= p.rwnd_bytes
        {
            // New data, one segment, whatever cwnd says.
            let len = (avail - self.snd_nxt).min(mss);
            let seq = self.snd_nxt;
            self.snd_nxt += len;
            self.send_data(now, p, seq, len, out);
            self.stats.loss_probes += 1;
        } else if self.tlp_high.is_none() && self.flight() > 0 {
            // Resend the last segment (at most one such probe outstanding).
            let len = self.flight().min(mss);
            let seq = self.snd_max - len;
            self.send_data(now, p, seq, len, out);
            if let Some(u) = self.undo.as_mut() {
                u.retrans -= 1; // a probe is not one of the episode's retransmissions
            }
            self.tlp_high = Some(self.snd_max);
            self.stats.loss_probes += 1;
        }
        self.arm_rto(now);
    }

    /// An ACK during a probe episode (Linux `tcp_process_tlp_ack`): a duplicate ACK at the
    /// probe's end with no new information ends the episode (the original and the probe both
    /// arrived); an ACK beyond it ends it too, and without a D-SACK it shows that the probe
    /// repaired a loss, so the window is reduced.
    pub(super) fn tlp_ack(&mut self, ack: u64, advanced: bool, dsacked: bool, now: Time) {
        let Some(high) = self.tlp_high else {
            return;
        };
        if ack == high && !advanced {
            self.tlp_high = None;
        } else if ack > high {
            self.tlp_high = None;
            if !dsacked {
                // `tcp_init_cwnd_reduction` + `tcp_end_cwnd_reduction` in the CWR state.
                self.cc.on_loss(&mut self.w, now);
                self.w.cwnd = self.w.ssthresh.max(self.w.mss);
                self.stats.recoveries += 1;
            }
        }
    }
}
