//! DCTCP (RFC 8257; Alizadeh et al., SIGCOMM 2010). The sender keeps α, an EWMA (gain g) of the
//! fraction of bytes marked per window of data; on ECN-Echo it cuts the window to
//! cwnd · (1 − α/2), once per window. Growth is Reno's; a loss halves the window.

use super::{reno_grow, CcState, CongestionControl};
use crate::units::Time;

#[derive(Clone, Debug)]
pub struct Dctcp {
    pub g: f64,
    /// Estimate of the marked fraction; starts at 1 as in RFC 8257 §3.3 and Linux.
    pub alpha: f64,
    acked: u64,
    marked: u64,
    /// End of the current observation window (a sequence number).
    window_end: u64,
}

impl Dctcp {
    pub fn new(g: f64) -> Dctcp {
        Dctcp {
            g,
            alpha: 1.0,
            acked: 0,
            marked: 0,
            window_end: 0,
        }
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, s: &mut CcState, acked: u64, _now: Time, _srtt: f64, cwnd_limited: bool) {
        if cwnd_limited {
            reno_grow(s, acked);
        }
    }
    fn on_ack_ecn(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64) {
        self.acked += acked;
        if ece {
            self.marked += acked;
        }
        if snd_una >= self.window_end {
            if self.acked > 0 {
                let f = self.marked as f64 / self.acked as f64;
                self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            }
            self.acked = 0;
            self.marked = 0;
            self.window_end = snd_nxt;
        }
    }
    fn on_loss(&mut self, s: &mut CcState, _now: Time) {
        s.ssthresh = (s.cwnd / 2.0).max(2.0 * s.mss);
        s.cwnd = s.ssthresh;
    }
    fn on_ecn(&mut self, s: &mut CcState, _now: Time) {
        s.cwnd = (s.cwnd * (1.0 - self.alpha / 2.0)).max(s.mss);
        s.ssthresh = s.cwnd;
    }
}
