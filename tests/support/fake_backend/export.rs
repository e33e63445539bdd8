//! Reference files (BibTeX, RIS, CSV, JSON) in the layout shapes.md describes.

use super::http::Response;
use serde_json::Value;
use std::collections::BTreeSet;

pub const COLUMNS: [&str; 9] = [
    "title",
    "authors",
    "publication_date",
    "doi",
    "url",
    "source_repository",
    "external_id",
    "categories",
    "abstract",
];

pub const FORMATS: [&str; 4] = ["bibtex", "csv", "json", "ris"];

/// Content type and file extension of a format, None when unknown.
pub fn format_info(format: &str) -> Option<(&'static str, &'static str)> {
    match format {
        "bibtex" => Some(("application/x-bibtex", "bib")),
        "ris" => Some(("application/x-research-info-systems", "ris")),
        "csv" => Some(("text/csv", "csv")),
        "json" => Some(("application/json", "json")),
        _ => None,
    }
}

pub fn unknown_format(format: &str) -> Response {
    Response::detail(
        400,
        &format!("Unknown export format '{format}'. Expected one of: {}.", FORMATS.join(", ")),
    )
}

/// Renders `docs` as a file answer with the usual headers.
pub fn render(docs: &[&Value], format: &str, include_ids: bool, stem: &str) -> Response {
    let (ctype, ext) = format_info(format).unwrap_or(("application/x-bibtex", "bib"));
    let body = match format {
        "json" => json_text(docs, include_ids),
        "csv" => csv_text(docs),
        "ris" => ris_text(docs),
        _ => bibtex_text(docs),
    };
    Response::bytes(200, ctype, body)
        .with_header("content-disposition", &format!("attachment; filename=\"{stem}.{ext}\""))
        .with_header("x-resmon-document-count", &docs.len().to_string())
}

fn field<'a>(d: &'a Value, key: &str) -> Option<&'a str> {
    d.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn authors_of(d: &Value) -> Vec<String> {
    field(d, "authors")
        .map(|a| a.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect())
        .unwrap_or_default()
}

fn year_of(d: &Value) -> Option<String> {
    field(d, "publication_date")
        .and_then(|p| p.get(0..4))
        .filter(|y| y.chars().all(|c| c.is_ascii_digit()))
        .map(str::to_string)
}

// ---------------------------------------------------------------- JSON

fn json_text(docs: &[&Value], include_ids: bool) -> String {
    if docs.is_empty() {
        return "[]".into();
    }
    let mut out = String::from("[\n");
    for (i, d) in docs.iter().enumerate() {
        out.push_str("  {\n");
        let mut lines: Vec<String> = COLUMNS
            .iter()
            .map(|c| {
                let v = d.get(*c).cloned().unwrap_or(Value::Null);
                format!("    \"{c}\": {v}")
            })
            .collect();
        if include_ids {
            lines.push(format!("    \"id\": {}", d.get("id").cloned().unwrap_or(Value::Null)));
        }
        out.push_str(&lines.join(",\n"));
        out.push_str("\n  }");
        if i + 1 < docs.len() {
            out.push(',');
        }
        out.push('\n');
    }
    out.push(']');
    out
}

// ---------------------------------------------------------------- CSV

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

fn csv_text(docs: &[&Value]) -> String {
    let mut out = COLUMNS.join(",");
    out.push_str("\r\n");
    for d in docs {
        let row: Vec<String> =
            COLUMNS.iter().map(|c| csv_cell(&collapse(field(d, c).unwrap_or("")))).collect();
        out.push_str(&row.join(","));
        out.push_str("\r\n");
    }
    out
}

// ---------------------------------------------------------------- BibTeX

fn latex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '{' | '}' | '$' | '&' | '%' | '#' | '_' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            _ => out.push(c),
        }
    }
    out
}

fn letters_lower(s: &str) -> String {
    s.chars().filter(|c| c.is_alphabetic()).flat_map(char::to_lowercase).collect()
}

fn bib_key(d: &Value) -> String {
    let surname = authors_of(d)
        .first()
        .and_then(|a| a.split_whitespace().last().map(letters_lower))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "anon".into());
    let year = year_of(d).unwrap_or_else(|| "nodate".into());
    let word = field(d, "title")
        .unwrap_or("")
        .split_whitespace()
        .map(letters_lower)
        .find(|w| w.chars().count() > 3)
        .unwrap_or_default();
    format!("{surname}{year}{word}")
}

fn bibtex_text(docs: &[&Value]) -> String {
    let mut used = BTreeSet::new();
    let mut entries = Vec::new();
    for d in docs {
        let base = bib_key(d);
        let mut key = base.clone();
        let mut n = 2;
        while used.contains(&key) {
            key = format!("{base}{n}");
            n += 1;
        }
        used.insert(key.clone());
        let kind = if field(d, "doi").is_some() { "article" } else { "misc" };
        let mut fields = Vec::new();
        let mut push = |name: &str, value: String| {
            fields.push(format!("  {name} = {{{}}}", latex_escape(&value)));
        };
        if let Some(t) = field(d, "title") {
            push("title", t.to_string());
        }
        let authors = authors_of(d);
        if !authors.is_empty() {
            push("author", authors.join(" and "));
        }
        if let Some(y) = year_of(d) {
            push("year", y);
        }
        if let Some(v) = field(d, "doi") {
            push("doi", v.to_string());
        }
        if let Some(v) = field(d, "url") {
            push("url", v.to_string());
        }
        if let Some(v) = field(d, "source_repository") {
            push("note", format!("Retrieved via resmon from {v}"));
        }
        if let Some(v) = field(d, "categories") {
            push("keywords", v.to_string());
        }
        if let Some(v) = field(d, "abstract") {
            push("abstract", collapse(v));
        }
        entries.push(format!("@{kind}{{{key},\n{}\n}}", fields.join(",\n")));
    }
    if entries.is_empty() { String::new() } else { format!("{}\n", entries.join("\n\n")) }
}

// ---------------------------------------------------------------- RIS

fn ris_text(docs: &[&Value]) -> String {
    let mut out = String::new();
    for d in docs {
        let mut line = |tag: &str, v: &str| out.push_str(&format!("{tag}  - {v}\n"));
        line("TY", if field(d, "doi").is_some() { "JOUR" } else { "GEN" });
        if let Some(t) = field(d, "title") {
            line("TI", &collapse(t));
        }
        for a in authors_of(d) {
            line("AU", &a);
        }
        if let Some(y) = year_of(d) {
            line("PY", &y);
        }
        if let Some(p) = field(d, "publication_date") {
            line("DA", &p.replace('-', "/"));
        }
        if let Some(v) = field(d, "abstract") {
            line("AB", &collapse(v));
        }
        if let Some(v) = field(d, "doi") {
            line("DO", v);
        }
        if let Some(v) = field(d, "url") {
            line("UR", v);
        }
        if let Some(c) = field(d, "categories") {
            for k in c.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                line("KW", k);
            }
        }
        if let Some(v) = field(d, "source_repository") {
            line("DP", v);
        }
        out.push_str("ER  - \n\n");
    }
    out
}
