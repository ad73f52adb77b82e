//! Physical units: integer picoseconds, bits per second and bytes.
//!
//! Scenario files speak human units ("10Gbps", "500us", "100KB", "100pkt"); this module
//! parses them once, at validation, into the integer units the engine uses everywhere:
//! time in picoseconds (`*_ps`), rates in bits per second (`*_bps`), sizes in bytes.
//! It may not depend on any other module of the crate.

use schemars::gen::SchemaGenerator;
use schemars::schema::{InstanceType, Schema, SchemaObject, StringValidation};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Simulated time in picoseconds. 2^64 ps is about 213 days.
pub type Time = u64;

pub const PS_PER_NS: u64 = 1_000;
pub const PS_PER_US: u64 = 1_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// Time to serialise `bytes` at `rate_bps`, rounded up to a whole picosecond.
#[inline]
pub fn ser_ps(bytes: u64, rate_bps: u64) -> Time {
    // bytes * 8e12 / rate. Frames fit the u64 fast path (a u128 division costs ~10x more);
    // u128 only for huge bursts.
    if bytes < (1 << 21) {
        (bytes * 8 * PS_PER_S).div_ceil(rate_bps)
    } else {
        ((bytes as u128 * 8 * PS_PER_S as u128).div_ceil(rate_bps as u128)) as Time
    }
}

fn split_num(s: &str) -> Result<(f64, &str), String> {
    let s = s.trim();
    let idx = s
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')
        })
        .unwrap_or(s.len());
    // "1e3us": the 'e' belongs to the number only if followed by a digit or sign.
    let (mut num, mut unit) = s.split_at(idx);
    if num.ends_with(['e', 'E']) {
        num = &num[..num.len() - 1];
        unit = &s[num.len()..];
    }
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' does not start with a number"))?;
    if !v.is_finite() {
        return Err(format!("'{s}' is not a finite number"));
    }
    Ok((v, unit.trim()))
}

macro_rules! unit_type {
    ($name:ident, $inner:ident, $what:literal, $pattern:literal, $allowed:literal, $max:expr, $max_text:literal, [$(($u:literal, $mul:expr)),* $(,)?]) => {
        #[doc = concat!("A ", $what, " written with a unit (", $allowed, ").")]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub $inner);

        impl $name {
            pub fn parse(s: &str) -> Result<Self, String> {
                let (v, unit) = split_num(s)?;
                let mul: f64 = match unit {
                    $($u => $mul as f64,)*
                    "" => return Err(format!("'{s}' has no unit; write it with one of: {}", $allowed)),
                    other => return Err(format!("unit '{other}' in '{s}' is not a {}; allowed units: {}", $what, $allowed)),
                };
                if v < 0.0 {
                    return Err(format!("'{s}' is negative; a {} must be >= 0", $what));
                }
                let x = (v * mul).round();
                if x > $max as f64 {
                    return Err(format!("'{s}' is too large; a {} must be at most {}", $what, $max_text));
                }
                Ok($name(x as $inner))
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                // Canonical form: the largest unit that represents the value exactly.
                let units: &[(&str, f64)] = &[$(($u, $mul as f64)),*];
                let mut best = units[0];
                for &(u, m) in units {
                    if m >= best.1 && (self.0 as f64 / m).fract() == 0.0 && self.0 as f64 >= m { best = (u, m); }
                }
                write!(f, "{}{}", self.0 as f64 / best.1, best.0)
            }
        }
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(f, "a {} as a string with a unit ({})", $what, $allowed)
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::parse(v).map_err(E::custom)
                    }
                    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<$name, E> {
                        Err(E::custom(format!("{v} has no unit; write it as a string with one of: {}", $allowed)))
                    }
                    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<$name, E> {
                        Err(E::custom(format!("{v} has no unit; write it as a string with one of: {}", $allowed)))
                    }
                    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!("{v} has no unit; write it as a string with one of: {}", $allowed)))
                    }
                }
                d.deserialize_any(V)
            }
        }
        impl JsonSchema for $name {
            fn schema_name() -> String { stringify!($name).to_string() }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                SchemaObject {
                    instance_type: Some(InstanceType::String.into()),
                    string: Some(Box::new(StringValidation { pattern: Some($pattern.to_string()), ..Default::default() })),
                    metadata: Some(Box::new(schemars::schema::Metadata {
                        description: Some(concat!("A ", $what, " with a unit: ", $allowed).to_string()),
                        ..Default::default()
                    })),
                    ..Default::default()
                }.into()
            }
        }
    };
}

