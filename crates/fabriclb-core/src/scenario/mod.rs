//! Scenario: the one input of a run, in human units, and its validation.
//!
//! A scenario arrives as TOML text, JSON text or an already-parsed value tree (Python dicts
//! come as JSON). `--set path=value` overrides are applied to the value tree, then the tree is
//! deserialised with unknown fields rejected and every error located by its dotted path.
//! Range checks that serde cannot express live in [`Scenario::validate`]. After this layer,
//! nothing downstream re-checks user input.
//!
//! This layer may read the configuration types of other layers (topology, transport,
//! scheme, workload) and build the fabric's graph, to check link names and that failures leave
//! the hosts connected; it never builds the simulation or runs anything. (Checks that need the
//! traffic, such as host names in workloads, come with building: `api::check`.)

use crate::error::Error;
use crate::lb::SchemeConfig;
use crate::limits;
use crate::net::packet::{frame_bytes, OVERLAY_HDR, PREAMBLE_IFG};
use crate::net::topology::{Graph, TopologyConfig};
use crate::rng::{stream, Rng};
use crate::transport::TransportConfig;
use crate::units::{ser_ps, BufSize, Duration, Rate, Time, PS_PER_S};
use crate::workload::{FlowSpec, WorkloadConfig, UNBOUNDED};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub mod shape;
pub mod tagged;

/// A complete simulation scenario.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free-form name shown in reports.
    #[serde(default)]
    pub name: String,
    /// Master seed. Every random component draws from its own stream derived from
    /// (seed, component id), so the same scenario and seed give identical results.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated time during which flows arrive (e.g. "200ms").
    pub duration: Duration,
    /// Flows that start before this time are run but left out of the summaries; the ports'
    /// time averages (mean queue, utilization, queue distribution) and the goodput cover the
    /// measurement interval from here to `duration`.
    #[serde(default = "zero_dur")]
    pub warmup: Duration,
    /// After `duration`, the run continues without new arrivals for at most this long so that
    /// started flows can finish; flows still open then are reported as unfinished.
    #[serde(default = "zero_dur")]
    pub drain: Duration,
    /// The fabric.
    pub topology: TopologyConfig,
    /// Switch port defaults: buffers, ECN.
    #[serde(default)]
    pub switch: SwitchConfig,
    /// Routing: ECMP hashing and reaction to failures.
    #[serde(default)]
    pub routing: RoutingConfig,
    /// Host transport (TCP).
    #[serde(default)]
    pub transport: TransportConfig,
    /// The load-balancing scheme.
    #[serde(default)]
    pub scheme: SchemeConfig,
    /// Traffic sources; several may run at once.
    #[serde(default)]
    pub workload: Vec<WorkloadConfig>,
    /// Link failures, degradations, gray failures, recoveries and flaps.
    #[serde(default)]
    pub failures: Vec<FailureConfig>,
    /// What to measure beyond the always-on per-flow and per-port records.
    #[serde(default)]
    pub measure: MeasureConfig,
}

fn default_seed() -> u64 {
    1
}
fn zero_dur() -> Duration {
    Duration(0)
}

/// Output-queue settings shared by all switch ports (hosts' NICs are not switch ports).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// Per-port drop-tail limit (dedicated buffer), in full-size packets ("100pkt"), bytes, or
    /// bandwidth-delay products of each port ("3bdp", with `base_rtt`).
    #[serde(default = "default_buffer")]
    pub buffer: BufSize,
    /// ECN marking threshold K on the instantaneous queue (DCTCP style); "0pkt" disables marking.
    #[serde(default = "default_ecn")]
    pub ecn_threshold: BufSize,
    /// The round trip a port's bandwidth-delay product is counted over: a size in "bdp" is that
    /// many times the port's rate × `base_rtt` (the rate in force when the run starts, a
    /// degradation from time 0 included; later rate changes do not resize the port). Required
    /// when `buffer` or `ecn_threshold` is given in bdp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_rtt: Option<Duration>,
    /// Optional shared buffer: when set, all ports of a switch draw from this pool with the
    /// dynamic threshold of Choudhury and Hahne: a port may queue up to `shared_alpha` times
    /// the free pool (and never more than `buffer`, if that is smaller).
    #[serde(default)]
    pub shared_buffer: Option<BufSize>,
    /// Dynamic-threshold alpha for the shared buffer (> 0).
    #[serde(default = "default_alpha")]
    pub shared_alpha: f64,
    /// DRE decrement period T_dre (CONGA §3.2). With `dre_alpha` = 1/8 the default gives the
    /// paper's τ = T_dre/α = 160 µs.
    #[serde(default = "default_dre_period")]
    pub dre_period: Duration,
    /// DRE multiplicative decrease α, in (0, 1). 1/8 is a shift in hardware.
    #[serde(default = "default_dre_alpha")]
    pub dre_alpha: f64,
    /// Leaf-to-leaf encapsulation (its 50 bytes count on the wire): "scheme" = only when the
    /// scheme carries state in it (CONGA); "always" = every packet between two leaves, whatever
    /// the scheme, as in an overlay fabric (CONGA §2.5), so schemes compare at equal overhead.
    #[serde(default)]
    pub overlay: Overlay,
}

impl SwitchConfig {
    /// A port's bandwidth-delay product in bytes at `rate_bps` (0 without `base_rtt`).
    pub fn bdp_bytes(&self, rate_bps: u64) -> u64 {
        self.base_rtt.map_or(0, |d| {
            (rate_bps as u128 * d.0 as u128 / (8 * crate::units::PS_PER_S as u128)) as u64
        })
    }
}

/// When packets crossing the fabric are encapsulated (`switch.overlay`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Overlay {
    /// Only for schemes that carry state in the overlay header.
    #[default]
    Scheme,
    /// Every packet between two leaves (an overlay fabric).
    Always,
}
fn default_dre_period() -> Duration {
    Duration(20 * crate::units::PS_PER_US)
}
fn default_dre_alpha() -> f64 {
    0.125
}
fn default_buffer() -> BufSize {
    BufSize::Packets(100)
}
fn default_ecn() -> BufSize {
    BufSize::Packets(0)
}
fn default_alpha() -> f64 {
    1.0
}
impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer: default_buffer(),
            ecn_threshold: default_ecn(),
            base_rtt: None,
            shared_buffer: None,
            shared_alpha: default_alpha(),
            dre_period: default_dre_period(),
            dre_alpha: default_dre_alpha(),
            overlay: Overlay::Scheme,
        }
    }
}

/// Routing settings.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoutingConfig {
    /// Salt each switch's ECMP hash with its own id. Without it, every hop of a multi-tier
    /// fabric makes the same choice and ECMP polarises.
    #[serde(default = "yes")]
    pub ecmp_salt: bool,
    /// Time between a link state change and the routing tables following it ("0us" = at once).
    #[serde(default = "zero_dur")]
    pub detection_delay: Duration,
}
fn yes() -> bool {
    true
}
impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig {
            ecmp_salt: true,
            detection_delay: Duration(0),
        }
    }
}

