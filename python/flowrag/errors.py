"""Exceptions raised by flowrag: one class per engine status code.

Every error the engine reports is raised as a subclass of :class:`Error`
carrying the status ``code`` (e.g. ``"InvalidArgument"``) and the engine's
``message``, which names the input that was wrong (file, line, field,
document, option). When a Python callable (an embedder or chat model) raised
during the call, its exception is the ``__cause__``.

Wrong argument *types* raise the built-in :class:`TypeError`, naming the
argument. Ctrl-C during a long call raises :class:`KeyboardInterrupt` after
the engine stopped cleanly (committed batches stay in the store).
"""

from __future__ import annotations

__all__ = [
    "Error", "InvalidArgument", "NotFound", "AlreadyExists", "Corruption", "IoError",
    "Unavailable", "DeadlineExceeded", "FailedPrecondition", "Cancelled", "Internal",
    "from_status",
]


class Error(Exception):
    """A flowrag engine error: ``code`` names the status, ``message`` says what was wrong."""

    code = "Unknown"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InvalidArgument(Error, ValueError):
    """The caller's input is malformed (a bad option, document or value)."""

    code = "InvalidArgument"


class NotFound(Error, LookupError):
    """A file, document or key does not exist."""

    code = "NotFound"


class AlreadyExists(Error):
    code = "AlreadyExists"


class Corruption(Error):
    """Stored data is inconsistent or not a flowrag store."""

    code = "Corruption"


class IoError(Error, OSError):
    """The operating system refused a read or write."""

    code = "IoError"


class Unavailable(Error):
    """A model or remote service failed (a Python model callable that raised, too)."""

    code = "Unavailable"


class DeadlineExceeded(Error, TimeoutError):
    code = "DeadlineExceeded"


class FailedPrecondition(Error):
    """The operation needs state that is not there (a closed engine, a read-only store)."""

    code = "FailedPrecondition"


class Cancelled(Error):
    code = "Cancelled"


class Internal(Error):
    code = "Internal"


_BY_CODE = {cls.code: cls for cls in (
    InvalidArgument, NotFound, AlreadyExists, Corruption, IoError, Unavailable,
    DeadlineExceeded, FailedPrecondition, Cancelled, Internal)}


def from_status(code: str, message: str) -> Error:
    """The exception for an engine status ``code`` (the binding raises these)."""
    cls = _BY_CODE.get(code, Error)
    err = cls(message)
    if cls is Error:
        err.code = code
    return err
