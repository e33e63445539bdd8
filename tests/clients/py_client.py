"""The official MCP Python SDK (mcp==2.3.0, pinned in requirements.txt) as a
real client of resmon-mcp, in its three connection modes.

For each mode, against a fresh fake backend (write tools change its state):
connect with only RESMON_PORT_FILE and RESMON_STATE_DIR in the client's env,
assert the negotiated protocol version, list the tools (25), call every
valid call of tests/it/calls.rs (so every tool at least once), list and get
every prompt, and make the invalid calls of calls.rs (kit.calls.invalid_calls).

The SDK itself rejects a tools/list whose schemas it cannot accept
(pydantic), checks every result against the negotiated version's shapes,
and validates every non-error structuredContent against the tool's
outputSchema with jsonschema; any of those raising is a failure here.

Usage: py_client.py --server BIN --fake BIN --calls calls.json [--mode M ...]
"""

import json
import sys
import time

from importlib.metadata import version as package_version

import jsonschema
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from kit.calls import invalid_calls, load_calls, with_runtime_id
from kit.fake import FakeBackend
from kit.mcp import EXPECTED_TOOLS
from kit.tally import run_driver

SDK_VERSION = "2.3.0"
EXPECTED_PROMPTS = ["recent", "checkup", "person", "paper", "export", "watch"]
# A valid value for every prompt argument the server lists; an argument not
# here fails the check, so a new one cannot go untried.
PROMPT_ARGUMENTS = {
    "days": "30",
    "routine": "4",
    "person": "Ada Lovelace",
    "doc_id": "1",
    "exec_id": "115",
    "format": "ris",
    "name": "Ada Lovelace",
}
# mode → the protocol version the connection must end up on.
MODES = {
    "legacy": "2025-11-25",
    "auto": "2026-07-28",
    "2026-07-28": "2026-07-28",
}
# Generous: a call against the fake takes milliseconds.
CALL_TIMEOUT_S = 60


def text_json(result):
    """The JSON in the result's first text block that holds JSON, or None.
    A success has it in its only block; an error opens with a sentence
    (`<code>: <message>`) and carries the error object in its second block."""
    for block in result.content:
        if getattr(block, "type", None) == "text":
            try:
                return json.loads(block.text)
            except ValueError:
                continue
    return None


def first_text(result):
    """The text of the result's first block, or ''."""
    block = result.content[0] if result.content else None
    return getattr(block, "text", "") or ""


async def list_all_tools(client):
    tools, cursor = [], None
    while True:
        page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


async def run_mode(mode: str, args, calls, placeholder: str, tally) -> None:
    tally.label = f"python[{mode}]"
    before, started = (tally.passed, tally.failed), time.monotonic()
    with FakeBackend(args.fake) as fake:
        params = StdioServerParameters(command=args.server, args=[], env=dict(fake.env))
        try:
            async with Client(params, mode=mode, read_timeout_seconds=CALL_TIMEOUT_S) as client:
                await exercise(client, mode, MODES[mode], tally, calls, placeholder, invalid_calls(args.calls))
        except Exception as e:  # noqa: BLE001 - any failure of the client is the finding
            tally.fail("session", f"{type(e).__name__}: {e}")
    print(f"# python[{mode}]: {tally.passed - before[0]} passed, {tally.failed - before[1]} failed in "
          f"{time.monotonic() - started:.2f} s", flush=True)


