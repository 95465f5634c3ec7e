"""literal_tests: which if-tests a helper's literal arguments decide."""

import libcst as cst
import pytest

from memlint.analysis.literal_tests import literal_key, outcome_of_test as outcome


def known(**values):
    return {name: literal_key(cst.parse_expression(code)) for name, code in values.items()}


@pytest.mark.parametrize(
    "test, values, expected",
    [
        ("phase == 'train'", {"phase": "'val'"}, False),
        ("phase == 'train'", {"phase": '"train"'}, True),
        ("'train' == phase", {"phase": "'val'"}, False),
        ("phase != 'train'", {"phase": "'val'"}, True),
        ("not phase == 'train'", {"phase": "'val'"}, True),
        ("phase in ('train', 'finetune')", {"phase": "'finetune'"}, True),
        ("phase in ['train']", {"phase": "'val'"}, False),
        ("phase not in ('val', 'test')", {"phase": "'val'"}, False),
        ("cross_valid", {"cross_valid": "True"}, True),
        ("not cross_valid", {"cross_valid": "True"}, False),
        ("mode == 2", {"mode": "2"}, True),
        ("mode == 2", {"mode": "0x2"}, True),
    ],
)
def test_decided(test, values, expected):
    assert outcome(cst.parse_expression(test), known(**values)) is expected


@pytest.mark.parametrize(
    "test, values",
    [
        ("phase == False", {"phase": "0"}),  # `0 == False` holds: kinds are never mixed
        ("phase == 'train'", {"phase": "None"}),
        ("phase", {"phase": "'val'"}),  # a string's truth is not decided
        ("phase == other", {"phase": "'val'"}),
        ("phase in modes", {"phase": "'val'"}),
        ("phase in ('train', 1)", {"phase": "'val'"}),
        ("phase is None", {"phase": "None"}),
        ("other == 'train'", {"phase": "'val'"}),
        ("phase == 'train' and step > 0", {"phase": "'val'"}),
    ],
)
def test_unknown(test, values):
    assert outcome(cst.parse_expression(test), known(**values)) is None


def test_literal_keys():
    assert literal_key(cst.parse_expression("'a'")) == literal_key(cst.parse_expression('"a"'))
    assert literal_key(cst.parse_expression("1.0")) is None
    assert literal_key(cst.parse_expression("f'{x}'")) is None
    assert literal_key(cst.parse_expression("x")) is None
