"""Website for the chat widget: serves web/ and the memory charts, and tells the widget where Rasa listens.

    python -m bot.website --port 8080

Environment:
  ADVISOR_CHART_DIR   folder of chart PNGs written by action_estimate, served at /charts/ (default var/charts)
  ADVISOR_SOCKET_URL  Rasa's socket.io base URL for the widget (default: same host as the page, port 5005)
  ADVISOR_SOCKET_PATH socket.io path (default /socket.io)
  ADVISOR_FRAME_ANCESTORS  who may frame the chat page (CSP frame-ancestors, default 'self'; bot/origins.py)

No rasa import: this process only serves files.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import re
import time
from pathlib import Path
from typing import Dict, Optional

from aiohttp import web

from bot.origins import frame_ancestors
from bot.privacy import install_log_redaction

ROOT = Path(__file__).resolve().parents[1]
WEB_DIR = ROOT / "web"
_CHART_NAME = re.compile(r"^[A-Za-z0-9_.-]+\.png$")

# Scripts only from this server (a second line of defence behind the widget's text-only rendering); the socket.io
# connection may go to another host (Rasa), and charts are images from here. Framing: only the sites named in
# ADVISOR_FRAME_ANCESTORS (default this site), against clickjacking (security review finding 16).
CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; "
                           "img-src 'self' data: http: https:; connect-src 'self' http: https: ws: wss:; "
                           "object-src 'none'; base-uri 'none'; frame-ancestors {frame_ancestors}")


def content_security_policy() -> str:
    return CONTENT_SECURITY_POLICY.format(frame_ancestors=frame_ancestors())


def chart_dir() -> Path:
    return Path(os.environ.get("ADVISOR_CHART_DIR", "var/charts"))


@web.middleware
async def security_headers(request: web.Request, handler):
    try:
        response = await handler(request)
    except web.HTTPException as answer:  # redirects and errors are answers too (/kvkk -> /kvkk/fa, a 404)
        _add_security_headers(request, answer)
        raise
    return _add_security_headers(request, response)


def _add_security_headers(request: web.Request, response: web.StreamResponse) -> web.StreamResponse:
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    # On every answer, whatever its path: deciding by path ("/" or "*.html") left the KVKK pages (/kvkk/fa,
    # /kvkk/tr) without a policy and frameable (issue 20, finding 7). On images and scripts the policy is inert.
    response.headers.setdefault("Content-Security-Policy", content_security_policy())
    if frame_ancestors() == "'self'":
        response.headers.setdefault("X-Frame-Options", "SAMEORIGIN")  # browsers without CSP level 2
    if request.path.endswith((".js", ".css", ".json")) or request.path.startswith("/charts/"):
        # The widget is embedded on other sites: they load its script, style and the chart images from here.
        response.headers.setdefault("Access-Control-Allow-Origin", "*")
    response.headers.setdefault("Cache-Control", "no-cache")
    return response


async def widget_config(request: web.Request) -> web.Response:
    return web.json_response({
        # null: the widget derives <page host>:5005 itself, which works for localhost and for a LAN address.
        "socketUrl": os.environ.get("ADVISOR_SOCKET_URL") or None,
        "socketPath": os.environ.get("ADVISOR_SOCKET_PATH", "/socket.io"),
    })


CHART_WAIT_S = 4.0
# Requests that may wait for a chart at the same time; more answer 404 at once, so that nobody can hold hundreds of
# connections open by asking for charts that will never exist (security review finding 14).
MAX_CHART_WAITERS = 16
# Of those, one client address may hold this many: a chat page waits for one chart at a time (a reply carries one),
# so one client could otherwise take every slot and make everybody's new chart a 404 (issue 20, finding 7).
MAX_CHART_WAITERS_PER_CLIENT = 2
# Charts are kept this long and at most this many (the newest); older ones are deleted every CHART_PRUNE_EVERY_S.
CHART_MAX_AGE_S = float(os.environ.get("ADVISOR_CHART_MAX_AGE_H", "168")) * 3600
CHART_MAX_FILES = int(os.environ.get("ADVISOR_CHART_MAX_FILES", "5000"))
CHART_PRUNE_EVERY_S = 600
_waiting = 0
_waiting_by_client: Dict[str, int] = {}


def _client_address(request: web.Request) -> str:
    """The client's address; behind the cluster's HAProxy (ADVISOR_TRUSTED_PROXY=1) the X-Forwarded-For entry it
    appended (bot/assistant/channels/limits.py reads it the same way)."""
    forwarded = request.headers.get("X-Forwarded-For", "")
    if os.environ.get("ADVISOR_TRUSTED_PROXY") == "1" and forwarded.strip():
        return forwarded.split(",")[-1].strip()
    return request.remote or "?"


async def chart(request: web.Request) -> web.StreamResponse:
    global _waiting
    name = request.match_info["name"]
    if not _CHART_NAME.match(name):
        raise web.HTTPNotFound()
    path = chart_dir() / name
    if path.is_file():
        return web.FileResponse(path, headers={"Content-Type": "image/png"})
    # The action server draws a web chart just after the reply has gone out, so the browser may ask before the
    # file exists; a cold worker takes a second or two. Wait for it rather than answer 404 to a chart on its way.
    client = _client_address(request)
    if _waiting >= MAX_CHART_WAITERS or _waiting_by_client.get(client, 0) >= MAX_CHART_WAITERS_PER_CLIENT:
        raise web.HTTPNotFound()
    _waiting += 1
    _waiting_by_client[client] = _waiting_by_client.get(client, 0) + 1
    try:
        deadline = asyncio.get_running_loop().time() + CHART_WAIT_S
        while not path.is_file():
            if asyncio.get_running_loop().time() > deadline:
                raise web.HTTPNotFound()
            await asyncio.sleep(0.2)
    finally:
        _waiting -= 1
        _waiting_by_client[client] -= 1
        if not _waiting_by_client[client]:
            del _waiting_by_client[client]
    return web.FileResponse(path, headers={"Content-Type": "image/png"})


def prune_charts(folder: Path, max_age_s: float = CHART_MAX_AGE_S, max_files: int = CHART_MAX_FILES) -> int:
    """Delete charts older than `max_age_s` and all but the newest `max_files`; returns how many went."""
    def mtime(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:  # deleted meanwhile
            return 0.0

    try:
        charts = sorted(((mtime(p), p) for p in folder.glob("*.png")), reverse=True)
    except OSError:
        return 0
    cutoff = time.time() - max_age_s
    doomed = [p for i, (when, p) in enumerate(charts) if i >= max_files or when < cutoff]
    for path in doomed:
        path.unlink(missing_ok=True)
    return len(doomed)


async def _prune_periodically(app: web.Application) -> None:
    async def loop() -> None:
        while True:
            await asyncio.to_thread(prune_charts, chart_dir())
            await asyncio.sleep(CHART_PRUNE_EVERY_S)

    task = asyncio.create_task(loop())

    async def stop(_app: web.Application) -> None:
        task.cancel()

    app.on_cleanup.append(stop)


async def _kvkk_default(request: web.Request) -> web.Response:
    raise web.HTTPFound("/kvkk/fa")


async def _kvkk_page(request: web.Request, web_dir: Path) -> web.StreamResponse:
    return web.FileResponse(web_dir / f"kvkk-{request.match_info['lang']}.html",
                            headers={"Content-Type": "text/html; charset=utf-8"})


def create_app(web_dir: Path = WEB_DIR) -> web.Application:
    app = web.Application(middlewares=[security_headers])
    app.on_startup.append(_prune_periodically)
    app.router.add_get("/health", lambda request: web.json_response({"status": "ok", "service": "website"}))
    app.router.add_get("/config.json", widget_config)
    app.router.add_get("/charts/{name}", chart)
    # The full KVKK notice the chat's short notice and the KVKK FAQ link to (web/kvkk-fa.html, web/kvkk-tr.html).
    app.router.add_get("/kvkk", _kvkk_default)
    async def kvkk_page(request: web.Request) -> web.StreamResponse:
        return await _kvkk_page(request, web_dir)

    app.router.add_get("/kvkk/{lang:fa|tr}", kvkk_page)
    app.router.add_get("/", lambda request: web.FileResponse(web_dir / "index.html"))
    app.router.add_static("/", web_dir, show_index=False, follow_symlinks=False)
    return app


def main(argv: Optional[list] = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the chat page, the embeddable widget and the charts.")
    parser.add_argument("--host", default=os.environ.get("ADVISOR_WEB_HOST", "0.0.0.0"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("ADVISOR_WEB_PORT", "8080")))
    args = parser.parse_args(argv)
    # aiohttp logs a bad request with its path, which may carry a URL-encoded phone number or e-mail address.
    install_log_redaction()
    chart_dir().mkdir(parents=True, exist_ok=True)
    shown = "localhost" if args.host in ("0.0.0.0", "::") else args.host
    web.run_app(create_app(), host=args.host, port=args.port, access_log=None,
                print=lambda _: print(f"Chat page: http://{shown}:{args.port}/  "
                                      f"(embed demo: http://{shown}:{args.port}/demo.html)", flush=True))


if __name__ == "__main__":
    main()
