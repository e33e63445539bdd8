// The official MCP TypeScript SDK (@modelcontextprotocol/sdk 1.32.2, pinned in
// package.json / package-lock.json) as a real client of resmon-mcp.
//
// Starts the fake backend, connects over stdio with only RESMON_PORT_FILE and
// RESMON_STATE_DIR in the transport's env, checks the negotiated version
// (SDK 1.x speaks the handshake era only: 2025-11-25), lists the tools (25),
// makes every valid call and every invalid call of tests/it/calls.rs (calls.json),
// and lists and gets every prompt. SDK 1.x has no 2026-07-28 era, so the
// prompts are then listed and got again through the v2 client package,
// @modelcontextprotocol/client 2.3.1 (pinned by the same lock, which the
// Inspector depends on), pinned to 2026-07-28.
// The SDK zod-checks tools/list and every result, and ajv-validates every
// structuredContent against the tool's outputSchema; any of that throwing is
// a failure here.
//
// run.sh copies this file next to the node_modules it installs (ESM resolves
// packages from the script's own folder), then runs:
//   node ts_client.mjs --server BIN --fake BIN --calls calls.json

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioClientTransportV2 } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const SDK_VERSION = "1.32.2";
const EXPECTED_VERSION = "2025-11-25";
const EXPECTED_TOOLS = 25;
const CLIENT_V2_VERSION = "2.3.1";
const STATELESS_VERSION = "2026-07-28";
const EXPECTED_PROMPTS = ["recent", "checkup", "person", "paper", "export", "watch"];
// A valid value for every prompt argument the server lists; an argument not
// here fails the check, so a new one cannot go untried.
const PROMPT_ARGUMENTS = {
  days: "30",
  routine: "4",
  person: "Ada Lovelace",
  doc_id: "1",
  exec_id: "115",
  format: "ris",
  name: "Ada Lovelace",
};
let LABEL = "typescript[sdk 1.x]";

let passed = 0;
let failed = 0;
const ok = (what) => {
  passed += 1;
  console.log(`PASS ${LABEL} ${what}`);
};
const fail = (what, why) => {
  failed += 1;
  let text = String(why).split(/\s+/).join(" ");
  if (text.length > 2000) text = `${text.slice(0, 2000)} …`;
  console.log(`FAIL ${LABEL} ${what}: ${text}`);
};
const check = (condition, what, why) => (condition ? ok(what) : fail(what, why));

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 2) out[argv[i].replace(/^--/, "")] = argv[i + 1];
  for (const key of ["server", "fake", "calls"]) {
    if (!out[key]) throw new Error(`missing --${key}`);
  }
  return out;
}

/** Starts the fake; resolves to { env, stop() } once it printed its two lines. */
function startFake(binary) {
  const dir = mkdtempSync(join(tmpdir(), "resmon-clients-ts-"));
  const child = spawn(binary, ["--state-dir", join(dir, "state")], { stdio: ["pipe", "pipe", "ignore"] });
  const stop = () =>
    new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        rmSync(dir, { recursive: true, force: true });
        resolve();
      };
      // Generous; the fake stops within milliseconds of stdin EOF.
      const timer = setTimeout(() => child.kill("SIGKILL"), 15000);
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once("exit", done);
      child.stdin.end(); // the fake's stop signal
    });
  return new Promise((resolve, reject) => {
    const env = {};
    const lines = createInterface({ input: child.stdout });
    const timer = setTimeout(() => reject(new Error("the fake backend printed nothing within 30 s")), 30000);
    child.once("error", reject);
    lines.on("line", (line) => {
      const at = line.indexOf("=");
      env[line.slice(0, at)] = line.slice(at + 1);
      if (env.RESMON_PORT_FILE && env.RESMON_STATE_DIR) {
        clearTimeout(timer);
        lines.close();
        resolve({ env: { RESMON_PORT_FILE: env.RESMON_PORT_FILE, RESMON_STATE_DIR: env.RESMON_STATE_DIR }, stop });
      }
    });
  });
}

function withRuntimeId(value, placeholder, runtimeId) {
  if (Array.isArray(value)) return value.map((v) => withRuntimeId(v, placeholder, runtimeId));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withRuntimeId(v, placeholder, runtimeId)]));
  }
  return value === placeholder ? runtimeId : value;
}

