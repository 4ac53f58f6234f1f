"""The action server, reachable only by Rasa: rasa_sdk's Sanic app behind a guard.

    ACTION_SERVER_TOKEN=... python -m bot.assistant.action_server --port 5055

rasa_sdk's own server (`rasa run actions`) authenticates nothing, listens on 0.0.0.0, accepts any content type
(a `text/plain` POST is a CORS "simple request", so any web page could open tickets through a visitor's browser),
inflates deflate bodies without a limit and echoes the request body into its error answers. Here:

- it listens on 127.0.0.1 unless ACTION_SERVER_HOST says otherwise (a private address in a cluster);
- every request except `GET /health` must carry the shared secret in the `X-Action-Token` header; Rasa sends it
  from endpoints.yml (`action_endpoint.headers`), the value comes from ACTION_SERVER_TOKEN or
  ACTION_SERVER_TOKEN_FILE (bot/secret_files.py). Without it: 401, and no action runs. The server refuses to start
  without a secret;
- `/webhook` takes `POST` with `Content-Type: application/json` only (415 otherwise, 405 for other methods);
- bodies are limited to ACTION_SERVER_MAX_BODY_MB (default 16 MiB, 413 above), also after inflating a
  `Content-Encoding: deflate` body (Rasa sends one when COMPRESS_ACTION_SERVER_REQUEST is set);
- errors answer a fixed text: the request (the customer's conversation) is never echoed back, and so never reaches
  Rasa's log through its "action server answered 500" message.
"""
from __future__ import annotations

import argparse
import hmac
import logging
import os
import zlib
from typing import Any, Optional

from rasa_sdk import endpoint as sdk_endpoint
from rasa_sdk import utils as sdk_utils
from sanic import Sanic, response
from sanic.exceptions import SanicException

from bot.secret_files import private_umask, read_secret
from bot.privacy import install_log_redaction
from bot.privacy.logs import mask_handlers

logger = logging.getLogger(__name__)

TOKEN_ENV = "ACTION_SERVER_TOKEN"
TOKEN_HEADER = "X-Action-Token"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 5055
DEFAULT_MAX_BODY = 16 * 1024 * 1024  # a 500-turn conversation with the domain is about 3 MB
PUBLIC_PATHS = frozenset({"/health"})


def _error(status: int, reason: str) -> response.HTTPResponse:
    return response.json({"error": reason}, status=status)


def _inflate(body: bytes, limit: int) -> Optional[bytes]:
    """The inflated body, or None when it would exceed `limit` bytes (or is not valid deflate data)."""
    inflater = zlib.decompressobj()
    try:
        data = inflater.decompress(body, limit + 1)
    except zlib.error:
        return None
    if len(data) > limit or inflater.unconsumed_tail:
        return None
    return data


def _sdk_app_without_cors(actions_package: str) -> Sanic:
    """rasa_sdk's app without Sanic-CORS: browsers never talk to this server, and the extension's middleware ran on
    every action call (2 % of the action server's CPU under load, issue 12)."""
    configure_cors = sdk_endpoint.configure_cors
    sdk_endpoint.configure_cors = lambda app, origins: None
    try:
        return sdk_endpoint.create_app(actions_package)
    finally:
        sdk_endpoint.configure_cors = configure_cors


def _route_error(request: Any) -> Any:
    """The answer for a request with the right token that is not a POST to /webhook (None for GET /actions)."""
    if request.path == "/actions":
        return None if request.method == "GET" else _error(405, "method not allowed")
    if request.path != "/webhook":
        return _error(404, "not found")
    if request.method != "POST":
        return _error(405, "method not allowed")
    return False


def _body_error(request: Any, max_body: int) -> Any:
    """The answer for an action call whose body is not a JSON object (a deflated one is inflated, bounded)."""
    content_type = (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if content_type != "application/json":
        return _error(415, "Content-Type must be application/json")
    encoding = (request.headers.get("Content-Encoding") or "identity").strip().lower()
    if encoding == "deflate":
        inflated = _inflate(request.body or b"", max_body)
        if inflated is None:
            return _error(413, "compressed body too large or invalid")
        request.body = inflated
        del request.headers["Content-Encoding"]  # rasa_sdk would inflate it again, without a limit
    elif encoding != "identity":
        return _error(415, "unsupported Content-Encoding")
    try:
        call = request.json
    except Exception:
        return _error(400, "body is not JSON")
    if not isinstance(call, dict):
        return _error(400, "body must be a JSON object")
    return None


def create_app(token: str, actions_package: str = "actions", max_body: int = DEFAULT_MAX_BODY) -> Sanic:
    if not token:
        raise ValueError("the action server needs a shared secret")
    expected = token.encode()
    app = _sdk_app_without_cors(actions_package)
    app.config.REQUEST_MAX_SIZE = max_body

    @app.middleware("request")
    async def guard(request):
        if request.path in PUBLIC_PATHS and request.method in ("GET", "HEAD"):
            return None
        supplied = request.headers.get(TOKEN_HEADER, "").encode("utf-8", "surrogateescape")
        if not hmac.compare_digest(supplied, expected):
            return _error(401, "missing or wrong action server token")
        refused = _route_error(request)
        if refused is not False:
            return refused
        return _body_error(request, max_body)

    async def on_error(request, exception: Exception):
        if isinstance(exception, SanicException):
            return _error(getattr(exception, "status_code", 500) or 500, str(exception)[:200])
        # Logged with the traceback (masked by the log redaction); the answer names nothing of the request.
        logger.error("action server error: %s", type(exception).__name__, exc_info=exception)
        return _error(500, "internal error in the action server")

    app.error_handler.add(Exception, on_error)
    return app


def main(argv: Optional[list] = None) -> None:
    parser = argparse.ArgumentParser(description="Run the actions, reachable only by Rasa (shared secret).")
    parser.add_argument("--host", default=os.environ.get("ACTION_SERVER_HOST", DEFAULT_HOST))
    parser.add_argument("--port", type=int, default=int(os.environ.get("ACTION_SERVER_PORT", DEFAULT_PORT)))
    parser.add_argument("--actions", default="actions")
    parser.add_argument("--loglevel", default=os.environ.get("LOG_LEVEL", "INFO"))
    args = parser.parse_args(argv)
    token = read_secret(TOKEN_ENV)
    if not token:
        raise SystemExit(f"set {TOKEN_ENV} or {TOKEN_ENV}_FILE: the action server does not run without a secret")
    private_umask()
    install_log_redaction()
    sdk_utils.configure_colored_logging(args.loglevel)
    sdk_utils.update_sanic_log_level()
    mask_handlers()  # the handlers rasa_sdk has just configured
    max_body = int(float(os.environ.get("ACTION_SERVER_MAX_BODY_MB", "16")) * 1024 * 1024)
    app = create_app(token, args.actions, max_body)
    logger.info("Action server on http://%s:%s (token required)", args.host, args.port)
    app.run(args.host, args.port, workers=sdk_utils.number_of_sanic_workers(), access_log=False)


if __name__ == "__main__":
    main()
