//! The fault modes as data: each row of the table declares a [`Fault`] and its
//! [`Mode`] (what is answered, how much of it goes on the wire, how the
//! connection ends), which `serve_connection` serves alike: a new fault is a row.

use super::http::{Request, Response, head_bytes, reason_phrase};
use serde_json::{Map, Value, json};
use std::time::Duration;

/// One row of the fault table.
pub struct Mode {
    /// Waited before the route's work.
    pub delay: Duration,
    pub answer: Answer,
    /// Written first, each then a short pause.
    pub preface: Vec<Vec<u8>>,
    pub wire: Wire,
    pub end: End,
}

/// What is answered. The route's answer is a test's override, else the route's own, its work done.
pub enum Answer {
    Own,
    Changed(Box<dyn FnOnce(Response) -> Response>),
    /// This answer; the route never sees the request.
    Instead(Response),
    /// This answer; the guard and the route never run.
    Guard(Response),
    /// This answer once the route's work is done (a write stored).
    After(Response),
}

/// How much of the answer is written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    Whole,
    Nothing,
    /// A head promising the whole body and more than is sent, then the body's first N bytes.
    BodyUpTo(usize),
    /// The status line and the first header.
    StatusLine,
    /// The whole answer with a header named with a space right after its status line.
    BadHeader,
    /// These bytes in place of the answer.
    Raw(&'static [u8]),
}

/// How the connection ends once the answer is written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Kept for the next request, unless the client asked for a close.
    KeepAlive,
    Close,
    /// Kept open and silent until stop or the peer leaves.
    Hang,
    /// Reset (an abortive close) on Linux, closed elsewhere.
    Reset,
    /// This byte every 20 ms until stop or the peer leaves: an answer that never ends.
    Drip(u8),
}

use Answer::{After, Changed, Guard, Instead, Own};
use End::{Close, Drip, Hang, KeepAlive, Reset};
use Wire::{BadHeader, BodyUpTo, Nothing, Raw, StatusLine, Whole};

