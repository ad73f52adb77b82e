//! LetFlow (Vanini et al., NSDI'17; SCHEMES.md §6, §12.3): flowlet switching with random
//! path choice and no congestion signal. Every switch that has a choice keeps a flowlet table
//! (one row per switch, [`super::flowlet`]); the first packet of a flowlet (after an idle gap
//! longer than T_fl) goes to a next hop drawn uniformly among the candidates from the switch's
//! own random stream, and the rest of the flowlet follows it. The paper's argument: flowlets
//! are "elastic", on a congested path they get shorter and so are drawn again more often,
//! which moves traffic away from it (docs/COMPANIONS.md: where that holds in this model and
//! where it does not).

use super::flowlet::{Expiry, FlowletTable, Lookup};
use super::{switch_rngs, Balancer, BuildCtx, LbView};
use crate::error::Error;
use crate::net::packet::Packet;
use crate::rng::Rng;
use crate::units::{Duration, PS_PER_US};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// LetFlow's parameters (`[scheme]` with `name = "letflow"`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LetFlowConfig {
    /// Flowlet timeout T_fl: a packet after an idle gap longer than this starts a new flowlet
    /// (default 500 µs: CONGA's value, §3.6, also used in published LetFlow comparisons).
    #[serde(default = "timeout")]
    pub flowlet_timeout: Duration,
    /// Flowlet table entries per switch, 1..=2^24 (CONGA's hardware: 64K).
    #[serde(default = "table_size")]
    pub flowlet_table_size: u32,
}

fn timeout() -> Duration {
    Duration(500 * PS_PER_US)
}
fn table_size() -> u32 {
    65_536
}

impl Default for LetFlowConfig {
    fn default() -> Self {
        LetFlowConfig {
            flowlet_timeout: timeout(),
            flowlet_table_size: table_size(),
        }
    }
}

impl LetFlowConfig {
    pub fn validate(&self, path: &str) -> Result<(), Error> {
        if self.flowlet_timeout.0 == 0 {
            return Err(Error::config(
                &format!("{path}.flowlet_timeout"),
                "must be > 0 (e.g. \"500us\")",
            ));
        }
        if !(1..=1 << 24).contains(&self.flowlet_table_size) {
            return Err(Error::config(
                &format!("{path}.flowlet_table_size"),
                format!(
                    "{} is not allowed; use 1..=16777216 (default 65536)",
                    self.flowlet_table_size
                ),
            ));
        }
        Ok(())
    }

    pub fn build(&self, ctx: &BuildCtx) -> LetFlow {
        let g = ctx.g;
        let switches = g.nodes.len() - g.n_hosts as usize;
        LetFlow {
            n_hosts: g.n_hosts,
            fl: FlowletTable::new(
                switches,
                self.flowlet_table_size as usize,
                self.flowlet_timeout.0,
                Expiry::Gap,
            ),
            rngs: switch_rngs(ctx),
        }
    }
}

pub struct LetFlow {
    /// Switches are the nodes from `n_hosts` on; row = node − n_hosts.
    n_hosts: u32,
    fl: FlowletTable,
    /// Per node (used for switches only).
    rngs: Vec<Rng>,
}

