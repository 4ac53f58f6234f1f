"""A contact inside a sentence is a contact (issue 13 #6): actions/handoff.py contact_in_sentence, used by the handoff
form for the consent and the contact questions. Sentences written for this test."""
import pytest

from actions.handoff import contact_in_sentence


@pytest.mark.parametrize("text, kind, value", [
    ("e-posta adresim deniz.kaya@ornekfirma.com.tr, telefonumu da form üzerinden verdim", "email",
     "deniz.kaya@ornekfirma.com.tr"),
    ("bana selin@example.org adresinden ulaşabilirsiniz lütfen", "email", "selin@example.org"),
    ("ایمیلم reza.ahmadi@example.ir هست، لطفا اونجا جواب بدید", "email", "reza.ahmadi@example.ir"),
    ("شماره من ۰۹۱۲ ۳۴۵ ۶۷۸۹ است، عصرها در دسترسم", "phone", "+989123456789"),
    ("cep numaram 0532 123 45 67, öğleden sonra arayın", "phone", "+905321234567"),
    ("telegramdan @deniz_kaya hesabıma yazabilirsiniz", "telegram", "@deniz_kaya"),
    ("تو تلگرام به @maryam_dev پیام بدید", "telegram", "@maryam_dev"),
    ("my e-mail is deniz@example.com and I also gave my phone", "email", "deniz@example.com"),
    ("ali@x.ir", "email", "ali@x.ir"),
])
def test_contact_inside_a_sentence(text, kind, value):
    contact = contact_in_sentence(text)
    assert contact is not None and (contact.kind, contact.value) == (kind, value)


@pytest.mark.parametrize("text", [
    "llama 8b qlora 2048 token", "bütçem 1000000 dolar", "hayır, iletişim bilgisi vermek istemiyorum",
    "ایمیل ندارم", "mailim yok ama telefonla arayabilirsiniz", "saat 14:30 uygun", "@ab", "",
])
def test_no_contact_is_made_up(text):
    assert contact_in_sentence(text) is None
