"""What every model stand-in shares (the APIs are in the `*_api` modules):
a threaded HTTP server on a free loopback port, stopped on exit; every
request kept (`requests`), so that a test can read the tool definitions
and system text a harness sent; and the way through a conversation.

An API tells the stand-in three things: which paths are a model turn
(`is_turn`, by default those that end with `turn_path`), the conversation
of a request body as events (`events`), and how to answer a turn
(`answer`). The events are ("user", text) for each user
message, ("call", id, {"name", "input", …}) for each tool call the model
made, and ("result", id, {"content", …}) for what the harness answered it.
From them `turn(body)` reads where the script is: the next turn's calls, or
the report once all are made (script.py says how a script reads).

`probe`, when set, is called as each model turn arrives, and what it
returns is kept beside the request (`scripted_marks`): a test can so read,
for instance, what had reached resmon before the model's first answer.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from kit.reading import unquoted
from kit.script import TURN_LINE, next_turn, report, turns_of


class _Handler(BaseHTTPRequestHandler):
    standin: "Standin"
    # Keep-alive, as real APIs do: some clients (Bun's fetch) treat a
    # connection closed after each answer as a failure.
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep the test's output clean
        pass

    def read_json(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw or b"null")
        except ValueError:
            return None

    def send_json(self, status: int, value) -> None:
        self.send_body(status, "application/json", json.dumps(value).encode())

    def send_events(self, data: bytes) -> None:
        """A whole server-sent event stream, in one answer."""
        self.send_body(200, "text/event-stream", data)

    def send_body(self, status: int, kind: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def not_served(self) -> None:
        self.send_json(404, self.standin.error_body(404, f"not served by the stand-in: {self.path}"))

    def do_GET(self):
        self.standin.record(self.path, None)
        self.not_served()

    def do_POST(self):
        try:
            body = self.read_json()
            self.standin.record(self.path, body)
            self.standin.serve(self, body or {})
        except Exception as e:  # noqa: BLE001 - a broken stand-in must say so, not drop the connection
            self.standin.record("error", f"{type(e).__name__}: {e}")
            self.send_json(500, self.standin.error_body(500, f"stand-in failed: {type(e).__name__}: {e}"))


class Standin:
    """The server; `with Standin() as model:` serves at `model.url`."""

    api = "model"
    turn_path = ""

    def __init__(self):
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.scripts: list[tuple[str, list]] = []
        self.probe = None
        owner = self

        class Handler(_Handler):
            standin = owner

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

    # --- what an API says ----------------------------------------------

    def is_turn(self, path: str) -> bool:
        return path_of(path).endswith(self.turn_path)

    def events(self, body: dict) -> list[tuple]:
        raise NotImplementedError

    def answer(self, handler: _Handler, body: dict, step: tuple[int, list] | str) -> None:
        """Sends `step` (the next turn's index and calls, or the last
        message's text) in the API's own form."""
        raise NotImplementedError

    def serve(self, handler: _Handler, body: dict) -> None:
        if self.is_turn(handler.path):
            self.answer(handler, body, self.turn(body))
        else:
            handler.not_served()

    def error_body(self, status: int, message: str) -> dict:
        return {"error": {"code": status, "message": message}}

    # --- the conversation ----------------------------------------------

    def script(self, trigger: str, turns: list[list[tuple[str, dict]]]) -> None:
        """A conversation whose user message holds `trigger` follows `turns`."""
        self.scripts.append((trigger, turns))

    def turns_for(self, text: str) -> list | None:
        text = unquoted(text)
        if TURN_LINE.search(text):
            return turns_of(text)
        return next((turns for trigger, turns in self.scripts if trigger in text), None)

    def conversation(self, body: dict) -> tuple[list | None, list[dict]]:
        """The script of a request's conversation (None when it holds none:
        a title, a summary, a probe of the harness's own), and every call
        made since it began, each with what the harness answered."""
        events = self.events(body)
        for start, event in enumerate(events):
            turns = self.turns_for(event[1]) if event[0] == "user" else None
            if turns is not None:
                break
        else:
            return None, []
        calls, results = {}, {}
        for event in events[start + 1:]:
            if event[0] == "call":
                calls.setdefault(event[1], event[2])
            elif event[0] == "result":
                results[event[1]] = event[2]
        return turns, [dict(call, **results.get(key, {"content": None})) for key, call in calls.items()]

    def turn(self, body: dict) -> tuple[int, list] | str:
        """The next turn, its index and calls; or, once the script is done,
        the text of the last message (the report, or a short answer where
        the conversation holds no script)."""
        turns, seen = self.conversation(body)
        if turns is None:
            return "ok"
        return next_turn(turns, len(seen)) or report(seen)

    # --- what the test reads -------------------------------------------

    def record(self, path: str, body) -> None:
        mark = self.probe() if self.probe is not None and self.is_turn(path) else None
        with self.lock:
            self.requests.append({"path": path, "body": body, "mark": mark})

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()

    def turn_requests(self) -> list[dict]:
        """The bodies of every model turn so far, in order."""
        with self.lock:
            return [r["body"] or {} for r in self.requests if self.is_turn(r["path"])]

    def _scripted(self) -> list[dict]:
        with self.lock:
            return [r for r in self.requests
                    if self.is_turn(r["path"]) and self.conversation(r["body"] or {})[0] is not None]

    def scripted_requests(self) -> list[dict]:
        """The model turns of the scripted conversation (not the harness's side requests)."""
        return [r["body"] for r in self._scripted()]

    def scripted_marks(self) -> list:
        """What `probe` returned as each turn of the scripted conversation arrived."""
        return [r["mark"] for r in self._scripted()]

    def errors(self) -> list[str]:
        with self.lock:
            return [r["body"] for r in self.requests if r["path"] == "error"]

    def report_errors(self, tally) -> None:
        """A failure when the stand-in failed to answer a request."""
        if self.errors():
            tally.fail(f"the {self.api} stand-in answered every request", f"it failed: {self.errors()[:3]}")


def sse(events: list[tuple[str, dict]]) -> bytes:
    """Server-sent events, each an `event: <kind>` line and a `data: <json>` line."""
    return "".join(f"event: {kind}\ndata: {json.dumps(data)}\n\n" for kind, data in events).encode()


def path_of(path: str) -> str:
    """A request's path without its query and trailing slash."""
    return path.split("?")[0].rstrip("/")
