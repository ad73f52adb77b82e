//! LIA, the Linked Increases Algorithm of MPTCP (RFC 6356), for one subflow.
//!
//! The subflows of an MPTCP connection grow together and back off alone:
//! - congestion avoidance, per ACK of `bytes_acked` on subflow i:
//!   cwnd_i += min(α · bytes_acked · MSS / cwnd_total, bytes_acked · MSS / cwnd_i), with
//!   α = cwnd_total · max_j(cwnd_j / rtt_j²) / (Σ_j cwnd_j / rtt_j)² over the established
//!   subflows with an RTT sample (RFC 6356 §3). The connection computes α and cwnd_total
//!   ([`lia_alpha`]) and hands them to the subflow before each ACK ([`Lia::couple`]).
//! - slow start, loss and timeout: per subflow, Reno's (ssthresh = max(cwnd/2, 2 MSS)).
//! - `acks` (Linux `mptcp_coupled.c`): the same increase counted in ACKs and whole segments:
//!   one segment after max(2¹² / α_scaled, cwnd) ACKs, α_scaled = 2¹² · α / cwnd_total; slow
//!   start adds one segment per ACK. Delayed ACKs then halve the growth, as in Linux.
//! That Linux MPTCP v0.87 ran LIA by default (not OLIA) is an inference: its releases list
//! both, and the CONGA paper names neither.

use super::{reno_grow, CcState, CongestionControl};
use crate::units::Time;

#[derive(Clone, Debug)]
pub struct Lia {
    /// The connection's α and cwnd_total (bytes) at the last `couple`.
    alpha: f64,
    total: f64,
    /// Count ACKs and segments (Linux) instead of bytes (RFC 6356).
    acks: bool,
    /// Linux `snd_cwnd_cnt`.
    cnt: u64,
}

impl Lia {
    pub fn new(acks: bool) -> Lia {
        Lia {
            alpha: 1.0,
            total: 0.0,
            acks,
            cnt: 0,
        }
    }

    /// The connection's coupling terms before an ACK on this subflow.
    pub fn couple(&mut self, alpha: f64, total: f64) {
        self.alpha = alpha;
        self.total = total;
    }
}

/// RFC 6356's α and cwnd_total over (cwnd bytes, srtt ps) of the subflows that count.
pub fn lia_alpha(subflows: impl Iterator<Item = (f64, f64)> + Clone) -> (f64, f64) {
    let total: f64 = subflows.clone().map(|(c, _)| c).sum();
    let best = subflows
        .clone()
        .map(|(c, r)| c / (r * r))
        .fold(0.0, f64::max);
    let sum: f64 = subflows.map(|(c, r)| c / r).sum();
    if total <= 0.0 || sum <= 0.0 {
        return (1.0, total);
    }
    (total * best / (sum * sum), total)
}

