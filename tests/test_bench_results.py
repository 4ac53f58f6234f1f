"""bench/results_io.write_results: a new run's figures replace the old ones; notes written by hand below the history
marker (what changed between runs, earlier figures) stay."""
from __future__ import annotations

from bench import results_io


def test_a_new_run_keeps_the_notes_below_the_history_marker(tmp_path, monkeypatch):
    monkeypatch.setattr(results_io, "ROOT", tmp_path)
    path = tmp_path / "results" / "run.md"
    results_io.write_results(path, ["# run 1", "| 41.1 turns/s |"])
    assert path.read_text() == "# run 1\n| 41.1 turns/s |\n"
    path.write_text(path.read_text() + f"\n{results_io.HISTORY_MARKER}\n\nEarlier: 46.2 turns/s before the change.\n")
    results_io.write_results(path, ["# run 2", "| 43.4 turns/s |"])
    text = path.read_text()
    assert text.startswith("# run 2\n| 43.4 turns/s |\n") and "41.1" not in text
    assert text.endswith(f"{results_io.HISTORY_MARKER}\n\nEarlier: 46.2 turns/s before the change.\n")
    results_io.write_results(path, ["# run 3"])
    assert path.read_text().count(results_io.HISTORY_MARKER) == 1 and "Earlier: 46.2" in path.read_text()
