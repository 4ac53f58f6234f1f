"""Custom actions with rasa_sdk's Tracker and CollectingDispatcher (no servers): language, form values, estimate,
FAQ and fallback."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

import pytest
from rasa_sdk import Tracker
from rasa_sdk.executor import CollectingDispatcher

from actions.estimate import ActionEstimate, wait_for_chart
from actions.faq import ActionAnswerFaq, faq_answer
from actions.fallback import ActionDefaultAskAffirmation, ActionDefaultFallback
from actions.forms import ValidateEstimateForm
from actions.language import ValidateSlotMappings
from bot.advisor.knowledge import load_knowledge
from bot.present.render import faq_text
from tests.conftest import handoff_tracker

DOMAIN: Dict[str, Any] = {
    "slots": {name: {"type": "any", "mappings": [{"type": "custom"}]}
              for name in ("language", "failed_turns", "estimate_summary")},
    "forms": {"estimate_form": {"required_slots": ["model", "method", "seq_len", "budget"]}},
}


def make_tracker(text: str = "", intent: str = "inform", slots: Optional[Dict[str, Any]] = None,
                 detected_language: Optional[str] = None, entities: Optional[List[dict]] = None,
                 last_action: str = "action_listen", active_loop: Optional[str] = None) -> Tracker:
    latest = {"text": text, "intent": {"name": intent, "confidence": 0.9}, "entities": entities or [],
              "detected_language": detected_language}
    events = [{"event": "action", "name": last_action}] if last_action == "action_listen" else [
        {"event": "action", "name": "action_listen"}, {"event": "user", "text": text},
        {"event": "action", "name": last_action}]
    if last_action == "action_listen":
        events.append({"event": "user", "text": text, "parse_data": latest})
    return Tracker("tester", dict(slots or {}), latest, events, False, None,
                   {"name": active_loop} if active_loop else {}, last_action)


def as_dict(events) -> Dict[str, Any]:
    return {e["name"]: e["value"] for e in events if e.get("event") == "slot"}


def responses(dispatcher: CollectingDispatcher) -> List[str]:
    return [m.get("response") for m in dispatcher.messages if m.get("response")]


# ---------------------------------------------------------------------------------------------- language


@pytest.mark.parametrize("current,detected,expected", [
    (None, "fa", {"language": "fa"}),
    (None, "tr", {"language": "tr"}),
    ("fa", "tr", {"language": "tr"}),      # the user switched
    ("tr", None, {}),                      # "7B QLoRA 4096": no signal keeps Turkish
    ("tr", "en", {}),                      # English keeps the language; a rule answers in both
    ("fa", "fa", {}),
])
async def test_language_follows_detection_and_sticks_without_signal(current, detected, expected):
    tracker = make_tracker("...", intent="greet", slots={"language": current}, detected_language=detected)
    events = await ValidateSlotMappings().run(CollectingDispatcher(), tracker, DOMAIN)
    assert {k: v for k, v in as_dict(events).items() if k == "language"} == expected


async def test_widget_payload_sets_language():
    tracker = make_tracker('/set_language{"language":"tr"}', intent="set_language", slots={"language": "fa"},
                           entities=[{"entity": "language", "value": "tr"}])
    events = await ValidateSlotMappings().run(CollectingDispatcher(), tracker, DOMAIN)
    assert as_dict(events)["language"] == "tr"


async def test_an_understood_intent_resets_the_failed_turns():
    tracker = make_tracker("ممنون", intent="thank", slots={"failed_turns": 1.0}, detected_language="fa")
    events = await ValidateSlotMappings().run(CollectingDispatcher(), tracker, DOMAIN)
    assert as_dict(events)["failed_turns"] == 0


# ---------------------------------------------------------------------------------------------- estimate form


async def run_form(text: str, slots: Optional[Dict[str, Any]] = None, **kwargs):
    dispatcher = CollectingDispatcher()
    tracker = make_tracker(text, slots=slots, active_loop="estimate_form", **kwargs)
    events = await ValidateEstimateForm().run(dispatcher, tracker, DOMAIN)
    return as_dict(events), dispatcher


async def test_all_values_in_one_persian_message():
    values, dispatcher = await run_form(
        "میخوام لاما ۳.۱ ۸ میلیارد رو با QLoRA و طول ۲۰۴۸ توکن آموزش بدم، بودجه ۵۰ دلار", slots={"language": "fa"})
    assert values["model_id"] == "llama-3.1-8b"
    assert values["method"] == "qlora"
    assert values["seq_len"] == 2048
    assert values["budget_usd"] == 50 and values["budget"] == "usd"
    assert values["requested_slot"] is None
    assert dispatcher.messages == []


async def test_asks_only_for_what_is_missing():
    values, _ = await run_form("13B modeli LoRA ile eğitmek istiyorum", slots={"language": "tr"})
    assert values["model_size_b"] == 13 and values["model_id"] is None
    assert values["method"] == "lora"
    assert values["requested_slot"] == "seq_len"


async def test_bare_number_is_read_as_the_requested_slot():
    values, _ = await run_form("4096", slots={"requested_slot": "seq_len", "model": "8b", "method": "lora"})
    assert values["seq_len"] == 4096
    assert values["requested_slot"] == "budget"


async def test_turkish_thousands_without_diacritics():
    values, _ = await run_form("4 bin token", slots={"requested_slot": "seq_len"})
    assert values["seq_len"] == 4096   # "4k" context windows are 4096 tokens (bot.text.parse)


@pytest.mark.parametrize("text", ["bütçe yok", "محدودیت ندارم"])
async def test_no_budget_limit(text):
    values, _ = await run_form(text, slots={"requested_slot": "budget"})
    assert values["budget"] == "unlimited" and values["budget_unlimited"] is True


async def test_a_plain_no_to_the_budget_question_means_no_limit():
    values, _ = await run_form("نه", intent="deny", slots={"requested_slot": "budget"})
    assert values["budget_unlimited"] is True


async def test_lira_amount_gets_the_usd_note_and_no_budget():
    values, dispatcher = await run_form("5000 TL", slots={"requested_slot": "budget", "language": "tr", "model": "8b",
                                                          "method": "lora", "seq_len": 2048.0})
    assert responses(dispatcher) == ["utter_currency_note"]
    assert values.get("budget") is None and values["requested_slot"] == "budget"


async def test_changed_value_after_an_estimate_completes_the_form_at_once():
    filled = {"model": "llama-3.1-8b", "model_id": "llama-3.1-8b", "method": "qlora", "seq_len": 2048.0,
              "budget": "usd", "budget_usd": 50.0, "requested_slot": None}
    values, _ = await run_form("LoRA olursa?", slots=filled)
    assert values["method"] == "lora"
    assert values["requested_slot"] is None
    values, _ = await run_form("با ۴۰۹۶ توکن چی؟", slots=filled)
    assert values["seq_len"] == 4096
    values, _ = await run_form("bütçem aslında 100 dolar", slots=filled)
    assert values["budget_usd"] == 100


async def test_button_payload_entities():
    values, _ = await run_form('/inform{"method":"full"}', entities=[{"entity": "method", "value": "full"}],
                               slots={"requested_slot": "method"})
    assert values["method"] == "full"
    values, _ = await run_form('/inform{"model_size_b":70}', entities=[{"entity": "model_size_b", "value": 70}],
                               slots={"requested_slot": "model"})
    assert values["model_size_b"] == 70 and values["model"] == "70b"


async def test_ambiguous_number_is_asked_about_not_guessed():
    # "50" alone could be a budget, a size or a count: it is asked about, and no budget is set from it.
    values, dispatcher = await run_form("2048 و 50", slots={"requested_slot": None})
    assert values["seq_len"] == 2048
    assert "budget_usd" not in values and "model_size_b" not in values
    asked = [m for m in dispatcher.messages if m.get("response") == "utter_ambiguous_number"]
    assert len(asked) == 1 and asked[0]["number"] == "50"


async def test_unknown_model_gets_suggestions_as_buttons():
    values, dispatcher = await run_form("llamaa", slots={"requested_slot": "model"})
    assert values["model"] is None and values["requested_slot"] == "model"
    suggestion = next(m for m in dispatcher.messages if m.get("response") == "utter_unknown_model")
    assert suggestion["model_query"] == "llamaa"
    payloads = [b["payload"] for b in suggestion["buttons"]]
    assert payloads and all(p.startswith('/inform{"model_id":"llama-') for p in payloads)   # Llama presets
    assert all(len(p.encode()) <= 64 and p.isascii() for p in payloads)
    assert "utter_model_not_understood" not in responses(dispatcher)


async def test_suggestion_button_payload_selects_the_preset():
    values, _ = await run_form('/inform{"model_id":"llama-3.1-8b"}', slots={"requested_slot": "model"},
                               entities=[{"entity": "model_id", "value": "llama-3.1-8b"}])
    assert values["model_id"] == "llama-3.1-8b" and values["model_size_b"] == 8


async def test_nonsense_answer_gets_a_hint_and_the_same_question_and_counts_as_failed():
    values, dispatcher = await run_form("asdf qwer", slots={"requested_slot": "method", "model": "8b"})
    assert responses(dispatcher) == ["utter_method_not_understood"]
    assert values["method"] is None            # keeps the form from rejecting the turn
    assert values["failed_turns"] == 1
    assert values["requested_slot"] == "method"


async def test_second_failure_in_a_row_offers_a_person():
    values, dispatcher = await run_form("zzz", slots={"requested_slot": "method", "model": "8b", "failed_turns": 1})
    # The offer replaces the hint: the same hint is not sent twice in a row.
    assert responses(dispatcher) == ["utter_offer_human"]


async def form_events(text: str, slots: Optional[Dict[str, Any]] = None, **kwargs):
    dispatcher = CollectingDispatcher()
    tracker = make_tracker(text, slots=slots, active_loop="estimate_form", **kwargs)
    return await ValidateEstimateForm().run(dispatcher, tracker, DOMAIN), dispatcher


def rejects_the_turn(events) -> bool:
    """The form hands the turn to the rules: only ActionExecutionRejected, no slot (values are kept elsewhere)."""
    return [e["event"] for e in events] == ["action_execution_rejected"] and events[0]["name"] == "estimate_form"


async def test_faq_in_the_middle_of_the_form_is_left_to_the_rules():
    events, dispatcher = await form_events("13B رو روی کارت ۲۴ گیگ میشه؟", intent="faq_13b_24gb",
                                           slots={"requested_slot": "model"})
    # The FAQ rule answers; the 13B was kept by action_validate_slot_mappings, so the form must reject the
    # turn itself (a filled form slot would stop Rasa from rejecting it).
    assert rejects_the_turn(events)
    assert dispatcher.messages == []


@pytest.mark.parametrize("requested,text,expected,response", [
    ("seq_len", "bilmiyorum", {"seq_len": 2048.0}, "utter_assumed_seq_len"),
    ("method", "نمیدونم", {"method": "qlora"}, "utter_assumed_qlora"),
    ("budget", "emin değilim", {"budget": "unlimited", "budget_unlimited": True, "budget_usd": None},
     "utter_assumed_no_budget"),
])
async def test_dont_know_takes_the_default_of_the_asked_value_and_says_so(requested, text, expected, response):
    slots = {"requested_slot": requested, "model": "llama-3.1-8b", "method": "lora" if requested != "method" else None}
    values, dispatcher = await run_form(text, intent="dont_know", slots=slots)
    assert {name: values[name] for name in expected} == expected
    assert responses(dispatcher) == [response]
    assert values["requested_slot"] != requested


async def test_dont_know_for_the_model_asks_again_with_examples():
    values, dispatcher = await run_form("hiç fikrim yok", intent="dont_know", slots={"requested_slot": "model"})
    assert values["model"] is None and values["requested_slot"] == "model"
    assert responses(dispatcher) == ["utter_model_dont_know"]


async def test_dont_know_with_a_value_in_it_takes_the_value():
    values, dispatcher = await run_form("bilmiyorum, 4096 olsun", intent="dont_know",
                                        slots={"requested_slot": "seq_len"})
    assert values["seq_len"] == 4096.0
    assert "utter_assumed_seq_len" not in responses(dispatcher)


async def test_the_same_message_is_not_read_again_after_an_interruption():
    values, _ = await run_form("7B", slots={"requested_slot": "model"}, last_action="action_answer_faq")
    assert set(values) == {"requested_slot", "question_repeat"}
    # The same question comes again right after the answer: in its other wording (utter_ask_model variants).
    assert values["requested_slot"] == "model" and values["question_repeat"] is True


# ---------------------------------------------------------------------------------------------- estimate


ESTIMATE_SLOTS = {"model_id": "llama-3.1-8b", "model_size_b": 8.0, "method": "qlora", "seq_len": 2048.0,
                  "budget_usd": 50.0, "budget_unlimited": False}


async def test_estimate_answers_in_turkish_with_chart_and_summary(tmp_path, monkeypatch):
    monkeypatch.setenv("ADVISOR_CHART_DIR", str(tmp_path))
    monkeypatch.setenv("ADVISOR_PUBLIC_URL", "https://bot.example")
    dispatcher = CollectingDispatcher()
    tracker = make_tracker("bütçem 50 dolar", slots={**ESTIMATE_SLOTS, "language": "tr"})
    events = await ActionEstimate().run(dispatcher, tracker, DOMAIN)
    text = "\n".join(m.get("text") or "" for m in dispatcher.messages)
    assert "KDV" in text and "GB" in text
    images = [m["image"] for m in dispatcher.messages if m.get("image")]
    assert len(images) == 1 and images[0].startswith("https://bot.example/charts/")
    chart = tmp_path / images[0].rsplit("/", 1)[1]
    await wait_for_chart(chart)            # drawn in the background for web channels
    assert chart.stat().st_size > 1000
    summary = as_dict(events)["estimate_summary"]
    assert set(summary) == {"per_gpu_gib", "low_gib", "high_gib", "best_card", "best_price_usd_hour",
                            "fitting_cards", "needs_quote", "multi_gpu", "model_display", "method", "stack"}
    kb = load_knowledge()
    assert summary["best_card"] in {g.id for g in kb.gpus}
    assert summary["low_gib"] <= summary["per_gpu_gib"] <= summary["high_gib"]
    assert summary["model_display"] == kb.model("llama-3.1-8b").display
    from actions.estimate import advice_request_fields
    from bot.advisor.advice import AdviceRequest, advise
    from bot.present.render import render_estimate_hint  # the hint's examples differ from the current values

    advice = advise(AdviceRequest(**advice_request_fields(tracker)))
    assert render_estimate_hint(advice, tracker.get_slot("language") or "fa") in text


async def test_a_recalculation_that_moves_nothing_is_not_the_same_message_twice(tmp_path, monkeypatch):
    """A budget raised after an estimate: same card, same figures; the answer leads with the recalculation."""
    monkeypatch.setenv("ADVISOR_CHART_DIR", str(tmp_path))
    slots = {**ESTIMATE_SLOTS, "language": "tr"}
    first = CollectingDispatcher()
    events = await ActionEstimate().run(first, make_tracker("bütçem 50 dolar", slots=slots), DOMAIN)
    slots = {**slots, **as_dict(events)}                      # a recalculation: no glosses, as the next one
    again = CollectingDispatcher()
    events = await ActionEstimate().run(again, make_tracker("bütçem 50 dolar", slots=slots), DOMAIN)
    answer = next(m["text"] for m in again.messages if m.get("text"))
    tracker = make_tracker("bütçem 60 dolar", slots={**slots, **as_dict(events)})
    tracker.events[-1:-1] = [{"event": "user", "text": "bütçem 50 dolar"}, {"event": "bot", "text": answer},
                             {"event": "action", "name": "action_listen"}]
    second = CollectingDispatcher()
    await ActionEstimate().run(second, tracker, DOMAIN)
    texts = [m["text"] for m in second.messages if m.get("text")]
    assert answer not in texts
    assert texts[0].startswith("Yeniden hesapladım") and answer in texts[0]


@pytest.mark.parametrize("lang, again", [("fa", "یه بار دیگه حساب کن"), ("tr", "tekrar hesaplar mısın?")])
async def test_the_estimate_asked_again_with_nothing_changed_is_a_short_unchanged_answer(tmp_path, monkeypatch,
                                                                                       lang, again):
    """Right after an estimate, "calculate again" with no value: the recommendation said to be unchanged, in one
    message, without the details just read and without the chart; nothing of the previous turn word for word."""
    from actions.dialogue_text import text as dialogue_text

    monkeypatch.setenv("ADVISOR_CHART_DIR", str(tmp_path))
    slots = {**ESTIMATE_SLOTS, "language": lang}
    first = CollectingDispatcher()
    events = await ActionEstimate().run(first, make_tracker("50", slots=slots), DOMAIN)
    sent = [m["text"] for m in first.messages if m.get("text")]
    tracker = make_tracker(again, intent="estimate", slots={**slots, **as_dict(events)})
    tracker.events[-1:-1] = [{"event": "user", "text": "50"}] + [{"event": "bot", "text": text} for text in sent] + [
        {"event": "action", "name": "action_listen"}]
    second = CollectingDispatcher()
    await ActionEstimate().run(second, tracker, DOMAIN)
    texts = [m["text"] for m in second.messages if m.get("text")]
    assert len(texts) == 1 and not any(m.get("image") for m in second.messages)
    answer = texts[0]
    assert answer.startswith(dialogue_text("recalculated_unchanged", lang))
    assert answer.endswith(dialogue_text("recalculated_unchanged_invite", lang))
    lead, details = sent[0].split("\n\n")[0], sent[0].split("\n\n")[-1]
    assert lead.strip() in answer and details.strip() not in answer and "GB" in answer
    # The same request giving a value (the budget again) is a recalculation answered in full.
    third = CollectingDispatcher()
    tracker.latest_message["text"] = "bütçem 50 dolar" if lang == "tr" else "بودجه ۵۰ دلار"
    await ActionEstimate().run(third, tracker, DOMAIN)
    full = [m["text"] for m in third.messages if m.get("text")][0]
    assert not full.startswith(dialogue_text("recalculated_unchanged", lang)) and len(full) > len(answer)


async def test_telegram_gets_the_chart_file_before_the_reply(tmp_path, monkeypatch):
    monkeypatch.setenv("ADVISOR_CHART_DIR", str(tmp_path))
    tracker = make_tracker("7B", slots={**ESTIMATE_SLOTS, "seq_len": 1024.0})
    tracker.events[-1]["input_channel"] = "telegram"
    dispatcher = CollectingDispatcher()
    await ActionEstimate().run(dispatcher, tracker, DOMAIN)
    image = next(m["image"] for m in dispatcher.messages if m.get("image"))
    assert (tmp_path / image.rsplit("/", 1)[1]).is_file()


async def test_estimate_that_fits_no_single_card_offers_quote_and_person(tmp_path, monkeypatch):
    monkeypatch.setenv("ADVISOR_CHART_DIR", str(tmp_path))
    dispatcher = CollectingDispatcher()
    slots = {"model_size_b": 70.0, "method": "full", "seq_len": 4096.0, "budget_unlimited": True, "language": "fa"}
    events = await ActionEstimate().run(dispatcher, make_tracker("۷۰ میلیارد کامل", slots=slots), DOMAIN)
    summary = as_dict(events)["estimate_summary"]
    assert summary["needs_quote"] is True
    assert "utter_estimate_offer_quote" in responses(dispatcher)


# ---------------------------------------------------------------------------------------------- faq, fallback


@pytest.mark.parametrize("lang", ["fa", "tr"])
async def test_faq_answer_comes_from_the_knowledge_base_in_the_users_language(lang):
    dispatcher = CollectingDispatcher()
    await ActionAnswerFaq().run(dispatcher, make_tracker("?", intent="faq_kvkk", slots={"language": lang}), DOMAIN)
    assert dispatcher.messages[0]["text"] == faq_text("kvkk", lang, public_url=os.environ.get("ADVISOR_PUBLIC_URL"))


async def test_unknown_faq_topic_says_so():
    dispatcher = CollectingDispatcher()
    await ActionAnswerFaq().run(dispatcher, make_tracker("?", intent="faq_weather"), DOMAIN)
    assert responses(dispatcher) == ["utter_faq_missing"]


async def test_fallback_twice_in_a_row_offers_a_person_and_ends_the_turn():
    dispatcher = CollectingDispatcher()
    first = await ActionDefaultFallback().run(dispatcher, make_tracker("😂😂", intent="nlu_fallback"), DOMAIN)
    assert responses(dispatcher) == ["utter_default"]
    assert as_dict(first)["failed_turns"] == 1
    assert {"event": "followup", "name": "action_listen"} in [
        {k: e.get(k) for k in ("event", "name")} for e in first]
    dispatcher = CollectingDispatcher()
    await ActionDefaultFallback().run(
        dispatcher, make_tracker("هوا چطوره؟", intent="out_of_scope", slots={"failed_turns": 1.0}), DOMAIN)
    assert responses(dispatcher) == ["utter_offer_human"]


async def test_fallback_inside_the_form_goes_back_to_the_form():
    events = await ActionDefaultFallback().run(
        CollectingDispatcher(), make_tracker("؟", intent="out_of_scope", active_loop="estimate_form"), DOMAIN)
    assert any(e.get("event") == "followup" and e.get("name") == "estimate_form" for e in events)


async def test_ask_affirmation_never_uses_rasas_english_text():
    dispatcher = CollectingDispatcher()
    await ActionDefaultAskAffirmation().run(dispatcher, make_tracker("x"), DOMAIN)
    assert responses(dispatcher) == ["utter_ask_rephrase"]


# ---------------------------------------------------------------------------------------------- offers, handoff form


def offer_tracker(answer: str, intent: str, bot_turn: List[dict], slots: Optional[Dict[str, Any]] = None) -> Tracker:
    """A conversation whose previous bot turn is `bot_turn`, and the user's `answer` to it."""
    latest = {"text": answer, "intent": {"name": intent, "confidence": 0.9}, "entities": []}
    events = [{"event": "action", "name": "action_listen"},
              {"event": "user", "text": "...", "parse_data": {"intent": {"name": "estimate"}}},
              *bot_turn,
              {"event": "action", "name": "action_listen"},
              {"event": "user", "text": answer, "parse_data": latest}]
    return Tracker("tester", dict(slots or {}), latest, events, False, None, {}, "action_listen")


