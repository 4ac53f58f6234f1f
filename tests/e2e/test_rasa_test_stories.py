"""`rasa test` on the test stories (fa + tr) with --fail-on-prediction-errors, against the session action server."""
from __future__ import annotations

import re
import subprocess

import pytest
import yaml

from tests.servers import BIN, LOG_DIR, ROOT, action_endpoint

pytestmark = pytest.mark.e2e


def test_test_stories_pass(rasa_model, action_server, tmp_path):
    endpoints = tmp_path / "endpoints.yml"
    endpoints.write_text(yaml.safe_dump({"action_endpoint": action_endpoint(f"{action_server.url}/webhook")}))
    out = tmp_path / "results"
    result = subprocess.run(
        [str(BIN / "rasa"), "test", "core", "--model", str(rasa_model), "--stories", "tests/test_stories.yml",
         "--endpoints", str(endpoints), "--fail-on-prediction-errors", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    (LOG_DIR / "rasa-test-stories.log").write_text(result.stdout + result.stderr)
    failed = out / "failed_test_stories.yml"
    details = failed.read_text() if failed.exists() else (result.stdout + result.stderr)[-4000:]
    assert result.returncode == 0, details
    # "Correct: 10 / 10" for the stories: every story, every action.
    counts = re.findall(r"Correct:\s+(\d+) / (\d+)", result.stdout + result.stderr)
    assert counts and all(done == total for done, total in counts), counts
