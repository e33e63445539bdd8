//! How `--check` registers a server that a launcher started: npx (the npm
//! launcher's variables name the package as it was asked for) and uvx (the
//! binary sits in uv's cache). Each printed registration is read back as its
//! harness reads it, with the helpers of `register.rs`.

#![cfg(unix)]

use serde_json::json;

use crate::fake_backend::FakeBackend;
use crate::harness::{BIN, TempDir, start_fake_at};
use crate::register::{awkward_binary, every_launch, pairs, printed, sorted};

/// Started by the npm launcher, which says so in RESMON_MCP_LAUNCHER and
/// RESMON_MCP_PACKAGE, `--check` registers npx's command with the version,
/// range or tag that was asked for, in every format (each printed line read
/// back by a real shell, each block by its parser), and keeps the
/// launcher's variables out of the registration.
#[test]
fn a_check_started_by_npx_registers_npx_keeping_what_was_asked_for() {
    let dir = TempDir::new();
    let fake = start_fake_at(&dir.path().join("state dir"));
    let binary = awkward_binary(dir.path());
    let discovered = env_of(&fake);
    let scratch = TempDir::new();
    // Each spec, and how a POSIX shell line carries it.
    for (spec, quoted) in [
        ("resmon-mcp@0.2.0", "resmon-mcp@0.2.0"),
        ("resmon-mcp@^0.1.0", "'resmon-mcp@^0.1.0'"),
        ("resmon-mcp@~0.1.0", "'resmon-mcp@~0.1.0'"),
        ("resmon-mcp@>=0.1 <1", "'resmon-mcp@>=0.1 <1'"),
        ("resmon-mcp@latest", "resmon-mcp@latest"),
    ] {
        let mut env = discovered.clone();
        env.extend(pairs(&[("RESMON_MCP_LAUNCHER", "npx"), ("RESMON_MCP_PACKAGE", spec)]));
        let home = TempDir::new();
        let printed = printed(&binary, &env, dir.path(), home.path(), &fake);
        assert!(
            printed.human.contains(&format!("\nregistration: npx -y {quoted} (npx started this check")),
            "{spec}: {}",
            printed.human
        );
        assert!(
            printed.human.contains(&format!("  npx -y {quoted} --check --for codex\n")),
            "{}",
            printed.human
        );
        assert!(
            !printed.human.contains(&binary.display().to_string()) && !printed.human.contains("note:"),
            "{spec}: the cache path was printed, or a note: {}",
            printed.human
        );
        assert_eq!(
            printed.report["register_launch"],
            json!({"by": "npx", "command": "npx", "args": ["-y", spec]})
        );
        for (name, launch) in every_launch(&printed, scratch.path()) {
            assert_eq!(
                (launch.program.as_str(), launch.args.as_slice()),
                ("npx", &["-y".to_string(), spec.to_string()][..]),
                "{name}"
            );
            assert_eq!(sorted(&launch.env), sorted(&discovered), "{name}: the launcher's variables stay out");
        }
    }
}

/// A package npx could not be given is not registered: the binary's own
/// path is, with a note that says what was wrong with it and what the path
/// means.
#[test]
fn a_package_npx_cannot_be_given_is_refused_with_the_reason() {
    let dir = TempDir::new();
    let fake = start_fake_at(&dir.path().join("state"));
    let binary = awkward_binary(dir.path());
    let mut env = env_of(&fake);
    env.extend(pairs(&[("RESMON_MCP_LAUNCHER", "npx"), ("RESMON_MCP_PACKAGE", "resmon-mcp@1; rm -rf ~")]));
    let home = TempDir::new();
    let printed = printed(&binary, &env, dir.path(), home.path(), &fake);
    assert_eq!(printed.report["register_launch"]["by"], "binary", "{}", printed.report);
    let notes = printed.report["register_notes"].to_string();
    assert!(notes.contains("its ';' is no part of an npm version, range or tag"), "{notes}");
    assert!(notes.contains("names the binary npx unpacked, which npx may remove"), "{notes}");
}

/// A binary that uvx runs from uv's cache (`archive-v0/<id>/bin`, beside
/// the environment's pyvenv.cfg) is registered as `uvx resmon-mcp`.
#[test]
fn a_check_run_from_uvs_cache_registers_uvx() {
    let dir = TempDir::new();
    let fake = start_fake_at(&dir.path().join("state"));
    let environment = dir.path().join("cache/uv/archive-v0/QhV2Zt0xLmSd/");
    std::fs::create_dir_all(environment.join("bin")).unwrap();
    std::fs::write(environment.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    let binary = environment.join("bin/resmon-mcp");
    if std::fs::hard_link(BIN, &binary).is_err() {
        std::fs::copy(BIN, &binary).unwrap();
    }
    let env = env_of(&fake);
    let home = TempDir::new();
    let printed = printed(&binary, &env, dir.path(), home.path(), &fake);
    assert!(
        printed.human.contains("\nregistration: uvx resmon-mcp (uvx started this check"),
        "{}",
        printed.human
    );
    assert!(printed.human.contains("`uvx resmon-mcp@latest` fetches the newest"), "{}", printed.human);
    let scratch = TempDir::new();
    for (name, launch) in every_launch(&printed, scratch.path()) {
        assert_eq!(
            (launch.program.as_str(), launch.args.as_slice()),
            ("uvx", &["resmon-mcp".to_string()][..]),
            "{name}"
        );
    }
}

fn env_of(fake: &FakeBackend) -> Vec<(String, String)> {
    pairs(&[
        ("RESMON_PORT_FILE", &fake.port_file().display().to_string()),
        ("RESMON_STATE_DIR", &fake.state_dir().display().to_string()),
    ])
}
