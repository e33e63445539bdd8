"""A stand-in for Gemini's API, as Gemini CLI calls it with
GOOGLE_GEMINI_BASE_URL and the API-key auth type:
`POST /v1beta/models/<model>:streamGenerateContent?alt=sse` and the
non-streaming `:generateContent`. A turn holds one or more `functionCall`
parts; the CLI answers each with a `functionResponse` part, in order (the
API gives calls no id), and `content` is that part's `response`."""

import json
import re

from kit.standin import Standin

_TURN_PATH = re.compile(r"^/v1beta/models/[^/:]+:(streamGenerateContent|generateContent)")


class GeminiStandin(Standin):
    api = "Gemini"

    def is_turn(self, path: str) -> bool:
        return bool(_TURN_PATH.match(path))

    def events(self, body: dict) -> list[tuple]:
        out, calls, results = [], 0, 0
        for content in body.get("contents") or []:
            for part in content.get("parts") or []:
                if content.get("role") == "user" and "text" in part:
                    out.append(("user", part["text"]))
                if "functionCall" in part:
                    call = part["functionCall"]
                    out.append(("call", calls, {"name": call.get("name"), "input": call.get("args")}))
                    calls += 1
                if "functionResponse" in part:
                    out.append(("result", results, {"content": part["functionResponse"].get("response")}))
                    results += 1
        return out

    def offered_tools(self, body: dict) -> list[dict]:
        """The function declarations one turn offered the model."""
        return [d for tool in body.get("tools") or [] for d in tool.get("functionDeclarations") or []]

    def answer(self, handler, body: dict, step) -> None:
        if isinstance(step, str):
            parts = [{"text": step}]
        else:
            parts = [{"functionCall": {"name": name, "args": arguments}} for name, arguments in step[1]]
        answer = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        }
        if "alt=sse" in handler.path:
            handler.send_events(f"data: {json.dumps(answer)}\r\n\r\n".encode())
        else:
            handler.send_json(200, answer)
