//! Round-trip time estimation and the retransmission timeout.
//!
//! - RFC 6298: SRTT and RTTVAR with gains 1/8 and 1/4 on exact (picosecond) samples,
//!   RTO = SRTT + max(G, 4·RTTVAR) with G = 1 µs, clamped to [min_rto, max_rto].
//! - Linux (`tcp_rtt_estimator` and `tcp_set_rto`, identical in 2.6.26 and 3.10; LINUX_TCP.md
//!   §2): samples in whole jiffies (at least one), SRTT kept ×8 and the mean deviation ×4
//!   (`mdev`); the variance term `rttvar` never falls below `rto_min` and decays toward the
//!   largest `mdev` of the last RTT once per RTT; RTO = SRTT + rttvar (so SRTT +
//!   max(4·mdev, rto_min)), capped at max_rto. Timestamps give a sample for every ACK, also for
//!   retransmitted data (as Linux's `tcp_ack_saw_tstamp`).

use super::super::{RtoEstimator, TcpParams};
use crate::units::Time;

#[derive(Clone, Debug)]
pub(super) enum Rtt {
    Rfc6298 {
        srtt_ps: f64,
        rttvar_ps: f64,
    },
    Linux {
        /// SRTT × 8, in jiffies (0: no sample yet).
        srtt8: i64,
        /// 4 × mean deviation, in jiffies.
        mdev4: i64,
        mdev_max: i64,
        rttvar: i64,
        /// The RTT round: `rttvar` decays when snd_una passes it.
        rtt_seq: u64,
    },
}

impl Rtt {
    pub(super) fn new(p: &TcpParams) -> Rtt {
        match p.rto_estimator {
            RtoEstimator::Rfc6298 => Rtt::Rfc6298 {
                srtt_ps: 0.0,
                rttvar_ps: 0.0,
            },
            RtoEstimator::Linux => Rtt::Linux {
                srtt8: 0,
                mdev4: 0,
                mdev_max: 0,
                rttvar: 0,
                rtt_seq: 0,
            },
        }
    }

    /// The smoothed RTT in picoseconds (0 before the first sample).
    pub(super) fn srtt_ps(&self, p: &TcpParams) -> f64 {
        match self {
            Rtt::Rfc6298 { srtt_ps, .. } => *srtt_ps,
            Rtt::Linux { srtt8, .. } => (*srtt8 as f64 / 8.0) * p.tick_ps as f64,
        }
    }

    pub(super) fn has_sample(&self) -> bool {
        match self {
            Rtt::Rfc6298 { srtt_ps, .. } => *srtt_ps > 0.0,
            Rtt::Linux { srtt8, .. } => *srtt8 > 0,
        }
    }

