//! `fabriclb._core`: the thin PyO3 binding of `fabriclb-core`.
//!
//! Scenario text in, result columns out. This crate holds no simulation logic: it converts
//! types, maps core errors to the exceptions of `fabriclb.errors`, releases the interpreter lock while a run
//! goes, turns Ctrl-C into a clean cancellation, and keeps Rust panics away from the user.
//! The Python package (`python/fabriclb/`) builds the friendly API on top of it; the typed
//! surface is written down in `python/fabriclb/_core.pyi`.

use fabriclb_core::api;
use fabriclb_core::scenario::Format;
use fabriclb_core::table::{Column, Table};
use fabriclb_core::Error;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyList, PyType};
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;
use std::time::{Duration, Instant};

/// 2 MiB pages for a large world's heap (`fabriclb_core::mem`).
#[global_allocator]
static ALLOC: fabriclb_core::mem::HugeHeap = fabriclb_core::mem::HugeHeap;

/// The exception classes live in Python (`fabriclb.errors`) so that the pure-Python parts of
/// the package work without the compiled core; they are looked up once and cached.
static ERROR_TYPES: GILOnceCell<[Py<PyType>; 3]> = GILOnceCell::new();

/// `kind` selects the class: "invariant" and "panic" give `SimulationError`, "internal" the
/// base `FabriclbError`, everything else (config, syntax, io, cdf) `ScenarioError`.
fn fabriclb_error(py: Python<'_>, kind: &str, field: Option<String>, msg: String) -> PyErr {
    let types = ERROR_TYPES.get_or_try_init(py, || -> PyResult<_> {
        let m = py.import_bound("fabriclb.errors")?;
        let get = |n: &str| -> PyResult<Py<PyType>> {
            Ok(m.getattr(n)?.downcast_into::<PyType>()?.unbind())
        };
        Ok([
            get("FabriclbError")?,
            get("ScenarioError")?,
            get("SimulationError")?,
        ])
    });
    let types = match types {
        Ok(t) => t,
        // Used outside the fabriclb package: plain Python exceptions still carry the message.
        Err(_) => return PyRuntimeError::new_err(format!("{kind}: {msg}")),
    };
    let cls = match kind {
        "invariant" | "panic" => &types[2],
        "internal" => &types[0],
        _ => &types[1],
    };
    let make = || -> PyResult<PyErr> {
        let kw = PyDict::new_bound(py);
        kw.set_item("kind", kind)?;
        kw.set_item("field", field.clone())?;
        Ok(PyErr::from_value_bound(
            cls.bind(py).call((msg.clone(),), Some(&kw))?,
        ))
    };
    make().unwrap_or_else(|e| e)
}

/// How often (wall time) a run hands control back to Python for progress and Ctrl-C.
const CALLBACK_INTERVAL: Duration = Duration::from_millis(100);

thread_local! {
    /// The message of the last panic on this thread, recorded by our panic hook so that the
    /// exception can say what went wrong without the default hook printing to stderr.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Replace the default panic hook (which prints "thread ... panicked at ...") by one that
/// records the message; the binding reports it as a `SimulationError`. With
/// `FABRICLB_DEBUG` set, the default hook runs as well.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let msg = if let Some(s) = payload.downcast_ref::<&str>() {
                s.to_string()
            } else if let Some(s) = payload.downcast_ref::<String>() {
                s.clone()
            } else {
                "unknown panic".to_string()
            };
            let at = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{msg}{at}")));
            if std::env::var_os("FABRICLB_DEBUG").is_some_and(|v| !v.is_empty() && v != "0") {
                default_hook(info);
            }
        }));
    });
}

/// Why a guarded call into the core failed.
enum Failure {
    Core(Error),
    Panic(String),
}

/// Call into the core with panics caught.
fn guarded<T>(f: impl FnOnce() -> Result<T, Error>) -> Result<T, Failure> {
    install_panic_hook();
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Failure::Core(e)),
        Err(_) => {
            let msg = LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_else(|| "unknown panic".into());
            Err(Failure::Panic(msg))
        }
    }
}

