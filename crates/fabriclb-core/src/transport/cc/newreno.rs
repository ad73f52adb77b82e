//! NewReno congestion control (RFC 5681 growth with RFC 3465 ABC, L = 2; RFC 6582 recovery is
//! in `tcp`). ECN (RFC 3168): an ECN-Echo halves the window like a loss, once per window.

use super::{reno_grow, CcState, CongestionControl};
use crate::units::Time;

#[derive(Clone, Debug, Default)]
pub struct NewReno;

impl CongestionControl for NewReno {
    fn on_ack(&mut self, s: &mut CcState, acked: u64, _now: Time, _srtt: f64, cwnd_limited: bool) {
        if cwnd_limited {
            reno_grow(s, acked);
        }
    }
    fn on_loss(&mut self, s: &mut CcState, _now: Time) {
        s.ssthresh = (s.cwnd / 2.0).max(2.0 * s.mss);
        s.cwnd = s.ssthresh;
    }
    fn on_ecn(&mut self, s: &mut CcState, now: Time) {
        self.on_loss(s, now);
    }
}
