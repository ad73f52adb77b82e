//! CUBIC (RFC 8312): W(t) = C (t − K)^3 + W_max with K = ∛(W_max (1 − β) / C), windows in
//! segments and time in seconds, C = 0.4, β = 0.7, fast convergence, and the TCP-friendly
//! region W_est = W_max β + 3 (1 − β)/(1 + β) · t / RTT. Slow start below ssthresh is Reno's.

use super::{CcState, CongestionControl};
use crate::units::{Time, PS_PER_S};

const C: f64 = 0.4;
const BETA: f64 = 0.7;

#[derive(Clone, Debug, Default)]
pub struct Cubic {
    w_max: f64,
    w_last_max: f64,
    k: f64,
    /// Start of the current epoch (ps); None until the first ACK after a reduction.
    epoch: Option<Time>,
}

impl CongestionControl for Cubic {
    fn on_ack(&mut self, s: &mut CcState, acked: u64, now: Time, srtt_ps: f64, cwnd_limited: bool) {
        if !cwnd_limited {
            return;
        }
        if s.cwnd < s.ssthresh {
            s.cwnd += (acked as f64).min(2.0 * s.mss);
            return;
        }
        let w = s.cwnd / s.mss;
        let t0 = *self.epoch.get_or_insert_with(|| {
            if self.w_max < w {
                self.w_max = w;
                self.k = 0.0;
            } else {
                self.k = (self.w_max * (1.0 - BETA) / C).cbrt();
            }
            now
        });
        let t = (now - t0) as f64 / PS_PER_S as f64;
        let rtt = (srtt_ps / PS_PER_S as f64).max(1e-6);
        let target = C * (t + rtt - self.k).powi(3) + self.w_max;
        let w_est = self.w_max * BETA + 3.0 * (1.0 - BETA) / (1.0 + BETA) * t / rtt;
        let acked_segs = acked as f64 / s.mss;
        let inc = if target > w {
            (target - w) / w
        } else {
            0.01 / w
        };
        let mut new_w = w + inc * acked_segs;
        if w_est > new_w {
            new_w = w + (w_est - w).min(acked_segs);
        }
        s.cwnd = new_w * s.mss;
    }
    fn on_loss(&mut self, s: &mut CcState, _now: Time) {
        let w = s.cwnd / s.mss;
        // fast convergence
        self.w_max = if w < self.w_last_max {
            w * (1.0 + BETA) / 2.0
        } else {
            w
        };
        self.w_last_max = w;
        self.epoch = None;
        s.cwnd = (s.cwnd * BETA).max(2.0 * s.mss);
        s.ssthresh = s.cwnd;
    }
    fn on_ecn(&mut self, s: &mut CcState, now: Time) {
        self.on_loss(s, now);
    }
    fn on_timeout(&mut self, s: &mut CcState, flight: u64) {
        self.epoch = None;
        self.w_max = s.cwnd / s.mss;
        s.ssthresh = (flight as f64 * BETA).max(2.0 * s.mss);
        s.cwnd = s.mss;
    }
}
