#!/usr/bin/env python3
"""The Windows .exe under Wine, tried as a Windows user would
(docs/setup.md, "Windows").

Started by tests/wine/run.sh inside a loopback-only network namespace, with
the paths it built in WINE_STAGE_* variables. The fake, the PASS and FAIL
lines and the closing line are the test kit's (tests/lib/kit/). Any failure
(or a Wine that cannot start the .exe) exits non-zero.

Every run of the .exe is bounded; a case that hangs fails. Paths are handed
over as a Windows program sees them: Wine maps "/" to drive Z:, so the Linux
folder /tmp/x y is Z:\\tmp\\x y (or Z:/tmp/x y).
"""

import json
import os
import shutil
import subprocess
import sys
import threading
import time

from kit.fake import FakeBackend
from kit.tally import run_driver

WORK = os.environ["WINE_STAGE_WORK"]
EXE = os.environ["WINE_STAGE_EXE"]
LINUX_BIN = os.environ["WINE_STAGE_LINUX_BIN"]
FAKE = os.environ["WINE_STAGE_FAKE"]
TOOLS = os.environ["WINE_STAGE_TOOLS"]
PREFIX = os.path.join(WORK, "prefix")

# A refusal about a local file or value comes at once; a call against the
# fake takes well under a second. Either bound passing means a hang.
PROMPT_S = 5
BOUND_S = 60

BASE_ENV = {
    key: value
    for key, value in os.environ.items()
    if not key.startswith(("RESMON_", "WINE_STAGE_")) and key not in ("DISPLAY", "WAYLAND_DISPLAY")
}
BASE_ENV.update(
    WINEPREFIX=PREFIX,
    WINEDEBUG="-all",
    # No Mono or Gecko install prompts; nothing here needs them.
    WINEDLLOVERRIDES="mscoree,mshtml=",
    # Wine converts file names and environment values with the Unix locale.
    LC_ALL="C.UTF-8",
    RESMON_MCP_TIMEOUT_MS="5000",
)

# The answers of every run of the .exe, for the closing check that none
# holds a CR.
every_stdout = []
# The kit's tally of this run, set by exercise(); the cases read as a list
# of records, so they reach it through record().
tally = None


def record(name, ok, why=""):
    tally.check(ok, name, why)


def zb(path):
    """A Linux path as Windows writes it: Z:\\…"""
    return "Z:" + path.replace("/", "\\")


def zf(path):
    """The same path with forward slashes: Z:/…"""
    return "Z:" + path


class Run:
    def __init__(self, code, stdout, stderr, took):
        self.code, self.stdout, self.stderr, self.took = code, stdout, stderr, took

    def text(self):
        return self.stdout.decode("utf-8", "replace")

    def err(self):
        return self.stderr.decode("utf-8", "replace")

    def json(self):
        try:
            return json.loads(self.stdout)
        except ValueError:
            return None

    def __repr__(self):
        return f"exit {self.code} after {self.took:.1f} s; stdout {self.text()[:600]!r}; stderr {self.err()[:600]!r}"


# Runs that ended with a failing exit and nothing at all on stdout or
# stderr, each run once more (see run()).
silent_reruns = []
# How many such runs one stage may meet before that alone fails it.
SILENT_RUNS_TOLERATED = 1


