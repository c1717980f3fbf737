"""Errors that carry a message meant for the user.

Front ends print `str(error)` on one line and exit with `error.exit_code`: 2 for bad input or
usage, 1 when the command ran but refused or found something the user must act on.
"""

from __future__ import annotations


class WorkbenchError(Exception):
    """Base class: an expected failure with a user-facing message."""

    exit_code = 2


class UserInputError(WorkbenchError):
    """Bad input: unknown file, invalid YAML, bad flag value, missing folder."""


class NotFoundError(UserInputError):
    """A named memory, session, transcript or history entry does not exist."""


class UnreadableFileError(UserInputError, OSError):
    """A file that was refused or could not be read, with a one-line reason.

    It is an `OSError` too, so code that drops unreadable files keeps doing so, and a
    `UserInputError`, so a command prints it as one line and exits 2.
    """

    def __init__(self, path: str, reason: str, code: int = 0) -> None:
        OSError.__init__(self, code, reason, path)
        self.path = path
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


class UnreachableError(WorkbenchError):
    """A server or API could not be reached."""


class ActionRequired(WorkbenchError):
    """The command ran but stopped on something the user must deal with."""

    exit_code = 1


class ConflictError(ActionRequired):
    """The file changed on disk since it was read; the save was refused."""


class RefusedWriteError(ActionRequired):
    """A write was refused (for example, secrets headed for team memory)."""


class PathTraversalError(ActionRequired):
    """A path or key tried to leave the folder it belongs to."""


class OperationCancelled(WorkbenchError):
    """Long work stopped because the user asked (ctrl+c, or a pane's cancel action).

    The engine never raises it on its own: a progress callback raises it to stop the work at
    the next step, and nothing half-done is written."""

    exit_code = 130
