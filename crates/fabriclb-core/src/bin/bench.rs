//! `fabriclb-bench [--duration D] [NAME ...]`: run the named benchmarks (default: all), one
//! JSON line each. `--duration 2ms` replaces their simulated time (and drops the warm-up): a
//! short run for counting instructions under callgrind (docs/BENCHMARKS.md).
/// 2 MiB pages for a large world's heap (`fabriclb_core::mem`).
#[global_allocator]
static ALLOC: fabriclb_core::mem::HugeHeap = fabriclb_core::mem::HugeHeap;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut duration = None;
    if let Some(i) = args.iter().position(|a| a == "--duration") {
        if i + 1 >= args.len() {
            eprintln!("fabriclb-bench: --duration needs a value, e.g. --duration 2ms");
            std::process::exit(2);
        }
        duration = Some(args.remove(i + 1));
        args.remove(i);
    }
    let names: Vec<String> = if args.is_empty() {
        fabriclb_core::api::bench_names()
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        args
    };
    for n in names {
        match fabriclb_core::api::bench_for(&n, duration.as_deref()) {
            Ok(r) => println!("{}", serde_json::to_string(&r).unwrap()),
            Err(e) => {
                eprintln!("fabriclb-bench: {e}");
                std::process::exit(2);
            }
        }
    }
}
