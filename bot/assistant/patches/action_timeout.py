"""A slow or stopped action server gets the customer a short answer within seconds, not silence for 5 minutes.

Rasa 3.6 waits up to 5 minutes for every custom action (`DEFAULT_REQUEST_TIMEOUT`, rasa/core/actions/action.py
RemoteAction.run), and when the call fails it logs the error, drops the action's events and carries on, so the
customer gets nothing at all. Patched here:

- every call to the action server gives up after ACTION_SERVER_TIMEOUT_S seconds (default 6) and counts as
  "unavailable" when it timed out, could not connect, or got a 5xx answer (a balancer with no action server left
  answers 503); a 400 (the action rejected itself) keeps its usual meaning;
- after one such failure the rest of the same turn does not wait again: the later calls of that turn fail at once,
  so the answer comes within one timeout even when the turn would run several actions;
- the action whose run failed answers `utter_action_unavailable` (domain/service.yml, in the conversation's
  language) and ends the turn (FollowupAction action_listen); the form stays where it was, so the customer's next
  message, once the service is back, continues the conversation;
- the validation actions run inside Rasa (bot/assistant/patches/in_process_actions.py): they have no server to wait for,
  so they neither time out nor are refused after a failure; the language and the values of the message are read
  during an outage too.

Imported from bot/assistant/__init__.py, so it is in effect in every Rasa process of the project.
"""
from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections import OrderedDict
from typing import Any, List, Optional, Tuple

import aiohttp
from rasa.shared.exceptions import RasaException

from bot.assistant.patches.import_hooks import is_patched, replace, when_imported
from bot.assistant.patches.in_process_actions import runs_in_process

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 6.0  # + the rest of the turn stays well inside the 10 s the customer may wait (issue 12)
UNAVAILABLE_RESPONSE = "utter_action_unavailable"
_REMEMBERED_TURNS = 10000


def action_timeout_s() -> float:
    try:
        value = float(os.environ.get("ACTION_SERVER_TIMEOUT_S", DEFAULT_TIMEOUT_S))
    except ValueError:
        return DEFAULT_TIMEOUT_S
    return value if value > 0 else DEFAULT_TIMEOUT_S


class ActionServerUnavailable(RasaException):
    """The action server did not answer in time, refused the connection or answered 5xx.

    A RasaException, so Rasa's own handlers that tolerate a failed custom action (slot-mapping validation in
    action_extract_slots) keep tolerating it.
    """


class _FailedTurns:
    """Turns (conversation, user message) in which the action server already failed; bounded."""

    def __init__(self, capacity: int = _REMEMBERED_TURNS) -> None:
        self._turns: "OrderedDict[Tuple[str, Optional[str]], None]" = OrderedDict()
        self._capacity = capacity

    @staticmethod
    def key(tracker: Any) -> Tuple[str, Optional[str]]:
        latest = getattr(tracker, "latest_message", None)
        return str(tracker.sender_id), getattr(latest, "message_id", None)

    def add(self, tracker: Any) -> None:
        key = self.key(tracker)
        if key[1] is None:  # no user message to tie the failure to (an API call): every call waits on its own
            return
        self._turns[key] = None
        while len(self._turns) > self._capacity:
            self._turns.popitem(last=False)

    def __contains__(self, tracker: Any) -> bool:
        return self.key(tracker) in self._turns


failed_turns = _FailedTurns()


def _is_unavailable(error: BaseException) -> bool:
    """Whether a failed action call means "the service is not there" (as opposed to a rejection)."""
    from rasa.core.actions.action import ActionExecutionRejection

    if isinstance(error, ActionExecutionRejection):
        return False
    if isinstance(error, (asyncio.TimeoutError, aiohttp.ClientConnectionError)):
        return True
    cause = error.__cause__ or error.__context__
    status = getattr(cause, "status", None)  # aiohttp's or Rasa's own ClientResponseError (rasa/utils/endpoints.py)
    if isinstance(status, int):
        return status >= 500
    return isinstance(cause, (asyncio.TimeoutError, aiohttp.ClientConnectionError))


