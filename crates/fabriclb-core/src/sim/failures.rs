//! Link failures, recoveries, degradations and loss changes as scheduled by `[[failures]]`, and
//! the routing update that follows after the detection delay (the balancer and the edge shim
//! learn the new routes). Changes ports and routes only.

use super::Sim;
use crate::net::routing::Routes;
use crate::units::Time;

#[derive(Clone, Debug)]
pub(super) enum LinkAction {
    Down,
    Up,
    Rate(u64),
    Loss(f64),
}

#[derive(Clone, Debug)]
pub(super) struct LinkChange {
    pub(super) t: Time,
    pub(super) links: Vec<u32>,
    pub(super) action: LinkAction,
}

impl Sim {
    /// Routing converges on the links that are up; the scheme learns the new routes.
    pub(super) fn reroute(&mut self, now: Time) {
        self.routes = Routes::compute(&self.g, &self.link_up);
        let mut v = lb_view!(self, now);
        self.lb.on_routes(&mut v);
        if let Some(s) = self.hosts.shim.as_mut() {
            s.on_routes(&crate::host::shim::ShimView {
                g: &self.g,
                routes: &self.routes,
                salts: &self.salts,
                ports: &self.ports,
            });
        }
    }

    pub(super) fn apply_change(&mut self, idx: usize, now: Time) {
        let ch = self.changes[idx].clone();
        for &l in &ch.links {
            let li = l as usize;
            match ch.action {
                LinkAction::Down => {
                    if self.link_up[li] {
                        self.link_up[li] = false;
                        self.ports[li].fail(now);
                        // The flush frees the pool at once, and the port's pool entry, if
                        // any, goes stale: its next packet gets a new one (see `PoolRt`).
                        if !self.pools_rt.is_empty() {
                            let from = self.g.links[li].from as usize;
                            self.pool_sync(from, l);
                            self.pool_links[li].due = Time::MAX;
                        }
                        self.links_rt[li].epoch = self.ports[li].epoch;
                    }
                }
                LinkAction::Up => {
                    self.link_up[li] = true;
                    self.ports[li].recover();
                }
                LinkAction::Rate(r) => {
                    self.ports[li].rate_bps = if r == 0 { self.nominal_rate[li] } else { r }
                }
                LinkAction::Loss(p) => self.ports[li].set_loss(p),
            }
        }
        self.check_pools();
    }

    /// Every directed link a `[[failures]]` entry acts on, `random:N` resolved, by name in link
    /// order (the summary's `failure_links`: which links a random failure picked).
    pub(crate) fn failure_links(&self) -> Vec<String> {
        let mut ls: Vec<u32> = self
            .changes
            .iter()
            .flat_map(|c| c.links.iter().copied())
            .collect();
        ls.sort_unstable();
        ls.dedup();
        ls.into_iter().map(|l| self.g.link_name(l)).collect()
    }
}