async def exercise(client, mode, want_version, tally, calls, placeholder, invalid):
    session = client.session
    negotiated = session.protocol_version
    if mode == "legacy":
        got = session.initialize_result.protocol_version if session.initialize_result else None
        tally.check(
            got == want_version and negotiated == want_version and session.discover_result is None,
            f"negotiated {want_version} via initialize",
            f"initialize_result.protocol_version={got!r}, protocol_version={negotiated!r}, "
            f"discover_result={session.discover_result!r}",
        )
    else:
        discover = session.discover_result
        supported = list(discover.supported_versions) if discover else None
        tally.check(
            negotiated == want_version and session.initialize_result is None and supported is not None
            and want_version in supported,
            f"negotiated {want_version} via server/discover" + (" (pinned)" if mode != "auto" else ""),
            f"protocol_version={negotiated!r}, supported_versions={supported!r}, "
            f"initialize_result={session.initialize_result!r}",
        )
        if mode != "auto":
            # A pinned client adopts a discover result it made up itself and
            # sends no probe; ask the server directly so its own answer is checked.
            try:
                raw = await session.send_discover(want_version)
                tally.check(
                    want_version in raw.get("supportedVersions", []) and raw.get("resultType") == "complete",
                    "server/discover answers for the pinned version",
                    f"answer: {json.dumps(raw)[:500]}",
                )
            except Exception as e:  # noqa: BLE001
                tally.fail("server/discover answers for the pinned version", f"{type(e).__name__}: {e}")

    try:
        tools = await list_all_tools(client)
    except Exception as e:  # noqa: BLE001 - e.g. pydantic refusing a schema
        tally.fail("tools/list", f"{type(e).__name__}: {e}")
        return
    names = [t.name for t in tools]
    tally.check(len(tools) == EXPECTED_TOOLS and len(set(names)) == len(names),
                f"tools/list gives {EXPECTED_TOOLS} distinct tools", f"got {len(tools)}: {names}")
    by_name = {t.name: t for t in tools}
    # Every listed schema must be a schema a 2020-12 validator accepts.
    bad = []
    for tool in tools:
        for label, schema in (("inputSchema", tool.input_schema), ("outputSchema", tool.output_schema)):
            if schema is None:
                continue
            try:
                jsonschema.validators.validator_for(schema).check_schema(schema)
            except jsonschema.SchemaError as e:
                bad.append(f"{tool.name}.{label}: {e.message}")
    tally.check(not bad, "every input and output schema is a valid JSON Schema", "; ".join(bad))

    called = {c["tool"] for c in calls} | {c[0] for c in invalid}
    tally.check(set(names) <= called, "every listed tool is in the call list",
                f"never called: {sorted(set(names) - called)}")
    tally.check(called <= set(names), "every called tool is listed", f"not listed: {sorted(called - set(names))}")

    runtime_id = None
    for number, call in enumerate(calls, 1):
        tool = call["tool"]
        if runtime_id is None and placeholder in json.dumps(call["arguments"]):
            tally.fail(f"call #{number} {tool}", "no runtime id known yet (health must come first)")
            continue
        arguments = with_runtime_id(call["arguments"], placeholder, runtime_id or "")
        what = f"call #{number} {tool} {json.dumps(arguments, separators=(',', ':'))}"
        listed = by_name.get(tool)
        if listed is not None and listed.input_schema is not None:
            errors = sorted(jsonschema.Draft202012Validator(listed.input_schema).iter_errors(arguments), key=str)
            if errors:
                tally.fail(what, f"the arguments break the listed inputSchema: {errors[0].message}")
                continue
        try:
            result = await client.call_tool(tool, arguments)
        except Exception as e:  # noqa: BLE001 - RuntimeError from output validation lands here
            tally.fail(what, f"{type(e).__name__}: {e}")
            continue
        if result.is_error:
            tally.fail(what, f"isError: {result.content[0].text if result.content else result}")
            continue
        structured = result.structured_content
        if listed is not None and listed.output_schema is not None and structured is None:
            tally.fail(what, "no structuredContent although the tool declares an outputSchema")
            continue
        if text_json(result) != structured:
            tally.fail(what, "the text block is not the JSON of structuredContent")
            continue
        if tool == "health" and runtime_id is None:
            runtime_id = (structured or {}).get("identity", {}).get("runtime_id")
        tally.ok(what)

    await exercise_prompts(client, mode, want_version, tally)

    for tool, arguments, argument in invalid:
        what = f"invalid call {tool} {json.dumps(arguments, separators=(',', ':'))}"
        try:
            result = await client.call_tool(tool, arguments)
        except Exception as e:  # noqa: BLE001
            tally.fail(what, f"{type(e).__name__}: {e}")
            continue
        payload = text_json(result) or {}
        tally.check(
            result.is_error and payload.get("error") == "invalid_argument"
            and first_text(result) == f"invalid_argument: {payload.get('message')}"
            and payload.get("detail", {}).get("argument") == argument,
            what,
            f"want isError invalid_argument naming {argument!r}; got isError={result.is_error}, "
            f"text={json.dumps(payload)[:500]}",
        )


