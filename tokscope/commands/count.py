"""``tokscope count``: tokens in files, folders and standard input, per file and in total, for one
or more encodings, on every core; ``--max-tokens N`` gates a CI step.

Decisions (also in the README section):

- ``PATH`` is a file, a folder or ``-`` (standard input); no ``PATH`` reads piped standard input.
  A folder gives the files directly inside it; ``-r`` also those below. Hidden entries inside a
  folder are skipped unless ``--hidden``; ``--glob`` (repeatable: any may match) keeps the files
  inside folders whose name matches, ``--exclude`` drops files and folders; a file named on the
  command line is always counted. Symbolic links are followed, each folder and file once
  (:mod:`tokscope.inputs.walk`).
- Binary files (a NUL byte in the first 8 KB) and files that are not UTF-8 are skipped with a note
  and counted as skipped (``--errors replace`` counts the latter with U+FFFD); so are links to
  nothing, devices and FIFOs found in folders, and links back into a folder. A path that does not
  exist, a file or folder that cannot be read and a file over ``--max-bytes`` are errors: the rest
  is counted and the exit code is 1.
- Special-token text (``<|endoftext|>``) never fails a count: it is counted as the ordinary text
  it is, with a note naming the file; ``--allow-special all|LIST`` counts it as special tokens
  (one token each), ``--special-as-text`` counts it as text without the note.
- The count is the text's own tokens (no BOS/EOS a model's template would add), from the ids-only
  path (``encode_ordinary``, or ``encode`` with allowed special tokens).
- Exit codes: 0 counted; 1 an input could not be counted (or an encoding not loaded); 2 usage;
  :data:`EXIT_OVER_LIMIT` (3) when no input failed and the total of any encoding is more than
  ``--max-tokens``, with one line on stderr naming each encoding over it and its total.
- Worker processes (``-j``, default: every CPU this process may use) when the run is big enough to
  gain from them (:data:`PARALLEL_BYTES`); each worker gets the tokenizers once, when it starts
  (inherited through ``fork`` where there is one, else pickled once), and reads its files itself;
  small files go in batches, big ones (:data:`SPLIT_BYTES`) are cut where the encodings allow it
  (:func:`tokscope.core.document.cuts.parts`) and their parts counted side by side.
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..core.text.display import safe_text
from ..core.tokenizer.batches import death as _death
from ..core.tokenizer.batches import serve_quietly, start_quietly, stop_workers
from ..core.tokenizer.batches import usable_cpus as _cpus
from ..core.text.errors import DisallowedSpecialError, TokscopeError
from ..inputs.text_input import InputError, read_input
from ..inputs.walk import Found, walk
from .common import (
    MAX_DIGITS,
    UsageError,
    add_encoding_option,
    add_max_bytes_option,
    load_encoding,
    parse_allowed_special,
    print_json,
    progress_bar,
    stdin_is_piped,
    silence_stdout,
    token_budget,
    unique_encodings,
)

#: The exit code when a total is over ``--max-tokens`` (0, 1, 2, 130 and 128+N are taken).
EXIT_OVER_LIMIT = 3
#: Below this many bytes in all, one process counts everything (workers cost more than they save).
PARALLEL_BYTES = 1 << 20
#: ... and below this many where workers must be started afresh and sent the tokenizers (spawn).
PARALLEL_BYTES_SPAWN = 16 << 20
#: Files of at least this many bytes are read by the main process and counted in parts.
SPLIT_BYTES = 2 << 20
#: Characters per part of a big file.
PART_CHARS = 1 << 20
#: Small files go to a worker in batches of about this many bytes, or this many files.
BATCH_BYTES = 256 << 10
BATCH_FILES = 64
#: Notes and errors printed one line each, before the rest is summed up in one line.
MAX_LINES = 20
#: A progress bar appears on a terminal once the run has taken this long.
PROGRESS_DELAY = 0.5
#: skip reasons that are errors (the user asked for a text that cannot be counted)
ERROR_KINDS = frozenset({"missing", "permission", "unreadable", "too-large", "directory", "closed", "failed"})
#: skip reasons said in the summary line only, not one line per entry: (one, several)
QUIET_KINDS = {"hidden": ("hidden (--hidden counts it)", "hidden (--hidden counts them)"),
               "folder": ("folder (-r counts the files inside it)", "folders (-r counts the files inside them)")}
STDIN_PATH = "-"
#: encoded once before the workers fork, so each inherits what the first non-ASCII text builds
WARM_UP = "naïve café 日本語 👍"

_KIND_WORDS = {"binary": ("binary", "binary"), "not-utf8": ("not UTF-8", "not UTF-8"),
               "not-regular": ("not a regular file", "not regular files"),
               "broken-link": ("link to nothing", "links to nothing"),
               "link-loop": ("link back into its folder", "links back into their folder"),
               "seen": ("found twice", "found twice"), "missing": ("missing", "missing"),
               "permission": ("permission denied", "permission denied"), "unreadable": ("unreadable", "unreadable"),
               "too-large": ("over --max-bytes", "over --max-bytes"), "failed": ("failed", "failed"), **QUIET_KINDS}


# ----- what a worker does ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Settings:
    """What every job needs besides its input: the size limit, ``--errors``, and the special-token
    mode (``allowed``: the special tokens counted as such, a set or ``"all"``; ``quiet``: no look
    for special-token text to note)."""

    limit: int
    errors: str
    allowed: Any
    quiet: bool


_WORKER: dict[str, Any] = {}


def _init_worker(tokenizers: list[Any], settings: Settings, in_child: bool) -> None:
    """Keep the tokenizers and settings for the jobs to come (once per worker)."""
    if in_child:
        # Ctrl+C reaches the whole process group: the main process stops the pool, a worker says nothing
        serve_quietly()
    _WORKER["tokenizers"] = tokenizers
    _WORKER["settings"] = settings


def _count_text(text: str, which: list[int]) -> tuple[list[int], list[str | None]]:
    """Tokens of ``text`` for each encoding in ``which`` (ids only), and for each the special-token
    text found in it and counted as ordinary text (None when there is none, or with ``quiet``)."""
    settings: Settings = _WORKER["settings"]
    tokenizers = _WORKER["tokenizers"]
    allowed = settings.allowed
    counts: list[int] = []
    found: list[str | None] = []
    for k in which:
        tok = tokenizers[k]
        special = None
        if not settings.quiet and allowed != "all":
            as_text = tok.special_tokens_set - frozenset(allowed)
            if as_text:
                try:
                    tok.check_special(text, as_text)
                except DisallowedSpecialError as exc:
                    special = exc.token
        if allowed:  # "all" or a set of names
            ids = tok.encode(text, allowed_special=allowed, disallowed_special=())
        else:
            ids = tok.encode_ordinary(text)
        counts.append(len(ids))
        found.append(special)
    return counts, found


def _run_batch(batch: list[tuple]) -> list[tuple]:
    """Count a batch of jobs: ``("file", index, path)``, read here, or ``("text", index, text,
    which, path)``, a part of a big file for the encodings in ``which``. Results: ``("file", index,
    bytes, characters, replaced, counts, found)``, ``("part", index, which, counts, found,
    characters)`` or ``("skip", index, reason, message)``."""
    settings: Settings = _WORKER["settings"]
    everything = list(range(len(_WORKER["tokenizers"])))
    out: list[tuple] = []
    for job in batch:
        index = job[1]
        try:
            if job[0] == "text":
                _, _, text, which, _ = job
                counts, found = _count_text(text, which)
                out.append(("part", index, which, counts, found, len(text)))
                continue
            try:
                got = _read(job[2], settings)
            except InputError as exc:
                out.append(("skip", index, exc.kind, _skip_message(exc)))
                continue
            counts, found = _count_text(got.text, everything)
            out.append(("file", index, got.size, len(got.text), got.replaced, counts, found))
        except TokscopeError as exc:  # a user's pattern out of its time budget ...: this file, not the run
            where = "standard input" if job[-1] == STDIN_PATH else safe_text(job[-1])
            out.append(("skip", index, "failed", f"{where}: {exc}"))
    return out


def _read(path: str | None, settings: Settings) -> Any:
    """The text of a file (standard input for None), through the one input reader."""
    try:
        return read_input(path, limit=settings.limit, keep_head=False)
    except InputError as exc:
        if exc.kind == "not-utf8" and settings.errors == "replace":
            return exc.accept(errors="replace")
        raise


def _skip_message(exc: InputError) -> str:
    """The reader's message, but for what ``count`` skips: said as ``count`` treats it."""
    where = safe_text(exc.where)
    if exc.kind == "binary":
        return f"{where}: a binary file (byte 0x{exc.byte or 0:02x} at offset {exc.offset}), skipped"
    if exc.kind == "not-utf8":
        return (f"{where}: not UTF-8 (byte 0x{exc.byte or 0:02x} at offset {exc.offset}), skipped "
                "(--errors replace counts it)")
    return str(exc)


