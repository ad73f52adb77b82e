//! The crate's front door: load a scenario, run it, benchmark. The Python binding and any
//! other front end use only this module.

use crate::error::Error;
use crate::scenario::{Format, Scenario};

pub use crate::bench::{
    bench, bench_for, bench_names, bench_scenario, bench_with, shortened, BenchResult,
};
pub use crate::sim::RunOptions;
pub use crate::stats::RunResult;

/// Parse and validate a scenario (TOML or JSON text) with `path=value` overrides.
pub fn load_scenario(
    text: &str,
    format: Format,
    overrides: &[(String, String)],
) -> Result<Scenario, Error> {
    Scenario::load(text, format, overrides)
}

/// As [`load_scenario`] for a scenario file in `base_dir` (relative CDF paths resolve there).
pub fn load_scenario_in(
    text: &str,
    format: Format,
    overrides: &[(String, String)],
    base_dir: &std::path::Path,
) -> Result<Scenario, Error> {
    Scenario::load_in(text, format, overrides, Some(base_dir))
}

/// Everything a run checks before it simulates, without simulating: what validation cannot
/// see without building the network and the traffic (host names in workloads, CDF files,
/// pattern-specific limits). Building costs about as much as generating the flows. Returns
/// the warnings a run would put in its summary (`warnings`). Writes nothing.
pub fn check(sc: &Scenario) -> Result<Vec<String>, Error> {
    crate::sim::Sim::build(sc).map(|s| s.warnings)
}

/// Run a validated scenario.
pub fn run(sc: &Scenario, opts: RunOptions) -> Result<RunResult, Error> {
    crate::sim::Sim::build(sc)?.run(opts)
}

/// Names of the load-balancing schemes, as written in scenarios.
pub fn scheme_names() -> Vec<String> {
    crate::lb::SchemeConfig::names()
}

/// Names of the workload patterns, as written in scenarios.
pub fn workload_patterns() -> Vec<String> {
    crate::workload::WorkloadConfig::patterns()
}

/// The JSON Schema of scenario files.
pub fn json_schema() -> String {
    Scenario::json_schema()
}

/// The crate version.
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// A digest of the core's sources and embedded data (`code_hash.rs`): it changes with any
/// change that can change a result, so result caches key on it rather than on the version.
pub fn code_hash() -> &'static str {
    env!("FABRICLB_CODE_HASH")
}