/// Declares [`Fault`] and its table from rows: a fault's docs, name, fields and mode (of the fields,
/// the request, `decoy`, a path on the decoy port as a URL, and `reused`, a connection used before).
macro_rules! fault_table {
    (|$req:ident, $decoy:ident, $reused:ident|
     $($(#[$attr:meta])* $name:ident $(($($field:ident: $ty:ty),+))? => $mode:expr,)+) => {
        /// Ways to make the fake misbehave.
        #[derive(Clone, Debug, Default, PartialEq, Eq)]
        pub enum Fault {
            $($(#[$attr])* $name $(($($ty),+))?,)+
        }

        impl Fault {
            /// This fault's row of the table.
            pub fn mode(self, $req: &Request, $decoy: &dyn Fn(&str) -> String, $reused: bool) -> Mode {
                match self {
                    $(Fault::$name $(($($field),+))? => $mode,)+
                }
            }
        }
    };
}

fault_table! { |req, decoy, reused|
    /// The route's own answer.
    #[default]
    None => row(Own, Whole, KeepAlive),
    /// The route's own answer, after this many milliseconds.
    Slow(ms: u64) => Mode { delay: Duration::from_millis(ms), ..row(Own, Whole, KeepAlive) },
    /// Never answer; the socket stays open until stop or the client leaves.
    Hang => silent(Hang),
    CloseWithoutAnswer => silent(Close),
    /// A reset without a byte of answer (Linux; elsewhere a close).
    ResetWithoutAnswer => silent(Reset),
    /// A close without a byte of answer on a connection that carried a request before, the
    /// route's own answer on a new one: an idle connection closed as the client reused it.
    CloseIfReused => if reused { silent(Close) } else { row(Own, Whole, KeepAlive) },
    /// A 200 head and half its body, then close.
    ResetMidBody => padded('y', Close),
    /// A 200 head and half its body, then silence on an open connection.
    StallMidBody => padded('z', Hang),
    /// A Content-Length larger than the body sent, then close.
    LyingContentLength =>
        row(Instead(json(200, format!("{:<4096}", r#"{"status":"ok"}"#))), BodyUpTo(15), Close),
    /// The route's status and first N bytes of body under a head with only a JSON type, then close.
    BreakOff(sent: usize) => row(Changed(Box::new(json_head)), BodyUpTo(sent), Close),
    /// As `BreakOff` under the route's own head, then silence on an open connection.
    StallAfter(sent: usize) => row(Own, BodyUpTo(sent), Hang),
    /// As `StallAfter`, then a reset (Linux; elsewhere a close).
    ResetAfter(sent: usize) => row(Own, BodyUpTo(sent), Reset),
    /// The route's status line and one header (its work done), then silence.
    StallInHead => row(Own, StatusLine, Hang),
    /// The route's answer (its work done) with an invalid header line after its status line.
    InvalidHeader => row(Own, BadHeader, Close),
    /// A status line, then a header one byte every 20 ms: only a total bound ends it.
    TrickleHead => row(Instead(json(0, "")), Raw(b"HTTP/1.1 200 OK\r\nx-trickle: "), Drip(b'a')),
    /// A 200 head promising 1 MiB, then one byte of body every 20 ms.
    TrickleBody => row(Instead(json(200, " ".repeat(1 << 20))), BodyUpTo(0), Drip(b' ')),
    /// 200 application/json, a valid JSON body of 20 MiB.
    Oversize => instead(200, &format!(r#"{{"status":"ok","padding":"{}"}}"#, "x".repeat((20 << 20) - 28))),
    /// 500 text/html with a Python traceback in it.
    Html500 => row(Instead(Response::bytes(500, "text/html; charset=utf-8", HTML_500)), Whole, KeepAlive),
    /// 200 application/json whose body is not JSON.
    NonJson200 => instead(200, "this is not JSON <html><body>upstream said no</body></html>"),
    WrongShape200 => instead(200, "[1,2,3]"),
    NullsBody200 => instead(200, "{}"),
    /// That status with that body (application/json).
    Status(code: u16, body: String) => instead(code, &body),
    /// 401 token_invalid, in place of the guard.
    Unauthorized => row(Guard(super::token_invalid()), Whole, KeepAlive),
    /// 403 host_refused, in place of the guard.
    HostRefused => row(Guard(super::host_refused()), Whole, KeepAlive),
    /// 302 to the decoy port (see `FakeBackend::redirect_target_hits`).
    Redirect => {
        let found = Response::bytes(302, "text/plain; charset=utf-8", "Found");
        row(Instead(found.with_header("location", &decoy("/api/health"))), Whole, KeepAlive)
    },
    /// The route's work done, then this status, a `Location` naming this path on the
    /// decoy port (never to be reached or shown) and this JSON body.
    RedirectTo(code: u16, path: String, body: String) =>
        row(After(json(code, body).with_header("location", &decoy(&path))), Whole, KeepAlive),
    /// The route's work done, then this status, content type and body: a resmon
    /// that did what was asked and failed while answering.
    StoredThen(code: u16, content_type: String, body: String) =>
        row(After(Response::bytes(code, &content_type, body)), Whole, KeepAlive),
    /// The route's answer with one more header of this many bytes: a head too large to read.
    BigHead(bytes: usize) => changed(move |r| r.with_header("x-big", &"b".repeat(bytes))),
    /// The route's answer with the request's token in `detail`, `message` and a `note`
    /// in nested objects and rows; a status below 400 becomes 200.
    EchoToken => {
        let token = req.header("authorization").and_then(super::bearer).unwrap_or_default().to_string();
        changed(move |r| {
            let status = if r.status < 400 { 200 } else { r.status };
            Response { status, ..rewrite(r, |body| echo_token(body, &token)) }
        })
    },
    /// The route's answer with this key removed from every object in it: rows that lack a field.
    DropKey(key: String) => changed(move |r| rewrite(r, |body| {
        each_object(body?, &mut |object| { object.shift_remove(&key); })
    })),
    /// The route's answer with this key null in every object in it.
    NullKey(key: String) => changed(move |r| rewrite(r, |body| {
        each_object(body?, &mut |object| {
            if let Some(value) = object.get_mut(&key) {
                *value = Value::Null;
            }
        })
    })),
    /// The route's answer with its top-level key `from` renamed `to`: a write answered under another key.
    RenameKey(from: String, to: String) => changed(move |r| rewrite(r, |body| {
        let mut object = body?.as_object().cloned()?;
        if let Some(value) = object.shift_remove(&from) {
            object.insert(to, value);
        }
        Some(Value::Object(object).to_string())
    })),
    /// The route's answer with each top-level key of this object set to its value, null included.
    SetKeys(keys: Value) => Fault::SetKeysIn(String::new(), keys).mode(req, decoy, reused),
    /// As `SetKeys`, in every object the path leads to (`papers/*`: `*` for each element).
    SetKeysIn(path: String, keys: Value) => changed(move |r| rewrite(r, |body| {
        let mut body = body.filter(Value::is_object)?;
        set_keys_in(&mut body, &path, &keys);
        Some(body.to_string())
    })),
    /// The route's answer with this key written once more, with this value, at the end of its object.
    RepeatKey(key: String, value: Value) => changed(move |r| rewrite(r, |body| {
        let text = body.filter(Value::is_object)?.to_string();
        let comma = if text.len() > 2 { "," } else { "" };
        Some(format!("{}{comma}{}:{value}}}", &text[..text.len() - 1], Value::String(key)))
    })),
    /// These bytes (an interim `100 Continue`, a blank line), a pause, then the inner fault.
    Preceded(first: String, then: Box<Fault>) => {
        let mut mode = then.mode(req, decoy, reused);
        mode.preface.insert(0, first.into_bytes());
        mode
    },
}

fn row(answer: Answer, wire: Wire, end: End) -> Mode {
    Mode { delay: Duration::ZERO, answer, preface: Vec::new(), wire, end }
}

/// Not a byte of answer, then this end; the route never sees the request.
fn silent(end: End) -> Mode {
    row(Instead(json(0, "")), Nothing, end)
}

/// This JSON text in place of the route's answer.
fn instead(status: u16, body: &str) -> Mode {
    row(Instead(json(status, body)), Whole, KeepAlive)
}

/// The route's answer, changed by `edit`.
fn changed(edit: impl FnOnce(Response) -> Response + 'static) -> Mode {
    row(Changed(Box::new(edit)), Whole, KeepAlive)
}

/// A 200 head promising `{"status":"ok","padding":"ccc…"}`, half of it, then `end`.
fn padded(c: char, end: End) -> Mode {
    let body = format!(r#"{{"status":"ok","padding":"{}"}}"#, c.to_string().repeat(4000));
    let half = body.len() / 2;
    row(Instead(json(200, body)), BodyUpTo(half), end)
}

fn json(status: u16, body: impl Into<Vec<u8>>) -> Response {
    Response::bytes(status, "application/json", body)
}

impl Mode {
    /// What the log keeps of `answer`: its status once a status line went out and
    /// the answer ends, its body when it went out whole.
    pub fn recorded(&self, answer: &Response) -> (u16, Vec<u8>) {
        let status = if self.wire == Nothing || matches!(self.end, Drip(_)) { 0 } else { answer.status };
        // An oversized body is not kept: a test that sends many would hold them all.
        let whole = self.wire == Whole && answer.body.len() <= 16 << 20;
        (status, if whole { answer.body.clone() } else { Vec::new() })
    }

    /// The bytes for `answer`; a head before the whole body says `connection: close` when
    /// the connection ends after it (the client asked, or the mode's end).
    pub fn bytes(&self, answer: &Response, client_close: bool) -> Vec<u8> {
        let Response { status, headers, body } = answer;
        let (close, whole) = (client_close || self.end == Close, body.len());
        let (mut out, sent) = match self.wire {
            Nothing => (Vec::new(), 0),
            Raw(bytes) => (bytes.to_vec(), 0),
            StatusLine => (
                format!("HTTP/1.1 {status} {}\r\nserver: resmon-fake\r\n", reason_phrase(*status))
                    .into_bytes(),
                0,
            ),
            BodyUpTo(sent) => {
                (head_bytes(*status, headers, whole.max(sent.min(whole) + 1), false), sent.min(whole))
            }
            Whole => (head_bytes(*status, headers, whole, close), whole),
            BadHeader => {
                let mut head = head_bytes(*status, headers, whole, close);
                let line_end = head.iter().position(|b| *b == b'\n').map_or(0, |at| at + 1);
                head.splice(line_end..line_end, b"bad header: 1\r\n".iter().copied());
                (head, whole)
            }
        };
        out.extend_from_slice(&body[..sent]);
        out
    }
}

/// Only a JSON content type in the head, whatever the route sent.
fn json_head(resp: Response) -> Response {
    Response { headers: json(0, "").headers, ..resp }
}

/// The answer with the JSON text `edit` makes of its JSON body (None when not JSON), its
/// status and other headers kept; when `edit` declines, the answer passes unchanged.
fn rewrite(resp: Response, edit: impl FnOnce(Option<Value>) -> Option<String>) -> Response {
    let Some(text) = edit(serde_json::from_slice(&resp.body).ok()) else { return resp };
    let mut out = json(resp.status, text);
    out.headers.extend(resp.headers.into_iter().filter(|(name, _)| name != "content-type"));
    out
}

/// `value` as JSON text once `f` has seen every object in it, at any depth, outer ones first.
fn each_object(mut value: Value, f: &mut impl FnMut(&mut Map<String, Value>)) -> Option<String> {
    fn walk(value: &mut Value, f: &mut impl FnMut(&mut Map<String, Value>)) {
        match value {
            Value::Object(object) => {
                f(object);
                object.values_mut().for_each(|inner| walk(inner, f));
            }
            Value::Array(items) => items.iter_mut().for_each(|inner| walk(inner, f)),
            _ => (),
        }
    }
    walk(&mut value, f);
    Some(value.to_string())
}

/// Sets each key of `keys` in every object `path` leads to inside `value`.
fn set_keys_in(value: &mut Value, path: &str, keys: &Value) {
    let (step, rest) = path.split_once('/').unwrap_or((path, ""));
    match (step, value) {
        ("", Value::Object(object)) => {
            object.extend(keys.as_object().into_iter().flatten().map(|(k, v)| (k.clone(), v.clone())))
        }
        ("*", Value::Array(items)) => items.iter_mut().for_each(|item| set_keys_in(item, rest, keys)),
        (step, Value::Object(object)) if step != "*" => {
            object.get_mut(step).into_iter().for_each(|inner| set_keys_in(inner, rest, keys))
        }
        _ => (),
    }
}

/// The token planted in the string fields of a JSON answer, or in a body of its own.
fn echo_token(body: Option<Value>, token: &str) -> Option<String> {
    let sentence = format!("bad token {token}");
    let auth_line = format!("Authorization: Bearer {token}");
    let note = |o: &mut Map<String, Value>| {
        o.insert("note".into(), Value::String(sentence.clone()));
    };
    let planted = match body {
        Some(Value::Object(mut m)) => {
            m.values_mut().filter_map(Value::as_object_mut).for_each(note);
            m.insert("detail".into(), Value::String(sentence.clone()));
            m.insert("message".into(), Value::String(auth_line));
            Value::Object(m)
        }
        Some(Value::Array(mut a)) if !a.is_empty() => {
            a.iter_mut().filter_map(Value::as_object_mut).for_each(note);
            Value::Array(a)
        }
        Some(Value::Array(_)) => json!([{"note": sentence}]),
        _ => json!({"detail": sentence, "message": auth_line}),
    };
    Some(planted.to_string())
}

const HTML_500: &str = r#"<!DOCTYPE html>
<html><head><title>500 Internal Server Error</title></head>
<body><h1>Internal Server Error</h1>
<pre>Traceback (most recent call last):
  File "/opt/resmon/venv/lib/python3.12/site-packages/uvicorn/protocols/http/h11_impl.py", line 403, in run_asgi
    result = await app(self.scope, self.receive, self.send)
  File "/opt/resmon/resmon_scripts/resmon.py", line 2211, in handler
    rows = conn.execute(sql, params).fetchall()
sqlite3.OperationalError: synthetic failure raised by the fake backend for a test
</pre></body></html>
"#;