def _remote_run_with_timeout(original_run: Any) -> Any:
    @functools.wraps(original_run)  # keeps the markers of patches applied before this one
    async def run(self: Any, output_channel: Any, nlg: Any, tracker: Any, domain: Any) -> List[Any]:
        return await _run_remote(original_run, self, output_channel, nlg, tracker, domain)

    return run


async def _run_remote(_original_remote_run: Any, self: Any, output_channel: Any, nlg: Any, tracker: Any,
                      domain: Any) -> List[Any]:
    if runs_in_process(self.name()):  # no server to wait for (bot/assistant/patches/in_process_actions.py)
        return await _original_remote_run(self, output_channel, nlg, tracker, domain)
    if tracker in failed_turns:
        raise ActionServerUnavailable(f"action server unavailable earlier in this turn; '{self.name()}' not called")
    timeout = action_timeout_s()
    try:
        return await asyncio.wait_for(_original_remote_run(self, output_channel, nlg, tracker, domain), timeout)
    except Exception as error:  # noqa: BLE001 - sorted by _is_unavailable, everything else re-raised unchanged
        if not _is_unavailable(error):
            raise
        failed_turns.add(tracker)
        reason = "no answer within %.1f s" % timeout if isinstance(error, asyncio.TimeoutError) else str(error)
        logger.error("Action server unavailable for '%s' (%s)", self.name(), reason)
        raise ActionServerUnavailable(f"action server unavailable for '{self.name()}': {reason}") from error


async def unavailable_answer(nlg: Any, tracker: Any, output_channel: Any) -> List[Any]:
    """`utter_action_unavailable` in the conversation's language, as events the processor sends out."""
    from rasa.core.actions.action import create_bot_utterance

    channel_name = output_channel.name() if output_channel is not None else None
    generated = await nlg.generate(UNAVAILABLE_RESPONSE, tracker, channel_name)
    if not generated:
        logger.error("%s is missing from the domain: the customer got no answer", UNAVAILABLE_RESPONSE)
        return []
    return [create_bot_utterance(generated)]


def _run_action_answering_outages(_original_run_action: Any) -> Any:
    async def run_action(self: Any, action: Any, tracker: Any, output_channel: Any, nlg: Any,
                         prediction: Any) -> bool:
        _answer_outage_instead_of_raising(action)
        return await _original_run_action(self, action, tracker, output_channel, nlg, prediction)

    return run_action


def _answer_outage_instead_of_raising(action: Any) -> None:
    from rasa.core.actions.action import ACTION_LISTEN_NAME
    from rasa.shared.core.events import FollowupAction

    original_run = action.run

    async def run(output_channel: Any, nlg: Any, temporary_tracker: Any, domain: Any) -> List[Any]:
        try:
            return await original_run(output_channel, nlg, temporary_tracker, domain)
        except ActionServerUnavailable:
            # The action's own events are lost (as Rasa does for any failure); the answer says why and the turn
            # ends here, with the form (if any) still active for the next message.
            return await unavailable_answer(nlg, temporary_tracker, output_channel) + [
                FollowupAction(ACTION_LISTEN_NAME)]

    action.run = run  # this action object is created for this one prediction (action_for_name_or_text)


PATCH_MARKER = "_advisor_action_timeout"


def _patch(processor_module: Any) -> None:
    """Patch RemoteAction.run and MessageProcessor._run_action (idempotent)."""
    from rasa.core.actions.action import RemoteAction

    if getattr(RemoteAction.run, PATCH_MARKER, False):
        return
    remote_run = _remote_run_with_timeout(RemoteAction.run)
    setattr(remote_run, PATCH_MARKER, True)
    replace(RemoteAction, "run", remote_run)
    processor = processor_module.MessageProcessor
    replace(processor, "_run_action", _run_action_answering_outages(processor._run_action))
    logger.info("Custom actions time out after %.1f s with an answer (bot.assistant.patches.action_timeout)",
                action_timeout_s())


def is_installed() -> bool:
    return is_patched("rasa.core.actions.action", "RemoteAction.run", PATCH_MARKER)


def install() -> None:
    """Patch now if Rasa's processor is loaded, otherwise as soon as it is (without importing Rasa's core now)."""
    when_imported("rasa.core.processor", _patch)

__all__ = ["ActionServerUnavailable", "action_timeout_s", "install", "is_installed", "unavailable_answer"]
