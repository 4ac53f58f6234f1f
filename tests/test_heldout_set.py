"""The held-out conversation set is valid, large enough, covers every category in both languages, and stays out of
the training data (a held-out message copied into data/nlu would make the measured pass rate meaningless)."""
from __future__ import annotations

import re
from collections import Counter

import pytest
import yaml

from bot.text.normalize import normalize
from tests.heldout.conversations import (CATEGORIES, LANGUAGES, MIN_CONVERSATIONS_PER_LANGUAGE, check_turn,
                                         load_conversations)
from tests.servers import ROOT


def _comparable(text: str) -> str:
    """Same message for a classifier: normalised letters and digits, lower case, no punctuation, single spaces."""
    text = normalize(text).casefold().replace("\u200c", " ")
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(text.split())


def _training_messages() -> set:
    messages = set()
    for path in sorted((ROOT / "data" / "nlu").glob("*.yml")):
        for block in yaml.safe_load(path.read_text(encoding="utf-8")).get("nlu") or []:
            for line in (block.get("examples") or "").splitlines():
                line = line.strip()
                if line.startswith("- "):
                    # Entity annotations [text](entity) count as their text.
                    messages.add(_comparable(re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", line[2:])))
    return messages


@pytest.mark.parametrize("lang", LANGUAGES)
def test_set_is_large_enough_and_covers_every_category(lang):
    conversations = load_conversations(lang)
    assert len(conversations) >= MIN_CONVERSATIONS_PER_LANGUAGE
    per_category = Counter(c.category for c in conversations)
    missing = [name for name in CATEGORIES if per_category[name] < 3]
    assert not missing, f"{lang}: categories with fewer than 3 conversations: {missing}"


def test_no_held_out_user_message_is_in_the_training_data():
    training = _training_messages()
    assert len(training) > 1000  # the NLU files were read
    leaked = [(c.id, t.user) for lang in LANGUAGES for c in load_conversations(lang) for t in c.turns
              if _comparable(t.user) in training]
    assert not leaked, f"held-out messages found in data/nlu: {leaked}"


def test_conversation_ids_are_unique_across_languages():
    ids = [c.id for lang in LANGUAGES for c in load_conversations(lang)]
    assert len(ids) == len(set(ids))


# ---- the checks themselves can fail --------------------------------------------------------------------------

CARDS = ["A40", "H100"]


def _tracker(slots=None, events=None, loop=None):
    return {"slots": slots or {}, "events": events or [{"event": "user", "parse_data": {"intent": {"name": "inform"}}}],
            "active_loop": {"name": loop} if loop else {}}


def test_checks_accept_a_good_turkish_estimate():
    replies = [{"text": "Llama 3.1 8B, QLoRA için tahmin: yaklaşık 11,8 GB. Önerimiz A40; saatlik 0,74 dolar."}]
    problems = check_turn({"estimate": True, "model": "llama-3.1 8b", "kept": {"method": "qlora"}}, replies, [],
                          _tracker({"method": "qlora", "requested_slot": None}), "tr", set(), CARDS)
    assert problems == []


def test_checks_catch_wrong_language_repeats_re_asks_and_fallbacks():
    question = {"text": "Hangi modele ince ayar yapmak istiyorsunuz?"}
    events = [{"event": "user", "parse_data": {"intent": {"name": "nlu_fallback"}}},
              {"event": "action", "name": "action_default_fallback"},
              {"event": "bot", "text": "?", "metadata": {"utter_action": "utter_default"}}]
    problems = check_turn({}, [question], [question["text"]], _tracker({"requested_slot": "model"}, events), "tr",
                          {"model"}, CARDS)
    assert any("repeats" in p for p in problems)
    assert any("asks again for model" in p for p in problems)
    assert any("did not understand" in p for p in problems)
    persian = [{"text": "برآورد حافظه برای این مدل حدود 12 GB است."}]
    assert any("not Turkish" in p for p in check_turn({}, persian, [], _tracker(), "tr", set(), CARDS))
    assert any("not Persian" in p for p in check_turn({}, [question], [], _tracker(), "fa", set(), CARDS))


def test_checks_catch_a_missing_estimate_handoff_and_ticket():
    replies = [{"text": "Üzgünüm, bu konuda yardımcı olamıyorum. Başka bir sorunuz var mı?"}]
    problems = check_turn({"estimate": True, "handoff": True, "ticket": True, "offers_human": True,
                           "mentions_any": ["özür"]}, replies, [], _tracker(), "tr", set(), CARDS)
    assert {"no estimate (a GB figure and a card name)", "no handoff started", "no ticket opened",
            "no person or quote offered"} <= set(problems)
    assert any("none of" in p for p in problems)


def _copied(message: str, training) -> bool:
    """Greetings and thanks («مرسی خیلی کمک کرد», "çok teşekkürler") are what everybody writes: only a sentence of
    five words or more (words with a letter or digit; an emoji is not one) found in the training data says that the
    set was copied from."""
    words = [word for word in message.split() if any(ch.isalnum() for ch in word)]
    return len(words) >= 5 and _comparable(message) in training


def test_no_blind_user_message_is_in_the_training_data():
    """The blind set (tests/blind/, bench/blind_eval.py) measures only while nothing of it is trained on."""
    from bench.blind_eval import load_blind

    training = _training_messages()
    blind = [c for lang in LANGUAGES for c in load_blind(lang)]
    assert len(blind) >= 120  # issue 21: at least 60 conversations per language
    leaked = [(c.id, t.user) for c in blind for t in c.turns if _copied(t.user, training)]
    assert not leaked, f"blind messages found in data/nlu: {leaked}"


def test_no_studied_blind_message_is_in_the_training_data():
    """A studied set's failure classes are fixed with sentences of our own, never by training on its sentences."""
    training = _training_messages()
    studied = sorted((ROOT / "tests" / "blind" / "studied").glob("round*-*.yml"))
    assert len(studied) >= 4  # sets 1 and 2, both languages
    copied = [(path.name, turn["user"]) for path in studied
              for item in yaml.safe_load(path.read_text(encoding="utf-8"))["conversations"]
              for turn in item["turns"]
              if _copied(str(turn["user"]), training)]
    assert not copied, f"studied blind messages found in data/nlu: {copied}"


def test_a_card_fact_in_an_faq_answer_is_not_an_estimate():
    """The H100-or-A100 answer names a card and its "80 GB": a fact, not an estimate of the job (blind set 5, the
    checker's own failure); the same figure and card in any other reply is one."""
    from tests.heldout.conversations import faq_texts

    faq = next(text for text in faq_texts() if "80 GB" in text and "H100" in text)
    assert check_turn({"estimate": False}, [{"text": faq}], [], _tracker(), "tr" if "ı" in faq else "fa", set(),
                      CARDS) == []
    own = [{"text": "Tahmin: 54,6 GB. Önerimiz H100."}]
    assert "gave an estimate here" in check_turn({"estimate": False}, own, [], _tracker(), "tr", set(), CARDS)


def test_a_cards_memory_beside_its_name_is_not_an_estimate():
    """The order answer prices "8 × H100 (80 GB)": the card's size, not the job's memory (blind set 7)."""
    order = [{"text": "8 × H100 (80 GB): liste fiyatıyla toplam saatlik 39,92 dolar + KDV."}]
    assert check_turn({"estimate": False}, order, [], _tracker(), "tr", set(), CARDS) == []
    estimate = [{"text": "Önerimiz H100 (80 GB). Tek GPU'da yaklaşık 54,6 GB bellek gerekiyor."}]
    assert "gave an estimate here" in check_turn({"estimate": False}, estimate, [], _tracker(), "tr", set(), CARDS)


@pytest.mark.parametrize("kept,wanted,same", [("rtx-a6000", "A6000", True), ("own-a100-80gb", "A100", True),
                                              ("rtx-3060-12gb", "RTX 3060", True), ("own-a100-80gb", "A10", False),
                                              ("rtx-4090", "RTX 3090", False)])
def test_an_own_card_is_compared_by_its_name_inside_the_id(kept, wanted, same):
    from tests.heldout.conversations import _same_value

    assert _same_value(kept, wanted, "own_gpu") is same
