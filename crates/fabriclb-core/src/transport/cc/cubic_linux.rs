//! CUBIC as Linux implements it (`net/ipv4/tcp_cubic.c`): "v2.2" in 2.6.26 and "v2.3" with
//! HyStart in 3.10 (LINUX_TCP.md §5). Unlike RFC 8312 (`cubic.rs`) it counts ACKs, not bytes
//! or wall-clock time:
//! - the window is a whole number of segments; slow start adds one segment per ACK (no ABC),
//!   while cwnd <= ssthresh;
//! - in congestion avoidance `bictcp_update` computes `cnt`, the number of ACKs per one-segment
//!   increase, from the cubic target one minimum RTT ahead (t in 2^-10 s from the jiffy clock;
//!   recomputed at most every HZ/32 while cwnd is unchanged), capped by the TCP-friendly
//!   (Reno-emulating) window, scaled by the measured ACKs per packet (`delayed_ack`), and at
//!   least 1: at most one segment per ACK;
//! - β = 717/1024, C = 410/1024 (`bic_scale` = 41), fast convergence, `beta_scale` = 15;
//! - 3.10 only: at most 20 ACKs per increase before the first loss (5 % per RTT), the ACK
//!   ratio clamped to 32, HyStart (ACK train and delay, from cwnd 16), and undo to the window
//!   before the loss (`loss_cwnd`); 2.6.26 undoes to `last_max_cwnd`;
//! - neither kernel resets the epoch after idle (that came in 4.3), so after a quiet period
//!   the cubic target has moved on.
//! The cube root is exact (integer); the kernel's table-and-Newton `cubic_root` is within
//! 0.195 % of it.

use super::{CcState, CongestionControl};
use crate::units::{Time, PS_PER_MS, PS_PER_S};

/// Which kernel's CUBIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    Linux2626,
    Linux310,
}

const BETA: u64 = 717;
const BETA_SCALE: u64 = 1024;
/// `bic_scale * 10`.
const CUBE_RTT_SCALE: u64 = 410;
/// 8 (1024 + 717) / 3 / (1024 - 717), in integer arithmetic as the kernel computes it.
const TCP_BETA_SCALE: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
const BICTCP_HZ: u32 = 10;
const ACK_RATIO_SHIFT: u32 = 4;
const ACK_RATIO_LIMIT: u32 = 32 << ACK_RATIO_SHIFT;
const HYSTART_LOW_WINDOW: u64 = 16;
const HYSTART_ACK_DELTA_MS: u64 = 2;
const HYSTART_MIN_SAMPLES: u32 = 8;
/// 4 ms and 16 ms in the 1/8-ms units of `delay_min`.
const HYSTART_DELAY_MIN: u64 = 4 << 3;
const HYSTART_DELAY_MAX: u64 = 16 << 3;

#[derive(Clone, Debug)]
pub struct CubicLinux {
    kernel: Kernel,
    tick_ps: Time,
    /// ACKs per one-segment increase.
    cnt: u64,
    last_max_cwnd: u64,
    loss_cwnd: u64,
    last_cwnd: u64,
    last_time: u64,
    origin_point: u64,
    /// K in 2^-10 s.
    k: u64,
    /// The minimum RTT seen, in 1/8 ms (0: none yet).
    delay_min: u64,
    /// Start of the epoch, in jiffies.
    epoch_start: Option<u64>,
    ack_cnt: u64,
    tcp_cwnd: u64,
    /// ACKed packets per ACK × 16.
    delayed_ack: u32,
    /// Linux `snd_cwnd_cnt` (kept by the congestion control here).
    cwnd_cnt: u64,
    // HyStart
    found: bool,
    round_start_ms: u64,
    last_ack_ms: u64,
    end_seq: u64,
    curr_rtt: u64,
    sample_cnt: u32,
    /// snd_una after the ACK being processed (set by `pkts_acked`).
    ack_seq: u64,
    snd_nxt: u64,
}

impl CubicLinux {
    pub fn new(kernel: Kernel, tick_ps: Time) -> CubicLinux {
        CubicLinux {
            kernel,
            tick_ps,
            cnt: 0,
            last_max_cwnd: 0,
            loss_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin_point: 0,
            k: 0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
            cwnd_cnt: 0,
            found: false,
            round_start_ms: 0,
            last_ack_ms: 0,
            end_seq: 0,
            curr_rtt: 0,
            sample_cnt: 0,
            ack_seq: 0,
            snd_nxt: 0,
        }
    }

    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    fn hystart(&self) -> bool {
        self.kernel == Kernel::Linux310
    }

    fn jiffies(&self, now: Time) -> u64 {
        now / self.tick_ps
    }

