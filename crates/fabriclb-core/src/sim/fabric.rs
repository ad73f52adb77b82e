//! The fabric's datapath: offering a packet to an output port (with a switch's shared
//! buffer), its arrival at the far end, forwarding at a switch, drops. Touches ports, the
//! packet arena and the scheme's balancer; hands packets that reach a host to `endpoints`. May not
//! touch the host layer or TCP state.

use super::Sim;
use crate::lb::{hooks, OverlayMode};
use crate::net::packet::{flags, Packet, PktId, OVERLAY_HDR};
use crate::net::port::Enqueue;
use crate::units::Time;

/// Per link, what an arrival reads: the far-end node and the link's failure epoch (a copy of
/// the port's, updated when the link fails).
#[derive(Clone, Copy, Debug)]
pub(super) struct LinkRt {
    pub(super) to: u32,
    pub(super) epoch: u32,
}

/// The admission limit of a port with queue `q` (bytes, `cap` its own limit) on a switch whose
/// shared pool of `pool` bytes holds `used`: the dynamic threshold `alpha` × free space, and
/// the packet must also fit in what is left of the pool. Non-increasing in `used`.
#[inline]
fn shared_limit(pool: u64, alpha: f64, cap: u64, q: u64, used: u64) -> u64 {
    let free = pool.saturating_sub(used);
    ((alpha * free as f64) as u64).min(cap).min(q + free)
}

/// A switch's shared buffer (`switch.shared_buffer`): the bytes queued at its ports, kept
/// without summing every port on every packet. Each port with packets has one entry in `due`,
/// at or before its oldest packet's departure (other code may advance the port in between,
/// which only makes the entry early); a port is looked at again when its entry comes due and
/// the exact count is needed (`pool_limit` asks for it only when the count as last looked at
/// would refuse a packet).
#[derive(Default)]
pub(super) struct PoolRt {
    pub(super) used_bytes: u64,
    /// (time, link), earliest first: at most one live entry per port, the one at the time its
    /// `PoolLink::due` holds. A failure flushes the port and clears `due`, so that the port's
    /// next packet gets a new entry at its own departure (a packet after a quick recovery can
    /// leave before the flushed head would have); the old entry is skipped when it comes up.
    pub(super) due: std::collections::BinaryHeap<std::cmp::Reverse<(Time, u32)>>,
}

/// The pool's view of one port: its queue when last looked at, and its entry in `due`
/// (`Time::MAX`: none, the port was empty).
#[derive(Clone, Copy)]
pub(super) struct PoolLink {
    pub(super) seen_q_bytes: u64,
    pub(super) due: Time,
}

impl Default for PoolLink {
    fn default() -> Self {
        PoolLink {
            seen_q_bytes: 0,
            due: Time::MAX,
        }
    }
}

impl Sim {
    /// The output port of `p` at switch `sw` when the tables alone (and the scheme's
    /// [`Balancer::predict`]) determine it.
    #[inline]
    pub(super) fn predict_out(&self, sw: u32, p: &Packet) -> Option<u32> {
        self.predict_among(sw, p, self.routes.next_hops(sw, p.dst))
    }

    /// [`Sim::predict_out`] given the candidates, `sw`'s next hops toward `p`'s destination.
    #[inline]
    pub(super) fn predict_among(&self, sw: u32, p: &Packet, cands: &[u32]) -> Option<u32> {
        match cands.len() {
            0 => None,
            1 => Some(cands[0]),
            // With switch hooks, `on_arrival` runs before the choice and may change what it
            // reads: only a hop without a choice is predicted (and then exactly, hooks or not).
            _ if self.lb_hooks => None,
            _ => self.lb.predict(sw, p, cands),
        }
    }

    /// The bytes queued at switch `sw`'s ports at `now` (its shared pool's use). Only ports
    /// whose pool entry has come due are brought up to date: the others have sent nothing
    /// since the pool last looked at them.
    pub(super) fn pool_used(&mut self, sw: usize, now: Time) -> u64 {
        while let Some(&std::cmp::Reverse((t, link))) = self.pools_rt[sw].due.peek() {
            if t > now {
                break;
            }
            self.pools_rt[sw].due.pop();
            if self.pool_links[link as usize].due != t {
                // Left by a failure, which emptied the port (see `PoolRt`).
                continue;
            }
            self.ports[link as usize].advance(now);
            self.pool_sync(sw, link);
            let next = self.ports[link as usize].next_departure();
            self.pool_links[link as usize].due = next;
            if next != Time::MAX {
                self.pools_rt[sw].due.push(std::cmp::Reverse((next, link)));
            }
        }
        self.pools_rt[sw].used_bytes
    }

    /// Bring the pool's count up to port `link`'s queue as it stands.
    #[inline]
    pub(super) fn pool_sync(&mut self, sw: usize, link: u32) {
        let q = self.ports[link as usize].q_bytes;
        let pl = &mut self.pool_links[link as usize];
        self.pools_rt[sw].used_bytes = self.pools_rt[sw].used_bytes - pl.seen_q_bytes + q;
        pl.seen_q_bytes = q;
    }