def run_once(program, args, env, stdin, timeout):
    full = dict(BASE_ENV)
    full.update(env or {})
    started = time.monotonic()
    try:
        done = subprocess.run(
            ["wine", program, *args], input=stdin, capture_output=True, env=full, timeout=timeout, cwd=WORK
        )
    except subprocess.TimeoutExpired as timed_out:
        return Run(None, timed_out.stdout or b"", b"did not finish (hang)", time.monotonic() - started)
    return Run(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def run(program, args, env=None, stdin=b"", timeout=BOUND_S, rerun_silent=True):
    """One bounded run under Wine.

    On every failing exit the .exe says why: `call` prints its error object
    on stdout (docs/setup.md, "What the model reads"), `--check` its trace,
    and the rest a sentence on stderr. Only when writing to both pipes fails
    does it end with nothing said, and no case here expects that. A failing
    exit with nothing on either pipe is then Wine failing to start the
    program or to carry its output, which Debian's Wine 8.0 did once in CI
    (exit 1 in under 0.1 s, with the same call passing a moment before and
    after) and never in about two thousand runs on a developer machine.
    Such a run is run once more and named in a NOTE line at once; the case
    judges the second run. A .exe that truly fails in silence fails the
    second time too, and a stage that meets more than SILENT_RUNS_TOLERATED
    such runs fails on that alone (the closing check in exercise())."""
    result = run_once(program, args, env, stdin, timeout)
    if rerun_silent and result.code not in (0, None) and not result.stdout and not result.stderr:
        rerun = f"{os.path.basename(program)} {' '.join(args)[:80]} (exit {result.code} after {result.took:.1f} s)"
        silent_reruns.append(rerun)
        print(f"NOTE this run ended with a failing exit and no output at all, so it is run once more: {rerun}",
              flush=True)
        result = run_once(program, args, env, stdin, timeout)
    if program == EXE:
        every_stdout.append(result.stdout)
    return result


def exe(args, env=None, stdin=b"", timeout=BOUND_S, rerun_silent=True):
    return run(EXE, args, env, stdin, timeout, rerun_silent)


def batch(name, lines, env=None, timeout=BOUND_S):
    """Runs a .cmd file through Wine's cmd, as a person at cmd.exe would type
    it. cmd reads a batch file in the console's code page, so the lines stay
    ASCII and any non-ASCII path arrives through the environment."""
    path = os.path.join(WORK, name)
    with open(path, "w", encoding="ascii", newline="\r\n") as file:
        file.write("@echo off\n" + "\n".join(lines) + "\n")
    return run("cmd", ["/c", zb(path)], env, timeout=timeout)


class FakeFiles:
    """A running fake (the kit's FakeBackend) as the cases name it: its port
    file and state folder as Linux paths, and the port that file holds."""

    def __init__(self, backend):
        self.port_file = backend.env["RESMON_PORT_FILE"]
        self.state_dir = backend.env["RESMON_STATE_DIR"]
        with open(self.port_file) as file:
            self.port = int(file.read().strip())


def windows_env(fake, style):
    return {"RESMON_PORT_FILE": style(fake.port_file), "RESMON_STATE_DIR": style(fake.state_dir)}


def refusal(name, result, *needles, problem=None, forbid=("ermission",)):
    """A bad input: exit 1, backend_unavailable, promptly, saying what it is."""
    answer = result.json() or {}
    message = answer.get("message", "")
    why = []
    if result.code != 1 or answer.get("error") != "backend_unavailable":
        why.append("not a backend_unavailable refusal")
    if result.took > PROMPT_S:
        why.append(f"took {result.took:.1f} s")
    why += [f"no {needle!r}" for needle in needles if needle not in message]
    why += [f"says {word!r}" for word in forbid if word in message]
    if problem and answer.get("detail", {}).get("problem") != problem:
        why.append(f"detail.problem is not {problem!r}")
    record(name, not why, "; ".join(why) + f" ({result!r})")
    return answer


def session_lines(result):
    return [json.loads(line) for line in result.stdout.decode("utf-8").split("\n") if line.strip()]


def harness_session(name, registration_text):
    """Starts the server the way a harness reads an mcpServers block: the JSON
    text parsed, then `command` run with exactly its `env`. CRLF-terminated
    requests, as a Windows client may send them."""
    server = json.loads(registration_text)["mcpServers"]["resmon"]
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "wine", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "health", "arguments": {}}},
    ]
    stdin = "".join(json.dumps(request) + "\r\n" for request in requests).encode()
    result = run(server["command"], server.get("args", []), env=server["env"], stdin=stdin)
    why = []
    try:
        answers = {answer.get("id"): answer for answer in session_lines(result)}
        tools = answers[2]["result"]["tools"]
        if len(tools) != 25:
            why.append(f"{len(tools)} tools listed")
        if answers[3]["result"].get("isError") is not False:
            why.append("health answered an error")
    except (KeyError, ValueError, TypeError) as error:
        why.append(f"no usable answers ({error!r})")
    if b"\r" in result.stdout:
        why.append("CR on stdout")
    record(name, not why, "; ".join(why) + f" ({result!r})")


