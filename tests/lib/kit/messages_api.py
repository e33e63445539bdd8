"""A stand-in for Anthropic's Messages API, as Claude Code calls it with
ANTHROPIC_BASE_URL: `POST /v1/messages` (streamed as server-sent events
when the request says `stream: true`) and `/v1/messages/count_tokens`."""

import itertools
import json

from kit.reading import text_of
from kit.standin import Standin, path_of, sse

# Every answer gets its own message id: Claude Code joins assistant messages
# that share one, as it would the parts of one streamed message.
_ids = itertools.count(1)


def _blocks(content) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


class AnthropicStandin(Standin):
    api = "Messages"
    turn_path = "/v1/messages"

    def error_body(self, status: int, message: str) -> dict:
        return {"type": "error", "error": {"type": "api_error" if status >= 500 else "not_found_error",
                                           "message": message}}

    def events(self, body: dict) -> list[tuple]:
        out = []
        for message in body.get("messages") or []:
            role, blocks = message.get("role"), _blocks(message.get("content"))
            if role == "user":
                out.append(("user", text_of([b for b in blocks if b.get("type") == "text"])))
            for block in blocks:
                if role == "assistant" and block.get("type") == "tool_use":
                    out.append(("call", block.get("id"), {"name": block.get("name"), "input": block.get("input")}))
                elif block.get("type") == "tool_result":
                    out.append(("result", block.get("tool_use_id"),
                                {"content": block.get("content"), "is_error": bool(block.get("is_error"))}))
        return out

    def serve(self, handler, body: dict) -> None:
        if path_of(handler.path).endswith("/count_tokens"):
            handler.send_json(200, {"input_tokens": 1})
        else:
            super().serve(handler, body)

    def answer(self, handler, body: dict, step) -> None:
        if isinstance(step, str):
            blocks = [{"type": "text", "text": step}]
        else:
            index, calls = step
            blocks = [{"type": "tool_use", "id": f"toolu_standin_{index + 1}_{k + 1}", "name": name,
                       "input": arguments} for k, (name, arguments) in enumerate(calls)]
        stop = "end_turn" if isinstance(step, str) else "tool_use"
        message = {"id": f"msg_standin_{next(_ids)}", "type": "message", "role": "assistant",
                   "model": body.get("model") or "claude-stand-in", "content": blocks, "stop_reason": stop,
                   "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
        if not body.get("stream"):
            handler.send_json(200, message)
            return
        events = [("message_start", {"type": "message_start",
                                     "message": dict(message, content=[], stop_reason=None)})]
        for index, block in enumerate(blocks):
            if block["type"] == "tool_use":
                start = dict(block, input={})
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            else:
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            events += [("content_block_start", {"type": "content_block_start", "index": index,
                                                "content_block": start}),
                       ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
                       ("content_block_stop", {"type": "content_block_stop", "index": index})]
        events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": {"output_tokens": 1}}),
                   ("message_stop", {"type": "message_stop"})]
        handler.send_events(sse(events))
