"""ML100 unused-suppression."""

from __future__ import annotations

from memlint.diagnostics import Severity
from memlint.rule import Invalid, Rule, Valid
from memlint.rules.ml100_unused_suppression.meta import META

_ML001 = {"extend-select": ["ML001"]}  # the examples judge suppressions of ML001


class UnusedSuppression(Rule):
    """
    ## What it does
    Finds memlint codes in suppression comments that suppress nothing. The comments are
    `# noqa: ML001`, `# memlint: ignore[ML001]` and `# memlint: ignore-file[ML001]`; a code in one
    suppresses nothing when its rule ran on the file and reported nothing on that line (in that
    file, for `ignore-file`), or when it is not a rule of memlint.

    Only what memlint can judge is reported: a code of a rule that did not run on the file (not
    selected, or ignored for it) may be needed by another run and is left alone; a bare `# noqa` and
    other tools' codes in a `# noqa` list belong to other linters too.

    ## Why is this bad?
    A suppression outlives the code it was written for: after a refactor it silences nothing today,
    but it will silence the next real finding on that line, unseen. A misspelt code (`ML01`,
    `ML0001`) never suppressed anything.

    ## Example
    ```python
    total += loss.item()  # noqa: ML001
    ```

    ## Use instead
    ```python
    total += loss.item()
    ```

    ## Fix safety
    Safe: the fix removes the unused codes from the list, or the whole comment when no code is left
    (its line, when the comment stood alone). A comment that goes on after the directive
    (`# noqa: ML001 kept for the old loader`) gets no fix, since the rest of it would become code.
    Off by default, as Ruff's RUF100: turn it on with `extend-select = ["ML100"]`.

    ## Measured effect
    None on memory by itself: it keeps the suppressions of the other rules honest.
    """

    meta = META
    severity = Severity.INFO
    fix_safety = "safe"

    VALID = [
        Valid(  # the suppression is used
            """
import torch
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    total += loss  # noqa: ML001
""",
            config=_ML001,
        ),
        Valid(  # the code of a rule that did not run: another run may need it
            """
import torch
model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())  # noqa: ML003
""",
            config=_ML001,
        ),
        Valid(  # a bare noqa and other tools' codes are not memlint's to judge
            """
import os  # noqa
import sys  # noqa: F401, E402
""",
            config=_ML001,
        ),
        Valid(  # in a string, not a comment
            """
text = "total += loss  # noqa: ML001"
""",
            config=_ML001,
        ),
        Valid(  # used by a file-wide suppression
            """
# memlint: ignore-file[ML001]
import torch
total = 0.0
for x, y in loader:
    total += criterion(model(x), y)
""",
            config=_ML001,
        ),
    ]

    INVALID = [
        Invalid(  # the finding went away: the comment goes with it
            """
import torch
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    total += loss.item()  # noqa: ML001
""",
            line=5,
            column=27,
            message="ML001 reports nothing on this line",
            config=_ML001,
            fixed="""
import torch
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    total += loss.item()
""",
        ),
        Invalid(  # other tools' codes stay
            """
import torch
total = 0.0
for x, y in loader:
    total += criterion(model(x), y).item()  # noqa: E501, ML001
""",
            line=4,
            column=45,
            config=_ML001,
            fixed="""
import torch
total = 0.0
for x, y in loader:
    total += criterion(model(x), y).item()  # noqa: E501
""",
        ),
        Invalid(  # a code memlint does not have, in a file without torch
            """
import numpy as np
x = np.zeros(3)  # memlint: ignore[ML01]
""",
            line=2,
            column=18,
            message="ML01 is not a rule of memlint",
            config=_ML001,
            fixed="""
import numpy as np
x = np.zeros(3)
""",
        ),
        Invalid(  # a file-wide suppression of a rule with no finding in the file: its line goes
            """
# memlint: ignore-file[ML001]
import torch
total = 0.0
for x, y in loader:
    total += criterion(model(x), y).item()
""",
            line=1,
            column=1,
            message="ML001 reports nothing in this file",
            config=_ML001,
            fixed="""
import torch
total = 0.0
for x, y in loader:
    total += criterion(model(x), y).item()
""",
        ),
    ]
