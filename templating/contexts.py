"""The old path of `templating.sessions.contexts`, kept so existing imports work: it is that module itself."""

import sys

from .sessions import contexts as _module
from .sessions.contexts import *  # noqa: F403  (for type checkers; at run time the module below replaces this one)

sys.modules[__name__] = _module
