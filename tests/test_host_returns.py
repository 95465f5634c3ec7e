"""The summaries' `fresh` fact (memlint/analysis/host_returns.py): a function whose every return is a
tensor it has just made on the host, and none that may return a tensor on the device."""

from __future__ import annotations

import textwrap

import pytest

from memlint.analysis.summaries import summarize
from memlint.prescreen import Source

FRESH = {
    "through a local name, a triangle, a cast and a comparison": """
        def f(n):
            mask = torch.triu(torch.ones((1, n, n)), diagonal=1).type(torch.int)
            return mask == 0
    """,
    "a reshape and arithmetic with a number": "def f(n):\n    return torch.arange(n).view(-1, 1).float() / 2\n",
    "every branch fresh": "def f(n, square):\n    if square:\n        return torch.zeros(n, n)\n    return torch.zeros(n)\n",
    "through an import alias": "import torch as T\ndef f(n):\n    return T.randn(n).tril()\n",
    "an index of it (a one-hot embedding)": "def f(labels, n):\n    y = torch.eye(n)\n    return y[labels]\n",
    "elementwise functions and a parameter defaulting to a number": """
        def f(shape, eps=1e-10):
            u = torch.rand(shape).float()
            return - torch.log(eps - torch.log(u + eps))
    """,
}
NOT_FRESH = {
    "made on the device": "def f(n, device):\n    return torch.ones(n, device=device)\n",
    "keywords that may hold a device": "def f(n, **kw):\n    return torch.ones(n, **kw)\n",
    "moved in one branch": "def f(n, device=None):\n    m = torch.ones(n)\n    if device is not None:\n        m = m.to(device)\n    return m\n",
    "a parameter in one branch": "def f(n, cache):\n    if n in cache:\n        return cache[n]\n    return torch.ones(n)\n",
    "a data constructor": "def f(rows):\n    return torch.tensor(rows)\n",
    "not torch's": "from mylib import ones\ndef f(n):\n    return ones(n)\n",
    "a generator": "def f(n):\n    yield torch.ones(n)\n",
    "a method": "class A:\n    def f(self, n):\n        return torch.ones(n)\n",
    "an index of a parameter": "def f(table, labels):\n    return table[labels]\n",
    "arithmetic with a parameter without a number default": "def f(shape, scale):\n    return torch.rand(shape) * scale\n",
    "a parameter defaulting to a number, rebound": "def f(shape, eps=1e-10):\n    eps = eps.cuda()\n    return torch.rand(shape) + eps\n",
    "an elementwise function with keywords": "def f(n, out):\n    return torch.log(torch.rand(n), out=out)\n",
}


def _fresh(code: str, key: str = "f") -> bool:
    text = "import torch\n" + textwrap.dedent(code).lstrip("\n")
    summary = summarize(Source(text))
    assert summary is not None
    return bool(summary["functions"].get(key, {}).get("fresh"))


@pytest.mark.parametrize("name", sorted(FRESH))
def test_fresh_host_tensors(name):
    assert _fresh(FRESH[name]), name


@pytest.mark.parametrize("name", sorted(NOT_FRESH))
def test_not_fresh(name):
    assert not _fresh(NOT_FRESH[name]) and not _fresh(NOT_FRESH[name], "A.f"), name