    /// The admission limit of port `link` on switch `sw`, whose shared pool holds `pool` bytes,
    /// for a packet of `size` bytes. First with the pool's use as last counted (this port
    /// brought up to date, the others as the pool last looked at them): ports only lose bytes
    /// between looks, so that count is an upper bound, the limit from it a lower bound, and a
    /// packet it admits the exact limit admits too. Only a packet it would refuse needs the
    /// exact count, which brings every port whose departures have come due up to date (at once,
    /// however many packets each sent meanwhile).
    #[inline]
    fn pool_limit(
        &mut self,
        now: Time,
        sw: usize,
        link: u32,
        size: u32,
        pool: u64,
        alpha: f64,
    ) -> u64 {
        let q = self.ports[link as usize].queue_bytes(now);
        self.pool_sync(sw, link);
        let cap = self.ports[link as usize].cap_bytes;
        let limit = shared_limit(pool, alpha, cap, q, self.pools_rt[sw].used_bytes);
        if q + size as u64 <= limit {
            limit
        } else {
            shared_limit(pool, alpha, cap, q, self.pool_used(sw, now))
        }
    }

    /// The shared pools' counts must equal the sums of their ports' queues (checked while the
    /// run goes, and after every link change: the end of the run empties the ports, not the
    /// pools).
    pub(super) fn check_pools(&mut self) {
        if !self.check {
            return;
        }
        let now = self.q.now();
        for sw in 0..self.pools_rt.len() {
            if self.g.is_host(sw as u32) {
                continue;
            }
            let used = self.pool_used(sw, now);
            let ports = &self.g.nodes[sw].ports;
            let sum: u64 = ports
                .iter()
                .map(|&p| self.ports[p as usize].queue_bytes(now))
                .sum();
            if used != sum {
                let name = self.g.nodes[sw].name.clone();
                self.violate(format!(
                    "shared buffer of {name} at {now} ps: counted {used} bytes queued, its ports hold {sum}"
                ));
            }
        }
    }

