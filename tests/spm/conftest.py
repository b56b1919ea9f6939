"""Fixtures of the SentencePiece tests (see :mod:`spm_files`)."""

from spm_files import spm_sdist_dir, trained_spm  # noqa: F401  (fixtures)
