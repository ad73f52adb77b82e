//! ECMP: each switch hashes the 5-tuple (and the overlay path label, when present) with its
//! own salt and takes that next hop; all packets of a flow follow one path. Without the salt,
//! every tier makes the same choice and multi-tier fabrics polarise.
//!
//! Under an edge scheme the hosts encapsulate, and the fabric hashes the outer header alone
//! (source and destination host and the outer source port, `overlay.path`): one outer port,
//! one path, whatever the inner flows ([`Ecmp::outer`]; `host::paths` finds the ports).

use super::{ecmp_outer_pick, ecmp_pick, ecmp_salt, Balancer, BuildCtx, LbView};
use crate::net::packet::Packet;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EcmpConfig {}

pub struct Ecmp {
    pub(crate) salts: Vec<u64>,
    /// Hash the outer header only (host-encapsulated traffic).
    outer: bool,
}

impl EcmpConfig {
    pub fn build(&self, ctx: &BuildCtx) -> Ecmp {
        Ecmp {
            salts: salts(ctx),
            outer: false,
        }
    }
}

/// Every switch's ECMP salt.
pub(crate) fn salts(ctx: &BuildCtx) -> Vec<u64> {
    (0..ctx.g.nodes.len() as u32)
        .map(|s| ecmp_salt(s, ctx.ecmp_salt))
        .collect()
}

impl Ecmp {
    /// ECMP on the outer header of host-encapsulated packets (edge schemes).
    pub fn outer(ctx: &BuildCtx) -> Ecmp {
        Ecmp {
            salts: salts(ctx),
            outer: true,
        }
    }

    #[inline]
    fn pick(&self, sw: u32, pkt: &Packet, cands: &[u32]) -> u32 {
        let salt = self.salts[sw as usize];
        if self.outer {
            ecmp_outer_pick(pkt.src, pkt.dst, pkt.overlay.path, salt, cands)
        } else {
            ecmp_pick(pkt, salt, cands)
        }
    }
}

impl Balancer for Ecmp {
    #[inline]
    fn choose(&mut self, _v: &mut LbView, sw: u32, pkt: &mut Packet, cands: &[u32]) -> u32 {
        self.pick(sw, pkt, cands)
    }
    #[inline]
    fn predict(&self, sw: u32, pkt: &Packet, cands: &[u32]) -> Option<u32> {
        Some(self.pick(sw, pkt, cands))
    }
}
