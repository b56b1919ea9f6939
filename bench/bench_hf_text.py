"""HF text stages on 1 MB: tokscope's normalizers/pre-tokenizers against ``tokenizers`` itself.

Two texts: English prose (``_corpus.prose``) and the ``samples/`` files repeated to 1 MB (24
languages, code, JSON: the multilingual case). Three chains: Llama 3 (Split regex + ByteLevel),
GPT-2 (ByteLevel with its regex and a prefix space) and T5 (Precompiled nmt_nfkc +
WhitespaceSplit + Metaspace; the charsmap comes from a SentencePiece model trained in a temporary
folder). The reference is HF's ``PreTokenizedString`` through the same stages (Rust, so expect
tokscope to be several times slower; what matters is staying well under a second or two per MB).

    python bench/bench_hf_text.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "core"))

from _corpus import MB, prose  # noqa: E402
from tokenizers import PreTokenizedString, Regex, Tokenizer  # noqa: E402
from tokenizers import normalizers as N  # noqa: E402
from tokenizers import pre_tokenizers as P  # noqa: E402
from tokenizers.models import WordLevel  # noqa: E402

from tokscope.core import normalizers as our_norm  # noqa: E402
from tokscope.core import pre_tokenizers as our_pre  # noqa: E402
from tokscope.core.text.normalized import NormalizedText  # noqa: E402

LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def samples_mb() -> str:
    parts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "samples").rglob("*")) if p.suffix in (".txt", ".py", ".json")]
    text = "\n".join(parts)
    return (text * (MB // len(text) + 1))[:MB]


def charsmap() -> bytes:
    import sentencepiece as spm
    from test_hf_text_precompiled import charsmap_of

    with tempfile.TemporaryDirectory() as folder:
        corpus = Path(folder) / "c.txt"
        corpus.write_text(samples_mb()[:200_000], encoding="utf-8")
        spm.SentencePieceTrainer.train(
            input=str(corpus), model_prefix=f"{folder}/m", vocab_size=2000, hard_vocab_limit=False,
            model_type="unigram", normalization_rule_name="nmt_nfkc", character_coverage=1.0, minloglevel=2,
        )
        return charsmap_of((Path(folder) / "m.model").read_bytes())


def chains():
    yield "Llama 3 (Split + ByteLevel)", None, P.Sequence([P.Split(Regex(LLAMA3), "isolated"), P.ByteLevel(add_prefix_space=False, use_regex=False)])
    yield "GPT-2 (ByteLevel, prefix space)", None, P.ByteLevel(add_prefix_space=True)
    yield "T5 (Precompiled + WhitespaceSplit + Metaspace)", N.Precompiled(charsmap()), P.Sequence([P.WhitespaceSplit(), P.Metaspace()])


def ours_of(hf_n, hf_p):
    tok = Tokenizer(WordLevel({"a": 0}, unk_token="a"))
    if hf_n is not None:
        tok.normalizer = hf_n
    tok.pre_tokenizer = hf_p
    data = json.loads(tok.to_str())
    return our_norm.from_json(data["normalizer"]), our_pre.from_json(data["pre_tokenizer"])


def best(f, runs=3):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    texts = {"prose 1 MB": prose(MB), "samples 1 MB": samples_mb()}
    for label, hf_n, hf_p in chains():
        n, p = ours_of(hf_n, hf_p)
        for name, text in texts.items():
            def ours():
                t = NormalizedText.identity(text)
                if n is not None:
                    t = n.normalize(t)
                return p.pre_tokenize([t])

            def hf():
                pts = PreTokenizedString(text)
                if hf_n is not None:
                    pts.normalize(lambda ns: hf_n.normalize(ns))
                hf_p.pre_tokenize(pts)
                return pts.get_splits()

            t_ours, chunks = best(ours)
            t_hf, splits = best(hf)
            assert [c.text for c in chunks] == [s for s, _, _ in splits]
            extra = ""
            if n is not None:
                t_norm, _ = best(lambda: n.normalize(NormalizedText.identity(text)))
                extra = f"  (normalizer alone {t_norm:.2f} s)"
            print(f"{label:48} {name:13} tokscope {t_ours:5.2f} s  tokenizers {t_hf:5.2f} s  ({t_ours / t_hf:4.1f}x, {len(chunks)} chunks){extra}")


if __name__ == "__main__":
    main()
