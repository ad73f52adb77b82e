//! Congestion controllers, one file each. The enum below is the registry: one variant per
//! controller, dispatched by `match`; its serde names are what scenarios write.
//! A controller sees only its own state and [`CcState`] (cwnd, ssthresh, MSS); it may not
//! touch packets or timers: TCP (`transport::tcp`) decides when each hook is called.

mod cubic;
mod cubic_linux;
mod dctcp;
mod lia;
mod newreno;

pub use cubic::Cubic;
pub use cubic_linux::{CubicLinux, Kernel};
pub use dctcp::Dctcp;
pub use lia::{lia_alpha, Lia};
pub use newreno::NewReno;

use crate::units::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Window state shared by all controllers, in bytes.
#[derive(Clone, Copy, Debug)]
pub struct CcState {
    pub cwnd: f64,
    pub ssthresh: f64,
    pub mss: f64,
}

/// What each controller implements.
pub trait CongestionControl {
    /// New data acknowledged (`acked` bytes) outside loss recovery. `cwnd_limited` is false
    /// when the sender could not fill the window (application-limited): no growth then
    /// (RFC 7661).
    fn on_ack(&mut self, s: &mut CcState, acked: u64, now: Time, srtt_ps: f64, cwnd_limited: bool);
    /// Every ACK with new data, for ECN accounting (DCTCP's α); `snd_nxt` marks the window.
    fn on_ack_ecn(&mut self, _acked: u64, _ece: bool, _snd_una: u64, _snd_nxt: u64) {}
    /// Loss detected by duplicate ACKs / SACK (fast retransmit): set ssthresh and cwnd.
    fn on_loss(&mut self, s: &mut CcState, now: Time);
    /// ECN-Echo, at most once per window (the caller enforces the once-per-window rule).
    fn on_ecn(&mut self, s: &mut CcState, now: Time);
    /// Retransmission timeout with `flight` bytes outstanding.
    fn on_timeout(&mut self, s: &mut CcState, flight: u64) {
        s.ssthresh = (flight as f64 / 2.0).max(2.0 * s.mss);
        s.cwnd = s.mss;
    }
    /// Whether [`CongestionControl::pkts_acked`] wants to be called.
    fn wants_samples(&self) -> bool {
        false
    }
    /// Every ACK of new data, before any growth (Linux `pkts_acked`): `acked` bytes, the RTT
    /// when the ACK covers no retransmitted data, snd_una and snd_nxt after it, and whether
    /// the sender is in the Open state (no recovery, CWR or disorder).
    #[allow(clippy::too_many_arguments)]
    fn pkts_acked(
        &mut self,
        _s: &mut CcState,
        _acked: u64,
        _now: Time,
        _rtt_ps: Option<Time>,
        _snd_una: u64,
        _snd_nxt: u64,
        _open: bool,
    ) {
    }
    /// The window an undo of a spurious reduction restores (`prior_cwnd`: before the cut).
    fn undo_cwnd(&self, s: &CcState, prior_cwnd: f64) -> f64 {
        s.cwnd.max(prior_cwnd)
    }
}

/// Congestion controller choice (`transport.cc`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum CcKind {
    /// NewReno (RFC 5681 / 6582) with appropriate byte counting, L = 2 (RFC 3465).
    NewReno,
    /// CUBIC (RFC 8312), C = 0.4, β = 0.7, with the TCP-friendly region.
    Cubic,
    /// DCTCP (RFC 8257), g = 1/16.
    #[default]
    Dctcp,
    /// CUBIC as Linux 2.6.26 implements it (v2.2: ACK-counted, no HyStart).
    #[serde(rename = "cubic-linux-2.6.26")]
    CubicLinux2626,
    /// CUBIC as Linux 3.10 implements it (v2.3: ACK-counted, with HyStart).
    #[serde(rename = "cubic-linux-3.10")]
    CubicLinux310,
}

/// The controller of one connection.
#[derive(Clone, Debug)]
pub enum Cc {
    NewReno(NewReno),
    Cubic(Cubic),
    Dctcp(Dctcp),
    /// Boxed: its state is several times the others', and every connection's record would
    /// carry the enum's largest variant (a run's connections then fill more cache lines).
    CubicLinux(Box<CubicLinux>),
    /// MPTCP's coupled increase (chosen by the MPTCP transport, not by `transport.cc`).
    Lia(Lia),
}