# ----- the run --------------------------------------------------------------------------------


@dataclass(slots=True)
class Entry:
    """One input as the run knows it: a file counted (``counts`` per encoding) or skipped."""

    path: str
    size: int | None = None
    counts: list[int] = field(default_factory=list)
    found: list[str | None] = field(default_factory=list)
    chars: int = 0
    bytes: int = 0
    replaced: bool = False
    skip: str | None = None  # the reason
    message: str = ""
    error: bool = False

    @property
    def counted(self) -> bool:
        return self.skip is None

    def add(self, which: list[int], counts: list[int], found: list[str | None], n: int) -> None:
        if not self.counts:
            self.counts, self.found = [0] * n, [None] * n
        for k, c, f in zip(which, counts, found):
            self.counts[k] += c
            self.found[k] = self.found[k] or f


def _inputs(args: argparse.Namespace) -> list[str]:
    paths = list(args.paths)
    if not paths:
        if not stdin_is_piped():
            raise UsageError("no input: give PATH... (files or folders), or pipe text into standard input")
        return [STDIN_PATH]
    if paths.count(STDIN_PATH) > 1:
        raise UsageError("'-' (standard input) can be given once")
    if STDIN_PATH in paths and not stdin_is_piped():
        raise UsageError("'-' reads standard input, but nothing is piped in")
    return paths