unit_type!(
    Rate,
    u64,
    "rate",
    r"^[0-9.eE+-]+\s*(bps|Kbps|Mbps|Gbps|Tbps)$",
    "bps, Kbps, Mbps, Gbps, Tbps",
    crate::limits::MAX_RATE_BPS,
    "1000Tbps",
    [
        ("bps", 1u64),
        ("Kbps", 1_000u64),
        ("Mbps", 1_000_000u64),
        ("Gbps", 1_000_000_000u64),
        ("Tbps", 1_000_000_000_000u64)
    ]
);
unit_type!(
    Duration,
    u64,
    "duration",
    r"^[0-9.eE+-]+\s*(ps|ns|us|ms|s)$",
    "ps, ns, us, ms, s",
    crate::limits::MAX_DURATION_S * PS_PER_S,
    "86400s (one day)",
    [
        ("ps", 1u64),
        ("ns", PS_PER_NS),
        ("us", PS_PER_US),
        ("ms", PS_PER_MS),
        ("s", PS_PER_S)
    ]
);
unit_type!(
    Bytes,
    u64,
    "size",
    r"^[0-9.eE+-]+\s*(B|KB|MB|GB|KiB|MiB|GiB)$",
    "B, KB, MB, GB (powers of 1000), KiB, MiB, GiB",
    crate::limits::MAX_BYTES,
    "100GB",
    [
        ("B", 1u64),
        ("KB", 1_000u64),
        ("MB", 1_000_000u64),
        ("GB", 1_000_000_000u64),
        ("KiB", 1_024u64),
        ("MiB", 1_048_576u64),
        ("GiB", 1_073_741_824u64)
    ]
);

/// A buffer size or threshold: bytes, or a count of full-size packets (`"100pkt"`),
/// resolved against the frame size of the scenario's MTU at validation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufSize {
    Bytes(u64),
    Packets(u64),
}

