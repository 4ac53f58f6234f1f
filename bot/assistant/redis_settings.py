"""Where the shared Redis is, read from the environment as endpoints.production.yml reads it.

    REDIS_HOST        host of the shared Redis; unset = no Redis (one Rasa process, everything in memory)
    REDIS_PORT        default 6379
    REDIS_DB          default 1 (the database Rasa's lock store uses)
    REDIS_KEY_PREFIX  prefix of our keys and of the socket.io channel, default "gpuadvisor": two deployments (or two
                      test clusters) on one Redis do not see each other's locks, socket.io messages or Telegram ids

Used by the lock store (bot/assistant/lock_store.py), the socket.io client manager
(bot/assistant/channels/socketio.py), the Telegram de-duplication (bot/assistant/channels/telegram.py) and the
health check (bot/assistant/channels/health.py).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Mapping, Optional

DEFAULT_PORT = 6379
DEFAULT_DB = 1
DEFAULT_PREFIX = "gpuadvisor"
# Short timeouts: a Redis that does not answer must cost a turn a second at most, then we fall back.
CONNECT_TIMEOUT_S = 1.0
SOCKET_TIMEOUT_S = 1.0


@dataclass(frozen=True)
class RedisSettings:
    host: str
    port: int = DEFAULT_PORT
    db: int = DEFAULT_DB
    prefix: str = DEFAULT_PREFIX

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/{self.db}"

    @classmethod
    def from_env(cls, env: Optional[Mapping[str, str]] = None) -> Optional["RedisSettings"]:
        env = os.environ if env is None else env
        host = (env.get("REDIS_HOST") or "").strip()
        if not host:
            return None
        prefix = re.sub(r"[^A-Za-z0-9]", "", env.get("REDIS_KEY_PREFIX") or "") or DEFAULT_PREFIX
        return cls(host=host, port=int(env.get("REDIS_PORT") or DEFAULT_PORT),
                   db=int(env.get("REDIS_DB") or DEFAULT_DB), prefix=prefix)
