//! Internally tagged configuration enums whose errors keep the path inside the variant.
//!
//! serde's derived deserializer for `#[serde(tag = "...")]` buffers the map before choosing the
//! variant, so an error in a variant's field loses its location ("topology: unit 'GB' is not a
//! rate" instead of "topology.fabric_rate: ..."). [`tagged_enum!`] declares the enum (derived
//! `Serialize` and `JsonSchema`, so schemas and canonical JSON are unchanged) and a
//! `Deserialize` that reads the tag, then deserialises the variant's struct with
//! `serde_path_to_error` and passes the inner path out in the message, where
//! `Scenario::from_value` joins it to the outer path. The variant list is written once.

use serde::de::DeserializeOwned;

/// Marks an inner path inside an error message: `\u{1}path\u{1}message`.
pub const PATH_MARK: char = '\u{1}';

/// Deserialise a variant's struct from the map without its tag, keeping the error's path.
pub fn inner<T: DeserializeOwned, E: serde::de::Error>(
    map: serde_json::Map<String, serde_json::Value>,
) -> Result<T, E> {
    serde_path_to_error::deserialize(serde_json::Value::Object(map)).map_err(|e| {
        let path = e.path().to_string();
        let msg = e.inner().to_string();
        if path == "." || path.is_empty() {
            E::custom(msg)
        } else {
            E::custom(format!("{PATH_MARK}{path}{PATH_MARK}{msg}"))
        }
    })
}

/// Join an outer path and a message that may carry inner paths (possibly nested).
pub fn split_path(outer: &str, msg: &str) -> (String, String) {
    let mut path = outer.to_string();
    let mut rest = msg;
    while let Some(r) = rest.strip_prefix(PATH_MARK) {
        match r.split_once(PATH_MARK) {
            Some((p, m)) => {
                let sep = if path.is_empty() || p.starts_with('[') {
                    ""
                } else {
                    "."
                };
                path = format!("{path}{sep}{p}");
                rest = m;
            }
            None => break,
        }
    }
    (path, rest.to_string())
}

#[macro_export]
macro_rules! tagged_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident tag = $tag:literal {
            $( $(#[$vmeta:meta])* $vname:literal => $variant:ident($ty:ty), )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
        #[serde(tag = $tag)]
        $vis enum $name {
            $( $(#[$vmeta])* #[serde(rename = $vname)] $variant($ty), )*
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                use serde::de::Error as _;
                let mut map = <serde_json::Map<String, serde_json::Value> as serde::Deserialize>::deserialize(d)?;
                let names: &[&str] = &[$($vname),*];
                let tag = match map.remove($tag) {
                    Some(serde_json::Value::String(s)) => s,
                    Some(other) => return Err(D::Error::custom(format!("{m}{}{m}must be a string, one of: {}; not {}", $tag, names.join(", "), other, m = $crate::scenario::tagged::PATH_MARK))),
                    None => return Err(D::Error::custom(format!("missing field `{}` (one of: {})", $tag, names.join(", ")))),
                };
                match tag.as_str() {
                    $( $vname => $crate::scenario::tagged::inner::<$ty, D::Error>(map).map($name::$variant), )*
                    other => Err(D::Error::custom(format!("{m}{}{m}unknown {} `{}`; allowed: {}", $tag, $tag, other, names.join(", "), m = $crate::scenario::tagged::PATH_MARK))),
                }
            }
        }
    };
}
