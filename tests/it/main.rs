//! The one integration-test crate: the real binary over pipes against the
//! one fake backend (tests/support/fake_backend.rs).

#[path = "../support/fake_backend.rs"]
mod fake_backend;
mod harness;
// One valid call for every branch of every tool.
mod calls;

// Protocol rules of both MCP eras, no backend needed.
mod protocol;
// Discovery, the HTTP client's rules, the error model, health and the CLI.
mod spine;
// The listing: counts, flags, schema portability, context budget.
mod surface;
// Read tools: corpus, documents, sources, analytics, watchdog, exports.
mod reads_corpus;
// Read tools: routines, executions, watch profiles.
mod reads_runs;
// Write tools, read-only sessions and the settings guards.
mod writes;
// Every address the tools send resolves against the route table; 44 pairs.
mod routes;
// docs/tools.md is generated from the listing and checked against it.
mod docs;
// Every tool against every backend fault; recovery after a restart.
mod faults;
// Hostile stdin: huge lines, odd bytes, wrong types, randomised lines in-process.
mod hostile;
// Many calls in one session: memory and descriptors stay flat.
mod soak;
// What harnesses need: every error code readable, harness-added keys, the per-call bound.
mod readable;