def bot(response: str) -> dict:
    return {"event": "bot", "text": "…", "metadata": {"utter_action": response}}


OFFER_DOMAIN = {**DOMAIN, "slots": {**DOMAIN["slots"], "pending_offer": {"type": "categorical",
                                                                          "mappings": [{"type": "custom"}]}}}


@pytest.mark.parametrize("bot_turn,expected", [
    ([{"event": "action", "name": "action_estimate"}, bot("utter_estimate_offer_quote")], "quote"),
    ([{"event": "action", "name": "action_default_fallback"}, bot("utter_offer_human")], "human"),
    ([{"event": "action", "name": "utter_bot_challenge"}, bot("utter_bot_challenge")], "human"),
    # inside the form the offer comes before the form's question: still the offer being answered
    ([{"event": "action", "name": "estimate_form"}, bot("utter_model_not_understood"), bot("utter_offer_human"),
      bot("utter_ask_model")], "human"),
])
async def test_an_offer_in_the_previous_bot_turn_is_pending(bot_turn, expected):
    events = await ValidateSlotMappings().run(CollectingDispatcher(), offer_tracker("evet", "affirm", bot_turn),
                                              OFFER_DOMAIN)
    assert as_dict(events)["pending_offer"] == expected


async def test_an_offer_older_than_the_previous_turn_is_cleared():
    tracker = offer_tracker("آره", "affirm", [{"event": "action", "name": "utter_anything_else"},
                                             bot("utter_anything_else")], slots={"pending_offer": "quote"})
    events = await ValidateSlotMappings().run(CollectingDispatcher(), tracker, OFFER_DOMAIN)
    assert as_dict(events)["pending_offer"] is None


