//! Deterministic random streams. One master seed; each component draws from its own
//! stream derived from (seed, stable component id), so adding a component never shifts
//! another's draws. xoshiro256++ seeded through splitmix64; no global state.

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

#[inline]
fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Stable component ids for stream derivation.
pub mod stream {
    pub const WORKLOAD: u64 = 1 << 32;
    pub const SCHEME: u64 = 2 << 32;
    pub const LINK_LOSS: u64 = 3 << 32;
    pub const FAILURES: u64 = 4 << 32;
    pub const TOPOLOGY: u64 = 5 << 32;
    pub const TRANSPORT: u64 = 6 << 32;
}

impl Rng {
    /// The stream of component `id` under master seed `seed`.
    pub fn new(seed: u64, id: u64) -> Rng {
        let mut x = seed ^ splitmix(&mut id.wrapping_mul(0xD6E8_FEB8_6659_FD93).clone());
        let s = [
            splitmix(&mut x),
            splitmix(&mut x),
            splitmix(&mut x),
            splitmix(&mut x),
        ];
        Rng { s }
    }
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let r = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        r
    }
    /// Uniform in [0, 1).
    #[inline]
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform integer in [0, n); n > 0. Lemire's multiply-shift (bias < 2^-32 for small n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
    /// Exponential with the given mean.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.f64()).ln()
    }
    /// Fisher-Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

/// A 64-bit mix used for ECMP and flowlet-table hashing (stable across versions).
#[inline]
pub fn hash64(mut x: u64) -> u64 {
    splitmix(&mut x)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn streams_are_independent_and_repeatable() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7, 1);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7, 1);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7, 2);
                move |_| r.next_u64()
            })
            .collect();
        let d: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(8, 1);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }
    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut r = Rng::new(1, 1);
        let mut counts = [0u32; 4];
        for _ in 0..40_000 {
            counts[r.below(4) as usize] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }
}