    fn hz(&self) -> u64 {
        PS_PER_S / self.tick_ps
    }

    /// `bictcp_reset` on entering the Loss state: everything goes, including the minimum
    /// delay; 3.10 keeps `loss_cwnd` (reset only at init), 2.6.26 does not.
    fn reset(&mut self) {
        let (kernel, tick_ps, loss_cwnd) = (self.kernel, self.tick_ps, self.loss_cwnd);
        *self = CubicLinux::new(kernel, tick_ps);
        if kernel == Kernel::Linux310 {
            self.loss_cwnd = loss_cwnd;
        }
    }

    fn hystart_reset(&mut self, now: Time) {
        let ms = now / PS_PER_MS;
        self.round_start_ms = ms;
        self.last_ack_ms = ms;
        self.end_seq = self.snd_nxt;
        self.curr_rtt = 0;
        self.sample_cnt = 0;
    }

    fn hystart_update(&mut self, s: &CcState, ssthresh: &mut f64, delay: u64, now: Time) {
        if self.found {
            return;
        }
        let ms = now / PS_PER_MS;
        // ACK train: ACKs closely spaced for longer than half the minimum delay.
        if ms.saturating_sub(self.last_ack_ms) <= HYSTART_ACK_DELTA_MS {
            self.last_ack_ms = ms;
            if ms.saturating_sub(self.round_start_ms) > self.delay_min >> 4 {
                self.found = true;
            }
        }
        // Delay increase: the round's minimum RTT over its first 8 samples.
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            if self.curr_rtt == 0 || self.curr_rtt > delay {
                self.curr_rtt = delay;
            }
            self.sample_cnt += 1;
        } else if self.curr_rtt
            > self.delay_min + (self.delay_min >> 4).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX)
        {
            self.found = true;
        }
        if self.found {
            *ssthresh = (s.cwnd / s.mss).floor() * s.mss;
        }
    }

    /// `bictcp_update`: the ACKs per increase for a window of `cwnd` segments.
    fn update(&mut self, cwnd: u64, now: Time) {
        let tcp_now = self.jiffies(now);
        self.ack_cnt += 1;
        if self.last_cwnd == cwnd && tcp_now.saturating_sub(self.last_time) <= self.hz() / 32 {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = tcp_now;
        if self.epoch_start.is_none() {
            self.epoch_start = Some(tcp_now);
            self.ack_cnt = 1;
            self.tcp_cwnd = cwnd;
            if self.last_max_cwnd <= cwnd {
                self.k = 0;
                self.origin_point = cwnd;
            } else {
                // K = cbrt((Wmax - cwnd) / C) in 2^-10 s: cube_factor = 2^40 / 410.
                let cube_factor = (1u64 << (10 + 3 * BICTCP_HZ)) / CUBE_RTT_SCALE;
                self.k = icbrt(cube_factor * (self.last_max_cwnd - cwnd));
                self.origin_point = self.last_max_cwnd;
            }
        }
        let epoch = self.epoch_start.unwrap();
        // t, one minimum delay ahead, in 2^-10 s (delay_min is in 1/8 ms; 2.6.26 keeps it
        // in jiffies << 3, the same at HZ = 1000).
        let ahead = match self.kernel {
            Kernel::Linux310 => (self.delay_min >> 3) * self.hz() / 1000,
            Kernel::Linux2626 => self.delay_min >> 3,
        };
        let t = ((tcp_now + ahead - epoch) << BICTCP_HZ) / self.hz();
        let offs = t.abs_diff(self.k);
        let delta =
            ((CUBE_RTT_SCALE as u128 * (offs as u128).pow(3)) >> (10 + 3 * BICTCP_HZ)) as u64;
        let target = if t < self.k {
            self.origin_point.saturating_sub(delta)
        } else {
            self.origin_point + delta
        };
        self.cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            100 * cwnd
        };
        if self.kernel == Kernel::Linux310 && self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20; // 5 % per RTT before the first loss
        }
        // TCP friendliness: Reno's window grows by one per (1.875 cwnd) ACKs.
        let delta = (cwnd * TCP_BETA_SCALE) >> 3;
        if delta > 0 {
            while self.ack_cnt > delta {
                self.ack_cnt -= delta;
                self.tcp_cwnd += 1;
            }
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        self.cnt = (self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack.max(1) as u64;
        if self.cnt == 0 {
            self.cnt = 1;
        }
    }

    fn segs(s: &CcState) -> u64 {
        ((s.cwnd / s.mss).floor() as u64).max(1)
    }
}

