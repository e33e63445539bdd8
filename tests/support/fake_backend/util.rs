//! Small helpers the fake needs and std does not provide: clock formatting,
//! random tokens and UUIDs, Python-flavoured JSON text, percent-decoding.

use serde_json::Value;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

// ---------------------------------------------------------------- time

/// Seconds and microseconds since the Unix epoch.
pub fn now() -> (i64, u32) {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    (d.as_secs() as i64, d.subsec_micros())
}

/// Days since 1970-01-01 to a (year, month, day) civil date (proleptic Gregorian).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn parts(secs: i64) -> (i64, u32, u32, i64, i64, i64) {
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    (y, mo, d, rem / 3600, (rem % 3600) / 60, rem % 60)
}

/// `YYYY-MM-DD HH:MM:SS`, the shape of SQLite's CURRENT_TIMESTAMP columns.
pub fn fmt_sqlite(secs: i64) -> String {
    let (y, mo, d, h, mi, s) = parts(secs);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
}

/// `YYYY-MM-DDTHH:MM:SSZ`.
pub fn fmt_iso_z(secs: i64) -> String {
    let (y, mo, d, h, mi, s) = parts(secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// `YYYY-MM-DDTHH:MM:SS.ffffff+00:00`, what Python's aware `isoformat()` prints.
pub fn fmt_iso_micros(secs: i64, micros: u32) -> String {
    let (y, mo, d, h, mi, s) = parts(secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{micros:06}+00:00")
}

/// `YYYY-MM-DD` of a moment.
pub fn fmt_date(secs: i64) -> String {
    let (y, mo, d, ..) = parts(secs);
    format!("{y:04}-{mo:02}-{d:02}")
}

// ---------------------------------------------------------------- randomness

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Random bytes from the OS when it offers a device for them, otherwise from
/// std's randomly keyed SipHash (good enough for a test double, and portable).
pub fn random_bytes(n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom")
        && f.read_exact(&mut out).is_ok()
    {
        return out;
    }
    let mut filled = 0;
    while filled < n {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        let (s, us) = now();
        h.write_i64(s);
        h.write_u32(us);
        h.write_u32(std::process::id());
        for b in h.finish().to_le_bytes() {
            if filled < n {
                out[filled] = b;
                filled += 1;
            }
        }
    }
    out
}

/// URL-safe base64 without padding.
pub fn base64url(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut s = String::with_capacity(bytes.len() * 4 / 3 + 3);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            s.push(T[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    s
}

/// A token shaped like Python's `secrets.token_urlsafe(32)`: 43 characters.
pub fn mint_token() -> String {
    base64url(&random_bytes(32))
}

/// A canonical lowercase version-4 UUID.
pub fn mint_uuid4() -> String {
    let mut b = random_bytes(16);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// The backend's rule for `expected_runtime_id`: hyphenated 8-4-4-4-12,
/// lowercase hex only, version nibble 4. Variant bits are not looked at.
pub fn is_canonical_uuid4(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 36 {
        return false;
    }
    for (i, c) in b.iter().enumerate() {
        let ok = match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_digit() || (b'a'..=b'f').contains(c),
        };
        if !ok {
            return false;
        }
    }
    b[14] == b'4'
}

// ---------------------------------------------------------------- Python-ish text

/// JSON text with Python's `json.dumps` defaults: `", "` and `": "` separators
/// and non-ASCII escaped. resmon stores its JSON-in-string columns this way.
pub fn py_json(v: &Value) -> String {
    let mut out = String::new();
    py_json_into(v, &mut out);
    out
}

fn py_json_into(v: &Value, out: &mut String) {
    match v {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_json_into(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&ascii_json_string(k));
                out.push_str(": ");
                py_json_into(item, out);
            }
            out.push('}');
        }
        Value::String(s) => out.push_str(&ascii_json_string(s)),
        other => out.push_str(&other.to_string()),
    }
}

fn ascii_json_string(s: &str) -> String {
    let quoted = Value::String(s.to_string()).to_string();
    let mut out = String::with_capacity(quoted.len());
    for c in quoted.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

/// What Python's `str()` makes of a decoded JSON value (how settings PUT stores values).
pub fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

fn py_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
        Value::Array(a) => format!("[{}]", a.iter().map(py_repr).collect::<Vec<_>>().join(", ")),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter().map(|(k, x)| format!("'{}': {}", k, py_repr(x))).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// Python truthiness of a decoded JSON value.
pub fn py_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

// ---------------------------------------------------------------- URLs

/// Percent-decodes `s`; with `plus_is_space`, `+` becomes a space (query strings).
pub fn percent_decode(s: &str, plus_is_space: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(v) => {
                        out.push(v);
                        i += 3;
                    }
                    Err(_) => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Splits a raw query string into decoded pairs, keeping order and duplicates.
pub fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (percent_decode(k, true), percent_decode(v, true)),
            None => (percent_decode(p, true), String::new()),
        })
        .collect()
}

/// Percent-encodes a query value (used when the fake builds URLs for itself).
pub fn percent_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