    /// Offer packet `id` to output port `link` at `now`; the time its last bit leaves, unless
    /// the port dropped it.
    #[inline]
    pub(super) fn transmit(&mut self, now: Time, link: u32, id: PktId) -> Option<Time> {
        let li = link as usize;
        // The switch whose shared pool this port draws from, if any.
        let pool_sw = match self.shared {
            Some(_) if !self.g.is_host(self.g.links[li].from) => {
                Some(self.g.links[li].from as usize)
            }
            _ => None,
        };
        let limit = match (self.shared, pool_sw) {
            (Some((pool, alpha)), Some(sw)) => {
                let size = self.arena.get(id).size;
                self.pool_limit(now, sw, link, size, pool, alpha)
            }
            _ => self.ports[li].cap_bytes,
        };
        let (size, wire, ect) = {
            let p = self.arena.get(id);
            (p.size, p.wire_bytes(), p.is(flags::ECT))
        };
        let port = &mut self.ports[li];
        match port.offer(now, size, wire, ect, limit) {
            Enqueue::Sent { end, marked } => {
                if let Some(sw) = pool_sw {
                    let pl = &mut self.pool_links[li];
                    pl.seen_q_bytes += size as u64;
                    self.pools_rt[sw].used_bytes += size as u64;
                    if pl.due == Time::MAX {
                        // The port was empty when the pool last looked: `end` is its head.
                        pl.due = end;
                        self.pools_rt[sw].due.push(std::cmp::Reverse((end, link)));
                    }
                }
                let over =
                    (port.q_bytes > port.cap_bytes).then_some((port.q_bytes, port.cap_bytes));
                let (epoch, to_host) = (port.epoch, port.to_host);
                let corrupt = port.corrupts(|| self.loss_rng.f64());
                let arrive = end + port.delay_ps;
                if let Some((q, cap)) = over {
                    self.queue_over_capacity(link, q, cap);
                }
                let p = self.arena.get_mut(id);
                if marked {
                    p.flags |= flags::CE;
                }
                if corrupt {
                    p.flags |= flags::CORRUPT;
                }
                p.link_epoch = epoch;
                p.link = link;
                self.schedule_arrival(arrive, id, to_host);
                Some(end)
            }
            Enqueue::Dropped => {
                self.drop_packet(id);
                None
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn queue_over_capacity(&mut self, link: u32, q: u64, cap: u64) {
        self.violate(format!(
            "queue of link {} holds {q} bytes, above its capacity {cap}",
            self.g.link_name(link)
        ));
    }

    #[inline]
    pub(super) fn drop_packet(&mut self, id: PktId) {
        self.c.dropped += 1;
        self.arena.free(id);
    }

    #[inline]
    pub(super) fn arrive(&mut self, now: Time, id: PktId) {
        self.c.hops += 1;
        let (wire, epoch, corrupt, link) = {
            let p = self.arena.get(id);
            (p.wire_bytes(), p.link_epoch, p.is(flags::CORRUPT), p.link)
        };
        let li = link as usize;
        let LinkRt { to, epoch: current } = self.links_rt[li];
        if epoch != current {
            // The link failed while the packet was queued or on the wire.
            self.ports[li].wire_losses += 1;
            self.drop_packet(id);
            return;
        }
        if self.track_dre {
            let port = &mut self.ports[li];
            port.dre.add(now - port.delay_ps, wire, &self.dre);
        }
        self.windows.credit(li, now, wire);
        if let Some(tap) = self.tap.as_deref_mut() {
            tap.packet(li, now - self.ports[li].delay_ps, self.arena.get(id));
        }
        if corrupt {
            self.ports[li].wire_losses += 1;
            self.drop_packet(id);
            return;
        }
        if self.g.is_host(to) {
            self.deliver(now, id);
        } else {
            self.forward(now, to, link, id);
        }
    }

    #[inline]
    pub(super) fn forward(&mut self, now: Time, sw: u32, in_link: u32, id: PktId) {
        let dst;
        let src;
        {
            let p = self.arena.get_mut(id);
            p.hops += 1;
            if p.hops > 64 {
                dst = u32::MAX;
                src = 0;
            } else {
                dst = p.dst;
                src = p.src;
            }
        }
        if dst == u32::MAX {
            self.violate(format!(
                "a packet looped (over 64 switch hops) at {}",
                self.g.nodes[sw as usize].name
            ));
            self.drop_packet(id);
            return;
        }
        // (`lb_hooks` first: schemes without hooks load nothing more.)
        if self.lb_hooks && self.link_hooks[in_link as usize] & hooks::ARRIVAL != 0 {
            let mut v = lb_view!(self, now);
            self.lb
                .on_arrival(&mut v, sw, in_link, self.arena.get_mut(id));
        }
        let predicted = match self.predicted.take() {
            Some((p, l, out)) if p == id && l == in_link => Some(out),
            _ => None,
        };
        let out = if let Some(out) = predicted {
            debug_assert_eq!(Some(out), self.predict_out(sw, self.arena.get(id)));
            out
        } else {
            let cands = self.routes.next_hops(sw, dst);
            match cands.len() {
                0 => {
                    self.c.no_route_drops += 1;
                    self.drop_packet(id);
                    return;
                }
                1 => cands[0],
                _ => {
                    let mut v = lb_view!(self, now);
                    self.lb.choose(&mut v, sw, self.arena.get_mut(id), cands)
                }
            }
        };
        if self.overlay == OverlayMode::Leaf {
            // Read only here: forwarding takes the destination's ToR from `routes`.
            let dst_tor = self.g.host_tor[dst as usize];
            let p = self.arena.get_mut(id);
            if dst_tor == sw && p.is(flags::OVERLAY) {
                // Leaving the fabric: the destination leaf removes the overlay.
                p.flags &= !flags::OVERLAY;
                p.size -= OVERLAY_HDR;
            }
            if self.g.host_tor[src as usize] == sw && !p.is(flags::OVERLAY) && dst_tor != sw {
                p.flags |= flags::OVERLAY;
                p.size += OVERLAY_HDR;
            }
        }
        if self.lb_hooks && self.link_hooks[out as usize] & hooks::DEPARTURE != 0 {
            let mut v = lb_view!(self, now);
            self.lb
                .on_departure(&mut v, sw, out, self.arena.get_mut(id));
        }
        let p = self.arena.get_mut(id);
        p.path_hash = p.path_hash.wrapping_mul(0x9E37_79B1).wrapping_add(out + 1);
        let _ = self.transmit(now, out, id);
    }
}

#[cfg(test)]
mod tests {
    use super::shared_limit;
    use crate::rng::Rng;

    #[test]
    fn a_packet_the_last_count_admits_the_exact_count_admits() {
        // `pool_limit` skips the exact count when the count as last looked at (an upper bound
        // of the use) admits: that needs the limit to be non-increasing in the use, over
        // pools, thresholds (alpha below and above 1), caps and queues.
        let mut rng = Rng::new(7, 0);
        for _ in 0..20_000 {
            let pool = 1 + rng.below(20_000_000);
            let alpha = [0.125, 0.5, 1.0, 2.0, 8.0][rng.below(5) as usize];
            let cap = rng.below(2 * pool);
            let q = rng.below(cap + 1);
            let stale = rng.below(pool + 1);
            let exact = rng.below(stale + 1);
            let size = 64 + rng.below(9_000);
            let (lo, hi) = (
                shared_limit(pool, alpha, cap, q, stale),
                shared_limit(pool, alpha, cap, q, exact),
            );
            assert!(
                lo <= hi,
                "pool {pool} alpha {alpha} cap {cap} q {q}: {lo} > {hi}"
            );
            if q + size <= lo {
                assert!(q + size <= hi);
            }
        }
        // The threshold binds: a full pool admits nothing, an empty one up to alpha x pool.
        assert_eq!(shared_limit(1_000_000, 1.0, 2_000_000, 0, 1_000_000), 0);
        assert_eq!(shared_limit(1_000_000, 0.5, 2_000_000, 0, 0), 500_000);
        assert_eq!(shared_limit(1_000_000, 2.0, 300_000, 0, 0), 300_000);
    }
}