impl Cc {
    /// `tick_ps`: one jiffy of the kernel clock, for the Linux controllers.
    pub fn new(kind: CcKind, dctcp_g: f64, tick_ps: Time) -> Cc {
        match kind {
            CcKind::NewReno => Cc::NewReno(NewReno),
            CcKind::Cubic => Cc::Cubic(Cubic::default()),
            CcKind::Dctcp => Cc::Dctcp(Dctcp::new(dctcp_g)),
            CcKind::CubicLinux2626 => {
                Cc::CubicLinux(Box::new(CubicLinux::new(Kernel::Linux2626, tick_ps)))
            }
            CcKind::CubicLinux310 => {
                Cc::CubicLinux(Box::new(CubicLinux::new(Kernel::Linux310, tick_ps)))
            }
        }
    }
    /// For the Linux controllers, whether the kernel's cwnd-limited test counts GSO
    /// (3.10 with GSO; 2.6.26 as run in NSC, whose simulated NIC has none); None for the
    /// others, which use RFC 7661's test.
    pub fn linux_gso(&self) -> Option<bool> {
        match self {
            Cc::CubicLinux(c) => Some(c.kernel() == Kernel::Linux310),
            _ => None,
        }
    }
    /// DCTCP's α, for traces (0 for others).
    pub fn alpha(&self) -> f64 {
        match self {
            Cc::Dctcp(d) => d.alpha,
            _ => 0.0,
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            Cc::NewReno($c) => $e,
            Cc::Cubic($c) => $e,
            Cc::Dctcp($c) => $e,
            Cc::CubicLinux($c) => $e,
            Cc::Lia($c) => $e,
        }
    };
}

impl CongestionControl for Cc {
    #[inline]
    fn on_ack(&mut self, s: &mut CcState, acked: u64, now: Time, srtt_ps: f64, cwnd_limited: bool) {
        dispatch!(self, c => c.on_ack(s, acked, now, srtt_ps, cwnd_limited))
    }
    #[inline]
    fn on_ack_ecn(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64) {
        dispatch!(self, c => c.on_ack_ecn(acked, ece, snd_una, snd_nxt))
    }
    fn on_loss(&mut self, s: &mut CcState, now: Time) {
        dispatch!(self, c => c.on_loss(s, now))
    }
    fn on_ecn(&mut self, s: &mut CcState, now: Time) {
        dispatch!(self, c => c.on_ecn(s, now))
    }
    fn on_timeout(&mut self, s: &mut CcState, flight: u64) {
        dispatch!(self, c => c.on_timeout(s, flight))
    }
    #[inline]
    fn wants_samples(&self) -> bool {
        dispatch!(self, c => c.wants_samples())
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
        dispatch!(self, c => c.pkts_acked(s, acked, now, rtt_ps, snd_una, snd_nxt, open))
    }
    fn undo_cwnd(&self, s: &CcState, prior_cwnd: f64) -> f64 {
        dispatch!(self, c => c.undo_cwnd(s, prior_cwnd))
    }
}

