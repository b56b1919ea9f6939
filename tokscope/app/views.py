"""The views the explorer opens: one registry of the screen classes the app owns.

Each :class:`View` has a function key (F3..F8, F12) that works from anywhere (the input pane included: no
letter key opens a view), a footer label, and a palette command. Screens never import each
other: they open one another by name through the app (``self.app.open_view("why", token_id=7)``),
so the only module that knows every screen class is this one, and there are no import cycles.

The explorer app's state API (``app = self.app`` inside a screen or widget)
---------------------------------------------------------------------------
Reading
  ``app.text -> str``                 the input pane's current text
  ``app.doc -> Document``             the latest tokenization (:class:`tokscope.core.document.document.Document`):
                                      ``doc.text``, ``doc.ids``, ``len(doc)``, ``doc.piece(i)``,
                                      ``doc.chunk_of(i)``, ``doc.piece_at(offset)``, ``doc.complete``
  ``app.tokenizer -> Tokenizer``      the current tokenizer; ``app.encoding_name`` its name
  ``app.selected_index``, ``app.selected_piece``, ``app.selected_token_id``
  ``app.encode_kwargs() -> dict``     ``allowed_special``/``disallowed_special`` as the explorer encodes
Acting
  ``app.open_view(name, **kwargs)``   open (or bring back) a view of :data:`VIEWS`
  ``app.select_piece(index)``, ``app.open_token(token_id)``, ``app.switch_encoding(name)``,
  ``app.set_text(text)``, ``app.copy_text(text, what)``
Messages (:mod:`tokscope.app.messages`), posted to every screen on the stack
  ``DocChanged``, ``EncodingChanged``, ``SelectionChanged``, ``TokenPicked``
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.screen import Screen

from .screens.chat import ChatScreen
from .screens.compare import CompareScreen
from .screens.insights import InsightsScreen
from .screens.languages import LanguagesScreen
from .screens.train import TrainScreen
from .screens.vocab import VocabScreen
from .screens.why import WhyScreen


@dataclass(frozen=True, slots=True)
class View:
    """A screen the explorer opens: its name, key, footer label, palette text and class."""

    name: str
    key: str
    label: str
    title: str
    description: str
    screen: type[Screen]


#: Every view, in the order of their keys (F3..F8, then F12: F9 copies, and F10 and F11 are the
#: terminal's own in GNOME Terminal and others: its menu, full screen).
VIEWS: tuple[View, ...] = (
    View("why", "f3", "Why", "Why this split",
         "merge tree of the selected token, used in, step-by-step merge replay, rank cut-off", WhyScreen),
    View("vocab", "f4", "Find", "Find in vocabulary",
         "search every token by substring, regex, hex bytes or id; open one in the merge tree", VocabScreen),
    View("compare", "f5", "Compare", "Compare encodings",
         "2 to 4 tokenizers side by side on this text: aligned cuts, stats, cost", CompareScreen),
    View("languages", "f6", "Langs", "Languages",
         "the same passage in 24 languages: tokens per encoding and the premium over English", LanguagesScreen),
    View("insights", "f7", "Stats", "Insights",
         "token lengths, Zipf plot, top tokens, coverage, digit groups, embedding size, normalisation",
         InsightsScreen),
    View("train", "f8", "Train", "Train a tokenizer",
         "learn BPE merges from files or this text, watch them stream, save/open/compare, sweep curve", TrainScreen),
    View("chat", "f12", "Chat", "Chat cost",
         "a conversation in the model's chat format: per-message counts, template overhead, context size", ChatScreen),
)

BY_NAME: dict[str, View] = {view.name: view for view in VIEWS}


def view_of(screen: Screen) -> View | None:
    """The view ``screen`` is an instance of (None for the explorer and dialogs).

    >>> view_of(Screen()) is None
    True
    """
    return next((view for view in VIEWS if type(screen) is view.screen), None)
