//! Sorted lists of disjoint byte ranges (SACK scoreboards, reassembly queues).

/// Insert [s, e) into a sorted list of disjoint ranges, merging overlaps and neighbours.
pub fn insert_range(v: &mut Vec<(u64, u64)>, s: u64, e: u64) {
    let i = v.partition_point(|r| r.1 < s);
    let mut j = i;
    let (mut ns, mut ne) = (s, e);
    while j < v.len() && v[j].0 <= e {
        ns = ns.min(v[j].0);
        ne = ne.max(v[j].1);
        j += 1;
    }
    v.splice(i..j, std::iter::once((ns, ne)));
}
