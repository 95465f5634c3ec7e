"""ACME001: `torch.load` without `map_location` puts every tensor back on the device it was saved from."""

from __future__ import annotations

import libcst as cst

from memlint.rule import Invalid, Rule, Valid


class LoadWithoutMapLocation(Rule):
    """
    ## What it does
    Finds `torch.load(...)` calls without a `map_location`.

    ## Why is this bad?
    A checkpoint saved from a GPU is loaded back onto that GPU, all of it, before any of it is used:
    on a smaller card, or beside a model already there, that is an out-of-memory error or a second
    copy of the weights. `map_location="cpu"` loads to host memory first.

    ## Example
    ```python
    state = torch.load("model.pt")
    ```

    ## Use instead
    ```python
    state = torch.load("model.pt", map_location="cpu")
    ```
    """

    code = "ACME001"
    name = "load-without-map-location"

    VALID = [Valid('import torch\nstate = torch.load("model.pt", map_location="cpu")\n')]
    INVALID = [Invalid('import torch\nstate = torch.load("model.pt")\n', line=2, column=9)]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.resolve(node.func) != "torch.load":
            return
        if any(arg.keyword is not None and arg.keyword.value == "map_location" for arg in node.args):
            return
        if len(node.args) >= 2 and all(arg.keyword is None for arg in node.args[:2]):
            return  # given positionally: torch.load(f, map_location)
        self.report(node, "`torch.load` without `map_location` loads every tensor onto the device it was saved from")
