"""Loopback stand-ins for the model APIs of Claude Code and Codex, beside
tests/harnesses/standins.py (whose threaded server they reuse). Standard
library only.

A stand-in model does not think: it follows a script written into the
user's prompt, one line per assistant turn,

    CALL <tool name> <JSON input>          one tool call in the turn
    BATCH <JSON list of [name, input]>     several tool calls in one turn

and makes those turns in order, each after the harness has answered the
previous one. When every turn has been answered it replies with one text
message, `SAW <JSON>`: a list with, for every call, its name, its input,
and the result the harness handed the model, exactly as received. So the
harness's own loop makes every call, and the test reads what its model was
shown. Every request body is also kept (`requests`), so a test can see the
tool definitions and system text the harness sent.

Two APIs are served:
- Anthropic's Messages API, `POST /v1/messages` (streamed as server-sent
  events when the request says `stream: true`), and `/v1/messages/count_tokens`,
  as Claude Code calls them with ANTHROPIC_BASE_URL;
- OpenAI's Responses API, `POST /v1/responses` (streamed), as Codex calls it
  through a provider whose `wire_api` is "responses".
A request whose conversation holds no script (a title, a summary, a probe of
the harness's own) gets a short text answer.

When the user's message is not the test's own words (an MCP prompt that
the harness fetched and sent as the person's message), `script(trigger,
turns)` makes a Messages conversation whose user message holds `trigger`
follow `turns`. `probe`, when set, is called as each Messages request
arrives, and what it returns is kept beside the request (`scripted_marks`):
a test can so read, for instance, what had reached resmon before the
model's first answer.
"""

import itertools
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harnesses"))

from standins import _Handler, _Server, saw  # noqa: E402,F401 - saw is re-exported for the drivers

# Every answer gets its own message id: Claude Code joins assistant messages
# that share one, as it would the parts of one streamed message.
_ids = itertools.count(1)
TURN_LINE = re.compile(r"^(CALL|BATCH) (\S.*?)\s*$", re.M)


def turns_of(text: str) -> list[list[tuple[str, dict]]]:
    """The scripted turns of a prompt, each a list of (name, input)."""
    turns = []
    for kind, rest in TURN_LINE.findall(text or ""):
        if kind == "CALL":
            name, _, arguments = rest.partition(" ")
            turns.append([(name, json.loads(arguments or "{}"))])
        else:
            turns.append([(name, arguments) for name, arguments in json.loads(rest)])
    return turns


def script_line(turns: list[list[tuple[str, dict]]]) -> str:
    """The prompt that scripts these turns."""
    lines = []
    for turn in turns:
        if len(turn) == 1:
            lines.append(f"CALL {turn[0][0]} {json.dumps(turn[0][1])}")
        else:
            lines.append("BATCH " + json.dumps([[name, arguments] for name, arguments in turn]))
    return "\n".join(lines)




def _sse(events: list[tuple[str, dict]]) -> bytes:
    return "".join(f"event: {kind}\ndata: {json.dumps(data)}\n\n" for kind, data in events).encode()


class _StreamingHandler(_Handler):
    def do_POST(self):
        try:
            self.answer()
        except Exception as e:  # noqa: BLE001 - a broken stand-in must say so, not drop the connection
            self.standin.record("error", f"{type(e).__name__}: {e}")
            self.send_json(500, {"error": {"type": "api_error", "message": f"stand-in failed: {e}"}})

    def send_events(self, data: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


# --- Anthropic Messages ---------------------------------------------------

def _blocks(content) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def _text_of(content) -> str:
    return "\n".join(block.get("text", "") for block in _blocks(content) if block.get("type") == "text")


def _script_start(messages: list[dict], scripts) -> tuple[int | None, list]:
    """The index of the user message that scripts the conversation, and its turns."""
    for i, message in enumerate(messages):
        if message.get("role") != "user":
            continue
        text = _text_of(message.get("content"))
        if TURN_LINE.search(text):
            return i, turns_of(text)
        for trigger, turns in scripts:
            if trigger in text:
                return i, turns
    return None, []


def anthropic_turn(body: dict, scripts=()) -> list[dict]:
    """The content blocks of the stand-in's next assistant message."""
    messages = body.get("messages") or []
    start, turns = _script_start(messages, scripts)
    if start is None:
        return [{"type": "text", "text": "ok"}]
    calls, results = [], {}
    for message in messages[start + 1:]:
        for block in _blocks(message.get("content")):
            if message.get("role") == "assistant" and block.get("type") == "tool_use":
                calls.append(block)
            elif block.get("type") == "tool_result":
                results[block.get("tool_use_id")] = block
    done = sum(1 for message in messages[start + 1:] if message.get("role") == "assistant"
               and any(b.get("type") == "tool_use" for b in _blocks(message.get("content"))))
    if done < len(turns):
        return [{"type": "tool_use", "id": f"toolu_standin_{done + 1}_{k + 1}", "name": name, "input": arguments}
                for k, (name, arguments) in enumerate(turns[done])]
    seen = []
    for call in calls:
        result = results.get(call.get("id")) or {}
        seen.append({"name": call.get("name"), "input": call.get("input"), "content": result.get("content"),
                     "is_error": bool(result.get("is_error"))})
    return [{"type": "text", "text": "SAW " + json.dumps(seen)}]


class _AnthropicHandler(_StreamingHandler):
    def answer(self):
        body = self.read_json() or {}
        path = self.path.split("?")[0]
        self.standin.record(self.path, body)
        if path.endswith("/count_tokens"):
            self.send_json(200, {"input_tokens": 1})
            return
        if not path.endswith("/v1/messages"):
            self.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})
            return
        blocks = anthropic_turn(body, self.standin.scripts)
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        model = body.get("model") or "claude-stand-in"
        message = {"id": f"msg_standin_{next(_ids)}", "type": "message", "role": "assistant", "model": model,
                   "content": blocks, "stop_reason": stop, "stop_sequence": None,
                   "usage": {"input_tokens": 1, "output_tokens": 1}}
        if not body.get("stream"):
            self.send_json(200, message)
            return
        events = [("message_start", {"type": "message_start", "message": dict(message, content=[], stop_reason=None)})]
        for index, block in enumerate(blocks):
            if block["type"] == "tool_use":
                start = dict(block, input={})
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            else:
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            events += [("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}),
                       ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
                       ("content_block_stop", {"type": "content_block_stop", "index": index})]
        events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": {"output_tokens": 1}}),
                   ("message_stop", {"type": "message_stop"})]
        self.send_events(_sse(events))


