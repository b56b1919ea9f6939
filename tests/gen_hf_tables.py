"""Measure the character classes Hugging Face ``tokenizers`` uses, and write them to
``tokscope/core/text/unicode_tables.py``.

HF's stages classify characters with several Rust crates, each built on its own Unicode version
(normalization tables of Unicode 9.0, an old ``unicode_categories``, Rust's std, the ``regex``
crate...). Python's ``unicodedata`` is 14.0 and the ``regex`` module newer still, so none of them
can stand in as they are. This script asks the installed ``tokenizers`` about every code point
and records, per class, the exact set it answered (as ranges), or the few code points where it
differs from Python's data. Run it again (``python tests/gen_hf_tables.py``) after upgrading
``tokenizers``; the tests compare the tables with the library on every code point.
"""

from __future__ import annotations

import sys
import unicodedata as ud
from pathlib import Path

import regex
import tokenizers
from tokenizers import NormalizedString
from tokenizers import normalizers as N
from tokenizers import pre_tokenizers as P

CPS = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
OUT = Path(__file__).resolve().parents[1] / "tokscope" / "core" / "text" / "unicode_tables.py"


def hf_norm(norm, s: str) -> str:
    ns = NormalizedString(s)
    norm.normalize(ns)
    return ns.normalized


def per_char(norm, items: list[str], sep: str = "\n") -> list[str]:
    """``norm`` applied to each item: the items joined by ``sep`` for speed (``sep`` must come out
    unchanged and appear in no item's output), and ``sep`` itself on its own."""
    rest = [i for i in items if i != sep]
    out = hf_norm(norm, sep.join(rest)).split(sep)
    assert len(out) == len(rest), norm
    got = dict(zip(rest, out))
    got[sep] = hf_norm(norm, sep)
    return [got[i] for i in items]


def ranges(cps) -> str:
    out, run = [], None
    for c in sorted(set(cps)):
        if run and c == run[1] + 1:
            run[1] = c
            continue
        if run:
            out.append(run)
        run = [c, c]
    if run:
        out.append(run)
    text = " ".join(f"{a:X}" if a == b else f"{a:X}-{b:X}" for a, b in out)
    # wrap for the source file
    lines, line = [], ""
    for item in text.split():
        if len(line) + len(item) + 1 > 92:
            lines.append(line)
            line = ""
        line += item + " "
    if line:
        lines.append(line)
    return "(\n" + "".join(f'    "{ln}"\n' for ln in lines) + ")"


