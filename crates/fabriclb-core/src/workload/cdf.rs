//! Empirical flow-size distributions (CDFs) and the other flow-size laws of the Poisson patterns.
//!
//! # File format
//! One point per line: `size cdf`, two numbers separated by whitespace. `#` starts a comment
//! (to the end of the line); blank lines are ignored. Sizes are bytes (or packets, with
//! `cdf_unit = "packets"`: a packet is `packet_size` bytes, the MSS); cdf values are fractions
//! in [0, 1] or percentages in [0, 100] (`cdf_scale`; by default detected from the last
//! point: 100 means percent). Both columns must be non-decreasing and the last cdf must be 1
//! (or 100). A first point with cdf > 0 is a point mass at that size.
//!
//! # Interpolation
//! Between two points the CDF is linear, i.e. sizes are uniform within each segment. Sampling
//! is by inverse transform on that piecewise-linear CDF and the mean is computed with the same
//! interpolation (`E[S] = c0·s0 + Σ (c_i − c_{i−1})(s_{i−1} + s_i)/2`), so the arrival rate
//! derived from a target load matches what the generator produces. Sampled sizes are rounded
//! to whole bytes, at least 1.
//!
//! Built-in CDFs (embedded, so the core works without files): `web-search`, `data-mining`,
//! `data-mining-ns3`, `enterprise`, `hadoop` (see `workloads/README.md` for provenance). Any other name is a file
//! path, relative to the current directory (or to the scenario's directory when the caller
//! knows it).

use crate::error::Error;
use crate::rng::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The built-in CDFs: (name, file text).
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "web-search",
        include_str!("../../../../workloads/web-search.cdf"),
    ),
    (
        "data-mining",
        include_str!("../../../../workloads/data-mining.cdf"),
    ),
    (
        "data-mining-ns3",
        include_str!("../../../../workloads/data-mining-ns3.cdf"),
    ),
    (
        "enterprise",
        include_str!("../../../../workloads/enterprise.cdf"),
    ),
    (
        "hadoop",
        include_str!("../../../../workloads/hadoop-percent.cdf"),
    ),
];

/// Names of the built-in CDFs.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// Unit of the size column of a CDF file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CdfUnit {
    /// Sizes are bytes.
    #[default]
    Bytes,
    /// Sizes are packets of `packet_size` bytes (the MSS: payload per packet).
    Packets,
}

/// Scale of the cdf column of a CDF file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CdfScale {
    /// Percent if the last cdf value is 100, fractions otherwise.
    #[default]
    Auto,
    /// Fractions in [0, 1].
    Fraction,
    /// Percentages in [0, 100].
    Percent,
}

/// How to read a CDF file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CdfOptions {
    pub unit: CdfUnit,
    /// Bytes per packet when `unit` is packets.
    pub packet_bytes: u64,
    pub scale: CdfScale,
}

impl Default for CdfOptions {
    fn default() -> Self {
        CdfOptions {
            unit: CdfUnit::Bytes,
            packet_bytes: 1460,
            scale: CdfScale::Auto,
        }
    }
}

/// A piecewise-linear flow-size CDF, in bytes and fractions.
#[derive(Clone, Debug, PartialEq)]
pub struct Cdf {
    /// Where it came from (built-in name or file path), for messages.
    pub source: String,
    /// (size in bytes, cumulative probability in [0, 1]); both non-decreasing; last p = 1.
    pub points: Vec<(f64, f64)>,
    mean: f64,
}