async def exercise_prompts(client, mode, want_version, tally):
    """The prompts through the SDK: the capability, the list, every prompt
    with all its arguments and with the required ones alone, and a refusal."""
    if mode in ("legacy", "auto"):
        capabilities = client.server_capabilities
        declared = capabilities.prompts is not None
    else:
        # A pinned client adopts a discover result of its own making (see
        # above): read the server's own answer.
        try:
            capabilities = (await client.session.send_discover(want_version)).get("capabilities")
        except Exception as e:  # noqa: BLE001
            capabilities = f"{type(e).__name__}: {e}"
        declared = isinstance(capabilities, dict) and "prompts" in capabilities
    tally.check(declared, "server declares the prompts capability", f"capabilities: {capabilities!r}")
    try:
        listed = await client.list_prompts()
    except Exception as e:  # noqa: BLE001 - e.g. pydantic refusing the list
        tally.fail("prompts/list", f"{type(e).__name__}: {e}")
        return
    names = [p.name for p in listed.prompts]
    tally.check(names == EXPECTED_PROMPTS, f"prompts/list gives {len(EXPECTED_PROMPTS)} prompts in order",
                f"got {names}")
    for prompt in listed.prompts:
        arguments = prompt.arguments or []
        unknown = [a.name for a in arguments if a.name not in PROMPT_ARGUMENTS]
        if unknown:
            tally.fail(f"prompt {prompt.name}", f"no sample value for its arguments {unknown}")
            continue
        for label, chosen in (("every argument", arguments), ("required arguments", [a for a in arguments if a.required])):
            values = {a.name: PROMPT_ARGUMENTS[a.name] for a in chosen}
            what = f"prompts/get {prompt.name} with {label} {json.dumps(values, separators=(',', ':'))}"
            try:
                got = await client.get_prompt(prompt.name, values)
            except Exception as e:  # noqa: BLE001
                tally.fail(what, f"{type(e).__name__}: {e}")
                continue
            messages = got.messages
            text = getattr(messages[0].content, "text", "") if messages else ""
            tally.check(len(messages) == 1 and messages[0].role == "user" and messages[0].content.type == "text"
                        and len(text) > 100, what, f"messages: {messages!r}")
    for name, values, argument in (("paper", {"doc_id": "0"}, "doc_id"), ("nonsense", {}, None)):
        what = f"prompts/get {name} {json.dumps(values)} is refused with -32602"
        try:
            got = await client.get_prompt(name, values)
            tally.fail(what, f"answered: {got!r}")
        except MCPError as e:
            tally.check(e.code == -32602 and (argument is None or argument in e.message), what,
                        f"code {e.code}: {e.message}")
        except Exception as e:  # noqa: BLE001
            tally.fail(what, f"{type(e).__name__}: {e}")


async def every_mode(args, tally) -> None:
    if not tally.pinned("mcp", SDK_VERSION, package_version("mcp")):
        return
    print(f"# Python SDK mcp {SDK_VERSION}, jsonschema {package_version('jsonschema')}", flush=True)
    calls, placeholder = load_calls(args.calls)
    for mode in args.mode or list(MODES):
        await run_mode(mode, args, calls, placeholder, tally)


if __name__ == "__main__":
    sys.exit(run_driver("python", ("server", "fake", "calls"), every_mode, repeated=("mode",),
                        choices={"mode": list(MODES)}))
