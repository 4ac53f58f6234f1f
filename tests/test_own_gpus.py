"""The customer's own card: knowledge/own_gpus.yml validated on load, the job judged on it, what fits on it."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from bot.advisor.advice import AdviceRequest, advise
from bot.advisor.knowledge import KnowledgeError, load_knowledge
from bot.advisor.own_gpus import load_own_gpus, own_card_advice
from bot.advisor.recommend import classify
from bot.present.render import gb, money, render_own_card

KB = load_knowledge()
ISSUE_CARDS = ("rtx-3090", "rtx-4090", "rtx-5090", "rtx-a6000", "rtx-a5000", "t4", "rtx-3060-12gb",
               "rtx-4060-ti-16gb", "rtx-4080")


def test_the_cards_the_issue_names_are_there_with_a_source_per_figure():
    cards = {card.id: card for card in load_own_gpus()}
    assert set(ISSUE_CARDS) <= set(cards)
    for card in cards.values():
        assert card.source and card.usable_source
        assert card.usable_gib <= card.vram_gb
    assert cards["rtx-4090"].usable_gib == KB.gpu("rtx4090").usable_gib  # same card, same figure
    assert not cards["t4"].bf16


def test_a_broken_file_is_refused(tmp_path):
    root = tmp_path / "knowledge"
    root.mkdir()
    shutil.copy(Path(__file__).resolve().parents[1] / "knowledge" / "own_gpus.yml", root / "own_gpus.yml")
    data = yaml.safe_load((root / "own_gpus.yml").read_text("utf-8"))
    data["cards"][0]["usable_gib"] = 99
    (root / "own_gpus.yml").write_text(yaml.safe_dump(data, allow_unicode=True), "utf-8")
    with pytest.raises(KnowledgeError) as info:
        load_own_gpus(root)
    assert info.value.file == "knowledge/own_gpus.yml" and "usable_gib" in info.value.field


@pytest.mark.parametrize("card_id,method,expected", [("rtx-4090", "qlora", "fits"), ("rtx-4090", "lora", "tight"),
                                                     ("rtx-3060-12gb", "lora", "no_fit")])
def test_the_job_is_judged_on_the_own_card_like_a_catalogue_card(card_id, method, expected):
    job = dict(model="llama-3.1-8b", method=method, seq_len=2048)
    result = own_card_advice(card_id, job)
    estimate = advise(AdviceRequest(**job)).estimate
    card = next(c for c in load_own_gpus() if c.id == card_id)
    assert result.status == expected == classify(estimate.per_gpu_gib, card.usable_gib, estimate.high_gib)
    if expected != "fits":
        assert result.fixes and all(fix.high_gib <= card.usable_gib for fix in result.fixes)


def test_without_a_job_the_answer_says_what_fits():
    result = own_card_advice("rtx-4090")
    by_method = {c.method: c for c in result.capacity}
    assert by_method["qlora"].size_b > by_method["lora"].size_b  # QLoRA takes larger models on the same card


@pytest.mark.parametrize("lang", ("fa", "tr"))
def test_rendered_own_card_then_what_cloudrux_offers(lang):
    result = own_card_advice("rtx-4090", dict(model="llama-3.1-8b", method="lora", seq_len=2048))
    text = render_own_card(result, lang)
    assert "RTX 4090" in text and gb(result.advice.estimate.high_gib, lang) in text
    rec = result.advice.recommendation.card
    assert text.split("\n")[-1] == KB.text("own_card_cloud_job", lang, card=rec.name, vram="48",
                                          price=money(rec.price_usd_hour, lang), price_vat=money(0.89, lang))
    t4 = render_own_card(own_card_advice("t4"), lang)
    assert KB.text("own_card_no_bf16", lang, card="T4") in t4 and KB.text("own_card_display_note", lang) not in t4
