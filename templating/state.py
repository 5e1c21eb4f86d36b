"""The old path of `templating.sessions.state`, kept so existing imports work: it is that module itself."""

import sys

from .sessions import state as _module
from .sessions.state import *  # noqa: F403  (for type checkers; at run time the module below replaces this one)

sys.modules[__name__] = _module