def printed_registrations(form, report):
    """The registrations `--check --json` carries once it connects, run on
    Windows exactly as printed: the mcpServers JSON block and the Codex TOML
    block. (The command lines, double-quoted for cmd.exe and PowerShell, are
    not run here.) A build whose --check prints none says so in a NOTE line."""
    register = report.get("register")
    if not isinstance(register, dict):
        print(f"NOTE --check --json carries no registrations in this build ({form}); nothing to run", flush=True)
        return
    harness_session(f"--check's printed mcpServers JSON registration starts the server on Windows ({form})",
                    register.get("json", ""))
    try:
        import tomllib
        server = tomllib.loads(register.get("codex", ""))["mcp_servers"]["resmon"]
    except (ImportError, ValueError, KeyError) as error:
        record(f"--check's printed Codex TOML registration parses ({form})", False, repr(error))
        return
    harness_session(f"--check's printed Codex TOML registration starts the server on Windows ({form})",
                    json.dumps({"mcpServers": {"resmon": {"command": server["command"], "env": server.get("env", {})}}}))


def swap_prefix(value, replace):
    """The value with the example folder it starts with (if any) replaced by
    this prefix's, so that a file inside the example folder moves with it."""
    for example, real in replace.items():
        if value == example or value.startswith(example + "\\"):
            return real + value[len(example):]
    return value


def docs_registrations(state_folder):
    """The Windows registrations in docs/setup.md, run as printed, with only
    the example user's folders replaced by this prefix's (same style)."""
    with open(os.path.join(os.environ["WINE_STAGE_REPO"], "docs", "setup.md"), encoding="utf-8") as file:
        section = file.read().split("\n## Windows\n", 1)[-1].split("\n## ", 1)[0]
    blocks = section.split("```")
    json_blocks = [blocks[i + 1][len("json\n"):] for i in range(0, len(blocks) - 1, 2) if blocks[i + 1].startswith("json\n")]
    toml_blocks = [blocks[i + 1][len("toml\n"):] for i in range(0, len(blocks) - 1, 2) if blocks[i + 1].startswith("toml\n")]
    record("docs/setup.md's Windows section has two JSON registrations and one TOML registration",
           len(json_blocks) == 2 and len(toml_blocks) == 1, f"{len(json_blocks)} JSON, {len(toml_blocks)} TOML")
    replace = {"C:\\Users\\me\\bin\\resmon-mcp.exe": zb(EXE), "C:\\Users\\me\\AppData\\Local\\resmon": state_folder}
    for index, text in enumerate(json_blocks):
        try:
            parsed = json.loads(text)["mcpServers"]["resmon"]
        except (ValueError, KeyError) as error:
            record(f"docs JSON registration {index + 1} parses", False, repr(error))
            continue
        forward = "/" in parsed["command"]
        for example, real in replace.items():
            mine, theirs = (example.replace("\\", "/"), real.replace("\\", "/")) if forward else (example, real)
            text = text.replace(json.dumps(mine)[1:-1], json.dumps(theirs)[1:-1])
        harness_session(f"docs JSON registration {index + 1} ({'forward slashes' if forward else 'doubled backslashes'}) "
                        "connects as printed", text)
    for text in toml_blocks:
        try:
            import tomllib
            server = tomllib.loads(text)["mcp_servers"]["resmon"]
        except (ImportError, ValueError, KeyError) as error:
            record("docs TOML registration parses", False, repr(error))
            continue
        server = {"command": replace.get(server["command"], server["command"]),
                  "env": {key: swap_prefix(value, replace) for key, value in server.get("env", {}).items()}}
        harness_session("docs TOML registration (single-quoted backslashes) connects as printed",
                        json.dumps({"mcpServers": {"resmon": server}}))


