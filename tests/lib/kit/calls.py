"""What every driver calls and expects, from tests/it/calls.rs, the one list
for every stage (dumped to calls.json by tests/clients/dump_calls.rs, which
kit.sh's `kit_build calls` runs): the valid calls, the calls the server
must refuse, and the write tools."""

import json


def _dumped(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


def load_calls(path: str) -> tuple[list[dict], str]:
    """The valid calls in calls.rs's order, with the runtime id's placeholder left in; and the placeholder."""
    data = _dumped(path)
    return data["calls"], data["runtime_id_placeholder"]


def invalid_calls(path: str) -> list[tuple[str, dict, str]]:
    """Calls the server must refuse before sending anything, with the
    argument it must name: (tool, arguments, detail.argument)."""
    return [(tool, arguments, argument) for tool, arguments, argument in _dumped(path)["invalid_calls"]]


def write_tools(path: str) -> list[str]:
    """The seven write tools of contract 1.0, as calls.rs writes them out
    (not as the server under test marks them)."""
    return _dumped(path)["write_tools"]


def with_runtime_id(value, placeholder: str, runtime_id: str):
    """A copy of `value` with every string equal to the placeholder replaced by the real id."""
    if isinstance(value, dict):
        return {k: with_runtime_id(v, placeholder, runtime_id) for k, v in value.items()}
    if isinstance(value, list):
        return [with_runtime_id(v, placeholder, runtime_id) for v in value]
    if value == placeholder:
        return runtime_id
    return value


def first_call_per_tool(path: str, runtime_id: str) -> dict[str, dict]:
    """Each tool's first valid arguments, with the fake's runtime id put in."""
    calls, placeholder = load_calls(path)
    first: dict[str, dict] = {}
    for call in calls:
        first.setdefault(call["tool"], with_runtime_id(call["arguments"], placeholder, runtime_id))
    return first
