// Launches a built MCP Bundle the way a bundle host does, using the official
// toolchain's own code (@anthropic-ai/mcpb, pinned in package-lock.json):
// `unpackExtension` to install it, `validateManifest` on what it unpacked,
// and `getMcpConfigForManifest` to turn the manifest and the person's
// settings into a command line. That command, those arguments and that
// environment are then spawned exactly, against the fake resmon backend.
// The write tools it expects (listed, or left out when read_only is on) are
// tests/it/calls.rs's, read from the calls.json tests/clients/dump_calls.rs
// writes, not the server's own marking.
//
//   node launch.mjs --bundle FILE.mcpb --fake FAKE_BACKEND --work DIR --calls calls.json
//
// Prints PASS/FAIL lines (tests/bundle/run.sh counts them); exit 1 on any FAIL.

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { createInterface } from "node:readline";
import { getMcpConfigForManifest, unpackExtension, validateManifest } from "@anthropic-ai/mcpb";

const ANSWER_WITHIN_MS = 15000;

const options = {};
for (let i = 2; i < process.argv.length; i += 2) options[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
for (const key of ["bundle", "fake", "work", "calls"]) {
  if (!options[key]) {
    console.log(`FAIL bundle launch: missing --${key}`);
    process.exit(1);
  }
}
const label = options.bundle.split(sep).pop();
const WRITE_TOOLS = JSON.parse(readFileSync(options.calls, "utf8")).write_tools;
let failed = 0;
function check(ok, what, why) {
  if (ok) console.log(`PASS ${label} ${what}`);
  else {
    failed += 1;
    console.log(`FAIL ${label} ${what}: ${String(why).replace(/\s+/g, " ").slice(0, 2000)}`);
  }
  return ok;
}

/// The first bytes each platform's executable format starts with.
function formatOf(file) {
  const head = readFileSync(file).subarray(0, 4);
  if (head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]))) return "linux";
  if (head.subarray(0, 2).toString() === "MZ") return "win32";
  if (head.equals(Buffer.from([0xca, 0xfe, 0xba, 0xbe])) || head.equals(Buffer.from([0xcf, 0xfa, 0xed, 0xfe])))
    return "darwin";
  return "unknown";
}

/// getMcpConfigForManifest as a host on `platform` would compute it (it
/// reads process.platform to pick the override).
async function configFor(manifest, root, home, userConfig, platform = process.platform) {
  const real = Object.getOwnPropertyDescriptor(process, "platform");
  Object.defineProperty(process, "platform", { value: platform });
  try {
    return await getMcpConfigForManifest({
      manifest,
      extensionPath: root,
      systemDirs: { HOME: home, DESKTOP: join(home, "Desktop"), DOCUMENTS: join(home, "Documents"), DOWNLOADS: join(home, "Downloads") },
      userConfig,
      pathSeparator: platform === "win32" ? "\\" : "/",
      logger: { log() {}, warn: (m) => console.error(m), error: (m) => console.error(m) },
    });
  } finally {
    Object.defineProperty(process, "platform", real);
  }
}

/// Starts the fake backend with its files where resmon itself keeps them
/// for a person whose home is `home` (the Linux default state folder), and
/// resolves once it is serving.
function startFake(home) {
  const stateDir = join(home, ".local", "state", "resmon");
  const fake = spawn(options.fake, ["--state-dir", stateDir], { stdio: ["pipe", "pipe", "ignore"] });
  return new Promise((resolvePromise, reject) => {
    const lines = [];
    const timer = setTimeout(() => reject(new Error("the fake backend printed nothing within 30 s")), 30000);
    const reader = createInterface({ input: fake.stdout });
    reader.on("line", (line) => {
      lines.push(line);
      if (lines.length === 2) {
        clearTimeout(timer);
        resolvePromise({ fake, stateDir, lines });
      }
    });
    fake.on("exit", (code) => reject(new Error(`the fake backend exited with ${code}`)));
  });
}

