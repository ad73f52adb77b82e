//! What the packets of chosen links are given to as they arrive at the far end: the pcap
//! writer (`measure.pcap_links`) and the flowlet counter (`measure.flowlet_links`). A run that
//! asks for neither has no tap, and its per-hop cost is one test of an `Option`.

use super::flowlets::FlowletCounter;
use super::pcap::PcapWriter;
use crate::error::Error;
use crate::net::packet::Packet;
use crate::net::topology::Graph;
use crate::scenario::Scenario;
use crate::units::{Time, PS_PER_NS};

const PCAP: u8 = 1;
const FLOWLETS: u8 = 2;

pub struct Tap {
    /// Per directed link: which of PCAP and FLOWLETS take its packets.
    links: Vec<u8>,
    /// Opened when the run starts (building, as `validate` does, writes nothing).
    pub pcap: Option<PcapWriter>,
    pub flowlets: Option<FlowletCounter>,
}

impl Tap {
    /// The tap the scenario asks for, if any (link names were checked by validation).
    pub fn build(sc: &Scenario, g: &Graph) -> Result<Option<Box<Tap>>, Error> {
        let m = &sc.measure;
        if m.pcap_links.is_empty() && m.flowlet_links.is_empty() {
            return Ok(None);
        }
        let mut links = vec![0u8; g.links.len()];
        for (field, specs, bit) in [
            ("measure.pcap_links", &m.pcap_links, PCAP),
            ("measure.flowlet_links", &m.flowlet_links, FLOWLETS),
        ] {
            for (i, spec) in specs.iter().enumerate() {
                for l in g.resolve_link(spec, &format!("{field}[{i}]"))? {
                    links[l as usize] |= bit;
                }
            }
        }
        let flowlets = (!m.flowlet_links.is_empty()).then(|| {
            let gaps = m.flowlet_gaps.iter().map(|d| d.0 / PS_PER_NS).collect();
            FlowletCounter::new(gaps, sc.warmup.0, sc.duration.0)
        });
        Ok(Some(Box::new(Tap {
            links,
            pcap: None,
            flowlets,
        })))
    }

    /// A packet that left `link`'s port at `t` (the end of its transmission).
    #[inline]
    pub fn packet(&mut self, link: usize, t: Time, p: &Packet) {
        let m = self.links[link];
        if m & PCAP != 0 {
            if let Some(w) = self.pcap.as_mut() {
                w.write(t, p);
            }
        }
        if m & FLOWLETS != 0 {
            if let Some(c) = self.flowlets.as_mut() {
                c.packet(t, p);
            }
        }
    }
}
