"""Issue 21, fourth round of values: sentences of our own for the failure classes blind set 4 found.

1. a token count after a count of examples in the same clause is each example's length (avg_tokens), with or
   without "each"/"ort."/"-er" between them, unless it carries a sequence-length keyword;
2. model names written in Persian letters (and Persian digits) are the catalogue's models;
3. a short Finglish message is Persian even when a word reads as Turkish ("karti"), Turkish without its letters
   stays Turkish.
"""
import pytest

from bot.advisor.knowledge import load_knowledge
from bot.text.language import detect_language
from bot.text.parse import parse_values


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


# ------------------------------------------------------------------------------- 1. length of each example

@pytest.mark.parametrize("text, examples, avg", [
    # a comma between the count and the length
    ("gemma 2 9b lora, 14000 örnek, 380 token", 14000, 380),
    ("22 bin örnek, 260 token; qwen 7b qlora", 22000, 260),
    # "ort." for ortalama, with its period
    ("mistral 7b qlora için 9 bin örnek ort. 540 token", 9000, 540),
    ("yakl. 4000 örnek, ort. 1100 token", 4000, 1100),
    # the distributive "-er/-ar" after the number, with and without the apostrophe
    ("3500 örneğimiz var, 750'şer token", 3500, 750),
    ("11000 örnek 640'ar token civarında", 11000, 640),
    ("8000 örnek 900er token", 8000, 900),
    # the instrumental "-la" after the token word
    ("15 bin örnek 420 tokenla eğitmek istiyoruz", 15000, 420),
    ("phi 4 lora, 2600 örnekle ve 330 tokenla", 2600, 330),
    # Persian: "each of them", "average"
    ("۱۸۰۰۰ نمونه داریم، هر کدوم ۳۴۰ توکن", 18000, 340),
    ("۷۵۰۰ تا نمونه با میانگین ۹۲۰ توکن", 7500, 920),
    ("۶۲۰۰ نمونه، ۴۸۰ توکن", 6200, 480),
    # Finglish, "hezar" as a thousand
    ("3200 ta nemune darim har kodom 610 token", 3200, 610),
    ("9 hezar ta nemune, har kodoom 270 token", 9000, 270),
    ("12 hezar nemune daram miyangin 530 token", 12000, 530),
])
def test_a_token_count_after_the_examples_is_each_examples_length(kb, text, examples, avg):
    parsed = parse_values(text, kb)
    assert (parsed.examples, parsed.avg_tokens, parsed.seq_len) == (examples, avg, None)


@pytest.mark.parametrize("text, examples, avg, seq", [
    ("6400 örnek, 310 token, seq 2048", 6400, 310, 2048),
    ("seq 4096; 2500 örnek 700'er token", 2500, 700, 4096),
    ("۴۴۰۰ نمونه، هر کدوم ۶۶۰ توکن، طول توالی ۲۰۴۸", 4400, 660, 2048),
    ("5 hezar ta nemune har kodoom 800 token, context 4096", 5000, 800, 4096),
])
def test_a_stated_sequence_length_is_never_overwritten_by_the_examples_length(kb, text, examples, avg, seq):
    parsed = parse_values(text, kb)
    assert (parsed.examples, parsed.avg_tokens, parsed.seq_len) == (examples, avg, seq)


@pytest.mark.parametrize("text, slot, value", [
    ("7300 örnek, 2048 token context", "seq_len", 2048),  # the keyword after it names a sequence length
    ("7300 örnek, max length 1024 token", "seq_len", 1024),  # and the keyword before it
    ("7300 örnek, 3 milyon token", "total_tokens", 3_000_000),  # a scale: the whole data set
    ("7300 örnek var. 2048 token", "seq_len", 2048),  # another sentence: not said of the examples
    ("7300 örnek, en fazla 2048 token", "seq_len", 2048),  # a limit: the longest, not each one's length
    ("7300 examples, 1024 tokens max", "seq_len", 1024),
    ("۷۳۰۰ نمونه، حداکثر ۲۰۴۸ توکن", "seq_len", 2048),
])
def test_a_token_count_that_is_no_examples_length_is_not_taken_as_one(kb, text, slot, value):
    parsed = parse_values(text, kb)
    assert parsed.examples == 7300 and parsed.avg_tokens is None and getattr(parsed, slot) == value


