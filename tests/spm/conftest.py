"""Fixtures of the SentencePiece and GGUF SentencePiece tests (see :mod:`spm_files`)."""

from spm_files import gguf_models_dir, spm_sdist_dir, trained_spm  # noqa: F401  (fixtures)