impl Balancer for LetFlow {
    fn choose(&mut self, v: &mut LbView, sw: u32, pkt: &mut Packet, cands: &[u32]) -> u32 {
        let slot = self.fl.slot((sw - self.n_hosts) as usize, pkt);
        let found = self.fl.lookup(slot, v.now, cands);
        let out = match found {
            Lookup::Active(port) => port,
            Lookup::New(_) => cands[self.rngs[sw as usize].below(cands.len() as u64) as usize],
        };
        self.fl.record(slot, v.now, out, found);
        out
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.fl.counters()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::testutil::Fx;
    use crate::lb::SchemeConfig;
    use crate::units::PS_PER_MS;

    const US: u64 = PS_PER_US;

    fn letflow(f: &Fx, seed: u64) -> LetFlow {
        LetFlowConfig::default().build(&f.ctx(seed))
    }

    #[test]
    fn new_flowlets_are_uniform_over_the_candidates() {
        // 4000 flows' first packets at L0 (4 uplinks) and at S1 (2 parallel links to L1).
        let mut f = Fx::new();
        let mut lf = letflow(&f, 3);
        for (sw, n) in [("L0", 4usize), ("S1", 2)] {
            let sw = f.node(sw);
            let cands = f.cands(sw, 2);
            assert_eq!(cands.len(), n);
            let mut hit = vec![0u32; n];
            for sport in 0..4000u16 {
                let out = lf.choose(&mut f.view(0), sw, &mut Fx::pkt(sport), &cands);
                hit[cands.iter().position(|&c| c == out).unwrap()] += 1;
            }
            let want = 4000.0 / n as f64;
            for &h in &hit {
                // ±5 standard deviations of a binomial count.
                let sd = (want * (1.0 - 1.0 / n as f64)).sqrt();
                assert!((h as f64 - want).abs() < 5.0 * sd, "{hit:?}");
            }
        }
        // One decision per flow and switch, but for flows whose hash collides with an
        // earlier flow's live entry (4000 flows in 65536 slots: ~120 per switch).
        let (_, n) = lf.counters()[0];
        assert!((7_500..=8_000).contains(&n), "{n}");
    }

    #[test]
    fn a_flowlet_keeps_its_port_and_a_gap_redraws_it() {
        // One flow at L0: (time µs, is a new flowlet). T_fl = 500 µs, gap rule.
        let steps = [
            (0u64, true),
            (400, false),
            (900, false),  // gap 500 = T_fl: same flowlet
            (1_401, true), // gap 501
            (1_500, false),
            (5_000, true),
        ];
        let mut f = Fx::new();
        let mut lf = letflow(&f, 1);
        let l0 = f.node("L0");
        let cands = f.cands(l0, 2);
        let mut port = u32::MAX;
        let mut new_count = 0;
        for (us, new) in steps {
            let out = lf.choose(&mut f.view(us * US), l0, &mut Fx::pkt(7), &cands);
            if !new {
                assert_eq!(out, port, "t={us}us keeps the flowlet's port");
            }
            new_count += new as u64;
            assert_eq!(lf.counters()[0], ("flowlets", new_count), "t={us}us");
            port = out;
        }
        // Re-drawn flowlets of one flow take every uplink (uniform draws, not sticky).
        let mut seen = vec![];
        for k in 10..210u64 {
            let out = lf.choose(&mut f.view(k * PS_PER_MS), l0, &mut Fx::pkt(7), &cands);
            if !seen.contains(&out) {
                seen.push(out);
            }
        }
        assert_eq!(seen.len(), 4);
    }

    #[test]
    fn switches_draw_from_their_own_streams() {
        // The draws at L0 do not depend on how many draws S1 made before.
        let mut f = Fx::new();
        let (l0, s1) = (f.node("L0"), f.node("S1"));
        let (c0, c1) = (f.cands(l0, 2), f.cands(s1, 2));
        let run = |f: &mut Fx, s1_first: u16| {
            let mut lf = letflow(f, 9);
            for sport in 0..s1_first {
                lf.choose(&mut f.view(0), s1, &mut Fx::pkt(sport), &c1);
            }
            (0..50u16)
                .map(|sport| lf.choose(&mut f.view(0), l0, &mut Fx::pkt(1000 + sport), &c0))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(&mut f, 0), run(&mut f, 37));
        // And another seed draws differently.
        let other = {
            let mut lf = letflow(&f, 10);
            (0..50u16)
                .map(|sport| lf.choose(&mut f.view(0), l0, &mut Fx::pkt(1000 + sport), &c0))
                .collect::<Vec<_>>()
        };
        assert_ne!(run(&mut f, 0), other);
    }

    #[test]
    fn parse_defaults_and_bad_input() {
        let s: SchemeConfig = serde_json::from_str(r#"{"name":"letflow"}"#).unwrap();
        s.validate("scheme").unwrap();
        assert_eq!(s.name(), "letflow");
        let SchemeConfig::LetFlow(c) = &s else {
            panic!("{s:?}")
        };
        assert_eq!(
            (c.flowlet_timeout.0, c.flowlet_table_size),
            (500 * US, 65_536)
        );
        let f = Fx::new();
        let lf = c.build(&f.ctx(1));
        let switches = f.g.nodes.len() - f.g.n_hosts as usize;
        assert_eq!((lf.fl.t_fl(), lf.fl.len()), (500 * US, switches * 65_536));
        let bad = [
            (
                r#"{"name":"letflow","flowlet_timeout":"0us"}"#,
                "flowlet_timeout",
            ),
            (
                r#"{"name":"letflow","flowlet_table_size":0}"#,
                "flowlet_table_size",
            ),
            (
                r#"{"name":"letflow","flowlet_table_size":16777217}"#,
                "flowlet_table_size",
            ),
        ];
        for (json, field) in bad {
            let s: SchemeConfig = serde_json::from_str(json).unwrap();
            let e = s.validate("scheme").unwrap_err().to_string();
            assert!(e.contains(field) && e.contains("scheme."), "{json}: {e}");
        }
        for json in [
            r#"{"name":"letflow","flowlet_timeout":"-5us"}"#,
            r#"{"name":"letflow","q_bits":3}"#,
        ] {
            assert!(
                serde_json::from_str::<SchemeConfig>(json).is_err(),
                "{json}"
            );
        }
    }
}