def _entries(paths: list[str], args: argparse.Namespace) -> list[Entry]:
    """Every input in order: files found in the paths (each once), skipped entries, standard input."""
    entries: list[Entry] = []
    seen: dict[tuple[int, int], str] = {}
    for path in paths:
        if path == STDIN_PATH:
            entries.append(Entry(STDIN_PATH))
            continue
        for item in walk([path], recursive=args.recursive, globs=args.glob, excludes=args.exclude,
                         hidden=args.hidden, seen=seen):
            if isinstance(item, Found):
                entries.append(Entry(item.path, item.size))
            else:
                entries.append(Entry(item.path, skip=item.reason, message=item.message, error=item.error))
    return entries


class _Run:
    """One ``count``: makes the jobs, takes the results into the entries."""

    def __init__(self, entries: list[Entry], tokenizers: list[Any], settings: Settings) -> None:
        self.entries = entries
        self.tokenizers = tokenizers
        self.settings = settings
        from ..core.document.cuts import can_split

        self.split = [can_split(t) for t in tokenizers]
        #: results found while making jobs (a big file read here), taken by the main thread
        self.early: list[tuple] = []
        self.lock = threading.Lock()
        self.files_done = 0
        self.bytes_done = 0
        #: standard input as it was read (an InputText, or the InputError that refused it)
        self.stdin: Any = None

    def jobs(self) -> Iterator[list[tuple]]:
        """Batches of jobs in the order of the entries (with a pool, this runs in its task thread)."""
        n = len(self.tokenizers)
        batch: list[tuple] = []
        batch_bytes = 0
        for index, entry in enumerate(self.entries):
            if not entry.counted:
                continue
            if entry.path != STDIN_PATH and (entry.size is None or entry.size < SPLIT_BYTES):
                batch.append(("file", index, entry.path))
                batch_bytes += entry.size or 0
                if batch_bytes >= BATCH_BYTES or len(batch) >= BATCH_FILES:
                    yield batch
                    batch, batch_bytes = [], 0
                continue
            if batch:
                yield batch
                batch, batch_bytes = [], 0
            text = self._read_big(index, entry)
            if text is None:
                continue
            splittable = [k for k in range(n) if self.split[k]]
            whole = [k for k in range(n) if not self.split[k]]
            spans = [(0, len(text))]
            if splittable and len(text) > PART_CHARS:
                from ..core.document.cuts import parts

                spans = parts(self.tokenizers[splittable[0]], text, PART_CHARS)
            if len(spans) == 1:
                yield [("text", index, text, list(range(n)), entry.path)]
                continue
            for start, end in spans:
                yield [("text", index, text[start:end], splittable, entry.path)]
            if whole:
                yield [("text", index, text, whole, entry.path)]
        if batch:
            yield batch

    def _read_big(self, index: int, entry: Entry) -> str | None:
        try:
            if entry.path == STDIN_PATH:
                got, self.stdin = self.stdin, None
                if isinstance(got, InputError):
                    raise got
            else:
                got = _read(entry.path, self.settings)
        except InputError as exc:
            result: tuple = ("skip", index, exc.kind, _skip_message(exc))
        else:
            result = ("big", index, got.size, len(got.text), got.replaced)
        with self.lock:
            self.early.append(result)
        return got.text if result[0] == "big" else None

    def take(self, result: tuple) -> None:
        """Put one result into its entry."""
        kind, index = result[0], result[1]
        entry = self.entries[index]
        n = len(self.tokenizers)
        if kind == "skip":
            entry.skip, entry.message = result[2], result[3]
            entry.error = result[2] in ERROR_KINDS
            self.files_done += 1
            self.bytes_done += entry.size or 0
        elif kind == "file":
            _, _, size, chars, replaced, counts, found = result
            entry.bytes, entry.chars, entry.replaced = size, chars, replaced
            entry.add(list(range(n)), counts, found, n)
            self.files_done += 1
            self.bytes_done += size
        elif kind == "big":
            _, _, size, chars, replaced = result
            entry.bytes, entry.chars, entry.replaced = size, chars, replaced
            entry.add([], [], [], n)
            self.files_done += 1
        else:  # a part of a big file
            _, _, which, counts, found, chars = result
            entry.add(which, counts, found, n)
            self.bytes_done += chars * len(which) // n

    def fail_batch(self, batch: list[tuple], reason: str) -> None:
        """Fail the inputs of a batch that was never counted (its worker died), naming each."""
        for job in batch:
            index = job[1]
            entry = self.entries[index]
            where = "standard input" if entry.path == STDIN_PATH else safe_text(entry.path)
            if job[0] == "file":
                self.take(("skip", index, "failed", f"{where}: {reason}"))
            elif entry.counted:  # a part of a big file: the file fails once
                entry.skip, entry.message, entry.error = "failed", f"{where}: {reason}", True

    def take_early(self) -> None:
        with self.lock:
            early, self.early = self.early, []
        for result in early:
            self.take(result)