def readme_windows_lines():
    """The README's Windows lines for npm (`... -- cmd /c npx -y resmon-mcp`,
    for Claude Code and Codex) start the server as the .exe's own printed
    registration does when the npm launcher started it: the same Claude Code
    line but for its `-e` options (on Windows the default state folder comes
    from LOCALAPPDATA, which the printed line writes out for harnesses that
    pass only a short list of variables), and a Codex block that starts the
    same command. (The install stage runs the other lines.)"""
    import shlex
    import tomllib
    with open(os.path.join(os.environ["WINE_STAGE_REPO"], "README.md"), encoding="utf-8") as file:
        section = file.read().split("\n### From the first published release on\n", 1)[-1].split("\n## ", 1)[0]
    blocks = [part.split("```", 1)[0] for part in section.split("```sh\n")[1:]]
    lines = [shlex.split(line.split("#", 1)[0]) for block in blocks for line in block.splitlines()]
    windows = {words[0]: words for words in lines if words and "cmd" in words and "/c" in words}
    launcher = {"RESMON_MCP_LAUNCHER": "npx", "RESMON_MCP_PACKAGE": "resmon-mcp"}
    claude = exe(["--check", "--for", "claude-code"], launcher)
    printed = next((line.strip() for line in claude.text().splitlines() if line.strip().startswith("claude mcp add")), "")
    words = shlex.split(printed, posix=False)
    without_variables = [word for index, word in enumerate(words)
                         if word != "-e" and (index == 0 or words[index - 1] != "-e")]
    record("the README's Windows Claude Code line is the one the .exe prints when npx started it, but for the "
           "variables it writes out",
           "claude" in windows and without_variables == windows["claude"],
           f"README {windows.get('claude')}, printed {printed!r}: {claude!r}")
    codex = exe(["--check", "--for", "codex"], launcher)
    text = codex.text()
    block = text[text.find("[mcp_servers.resmon]"):] if "[mcp_servers.resmon]" in text else ""
    try:
        entry = tomllib.loads("\n".join(line for line in block.splitlines() if not line.startswith("  ")))
        entry = entry["mcp_servers"]["resmon"]
        started = [entry["command"], *entry.get("args", [])]
    except (ValueError, KeyError) as error:
        started = [repr(error)]
    line = windows.get("codex", [])
    record("the README's Windows Codex line starts what the .exe's printed Codex block starts",
           "--" in line and started == line[line.index("--") + 1:],
           f"README {line}, printed block starts {started}: {codex!r}")


