"""The calls every driver makes: tests/it/calls.rs's valid calls, the one
list for every stage (dumped to JSON by tests/clients/dump_calls.rs, which
kit.sh's `kit_build calls` runs), and the calls the server must refuse."""

import json

# Calls the server must refuse before sending anything, with the argument it
# must name: (tool, arguments, detail.argument). tests/clients/ts_client.mjs
# keeps the same list.
INVALID_CALLS = [
    ("search_corpus", {"query": "graph attention", "limit": 0}, "limit"),
    ("get_routine", {"routine_id": "seven"}, "routine_id"),
    ("get_analytics", {"view": "nonsense"}, "view"),
    ("health", {"expected_runtime_id": "not-a-uuid"}, "expected_runtime_id"),
    ("run_routine", {}, "routine_id"),
    ("get_execution", {"exec_id": 115, "surplus": True}, "surplus"),
]


def load_calls(path: str) -> tuple[list[dict], str]:
    """The valid calls in calls.rs's order, with the runtime id's placeholder left in; and the placeholder."""
    with open(path) as f:
        data = json.load(f)
    return data["calls"], data["runtime_id_placeholder"]


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
