"""``python -m boundcalc``: the same as the ``boundcalc`` command (see :mod:`boundcalc.cli`)."""

import sys

from boundcalc.cli import main

if __name__ == "__main__":
    sys.exit(main())