async def test_yes_or_no_to_a_pending_offer_is_left_to_the_rules_inside_the_form():
    for intent in ("affirm", "deny"):
        events, dispatcher = await form_events("evet", intent=intent,
                                               slots={"requested_slot": "model", "pending_offer": "human"})
        assert rejects_the_turn(events) and dispatcher.messages == []
    # "no" to the budget question still means "no limit", whatever was offered before
    values, _ = await run_form("yok", intent="deny", slots={"requested_slot": "budget", "model": "8b",
                                                            "method": "qlora", "seq_len": 2048.0,
                                                            "pending_offer": "human"})
    assert values["budget_unlimited"] is True


@pytest.mark.parametrize("intent", ["faq_prices_vat", "faq_kvkk", "thank", "bot_challenge", "goodbye"])
@pytest.mark.parametrize("requested,slots", [("handoff_consent", {}), ("handoff_contact", {"handoff_consent": True})])
async def test_handoff_form_leaves_questions_to_the_rules(monkeypatch, intent, requested, slots):
    import actions.handoff as handoff
    from actions.handoff import ValidateHandoffForm

    monkeypatch.setattr(handoff, "_open_ticket", lambda sender: None)
    dispatcher = CollectingDispatcher()
    events = await ValidateHandoffForm().run(dispatcher, handoff_tracker("fiyatlara KDV dahil mi?", intent,
                                                                         requested, slots), DOMAIN)
    # Only requested_slot: Rasa rejects the form turn, the rule answers, and the same question comes again.
    assert set(as_dict(events)) == {"requested_slot"} and as_dict(events)["requested_slot"] == requested
    assert dispatcher.messages == []


