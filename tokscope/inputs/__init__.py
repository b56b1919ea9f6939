"""The user's text: where tokscope reads what it tokenizes (files, standard input, arguments, the
folders ``count`` walks), as opposed to :mod:`tokscope.sources`, which turns outside vocabularies
into tokenizers.

- :mod:`.text_input`: the one reader of a user's text (size limits, UTF-8 checks, FIFOs and
  devices refused, one-line :class:`~.text_input.InputError` messages);
- :mod:`.walk`: the files under folders that ``count`` reads (globs, excludes, symlink loops).

Both sit beside :mod:`tokscope.sources` over the core: the app and the commands read a text the
same way.
"""