impl CongestionControl for Lia {
    fn on_ack(&mut self, s: &mut CcState, acked: u64, _now: Time, _srtt: f64, cwnd_limited: bool) {
        if !cwnd_limited {
            return;
        }
        let total = self.total.max(s.cwnd);
        if self.acks {
            let segs = (s.cwnd / s.mss).floor().max(1.0);
            if s.cwnd <= s.ssthresh {
                s.cwnd = (segs + 1.0) * s.mss;
                return;
            }
            // ACKs per one-segment increase: max(2^12 / alpha_scaled, cwnd), in segments.
            let alpha_scaled = 4096.0 * self.alpha * s.mss / total;
            let need = (4096.0 / alpha_scaled.max(1e-12)).max(segs) as u64;
            self.cnt += 1;
            if self.cnt >= need {
                s.cwnd = (segs + 1.0) * s.mss;
                self.cnt = 0;
            }
            return;
        }
        if s.cwnd < s.ssthresh {
            reno_grow(s, acked);
            return;
        }
        let a = acked as f64;
        let coupled = self.alpha * a * s.mss / total;
        let alone = a * s.mss / s.cwnd;
        s.cwnd += coupled.min(alone);
    }
    fn on_loss(&mut self, s: &mut CcState, _now: Time) {
        s.ssthresh = (s.cwnd / 2.0).max(2.0 * s.mss);
        s.cwnd = s.ssthresh;
        self.cnt = 0;
    }
    fn on_ecn(&mut self, s: &mut CcState, now: Time) {
        self.on_loss(s, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: f64 = 1460.0;

    /// α on hand-computed cases (RFC 6356 §3).
    #[test]
    fn alpha_table() {
        // (subflows as (cwnd in MSS, rtt in µs), α)
        let cases: &[(&[(f64, f64)], f64)] = &[
            // One subflow: α = c · (c/r²) / (c/r)² = 1 (plain Reno).
            (&[(10.0, 100.0)], 1.0),
            // n equal subflows: α = 1/n.
            (&[(10.0, 100.0), (10.0, 100.0)], 0.5),
            (&[(5.0, 50.0); 8], 0.125),
            // Two paths, one with half the RTT: total 20, max c/r² = 10/50², Σ c/r = 10/50 +
            // 10/100 = 0.3: α = 20 · 0.004 / 0.09 = 0.8889.
            (&[(10.0, 50.0), (10.0, 100.0)], 20.0 * 0.004 / 0.09),
            // Unequal windows, same RTT: total 30, max c/r² = 20/r², Σ c/r = 30/r: α = 30·20/900.
            (&[(20.0, 100.0), (10.0, 100.0)], 30.0 * 20.0 / 900.0),
        ];
        for (subs, want) in cases {
            let it = subs.iter().map(|&(c, r)| (c * MSS, r * 1e6));
            let (alpha, total) = lia_alpha(it);
            assert!((alpha - want).abs() < 1e-9, "{subs:?}: {alpha} vs {want}");
            let t: f64 = subs.iter().map(|s| s.0 * MSS).sum();
            assert!((total - t).abs() < 1e-6);
        }
    }

    /// The increase per ACK in congestion avoidance: the coupled term, capped by a lone TCP's.
    #[test]
    fn increase_table() {
        // (α, cwnd_total MSS, cwnd_i MSS, increase per full-MSS ACK in bytes)
        let cases = [
            // Equal subflows (α = 1/2, total 20, cwnd 10): α·MSS²/total = MSS/40.
            (0.5, 20.0, 10.0, MSS / 40.0),
            // α = 1, one subflow: Reno's MSS²/cwnd.
            (1.0, 10.0, 10.0, MSS / 10.0),
            // A large α on a small subflow: capped by MSS²/cwnd_i.
            (4.0, 20.0, 10.0, MSS / 10.0),
        ];
        for (alpha, total, cwnd, want) in cases {
            let mut l = Lia::new(false);
            l.couple(alpha, total * MSS);
            let mut s = CcState {
                cwnd: cwnd * MSS,
                ssthresh: 1.0,
                mss: MSS,
            };
            l.on_ack(&mut s, MSS as u64, 0, 1e8, true);
            assert!((s.cwnd - cwnd * MSS - want).abs() < 1e-9, "α {alpha}");
        }
    }

    /// Linux's ACK-counted form: one segment after max(2¹²/α_scaled, cwnd) ACKs.
    #[test]
    fn ack_counted_increase() {
        // Two equal subflows of 10 segments: α = 1/2, total 20: α_scaled = 2^12/40, so one
        // segment per 40 ACKs (twice Reno's 10... per subflow cwnd: max(40, 10) = 40).
        let mut l = Lia::new(true);
        l.couple(0.5, 20.0 * MSS);
        let mut s = CcState {
            cwnd: 10.0 * MSS,
            ssthresh: 1.0,
            mss: MSS,
        };
        for i in 1..=80 {
            l.on_ack(&mut s, MSS as u64, 0, 1e8, true);
            let want = 10.0 + (i / 40) as f64;
            assert_eq!(s.cwnd / MSS, want, "after {i} ACKs");
        }
    }
}
