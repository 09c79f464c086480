"""The package's two families of errors. A ``UserError`` is the user's mistake: the CLIs turn
it into one line on stderr and a non-zero exit code. A ``RuntimeFailure`` is something that
failed while the package worked (a page, a model call, an app): its caller records it and goes
on. Anything else is a bug and keeps its traceback."""

from __future__ import annotations

import os


class UserError(Exception):
    """A mistake the user can fix: bad path, bad option, bad data, unreachable endpoint.

    The message must say what is wrong and, where it helps, how to fix it.
    """

    exit_code = 2


class DataError(UserError):
    """Malformed input data; names the file, the record and the field at fault."""

    def __init__(self, file: str | os.PathLike[str], message: str, record: object = None, field: str | None = None):
        self.file, self.record, self.field, self.reason = str(file), record, field, message
        where = self.file
        if record is not None:
            where += f", record {record}"
        if field:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")


class EndpointError(UserError):
    """The model endpoint cannot be used (unreachable, wrong key, unknown model)."""

    exit_code = 3


class RuntimeFailure(Exception):
    """Something the package tried failed, neither by the user's mistake nor by a bug: a page
    that could not be captured, an action, a model call, an app's own machinery, an episode
    that could not start. Its caller records it and goes on (a step's failed action, an
    evaluation's failed item); the CLIs do not turn it into one line as they do a UserError:
    one that reaches them keeps its traceback."""


def first_line(exc: BaseException, empty: str | None = None) -> str:
    """The first line of an exception's message; when it has none, ``empty`` (by default its type's name)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__ if empty is None else empty
