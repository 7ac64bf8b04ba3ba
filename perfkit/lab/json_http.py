"""What the lab's two stand-in servers (Livy's API, EMR's notebook executions) share: a JSON answer over http.server."""
from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler


class JsonHandler(BaseHTTPRequestHandler):
    content_type = "application/json"

    def log_message(self, fmt, *args):  # the access log goes to the daemon's log file, one line a request
        print(f"{self.address_string()} {fmt % args}", flush=True)

    def send_json(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", self.content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def json_body(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"{}") if length else {}
