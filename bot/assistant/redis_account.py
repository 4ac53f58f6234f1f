"""The product's own Redis account: an ACL user that may touch only the product's keys and socket.io channel.

    python -m bot.assistant.redis_account provision     (scripts/cluster.sh runs it before starting the cluster)

Reads REDIS_HOST, REDIS_PORT, REDIS_USERNAME, REDIS_PASSWORD (or REDIS_PASSWORD_FILE) and REDIS_KEY_PREFIX
(bot/assistant/redis_settings.py); the account that may create users is REDIS_ADMIN_USERNAME / REDIS_ADMIN_PASSWORD
(default: Redis's "default" user without a password, as a fresh Debian redis-server has it). The user gets:

- keys: the lock store's `gpuadvisor:*` (endpoints.production.yml's key_prefix) and `<REDIS_KEY_PREFIX>:*`;
- pub/sub channels: `<REDIS_KEY_PREFIX>-socketio` only;
- every command except the dangerous and administrative ones (FLUSHALL, CONFIG, KEYS, DEBUG, ACL, ...).

It prints a warning when Redis's default user still signs in without a password: then anyone reaching the port may
read the locks and publish on the channel (the socket.io channel is signed, bot/assistant/channels/socketio.py, so a
forged message is dropped, but locks could be tampered with). Production configures Redis itself: deploy/redis/.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

from bot.assistant.redis_settings import CONNECT_TIMEOUT_S, RedisSettings

LOCK_KEY_PREFIX = "gpuadvisor"  # endpoints.production.yml, lock_store.key_prefix


def acl_rules(settings: RedisSettings) -> List[str]:
    """The ACL SETUSER rules of the product's user."""
    keys = sorted({LOCK_KEY_PREFIX, settings.prefix})
    return (["reset", "on", f">{settings.password}"] + [f"~{prefix}:*" for prefix in keys]
            + [f"&{settings.prefix}-socketio", "+@all", "-@dangerous", "-@admin"])


def provision(settings: RedisSettings, admin_username: Optional[str] = None,
              admin_password: Optional[str] = None) -> List[str]:
    """Create or update the product's ACL user; returns warnings for the operator."""
    import redis

    if not settings.username or not settings.password:
        raise ValueError("REDIS_USERNAME and REDIS_PASSWORD are needed to create the product's Redis user")
    admin = redis.Redis(host=settings.host, port=settings.port, username=admin_username, password=admin_password,
                        socket_connect_timeout=CONNECT_TIMEOUT_S * 3, socket_timeout=CONNECT_TIMEOUT_S * 3)
    admin.execute_command("ACL", "SETUSER", settings.username, *acl_rules(settings))
    warnings = []
    try:
        anonymous = redis.Redis(host=settings.host, port=settings.port, socket_connect_timeout=CONNECT_TIMEOUT_S)
        anonymous.ping()
        warnings.append(f"Redis at {settings.host}:{settings.port} still lets anyone in without a password (its "
                        "'default' user): give it a password or turn it off (deploy/redis/users.acl.example).")
    except redis.exceptions.AuthenticationError:
        pass
    except redis.exceptions.ResponseError as error:  # NOAUTH / NOPERM: the default user is closed
        if "NOAUTH" not in str(error) and "NOPERM" not in str(error):
            raise
    return warnings


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Create the product's Redis ACL user (scripts/cluster.sh).")
    parser.add_argument("command", choices=["provision"])
    parser.parse_args(argv)
    settings = RedisSettings.from_env()
    if settings is None:
        print("REDIS_HOST is not set: no Redis to provision", file=sys.stderr)
        return 1
    try:
        warnings = provision(settings, os.environ.get("REDIS_ADMIN_USERNAME") or None,
                             os.environ.get("REDIS_ADMIN_PASSWORD") or None)
    except Exception as error:  # shown to the operator as the reason the cluster cannot start
        print(f"cannot create the Redis user {settings.username!r} at {settings.host}:{settings.port}: {error} "
              "(set REDIS_ADMIN_USERNAME/REDIS_ADMIN_PASSWORD to an account allowed to run ACL SETUSER)",
              file=sys.stderr)
        return 1
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