def state_dir_cases(local, default_fake, default_health, fake, linux_health):
    """RESMON_STATE_DIR on Windows (contract-notes 1): the default folder
    written another way (other letter case, a trailing separator, the other
    slash) is still the default, and its port file is read; another folder
    with nothing naming a port is refused and the default port file is left
    alone; with RESMON_PORT_FILE or RESMON_PORT beside it, the named
    instance answers."""
    default = local + "\\resmon"
    for form, spelling in (("other case and a trailing backslash", default.upper() + "\\"),
                           ("forward slashes and a trailing slash", default.replace("\\", "/") + "/"),
                           ("lower case with forward slashes", default.lower().replace("\\", "/"))):
        run_ = exe(["call", "health", "{}"], {"RESMON_STATE_DIR": spelling})
        record(f"RESMON_STATE_DIR naming the default folder with {form} reads the default port file",
               run_.code == 0 and run_.stdout == default_health.stdout and default_health.code == 0,
               f"{spelling}: {run_!r}")
    check = exe(["--check"], {"RESMON_STATE_DIR": default.upper() + "\\"})
    record("--check says the default folder, spelled otherwise, is the one RESMON_STATE_DIR names",
           check.code == 0 and "the folder RESMON_STATE_DIR names, so its port file is read" in check.text(),
           repr(check))

    # A folder of its own holding a token for the default instance's port:
    # had the default port file been read, the call would have gone through.
    named = os.path.join(WORK, "named state")
    os.makedirs(named)
    default_unix = os.path.dirname(default_fake.port_file)
    shutil.copy(os.path.join(default_unix, f"api-token-{default_fake.port}"), named)
    for form, style in (("Z:\\", zb), ("Z:/", zf)):
        answer = refusal(f"RESMON_STATE_DIR naming another folder ({form}) with no port named is refused",
                         exe(["call", "health", "{}"], {"RESMON_STATE_DIR": style(named)}),
                         "A state directory names no instance", "Set RESMON_PORT", "RESMON_PORT_FILE",
                         problem="state_dir_names_no_port")
        record(f"that refusal says no port was named and nothing was tried ({form})",
               answer.get("no_port_named") is True and answer.get("tried") == [], repr(answer))
    check = exe(["--check"], {"RESMON_STATE_DIR": zb(named)})
    record("--check's trace says why the default port file was not read",
           check.code == 1 and "not the folder RESMON_STATE_DIR names; a state directory names no instance" in check.text()
           and not any(line.strip().startswith("port file ") for line in check.text().splitlines()), repr(check))
    for form, env in (("RESMON_PORT_FILE", {"RESMON_STATE_DIR": zf(fake.state_dir), "RESMON_PORT_FILE": zf(fake.port_file)}),
                      ("RESMON_PORT", {"RESMON_STATE_DIR": zb(fake.state_dir), "RESMON_PORT": str(fake.port)})):
        run_ = exe(["call", "health", "{}"], env)
        record(f"another state folder with {form} beside it reaches that instance",
               run_.code == 0 and run_.stdout == linux_health.stdout, repr(run_))


def prepare_prefix():
    """A fresh Wine prefix with the ProcessPrng stand-in in system32 and
    Wine's own services running; returns system32's path."""
    started = time.monotonic()
    os.makedirs(PREFIX)
    subprocess.run(["wineboot", "-i"], env=BASE_ENV, capture_output=True, timeout=180, check=False)
    system32 = os.path.join(PREFIX, "drive_c", "windows", "system32")
    if not os.path.isdir(system32):
        raise RuntimeError("wineboot did not create a Wine prefix")
    shutil.copy(os.path.join(TOOLS, "bcryptprimitives.dll"), system32)
    # One wineserver and one set of Wine's own services for the whole run,
    # started with no pipe of ours: a service started by a case's run would
    # inherit that run's stdout and hold it open for seconds after the .exe
    # has exited.
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    subprocess.run(["wineserver", "-p"], env=BASE_ENV, timeout=30, check=False, **quiet)
    subprocess.run(["wine", "cmd", "/c", "exit"], env=BASE_ENV, timeout=60, check=False, cwd=WORK, **quiet)
    print(f"Wine prefix ready in {time.monotonic() - started:.1f} s", flush=True)
    return system32


def starts_under_wine(system32):
    """Whether the .exe starts at all, after a NOTE of whether this Wine
    needs the stand-in."""
    # What the stand-in is for: without it, a Wine older than 8.13 cannot start the .exe.
    stand_in = os.path.join(system32, "bcryptprimitives.dll")
    os.rename(stand_in, stand_in + ".off")
    bare = exe(["--version"], timeout=30, rerun_silent=False)
    os.rename(stand_in + ".off", stand_in)
    if bare.code == 0:
        print("NOTE this Wine provides ProcessPrng itself; the stand-in is not needed", flush=True)
    else:
        print(f"NOTE without the stand-in the .exe does not start under this Wine (exit {bare.code})", flush=True)
    version = exe(["--version"])
    started_ok = version.code == 0 and version.text().startswith("resmon-mcp ")
    record("the .exe starts under Wine (ProcessPrng stand-in in the prefix)", started_ok, repr(version))
    return started_ok


