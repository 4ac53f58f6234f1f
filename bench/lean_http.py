"""A small HTTP/1.1 client for the load benchmarks: one kept-alive connection per simulated customer, JSON POSTs.

The load generator runs on the machine it measures, so its own CPU time is taken from the servers. aiohttp spent
1.9 ms of CPU per turn on this machine class (bench/results/load.md, 2026-12-01), a tenth of what the whole cluster
spends on a turn besides Rasa; this client writes the request in one call and reads the answer with a Content-Length
(or chunked) body, a third of that. Not for the product: no TLS, no redirects, no proxies.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any, Optional, Tuple
from urllib.parse import urlsplit


class HTTPError(Exception):
    """The connection failed or the answer was not HTTP."""


class KeepAliveClient:
    def __init__(self, url: str, timeout: float = 60.0) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.path = parts.path or "/"
        self.timeout = timeout
        self._reader: Optional[asyncio.StreamReader] = None
        self._writer: Optional[asyncio.StreamWriter] = None
        self._head = (f"POST {self.path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                      "Content-Type: application/json\r\nContent-Length: ").encode()

    async def post_json(self, payload: Any) -> Tuple[int, Any]:
        """(status, parsed JSON body or None); raises HTTPError or asyncio.TimeoutError."""
        try:
            return await asyncio.wait_for(self._post(json.dumps(payload).encode()), self.timeout)
        except (OSError, asyncio.IncompleteReadError, ValueError) as error:
            self.close()
            raise HTTPError(type(error).__name__) from error
        except BaseException:
            self.close()
            raise

    async def _post(self, body: bytes) -> Tuple[int, Any]:
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        self._writer.write(self._head + str(len(body)).encode() + b"\r\n\r\n" + body)
        status_line = await self._reader.readline()
        if not status_line.startswith(b"HTTP/1."):
            raise ValueError("not an HTTP answer")
        status = int(status_line.split()[1])
        length, chunked, close = None, False, status_line.startswith(b"HTTP/1.0")
        while True:
            line = await self._reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "transfer-encoding":
                chunked = "chunked" in value
            elif name == "connection":
                close = value == "close"
        if chunked:
            data = b""
            while True:
                size = int((await self._reader.readline()).split(b";")[0], 16)
                chunk = await self._reader.readexactly(size + 2)
                if not size:
                    break
                data += chunk[:-2]
        elif length is not None:
            data = await self._reader.readexactly(length)
        else:
            data, close = await self._reader.read(), True
        if close:
            self.close()
        return status, json.loads(data) if data else None

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None

    async def __aenter__(self) -> "KeepAliveClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()