impl Cdf {
    /// Parse CDF text. `source` names it in errors.
    pub fn parse(text: &str, source: &str, opts: CdfOptions) -> Result<Cdf, Error> {
        let err = |line: usize, msg: String| Error::Cdf {
            source: source.to_string(),
            line,
            msg,
        };
        let mut raw: Vec<(f64, f64, usize)> = vec![];
        let mut n_lines = 0;
        for (i, line) in text.lines().enumerate() {
            let ln = i + 1;
            n_lines = ln;
            let body = line.split('#').next().unwrap_or("").trim();
            if body.is_empty() {
                continue;
            }
            let cols: Vec<&str> = body.split_whitespace().collect();
            if cols.len() != 2 {
                return Err(err(
                    ln,
                    format!(
                        "expected two numbers `size cdf`, found {} field(s): '{body}'",
                        cols.len()
                    ),
                ));
            }
            let num = |s: &str, what: &str| -> Result<f64, Error> {
                match s.parse::<f64>() {
                    Ok(v) if v.is_finite() => Ok(v),
                    _ => Err(err(ln, format!("the {what} '{s}' is not a finite number"))),
                }
            };
            let size = num(cols[0], "size")?;
            let p = num(cols[1], "cdf value")?;
            if size < 0.0 {
                return Err(err(
                    ln,
                    format!("the size {size} is negative; sizes must be >= 0"),
                ));
            }
            let max = crate::limits::MAX_BYTES as f64;
            if size
                * if opts.unit == CdfUnit::Packets {
                    opts.packet_bytes as f64
                } else {
                    1.0
                }
                > max
            {
                return Err(err(
                    ln,
                    format!("the size {size} is too large; a flow may have at most {max:.0} bytes"),
                ));
            }
            if p < 0.0 {
                return Err(err(ln, format!("the cdf value {p} is negative; cdf values must be in [0, 1] (or [0, 100] in percent)")));
            }
            // Values above 100 are out of range under either scale; above 1 when fractions
            // were asked for. (With auto-detection, 1 < p <= 100 is judged at the end.)
            if p > 100.0 || (opts.scale == CdfScale::Fraction && p > 1.0) {
                let range = if opts.scale == CdfScale::Fraction {
                    "[0, 1]"
                } else {
                    "[0, 1] (or [0, 100] in percent)"
                };
                return Err(err(ln, format!("the cdf value {p} is outside {range}")));
            }
            if let Some(&(ps, pp, _)) = raw.last() {
                if size < ps {
                    return Err(err(
                        ln,
                        format!("sizes must be non-decreasing, but {size} follows {ps}"),
                    ));
                }
                if p < pp {
                    return Err(err(
                        ln,
                        format!("cdf values must be non-decreasing, but {p} follows {pp}"),
                    ));
                }
            }
            raw.push((size, p, ln));
        }
        let Some(&(_, last_p, last_ln)) = raw.last() else {
            return Err(err(
                n_lines.max(1),
                "the CDF has no data points (expected lines `size cdf`)".into(),
            ));
        };
        let percent = match opts.scale {
            CdfScale::Percent => true,
            CdfScale::Fraction => false,
            CdfScale::Auto => (last_p - 100.0).abs() < 1e-9,
        };
        let top = if percent { 100.0 } else { 1.0 };
        for &(_, p, ln) in &raw {
            if p > top + 1e-9 {
                let range = if percent {
                    "[0, 100] (percent)"
                } else {
                    "[0, 1] (or [0, 100] in percent, ending at 100)"
                };
                return Err(err(ln, format!("the cdf value {p} is outside {range}")));
            }
        }
        if (last_p - top).abs() > 1e-9 * top {
            let want = if percent {
                "100 (percent)"
            } else {
                "1 (or 100 in percent)"
            };
            return Err(err(
                last_ln,
                format!("the last cdf value is {last_p}; it must be {want}"),
            ));
        }
        let mul = match opts.unit {
            CdfUnit::Bytes => 1.0,
            CdfUnit::Packets => opts.packet_bytes as f64,
        };
        let points: Vec<(f64, f64)> = raw
            .iter()
            .map(|&(s, p, _)| (s * mul, (p / top).min(1.0)))
            .collect();
        if points.last().map(|p| p.0).unwrap_or(0.0) <= 0.0 {
            return Err(err(
                last_ln,
                "all sizes are 0; the largest size must be > 0".into(),
            ));
        }
        let mut mean = points[0].0 * points[0].1;
        for w in points.windows(2) {
            mean += (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0;
        }
        Ok(Cdf {
            source: source.to_string(),
            points,
            mean,
        })
    }

    /// A built-in CDF by name.
    pub fn builtin(name: &str) -> Option<Cdf> {
        BUILTIN.iter().find(|(n, _)| *n == name).map(|(n, text)| {
            Cdf::parse(text, n, CdfOptions::default()).expect("built-in CDFs are valid")
        })
    }

    /// A built-in name, or else a file path (relative paths are taken relative to `base_dir`
    /// when given, else to the current directory). `path` is the config field, for messages.
    pub fn load(
        spec: &str,
        opts: CdfOptions,
        base_dir: Option<&Path>,
        path: &str,
    ) -> Result<Cdf, Error> {
        if let Some(c) = Cdf::builtin(spec) {
            if opts.unit != CdfUnit::Bytes || opts.scale != CdfScale::Auto {
                return Err(Error::config(path, format!("'{spec}' is a built-in CDF (bytes, known scale); cdf_unit and cdf_scale apply only to CDF files")));
            }
            return Ok(c);
        }
        if spec.trim().is_empty() {
            return Err(Error::config(
                path,
                format!(
                    "is empty; give a built-in CDF ({}) or a file path",
                    builtin_names().join(", ")
                ),
            ));
        }
        let p = Path::new(spec);
        let full = match base_dir {
            Some(d) if p.is_relative() => d.join(p),
            _ => p.to_path_buf(),
        };
        let text = read_limited(&full).map_err(|e| {
            Error::config(
                path,
                format!(
                    "'{spec}' is neither a built-in CDF ({}) nor a readable file ({}: {e})",
                    builtin_names().join(", "),
                    full.display()
                ),
            )
        })?;
        Cdf::parse(&text, &full.display().to_string(), opts)
    }

    /// Mean flow size in bytes (same interpolation as [`Cdf::sample`]).
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The size at cumulative probability `u` in [0, 1) (inverse of the piecewise-linear CDF).
    pub fn quantile(&self, u: f64) -> f64 {
        let pts = &self.points;
        if u < pts[0].1 {
            return pts[0].0;
        }
        // First point whose cdf exceeds u (exists since the last cdf is 1 > u).
        let i = pts
            .partition_point(|&(_, p)| p <= u)
            .min(pts.len() - 1)
            .max(1);
        let (s0, p0) = pts[i - 1];
        let (s1, p1) = pts[i];
        if p1 <= p0 {
            return s1;
        }
        s0 + (s1 - s0) * (u - p0) / (p1 - p0)
    }

    /// Draw a size in whole bytes (at least 1).
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        (self.quantile(rng.f64()).round() as u64).max(1)
    }
}