def test_every_generated_handoff_interruption_is_rejected_by_the_handoff_form():
    from actions import rulegen
    from actions.common import interrupts_handoff

    generated = [rule["steps"][0]["intent"] for rule in rulegen.build_rules()["rules"]
                 if rule.get("condition") == [{"active_loop": rulegen.HANDOFF_FORM}]]
    assert "faq_prices_vat" in generated and "thank" in generated
    assert all(interrupts_handoff(intent) for intent in generated)


def test_a_yes_to_the_quote_offer_opens_a_quote_ticket():
    from actions.handoff import build_draft

    events = [{"event": "user", "text": "70B full", "parse_data": {"intent": {"name": "estimate"}}},
              {"event": "bot", "text": "…", "metadata": {"utter_action": "utter_estimate_offer_quote"}},
              {"event": "user", "text": "evet", "parse_data": {"intent": {"name": "affirm"}}},
              {"event": "slot", "name": "pending_offer", "value": "quote"},
              {"event": "user", "text": "hayır", "parse_data": {"intent": {"name": "deny"}}},
              {"event": "slot", "name": "pending_offer", "value": None}]
    tracker = Tracker("tester", {"language": "tr", "method": "lora", "model_size_b": 8.0}, events[-2], events,
                      False, None, {}, "action_listen")
    draft = build_draft(tracker)
    assert (draft.trigger, draft.category) == ("request_quote", "quote")


