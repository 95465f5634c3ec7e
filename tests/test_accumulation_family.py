"""ML001 and ML014 as users meet them (issue 15): the forms of accumulation across a loop, across
notebook cells and across files, what the messages say, and fixes that leave nothing to report.

The rules' VALID / INVALID examples (tests/test_rule_examples.py) cover each form alone; these
tests run the CLI on whole files, notebooks and projects."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from integration_helpers import memlint


def _findings(tmp_path: Path, *paths: str, codes: str = "ML001,ML014") -> list[dict]:
    result = memlint("check", "--select", codes, "--output-format", "json", "--no-cache", *paths, cwd=tmp_path)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return json.loads(result.stdout)


def _cell(source: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": textwrap.dedent(source).lstrip("\n").splitlines(keepends=True)}  # fmt: skip


def _notebook(*cells: str) -> str:
    nb = {"cells": [_cell(c) for c in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1) + "\n"


FIT_CELL = """
import torch
def fit(model, loader, criterion, optimizer):
    losses = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)  # known to be 0-d: `.item()` may do
        loss.backward()
        optimizer.step()
        losses.append(loss)
    return losses
"""


def _fixed_cell(tmp_path: Path, *later_cells: str) -> str:
    (tmp_path / "train.ipynb").write_text(_notebook(FIT_CELL, "losses = fit(model, train_loader, criterion, optimizer)\n", *later_cells), encoding="utf-8")
    result = memlint("check", "--select", "ML001", "--fix", "--unsafe-fixes", "--no-cache", "train.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    nb = json.loads((tmp_path / "train.ipynb").read_text(encoding="utf-8"))
    return "".join(nb["cells"][0]["source"])


def test_a_later_cell_that_needs_tensors_gets_detach_not_item(tmp_path: Path):
    fixed = _fixed_cell(tmp_path, "print([l.item() for l in losses])\n")
    assert "losses.append(loss.detach())" in fixed


def test_without_such_a_cell_a_cpu_notebook_gets_item(tmp_path: Path):
    # the control: the same function, its result only printed, nothing on an accelerator
    fixed = _fixed_cell(tmp_path, "print(sum(losses) / len(losses))\n")
    assert "losses.append(loss.item())" in fixed


PROJECT = {
    "pkg/__init__.py": "",
    "pkg/base.py": """
        import torch
        from torch import nn
        class BaseNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)
            def forward(self, x):
                return self.fc(x)
        """,
    "pkg/helpers.py": """
        import torch
        import torch.nn.functional as F
        def compute_loss(model, x, y):
            return F.cross_entropy(model(x), y)
        def infer(model, x):
            return model(x)
        """,
    "pkg/train.py": """
        import torch
        from pkg.base import BaseNet
        from pkg.helpers import compute_loss, infer
        class Net(BaseNet):
            def fit(self, loader, optimizer):
                outs = []
                for x, y in loader:
                    optimizer.zero_grad()
                    out = self(x)
                    out.sum().backward()
                    optimizer.step()
                    outs.append(out)
                print(len(outs))
        def train(model, loader, optimizer):
            total = 0.0
            for x, y in loader:
                loss = compute_loss(model, x, y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += loss
            print(total)
        def predict(model, test_loader, device):
            preds = []
            with torch.no_grad():
                for x, _ in test_loader:
                    preds.append(infer(model, x.to(device)))
            return torch.cat(preds).cpu()
        """,
}


def test_the_other_files_of_a_project_show_bases_and_helpers(tmp_path: Path):
    for name, text in PROJECT.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    together = {(f["code"], f["location"]["row"]) for f in _findings(tmp_path, "pkg")}
    # `self(x)` of a class whose nn.Module base is in base.py; a loss and an output from helpers.py
    assert together == {("ML001", 12), ("ML001", 21), ("ML014", 27)}
    alone = {(f["code"], f["location"]["row"]) for f in _findings(tmp_path, "pkg/train.py")}
    # alone, train.py still proves the two ML001 values carry history by its own backward calls
    # (`out.sum().backward()`, `loss.backward()`: direct evidence, issue 27); that `infer` returns a
    # model's output only the project shows
    assert alone == {("ML001", 12), ("ML001", 21)}


def test_messages_say_which_case_and_what_grows(tmp_path: Path):
    (tmp_path / "loops.py").write_text(
        textwrap.dedent(
            """
            import torch
            def train(model, loader, criterion, optimizer, device):
                running, seen = 0.0, 0
                for x, y in loader:
                    x, y = x.to(device), y.to(device)
                    optimizer.zero_grad()
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
                    running += loss
                    seen += 1
                print(running / seen)
            def validate(model, val_loader, criterion):
                total = 0
                for x, y in val_loader:
                    total += criterion(model(x), y)
                print(total)
            """
        ).lstrip("\n"),
        encoding="utf-8",
    )
    found = {f["location"]["row"]: f for f in _findings(tmp_path, "loops.py", codes="ML001")}
    training, evaluation = found[10], found[16]
    assert "calls backward every step" in training["message"] and "on the host" in training["message"]
    assert "until it is reset" in training["message"]
    assert "never calls backward" in evaluation["message"] and "on the device" in evaluation["message"]
    # with an accelerator in the file, the fix adds no sync per step
    assert training["fix"]["edits"][0]["content"] == ".detach()"
    assert "no sync per step" in training["fix"]["message"]


FORMS = """
import torch
import torch.nn.functional as F

class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0, 0
    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

def train(model, loader, optimizer):
    smooth = None
    running_loss, seen = 0.0, 0
    history = {"loss": []}
    meter = AverageMeter()
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        smooth = loss if smooth is None else 0.98 * smooth + 0.02 * loss
        running_loss += loss * x.size(0)
        seen += x.size(0)
        history["loss"].extend([loss])
        meter.update(loss, x.size(0))
    print(smooth, running_loss / seen, history, meter.sum)

def validate(model, val_loader):
    losses = [F.cross_entropy(model(x), y) for x, y in val_loader]
    step, total = 0, 0.0
    it = iter(val_loader)
    while step < 10:
        x, y = next(it)
        total = total + F.cross_entropy(model(x), y)
        step += 1
    print(sum(losses), total)
"""


def test_every_form_is_found_and_fixing_leaves_nothing(tmp_path: Path):
    path = tmp_path / "forms.py"
    path.write_text(FORMS.lstrip("\n"), encoding="utf-8")
    rows = sorted(f["location"]["row"] for f in _findings(tmp_path, "forms.py", codes="ML001"))
    assert rows == [21, 22, 24, 25, 29, 34]  # EMA, tuple start, extend, meter, comprehension, while
    result = memlint("check", "--select", "ML001", "--fix", "--unsafe-fixes", "--no-cache", "forms.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    fixed = path.read_text(encoding="utf-8")
    compile(fixed, "forms.py", "exec")
    assert "0.02 * loss.item()" in fixed and "history[\"loss\"].extend([loss.detach()])" in fixed
    assert _findings(tmp_path, "forms.py", codes="ML001") == []