    /// Take a sample measured from `sent` to `now`; returns the new RTO. `snd_una` and
    /// `snd_nxt` mark Linux's once-per-RTT decay.
    pub(super) fn sample(
        &mut self,
        now: Time,
        sent: Time,
        snd_una: u64,
        snd_nxt: u64,
        p: &TcpParams,
    ) -> Time {
        match self {
            Rtt::Rfc6298 { srtt_ps, rttvar_ps } => {
                let r = (now - sent) as f64;
                if *srtt_ps == 0.0 {
                    *srtt_ps = r;
                    *rttvar_ps = r / 2.0;
                } else {
                    *rttvar_ps = 0.75 * *rttvar_ps + 0.25 * (*srtt_ps - r).abs();
                    *srtt_ps = 0.875 * *srtt_ps + 0.125 * r;
                }
                let rto = *srtt_ps + (4.0 * *rttvar_ps).max(1e6); // clock granularity G = 1 us
                (rto as Time).clamp(p.min_rto_ps, p.max_rto_ps)
            }
            Rtt::Linux {
                srtt8,
                mdev4,
                mdev_max,
                rttvar,
                rtt_seq,
            } => {
                let tick = p.tick_ps;
                // RTT in jiffies: the difference of the two clock readings, at least 1.
                let mut m = ((now / tick) as i64 - (sent / tick) as i64).max(1);
                let rto_min = p.min_rto_ps.div_ceil(tick) as i64;
                if *srtt8 != 0 {
                    m -= *srtt8 >> 3; // the error
                    *srtt8 += m; // srtt = 7/8 srtt + 1/8 new
                    if m < 0 {
                        m = -m - (*mdev4 >> 2);
                        // A falling RTT moves mdev eight times more slowly.
                        if m > 0 {
                            m >>= 3;
                        }
                    } else {
                        m -= *mdev4 >> 2;
                    }
                    *mdev4 += m; // mdev = 3/4 mdev + 1/4 new
                    if *mdev4 > *mdev_max {
                        *mdev_max = *mdev4;
                        if *mdev_max > *rttvar {
                            *rttvar = *mdev_max;
                        }
                    }
                    if snd_una > *rtt_seq {
                        if *mdev_max < *rttvar {
                            *rttvar -= (*rttvar - *mdev_max) >> 2;
                        }
                        *rtt_seq = snd_nxt;
                        *mdev_max = rto_min;
                    }
                } else {
                    *srtt8 = m << 3;
                    *mdev4 = m << 1;
                    *rttvar = (*mdev4).max(rto_min);
                    *mdev_max = *rttvar;
                    *rtt_seq = snd_nxt;
                }
                let rto_j = (*srtt8 >> 3) + *rttvar;
                (rto_j as Time * tick).min(p.max_rto_ps)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::TransportConfig;
    use crate::units::PS_PER_MS;

    fn params(est: &str, min_rto: &str) -> TcpParams {
        serde_json::from_value::<TransportConfig>(serde_json::json!({
            "rto_estimator": est, "min_rto": min_rto, "clock_hz": 1000
        }))
        .unwrap()
        .params()
    }

    /// (estimator, minRTO, RTT samples in µs, RTO after each sample in µs)
    #[test]
    fn rto_after_each_sample() {
        let cases: &[(&str, &str, &[u64], &[u64])] = &[
            // RFC 6298: 100 µs samples floored at 200 ms.
            ("rfc6298", "200ms", &[100, 100], &[200_000, 200_000]),
            // RFC 6298 with a 1 ms floor and a 10 ms sample: 10 + 4 x 5 = 30 ms.
            ("rfc6298", "1ms", &[10_000], &[30_000]),
            // Linux, datacenter RTTs: every sample is one jiffy, RTO = 1 jiffy + rto_min
            // (LINUX_TCP.md §2: "RTO ≈ 201 ms at HZ=1000").
            (
                "linux",
                "200ms",
                &[100, 80, 120],
                &[201_000, 201_000, 201_000],
            ),
            // Linux with a 1 ms floor: first sample m = 10 jiffies: srtt 10, mdev 20 (4 x
            // m/2), rttvar = max(20, 1) -> RTO 30 ms, as RFC 6298 gives.
            ("linux", "1ms", &[10_000], &[30_000]),
            // Then a sample of 2 ms (below SRTT): error -8 -> |err| - mdev/4 = 3, damped to
            // 3>>3 = 0: mdev stays 20; srtt 10 - 1 = 9; rttvar keeps 20 until the RTT round
            // ends -> RTO 29 ms. (RFC 6298 would give 9 + 4 x 6.25... = 34 ms.)
            ("linux", "1ms", &[10_000, 2_000], &[30_000, 29_000]),
        ];
        for (est, min_rto, samples, want) in cases {
            let p = params(est, min_rto);
            let mut r = Rtt::new(&p);
            let mut now = 1_000 * PS_PER_MS;
            for (i, (&s, &w)) in samples.iter().zip(want.iter()).enumerate() {
                now += 1_000 * PS_PER_MS;
                // The sample spans s µs ending on a jiffy edge, as Linux's jiffy clock sees it.
                let sent = now - s * 1_000_000;
                // snd_una does not pass rtt_seq: no decay within these samples.
                let rto = r.sample(now, sent, 0, 0, &p);
                assert_eq!(rto / 1_000_000, w, "{est} {min_rto} sample {i}");
            }
        }
    }

    #[test]
    fn linux_rttvar_decays_once_per_round_to_the_rounds_largest_deviation() {
        let p = params("linux", "1ms");
        let mut r = Rtt::new(&p);
        let ms = PS_PER_MS;
        // First sample 40 ms: srtt 40, mdev 80, rttvar 80 -> RTO 120 ms.
        assert_eq!(r.sample(1000 * ms, 960 * ms, 0, 100, &p), 120 * ms);
        // Steady 40 ms samples: mdev falls 80 -> 60 -> 45 -> 34, but rttvar holds at 80
        // within a round. The first round ends at the third sample (snd_una 150 passes
        // rtt_seq 100): the largest mdev of that round was 80 (= rttvar), so no decay, and
        // mdev_max restarts from rto_min (1 jiffy).
        assert_eq!(r.sample(2000 * ms, 1960 * ms, 50, 100, &p), 120 * ms);
        assert_eq!(r.sample(3000 * ms, 2960 * ms, 150, 300, &p), 120 * ms);
        // The next round ends at snd_una 350: its largest mdev was 34, so rttvar decays by a
        // quarter of the gap: 80 - (80 - 34)/4 = 69 -> RTO = 40 + 69 = 109 ms.
        assert_eq!(r.sample(4000 * ms, 3960 * ms, 350, 500, &p), 109 * ms);
    }
}
