"""``tokscope encode [-e NAME] [TEXT | -f FILE] [--json] [--max-rank N] [--add-special-tokens]``:
text into token ids.

``encode`` streams: the ids of plain output, and the tokens of ``--json`` (in batches from
:func:`tokscope.core.document.streaming.iter_pieces`), are written as they are made, so a big input costs
the text and its ids, not millions of objects at once. ``--json`` therefore writes ``count`` after
``tokens``. ``--max-rank N`` is the rank cut-off (byte-level BPE from ranks; see ``explain``).

Offsets are the model's, as Hugging Face's ``tokenizers`` reports them
(:meth:`~tokscope.core.tokenizer.tokenizer.Tokenizer.model_offsets`): a file whose post-processor
trims offsets (``trim_offsets``) has its tokens' ``start``/``end`` without their spaces, and
such a token also gives ``piece_start``/``piece_end``, the characters its bytes cover. A token
of whole characters that shares characters of the text with its neighbours (``ⅷ`` is ``v`` ``ii``
under NFKC) has ``"shares": true`` and its own text; its offsets are the shared characters'.
SentencePiece models give each token's piece ``type`` and GGUF files its ``gguf_type``.
``--add-special-tokens`` applies the file's template, truncation and padding as the library's
``encode`` does (:meth:`~tokscope.core.tokenizer.tokenizer.Tokenizer.arrange`); then the whole
text's pieces are gathered before they are written.
"""

from __future__ import annotations

import argparse
import sys

from ..core.text.measure import utf8_len
from .common import add_encoding_option, add_input_options, add_special_options, encode_args, json_text, load_encoding, note, note_unknown_specials, piece_json, read_text, special_hint


#: ids written per line-buffer flush of plain ``encode``
ID_BATCH = 1 << 14


def cmd_encode(args: argparse.Namespace) -> int:
    from ..core.document.streaming import iter_pieces

    from .truncate import check_truncate_options, cut_input

    check_truncate_options(args)
    from ..sources.model_files import notes_of

    tokenizer = load_encoding(args.encoding)
    for line in notes_of(tokenizer):  # e.g. a GGUF file's default pre-tokenizer
        note(line)
    max_rank = getattr(args, "max_rank", None)
    write = sys.stdout.write
    # the template's tokens (BOS/EOS, [CLS]/[SEP]) around the text's own, as tokenizers does by default
    prefix, suffix = tokenizer.template() if args.add_special_tokens else ((), ())
    settings = _batch_settings(tokenizer)
    if settings and not args.add_special_tokens:
        note(f"the file's {settings} apply only with --add-special-tokens (as the template does)")
    if args.truncate is not None:  # read only what the cut needs (truncate.cut_input)
        cut = cut_input(tokenizer, args.truncate, args)
        if not args.json:
            _write_ids([*prefix, *cut.ids, *suffix])
            return 0
        text = cut.text
    else:
        text = read_text(args)
        note_unknown_specials(tokenizer, args)
    with special_hint():
        if args.json:
            batches = iter_pieces(tokenizer, text, max_rank=max_rank, **encode_args(args))
            first = next(batches, [])  # a refused special token raises here, before any output
            if args.add_special_tokens and settings:
                rows = _arranged_json(tokenizer, text, [p for batch in _chain(first, batches) for p in batch])
                write('{"encoding":' + json_text(tokenizer.name) + ',"tokens":' + json_text(rows)
                      + f',"count":{len(rows)}}}\n')
                return 0
            write('{"encoding":' + json_text(tokenizer.name) + ',"tokens":[')
            count = 0
            if prefix:
                write(json_text(_typed(tokenizer, [_template_json(tokenizer, t, 0, 0) for t in prefix]))[1:-1])
                count += len(prefix)
            last: tuple[int, int] = (0, 0)
            seen = 0  # the text's tokens written so far (the model's offsets count from the first)
            for batch in _chain(first, batches):
                if batch:  # one JSON encoding per batch (the C encoder), without its brackets
                    rows = _pieces_json(tokenizer, text, batch, seen, args.add_special_tokens)
                    write(("," if count else "") + json_text(rows)[1:-1])
                    count += len(batch)
                    seen += len(batch)
                    last = (batch[-1].end, batch[-1].byte_end)
            if suffix:
                end, byte_end = max(last[0], len(text)), max(last[1], utf8_len(text))
                write(("," if count else "") + json_text(_typed(tokenizer, [_template_json(tokenizer, t, end, byte_end)
                                                                          for t in suffix]))[1:-1])
                count += len(suffix)
            write(f'],"count":{count}}}\n')
            return 0
        extra = {"max_rank": max_rank} if max_rank is not None else {}
        ids = tokenizer.encode(text, **encode_args(args), **extra, add_special_tokens=args.add_special_tokens)
    del text
    _write_ids(ids)
    return 0


def _batch_settings(tokenizer) -> str:
    """The file's truncation and padding in words (``""`` when it sets neither)."""
    parts = []
    if tokenizer.truncation is not None:
        t = tokenizer.truncation
        parts.append(f"truncation (max_length {t.max_length}, {t.direction})")
    if tokenizer.padding is not None:
        p = tokenizer.padding
        parts.append(f"padding ({'to ' + str(p.fixed) if p.fixed is not None else 'BatchLongest'}, {p.direction})")
    return " and ".join(parts)


