"""action_estimate: slots -> bot.advisor.advice.advise -> the rendered answer, the chart, the estimate_summary slot."""
from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any, Dict, List, Optional, Text

from rasa_sdk import Action, Tracker
from rasa_sdk.events import SlotSet
from rasa_sdk.executor import CollectingDispatcher

from actions.common import conversation_language, recent_bot_texts

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[1]
# docs/architecture.md "Charts": bot/website.py serves $ADVISOR_CHART_DIR under $ADVISOR_PUBLIC_URL/charts/.
DEFAULT_CHART_DIR = ROOT / "var" / "charts"
DEFAULT_PUBLIC_URL = "http://localhost:8080"
FITTING = ("fits", "tight")  # bot.advisor.recommend.FitStatus values of a card that holds the job
# InputError keys (knowledge/texts.yml error_<key>) whose text sends the user to a colleague: a model size outside
# the presets' range is not something the user can fix by rephrasing.
ERRORS_FOR_A_PERSON = ("size_out_of_range",)
# Channels that read the chart file while sending the reply (Telegram uploads it) get it drawn before replying.
CHANNELS_NEEDING_THE_FILE = ("telegram",)

# Drawing a chart takes 75-100 ms of matplotlib on this machine, as much as the rest of the turn. For web channels
# it is drawn in a separate process after the reply has gone out (the browser fetches the image a moment later);
# a process, not a thread, so the drawing does not hold the GIL of the action server.
_chart_pool: Optional[ProcessPoolExecutor] = None
_pending_charts: Dict[Path, Future] = {}


def _draw_chart(advice: Any, lang: Text, path: Path) -> None:
    from bot.present.chart import render_chart

    partial = path.with_name(path.name + ".part")
    render_chart(advice, lang, partial)
    os.replace(partial, path)  # the web server never serves a half-written file


def _die_with_parent() -> None:
    """Chart worker start-up: end with the action server. A forked worker holds the server's listening socket, so a
    worker outliving a killed server (OOM, SIGKILL) would keep the port and the supervisor could not restart it."""
    import ctypes
    import signal

    # The fork inherits the server's signal handling: Sanic's SIGTERM handler only wakes the server's event loop,
    # which does not run here, so SIGTERM did nothing and the worker outlived a killed server, holding its port
    # under the server's command line (issue 20, finding 8: `make test` left an "action server" running).
    signal.set_wakeup_fd(-1)
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    try:
        # SIGKILL: the worker holds no state worth a clean exit, and nothing it inherited can catch it.
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG (Linux prctl(2))
    except (OSError, AttributeError):  # not Linux: the worker ends when the executor shuts down, as before
        return
    if os.getppid() == 1:  # the server died before prctl took effect
        os._exit(0)


def _pool() -> ProcessPoolExecutor:
    global _chart_pool
    if _chart_pool is None:
        _chart_pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork"),
                                          initializer=_die_with_parent)
    return _chart_pool


def start_chart(advice: Any, lang: Text, path: Path) -> Future:
    future = _pending_charts.get(path)
    if future is None or (future.done() and not path.exists()):
        future = _pool().submit(_draw_chart, advice, lang, path)
        _pending_charts[path] = future
        future.add_done_callback(lambda done: _log_chart_failure(done, path))
    return future


def _log_chart_failure(future: Future, path: Path) -> None:
    _pending_charts.pop(path, None)
    if future.exception() is not None:
        logger.error("chart %s failed: %r", path.name, future.exception())


async def wait_for_chart(path: Path, timeout: float = 30) -> None:
    """Wait until a chart started by start_chart is on disk (Telegram replies; tests)."""
    future = _pending_charts.get(path)
    if future is not None:
        await asyncio.wait_for(asyncio.wrap_future(future), timeout)


def _int(value: Any) -> Optional[int]:
    return int(value) if isinstance(value, (int, float)) and value > 0 else None


def advice_request_fields(tracker: Tracker) -> Dict[Text, Any]:
    """The AdviceRequest fields held in the slots (names from docs/architecture.md)."""
    slot = tracker.get_slot
    model_id = slot("model_id")
    budget_unlimited = bool(slot("budget_unlimited"))
    return {
        "model": model_id,
        "size_b": None if model_id else slot("model_size_b"),
        "method": slot("method"),
        "seq_len": _int(slot("seq_len")),
        "budget_usd": None if budget_unlimited else slot("budget_usd"),
        "budget_unlimited": budget_unlimited,
        "total_tokens": _int(slot("total_tokens")),
        "examples": _int(slot("examples")),
        "avg_tokens": _int(slot("avg_tokens")),
        "epochs": slot("epochs"),
        "gpus": _int(slot("gpus")),
        **_contract_fields(tracker),
    }


# Slot -> AdviceRequest field of the values added by issue 13 (docs/architecture.md contract).
CONTRACT_FIELDS = {"hourly_cap": "hourly_cap_usd", "hourly_cap_vat": "hourly_cap_includes_vat",
                   "budget_period": "budget_period", "custom_arch": "custom_arch", "stack": "stack"}


