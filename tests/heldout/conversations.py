"""The held-out conversation set: loading, validation and the behaviour checks of one turn.

The conversations (tests/heldout/{fa,tr}.yml) are written from how customers type (typos, no diacritics, Arabic
keyboard, colloquial and formal, several values per message, changes of mind, interruptions) and are never used in
training (tests/test_heldout_set.py checks that no user message appears in data/nlu). Each turn carries expectations
about behaviour, written from what a senior support engineer would answer, never the bot's exact wording:

    lang          reply language from this turn on (fa | tr); default: the conversation's language
    estimate      true: a GB figure and a catalogue card name (or, when no card holds the job, a quote or person
                  offered) appear; false: no estimate in this turn
    model         display name that must appear (compared without case, spaces and hyphens: "Qwen3-8B" = "Qwen3 8B")
    kept          slot values the tracker must hold after the turn ({method: qlora, seq_len: 4096, ...}); a kept
                  value counts as given: from then on the bot must never ask for it again
    asks          the form slot the bot asks for now (model | method | seq_len | budget)
    mentions      fragments that must all appear (case-insensitive)
    mentions_any  fragments of which at least one must appear (case-insensitive)
    not_mentions  fragments that must not appear (case-insensitive)
    handoff       true: the handoff form is running or a ticket was opened; false: neither happened
    ticket        true: a ticket number was given (slot ticket_id set)
    offers_human  true: a person or a quote is offered (button, pending offer) or the handoff started
    fallback      true: the "did not understand" fallback is right here (keyboard mash); default: no fallback
    out_of_scope  true: the polite "outside what I do" answer is right here; default: it must not come

Always checked: the reply is in the current language, no bot message repeats one of the previous turn word for
word, no value already given is asked for again, and (unless `fallback: true`) no fallback.
"""
from __future__ import annotations

import os
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import yaml

HELDOUT_DIR = Path(__file__).resolve().parent
LANGUAGES = ("fa", "tr")
MIN_CONVERSATIONS_PER_LANGUAGE = 120

CATEGORIES = OrderedDict([
    ("one_message", "the whole job in one message (typos, no diacritics, Arabic keyboard, formal or colloquial)"),
    ("across_turns", "values given one or several at a time across turns; none asked twice"),
    ("suffixes", "Turkish case suffixes with/without apostrophe, Persian attached particles, number words"),
    ("change_of_mind", "a value changed after an estimate or inside the form"),
    ("interruption", "FAQ, thanks or greeting in the middle of the form; the form resumes with the values"),
    ("faq_with_values", "a question an FAQ answers that also carries job values"),
    ("hourly_cap", "an hourly price limit, with or without KDV"),
    ("no_budget_limit", "the many ways of saying there is no budget limit"),
    ("comparison", "LoRA or QLoRA, 8B or 14B, H100 or A100 for the current job"),
    ("own_card", "the customer's own card (RTX 3090/4090/5090, A6000, T4, ...)"),
    ("new_models", "Qwen3, Gemma 3, gpt-oss, Llama 4, Mixtral, Phi-4, DeepSeek-R1 distills, by name"),
    ("language_switch", "a request to switch language, or writing in the other language"),
    ("complaint", "billing or service complaints: apologise and hand over"),
    ("handoff", "asking for a person; contact details inside a sentence"),
    ("capabilities", "what can you do"),
    ("multi_gpu_order", "how to order a multi-GPU setup: the process first, then the offer"),
    ("faq", "plain questions the FAQ answers, formal and colloquial"),
    ("chitchat", "greetings, thanks, goodbye, are you a bot, keyboard mash"),
    ("locale", "first message with no language signal: the channel's locale decides"),
    ("dont_know", "'I don't know' inside the form"),
    ("recalculate", "the estimate asked for again with the values given: calculated again, never a restart"),
])

EXPECT_KEYS = {"lang", "estimate", "model", "kept", "asks", "mentions", "mentions_any", "not_mentions", "handoff",
               "ticket", "offers_human", "fallback", "out_of_scope"}
FORM_SLOTS = ("model", "method", "seq_len", "budget")
# Which form question a kept value answers: once given, that question must never come again.
SLOT_TO_QUESTION = {"model": "model", "model_id": "model", "model_size_b": "model", "method": "method",
                    "seq_len": "seq_len", "budget": "budget", "budget_usd": "budget", "budget_unlimited": "budget"}
# An hourly cap is not a total budget: the bot may still ask for one, to compute time and cost (fa review §3.4).

