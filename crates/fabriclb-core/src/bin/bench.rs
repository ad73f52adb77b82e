//! `fabriclb-bench [--duration D] [--set PATH=VALUE ...] [--show] [NAME ...]`: run the named
//! benchmarks (default: all), one JSON line each. `--duration 2ms` replaces their simulated
//! time (and drops the warm-up): a short run for counting instructions under callgrind
//! (docs/BENCHMARKS.md). `--set` overrides a field of the benchmark's scenario, as `fabriclb
//! run --set` does: a variant of a benchmark, e.g. `--set transport.rcv_window=30KB`. `--show`
//! prints the scenarios as shipped instead (TOML, as `fabriclb run` takes them; without the
//! overrides).
/// 2 MiB pages for a large world's heap (`fabriclb_core::mem`).
#[global_allocator]
static ALLOC: fabriclb_core::mem::HugeHeap = fabriclb_core::mem::HugeHeap;

fn fail(msg: &str) -> ! {
    eprintln!("fabriclb-bench: {msg}");
    std::process::exit(2);
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut overrides: Vec<(String, String)> = vec![];
    let mut names: Vec<String> = vec![];
    let mut show = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--duration" => {
                let Some(d) = args.next() else {
                    fail("--duration needs a value, e.g. --duration 2ms");
                };
                overrides.extend(fabriclb_core::api::shortened(&d));
            }
            "--set" => {
                let Some((path, value)) = args.next().and_then(|s| {
                    s.split_once('=')
                        .map(|(p, v)| (p.to_string(), v.to_string()))
                }) else {
                    fail("--set needs PATH=VALUE, e.g. --set transport.rcv_window=30KB");
                };
                overrides.push((path, value));
            }
            "--show" => show = true,
            _ => names.push(a),
        }
    }
    if names.is_empty() {
        names = fabriclb_core::api::bench_names()
            .iter()
            .map(|s| s.to_string())
            .collect();
    }
    for n in names {
        if show {
            match fabriclb_core::api::bench_scenario(&n) {
                Ok((_, _, toml)) => println!("{}", toml.trim()),
                Err(e) => fail(&e.to_string()),
            }
            continue;
        }
        match fabriclb_core::api::bench_with(&n, &overrides) {
            Ok(r) => println!("{}", serde_json::to_string(&r).unwrap()),
            Err(e) => fail(&e.to_string()),
        }
    }
}
