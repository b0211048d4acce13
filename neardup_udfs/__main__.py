"""``python -m neardup_udfs`` runs the ``neardup`` command."""

import sys

from neardup_udfs.cli import main

sys.exit(main())
