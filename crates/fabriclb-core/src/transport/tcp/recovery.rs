//! Fast recovery: when it starts, how the window falls during it, how it ends, and the undo of
//! recoveries that were not needed.
//!
//! - Start (`time_to_recover`): `reordering` duplicate ACKs or segments' worth of SACKed
//!   bytes (RFC 5681 / RFC 6675; `reordering` is 3 unless it adapts); with FACK, a SACK more
//!   than `reordering` segments above snd_una; with Early Retransmit, any SACK while fewer
//!   than four segments are outstanding and nothing new can be sent (Linux 3.5+
//!   `tcp_time_to_recover`, RFC 5827), at once or after max(SRTT/4, 2 ms).
//! - The window (`transport.cwnd_reduction`):
//!   - "rfc6675": ssthresh and cwnd set by the congestion control at once; the pipe estimate
//!     limits sending; cwnd = ssthresh at the end. NewReno inflation without SACK (RFC 6582).
//!   - "prr": RFC 6937 with the slow-start reduction bound (PRR-SSRB), as Linux 3.2+
//!     `tcp_cwnd_reduction`: cwnd = pipe + sndcnt on every ACK, at least one segment for the
//!     fast retransmit; cwnd = ssthresh at the end.
//!   - "rate-halving": Linux 2.6 `tcp_cwnd_down`: one segment less every second ACK that
//!     delivers data, not below ssthresh, and never more than pipe + 1 segment; at the end
//!     cwnd = min(cwnd, ssthresh) (`tcp_complete_cwr`).
//!   With "prr" and "rate-halving" an ECN-Echo starts the same reduction (Linux's CWR state)
//!   instead of an immediate cut.
//! - Undo (`transport.undo`, Linux `tcp_try_undo_*`): when every retransmission of the episode
//!   has been D-SACKed, or an ACK echoes a timestamp older than the episode's first
//!   retransmission (the original arrived: Eifel, RFC 3522), cwnd returns to the congestion
//!   control's undo value (the window before the cut) and ssthresh to its prior value. On a
//!   partial ACK during recovery only cwnd is restored, the duplicate threshold rises by the
//!   reordering seen and recovery goes on; the whole undo comes when it ends.

use super::{Conn, Packet, RtxTimer, TcpParams, DUPTHRESH};
use crate::transport::cc::CongestionControl;
use crate::transport::{CwndReduction, EarlyRetransmit};
use crate::units::{Time, PS_PER_MS};

/// Whether a duplicate ACK starts fast recovery.
pub(super) enum Trigger {
    No,
    Now,
    /// Delayed Early Retransmit: start after this long.
    After(Time),
}

/// A window reduction under way (PRR or rate halving).
#[derive(Clone, Debug)]
pub(super) struct Reduction {
    prior_cwnd: f64,
    /// Bytes delivered (acknowledged or SACKed) since the reduction started.
    prr_delivered: u64,
    /// Bytes sent since the reduction started.
    pub(super) prr_out: u64,
    /// Rate halving's ACK parity (Linux `snd_cwnd_cnt`).
    cnt: u32,
}

/// What undoing a reduction needs (Linux `undo_marker`, `undo_retrans`, `retrans_stamp`,
/// `prior_ssthresh`).
#[derive(Clone, Debug)]
pub(super) struct Undo {
    /// snd_una when the episode started.
    pub(super) marker: u64,
    /// Retransmissions of the episode not yet shown unnecessary by a D-SACK.
    pub(super) retrans: i64,
    /// When the episode's first retransmission was sent (NEVER: none yet).
    pub(super) stamp: Time,
    prior_cwnd: f64,
    /// None when the reduction came from ECN (nothing to restore but ssthresh itself).
    prior_ssthresh: Option<f64>,
}

impl Conn {
    /// Linux `tcp_time_to_recover` (RFC 6675 and RFC 5827) on a duplicate ACK.
    pub(super) fn time_to_recover(&mut self, now: Time, pk: &Packet, p: &TcpParams) -> Trigger {
        let mss = p.mss as u64;
        let r = self.reordering as u64;
        if self.dupacks >= self.reordering || (p.sack && self.sacked_bytes() >= r * mss) {
            return Trigger::Now;
        }
        if !p.sack || self.sacked.is_empty() {
            return Trigger::No;
        }
        if self.fack_on && self.high_sacked() > self.snd_una + r * mss {
            return Trigger::Now;
        }
        // No retransmission outstanding (a loss probe's does not count, as in Linux, where
        // the probe does not go through `tcp_retransmit_skb`).
        let probe_only = self.rexmit.len() == 1 && self.tlp_high == Some(self.rexmit[0].1);
        if self.er_on && self.reordering == DUPTHRESH && (self.rexmit.is_empty() || probe_only) {
            let packets_out = self.flight().div_ceil(mss);
            let sacked_out = self.sacked_bytes().div_ceil(mss);
            if packets_out > sacked_out && packets_out < 4 && !self.may_send_now(now, p) {
                if p.early_retransmit == EarlyRetransmit::Delayed
                    && !pk.is(crate::net::packet::flags::ECE)
                    && self.rtt.has_sample()
                {
                    // `tcp_pause_early_retransmit`: max(SRTT/4, 2 ms), unless the RTO is sooner.
                    let delay = ((self.rtt.srtt_ps(p) / 4.0) as Time).max(2 * PS_PER_MS);
                    if self.rto_deadline > now + delay {
                        return Trigger::After(delay);
                    }
                }
                self.stats.early_retransmits += 1;
                return Trigger::Now;
            }
        }
        Trigger::No
    }

