//! `fabriclb-bench [NAME ...]`: run the named benchmarks, one JSON line each.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let names: Vec<String> = if args.is_empty() {
        fabriclb_core::api::bench_names()
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        args
    };
    for n in names {
        match fabriclb_core::api::bench(&n) {
            Ok(r) => println!("{}", serde_json::to_string(&r).unwrap()),
            Err(e) => {
                eprintln!("fabriclb-bench: {e}");
                std::process::exit(2);
            }
        }
    }
}
