"""Deterministic reading of the values a user types: model, size, method, sequence length, budget, data volume.

``parse_values(text, kb=None, expected=None)`` works on raw chat text in Persian, Turkish or English (it folds
the text itself, see bot/text/normalize.py) and never guesses: a number whose meaning it cannot tell from a unit, a
keyword before it, or the slot the bot just asked for (``expected``) is reported in ``ambiguous`` and nothing
else. Word lists are data (knowledge/lexicon.yml); model names come from the knowledge base (knowledge/models.yml).

How a number is read:
  * a unit after it decides: "2048 token" (sequence length), "20M token" / "۲۰ میلیون توکن" (total tokens),
    "ortalama 600 token" (average tokens per example), "5000 örnek" (examples), "3 epoch", "۴ تا کارت" (GPUs),
    "50$" / "$50" / "۵۰ دلار" (budget in USD); TL/lira/₺, تومان/ریال and euro amounts are *not* USD and only set
    ``currency_note``; GB, hours, %, bits, LoRA rank, batch size are understood and ignored;
  * a billion multiplier without a token unit is a model size: "7B", "هفت میلیارد", "yetmiş milyarlık";
  * a keyword before it: "context 4096", "bütçem 100", "بودجه ۵۰";
  * otherwise the slot the bot asked for (``expected``), then the one safe guess: a power of two from 512 to
    131072 (or 4k, 8k ...) is a sequence length - no model size, budget or GPU count looks like that;
  * "4k" / "4 bin" / "۴ هزار" as a sequence length means 4096 (context sizes are powers of two); as a count of
    examples it means 4000;
  * a range ("50-100 dolar", "۵۰ تا ۱۰۰ دلار") gives its upper end; alternatives ("8 veya 16 GPU") leave the first
    one ambiguous;
  * a dollar amount next to "per hour" ("saatlik 2 dolar") is a price, not a budget: ambiguous;
  * when a slot is given twice the later value wins ("llama 8b değil, 70b olsun").

Model names: the longest id, display name or alias of a preset found in the text; a family word ("llama", "لاما",
"qwen") plus a separately written size ("لاما ۸ میلیارد") picks the preset of that family and size. ``model_size_b``
is set with ``model_id`` (the preset's size).

The parser is a package split along its seams: values.py (ParsedValues and bounds), model_names.py (the knowledge
base's names indexed), model_reader.py (names in a message), quantities.py (numbers, units, keywords), meaning.py
(what a quantity means), phrases.py (method, comparison, own card, VAT), pasted_config.py, parser.py (the whole).
"""
from bot.text.parse.parser import parse_values
from bot.text.parse.pasted_config import CONFIG_MARKERS, read_pasted_config, split_pasted_config
from bot.text.parse.values import NUMERIC_ANSWERS, SLOT_ALIASES, ParsedValues

__all__ = ["CONFIG_MARKERS", "NUMERIC_ANSWERS", "SLOT_ALIASES", "ParsedValues", "parse_values", "read_pasted_config",
           "split_pasted_config"]