def measure() -> dict[str, list[int]]:
    items = [chr(c) for c in CPS]
    res: dict[str, list[int]] = {}

    # --- normalization (unicode-normalization-alignments): where HF does not know what
    # Python 14.0 knows (new characters since its Unicode 9.0 tables)
    for form in ("NFD", "NFKD"):
        got = per_char(getattr(N, form)(), items)
        res[f"{form}_INERT"] = [ord(i) for i, g in zip(items, got) if g != ud.normalize(form, i)]
        assert all(got[k] == items[k] for k in range(len(items)) if ord(items[k]) in res[f"{form}_INERT"])
    unknown_ccc = []
    for c in CPS:
        k = ud.combining(chr(c))
        if not k:
            continue
        if k < 7:
            known = hf_norm(N.NFD(), "\u093c" + chr(c))[0] != "\u093c"
        else:
            known = hf_norm(N.NFD(), chr(c) + "\u0334")[0] == "\u0334"
        if not known:
            unknown_ccc.append(c)
    res["CCC_ZERO"] = unknown_ccc
    comps = []
    for c in CPS:
        d = ud.decomposition(chr(c))
        if d and not d.startswith("<") and len(d.split()) == 2 and ud.normalize("NFC", chr(c)) == chr(c):
            comps.append(c)
    got = per_char(N.NFC(), [ud.normalize("NFD", chr(c)) for c in comps])
    res["NO_COMPOSE"] = [c for c, g in zip(comps, got) if g != chr(c)]

    # --- supersets of the characters a normalization form may change or combine (from Python's
    # 14.0 data, which knows every character HF's 9.0 tables know): text outside them is left as
    # it is, so only the runs inside need the character-by-character emulation
    seconds = set()
    for c in comps:
        a, b = ud.decomposition(chr(c)).split()
        seconds.add(int(b, 16))
        if ud.combining(chr(int(a, 16))):
            seconds.add(int(a, 16))
    hangul_vt = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    ccc = {c for c in CPS if ud.combining(chr(c))}
    res["D_MAYBE"] = sorted(ccc | {c for c in CPS if ud.decomposition(chr(c))} | set(range(0xAC00, 0xD7A4)))
    res["C_MAYBE"] = sorted(ccc | seconds | hangul_vt | {c for c in CPS if not ud.is_normalized("NFC", chr(c))})
    res["KC_MAYBE"] = sorted(ccc | seconds | hangul_vt | {c for c in CPS if not ud.is_normalized("NFKC", chr(c))})

    # --- Rust std: char::to_lowercase (only the differences from Python's str.lower, as pairs)
    got = per_char(N.Lowercase(), items)
    res["LOWER_DIFF"] = [ord(i) for i, g in zip(items, got) if g != i.lower()]
    res["_lower_map"] = {ord(i): g for i, g in zip(items, got) if g != i.lower()}  # type: ignore[assignment]

    # --- Rust std: char::is_whitespace / is_numeric
    ws, word = P.WhitespaceSplit(), P.Whitespace()
    res["WHITESPACE"] = [c for c in CPS if ws.pre_tokenize_str("a" + chr(c) + "a") == [("a", (0, 1)), ("a", (2, 3))]]
    digits = P.Digits(individual_digits=True)
    res["NUMERIC"] = [c for c in CPS if chr(c) != "a" and (chr(c), (1, 2)) in digits.pre_tokenize_str("a" + chr(c) + "a")]

    # --- regex crate: \w (Whitespace pre-tokenizer)
    res["RX_WORD"] = [c for c in CPS if word.pre_tokenize_str("a" + chr(c) + "a") == [("a" + chr(c) + "a", (0, 3))]]
    rx_space = [c for c in CPS if word.pre_tokenize_str("a" + chr(c) + "a") == [("a", (0, 1)), ("a", (2, 3))]]
    assert rx_space == res["WHITESPACE"], "regex crate \\s differs from char::is_whitespace"

    # --- unicode_categories (+ ASCII punctuation): Punctuation / BertPreTokenizer
    punct = P.Punctuation()
    res["PUNCT"] = [c for c in CPS if chr(c) != "a" and (chr(c), (1, 2)) in punct.pre_tokenize_str("a" + chr(c) + "a")]

    # --- BertNormalizer clean_text: removed characters (NUL, U+FFFD, is_other but \t \n \r)
    clean = N.BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False)
    got = per_char(clean, items, "|")
    res["BERT_REMOVED"] = [ord(i) for i, g in zip(items, got) if g == ""]
    bert_space = [ord(i) for i, g in zip(items, got) if g == " " and i != " "]
    expected = sorted(set(res["WHITESPACE"]) - set(res["BERT_REMOVED"]) - {0x20})
    assert bert_space == expected, "BertNormalizer's whitespace is not char::is_whitespace"

    # --- unicode_categories Mn (BertNormalizer strip_accents, after NFD)
    mn = N.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False)
    nfd = [ud.normalize("NFD", i) if ord(i) not in res["NFD_INERT"] else i for i in items]
    got = per_char(mn, items, "|")
    res["MN"] = [ord(i) for i, g, d in zip(items, got, nfd) if g == "" and d == i]
    # --- unicode-normalization-alignments is_combining_mark (StripAccents)
    got = per_char(N.StripAccents(), items)
    res["COMBINING"] = [ord(i) for i, g in zip(items, got) if g == ""]
    # --- unicode-segmentation (Precompiled's graphemes): code points that the regex module's \X
    # (a newer Unicode) joins to the character before them and HF does not. Seen through a
    # charsmap that rewrites "a": HF rewrites a grapheme shorter than 6 bytes whole, so "a" + c
    # becomes "b" exactly when c joins the "a"
    from tokscope.core.normalizers.precompiled import build_charsmap

    pre = N.Precompiled(build_charsmap({"a": "b"}))
    grapheme = regex.compile(r"\X")
    res["GRAPHEME_SPLIT"] = [c for c in CPS if c >= 0x80 and hf_norm(pre, "a" + chr(c)) != "b"
                             and len(grapheme.findall("a" + chr(c))) == 1]
    assert not [c for c in CPS if c >= 0x80 and hf_norm(pre, "a" + chr(c)) == "b"
                and len(grapheme.findall("a" + chr(c))) != 1], "HF joins a character the regex module does not"
    res.update(measure_onig())
    res["_scripts"] = measure_scripts()  # type: ignore[assignment]
    return res