/// One MCP session over the spawned server's stdio, one JSON-RPC line each way.
function session(child) {
  const pending = new Map();
  const reader = createInterface({ input: child.stdout });
  reader.on("line", (line) => {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      console.log(`FAIL ${label} stdout carries only JSON-RPC: ${line.slice(0, 200)}`);
      failed += 1;
      return;
    }
    const waiter = pending.get(message.id);
    if (waiter) {
      pending.delete(message.id);
      waiter(message);
    }
  });
  let nextId = 1;
  return {
    request(method, params) {
      const id = nextId++;
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
      return new Promise((resolvePromise, reject) => {
        const timer = setTimeout(() => reject(new Error(`${method} got no answer within ${ANSWER_WITHIN_MS} ms`)), ANSWER_WITHIN_MS);
        pending.set(id, (message) => {
          clearTimeout(timer);
          resolvePromise(message);
        });
      });
    },
    notify(method, params) {
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method, params }) + "\n");
    },
  };
}

function errorOf(result) {
  // contract-notes 21: the second text block holds the error object.
  try {
    return JSON.parse(result.content[1].text);
  } catch {
    return null;
  }
}

/// Spawns exactly `config` (command, args, env) with a minimal inherited
/// environment, as a desktop host does, and runs the checks for one state.
async function launch(config, home, readOnly, state, version) {
  const { fake } = await startFake(home);
  const env = { PATH: process.env.PATH ?? "", HOME: home, ...(config.env ?? {}) };
  const child = spawn(config.command, config.args ?? [], { env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise((resolvePromise) => child.on("exit", (code, signal) => resolvePromise({ code, signal })));
  const mcp = session(child);
  try {
    const init = await mcp.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "bundle-launch-test", version: "0" },
    });
    check(
      init.result?._meta?.["resmon/server_version"] === version,
      `${state}: initialize answers from resmon-mcp ${version}, the manifest's version`,
      JSON.stringify(init).slice(0, 300) + stderr,
    );
    mcp.notify("notifications/initialized", {});
    const listed = await mcp.request("tools/list", {});
    const tools = listed.result?.tools ?? [];
    const names = tools.map((tool) => tool.name);
    const want = readOnly ? 18 : 25;
    check(names.length === want, `${state}: tools/list offers ${want} tools`, `got ${names.length}: ${names}`);
    // The writes by name, and the tools not marked read-only must be exactly those listed.
    const writesListed = names.filter((name) => WRITE_TOOLS.includes(name));
    check(
      WRITE_TOOLS.length === 7 && writesListed.length === (readOnly ? 0 : 7),
      `${state}: ${readOnly ? "no" : "all 7"} write tools listed`,
      `listed ${writesListed} of ${WRITE_TOOLS}`,
    );
    const unmarked = tools.filter((tool) => tool.annotations?.readOnlyHint !== true).map((tool) => tool.name);
    check(
      JSON.stringify([...unmarked].sort()) === JSON.stringify([...writesListed].sort()),
      `${state}: the tools not marked readOnlyHint: true are exactly the writes listed`,
      `not marked ${unmarked}; writes listed ${writesListed}`,
    );
    const health = await mcp.request("tools/call", { name: "health", arguments: {} });
    check(
      health.result && !health.result.isError && health.result.structuredContent?.status === "ok",
      `${state}: health answers from the fake found through the default port file`,
      JSON.stringify(health).slice(0, 600) + stderr,
    );
    const write = await mcp.request("tools/call", { name: "activate_routine", arguments: { routine_id: 8 } });
    if (readOnly) {
      const error = errorOf(write.result ?? {});
      check(
        write.result?.isError === true && error?.error === "invalid_argument" && error?.detail?.read_only === true,
        `${state}: a write (activate_routine) is refused as read-only`,
        JSON.stringify(write),
      );
    } else {
      check(
        !write.result?.isError && write.result?.structuredContent?.is_active === true,
        `${state}: a write (activate_routine) goes through`,
        JSON.stringify(write).slice(0, 600),
      );
    }
  } catch (error) {
    check(false, `${state}: session`, `${error.message}; server stderr: ${stderr}`);
  } finally {
    child.stdin.end();
    const timer = setTimeout(() => child.kill("SIGKILL"), 10000);
    const { code, signal } = await exited;
    clearTimeout(timer);
    check(code === 0, `${state}: the server exits 0 when its stdin closes`, `code ${code}, signal ${signal}; ${stderr}`);
    fake.stdin.end();
  }
}