ARABIC_LETTER = re.compile(r"[\u0600-\u06FF\uFB50-\uFDFF\uFE70-\uFEFF]")
TURKISH_LETTER = re.compile(r"[çğıöşüÇĞİÖŞÜ]")
GB_FIGURE = re.compile(r"\d+(?:[.,٫]\d+)?\s*GB")
FALLBACK_RESPONSES = {"utter_default", "utter_ask_rephrase"}
FALLBACK_OFFER_RESPONSES = {"utter_offer_human"}
# The polite "outside what I do" answers: the general one, and the one for other GPU work (serving a model, image or
# vision models) that also says what is offered (issue 21 #4: "politely out of scope, with what is offered").
# "We rent by the hour, we do not sell" (buy_hardware) is the same polite refusal with what is offered.
OUT_OF_SCOPE_RESPONSES = {"utter_out_of_scope", "utter_other_workload", "utter_rent_only"}


@dataclass
class Turn:
    user: str
    expect: Dict[str, Any] = field(default_factory=dict)
    intent: Optional[str] = None


@dataclass
class HeldoutConversation:
    id: str
    lang: str
    category: str
    turns: List[Turn]
    locale: Optional[str] = None
    note: str = ""


def _fail(where: str, problem: str) -> None:
    raise ValueError(f"{where}: {problem}")


def _parse_conversation(raw: dict, lang: str, source: str) -> HeldoutConversation:
    where = f"{source}:{raw.get('id', '?')}"
    if not isinstance(raw.get("id"), str):
        _fail(where, "every conversation needs an id")
    if raw.get("category") not in CATEGORIES:
        _fail(where, f"unknown category {raw.get('category')!r}")
    unknown = set(raw) - {"id", "category", "turns", "locale", "note"}
    if unknown:
        _fail(where, f"unknown keys {sorted(unknown)}")
    turns = [parse_turn(item, number, lang, where) for number, item in enumerate(raw.get("turns") or [], 1)]
    if not turns:
        _fail(where, "a conversation needs at least one turn")
    if not turns[0].intent:
        _fail(where, "the first turn needs an intent label (for the intent bench)")
    return HeldoutConversation(id=raw["id"], lang=lang, category=raw["category"], turns=turns,
                               locale=raw.get("locale"), note=raw.get("note", ""))


def parse_turn(item: Any, number: int, lang: str, where: str) -> Turn:
    if not isinstance(item, dict) or not isinstance(item.get("user"), str) or not item["user"].strip():
        _fail(where, f"turn {number} needs a non-empty user message")
    expect = item.get("expect") or {}
    bad = set(expect) - EXPECT_KEYS
    if bad:
        _fail(where, f"turn {number}: unknown expectations {sorted(bad)}")
    if set(item) - {"user", "expect", "intent"}:
        _fail(where, f"turn {number}: unknown keys {sorted(set(item) - {'user', 'expect', 'intent'})}")
    if expect.get("lang", lang) not in LANGUAGES:
        _fail(where, f"turn {number}: lang must be fa or tr")
    if "asks" in expect and expect["asks"] not in FORM_SLOTS:
        _fail(where, f"turn {number}: asks must be one of {FORM_SLOTS}")
    for key in ("mentions", "mentions_any", "not_mentions"):
        if key in expect and not (isinstance(expect[key], list) and all(isinstance(x, str) for x in expect[key])):
            _fail(where, f"turn {number}: {key} must be a list of strings")
    for slot in expect.get("kept") or {}:
        if slot not in SLOT_TO_QUESTION and slot not in {"hourly_cap", "gpus", "examples", "avg_tokens", "epochs",
                                                         "total_tokens", "hourly_cap_vat", "budget_period",
                                                         "own_gpu", "language"}:
            _fail(where, f"turn {number}: unknown kept slot {slot!r}")
    return Turn(user=item["user"], expect=expect, intent=item.get("intent"))


def load_conversations(lang: str) -> List[HeldoutConversation]:
    path = HELDOUT_DIR / f"{lang}.yml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if data.get("language") != lang:
        _fail(str(path), f"language must be {lang}")
    conversations = [_parse_conversation(raw, lang, path.name) for raw in data.get("conversations") or []]
    ids = [c.id for c in conversations]
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        _fail(str(path), f"duplicate ids {sorted(duplicates)}")
    return conversations


def load_all() -> List[HeldoutConversation]:
    return [c for lang in LANGUAGES for c in load_conversations(lang)]


# ---- checks of one turn ---------------------------------------------------------------------------------------

def reply_texts(replies: Sequence[dict]) -> List[str]:
    return [r["text"].strip() for r in replies if isinstance(r.get("text"), str) and r["text"].strip()]


def reply_payloads(replies: Sequence[dict]) -> List[str]:
    return [str(b.get("payload", "")) for r in replies for b in r.get("buttons") or []]


def _letters(text: str) -> List[str]:
    return [ch for ch in text if ch.isalpha()]


def _is_persian(text: str) -> bool:
    chars = _letters(text)
    if not chars:
        return True  # a bare number or symbol carries no language
    return sum(bool(ARABIC_LETTER.match(c)) for c in chars) / len(chars) > 0.5