def measure_scripts() -> list[list[int]]:
    """HF's UnicodeScripts classes: which code points count as one script (SentencePiece's table
    with its Han merges), found by asking the pre-tokenizer where it cuts. Characters of no
    script (they never cut) are left out."""
    us = P.UnicodeScripts()

    def cuts(s: str) -> list[str]:
        return [t for t, _ in us.pre_tokenize_str(s)]

    latin, greek = "a", "\u03b1"
    scripted = []
    for c in CPS:
        ch = chr(c)
        if cuts(latin + ch + greek) == [latin + ch, greek] and cuts(greek + ch + latin) == [greek + ch, latin]:
            continue  # no script: joins whatever is around it
        scripted.append(c)
    # runs of neighbouring code points of one script, then runs merged into classes
    runs: list[list[int]] = []
    for c in scripted:
        if runs and runs[-1][-1] == c - 1 and len(cuts(chr(c - 1) + chr(c))) == 1:
            runs[-1].append(c)
        else:
            runs.append([c])
    classes: list[list[int]] = []
    for run in runs:
        for cls in classes:
            if len(cuts(chr(cls[0]) + chr(run[0]))) == 1:
                cls.extend(run)
                break
        else:
            classes.append(list(run))
    return classes


#: The properties whose Oniguruma classes are measured (``tokscope.core.patterns.onig`` supports these).
ONIG_CATEGORIES = (
    "L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po S Sm Sc Sk So Z Zs Zl Zp "
    "C Cc Cf Co Cn"
).split()
ONIG_SCRIPTS = (
    "Han Hiragana Katakana Hangul Latin Greek Cyrillic Arabic Hebrew Thai Devanagari Bengali "
    "Tamil Telugu Georgian Armenian Ethiopic Khmer Lao Myanmar Common Inherited"
).split()
ONIG_OTHER = {"SPACE": r"\s", "WORD": r"\w", "WORD_IN_CLASS": r"[\w]", "DIGIT": r"\d", "Alpha": r"\p{Alpha}"}


def measure_onig() -> dict[str, list[int]]:
    """Oniguruma's classes (HF's Split/Replace regexes) against the ``regex`` module's: the code
    points the ``regex`` module's newer Unicode assigns but Oniguruma's does not (``ONIG_NEW``),
    and for each property the residue where Oniguruma differs from ``regex`` outside them."""
    big = "".join(chr(c) for c in CPS)

    def onig(cls: str) -> set[int]:
        out: set[int] = set()
        for _, (a, b) in P.Split(tokenizers.Regex(cls + "+"), "removed", invert=True).pre_tokenize_str(big):
            out.update(CPS[a:b])
        return out

    def rx(cls: str) -> set[int]:
        out: set[int] = set()
        for m in regex.finditer(cls + "+", big):
            a, b = m.span()
            out.update(CPS[a:b])
        return out

    new = onig(r"\p{Cn}") - rx(r"\p{Cn}")
    res: dict = {"ONIG_NEW": sorted(new), "_onig_residue": {}}
    props = {name: f"\\p{{{name}}}" for name in ONIG_CATEGORIES + ONIG_SCRIPTS}
    props.update(ONIG_OTHER)
    for name, cls in props.items():
        got = onig(cls)
        expected = rx(cls.replace("[\\w]", "\\w")) - new
        if name in ("C", "Cn"):
            expected |= new
        res["_onig_residue"][name] = sorted(got ^ expected)
    return res


