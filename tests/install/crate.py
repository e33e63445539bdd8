"""`cargo install` from the crate `cargo xtask bundle` wrote, as crates.io
would serve it: run.sh unpacks the .crate and runs `cargo fetch --locked` in
it before the network namespace; here, with no network at all,
`cargo install --locked --offline --path <unpacked crate>` builds and installs
it into a scratch root, and the installed binary answers a stdio session
against the fake resmon (25 tools, health). Standard library only.

Usage: crate.py --crate-dir DIR --work DIR --fake BIN --version X.Y.Z
"""

import os
import shutil
import subprocess
import sys
import time

from install import session_check
from kit.tally import run_driver
from registries import Home

BUILD_WITHIN_S = 900


def exercise(args, tally) -> None:
    root = os.path.join(args.work, "cargo-root")
    target = os.path.join(args.work, "cargo-target")
    for folder in (root, target):
        shutil.rmtree(folder, ignore_errors=True)
    # The person's cargo: this machine's, with its registry cache (filled
    # by `cargo fetch`), building into a target folder of its own.
    env = {**os.environ, "CARGO_TARGET_DIR": target}
    started = time.monotonic()
    try:
        done = subprocess.run(["cargo", "install", "--locked", "--offline", "--path", args.crate_dir, "--root", root],
                              env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=BUILD_WITHIN_S)
        code, stderr = done.returncode, done.stderr
    except subprocess.TimeoutExpired:
        code, stderr = -1, f"timed out after {BUILD_WITHIN_S} s"
    built = time.monotonic() - started
    binary = os.path.join(root, "bin", "resmon-mcp")
    if not tally.check(code == 0 and os.access(binary, os.X_OK),
                       f"cargo install --locked --offline --path <unpacked crate> builds and installs resmon-mcp "
                       f"({built:.0f} s)", f"exit {code}: {stderr[-1500:]}"):
        return
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30).stdout
    tally.check(version.startswith(f"resmon-mcp {args.version}"), f"the installed binary is resmon-mcp {args.version}",
                repr(version))
    timings: dict[str, float] = {}
    home = Home(args.work, "cargo", os.path.join(args.work, "no-bin"), "http://127.0.0.1:9/", "http://127.0.0.1:9/",
                args.fake)
    with home:
        session_check(tally, "cargo install", [binary], home, timings)
    print(f"# time from nothing: cargo install: {built:.1f} s to build and install, then "
          f"{timings.get('cargo install', float('nan')):.3f} s to the listed tools", flush=True)


if __name__ == "__main__":
    sys.exit(run_driver("cargo-install", ("crate-dir", "work", "fake", "version"), exercise))
