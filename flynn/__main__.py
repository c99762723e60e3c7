"""``python -m flynn``: the same as the ``flynn`` command."""

import sys

from flynn.cli import main

sys.exit(main())
