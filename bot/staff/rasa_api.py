"""The few Rasa HTTP API calls staff tools need (rasa run --enable-api --auth-token ...).

Staff messages go in as `bot` events through `POST /conversations/{id}/tracker/events` with
`output_channel=latest&execute_side_effects=true`: Rasa records the event in the tracker and sends it through the
output channel of the conversation's latest input channel (rasa/server.py append_events ->
processor.execute_side_effects). The channels that can push (socket.io, Telegram) deliver it at once; REST has no
push channel, so the message is only recorded there.
"""
from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Optional

DEFAULT_RASA_URL = "http://127.0.0.1:5005"
# Channels whose output channel can send a message without a user request in flight.
PUSH_CHANNELS = frozenset({"socketio", "telegram"})


class RasaUnavailable(RuntimeError):
    pass


class RasaClient:
    def __init__(self, url: Optional[str] = None, token: Optional[str] = None, timeout: float = 10.0):
        self.url = (url or os.environ.get("RASA_URL") or DEFAULT_RASA_URL).rstrip("/")
        self.token = token if token is not None else os.environ.get("RASA_TOKEN", "")
        self.timeout = timeout

    def _call(self, method: str, path: str, params: Optional[Dict[str, str]] = None, body: Any = None) -> Any:
        query = dict(params or {})
        if self.token:
            query["token"] = self.token
        url = f"{self.url}{path}" + (f"?{urllib.parse.urlencode(query)}" if query else "")
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as err:
            raise RasaUnavailable(f"Rasa answered {err.code} to {method} {path}") from err
        except (urllib.error.URLError, OSError) as err:
            raise RasaUnavailable(f"Rasa unreachable at {self.url}: {err}") from err
        return json.loads(raw) if raw else None

    @staticmethod
    def _conv(sender_id: str) -> str:
        return "/conversations/" + urllib.parse.quote(sender_id, safe="")

    def tracker(self, sender_id: str) -> Dict[str, Any]:
        return self._call("GET", self._conv(sender_id) + "/tracker")

    def append_events(self, sender_id: str, events: List[Dict[str, Any]], push: bool = True) -> Dict[str, Any]:
        params = {"output_channel": "latest", "execute_side_effects": "true"} if push else {}
        return self._call("POST", self._conv(sender_id) + "/tracker/events", params, events)

    def execute(self, sender_id: str, action: str) -> Dict[str, Any]:
        return self._call("POST", self._conv(sender_id) + "/execute", {"output_channel": "latest"},
                          {"name": action})

    def pause(self, sender_id: str) -> None:
        self.append_events(sender_id, [{"event": "pause", "timestamp": time.time()}], push=False)

    def resume(self, sender_id: str) -> None:
        self.append_events(sender_id, [{"event": "resume", "timestamp": time.time()}], push=False)

    def say_as_staff(self, sender_id: str, text: str, author: str, pause: bool = True) -> Dict[str, Any]:
        """Record and push a staff message; pauses the bot first so it does not answer the customer's reply."""
        events: List[Dict[str, Any]] = []
        if pause:
            events.append({"event": "pause", "timestamp": time.time()})
        events.append({"event": "bot", "text": text, "timestamp": time.time(),
                       "metadata": {"staff": True, "author": author}})
        return self.append_events(sender_id, events, push=True)


def latest_input_channel(tracker: Dict[str, Any]) -> Optional[str]:
    return tracker.get("latest_input_channel")


def is_paused(tracker: Dict[str, Any]) -> bool:
    return bool(tracker.get("paused"))
