//! Just enough HTTP/1.1 for the fake: reading one request at a time from a
//! kept-alive connection, and writing answers with an exact Content-Length.

use super::util::parse_query;
use serde_json::{Value, json};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;

const MAX_HEADER_LINE: u64 = 16 * 1024;
const MAX_HEADERS: usize = 200;
const MAX_BODY: usize = 16 * 1024 * 1024;

/// One parsed request.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    /// The path without the query string, as sent.
    pub path: String,
    /// The raw query string, without `?`.
    pub query: String,
    /// The query, percent-decoded, in order.
    pub query_pairs: Vec<(String, String)>,
    pub version: String,
    /// Header names lowercased, in order, duplicates kept.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// First header with that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The body as JSON, if it is JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// Every header with that (lowercase) name, in order.
    pub fn headers_named(&self, name: &str) -> Vec<&str> {
        self.headers.iter().filter(|(k, _)| k == name).map(|(_, v)| v.as_str()).collect()
    }

    /// First query parameter with that name (decoded).
    pub fn query_param(&self, name: &str) -> Option<&str> {
        self.query_pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Whether the client asked for the connection to end after this exchange.
    pub fn wants_close(&self) -> bool {
        let conn = self.headers_named("connection").join(",").to_ascii_lowercase();
        let tokens: Vec<&str> = conn.split(',').map(str::trim).collect();
        if self.version == "HTTP/1.0" { !tokens.contains(&"keep-alive") } else { tokens.contains(&"close") }
    }
}

/// What reading from a connection produced.
pub enum ReadOutcome {
    Request(Request),
    /// The peer closed (or the socket was shut down) between requests.
    Closed,
    /// Bytes arrived that are not an HTTP/1.x request.
    Malformed(String),
}

fn read_line(reader: &mut BufReader<TcpStream>) -> io::Result<Option<String>> {
    let mut buf = Vec::new();
    let n = reader.by_ref().take(MAX_HEADER_LINE).read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        buf.pop();
    }
    Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
}

/// Reads the next request from a connection (an error reads as a close).
/// Answers `Expect: 100-continue` itself so a client that waits for it is
/// not stuck.
pub fn read_request(reader: &mut BufReader<TcpStream>) -> io::Result<ReadOutcome> {
    // Tolerate stray blank lines between kept-alive requests.
    let line = loop {
        match read_line(reader)? {
            None => return Ok(ReadOutcome::Closed),
            Some(l) if l.is_empty() => continue,
            Some(l) => break l,
        }
    };
    let mut it = line.split(' ');
    let (Some(method), Some(target), Some(version)) = (it.next(), it.next(), it.next()) else {
        return Ok(ReadOutcome::Malformed(format!("bad request line: {line:?}")));
    };
    if !version.starts_with("HTTP/1.") || method.is_empty() {
        return Ok(ReadOutcome::Malformed(format!("bad request line: {line:?}")));
    }
    let mut headers = Vec::new();
    loop {
        let Some(h) = read_line(reader)? else {
            return Ok(ReadOutcome::Closed);
        };
        if h.is_empty() {
            break;
        }
        if headers.len() >= MAX_HEADERS {
            return Ok(ReadOutcome::Malformed("too many headers".into()));
        }
        let Some((k, v)) = h.split_once(':') else {
            return Ok(ReadOutcome::Malformed(format!("bad header line: {h:?}")));
        };
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (target.to_string(), String::new()),
    };
    let mut req = Request {
        method: method.to_string(),
        query_pairs: parse_query(&query),
        path,
        query,
        version: version.to_string(),
        headers,
        body: Vec::new(),
    };

    if req.header("expect").is_some_and(|e| e.eq_ignore_ascii_case("100-continue")) {
        reader.get_mut().write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }

    // resmon-mcp always sends a Content-Length; a chunked body is refused
    // (and the connection closed) rather than misread.
    if !req.headers_named("transfer-encoding").is_empty() {
        return Ok(ReadOutcome::Malformed("the fake backend reads Content-Length bodies only".into()));
    }
    if let Some(cl) = req.header("content-length") {
        let Ok(n) = cl.trim().parse::<usize>() else {
            return Ok(ReadOutcome::Malformed(format!("bad content-length {cl:?}")));
        };
        if n > MAX_BODY {
            return Ok(ReadOutcome::Malformed("request body too large".into()));
        }
        let mut body = vec![0u8; n];
        reader.read_exact(&mut body)?;
        req.body = body;
    }
    Ok(ReadOutcome::Request(req))
}

/// A complete answer held in memory.
#[derive(Clone, Debug)]
pub struct Response {
    pub status: u16,
    /// Every header except Content-Length, which is always computed on write.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// A JSON answer, serialised compactly the way FastAPI's JSONResponse does.
    pub fn json(status: u16, v: &Value) -> Response {
        Response {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: serde_json::to_vec(v).unwrap_or_default(),
        }
    }

    /// `{"detail": "<message>"}`.
    pub fn detail(status: u16, msg: &str) -> Response {
        Response::json(status, &json!({ "detail": msg }))
    }

    /// A body with an explicit content type.
    pub fn bytes(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Response {
        Response { status, headers: vec![("content-type".into(), content_type.into())], body: body.into() }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.to_ascii_lowercase(), value.to_string()));
        self
    }
}

/// The reason phrases of the statuses the fake answers with.
const REASONS: &str = "100 Continue|200 OK|201 Created|202 Accepted|204 No Content|301 Moved Permanently|\
    302 Found|307 Temporary Redirect|400 Bad Request|401 Unauthorized|403 Forbidden|404 Not Found|\
    405 Method Not Allowed|409 Conflict|413 Content Too Large|422 Unprocessable Entity|\
    429 Too Many Requests|500 Internal Server Error|502 Bad Gateway|503 Service Unavailable|\
    504 Gateway Timeout";

pub fn reason_phrase(status: u16) -> &'static str {
    let code = format!("{status} ");
    REASONS.split('|').find_map(|reason| reason.strip_prefix(code.as_str())).unwrap_or("Unknown")
}

/// The status line and headers, with a Content-Length of `content_length`.
pub fn head_bytes(status: u16, headers: &[(String, String)], content_length: usize, close: bool) -> Vec<u8> {
    let mut head = format!("HTTP/1.1 {} {}\r\n", status, reason_phrase(status));
    head.push_str("server: resmon-fake\r\n");
    for (k, v) in headers {
        if k.eq_ignore_ascii_case("content-length") || k.eq_ignore_ascii_case("connection") {
            continue;
        }
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("content-length: {content_length}\r\n"));
    if close {
        head.push_str("connection: close\r\n");
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// Writes a whole answer.
pub fn write_response(w: &mut impl Write, r: &Response, close: bool) -> io::Result<()> {
    let mut out = head_bytes(r.status, &r.headers, r.body.len(), close);
    out.extend_from_slice(&r.body);
    w.write_all(&out)?;
    w.flush()
}
