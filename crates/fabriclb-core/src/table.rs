//! Column tables: the shape in which results leave the core (CSV for the CLI, columns for
//! pandas through the binding). Every column a table can carry is documented in docs/OUTPUTS.md.

use std::fmt::Write;

#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Str(Vec<String>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn write_cell(&self, i: usize, out: &mut String) {
        match self {
            Column::U64(v) => write!(out, "{}", v[i]).unwrap(),
            Column::I64(v) => write!(out, "{}", v[i]).unwrap(),
            // Shortest representation that round-trips: byte-identical across runs.
            Column::F64(v) => {
                if v[i].is_finite() {
                    write!(out, "{}", v[i]).unwrap()
                } else {
                    out.push_str("")
                }
            }
            Column::Str(v) => {
                let s = &v[i];
                if s.contains([',', '"', '\n']) {
                    write!(out, "\"{}\"", s.replace('"', "\"\"")).unwrap()
                } else {
                    out.push_str(s)
                }
            }
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn push(&mut self, name: &str, c: Column) {
        debug_assert!(
            self.columns.is_empty() || self.columns[0].1.len() == c.len(),
            "column {name} length"
        );
        self.columns.push((name.to_string(), c));
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map(|c| c.1.len()).unwrap_or(0)
    }
    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.0 == name).map(|c| &c.1)
    }
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        out.push_str(
            &self
                .columns
                .iter()
                .map(|c| c.0.as_str())
                .collect::<Vec<_>>()
                .join(","),
        );
        out.push('\n');
        for i in 0..self.rows() {
            for (j, (_, c)) in self.columns.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                c.write_cell(i, &mut out);
            }
            out.push('\n');
        }
        out
    }
}