def language_problem(texts: Sequence[str], lang: str) -> Optional[str]:
    if not texts:
        return "the bot sent no text"
    if lang == "fa":
        for text in texts:
            if not _is_persian(text):
                return f"reply is not Persian: {text[:120]!r}"
        return None
    for text in texts:
        if ARABIC_LETTER.search(text):
            return f"reply is not Turkish: {text[:120]!r}"
    if not TURKISH_LETTER.search("\n".join(texts)):
        return f"reply has no Turkish letter: {texts[0][:120]!r}"
    return None


def squash(text: str) -> str:
    """Lower-case without spaces, hyphens, underscores and dots: "Qwen3-8B", "qwen3 8b" and "Qwen3 8B" compare equal."""
    return re.sub(r"[\s\-_.\u200c]+", "", text.casefold())


# A model's size as its name says it ("gpt-oss-20b") against the parameters the bot keeps (20.9 B).
SIZE_AS_NAMED = 0.1


def _same_value(actual: Any, wanted: Any, slot: str = "") -> bool:
    if isinstance(wanted, bool) or wanted is None:
        return actual is wanted or actual == wanted
    if isinstance(wanted, (int, float)):
        try:
            tolerance = SIZE_AS_NAMED * float(wanted) if slot == "model_size_b" else 1e-6
            return abs(float(actual) - float(wanted)) <= tolerance
        except (TypeError, ValueError):
            return False
    if slot == "own_gpu" and actual is not None:
        # the bot keeps the catalogue id ("rtx-3060-12gb", "own-a100-80gb"), a person writes the name ("RTX 3060",
        # "A6000", "A100"): the name is whole parts of the id in a row (A10 is not A100)
        parts = [squash(part) for part in str(actual).split("-")]
        runs = {"".join(parts[i:j]) for i in range(len(parts)) for j in range(i + 1, len(parts) + 1)}
        return squash(str(wanted)) in runs
    return str(actual).casefold() == str(wanted).casefold()


@dataclass
class TurnResult:
    problems: List[str]
    requested_slot: Optional[str]


def turn_events(events: Sequence[dict]) -> List[dict]:
    """The tracker events since the last user message (that message included)."""
    last_user = max((i for i, e in enumerate(events) if e.get("event") == "user"), default=0)
    return list(events[last_user:])


def check_turn(expect: Dict[str, Any], replies: Sequence[dict], previous_texts: Sequence[str],
               tracker: dict, lang: str, given: set, card_names: Sequence[str]) -> List[str]:
    """Every problem of one turn (an empty list is a pass). `given`: form questions already answered."""
    texts = reply_texts(replies)
    joined = "\n".join(texts)
    slots = tracker.get("slots") or {}
    events = turn_events(tracker.get("events") or [])
    return (_dialogue_problems(texts, previous_texts, slots.get("requested_slot"), lang, given)
            + _fallback_problems(expect, events)
            + _estimate_problems(expect, replies, joined, slots, card_names)
            + _mention_problems(expect, joined.casefold())
            + _handoff_problems(expect, replies, tracker, slots))


def _dialogue_problems(texts: List[str], previous_texts: Sequence[str], requested: Any, lang: str,
                       given: set) -> List[str]:
    """The wrong language, the previous turn's message again, a form question asked again."""
    problems: List[str] = []
    problem = language_problem(texts, lang)
    if problem:
        problems.append(problem)

    repeated = [t for t in texts if t in set(previous_texts)]
    if repeated:
        problems.append(f"repeats the previous turn's message: {repeated[0][:120]!r}")

    if requested in given:
        problems.append(f"asks again for {requested}, which was already given")
    return problems


def _fallback_problems(expect: Dict[str, Any], events: List[dict]) -> List[str]:
    """What the customer sees: the "did not understand" answer, or the polite "outside what I do" answer to a
    message that was in scope (the same fallback action sends both, so the response name tells them apart)."""
    problems: List[str] = []

    def answered_with(responses: set) -> bool:
        return any((e.get("event") == "bot" and (e.get("metadata") or {}).get("utter_action") in responses)
                   or (e.get("event") == "action" and e.get("name") in responses) for e in events)

    # At the second failed turn in a row the fallback's offer of a person replaces the explanation (one reply, not
    # two prompts); its text says the bot has trouble understanding, so it is the "did not understand" answer too.
    fallback_ran = any(e.get("event") == "action" and e.get("name") == "action_default_fallback" for e in events)
    for key, responses, label in (("fallback", FALLBACK_RESPONSES, "the 'did not understand' answer"),
                                  ("out_of_scope", OUT_OF_SCOPE_RESPONSES, "the 'outside what I do' answer")):
        happened = answered_with(responses) or (
            key == "fallback" and fallback_ran and answered_with(FALLBACK_OFFER_RESPONSES))
        if expect.get(key) and not happened:
            problems.append(f"expected {label}")
        elif happened and not expect.get(key):
            problems.append(f"answered with {label}")
    return problems