async function main() {
  const root = resolve(options.work, "unpacked");
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const unpacked = await unpackExtension({ mcpbPath: options.bundle, outputDir: root, silent: true });
  if (!check(unpacked, "unpacks with the official unpackExtension", "unpack failed")) return;
  const manifestPath = join(root, "manifest.json");
  check(validateManifest(manifestPath), "mcpb validate passes on the packed manifest", "see the lines above");
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  const home = resolve(options.work, "home");

  // Every claimed platform launches a binary that is inside and is that
  // platform's kind of executable; no other platform is claimed.
  const claimed = manifest.compatibility?.platforms ?? [];
  const overrides = Object.keys(manifest.server?.mcp_config?.platform_overrides ?? {});
  check(claimed.length > 0, "claims at least one platform", JSON.stringify(manifest.compatibility));
  check(
    JSON.stringify([...claimed].sort()) === JSON.stringify([...overrides].sort()),
    "claims exactly the platforms it has a launch command for",
    `platforms ${claimed}, overrides ${overrides}`,
  );
  const inside = [];
  for (const platform of ["darwin", "win32", "linux"]) {
    const config = await configFor(manifest, root, home, { read_only: false }, platform);
    const file = config?.command ?? "";
    const present = file.startsWith(root + sep) && existsSync(file) && statSync(file).isFile();
    if (claimed.includes(platform)) {
      check(present, `${platform}: its launch command is a file in the bundle`, file);
      if (present) {
        check(formatOf(file) === platform, `${platform}: that file is a ${platform} executable`, formatOf(file));
        check((statSync(file).mode & 0o111) !== 0, `${platform}: unpacked executable`, statSync(file).mode.toString(8));
      }
    }
    if (present && formatOf(file) === platform) inside.push(platform);
  }
  check(
    JSON.stringify(inside) === JSON.stringify(["darwin", "win32", "linux"].filter((p) => claimed.includes(p))),
    "holds a binary for exactly the platforms it claims",
    `claims ${claimed}, holds ${inside}`,
  );

  if (!claimed.includes(process.platform)) {
    check(false, `launch on ${process.platform}`, `this bundle does not claim ${process.platform}`);
    return;
  }
  // The person's three possible states: never opened the settings, and the
  // checkbox off or on.
  for (const [state, userConfig, readOnly] of [
    ["read_only left at its default", undefined, false],
    ["read_only false", { read_only: false }, false],
    ["read_only true", { read_only: true }, true],
  ]) {
    rmSync(home, { recursive: true, force: true });
    mkdirSync(home, { recursive: true });
    const config = await configFor(manifest, root, home, userConfig);
    if (!check(config !== undefined, `${state}: the host computes a launch config`, "getMcpConfigForManifest gave none")) continue;
    const text = JSON.stringify(config);
    check(!text.includes("${"), `${state}: nothing is left unsubstituted`, text);
    check(
      JSON.stringify(config.args) === JSON.stringify([`--read-only=${readOnly}`]),
      `${state}: the server is told --read-only=${readOnly}`,
      text,
    );
    check(!text.includes("RESMON_"), `${state}: no RESMON_ variable is set by the bundle`, text);
    await launch(config, home, readOnly, state, manifest.version);
  }
}

main()
  .catch((error) => check(false, "launch test", error.stack ?? error))
  .finally(() => process.exit(failed === 0 ? 0 : 1));