def _contract_fields(tracker: Tracker) -> Dict[Text, Any]:
    """The newer values, for the AdviceRequest fields that exist (an unknown field would be rejected)."""
    from bot.advisor.advice import AdviceRequest

    known = AdviceRequest.__fields__
    fields = {}
    for slot_name, field in CONTRACT_FIELDS.items():
        value = tracker.get_slot(slot_name)
        if value is not None and field in known:
            fields[field] = bool(value) if field == "hourly_cap_includes_vat" else value
    return fields


def estimate_summary(advice: Any) -> Dict[Text, Any]:
    """The estimate_summary slot (schema in docs/architecture.md), read by the handoff and the tickets."""
    estimate = advice.estimate
    # The card the answer recommended (falls back to the cheapest fitting one), so staff see what the customer saw.
    best = advice.recommendation.card if advice.recommendation is not None else advice.best
    multi = advice.multi_gpu
    return {
        "per_gpu_gib": round(float(estimate.per_gpu_gib), 1),
        "low_gib": round(float(estimate.low_gib), 1),
        "high_gib": round(float(estimate.high_gib), 1),
        "best_card": best.card_id if best is not None else None,
        "best_price_usd_hour": float(best.price_usd_hour) if best is not None else None,
        "fitting_cards": [fit.card_id for fit in advice.cards if fit.status in FITTING],
        "needs_quote": bool(advice.needs_quote),
        "multi_gpu": None if multi is None else {
            "card": multi.card_id, "count": int(multi.count), "sharding": str(multi.sharding),
            "per_gpu_gib": round(float(multi.per_gpu_gib), 1)},
        "model_display": advice.preset.display,
        "method": advice.plan.method,  # what "would QLoRA be cheaper?" compares with (actions/compare.py)
        "stack": advice.plan.stack,  # what a stack named next is compared with (actions/followup_lines.py)
    }


def chart_name(fields: Dict[Text, Any], lang: Text) -> Text:
    # Same request and language -> same file: a repeated question reuses the chart instead of redrawing it.
    key = json.dumps({**fields, "lang": lang}, sort_keys=True, default=str)
    return hashlib.sha256(key.encode()).hexdigest()[:20] + ".png"


def asked_again(tracker: Tracker) -> bool:
    """The latest message asks for the estimate without giving any value ("tekrar hesaplar mısın?")."""
    from bot.text.parse import parse_values

    text = tracker.latest_message.get("text") or ""
    return bool(text.strip()) and not text.startswith("/") and not parse_values(text).found()


