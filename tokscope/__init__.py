"""tokscope: a terminal explorer for how language models cut text into tokens."""

__version__ = "0.1.0"