/// What happens to a link (both directions unless `direction` says otherwise).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The link is down.
    Down,
    /// The link runs at `rate` instead of its nominal rate.
    Degrade,
    /// Each packet is lost with probability `loss` (gray failure).
    Lossy,
    /// The link alternates down/up with period `period` (down for the first half).
    Flap,
}

/// One link event. `link` names the link as "A-B" (e.g. "L1-S1") with an optional "#i" to pick
/// the i-th of several parallel links (default #0); "A-B#*" selects all parallel links.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailureConfig {
    /// The link, "A-B" or "A-B#i" or "A-B#*"; or "random:N" for N distinct fabric links chosen
    /// with the scenario seed (CONGA Fig. 16).
    pub link: String,
    pub kind: FailureKind,
    /// When it starts (default: from the beginning).
    #[serde(default = "zero_dur")]
    pub at: Duration,
    /// When it ends and the link recovers (default: never).
    #[serde(default)]
    pub until: Option<Duration>,
    /// New rate, for `degrade`.
    #[serde(default)]
    pub rate: Option<Rate>,
    /// Loss probability in (0, 1], for `lossy`.
    #[serde(default)]
    pub loss: Option<f64>,
    /// Flap period, for `flap`.
    #[serde(default)]
    pub period: Option<Duration>,
    /// "both" (default), "forward" (A to B only) or "reverse".
    #[serde(default = "both")]
    pub direction: String,
}
fn both() -> String {
    "both".into()
}

/// Optional measurements.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeasureConfig {
    /// Width of the throughput / imbalance windows.
    #[serde(default = "default_window")]
    pub window: Duration,
    /// Ports whose time-weighted queue-length distribution is recorded, as "A->B" or
    /// "A->B#i" (e.g. "S1->L1"); "fabric" selects every switch-to-switch port.
    #[serde(default)]
    pub queue_ports: Vec<String>,
    /// Connection ids whose cwnd / RTT / rate are traced.
    #[serde(default)]
    pub trace_flows: Vec<u32>,
    /// Sampling interval of the flow traces.
    #[serde(default = "default_trace_interval")]
    pub trace_interval: Duration,
    /// Also trace each traced flow's rate on every path it uses: one row per (sample, flow,
    /// path) with `path` named by its switches ("L0>S0>L2") and `rate_gbps` the payload of the
    /// flow's data arriving over that path (retransmissions included). TCP flows only.
    #[serde(default)]
    pub trace_paths: bool,
    /// Write a pcap packet trace of these links ("A->B") to `pcap_file`.
    #[serde(default)]
    pub pcap_links: Vec<String>,
    /// Path of the pcap file (relative to the working directory).
    #[serde(default)]
    pub pcap_file: Option<String>,
    /// Count the flowlets of the packets that cross these links ("A->B", "A->B#*") and leave
    /// their port between `warmup` and `duration`: flowlet_sizes.csv and
    /// flowlet_concurrency.csv, as `fabriclb flowlets` counts a capture (docs/FLOWLETS.md).
    #[serde(default)]
    pub flowlet_links: Vec<String>,
    /// The flowlet inactivity gaps of that count: 1 to 8 distinct whole nanoseconds.
    #[serde(default = "default_flowlet_gaps")]
    pub flowlet_gaps: Vec<Duration>,
    /// Check invariants (packet conservation, queue <= capacity, no event in the past) as
    /// the run goes, failing the run on a violation. Cheap; on by default.
    #[serde(default = "yes")]
    pub check_invariants: bool,
}
fn default_window() -> Duration {
    Duration(10 * crate::units::PS_PER_MS)
}
fn default_trace_interval() -> Duration {
    Duration(100 * crate::units::PS_PER_US)
}
/// CONGA Fig. 5's gaps.
fn default_flowlet_gaps() -> Vec<Duration> {
    use crate::units::{PS_PER_MS, PS_PER_US};
    vec![
        Duration(250 * PS_PER_MS),
        Duration(500 * PS_PER_US),
        Duration(100 * PS_PER_US),
    ]
}
impl Default for MeasureConfig {
    fn default() -> Self {
        MeasureConfig {
            window: default_window(),
            queue_ports: vec![],
            trace_flows: vec![],
            trace_interval: default_trace_interval(),
            trace_paths: false,
            pcap_links: vec![],
            pcap_file: None,
            flowlet_links: vec![],
            flowlet_gaps: default_flowlet_gaps(),
            check_invariants: true,
        }
    }
}

/// Which format a scenario text is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Toml,
    Json,
}

impl Scenario {
    /// Parse a scenario from text, apply `--set path=value` overrides, deserialise and
    /// validate. Every error names the field and what is allowed.
    pub fn load(
        text: &str,
        format: Format,
        overrides: &[(String, String)],
    ) -> Result<Scenario, Error> {
        Self::load_in(text, format, overrides, None)
    }

    /// As [`Scenario::load`], for a scenario read from a file in `base_dir`: relative flow-size
    /// CDF paths (`workload[i].cdf`) are taken relative to that folder and made absolute, so the
    /// validated scenario runs the same from any working directory.
    pub fn load_in(
        text: &str,
        format: Format,
        overrides: &[(String, String)],
        base_dir: Option<&std::path::Path>,
    ) -> Result<Scenario, Error> {
        if text.trim().is_empty() {
            return Err(Error::config(
                "",
                "the scenario is empty; it needs at least `duration`, `topology` and a `workload`",
            ));
        }
        let mut tree: serde_json::Value = match format {
            Format::Toml => {
                let v: toml::Value = toml::from_str(text)
                    .map_err(|e| Error::Syntax(format!("TOML syntax error: {e}")))?;
                shape::toml_to_json(v, "")?
            }
            Format::Json => {
                serde_json::from_str::<shape::StrictJson>(text)
                    .map_err(|e| Error::Syntax(format!("JSON syntax error: {e}")))?
                    .0
            }
        };
        for (path, value) in overrides {
            apply_override(&mut tree, path, value)?;
        }
        if let (Some(dir), Some(ws)) = (
            base_dir,
            tree.get_mut("workload").and_then(|w| w.as_array_mut()),
        ) {
            for w in ws {
                if let Some(serde_json::Value::String(cdf)) = w.get_mut("cdf") {
                    let full = dir.join(cdf.as_str());
                    let relative = std::path::Path::new(cdf.as_str()).is_relative();
                    if !crate::workload::cdf::builtin_names().contains(&cdf.as_str())
                        && relative
                        && full.exists()
                    {
                        *cdf = full.to_string_lossy().into_owned();
                    }
                }
            }
        }
        Self::from_value(tree)
    }

    /// Deserialise and validate a value tree.
    pub fn from_value(mut tree: serde_json::Value) -> Result<Scenario, Error> {
        crate::transport::profile::apply(&mut tree)?;
        let schema = serde_json::to_value(schemars::schema_for!(Scenario)).expect("schema");
        shape::ShapeCheck::new(schema).check(&tree)?;
        let sc: Scenario = serde_path_to_error::deserialize(tree).map_err(|e| {
            let outer = e.path().to_string();
            let (path, msg) = tagged::split_path(
                if outer == "." { "" } else { &outer },
                &e.inner().to_string(),
            );
            Error::config(&path, shape::humanize(&msg))
        })?;
        sc.validate()?;
        Ok(sc)
    }

