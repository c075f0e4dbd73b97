"""``python -m vkml``: the same command line as the ``vkml`` console script."""

import sys

from vkml.cli import main

sys.exit(main())
