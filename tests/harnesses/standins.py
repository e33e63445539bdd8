"""Loopback stand-ins for what a harness talks to besides resmon-mcp: its
model's API, and a resmon that is gone or frozen. Standard library only.

A stand-in model does not think: it follows a script written into the
user's prompt, one line per tool call,

    CALL <tool name> <JSON arguments>

and makes those calls one per turn, in order. When every call has been
answered it replies with one text message, `SAW <JSON>`, where the JSON is
the list of every tool result the harness handed it, exactly as received.
So the harness's own loop makes every MCP call, and the test reads what its
model was shown. Every request body is also kept (`requests`), so a test
can see which tools the harness offered.

Two APIs are served:
- Gemini's `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`
  (and the non-streaming `:generateContent`), as Gemini CLI calls it with
  GOOGLE_GEMINI_BASE_URL and the API-key auth type;
- OpenAI's `POST /v1/chat/completions`, plain or streamed (`stream: true`),
  as the OpenAI Agents SDK's chat-completions model calls it through
  `AsyncOpenAI(base_url=...)`, and as other OpenAI-compatible clients do.
"""

import json
import os
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CALL_LINE = re.compile(r"^CALL (\S+) (\{.*\})\s*$", re.M)


def script_of(text: str) -> list[tuple[str, dict]]:
    """The CALL lines of a prompt, in order."""
    return [(name, json.loads(arguments)) for name, arguments in CALL_LINE.findall(unquoted(text))]


def unquoted(text: str) -> str:
    """Some clients send the user's text as a JSON string literal; read it as the text."""
    text = text or ""
    if text.startswith('"'):
        try:
            inner = json.loads(text, strict=False)  # raw newlines inside, as sent
            if isinstance(inner, str):
                return inner
        except ValueError:
            pass
    return text


class _Server:
    """A threaded HTTP server on 127.0.0.1 (a free port), stopped on exit."""

    def __init__(self, handler_class):
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(handler_class):
            standin = owner

            def log_message(self, *args):  # keep the test's output clean
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    def record(self, path: str, body) -> None:
        with self.lock:
            self.requests.append({"path": path, "body": body})

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()


class _Handler(BaseHTTPRequestHandler):
    standin: _Server
    # Keep-alive, as real APIs do: some clients (Bun's fetch) treat a
    # connection closed after each answer as a failure.
    protocol_version = "HTTP/1.1"

    def read_json(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw or b"null")
        except ValueError:
            return None

    def send_json(self, status: int, value) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.standin.record(self.path, None)
        self.send_json(404, {"error": {"code": 404, "message": "not served by the stand-in"}})


