//! Discounting Rate Estimator (CONGA §3.2, Algorithm 1), one per fabric port.
//!
//! Register X grows by the bytes of each packet sent on the link and is multiplied by
//! (1 - α) every T_dre. Then X ≈ R·τ with τ = T_dre/α, and the link's congestion metric is
//! X / (C·τ) quantised to Q bits, saturating at 2^Q - 1.
//!
//! The periodic decay is applied lazily but exactly: the timer ticks at multiples of T_dre,
//! and reading or adding at time t first applies the decays of all ticks up to t. A packet's
//! bytes are added when its serialisation ends; because the simulator learns that one link
//! propagation delay later, an addition may be dated before the last read, and is then
//! discounted by the ticks in between, which is what the register would hold.

use crate::units::Time;

#[derive(Clone, Copy, Debug)]
pub struct DreParams {
    pub period_ps: Time,
    pub alpha: f64,
}

impl DreParams {
    /// τ = T_dre / α.
    pub fn tau_ps(&self) -> f64 {
        self.period_ps as f64 / self.alpha
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Dre {
    x: f64,
    /// Index of the last tick applied (tick k happens at k * period).
    tick: u64,
}

impl Dre {
    #[inline]
    fn decay(x: f64, alpha: f64, ticks: u64) -> f64 {
        if ticks == 0 {
            x
        } else if ticks > 2_000 {
            0.0
        } else {
            x * (1.0 - alpha).powi(ticks as i32)
        }
    }
    /// Register value at time `now` (applies pending decays).
    #[inline]
    pub fn value(&mut self, now: Time, p: &DreParams) -> f64 {
        let k = now / p.period_ps;
        if k > self.tick {
            self.x = Self::decay(self.x, p.alpha, k - self.tick);
            self.tick = k;
        }
        self.x
    }
    /// Count `bytes` sent at time `t` (possibly before the last read).
    #[inline]
    pub fn add(&mut self, t: Time, bytes: u32, p: &DreParams) {
        let k = t / p.period_ps;
        if k >= self.tick {
            self.value(t, p);
            self.x += bytes as f64;
        } else {
            self.x += Self::decay(bytes as f64, p.alpha, self.tick - k);
        }
    }
    /// Quantised congestion metric in [0, 2^q - 1] for a link of `rate_bps`.
    #[inline]
    pub fn metric(&mut self, now: Time, p: &DreParams, rate_bps: u64, q_bits: u8) -> u8 {
        let x = self.value(now, p);
        quantise(x, rate_bps, p, q_bits)
    }
}

/// Quantise X / (C·τ) to `q_bits` bits: floor(u · 2^Q), saturating at 2^Q - 1.
#[inline]
pub fn quantise(x_bytes: f64, rate_bps: u64, p: &DreParams, q_bits: u8) -> u8 {
    let c_tau_bytes = rate_bps as f64 / 8.0 * p.tau_ps() * 1e-12;
    let u = x_bytes / c_tau_bytes;
    let levels = 1u32 << q_bits;
    ((u * levels as f64) as u32).min(levels - 1) as u8
}

#[cfg(test)]
mod tests {
    use super::*;
    const US: u64 = 1_000_000;
    fn p() -> DreParams {
        DreParams {
            period_ps: 20 * US,
            alpha: 0.125,
        }
    }

    #[test]
    fn decay_table() {
        // (time of read in us, expected X) after 8000 bytes added at t = 0
        let cases = [
            (0u64, 8000.0),
            (19, 8000.0),
            (20, 7000.0),
            (39, 7000.0),
            (40, 6125.0),
            (60, 5359.375),
            (100_000, 0.0),
        ];
        for (t, want) in cases {
            let mut d = Dre::default();
            d.add(0, 8000, &p());
            let got = d.value(t * US, &p());
            assert!((got - want).abs() < 1e-9, "t={t}us got {got} want {want}");
        }
    }

    #[test]
    fn late_addition_is_discounted() {
        let mut a = Dre::default();
        a.add(5 * US, 1000, &p());
        let va = a.value(45 * US, &p());
        let mut b = Dre::default();
        b.value(45 * US, &p()); // read first, then learn of the packet sent at 5 us
        b.add(5 * US, 1000, &p());
        let vb = b.value(45 * US, &p());
        assert!(
            (va - vb).abs() < 1e-9 && (va - 765.625).abs() < 1e-9,
            "{va} {vb}"
        );
    }

    #[test]
    fn steady_rate_converges_to_r_tau() {
        // 10 Gbps link, full rate: 1500 B every 1.2 us. X -> R·τ = 1.25e9 B/s * 160 us = 200 kB
        // (just below: the decay happens before the tick's arrivals are counted).
        let mut d = Dre::default();
        let mut t = 0;
        while t < 5_000 * US {
            d.add(t, 1500, &p());
            t += 1_200_000;
        }
        let x = d.value(t, &p());
        assert!((175_000.0..=200_000.0).contains(&x), "{x}");
        assert_eq!(d.metric(t, &p(), 10_000_000_000, 3), 7);
    }

    #[test]
    fn quantisation_table() {
        // C·τ for 10 Gbps and τ = 160 us is 200,000 bytes.
        let cases = [
            (0.0, 3, 0u8),
            (24_999.0, 3, 0),
            (25_000.0, 3, 1),
            (100_000.0, 3, 4),
            (199_999.0, 3, 7),
            (400_000.0, 3, 7),
            (100_000.0, 1, 1),
            (99_999.0, 1, 0),
            (100_000.0, 6, 32),
        ];
        for (x, q, want) in cases {
            assert_eq!(quantise(x, 10_000_000_000, &p(), q), want, "x={x} q={q}");
        }
    }
}