def _start_method() -> str:
    # fork hands each worker the tokenizers without pickling; it is only safe with no other thread
    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return "fork"
    return "spawn"


def _execute(run: _Run, workers: int, parallel: bool, method: str, bar: Any) -> None:
    files = sum(1 for e in run.entries if e.counted)
    total = sum(e.size or 0 for e in run.entries if e.counted) or 1

    def progress(final: bool = False) -> None:
        if bar is not None:
            bar.draw(run.bytes_done / total, f"{run.files_done:,}/{files:,} files  "
                     f"{run.bytes_done / 1e6:,.1f}/{total / 1e6:,.1f} MB", final=final)

    if not parallel:
        _init_worker(run.tokenizers, run.settings, False)
        for batch in run.jobs():
            run.take_early()
            for result in _run_batch(batch):
                run.take(result)
            progress()
    else:
        if method == "fork":
            # what every worker would build for itself on its first text that is not ASCII
            for tok in run.tokenizers:
                tok.encode_ordinary(WARM_UP)
            # the collector of a forked worker would walk (and so copy) every object it inherits
            gc.freeze()
        try:
            _run_workers(run, workers, multiprocessing.get_context(method), progress)
        finally:
            gc.unfreeze()
    run.take_early()
    progress(final=True)


def _serve(conn: Any, tokenizers: list[Any], settings: Settings) -> None:
    """A worker process: count each batch the main process sends, until it sends None."""
    _init_worker(tokenizers, settings, True)  # started with Ctrl+C blocked (start_quietly); ignored from here on
    while True:
        try:
            batch = conn.recv()
        except (EOFError, OSError):
            return
        if batch is None:
            return
        try:
            results = _run_batch(batch)
        except Exception as exc:  # noqa: BLE001 - out of memory, or worse: these inputs fail, by name
            results = [("skip", job[1], "failed", f"{'standard input' if job[-1] == STDIN_PATH else safe_text(job[-1])}: "
                        f"cannot count it ({type(exc).__name__}: {exc})") for job in batch]
        conn.send(results)