async def test_restart_forgets_everything_but_the_language():
    from actions.restart import ActionRestart

    dispatcher = CollectingDispatcher()
    events = await ActionRestart().run(dispatcher, make_tracker("/restart", intent="restart",
                                                                slots={"language": "tr", "model": "8b"}), DOMAIN)
    assert responses(dispatcher) == ["utter_restart"]
    assert [e["event"] for e in events] == ["restart", "slot"]
    assert as_dict(events) == {"language": "tr"}


@pytest.mark.parametrize("text,intent,rejected", [
    ("LoRA olursa?", "inform", True),                      # a changed value: leave the handoff for the estimate
    ("llama 8b qlora 2048", "estimate", True),
    ("bir model eğitmek istiyorum", "estimate", False),    # no value: the consent question again
    ("belki", "inform", False),
])
async def test_job_values_instead_of_the_consent_are_left_to_the_rules(monkeypatch, text, intent, rejected):
    import actions.handoff as handoff
    from actions.handoff import ValidateHandoffForm

    monkeypatch.setattr(handoff, "_open_ticket", lambda sender: None)
    dispatcher = CollectingDispatcher()
    events = await ValidateHandoffForm().run(dispatcher, handoff_tracker(text, intent, "handoff_consent"), DOMAIN)
    assert (set(as_dict(events)) == {"requested_slot"}) is rejected
    assert (responses(dispatcher) == []) is rejected


async def test_the_estimate_form_reads_the_message_that_left_the_handoff_form():
    values, _ = await run_form("LoRA olursa?", slots={"requested_slot": None, "model": "8b", "method": "qlora",
                                                      "seq_len": 2048.0, "budget": "usd"},
                               last_action="action_deactivate_loop")
    assert values["method"] == "lora"


async def test_a_model_size_outside_the_presets_offers_a_person(tmp_path, monkeypatch):
    monkeypatch.setenv("ADVISOR_CHART_DIR", str(tmp_path))
    dispatcher = CollectingDispatcher()
    slots = {"model_size_b": 405.0, "method": "qlora", "seq_len": 4096.0, "budget_unlimited": True, "language": "fa"}
    events = await ActionEstimate().run(dispatcher, make_tracker("405B", slots=slots), DOMAIN)
    assert "405" in dispatcher.messages[0]["text"]
    assert responses(dispatcher) == ["utter_offer_review_by_person"]
    assert events == []


