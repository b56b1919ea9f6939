"""Hook points for screens that other features add to the explorer.

Register a screen by appending a :class:`Feature` to :data:`FEATURES` (in this file, or at import
time of your own module listed here). For each feature the explorer adds

- a key binding (``key``; function and ``ctrl+`` keys work everywhere, a plain letter works while
  the token view has focus, because the input pane types letters), and
- a command-palette command (``title`` / ``description``),

both of which push ``screen`` (``"package.module:ClassName"``, imported lazily) constructed with no
arguments. The screen reads what it needs from the running app::

    FEATURES.append(Feature("f7", "tokscope.app.screens.compare:CompareScreen",
                            "Compare encodings", "Side by side tokenizers on this text"))

The explorer app's state API (stable; ``app = self.app`` inside a screen or widget)
---------------------------------------------------------------------------------------
Reading
  ``app.text -> str``                 the input pane's current text (what the user sees/typed)
  ``app.doc -> Document``             the latest tokenization (``tokscope.app.model.Document``):
                                      ``doc.text`` (the text it was computed for), ``doc.ids``,
                                      ``len(doc)``, ``doc.piece(i) -> Piece``, ``doc.chunk_of(i) -> Chunk``,
                                      ``doc.piece_at(char_offset) -> index``, ``doc.complete``
  ``app.pieces -> Sequence[Piece]``   the same pieces as ``tokscope.core.types.Piece`` (built lazily)
  ``app.tokenizer -> Tokenizer``      the current core tokenizer
  ``app.encoding_name -> str``        its name (``app.tokenizer.name``)
  ``app.selected_index -> int|None``  the selected piece's index in ``app.pieces``
  ``app.selected_piece -> Piece|None`` and ``app.selected_token_id -> int|None``
  ``app.encode_kwargs() -> dict``     ``allowed_special``/``disallowed_special`` for core calls, so a
                                      screen tokenizes exactly as the explorer does (special-token toggle)
Acting
  ``app.select_piece(index)``         move the token cursor (the input pane's cursor follows)
  ``app.open_token(token_id)``        "a token was picked": posts :class:`tokscope.app.messages.TokenPicked`
                                      to the app and publishes ``app.token_picked``; by default the
                                      explorer selects the token's first occurrence and shows it in
                                      the inspector
  ``app.switch_encoding(name)``       load ``name`` in a worker (visible "loading…"); on failure the
                                      user is told and the previous encoding stays
  ``app.set_text(text)``              replace the input pane's text (undoable in the editor)
  ``app.copy_text(text, what)``       copy with pyperclip, falling back to OSC 52; tells the user which
Signals (``textual.signal.Signal``; ``app.doc_changed.subscribe(self, callback)`` in ``on_mount``)
  ``app.doc_changed``       data: the new ``Document`` after every re-tokenization (and encoding switch)
  ``app.encoding_changed``  data: the new ``Tokenizer``
  ``app.selection_changed`` data: the selected piece index (``int``) or ``None``
  ``app.token_picked``      data: the token id passed to ``open_token``
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Feature:
    """A screen the explorer can open: a key, a palette command, and the screen's import path."""

    key: str
    screen: str
    title: str
    description: str = ""


#: Screens other features add to the explorer (see the module docstring).
FEATURES: list[Feature] = []

# insights and training (issue 7)
FEATURES.append(Feature("i", "tokscope.app.screens.insights:InsightsScreen", "Insights",
                        "token lengths, Zipf plot, top tokens, coverage, digit groups, embedding size, normalisation"))
FEATURES.append(Feature("t", "tokscope.app.screens.train:TrainScreen", "Train a tokenizer",
                        "learn BPE merges from files or this text, watch them stream, save/open/compare, sweep curve"))

# comparing encodings and the languages premium (issue 6)
FEATURES.append(Feature("m", "tokscope.app.screens.compare:CompareScreen", "Compare encodings",
                        "2 to 4 tokenizers side by side on this text: aligned cuts, stats, cost"))
FEATURES.append(Feature("g", "tokscope.app.screens.languages:LanguagesScreen", "Languages",
                        "the same passage in 24 languages: tokens per encoding and the premium over English"))

# why does it split like that: merge tree, explain, cut-off, vocabulary (issue 5)
FEATURES.append(Feature("x", "tokscope.app.screens.why:WhyScreen", "Why this split",
                        "merge tree of the selected token, used in, step-by-step merge replay, rank cut-off"))
FEATURES.append(Feature("f", "tokscope.app.screens.vocab:VocabScreen", "Find in vocabulary",
                        "search every token by substring, regex, hex bytes or id; open one in the merge tree"))


def load_screen_class(path: str) -> type:
    """Import ``"package.module:ClassName"`` and return the class.

    >>> load_screen_class("tokscope.app.features:Feature").__name__
    'Feature'
    """
    import importlib

    module_name, _, attr = path.partition(":")
    if not attr:
        raise ValueError(f"screen path {path!r} must look like 'package.module:ClassName'")
    return getattr(importlib.import_module(module_name), attr)
