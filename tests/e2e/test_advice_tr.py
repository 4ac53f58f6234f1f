"""End-to-end (REST, real servers), Turkish: one recommendation first, tight fits warned, dominated cards dropped,
cheaper alternatives, budget realism, hourly cap, comparisons, the customer's own card and FAQ figures that agree
with the estimator (issue 14, issue 13 #2-#4). Sentences of our own, written as customers type."""
from __future__ import annotations

import pytest

from tests.e2e import advice_checks as check

pytestmark = pytest.mark.e2e


def test_recommendation_line_and_dominated_cards_dropped(conversation):
    check.check_recommendation_first(conversation, "tr",
                                     "Llama 3.1 8B'yi QLoRA ile 2048 token, 50 dolar bütçeyle eğitmek istiyorum",
                                     model="llama-3.1-8b", method="qlora", seq_len=2048, budget_usd=50)


def test_tight_card_gets_the_oom_warning(conversation):
    check.check_tight_warning(conversation, "tr", "qwen2.5 32b lora ile 2048 token, butce siniri yok",
                              model="qwen2.5-32b", method="lora", seq_len=2048, budget_unlimited=True)


def test_full_fine_tuning_gets_cheaper_single_gpu_alternatives(conversation):
    check.check_alternatives(conversation, "tr", "Llama 3.1 8B tam ince ayar, 2048 token, bütçe sınırımız yok",
                             model="llama-3.1-8b", method="full", seq_len=2048, budget_unlimited=True)


def test_a_two_dollar_budget_is_told_honestly(conversation):
    check.check_tiny_budget(conversation, "tr", "Qwen2.5 32B LoRA 2048 token, toplam bütçem sadece 2 dolar",
                            model="qwen2.5-32b", method="lora", seq_len=2048, budget_usd=2)


def test_hourly_cap_below_every_fitting_card(conversation):
    check.check_hourly_cap(conversation, "tr", "Llama 3.1 70B, QLoRA, 2048 token; saatte en fazla 1 dolar ödeyebiliriz",
                           model="llama-3.1-70b", method="qlora", seq_len=2048, hourly_cap_usd=1)


def test_faq_13b_on_24gb_uses_the_estimator(conversation):
    check.check_faq_consistent(conversation, "tr", "13B'lik bir model 24 GB'lık karta sığar mı?")


def test_lora_or_qlora_side_by_side(conversation):
    check.check_comparison(conversation, "tr", "Llama 3.1 8B, QLoRA, 2048 token, bütçe 40 dolar",
                           "LoRA mı QLoRA mı daha ucuz?",
                           {"model": "llama-3.1-8b", "method": "qlora", "seq_len": 2048, "budget_usd": 40},
                           "method", ["lora", "qlora"])


def test_own_rtx_4090(conversation):
    check.check_own_card(conversation, "tr", "Llama 3.1 8B, LoRA, 2048 token, bütçe 30 dolar",
                         "Evde bir RTX 4090'ım var, bu iş ona sığar mı?", "rtx-4090",
                         {"model": "llama-3.1-8b", "method": "lora", "seq_len": 2048, "budget_usd": 30})
