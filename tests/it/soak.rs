//! Many calls in one session (docs/fuzzing.md, "The soak"): resident memory
//! and open file descriptors stay flat from the 1 000th call to the last,
//! and no call fails unless a fault was injected into it.
//!
//! CI runs 3 000 calls. The full soak is the same test with more calls:
//! `RESMON_SOAK_CALLS=100000 cargo test --release --test it soak -- --nocapture`
//! (docs/fuzzing.md records its latest figures).

use std::time::Instant;

use serde_json::{Value, json};

use crate::calls::every_branch;
use crate::fake_backend::Fault;
use crate::harness::{Session, call_problems, env_for, start_fake};

/// The measurement window opens after this many calls (allocator and
/// connection warm-up happen before it).
const WARM_UP: usize = 1_000;
/// Allowed growth of VmRSS across the window.
const RSS_SLACK_KIB: u64 = 512;
/// One call in this many gets an injected fault.
const INJECT_EVERY: usize = 97;

/// VmRSS in KiB and the number of open descriptors of a process (Linux).
fn sample(pid: u32) -> Option<(u64, usize)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let rss =
        status.lines().find(|line| line.starts_with("VmRSS:"))?.split_whitespace().nth(1)?.parse().ok()?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count();
    Some((rss, fds))
}

/// Faults that fail every tool, each exercising a different path: an error
/// status, a connection closed mid-answer (a new connection next time), and
/// a refused token (the instance is dropped and discovered again).
fn injected(index: usize) -> Fault {
    match (index / INJECT_EVERY) % 3 {
        0 => Fault::Html500,
        1 => Fault::ResetMidBody,
        _ => Fault::Unauthorized,
    }
}

#[test]
fn memory_and_descriptors_stay_flat_over_many_calls() {
    let calls: usize = std::env::var("RESMON_SOAK_CALLS").ok().and_then(|n| n.parse().ok()).unwrap_or(3_000);
    assert!(calls > WARM_UP, "RESMON_SOAK_CALLS must exceed {WARM_UP}");
    let fake = start_fake();
    let reads: Vec<(&str, Value)> = every_branch(&fake.runtime_id())
        .into_iter()
        .filter(|(tool, _)| !resmon_mcp::tools::find(tool).unwrap().requires_confirmation)
        .collect();
    let distinct: std::collections::BTreeSet<&str> = reads.iter().map(|(tool, _)| *tool).collect();
    assert_eq!(distinct.len(), 18, "every read tool takes part");
    let mut session = Session::initialized(&env_for(&fake));
    let pid = session.child().id();
    let token = fake.token();
    let mut failures = Vec::new();
    let mut injected_count = 0;
    let mut window: Option<(u64, usize)> = None;
    let mut peak_rss = 0;
    let mut fd_range = (usize::MAX, 0);
    let started = Instant::now();
    for index in 0..calls {
        let (tool, arguments) = &reads[index % reads.len()];
        let inject = index % INJECT_EVERY == INJECT_EVERY - 1;
        if inject {
            fake.set_fault(injected(index));
            injected_count += 1;
        }
        let answer = session.request("tools/call", json!({"name": tool, "arguments": arguments}));
        if inject {
            fake.set_fault(Fault::None);
        }
        let is_error = answer["result"]["isError"].as_bool();
        match (inject, is_error) {
            (false, Some(false)) | (true, Some(true)) => (),
            _ => failures.push(format!("call {index} ({tool}, injected: {inject}): {answer}")),
        }
        if let Some(problem) = call_problems(tool, &answer).first() {
            failures.push(format!("call {index} ({tool}, injected: {inject}): {problem}"));
        }
        if failures.len() > 10 {
            break;
        }
        // Sample at rest after a normal call (its connection is open again).
        if !inject && (index + 1) % 100 == 0 {
            let Some((rss, fds)) = sample(pid) else { continue };
            peak_rss = peak_rss.max(rss);
            if index + 1 >= WARM_UP {
                fd_range = (fd_range.0.min(fds), fd_range.1.max(fds));
                window.get_or_insert((rss, fds));
            }
        }
        if (index + 1) % 1_000 == 0 {
            // Keep the test's own memory flat too, checking as it goes.
            assert!(!session.transcript.iter().any(|line| line.contains(&token)), "the token reached stdout");
            session.transcript.clear();
            fake.clear_requests();
        }
    }
    let elapsed = started.elapsed();
    let last = sample(pid);
    let (status, stderr) = session.finish();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(status.success() && !stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains(&token), "the token reached stderr");
    let (Some((rss_start, fds_start)), Some((rss_end, fds_end))) = (window, last) else {
        eprintln!("soak: {calls} calls in {elapsed:?}; no /proc here, so memory was not measured");
        return;
    };
    eprintln!(
        "soak: {calls} calls ({injected_count} with an injected fault) in {elapsed:?} ({:.2} ms a call); \
         VmRSS at call {WARM_UP}: {rss_start} KiB, at the end: {rss_end} KiB, peak sampled: {peak_rss} KiB; \
         open fds at call {WARM_UP}: {fds_start}, at the end: {fds_end}, range after warm-up: {fd_range:?}",
        elapsed.as_secs_f64() * 1000.0 / calls as f64
    );
    assert!(
        rss_end <= rss_start + RSS_SLACK_KIB,
        "VmRSS grew from {rss_start} KiB to {rss_end} KiB after call {WARM_UP}"
    );
    assert!(fds_end.abs_diff(fds_start) <= 1, "open fds went from {fds_start} to {fds_end}");
    assert!(fd_range.1 - fd_range.0 <= 1, "open fds ranged over {fd_range:?} after warm-up");
}