def connected_cases(fake, linux_health, search):
    """The fake named by its two files, written both ways (Z:\\ and Z:/):
    --check, its printed registrations, calls, and a harness's session."""
    for form, style in (("Z:\\", zb), ("Z:/", zf)):
        env = windows_env(fake, style)
        check = exe(["--check"], env)
        record(f"--check connects, state folder with a space and non-ASCII given as {form}",
               check.code == 0 and "result: connected" in check.text(), repr(check))
        paths = [line for line in check.text().splitlines() if "Z:" in line]
        mixed = [line for line in paths if "/" in line]
        record(f"--check's trace writes every path with backslashes ({form})", bool(paths) and not mixed,
               f"mixed: {mixed}")
        check_json = exe(["--check", "--json"], env)
        record(f"--check --json reports connected ({form})",
               check_json.code == 0 and (check_json.json() or {}).get("connected") is True, repr(check_json))
        printed_registrations(form, check_json.json() or {})
        health = exe(["call", "health", "{}"], env)
        record(f"call health answers byte for byte as the Linux build ({form})",
               health.code == 0 and health.stdout == linux_health.stdout and linux_health.returncode == 0,
               f"{health!r} vs Linux {linux_health.stdout[:300]!r}")
        with open(search, "rb") as file:
            piped = exe(["call", "search_corpus", "-"], env, stdin=file.read())
        record(f"call search_corpus - reads the arguments from stdin ({form})",
               piped.code == 0 and "error" not in (piped.json() or {"error": 1}), repr(piped))
        registration = json.dumps({"mcpServers": {"resmon": {"command": style(EXE), "env": env}}})
        doubled = "\\\\" in registration
        harness_session(
            f"an mcpServers registration with {'doubled backslashes' if doubled else 'forward slashes'}, "
            "run as a harness runs it: CRLF requests, 25 tools, health",
            registration,
        )


def localappdata():
    """%LOCALAPPDATA% as Windows writes it, and the Linux folder it maps to."""
    local = batch("localappdata.cmd", ["echo %LOCALAPPDATA%"]).text().strip()
    local_unix = subprocess.run(["winepath", "-u", local], capture_output=True, text=True,
                                env=BASE_ENV, timeout=30).stdout.strip()
    # Anything else would start the default instance's fake in a folder
    # relative to the working directory, far from where the .exe looks.
    if not os.path.isabs(local_unix):
        raise RuntimeError(f"winepath could not map %LOCALAPPDATA% ({local!r}) to a Linux folder: {local_unix!r}")
    return local, local_unix


def default_folder_cases(local, default_fake, fake, linux_health):
    """Nothing set at all, so the default state folder %LOCALAPPDATA%\\resmon,
    which `default_fake` serves: discovery, the Windows registrations of
    docs/setup.md and the README, and RESMON_STATE_DIR written against it."""
    default_check = exe(["--check"])
    default_health = exe(["call", "health", "{}"])
    expected = f"port file {local}\\resmon\\resmon.port: holds"
    record("with nothing set, discovery reads %LOCALAPPDATA%\\resmon and connects",
           default_health.code == 0 and expected in default_check.text(),
           f"{default_check!r} {default_health!r}")
    docs_registrations(local + "\\resmon")
    readme_windows_lines()
    state_dir_cases(local, default_fake, default_health, fake, linux_health)