@dataclass(slots=True)
class _Worker:
    process: Any
    conn: Any
    batch: list[tuple] | None = None


def _run_workers(run: _Run, workers: int, ctx: Any, progress: Any) -> None:
    """Count the jobs on ``workers`` processes, each sent one batch at a time through its own pipe,
    so the main process always knows what each is counting: a worker that dies (killed, out of
    memory) fails the files of its batch, by name, and a new worker takes its place; the others go on."""
    from multiprocessing.connection import wait

    def start() -> _Worker:
        mine, theirs = ctx.Pipe()
        process = ctx.Process(target=_serve, args=(theirs, run.tokenizers, run.settings), daemon=True)
        start_quietly(process)
        theirs.close()
        return _Worker(process, mine)

    pool = [start() for _ in range(workers)]
    feed = run.jobs()
    more = True
    try:
        while True:
            for worker in pool:
                if worker.batch is None and more:
                    worker.batch = next(feed, None)
                    if worker.batch is None:
                        more = False
                    else:
                        worker.conn.send(worker.batch)
            busy = [w for w in pool if w.batch is not None]
            if not busy:
                break
            ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=0.2))
            run.take_early()
            for k, worker in enumerate(pool):
                if worker.batch is None or not ready & {worker.conn, worker.process.sentinel}:
                    continue
                try:
                    results = worker.conn.recv()
                except (EOFError, OSError):  # it died before answering
                    worker.process.join(5)
                    run.fail_batch(worker.batch, f"a worker process died while counting it "
                                                 f"({_death(worker.process.exitcode)})")
                    worker.conn.close()
                    pool[k] = start()
                    continue
                worker.batch = None
                for result in results:
                    run.take(result)
            progress()
    finally:
        stop_workers([(worker.process, worker.conn, worker.batch is None) for worker in pool])