def main() -> None:
    res = measure()
    lower_map: dict[int, str] = res.pop("_lower_map")  # type: ignore[assignment]
    residue: dict[str, list[int]] = res.pop("_onig_residue")  # type: ignore[assignment]
    scripts: list[list[int]] = res.pop("_scripts")  # type: ignore[assignment]
    doc = {
        "NFD_INERT": "code points Python 14.0 decomposes canonically but HF's Unicode 9.0 tables leave alone",
        "NFKD_INERT": "code points Python 14.0 decomposes for compatibility but HF leaves alone",
        "CCC_ZERO": "code points with a combining class in Python 14.0 that HF treats as starters (class 0)",
        "NO_COMPOSE": "primary composites of Python 14.0 that HF's NFC does not compose",
        "D_MAYBE": "every code point NFD or NFKD may change or reorder (a superset)",
        "C_MAYBE": "every code point NFC may change, reorder or compose with what precedes it (a superset)",
        "KC_MAYBE": "every code point NFKC may change, reorder or compose with what precedes it (a superset)",
        "WHITESPACE": "Rust's char::is_whitespace (also the regex crate's \\\\s)",
        "NUMERIC": "Rust's char::is_numeric",
        "RX_WORD": "the regex crate's \\\\w (HF's Whitespace pre-tokenizer)",
        "PUNCT": "char::is_ascii_punctuation or unicode_categories' is_punctuation",
        "BERT_REMOVED": "what BertNormalizer's clean_text removes: NUL, U+FFFD, is_other but \\\\t \\\\n \\\\r",
        "MN": "unicode_categories' is_mark_nonspacing (for characters NFD leaves alone)",
        "COMBINING": "unicode-normalization-alignments' is_combining_mark (StripAccents)",
        "GRAPHEME_SPLIT": "code points the regex module's \\\\X joins to the character before them but HF's unicode-segmentation does not (Precompiled's graphemes)",
    }
    lines = [
        '"""Character classes of Hugging Face ``tokenizers``, measured on every code point.',
        "",
        f"Generated by ``tests/gen_hf_tables.py`` from tokenizers {tokenizers.__version__}; do not edit.",
        "Each table is a string of ``start[-end]`` hexadecimal code point ranges (see",
        ":func:`tokscope.core.text.unicode.parse_ranges`).",
        '"""',
        "",
        "# ruff: noqa: E501",
        "",
        f'TOKENIZERS_VERSION = "{tokenizers.__version__}"',
        "",
    ]
    for name, cps in res.items():
        if name == "LOWER_DIFF":
            continue
        if name == "ONIG_NEW":
            doc[name] = "code points the regex module's Unicode assigns but Oniguruma's (16.0) does not"
        lines.append(f"#: {doc[name]}")
        lines.append(f"{name} = {ranges(cps)}")
        lines.append("")
    lines.append("#: The properties Oniguruma is measured on, each with the code points (ONIG_NEW aside) where")
    lines.append("#: its class differs from the regex module's (SPACE, WORD, DIGIT: \\\\s, \\\\w, \\\\d)")
    lines.append("ONIG_RESIDUE = {")
    for name, cps in residue.items():
        body = ranges(cps)[1:-1].strip() or '""'
        lines.append(f'    "{name}": {body},')
    lines.append("}")
    lines.append("")
    lines.append("#: HF's UnicodeScripts: one entry per script (numbered by first appearance), each the code")
    lines.append("#: points of that script; code points in none have no script (they never cut)")
    lines.append("UNICODE_SCRIPTS = (")
    for cls in scripts:
        body = ranges(cls)[1:-1].strip().replace("\n    ", "\n        ")
        lines.append(f"    (\n        {body}\n    ),")
    lines.append(")")
    lines.append("")
    lines.append("#: Rust's char::to_lowercase where it differs from Python's str.lower (code point -> lowercase)")
    lines.append("LOWER_DIFF = {")
    for cp, low in sorted(lower_map.items()):
        lines.append(f"    0x{cp:X}: {low!r},")
    lines.append("}")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT} ({', '.join(f'{k}: {len(v)}' for k, v in res.items())})", file=sys.stderr)


if __name__ == "__main__":
    main()
