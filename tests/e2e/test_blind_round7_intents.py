"""Round 7 (intents), through the real servers.

Every sentence here is our own (never the blind set's), and none is a training example:
1. Finglish questions about image, text-to-image, diffusion or video models: the other-workload answer, not "did
   not understand";
2. Finglish billing and service complaints (charged twice, money taken, server stopped, training cut): an apology
   and a person offered (the hand-over form), not "did not understand";
3. everyday questions outside the product in plain Persian and Turkish (cooking, travel, homework, health): the
   out-of-scope answer, never the abilities list;
4. several GPUs of one card asked for together, with a count and a card, in Persian, Finglish, Turkish and Turkish
   typed without its letters: the ordering process and a quote or a person offered, the count kept;
5. buying cards (for an office, a lab, "the price of 4 RTX 4090"): we rent by the hour, we do not sell, and no
   hand-over; an explicit request for a person afterwards starts it;
6. Finglish and ASCII-Turkish phrasings of the other intents, each answered by its own intent.
"""
from __future__ import annotations

import pytest

from tests.e2e.helpers import (assert_language, domain_response as response, handed_over, joined, last_intent,
                               payloads, texts, tracker_slots)

pytestmark = pytest.mark.e2e


def said(replies, name: str, lang: str) -> bool:
    return response(name, lang) in texts(replies)


def not_understood(replies, lang: str) -> bool:
    return said(replies, "utter_default", lang)


def offers_person_or_quote(c, replies) -> bool:
    """A person or a quote is offered (a button, a pending offer) or the hand-over started."""
    offered = any(p.startswith(("/request_human", "/request_quote")) for p in payloads(replies))
    return offered or bool(tracker_slots(c).get("pending_offer")) or handed_over(c)


# ------------------------------------------------------------------------- 1. image and video work in Finglish


@pytest.mark.parametrize("message", [
    "salam, mikham ye model stable diffusion ro rooye aksaye mahsoolamoon fine tune konam, mishe?",
    "baraye sakhte video ba hoosh masnooei server darid?",
    "ye model text to image mikham amoozesh bedam, gpu hatoon monasebe?",
    "mishe ba server shoma axa ro ba diffusion tolid konam?",
    "model tashkhis chehre ro mikham train konam, emkanesh hast?",
])
def test_finglish_image_and_video_work_is_other_workload(conversation, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, "fa")
    assert last_intent(c) == "other_workload", joined(replies)
    assert said(replies, "utter_other_workload", "fa"), joined(replies)
    assert not not_understood(replies, "fa")


# ------------------------------------------------------------------------- 2. complaints in Finglish


