"""Reading Python source the way Python does: BOM and coding cookie honoured, newlines untouched."""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass


class UndecodableSource(Exception):
    """The bytes are not Python source text; the message says why."""


@dataclass(frozen=True)
class DecodedSource:
    text: str
    encoding: str  # "utf-8-sig" when the file starts with a BOM, so encoding back restores it

    def encode(self, text: str) -> bytes:
        return text.encode(self.encoding)


def decode(data: bytes) -> DecodedSource:
    if b"\x00" in data:
        raise UndecodableSource("source contains NUL bytes (a binary file?)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:  # an unknown or inconsistent coding cookie
        raise UndecodableSource(str(error)) from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as error:
        raise UndecodableSource(f"cannot decode as {encoding}: {error}") from None
    return DecodedSource(text, encoding)