class _GeminiHandler(_Handler):
    def do_POST(self):
        try:
            self.answer()
        except Exception as e:  # noqa: BLE001 - a broken stand-in must say so, not drop the connection
            self.standin.record("error", f"{type(e).__name__}: {e}")
            self.send_json(500, {"error": {"code": 500, "message": f"stand-in failed: {type(e).__name__}: {e}"}})

    def answer(self):
        body = self.read_json()
        self.standin.record(self.path, body)
        if not re.match(r"^/v1beta/models/[^/:]+:(streamGenerateContent|generateContent)", self.path):
            self.send_json(404, {"error": {"code": 404, "message": f"not served: {self.path}"}})
            return
        turn = _gemini_turn(body or {})
        answer = {
            "candidates": [{"content": {"role": "model", "parts": [turn]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        }
        if "alt=sse" in self.path:
            data = f"data: {json.dumps(answer)}\r\n\r\n".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        else:
            self.send_json(200, answer)


def _gemini_turn(body: dict) -> dict:
    contents = body.get("contents") or []
    prompt = ""
    responses = []
    for content in contents:
        for part in content.get("parts") or []:
            if content.get("role") == "user" and "text" in part and CALL_LINE.search(part["text"]):
                prompt = part["text"]
                responses = []
            if "functionResponse" in part:
                responses.append(part["functionResponse"])
    script = script_of(prompt)
    if len(responses) < len(script):
        name, arguments = script[len(responses)]
        return {"functionCall": {"name": name, "args": arguments}}
    return {"text": "SAW " + json.dumps(responses)}


class GeminiStandin(_Server):
    def __init__(self):
        super().__init__(_GeminiHandler)

    def offered_tools(self, request: dict) -> list[dict]:
        """The function declarations one generate request offered the model."""
        body = request.get("body") or {}
        return [d for tool in body.get("tools") or [] for d in tool.get("functionDeclarations") or []]

    def generate_requests(self) -> list[dict]:
        with self.lock:
            return [r for r in self.requests if "GenerateContent" in r["path"] or "generateContent" in r["path"]]


class _OpenAIHandler(_Handler):
    def do_POST(self):
        try:
            self.answer()
        except Exception as e:  # noqa: BLE001 - a broken stand-in must say so, not drop the connection
            self.standin.record("error", f"{type(e).__name__}: {e}")
            self.send_json(500, {"error": {"message": f"stand-in failed: {type(e).__name__}: {e}"}})

    def answer(self):
        body = self.read_json()
        self.standin.record(self.path, body)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.send_json(404, {"error": {"message": f"not served: {self.path}", "type": "invalid_request_error"}})
            return
        messages = (body or {}).get("messages") or []
        prompt = ""
        results = []
        for message in messages:
            content = message.get("content")
            text = content_text(content)
            if message.get("role") == "user" and CALL_LINE.search(unquoted(text)):
                prompt = text
                results = []
            if message.get("role") == "tool":
                # Kept as sent: a string, or a list of content parts.
                results.append(content)
        script = script_of(prompt)
        if len(results) < len(script):
            name, arguments = script[len(results)]
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"call_{len(results) + 1}", "type": "function",
                                "function": {"name": name, "arguments": json.dumps(arguments)}}],
            }
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": "SAW " + json.dumps(results)}
            finish = "stop"
        model = (body or {}).get("model")
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        if (body or {}).get("stream"):
            # The same turn as one chunk, then the end of the stream.
            delta = dict(message)
            if "tool_calls" in delta:
                delta["tool_calls"] = [dict(call, index=i) for i, call in enumerate(delta["tool_calls"])]
            chunks = [
                {"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 0, "model": model,
                 "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                {"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 0, "model": model,
                 "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage},
            ]
            data = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
            data = data.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_json(200, {
            "id": "chatcmpl-standin", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage,
        })


def content_text(content) -> str:
    """The text of a chat message's content: a string, or a list of parts."""
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


class OpenAIStandin(_Server):
    def __init__(self):
        super().__init__(_OpenAIHandler)


def saw(text: str):
    """The list after `SAW ` in a stand-in model's last message, or None."""
    if not isinstance(text, str) or "SAW " not in text:
        return None
    try:
        return json.loads(text[text.index("SAW ") + 4:])
    except ValueError:
        return None


def _token() -> str:
    return "stand-in-token-" + "x" * 40


class StoppedResmon:
    """What a crashed resmon leaves: a port file and a token file naming a
    port where nothing listens. `env` names them as a harness would."""

    def __init__(self, folder: str):
        os.makedirs(folder, exist_ok=True)
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        with open(os.path.join(folder, "resmon.port"), "w") as f:
            f.write(str(port))
        with open(os.path.join(folder, f"api-token-{port}"), "w") as f:
            f.write(_token())
        os.chmod(os.path.join(folder, f"api-token-{port}"), 0o600)
        self.env = {"RESMON_PORT_FILE": os.path.join(folder, "resmon.port"), "RESMON_STATE_DIR": folder}


class FrozenResmon:
    """A resmon that accepts connections and never answers (a hung app):
    every request waits until the server's own bound gives up on it."""

    def __init__(self, folder: str):
        os.makedirs(folder, exist_ok=True)
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        port = self.listener.getsockname()[1]
        with open(os.path.join(folder, "resmon.port"), "w") as f:
            f.write(str(port))
        with open(os.path.join(folder, f"api-token-{port}"), "w") as f:
            f.write(_token())
        os.chmod(os.path.join(folder, f"api-token-{port}"), 0o600)
        self.env = {"RESMON_PORT_FILE": os.path.join(folder, "resmon.port"), "RESMON_STATE_DIR": folder}
        self.held: list[socket.socket] = []
        self.running = True
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self):
        while self.running:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.held.append(connection)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.running = False
        self.listener.close()
        for connection in self.held:
            connection.close()
