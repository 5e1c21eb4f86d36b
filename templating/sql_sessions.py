"""The old path of `templating.sessions.sql`, kept so existing imports work: it is that module itself."""

import sys

from .sessions import sql as _module
from .sessions.sql import *  # noqa: F403  (for type checkers; at run time the module below replaces this one)

sys.modules[__name__] = _module