    /// Canonical JSON: sorted keys, units in canonical form. Used for cache keys and metadata.
    pub fn canonical_json(&self) -> String {
        let v = serde_json::to_value(self).expect("scenario serialises");
        serde_json::to_string(&sort_keys(v)).expect("json")
    }

    /// What the scenario asks for that is allowed but probably not meant (e.g. a transport
    /// field that contradicts its kernel profile). Follows from the scenario alone, so the
    /// canonical form gives the same warnings.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = self.transport.warnings("transport");
        if self.scheme.chooses_on_handshake() {
            for (i, wl) in self.workload.iter().enumerate() {
                if wl.persistent() {
                    w.push(format!(
                        "workload[{i}]: its flows run on pre-established connections, without a \
                         handshake; scheme \"{}\" chooses paths on the handshake, so it routes \
                         them by ECMP",
                        self.scheme.name()
                    ));
                }
            }
        }
        w
    }

    /// End of the run: `duration` + `drain` (validated to fit, see `limits::MAX_DURATION_S`).
    pub fn end_ps(&self) -> Time {
        self.duration.0 + self.drain.0
    }

    /// Range checks that need more than one field or that serde cannot express, and the
    /// limits (`crate::limits`), all before anything large is built.
    pub fn validate(&self) -> Result<(), Error> {
        if self.duration.0 == 0 {
            return Err(Error::config("duration", "must be > 0 (e.g. \"100ms\")"));
        }
        if self.warmup.0 >= self.duration.0 {
            return Err(Error::config(
                "warmup",
                format!("must be shorter than duration ({})", self.duration),
            ));
        }
        limits::check(
            "drain",
            "the simulated time (duration + drain), in seconds,",
            (self.duration.0 as u128 + self.drain.0 as u128) / PS_PER_S as u128,
            limits::MAX_DURATION_S,
        )?;
        if !(self.switch.shared_alpha > 0.0 && self.switch.shared_alpha.is_finite()) {
            return Err(Error::config(
                "switch.shared_alpha",
                "must be a finite number > 0",
            ));
        }
        if !(self.switch.dre_alpha > 0.0 && self.switch.dre_alpha < 1.0) {
            return Err(Error::config("switch.dre_alpha", "must be in (0, 1)"));
        }
        if self.switch.dre_period.0 == 0 {
            return Err(Error::config("switch.dre_period", "must be > 0"));
        }
        if self.measure.window.0 == 0 {
            return Err(Error::config("measure.window", "must be > 0"));
        }
        if self.measure.trace_interval.0 == 0 {
            return Err(Error::config("measure.trace_interval", "must be > 0"));
        }
        if self.measure.trace_paths && self.measure.trace_flows.is_empty() {
            return Err(Error::config(
                "measure.trace_paths",
                "is set but measure.trace_flows is empty, so nothing would be traced; name the flows (e.g. trace_flows = [0, 1])",
            ));
        }
        if !self.measure.pcap_links.is_empty() && self.measure.pcap_file.is_none() {
            return Err(Error::config(
                "measure.pcap_file",
                "is required when measure.pcap_links is set",
            ));
        }
        if self.measure.pcap_file.is_some() && self.measure.pcap_links.is_empty() {
            return Err(Error::config(
                "measure.pcap_file",
                "is set but measure.pcap_links is empty, so no trace would be written; name the links (e.g. [\"L0->S0\"])",
            ));
        }
        if self
            .measure
            .pcap_file
            .as_deref()
            .is_some_and(|f| f.trim().is_empty())
        {
            return Err(Error::config(
                "measure.pcap_file",
                "is empty; give a file path",
            ));
        }
        let gaps = &self.measure.flowlet_gaps;
        if gaps.is_empty() || gaps.len() > crate::stats::flowlets::MAX_GAPS {
            return Err(Error::config(
                "measure.flowlet_gaps",
                format!("has {} gaps; give 1 to 8", gaps.len()),
            ));
        }
        for (i, g) in gaps.iter().enumerate() {
            if g.0 == 0 || g.0 % crate::units::PS_PER_NS != 0 {
                return Err(Error::config(
                    &format!("measure.flowlet_gaps[{i}]"),
                    format!("is {g}; a gap is a whole number of nanoseconds above 0 (a capture's resolution), e.g. \"500us\""),
                ));
            }
            if gaps[..i].contains(g) {
                return Err(Error::config(
                    &format!("measure.flowlet_gaps[{i}]"),
                    format!("{g} is given twice"),
                ));
            }
        }
        self.topology.validate("topology")?;
        // Build the fabric once so that a disconnected topology or a link name that does not
        // exist is reported by validation, not only by a run (linear in the links).
        let g = self.topology.build()?;
        let leaves: Vec<u32> = {
            let mut t = g.host_tor.clone();
            t.sort_unstable();
            t.dedup();
            t
        };
        let uplinks = |t: u32| {
            g.nodes[t as usize]
                .ports
                .iter()
                .filter(|&&l| !g.is_host(g.links[l as usize].to))
                .count() as u128
        };
        let max_uplinks = leaves.iter().map(|&t| uplinks(t)).max().unwrap_or(0);
        limits::check(
            "topology",
            "the uplinks of one leaf",
            max_uplinks,
            limits::MAX_UPLINKS_PER_LEAF,
        )?;
        let failure_links = self.failure_links(&g)?;
        self.transport.validate("transport")?;
        let sw = &self.switch;
        if sw.base_rtt.is_some_and(|d| d.0 == 0) {
            return Err(Error::config(
                "switch.base_rtt",
                "must be > 0 (e.g. \"160us\")",
            ));
        }
        for (field, size) in [
            ("switch.buffer", sw.buffer),
            ("switch.ecn_threshold", sw.ecn_threshold),
        ] {
            if size.is_bdp() && sw.base_rtt.is_none() {
                return Err(Error::config(
                    field,
                    format!("{size} needs switch.base_rtt, the round trip a port's bandwidth-delay product is counted over (e.g. base_rtt = \"160us\")"),
                ));
            }
        }
        if let Some(b) = sw.shared_buffer.filter(|b| b.is_bdp()) {
            return Err(Error::config(
                "switch.shared_buffer",
                format!("{b}: a shared pool has no rate of its own; give it in bytes or pkt"),
            ));
        }
        // A port drops a packet that does not fit whole, so a buffer must hold the largest
        // frame a switch forwards: a full-size segment with the overlay header.
        let frame = frame_bytes(self.transport.params().mss) as u64;
        let largest = frame + OVERLAY_HDR as u64 + self.scheme.host_encap_bytes() as u64;
        let switch_rates: Vec<u64> = self
            .start_rates(&g, &failure_links)
            .into_iter()
            .enumerate()
            .filter(|&(l, _)| !g.is_host(g.links[l].from))
            .map(|(_, r)| r)
            .collect();
        let slowest = switch_rates.iter().copied().min().unwrap_or(0);
        let fastest = switch_rates.iter().copied().max().unwrap_or(0);
        for (field, size) in [
            ("switch.buffer", Some(sw.buffer)),
            ("switch.shared_buffer", sw.shared_buffer),
        ] {
            if let Some(b) = size.filter(|b| b.bytes(frame, sw.bdp_bytes(slowest)) < largest) {
                return Err(Error::config(
                    field,
                    format!(
                        "{b} cannot hold one full-size packet{}: every packet would be dropped; \
                         allowed: at least {largest} B (a {frame}-byte frame at MTU {} plus the \
                         {OVERLAY_HDR}-byte overlay{}), or 2pkt",
                        if b.is_bdp() {
                            format!(" at the slowest switch port ({})", Rate(slowest))
                        } else {
                            String::new()
                        },
                        self.transport.mtu,
                        match self.scheme.host_encap_bytes() {
                            0 => String::new(),
                            e => format!(" and the scheme's {e}-byte tunnel"),
                        }
                    ),
                ));
            }
        }
        let mut bins = 0u128;
        let cap = self.switch.buffer.bytes(frame, sw.bdp_bytes(fastest));
        for (i, q) in self.measure.queue_ports.iter().enumerate() {
            let ports = if q == "fabric" {
                g.links.len() as u128 - 2 * g.n_hosts as u128
            } else {
                g.resolve_link(q, &format!("measure.queue_ports[{i}]"))?
                    .len() as u128
            };
            // As `Sim::build` sizes the histograms.
            bins += ports * (cap.min(1 << 30) / frame + 2) as u128;
        }
        limits::check(
            "measure.queue_ports",
            "the queue histogram bins (rows of queues.csv)",
            bins,
            limits::MAX_QUEUE_BINS,
        )?;
        for (i, q) in self.measure.pcap_links.iter().enumerate() {
            g.resolve_link(q, &format!("measure.pcap_links[{i}]"))?;
        }
        for (i, q) in self.measure.flowlet_links.iter().enumerate() {
            g.resolve_link(q, &format!("measure.flowlet_links[{i}]"))?;
        }
        self.scheme.validate("scheme")?;
        self.scheme.check_topology(&self.topology)?;
        if let SchemeConfig::Mptcp(m) = &self.scheme {
            if let Some(i) = self.workload.iter().position(|w| w.has_stop()) {
                return Err(Error::config(
                    &format!("workload[{i}]"),
                    "a stop time is not supported with the mptcp scheme (its flows end by size); remove `stop` or use a TCP scheme",
                ));
            }
            for (i, &w) in m.workloads.iter().flatten().enumerate() {
                if w as usize >= self.workload.len() {
                    return Err(Error::config(
                        &format!("scheme.workloads[{i}]"),
                        format!(
                            "there is no workload {w}; allowed: 0..={} (the [[workload]] entries, from 0)",
                            self.workload.len().saturating_sub(1)
                        ),
                    ));
                }
            }
        }
        if self.scheme.needs_ecn() {
            // FlowBender, Clove and Hermes react to ECN marks: without them they would be
            // another scheme (ECMP, edge flowlets, RTT alone), silently.
            let name = self.scheme.name();
            if !self.transport.params().ecn {
                return Err(Error::config(
                    "transport.ecn",
                    format!("is off, but scheme {name} reacts to ECN marks; allowed: transport.ecn = true (or cc = \"dctcp\")"),
                ));
            }
            if self
                .switch
                .ecn_threshold
                .bytes(frame, sw.bdp_bytes(slowest))
                == 0
            {
                return Err(Error::config(
                    "switch.ecn_threshold",
                    format!("is 0 (no marking), but scheme {name} reacts to ECN marks; allowed: a threshold > 0 (e.g. \"65pkt\")"),
                ));
            }
        }
        limits::check(
            "scheme",
            "the scheme's tables (entries)",
            self.scheme.table_entries(
                leaves.len() as u128,
                (g.nodes.len() - g.n_hosts as usize) as u128,
                max_uplinks,
            ),
            limits::MAX_SCHEME_TABLE_ENTRIES,
        )?;
        let mut jobs = 0;
        for (i, w) in self.workload.iter().enumerate() {
            w.validate(&format!("workload[{i}]"))?;
            if let Some(c) = w.job() {
                jobs += 1;
                if jobs > 1 {
                    return Err(Error::config(
                        &format!("workload[{i}].pattern"),
                        "a scenario runs at most one hdfs job; merge the entries (more files)",
                    ));
                }
                // What needs the fabric: the DataNodes, the replication, the start.
                c.plan(&format!("workload[{i}]"), &g, i as u16, self.duration.0)?;
            }
        }
        let end = self.end_ps();
        // Windows: one row per port and leaf per window; and a window holds at least one
        // full-size packet of the slowest link, so that a packet's bytes, credited to the
        // windows its transmission crosses, span at most two of them.
        let n_windows = (end as u128).div_ceil(self.measure.window.0 as u128) + 1;
        limits::check(
            "measure.window",
            "the rows of windows.csv (windows × (ports + leaves))",
            n_windows * (g.links.len() + leaves.len()) as u128,
            limits::MAX_WINDOW_ROWS,
        )?;
        let slowest = g.links.iter().map(|l| l.rate_bps).min().unwrap_or(1);
        let pkt_ps = ser_ps(largest + PREAMBLE_IFG as u64, slowest);
        if self.measure.window.0 < pkt_ps {
            return Err(Error::config(
                "measure.window",
                format!(
                    "{} is shorter than one full-size packet on the slowest link ({} at {}); allowed: at least {}",
                    self.measure.window,
                    Duration(pkt_ps),
                    Rate(slowest),
                    Duration(pkt_ps)
                ),
            ));
        }
        if !self.measure.trace_flows.is_empty() {
            limits::check(
                "measure.trace_interval",
                "the rows of traces.csv (samples × traced flows)",
                (end / self.measure.trace_interval.0) as u128
                    * self.measure.trace_flows.len() as u128,
                limits::MAX_TRACE_ROWS,
            )?;
        }
        let mut changes = 0u128;
        for (i, (f, links)) in self.failures.iter().zip(&failure_links).enumerate() {
            let p = format!("failures[{i}]");
            if f.at.0 >= end {
                return Err(Error::config(
                    &format!("{p}.at"),
                    format!(
                        "{} is at or after the end of the run ({}): the failure would never happen",
                        f.at,
                        Duration(end)
                    ),
                ));
            }
            if let Some(u) = f.until {
                if u.0 <= f.at.0 {
                    return Err(Error::config(
                        &format!("{p}.until"),
                        "must be later than `at`",
                    ));
                }
            }
            // Each kind reads its own field and no other: a stray one is a mistake.
            let kind = serde_json::to_value(&f.kind).expect("kind");
            for (field, given, owner) in [
                ("rate", f.rate.is_some(), FailureKind::Degrade),
                ("loss", f.loss.is_some(), FailureKind::Lossy),
                ("period", f.period.is_some(), FailureKind::Flap),
            ] {
                if given && f.kind != owner {
                    let want = serde_json::to_value(&owner).expect("kind");
                    return Err(Error::config(
                        &format!("{p}.{field}"),
                        format!("applies only to kind = {want}, not to kind = {kind}; remove it"),
                    ));
                }
            }
            match f.kind {
                FailureKind::Degrade => match f.rate {
                    Some(r) if r.0 > 0 => {
                        for &l in links {
                            let nominal = g.links[l as usize].rate_bps;
                            if r.0 > nominal {
                                return Err(Error::config(
                                    &format!("{p}.rate"),
                                    format!(
                                        "{r} is above the nominal rate of {} ({}); a degrade slows a link down",
                                        g.link_name(l),
                                        Rate(nominal)
                                    ),
                                ));
                            }
                        }
                    }
                    _ => return Err(Error::config(&format!("{p}.rate"), "a degrade needs a rate > 0 (e.g. \"10Gbps\"); use kind = \"down\" for a dead link")),
                },
                FailureKind::Lossy => match f.loss {
                    Some(l) if l > 0.0 && l <= 1.0 => {}
                    _ => return Err(Error::config(&format!("{p}.loss"), "a lossy link needs loss in (0, 1]")),
                },
                FailureKind::Flap => match f.period {
                    Some(d) if d.0 >= 2 => {}
                    _ => return Err(Error::config(&format!("{p}.period"), "a flap needs a period > 0 (e.g. \"2ms\")")),
                },
                FailureKind::Down => {}
            }
            changes += match f.kind {
                FailureKind::Flap => {
                    let stop = f.until.map_or(end, |u| u.0.min(end));
                    let half = (f.period.map_or(2, |d| d.0) / 2).max(1);
                    (stop.saturating_sub(f.at.0)).div_ceil(half) as u128 + 1
                }
                _ => 1 + f.until.is_some() as u128,
            };
        }
        limits::check(
            "failures",
            "the link state changes",
            changes,
            limits::MAX_LINK_CHANGES,
        )?;
        limits::check(
            "failures",
            "the routing work (routing table × (1 + link state changes))",
            self.topology.size().routing_entries() * (1 + changes),
            limits::MAX_ROUTING_WORK,
        )?;
        self.check_reachable(&g, &failure_links, self.warmup.0)
    }

    /// The checks that need the generated traffic (`specs`, sorted by start; `Sim::build`
    /// calls this): an error when failures cut hosts apart from the first measured flow to the
    /// end of the run; warnings (returned) when nothing is measured, a traced flow does not
    /// exist, or a workload offers more than its links can carry.
    pub fn check_with_traffic(&self, g: &Graph, specs: &[FlowSpec]) -> Result<Vec<String>, Error> {
        let mut warnings = self.warnings();
        let warm = self.warmup.0;
        let first = specs
            .iter()
            .find(|s| s.start_ps >= warm)
            .map(|s| s.start_ps);
        // An HDFS job's flows are made while it runs: its start counts as a flow's.
        let job_first = self
            .workload
            .iter()
            .filter_map(|w| w.job())
            .map(|c| c.start.0)
            .filter(|&t| t >= warm)
            .min();
        let first = match (first, job_first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let long_lived = specs.iter().any(|s| s.size_bytes >= UNBOUNDED);
        match first {
            Some(t) => self.check_reachable(g, &self.failure_links(g)?, t)?,
            None if long_lived => self.check_reachable(g, &self.failure_links(g)?, warm)?,
            None => warnings.push(format!(
                "no flow starts in the measured interval (from warmup = {} to duration = {}):                  the FCT statistics will be empty",
                self.warmup, self.duration
            )),
        }
        let missing: Vec<String> = self
            .measure
            .trace_flows
            .iter()
            .filter(|&&f| f as usize >= specs.len())
            .map(|f| f.to_string())
            .collect();
        if !missing.is_empty() {
            warnings.push(format!(
                "measure.trace_flows: there is no flow {} (the run has {} flows, ids 0..{}):                  nothing will be traced for it",
                missing.join(", "),
                specs.len(),
                specs.len()
            ));
        }
        for (i, w) in self.workload.iter().enumerate() {
            warnings.extend(w.capacity_warnings(&format!("workload[{i}]"), g)?);
        }
        Ok(warnings)
    }

    /// Every host must be able to reach every other at some time of the measured interval
    /// [`from`, end of the run]: a link is cut for the whole interval when it is down, loses
    /// every packet (`loss = 1`), flaps with a first down half that covers it, or is degraded
    /// so far that not one full-size packet crosses it in the interval. (A run would show such
    /// a partition only as unfinished flows.) `from` is `warmup` at validation, and the start
    /// of the first measured flow when the traffic is known (`Sim::build`).
    pub fn check_reachable(
        &self,
        g: &Graph,
        failure_links: &[Vec<u32>],
        from: Time,
    ) -> Result<(), Error> {
        let end = self.end_ps();
        if from >= end {
            return Ok(());
        }
        let wire = frame_bytes(self.transport.params().mss) as u64
            + OVERLAY_HDR as u64
            + PREAMBLE_IFG as u64;
        // Per directed link, the intervals in which it carries nothing.
        let mut cut: Vec<Vec<(Time, Time, usize)>> = vec![vec![]; g.links.len()];
        for (i, (f, links)) in self.failures.iter().zip(failure_links).enumerate() {
            let until = f.until.map_or(Time::MAX, |u| u.0);
            let stop = match f.kind {
                FailureKind::Down => until,
                FailureKind::Lossy if f.loss.unwrap_or(0.0) >= 1.0 => until,
                FailureKind::Flap => {
                    until.min(f.at.0.saturating_add(f.period.map_or(0, |d| d.0) / 2))
                }
                FailureKind::Degrade
                    if f.rate
                        .is_some_and(|r| ser_ps(wire, r.0) > end - from.max(f.at.0)) =>
                {
                    until
                }
                _ => continue,
            };
            for &l in links {
                cut[l as usize].push((f.at.0, stop, i));
            }
        }
        let mut dead = vec![false; g.links.len()];
        let mut which = std::collections::BTreeSet::new();
        for (l, iv) in cut.iter_mut().enumerate() {
            iv.sort_unstable();
            // Do the intervals cover [from, end) without a gap?
            let mut t = from;
            let mut used = vec![];
            for &(a, b, i) in iv.iter() {
                if a > t {
                    break;
                }
                if b > t {
                    t = b;
                    used.push(i);
                }
            }
            if t >= end {
                dead[l] = true;
                which.extend(used);
            }
        }
        if let Some((a, b)) = g.unreachable_hosts(&dead) {
            let name = |n: u32| g.nodes[n as usize].name.as_str();
            let which: Vec<String> = which.iter().map(|i| format!("failures[{i}]")).collect();
            let span = if from == 0 {
                "for the whole run".to_string()
            } else {
                format!("from {} to the end of the run", Duration(from))
            };
            return Err(Error::config(
                "failures",
                format!(
                    "the links cut {span} ({}) leave no path from {} to {}; every host must \
                     stay reachable (to cut a path for a while, give `until` before the end \
                     of the run ({}) or a later `at`)",
                    which.join(", "),
                    name(a),
                    name(b),
                    Duration(end)
                ),
            ));
        }
        Ok(())
    }

    /// Each directed link's rate when the run starts: its nominal rate, or the rate of a
    /// degradation from time 0 (the last one given). `failure_links` as
    /// [`Scenario::failure_links`] gives them.
    pub fn start_rates(&self, g: &Graph, failure_links: &[Vec<u32>]) -> Vec<u64> {
        let mut rates: Vec<u64> = g.links.iter().map(|l| l.rate_bps).collect();
        for (f, links) in self.failures.iter().zip(failure_links) {
            if let (FailureKind::Degrade, 0, Some(r)) = (&f.kind, f.at.0, f.rate) {
                links.iter().for_each(|&l| rates[l as usize] = r.0);
            }
        }
        rates
    }

    /// The directed links each `[[failures]]` entry acts on, in order, with `random:N` drawn
    /// from the scenario seed. Validation and the simulation both resolve links here, so they
    /// agree on every draw.
    pub fn failure_links(&self, g: &Graph) -> Result<Vec<Vec<u32>>, Error> {
        let mut rng = Rng::new(self.seed, stream::FAILURES);
        let mut out = Vec::with_capacity(self.failures.len());
        for (i, f) in self.failures.iter().enumerate() {
            let path = format!("failures[{i}].link");
            let mut links = match f.link.strip_prefix("random:") {
                Some(n) => {
                    let n: usize = n.trim().parse().map_err(|_| {
                        Error::config(
                            &path,
                            format!("'{}': random:N needs a whole number", f.link),
                        )
                    })?;
                    // Physical fabric links, one direction each (the lower id).
                    let mut cand: Vec<u32> = (0..g.links.len() as u32)
                        .filter(|&l| g.is_fabric(l) && l < g.links[l as usize].reverse)
                        .collect();
                    if n > cand.len() {
                        return Err(Error::config(
                            &path,
                            format!("cannot fail {n} links: the fabric has only {}", cand.len()),
                        ));
                    }
                    rng.shuffle(&mut cand);
                    cand.truncate(n);
                    cand.sort_unstable();
                    cand
                }
                None => g.resolve_link(&f.link, &path)?,
            };
            let rev: Vec<u32> = links.iter().map(|&l| g.links[l as usize].reverse).collect();
            match f.direction.as_str() {
                "both" => links.extend(rev),
                "reverse" => links = rev,
                "forward" => {}
                other => {
                    return Err(Error::config(
                        &format!("failures[{i}].direction"),
                        format!("'{other}' is not allowed; allowed: both, forward, reverse"),
                    ))
                }
            }
            out.push(links);
        }
        Ok(out)
    }

    /// The JSON Schema of scenario files (generated from these types).
    pub fn json_schema() -> String {
        let schema = schemars::schema_for!(Scenario);
        serde_json::to_string_pretty(&schema).expect("schema")
    }
}