impl BufSize {
    pub fn parse(s: &str) -> Result<Self, String> {
        let (v, unit) = split_num(s)?;
        if v < 0.0 {
            return Err(format!("'{s}' is negative; a buffer size must be >= 0"));
        }
        match unit {
            "pkt" | "pkts" | "packets" => {
                if v.fract() != 0.0 {
                    return Err(format!("'{s}': a packet count must be whole"));
                }
                if v > crate::limits::MAX_BUFFER_PKTS as f64 {
                    return Err(format!(
                        "'{s}' is too large; at most {}pkt",
                        crate::limits::MAX_BUFFER_PKTS
                    ));
                }
                Ok(BufSize::Packets(v as u64))
            }
            "B" | "KB" | "MB" | "GB" | "KiB" | "MiB" | "GiB" => Bytes::parse(s).map(|b| BufSize::Bytes(b.0)),
            _ => Err(format!("unit '{unit}' in '{s}' is not a buffer size; allowed units: pkt, B, KB, MB, GB, KiB, MiB, GiB")),
        }
    }
    pub fn bytes(self, frame_bytes: u64) -> u64 {
        match self {
            BufSize::Bytes(b) => b,
            // Packets <= MAX_BUFFER_PKTS and frames < 10 KB: no overflow.
            BufSize::Packets(n) => n.saturating_mul(frame_bytes),
        }
    }
}
impl fmt::Display for BufSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufSize::Bytes(b) => write!(f, "{}", Bytes(*b)),
            BufSize::Packets(n) => write!(f, "{n}pkt"),
        }
    }
}
impl Serialize for BufSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}
impl<'de> Deserialize<'de> for BufSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = serde_json::Value::deserialize(d)?;
        match s {
            serde_json::Value::String(s) => BufSize::parse(&s).map_err(serde::de::Error::custom),
            other => Err(serde::de::Error::custom(format!(
                "{other} has no unit; write a buffer size as a string such as \"100pkt\" or \"150KB\""
            ))),
        }
    }
}
impl JsonSchema for BufSize {
    fn schema_name() -> String {
        "BufSize".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        SchemaObject {
            instance_type: Some(InstanceType::String.into()),
            string: Some(Box::new(StringValidation {
                pattern: Some(r"^[0-9.eE+-]+\s*(pkt|pkts|packets|B|KB|MB|GB|KiB|MiB|GiB)$".into()),
                ..Default::default()
            })),
            metadata: Some(Box::new(schemars::schema::Metadata {
                description: Some(
                    "A buffer size: full-size packets (\"100pkt\") or bytes (\"150KB\")".into(),
                ),
                ..Default::default()
            })),
            ..Default::default()
        }
        .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_table() {
        let rates = [
            ("10Gbps", 10_000_000_000u64),
            ("2.5Gbps", 2_500_000_000),
            ("100Mbps", 100_000_000),
            ("1 Tbps", 1_000_000_000_000),
        ];
        for (s, v) in rates {
            assert_eq!(Rate::parse(s).unwrap().0, v, "{s}");
        }
        let durs = [
            ("1us", PS_PER_US),
            ("500us", 500 * PS_PER_US),
            ("13ms", 13 * PS_PER_MS),
            ("1.5ms", 1_500 * PS_PER_US),
            ("2s", 2 * PS_PER_S),
            ("1e3us", PS_PER_MS),
        ];
        for (s, v) in durs {
            assert_eq!(Duration::parse(s).unwrap().0, v, "{s}");
        }
        assert_eq!(Bytes::parse("100KB").unwrap().0, 100_000);
        assert_eq!(Bytes::parse("64KiB").unwrap().0, 65_536);
        assert_eq!(BufSize::parse("100pkt").unwrap().bytes(1538), 153_800);
        assert_eq!(BufSize::parse("150KB").unwrap().bytes(1538), 150_000);
    }

    #[test]
    fn bad_units_name_what_is_allowed() {
        let e = Rate::parse("10GB").unwrap_err();
        assert!(e.contains("not a rate") && e.contains("Gbps"), "{e}");
        let e = Duration::parse("10").unwrap_err();
        assert!(e.contains("no unit"), "{e}");
        assert!(Rate::parse("-1Gbps").unwrap_err().contains("negative"));
        assert!(Bytes::parse("abc").is_err());
    }

    #[test]
    fn display_round_trips() {
        for s in ["10Gbps", "40Gbps", "500us", "13ms", "100KB", "1.5ms"] {
            let d = if s.ends_with("bps") {
                Rate::parse(s).unwrap().to_string()
            } else if s.ends_with('s') {
                Duration::parse(s).unwrap().to_string()
            } else {
                Bytes::parse(s).unwrap().to_string()
            };
            let back = if s.ends_with("bps") {
                Rate::parse(&d).unwrap().0
            } else if s.ends_with('s') {
                Duration::parse(&d).unwrap().0
            } else {
                Bytes::parse(&d).unwrap().0
            };
            let orig = if s.ends_with("bps") {
                Rate::parse(s).unwrap().0
            } else if s.ends_with('s') {
                Duration::parse(s).unwrap().0
            } else {
                Bytes::parse(s).unwrap().0
            };
            assert_eq!(back, orig, "{s} -> {d}");
        }
    }

    #[test]
    fn serialization_time() {
        // 1500 B at 10 Gbps = 1.2 us
        assert_eq!(ser_ps(1500, 10_000_000_000), 1_200_000);
        assert_eq!(ser_ps(64, 40_000_000_000), 12_800);
        assert_eq!(ser_ps(3_000_000, 10_000_000_000), 2_400_000_000);
        assert_eq!(ser_ps(1, 3_000_000_000), 2_667);
    }
}