/// The integer cube root (floor).
fn icbrt(x: u64) -> u64 {
    let mut r = (x as f64).cbrt() as u64;
    while r > 0 && r * r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

impl CongestionControl for CubicLinux {
    fn on_ack(&mut self, s: &mut CcState, _acked: u64, now: Time, _srtt: f64, cwnd_limited: bool) {
        if !cwnd_limited {
            return;
        }
        let cwnd = Self::segs(s);
        if s.cwnd <= s.ssthresh {
            if self.hystart() && self.ack_seq > self.end_seq {
                self.hystart_reset(now);
            }
            // `tcp_slow_start`: one segment per ACK.
            s.cwnd = (cwnd + 1) as f64 * s.mss;
            return;
        }
        self.update(cwnd, now);
        // `tcp_cong_avoid_ai`
        if self.cwnd_cnt >= self.cnt {
            s.cwnd = (cwnd + 1) as f64 * s.mss;
            self.cwnd_cnt = 0;
        } else {
            self.cwnd_cnt += 1;
        }
    }

    fn wants_samples(&self) -> bool {
        true
    }

    fn pkts_acked(
        &mut self,
        s: &mut CcState,
        acked: u64,
        now: Time,
        rtt_ps: Option<Time>,
        snd_una: u64,
        snd_nxt: u64,
        open: bool,
    ) {
        self.ack_seq = snd_una;
        self.snd_nxt = snd_nxt;
        // `bictcp_acked`: track the packets per ACK (Open state only).
        let cnt = acked.div_ceil(s.mss as u64).max(1) as u32;
        if open {
            let ratio = self.delayed_ack - (self.delayed_ack >> ACK_RATIO_SHIFT) + cnt;
            self.delayed_ack = match self.kernel {
                Kernel::Linux310 => ratio.min(ACK_RATIO_LIMIT),
                Kernel::Linux2626 => ratio,
            };
        }
        // `rtt_us` from `tcp_clean_rtx_queue`: the age of the newest acked segment in whole
        // jiffies; none when retransmitted data was acked, and in 2.6.26 none for a zero-jiffy
        // age either (it tests `ca_seq_rtt > 0`, 3.10 `>= 0`).
        let Some(rtt) = rtt_ps else {
            return;
        };
        let rtt_j = self.jiffies(now) - self.jiffies(now - rtt);
        if self.kernel == Kernel::Linux2626 && rtt_j == 0 {
            return;
        }
        // Skip delay samples within a second of an epoch's start (right after a reduction).
        // (Without an epoch the kernel compares with jiffies itself, long past HZ on a host that
        // has been up for a while.)
        let tcp_now = self.jiffies(now);
        if let Some(e) = self.epoch_start {
            if tcp_now.saturating_sub(e) < self.hz() {
                return;
            }
        }
        // The minimum delay in 1/8 ms (3.10) or 1/8 jiffy (2.6.26), at least 1.
        let delay = match self.kernel {
            Kernel::Linux310 => ((rtt_j * self.tick_ps * 8) / PS_PER_MS).max(1),
            Kernel::Linux2626 => (rtt_j << 3).max(1),
        };
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if self.hystart() && s.cwnd <= s.ssthresh && Self::segs(s) >= HYSTART_LOW_WINDOW {
            let mut ss = s.ssthresh;
            self.hystart_update(s, &mut ss, delay, now);
            s.ssthresh = ss;
        }
    }

    fn on_loss(&mut self, s: &mut CcState, _now: Time) {
        // `bictcp_recalc_ssthresh`
        let cwnd = Self::segs(s);
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd {
            cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        self.loss_cwnd = cwnd;
        self.cwnd_cnt = 0; // `tcp_init_cwnd_reduction`
        let ss = (cwnd * BETA / BETA_SCALE).max(2);
        s.ssthresh = ss as f64 * s.mss;
        s.cwnd = s.ssthresh;
    }

    fn on_ecn(&mut self, s: &mut CcState, now: Time) {
        self.on_loss(s, now);
    }

    fn on_timeout(&mut self, s: &mut CcState, _flight: u64) {
        // `tcp_enter_loss`: ssthresh from the window, cwnd one segment, then the Loss state
        // resets CUBIC (`bictcp_state`) and HyStart.
        let mut t = *s;
        self.on_loss(&mut t, 0);
        s.ssthresh = t.ssthresh;
        s.cwnd = s.mss;
        self.reset();
    }

    fn undo_cwnd(&self, s: &CcState, _prior_cwnd: f64) -> f64 {
        let w = match self.kernel {
            Kernel::Linux310 => self.loss_cwnd,
            Kernel::Linux2626 => self.last_max_cwnd,
        };
        s.cwnd.max(w as f64 * s.mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: f64 = 1460.0;

    fn st(cwnd: u64, ssthresh: f64) -> CcState {
        CcState {
            cwnd: cwnd as f64 * MSS,
            ssthresh: ssthresh * MSS,
            mss: MSS,
        }
    }

    #[test]
    fn constants_match_the_kernel() {
        assert_eq!(TCP_BETA_SCALE, 15);
        assert_eq!((1u64 << 40) / CUBE_RTT_SCALE, 2_681_735_677);
        // K for Wmax - cwnd = 30 segments: cbrt(30 / (410/1024)) s = 4.2157 s = 4316 / 1024 s.
        assert_eq!(icbrt(2_681_735_677 * 30), 4316);
    }

    /// Slow start and the first congestion-avoidance steps, ACK by ACK.
    #[test]
    fn growth_counts_acks() {
        // (kernel, cwnd, ssthresh, ACKs, cwnd after): one segment per ACK in slow start; in
        // CA before any loss 3.10 grows one segment per cnt = 20 ACKs scaled by the ACK ratio
        // (2 packets per ACK: cnt = 20 * 16 / 32 = 10), 2.6.26 by the TCP-friendly bound.
        let cases = [
            (Kernel::Linux2626, 10, 100.0, 5, 15),
            (Kernel::Linux310, 10, 100.0, 5, 15),
            (Kernel::Linux310, 100, 50.0, 11, 101),
        ];
        for (k, w0, ss, acks, want) in cases {
            let mut c = CubicLinux::new(k, PS_PER_MS);
            let mut s = st(w0, ss);
            for i in 0..acks {
                c.on_ack(&mut s, 1460, i * 1000, 1e8, true);
            }
            assert_eq!((s.cwnd / MSS) as u64, want, "{k:?} {w0} {ss}");
        }
    }

    #[test]
    fn loss_cuts_to_717_1024_with_fast_convergence_and_undo_per_kernel() {
        for (k, undo_to) in [(Kernel::Linux310, 100u64), (Kernel::Linux2626, 100)] {
            let mut c = CubicLinux::new(k, PS_PER_MS);
            let mut s = st(100, 1e9);
            c.on_loss(&mut s, 0);
            assert_eq!((s.cwnd / MSS) as u64, 70, "{k:?}"); // 100 * 717 / 1024
            assert_eq!(c.undo_cwnd(&s, 0.0) / MSS, undo_to as f64);
            // A second loss below the old maximum: Wmax = 70 * 1741 / 2048 = 59.
            c.on_loss(&mut s, 0);
            assert_eq!(c.last_max_cwnd, 59);
            assert_eq!((s.cwnd / MSS) as u64, 49);
            let want_undo = match k {
                Kernel::Linux310 => 70,
                Kernel::Linux2626 => 59,
            };
            assert_eq!(
                (c.undo_cwnd(&s, 0.0) / MSS) as u64,
                want_undo.max(49),
                "{k:?}"
            );
        }
    }

    #[test]
    fn timeout_keeps_ssthresh_and_resets_the_state() {
        let mut c = CubicLinux::new(Kernel::Linux310, PS_PER_MS);
        let mut s = st(40, 1e9);
        c.on_loss(&mut s, 0);
        assert_ne!(c.last_max_cwnd, 0);
        c.on_timeout(&mut s, 0);
        assert_eq!(s.cwnd, MSS);
        assert_eq!((s.ssthresh / MSS) as u64, 28 * 717 / 1024);
        assert_eq!(c.last_max_cwnd, 0);
    }

    #[test]
    fn hystart_ends_slow_start_on_an_ack_train_across_a_clock_tick() {
        // 3.10 only, from cwnd 16: with a 1/8-ms minimum delay, any round whose ACKs, 2 ms or
        // less apart, span a millisecond tick ends slow start (LINUX_TCP.md §5.3).
        for (k, exits) in [(Kernel::Linux310, true), (Kernel::Linux2626, false)] {
            let mut c = CubicLinux::new(k, PS_PER_MS);
            let mut s = st(20, f64::INFINITY);
            // Warm past the one-second sample blackout (no epoch yet: none applies).
            let mut una = 0u64;
            let mut now: Time = 5 * PS_PER_S;
            for _ in 0..40 {
                una += 1460;
                now += 100_000_000; // ACKs 100 us apart, RTT 100 us
                c.pkts_acked(
                    &mut s,
                    1460,
                    now,
                    Some(100_000_000),
                    una,
                    una + 30 * 1460,
                    true,
                );
                c.on_ack(&mut s, 1460, now, 1e8, true);
            }
            assert_eq!(s.ssthresh.is_finite(), exits, "{k:?}");
        }
    }
}
