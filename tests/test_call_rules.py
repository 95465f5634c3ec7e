"""The one definition of what a call returns (memlint/analysis/call_rules.py), which values.py, the
project pass's summaries and the screens read."""

from __future__ import annotations

import pytest

from memlint.analysis import call_rules


@pytest.mark.parametrize(
    "qualified, kind",
    [
        ("torch.nn.Linear", call_rules.MODULE),
        ("torch.nn.CrossEntropyLoss", call_rules.MODULE),
        ("torch.nn.functional.cross_entropy", call_rules.LOSS),
        ("torch.nn.functional.relu", call_rules.ARGUMENTS),
        ("torch.cat", call_rules.ARGUMENTS),
        ("torch.zeros", call_rules.FRESH),
        ("torch.FloatTensor", call_rules.FRESH),
        ("torch.argmax", call_rules.FRESH),
        ("torch.cuda.empty_cache", None),
        ("torchvision.models.resnet50", None),
        ("numpy.mean", None),
    ],
)
def test_torch_call(qualified: str, kind) -> None:
    assert call_rules.torch_call(qualified) == kind


def test_names_taken_for_a_model_or_a_loss() -> None:
    assert call_rules.named_like_model_or_loss("model")
    assert call_rules.named_like_model_or_loss("criterion")
    assert not call_rules.named_like_model_or_loss("helper")
    assert call_rules.is_loss_name("loss_fn") and not call_rules.is_loss_name("model")
