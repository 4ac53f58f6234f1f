"""Checks shared by the end-to-end conversation suites: reply script, expected figures from the core library."""
from __future__ import annotations

import json
import re
import urllib.request
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional

import yaml

from bot.advisor.advice import AdviceRequest, advise
from bot.advisor.knowledge import load_knowledge

ARABIC_LETTER = re.compile(r"[\u0600-\u06FF\uFB50-\uFDFF\uFE70-\uFEFF]")
TURKISH_LETTER = re.compile(r"[çğıöşüÇĞİÖŞÜ]")


DOMAIN_DIR = Path(__file__).resolve().parents[2] / "domain"


@lru_cache(maxsize=1)
def domain_responses() -> Dict[str, List[dict]]:
    """Every response of domain/*.yml by name, as written there."""
    responses: Dict[str, List[dict]] = {}
    for path in sorted(DOMAIN_DIR.glob("*.yml")):
        responses.update((yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("responses") or {})
    return responses


def domain_response(name: str, lang: str) -> str:
    """The variant of response ``name`` for ``lang`` (the first one for that language, else the unconditioned one)."""
    variants = domain_responses()[name]
    for variant in variants:
        if any(c.get("value") == lang for c in variant.get("condition") or []):
            return variant["text"]
    return next(v["text"] for v in variants if not v.get("condition"))


def last_intent(conversation) -> str:
    """The intent the server gave the conversation's latest user message."""
    server = conversation.server
    url = f"{server.url}/conversations/{conversation.sender}/tracker?token={server.extra['auth_token']}"
    with urllib.request.urlopen(url, timeout=10) as resp:
        events = json.loads(resp.read())["events"]
    return [e for e in events if e["event"] == "user"][-1]["parse_data"]["intent"]["name"]


def handed_over(conversation) -> bool:
    """The hand-over form is running or a ticket was opened."""
    slots = tracker_slots(conversation)
    return bool(slots.get("ticket_id")) or slots.get("requested_slot") in ("handoff_consent", "handoff_contact")


def letters(text: str) -> List[str]:
    return [ch for ch in text if ch.isalpha()]


def is_persian(text: str) -> bool:
    """Mostly Arabic-script letters (GPU names, LoRA and GB stay in Latin script inside Persian text)."""
    chars = letters(text)
    return bool(chars) and sum(bool(ARABIC_LETTER.match(c)) for c in chars) / len(chars) > 0.5


def is_turkish(text: str) -> bool:
    return bool(letters(text)) and not ARABIC_LETTER.search(text) and bool(TURKISH_LETTER.search(text))


def texts(replies: List[dict]) -> List[str]:
    return [r["text"] for r in replies if r.get("text")]


def joined(replies: List[dict]) -> str:
    return "\n".join(texts(replies))


def payloads(replies: List[dict]) -> List[str]:
    return [b["payload"] for r in replies for b in r.get("buttons") or []]


def images(replies: List[dict]) -> List[str]:
    return [r["image"] for r in replies if r.get("image")]


def assert_language(replies: List[dict], lang: str) -> None:
    assert replies, "the bot did not answer"
    check = is_persian if lang == "fa" else is_turkish
    for text in texts(replies):
        assert check(text), f"reply is not in {lang}: {text[:200]!r}"


def tracker_slots(conversation) -> Dict[str, Any]:
    server = conversation.server
    url = f"{server.url}/conversations/{conversation.sender}/tracker?token={server.extra['auth_token']}"
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())["slots"]


def expected_advice(**request: Any):
    """What the core library advises for the same values: the e2e answer must carry its figures."""
    return advise(AdviceRequest(**request))


def card_name(card_id: str) -> str:
    return load_knowledge().gpu(card_id).name


def names_a_card(text: str) -> bool:
    """The reply names a catalogue card with a memory figure (an answer that recommends, not one that asks)."""
    return "GB" in text and any(card.name in text for card in load_knowledge().gpus)


def price_text(usd: float, lang: str) -> str:
    """Hourly price as render writes it: "0.74" in Persian, "0,74" in Turkish (the currency word follows it)."""
    from bot.present.render import money

    return money(usd, lang)


def number_forms(fragment: str, lang: str) -> List[str]:
    """A bare number as the answer may write it: "2048", and "2.048" in Turkish (thousands grouped)."""
    forms = [fragment]
    if fragment.isdigit() and len(fragment) > 3:
        grouped = f"{int(fragment):,}"
        forms.append(grouped.replace(",", ".") if lang == "tr" else grouped)
    return forms


def assert_estimate(replies: List[dict], lang: str, *, best_card: Optional[str] = None,
                    mentions: List[str] = ()) -> str:
    text = joined(replies)
    assert_language(replies, lang)
    assert "GB" in text
    assert ("KDV" in text) if lang == "tr" else ("مالیات" in text)
    if best_card:
        assert card_name(best_card) in text, f"{card_name(best_card)} missing from {text[:400]!r}"
    for fragment in mentions:
        assert any(form in text for form in number_forms(fragment, lang)), \
            f"{fragment!r} missing from {text[:600]!r}"
    assert images(replies) and images(replies)[0].endswith(".png")
    return text


class NoRepeatTurns:
    """A conversation that checks, at every turn, that no reply repeats a message of the turn before."""

    def __init__(self, conversation) -> None:
        self.c = conversation
        self.previous: List[str] = []

    def say(self, message: str) -> List[dict]:
        replies = self.c.say(message)
        repeated = [t for t in texts(replies) if t in self.previous]
        assert not repeated, f"repeated word for word after {message!r}: {repeated}"
        self.previous = texts(replies)
        return replies

    def slots(self) -> dict:
        return tracker_slots(self.c)


def generic_reply(replies: List[dict], lang: str) -> bool:
    """The fallback, or the generic "how else can I help" that a follow-up about the answer must not get."""
    generic = {domain_response(name, lang) for name in ("utter_default", "utter_anything_else")}
    return any(t in generic for t in texts(replies))


def settle_estimate(turns: NoRepeatTurns, lang: str) -> None:
    """Answer the first answer's open question as "don't know" until the full estimate is on the table."""
    for _ in range(2):
        if turns.slots().get("estimate_summary"):
            return
        turns.say("bilmiyorum" if lang == "tr" else "نمی‌دونم")
