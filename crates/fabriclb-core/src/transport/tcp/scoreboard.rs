//! The sender's SACK scoreboard: what the receiver holds above snd_una, what is in flight and
//! what counts as lost, D-SACK reports, and the duplicate threshold that adapts to reordering.
//!
//! - Loss marking: RFC 6675 `IsLost` by bytes (a hole is lost when `reordering` segments' worth
//!   of SACKed bytes lie above it), or with FACK (Linux `tcp_update_scoreboard`) every hole
//!   below the highest SACK less `reordering` segments.
//! - Adaptive reordering (Linux `tcp_update_reordering`, LINUX_TCP.md §4.8): when data that
//!   was never retransmitted is SACKed or cumulatively ACKed below a SACK already received,
//!   the distance in segments is the reordering seen; the threshold rises to it (up to
//!   `max_reordering`), and FACK and Early Retransmit are switched off for the connection.
//! - D-SACK (RFC 2883): a block reporting a duplicate; when it covers a segment retransmitted
//!   in the current recovery episode, that retransmission was unnecessary (RFC 3708), which the
//!   undo counts.

use super::{Conn, TcpParams};
use crate::net::packet::{flags, Packet};
use crate::transport::ranges::insert_range;
use crate::units::Time;

impl Conn {
    pub(super) fn sacked_bytes(&self) -> u64 {
        self.sacked.iter().map(|r| r.1 - r.0).sum()
    }

    /// The highest SACKed sequence (snd_una when nothing is SACKed).
    pub(super) fn high_sacked(&self) -> u64 {
        self.sacked.last().map_or(self.snd_una, |r| r.1)
    }

    /// RFC 6675 pipe: bytes believed in the network.
    pub(super) fn pipe(&self) -> u64 {
        let out = self.snd_nxt.max(self.snd_una) - self.snd_una;
        if self.sacked.is_empty() {
            return out;
        }
        let sacked = self
            .sacked
            .iter()
            .filter(|r| r.0 < self.snd_nxt)
            .map(|r| r.1.min(self.snd_nxt) - r.0)
            .sum::<u64>();
        // Holes below the loss frontier that were not retransmitted yet are lost, not in flight.
        let frontier = self.loss_frontier();
        let mut lost = 0;
        let mut cur = self.snd_una.max(self.high_rxt);
        for &(a, b) in &self.sacked {
            if cur >= frontier {
                break;
            }
            if a > cur {
                lost += a.min(frontier) - cur;
            }
            cur = cur.max(b);
        }
        out.saturating_sub(sacked + lost)
    }

    /// Sequence below which an un-SACKed hole counts as lost: `reordering` segments' worth of
    /// SACKed bytes above it (RFC 6675 IsLost, by bytes); with FACK, everything more than
    /// `reordering` segments below the highest SACK (and at least the first segment).
    pub(super) fn loss_frontier(&self) -> u64 {
        let mss = self.w.mss as u64;
        let need = self.reordering as u64 * mss;
        let mut frontier = self.snd_una;
        let mut acc = 0;
        for &(a, b) in self.sacked.iter().rev() {
            acc += b - a;
            if acc >= need {
                frontier = a;
                break;
            }
        }
        if self.fack_on && !self.sacked.is_empty() {
            let fack = self
                .high_sacked()
                .saturating_sub(need)
                .max(self.snd_una + mss);
            frontier = frontier.max(fack.min(self.high_sacked()));
        }
        frontier
    }

    /// In SACK recovery: data sent after the last retransmission of the first hole has been
    /// SACKed (DupThresh segments' worth), yet the hole is still open: that retransmission was
    /// lost too. Re-arm it (once per such episode).
    pub(super) fn lost_retransmission(&mut self, p: &TcpParams) -> bool {
        let Some(&(_, top)) = self.sacked.last() else {
            return false;
        };
        if self.rtx_mark > self.snd_una
            && top > self.rtx_mark + self.reordering as u64 * p.mss as u64
            && self.high_rxt > self.snd_una
        {
            self.rtx_mark = self.snd_max;
            return true;
        }
        false
    }

    /// Next hole to retransmit in SACK recovery, as (seq, len).
    pub(super) fn next_hole(&self, mss: u64) -> Option<(u64, u64)> {
        let frontier = self.loss_frontier();
        let mut cur = self.snd_una.max(self.high_rxt);
        for &(a, b) in &self.sacked {
            if cur >= frontier {
                return None;
            }
            if a > cur {
                let end = a.min(cur + mss).min(frontier.max(cur + 1));
                return Some((cur, end - cur));
            }
            cur = cur.max(b);
        }
        None
    }

