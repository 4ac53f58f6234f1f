"""Messages built to find super-linear work on the message path (issue 20, finding 1), shared by
tests/test_message_path_fuzz.py and bench/bench_nlu_worst.py.

Each family repeats one unit (or draws units with a fixed seed) up to the requested length, so the same family at
1,000, 2,000 and 4,000 characters shows how the work grows. The units aim at the parts that scan text: digit groups
and separators (numbers, phone and card numbers), model names and sizes (the parser's name look-ups and the model
resolver), number words, method words, Turkish and Persian letters (normalisation, suffix stripping), keyboard runs
(the mash check), mixed scripts, Unicode digit forms, exponents and long numbers (float parsing), punctuation runs
between letters (the tokenizer), address characters around "@" (e-mail patterns), braces (pasted config.json,
payloads). The ordinary families are everyday job requests written for this file.
"""
from __future__ import annotations

import random
from typing import Callable, Dict

from bot.assistant.channels.limits import MAX_MESSAGE_CHARS

LIMIT = MAX_MESSAGE_CHARS
LENGTHS = (1000, 2000, LIMIT)


def repeated(unit: str) -> Callable[[int, int], str]:
    return lambda length, seed=0: (unit * (length // len(unit) + 1))[:length]


def framed(head: str, fill: str, tail: str) -> Callable[[int, int], str]:
    """``head`` + ``fill`` repeated + ``tail``, ``length`` characters in all."""
    def build(length: int, seed: int = 0) -> str:
        body = length - len(head) - len(tail)
        return head + (fill * (body // len(fill) + 1))[:body] + tail
    return build


def drawn(*units: str) -> Callable[[int, int], str]:
    """Units drawn at random (fixed seed), joined by spaces."""
    def build(length: int, seed: int = 0) -> str:
        rng = random.Random(seed)
        words, size = [], 0
        while size < length:
            words.append(rng.choice(units))
            size += len(words[-1]) + 1
        return " ".join(words)[:length]
    return build


def unknown_model_names(length: int, seed: int = 0) -> str:
    """A family word and a size no preset has, all different: each name goes to the model resolver."""
    rng = random.Random(seed)
    families = ("llama", "qwen", "mistral", "gemma", "phi", "لاما", "کوئن")
    words, size = [], 0
    while size < length:
        words.append(f"{rng.choice(families)} {rng.randint(101, 4999)}b")
        size += len(words[-1]) + 1
    return " ".join(words)[:length]


ORDINARY_FA = ("سلام، می‌خواهم مدل لاما ۸ میلیارد را با کیولورا روی ۲۰ هزار نمونه آموزش بدهم.",
               "طول دنباله ۴۰۹۶ توکن است و بودجه‌ام حدود ۵۰ دلار است، کدام کارت مناسب است؟",
               "اگر به‌جای لورا آموزش کامل بزنم هزینه با مالیات چقدر می‌شود؟")
ORDINARY_TR = ("Merhaba, Qwen 2.5 14B modelini LoRA ile 3 epoch eğitmek istiyorum.",
               "Bağlam uzunluğu 8192 token, bütçem aylık 200 dolar civarında; hangi GPU yeter?",
               "KDV dahil saatlik fiyat nedir, iki A100 ile ne kadar sürer?")

FAMILIES: Dict[str, Callable[..., str]] = {
    # everyday messages, for comparison
    "ordinary fa": drawn(*ORDINARY_FA),
    "ordinary tr": drawn(*ORDINARY_TR),
    # digits and separators
    "digits": repeated("7"),
    "digit groups": repeated("5 "),
    "dotted digits": repeated("1."),
    "comma digits": repeated("1,"),
    "dashed digits": repeated("5-"),
    "bracketed digits": repeated("(0) "),
    "phone-like groups": repeated("0912 345 67 89 "),
    "long number": framed("1", "0", ""),
    "exponents": repeated("1e999 "),
    # Unicode digit forms
    "persian digits": repeated("۱۲۳ "),
    "arabic-indic digits": repeated("٤٥٦"),
    "fullwidth": repeated("１２ｂ "),
    "math digits": repeated("𝟏𝟐𝟑 "),
    # model names and sizes, number words, methods
    "model names": repeated("llama 3.1 8b "),
    "family and size": repeated("qwen 7b mi 14b mi "),
    "unknown model names": unknown_model_names,
    "size words": repeated("هفت میلیارد "),
    "number words": repeated("iki bin beş yüz "),
    "persian number words": repeated("دو هزار و چهل و "),
    "thousands": repeated("4k "),
    "weak numbers": repeated("bir. "),
    "weak full": repeated("tam "),
    "full": repeated("full "),
    "method yardsticks": repeated("lora ya göre "),
    "gpu counts": repeated("8xh100 "),
    "amounts": repeated("50-100 dolar "),
    # letters and scripts
    "latin word": repeated("a"),
    "turkish letters": repeated("ığüşöçİI"),
    "turkish suffixes": repeated("llamayı "),
    "persian word": repeated("لامارو"),
    "persian text": repeated("سلام دنیا "),
    "half-spaces": repeated("می\u200c"),
    "keyboard rows": repeated("asdfghjkl"),
    "persian keyboard": repeated("ضصثقفغ"),
    "mixed scripts": repeated("a۱ş سb2"),
    "emoji": repeated("😀"),
    # punctuation runs, addresses, braces
    "dots between letters": framed("a", ".", "a"),
    "dashes between letters": framed("a", "-", "a"),
    "punctuation mix": framed("a", "!?.,;:", "b"),
    "spaced dots": repeated("a. "),
    "address run": framed("@ ", "a", ""),
    "dotted address": framed("a@", "b.", "1"),
    "many at signs": repeated("a@"),
    "domain dots": framed("x ", "a.", "@b.co"),
    "iban-like": framed("TR12", "a", ""),
    "open braces": repeated("{"),
    "pasted config": framed('{"model_type": "llama", "hidden_size": ', "1", "}"),
    "nested payload": framed('/inform{"a": ', "[", "}"),
    "long payload": framed("/inform", "a", ""),
}
