"""BertProcessing (``[CLS] A [SEP] B [SEP]``), as Hugging Face's ``processors/bert.rs``."""

from __future__ import annotations


from .base import Encoding, ProcessorBase, pair_of


class BertProcessing(ProcessorBase):
    """``[CLS] A [SEP]`` and ``[CLS] A [SEP] B [SEP]`` (B's tokens and its ``[SEP]`` of type 1)."""

    def __init__(self, sep: tuple[str, int] = ("[SEP]", 102), cls: tuple[str, int] = ("[CLS]", 101)) -> None:
        self.sep = pair_of(sep, "BertProcessing sep")
        self.cls = pair_of(cls, "BertProcessing cls")

    def added_tokens(self, is_pair: bool) -> int:
        return 3 if is_pair else 2

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool = True) -> list[Encoding]:
        if not add_special_tokens:
            return encodings
        cls, sep = self.cls[1], self.sep[1]
        out = []
        for i, encoding in enumerate(encodings):
            if i == 0:
                out.append([(cls, None, 0), *encoding, (sep, None, 0)])
            else:
                out.append([*encoding, (sep, None, 1)])
        return out