    /// Enter fast recovery and send the fast retransmit. `prior_unsacked` is what PRR needs to
    /// count this ACK's deliveries.
    pub(super) fn enter_recovery(
        &mut self,
        now: Time,
        p: &TcpParams,
        ece: bool,
        prior_unsacked: u64,
        out: &mut Vec<Packet>,
    ) {
        self.in_recovery = true;
        self.recover = self.snd_max;
        self.stats.recoveries += 1;
        let prior_cwnd = self.w.cwnd;
        let in_cwr = self.cwr_high.take().is_some();
        if p.undo {
            self.undo = Some(Box::new(Undo {
                marker: self.snd_una,
                retrans: 0,
                stamp: super::NEVER,
                prior_cwnd,
                // Linux `tcp_current_ssthresh`; none after an ECN reduction (`prior_ssthresh = 0`).
                prior_ssthresh: (!ece && !in_cwr).then(|| self.w.ssthresh.max(0.75 * self.w.cwnd)),
            }));
        }
        self.high_rxt = self.snd_una;
        match p.cwnd_reduction {
            CwndReduction::Rfc6675 => self.cc.on_loss(&mut self.w, now),
            CwndReduction::Prr | CwndReduction::RateHalving => {
                // Linux `tcp_enter_recovery`: a CWR reduction under way continues; otherwise
                // ssthresh from the congestion control and cwnd left to the reduction.
                if !in_cwr || self.red.is_none() {
                    self.cc.on_loss(&mut self.w, now);
                    self.w.cwnd = prior_cwnd;
                    self.red = Some(Box::new(Reduction {
                        prior_cwnd,
                        prr_delivered: 0,
                        prr_out: 0,
                        cnt: 0,
                    }));
                }
                self.reduction_step(p, prior_unsacked, true, false);
            }
        }
        self.ecn_cwr_until = self.snd_max;
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
        if self.rtx_timer != RtxTimer::Rto {
            // A pending early retransmit or loss probe gives way to the RTO.
            self.arm_rto(now);
        }
    }

    /// One ACK's step of the reduction under way (PRR or rate halving): sets cwnd.
    /// `prior_unsacked` = bytes outstanding and not SACKed before the ACK; `dupack` counts a
    /// duplicate ACK without SACK as one segment delivered (Linux `tcp_add_reno_sack`).
    pub(super) fn reduction_step(
        &mut self,
        p: &TcpParams,
        prior_unsacked: u64,
        fast_rexmit: bool,
        dupack: bool,
    ) {
        if self.red.is_none() {
            return;
        }
        let mss = p.mss as i64;
        let unsacked = self.flight() - self.sacked_bytes();
        let mut delivered = prior_unsacked.saturating_sub(unsacked) as i64;
        if dupack && !p.sack {
            delivered = delivered.max(mss);
        }
        let pipe = self.pipe() as i64;
        let ssthresh = self.w.ssthresh as i64;
        let r = self.red.as_mut().unwrap();
        match p.cwnd_reduction {
            CwndReduction::Prr => {
                r.prr_delivered += delivered as u64;
                let (pd, po) = (r.prr_delivered as i64, r.prr_out as i64);
                let sndcnt = if pipe > ssthresh {
                    // Proportional: ceil(ssthresh * prr_delivered / prior_cwnd) - prr_out.
                    let prior = (r.prior_cwnd as i64).max(1);
                    (ssthresh as i128 * pd as i128 + prior as i128 - 1) as i64 / prior - po
                } else {
                    // Slow-start reduction bound: back up to ssthresh, ACK-clocked.
                    (ssthresh - pipe).min((pd - po).max(delivered) + mss)
                };
                let sndcnt = sndcnt.max(if fast_rexmit { mss } else { 0 });
                self.w.cwnd = (pipe + sndcnt) as f64;
            }
            CwndReduction::RateHalving => {
                if delivered > 0 || fast_rexmit {
                    let decr = r.cnt + 1;
                    r.cnt = decr & 1;
                    if decr >> 1 > 0 && self.w.cwnd > self.w.ssthresh {
                        self.w.cwnd -= (decr >> 1) as f64 * self.w.mss;
                    }
                    self.w.cwnd = self.w.cwnd.min((pipe + mss) as f64);
                }
            }
            CwndReduction::Rfc6675 => {}
        }
    }