class ActionEstimate(Action):
    def name(self) -> Text:
        return "action_estimate"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[Dict[Text, Any]]:
        from bot.present.render import render_estimate_hint

        lang = conversation_language(tracker)
        fields = advice_request_fields(tracker)
        advice = self._advice(dispatcher, fields, lang)
        if advice is None:
            return []

        # The quote offer comes as its own question with buttons (utter_estimate_offer_quote), never twice; the
        # glosses and the "approximate, test first" line only come with the first estimate of the conversation.
        from actions.dialogue_text import text as dialogue_text

        previous = tracker.get_slot("estimate_summary")
        first_estimate = previous is None
        advice, answer = self._steady_answer(advice, previous, lang)
        summary = estimate_summary(advice)
        recent = recent_bot_texts(tracker)
        # The channels send each paragraph as its own message (Rasa's REST and socket.io split at blank lines).
        parts = [part.strip() for part in answer.split("\n\n")]
        recent_parts = {part.strip() for text in recent for part in text.split("\n\n")}
        # Cheapest first: the message is parsed again only when the answer would repeat what was just sent.
        unchanged = previous == json.loads(json.dumps(summary)) and any(part in recent_parts for part in parts) \
            and asked_again(tracker)
        if unchanged:
            # Asked again right after the estimate, giving no value ("دوباره حساب کن"): the recommendation, said to
            # be unchanged, in one message, without the details (the last part) the customer has just read, nor
            # the chart again.
            lead = "\n".join(parts[:-1]) or answer
            answer = "\n".join([dialogue_text("recalculated_unchanged", lang), lead,
                                 dialogue_text("recalculated_unchanged_invite", lang)])
        elif answer.strip() in recent:
            # A change that moves nothing (a higher budget, the same card) would send the same message twice in a
            # row: it leads with the recalculation instead.
            answer = dialogue_text("recalculated_same", lang) + "\n" + answer
        if not unchanged:
            from actions.named_cards import named_card_lines

            answer = "\n".join(self._stack_change(tracker, lang, previous) + [answer]
                               + named_card_lines(advice, tracker.latest_message.get("text") or "", lang))
        dispatcher.utter_message(text=answer)
        events = [SlotSet("estimate_summary", summary)] + self._model_notes(dispatcher, tracker, advice, fields,
                                                                            lang, unchanged)
        image = None if unchanged else await self._chart_url(
            advice, fields, lang, wait=tracker.get_latest_input_channel() in CHANNELS_NEEDING_THE_FILE)
        if image:
            dispatcher.utter_message(image=image)
        if advice.needs_quote and tracker.get_slot("pending_offer") != "quote":
            # (not again when the previous turn offered it: the first answer of a multi-GPU job does)
            from actions.answer_first import quote_offer_response

            dispatcher.utter_message(response=quote_offer_response(tracker.latest_message.get("text") or ""))
        elif first_estimate:
            # Examples of changes the customer has not tried yet (bot.present.render.render_estimate_hint).
            dispatcher.utter_message(text=render_estimate_hint(advice, lang))
        return events

    @staticmethod
    def _stack_change(tracker: Tracker, lang: Text, previous: Optional[Dict[Text, Any]]) -> List[Text]:
        """A stack named after an answer ("peki Unsloth?"): what it changes against that answer (memory, speed,
        cost per token; actions/followup_lines.py), said first."""
        from bot.text.stack_names import read_stack

        if previous is None and not tracker.get_slot("answered_first"):
            return []
        if not read_stack(tracker.latest_message.get("text") or ""):
            return []
        from actions.answer_first import FIRST_ANSWER_STACK_SLOT
        from actions.common import slot_before_latest_message
        from actions.followup_lines import stack_change_line

        # The stack of the answer on the table: the full estimate's (its summary), else the first answer's (named
        # or chosen for the job, round 7); the events sent hold only the last two turns (RECENT_TURNS of
        # bot/assistant/patches/action_payload.py), so they only stand in when neither was kept.
        before = previous.get("stack") if isinstance(previous, dict) and "stack" in previous \
            else tracker.get_slot(FIRST_ANSWER_STACK_SLOT) or slot_before_latest_message(tracker, "stack")
        line = stack_change_line(tracker.current_slot_values(), before, lang)
        return [line] if line else []

    @staticmethod
    def _steady_answer(advice: Any, previous: Optional[Dict[Text, Any]], lang: Text):
        """The advice (the previous card kept when the change is inside the estimate's error, actions/consistency.py)
        and its rendered answer, which then says why the card stayed."""
        from actions.consistency import steady_advice
        from actions.dialogue_text import text as dialogue_text
        from bot.present.render import render_advice

        advice, kept = steady_advice(advice, previous)
        answer = render_advice(advice, lang, quote_offer=False, first=previous is None, previous=previous)
        if kept:
            line = dialogue_text("recommendation_kept", lang, **kept)
            answer = answer.replace("\n\n", "\n" + line + "\n\n", 1) if "\n\n" in answer else answer + "\n" + line
        return advice, answer

    @staticmethod
    def _advice(dispatcher: CollectingDispatcher, fields: Dict[Text, Any], lang: Text) -> Any:
        """The advice for the slots' values, or None after saying what is wrong with them."""
        from bot.advisor.advice import AdviceRequest, advise
        from bot.advisor.knowledge import InputError
        from bot.present.render import render_error

        try:
            return advise(AdviceRequest(**fields))
        except InputError as error:
            dispatcher.utter_message(text=render_error(error, lang))
            if error.key in ERRORS_FOR_A_PERSON:
                # The text says a colleague can review the plan: make that an offer a button or a "yes" accepts.
                dispatcher.utter_message(response="utter_offer_review_by_person")
        except ValueError:
            logger.exception("advise() rejected %s", fields)
            dispatcher.utter_message(response="utter_estimate_failed")
        return None

    @staticmethod
    def _model_notes(dispatcher: CollectingDispatcher, tracker: Tracker, advice: Any, fields: Dict[Text, Any],
                     lang: Text, unchanged: bool) -> List[Dict[Text, Any]]:
        """The notes on the model after the answer: the version assumed, or the stand-in for an unknown name."""
        events: List[Dict[Text, Any]] = []
        if tracker.get_slot("model_version_assumed"):
            # "qwen 14b": the newest release of that size was used; said once, with the first estimate after it
            from actions.model_notes import version_note

            note = version_note(advice.preset.id, lang)
            if note:
                dispatcher.utter_message(text=note)
            events.append(SlotSet("model_version_assumed", None))
        if tracker.get_slot("model_unrecognised") and fields.get("model") and not unchanged:
            # A name we do not know was computed with a stand-in: say so, how it may differ, the wider range.
            from actions.model_notes import unrecognised_note

            dispatcher.utter_message(text=unrecognised_note(tracker.get_slot("model_unrecognised"), advice,
                                                            fields, lang))
        return events

    @staticmethod
    async def _chart_url(advice: Any, fields: Dict[Text, Any], lang: Text, wait: bool) -> Optional[Text]:
        chart_dir = Path(os.environ.get("ADVISOR_CHART_DIR") or DEFAULT_CHART_DIR)
        public_url = (os.environ.get("ADVISOR_PUBLIC_URL") or DEFAULT_PUBLIC_URL).rstrip("/")
        name = chart_name(fields, lang)
        path = chart_dir / name
        try:
            if not path.exists():
                chart_dir.mkdir(parents=True, exist_ok=True)
                start_chart(advice, lang, path)
                if wait:
                    await wait_for_chart(path)
        except Exception:  # a missing chart must not cost the user the answer itself
            logger.exception("chart rendering failed for %s", fields)
            return None
        return f"{public_url}/charts/{name}"
