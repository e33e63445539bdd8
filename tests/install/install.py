"""resmon-mcp installed as a person installs it, from real registries on
loopback: what `cargo xtask bundle` wrote is published to verdaccio (npm)
and pypiserver (PyPI), and then run from fresh homes with empty caches and
no Rust on PATH, by the very lines the README gives. Standard library only;
run inside a network namespace that holds only loopback (run.sh does).

Checks, each a PASS or FAIL line:
- the npm packages and the wheel publish to the loopback registries;
- `npx -y resmon-mcp --version` and `uvx resmon-mcp --version` print the
  binary's version, from nothing (and say how long that took);
- a stdio session through each lists the 25 tools and answers `health`
  against the fake resmon, from nothing (the time to the listed tools is
  printed); the fake serves the default state folder, so no variable is set;
- the npm launcher: the binary it starts gets RESMON_MCP_LAUNCHER=npx and
  RESMON_MCP_PACKAGE as the person asked npx for it (`resmon-mcp`, or
  `resmon-mcp@<version>` when pinned), and `--check` run through npx with a
  range (`resmon-mcp@^<version>`, `resmon-mcp@>=<version> <99`) prints a
  line that keeps it; arguments and the exit code pass
  through unchanged; SIGTERM reaches the binary and the launcher ends by it;
  without its platform package it says, in one sentence, which is missing;
- a first run as the README tells it, from a fresh home for each of
  `npx -y resmon-mcp`, `npx -y resmon-mcp@<version>` and `uvx resmon-mcp`,
  and each of Claude Code and Codex: with resmon closed (no fake has started
  in that home, so there is no port file) `<launcher> --check --for
  <harness>` still prints the registration, marked as not yet verified,
  starting the server by the launcher's own words, never by a path in npm's
  or uv's cache; the registration is pasted as printed (the `claude mcp add`
  line is run; the Codex block goes into config.toml); then with resmon
  running the same command prints the same registration, verified, Claude
  Code shows the server Connected, and each harness's own loop calls
  `health` through it. For the unpinned launchers the Claude Code line
  printed is the README's own, so that the README's line is the one tested;
- Codex: `codex mcp add resmon -- npx -y resmon-mcp` (and the uvx line)
  writes `command = "npx"` (or "uvx"), and `codex exec` calls `health`
  through it.

Usage: install.py --bundle DIR --work DIR --fake BIN --verdaccio BIN
       --pypi-server BIN --uv BIN --bin-dir DIR --claude BIN --codex BIN
"""

import json
import os
import shlex
import signal
import subprocess
import sys
import time
import tomllib

from kit.claude import Claude
from kit.codex import Codex, output_json
from kit.home import ScratchHome
from kit.mcp import EXPECTED_TOOLS, McpSession, Surface
from kit.messages_api import AnthropicStandin
from kit.openai_api import ResponsesStandin
from kit.registration import Registration
from kit.tally import Tally, brief, run_driver
from registries import RUN_WITHIN_S, Home, PyPIServer, Verdaccio, link_tools

HERE = os.path.dirname(os.path.abspath(__file__))
NPX = ["npx", "-y", "resmon-mcp"]
UVX = ["uvx", "resmon-mcp"]
README_SECTION = "### From the first published release on"
# The harnesses a first run is tried with, by their `--for` names.
FIRST_RUN_HARNESSES = ("claude-code", "codex")


def sh_lines(path: str, after: str | None) -> list[list[str]]:
    """The lines of the sh blocks of a Markdown file (only of the section
    under the heading `after`, when given), each split into words, comments
    left out: the lines a person copies."""
    with open(path) as f:
        text = f.read()
    if after is not None:
        text = text[text.index(after):] if after in text else ""
        text = text.split("\n## ", 1)[0]
    blocks = [part.split("```", 1)[0] for part in text.split("```sh\n")[1:]]
    lines = [shlex.split(line.split("#", 1)[0]) for block in blocks for line in block.splitlines()]
    return [words for words in lines if words]


def registration_lines(path: str, after: str | None) -> list[list[str]]:
    """The `claude mcp add …` and `codex mcp add …` lines of `sh_lines`."""
    return [words for words in sh_lines(path, after)
            if words[:3] in (["claude", "mcp", "add"], ["codex", "mcp", "add"])]


