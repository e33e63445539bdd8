//! The socket under the one agent: it resolves an IP literal in place and
//! cuts every wait for input into short slices, so that a call's deadline
//! holds, and it notes in a shared `Watch` what ureq does not report (the
//! status line of an answer whose head then failed, an interim status, a
//! reset, whether the connection was new, whether any byte of an answer
//! came, and the cut at a 2xx status line that `status_only` asks for).
//!
//! It owns the bytes on the wire and nothing above them: it never builds a
//! request, never judges a status and never names resmon in a sentence;
//! those are the parent module's and `refusal`'s. The only platform-specific
//! code of the backend (a wait on Windows is never sliced) lives here.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{Buffers, ConnectionDetails, Connector, NextTimeout, Transport};

/// Resolves `http://<IP literal>:<port>` without a lookup and without a
/// thread; any other host goes to ureq's own resolver.
#[derive(Debug)]
pub(super) struct LiteralResolver;

impl Resolver for LiteralResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let literal = uri.host().and_then(|host| host.parse::<IpAddr>().ok());
        match (literal, uri.port_u16()) {
            (Some(ip), Some(port)) => {
                let mut addresses = self.empty();
                addresses.push(SocketAddr::new(ip, port));
                Ok(addresses)
            }
            _ => DefaultResolver::default().resolve(uri, config, timeout),
        }
    }
}

/// The longest single wait on a socket. A socket's own read timeout is
/// rounded up by the kernel in proportion to its length (Linux's timer
/// wheel: a 20 s wait ended 1.6 s late), so a long wait is made of short
/// ones, each rounded by at most a few milliseconds, and the call's deadline
/// holds to within that (contract-notes 4).
const WAIT_SLICE: Duration = Duration::from_millis(50);

/// What the transport saw of the current exchange that ureq does not
/// report: the status line of an answer whose head then failed (too large,
/// stalled, not valid HTTP), an interim (1xx) status before it, and a reset,
/// which ureq reads as a close once a body has begun. `Backend::exchange`
/// clears it before each request.
#[derive(Debug, Default)]
pub(in crate::backend) struct Seen {
    /// Whether the next input is the start of an answer's head.
    pub(super) watching: bool,
    /// Whether a 2xx final status line ends the read there, the rest of its
    /// head and its body unread (`Backend::status_only`).
    pub(super) stop_at_success: bool,
    /// The last interim (1xx) status passed over before the final one.
    pub(super) interim: Option<u16>,
    /// The final status of the answer, once its status line arrived whole.
    pub(super) status: Option<u16>,
    /// Whether the read was ended here at a 2xx status line, as
    /// `stop_at_success` asks.
    pub(super) cut: bool,
    /// Whether a read ended in a reset (or abort) of the connection.
    pub(super) reset: bool,
    /// Whether the exchange opened a new connection rather than reuse the
    /// one kept from an earlier exchange.
    pub(super) fresh: bool,
    /// Whether any byte of an answer arrived.
    pub(super) any_input: bool,
}

/// Shared between the agent's connector (each connection's transport
/// writes to it) and the backend (which reads it); no thread is involved,
/// ureq only requires its parts to be `Send + Sync`.
pub(in crate::backend) type Watch = Arc<Mutex<Seen>>;

pub(super) fn seen(watch: &Watch) -> MutexGuard<'_, Seen> {
    watch.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The status of an HTTP/1.x status line at the start of `input`, once its
/// line end has arrived; `Err` when the input cannot be the start of one.
pub(super) fn status_line(input: &[u8]) -> Result<Option<u16>, ()> {
    const PREFIX: &[u8] = b"HTTP/1.";
    let start = &input[..input.len().min(PREFIX.len())];
    if !PREFIX.starts_with(start) {
        return Err(());
    }
    let Some(end) = input.iter().position(|byte| *byte == b'\n') else { return Ok(None) };
    let line = &input[..end];
    // As httparse reads it: HTTP/1.0 or HTTP/1.1, a space, three digits,
    // then a space or the line's end; anything else is no status line.
    if !matches!(line.get(7), Some(b'0' | b'1')) || !matches!(line.get(12), None | Some(b' ' | b'\r')) {
        return Err(());
    }
    let code = line.get(9..12).filter(|_| line.get(8) == Some(&b' ')).ok_or(())?;
    let text = std::str::from_utf8(code).map_err(|_| ())?;
    if !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(());
    }
    text.parse().map(Some).map_err(|_| ())
}

/// The statuses at the start of an answer, read as ureq reads them: blank
/// lines before a status line are passed over (httparse does so), and so is
/// an interim head (1xx, except 101, which ureq hands on as the answer) once
/// its closing blank line arrived, so that `status` is the final status.
/// `Err` when the input cannot be the start of an answer.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Heads {
    interim: Option<u16>,
    status: Option<u16>,
}

pub(super) fn heads(mut input: &[u8]) -> Result<Heads, ()> {
    let mut heads = Heads::default();
    loop {
        while let Some(rest) = input.strip_prefix(b"\r\n").or_else(|| input.strip_prefix(b"\n")) {
            input = rest;
        }
        if input == b"\r" {
            return Ok(heads);
        }
        let Some(status) = status_line(input)? else { return Ok(heads) };
        if !(100..200).contains(&status) || status == 101 {
            heads.status = Some(status);
            return Ok(heads);
        }
        heads.interim = Some(status);
        // An interim head ends at its first blank line.
        let end = (0..input.len()).filter(|at| input[*at] == b'\n').find_map(|at| {
            let after = &input[at + 1..];
            if after.starts_with(b"\r\n") {
                Some(at + 3)
            } else if after.starts_with(b"\n") {
                Some(at + 2)
            } else {
                None
            }
        });
        match end {
            Some(end) => input = &input[end..],
            None => return Ok(heads),
        }
    }
}

