//! Small helpers the fake needs and std does not provide: clock formatting,
//! random tokens and UUIDs, percent-decoding.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds and microseconds since the Unix epoch.
pub fn now() -> (i64, u32) {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    (d.as_secs() as i64, d.subsec_micros())
}

/// (year, month, day, hour, minute, second) of a moment (proleptic Gregorian).
fn parts(secs: i64) -> (i64, i64, i64, i64, i64, i64) {
    let z = secs.div_euclid(86_400) + 719_468;
    let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let rem = secs.rem_euclid(86_400);
    (yoe + era * 400 + i64::from(m <= 2), m, d, rem / 3600, (rem % 3600) / 60, rem % 60)
}

/// `YYYY-MM-DD HH:MM:SS`, the shape of SQLite's CURRENT_TIMESTAMP columns.
pub fn fmt_sqlite(secs: i64) -> String {
    fmt_time(secs, ' ', "")
}

/// `YYYY-MM-DD{sep}HH:MM:SS{tail}`: with `T`, ISO 8601 (`Z`, or `.ffffff+00:00`
/// as Python's aware `isoformat()` prints it).
pub fn fmt_time(secs: i64, sep: char, tail: &str) -> String {
    let (y, mo, d, h, mi, s) = parts(secs);
    format!("{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:{s:02}{tail}")
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Random bytes from std's randomly keyed SipHash: portable, and enough for a test double.
fn random_bytes(n: usize) -> Vec<u8> {
    let block = |_| {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        h.finish().to_le_bytes()
    };
    (0..n.div_ceil(8)).flat_map(block).take(n).collect()
}

/// A token shaped like Python's `secrets.token_urlsafe(32)`: 43 URL-safe base64 characters.
pub fn mint_token() -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    random_bytes(43).iter().map(|b| T[usize::from(b & 63)] as char).collect()
}

/// A canonical lowercase version-4 UUID.
pub fn mint_uuid4() -> String {
    let mut b = random_bytes(16);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// The backend's rule for `expected_runtime_id`: 8-4-4-4-12 lowercase hex, version nibble 4.
pub fn is_canonical_uuid4(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b[14] == b'4'
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_digit() || (b'a'..=b'f').contains(c),
        })
}

/// Percent-decodes a query component; `+` is a space.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        let plain = if b[i] == b'+' { b' ' } else { b[i] };
        let (byte, width) = hex.filter(|_| b[i] == b'%').map_or((plain, 1), |v| (v, 3));
        out.push(byte);
        i += width;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Splits a raw query string into decoded pairs, keeping order and duplicates.
pub fn parse_query(q: &str) -> Vec<(String, String)> {
    let pair = |p: &str| {
        let (k, v) = p.split_once('=').unwrap_or((p, ""));
        (percent_decode(k), percent_decode(v))
    };
    q.split('&').filter(|p| !p.is_empty()).map(pair).collect()
}
