"""The core subcommands: ``encodings``, ``encode``, ``decode``.

``encode`` streams: the ids of plain output, and the tokens of ``--json`` (in batches from
:func:`tokscope.core.document.streaming.iter_pieces`), are written as they are made, so a big input costs
the text and its ids, not millions of objects at once. ``--json`` therefore writes ``count`` after
``tokens``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence

from ..core.text.display import safe_text
from ..core.text.measure import utf8_len
from .common import (
    UsageError,
    add_encoding_option,
    add_input_options,
    add_special_options,
    encode_args,
    json_text,
    load_encoding,
    note_unknown_specials,
    piece_json,
    print_json,
    read_text,
    special_hint,
    stdin_is_piped,
    write_exact,
)

#: ids written per line-buffer flush of plain ``encode``
ID_BATCH = 1 << 14


def cmd_encodings(args: argparse.Namespace) -> int:
    from ..sources.registry import list_encodings

    infos = list_encodings()
    if args.json:
        print_json({"encodings": [
            {"name": i.name, "n_vocab": i.n_vocab, "kind": i.kind, "source": i.source,
             "detail": i.detail, "available": i.available} for i in infos
        ]})
        return 0
    names = [safe_text(i.name) for i in infos]
    width = max(len(n) for n in names)
    for name, i in zip(names, infos):
        state = "available" if i.available else "MISSING"
        size = f"{i.n_vocab:>7,}" if i.n_vocab is not None else "      ?"
        print(f"{name:<{width}}  {size}  {state:<9}  {safe_text(i.source)}: {safe_text(i.detail)}")
    return 0


def cmd_encode(args: argparse.Namespace) -> int:
    from ..core.document.streaming import iter_pieces

    from .truncate import check_truncate_options, truncate_text

    check_truncate_options(args)
    tokenizer = load_encoding(args.encoding)
    text = read_text(args)
    max_rank = getattr(args, "max_rank", None)
    note_unknown_specials(tokenizer, args)
    write = sys.stdout.write
    # the template's tokens (BOS/EOS, [CLS]/[SEP]) around the text's own, as tokenizers does by default
    prefix, suffix = tokenizer.template() if args.add_special_tokens else ((), ())
    if args.truncate is not None:
        cut = truncate_text(tokenizer, text, args.truncate, args.from_end, args)
        if not args.json:
            _write_ids([*prefix, *cut.ids, *suffix])
            return 0
        text = cut.text
    with special_hint():
        if args.json:
            batches = iter_pieces(tokenizer, text, max_rank=max_rank, **encode_args(args))
            first = next(batches, [])  # a refused special token raises here, before any output
            write('{"encoding":' + json_text(tokenizer.name) + ',"tokens":[')
            count = 0
            if prefix:
                write(json_text([_template_json(tokenizer, t, 0, 0) for t in prefix])[1:-1])
                count += len(prefix)
            last: tuple[int, int] = (0, 0)
            for batch in _chain(first, batches):
                if batch:  # one JSON encoding per batch (the C encoder), without its brackets
                    write(("," if count else "") + json_text([piece_json(p) for p in batch])[1:-1])
                    count += len(batch)
                    last = (batch[-1].end, batch[-1].byte_end)
            if suffix:
                end, byte_end = max(last[0], len(text)), max(last[1], utf8_len(text))
                write(("," if count else "") + json_text([_template_json(tokenizer, t, end, byte_end) for t in suffix])[1:-1])
                count += len(suffix)
            write(f'],"count":{count}}}\n')
            return 0
        extra = {"max_rank": max_rank} if max_rank is not None else {}
        ids = tokenizer.encode(text, **encode_args(args), **extra)
    del text
    _write_ids([*prefix, *ids, *suffix] if prefix or suffix else ids)
    return 0


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


#: a token id as typed: ASCII digits only (int() would also take '١٢٣' or '1_0')
_ID = re.compile(r"[0-9]+")


def _parse_ids(words: Sequence[str]) -> list[int]:
    ids = []
    for word in words:
        for part in word.replace(",", " ").split():
            if _ID.fullmatch(part) is None:
                raise UsageError(f"not a token id: {safe_text(part[:40])!r} (ids are whole numbers, 0 or more)")
            if len(part) > 12:  # past any vocabulary (and past what int() reads at 4,300 digits)
                raise UsageError(f"not a token id: a number of {len(part):,} digits (ids are below 4,294,967,296)")
            ids.append(int(part))
    return ids


def cmd_decode(args: argparse.Namespace) -> int:
    from ..sources.text_input import read_input

    tokenizer = load_encoding(args.encoding)
    if args.ids:
        words = args.ids
    elif stdin_is_piped():
        words = [read_input(None, limit=args.max_bytes).text]
    else:
        raise UsageError("no ids: give IDs as arguments or on standard input")
    ids = _parse_ids(words)
    data = tokenizer.decode_bytes(ids)
    if args.json:
        print_json({"encoding": tokenizer.name, "text": data.decode("utf-8", errors="replace"), "bytes": data.hex(),
                    "count": len(ids)})
        return 0
    # on a terminal: the text with U+FFFD for bytes that are not UTF-8, controls shown inert; into a
    # pipe or a file: the exact bytes the tokens stand for
    write_exact(data)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from .common import add_max_bytes_option
    from .truncate import add_truncate_options

    p = sub.add_parser("encodings", help="list the encodings and where their files come from")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_encodings)

    p = sub.add_parser("encode", help="encode text into token ids")
    add_encoding_option(p)
    add_input_options(p)
    add_special_options(p)
    p.add_argument("--json", action="store_true", help="print each token with its bytes and offsets as JSON")
    p.add_argument("--add-special-tokens", action="store_true",
                   help="add the tokens the model's template puts around a text (BOS/EOS, [CLS]/[SEP]), as "
                        "Hugging Face's tokenizers does by default; without it, the text's own tokens")
    add_truncate_options(p)
    p.set_defaults(func=cmd_encode)

    p = sub.add_parser(
        "decode", help="decode token ids into text",
        description="Decode token ids. Into a pipe or a file the exact bytes are written; on a terminal the "
                    "text, with U+FFFD for bytes that are not UTF-8 and control characters shown as symbols.",
    )
    add_encoding_option(p)
    p.add_argument("ids", nargs="*", metavar="ID", help="token ids (default: read them from standard input)")
    p.add_argument("--json", action="store_true", help="print JSON with the text and its bytes")
    add_max_bytes_option(p, hidden=True)
    p.set_defaults(func=cmd_decode)
