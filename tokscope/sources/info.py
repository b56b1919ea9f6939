"""What a listing of encodings says about each one."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class EncodingInfo:
    """One encoding a user can pick: ``kind`` is ``builtin`` or ``saved``; ``source`` is the origin
    kind (``tiktoken-cache``, ``carrier``, ``file`` or ``missing``) and ``detail`` says more."""

    name: str
    n_vocab: int | None
    kind: str
    source: str
    detail: str
    available: bool