async def test_resuming_the_handoff_after_a_question_asks_again_without_a_database_call(monkeypatch):
    import actions.handoff as handoff
    from actions.handoff import ValidateHandoffForm

    def no_database(sender):
        raise AssertionError("the open-ticket check belongs to the activation only")

    monkeypatch.setattr(handoff, "_open_ticket", no_database)
    tracker = handoff_tracker("fiyatlara KDV dahil mi?", "faq_prices_vat", "handoff_consent")
    tracker.events.insert(-1, {"event": "action", "name": "action_answer_faq"})   # the rule answered, form resumes
    events = await ValidateHandoffForm().run(CollectingDispatcher(), tracker, DOMAIN)
    # Asked again in the same handoff: the short consent question, without the KVKK notice (actions/handoff.py).
    assert as_dict(events) == {"requested_slot": "handoff_consent", "kvkk_notice_shown": True}


# ---------------------------------------------------------------------------------------------- issue 13 dialogue


async def slot_mapping_events(text: str, intent: str, slots: Optional[Dict[str, Any]] = None, **kwargs):
    tracker = make_tracker(text, intent=intent, slots=slots, **kwargs)
    return as_dict(await ValidateSlotMappings().run(CollectingDispatcher(), tracker, DOMAIN))


@pytest.mark.parametrize("text,intent,lang", [
    ("ما از Llama 3.1 8B با QLoRA استفاده می‌کنیم، کارت 24 گیگ کافیه؟", "faq_13b_24gb", "fa"),
    ("Merhaba, Llama 3.1 8B'yi QLoRA ile eğiteceğiz, KDV dahil mi fiyatlar?", "faq_prices_vat", "tr"),
    ("teşekkürler, bu arada model Llama 3.1 8B ve QLoRA olacak", "thank", "tr"),
])
async def test_values_in_a_message_the_form_does_not_read_are_kept(text, intent, lang):
    values = await slot_mapping_events(text, intent, slots={"language": lang}, detected_language=lang)
    assert values["model_id"] == "llama-3.1-8b" and values["method"] == "qlora"


async def test_values_of_an_estimate_message_are_left_to_the_form():
    values = await slot_mapping_events("llama 8b qlora", "inform", slots={"language": "tr"})
    assert "model_id" not in values and "method" not in values


@pytest.mark.parametrize("text,current,expected", [
    ("bunu Farsça anlatır mısın?", "tr", "fa"),         # written in Turkish, asks for Persian
    ("میشه همینو ترکی بنویسی؟", "fa", "tr"),            # written in Persian, asks for Turkish
    ("Farsça değil, Türkçe yaz", "fa", "tr"),          # both named: the one we are not speaking
])
async def test_a_language_switch_takes_the_language_asked_for(text, current, expected):
    from bot.text.language import detect_language

    values = await slot_mapping_events(text, "switch_language", slots={"language": current},
                                       detected_language=detect_language(text))
    assert values.get("language", current) == expected


@pytest.mark.parametrize("metadata,expected", [
    ({"language_hint": "tr"}, "tr"), ({"locale": "tr-TR"}, "tr"), ({"telegram": {"language_code": "tr"}}, "tr"),
    ({"locale": "de-DE"}, "fa"), ({}, "fa"),
])
async def test_a_first_message_without_a_language_signal_takes_the_channel_locale(metadata, expected):
    tracker = make_tracker("7B QLoRA 4096", intent="inform", slots={"language": None})
    tracker.latest_message["metadata"] = metadata
    events = as_dict(await ValidateSlotMappings().run(CollectingDispatcher(), tracker, DOMAIN))
    assert events["language"] == expected


async def test_the_locale_does_not_override_the_language_of_the_conversation():
    tracker = make_tracker("7B QLoRA 4096", intent="inform", slots={"language": "fa"})
    tracker.latest_message["metadata"] = {"locale": "tr-TR"}
    events = as_dict(await ValidateSlotMappings().run(CollectingDispatcher(), tracker, DOMAIN))
    assert "language" not in events


def test_noted_message_names_the_values_and_what_is_missing():
    from actions.dialogue_text import noted_message

    slots = {"model": "llama-3.1-8b", "model_id": "llama-3.1-8b", "method": "qlora", "budget": "usd",
             "budget_usd": 25.0}
    fa, tr = noted_message(slots, "fa"), noted_message(slots, "tr")
    assert "Llama 3.1 8B" in fa and "QLoRA" in fa and "25" in fa and "طول توالی" in fa
    assert tr.startswith("Not aldım: Llama 3.1 8B") and tr.endswith("Sadece dizi uzunluğu eksik.")
    assert noted_message({}, "tr") is None


async def test_model_and_method_get_a_card_first_with_the_defaults_said():
    """Answer first (issue 21): the values are read back with the card, the assumed length is said, and the length
    is then asked for."""
    values, dispatcher = await run_form("Qwen2.5 7B ile QLoRA yapacağız", slots={"language": "tr",
                                                                             "requested_slot": "model"})
    assert values["requested_slot"] == "seq_len" and values["answered_first"] is True
    first = [m["text"] for m in dispatcher.messages if m.get("text")]
    assert first and first[0].startswith("Qwen2.5 7B ve QLoRA için ilk önerim") and "2.048 token" in first[0]
    assert any(card.name in first[0] for card in load_knowledge().gpus) and " GB" in first[0]


