"""The breakdown chart: a real PNG in every language, Persian shaped for display, matplotlib loaded lazily."""
from __future__ import annotations

import subprocess
import sys
import unicodedata

import pytest

from bot.advisor.advice import AdviceRequest, advise
from bot.present.chart import candidate_cards, render_chart, shape

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("lang", ("fa", "tr", "en"))
def test_chart_is_a_png(tmp_path, lang):
    advice = advise(AdviceRequest(model="llama-3.1-8b", method="qlora", seq_len=2048))
    path = render_chart(advice, lang, tmp_path / "sub" / f"chart-{lang}.png")
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 10_000


def test_chart_for_a_multi_gpu_job(tmp_path):
    advice = advise(AdviceRequest(size_b=70, method="full", seq_len=2048))
    assert render_chart(advice, "fa", tmp_path / "multi.png").read_bytes().startswith(PNG_MAGIC)


def test_candidates_are_the_cheapest_fitting_and_the_largest_short_cards():
    advice = advise(AdviceRequest(model="qwen2.5-14b", method="lora", seq_len=2048))
    cards = candidate_cards(advice)
    fitting = [c.name for c in advice.cards if c.fitting][:3]
    assert [c[0] for c in cards[:3]] == fitting
    assert all(status == "no_fit" for _, _, status in cards[3:])


def test_persian_is_shaped_and_reordered():
    shaped = shape("حافظه (GB)")
    # joined letters use the Arabic presentation forms; brackets are mirrored into visual order
    assert any(unicodedata.name(ch).startswith("ARABIC LETTER") and "FORM" in unicodedata.name(ch) for ch in shaped)
    assert shaped.startswith("(GB)")
    # brackets inside a left-to-right run stay as they are; the Persian words move to the left end
    assert shape("B200 (179 GB): جا نمی\u200cشود").endswith(":B200 (179 GB)")
    assert shape("آموزش کامل (full fine-tuning)").startswith("(full fine-tuning)")
    assert shape("Bellek (GB)") == "Bellek (GB)"


def test_importing_the_chart_module_does_not_load_matplotlib():
    code = "import sys, bot.present.chart; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
