//! The crate's one error type. Every variant carries a message a user can act on: which
//! field, what is wrong, what is allowed. The core never panics on user input.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A scenario field is missing, unknown or out of range. `path` is dotted
    /// (`topology.fabric_rate`, `workload[0].load`); empty for the whole scenario.
    Config { path: String, msg: String },
    /// The scenario text is not valid TOML / JSON.
    Syntax(String),
    /// A file could not be read or written.
    Io(String),
    /// A flow-size CDF file is malformed (`line` is 1-based).
    Cdf {
        source: String,
        line: usize,
        msg: String,
    },
    /// An invariant of the simulation was violated: a bug, never the user's fault.
    Invariant(String),
    /// The run was stopped from outside (Ctrl-C).
    Cancelled,
}

impl Error {
    pub fn config(path: &str, msg: impl Into<String>) -> Error {
        Error::Config {
            path: path.to_string(),
            msg: msg.into(),
        }
    }
    /// A short machine-readable kind, used by the Python layer to choose an exception class.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Config { .. } => "config",
            Error::Syntax(_) => "syntax",
            Error::Io(_) => "io",
            Error::Cdf { .. } => "cdf",
            Error::Invariant(_) => "invariant",
            Error::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config { path, msg } if path.is_empty() => write!(f, "invalid scenario: {msg}"),
            Error::Config { path, msg } => write!(f, "invalid scenario field `{path}`: {msg}"),
            Error::Syntax(m) => write!(f, "{m}"),
            Error::Io(m) => write!(f, "{m}"),
            Error::Cdf { source, line, msg } => {
                write!(f, "bad flow-size CDF {source}, line {line}: {msg}")
            }
            Error::Invariant(m) => write!(
                f,
                "simulation invariant violated (a bug in fabriclb, please report it): {m}"
            ),
            Error::Cancelled => write!(f, "the run was cancelled"),
        }
    }
}

impl std::error::Error for Error {}
