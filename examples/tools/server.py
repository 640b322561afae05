"""A Brain tool service in Python with only the standard library.

Two tools: `echo` answers with JSON; `countdown` streams progress over SSE, then its result.
Run: BRAIN_TOOLS_KEY=secret python3 examples/tools/server.py   (PORT=0 picks a free port)
"""

import hmac
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = os.environ.get("BRAIN_TOOLS_KEY", "")
if not TOKEN:
    sys.exit("set BRAIN_TOOLS_KEY to the token Brain sends (the binding's token_env)")


class ToolHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as Brain's connection pool expects

    def do_POST(self):
        expected = f"Bearer {TOKEN}".encode()
        if not hmac.compare_digest(self.headers.get("Authorization", "").encode(), expected):
            return self.answer(401, "text/plain", b"")
        length = int(self.headers.get("Content-Length", "0"))
        call = json.loads(self.rfile.read(length) or b"{}")
        # Authorize with the top-level tenant_id and session_id, never with ids inside arguments.
        args = call.get("arguments", {})
        if self.path == "/tools/echo":
            result = {"content": [{"type": "text", "text": str(args.get("text", ""))}]}
            return self.answer(200, "application/json", json.dumps(result).encode())
        if self.path == "/tools/countdown":
            return self.countdown(int(args.get("from", 3)))  # SSE: progress events, then the result
        return self.answer(404, "text/plain", b"no such tool")

    def countdown(self, start):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        for n in range(start, 0, -1):
            self.event("progress", {"remaining": n})
            time.sleep(0.02)
        self.event("result", {"content": [{"type": "text", "text": "liftoff"}], "structured_content": {"counted": start}})
        self.close_connection = True

    def event(self, name, data):
        self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def answer(self, status, content_type, body):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass  # the request line holds nothing secret, but a quiet example is easier to read


server = ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PORT", "8082"))), ToolHandler)
print(f"python tool service listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
