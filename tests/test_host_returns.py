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
    "in-place fills with numbers": "def f(n):\n    m = torch.empty(n)\n    m.fill_(1.0)\n    m.zero_()\n    return m\n",
    "an index of it (a one-hot embedding)": "def f(labels, n):\n    y = torch.eye(n)\n    return y[labels]\n",
    "elementwise functions and a parameter defaulting to a number": """
        def f(shape, eps=1e-10):
            u = torch.rand(shape).float()
            return - torch.log(eps - torch.log(u + eps))
    """,
}
# (key, code): methods, and helpers of the file that return a reshape of their argument
FRESH_KEYED = {
    "a method": ("A.f", "class A:\n    def f(self, n):\n        return torch.ones(n)\n"),
    "straight-line rebindings and the difference of two host tensors": ("f", """
        def f(n):
            m = torch.arange(n)
            m = m.view(-1, 1)
            m = m.unsqueeze(1) - m.unsqueeze(2)
            return m
    """),
    "number fills of fixed slices, a reshaping helper and masked fills (a Swin window mask)": ("A.mask", """
        def split(x, size):
            b, h, w, c = x.shape
            x = x.view(b, h // size, size, w // size, size, c)
            return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, size, size, c)
        class A:
            def mask(self, h, w):
                grid = torch.zeros((1, h, w, 1))
                bands = (slice(0, -self.size), slice(-self.size, None))
                count = 0
                for rows in bands:
                    for cols in bands:
                        grid[:, rows, cols, :] = count
                        count += 1
                parts = split(grid, self.size)
                parts = parts.view(-1, self.size * self.size)
                mask = parts.unsqueeze(1) - parts.unsqueeze(2)
                mask = mask.masked_fill(mask != 0, float(-100.0)).masked_fill(mask == 0, float(0.0))
                return mask
    """),
}
NOT_FRESH = {
    "made on the device": "def f(n, device):\n    return torch.ones(n, device=device)\n",
    "keywords that may hold a device": "def f(n, **kw):\n    return torch.ones(n, **kw)\n",
    "moved in one branch": "def f(n, device=None):\n    m = torch.ones(n)\n    if device is not None:\n        m = m.to(device)\n    return m\n",
    "a parameter in one branch": "def f(n, cache):\n    if n in cache:\n        return cache[n]\n    return torch.ones(n)\n",
    "a data constructor": "def f(rows):\n    return torch.tensor(rows)\n",
    "not torch's": "from mylib import ones\ndef f(n):\n    return ones(n)\n",
    "a generator": "def f(n):\n    yield torch.ones(n)\n",
    "an index of a parameter": "def f(table, labels):\n    return table[labels]\n",
    "arithmetic with a parameter without a number default": "def f(shape, scale):\n    return torch.rand(shape) * scale\n",
    "a parameter defaulting to a number, rebound": "def f(shape, eps=1e-10):\n    eps = eps.cuda()\n    return torch.rand(shape) + eps\n",
    "an elementwise function with keywords": "def f(n, out):\n    return torch.log(torch.rand(n), out=out)\n",
    "data written into it": "def f(labels, n):\n    m = torch.zeros(len(labels), n)\n    m[labels] = 1\n    return m\n",
    "a parameter written into it": "def f(v, n):\n    m = torch.zeros(n, 4)\n    m[:, 0:2] = v\n    return m\n",
    "a counter started from data": "def f(x, n):\n    m = torch.zeros(n)\n    c = x[0]\n    for s in (slice(0, 1),):\n        m[s] = c\n    return m\n",
    "rebound in a branch": "def f(n, flip):\n    m = torch.ones(n)\n    if flip:\n        m = -m\n    m = m.view(-1)\n    return m\n",
    "a helper that moves its argument": "def g(x):\n    return x.cuda()\ndef f(n):\n    return g(torch.zeros(n))\n",
    "a helper that reshapes a parameter rebound in a branch": (
        "def g(x, d=None):\n    if d:\n        x = x.to(d)\n    return x.view(-1)\ndef f(n):\n    return g(torch.zeros(n))\n"
    ),
    "data written in by an in-place method": "def f(labels, n):\n    m = torch.zeros(len(labels), n)\n    m.scatter_(1, labels.view(-1, 1), 1)\n    return m\n",
    "a tensor copied in, then reshaped": "def f(v, n):\n    m = torch.zeros(n, 4)\n    m.copy_(v)\n    m = m.view(-1)\n    return m\n",
    "a fill with a tensor": "def f(v, n):\n    m = torch.zeros(n)\n    m.fill_(v)\n    return m\n",
    "a decorated function (a cache)": "import functools\n@functools.lru_cache()\ndef f(n):\n    return torch.ones(n)\n",
    "more number fills than are read": "def f(n):\n    m = torch.zeros(n)\n" + "".join(f"    m[{i}] = {i}\n" for i in range(5)) + "    return m\n",
    "a masked fill with a tensor": "def f(n, v):\n    m = torch.zeros(n)\n    return m.masked_fill(m == 0, v)\n",
}


def _fresh(code: str, key: str = "f") -> bool:
    text = "import torch\n" + textwrap.dedent(code).lstrip("\n")
    summary = summarize(Source(text))
    assert summary is not None
    return bool(summary["functions"].get(key, {}).get("fresh"))


@pytest.mark.parametrize("name", sorted(FRESH))
def test_fresh_host_tensors(name):
    assert _fresh(FRESH[name]), name


@pytest.mark.parametrize("name", sorted(FRESH_KEYED))
def test_fresh_methods_and_straight_code(name):
    key, code = FRESH_KEYED[name]
    assert _fresh(code, key), name


@pytest.mark.parametrize("name", sorted(NOT_FRESH))
def test_not_fresh(name):
    assert not _fresh(NOT_FRESH[name]) and not _fresh(NOT_FRESH[name], "A.f"), name