async def test_values_kept_during_an_interruption_are_confirmed_when_the_form_resumes():
    tracker = make_tracker("Llama 3.1 8B için KDV dahil mi?", intent="faq_prices_vat", active_loop="estimate_form",
                           slots={"language": "tr", "requested_slot": "model", "model": "llama-3.1-8b",
                                  "model_id": "llama-3.1-8b"},
                           last_action="action_answer_faq")
    tracker.events.insert(-1, {"event": "slot", "name": "model", "value": "llama-3.1-8b"})
    dispatcher = CollectingDispatcher()
    events = as_dict(await ValidateEstimateForm().run(dispatcher, tracker, DOMAIN))
    assert events["requested_slot"] == "method"
    assert "Llama 3.1 8B" in dispatcher.messages[0]["text"]


async def test_the_same_question_alternates_between_its_two_wordings():
    first, _ = await run_form("zzz", slots={"requested_slot": "method", "model": "8b"})
    assert first["requested_slot"] == "method" and first["question_repeat"] is True
    second, _ = await run_form("zzz", slots={"requested_slot": "method", "model": "8b", "question_repeat": True})
    assert second["question_repeat"] is False


async def test_faq_answer_uses_the_known_job():
    tracker = make_tracker("Llama 3.1 8B için 24 GB kart yeter mi?", intent="faq_13b_24gb",
                           slots={"language": "tr", "model_id": "llama-3.1-8b", "model_size_b": 8.0})
    dispatcher = CollectingDispatcher()
    await ActionAnswerFaq().run(dispatcher, tracker, DOMAIN)
    texts = [m["text"] for m in dispatcher.messages]
    assert texts[0] == faq_text("13b_24gb", "tr", public_url=os.environ.get("ADVISOR_PUBLIC_URL"))
    assert "Llama 3.1 8B" in texts[1] and "QLoRA" in texts[1] and "24 GB'lık bir kart yeterli" in texts[1]


async def test_a_language_switch_repeats_the_previous_answer_in_the_new_language():
    from actions.repeat import ActionRepeatLastAnswer

    faq_turn = {"text": "KDV dahil mi?", "intent": {"name": "faq_prices_vat"}, "entities": []}
    switch = {"text": "bunu Farsça anlatır mısın?", "intent": {"name": "switch_language"}, "entities": []}
    events = [{"event": "user", "text": faq_turn["text"], "parse_data": faq_turn},
              {"event": "action", "name": "action_answer_faq"}, {"event": "bot", "text": "…", "metadata": {}},
              {"event": "action", "name": "action_listen"},
              {"event": "user", "text": switch["text"], "parse_data": switch}]
    tracker = Tracker("tester", {"language": "fa"}, switch, events, False, None, {}, "action_listen")
    dispatcher = CollectingDispatcher()
    await ActionRepeatLastAnswer().run(dispatcher, tracker, DOMAIN)
    assert dispatcher.messages[0]["response"] == "utter_language_switched"
    public_url = os.environ.get("ADVISOR_PUBLIC_URL")
    assert dispatcher.messages[1]["text"] == faq_text("prices_vat", "fa", public_url=public_url)


def test_a_complaint_opens_a_complaint_ticket_even_with_job_values():
    from actions.handoff import build_draft

    events = [{"event": "user", "text": "faturada fazladan 20 saat var",
               "parse_data": {"intent": {"name": "complaint"}}},
              {"event": "user", "text": "hayır", "parse_data": {"intent": {"name": "deny"}}}]
    tracker = Tracker("tester", {"language": "tr", "model_id": "llama-3.1-8b", "method": "lora"}, events[-1], events,
                      False, None, {}, "action_listen")
    draft = build_draft(tracker)
    assert (draft.trigger, draft.category) == ("complaint", "complaint")


async def test_an_faq_comparison_with_a_known_job_adds_the_side_by_side_for_the_job():
    tracker = make_tracker("bu eğitimde H100 mü A100 mü daha ucuza gelir?", intent="faq_h100_vs_a100",
                           slots={"language": "tr", "model_id": "llama-3.1-8b", "model_size_b": 8.0,
                                  "method": "qlora", "seq_len": 2048.0})
    dispatcher = CollectingDispatcher()
    await ActionAnswerFaq().run(dispatcher, tracker, DOMAIN)
    texts = [m["text"] for m in dispatcher.messages]
    assert texts[0] == faq_answer("h100_vs_a100", "tr")
    assert len(texts) == 2 and "H100" in texts[1] and "A100" in texts[1] and "Llama 3.1 8B" in texts[1]


@pytest.mark.parametrize("text", ["saatte en fazla 2 dolar", "ساعتی حداکثر ۲ دلار"])
async def test_a_reply_that_gives_the_asked_value_is_read_even_if_it_looks_like_an_faq(text):
    values, dispatcher = await run_form(text, intent="faq_prices_vat",
                                        slots={"requested_slot": "budget", "model": "8b", "model_size_b": 8.0,
                                               "method": "qlora", "seq_len": 2048.0})
    assert values["hourly_cap"] == 2.0 and values["budget"] == "hourly_cap"
    assert values["requested_slot"] is None


async def test_a_question_with_the_asked_value_in_it_is_still_answered_by_the_rules():
    events, _ = await form_events("bu arada fiyatlara KDV dahil mi, bütçemiz 40 dolar", intent="faq_prices_vat",
                                  slots={"requested_slot": "budget", "model": "8b", "method": "qlora",
                                         "seq_len": 2048.0})
    assert rejects_the_turn(events)


async def test_estimate_says_once_which_version_a_family_and_size_meant(tmp_path, monkeypatch):
    monkeypatch.setenv("ADVISOR_CHART_DIR", str(tmp_path))
    slots = {**ESTIMATE_SLOTS, "model_id": "qwen3-14b", "model_size_b": 14.0, "language": "tr",
             "model_version_assumed": True}
    dispatcher = CollectingDispatcher()
    events = await ActionEstimate().run(dispatcher, make_tracker("qwen 14b", slots=slots), DOMAIN)
    texts = [m.get("text") or "" for m in dispatcher.messages]
    assert any("Qwen3 14B" in t and "en yeni Qwen" in t for t in texts)
    assert as_dict(events)["model_version_assumed"] is None  # not repeated with the next recalculation
    dispatcher = CollectingDispatcher()
    await ActionEstimate().run(dispatcher, make_tracker("qwen3 14b", slots={**slots, "model_version_assumed": None}),
                               DOMAIN)
    assert not any("en yeni Qwen" in (m.get("text") or "") for m in dispatcher.messages)


