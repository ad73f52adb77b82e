//! Constant-rate flows without congestion control (UDP-like, `pattern = "cbr"`): the sender
//! puts a full-size packet on its NIC every `wire bytes × 8 / rate`, from the flow's start to its
//! stop, whatever happens to them; the receiver counts what arrives. Their packets are not ECN
//! capable, carry connection ids `CBR_CONN | flow` and pass no edge shim (they are pinned by
//! their source port, and the shims balance TCP).

use crate::net::packet::{frame_bytes, Packet, PREAMBLE_IFG};
use crate::units::{Time, PS_PER_S};

/// `Packet::conn` bit of a constant-rate flow's packets (the rest is the flow's index).
pub const CBR_CONN: u32 = 1 << 31;

#[derive(Clone, Debug)]
pub struct CbrFlow {
    pub src: u32,
    pub dst: u32,
    /// The UDP source port (also the outer port the fabric hashes, the packet being its own
    /// outer header).
    pub sport: u16,
    pub rate_bps: u64,
    pub start: Time,
    pub stop: Time,
    pub payload: u32,
    pub sent: u64,
    pub delivered: u64,
}

impl CbrFlow {
    pub fn new(
        src: u32,
        dst: u32,
        sport: u16,
        rate_bps: u64,
        start: Time,
        stop: Time,
        mss: u32,
    ) -> CbrFlow {
        CbrFlow {
            src,
            dst,
            sport,
            rate_bps,
            start,
            stop,
            payload: mss,
            sent: 0,
            delivered: 0,
        }
    }

    /// When packet `n` leaves: exactly n wire packets' time after the start (no drift).
    fn time_of(&self, n: u64) -> Time {
        let bits = (frame_bytes(self.payload) + PREAMBLE_IFG) as u128 * 8;
        self.start + (n as u128 * bits * PS_PER_S as u128 / self.rate_bps as u128) as Time
    }

    /// The next packet (flow index `id`), and when the one after it is due (`None`: stopped).
    pub fn emit(&mut self, id: u32) -> (Packet, Option<Time>) {
        let pk = Packet {
            src: self.src,
            dst: self.dst,
            sport: self.sport,
            dport: 9,
            size: frame_bytes(self.payload),
            payload: self.payload,
            conn: CBR_CONN | id,
            seq: self.sent * self.payload as u64,
            overlay: crate::net::packet::Overlay {
                path: self.sport,
                ..Default::default()
            },
            ..Default::default()
        };
        self.sent += 1;
        let next = self.time_of(self.sent);
        (pk, (next < self.stop).then_some(next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::PS_PER_MS;

    #[test]
    fn packets_leave_at_the_rate_on_the_wire_until_the_stop() {
        // (rate, start, stop, packets sent): 1538 wire bytes per 1460-byte packet.
        let cases = [
            (1_538_000_000u64, 0, PS_PER_MS, 125), // 1538 Mbps: one packet per 8 µs
            (500_000_000, 0, PS_PER_MS, 41),       // 24.608 µs apart: 0, ..., 40 (at 984 µs)
            (1_538_000_000, PS_PER_MS, 2 * PS_PER_MS, 125),
        ];
        for (rate, start, stop, want) in cases {
            let mut f = CbrFlow::new(0, 1, 7, rate, start, stop, 1460);
            let mut t = start;
            let mut n = 0;
            loop {
                let (pk, next) = f.emit(3);
                assert_eq!((pk.size, pk.payload, pk.conn), (1518, 1460, CBR_CONN | 3));
                assert_eq!((pk.sport, pk.overlay.path), (7, 7));
                assert!(t < stop);
                n += 1;
                match next {
                    Some(nt) => {
                        assert!(nt > t);
                        t = nt;
                    }
                    None => break,
                }
            }
            assert_eq!(n, want, "{rate} bps");
            // The average spacing is exact: n packets span n × wire time from the start.
            assert_eq!(
                f.time_of(n),
                start + (n as u128 * 1538 * 8 * PS_PER_S as u128 / rate as u128) as u64
            );
        }
    }
}
