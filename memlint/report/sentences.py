"""The first sentence of a piece of rule documentation, for one-line listings (`memlint rules`, SARIF
short descriptions). A listing must never stop mid-sentence, so a full stop counts as the end of a
sentence only outside inline code and when it is not an ellipsis or an abbreviation."""

from __future__ import annotations

# Abbreviations whose full stop does not end a sentence (compared in lower case).
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.")


def _ends_sentence(text: str, index: int) -> bool:
    """Whether the `.`, `!` or `?` at `index` (outside backticks) ends a sentence."""
    if index + 1 < len(text) and not text[index + 1].isspace():
        return False  # `3.5`, `torch.float16`, a file name
    if text[index] == "." and (text[index - 1 : index] == "." or text[index + 1 : index + 2] == "."):
        return False  # an ellipsis: "`nn.SiLU()`, ... with"
    word = text[: index + 1].rsplit(None, 1)[-1].lstrip("(").lower()
    return word not in _ABBREVIATIONS


def first_sentence(paragraph: str) -> str:
    """The paragraph's first sentence without its full stop. A sentence that introduces a list
    (`... is provably safe:` followed by items) ends at its colon, which is dropped too."""
    text = " ".join(paragraph.split())
    in_code = False
    for index, char in enumerate(text):
        if char == "`":
            in_code = not in_code
        elif not in_code and char in ".!?" and _ends_sentence(text, index):
            return text[: index + (char != ".")].rstrip()
    return text.rstrip(" .:;")
