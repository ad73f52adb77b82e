//! Checks of the raw value tree that serde cannot make, before it is deserialised:
//! - numbers are finite (TOML's `nan` and `inf`), JSON objects have no duplicate keys;
//! - the shape follows the scenario's JSON Schema: a list is never taken where a table
//!   belongs (serde would read `switch = ["300pkt", "5pkt"]` field by field, in order), and
//!   integers lie in the range of their field, stated in the user's terms;
//! - serde's remaining messages lose their Rust type names (`expected u8`, `struct X`).

use crate::error::Error;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// TOML value -> JSON value; a non-finite float is an error naming its path.
pub fn toml_to_json(v: toml::Value, path: &str) -> Result<Value, Error> {
    Ok(match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => match serde_json::Number::from_f64(f) {
            Some(n) => Value::Number(n),
            None => {
                return Err(Error::config(
                    path,
                    format!("{f} is not allowed; numbers must be finite"),
                ))
            }
        },
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(
            a.into_iter()
                .enumerate()
                .map(|(i, x)| toml_to_json(x, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        toml::Value::Table(t) => Value::Object(
            t.into_iter()
                .map(|(k, x)| {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    toml_to_json(x, &p).map(|x| (k, x))
                })
                .collect::<Result<_, _>>()?,
        ),
    })
}

/// A JSON value parsed with duplicate object keys rejected (serde_json keeps the last).
pub struct StrictJson(pub Value);

impl<'de> Deserialize<'de> for StrictJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StrictJson;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::from(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::String(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::String(v)))
            }
            fn visit_unit<E>(self) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::Null))
            }
            fn visit_none<E>(self) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::Null))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<StrictJson, D::Error> {
                StrictJson::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<StrictJson, A::Error> {
                let mut out = vec![];
                while let Some(StrictJson(x)) = a.next_element()? {
                    out.push(x);
                }
                Ok(StrictJson(Value::Array(out)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<StrictJson, A::Error> {
                let mut out = Map::new();
                while let Some(k) = a.next_key::<String>()? {
                    if out.contains_key(&k) {
                        return Err(serde::de::Error::custom(format!(
                            "duplicate key `{k}` (each key may appear once in an object)"
                        )));
                    }
                    let StrictJson(v) = a.next_value()?;
                    out.insert(k, v);
                }
                Ok(StrictJson(Value::Object(out)))
            }
        }
        d.deserialize_any(V)
    }
}

/// Walks a value tree along the scenario's JSON Schema.
pub struct ShapeCheck {
    defs: Map<String, Value>,
    root: Value,
}

impl ShapeCheck {
    pub fn new(schema: Value) -> ShapeCheck {
        let defs = schema
            .get("definitions")
            .and_then(|d| d.as_object())
            .cloned()
            .unwrap_or_default();
        ShapeCheck { defs, root: schema }
    }

    pub fn check(&self, tree: &Value) -> Result<(), Error> {
        if !tree.is_object() {
            return Err(Error::config(
                "",
                format!(
                    "the scenario must be a table of fields (duration, topology, ...), not {}",
                    kind(tree)
                ),
            ));
        }
        self.walk(tree, &self.root, "")
    }

    fn resolve<'a>(&'a self, s: &'a Value) -> &'a Value {
        match s.get("$ref").and_then(|r| r.as_str()) {
            Some(r) => self
                .defs
                .get(r.rsplit('/').next().unwrap_or(""))
                .unwrap_or(s),
            None => s,
        }
    }

    fn types(s: &Value) -> Vec<&str> {
        match s.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(a)) => a.iter().filter_map(|t| t.as_str()).collect(),
            _ => vec![],
        }
    }

    /// The tag value a variant schema requires (`kind = "leaf-spine"`), as (key, value).
    fn tag_of(s: &Value) -> Option<(&str, &Value)> {
        s.get("properties")?.as_object()?.iter().find_map(|(k, p)| {
            match p.get("enum").and_then(|e| e.as_array()) {
                Some(e) if e.len() == 1 => Some((k.as_str(), &e[0])),
                _ => None,
            }
        })
    }

    fn walk(&self, v: &Value, schema: &Value, path: &str) -> Result<(), Error> {
        let s = self.resolve(schema);
        if let Some(all) = s.get("allOf").and_then(|a| a.as_array()) {
            for a in all {
                self.walk(v, a, path)?;
            }
        }
        let alts = s
            .get("anyOf")
            .or_else(|| s.get("oneOf"))
            .and_then(|a| a.as_array());
        if let Some(alts) = alts {
            if v.is_null() {
                return Ok(());
            }
            let alts: Vec<&Value> = alts.iter().map(|a| self.resolve(a)).collect();
            // A tagged variant whose tag the value carries.
            for a in &alts {
                if let Some((k, want)) = Self::tag_of(a) {
                    if v.get(k) == Some(want) {
                        return self.walk(v, a, path);
                    }
                }
            }
            // A choice of names (an enum of strings, one alternative per documented name).
            let names: Vec<&str> = alts
                .iter()
                .filter_map(|a| a.get("enum").and_then(|e| e.as_array()))
                .flatten()
                .filter_map(|n| n.as_str())
                .collect();
            if !names.is_empty() && !v.is_string() && !alts.iter().any(|a| a.get("enum").is_none())
            {
                return Err(not_a_name(path, v, &names));
            }
            let wants = |t: &str| alts.iter().any(|a| Self::types(a).contains(&t));
            if v.is_array() && !wants("array") && wants("object") {
                return Err(list_for_table(path));
            }
            if v.is_object() {
                if let Some(a) = alts
                    .iter()
                    .find(|a| Self::types(a).contains(&"object") && Self::tag_of(a).is_none())
                {
                    return self.walk(v, a, path);
                }
            }
            if let Some(a) = alts.iter().find(|a| !Self::types(a).contains(&"null")) {
                if alts.len() == 2 && wants("null") {
                    return self.walk(v, a, path);
                }
            }
            return Ok(());
        }
        if let Some(e) = s.get("enum").and_then(|e| e.as_array()) {
            let names: Vec<&str> = e.iter().filter_map(|n| n.as_str()).collect();
            if !names.is_empty() && !v.is_string() && !v.is_null() {
                return Err(not_a_name(path, v, &names));
            }
        }
        let types = Self::types(s);
        match v {
            Value::Array(items) => {
                if types.contains(&"object") && !types.contains(&"array") {
                    return Err(list_for_table(path));
                }
                if let Some(item) = s.get("items") {
                    for (i, x) in items.iter().enumerate() {
                        self.walk(x, item, &format!("{path}[{i}]"))?;
                    }
                }
            }
            Value::Object(m) => {
                if let Some(props) = s.get("properties").and_then(|p| p.as_object()) {
                    for (k, x) in m {
                        if let Some(p) = props.get(k) {
                            let sub = if path.is_empty() {
                                k.clone()
                            } else {
                                format!("{path}.{k}")
                            };
                            self.walk(x, p, &sub)?;
                        }
                    }
                }
            }
            Value::Number(n) if types.contains(&"integer") => check_integer(n, s, path)?,
            _ => {}
        }
        Ok(())
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a table",
    }
}

