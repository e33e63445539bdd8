"""Stand-ins for OpenAI's two APIs:

- the Responses API, `POST /v1/responses`, streamed, as Codex calls it
  through a provider whose `wire_api` is "responses". Codex offers an MCP
  server's tools as one namespace (`mcp__resmon`) with a function per tool,
  so a scripted name `mcp__resmon__health` is called as the function
  `health` of the namespace `mcp__resmon`;
- the Chat Completions API, `POST /v1/chat/completions`, plain or streamed
  (`stream: true`), as the OpenAI Agents SDK's chat-completions model calls
  it through `AsyncOpenAI(base_url=...)`, and as other OpenAI-compatible
  clients do.
"""

import itertools
import json

from kit.reading import text_of
from kit.standin import Standin, sse

_ids = itertools.count(1)


class _OpenAI(Standin):
    def error_body(self, status: int, message: str) -> dict:
        return {"error": {"message": message, "type": "invalid_request_error" if status < 500 else "api_error"}}


class ResponsesStandin(_OpenAI):
    api = "Responses"
    turn_path = "/responses"

    def events(self, body: dict) -> list[tuple]:
        items = body.get("input") or []
        if isinstance(items, str):
            items = [{"type": "message", "role": "user", "content": items}]
        out = []
        for item in items:
            if item.get("role") == "user":
                out.append(("user", text_of(item.get("content"))))
            elif item.get("type") == "function_call":
                out.append(("call", item.get("call_id"), {"name": item.get("name"),
                                                          "namespace": item.get("namespace"),
                                                          "input": item.get("arguments")}))
            elif item.get("type") == "function_call_output":
                out.append(("result", item.get("call_id"), {"content": item.get("output")}))
        return out

    def answer(self, handler, body: dict, step) -> None:
        if isinstance(step, str):
            items = [{"type": "message", "id": "msg_standin", "role": "assistant", "status": "completed",
                      "content": [{"type": "output_text", "text": step, "annotations": []}]}]
        else:
            index, calls = step
            items = []
            for k, (name, arguments) in enumerate(calls):
                namespace, _, function = name.rpartition("__")
                item = {"type": "function_call", "id": f"fc_standin_{index + 1}_{k + 1}",
                        "call_id": f"call_standin_{index + 1}_{k + 1}", "name": function or name,
                        "arguments": json.dumps(arguments), "status": "completed"}
                if namespace:
                    item["namespace"] = namespace
                items.append(item)
        response = {"id": f"resp_standin_{next(_ids)}", "object": "response", "created_at": 0,
                    "status": "in_progress", "model": body.get("model"), "output": []}
        events = [("response.created", {"type": "response.created", "sequence_number": 0, "response": response})]
        for index, item in enumerate(items):
            for kind in ("response.output_item.added", "response.output_item.done"):
                events.append((kind, {"type": kind, "output_index": index, "item": item}))
        done = dict(response, status="completed", output=items,
                    usage={"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
                           "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2})
        events.append(("response.completed", {"type": "response.completed", "response": done}))
        handler.send_events(sse(events))


class ChatStandin(_OpenAI):
    api = "Chat Completions"
    turn_path = "/chat/completions"

    def events(self, body: dict) -> list[tuple]:
        out = []
        for message in body.get("messages") or []:
            role = message.get("role")
            if role == "user":
                out.append(("user", text_of(message.get("content"))))
            calls = message.get("tool_calls") if role == "assistant" else None
            for call in calls or []:
                function = call.get("function") or {}
                out.append(("call", call.get("id"), {"name": function.get("name"),
                                                     "input": function.get("arguments")}))
            if role == "tool":
                # Kept as sent: a string, or a list of content parts.
                out.append(("result", message.get("tool_call_id"), {"content": message.get("content")}))
        return out

    def answer(self, handler, body: dict, step) -> None:
        if isinstance(step, str):
            message, finish = {"role": "assistant", "content": step}, "stop"
        else:
            index, calls = step
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{index + 1}_{k + 1}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(arguments)}}
                for k, (name, arguments) in enumerate(calls)]}
            finish = "tool_calls"
        model = body.get("model")
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        if not body.get("stream"):
            handler.send_json(200, {"id": "chatcmpl-standin", "object": "chat.completion", "created": 0,
                                    "model": model, "usage": usage,
                                    "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
            return
        # The same turn as one chunk, then the end of the stream.
        delta = dict(message)
        if "tool_calls" in delta:
            delta["tool_calls"] = [dict(call, index=i) for i, call in enumerate(delta["tool_calls"])]
        chunk = {"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 0, "model": model}
        chunks = [dict(chunk, choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
                  dict(chunk, choices=[{"index": 0, "delta": {}, "finish_reason": finish}], usage=usage)]
        data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        handler.send_events(data.encode())
