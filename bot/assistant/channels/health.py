"""GET /health on a Rasa instance, for the load balancer and for people.

Credentials key: `bot.assistant.channels.health.HealthInput:` (no settings). Rasa mounts a channel's routes under
/webhooks/<url_prefix>; this one's prefix is the absolute path /health, so the route is /health itself.

Answers 200 while the instance can answer customers (the model is loaded), 503 otherwise, with what it depends on:

    {"status": "ok" | "degraded" | "starting", "service": "rasa", "model": true,
     "tracker_store": "ok" | "down", "redis": "ok" | "down" | "not configured",
     "locks": "redis" | "this instance only"}

"degraded" means the instance still answers but something shared is missing: Redis down means the conversation locks
hold only inside each instance (safe for one instance, not for several), and replies reach socket.io widgets only
on the instance they are connected to; PostgreSQL down means the messages are answered with an apology and tickets
wait in the spool. The balancer keeps sending traffic to a degraded instance: there is no better one.
"""
from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Dict, Optional, Text

from rasa.core.channels.channel import InputChannel, UserMessage
from sanic import Blueprint, response
from sanic.request import Request
from sanic.response import HTTPResponse

from bot.assistant.redis_settings import RedisSettings

CHECK_TIMEOUT_S = 2.0


def _inner_tracker_store(agent: Any) -> Any:
    store = getattr(agent, "tracker_store", None)
    while hasattr(store, "_tracker_store"):  # Rasa 3.6 wraps it in FailSafeTrackerStore and AwaitableTrackerStore
        store = store._tracker_store
    return store


def _check_sql(store: Any) -> Optional[str]:
    engine = getattr(store, "engine", None)
    if engine is None:
        return None
    import sqlalchemy as sa

    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except Exception:  # noqa: BLE001 - any failure means the store cannot be used now
        return "down"
    return "ok"


def _check_redis(agent: Any) -> Dict[str, str]:
    lock_store = getattr(agent, "lock_store", None)
    ping = getattr(lock_store, "ping", None)
    if callable(ping):
        up = ping()
        return {"redis": "ok" if up else "down", "locks": "redis" if up else "this instance only"}
    if RedisSettings.from_env() is None:
        return {"redis": "not configured", "locks": "this instance only"}
    import redis

    settings = RedisSettings.from_env()
    try:
        redis.Redis(**settings.client_options(), socket_connect_timeout=1, socket_timeout=1).ping()
    except (redis.exceptions.RedisError, OSError):
        return {"redis": "down", "locks": type(lock_store).__name__}
    return {"redis": "ok", "locks": type(lock_store).__name__}


def health_report(agent: Any) -> Dict[str, Any]:
    """The instance's state (blocking calls: run it in an executor)."""
    ready = bool(agent is not None and agent.is_ready())
    report: Dict[str, Any] = {"service": "rasa", "model": ready}
    sql = _check_sql(_inner_tracker_store(agent)) if agent is not None else None
    report["tracker_store"] = sql or "ok"  # in-memory or other stores cannot be down
    report.update(_check_redis(agent))
    if not ready:
        report["status"] = "starting"
    elif report["tracker_store"] != "ok" or report["redis"] == "down":
        report["status"] = "degraded"
    else:
        report["status"] = "ok"
    return report


class HealthInput(InputChannel):
    @classmethod
    def name(cls) -> Text:
        return "health"

    def url_prefix(self) -> Text:
        return "/health"  # urljoin("/webhooks/", "/health") == "/health"

    def blueprint(self, on_new_message: Callable[[UserMessage], Awaitable[Any]]) -> Blueprint:
        health = Blueprint("advisor_health", __name__)

        @health.route("", methods=["GET", "HEAD"])
        async def check(request: Request) -> HTTPResponse:
            agent = getattr(request.app.ctx, "agent", None)
            loop = asyncio.get_running_loop()
            try:
                report = await asyncio.wait_for(loop.run_in_executor(None, health_report, agent), CHECK_TIMEOUT_S)
            except asyncio.TimeoutError:
                report = {"service": "rasa", "status": "degraded", "model": bool(agent and agent.is_ready()),
                          "error": f"checks took longer than {CHECK_TIMEOUT_S} s"}
            return response.json(report, status=200 if report.get("model") else 503)

        return health