def _is_messages(path: str) -> bool:
    return path.split("?")[0].endswith("/v1/messages")


class AnthropicStandin(_Server):
    def __init__(self):
        super().__init__(_AnthropicHandler)
        self.scripts: list[tuple[str, list]] = []
        self.probe = None

    def script(self, trigger: str, turns: list[list[tuple[str, dict]]]) -> None:
        """A conversation whose user message holds `trigger` follows `turns`."""
        self.scripts.append((trigger, turns))

    def record(self, path: str, body) -> None:
        mark = self.probe() if self.probe is not None and _is_messages(path) else None
        with self.lock:
            self.requests.append({"path": path, "body": body, "mark": mark})

    def message_requests(self) -> list[dict]:
        """The bodies of every Messages request so far, in order."""
        with self.lock:
            return [r["body"] for r in self.requests if _is_messages(r["path"])]

    def _scripted(self) -> list[dict]:
        with self.lock:
            return [r for r in self.requests if _is_messages(r["path"])
                    and _script_start((r["body"] or {}).get("messages") or [], self.scripts)[0] is not None]

    def scripted_requests(self) -> list[dict]:
        """The Messages requests of the scripted conversation (not the harness's side requests)."""
        return [r["body"] for r in self._scripted()]

    def scripted_marks(self) -> list:
        """What `probe` returned as each request of the scripted conversation arrived."""
        return [r["mark"] for r in self._scripted()]

    def errors(self) -> list[str]:
        with self.lock:
            return [r["body"] for r in self.requests if r["path"] == "error"]


# --- OpenAI Responses -----------------------------------------------------

def _input_text(item: dict) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def responses_turn(body: dict) -> list[dict]:
    """The output items of the stand-in's next response."""
    items = body.get("input") or []
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    start = None
    for i, item in enumerate(items):
        if item.get("role") == "user" and TURN_LINE.search(_input_text(item)):
            start = i
    if start is None:
        return [{"type": "message", "id": "msg_standin", "role": "assistant", "status": "completed",
                 "content": [{"type": "output_text", "text": "ok", "annotations": []}]}]
    turns = turns_of(_input_text(items[start]))
    calls, outputs = [], {}
    for item in items[start + 1:]:
        if item.get("type") == "function_call":
            calls.append(item)
        elif item.get("type") == "function_call_output":
            outputs[item.get("call_id")] = item.get("output")
    done = len({c.get("call_id") for c in calls})
    # Calls are counted one by one: a turn of several calls ends when all are made.
    index = 0
    count = 0
    while index < len(turns) and count + len(turns[index]) <= done:
        count += len(turns[index])
        index += 1
    if index < len(turns):
        out = []
        for k, (name, arguments) in enumerate(turns[index]):
            namespace, _, function = name.rpartition("__")
            item = {"type": "function_call", "id": f"fc_standin_{index + 1}_{k + 1}",
                    "call_id": f"call_standin_{index + 1}_{k + 1}", "name": function or name,
                    "arguments": json.dumps(arguments), "status": "completed"}
            if namespace:
                item["namespace"] = namespace
            out.append(item)
        return out
    seen = [{"name": c.get("name"), "namespace": c.get("namespace"), "input": c.get("arguments"),
             "content": outputs.get(c.get("call_id"))} for c in calls]
    return [{"type": "message", "id": "msg_standin", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "SAW " + json.dumps(seen), "annotations": []}]}]


class _ResponsesHandler(_StreamingHandler):
    def answer(self):
        body = self.read_json() or {}
        self.standin.record(self.path, body)
        if not self.path.split("?")[0].rstrip("/").endswith("/responses"):
            self.send_json(404, {"error": {"message": f"not served: {self.path}", "type": "invalid_request_error"}})
            return
        items = responses_turn(body)
        response = {"id": f"resp_standin_{next(_ids)}", "object": "response", "created_at": 0, "status": "in_progress",
                    "model": body.get("model"), "output": []}
        events = [("response.created", {"type": "response.created", "sequence_number": 0, "response": response})]
        for index, item in enumerate(items):
            events.append(("response.output_item.added", {"type": "response.output_item.added",
                                                          "output_index": index, "item": item}))
            events.append(("response.output_item.done", {"type": "response.output_item.done",
                                                         "output_index": index, "item": item}))
        done = dict(response, status="completed", output=items,
                    usage={"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
                           "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2})
        events.append(("response.completed", {"type": "response.completed", "response": done}))
        self.send_events(_sse(events))


class ResponsesStandin(_Server):
    def __init__(self):
        super().__init__(_ResponsesHandler)

    def response_requests(self) -> list[dict]:
        with self.lock:
            return [r["body"] for r in self.requests if r["path"].split("?")[0].rstrip("/").endswith("/responses")]

    def errors(self) -> list[str]:
        with self.lock:
            return [r["body"] for r in self.requests if r["path"] == "error"]
