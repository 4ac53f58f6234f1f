"""Near duplicates (bot/dataset/duplicates.py): pairs of our own making that must and must not be matched, in
Persian, Turkish and English; the batched MinHash against datasketch's own; clusters counted beyond their first."""
import json
import os
import zlib

import numpy as np
import pytest
from datasketch import MinHash
from datasketch.lsh import _optimal_param

from bot.dataset import duplicates
from bot.dataset.analysis import analyse_file
from bot.dataset.duplicates import loose_words, sketch_from_knowledge, word_hashes
from bot.dataset.formats import Example
from bot.dataset.texts import load_dataset_knowledge

HERE = os.path.dirname(__file__)
PAIRS = json.load(open(os.path.join(HERE, "data", "dataset", "near_pairs.json"), encoding="utf-8"))
KB = load_dataset_knowledge()
CLI_LIMITS = KB.limits["cli"].read_limits()
SKETCH = sketch_from_knowledge(KB.analysis)


def _chat(question, answer):
    return {"messages": [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]}


def _example(question, answer):
    return Example("chat", (("user", question), ("assistant", answer)))


def _analyse(tmp_path, pairs, name="near.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(_chat(*pair), ensure_ascii=False) + "\n" for pair in pairs), encoding="utf-8")
    return analyse_file(str(path), CLI_LIMITS, "qwen2.5-7b")


@pytest.mark.parametrize("name", sorted(PAIRS["match"]))
def test_a_few_words_changed_is_a_near_duplicate(tmp_path, name):
    first, second = PAIRS["match"][name]
    report = _analyse(tmp_path, [first, second])
    assert report.duplicates["exact"] == 0
    assert report.duplicates["near"] == 1 and report.duplicates["near_lines"] == [2], name


@pytest.mark.parametrize("name", sorted(PAIRS["distinct"]))
def test_different_answers_on_one_topic_are_not_near_duplicates(tmp_path, name):
    report = _analyse(tmp_path, PAIRS["distinct"][name])
    assert report.duplicates == {"exact": 0, "near": 0, "exact_lines": [], "near_lines": []}, name


def test_every_distinct_pair_stays_below_the_threshold_and_every_match_above():
    """The settings' reason in knowledge/dataset.yml, checked on the true Jaccard of the word shingles."""
    size = SKETCH.shingle

    def shingles(pair):
        words = loose_words(_example(*pair))
        return {tuple(words[i:i + size]) for i in range(len(words) - size + 1)}

    def jaccard(pair_of_pairs):
        a, b = (shingles(pair) for pair in pair_of_pairs)
        return len(a & b) / len(a | b)

    assert min(jaccard(pairs) for pairs in PAIRS["match"].values()) >= SKETCH.threshold + 0.1
    assert max(jaccard(pairs) for pairs in PAIRS["distinct"].values()) <= SKETCH.threshold - 0.4


def test_batched_minhash_equals_datasketch_minhash(monkeypatch):
    settings = KB.analysis["near_duplicate"]
    examples = [_example(*pair) for group in PAIRS.values() if isinstance(group, dict)
                for pairs in group.values() for pair in pairs] + [_example("ok", "")]
    hashes = [word_hashes(example, SKETCH.shingle) for example in examples]
    monkeypatch.setattr(duplicates, "SHINGLES_PER_CHUNK", 50)  # several chunks, some examples longer than one
    ours = SKETCH.signatures(hashes)
    for index, example_hashes in enumerate(hashes):
        reference = MinHash(num_perm=SKETCH.permutations, seed=settings["seed"], scheme="affine32", hashfunc=int)
        assert np.array_equal(reference.permutations, SKETCH.permutation_parameters)
        reference.update_batch(SKETCH.shingle_hashes(example_hashes).tolist())
        assert np.array_equal(ours[index], reference.hashvalues), index


def test_bands_are_datasketchs_choice_for_the_threshold():
    settings = KB.analysis["near_duplicate"]
    assert (SKETCH.bands, SKETCH.rows) == _optimal_param(settings["threshold"], settings["permutations"], 0.1, 0.9)


def test_clusters_count_copies_beyond_the_first_and_exact_copies_only_as_exact(tmp_path):
    (fa_1, fa_2), (tr_1, tr_2) = PAIRS["match"]["fa_edited_answer"], PAIRS["match"]["tr_changed_name"]
    en_1, en_2 = PAIRS["distinct"]["en_same_topic"]
    report = _analyse(tmp_path, [fa_1, tr_1, en_1, fa_2, fa_1, tr_2, en_2, fa_2])
    # lines 5 and 8 copy lines 1 and 4 byte for byte; 4 is near 1, 6 near 2; 7 is another answer
    assert report.duplicates["exact"] == 2 and report.duplicates["exact_lines"] == [5, 8]
    assert report.duplicates["near"] == 2 and report.duplicates["near_lines"] == [4, 6]


def test_examples_without_letters_match_only_their_own_text():
    one, two = _example("2 + 2", "4"), _example("3 + 3", "6")
    assert word_hashes(one, SKETCH.shingle) != word_hashes(two, SKETCH.shingle)
    assert word_hashes(one, SKETCH.shingle) == word_hashes(_example("2 + 2", "4"), SKETCH.shingle)
    assert zlib.crc32(b"x") in word_hashes(_example("x", ""), SKETCH.shingle)
