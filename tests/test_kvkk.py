"""The KVKK texts: the short notice in the chat (domain/handoff.yml), the KVKK FAQ and the full notice served by the
website (web/kvkk-{fa,tr}.html at /kvkk/{lang}) carry the same content in both languages (native reviews fa §4,
tr §4). The legal team approves the final wording (docs/kvkk.md); these tests keep the content complete and aligned."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from aiohttp.test_utils import TestClient, TestServer

from bot.present.render import faq_text
from bot.website import create_app

ROOT = Path(__file__).resolve().parents[1]


def notice(lang: str) -> str:
    """The full (first) notice variant of the consent question in ``lang``."""
    responses = yaml.safe_load((ROOT / "domain" / "handoff.yml").read_text("utf-8"))["responses"]
    for variant in responses["utter_ask_handoff_consent"]:
        condition = {c["name"]: c["value"] for c in variant.get("condition", [])}
        if condition.get("kvkk_notice_shown") is True:
            continue
        if condition.get("language", "fa") == lang:
            return variant["text"]
    raise AssertionError(f"no full notice for {lang}")


# What a short notice must say (reviews: controller, purpose, legal basis, method, recipients incl. the partner data
# centres abroad, retention, article 11 rights, where the full text is), as each language words it.
NOTICE_ITEMS = {
    "fa": {"controller": "مسئول داده‌ها CloudRUX", "purpose": "فقط برای پاسخ به همین درخواست",
           "basis": "ماده 5", "method": "به‌صورت الکترونیکی", "recipients": "ارائه‌دهندگان زیرساخت",
           "abroad": "خارج از ترکیه", "retention": "پاک می‌شود", "rights": "ماده 11",
           "full_text": "صفحهٔ KVKK وب‌سایت", "masking": "ماسک‌شده"},
    "tr": {"controller": "Veri sorumlusu CloudRUX", "purpose": "yalnızca talebinizi yanıtlamak amacıyla",
           "basis": "md. 5/2", "method": "elektronik ortamda", "recipients": "altyapı sağlayıcılarımız",
           "abroad": "yurt dışındaki veri merkezlerinde", "retention": "silinir", "rights": "11. maddesindeki",
           "full_text": "web sitemizin KVKK sayfasında", "masking": "maskelenerek"},
}
# Promises the reviews found untrue next to the FAQ (partner data centres abroad) or out of place.
NOTICE_FORBIDDEN = {"fa": ("اشخاص ثالث قرار نمی‌دهد", "کد ملی", "شمارهٔ شبا", "پوشانده"),
                    "tr": ("üçüncü kişilerle paylaşmaz", "kart numarası)", "Kurul'un", "Kurumu'na")}


@pytest.mark.parametrize("lang", ("fa", "tr"))
def test_the_chat_notice_says_everything_a_short_notice_must(lang):
    text = notice(lang)
    missing = [item for item, phrase in NOTICE_ITEMS[lang].items() if phrase not in text]
    assert not missing, missing
    assert not [phrase for phrase in NOTICE_FORBIDDEN[lang] if phrase in text]


@pytest.mark.parametrize("lang", ("fa", "tr"))
def test_notice_and_faq_agree_on_the_data_centres_abroad(lang):
    faq = faq_text("kvkk", lang, public_url="https://advisor.example.com")
    abroad = {"fa": "خارج از ترکیه", "tr": "yurt dışındaki veri merkezlerinde"}[lang]
    assert abroad in faq and abroad in notice(lang)
    assert faq.rstrip().endswith(f"https://advisor.example.com/kvkk/{lang}")


FULL_TEXT_ITEMS = {
    "fa": ("مسئول داده‌ها", "هدف و مبنای قانونی", "چه داده‌هایی و چگونه", "دریافت‌کنندگان", "خارج از ترکیه",
           "مدت نگهداری", "ماده 11", "واحد حقوقی"),
    "tr": ("Veri sorumlusu", "Amaç ve hukuki sebep", "hangi yöntemle", "Kimlere aktarılır", "yurt dışındaki",
           "Saklama süresi", "md. 11", "hukuk ekibi"),
}


def _get(path: str):
    async def fetch():
        async with TestClient(TestServer(create_app())) as client:
            response = await client.get(path, allow_redirects=False)
            return response.status, response.headers, await response.text()
    return asyncio.run(fetch())


@pytest.mark.parametrize("lang", ("fa", "tr"))
def test_the_website_serves_the_full_notice(lang):
    status, headers, body = _get(f"/kvkk/{lang}")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert f'lang="{lang}"' in body
    missing = [phrase for phrase in FULL_TEXT_ITEMS[lang] if phrase not in body]
    assert not missing, missing
    assert "<script" not in body


def test_kvkk_without_a_language_goes_to_persian_and_others_are_not_found():
    status, headers, _ = _get("/kvkk")
    assert status == 302 and headers["Location"] == "/kvkk/fa"
    assert _get("/kvkk/en")[0] == 404
