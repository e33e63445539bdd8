//! The one integration-test crate: the real binary over pipes against the
//! one fake backend (tests/support/fake_backend.rs).

#[path = "../support/fake_backend.rs"]
mod fake_backend;
mod harness;
// The rule a line's answer keeps, shared with the `line` fuzz target.
#[path = "../support/line_rule.rs"]
mod line_rule;
// One valid call for every branch of every tool.
mod calls;

// Protocol rules of both MCP eras, no backend needed.
mod protocol;
// What each era requires a request's params to carry; the era of `initialize`.
mod envelope;
// Discovery, the HTTP client's rules, the error model, health and the CLI.
mod spine;
// The listing: counts, flags, schema portability and clients' rewriting.
mod surface;
// The context budgets: the listing, and search pages on short and realistic rows.
mod budgets;
// What a deferring harness shows before any search: always-loaded tools, hints, questions.
mod findability;
// MCP prompts: both eras, refusals, read-only, one routing, budgets, no request.
mod prompts;
// Read tools: corpus, documents, sources, analytics, watchdog, exports.
mod reads_corpus;
// Read tools: routines, executions, watch profiles.
mod reads_runs;
// How arguments are read: integers by value and range, a key given twice.
mod arguments;
// Write tools, read-only sessions and the settings guards.
mod writes;
// A write resmon accepted, whatever fails after it; what settings answers may echo.
mod write_faults;
// A write answered with a 5xx: an outcome not known, or read back (settings).
mod unknown_outcomes;
// Discovery's edge cases: special files, quotes, encodings, empty values; `call -`.
#[cfg(unix)]
mod discovery;
// `--read-only[=true|false]`, the switch a bundle's checkbox drives.
mod read_only_flag;
// Every address the tools send resolves against the route table; 44 pairs.
mod routes;
// No cycle of use among src/'s modules; uses follow ARCHITECTURE.md's layers.
mod layers;
// docs/tools.md is generated from the listing and checked against it.
mod docs;
// README.md and docs/setup.md speak to the person installing, and name every variable.
mod user_docs;
// Version skew: routes resmon lacks, parameters it refuses, fields it drops.
mod skew;
// bundle/manifest.json, the bundle manifest template, likewise.
mod bundle_manifest;
// Every tool against every backend fault; recovery after a restart.
mod faults;
// The per-call bound under stalls, trickles and slow second requests.
mod bound;
// Hostile stdin: huge lines, odd bytes, wrong types, randomised lines in-process.
mod hostile;
// Many calls in one session: memory and descriptors stay flat.
mod soak;
// The registrations --check prints, each started as its harness would start it.
mod register;
// The registrations --check prints when npx or uvx started it.
mod register_launch;
// The command line's mistakes: an option after `call`, a tool name with a slip, `--for`.
mod command_line;
// What harnesses need: every error code readable, harness-added keys, the per-call bound.
mod readable;
// No credential value in any answer, by one rule over the output schemas.
mod withheld;
