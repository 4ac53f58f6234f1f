"""Conversation locks in Redis that are safe for simultaneous messages and survive a Redis outage.

endpoints.production.yml:  lock_store: {type: bot.assistant.lock_store.FailoverRedisLockStore, url: ${REDIS_HOST},
key_prefix: gpuadvisor}; the port comes from `port:` or REDIS_PORT (default 6379), the database from `db:` or
REDIS_DB (default 1), the account from REDIS_USERNAME and REDIS_PASSWORD (or REDIS_PASSWORD_FILE).

Two things Rasa 3.6's RedisLockStore does not do (rasa/core/lock_store.py):

1. Atomic tickets. Rasa reads the lock, adds a ticket and writes it back in three separate calls, so two messages of
   one customer arriving at the same moment on two Rasa instances can both read "no lock", both take ticket 0 and
   run their turns at the same time on the same conversation. Here every read-modify-write of a lock is one Redis
   transaction (WATCH/MULTI, retried when another instance changed the lock in between).
2. A Redis outage. Rasa's store raises on every message while Redis is down, so nobody gets an answer. Here the
   store falls back to locks in this process (correct for a single Rasa instance, which is what is left when Redis is
   gone: several instances then lock only per instance, and /health says so) and tries Redis again every
   RETRY_AFTER_S seconds.
"""
from __future__ import annotations

import json
import logging
import os
import time
from typing import Any, Callable, Optional, Tuple, TypeVar

import redis
from rasa.core.lock import TicketLock
from rasa.core.lock_store import LOCK_LIFETIME, InMemoryLockStore, LockError, RedisLockStore
from rasa.utils.endpoints import EndpointConfig

from bot.assistant.redis_settings import (CONNECT_TIMEOUT_S, DEFAULT_DB, DEFAULT_PORT, SOCKET_TIMEOUT_S,
                                         RedisSettings)

logger = logging.getLogger(__name__)

RETRY_AFTER_S = 5.0
T = TypeVar("T")


