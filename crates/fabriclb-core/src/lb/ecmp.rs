//! ECMP: each switch hashes the 5-tuple (and the overlay path label, when present) with its
//! own salt and takes that next hop; all packets of a flow follow one path. Without the salt,
//! every tier makes the same choice and multi-tier fabrics polarise.

use super::{ecmp_pick, ecmp_salt, Balancer, BuildCtx, LbView};
use crate::net::packet::Packet;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EcmpConfig {}

pub struct Ecmp {
    salts: Vec<u64>,
}

impl EcmpConfig {
    pub fn build(&self, ctx: &BuildCtx) -> Ecmp {
        Ecmp {
            salts: (0..ctx.g.nodes.len() as u32)
                .map(|s| ecmp_salt(s, ctx.ecmp_salt))
                .collect(),
        }
    }
}

impl Balancer for Ecmp {
    #[inline]
    fn choose(&mut self, _v: &mut LbView, sw: u32, pkt: &mut Packet, cands: &[u32]) -> u32 {
        ecmp_pick(pkt, self.salts[sw as usize], cands)
    }
    #[inline]
    fn predict(&self, sw: u32, pkt: &Packet, cands: &[u32]) -> Option<u32> {
        Some(ecmp_pick(pkt, self.salts[sw as usize], cands))
    }
}