// The first text block that holds JSON: a success's only block, or an
// error's second (an error opens with the sentence `<code>: <message>`).
function textJson(result) {
  for (const block of result.content || []) {
    if (block.type !== "text") continue;
    try {
      return JSON.parse(block.text);
    } catch {
      continue;
    }
  }
  return undefined;
}

// Key order does not matter: compare canonical forms.
function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical(value[k])]));
  }
  return value;
}
const sameJson = (a, b) => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

// The prompts through one client: the capability, the list, every prompt with
// all its arguments and with the required ones alone, and two refusals.
async function exercisePrompts(client) {
  check(client.getServerCapabilities()?.prompts !== undefined, "server declares the prompts capability",
    JSON.stringify(client.getServerCapabilities()));
  let listed;
  try {
    listed = await client.listPrompts();
  } catch (error) {
    fail("prompts/list", `${error?.name}: ${error?.message}`);
    return;
  }
  const names = listed.prompts.map((p) => p.name);
  check(JSON.stringify(names) === JSON.stringify(EXPECTED_PROMPTS),
    `prompts/list gives ${EXPECTED_PROMPTS.length} prompts in order`, `got ${names}`);
  for (const prompt of listed.prompts) {
    const args = prompt.arguments || [];
    const unknown = args.map((a) => a.name).filter((name) => !(name in PROMPT_ARGUMENTS));
    if (unknown.length) {
      fail(`prompt ${prompt.name}`, `no sample value for its arguments ${unknown}`);
      continue;
    }
    for (const [label, chosen] of [["every argument", args], ["required arguments", args.filter((a) => a.required)]]) {
      const values = Object.fromEntries(chosen.map((a) => [a.name, PROMPT_ARGUMENTS[a.name]]));
      const what = `prompts/get ${prompt.name} with ${label} ${JSON.stringify(values)}`;
      try {
        const got = await client.getPrompt({ name: prompt.name, arguments: values });
        const messages = got.messages || [];
        check(messages.length === 1 && messages[0].role === "user" && messages[0].content?.type === "text"
            && (messages[0].content.text || "").length > 100,
          what, `messages: ${JSON.stringify(messages)}`);
      } catch (error) {
        fail(what, `${error?.name}: ${error?.message}`);
      }
    }
  }
  for (const [name, values, argument] of [["paper", { doc_id: "0" }, "doc_id"], ["nonsense", {}, null]]) {
    const what = `prompts/get ${name} ${JSON.stringify(values)} is refused with -32602`;
    try {
      const got = await client.getPrompt({ name, arguments: values });
      fail(what, `answered: ${JSON.stringify(got)}`);
    } catch (error) {
      check(error?.code === -32602 && (argument === null || String(error?.message).includes(argument)),
        what, `${error?.name} ${error?.code}: ${error?.message}`);
    }
  }
}

