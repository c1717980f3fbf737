"""The public names every area shares: progress reports, Claude Code's file-size format and
counted nouns.

Front ends import them from here at run time (the engine's own modules keep importing them
from where they are defined); nothing here is heavy to import.
"""

from workbench.engine.jsutil import format_file_size
from workbench.engine.progress import Progress, ProgressCallback
from workbench.engine.wording import plural, plural_noun

__all__ = ["Progress", "ProgressCallback", "format_file_size", "plural", "plural_noun"]