fn sort_keys(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            let mut keys: Vec<_> = m.into_iter().collect();
            keys.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(keys.into_iter().map(|(k, v)| (k, sort_keys(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sort_keys).collect()),
        x => x,
    }
}

/// Apply `path=value` to the tree. The path is dotted, with `[i]` for array elements
/// (`workload[0].load`). The value is parsed as a TOML value when it can be ("0.6", "true",
/// "\"10Gbps\"") and taken as a plain string otherwise ("10Gbps").
pub fn apply_override(tree: &mut serde_json::Value, path: &str, value: &str) -> Result<(), Error> {
    use serde_json::Value;
    let parsed: Value = match toml::from_str::<toml::Table>(&format!("v = {value}")) {
        Ok(mut t) => match t.remove("v") {
            Some(v) if t.is_empty() => shape::toml_to_json(v, path)?,
            _ => Value::String(value.to_string()),
        },
        Err(_) => Value::String(value.to_string()),
    };
    let mut cur = tree;
    let parts: Vec<&str> = path.split('.').collect();
    if path.is_empty() || parts.iter().any(|p| p.is_empty()) {
        return Err(Error::config(
            path,
            "an override path must be dotted field names, e.g. workload[0].load=0.6",
        ));
    }
    for (n, part) in parts.iter().enumerate() {
        let last = n + 1 == parts.len();
        let (name, index) = match part.find('[') {
            Some(i) if part.ends_with(']') => {
                let idx: usize = part[i + 1..part.len() - 1]
                    .parse()
                    .map_err(|_| Error::config(path, format!("'{part}' has a bad index")))?;
                (&part[..i], Some(idx))
            }
            _ => (*part, None),
        };
        let obj = cur
            .as_object_mut()
            .ok_or_else(|| Error::config(path, format!("'{name}' is not inside a table")))?;
        if index.is_none() && last {
            obj.insert(name.to_string(), parsed);
            return Ok(());
        }
        let entry = obj.entry(name.to_string()).or_insert_with(|| {
            if index.is_some() {
                Value::Array(vec![])
            } else {
                Value::Object(Default::default())
            }
        });
        cur = match index {
            Some(i) => {
                let arr = entry
                    .as_array_mut()
                    .ok_or_else(|| Error::config(path, format!("'{name}' is not a list")))?;
                if i >= arr.len() {
                    return Err(Error::config(
                        path,
                        format!(
                            "index {i} is out of range: '{name}' has {} entries",
                            arr.len()
                        ),
                    ));
                }
                if last {
                    arr[i] = parsed;
                    return Ok(());
                }
                &mut arr[i]
            }
            None => entry,
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "duration = \"10ms\"\n[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\nhost_rate = \"10Gbps\"\nfabric_rate = \"40Gbps\"\n";

    fn err(extra: &str, overrides: &[(&str, &str)]) -> (String, String) {
        let ov: Vec<(String, String)> = overrides
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        match Scenario::load(&format!("{BASE}{extra}"), Format::Toml, &ov) {
            Err(Error::Config { path, msg }) => (path, msg),
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn errors_name_the_field_inside_tagged_sections() {
        // (extra TOML, overrides, expected path, a word the message must contain)
        let cases: &[(&str, &[(&str, &str)], &str, &str)] = &[
            ("", &[("topology.fabric_rate", "40GB")], "topology.fabric_rate", "Gbps"),
            ("", &[("topology.host_rate", "0Gbps")], "topology.host_rate", "> 0"),
            ("", &[("topology.kind", "ring")], "topology.kind", "leaf-spine"),
            ("", &[("topology.leavs", "3")], "topology", "leavs"),
            ("[[workload]]\npattern = \"poisson\"\ncdf = \"web-search\"\nload = 1.5\nload_basis = \"host\"\n", &[], "workload[0]", "load"),
            ("[[workload]]\npattern = \"permutation\"\nsize = \"-1KB\"\n", &[], "workload[0].size", "negative"),
            ("[scheme]\nname = \"magic\"\n", &[], "scheme.name", "ecmp"),
            ("[[workload]]\npattern = 3\n", &[], "workload[0].pattern", "string"),
            ("[scheme]\nname = \"conga\"\n", &[("scheme.metric_aging", "-1ms")], "scheme.metric_aging", "negative"),
            ("[scheme]\nname = \"local\"\n", &[("scheme.q_bits", "-1")], "scheme.q_bits", "1..=8"),
            ("[scheme]\nname = \"conga-flow\"\n", &[("scheme.flowlet_timeout", "abc")], "scheme.flowlet_timeout", "number"),
            ("[scheme]\nname = \"ecmp\"\n", &[("scheme.q_bits", "3")], "scheme", "q_bits"),
            ("[[failures]]\nlink = \"L0-S7\"\nkind = \"down\"\n", &[], "failures[0].link", "S7"),
            ("[measure]\nqueue_ports = [\"S1->H9\"]\n", &[], "measure.queue_ports[0]", "H9"),
            ("[transport]\nmtu = 100\n", &[], "transport.mtu", "576"),
            ("[switch]\nbuffer = \"1B\"\n", &[], "switch.buffer", "1568 B"),
            ("[switch]\nbuffer = \"1pkt\"\n", &[], "switch.buffer", "2pkt"),
            ("[switch]\nshared_buffer = \"1500B\"\n", &[], "switch.shared_buffer", "full-size"),
            ("[switch]\nbuffer = \"0pkt\"\n", &[], "switch.buffer", "full-size"),
        ];
        for (extra, ov, path, word) in cases {
            let (p, m) = err(extra, ov);
            assert!(p.starts_with(path), "{extra:?} {ov:?}: path {p} (msg {m})");
            assert!(
                m.contains(word) || p.contains(word),
                "{extra:?} {ov:?}: {p}: {m}"
            );
        }
    }

    #[test]
    fn failures_that_cut_hosts_off_for_the_whole_run_are_rejected() {
        // BASE: L0, L1, S0, S1, one link per pair. (failures TOML, rejected?)
        let down = |link: &str, extra: &str| {
            format!("[[failures]]\nlink = \"{link}\"\nkind = \"down\"\n{extra}")
        };
        let cases: Vec<(String, bool)> = vec![
            (down("L0-S0", "") + &down("L0-S1", ""), true),
            (
                down("L0-S0", "") + &down("L0-S1", "direction = \"forward\"\n"),
                true,
            ),
            (
                down("L0-S0", "") + &down("S1-L0", "direction = \"forward\"\n"),
                true,
            ),
            (
                down("L0-S0", "") + &down("L0-S1", "until = \"5ms\"\n"),
                false,
            ),
            (down("L0-S0", "") + &down("L0-S1", "at = \"1ms\"\n"), false),
            // A whole spine down: the hosts still reach each other through S0.
            (down("S1-L0", "") + &down("S1-L1", ""), false),
            (down("L0-S0", "") + &down("L1-S1", ""), true),
            (down("random:4", ""), true),
            (down("random:1", ""), false),
            (
                down("L0-S0", "")
                    + "[[failures]]\nlink = \"L0-S1\"\nkind = \"lossy\"\nloss = 0.5\n",
                false,
            ),
        ];
        for (extra, rejected) in &cases {
            let r = Scenario::load(&format!("{BASE}{extra}"), Format::Toml, &[]);
            match (r, rejected) {
                (Err(Error::Config { path, msg }), true) => {
                    assert_eq!(path, "failures", "{extra}");
                    assert!(
                        msg.contains("failures[0]") && msg.contains("no path"),
                        "{msg}"
                    );
                }
                (Ok(_), false) => {}
                (other, _) => panic!("{extra}: rejected = {rejected}, got {other:?}"),
            }
        }
    }

    #[test]
    fn limits_are_checked_before_anything_is_built() {
        // (overrides, path the error names, words of the message). Before the limits these
        // hung, wrapped to nonsense sizes or aborted the run.
        let ft = "duration = \"1ms\"\n[topology]\nkind = \"fat-tree\"\nk = 4\nhost_rate = \"10Gbps\"\nfabric_rate = \"10Gbps\"\n";
        let cases: &[(&str, &[(&str, &str)], &str, &str)] = &[
            (ft, &[("topology.k", "64")], "topology.k", "2..=44"),
            (ft, &[("topology.k", "46")], "topology.k", "2..=44"),
            (
                BASE,
                &[("topology.leaves", "1000"), ("topology.spines", "100")],
                "topology",
                "routing table",
            ),
            (
                ft,
                &[("topology.oversubscription", "2147483648")],
                "topology",
                "hosts",
            ),
            (
                BASE,
                &[
                    ("topology.spines", "65536"),
                    ("topology.links_per_pair", "65536"),
                ],
                "topology.spines",
                "uplinks",
            ),
            (
                BASE,
                &[
                    ("topology.leaves", "2000"),
                    ("topology.hosts_per_leaf", "1000"),
                ],
                "topology",
                "hosts",
            ),
            (
                BASE,
                &[("topology.leaves", "4000"), ("topology.spines", "4000")],
                "topology",
                "links",
            ),
            (
                BASE,
                &[("measure.window", "1ps")],
                "measure.window",
                "windows.csv",
            ),
            (
                BASE,
                &[("measure.window", "1us")],
                "measure.window",
                "slowest link",
            ),
            (
                BASE,
                &[
                    ("measure.trace_interval", "1ps"),
                    ("measure.trace_flows", "[0]"),
                ],
                "measure.trace_interval",
                "traces.csv",
            ),
            (
                BASE,
                &[
                    ("measure.queue_ports", "[\"fabric\"]"),
                    ("switch.buffer", "1GB"),
                    ("topology.leaves", "4"),
                ],
                "measure.queue_ports",
                "queues.csv",
            ),
            (BASE, &[("duration", "100000s")], "duration", "86400s"),
            (
                BASE,
                &[("duration", "80000s"), ("drain", "80000s")],
                "drain",
                "simulated time",
            ),
            (
                BASE,
                &[("switch.buffer", "1e9pkt")],
                "switch.buffer",
                "too large",
            ),
            (
                BASE,
                &[("topology.host_rate", "1e30Gbps")],
                "topology.host_rate",
                "too large",
            ),
            (
                BASE,
                &[
                    (
                        "scheme",
                        "{ name = \"conga\", flowlet_table_size = 16777216 }",
                    ),
                    ("topology.leaves", "100"),
                ],
                "scheme",
                "tables",
            ),
            (
                BASE,
                &[(
                    "failures",
                    "[{ link = \"L0-S0\", kind = \"flap\", period = \"2ps\" }]",
                )],
                "failures",
                "link state changes",
            ),
        ];
        for (base, ov, path, word) in cases {
            let ov: Vec<(String, String)> = ov
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
            let t = std::time::Instant::now();
            match Scenario::load(base, Format::Toml, &ov) {
                Err(Error::Config { path: p, msg }) => {
                    assert!(p == *path && msg.contains(word), "{ov:?}: {p}: {msg}");
                }
                other => panic!("{ov:?}: expected a config error, got {other:?}"),
            }
            assert!(t.elapsed().as_secs() < 5, "{ov:?} took {:?}", t.elapsed());
        }
    }

    #[test]
    fn shapes_numbers_and_keys_are_checked_in_the_users_terms() {
        // (scenario text, format, path, words; none of `forbidden` may appear)
        let forbidden = ["u8", "u32", "f64", "struct", "SwitchConfig", "Config"];
        let cases: &[(&str, Format, &str, &str)] = &[
            (
                "switch = [\"300pkt\", \"5pkt\"]\n",
                Format::Toml,
                "switch",
                "a list",
            ),
            (
                "[switch]\nshared_alpha = nan\n",
                Format::Toml,
                "switch.shared_alpha",
                "finite",
            ),
            (
                "[switch]\ndre_alpha = -inf\n",
                Format::Toml,
                "switch.dre_alpha",
                "finite",
            ),
            (
                "[[failures]]\nlink = \"L0-S0\"\nkind = \"lossy\"\nloss = nan\n",
                Format::Toml,
                "failures[0].loss",
                "finite",
            ),
            ("routing = [true]\n", Format::Toml, "routing", "a list"),
            (
                "[transport]\ncc = 3\n",
                Format::Toml,
                "transport.cc",
                "newreno, cubic, dctcp",
            ),
            (
                "[switch]\noverlay = [\"always\"]\n",
                Format::Toml,
                "switch.overlay",
                "scheme, always",
            ),
            (
                "[scheme]\nname = \"conga\"\nq_bits = 300\n",
                Format::Toml,
                "scheme.q_bits",
                "1..=8",
            ),
            ("seed = -3\n", Format::Toml, "seed", ">= 0"),
            ("seed = 1.5\n", Format::Toml, "seed", "whole numbers"),
            (
                "[measure]\ntrace_flows = [-1]\n",
                Format::Toml,
                "measure.trace_flows[0]",
                "0..=4294967295",
            ),
        ];
        for (extra, fmt, path, word) in cases {
            let text = format!("{extra}{BASE}");
            match Scenario::load(&text, *fmt, &[]) {
                Err(Error::Config { path: p, msg }) => {
                    assert!(p == *path && msg.contains(word), "{extra}: {p}: {msg}");
                    for f in forbidden {
                        assert!(!msg.contains(f), "{extra}: {msg}");
                    }
                }
                other => panic!("{extra}: expected a config error, got {other:?}"),
            }
        }
        let json = Scenario::load(
            &format!("{BASE}[[workload]]\npattern = \"permutation\"\n"),
            Format::Toml,
            &[],
        )
        .unwrap()
        .canonical_json();
        let dup = json.replacen("\"drain\":", "\"duration\":\"5ms\",\"drain\":", 1);
        match Scenario::load(&dup, Format::Json, &[]) {
            Err(Error::Syntax(m)) => assert!(m.contains("duplicate key `duration`"), "{m}"),
            other => panic!("expected a syntax error, got {other:?}"),
        }
        let ov = vec![("workload[0].size".to_string(), "inf".to_string())];
        match Scenario::load(&json, Format::Json, &ov) {
            Err(Error::Config { path, msg }) => {
                assert!(
                    path == "workload[0].size" && msg.contains("finite"),
                    "{path}: {msg}"
                )
            }
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn failures_must_make_sense() {
        // BASE: 10 ms, L0/L1 under S0/S1. (failures TOML, path, word)
        let f = |body: &str| format!("[[failures]]\n{body}\n");
        let cases: Vec<(String, &str, &str)> = vec![
            (
                f("link = \"L0-S0\"\nkind = \"down\"\nrate = \"1Gbps\"\nuntil = \"1ms\""),
                "failures[0].rate",
                "degrade",
            ),
            (
                f("link = \"L0-S0\"\nkind = \"degrade\"\nrate = \"1Gbps\"\nloss = 0.5"),
                "failures[0].loss",
                "lossy",
            ),
            (
                f("link = \"L0-S0\"\nkind = \"down\"\nperiod = \"1ms\"\nuntil = \"1ms\""),
                "failures[0].period",
                "flap",
            ),
            (
                f("link = \"L0-S0\"\nkind = \"degrade\"\nrate = \"41Gbps\""),
                "failures[0].rate",
                "nominal",
            ),
            (
                f("link = \"L0-S0\"\nkind = \"down\"\nat = \"10ms\""),
                "failures[0].at",
                "end of the run",
            ),
            // Cut for the whole run though not `down` forever: a leaf loses both uplinks.
            (
                f("link = \"L0-S0\"\nkind = \"down\"")
                    + &f("link = \"L0-S1\"\nkind = \"down\"\nuntil = \"1s\""),
                "failures",
                "no path",
            ),
            (
                f("link = \"L0-S0\"\nkind = \"down\"")
                    + &f("link = \"L0-S1\"\nkind = \"lossy\"\nloss = 1.0"),
                "failures",
                "no path",
            ),
            (
                f("link = \"L0-S0\"\nkind = \"down\"")
                    + &f("link = \"L0-S1\"\nkind = \"flap\"\nperiod = \"30ms\""),
                "failures",
                "no path",
            ),
            (
                f("link = \"L0-S0\"\nkind = \"down\"")
                    + &f("link = \"L0-S1\"\nkind = \"degrade\"\nrate = \"1Mbps\""),
                "failures",
                "no path",
            ),
            // Two back-to-back outages cover the run as one would.
            (
                f("link = \"L0-S0\"\nkind = \"down\"")
                    + &f("link = \"L0-S1\"\nkind = \"down\"\nuntil = \"5ms\"")
                    + &f("link = \"L0-S1\"\nkind = \"down\"\nat = \"5ms\""),
                "failures",
                "failures[2]",
            ),
        ];
        for (extra, path, word) in &cases {
            match Scenario::load(&format!("{BASE}{extra}"), Format::Toml, &[]) {
                Err(Error::Config { path: p, msg }) => {
                    assert!(p == *path && msg.contains(word), "{extra}: {p}: {msg}")
                }
                other => panic!("{extra}: expected a config error, got {other:?}"),
            }
        }
        // Still fine: a degrade that lets packets through, an outage that ends, a short flap.
        for ok in [
            f("link = \"L0-S0\"\nkind = \"down\"")
                + &f("link = \"L0-S1\"\nkind = \"degrade\"\nrate = \"100Mbps\""),
            f("link = \"L0-S0\"\nkind = \"down\"")
                + &f("link = \"L0-S1\"\nkind = \"down\"\nuntil = \"9ms\""),
            f("link = \"L0-S0\"\nkind = \"down\"")
                + &f("link = \"L0-S1\"\nkind = \"flap\"\nperiod = \"2ms\""),
        ] {
            Scenario::load(&format!("{BASE}{ok}"), Format::Toml, &[]).unwrap();
        }
    }

    #[test]
    fn relative_cdf_paths_resolve_against_the_scenario_folder() {
        let dir = std::env::temp_dir().join(format!("fabriclb-cdf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("my.cdf"), "100 0\n1000 1\n").unwrap();
        let text = format!("{BASE}[[workload]]\npattern = \"poisson\"\ncdf = \"my.cdf\"\nload = 0.5\nload_basis = \"host\"\n");
        let sc = Scenario::load_in(&text, Format::Toml, &[], Some(&dir)).unwrap();
        assert!(sc
            .canonical_json()
            .contains(&dir.join("my.cdf").to_string_lossy().to_string()));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn canonical_json_round_trips() {
        let sc = Scenario::load(
            &format!("{BASE}[[workload]]\npattern = \"permutation\"\n"),
            Format::Toml,
            &[],
        )
        .unwrap();
        let again = Scenario::load(&sc.canonical_json(), Format::Json, &[]).unwrap();
        assert_eq!(sc.canonical_json(), again.canonical_json());
    }
}