def check_lines(path: str, after: str | None) -> list[list[str]]:
    """The `… --check --for <harness>` lines of `sh_lines`."""
    return [words for words in sh_lines(path, after) if "--check" in words]


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def server_process(pid: int) -> tuple[int | None, str, dict]:
    """The resmon-mcp binary that is `pid` or was started below it: its pid,
    executable and environment."""
    for child in [pid, *descendants(pid)]:
        try:
            exe = os.readlink(f"/proc/{child}/exe")
        except OSError:
            continue
        if os.path.basename(exe) == "resmon-mcp":
            with open(f"/proc/{child}/environ", "rb") as f:
                pairs = [item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item]
            return child, exe, {k.decode(): v.decode(errors="replace") for k, v in pairs}
    return None, "", {}


def session_check(tally: Tally, label: str, argv: list[str], home: Home, timings: dict) -> dict:
    """A session from nothing: 25 tools listed, health answered. Returns the
    server's environment as the binary received it."""
    shown = " ".join(argv)
    try:
        session = McpSession(argv, home.env, home.project, within_s=RUN_WITHIN_S)
        tools = session.tools()
        listed_after = time.monotonic() - session.started
        _, exe, environment = server_process(session.proc.pid)
        health = session.request("tools/call", {"name": "health", "arguments": {}})
        code = session.close()
    except (RuntimeError, ValueError, OSError) as e:
        tally.fail(f"{shown}: a stdio session lists the tools and answers health", str(e))
        return {}
    timings[label] = listed_after
    status = (health.get("structuredContent") or {}).get("status")
    tally.check(len(tools) == EXPECTED_TOOLS and not health.get("isError") and status == "ok" and code == 0,
                f"{shown}: a stdio session from nothing lists {EXPECTED_TOOLS} tools and answers health "
                f"(tools listed after {listed_after:.3f} s)",
                f"{len(tools)} tools, health {brief(health, 600)}, exit {code}")
    print(f"# {shown}: the binary ran from {exe}", flush=True)
    return environment


def version_check(tally: Tally, home: Home, launch: list[str], version: str, timings: dict) -> None:
    """`<launch> --version` from nothing prints the binary's version; how long that took goes to `timings`."""
    done, took = home.run([*launch, "--version"])
    timings[f"{launch[0]} --version"] = took
    tally.check(done.returncode == 0 and done.stdout.startswith(f"resmon-mcp {version}"),
                f"{' '.join(launch)} --version, from nothing, prints resmon-mcp {version} ({took:.2f} s)",
                f"exit {done.returncode}: {done.stdout[-400:]} {done.stderr[-800:]}")


def npm_checks(tally: Tally, args, make_home, version: str, timings: dict) -> None:
    with make_home("npx-version") as home:
        version_check(tally, home, NPX, version, timings)
        tally.check(not any(os.path.exists(os.path.join(d, tool)) for d in home.env["PATH"].split(":")
                            for tool in ("cargo", "rustc")),
                    "the person's PATH holds no cargo or rustc", home.env["PATH"])
        launcher_checks(tally, home, version)
    with make_home("npx-session") as home:
        environment = session_check(tally, "npx", NPX, home, timings)
        tally.check(environment.get("RESMON_MCP_LAUNCHER") == "npx"
                    and environment.get("RESMON_MCP_PACKAGE") == "resmon-mcp",
                    "the npm launcher starts the binary with RESMON_MCP_LAUNCHER=npx, RESMON_MCP_PACKAGE=resmon-mcp",
                    {k: v for k, v in environment.items() if k.startswith("RESMON_MCP")})
    with make_home("npx-pinned") as home:
        environment = session_check(tally, "npx pinned", ["npx", "-y", f"resmon-mcp@{version}"], home, {})
        tally.check(environment.get("RESMON_MCP_PACKAGE") == f"resmon-mcp@{version}",
                    f"run as npx -y resmon-mcp@{version}, the binary gets RESMON_MCP_PACKAGE=resmon-mcp@{version}",
                    {k: v for k, v in environment.items() if k.startswith("RESMON_MCP")})
    # A range, as npm takes it: the launcher passes it on and the printed
    # line keeps it, quoted for the shell (resmon closed: exit 1).
    for spec in (f"resmon-mcp@^{version}", f"resmon-mcp@>={version} <99"):
        # Not entered with `with`, which would start the fake resmon.
        home = make_home("npx-range")
        check = ["npx", "-y", spec, "--check", "--for", "claude-code"]
        done, _ = home.run(check)
        line = Registration(done.stdout).claude_line
        expected = ["claude", "mcp", "add", "-s", "user", "resmon", "--", "npx", "-y", spec]
        tally.check(done.returncode == 1 and line is not None and shlex.split(line) == expected,
                    f"{shlex.join(check)} with resmon closed: the line to paste keeps the range, "
                    f"`{shlex.join(expected)}`", f"exit {done.returncode}, printed {line!r}: {done.stdout[-800:]!r}")