def bad_input_cases(fake, local):
    """Bad inputs. Each must be answered at once, with what it really is."""
    refusal("a port file that is a directory is called a directory, not a permissions problem",
            exe(["call", "health", "{}"], {"RESMON_PORT_FILE": zb(fake.state_dir)}),
            "is a directory, not a file", "resmon.port", problem="directory")
    token_dir = os.path.join(WORK, "token is a folder")
    os.makedirs(os.path.join(token_dir, f"api-token-{fake.port}"))
    refusal("a token file that is a directory is called a directory",
            exe(["call", "health", "{}"], {"RESMON_PORT_FILE": zb(fake.port_file), "RESMON_STATE_DIR": zb(token_dir)}),
            "is a directory, not a file", problem="directory")

    held = os.path.join(WORK, "held.port")
    shutil.copy(fake.port_file, held)
    holder = subprocess.Popen(["wine", os.path.join(TOOLS, "hold_open.exe"), zb(held)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=BASE_ENV, cwd=WORK)
    holding = []
    reader = threading.Thread(target=lambda: holding.append(holder.stdout.readline()))
    reader.start()
    reader.join(30)
    if holding and holding[0].strip() == b"held":
        refusal("a port file held open by another program is said to be held open",
                exe(["call", "health", "{}"], {"RESMON_PORT_FILE": zb(held), "RESMON_STATE_DIR": zb(fake.state_dir)}),
                "is held open by another program", "Close the program", problem="held_open")
    else:
        record("a port file held open by another program is said to be held open", False,
               f"hold_open.exe could not hold the file: {holding!r}")
    holder.stdin.close()
    holder.wait(10)

    quoted_file = '"' + zb(fake.port_file) + '"'
    refusal("a port file path in quotes (Explorer's \"Copy as path\") is refused naming the quotes",
            exe(["call", "health", "{}"], {"RESMON_PORT_FILE": quoted_file, "RESMON_STATE_DIR": zb(fake.state_dir)}),
            "RESMON_PORT_FILE is wrapped in quotes", "Remove them", problem="quoted")
    quoted_dir = refusal("a quoted RESMON_STATE_DIR is refused, and no token path is made from it",
                         exe(["call", "health", "{}"],
                             {"RESMON_PORT_FILE": zb(fake.port_file), "RESMON_STATE_DIR": '"' + zb(fake.state_dir) + '"'}),
                         "RESMON_STATE_DIR is wrapped in quotes", problem="quoted")
    if "token_file" in quoted_dir.get("detail", {}):
        record("no token path is built from a quoted folder", False, repr(quoted_dir))

    unset = batch("unset_home.cmd", ["set LOCALAPPDATA=", "set USERPROFILE=", f'"{zb(EXE)}" call health {{}}'])
    refusal("with LOCALAPPDATA and USERPROFILE unset, those two are named (not HOME)", unset,
            "neither LOCALAPPDATA nor USERPROFILE is set", forbid=("HOME is", "ermission"))

    refusal("RESMON_PORT set but empty is malformed and the port file is not read",
            exe(["call", "health", "{}"], {**windows_env(fake, zb), "RESMON_PORT": ""}),
            "RESMON_PORT is set but empty", "the port file was not read")

    utf16 = os.path.join(WORK, "utf16.port")
    with open(utf16, "wb") as file:
        file.write(f"{fake.port}\r\n".encode("utf-16"))  # with a byte-order mark, as PowerShell 5.1's > writes
    answer = refusal("a UTF-16 port file is named as UTF-16 and its value shown decoded",
                     exe(["call", "health", "{}"], {"RESMON_PORT_FILE": zb(utf16), "RESMON_STATE_DIR": zb(fake.state_dir)}),
                     "is saved as UTF-16", "Save it as plain text", f'"{fake.port}"')
    if answer.get("detail", {}).get("value") != str(fake.port):
        record("the UTF-16 port file's value is shown decoded in detail.value", False, repr(answer))
    bom = os.path.join(WORK, "bom.port")
    with open(bom, "wb") as file:
        file.write(b"\xef\xbb\xbf" + str(fake.port).encode())
    bom_run = exe(["call", "health", "{}"], {"RESMON_PORT_FILE": zb(bom), "RESMON_STATE_DIR": zb(fake.state_dir)})
    record("a port file with a UTF-8 byte-order mark (Notepad) is read", bom_run.code == 0, repr(bom_run))

    empty_state = os.path.join(WORK, "no token here")
    os.makedirs(empty_state)
    refusal("no token file for the named port says an older resmon must be updated",
            exe(["call", "health", "{}"], {"RESMON_PORT_FILE": zb(fake.port_file), "RESMON_STATE_DIR": zb(empty_state)}),
            "There is no token file for port", "older than the local-API token", "must be updated")
    refusal("%LOCALAPPDATA% in an env value is named as not expanded, with the path written out",
            exe(["call", "health", "{}"], {"RESMON_PORT_FILE": zb(fake.port_file), "RESMON_STATE_DIR": "%LOCALAPPDATA%\\resmon"}),
            "%LOCALAPPDATA% was never expanded", f"Here that would be {local}\\resmon.")


def cmd_cases(fake, search):
    """What a person types at cmd.exe."""
    cmd_env = windows_env(fake, zb)
    single = batch("single.cmd", [f'"{zb(EXE)}" call health \'{{}}\''], cmd_env)
    hint = single.err()
    record("cmd.exe: '{}' is refused with a form that works there and a mention of -",
           single.code == 2 and 'Written as "{\\"key\\":\\"value\\"}"' in hint and "pass - in its place" in hint
           and "cmd.exe passes on as they are" in hint, repr(single))
    escaped = batch("escaped.cmd", [f'"{zb(EXE)}" call search_corpus "{{\\"query\\":\\"graph\\"}}"'], cmd_env)
    record('cmd.exe: "{\\"query\\":\\"graph\\"}" is read as JSON',
           escaped.code == 0 and "error" not in (escaped.json() or {"error": 1}), repr(escaped))
    redirected = batch("redirected.cmd", [f'"{zb(EXE)}" call search_corpus - < "{zb(search)}"'], cmd_env)
    record("cmd.exe: call search_corpus - < arguments.json",
           redirected.code == 0 and "error" not in (redirected.json() or {"error": 1}), repr(redirected))
    echoed = batch("echoed.cmd", [f'echo {{"query":"graph"}}| "{zb(EXE)}" call search_corpus -'], cmd_env)
    record("cmd.exe: echo {\"query\":\"graph\"}| … call search_corpus -",
           echoed.code == 0 and "error" not in (echoed.json() or {"error": 1}), repr(echoed))


def exercise(_args, stage_tally):
    global tally
    tally = stage_tally
    try:
        system32 = prepare_prefix()
        if not starts_under_wine(system32):
            print("# Wine cannot start resmon-mcp.exe, so no Windows case can run", flush=True)
            return
        # A state folder with a space and non-ASCII characters, as under a user's name.
        with FakeBackend(FAKE, state_dir=os.path.join(WORK, "state dir Łódź é")) as backend:
            fake = FakeFiles(backend)
            linux_env = {**backend.env, **{key: BASE_ENV[key] for key in ("PATH", "RESMON_MCP_TIMEOUT_MS")}}
            linux_health = subprocess.run([LINUX_BIN, "call", "health", "{}"], capture_output=True, env=linux_env,
                                          timeout=30)
            # The stage's own JSON body for `-`; the .exe reads it from stdin.
            search = os.path.join(WORK, "search.json")
            with open(search, "w") as file:
                file.write('{"query": "graph", "limit": 2}\n')
            connected_cases(fake, linux_health, search)
            local, local_unix = localappdata()
            with FakeBackend(FAKE, state_dir=os.path.join(local_unix, "resmon")) as default_backend:
                default_folder_cases(local, FakeFiles(default_backend), fake, linux_health)
            bad_input_cases(fake, local)
            cmd_cases(fake, search)
        with_cr = [out[:200] for out in every_stdout if b"\r" in out]
        record(f"no CR on stdout in any of the .exe's {len(every_stdout)} answers", not with_cr, repr(with_cr))
        record(f"Wine ended at most {SILENT_RUNS_TOLERATED} run with a failing exit and no output (each was run "
               "once more)", len(silent_reruns) <= SILENT_RUNS_TOLERATED, "; ".join(silent_reruns))
    finally:
        try:
            subprocess.run(["wineserver", "-k"], env=BASE_ENV, timeout=30, check=False)
        except (OSError, subprocess.SubprocessError) as error:
            # run.sh's exit trap tries again; the cases' outcome stands.
            print(f"# wineserver -k did not end Wine's server: {error!r}", flush=True)


if __name__ == "__main__":
    sys.exit(run_driver("wine", (), exercise))