impl Failure {
    fn into_pyerr(self, py: Python<'_>) -> PyErr {
        match self {
            Failure::Panic(msg) => fabriclb_error(
                py,
                "panic",
                None,
                format!("the simulator crashed (a bug in fabriclb, please report it with the scenario): {msg}"),
            ),
            Failure::Core(Error::Cancelled) => PyKeyboardInterrupt::new_err("the run was cancelled"),
            Failure::Core(e) => {
                let field = match &e {
                    Error::Config { path, .. } if !path.is_empty() => Some(path.clone()),
                    _ => None,
                };
                fabriclb_error(py, e.kind(), field, e.to_string())
            }
        }
    }
}

fn call<T>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<T, Error> + Send,
    release_gil: bool,
) -> PyResult<T>
where
    T: Send,
{
    let r = if release_gil {
        py.allow_threads(|| guarded(f))
    } else {
        guarded(f)
    };
    r.map_err(|e| e.into_pyerr(py))
}

fn parse_format(format: &str) -> PyResult<Format> {
    match format {
        "toml" => Ok(Format::Toml),
        "json" => Ok(Format::Json),
        other => Err(PyValueError::new_err(format!(
            "unknown scenario format '{other}'; use 'toml' or 'json'"
        ))),
    }
}

/// Parse and validate a scenario; returns its canonical JSON. With `build`, also build the
/// network and the traffic as a run would (`api::check`), without simulating.
#[pyfunction]
#[pyo3(signature = (text, format = "toml", overrides = Vec::new(), base_dir = None, build = false))]
fn load_scenario(
    py: Python<'_>,
    text: &str,
    format: &str,
    overrides: Vec<(String, String)>,
    base_dir: Option<String>,
    build: bool,
) -> PyResult<String> {
    let fmt = parse_format(format)?;
    call(
        py,
        || {
            let sc = match &base_dir {
                Some(d) => api::load_scenario_in(text, fmt, &overrides, std::path::Path::new(d)),
                None => api::load_scenario(text, fmt, &overrides),
            }?;
            if build {
                api::check(&sc).map(|_| ())?;
            }
            Ok(sc.canonical_json())
        },
        build,
    )
}

/// Build a validated scenario (JSON, as `load_scenario` returns it) as a run would, without
/// simulating; returns the warnings a run would report.
#[pyfunction]
fn check(py: Python<'_>, scenario_json: &str) -> PyResult<Vec<String>> {
    call(
        py,
        || api::check(&api::load_scenario(scenario_json, Format::Json, &[])?),
        true,
    )
}

/// The limits on scenarios: (name, value, what it bounds).
#[pyfunction]
fn limits() -> Vec<(&'static str, u64, &'static str)> {
    fabriclb_core::limits::LIMITS.to_vec()
}

/// A column's values as a Python list, with its type tag ("u64", "i64", "f64", "str").
fn column_to_py(py: Python<'_>, c: &Column) -> (&'static str, PyObject) {
    match c {
        Column::U64(v) => ("u64", PyList::new_bound(py, v).into()),
        Column::I64(v) => ("i64", PyList::new_bound(py, v).into()),
        Column::F64(v) => ("f64", PyList::new_bound(py, v).into()),
        Column::Str(v) => ("str", PyList::new_bound(py, v).into()),
    }
}

/// A table as a list of `(column name, type tag, values)` triples, in the core's column order.
fn table_to_py(py: Python<'_>, t: &Table) -> PyResult<PyObject> {
    let out = PyList::empty_bound(py);
    for (name, c) in &t.columns {
        let (tag, values) = column_to_py(py, c);
        out.append((name.as_str(), tag, values))?;
    }
    Ok(out.into())
}

