"""ML007–ML017 as users run them: through the CLI, with ML017 off unless selected."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

TRAIN = textwrap.dedent(
    """
    import torch
    from torch.utils.checkpoint import checkpoint

    def forward(self, x):
        return checkpoint(self.conv_1(x), x)

    for x, y in loader:
        optimizer.zero_grad(set_to_none=False)
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        torch.cuda.empty_cache()
    """
).lstrip()


def _check(tmp_path, *args):
    path = tmp_path / "train.py"
    path.write_text(TRAIN, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "memlint", "check", str(path), "--output-format", "json", "--no-cache", *args],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def test_default_rules_report_and_ml017_stays_off(tmp_path):
    findings = _check(tmp_path)
    codes = sorted(f["code"] for f in findings)
    assert codes == ["ML007", "ML009", "ML012"]
    ml007 = next(f for f in findings if f["code"] == "ML007")
    assert ml007["severity"] == "error"
    # `self.conv_1` is not seen built as a layer here: it might return a module (issue 25), so unsafe
    assert ml007["fix"]["applicability"] == "unsafe"


def test_ml017_runs_when_selected(tmp_path):
    findings = _check(tmp_path, "--select", "ML017")
    assert [(f["code"], f["location"]["row"]) for f in findings] == [("ML017", 7)]


def test_fix_turns_the_article_checkpoint_into_a_working_call(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(TRAIN, encoding="utf-8")
    for flags in (["--fix"], ["--fix", "--unsafe-fixes"]):
        subprocess.run(
            [sys.executable, "-m", "memlint", "check", str(path), "--select", "ML007", "--no-cache", *flags],
            capture_output=True, text=True, timeout=120, cwd=tmp_path,
        )
        if flags == ["--fix"]:  # unsafe: what `self.conv_1` is cannot be seen here
            assert path.read_text(encoding="utf-8") == TRAIN
    assert "return checkpoint(self.conv_1, x, use_reentrant=False)" in path.read_text(encoding="utf-8")