# ------------------------------------------------------------------------------- 2. names in Persian letters

@pytest.mark.parametrize("text, model", [
    ("لاما ۴ اسکاوت رو با کیولورا آموزش بدیم", "llama-4-scout"),
    ("لامای ۴ اسکوت", "llama-4-scout"),
    ("اسکاوتِ لاما ۴ چه کارتی لازم داره؟", "llama-4-scout"),
    ("لاما ۴ ماوریک با کیولورا", "llama-4-maverick"),
    ("کیوِن ۲.۵ ۱۴ میلیارد", "qwen2.5-14b"),
    ("کوئین ۳ ۸ میلیارد با لورا", "qwen3-8b"),
    ("کیوون ۳ ۳۲ میلیارد", "qwen3-32b"),
    ("میسترال ۷ میلیارد لورا", "mistral-7b"),
    ("میکسترال ۸ در ۷ بی با کیولورا", "mixtral-8x7b"),
    ("جما ۳ ۱۲ میلیارد", "gemma-3-12b"),
    ("گمای ۲ ۲۷ میلیارد", "gemma-2-27b"),
    ("فای ۳ مینی با لورا", "phi-3-mini"),
    ("فای ۴ مینی", "phi-4-mini"),
    ("دیپ‌سیک ۷ میلیارد", "deepseek-r1-distill-qwen-7b"),
    ("گرانیت ۳.۳ ۸ میلیارد", "granite-3.3-8b"),
    ("جی پی تی اواس‌اس ۱۲۰ میلیارد", "gpt-oss-120b"),
    ("اسمال‌ال‌ام ۲ ۱.۷ میلیارد", "smollm2-1.7b"),
    ("لاما ۴ اسکوات با لورا", "llama-4-scout"),
    ("میسترال اسمال ۳.۱", "mistral-small-3.1-24b"),
    ("ماگیسترال اسمال رو کیولورا کنیم", "magistral-small"),
    # DeepSeek-R1 distills: the base model named after "deepseek" is the distill, not the base
    ("دیپ‌سیک آر۱ دیستیل لاما ۸ میلیارد", "deepseek-r1-distill-llama-8b"),
    ("دیپ سیک کوئن ۳۲ میلیارد با کیولورا", "deepseek-r1-distill-qwen-32b"),
    ("deepseek r1 qwen 14b lora", "deepseek-r1-distill-qwen-14b"),
    ("deepseek llama 70 milyar qlora", "deepseek-r1-distill-llama-70b"),
])
def test_a_model_named_in_persian_letters_is_the_catalogue_model(kb, text, model):
    assert parse_values(text, kb).model_id == model


# ------------------------------------------------------------------------------- 3. Finglish or Turkish

@pytest.mark.parametrize("text", [
    "qwen 14b lora che karti?",
    "llama 4 scout qlora chi mikhad?",
    "mistral 7b qlora chand saat",
    "gemma 9b lora cheghadr",
    "phi 4 ro lora konam chegadr mishe",
    "mikham llama 8b ro train konam, karti pishnahad bedid",
    "daram qwen 7b ro lora mikonam, kart che bashe?",
])
def test_a_short_finglish_message_is_persian(text):
    assert detect_language(text) == "fa"


@pytest.mark.parametrize("text", [
    "hangi karti kiralayayim, qwen 14b lora",
    "llama 8b qlora kac saat surer",
    "mistral 7b icin hangi kart lazim",
    "gemma 9b lora ne kadar tutar",
    "bu kartla kac saatte biter",
])
def test_turkish_without_its_letters_stays_turkish(text):
    assert detect_language(text) == "tr"