class FailoverRedisLockStore(RedisLockStore):
    def __init__(self, endpoint_config: Optional[EndpointConfig] = None, **kwargs: Any) -> None:
        config = dict(endpoint_config.kwargs) if endpoint_config is not None else {}
        config.update(kwargs)
        host = config.pop("host", None) or (endpoint_config.url if endpoint_config is not None else None)
        config.setdefault("port", os.environ.get("REDIS_PORT") or DEFAULT_PORT)
        config.setdefault("db", os.environ.get("REDIS_DB") or DEFAULT_DB)
        # The product's ACL user and its password (deploy/redis/, scripts/cluster.sh), never in endpoints.yml.
        account = RedisSettings.from_env({**os.environ, "REDIS_HOST": "-"})
        if account is not None and account.password and not config.get("password"):
            config.update(username=account.username, password=account.password)
        config.setdefault("socket_timeout", SOCKET_TIMEOUT_S)
        config.pop("type", None)
        super().__init__(host=host or "localhost", **config)
        # RedisLockStore builds its client without a connect timeout: an unreachable host would stall every turn.
        self.red.connection_pool.connection_kwargs["socket_connect_timeout"] = CONNECT_TIMEOUT_S
        self.memory = InMemoryLockStore()
        self._down_since: Optional[float] = None
        self._retry_at = 0.0

    # -- which store answers -------------------------------------------------------------------------------------
    @property
    def redis_down(self) -> bool:
        return self._down_since is not None

    def _try_redis(self) -> bool:
        return self._down_since is None or time.monotonic() >= self._retry_at

    def _mark_down(self, error: Exception) -> None:
        if self._down_since is None:
            self._down_since = time.monotonic()
            logger.error("Redis lock store unreachable (%s): conversations are locked in this process only until it "
                         "is back", error)
        self._retry_at = time.monotonic() + RETRY_AFTER_S

    def _mark_up(self) -> None:
        if self._down_since is not None:
            logger.warning("Redis lock store reachable again after %.0f s", time.monotonic() - self._down_since)
            self._down_since = None

    def _either(self, in_redis: Callable[[], T], in_memory: Callable[[], T]) -> T:
        if self._try_redis():
            try:
                result = in_redis()
            except redis.exceptions.RedisError as error:  # ConnectionError, TimeoutError, BusyLoadingError, ...
                self._mark_down(error)
            else:
                self._mark_up()
                return result
        return in_memory()

    def ping(self) -> bool:
        """Whether Redis answers now (for /health); also ends the fallback early when it does."""
        try:
            self.red.ping()
        except redis.exceptions.RedisError as error:
            self._mark_down(error)
            return False
        self._mark_up()
        return True

    # -- atomic read-modify-write of one lock ---------------------------------------------------------------------
    def _modify(self, conversation_id: str,
                change: Callable[[Optional[TicketLock]], Tuple[Optional[TicketLock], T]]) -> T:
        """Apply `change(lock) -> (lock to store or None to delete, result)` atomically; returns the result."""
        key = self.key_prefix + conversation_id

        def in_redis() -> T:
            outcome: list = []

            def transaction(pipe: redis.client.Pipeline) -> None:
                raw = pipe.get(key)
                lock = TicketLock.from_dict(json.loads(raw)) if raw else None
                new_lock, result = change(lock)
                outcome[:] = [result]
                pipe.multi()
                if new_lock is None:
                    pipe.delete(key)
                else:
                    pipe.set(key, new_lock.dumps())

            self.red.transaction(transaction, key)  # retried by redis-py on WatchError
            return outcome[0]

        def in_memory() -> T:
            new_lock, result = change(self.memory.get_lock(conversation_id))
            if new_lock is None:
                self.memory.conversation_locks.pop(conversation_id, None)
            else:
                self.memory.save_lock(new_lock)
            return result

        return self._either(in_redis, in_memory)

    # -- LockStore API ----------------------------------------------------------------------------------------------
    def get_lock(self, conversation_id: str) -> Optional[TicketLock]:
        return self._either(lambda: super(FailoverRedisLockStore, self).get_lock(conversation_id),
                            lambda: self.memory.get_lock(conversation_id))

    def delete_lock(self, conversation_id: str) -> None:
        self._either(lambda: super(FailoverRedisLockStore, self).delete_lock(conversation_id),
                     lambda: self.memory.delete_lock(conversation_id))

    def save_lock(self, lock: TicketLock) -> None:
        self._either(lambda: super(FailoverRedisLockStore, self).save_lock(lock),
                     lambda: self.memory.save_lock(lock))

    def issue_ticket(self, conversation_id: str, lock_lifetime: float = LOCK_LIFETIME) -> int:
        def change(lock: Optional[TicketLock]) -> Tuple[TicketLock, int]:
            lock = lock or self.create_lock(conversation_id)
            return lock, lock.issue_ticket(lock_lifetime)

        try:
            return self._modify(conversation_id, change)
        except Exception as error:  # noqa: BLE001 - Rasa's contract: LockError
            raise LockError(f"Error while acquiring lock. Error:\n{error}") from error

    def update_lock(self, conversation_id: str) -> None:
        def change(lock: Optional[TicketLock]) -> Tuple[Optional[TicketLock], None]:
            if lock is not None:
                lock.remove_expired_tickets()
            return lock, None

        self._modify(conversation_id, change)

    def finish_serving(self, conversation_id: str, ticket_number: int) -> None:
        self.cleanup(conversation_id, ticket_number)

    def cleanup(self, conversation_id: str, ticket_number: int) -> None:
        """Remove this ticket, and the lock with it when nobody else is waiting: one step, not three."""
        def change(lock: Optional[TicketLock]) -> Tuple[Optional[TicketLock], None]:
            if lock is None:
                return None, None
            lock.remove_ticket_for(ticket_number)
            return (lock if lock.is_someone_waiting() else None), None

        self._modify(conversation_id, change)
