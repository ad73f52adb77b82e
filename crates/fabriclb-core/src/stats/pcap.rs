//! A pcap (libpcap 2.4, Ethernet link type) writer for packet traces of chosen links.
//! Each record is the packet's headers as it left the port: Ethernet, IPv4 (10.x.y.z from the
//! host id; ECN bits from ECT/CE), TCP (ports, 32-bit sequence and ack numbers, SYN/ACK/ECE
//! flags); the payload is not stored (captured length = headers, original length = frame).

use crate::error::Error;
use crate::net::packet::{flags, Packet};
use crate::units::Time;
use std::io::{BufWriter, Write};

pub struct PcapWriter {
    out: BufWriter<std::fs::File>,
    path: String,
}

fn ip(host: u32) -> [u8; 4] {
    [10, (host >> 16) as u8, (host >> 8) as u8, host as u8]
}

fn checksum(b: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in b.chunks(2) {
        s += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
    }
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

impl PcapWriter {
    pub fn create(path: &str) -> Result<PcapWriter, Error> {
        let f = std::fs::File::create(path)
            .map_err(|e| Error::Io(format!("cannot create pcap file {path}: {e}")))?;
        let mut out = BufWriter::new(f);
        let mut h = vec![];
        h.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes()); // nanosecond-resolution magic
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&65535u32.to_le_bytes());
        h.extend_from_slice(&1u32.to_le_bytes()); // LINKTYPE_ETHERNET
        out.write_all(&h)
            .map_err(|e| Error::Io(format!("cannot write {path}: {e}")))?;
        Ok(PcapWriter {
            out,
            path: path.to_string(),
        })
    }

    pub fn write(&mut self, t: Time, p: &Packet) {
        let mut f = Vec::with_capacity(54);
        // Ethernet
        f.extend_from_slice(&[
            0x02,
            0,
            0,
            (p.dst >> 16) as u8,
            (p.dst >> 8) as u8,
            p.dst as u8,
        ]);
        f.extend_from_slice(&[
            0x02,
            0,
            0,
            (p.src >> 16) as u8,
            (p.src >> 8) as u8,
            p.src as u8,
        ]);
        f.extend_from_slice(&0x0800u16.to_be_bytes());
        // IPv4
        let ecn = if p.is(flags::CE) {
            3
        } else if p.is(flags::ECT) {
            2
        } else {
            0
        };
        let total_len = (40 + p.payload) as u16;
        let mut iph = vec![
            0x45,
            ecn,
            (total_len >> 8) as u8,
            total_len as u8,
            0,
            0,
            0x40,
            0,
            64,
            6,
            0,
            0,
        ];
        iph.extend_from_slice(&ip(p.src));
        iph.extend_from_slice(&ip(p.dst));
        let cs = checksum(&iph);
        iph[10] = (cs >> 8) as u8;
        iph[11] = cs as u8;
        f.extend_from_slice(&iph);
        // TCP
        f.extend_from_slice(&p.sport.to_be_bytes());
        f.extend_from_slice(&p.dport.to_be_bytes());
        f.extend_from_slice(&(p.seq as u32).to_be_bytes());
        f.extend_from_slice(&(p.ack as u32).to_be_bytes());
        let mut fl = 0u8;
        if p.is(flags::SYN) {
            fl |= 0x02;
        }
        if p.is(flags::ACK) || p.payload > 0 {
            fl |= 0x10;
        }
        if p.is(flags::ECE) {
            fl |= 0x40;
        }
        f.extend_from_slice(&[0x50, fl, 0xff, 0xff, 0, 0, 0, 0]);
        let secs = (t / 1_000_000_000_000) as u32;
        let nanos = ((t % 1_000_000_000_000) / 1000) as u32;
        let mut rec = Vec::with_capacity(16 + f.len());
        rec.extend_from_slice(&secs.to_le_bytes());
        rec.extend_from_slice(&nanos.to_le_bytes());
        rec.extend_from_slice(&(f.len() as u32).to_le_bytes());
        rec.extend_from_slice(&(p.size - 4).max(f.len() as u32).to_le_bytes());
        rec.extend_from_slice(&f);
        let _ = self.out.write_all(&rec);
    }

    pub fn finish(mut self) -> Result<(), Error> {
        self.out
            .flush()
            .map_err(|e| Error::Io(format!("cannot write {}: {e}", self.path)))
    }
}
