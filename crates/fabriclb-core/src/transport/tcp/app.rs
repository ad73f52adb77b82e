//! The application side of a connection: messages written into the byte stream and an
//! optional rate limit on how fast the application writes.

use crate::units::Time;

/// A message (flow) carried by a connection: bytes [start, end) of the stream.
#[derive(Clone, Copy, Debug)]
pub struct Msg {
    pub flow: u32,
    pub end: u64,
}

/// An application rate limit (`workload::AppLimit`) in force since `t0`, when `base` bytes
/// had been written.
#[derive(Clone, Copy, Debug)]
pub struct AppRate {
    bytes_per_s: f64,
    t0: Time,
    base: u64,
    /// Bytes per write (0: a continuous stream) and the time between writes.
    write_bytes: u64,
    period_ps: Time,
}

impl AppRate {
    pub fn new(rate_bps: u64, write_bytes: u64, t0: Time, base: u64) -> AppRate {
        // Integer write period, so that "which write" and "when" agree exactly.
        let period_ps = if write_bytes == 0 {
            0
        } else {
            (write_bytes as u128 * 8 * 1_000_000_000_000 / rate_bps as u128).max(1) as Time
        };
        AppRate {
            bytes_per_s: rate_bps as f64 / 8.0,
            t0,
            base,
            write_bytes,
            period_ps,
        }
    }
    #[inline]
    pub(super) fn is_stream(&self) -> bool {
        self.write_bytes == 0
    }
    /// Bytes written by `now` (the first write happens at `t0`).
    #[inline]
    pub(super) fn made(&self, now: Time) -> u64 {
        let dt = now.saturating_sub(self.t0);
        if self.is_stream() {
            self.base + (dt as f64 * 1e-12 * self.bytes_per_s) as u64
        } else {
            self.base + (dt / self.period_ps + 1) * self.write_bytes
        }
    }
    /// The first time at which `target` bytes have been written.
    pub(super) fn time_of(&self, target: u64) -> Time {
        let need = target.saturating_sub(self.base);
        if self.is_stream() {
            self.t0 + (need as f64 / self.bytes_per_s * 1e12).ceil() as Time
        } else {
            let writes = need.div_ceil(self.write_bytes).max(1);
            self.t0 + (writes - 1) * self.period_ps
        }
    }
}
