"""Tokenizer behaviour beyond parity: special tokens, errors, pieces, and the pattern translation."""

from __future__ import annotations

import pytest
import regex

from tokscope.core import DisallowedSpecialError, Tokenizer, UnknownTokenError
from tokscope.core.tokenizer import tokenizer as tokmod
from tokscope.core.patterns import tiktoken_syntax as patmod
from tokscope.core.patterns.tiktoken_syntax import ascii_pattern, compile_pattern, translate_pattern


def test_special_tokens_semantics(load):
    tok = load("cl100k_base")
    eot = tok.special_tokens["<|endoftext|>"]
    with pytest.raises(DisallowedSpecialError) as info:
        tok.encode("x<|endoftext|>")
    assert "allowed_special" in str(info.value) and "\n" not in str(info.value)
    assert tok.encode("x<|endoftext|>", allowed_special="all")[-1] == eot
    assert tok.encode("x<|endoftext|>", allowed_special={"<|endoftext|>"})[-1] == eot
    assert eot not in tok.encode("x<|endoftext|>", disallowed_special=())
    with pytest.raises(DisallowedSpecialError):  # allowing one special does not allow another
        tok.encode("<|fim_prefix|><|endoftext|>", allowed_special={"<|endoftext|>"})
    # as in tiktoken, a string that is not a special token of this encoding is ignored when
    # allowed (one allowed set can serve several encodings), and looked for when disallowed
    from tokscope.sources.tiktoken_adapter import reference_for

    ref = reference_for(tok)
    assert tok.encode("x<|nope|>", allowed_special={"<|nope|>"}) == ref.encode("x<|nope|>", allowed_special={"<|nope|>"})
    assert tok.encode("x<|endoftext|>", allowed_special={"<|endoftext|>", "<|im_start|>"})[-1] == eot
    with pytest.raises(DisallowedSpecialError):
        tok.encode("x<|nope|>", disallowed_special={"<|nope|>"})
    with pytest.raises(ValueError):
        ref.encode("x<|nope|>", disallowed_special={"<|nope|>"})
    assert tok.encode_ordinary("<|endoftext|>") == tok.encode("<|endoftext|>", disallowed_special=())


def test_unknown_ids_and_tokens(load):
    tok = load("gpt2")
    with pytest.raises(UnknownTokenError, match="123456"):
        tok.decode([1, 123456])
    with pytest.raises(UnknownTokenError):
        tok.token_bytes(-1)
    assert tok.token(50256).special and tok.token(50256).rank is None
    assert tok.token(15496).bytes == b"Hello" and tok.token(15496).rank == 15496


def test_partial_pieces_share_the_character(load):
    tok = load("cl100k_base")
    text = "a🦜b"
    pieces = tok.pieces(text)
    partial = [p for p in pieces if p.partial]
    assert partial, "the parrot emoji is several tokens in cl100k_base"
    for p in partial:
        assert (p.start, p.end) == (1, 2)
    assert b"".join(p.bytes for p in pieces) == text.encode()


def test_chunks_with_special_tokens(load):
    tok = load("o200k_base")
    chunks = tok.chunks("hi<|endoftext|> there", allowed_special="all")
    assert [c.special for c in chunks] == [False, True, False]
    assert "".join(c.text for c in chunks) == "hi<|endoftext|> there"


def test_dollar_is_end_of_text():
    assert translate_pattern(r"\s++$", pin_unicode=False)[0] == r"\s++\Z"
    assert translate_pattern(r"[$]|\$", pin_unicode=False)[0] == r"[$]|\$"


def test_ascii_twin_matches_on_ascii_text(load):
    for name in ["gpt2", "cl100k_base", "o200k_base"]:
        pat = compile_pattern(load(name).pattern)
        assert pat.ascii is not None
        text = "Hello  World's 'LL 12345 x86_64\n\n  foo/bar\r\n\t end   "
        assert pat.ascii.findall(text) == pat.plain.findall(text)
    assert ascii_pattern(r"\p{Han}") is None


def test_segments_rejoin(load):
    pat = compile_pattern(load("o200k_base").pattern)
    assert pat.line_safe and not compile_pattern(load("gpt2").pattern).line_safe
    text = "def f():\n    return 1\n\nclass A:\n  x\n/y\n"
    segs = pat.segments(text)
    assert "".join(segs) == text and len(segs) == 2


def test_segment_cache_is_bounded(monkeypatch, load):
    base = load("o200k_base")
    tok = Tokenizer(base.name, base.ranks, base.pattern)
    monkeypatch.setattr(tokmod, "SEGMENT_CACHE_CHARS", 1000)
    text = "".join(f"line {i}\n" for i in range(2000))
    assert tok.encode_ordinary(text) == base.encode_ordinary(text)
    assert tok._segment_cache_chars <= 1000 + 20


def _probe_chunks(tok_pattern: str, cps: list[int]) -> str:
    return "".join("a" + chr(c) for c in cps)


def test_pinned_unicode_classes_match_tiktoken():
    """For every code point whose category moved between Unicode 14 and 18, and every property the
    OpenAI patterns use, the core's class membership is tiktoken's (probed through encode)."""
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {bytes([i]): i for i in range(256)}
    for lead in range(256):
        ranks[b"a" + bytes([lead])] = 256 + lead
    cps = sorted(patmod._pinned_table())
    text = "".join("a" + chr(c) for c in cps)
    for cls in [r"\p{L}", r"\p{N}",
                r"[^\r\n\p{L}\p{N}]", r"[^\s\p{L}\p{N}]", r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"]:
        pattern = "a(?:" + cls + r")|(?s:.)"
        ref = tiktoken.Encoding("probe", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
        core = Tokenizer("probe", ranks, pattern)
        assert core.encode_ordinary(text) == ref.encode_ordinary(text), cls


def test_pinning_changes_only_moved_code_points():
    pinned, suspects = translate_pattern(r"\p{L}+")
    assert suspects <= set(patmod._pinned_table())
    if suspects:  # the installed regex follows a newer Unicode than tiktoken's engine
        assert regex.fullmatch(pinned, "Hello") and regex.fullmatch(pinned, "ʕ")
