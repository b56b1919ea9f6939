"""One "why" in words: for every kind, the sentences ``tokscope explain`` prints are the sentences the
why screen (F3) shows, word for word, because both come from the core
(:mod:`tokscope.core.explain.sentences`) and neither shell writes one of its own.

Each case explains a text on the command line (``cli.main``) and in the explorer (Pilot: every
chunk selected in turn, every merge step stepped through, the pane's rendered text read), and
collects the core's sentences each of them shows: the two sets are the same, and are all of them.
Kinds: byte-level BPE from ranks (cl100k_base, under a rank cut-off), BPE from a merge list with
byte fallback (a Llama 2 ``tokenizer.json``), WordPiece (BERT, an unknown word and a word too
long), Unigram (T5, an unknown character and the next-best search), SentencePiece's BPE by score
(a ``.model`` trained here with byte fallback), WordLevel, and a vocabulary entry explained on its
own. The tokenizer files are built at test time (``tests/core/hf_files.py``, ``tests/spm_files.py``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from textual.widgets import Static

from helpers import idle
from spm_files import trained_spm  # noqa: F401  (fixture)
from test_why_kinds import files, open_why, path_of  # noqa: F401  (fixture: the tokenizer.json files)

from tokscope.app.app import ExplorerApp
from tokscope.app.screens.why import WhyScreen
from tokscope.cli import main
from tokscope.core.explain.sentences import cutoff_words, token_sentences, why_sentences
from tokscope.core.explain.why import explain_text, explain_token
from tokscope.sources import registry

ROOT = Path(__file__).resolve().parents[2] / "tokscope"


def cli_text(capsys, *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


def pane(screen: WhyScreen) -> str:
    return str(screen.query_one("#why-explain", Static).render())


async def screen_texts(encoding: str, text: str, max_rank: int | None = None) -> str:
    """Everything the why screen shows about ``text``: each chunk selected in turn (through its
    first piece), at every step of its replay, and the cut-off row."""
    app = ExplorerApp(text, encoding=encoding, palette="truecolor")
    shown = []
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        tok = app.tokenizer
        firsts = {}
        for index in range(len(app.doc.ids)):
            firsts.setdefault(app.doc.chunk_of(index), index)
        screen = await open_why(pilot, app.doc.ids[0])
        if max_rank is not None:
            screen.set_cutoff(max_rank)
            await idle(pilot)
        shown.append(str(screen.query_one("#why-cut-label", Static).render()))
        for chunk, index in firsts.items():
            app.select_piece(index)
            await idle(pilot)
            assert screen.why is not None and screen.why.chunk.start == chunk.start, (chunk, screen.why)
            shown.append(pane(screen))
            for _ in range(screen.total_steps()):
                await pilot.press("n")
                shown.append(pane(screen))
        assert tok is app.tokenizer
    return "\n".join(shown)


async def screen_token(encoding: str, text: str, token_id: int) -> str:
    """What the why screen shows about a vocabulary entry picked on its own."""
    app = ExplorerApp(text, encoding=encoding, palette="truecolor")
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        await open_why(pilot, app.doc.ids[0])
        app.open_token(token_id, source="test")
        await idle(pilot)
        screen = app.screen
        assert screen.token_id == token_id and not screen.from_text
        return pane(screen)


def core_sentences(tok, text: str, max_rank: int | None) -> set[str]:
    found = explain_text(tok, text, max_rank=max_rank)
    out = {s for c in found.chunks for s in why_sentences(tok, c).sentences()}
    if tok.ranks:
        out.add(cutoff_words(tok, max_rank))
    return out


def assert_same(sentences: set[str], cli: str, screen: str, must: tuple[str, ...]) -> None:
    """Both shells show the same sentences of the core, all of them; ``must`` are fragments that
    some sentence holds (so that the kind's own reasons are among them)."""
    for fragment in must:
        assert any(fragment in s for s in sentences), (fragment, sorted(sentences))
    said = {s for s in sentences if s in cli}
    shown = {s for s in sentences if s in screen}
    assert said == shown == sentences, (sorted(sentences - said), sorted(sentences - shown))


# ----- every kind -------------------------------------------------------------------------------------


async def explained_both_ways(capsys, encoding: str, text: str, *options: str) -> tuple[set[str], str, str]:
    """The core's sentences about ``text``, what the command line printed, what the screen showed."""
    tok = registry.load(encoding)
    max_rank = int(options[options.index("--max-rank") + 1]) if "--max-rank" in options else None
    sentences = core_sentences(tok, text, max_rank)
    cli = cli_text(capsys, "explain", "-e", encoding, text, "--no-variants", *options)
    return sentences, cli, await screen_texts(encoding, text, max_rank)


#: (family of tests/core/hf_files.py, text, fragments the kind's sentences hold)
FAMILIES = [
    ("llama2", "hello 🦜 x", ("its UTF-8 bytes ‹f0 9f a6 9c› are 4 byte tokens", "(the lowest)", "symbols")),
    ("bert", "tokenizers ☃ " + "a" * 120, ("greedy longest match from the left", "longer not in the vocabulary",
                                           'no match at character 0: "☃" is not in the vocabulary',
                                           "more than max_input_chars_per_word (100)")),
    ("t5", "unbelievable ☃", ("the best of all segmentations scores", "above the next best",
                              "an unknown piece scored", "none: no other segmentation was found")),
    ("wordlevel", "the zzqqxx", ("is an entry of the vocabulary", "so it is the unknown token")),
]


async def test_byte_level_bpe_from_ranks_under_a_cut_off(capsys):
    found = await explained_both_ways(capsys, "cl100k_base", "a tokenization zq x", "--max-rank", "300")
    assert_same(*found, ("because of the cut-off", "(the lowest)", "ranks below 300",
                         "a single byte: nothing to merge", "single bytes"))


@pytest.mark.parametrize(("family", "text", "must"), FAMILIES, ids=[f[0] for f in FAMILIES])
async def test_every_kind_of_tokenizer_json(capsys, files, family, text, must):
    """BPE from a merge list with byte fallback (Llama 2), WordPiece (BERT: greedy steps, an unknown
    word, a word too long), Unigram (T5: an unknown character, the next-best search), WordLevel."""
    assert_same(*await explained_both_ways(capsys, path_of(files, family), text), must)


async def test_sentencepiece_bpe_by_score_with_byte_fallback(capsys, trained_spm):  # noqa: F811
    path = str(trained_spm("bpe_byte_fallback"))
    assert registry.load(path).model.kind == "sentencepiece-bpe"
    found = await explained_both_ways(capsys, path, "the cat 𓀀")
    assert_same(*found, ("the highest-scoring piece first", "are 4 byte tokens"))


async def test_a_vocabulary_entry_on_its_own(capsys, files):
    path = path_of(files, "bert")
    tok = registry.load(path)
    izer = tok.token_to_id("##izer")
    words = why_sentences(tok, explain_token(tok, izer), token=True)
    sentences = set(words.sentences()) | {s.text for s in token_sentences(tok, izer)}
    cli = cli_text(capsys, "explain", "-e", path, "--token", str(izer), "--no-variants")
    shown = await screen_token(path, "tokenizers", izer)
    assert_same(sentences, cli, shown, ("continues a word (##)", "'##izer' continues a word"))


# ----- no sentence written twice -------------------------------------------------------------------------


#: the two shells of "why": the why screen and its pane, the command line's explain, tree and text
WHY_APP = ("app/widgets/why_pane.py", "app/screens/why.py")
WHY_COMMANDS = ("commands/why_text.py", "commands/explain.py", "commands/tree.py")


def _prose(paths: tuple[str, ...]) -> dict[str, str]:
    """Every string literal of three words or more in ``paths`` (an f-string's literal parts
    count), with the file it is in."""
    out = {}
    for name in paths:
        path = ROOT / name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value.strip()
                if len(text.split()) >= 3 and "\n" not in text:  # docstrings span lines
                    out.setdefault(text, path.name)
    return out


def test_no_sentence_is_written_in_both_shells():
    app, commands = _prose(WHY_APP), _prose(WHY_COMMANDS)
    assert len(app) > 5 and len(commands) > 5  # the scan reads the shells' literals
    both = sorted(set(app) & set(commands))
    assert not both, [(s, app[s], commands[s]) for s in both]