/// Puts every connection ureq opens inside a [`Sliced`] transport.
#[derive(Debug)]
pub(super) struct SlicedWaits(pub(super) Watch);

impl Connector<Box<dyn Transport>> for SlicedWaits {
    type Out = Sliced;

    fn connect(
        &self,
        _details: &ConnectionDetails,
        chained: Option<Box<dyn Transport>>,
    ) -> Result<Option<Sliced>, ureq::Error> {
        // Called only for a connection ureq opens, never for one it reuses.
        if chained.is_some() {
            seen(&self.0).fresh = true;
        }
        Ok(chained.map(|transport| Sliced(transport, self.0.clone())))
    }
}

/// A transport whose waits for input are at most [`WAIT_SLICE`] each, until
/// the wait ureq asked for has passed, and which notes in its [`Watch`] what
/// each wait brought. Writes go through unchanged: resmon's requests are
/// small enough for the socket's buffer.
#[derive(Debug)]
pub(super) struct Sliced(Box<dyn Transport>, Watch);

impl Sliced {
    fn wait(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        // Windows leaves a socket in an unknown state after a receive timed
        // out, so there a wait is never cut short and resumed.
        let until = Instant::now().checked_add(*timeout.after);
        let Some(until) = until.filter(|_| !cfg!(windows) && !timeout.after.is_not_happening()) else {
            return self.0.await_input(timeout);
        };
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let slice = left.min(WAIT_SLICE);
            let step = NextTimeout { after: slice.into(), ..timeout };
            match self.0.await_input(step) {
                Err(ureq::Error::Timeout(_)) if left > slice => continue,
                other => return other,
            }
        }
    }
}

impl Transport for Sliced {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.0.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        self.0.transmit_output(amount, timeout)
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        let result = self.wait(timeout);
        let mut seen = seen(&self.1);
        if result.is_ok() && !self.0.buffers().input().is_empty() {
            seen.any_input = true;
        }
        match &result {
            Ok(_) if seen.watching => match heads(self.0.buffers().input()) {
                Ok(Heads { interim, status }) => {
                    seen.interim = interim.or(seen.interim);
                    if let Some(status) = status {
                        seen.status = Some(status);
                        seen.watching = false;
                        if seen.stop_at_success && (200..300).contains(&status) {
                            // Ends the exchange here: `Backend::exchange`
                            // reads `cut` and answers with the status alone.
                            seen.cut = true;
                            return Err(ureq::Error::Io(std::io::Error::other(
                                "the status line was all that was wanted of this answer",
                            )));
                        }
                    }
                }
                Err(()) => seen.watching = false,
            },
            Err(ureq::Error::Io(io))
                if matches!(
                    io.kind(),
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::ConnectionAborted
                ) =>
            {
                seen.reset = true;
            }
            _ => (),
        }
        result
    }

    fn is_open(&mut self) -> bool {
        self.0.is_open()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interim_heads_and_blank_lines_are_passed_over_as_ureq_does() {
        let heads = |input: &[u8]| heads(input).map(|heads| (heads.interim, heads.status));
        assert_eq!(
            heads(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nx: y"),
            Ok((Some(100), Some(201)))
        );
        assert_eq!(heads(b"HTTP/1.1 100 Continue\r\n\r\n"), Ok((Some(100), None)));
        assert_eq!(heads(b"HTTP/1.1 100 Continue\r\n"), Ok((Some(100), None)), "its head not ended yet");
        assert_eq!(
            heads(
                b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 100 Continue\n\nHTTP/1.1 200 OK\r\n"
            ),
            Ok((Some(100), Some(200)))
        );
        assert_eq!(heads(b"\r\nHTTP/1.1 201 Created\r\n"), Ok((None, Some(201))), "a stray blank line");
        assert_eq!(heads(b"\n\r"), Ok((None, None)));
        assert_eq!(heads(b"HTTP/1.1 101 Switching\r\n"), Ok((None, Some(101))), "ureq hands 101 on");
        assert_eq!(heads(b"\r\nSSH-2.0"), Err(()));
    }

    #[test]
    fn a_status_line_is_read_only_once_it_is_whole() {
        assert_eq!(status_line(b""), Ok(None));
        assert_eq!(status_line(b"HTTP/1."), Ok(None));
        assert_eq!(status_line(b"HTTP/1.1 201 Crea"), Ok(None), "no line end yet");
        assert_eq!(status_line(b"HTTP/1.1 201 Created\r\nx-big: aaaa"), Ok(Some(201)));
        assert_eq!(status_line(b"HTTP/1.0 200\r\n"), Ok(Some(200)));
        assert_eq!(status_line(b"SSH-2.0-OpenSSH"), Err(()));
        assert_eq!(status_line(b"HTTP/1.1 2x1 Odd\r\n"), Err(()));
        assert_eq!(status_line(b"HTTP/1.1  200 Odd\r\n"), Err(()));
        assert_eq!(status_line(b"HTTP/1.2 201 Created\r\n"), Err(()), "no such version");
        assert_eq!(status_line(b"HTTP/1.1 2010 Created\r\n"), Err(()), "four digits");
        assert_eq!(status_line(b"HTTP/1.1 201\n"), Ok(Some(201)), "no reason phrase");
    }
}
