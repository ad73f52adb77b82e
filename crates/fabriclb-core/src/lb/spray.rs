//! Per-packet random spraying (Dixit et al.): every packet picks a next hop uniformly at
//! random among the shortest-path next hops. Maximal balance, maximal reordering.

use super::{Balancer, BuildCtx, LbView};
use crate::net::packet::Packet;
use crate::rng::{stream, Rng};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SprayConfig {}

pub struct Spray {
    rng: Rng,
}

impl SprayConfig {
    pub fn build(&self, ctx: &BuildCtx) -> Spray {
        Spray {
            rng: Rng::new(ctx.seed, stream::SCHEME),
        }
    }
}

impl Balancer for Spray {
    #[inline]
    fn choose(&mut self, _v: &mut LbView, _sw: u32, _pkt: &mut Packet, cands: &[u32]) -> u32 {
        cands[self.rng.below(cands.len() as u64) as usize]
    }
}
