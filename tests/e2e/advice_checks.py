"""Shared checks of the end-to-end advice suites (tests/e2e/test_advice_fa.py, test_advice_tr.py): the answer the
real servers send carries the lines the core library renders for the same values (issue 14)."""
from __future__ import annotations

import re
from typing import List

from bot.advisor.advice import AdviceRequest, advise
from bot.advisor.compare import compare_options
from bot.advisor.knowledge import load_knowledge
from bot.advisor.own_gpus import own_card_advice
from bot.present.render import (RLM, faq_text, gb, render_advice, render_comparison, render_estimate_hint,
                                render_own_card)
from tests.e2e.helpers import assert_language, joined

KB = load_knowledge()


def rendered(lang: str, **request) -> str:
    return render_advice(advise(AdviceRequest(**request)), lang, quote_offer=False)


def listed_cards(text: str) -> List[str]:
    return [re.sub(r"^\d+\. ", "", line.lstrip(RLM)).split(" (")[0] for line in text.split("\n")
            if re.match(rf"^{RLM}?\d+\. ", line)]


def check_recommendation_first(conversation, lang: str, message: str, **request) -> str:
    replies = conversation().say(message)
    assert_language(replies, lang)
    text = joined(replies)
    expected = rendered(lang, **request)
    assert text.startswith(expected.split("\n")[0]), (text[:300], expected.split("\n")[0])
    advice = advise(AdviceRequest(**request))
    assert listed_cards(text) == [card.name for card in advice.shortlist[:4]]
    for dropped in advice.dominated:
        assert KB.gpu(dropped).name not in listed_cards(text)
    assert render_estimate_hint(advice, lang) in text  # the hint's examples differ from the values just used
    return text


def check_tight_warning(conversation, lang: str, message: str, **request) -> None:
    text = joined(conversation().say(message))
    advice = advise(AdviceRequest(**request))
    tight = [card for card in advice.shortlist if card.status == "tight"]
    assert tight, "the example must have a tight card"
    line = next(line for line in text.split("\n") if f"{tight[0].name} (" in line)
    assert KB.text("card_tight", lang, high=gb(advice.estimate.high_gib, lang)) in line
    assert KB.text(f"tight_remedy_{advice.plan.method}", lang) in text


def check_alternatives(conversation, lang: str, message: str, **request) -> None:
    text = joined(conversation().say(message))
    expected = rendered(lang, **request)
    block = expected.split(KB.text("alternatives_header", lang))[1].split("\n\n")[0]
    assert KB.text("alternatives_header", lang) in text and block.strip() in text


def check_tiny_budget(conversation, lang: str, message: str, **request) -> None:
    text = joined(conversation().say(message))
    advice = advise(AdviceRequest(**request))
    assert advice.budget.tiny
    tiny_line = next(line for line in rendered(lang, **request).split("\n")
                     if line.startswith(KB.text("budget_tiny", lang, budget="{b}", duration="{d}", card="{c}",
                                                tokens="{t}").split("{")[0]))
    assert tiny_line in text


def check_faq_consistent(conversation, lang: str, message: str) -> None:
    replies = conversation().say(message)
    text = joined(replies)
    assert text.startswith(faq_text("13b_24gb", lang).split("\n")[0][:60])
    assert gb(advise(AdviceRequest(model="llama-2-13b", method="qlora", seq_len=2048)).estimate.per_gpu_gib,
              lang) in text


def check_hourly_cap(conversation, lang: str, message: str, **request) -> None:
    text = joined(conversation().say(message))
    expected = rendered(lang, **request)
    assert text.startswith(expected.split("\n")[0])  # the cap and its KDV assumption come first
    assert expected.split("\n")[1] in text          # nothing under the cap holds the job: the cheapest that does


def check_comparison(conversation, lang: str, first: str, question: str, job: dict, kind: str, options) -> None:
    c = conversation()
    c.say(first)
    text = joined(c.say(question))
    expected = render_comparison(compare_options(job, kind, options), lang)
    assert expected.split("\n")[0] in text and expected.split("\n")[1] in text


def check_own_card(conversation, lang: str, first: str, question: str, card: str, job: dict) -> None:
    c = conversation()
    c.say(first)
    text = joined(c.say(question))
    expected = render_own_card(own_card_advice(card, job), lang)
    assert expected.split("\n")[0] in text and expected.split("\n")[-1] in text
