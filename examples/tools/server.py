"""A Brain tool service in Python with only the standard library (the protocol: docs/protocol.md).

Two tools: `echo` answers with JSON; `countdown` streams progress over SSE, then its result, and
stops when Brain closes the connection. `GET /tools` lists both for `brain tools config`.
Run: BRAIN_TOOLS_KEY=secret python3 examples/tools/server.py   (PORT=0 picks a free port)
"""

import hmac
import json
import os
import select
import socket
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = os.environ.get("BRAIN_TOOLS_KEY", "")
if not TOKEN:
    sys.exit("set BRAIN_TOOLS_KEY to the token Brain sends (the binding's token_env)")

MAX_BODY_BYTES = 1024 * 1024
COUNTDOWN_STEP_SECONDS = 0.02

# What GET /tools answers: each tool as its host-config binding needs it.
TOOLS = [
    {
        "name": "echo",
        "description": "Echo text through an external tool service.",
        "input_schema": {
            "type": "object",
            "properties": {"text": {"type": "string", "maxLength": 4096}},
            "required": ["text"],
            "additionalProperties": False,
        },
    },
    {
        "name": "countdown",
        "description": "Count down from a number, reporting each one as progress.",
        "input_schema": {
            "type": "object",
            "properties": {"from": {"type": "integer", "minimum": 1, "maximum": 1000}},
            "additionalProperties": False,
        },
        "output_schema": {
            "type": "object",
            "properties": {"counted": {"type": "integer"}},
            "required": ["counted"],
        },
    },
]


def valid_call(call):
    """Whether the body has what docs/protocol.md says Brain always sends; more fields are fine."""
    return (
        isinstance(call, dict)
        and all(isinstance(call.get(name), str) for name in ("tenant_id", "session_id", "call_id"))
        and isinstance(call.get("arguments"), dict)
    )


class ToolHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as Brain's connection pool expects

    def do_POST(self):
        # Read the whole body before answering, refusals included: on a kept-alive connection the
        # bytes left unread would be taken for the next request. Brain always sends Content-Length.
        length = self.headers.get("Content-Length", "")
        if not length.isdigit():
            return self.refuse(411, b"send Content-Length")
        if int(length) > MAX_BODY_BYTES:
            return self.refuse(413, b"the body is too large")
        body = self.rfile.read(int(length))
        if not self.authorized():
            return self.answer(401, "text/plain", b"")
        if self.path not in ("/tools/echo", "/tools/countdown"):
            return self.answer(404, "text/plain", b"no such tool")  # Brain: http_status, the tool did not run
        try:
            call = json.loads(body)
        except (ValueError, RecursionError):  # not UTF-8, not JSON, or nested past Python's stack
            return self.malformed("the body is not JSON")
        if not valid_call(call):
            return self.malformed("the body must be a JSON object with tenant_id, session_id, call_id and arguments")
        # Authorize with the top-level tenant_id and session_id, never with ids inside arguments.
        args = call["arguments"]
        if self.path == "/tools/echo":
            if not isinstance(args.get("text"), str):
                return self.tool_error("echo needs text, a string")
            result = {"content": [{"type": "text", "text": args["text"]}]}
            return self.answer(200, "application/json", json.dumps(result).encode())
        start = args.get("from", 3)
        # type(), not isinstance: True is an int to Python, but not a number to count from
        if type(start) is not int or not 1 <= start <= 1000:
            return self.tool_error("from must be an integer from 1 to 1000")
        return self.countdown(start, call["call_id"])  # SSE: progress, then the result

    def do_GET(self):
        if not self.authorized():
            return self.answer(401, "text/plain", b"")
        if self.path == "/tools":
            return self.answer(200, "application/json", json.dumps({"tools": TOOLS}).encode())
        return self.answer(404, "text/plain", b"not found")

    def countdown(self, start, call_id):
        # An event stream has no Content-Length and http.server does not chunk a response, so the
        # end of the connection ends the stream: say so, and close it after the result.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for n in range(start, 0, -1):
            # Brain closes the connection when the session is interrupted or closed: stop working.
            if self.caller_gone() or not self.event("progress", {"remaining": n}):
                print(f"{call_id}: cancelled, Brain closed the connection", flush=True)
                return
            time.sleep(COUNTDOWN_STEP_SECONDS)
        result = {"content": [{"type": "text", "text": "liftoff"}], "structured_content": {"counted": start}}
        self.event("result", result)

    def caller_gone(self):
        # Brain sends nothing more on a connection while it waits for the answer, so a readable
        # socket means the other end closed it. A handler that blocks can ask this between steps.
        if not select.select([self.connection], [], [], 0)[0]:
            return False
        try:
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def event(self, name, data):
        try:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
            return True
        except OSError:  # BrokenPipeError, ConnectionResetError: the caller is gone
            return False

    def authorized(self):
        expected = f"Bearer {TOKEN}".encode()
        return hmac.compare_digest(self.headers.get("Authorization", "").encode(), expected)

    def tool_error(self, message):
        # refused arguments are the tool's answer, not an HTTP error: the model reads it and can retry
        result = {"content": [{"type": "text", "text": message}], "is_error": True}
        self.answer(200, "application/json", json.dumps(result).encode())

    def malformed(self, message):
        # 4xx: Brain reports http_status and the model reads the start of this body
        error = {"error": {"code": "invalid_request", "message": message}}
        self.answer(400, "application/json", json.dumps(error).encode())

    def refuse(self, status, message):
        # the body was not read: close the connection rather than read what follows as a request
        self.close_connection = True
        self.answer(status, "text/plain", message, {"Connection": "close"})

    def answer(self, status, content_type, body, headers=None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass  # the request line holds nothing secret, but a quiet example is easier to read


server = ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PORT", "8081"))), ToolHandler)
print(f"python tool service listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
