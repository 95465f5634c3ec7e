"""The inventory of nn.Module classes does not depend on which rule asked first.

A notebook read as one module evaluates a model in an early cell and imports `torch.nn` only in a
later one, above a class of its own.  ML002 asks the inventory at the early cell, where `nn` is not
yet bound; ML003 asks it in the class's `forward`.  The inventory is rebuilt once more module-level
imports are seen (context.module_imports), so ML003 sees the class whichever rule ran."""

from __future__ import annotations

from memlint import api

SOURCE = """import torch
from models import Model
model = Model()
model.eval()
y = model.sample(torch.randn(2, 4))
import torch.nn as nn
import torch.nn.functional as F
class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3)
    def forward(self, x):
        x = F.relu(self.conv(x))
        return x.mean()
"""


def _ml003_rows(select: list[str]) -> list[int]:
    return [d.location.row for d in api.lint_source(SOURCE, "notebook.py", select=select) if d.code == "ML003"]


def test_ml003_sees_a_class_defined_after_a_late_import_whichever_rule_asked_first():
    assert _ml003_rows(["ML003"]) == [13]
    assert _ml003_rows(["ML002", "ML003"]) == [13]