// The 2026-07-28 era through the v2 client, pinned: no initialize at all.
async function statelessPrompts(args) {
  LABEL = `typescript[client ${CLIENT_V2_VERSION}, ${STATELESS_VERSION}]`;
  const manifest = new URL("./node_modules/@modelcontextprotocol/client/package.json", import.meta.url);
  const installed = JSON.parse(readFileSync(manifest, "utf8")).version;
  if (installed !== CLIENT_V2_VERSION) {
    fail("setup", `@modelcontextprotocol/client ${installed} installed, the test is written for ${CLIENT_V2_VERSION}`);
    return;
  }
  const fake = await startFake(args.fake);
  let client;
  try {
    const transport = new StdioClientTransportV2({ command: args.server, args: [], env: fake.env, stderr: "ignore" });
    client = new ClientV2({ name: "resmon-mcp-ci", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: STATELESS_VERSION } } });
    await client.connect(transport);
    const negotiated = client.getNegotiatedProtocolVersion();
    check(negotiated === STATELESS_VERSION, `negotiated ${STATELESS_VERSION} via server/discover`, `got ${negotiated}`);
    await exercisePrompts(client);
  } catch (error) {
    fail("session", `${error?.name}: ${error?.message}`);
  } finally {
    if (client) await client.close().catch(() => {});
    await fake.stop();
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  // The package's exports map hides its package.json; read it beside this script.
  const manifest = new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url);
  const installed = JSON.parse(readFileSync(manifest, "utf8")).version;
  if (installed !== SDK_VERSION) {
    fail("setup", `@modelcontextprotocol/sdk ${installed} installed, the test is written for ${SDK_VERSION}`);
    return 1;
  }
  console.log(`# TypeScript SDK @modelcontextprotocol/sdk ${installed}, node ${process.version}`);
  // The invalid calls are [tool, arguments, the argument the refusal names].
  const { calls, runtime_id_placeholder: placeholder, invalid_calls: invalidCalls } = JSON.parse(
    readFileSync(args.calls, "utf8"),
  );
  const started = Date.now();
  const fake = await startFake(args.fake);
  let client;
  try {
    const transport = new StdioClientTransport({ command: args.server, args: [], env: fake.env, stderr: "ignore" });
    // The SDK hands the negotiated version to transports that want it (HTTP
    // headers); stdio has no such hook, so one is added to observe it.
    let negotiated;
    transport.setProtocolVersion = (version) => {
      negotiated = version;
    };
    client = new Client({ name: "resmon-mcp-ci", version: "1.0.0" });
    await client.connect(transport);
    check(negotiated === EXPECTED_VERSION, `negotiated ${EXPECTED_VERSION}`, `got ${negotiated}`);
    check(client.getServerCapabilities()?.tools !== undefined, "server declares the tools capability",
      JSON.stringify(client.getServerCapabilities()));

    const tools = [];
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined);
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    const names = tools.map((t) => t.name);
    check(tools.length === EXPECTED_TOOLS && new Set(names).size === names.length,
      `tools/list gives ${EXPECTED_TOOLS} distinct tools`, `got ${tools.length}: ${names}`);
    const withOutput = new Set(tools.filter((t) => t.outputSchema).map((t) => t.name));

    let runtimeId;
    for (const [index, call] of calls.entries()) {
      const tool = call.tool;
      if (runtimeId === undefined && JSON.stringify(call.arguments).includes(placeholder)) {
        fail(`call #${index + 1} ${tool}`, "no runtime id known yet (health must come first)");
        continue;
      }
      const callArgs = withRuntimeId(call.arguments, placeholder, runtimeId);
      const what = `call #${index + 1} ${tool} ${JSON.stringify(callArgs)}`;
      try {
        const result = await client.callTool({ name: tool, arguments: callArgs });
        if (result.isError) {
          fail(what, `isError: ${result.content?.[0]?.text}`);
          continue;
        }
        if (withOutput.has(tool) && result.structuredContent === undefined) {
          fail(what, "no structuredContent although the tool declares an outputSchema");
          continue;
        }
        if (!sameJson(textJson(result), result.structuredContent)) {
          fail(what, "the text block is not the JSON of structuredContent");
          continue;
        }
        if (tool === "health" && runtimeId === undefined) runtimeId = result.structuredContent?.identity?.runtime_id;
        ok(what);
      } catch (error) {
        // McpError -32602 "Structured content does not match the tool's output schema" lands here.
        fail(what, `${error?.name}: ${error?.message}`);
      }
    }

    await exercisePrompts(client);

    for (const [tool, callArgs, argument] of invalidCalls) {
      const what = `invalid call ${tool} ${JSON.stringify(callArgs)}`;
      try {
        const result = await client.callTool({ name: tool, arguments: callArgs });
        const payload = textJson(result) || {};
        check(result.isError === true && payload.error === "invalid_argument" && payload.detail?.argument === argument
            && result.content?.[0]?.text === `invalid_argument: ${payload.message}`,
          what, `want isError invalid_argument naming ${argument}; got isError=${result.isError} ${JSON.stringify(payload)}`);
      } catch (error) {
        fail(what, `${error?.name}: ${error?.message}`);
      }
    }
  } catch (error) {
    fail("session", `${error?.name}: ${error?.message}`);
  } finally {
    if (client) await client.close().catch(() => {});
    await fake.stop();
  }
  await statelessPrompts(args);
  console.log(`# typescript (sdk 1.x and client 2.x): ${passed} passed, ${failed} failed in ${((Date.now() - started) / 1000).toFixed(2)} s`);
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.log(`FAIL ${LABEL} setup: ${error?.stack || error}`);
    process.exit(1);
  },
);
