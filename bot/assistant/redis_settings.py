"""Where the shared Redis is and how to sign in to it, read from the environment as endpoints.production.yml reads it.

    REDIS_HOST        host of the shared Redis; unset = no Redis (one Rasa process, everything in memory)
    REDIS_PORT        default 6379
    REDIS_DB          default 1 (the database Rasa's lock store uses)
    REDIS_USERNAME    the ACL user of this product (deploy/redis/; scripts/cluster.sh creates it), default none:
                      Redis's "default" user
    REDIS_PASSWORD    its password, or REDIS_PASSWORD_FILE naming a file that holds it (bot/secret_files.py)
    REDIS_KEY_PREFIX  prefix of our keys and of the socket.io channel, default "gpuadvisor": two deployments (or two
                      test clusters) on one Redis do not see each other's locks, socket.io messages or Telegram ids

Used by the lock store (bot/assistant/lock_store.py), the socket.io client manager
(bot/assistant/channels/socketio.py), the Telegram de-duplication (bot/assistant/channels/telegram.py) and the
health check (bot/assistant/channels/health.py).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional
from urllib.parse import quote

DEFAULT_PORT = 6379
DEFAULT_DB = 1
DEFAULT_PREFIX = "gpuadvisor"
# Short timeouts: a Redis that does not answer must cost a turn a second at most, then we fall back.
CONNECT_TIMEOUT_S = 1.0
SOCKET_TIMEOUT_S = 1.0


def _secret(env: Mapping[str, str], name: str) -> Optional[str]:
    value = (env.get(name) or "").strip()
    if value:
        return value
    path = (env.get(f"{name}_FILE") or "").strip()
    if path:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip() or None
    return None


@dataclass(frozen=True)
class RedisSettings:
    host: str
    port: int = DEFAULT_PORT
    db: int = DEFAULT_DB
    prefix: str = DEFAULT_PREFIX
    username: Optional[str] = None
    password: Optional[str] = field(default=None, repr=False)

    @property
    def url(self) -> str:
        auth = ""
        if self.password:
            auth = f"{quote(self.username or '', safe='')}:{quote(self.password, safe='')}@"
        return f"redis://{auth}{self.host}:{self.port}/{self.db}"

    def client_options(self) -> Dict[str, Any]:
        """Keyword arguments of redis.Redis / redis.asyncio.Redis for this server and account."""
        options: Dict[str, Any] = {"host": self.host, "port": self.port, "db": self.db}
        if self.password:
            options.update(username=self.username, password=self.password)
        return options

    @classmethod
    def from_env(cls, env: Optional[Mapping[str, str]] = None) -> Optional["RedisSettings"]:
        env = os.environ if env is None else env
        host = (env.get("REDIS_HOST") or "").strip()
        if not host:
            return None
        prefix = re.sub(r"[^A-Za-z0-9]", "", env.get("REDIS_KEY_PREFIX") or "") or DEFAULT_PREFIX
        return cls(host=host, port=int(env.get("REDIS_PORT") or DEFAULT_PORT),
                   db=int(env.get("REDIS_DB") or DEFAULT_DB), prefix=prefix,
                   username=(env.get("REDIS_USERNAME") or "").strip() or None,
                   password=_secret(env, "REDIS_PASSWORD"))