def cmd_count(args: argparse.Namespace) -> int:
    from ..sources.registry import DEFAULT_ENCODING

    names = unique_encodings(args.encodings, [DEFAULT_ENCODING], "counting")
    _check_tree_options(args, len(names))
    tokenizers = [load_encoding(name) for name in names]
    paths = _inputs(args)
    settings = Settings(args.max_bytes, args.errors, parse_allowed_special(args.allow_special),
                        bool(args.special_as_text))
    entries = _entries(paths, args)
    run = _Run(entries, tokenizers, settings)
    if STDIN_PATH in paths:
        # read first: its size decides whether workers are worth starting
        try:
            run.stdin = _read(None, settings)
            next(e for e in entries if e.path == STDIN_PATH).size = run.stdin.size
        except InputError as exc:
            run.stdin = exc
    counted = [e for e in entries if e.counted]
    total_bytes = sum(e.size or 0 for e in counted)
    method = _start_method()
    threshold = PARALLEL_BYTES if method == "fork" else PARALLEL_BYTES_SPAWN
    workers = min(args.jobs or _cpus(), len(counted) + total_bytes // PART_CHARS)
    parallel = workers > 1 and total_bytes >= threshold
    bar = progress_bar("counting", delay=PROGRESS_DELAY)
    try:
        _execute(run, workers, parallel, method, bar)
    finally:
        if bar is not None:
            bar.close()
    return _report(args, names, entries)


# ----- the report -----------------------------------------------------------------------------


def _totals(names: list[str], entries: list[Entry]) -> list[int]:
    totals = [0] * len(names)
    for entry in entries:
        if entry.counted:
            for k, c in enumerate(entry.counts):
                totals[k] += c
    return totals


def _report(args: argparse.Namespace, names: list[str], entries: list[Entry]) -> int:
    counted = [e for e in entries if e.counted]
    skipped = [e for e in entries if not e.counted]
    totals = _totals(names, entries)
    limit = args.max_tokens
    over = [(name, total) for name, total in zip(names, totals) if limit is not None and total > limit]
    failed = any(e.error for e in skipped)
    code = 1 if failed else EXIT_OVER_LIMIT if over else 0
    try:
        if args.json:
            print_json(_with_tree(args, names, counted, _json(names, counted, skipped, totals, limit, over)))
        elif args.total:
            print(" ".join(str(t) for t in totals))
        elif args.tree:
            _tree_table(args, names, counted)
        else:
            _table(names, counted, totals)
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader went away (`| head`): the verdict stands, a gate must not read 0 for "over"
        if code == 0:
            raise
        silence_stdout()
    _notes(entries, skipped)
    if over:
        listed = ", ".join(f"{safe_text(name)} {total:,}" for name, total in over)
        print(f"tokscope: over the limit of {limit:,} tokens (--max-tokens): {listed}", file=sys.stderr)
    return code


def _table(names: list[str], counted: list[Entry], totals: list[int]) -> None:
    shown = [safe_text(n) for n in names]
    widths = [max(len(s), len(str(t))) for s, t in zip(shown, totals)]
    out = ["  ".join(f"{s:>{w}}" for s, w in zip(shown, widths)) + "  path"]
    for entry in counted:
        out.append("  ".join(f"{c:>{w}}" for c, w in zip(entry.counts, widths)) + "  " + safe_text(entry.path))
    files = len(counted)
    out.append("  ".join(f"{t:>{w}}" for t, w in zip(totals, widths)) + f"  total ({files} file{'' if files == 1 else 's'})")
    sys.stdout.write("\n".join(out) + "\n")


def _json(names: list[str], counted: list[Entry], skipped: list[Entry], totals: list[int], limit: int | None,
          over: list[tuple[str, int]]) -> dict[str, Any]:
    def special(entry: Entry) -> str | None:
        return next((f for f in entry.found if f), None)

    return {
        "encodings": names,
        "files": [{"path": e.path, "bytes": e.bytes, "characters": e.chars,
                   "tokens": dict(zip(names, e.counts)), "replaced": e.replaced, "special_text": special(e)}
                  for e in counted],
        "skipped": [{"path": e.path, "reason": e.skip, "error": e.error, "message": e.message} for e in skipped],
        "totals": {"files": len(counted), "skipped": len(skipped), "errors": sum(e.error for e in skipped),
                   "bytes": sum(e.bytes for e in counted), "characters": sum(e.chars for e in counted),
                   "tokens": dict(zip(names, totals))},
        "max_tokens": limit,
        "exceeded": bool(over),
        "over": dict(over),
    }


def _notes(entries: list[Entry], skipped: list[Entry]) -> None:
    """One line per file with a note or an error (at most :data:`MAX_LINES`), then one line that
    sums up what was skipped."""
    lines: list[str] = []
    for entry in entries:
        if entry.counted:
            token = next((f for f in entry.found if f), None)
            if token is not None:
                where = "standard input" if entry.path == STDIN_PATH else safe_text(entry.path)
                lines.append(f"note: {where} holds special-token text ({safe_text(token)!r}), counted as ordinary "
                             "text (--allow-special counts it as special tokens, --special-as-text hides this note)")
        elif entry.error:
            lines.append(f"error: {entry.message}")
        elif entry.skip not in QUIET_KINDS:
            lines.append(f"note: {entry.message}")
    for line in lines[:MAX_LINES]:
        print(f"tokscope: {line}", file=sys.stderr)
    if len(lines) > MAX_LINES:
        print(f"tokscope: ... and {len(lines) - MAX_LINES:,} more lines like these (--json lists every file)",
              file=sys.stderr)
    if skipped:
        kinds: dict[str, int] = {}
        for entry in skipped:
            kinds[entry.skip or "other"] = kinds.get(entry.skip or "other", 0) + 1
        parts = ", ".join(f"{n:,} {_KIND_WORDS.get(k, (k, k))[n != 1]}" for k, n in kinds.items())
        print(f"tokscope: note: {len(skipped):,} skipped: {parts}", file=sys.stderr)
    if not entries:
        print("tokscope: note: nothing to count", file=sys.stderr)


# ----- --tree -----------------------------------------------------------------------------------


def _check_tree_options(args: argparse.Namespace, n: int) -> None:
    """``--depth`` and ``--price`` go with ``--tree``; one price, or one per encoding."""
    if not args.tree:
        for option, value in (("--depth", args.depth), ("--price", args.price)):
            if value is not None:
                raise UsageError(f"{option} goes with --tree")
        return
    if args.total:
        raise UsageError("--tree and --total: choose one")
    if args.price is not None and len(args.price) not in (1, n):
        raise UsageError(f"give one --price for every encoding, or one for all ({n} encodings, "
                         f"{len(args.price)} prices)")


def _prices(args: argparse.Namespace, n: int) -> list[float] | None:
    if args.price is None:
        return None
    return list(args.price) * n if len(args.price) == 1 else list(args.price)


def _folder_tree(names: list[str], counted: list[Entry]) -> Any:
    from ..core.insights.tree import folder_tree

    return folder_tree(((e.path, e.counts or [0] * len(names)) for e in counted), len(names))


def _with_tree(args: argparse.Namespace, names: list[str], counted: list[Entry], doc: dict[str, Any]) -> dict[str, Any]:
    """``--json --tree``: the report with ``tree`` added (folders, their sums and costs, children)."""
    if not args.tree:
        return doc
    from ..core.insights.tree import to_json

    doc["tree"] = to_json(_folder_tree(names, counted), names, _prices(args, len(names)), args.depth)
    return doc


def _tree_table(args: argparse.Namespace, names: list[str], counted: list[Entry]) -> None:
    """One row per folder (its sums) and file, indented by depth, biggest first."""
    from ..core.insights.tree import cost, walk

    prices = _prices(args, len(names))
    root = _folder_tree(names, counted)
    rows = list(walk(root, args.depth))
    headers = [safe_text(n) for n in names]
    if prices is not None:
        headers += ["cost" if len(names) == 1 else f"cost {safe_text(n)}" for n in names]

    def cells(node: Any) -> list[str]:
        out = [str(t) for t in node.tokens]
        if prices is not None:
            out += [f"${cost(t, p):.4f}" for t, p in zip(node.tokens, prices)]
        return out

    table = [cells(node) for _, node in rows]
    widths = [max([len(h)] + [len(r[k]) for r in table]) for k, h in enumerate(headers)]
    out = ["  ".join(f"{h:>{w}}" for h, w in zip(headers, widths)) + "  path"]
    for (depth, node), row in zip(rows, table):
        label = safe_text(node.name if depth else node.path)
        if node.folder:
            label = label if label.endswith("/") or depth else label.rstrip("/") + "/"
            label += f" ({node.files} file{'' if node.files == 1 else 's'})"
        out.append("  ".join(f"{c:>{w}}" for c, w in zip(row, widths)) + "  " + "  " * depth + label)
    sys.stdout.write("\n".join(out) + "\n")


def _price_arg(value: str) -> float:
    from ..core.insights.compare import PriceError, parse_price

    try:
        return parse_price(value)
    except PriceError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _depth_arg(value: str) -> int:
    n = token_budget(value)
    if n < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return n


# ----- the parser -----------------------------------------------------------------------------


def _jobs_arg(value: str) -> int:
    """argparse type of ``-j``: a number of worker processes, 1 or more.

    >>> _jobs_arg("2")
    2
    >>> _jobs_arg("-1")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: not a number of worker processes (1 or more): '-1'
    """
    text = value.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > MAX_DIGITS or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a number of worker processes (1 or more): {safe_text(value)[:40]!r}")
    return int(text)


def register(sub: argparse._SubParsersAction) -> None:
    from .common import add_special_options

    p = sub.add_parser(
        "count", help="count tokens in files, folders or standard input (per file and in total)",
        description="Count tokens in files, folders (-r: and below) or standard input, one column per encoding. "
                    f"Exit codes: 0 counted, 1 an input could not be counted, 2 usage, {EXIT_OVER_LIMIT} a total is "
                    "over --max-tokens.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files, folders, or - for standard input "
                                                            "(default: standard input)")
    add_encoding_option(p, multiple=True)
    p.add_argument("-r", "--recursive", action="store_true", help="count the files in folders below the named ones")
    p.add_argument("--glob", action="append", default=[], metavar="PATTERN",
                   help="in folders, count only files whose name matches (repeat: any may match; a pattern with "
                        "/ matches the path below the folder)")
    p.add_argument("--exclude", action="append", default=[], metavar="PATTERN",
                   help="in folders, leave out files and folders whose name matches (repeatable)")
    p.add_argument("--hidden", action="store_true", help="also count hidden files and folders (names starting with .)")
    p.add_argument("--max-tokens", type=token_budget, metavar="N",
                   help=f"exit with code {EXIT_OVER_LIMIT} when the total of any encoding is more than N")
    p.add_argument("--total", action="store_true", help="print only the totals, one number per encoding")
    p.add_argument("--json", action="store_true", help="print JSON: files, skipped files, totals, the limit")
    p.add_argument("-j", "--jobs", type=_jobs_arg, default=0, metavar="N",
                   help="worker processes (default: one per CPU when the input is big enough)")
    p.add_argument("--errors", choices=("strict", "replace"), default="strict",
                   help="files that are not UTF-8: skip them (strict, default) or count them with U+FFFD")
    p.add_argument("--tree", action="store_true",
                   help="sum the tokens per folder: folders and files as a tree, biggest first (with --json: a tree)")
    p.add_argument("--depth", type=_depth_arg, metavar="N", help="with --tree: show N levels below the top folder")
    p.add_argument("--price", type=_price_arg, action="append", metavar="USD",
                   help="with --tree: also the cost at USD dollars per million tokens (one for all encodings, "
                        "or repeat once per -e in order)")
    add_max_bytes_option(p, each=True)
    add_special_options(p, default="count them as ordinary text, with a note",
                        as_text="count special-token look-alikes as ordinary text, without the note")
    p.set_defaults(func=cmd_count)
