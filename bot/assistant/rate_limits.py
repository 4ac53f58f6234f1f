"""Rate limits in the process: token buckets per conversation, per client address and for tickets.

Issue 20, finding 6: one address opened 37 tickets in 31 seconds. Every channel (REST, socket.io, Telegram) asks
`message_allowed` before a message reaches the assistant; the handoff asks `ticket_allowed` before it opens a ticket.
The limits are data (knowledge/rate_limits.yml). They hold per process: in the cluster HAProxy limits client
addresses in front of every instance (deploy/haproxy/cluster.cfg), and each instance limits conversations.

A client address is never stored: the channel passes `client_key` (an HMAC of the address under the sessions'
secret) in the message metadata, so the action server can count tickets per address without keeping the address.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import time
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import Callable, Dict, Optional, Tuple

from bot.knowledge import parse_file
from bot.knowledge.schemas import Bucket, RateLimits

LIMITS_PATH = Path(__file__).resolve().parents[2] / "knowledge" / "rate_limits.yml"
CLIENT_KEY = "client_key"  # metadata key the channels set (never taken from the client)


Limits = RateLimits  # the file's schema (bot/knowledge/schemas.py)


@lru_cache(maxsize=1)
def limits() -> Limits:
    """knowledge/rate_limits.yml, or the file named by ADVISOR_RATE_LIMITS_FILE (the test suite's servers get
    generous limits, tests/data/rate_limits_relaxed.yml; the rate-limit tests themselves use the product's)."""
    path = Path(os.environ.get("ADVISOR_RATE_LIMITS_FILE") or LIMITS_PATH)
    return parse_file(Limits, path)


class TokenBuckets:
    """One token bucket per key, the least recently used forgotten beyond `max_keys` (a forgotten key starts full)."""

    def __init__(self, bucket: Bucket, max_keys: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = float(bucket.burst)
        self.rate_per_s = bucket.per_minute / 60.0
        self.max_keys = max_keys
        self.clock = clock
        self.buckets: "OrderedDict[str, Tuple[float, float]]" = OrderedDict()  # key -> (tokens, when)

    def _tokens(self, key: str, now: float) -> float:
        tokens, when = self.buckets.get(key, (self.capacity, now))
        return min(self.capacity, tokens + (now - when) * self.rate_per_s)

    def peek(self, key: str) -> bool:
        return self._tokens(key, self.clock()) >= 1.0

    def take(self, key: str) -> bool:
        """Spend a token of `key`'s bucket; False (nothing spent) when it is empty."""
        now = self.clock()
        tokens = self._tokens(key, now)
        allowed = tokens >= 1.0
        self.buckets[key] = (tokens - 1.0 if allowed else tokens, now)
        self.buckets.move_to_end(key)
        while len(self.buckets) > self.max_keys:
            self.buckets.popitem(last=False)
        return allowed

    def retry_after_s(self, key: str) -> int:
        missing = max(0.0, 1.0 - self._tokens(key, self.clock()))
        return max(1, int(missing / self.rate_per_s + 0.999))


class RateLimiter:
    def __init__(self, configured: Optional[Limits] = None, clock: Callable[[], float] = time.monotonic) -> None:
        configured = configured or limits()
        size = configured.max_tracked_keys
        self.buckets: Dict[str, TokenBuckets] = {
            name: TokenBuckets(getattr(configured, name), size, clock)
            for name in ("messages_per_conversation", "messages_per_address", "tickets_per_conversation",
                         "tickets_per_address")}

    def _allowed(self, kind: str, conversation: Optional[str], address: Optional[str]) -> bool:
        checks = [(self.buckets[f"{kind}_per_conversation"], conversation),
                  (self.buckets[f"{kind}_per_address"], address)]
        checks = [(buckets, key) for buckets, key in checks if key]
        # Spend only when every bucket has a token, so a refused message does not drain the other bucket.
        if not all(buckets.peek(key) for buckets, key in checks):
            return False
        return all([buckets.take(key) for buckets, key in checks])

    def message_allowed(self, conversation: Optional[str], address: Optional[str] = None) -> bool:
        return self._allowed("messages", conversation, address)

    def ticket_allowed(self, conversation: Optional[str], client_key: Optional[str] = None) -> bool:
        return self._allowed("tickets", conversation, client_key)

    def retry_after_s(self, conversation: Optional[str], address: Optional[str] = None) -> int:
        waits = [self.buckets["messages_per_conversation"].retry_after_s(conversation)] if conversation else []
        if address:
            waits.append(self.buckets["messages_per_address"].retry_after_s(address))
        return max(waits or [1])


_limiter: Optional[RateLimiter] = None


def limiter() -> RateLimiter:
    """The process's limiter (one per Rasa or action server process)."""
    global _limiter
    if _limiter is None:
        _limiter = RateLimiter()
    return _limiter


def client_key(address: Optional[str], secret: bytes) -> Optional[str]:
    """A pseudonym of a client address: equal for equal addresses under one secret, not reversible to the address."""
    if not address:
        return None
    return hmac.new(secret, b"client-address:" + address.encode(), hashlib.sha256).hexdigest()[:24]
