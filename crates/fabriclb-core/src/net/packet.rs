//! Packets: a compact fixed-size record kept in an arena; events carry arena indices.
//!
//! Wire accounting (bytes that occupy a buffer are the Ethernet frame; bytes that occupy the
//! wire add preamble and inter-frame gap):
//! - frame = max(64, 14 Ethernet + 20 IP + 20 TCP + payload + 4 FCS) [+ 50 overlay]
//! - wire  = frame + 20 (8 preamble + 12 inter-frame gap)
//! - MSS   = MTU - 40
//! The overlay (VXLAN-like: outer Ethernet 14 + IP 20 + UDP 8 + VXLAN 8 = 50 bytes) carries the
//! CONGA fields and room for edge-scheme fields; it is counted only on links where it is
//! present (leaf-to-leaf for in-network schemes, host-to-host for edge schemes).
//! TCP options (SACK, timestamps) are not counted on the wire.
//!
//! The arena allocates nothing per packet once warmed up: freed slots are reused.

use crate::mem::{advise_huge_pages, HUGE_PAGE_BYTES};
use crate::units::Time;

pub type PktId = u32;
/// At most this many packets exist at once: an event names its packet in 30 bits
/// (`sim::PackedEv`). 2^30 packets would take 128 GiB.
pub const MAX_PACKETS: u32 = 1 << 30;

pub const ETH_HDR: u32 = 14;
pub const ETH_FCS: u32 = 4;
pub const IP_TCP_HDR: u32 = 40;
pub const MIN_FRAME: u32 = 64;
pub const PREAMBLE_IFG: u32 = 20;
pub const OVERLAY_HDR: u32 = 50;

/// Ethernet frame bytes of a TCP segment with `payload` bytes (without overlay).
#[inline]
pub fn frame_bytes(payload: u32) -> u32 {
    (ETH_HDR + IP_TCP_HDR + payload + ETH_FCS).max(MIN_FRAME)
}

pub mod flags {
    pub const SYN: u8 = 1;
    pub const ACK: u8 = 2;
    /// ECN-capable transport (ECT) set by the sender.
    pub const ECT: u8 = 4;
    /// Congestion Experienced, set by a switch.
    pub const CE: u8 = 8;
    /// ECN-Echo in an ACK.
    pub const ECE: u8 = 16;
    /// Carries the overlay header on the current link.
    pub const OVERLAY: u8 = 32;
    /// Gray failure: corrupted on the current link, dropped on arrival.
    pub const CORRUPT: u8 = 64;
    /// The ACK's first SACK block is a D-SACK (RFC 2883), its offsets possibly below `ack`.
    pub const DSACK: u8 = 128;
}

/// Overlay header fields (CONGA §3.1) and room for edge schemes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overlay {
    /// Source leaf's uplink index (CONGA LBTag).
    pub lbtag: u8,
    /// Path congestion, max of link metrics along the path (CONGA CE).
    pub ce: u8,
    /// Feedback: which LBTag `fb_metric` is for; `fb_valid` says whether there is feedback.
    pub fb_lbtag: u8,
    pub fb_metric: u8,
    pub fb_valid: bool,
    /// Source ToR (tunnel endpoint) index.
    pub src_tor: u16,
    /// Path label chosen at the source (edge schemes: overlay source port).
    pub path: u16,
    /// Edge-scheme header fields (EMAN's 12-byte header: sequence number and probe id,
    /// FB_Path_RRate, FB_Path_ID and FB_Probe_ID); Expeditus: the stamping switch and a
    /// handshake header's slot (`lb::clos`). Three words fit in the padding of the first cache
    /// line: the packet stays 128 bytes and its hot fields keep their offsets.
    pub aux: [u32; 3],
    pub aux_flags: u8,
    /// Expeditus: the stamped egress-queue occupancy (fits the record's padding: the overlay
    /// and the packet keep their sizes).
    pub stamp: u16,
}

/// A packet. `repr(C, align(64))` with the fields every switch hop reads or writes in the
/// first cache line and the TCP fields, read only at the endpoints, in the second: a hop costs
/// one cache line of packet state.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
pub struct Packet {
    // ---- first cache line: network header ----
    /// Source and destination hosts.
    pub src: u32,
    pub dst: u32,
    pub sport: u16,
    pub dport: u16,
    /// Frame bytes (what a buffer holds).
    pub size: u32,
    /// Epoch of the link the packet is on; a mismatch on arrival means the link failed under it.
    pub link_epoch: u32,
    /// Running hash of the ports taken, for counting path changes at the receiver.
    pub path_hash: u32,
    pub flags: u8,
    /// Switch hops so far (a guard against loops).
    pub hops: u8,
    pub overlay: Overlay,
    /// The link the packet is on, set when a port accepts it: the event of its arrival names
    /// only the packet (`sim::PackedEv`).
    pub link: u32,
    // ---- transport (the connection and payload end the first line; the rest is the
    // second, read only at the endpoints) ----
    /// Connection (TCP endpoint pair) index.
    pub conn: u32,
    /// TCP payload bytes.
    pub payload: u32,
    /// Sequence number of the first payload byte (data) — 64-bit, never wraps.
    pub seq: u64,
    /// Cumulative acknowledgement (ACKs).
    pub ack: u64,
    /// Send timestamp (data) or echoed timestamp (ACK), for RTT samples.
    pub ts: Time,
    /// SACK blocks as [start, end) offsets above `ack`; (0, 0) = empty.
    pub sack: [(u32, u32); 3],
    /// Sender-side send count of this segment (1 = first transmission), for reporting.
    pub tx_count: u8,
}

