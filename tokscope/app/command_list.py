"""A command palette provider over a list of ``(title, help, callback)``: the explorer's and the
chat screen's commands are each such a list."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.markup import escape


class CommandList(Provider):
    """Subclasses give :meth:`_commands`; titles and help texts are shown as text (the palette reads
    its strings as markup, so names from files are escaped: a ``[/x]`` in a saved tokenizer's name
    would be a closing tag)."""

    def _commands(self) -> list[tuple[str, str, Callable[[], Any]]]:
        raise NotImplementedError

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(escape(title), callback, help=escape(help_text))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(escape(title)), callback, help=escape(help_text))
