"""The kit every Python driver of an outside program uses (tests/clients,
tests/harnesses, tests/agents, tests/install, tests/wine; the conformance
stage's judge uses its one_line, the bundle stage's checks its tally), so
that a driver keeps only what is its own program's: how to register the
server with it and how to read what it prints; where two stages drive the
same program (Claude Code and Codex, in the agents and the install stage),
that program's home is here too. Standard library only, so that a driver
run by a venv's Python (the Agents SDK's) imports it too.

- `tally`: PASS and FAIL lines, and a driver's main with its closing line;
- `fake`: the fake resmon started and stopped, and a resmon that is gone or
  frozen;
- `calls`: tests/it/calls.rs's valid calls (dumped to JSON by
  tests/clients/dump_calls.rs) and the invalid calls every client makes;
- `mcp`: an MCP stdio session with the server, and the surface it lists;
- `home`: a scratch HOME and a program run inside it with a hang guard;
- `script`, `standin` and the three `*_api` modules: loopback stand-ins for
  the model APIs (Anthropic Messages, OpenAI Responses, Chat Completions,
  Gemini) that follow a script, so that a harness's own loop makes the MCP
  calls, and report what the model was shown;
- `reading`: a tool result read the way a model reads it;
- `claude` and `codex`: Claude Code and Codex run from a scratch HOME
  against their model stand-ins, and what a run printed read back;
- `registration`: what `--check --for <harness>` prints for them, read
  back as a person reads it to paste it;
- `record_stdin`: run as the wrapper of the server, so that a test can
  read what a harness sent it, and imported for that reading (`recorded`,
  `sent`).

The stages' run.sh put tests/lib on PYTHONPATH (tests/lib/kit.sh); to run a
driver by hand, do the same: `PYTHONPATH=tests/lib python3 tests/...`.
"""
