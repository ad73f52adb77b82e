//! The code hash: a digest of everything in this crate that decides a run's result besides the
//! scenario and the seed, i.e. its sources, its manifest, the dependency lock file and the
//! embedded flow-size CDFs. `build.rs` computes it at build time (it includes this file with
//! `#[path]`) and `api::code_hash()` returns it, so a result cache keyed by it misses after any
//! change of code or data, committed or not.
//!
//! FNV-1a with 128 bits: the key only has to tell versions apart, not resist an adversary, and
//! the build needs no extra dependency. Each file enters as its path (relative to the
//! workspace root, `/`-separated), its length and its bytes, in path order, so renaming,
//! moving or editing any file changes the digest.

use std::path::Path;

const FNV_OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
const FNV_PRIME: u128 = 0x0000000001000000000000000000013b;

fn fnv1a(mut h: u128, bytes: &[u8]) -> u128 {
    for &b in bytes {
        h ^= b as u128;
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// The digest (32 hex digits) of `(path, contents)` pairs, sorted by path first.
pub fn digest(files: &[(String, Vec<u8>)]) -> String {
    let mut sorted: Vec<&(String, Vec<u8>)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut h = FNV_OFFSET;
    for (path, data) in sorted {
        h = fnv1a(h, path.as_bytes());
        h = fnv1a(h, &(data.len() as u64).to_le_bytes());
        h = fnv1a(h, data);
    }
    format!("{h:032x}")
}

/// The folders and files (relative to the workspace root) whose contents make up the hash;
/// folders are walked recursively. `build.rs` also watches them (`rerun-if-changed`).
pub const INPUTS: &[&str] = &[
    "crates/fabriclb-core/src",
    "crates/fabriclb-core/Cargo.toml",
    "crates/fabriclb-core/build.rs",
    "Cargo.lock",
    "workloads",
];

/// The `(path, contents)` of every input file under `root` (the workspace root). Only `.rs`
/// files count in source folders and only `.cdf` files in `workloads` (not its README), so
/// editor backups and docs do not invalidate caches. Missing inputs are skipped.
pub fn input_files(root: &Path) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    fn walk(root: &Path, rel: &str, out: &mut Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
        let p = root.join(rel);
        if p.is_dir() {
            for e in std::fs::read_dir(&p)? {
                let name = e?.file_name().to_string_lossy().into_owned();
                walk(root, &format!("{rel}/{name}"), out)?;
            }
        } else if p.is_file() {
            let counted = if rel.starts_with("workloads/") {
                rel.ends_with(".cdf")
            } else {
                rel.ends_with(".rs") || !rel.contains("/src/")
            };
            if counted {
                out.push((rel.to_string(), std::fs::read(&p)?));
            }
        }
        Ok(())
    }
    let mut out = vec![];
    for rel in INPUTS {
        walk(root, rel, &mut out)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
        list.iter()
            .map(|(p, c)| (p.to_string(), c.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn digest_changes_with_any_byte_path_or_file_and_not_with_order() {
        let base = files(&[
            ("crates/fabriclb-core/src/sim.rs", "fn main() {}"),
            ("workloads/data-mining.cdf", "1460 0.5\n973333820 1\n"),
        ]);
        let d = digest(&base);
        assert_eq!(d.len(), 32);
        // (case, changed inputs): each must give another digest.
        let changed = [
            (
                "code",
                files(&[
                    ("crates/fabriclb-core/src/sim.rs", "fn main() { }"),
                    ("workloads/data-mining.cdf", "1460 0.5\n973333820 1\n"),
                ]),
            ),
            (
                "data",
                files(&[
                    ("crates/fabriclb-core/src/sim.rs", "fn main() {}"),
                    ("workloads/data-mining.cdf", "1460 0.6\n973333820 1\n"),
                ]),
            ),
            (
                "renamed",
                files(&[
                    ("crates/fabriclb-core/src/sim2.rs", "fn main() {}"),
                    ("workloads/data-mining.cdf", "1460 0.5\n973333820 1\n"),
                ]),
            ),
            (
                "bytes moved between files",
                files(&[
                    ("crates/fabriclb-core/src/sim.rs", "fn main() {}1460 0.5\n"),
                    ("workloads/data-mining.cdf", "973333820 1\n"),
                ]),
            ),
            ("file removed", base[..1].to_vec()),
        ];
        for (case, f) in changed {
            assert_ne!(digest(&f), d, "{case}");
        }
        let reversed: Vec<_> = base.iter().rev().cloned().collect();
        assert_eq!(digest(&reversed), d);
    }

    #[test]
    fn the_compiled_hash_covers_the_current_sources_and_cdfs() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let f = input_files(&root).unwrap();
        // The embedded CDFs and this file are among the inputs.
        for want in [
            "workloads/data-mining.cdf",
            "workloads/web-search.cdf",
            "crates/fabriclb-core/src/code_hash.rs",
            "crates/fabriclb-core/Cargo.toml",
        ] {
            assert!(f.iter().any(|(p, _)| p == want), "{want} not hashed");
        }
        assert!(!f.iter().any(|(p, _)| p.ends_with("README.md")));
        assert_eq!(digest(&f), crate::api::code_hash());
    }
}
