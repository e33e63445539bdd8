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

/// One line without its end; the peer closing reads as an error.
fn read_line(reader: &mut BufReader<TcpStream>) -> io::Result<String> {
    let mut buf = Vec::new();
    if reader.by_ref().take(MAX_HEADER_LINE).read_until(b'\n', &mut buf)? == 0 {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        buf.pop();
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Reads the next request, or what is wrong with bytes that are not an HTTP/1.x request;
/// an error (the peer's close among them) ends the connection. Answers `Expect:
/// 100-continue` itself, so a client that waits for it is not stuck.
pub fn read_request(reader: &mut BufReader<TcpStream>) -> io::Result<Result<Request, String>> {
    // Tolerate stray blank lines between kept-alive requests.
    let mut line = read_line(reader)?;
    while line.is_empty() {
        line = read_line(reader)?;
    }
    let (method, target, version) = match line.split(' ').collect::<Vec<_>>()[..] {
        [method, target, version, ..] if version.starts_with("HTTP/1.") && !method.is_empty() => {
            (method, target, version)
        }
        _ => return Ok(Err(format!("bad request line: {line:?}"))),
    };
    let mut headers = Vec::new();
    loop {
        let h = read_line(reader)?;
        if h.is_empty() {
            break;
        }
        if headers.len() >= MAX_HEADERS {
            return Ok(Err("too many headers".into()));
        }
        let Some((k, v)) = h.split_once(':') else {
            return Ok(Err(format!("bad header line: {h:?}")));
        };
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let (method, version, body) = (method.to_string(), version.to_string(), Vec::new());
    let (path, query_pairs, query) = (path.to_string(), parse_query(query), query.to_string());
    let mut req = Request { method, path, query, query_pairs, version, headers, body };
    if req.header("expect").is_some_and(|e| e.eq_ignore_ascii_case("100-continue")) {
        reader.get_mut().write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    // resmon-mcp always sends a Content-Length; a chunked body is refused
    // (and the connection closed) rather than misread.
    if !req.headers_named("transfer-encoding").is_empty() {
        return Ok(Err("the fake backend reads Content-Length bodies only".into()));
    }
    if let Some(cl) = req.header("content-length").map(str::to_string) {
        match cl.trim().parse::<usize>() {
            Ok(n) if n <= MAX_BODY => req.body = vec![0u8; n],
            Ok(_) => return Ok(Err("request body too large".into())),
            Err(_) => return Ok(Err(format!("bad content-length {cl:?}"))),
        }
        reader.read_exact(&mut req.body)?;
    }
    Ok(Ok(req))
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
        Response::bytes(status, "application/json", serde_json::to_vec(v).unwrap_or_default())
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
    let mut head = format!("HTTP/1.1 {status} {}\r\nserver: resmon-fake\r\n", reason_phrase(status));
    let computed = |k: &str| k.eq_ignore_ascii_case("content-length") || k.eq_ignore_ascii_case("connection");
    for (k, v) in headers.iter().filter(|(k, _)| !computed(k)) {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    let close = if close { "connection: close\r\n" } else { "" };
    head.push_str(&format!("content-length: {content_length}\r\n{close}\r\n"));
    head.into_bytes()
}

/// Writes a whole answer.
pub fn write_response(w: &mut impl Write, r: &Response, close: bool) -> io::Result<()> {
    w.write_all(&[head_bytes(r.status, &r.headers, r.body.len(), close), r.body.clone()].concat())?;
    w.flush()
}