/// Reno-style growth shared by NewReno and DCTCP: slow start with ABC (L = 2), then
/// congestion avoidance of one MSS per window.
#[inline]
pub(crate) fn reno_grow(s: &mut CcState, acked: u64) {
    if s.cwnd < s.ssthresh {
        s.cwnd += (acked as f64).min(2.0 * s.mss);
    } else {
        s.cwnd += s.mss * s.mss / s.cwnd * (acked as f64 / s.mss).max(1.0).min(2.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MSS: f64 = 1460.0;
    fn st(cwnd_pkts: f64, ssthresh_pkts: f64) -> CcState {
        CcState {
            cwnd: cwnd_pkts * MSS,
            ssthresh: ssthresh_pkts * MSS,
            mss: MSS,
        }
    }

    #[test]
    fn reaction_to_loss_table() {
        // (controller, cwnd before in packets, cwnd after a loss in packets)
        let cases = [
            (CcKind::NewReno, 100.0, 50.0),
            (CcKind::Cubic, 100.0, 70.0),
            (CcKind::Dctcp, 100.0, 50.0),
        ];
        for (k, before, after) in cases {
            let mut c = Cc::new(k, 1.0 / 16.0, 1_000_000_000);
            let mut s = st(before, 1e9);
            c.on_loss(&mut s, 0);
            assert!(
                (s.cwnd / MSS - after).abs() < 1e-6,
                "{k:?}: {}",
                s.cwnd / MSS
            );
            assert!((s.ssthresh - s.cwnd).abs() < 1e-6);
        }
    }

    #[test]
    fn reaction_to_timeout_is_one_mss() {
        // (controller, ssthresh after a timeout with 40 packets in flight)
        for (k, ss) in [
            (CcKind::NewReno, 20.0),
            (CcKind::Cubic, 28.0),
            (CcKind::Dctcp, 20.0),
        ] {
            let mut c = Cc::new(k, 1.0 / 16.0, 1_000_000_000);
            let mut s = st(40.0, 1e9);
            c.on_timeout(&mut s, (40.0 * MSS) as u64);
            assert_eq!(s.cwnd, MSS);
            assert!((s.ssthresh / MSS - ss).abs() < 1e-9, "{k:?}");
        }
    }

    #[test]
    fn slow_start_then_avoidance() {
        let mut c = Cc::new(CcKind::NewReno, 0.0, 1_000_000_000);
        let mut s = st(10.0, 20.0);
        for _ in 0..10 {
            c.on_ack(&mut s, MSS as u64, 0, 1e8, true);
        }
        assert!(
            (s.cwnd / MSS - 20.0).abs() < 1e-9,
            "doubles in one window of ACKs"
        );
        for _ in 0..20 {
            c.on_ack(&mut s, MSS as u64, 0, 1e8, true);
        }
        assert!(
            (s.cwnd / MSS - 21.0).abs() < 0.05,
            "one MSS per window: {}",
            s.cwnd / MSS
        );
        let before = s.cwnd;
        c.on_ack(&mut s, MSS as u64, 0, 1e8, false);
        assert_eq!(s.cwnd, before, "application-limited: no growth");
    }

    #[test]
    fn dctcp_alpha_and_cut_follow_the_marked_fraction() {
        // (fraction of marked bytes per window, α after many windows, cut factor 1 - α/2)
        for (frac, want_alpha) in [(0.0, 0.0), (0.5, 0.5), (1.0, 1.0)] {
            let mut d = Dctcp::new(1.0 / 16.0);
            let mut una = 0u64;
            for _w in 0..400 {
                let nxt = una + 100 * 1460;
                for i in 0..100u64 {
                    let ece = (i as f64) < frac * 100.0;
                    una += 1460;
                    d.on_ack_ecn(1460, ece, una, nxt + 1460);
                }
            }
            assert!(
                (d.alpha - want_alpha).abs() < 0.02,
                "frac {frac}: alpha {}",
                d.alpha
            );
            let mut s = st(100.0, 1e9);
            d.on_ecn(&mut s, 0);
            assert!((s.cwnd / MSS - 100.0 * (1.0 - d.alpha / 2.0)).abs() < 1e-6);
        }
    }

    #[test]
    fn newreno_and_cubic_halve_or_cut_on_ecn() {
        let mut c = Cc::new(CcKind::NewReno, 0.0, 1_000_000_000);
        let mut s = st(100.0, 1e9);
        c.on_ecn(&mut s, 0);
        assert!((s.cwnd / MSS - 50.0).abs() < 1e-6);
        let mut c = Cc::new(CcKind::Cubic, 0.0, 1_000_000_000);
        let mut s = st(100.0, 1e9);
        c.on_ecn(&mut s, 0);
        assert!((s.cwnd / MSS - 70.0).abs() < 1e-6);
    }

    #[test]
    fn cubic_regrows_to_wmax_after_k() {
        let mut c = Cubic::default();
        let mut s = st(100.0, 1e9);
        c.on_loss(&mut s, 0);
        // K = cbrt(Wmax (1-β) / C) = cbrt(100*0.3/0.4) = 4.217 s; at t = K the window is back at Wmax
        let mut t = 0u64;
        let step = 1_000_000_000u64; // 1 ms
        let rtt = 1e11; // 100 ms in ps: keeps the TCP-friendly region below the cubic curve
        while (t as f64) < 4.3e12 {
            t += step;
            c.on_ack(&mut s, 1460, t, rtt, true);
        }
        let w = s.cwnd / MSS;
        assert!((w - 100.0).abs() < 3.0, "cwnd at K: {w}");
    }
}
