"""A fake Hugging Face Hub on loopback: serves the config.json files under tests/data/hf_hub/<org>/<name>/ the way
huggingface.co answers ``hf_hub_download`` (HEAD with X-Repo-Commit and ETag, then GET), and 404 with the Hub's
error code for anything else. Counts the requests so a test can check the cache answers the second time."""
from __future__ import annotations

import hashlib
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent / "data" / "hf_hub"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


class _Handler(BaseHTTPRequestHandler):
    server_version = "FakeHub/1"
    requests: list = []

    def log_message(self, *args):  # quiet
        pass

    def _file(self):
        parts = self.path.split("?")[0].strip("/").split("/")
        # /{org}/{name}/resolve/{revision}/{filename}
        if len(parts) == 5 and parts[2] == "resolve" and ".." not in parts:
            path = ROOT / parts[0] / parts[1] / parts[4]
            if path.is_file():
                return path.read_bytes()
        return None

    def _canonical(self):
        """The Hub resolves repo ids case-insensitively and redirects to the canonical name (a chat message arrives
        lower-cased by the NLU normaliser): /{org}/{name}/... in any case -> the stored spelling."""
        parts = self.path.split("?")[0].strip("/").split("/")
        if len(parts) != 5 or parts[2] != "resolve":
            return None
        for org in ROOT.iterdir():
            for name in (org.iterdir() if org.is_dir() else ()):
                if (org.name.lower(), name.name.lower()) == (parts[0].lower(), parts[1].lower()) \
                        and (org.name, name.name) != (parts[0], parts[1]):
                    return "/" + "/".join([org.name, name.name, *parts[2:]])
        return None

    def _answer(self, with_body: bool):
        type(self).requests.append((self.command, self.path))
        canonical = self._canonical()
        if canonical is not None:
            self.send_response(307)
            self.send_header("Location", canonical)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = self._file()
        if body is None:
            self.send_response(404)
            self.send_header("X-Error-Code", "RepoNotFound")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("ETag", '"%s"' % hashlib.sha1(body).hexdigest())
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def do_HEAD(self):  # noqa: N802 (http.server's naming)
        self._answer(False)

    def do_GET(self):  # noqa: N802
        self._answer(True)


@contextmanager
def fake_hub() -> Iterator[tuple]:
    """(endpoint URL, list of (method, path) requests) while the server runs."""
    _Handler.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", _Handler.requests
    finally:
        server.shutdown()
        server.server_close()
