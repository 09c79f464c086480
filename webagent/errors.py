"""The errors a user can cause. The CLIs turn these into one line on stderr and a
non-zero exit code; anything else is a bug and keeps its traceback."""

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


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, or its type's name when it has none."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