    /// Recovery (or a CWR reduction) is over: set the window it ends with.
    pub(super) fn end_reduction(&mut self, p: &TcpParams) {
        let mss = self.w.mss;
        match p.cwnd_reduction {
            CwndReduction::Rfc6675 => self.w.cwnd = self.w.ssthresh.max(mss),
            // Linux `tcp_end_cwnd_reduction`.
            CwndReduction::Prr => self.w.cwnd = self.w.ssthresh.max(mss),
            // Linux 2.6 `tcp_complete_cwr`.
            CwndReduction::RateHalving => self.w.cwnd = self.w.cwnd.min(self.w.ssthresh).max(mss),
        }
        self.red = None;
    }

    /// An ECN-Echo outside recovery, at most once per window.
    pub(super) fn on_ecn_echo(&mut self, now: Time, p: &TcpParams) {
        match p.cwnd_reduction {
            CwndReduction::Rfc6675 => self.cc.on_ecn(&mut self.w, now),
            CwndReduction::Prr | CwndReduction::RateHalving => {
                if self.cwr_high.is_some() {
                    return;
                }
                // Linux `tcp_enter_cwr`: ssthresh from the congestion control, then the same
                // gradual reduction as in recovery, until what is in flight now is acknowledged.
                let prior_cwnd = self.w.cwnd;
                self.cc.on_ecn(&mut self.w, now);
                self.w.cwnd = prior_cwnd;
                if p.cwnd_reduction == CwndReduction::RateHalving {
                    self.w.cwnd = self.w.cwnd.min(self.pipe() as f64 + self.w.mss);
                }
                self.undo = None;
                self.red = Some(Box::new(Reduction {
                    prior_cwnd,
                    prr_delivered: 0,
                    prr_out: 0,
                    cnt: 0,
                }));
                self.cwr_high = Some(self.snd_max);
                self.stats.recoveries += 1;
            }
        }
        self.ecn_cwr_until = self.snd_max;
    }

    /// Linux `tcp_may_undo`: every retransmission of the episode was D-SACKed, none was
    /// sent, or the ACK echoes a timestamp older than the first one (`tcp_packet_delayed`).
    fn may_undo(&self, echo: Time) -> bool {
        self.undo.as_ref().is_some_and(|u| {
            u.retrans <= 0 || u.stamp == super::NEVER || (echo != 0 && echo < u.stamp)
        })
    }

    /// Recovery is over (snd_una reached `recover`): undo it whole if it was spurious (Linux
    /// `tcp_try_undo_recovery`). Returns whether it did.
    pub(super) fn undo_recovery(&mut self, echo: Time) -> bool {
        if !self.may_undo(echo) {
            return false;
        }
        self.do_undo(true);
        self.undo = None;
        self.red = None;
        true
    }

    /// A partial ACK during recovery (Linux `tcp_try_undo_partial`): if the episode looks
    /// spurious so far, restore cwnd (not ssthresh) and raise the duplicate threshold by the
    /// reordering seen, `reordered` bytes from the episode's first hole to the highest SACK.
    /// Recovery goes on (its reduction, if any, continues from there).
    pub(super) fn undo_partial(&mut self, echo: Time, reordered: u64, p: &TcpParams) {
        if !self.may_undo(echo) {
            return;
        }
        if p.max_reordering > DUPTHRESH {
            self.note_reordering(reordered, p);
        }
        self.do_undo(false);
    }

    /// Outside recovery: every retransmission of the last episode was D-SACKed (Linux
    /// `tcp_try_undo_dsack`).
    pub(super) fn try_undo_dsack(&mut self) {
        if self.undo.as_ref().is_some_and(|u| u.retrans <= 0) {
            self.do_undo(true);
            self.undo = None;
        }
    }

    /// Linux `tcp_undo_cwr`: cwnd back to the congestion control's undo value and, with
    /// `undo_ssthresh`, ssthresh to its value before the reduction.
    fn do_undo(&mut self, undo_ssthresh: bool) {
        let Some(u) = &self.undo else {
            return;
        };
        match u.prior_ssthresh {
            Some(pss) => {
                self.w.cwnd = self.w.cwnd.max(self.cc.undo_cwnd(&self.w, u.prior_cwnd));
                if undo_ssthresh && pss > self.w.ssthresh {
                    self.w.ssthresh = pss;
                }
            }
            None => self.w.cwnd = self.w.cwnd.max(self.w.ssthresh),
        }
        if undo_ssthresh {
            self.stats.undos += 1;
        }
    }
}