@lru_cache(maxsize=1)
def faq_texts() -> frozenset:
    """Every FAQ answer as the bot sends it, in both languages (with the page address of the run, and the default)."""
    from bot.advisor.knowledge import load_knowledge
    from bot.present.render import faq_text

    kb = load_knowledge()
    urls = {None, os.environ.get("ADVISOR_PUBLIC_URL")}
    return frozenset(text for topic in kb.faq for lang in LANGUAGES for url in urls
                     if (text := faq_text(topic, lang, kb, public_url=url)))


@lru_cache(maxsize=1)
def card_sizes() -> frozenset:
    """The memory of every catalogue card, in GB as the answers print it."""
    from bot.advisor.knowledge import load_knowledge

    return frozenset(float(card.vram_gb) for card in load_knowledge().gpus)


def _gb_value(match: "re.Match[str]") -> float:
    number = re.match(r"\d+(?:[.,٫]\d+)?", match.group()).group()  # type: ignore[union-attr]
    return float(number.replace(",", ".").replace("٫", "."))


def _estimate_problems(expect: Dict[str, Any], replies: Sequence[dict], joined: str, slots: dict,
                       card_names: Sequence[str]) -> List[str]:
    """The estimate given or not, the model named, the slots kept, the question the bot asks next."""
    problems: List[str] = []
    if "estimate" in expect:
        has_card = any(name in joined for name in card_names)
        quote_offered = any(p.startswith(("/request_quote", "/request_human")) for p in reply_payloads(replies)) \
            or bool(slots.get("pending_offer"))
        # A card's "80 GB" inside a plain FAQ answer (H100 or A100?) is a fact about the card, not an estimate
        # (blind set 5): the GB figure is looked for outside the FAQ's own texts.
        # Nor is a card's own memory ("8 × H100 (80 GB)" in the order answer, blind set 7): an estimate has a figure
        # of the job's memory, which is no catalogue card's size (its range has two more).
        estimate_text = "\n".join(t for t in reply_texts(replies) if t not in faq_texts())
        has_estimate = any(_gb_value(m) not in card_sizes() for m in GB_FIGURE.finditer(estimate_text)) \
            and (has_card or quote_offered)
        if expect["estimate"] and not has_estimate:
            problems.append("no estimate (a GB figure and a card name)")
        if expect["estimate"] is False and has_estimate:
            problems.append("gave an estimate here")

    if expect.get("model") and squash(expect["model"]) not in squash(joined):
        problems.append(f"model {expect['model']!r} not named")

    for slot, wanted in (expect.get("kept") or {}).items():
        if not _same_value(slots.get(slot), wanted, slot):
            problems.append(f"slot {slot} is {slots.get(slot)!r}, expected {wanted!r}")

    requested = slots.get("requested_slot")
    if expect.get("asks") and requested != expect["asks"]:
        problems.append(f"expected the question for {expect['asks']}, the bot asks for {requested!r}")
    return problems


def _mention_problems(expect: Dict[str, Any], folded: str) -> List[str]:
    problems: List[str] = []
    for fragment in expect.get("mentions") or []:
        if fragment.casefold() not in folded:
            problems.append(f"{fragment!r} missing")
    if expect.get("mentions_any") and not any(f.casefold() in folded for f in expect["mentions_any"]):
        problems.append(f"none of {expect['mentions_any']} in the reply")
    for fragment in expect.get("not_mentions") or []:
        if fragment.casefold() in folded:
            problems.append(f"{fragment!r} should not appear")
    return problems


def _handoff_problems(expect: Dict[str, Any], replies: Sequence[dict], tracker: dict, slots: dict) -> List[str]:
    problems: List[str] = []
    active_loop = (tracker.get("active_loop") or {}).get("name")
    handoff_happened = active_loop == "handoff_form" or bool(slots.get("ticket_id"))
    if expect.get("handoff") is True and not handoff_happened:
        problems.append("no handoff started")
    if expect.get("handoff") is False and handoff_happened:
        problems.append("a handoff started that the customer did not ask for")
    if expect.get("ticket") and not slots.get("ticket_id"):
        problems.append("no ticket opened")
    if expect.get("offers_human"):
        offered = handoff_happened or bool(slots.get("pending_offer")) or any(
            p.startswith(("/request_human", "/request_quote")) for p in reply_payloads(replies))
        if not offered:
            problems.append("no person or quote offered")
    return problems


def questions_answered(expect: Dict[str, Any]) -> set:
    return {SLOT_TO_QUESTION[s] for s, v in (expect.get("kept") or {}).items()
            if s in SLOT_TO_QUESTION and v not in (None, False)}
