"""Command-palette commands: every explorer action, every encoding, and the feature screens."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from .features import FEATURES


class ExplorerCommands(Provider):
    """Commands for the explorer (Ctrl+P)."""

    def _commands(self) -> list[tuple[str, str, object]]:
        app = self.app
        run = app.run_action
        out: list[tuple[str, str, object]] = [
            ("Pick encoding…", "choose from every encoding in a list", partial(run, "pick_encoding")),
            ("View: text", "token view shows each piece's text", partial(app.set_mode, "text")),
            ("View: ids", "token view shows each piece's id", partial(app.set_mode, "ids")),
            ("View: text and ids", "token view shows text followed by id", partial(app.set_mode, "both")),
            ("Toggle visible whitespace", "spaces, tabs, newlines as · → ⏎", partial(run, "toggle_ws")),
            ("Toggle rank colours", "colour pieces by merge rank (early vs late)", partial(run, "toggle_rank")),
            ("Toggle special tokens", "treat <|endoftext|> and friends as special tokens", partial(run, "toggle_specials")),
            ("Copy ids", "all token ids, space separated", partial(run, "copy('ids')")),
            ("Copy pieces", "all pieces as a JSON list", partial(run, "copy('pieces')")),
            ("Copy selected token bytes", "hex bytes of the selected token", partial(run, "copy('bytes')")),
            ("Save", "save the text", partial(run, "save")),
            ("Help", "every key", partial(run, "help")),
        ]
        try:
            from ..sources.registry import list_encodings

            for info in list_encodings():
                size = f"{info.n_vocab:,} tokens" if info.n_vocab else ""
                out.append((f"Encoding: {info.name}", f"switch to {info.name} ({info.kind}, {size})",
                            partial(app.switch_encoding, info.name)))
        except Exception:  # noqa: BLE001 - listing is best effort in the palette
            pass
        for feature in FEATURES:
            out.append((feature.title, feature.description, partial(run, f"open_feature({feature.screen!r})")))
        return out

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
