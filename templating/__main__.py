"""`python -m templating`: the same as the `templating` command."""

import sys

from .cli import main

sys.exit(main())