@pytest.mark.parametrize("lang,message", [
    ("fa", "do bar az hesabam pool kam shode vali faghat ye bar server gereftam"),
    ("fa", "pool ro dadam vali hanooz server faal nashode"),
    ("fa", "servere man vasate amoozesh khamoosh shod o hame chi az dast raft"),
    ("fa", "training am nesfe kare ghat shod, kheili narahatam"),
    ("fa", "soorat hesabam eshtebah omade, bishtar az masrafam hesab kardid"),
    ("tr", "param iki kez cekildi"),
    ("tr", "sunucum egitim ortasinda kapandi"),
])
def test_finglish_and_ascii_turkish_complaints_apologise_and_offer_a_person(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == "complaint", joined(replies)
    assert said(replies, "utter_complaint", lang), joined(replies)
    assert offers_person_or_quote(c, replies), joined(replies)
    assert not not_understood(replies, lang)


# ------------------------------------------------------------------------- 3. everyday questions


@pytest.mark.parametrize("lang,message", [
    ("fa", "طرز تهیه کوکو سبزی رو بلدی؟"),
    ("fa", "برای سفر به مشهد بلیط قطار کجا بگیرم؟"),
    ("fa", "میشه تکلیف ریاضی پسرم رو حل کنی؟"),
    ("fa", "سرم درد میکنه چه قرصی بخورم؟"),
    ("fa", "یه برنامه غذایی برای لاغری بهم بده"),
    ("fa", "بهترین جای دیدنی شیراز کجاست؟"),
    ("fa", "dastoor pokhte kabab koobide chie?"),
    ("tr", "karnıyarık nasıl yapılır, malzemeleri neler?"),
    ("tr", "kapadokya gezisi için otel önerir misin?"),
    ("tr", "kızımın matematik ödevine yardım eder misin?"),
    ("tr", "boğazım ağrıyor, hangi ilacı almalıyım?"),
    ("tr", "antalyaya uçak bileti nereden alınır?"),
    ("tr", "kek tarifi verir misin?"),
    ("tr", "pilav nasil yapilir"),
])
def test_everyday_questions_are_out_of_scope_not_the_abilities(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == "out_of_scope", joined(replies)
    assert said(replies, "utter_out_of_scope", lang), joined(replies)
    assert not said(replies, "utter_capabilities", lang), joined(replies)


# ------------------------------------------------------------------------- 4. several GPUs of one card together


@pytest.mark.parametrize("lang,message,count", [
    ("fa", "میتونم ۸ تا H100 رو با هم اجاره کنم؟", 8),
    ("fa", "mishe 4 ta H100 ba ham keraye konam?", 4),
    ("fa", "8 ta A100 yekja darid ke begirim?", 8),
    ("tr", "8 adet H100'ü aynı anda kiralamak mümkün mü?", 8),
    ("tr", "tek seferde 4 A100 alabilir miyiz?", 4),
    ("tr", "ayni anda 8 tane h100 kiralayabilir miyim?", 8),
    ("tr", "4 adet A100 birlikte verebilir misiniz?", 4),
])
def test_several_gpus_of_one_card_get_the_ordering_process_and_an_offer(conversation, lang, message, count):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == "order_multi_gpu", joined(replies)
    assert said(replies, "utter_order_multi_gpu", lang), joined(replies)
    assert offers_person_or_quote(c, replies), joined(replies)
    assert not handed_over(c), "a hand-over nobody asked for"
    assert not not_understood(replies, lang)
    assert tracker_slots(c).get("gpus") == count, tracker_slots(c)   # the count is kept for the quote


def test_a_persian_order_in_words_gets_the_ordering_process(conversation):
    c = conversation()
    replies = c.say("امکانش هست چهار تا A100 یکجا بگیرم؟")
    assert last_intent(c) == "order_multi_gpu", joined(replies)
    assert said(replies, "utter_order_multi_gpu", "fa"), joined(replies)


# ------------------------------------------------------------------------- 5. buying cards


@pytest.mark.parametrize("lang,message,ask_person", [
    ("fa", "برای آزمایشگاه دانشگاه میخوایم چند تا کارت گرافیک بخریم، قیمت میدید؟",
     "میشه با یکی از همکاراتون حرف بزنم؟"),
    ("fa", "قیمت ۴ تا RTX 4090 برای خرید چنده؟", None),
    ("fa", "mikhaym baraye daftar 2 ta rtx 4090 bekharim, chand mishe?",
     "mikham ba ye karshenase foroosh sohbat konam"),
    ("fa", "kharide server gpu baraye sherkat az shoma emkan dare?", None),
    ("tr", "ofisimiz için 2 adet RTX 4090 satın almak istiyoruz, fiyat verir misiniz?",
     "satış ekibinizden biriyle görüşmek istiyorum"),
    ("tr", "laboratuvar için GPU sunucusu satın alabilir miyiz?", None),
    ("tr", "4 tane rtx 4090 fiyati ne kadar, satin almak istiyorum", "bir yetkiliyle gorusebilir miyim"),
    ("tr", "sizden ekran karti satin alinabiliyor mu?", None),
])
def test_buying_cards_gets_rent_only_and_a_person_only_when_asked(conversation, lang, message, ask_person):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == "buy_hardware", joined(replies)
    assert said(replies, "utter_rent_only", lang), joined(replies)
    assert not handed_over(c), "a hand-over nobody asked for"
    if ask_person:
        replies = c.say(ask_person)
        assert last_intent(c) == "request_human", joined(replies)
        assert handed_over(c), joined(replies)


# ------------------------------------------------------------------------- 6. every intent, Finglish and ASCII Turkish


@pytest.mark.parametrize("lang,message,intent", [
    ("fa", "salam khoobin?", "greet"),
    ("fa", "dorood, vaghtetoon bekheir", "greet"),
    ("fa", "salam aleyk, khaste nabashin", "greet"),
    ("tr", "selamlar iyi aksamlar", "greet"),
    ("tr", "merhabalar kolay gelsin", "greet"),
    ("fa", "mamnoon az rahnamaeetoon", "thank"),
    ("fa", "dastet dard nakone, merci", "thank"),
    ("fa", "kheili lotf kardin, mamnoonam", "thank"),
    ("tr", "cok sagolun yardiminiz icin", "thank"),
    ("tr", "tesekkurler cok isime yaradi", "thank"),
    ("fa", "khodafez, badan sar mizanam", "goodbye"),
    ("fa", "ta badan, bye", "goodbye"),
    ("fa", "felan khodahafez, shab khosh", "goodbye"),
    ("tr", "gorusuruz iyi gunler", "goodbye"),
    ("tr", "simdilik hoscakal, iyi aksamlar", "goodbye"),
    ("fa", "age dadehaye moshtariha ro bargozari konam moshkele ghanooni dare?", "faq_kvkk"),
    ("fa", "server hatoon koja hastan? iran ya kharej?", "faq_kvkk"),
    ("fa", "dadehaye shakhsi az iran kharej mishe?", "faq_kvkk"),
    ("tr", "kisisel veriler yurt disina cikar mi kvkk ne diyor", "faq_kvkk"),
    ("tr", "sunucular hangi ulkede", "faq_kvkk"),
    ("fa", "age server khamoosh beshe checkpoint ha pak mishan?", "faq_checkpoints"),
    ("fa", "mishe model ro too s3 zakhire konam?", "faq_checkpoints"),
    ("fa", "adapter haye lora ro koja negah daram ke az bein naran?", "faq_checkpoints"),
    ("tr", "sunucu kapaninca checkpointler silinir mi", "faq_checkpoints"),
    ("tr", "adapterlari s3e kaydedebilir miyim", "faq_checkpoints"),
    ("fa", "chand ta gpu ro ba ham mishe estefade kard?", "faq_multi_gpu"),
    ("fa", "multi gpu ham darid?", "faq_multi_gpu"),
    ("fa", "amoozesh roo chand kart ba ham poshtibani mishe?", "faq_multi_gpu"),
    ("tr", "birden fazla gpu kullanabiliyor muyuz", "faq_multi_gpu"),
    ("tr", "coklu gpu destegi var mi", "faq_multi_gpu"),
    ("fa", "keyfiyate lora be andaze full fine tune hast?", "faq_lora_quality"),
    ("fa", "qlora kiyfiat ro kam mikone?", "faq_lora_quality"),
    ("fa", "ba qlora model zaeef mishe?", "faq_lora_quality"),
    ("tr", "lora kalitesi tam egitim kadar iyi mi", "faq_lora_quality"),
    ("tr", "qlora modeli kotulestirir mi", "faq_lora_quality"),
    ("fa", "dadeha ro che formati amade konam?", "faq_data_prep"),
    ("fa", "dataset ro chetor tamiz konam ghabl az train?", "faq_data_prep"),
    ("fa", "baraye fine tune dade ro chejoori amade konim?", "faq_data_prep"),
    ("tr", "veriyi hangi formatta hazirlamaliyim", "faq_data_prep"),
    ("tr", "egitim verisini nasil temizlerim", "faq_data_prep"),
    ("fa", "chetor hazine ro paeen negah daram?", "faq_cost_control"),
    ("fa", "age server bikar bemoone pool mire?", "faq_cost_control"),
    ("fa", "chikar konam kharjam kamtar beshe?", "faq_cost_control"),
    ("tr", "maliyeti nasil dusuk tutarim", "faq_cost_control"),
    ("tr", "bosta kalan sunucu ucret yazar mi", "faq_cost_control"),
    ("fa", "farghe h100 ba a100 chie?", "faq_h100_vs_a100"),
    ("fa", "h100 o a100 che tafavoti ba ham daran?", "faq_h100_vs_a100"),
    ("fa", "a100 ro begiram ya h100 ro?", "faq_h100_vs_a100"),
    ("tr", "h100 ile a100 arasindaki fark ne", "faq_h100_vs_a100"),
    ("tr", "a100 mu h100 mu tercih etmeliyim", "faq_h100_vs_a100"),
    ("fa", "sabtenam chejoori anjam mishe va pardakhtesh?", "faq_signup_payment"),
    ("fa", "pardakht ba kart banki mishe?", "faq_signup_payment"),
    ("fa", "baraye shoroo kar chetor hesab baz konam?", "faq_signup_payment"),
    ("tr", "nasil uye olurum odeme nasil", "faq_signup_payment"),
    ("tr", "kayit olup odeme yapmak icin ne yapmaliyim", "faq_signup_payment"),
    ("fa", "mishe file dataset ro befrestam ta token hasho beshmari?", "dataset_question"),
    ("fa", "file jsonl am ro koja upload konam?", "dataset_question"),
    ("fa", "file dade haro mitoonam inja bezaram?", "dataset_question"),
    ("tr", "veri dosyami yukleyebilir miyim", "dataset_question"),
    ("tr", "jsonl dosyasini nereden gonderirim", "dataset_question"),
    ("fa", "ye rtx 3090 khodam daram, mistral 7b ba qlora jash mishe?", "own_card"),
    ("fa", "khodam ye 4090 daram, llama 8b roosh train mishe?", "own_card"),
    ("fa", "too khoone ye 3090 darim, qwen 7b ba lora roosh mishe?", "own_card"),
    ("tr", "evde 4090 im var qwen 7b lora ile sigar mi", "own_card"),
    ("tr", "kendi 3090 kartim var llama 8b qlora olur mu", "own_card"),
    ("fa", "lora behtare ya qlora baraye man?", "compare_options"),
    ("fa", "qlora arzoontare ya lora?", "compare_options"),
    ("fa", "full fine tune ya lora, kodoom?", "compare_options"),
    ("tr", "lora mi qlora mi daha ucuz", "compare_options"),
    ("tr", "qlora mi lora mi secmeliyim", "compare_options"),
    ("fa", "mikham ba ye adam harf bezanam", "request_human"),
    ("fa", "lotfan vasl konid be poshtibani", "request_human"),
    ("fa", "ye karshenas mitoone baham tamas begire?", "request_human"),
    ("tr", "bir temsilciyle gorusmek istiyorum", "request_human"),
    ("tr", "canli destege baglar misiniz", "request_human"),
    ("fa", "dastoor pokhte kabab koobide chie?", "out_of_scope"),
    ("fa", "baraye safar be kish hotel pishnahad bede", "out_of_scope"),
    ("fa", "ye film khande dar moarefi kon", "out_of_scope"),
    ("tr", "pilav nasil yapilir", "out_of_scope"),
    ("tr", "izmirde gezilecek yerler neler", "out_of_scope"),
    ("fa", "to chikar mitooni bokoni?", "capabilities"),
    ("fa", "che komaki azat bar miad?", "capabilities"),
    ("fa", "kolan che kara baladi?", "capabilities"),
    ("tr", "sen tam olarak neler yapabilirsin", "capabilities"),
    ("tr", "bana hangi konularda yardim edersin", "capabilities"),
])
def test_finglish_and_ascii_turkish_reach_their_intent(conversation, lang, message, intent):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == intent, joined(replies)
    assert not not_understood(replies, lang), joined(replies)
