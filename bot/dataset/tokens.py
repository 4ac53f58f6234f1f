"""Real token counts with the model family's own tokenizer, read from files shipped in bot/dataset/vocab/.

The byte-level BPE vocabularies (Qwen, Llama 3, gpt-oss's o200k, Mistral's Tekken) run on `tiktoken`, the
SentencePiece one (Mistral v3) on `sentencepiece`; where each file comes from, its licence and its checksum are in
bot/dataset/vocab/SOURCES.md and knowledge/dataset.yml `tokenizers`. Nothing is downloaded at run time.

A chat example costs its contents' tokens plus the chat template's tokens per message (knowledge/dataset.yml
`templates`): the special tokens count one each, the template's own words ("user", "\\n\\n") are encoded once per
role and cached.
"""
from __future__ import annotations

import base64
import gzip
import os
import unicodedata
from functools import lru_cache
from typing import Dict, List, Optional, Sequence

from bot.dataset.formats import Example

VOCAB_DIR = os.path.join(os.path.dirname(__file__), "vocab")
BATCH_THREADS = 2  # the development and CI machines have 2 cores (env README)


def _read_ranks(file_name: str) -> Dict[bytes, int]:
    """A tiktoken rank file ("base64 rank" per line), gzip-compressed."""
    ranks: Dict[bytes, int] = {}
    with gzip.open(os.path.join(VOCAB_DIR, file_name), "rb") as handle:
        for line in handle:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


class Encoder:
    """Counts the tokens of texts with one tokenizer (no special tokens: the templates add those)."""

    def __init__(self, spec: Dict):
        self.id, self.spec = spec["id"], spec
        self.nfc = bool(spec.get("nfc"))
        if spec["engine"] == "tiktoken":
            import tiktoken

            self._tiktoken = tiktoken.Encoding(name=spec["id"], pat_str=spec["pattern"],
                                               mergeable_ranks=_read_ranks(spec["file"]), special_tokens={})
            self._sp = None
        else:
            import sentencepiece

            self._tiktoken = None
            self._sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(VOCAB_DIR, spec["file"]))

    def encode(self, text: str) -> List[int]:
        if self.nfc:
            text = unicodedata.normalize("NFC", text)
        if self._tiktoken is not None:
            return self._tiktoken.encode_ordinary(text)
        return self._sp.encode(text)

    def count_batch(self, texts: Sequence[str]) -> List[int]:
        texts = [unicodedata.normalize("NFC", text) for text in texts] if self.nfc else list(texts)
        if self._tiktoken is not None:
            # one task per thread, not one per text: tiktoken's own batch call submits every text to its pool
            encode = self._tiktoken.encode_ordinary
            chunks = [texts[start::BATCH_THREADS] for start in range(BATCH_THREADS)]
            counted = list(_pool().map(lambda chunk: [len(encode(text)) for text in chunk], chunks))
            out = [0] * len(texts)
            for start, counts in enumerate(counted):
                out[start::BATCH_THREADS] = counts
            return out
        return [len(ids) for ids in self._sp.encode(list(texts), num_threads=BATCH_THREADS)]


@lru_cache(maxsize=1)
def _pool():
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(BATCH_THREADS)  # tiktoken releases the GIL while it encodes


@lru_cache(maxsize=8)
def _encoder(tokenizer_id: str) -> Encoder:
    from bot.dataset.texts import load_dataset_knowledge

    return Encoder(load_dataset_knowledge().tokenizer(tokenizer_id))


class Counter:
    """Token counts of examples for one model: its tokenizer and its chat template."""

    def __init__(self, tokenizer_id: str, template: Dict):
        self.encoder = _encoder(tokenizer_id)
        self.template = template
        self._overhead: Dict[str, int] = {}

    def _part_cost(self, part: str, role: str) -> int:
        if part in self.template["specials"]:
            return 1
        words = part.replace("{content}", "").replace("{role}", self.template["roles"].get(role, role))
        return len(self.encoder.encode(words)) if words else 0

    def message_overhead(self, role: str) -> int:
        """Template tokens around one message of `role` (its content excluded)."""
        if role not in self._overhead:
            parts = self.template["messages"].get(role) or self.template["messages"]["default"]
            self._overhead[role] = sum(self._part_cost(part, role) for part in parts)
        return self._overhead[role]

    def plain_overhead(self) -> int:
        return sum(self._part_cost(part, "text") for part in self.template["plain"])

    def count_examples(self, examples: Sequence[Example]) -> List[int]:
        """Tokens of each example as the trainer feeds it: contents plus template (or BOS/EOS for plain text)."""
        texts: List[str] = []
        for example in examples:
            if example.is_chat:
                texts.extend(text for _, text in example.turns)
            else:
                texts.append(self.template["plain_joiner"].join(example.texts()))
        counts = self.encoder.count_batch(texts)
        out, position = [], 0
        begin = sum(self._part_cost(part, "") for part in self.template["begin"])
        plain = self.plain_overhead()
        for example in examples:
            if example.is_chat:
                size = len(example.turns)
                out.append(begin + sum(counts[position:position + size]) +
                           sum(self.message_overhead(role) for role, _ in example.turns))
                position += size
            else:
                out.append(plain + counts[position])
                position += 1
        return out


def counter_for_model(model_id: Optional[str]) -> "Counter":
    from bot.dataset.texts import load_dataset_knowledge

    kb = load_dataset_knowledge()
    choice = kb.tokenizer_for_model(model_id)
    return Counter(choice["tokenizer"], kb.templates[choice["template"]].dict())