/// Run a scenario given as JSON (as `load_scenario` returns it).
///
/// The interpreter lock is released while the simulation runs. About every 100 ms of wall
/// time the run takes the lock back briefly to call `progress(fraction_of_simulated_time)`
/// and to check for signals; Ctrl-C (or an exception raised by `progress`) stops the run and
/// is re-raised here.
#[pyfunction]
#[pyo3(signature = (scenario_json, progress = None))]
fn run(py: Python<'_>, scenario_json: &str, progress: Option<PyObject>) -> PyResult<PyObject> {
    let sc = call(
        py,
        || api::load_scenario(scenario_json, Format::Json, &[]),
        false,
    )?;
    let cancel = AtomicBool::new(false);
    let mut pending: Option<PyErr> = None;
    let outcome = py.allow_threads(|| {
        let mut last: Option<Instant> = None;
        let mut on_progress = |frac: f64| -> bool {
            let now = Instant::now();
            if matches!(last, Some(t) if now.duration_since(t) < CALLBACK_INTERVAL) {
                return true;
            }
            last = Some(now);
            Python::with_gil(|py| {
                let r = py.check_signals().and_then(|_| match &progress {
                    Some(cb) => cb.call1(py, (frac,)).map(|_| ()),
                    None => Ok(()),
                });
                match r {
                    Ok(()) => true,
                    Err(e) => {
                        pending = Some(e);
                        cancel.store(true, Ordering::Relaxed);
                        false
                    }
                }
            })
        };
        guarded(|| {
            api::run(
                &sc,
                api::RunOptions {
                    progress: Some(&mut on_progress),
                    cancel: Some(&cancel),
                },
            )
        })
    });
    // An interrupt or an exception from the callback wins over the run's own outcome.
    if let Some(e) = pending {
        return Err(e);
    }
    let res = outcome.map_err(|e| e.into_pyerr(py))?;
    let d = PyDict::new_bound(py);
    let summary = serde_json::to_string(&res.summary)
        .map_err(|e| fabriclb_error(py, "internal", None, format!("summary is not JSON: {e}")))?;
    d.set_item("summary", summary)?;
    d.set_item("scenario", sc.canonical_json())?;
    d.set_item("flows", table_to_py(py, &res.flows)?)?;
    d.set_item("ports", table_to_py(py, &res.ports)?)?;
    d.set_item("windows", table_to_py(py, &res.windows)?)?;
    d.set_item("queues", table_to_py(py, &res.queues)?)?;
    d.set_item("traces", table_to_py(py, &res.traces)?)?;
    d.set_item("flowlet_sizes", table_to_py(py, &res.flowlet_sizes)?)?;
    d.set_item(
        "flowlet_concurrency",
        table_to_py(py, &res.flowlet_concurrency)?,
    )?;
    Ok(d.into())
}

/// Run one named benchmark; returns its result as JSON.
#[pyfunction]
#[pyo3(name = "bench")]
fn run_bench(py: Python<'_>, name: &str) -> PyResult<String> {
    let r = call(py, || api::bench(name), true)?;
    serde_json::to_string(&r).map_err(|e| {
        fabriclb_error(
            py,
            "internal",
            None,
            format!("bench result is not JSON: {e}"),
        )
    })
}

/// Names of the benchmark scenarios.
#[pyfunction]
fn bench_names() -> Vec<&'static str> {
    api::bench_names().to_vec()
}

/// Names of the load-balancing schemes, as written in scenarios.
#[pyfunction]
fn scheme_names() -> Vec<String> {
    api::scheme_names()
}

/// Names of the workload patterns, as written in scenarios.
#[pyfunction]
fn workload_patterns() -> Vec<String> {
    api::workload_patterns()
}

/// The JSON Schema of scenario files.
#[pyfunction]
fn json_schema() -> String {
    api::json_schema()
}

/// The version of the simulator core.
#[pyfunction]
fn version() -> &'static str {
    api::version()
}

/// A digest of the core's sources and embedded data: the result cache's key.
#[pyfunction]
fn code_hash() -> &'static str {
    api::code_hash()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    install_panic_hook();
    m.add_function(wrap_pyfunction!(load_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(limits, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_function(wrap_pyfunction!(bench_names, m)?)?;
    m.add_function(wrap_pyfunction!(scheme_names, m)?)?;
    m.add_function(wrap_pyfunction!(workload_patterns, m)?)?;
    m.add_function(wrap_pyfunction!(json_schema, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(code_hash, m)?)?;
    Ok(())
}