/// The text of a regular file of at most `limits::MAX_FILE_BYTES`. A FIFO or a device is
/// refused before it is opened (opening a FIFO blocks until a writer comes).
fn read_limited(p: &Path) -> Result<String, String> {
    use std::io::Read;
    let max = crate::limits::MAX_FILE_BYTES;
    let meta = std::fs::metadata(p).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file (a folder, FIFO, device or socket)".into());
    }
    if meta.len() > max {
        return Err(format!(
            "{} bytes, larger than the limit of {max}",
            meta.len()
        ));
    }
    let mut buf = String::new();
    std::fs::File::open(p)
        .and_then(|f| f.take(max + 1).read_to_string(&mut buf))
        .map_err(|e| e.to_string())?;
    if buf.len() as u64 > max {
        return Err(format!("larger than the limit of {max} bytes"));
    }
    Ok(buf)
}

/// A flow-size law: an empirical CDF, a fixed size, or an exponential.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeLaw {
    Cdf(Cdf),
    Fixed(u64),
    Exponential(f64),
}

impl SizeLaw {
    /// Mean size in bytes.
    pub fn mean(&self) -> f64 {
        match self {
            SizeLaw::Cdf(c) => c.mean(),
            SizeLaw::Fixed(s) => *s as f64,
            SizeLaw::Exponential(m) => *m,
        }
    }
    /// E[⌈S / mss⌉]: the mean number of segments of a flow. For a CDF this is E[S]/mss plus
    /// the mean rounding-up, which lies in [0, 1) and matters for small flows only, so a
    /// midpoint rule over 2^16 quantiles computes it to well under a segment.
    pub fn mean_segments(&self, mss: u32) -> f64 {
        let m = mss.max(1) as f64;
        let segs = |s: f64| (s / m).ceil();
        match self {
            SizeLaw::Cdf(c) => {
                const N: usize = 1 << 16;
                let round_up: f64 = (0..N)
                    .map(|i| {
                        let s = c.quantile((i as f64 + 0.5) / N as f64).round().max(1.0);
                        segs(s) - s / m
                    })
                    .sum();
                c.mean() / m + round_up / N as f64
            }
            SizeLaw::Fixed(s) => segs(*s as f64),
            // ⌈X/m⌉ of an exponential X is geometric on {1, 2, ...}.
            SizeLaw::Exponential(mean) => 1.0 / (1.0 - (-m / mean).exp()),
        }
    }
    /// Draw a size in bytes (at least 1).
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match self {
            SizeLaw::Cdf(c) => c.sample(rng),
            SizeLaw::Fixed(s) => *s,
            SizeLaw::Exponential(m) => (rng.exp(*m).round() as u64).max(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_segments_of_each_size_law() {
        // (law, E[ceil(S / 1460)])
        let exact = [
            (SizeLaw::Fixed(1), 1.0),
            (SizeLaw::Fixed(1460), 1.0),
            (SizeLaw::Fixed(1461), 2.0),
            (SizeLaw::Fixed(10_000), 7.0),
            (SizeLaw::Exponential(1460.0), 1.0 / (1.0 - (-1.0f64).exp())),
        ];
        for (law, want) in exact {
            assert!((law.mean_segments(1460) - want).abs() < 1e-12, "{law:?}");
        }
        // CDFs: against the mean over 10^6 draws (standard error < 0.7% for data-mining).
        for name in ["web-search", "data-mining"] {
            let law = SizeLaw::Cdf(Cdf::builtin(name).unwrap());
            let mut rng = Rng::new(1, 0);
            let n = 1_000_000;
            let drawn: f64 = (0..n)
                .map(|_| law.sample(&mut rng).div_ceil(1460) as f64)
                .sum::<f64>()
                / n as f64;
            let got = law.mean_segments(1460);
            assert!(
                (got / drawn - 1.0).abs() < 0.03,
                "{name}: {got} vs drawn {drawn}"
            );
            // Above E[S]/mss by less than one segment.
            let lo = law.mean() / 1460.0;
            assert!(got > lo && got < lo + 1.0, "{name}: {got} vs {lo}");
        }
    }

    #[test]
    fn builtins_parse_and_have_the_readme_means() {
        // Means from workloads/README.md (linear interpolation).
        let cases = [
            ("web-search", 1_711_250.0),
            ("data-mining", 7_470_236.0),
            ("data-mining-ns3", 12_658_198.6),
            ("enterprise", 216_304.05),
            ("hadoop", 121_848.94),
        ];
        for (name, mean) in cases {
            let c = Cdf::builtin(name).unwrap();
            assert!(
                (c.mean() - mean).abs() / mean < 1e-6,
                "{name}: {} vs {mean}",
                c.mean()
            );
        }
        assert_eq!(builtin_names().len(), BUILTIN.len());
    }

    /// (fraction of flows above `x` bytes, fraction of the bytes they carry), with the CDF's
    /// linear interpolation (sizes uniform within each segment).
    fn tail_above(c: &Cdf, x: f64) -> (f64, f64) {
        let (mut flows, mut bytes) = (0.0, 0.0);
        let mut prev = (c.points[0].0, 0.0);
        for &(s, p) in &c.points {
            let (s0, p0) = prev;
            if s > x && p > p0 {
                // The part of the segment above x: uniform on [max(s0, x), s].
                let lo = s0.max(x);
                let share = if s > s0 { (s - lo) / (s - s0) } else { 1.0 };
                flows += (p - p0) * share;
                bytes += (p - p0) * share * (lo + s) / 2.0;
            }
            prev = (s, p);
        }
        (flows, bytes / c.mean())
    }

    #[test]
    fn data_mining_has_the_conga_papers_35_mb_statistics() {
        // CONGA §5.2: "95% of all data bytes belonging to ~3.6% of flows that are larger than
        // 35MB". The ns-2 VL2 CDF (data-mining) gives 3.65% and 95.1%; the ns-3 one
        // (data-mining-ns3) 4.0% and 97.6%, outside the paper's band.
        let (flows, bytes) = tail_above(&Cdf::builtin("data-mining").unwrap(), 35e6);
        assert!((flows - 0.036).abs() <= 0.004, "{flows}");
        assert!((0.93..=0.965).contains(&bytes), "{bytes}");
        let (flows, bytes) = tail_above(&Cdf::builtin("data-mining-ns3").unwrap(), 35e6);
        assert!((flows - 0.0401).abs() < 5e-4 && (bytes - 0.9764).abs() < 5e-4);
        // The helper on a case worked by hand: uniform on [0, 100], above 75: a quarter of the
        // flows, (0.25 * 87.5) / 50 = 43.75% of the bytes.
        let u = Cdf::parse("0 0\n100 1\n", "t", CdfOptions::default()).unwrap();
        let (f, b) = tail_above(&u, 75.0);
        assert!((f - 0.25).abs() < 1e-12 && (b - 0.4375).abs() < 1e-12);
    }

    #[test]
    fn quantile_interpolates_linearly_and_handles_point_masses() {
        let c = Cdf::parse("100 0.5\n200 0.5\n300 1\n", "t", CdfOptions::default()).unwrap();
        assert_eq!(c.quantile(0.0), 100.0);
        assert_eq!(c.quantile(0.49), 100.0);
        assert_eq!(c.quantile(0.5), 200.0);
        assert!((c.quantile(0.75) - 250.0).abs() < 1e-9);
        // mean = 0.5*100 + 0 + 0.5*250
        assert!((c.mean() - 175.0).abs() < 1e-9);
    }
}
