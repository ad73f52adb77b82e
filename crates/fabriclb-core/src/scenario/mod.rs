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
use crate::net::packet::{frame_bytes, OVERLAY_HDR};
use crate::net::topology::{Graph, TopologyConfig};
use crate::rng::{stream, Rng};
use crate::transport::TransportConfig;
use crate::units::{BufSize, Duration, Rate};
use crate::workload::WorkloadConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    /// Per-port drop-tail limit (dedicated buffer), in full-size packets ("100pkt") or bytes.
    #[serde(default = "default_buffer")]
    pub buffer: BufSize,
    /// ECN marking threshold K on the instantaneous queue (DCTCP style); "0pkt" disables marking.
    #[serde(default = "default_ecn")]
    pub ecn_threshold: BufSize,
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
    /// Write a pcap packet trace of these links ("A->B") to `pcap_file`.
    #[serde(default)]
    pub pcap_links: Vec<String>,
    /// Path of the pcap file (relative to the working directory).
    #[serde(default)]
    pub pcap_file: Option<String>,
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
impl Default for MeasureConfig {
    fn default() -> Self {
        MeasureConfig {
            window: default_window(),
            queue_ports: vec![],
            trace_flows: vec![],
            trace_interval: default_trace_interval(),
            pcap_links: vec![],
            pcap_file: None,
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
                serde_json::to_value(v).map_err(|e| Error::Syntax(e.to_string()))?
            }
            Format::Json => serde_json::from_str(text)
                .map_err(|e| Error::Syntax(format!("JSON syntax error: {e}")))?,
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
        let sc: Scenario = serde_path_to_error::deserialize(tree).map_err(|e| {
            let outer = e.path().to_string();
            let (path, msg) = tagged::split_path(
                if outer == "." { "" } else { &outer },
                &e.inner().to_string(),
            );
            Error::config(&path, msg)
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

    /// Range checks that need more than one field or that serde cannot express.
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
        if !self.measure.pcap_links.is_empty() && self.measure.pcap_file.is_none() {
            return Err(Error::config(
                "measure.pcap_file",
                "is required when measure.pcap_links is set",
            ));
        }
        self.topology.validate("topology")?;
        // Build the fabric once so that a disconnected topology or a link name that does not
        // exist is reported by validation, not only by a run.
        let g = self.topology.build()?;
        let failure_links = self.failure_links(&g)?;
        for (i, q) in self.measure.queue_ports.iter().enumerate() {
            if q != "fabric" {
                g.resolve_link(q, &format!("measure.queue_ports[{i}]"))?;
            }
        }
        for (i, q) in self.measure.pcap_links.iter().enumerate() {
            g.resolve_link(q, &format!("measure.pcap_links[{i}]"))?;
        }
        self.transport.validate("transport")?;
        // A port drops a packet that does not fit whole, so a buffer must hold the largest
        // frame a switch forwards: a full-size segment with the overlay header.
        let frame = frame_bytes(self.transport.params().mss) as u64;
        let largest = frame + OVERLAY_HDR as u64;
        for (field, size) in [
            ("switch.buffer", Some(self.switch.buffer)),
            ("switch.shared_buffer", self.switch.shared_buffer),
        ] {
            if let Some(b) = size.filter(|b| b.bytes(frame) < largest) {
                return Err(Error::config(
                    field,
                    format!(
                        "{b} cannot hold one full-size packet: every packet would be dropped; \
                         allowed: at least {largest} B (a {frame}-byte frame at MTU {} plus the \
                         {OVERLAY_HDR}-byte overlay), or 2pkt",
                        self.transport.mtu
                    ),
                ));
            }
        }
        self.scheme.validate("scheme")?;
        self.scheme.check_topology(&self.topology)?;
        if let SchemeConfig::Mptcp(m) = &self.scheme {
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
        for (i, w) in self.workload.iter().enumerate() {
            w.validate(&format!("workload[{i}]"))?;
        }
        for (i, f) in self.failures.iter().enumerate() {
            let p = format!("failures[{i}]");
            if let Some(u) = f.until {
                if u.0 <= f.at.0 {
                    return Err(Error::config(
                        &format!("{p}.until"),
                        "must be later than `at`",
                    ));
                }
            }
            match f.kind {
                FailureKind::Degrade => match f.rate {
                    Some(r) if r.0 > 0 => {}
                    _ => return Err(Error::config(&format!("{p}.rate"), "a degrade needs a rate > 0 (e.g. \"10Gbps\"); use kind = \"down\" for a dead link")),
                },
                FailureKind::Lossy => match f.loss {
                    Some(l) if l > 0.0 && l <= 1.0 => {}
                    _ => return Err(Error::config(&format!("{p}.loss"), "a lossy link needs loss in (0, 1]")),
                },
                FailureKind::Flap => match f.period {
                    Some(d) if d.0 > 0 => {}
                    _ => return Err(Error::config(&format!("{p}.period"), "a flap needs a period > 0")),
                },
                FailureKind::Down => {}
            }
        }
        // Links down for the whole run must leave every host able to reach every other: a
        // partition from the start would drop all traffic across it, and the run would only
        // show it as unfinished flows.
        let mut dead = vec![false; g.links.len()];
        let mut which = vec![];
        for (i, (f, links)) in self.failures.iter().zip(&failure_links).enumerate() {
            if f.kind == FailureKind::Down && f.at.0 == 0 && f.until.is_none() {
                links.iter().for_each(|&l| dead[l as usize] = true);
                which.push(format!("failures[{i}]"));
            }
        }
        if let Some((a, b)) = g.unreachable_hosts(&dead) {
            let name = |n: u32| g.nodes[n as usize].name.as_str();
            return Err(Error::config(
                "failures",
                format!(
                    "the links down for the whole run ({}) leave no path from {} to {}; every \
                     host must stay reachable (to cut a path for a while, give `until` or a \
                     later `at`)",
                    which.join(", "),
                    name(a),
                    name(b)
                ),
            ));
        }
        Ok(())
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
    let parsed: Value = match toml::from_str::<toml::Value>(&format!("v = {value}")) {
        Ok(t) => serde_json::to_value(
            t.get("v")
                .cloned()
                .unwrap_or(toml::Value::String(value.into())),
        )
        .unwrap(),
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
            ("[scheme]\nname = \"local\"\n", &[("scheme.q_bits", "-1")], "scheme.q_bits", "u8"),
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
