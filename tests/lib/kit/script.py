"""The script a stand-in model follows, and the report it ends with.

A stand-in model does not think: it follows a script written into the
user's message, one line per assistant turn,

    CALL <tool name> <JSON input>          one tool call in the turn
    BATCH <JSON list of [name, input]>     several tool calls in one turn

and makes those turns in order, each after the harness has answered the
previous one. When every turn has been answered it replies with one text
message, `SAW <JSON>`: a list with, for every call, its `name`, its
`input`, and the result the harness handed the model (`content`, exactly as
received, and `is_error` where the API says so). So the harness's own loop
makes every call, and the test reads what its model was shown.

When the user's message is not the test's own words (an MCP prompt that
the harness fetched and sent as the person's message), a stand-in's
`script(trigger, turns)` makes a conversation whose user message holds
`trigger` follow `turns`.
"""

import json
import re

TURN_LINE = re.compile(r"^(CALL|BATCH) (\S.*?)\s*$", re.M)


def turns_of(text: str) -> list[list[tuple[str, dict]]]:
    """The scripted turns of a message, each a list of (name, input)."""
    turns = []
    for kind, rest in TURN_LINE.findall(text or ""):
        if kind == "CALL":
            name, _, arguments = rest.partition(" ")
            turns.append([(name, json.loads(arguments or "{}"))])
        else:
            turns.append([(name, arguments) for name, arguments in json.loads(rest)])
    return turns


def script_line(turns: list[list[tuple[str, dict]]]) -> str:
    """The message that scripts these turns."""
    lines = []
    for turn in turns:
        if len(turn) == 1:
            lines.append(f"CALL {turn[0][0]} {json.dumps(turn[0][1])}")
        else:
            lines.append("BATCH " + json.dumps([[name, arguments] for name, arguments in turn]))
    return "\n".join(lines)


def one_per_turn(calls: list[tuple[str, dict]]) -> str:
    """The message that scripts these calls, one turn each."""
    return script_line([[call] for call in calls])


def next_turn(turns: list[list], made: int) -> tuple[int, list] | None:
    """The turn to make once `made` calls have been made: its index and
    calls; None once every turn is made. Calls are counted one by one, so a
    turn of several calls is over only when all of them are made."""
    count = 0
    for index, turn in enumerate(turns):
        if count + len(turn) > made:
            return index, turn
        count += len(turn)
    return None


def report(seen: list[dict]) -> str:
    """The stand-in's last message: what it was shown for every call."""
    return "SAW " + json.dumps(seen)


def saw(text):
    """The list after `SAW ` in a stand-in model's last message, or None."""
    if not isinstance(text, str) or "SAW " not in text:
        return None
    try:
        return json.loads(text[text.index("SAW ") + 4:])
    except ValueError:
        return None
