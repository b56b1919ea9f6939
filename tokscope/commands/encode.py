"""``tokscope encode [-e NAME] [TEXT | -f FILE] [--json] [--max-rank N] [--add-special-tokens]``:
text into token ids.

``encode`` streams: the ids of plain output, and the tokens of ``--json`` (in batches from
:func:`tokscope.core.document.streaming.iter_pieces`), are written as they are made, so a big input costs
the text and its ids, not millions of objects at once. ``--json`` therefore writes ``count`` after
``tokens``. ``--max-rank N`` is the rank cut-off (byte-level BPE from ranks; see ``explain``).
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




def register(sub: argparse._SubParsersAction) -> None:
    from .common import MAX_RANK_HELP, non_negative
    from .truncate import add_truncate_options

    p = sub.add_parser("encode", help="encode text into token ids")
    add_encoding_option(p)
    add_input_options(p)
    add_special_options(p)
    p.add_argument("--json", action="store_true", help="print each token with its bytes and offsets as JSON")
    p.add_argument("--add-special-tokens", action="store_true",
                   help="add the tokens the model's template puts around a text (BOS/EOS, [CLS]/[SEP]), as "
                        "Hugging Face's tokenizers does by default; without it, the text's own tokens")
    add_truncate_options(p)
    p.add_argument("--max-rank", type=non_negative, metavar="N", help=MAX_RANK_HELP)
    p.set_defaults(func=cmd_encode)
