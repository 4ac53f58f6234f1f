"""A fake Telegram Bot API on 127.0.0.1 that records every call.

It runs an aiohttp server in a background thread so that synchronous tests and a Rasa server in another process
can both talk to it. Point the channel at it with TELEGRAM_API_URL=fake.url.
"""
from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from aiohttp import web


@dataclass
class RecordedCall:
    token: str
    method: str
    payload: Dict[str, Any]
    files: Dict[str, bytes] = field(default_factory=dict)


class FakeBotApi:
    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port: Optional[int] = None
        self._calls: List[RecordedCall] = []
        self._lock = threading.Lock()
        self._message_ids = itertools.count(1000)
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._runner: Optional[web.AppRunner] = None
        self._thread: Optional[threading.Thread] = None
        self.documents: Dict[str, bytes] = {}  # file_id -> content, served by getFile and /file/bot<token>/...

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # --- recording -------------------------------------------------------------------------------------------
    def calls(self, method: Optional[str] = None) -> List[RecordedCall]:
        with self._lock:
            return [c for c in self._calls if method is None or c.method == method]

    def clear(self) -> None:
        with self._lock:
            self._calls.clear()

    def wait_for(self, method: str, count: int = 1, timeout: float = 20.0) -> List[RecordedCall]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.calls(method)
            if len(found) >= count:
                return found
            time.sleep(0.05)
        raise AssertionError(f"expected {count} {method} call(s) within {timeout}s, got {self.calls()}")

    # --- server ----------------------------------------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.Response:
        token, method = request.match_info["token"], request.match_info["method"]
        files: Dict[str, bytes] = {}
        if request.content_type.startswith("multipart/"):
            payload: Dict[str, Any] = {}
            reader = await request.multipart()
            async for part in reader:
                if part.filename:
                    files[part.name] = await part.read()
                    payload[part.name] = f"<file {part.filename}>"
                else:
                    payload[part.name] = await part.text()
        else:
            raw = await request.read()
            payload = json.loads(raw) if raw else {}
        with self._lock:
            self._calls.append(RecordedCall(token, method, payload, files))
        result: Any = True
        if method in ("sendMessage", "sendPhoto"):
            result = {"message_id": next(self._message_ids), "date": int(time.time()),
                      "chat": {"id": int(payload.get("chat_id", 0)), "type": "private"}}
            if method == "sendMessage":
                result["text"] = payload.get("text")
        elif method == "getFile":
            file_id = str(payload.get("file_id"))
            if file_id not in self.documents:
                return web.json_response({"ok": False, "error_code": 400,
                                          "description": "Bad Request: invalid file_id"})
            result = {"file_id": file_id, "file_size": len(self.documents[file_id]),
                      "file_path": f"documents/{file_id}"}
        elif method == "getMe":
            result = {"id": 1, "is_bot": True, "first_name": "Fake", "username": "fake_bot"}
        return web.json_response({"ok": True, "result": result})

    async def _file(self, request: web.Request) -> web.Response:
        content = self.documents.get(request.match_info["file_id"])
        if content is None:
            return web.Response(status=404)
        return web.Response(body=content, content_type="application/octet-stream")

    def start(self) -> "FakeBotApi":
        ready = threading.Event()

        def serve() -> None:
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            app = web.Application()
            app.router.add_post("/bot{token}/{method}", self._handle)
            app.router.add_get("/file/bot{token}/documents/{file_id}", self._file)
            self._runner = web.AppRunner(app)
            self._loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, self.host, 0)
            self._loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]
            ready.set()
            self._loop.run_forever()
            self._loop.run_until_complete(self._runner.cleanup())
            self._loop.close()

        self._thread = threading.Thread(target=serve, name="fake-bot-api", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("fake Bot API did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> "FakeBotApi":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