fn not_a_name(path: &str, v: &Value, names: &[&str]) -> Error {
    Error::config(
        path,
        format!(
            "is {}, but it must be one of the names: {}",
            kind(v),
            names.join(", ")
        ),
    )
}

fn list_for_table(path: &str) -> Error {
    Error::config(
        path,
        "is a list, but a table belongs here: give its fields by name (in TOML a [section] \
         with `key = value` lines, or `{ key = value, ... }`)",
    )
}

/// An integer field's value against its range (schemars' `minimum` / `maximum`, or the range
/// its format implies).
fn check_integer(n: &serde_json::Number, s: &Value, path: &str) -> Result<(), Error> {
    let fmt_max = match s.get("format").and_then(|f| f.as_str()) {
        Some("uint8") => Some(u8::MAX as f64),
        Some("uint16") => Some(u16::MAX as f64),
        Some("uint32") => Some(u32::MAX as f64),
        _ => None,
    };
    let min = s.get("minimum").and_then(|m| m.as_f64());
    let max = s.get("maximum").and_then(|m| m.as_f64()).or(fmt_max);
    let x = n.as_f64().unwrap_or(0.0);
    let whole = n.is_i64() || n.is_u64() || x.fract() == 0.0;
    let inside = min.is_none_or(|m| x >= m) && max.is_none_or(|m| x <= m);
    if whole && inside {
        return Ok(());
    }
    let range = match (min, max) {
        (Some(a), Some(b)) => format!("whole numbers {a}..={b}"),
        (Some(a), None) => format!("whole numbers >= {a}"),
        (None, Some(b)) => format!("whole numbers <= {b}"),
        (None, None) => "whole numbers".to_string(),
    };
    Err(Error::config(
        path,
        format!("{n} is not allowed; allowed: {range}"),
    ))
}

/// serde's messages in the user's terms: no Rust type names.
pub fn humanize(msg: &str) -> String {
    let mut s = msg.to_string();
    for (from, to) in [
        ("invalid type: map,", "invalid type: a table,"),
        ("invalid type: sequence,", "invalid type: a list,"),
        ("invalid type: floating point", "invalid type: the number"),
        ("invalid type: integer", "invalid type: the whole number"),
        ("invalid type: string", "invalid type: the string"),
        ("invalid type: boolean", "invalid type: the boolean"),
        ("invalid type: null", "invalid type: nothing (null)"),
        ("expected a sequence", "expected a list"),
        ("expected a map", "expected a table"),
        ("expected string or map", "expected a name (a string)"),
        ("expected f64", "expected a number"),
        ("expected f32", "expected a number"),
        ("expected a borrowed string", "expected a string"),
    ] {
        s = s.replace(from, to);
    }
    for (ty, range) in [
        ("u8", "0..=255"),
        ("u16", "0..=65535"),
        ("u32", "0..=4294967295"),
        ("u64", ">= 0"),
        ("usize", ">= 0"),
        ("i64", ""),
    ] {
        let pat = format!("expected {ty}");
        if let Some(i) = s.find(&pat) {
            let end = i + pat.len();
            if s[end..].chars().next().is_none_or(|c| !c.is_alphanumeric()) {
                let what = if range.is_empty() {
                    "expected a whole number".to_string()
                } else {
                    format!("expected a whole number {range}")
                };
                s.replace_range(i..end, &what);
            }
        }
    }
    // "expected struct SwitchConfig", "expected internally tagged enum X", "expected enum X".
    for pat in [
        "expected internally tagged enum ",
        "expected struct ",
        "expected enum ",
    ] {
        while let Some(i) = s.find(pat) {
            let rest = &s[i + pat.len()..];
            let len = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let to = if pat.contains("enum ") && !pat.contains("tagged") {
                "expected one of the allowed names"
            } else {
                "expected a table"
            };
            s.replace_range(i..i + pat.len() + len, to);
        }
    }
    s
}
