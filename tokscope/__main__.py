"""``python -m tokscope``: the same as the ``tokscope`` command."""

import sys

from .cli import main

sys.exit(main())