impl Packet {
    #[inline]
    pub fn is(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    /// Bytes the packet occupies on the wire (frame + preamble + gap).
    #[inline]
    pub fn wire_bytes(&self) -> u32 {
        self.size + PREAMBLE_IFG
    }
    /// The 5-tuple hash input (protocol is always TCP).
    #[inline]
    pub fn five_tuple(&self) -> u64 {
        ((self.src as u64) << 40)
            ^ ((self.dst as u64) << 16)
            ^ ((self.sport as u64) << 48)
            ^ (self.dport as u64)
    }
}

/// Slab of packets with a free list.
#[derive(Default)]
pub struct Arena {
    slots: Vec<Packet>,
    free: Vec<PktId>,
}

impl Arena {
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            i
        } else {
            if self.slots.len() == self.slots.capacity() {
                self.grow();
            }
            self.slots.push(p);
            (self.slots.len() - 1) as PktId
        }
    }
    /// Grow the slab into a fresh block of twice the slots (at first, 2 MiB of them), whose
    /// whole 2 MiB pages the kernel is asked to back with huge pages before the copy and the
    /// slots to come touch them (an allocation rarely starts on a 2 MiB boundary, so the first
    /// block gets none, and a later one all but its ends). At scale each packet-hop
    /// reads a random slot of a slab of tens of megabytes, and with 4 KiB pages most of those
    /// reads also miss the TLB: on LS2048 (200 k packets, 25.6 MB) the load of the packet
    /// three events ahead was the loop's costliest instruction, half of it gone on 2 MiB pages.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        assert!(
            self.slots.len() < MAX_PACKETS as usize,
            "more than 2^30 packets in flight at once"
        );
        let cap = (2 * self.slots.capacity())
            .max(HUGE_PAGE_BYTES / std::mem::size_of::<Packet>())
            .min(MAX_PACKETS as usize);
        let mut slots = Vec::with_capacity(cap);
        advise_huge_pages(
            slots.as_ptr() as *const u8,
            cap * std::mem::size_of::<Packet>(),
        );
        slots.extend_from_slice(&self.slots);
        self.slots = slots;
    }
    #[inline]
    pub fn free(&mut self, id: PktId) {
        self.free.push(id);
    }
    #[inline]
    pub fn get(&self, id: PktId) -> &Packet {
        &self.slots[id as usize]
    }
    #[inline]
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id as usize]
    }
    /// Address of a slot, for a prefetch hint (the slot need not be live).
    #[inline]
    pub fn slot_ptr(&self, id: PktId) -> *const Packet {
        self.slots.as_ptr().wrapping_add(id as usize)
    }
    /// Packets currently allocated (in flight somewhere).
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn frame_sizes() {
        assert_eq!(frame_bytes(1460), 1518);
        assert_eq!(frame_bytes(0), 64); // a bare ACK is padded to the minimum frame
        assert_eq!(frame_bytes(8960), 9018);
    }
    #[test]
    fn network_header_fits_one_cache_line() {
        assert_eq!(std::mem::size_of::<Packet>(), 128);
        assert_eq!(std::mem::align_of::<Packet>(), 64);
        let p = Packet::default();
        let base = &p as *const Packet as usize;
        let end_of_overlay = &p.overlay as *const Overlay as usize + std::mem::size_of::<Overlay>();
        assert!(end_of_overlay - base <= 64);
        // CONGA's fields, the edge schemes' three words and Expeditus' stamp: 24 bytes after
        // the 28-byte network header, 52 of the first line's 64.
        assert_eq!(std::mem::size_of::<Overlay>(), 24);
        assert_eq!(end_of_overlay - base, 52);
        // The link the packet is on, read at every arrival, and what the first prefetch of a
        // host's arrival reads (the connection), in the first line too.
        assert!(&p.link as *const u32 as usize + 4 - base <= 64);
        assert!(&p.conn as *const u32 as usize + 4 - base <= 64);
    }

    #[test]
    fn arena_reuses_slots() {
        let mut a = Arena::default();
        let x = a.alloc(Packet::default());
        let y = a.alloc(Packet::default());
        assert_eq!(a.live(), 2);
        a.free(x);
        assert_eq!(a.live(), 1);
        let z = a.alloc(Packet {
            conn: 7,
            ..Default::default()
        });
        assert_eq!(z, x);
        assert_eq!(a.get(z).conn, 7);
        assert_ne!(y, z);
    }

    #[test]
    fn arena_keeps_its_packets_when_it_grows() {
        // Past two growths (the first block holds 2 MiB of slots).
        let n = 5 * HUGE_PAGE_BYTES / std::mem::size_of::<Packet>() / 2;
        let mut a = Arena::default();
        for i in 0..n as u32 {
            let id = a.alloc(Packet {
                seq: i as u64,
                conn: !i,
                ..Default::default()
            });
            assert_eq!(id, i);
        }
        assert!(a.slots.capacity() >= n);
        assert_eq!(a.live(), n);
        for i in (0..n as u32).step_by(997) {
            assert_eq!((a.get(i).seq, a.get(i).conn), (i as u64, !i));
        }
    }
}
