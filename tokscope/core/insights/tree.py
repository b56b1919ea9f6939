"""Token counts summed per folder: the tree ``tokscope count --tree`` prints.

Plain data in (each file's path and its token counts, one per encoding), frozen nodes out. The
tree starts at the folder every path shares; each folder's counts are the sums of the files below
it, and its children are sorted by the first encoding's tokens, most first (then by name).

>>> root = folder_tree([("src/a.py", (10, 12)), ("src/core/b.py", (5, 6)), ("README.md", (7, 9))], 2)
>>> [(depth, node.name, node.tokens, node.files) for depth, node in walk(root)]
[(0, '.', (22, 27), 3), (1, 'src/', (15, 18), 2), (2, 'a.py', (10, 12), 1), (2, 'core/', (5, 6), 1), (3, 'b.py', (5, 6), 1), (1, 'README.md', (7, 9), 1)]
>>> [(depth, node.name) for depth, node in walk(root, max_depth=1)]
[(0, '.'), (1, 'src/'), (1, 'README.md')]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePath


@dataclass(frozen=True, slots=True)
class FolderNode:
    """A folder (its ``name`` ends with ``/`` below the root) or a file of the tree, with its
    token counts per encoding and the number of files it holds (1 for a file)."""

    name: str
    path: str
    tokens: tuple[int, ...]
    files: int
    folder: bool
    children: tuple[FolderNode, ...] = ()


def _parts(path: str) -> tuple[str, ...]:
    """A path's parts (``./`` dropped), the leading ``/`` of an absolute path kept as its first.

    >>> _parts("./src//a.py"), _parts("/tmp/x")
    (('src', 'a.py'), ('/', 'tmp', 'x'))
    """
    return tuple(p for p in PurePath(path).parts if p != ".")


def _common_folder(all_parts: Sequence[tuple[str, ...]]) -> tuple[str, ...]:
    """The folder parts every path starts with (never a whole path: a file is not a folder).

    >>> _common_folder([("a", "b", "c.txt"), ("a", "b", "d", "e.txt")])
    ('a', 'b')
    >>> _common_folder([("a", "x.txt")])
    ('a',)
    """
    if not all_parts:
        return ()
    common = list(all_parts[0][:-1])
    for parts in all_parts[1:]:
        keep = 0
        for mine, theirs in zip(common, parts[:-1]):
            if mine != theirs:
                break
            keep += 1
        del common[keep:]
    return tuple(common)


def _join(parts: Sequence[str]) -> str:
    return str(PurePath(*parts)) if parts else "."


def folder_tree(items: Iterable[tuple[str, Sequence[int]]], n: int) -> FolderNode:
    """The tree of ``items`` (a path and ``n`` token counts each), rooted at their common folder.

    >>> folder_tree([], 1)
    FolderNode(name='.', path='.', tokens=(0,), files=0, folder=True, children=())
    >>> folder_tree([("/data/x/a.txt", (3,))], 1).path
    '/data/x'
    """
    listed = [(_parts(path), tuple(counts)) for path, counts in items]
    base = _common_folder([parts for parts, _ in listed if parts])
    # a nested dict per folder: name -> dict (a folder) or the file's counts
    nested: dict[str, object] = {}
    for parts, counts in listed:
        rest = parts[len(base):] or parts[-1:] or ("-",)
        here = nested
        for folder in rest[:-1]:
            here = here.setdefault(folder + "/", {})  # type: ignore[assignment]
        here[rest[-1]] = counts if rest[-1] not in here else _add(here[rest[-1]], counts)  # type: ignore[arg-type]
    return _build(_join(base), _join(base), nested, n)


def _add(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    return tuple(x + y for x, y in zip(a, b))


def _build(name: str, path: str, nested: dict[str, object], n: int) -> FolderNode:
    children = []
    for child, value in nested.items():
        child_path = child.rstrip("/") if path == "." else str(PurePath(path, child.rstrip("/")))
        if isinstance(value, dict):
            children.append(_build(child, child_path, value, n))
        else:
            children.append(FolderNode(child, child_path, tuple(value), 1, False))  # type: ignore[arg-type]
    children.sort(key=lambda c: (-(c.tokens[0] if c.tokens else 0), c.name))
    tokens = tuple(sum(c.tokens[k] for c in children) for k in range(n))
    return FolderNode(name, path, tokens, sum(c.files for c in children), True, tuple(children))


def walk(node: FolderNode, max_depth: int | None = None, depth: int = 0) -> Iterator[tuple[int, FolderNode]]:
    """The nodes depth first, each with its depth (the root is 0), down to ``max_depth``."""
    yield depth, node
    if max_depth is None or depth < max_depth:
        for child in node.children:
            yield from walk(child, max_depth, depth + 1)


def to_json(node: FolderNode, names: Sequence[str], prices: Sequence[float] | None = None,
            max_depth: int | None = None, depth: int = 0) -> dict[str, object]:
    """A node as JSON: counts by encoding name, the cost in dollars with ``prices`` (one per
    encoding, dollars per million tokens), the children down to ``max_depth``.

    >>> to_json(folder_tree([("a/b.txt", (2_000_000,))], 1), ["gpt2"], [2.5])
    {'name': 'a', 'path': 'a', 'folder': True, 'files': 1, 'tokens': {'gpt2': 2000000}, 'cost': {'gpt2': 5.0}, 'children': [{'name': 'b.txt', 'path': 'a/b.txt', 'folder': False, 'files': 1, 'tokens': {'gpt2': 2000000}, 'cost': {'gpt2': 5.0}}]}
    """
    out: dict[str, object] = {"name": node.name, "path": node.path, "folder": node.folder,
                              "files": node.files, "tokens": dict(zip(names, node.tokens))}
    if prices is not None:
        out["cost"] = {name: cost(tokens, price) for name, tokens, price in zip(names, node.tokens, prices)}
    if node.children and (max_depth is None or depth < max_depth):
        out["children"] = [to_json(c, names, prices, max_depth, depth + 1) for c in node.children]
    return out


def cost(tokens: int, price: float) -> float:
    """Dollars for ``tokens`` at ``price`` dollars per million tokens.

    >>> cost(1500, 2.0)
    0.003
    """
    return tokens * price / 1_000_000