def _pieces_json(tokenizer, text: str, pieces: list, first: int, add_special_tokens: bool) -> list[dict]:
    """The pieces as ``encode --json`` writes them, with the model's offsets (``first``: the
    index of the first of them among the text's tokens). Byte-level BPE from ranks, whose pieces
    tile the text's bytes and are never trimmed, pays for none of the extras."""
    rows = [piece_json(p) for p in pieces]
    if tokenizer.trim_steps:
        spans = tokenizer.model_offsets(text, pieces, first, add_special_tokens=add_special_tokens)
        for row, p, span in zip(rows, pieces, spans):
            _with_model_span(row, text, p, span)
    if not tokenizer.pieces_tile_bytes:
        from ..core.tokenizer.tokenizer import shares_characters

        for row, p in zip(rows, pieces):
            if p.partial and shares_characters(p):
                _shared(row)
        if pieces and (tokenizer.piece_type(pieces[0].id) is not None or _gguf_facts(tokenizer) is not None):
            _add_types(tokenizer, rows)
    return rows


def _shared(row: dict) -> None:
    """A piece of whole characters that shares characters of the text with its neighbours (the
    ``v`` and ``ii`` NFKC makes of ``ⅷ``): not ``partial`` (its bytes are whole), ``"shares": true``,
    and its own text (the model's), with the shared characters' offsets."""
    row["partial"] = False
    row["shares"] = True


def _typed(tokenizer, rows: list[dict]) -> list[dict]:
    """Template or padding rows with their tokens' types, as the text's tokens have them."""
    if not tokenizer.pieces_tile_bytes and rows:
        if tokenizer.piece_type(rows[0]["id"]) is not None or _gguf_facts(tokenizer) is not None:
            _add_types(tokenizer, rows)
    return rows


def _gguf_facts(tokenizer):
    from ..sources.model_files import describe

    files = describe(tokenizer)
    return files.gguf if files is not None else None


def _add_types(tokenizer, rows: list[dict]) -> None:
    """A SentencePiece piece's ``type`` (normal, control, byte ...) and a GGUF token's
    ``gguf_type``, for the kinds that have them."""
    gguf = _gguf_facts(tokenizer)
    for row in rows:
        kind = tokenizer.piece_type(row["id"])
        if kind is not None:
            row["type"] = kind
        if gguf is not None:
            found = gguf.token_type(row["id"])
            if found is not None:
                row["gguf_type"] = found


def _with_model_span(row: dict, text: str, piece, span: tuple[int, int]) -> dict:
    """``row`` with the model's offsets as ``start``/``end`` (and their bytes) where they are not
    the piece's span, which moves to ``piece_start``/``piece_end``."""
    start, end = span
    if (start, end) == (piece.start, piece.end):
        return row
    lead = utf8_len(text[piece.start:start]) if start >= piece.start else 0
    tail = utf8_len(text[end:piece.end]) if end <= piece.end else 0
    byte_start = min(piece.byte_end, piece.byte_start + lead)
    row.update(start=start, end=end, byte_start=byte_start, byte_end=max(byte_start, piece.byte_end - tail),
               piece_start=piece.start, piece_end=piece.end)
    return row


def _arranged_json(tokenizer, text: str, pieces: list) -> list[dict]:
    """Every row of ``encode --json --add-special-tokens`` for a file with truncation or padding:
    the kept pieces, the template's tokens and the padding where the core arranges them."""
    rows = tokenizer.arrange(len(pieces))
    kept = [pieces[s] for s, _, _ in rows if s is not None]
    out = _pieces_json(tokenizer, text, kept, 0, True)
    shown: list[dict] = []
    k = 0
    at, byte_at = 0, 0
    for source, token_id, kind in rows:
        if source is not None:
            shown.append(out[k])
            at, byte_at = kept[k].end, kept[k].byte_end
            k += 1
        else:
            row = _template_json(tokenizer, token_id, at, byte_at)
            if kind == "padding":
                del row["template"]
                row["padding"] = True
            shown.append(_typed(tokenizer, [row])[0])
    return shown


def _template_json(tokenizer, token_id: int, at: int, byte_at: int) -> dict:
    """A template token in ``encode --json``: no text of its own, placed where it is added."""
    data = tokenizer.token_bytes(token_id)
    return {"id": token_id, "bytes": data.hex(), "text": data.decode("utf-8", "replace"), "start": at, "end": at,
            "byte_start": byte_at, "byte_end": byte_at, "partial": False, "special": tokenizer.is_special(token_id),
            "template": True}


def _write_ids(ids: list[int]) -> None:
    write = sys.stdout.write
    for k in range(0, len(ids), ID_BATCH):
        write((" " if k else "") + " ".join(map(str, ids[k : k + ID_BATCH])))
    write("\n")


def _chain(first, rest):
    yield first
    yield from rest




def register(sub: argparse._SubParsersAction) -> None:
    from .common import MAX_RANK_HELP, non_negative
    from .truncate import add_truncate_options

    p = sub.add_parser("encode", help="encode text into token ids")
    add_encoding_option(p)
    add_input_options(p)
    add_special_options(p)
    p.add_argument("--json", action="store_true", help="print each token with its bytes and offsets as JSON")
    p.add_argument("--add-special-tokens", action="store_true",
                   help="add the tokens the model's template puts around a text (BOS/EOS, [CLS]/[SEP]) and apply "
                        "the file's truncation and padding, as Hugging Face's tokenizers does by default; without "
                        "it, the text's own tokens")
    add_truncate_options(p)
    p.add_argument("--max-rank", type=non_negative, metavar="N", help=MAX_RANK_HELP)
    p.set_defaults(func=cmd_encode)