async def test_after_an_faq_without_values_the_form_says_where_it_stands():
    slots = {"language": "fa", "requested_slot": "seq_len", "model": "llama-3.1-8b", "model_id": "llama-3.1-8b",
             "method": "qlora"}
    tracker = make_tracker("چک‌پوینت‌ها کجا ذخیره میشن؟", intent="faq_checkpoints", active_loop="estimate_form",
                           slots=slots, last_action="action_answer_faq")
    dispatcher = CollectingDispatcher()
    await ValidateEstimateForm().run(dispatcher, tracker, DOMAIN)
    assert "Llama 3.1 8B" in dispatcher.messages[0]["text"] and "طول توالی" in dispatcher.messages[0]["text"]
    thanked = make_tracker("ممنون", intent="thank", active_loop="estimate_form", slots=slots,
                           last_action="action_thank")
    dispatcher = CollectingDispatcher()
    await ValidateEstimateForm().run(dispatcher, thanked, DOMAIN)
    assert dispatcher.messages == []          # a thank-you: only the question follows


def test_dialogue_texts_have_both_languages_with_the_same_placeholders():
    import string

    from actions.dialogue_text import dialogue_texts

    texts = dialogue_texts()
    assert {"noted", "missing", "job_memory"} <= set(texts)
    for key, entry in texts.items():
        fields = [{name for _, name, _, _ in string.Formatter().parse(getattr(entry, lang)) if name}
                  for lang in ("fa", "tr")]
        assert fields[0] == fields[1], f"{key}: placeholders differ between fa and tr"
        assert not any("\u0600" <= ch <= "\u06ff" for ch in entry.tr), f"{key}: Turkish text in Arabic script"


def test_resumed_form_does_not_repeat_the_noted_line_the_customer_just_read():
    """After an answered question with nothing new, the "Noted: ..." line of the previous turn is not sent again."""
    import asyncio

    from rasa_sdk import Tracker
    from rasa_sdk.executor import CollectingDispatcher

    from actions.dialogue_text import noted_message
    from actions.forms import ValidateEstimateForm

    slots = {"language": "tr", "model": "Llama 3.1 8B", "model_id": "llama-3.1-8b", "model_size_b": 8.0,
             "requested_slot": "method"}
    noted = noted_message(slots, "tr")
    events = [
        {"event": "user", "text": "llama 3.1 8b", "parse_data": {"intent": {"name": "inform"}}},
        {"event": "bot", "text": noted},
        {"event": "bot", "text": "Hangi yöntemle?"},
        {"event": "action", "name": "action_listen"},
        {"event": "user", "text": "fiyatlara kdv dahil mi?", "parse_data": {"intent": {"name": "faq_prices"}}},
        {"event": "action", "name": "action_answer_faq"},
        {"event": "bot", "text": "Fiyatlar KDV hariçtir."},
        {"event": "action", "name": "estimate_form"},
    ]
    tracker = Tracker("t", slots, {"text": "fiyatlara kdv dahil mi?", "intent": {"name": "faq_prices"}}, events,
                      False, None, {"name": "estimate_form"}, "action_listen")
    dispatcher = CollectingDispatcher()
    asyncio.run(ValidateEstimateForm().run(dispatcher, tracker, {"slots": {}, "forms": {}}))
    assert noted not in [m.get("text") for m in dispatcher.messages]


async def test_a_misunderstood_message_that_changed_the_job_after_an_estimate_is_recalculated(tmp_path, monkeypatch):
    """ "aslında model 13b olacak" read as nlu_fallback: its value was kept, so the estimate is recalculated."""
    from actions.fallback import ActionDefaultFallback

    monkeypatch.setenv("ADVISOR_CHART_DIR", str(tmp_path))
    slots = {**ESTIMATE_SLOTS, "language": "tr", "model_id": None, "model_size_b": 13.0,
             "estimate_summary": {"per_gpu_gib": 10.0}}
    tracker = make_tracker("aslında model 13b olacak", intent="nlu_fallback", slots=slots)
    tracker.events.append({"event": "slot", "name": "model_size_b", "value": 13.0})
    dispatcher = CollectingDispatcher()
    events = await ActionDefaultFallback().run(dispatcher, tracker, DOMAIN)
    text = "\n".join(m.get("text") or "" for m in dispatcher.messages)
    assert "GB" in text and "utter_default" not in responses(dispatcher)
    assert as_dict(events)["failed_turns"] == 0.0 and "estimate_summary" in as_dict(events)


async def test_a_misunderstood_message_without_a_change_is_still_not_understood():
    from actions.fallback import ActionDefaultFallback

    slots = {**ESTIMATE_SLOTS, "language": "tr", "estimate_summary": {"per_gpu_gib": 10.0}}
    dispatcher = CollectingDispatcher()
    await ActionDefaultFallback().run(dispatcher, make_tracker("şey yani", intent="nlu_fallback", slots=slots), DOMAIN)
    assert responses(dispatcher) == ["utter_default"]


async def test_a_misunderstood_closing_wish_is_answered_as_a_goodbye():
    from actions.fallback import ActionDefaultFallback

    dispatcher = CollectingDispatcher()
    tracker = make_tracker("خیلی لطف کردین، روز خوبی داشته باشید", intent="nlu_fallback", slots={"language": "fa"})
    events = await ActionDefaultFallback().run(dispatcher, tracker, DOMAIN)
    text = "\n".join(m.get("text") or "" for m in dispatcher.messages)
    assert "خوش" in text and "utter_default" not in responses(dispatcher)
    assert as_dict(events)["failed_turns"] == 0.0
