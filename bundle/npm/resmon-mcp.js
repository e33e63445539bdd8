#!/usr/bin/env node
// The `resmon-mcp` command of the npm package: starts the resmon-mcp binary
// that this platform's optional package holds (`resmonMcpBinaries` in this
// package's package.json names which package serves which platform) and
// stands aside: the binary gets this process's stdin, stdout and stderr
// themselves, its arguments, and its environment plus two variables; this
// process then ends as the binary ended, with its exit code or its signal.
//
// The two variables tell the server how it was started, so that
// `resmon-mcp --check` can print a registration that survives an update
// (`npx -y resmon-mcp`) rather than a path inside npm's cache:
//   RESMON_MCP_LAUNCHER=npx
//   RESMON_MCP_PACKAGE=<the package as the person asked npx for it, e.g.
//     resmon-mcp, resmon-mcp@0.1.0 or resmon-mcp@^0.1.0>, or plain
//     `resmon-mcp` when that is not known (installed some other way than npx).
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const manifest = require("../package.json");

function fail(sentence) {
  process.stderr.write(`resmon-mcp: ${sentence}\n`);
  process.exit(1);
}

// The package this platform needs, and the path of its binary.
function binaryPath() {
  const key = `${process.platform}-${process.arch}`;
  const served = manifest.resmonMcpBinaries || {};
  const name = served[key];
  if (!name) {
    const built = Object.keys(served).join(", ") || "none";
    fail(
      `resmon-mcp ${manifest.version} has no binary for ${key} (it was built for: ${built}); ` +
        `the release archives and ${manifest.homepage} list the other ways to install it.`,
    );
  }
  const executable = process.platform === "win32" ? "resmon-mcp.exe" : "resmon-mcp";
  try {
    return path.join(path.dirname(require.resolve(`${name}/package.json`)), "bin", executable);
  } catch {
    fail(
      `the package ${name}@${manifest.version}, which holds the resmon-mcp binary for ${key}, is not ` +
        `installed: install it beside resmon-mcp, or reinstall without turning off optional ` +
        `dependencies (--omit=optional, --no-optional).`,
    );
  }
}

// What the person asked npx for. npx installs into a folder of its cache
// whose package.json lists the requested packages, as typed, under
// `_npx.packages`; this package lies in that folder's node_modules. Any
// other install has no such list, and the bare name is the answer. The
// spec is passed on as it was typed (a version, a range such as ^0.1.0 or
// `>=1 <2`, a tag): the server alone judges whether a registration can
// carry it, and says why when it cannot (src/register/launch.rs). Only a
// control character, which no spec holds and an environment variable
// cannot always carry, is left out.
function requestedPackage() {
  const folder = path.resolve(__dirname, "..", "..", "..");
  try {
    const listed = JSON.parse(fs.readFileSync(path.join(folder, "package.json"), "utf8"));
    const requested = ((listed._npx || {}).packages || []).find(
      (spec) =>
        typeof spec === "string" && (spec === manifest.name || spec.startsWith(`${manifest.name}@`)),
    );
    if (requested && !/[\u0000-\u001f\u007f]/.test(requested)) {
      return requested;
    }
  } catch {
    // Not run from npx's cache.
  }
  return manifest.name;
}

const binary = binaryPath();
const child = spawn(binary, process.argv.slice(2), {
  stdio: "inherit",
  env: { ...process.env, RESMON_MCP_LAUNCHER: "npx", RESMON_MCP_PACKAGE: requestedPackage() },
  windowsHide: true,
});

// A signal meant for the server (a harness stopping it, Ctrl-C) reaches this
// process first: pass it on and let the binary decide. Windows has no
// SIGQUIT and delivers SIGHUP only as the console closes.
const forwarded =
  process.platform === "win32" ? ["SIGINT", "SIGTERM", "SIGHUP"] : ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
for (const signal of forwarded) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
    }
  });
}

child.on("error", (error) => {
  fail(`could not start ${binary}: ${error.message}`);
});

child.on("exit", (code, signal) => {
  if (signal) {
    // End the same way, so that whoever started this sees the signal.
    for (const forwardedSignal of forwarded) {
      process.removeAllListeners(forwardedSignal);
    }
    process.kill(process.pid, signal);
    // Should the signal not end this process (an ignored one), still end
    // with the shell's code for it.
    setTimeout(() => process.exit(128 + (os.constants.signals[signal] || 0)), 1000).unref();
    return;
  }
  process.exit(code === null ? 1 : code);
});
