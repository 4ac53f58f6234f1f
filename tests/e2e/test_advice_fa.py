"""End-to-end (REST, real servers), Persian: one recommendation first, tight fits warned, dominated cards dropped,
cheaper alternatives, budget realism, hourly cap, comparisons, the customer's own card and FAQ figures that agree
with the estimator (issue 14, issue 13 #2-#4). Sentences of our own, written as customers type."""
from __future__ import annotations

import pytest

from tests.e2e import advice_checks as check

pytestmark = pytest.mark.e2e


def test_recommendation_line_and_dominated_cards_dropped(conversation):
    check.check_recommendation_first(conversation, "fa",
                                     "می‌خواهم Llama 3.1 8B را با QLoRA و طول توالی 2048 "
                                     "فاین‌تیون کنم، بودجه‌ام 50 دلار است",
                                     model="llama-3.1-8b", method="qlora", seq_len=2048, budget_usd=50)


def test_tight_card_gets_the_oom_warning(conversation):
    check.check_tight_warning(conversation, "fa", "qwen2.5 32b با lora و ۲۰۴۸ توکن، محدودیت بودجه ندارم",
                              model="qwen2.5-32b", method="lora", seq_len=2048, budget_unlimited=True)


def test_full_fine_tuning_gets_cheaper_single_gpu_alternatives(conversation):
    check.check_alternatives(conversation, "fa", "آموزش کامل Llama 3.1 8B با 2048 توکن، بودجه محدودیتی ندارد",
                             model="llama-3.1-8b", method="full", seq_len=2048, budget_unlimited=True)


def test_a_two_dollar_budget_is_told_honestly(conversation):
    check.check_tiny_budget(conversation, "fa", "Qwen2.5 32B با LoRA و 2048 توکن، کل بودجه‌ام فقط ۲ دلار است",
                            model="qwen2.5-32b", method="lora", seq_len=2048, budget_usd=2)


def test_hourly_cap_below_every_fitting_card(conversation):
    check.check_hourly_cap(conversation, "fa", "Llama 3.1 70B با QLoRA و 2048 توکن، ساعتی حداکثر ۱ دلار می‌توانیم بدهیم",
                           model="llama-3.1-70b", method="qlora", seq_len=2048, hourly_cap_usd=1)


def test_faq_13b_on_24gb_uses_the_estimator(conversation):
    check.check_faq_consistent(conversation, "fa", "یک مدل 13B روی کارت 24 گیگابایتی جا می‌شود؟")


def test_h100_or_a100_side_by_side(conversation):
    check.check_comparison(conversation, "fa", "Llama 3.1 8B با QLoRA و 2048 توکن، بودجه 40 دلار",
                           "H100 یا A100 برای این کار؟",
                           {"model": "llama-3.1-8b", "method": "qlora", "seq_len": 2048, "budget_usd": 40},
                           "gpu", ["h100", "a100"])


def test_own_rtx_3090(conversation):
    check.check_own_card(conversation, "fa", "Llama 3.1 8B با LoRA و 2048 توکن، بودجه 30 دلار",
                         "من خودم یک RTX 3090 دارم، این کار روی آن جا می‌شود؟", "rtx-3090",
                         {"model": "llama-3.1-8b", "method": "lora", "seq_len": 2048, "budget_usd": 30})