def launcher_checks(tally: Tally, home: Home, version: str) -> None:
    """Arguments, exit code and signals through the launcher npx installed,
    compared with the binary it starts; and the sentence for a missing
    platform package."""
    caches = os.path.join(home.home, ".npm", "_npx")
    folders = [os.path.join(caches, d, "node_modules") for d in os.listdir(caches)] if os.path.isdir(caches) else []
    launcher = next((os.path.join(f, "resmon-mcp", "bin", "resmon-mcp.js") for f in folders
                     if os.path.isfile(os.path.join(f, "resmon-mcp", "bin", "resmon-mcp.js"))), None)
    binary = next((os.path.join(f, name, "bin", "resmon-mcp") for f in folders if os.path.isdir(f)
                   for name in os.listdir(f) if name.startswith("resmon-mcp-")), None)
    if not tally.check(launcher is not None and binary is not None and os.access(binary, os.X_OK),
                       "npx installed the launcher and this platform's package, its binary executable",
                       f"found {folders}"):
        return
    installed = sorted(name for f in folders for name in os.listdir(f) if name.startswith("resmon-mcp"))
    with open(os.path.join(os.path.dirname(launcher), "..", "package.json")) as f:
        named = sorted(json.load(f).get("optionalDependencies") or {})
    tally.check(installed == ["resmon-mcp", "resmon-mcp-linux-x64"],
                f"of the {len(named)} platform packages the launcher names ({', '.join(named)}), npm installed "
                "only this platform's", f"installed {installed}")
    call = ["call", "no_such_tool", "{}"]
    through, _ = home.run([*NPX, *call])
    direct, _ = home.run([binary, *call])
    tally.check(through.returncode == direct.returncode != 0 and through.stderr == direct.stderr
                and through.stdout == direct.stdout,
                f"npx -y resmon-mcp {' '.join(call)}: the arguments, output and exit code "
                f"({direct.returncode}) are the binary's own",
                f"through npx: exit {through.returncode} {through.stderr[-300:]!r}; "
                f"direct: exit {direct.returncode} {direct.stderr[-300:]!r}")
    # SIGTERM to the launcher (a harness stopping its server): the binary
    # gets it, and the launcher ends by the same signal.
    proc = subprocess.Popen(["node", launcher], env=home.env, cwd=home.project, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child = None
    deadline = time.monotonic() + 20
    while child is None and time.monotonic() < deadline and proc.poll() is None:
        child, _, _ = server_process(proc.pid)
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    gone = child is not None and not os.path.exists(f"/proc/{child}")
    tally.check(child is not None and gone and code == -signal.SIGTERM,
                "SIGTERM to the npm launcher reaches the binary, and the launcher ends by SIGTERM too",
                f"binary pid {child}, gone {gone}, launcher exit {code}")
    # Optional dependencies turned off: the launcher says which package is missing.
    project = os.path.join(home.home, "omitted")
    os.makedirs(project)
    installed, _ = home.run(["npm", "install", "--omit=optional", "--no-audit", "--no-fund", "resmon-mcp"],
                            cwd=project)
    started, _ = home.run([os.path.join(project, "node_modules", ".bin", "resmon-mcp"), "--version"], cwd=project)
    sentence = started.stderr.strip()
    package = f"resmon-mcp-linux-x64@{version}"
    tally.check(installed.returncode == 0 and started.returncode == 1 and package in sentence
                and len(sentence.splitlines()) == 1 and sentence.count(". ") == 0,
                f"installed without optional dependencies, the launcher names the missing {package} in one sentence",
                f"npm install exit {installed.returncode}; launcher exit {started.returncode}: {sentence!r}")
    print(f"# without its platform package: {sentence}", flush=True)


def uv_checks(tally: Tally, make_home, version: str, timings: dict) -> None:
    with make_home("uvx-version") as home:
        version_check(tally, home, UVX, version, timings)
        call = ["call", "no_such_tool", "{}"]
        through, _ = home.run([*UVX, *call])
        tally.check(through.returncode == 2 and "no_such_tool" in through.stderr,
                    "uvx resmon-mcp call no_such_tool {}: the binary's exit code (2) and sentence come through",
                    f"exit {through.returncode}: {through.stderr[-300:]!r}")
    with make_home("uvx-session") as home:
        environment = session_check(tally, "uvx", UVX, home, timings)
        tally.check("RESMON_MCP_LAUNCHER" not in environment,
                    "uvx starts the binary itself: no launcher variable (the server tells uv's cache by its path)",
                    {k: v for k, v in environment.items() if k.startswith("RESMON_MCP")})


def printed_check(tally: Tally, done, home: Home, launch: list[str], harness: str, verified: bool) -> None:
    """What `<launch> --check --for <harness>` printed: the registration,
    headed by the launcher's own words and no path in npm's or uv's cache,
    marked as not yet verified while resmon is closed and not once it runs
    (exit 1, then 0)."""
    text = done.stdout
    shown = " ".join([*launch, "--check", "--for", harness])
    caches = [os.path.join(home.home, ".npm"), os.path.join(home.home, ".cache"), "/_npx/", "/archive-v",
              "/environments-v"]
    cache_paths = [path for path in caches if path in text or path in done.stderr]
    heading = f"registration: {' '.join(launch)} ("
    marked = "not yet verified" in text
    connected = "\nresult: connected" in text
    state = "with resmon running" if verified else "with resmon closed"
    tally.check(heading in text and not cache_paths and marked != verified and connected == verified
                and (done.returncode == 0) == verified,
                f"{shown} {state}: prints the registration as `{' '.join(launch)}`, no cache path, "
                f"{'verified' if verified else 'marked not yet verified'} (exit {done.returncode})",
                f"exit {done.returncode}, cache paths named {cache_paths}, marked {marked}, connected {connected}: "
                f"{text[-1500:]!r} {done.stderr[-400:]!r}")
    for line in text.splitlines():
        if line.startswith(("registration:", "claude mcp add", "command =", "args =")):
            print(f"# {shown} {state}: {line}", flush=True)


def printed_again(tally: Tally, home: Home, launch: list[str], harness: str, what: str, read, before) -> None:
    """With resmon running, `<launch> --check --for <harness>` prints the
    registration verified, and the same `what` (`read` from what it
    printed) as while resmon was closed."""
    check = [*launch, "--check", "--for", harness]
    running, _ = home.run(check)
    printed_check(tally, running, home, launch, harness, verified=True)
    now = read(Registration(running.stdout))
    tally.check(now == before, f"{' '.join(check)}: once resmon runs, the same {what} as while it was closed",
                f"{now!r} vs {before!r}")


def first_run_claude(tally: Tally, args, make_home, model: AnthropicStandin, launch: list[str], always: set[str],
                     readme_lines: list[list[str]], timings: dict) -> None:
    """From the README to a first answer in Claude Code: one command with
    resmon closed, one paste, then resmon started and a tool called."""
    check = [*launch, "--check", "--for", "claude-code"]
    with Claude(args.claude, model) as claude:
        home = make_home(f"first-claude-{launch[0]}", claude)
        # resmon closed: no fake has started in this home, so no port file is there.
        closed, took = home.run(check)
        timings[f"{' '.join(check)} (resmon closed)"] = took
        printed_check(tally, closed, home, launch, "claude-code", verified=False)
        line = Registration(closed.stdout).claude_line
        expected = ["claude", "mcp", "add", "-s", "user", "resmon", "--", *launch]
        words = shlex.split(line) if line else []
        tally.check(words == expected, f"{' '.join(check)}: the line to paste is `{' '.join(expected)}`",
                    f"printed {line!r}")
        if launch in [w[w.index("--") + 1:] for w in readme_lines]:
            tally.check(words in readme_lines, f"{' '.join(check)}: the line printed is the README's own",
                        f"printed {line!r}, README {readme_lines}")
        if not words:
            return
        # The paste, while resmon is still closed.
        added = claude.run(*words[1:])
        entry = claude.server_entry()
        tally.check(added.returncode == 0 and [entry.get("command"), *(entry.get("args") or [])] == launch,
                    f"the printed `{line}`, pasted while resmon is closed, registers `{' '.join(launch)}`",
                    f"exit {added.returncode}, entry {entry}, {added.stderr[-400:]}")
        with home:
            printed_again(tally, home, launch, "claude-code", "line", lambda printed: printed.claude_line, line)
            got = claude.run("mcp", "get", "resmon")
            tally.check(got.returncode == 0 and "Connected" in got.stdout,
                        f"after the paste of `{line}`, claude mcp get resmon shows Connected",
                        f"exit {got.returncode}: {got.stdout[-600:]} {got.stderr[-300:]}")
            turns = [] if "health" in always else [[("ToolSearch", {"query": "select:mcp__resmon__health",
                                                                     "max_results": 5})]]
            turns.append([("mcp__resmon__health", {})])
            talk = claude.prompt(turns, "--allowedTools", "mcp__resmon__health")
            seen = (talk.seen or [{}])[-1]
            text = json.dumps(seen.get("content"))
            tally.check(talk.ok(len(turns)) and not seen.get("is_error") and '\\"status\\"' in text and "ok" in text,
                        f"after the paste of `{line}`, Claude Code's own loop calls health and its model reads "
                        "the answer", f"{talk.why()}; seen {brief(seen, 600)}")


def first_run_codex(tally: Tally, args, make_home, model: ResponsesStandin, launch: list[str]) -> None:
    """The same for Codex: the printed block pasted into config.toml."""
    check = [*launch, "--check", "--for", "codex"]
    with Codex(args.codex, model) as codex:
        home = make_home(f"first-codex-{launch[0]}", codex)
        closed, _ = home.run(check)
        printed_check(tally, closed, home, launch, "codex", verified=False)
        block = Registration(closed.stdout).codex_block
        try:
            entry = tomllib.loads(block or "").get("mcp_servers", {}).get("resmon", {})
        except tomllib.TOMLDecodeError as e:
            entry = {"error": str(e)}
        tally.check([entry.get("command"), *(entry.get("args") or [])] == launch
                    and entry.get("default_tools_approval_mode") == "writes" and not entry.get("env"),
                    f"{' '.join(check)}: the block to paste starts `{' '.join(launch)}`, asks before each write "
                    "and sets no variable", f"printed {block!r}")
        if not block:
            return
        # The paste: the printed block, as it is, into ~/.codex/config.toml.
        codex.configure(block)
        with home:
            printed_again(tally, home, launch, "codex", "block", lambda printed: printed.codex_block, block)
            done, seen = codex.exec([[("mcp__resmon__health", {})]])
            health = output_json((seen or [{}])[0].get("content")) if seen else None
            tally.check(done.returncode == 0 and isinstance(health, dict) and health.get("status") == "ok",
                        f"after the paste of the block printed by `{' '.join(check)}`, codex exec calls health "
                        "through it and its model reads the answer",
                        f"exit {done.returncode}, saw {brief(seen, 600)}, stderr {done.stderr[-600:]}")


def first_run_checks(tally: Tally, args, make_home, always: set[str], launches: list[list[str]],
                     readme_lines: list[list[str]], timings: dict) -> None:
    with AnthropicStandin() as claude_model, ResponsesStandin() as codex_model:
        for launch in launches:
            first_run_claude(tally, args, make_home, claude_model, launch, always, readme_lines, timings)
            first_run_codex(tally, args, make_home, codex_model, launch)
        claude_model.report_errors(tally)
        codex_model.report_errors(tally)


def codex_checks(tally: Tally, args, make_home, lines: list[list[str]]) -> None:
    with ResponsesStandin() as model:
        for words in lines:
            line, command = words[1:], words[words.index("--") + 1:]
            with Codex(args.codex, model) as codex, make_home(f"codex-{command[0]}", codex):
                added = codex.run(*line)
                with open(codex.config_path) as f:
                    block = f.read()
                entry = tomllib.loads(block).get("mcp_servers", {}).get("resmon", {})
                shown = "codex " + " ".join(line)
                tally.check(added.returncode == 0 and [entry.get("command"), *(entry.get("args") or [])] == command,
                            f"{shown}: writes [mcp_servers.resmon] with command = \"{command[0]}\" and its "
                            "arguments", f"exit {added.returncode}: {block!r} {added.stderr[-300:]}")
                codex.configure(block)
                done, seen = codex.exec([[("mcp__resmon__health", {})]])
                health = output_json((seen or [{}])[0].get("content")) if seen else None
                tally.check(done.returncode == 0 and isinstance(health, dict) and health.get("status") == "ok",
                            f"after `{shown}`, codex exec calls health through it and its model reads the answer",
                            f"exit {done.returncode}, saw {brief(seen, 600)}, stderr {done.stderr[-600:]}")
        model.report_errors(tally)


def main(args, tally: Tally) -> None:
    timings: dict[str, float] = {}
    try:
        exercise(args, tally, timings)
    finally:
        for label, seconds in timings.items():
            print(f"# time from nothing: {label}: {seconds:.3f} s", flush=True)


def exercise(args, tally: Tally, timings: dict[str, float]) -> None:
    os.makedirs(args.work, exist_ok=True)
    link_tools(args.bin_dir, {"uv": args.uv, "uvx": os.path.join(os.path.dirname(args.uv), "uvx")})
    files = sorted(os.listdir(args.bundle))
    repository = os.path.join(HERE, "..", "..")
    readme, package_readme = os.path.join(repository, "README.md"), os.path.join(repository, "bundle",
                                                                                "package-readme.md")
    every_line = registration_lines(readme, README_SECTION)
    packaged = registration_lines(package_readme, None)
    # The Windows lines start npx through `cmd /c`, which this machine has
    # not: each must be its macOS and Linux twin with `cmd /c` before npx
    # (the Wine stage checks that the Windows build's printed registration
    # starts the server that way).
    windows = [w for w in every_line if "--" in w and w[w.index("--") + 1:][:2] == ["cmd", "/c"]]
    lines = [w for w in every_line if w not in windows]
    commands = sorted({tuple(w[w.index("--") + 1:]) for w in lines if "--" in w})
    twins = [[*w[:w.index("--") + 1], "cmd", "/c", *NPX] for w in lines if "--" in w and w[w.index("--") + 1:] == NPX]
    tally.check(len(lines) == 4 and every_line == packaged and commands == sorted({tuple(NPX), tuple(UVX)})
                and windows == twins,
                "the README's registration lines (the npm and PyPI way for Claude Code and Codex, and the npm way "
                "on Windows through cmd /c) are the package README's, and the macOS and Linux ones are run below",
                f"README {every_line}, package README {packaged}, Windows {windows}, expected {twins}")
    checks = check_lines(readme, README_SECTION)
    tally.check(checks == check_lines(package_readme, None)
                and checks == [[*NPX, "--check", "--for", "claude-code"], [*UVX, "--check", "--for", "claude-code"]],
                "the README's first-run commands (`npx -y resmon-mcp --check --for claude-code` and the uvx one) "
                "are the package README's, and are the ones run below",
                f"README {checks}, package README {check_lines(package_readme, None)}")
    launches = [words[:words.index("--check")] for words in checks] or [NPX, UVX]
    launches.insert(1, ["npx", "-y", f"resmon-mcp@{args.version}"])
    with Verdaccio(args.work, args.verdaccio) as npm, PyPIServer(args.work, args.pypi_server) as pypi:
        print(f"# verdaccio on {npm.url}, pypiserver on {pypi.url}", flush=True)
        tarballs = [f for f in files if f.endswith(".tgz")]
        # The platform packages first, so the launcher never names a missing one.
        tarballs.sort(key=lambda name: name == f"resmon-mcp-{args.version}.tgz")
        for tarball in tarballs:
            done = npm.publish(os.path.join(args.bundle, tarball))
            tally.check(done.returncode == 0, f"npm publish {tarball} to the loopback registry",
                        f"exit {done.returncode}: {done.stdout[-300:]} {done.stderr[-600:]}")
        wheels = [os.path.join(args.bundle, f) for f in files if f.endswith(".whl")]
        done = pypi.publish(args.uv, wheels)
        tally.check(done.returncode == 0 and bool(wheels),
                    f"uv publish of {len(wheels)} wheel(s) to the loopback index",
                    f"exit {done.returncode}: {done.stdout[-300:]} {done.stderr[-600:]}")

        def make_home(label: str, harness: ScratchHome | None = None) -> Home:
            """A fresh home; or a harness's own scratch home made a person's."""
            return Home(args.work, label, args.bin_dir, npm.url, pypi.index, args.fake, harness)

        npm_checks(tally, args, make_home, args.version, timings)
        uv_checks(tally, make_home, args.version, timings)
        with make_home("surface") as home:
            always = set(Surface(NPX, home.env, home.project, within_s=RUN_WITHIN_S).always)
        first_run_checks(tally, args, make_home, always, launches, [w for w in lines if w[0] == "claude"],
                         timings)
        codex_checks(tally, args, make_home, [w for w in lines if w[0] == "codex"])


if __name__ == "__main__":
    sys.exit(run_driver("install", ("bundle", "work", "fake", "verdaccio", "pypi-server", "uv", "bin-dir", "claude",
                                    "codex", "version"), main))