    /// Take an ACK's SACK blocks into the scoreboard (a D-SACK block is not one of them).
    pub(super) fn merge_sacks(&mut self, pk: &Packet, p: &TcpParams) {
        let skip = if pk.is(flags::DSACK) { 1 } else { 0 };
        if self.sacked.is_empty() && pk.sack[skip..].iter().all(|&(a, b)| b <= a) {
            // Nothing SACKed, before or now (most ACKs): nothing to merge or trim.
            return;
        }
        let adaptive = p.max_reordering > super::DUPTHRESH;
        let prior_high = self.high_sacked();
        for &(a, b) in &pk.sack[skip..] {
            if b <= a {
                continue;
            }
            let (s, e) = (pk.ack + a as u64, pk.ack + b as u64);
            if adaptive && s < prior_high {
                self.check_sack_reordering(s, e, prior_high, p);
            }
            insert_range(&mut self.sacked, s, e);
        }
        let una = self.snd_una;
        self.sacked.retain(|r| r.1 > una);
        if let Some(f) = self.sacked.first_mut() {
            f.0 = f.0.max(una);
        }
    }

    /// The first byte of [s, e) that is neither SACKed nor retransmitted, if any.
    fn first_fresh(&self, s: u64, e: u64) -> Option<u64> {
        let mut cur = s;
        loop {
            if cur >= e {
                return None;
            }
            let covered = self
                .sacked
                .iter()
                .chain(self.rexmit.iter())
                .filter(|r| r.0 <= cur && cur < r.1)
                .map(|r| r.1)
                .max();
            match covered {
                Some(end) => cur = end,
                None => return Some(cur),
            }
        }
    }

    /// A SACK block [s, e) below the highest SACK: if it reports never-retransmitted data for
    /// the first time, that data was reordered (Linux `tcp_sacktag_one`).
    fn check_sack_reordering(&mut self, s: u64, e: u64, prior_high: u64, p: &TcpParams) {
        if let Some(x) = self.first_fresh(s, e.min(prior_high)) {
            self.note_reordering(prior_high - x, p);
        }
    }

    /// A cumulative ACK to `ack`: never-SACKed, never-retransmitted data below a SACK that had
    /// already arrived was reordered (Linux `tcp_clean_rtx_queue`).
    pub(super) fn check_cumulative_reordering(&mut self, ack: u64, prior_high: u64, p: &TcpParams) {
        if let Some(x) = self.first_fresh(self.snd_una, ack.min(prior_high)) {
            self.note_reordering(prior_high - x, p);
        }
    }

    /// Reordering of `dist` bytes was seen (Linux `tcp_update_reordering`): a degree above the
    /// threshold raises it (whole segments, up to the maximum) and switches FACK off; any
    /// reordering switches Early Retransmit off, for this connection.
    pub(super) fn note_reordering(&mut self, dist: u64, p: &TcpParams) {
        let mss = p.mss as u64;
        let segs = dist.div_ceil(mss).min(u32::MAX as u64) as u32;
        if segs > self.reordering {
            self.reordering = segs.min(p.max_reordering);
            self.fack_on = false;
        }
        if segs > 0 {
            self.er_on = false;
        }
    }

    /// Record a retransmission of [seq, seq + len) (for D-SACK matching, reordering detection
    /// and RTT sample validity).
    pub(super) fn note_retransmission(&mut self, now: Time, seq: u64, len: u64) {
        insert_range(&mut self.rexmit, seq, seq + len);
        if let Some(u) = self.undo.as_mut() {
            u.retrans += 1;
            if u.stamp == super::NEVER {
                u.stamp = now;
            }
        }
    }

    /// An ACK carries a D-SACK block: returns true. A block over data retransmitted in the
    /// current episode shows one retransmission was not needed.
    pub(super) fn on_dsack(&mut self, pk: &Packet) -> bool {
        let (a, b) = pk.sack[0];
        let s = pk.ack.wrapping_add(a as i32 as i64 as u64);
        let e = pk.ack.wrapping_add(b as i32 as i64 as u64);
        if e <= s {
            return false;
        }
        let una = self.snd_una;
        if let Some(u) = self.undo.as_mut() {
            // Below snd_una the retransmissions are forgotten: count any D-SACK above the
            // undo marker, as Linux does ("dumb counting").
            let retransmitted = if e <= una {
                e > u.marker
            } else {
                self.rexmit.iter().any(|r| r.0 < e && s < r.1)
            };
            if retransmitted && u.retrans > 0 {
                u.retrans -= 1;
            }
        }
        true
    }
}
