"""The package's two families of errors (issue 46, item 5): every exception class it defines
is a ``UserError`` (one line and an exit code at the CLI) or a ``RuntimeFailure`` (caught
where its caller goes on); ``first_line`` says an exception in one line."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from webagent.cli_common import user_errors
from webagent.errors import DataError, RuntimeFailure, UserError, first_line

ROOT = Path(__file__).parent.parent


def exception_classes() -> set[type[BaseException]]:
    """The exception classes defined at the top level of every module of webagent and mind2web
    (by their files: webagent.apps is a namespace package; the apps' own scripts run in the
    apps' venvs and are not the package's)."""
    found = set()
    for path in sorted([*(ROOT / "webagent").rglob("*.py"), *(ROOT / "mind2web").rglob("*.py")]):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if "builtin" in parts or parts[-1] == "__main__":
            continue
        module = importlib.import_module(".".join(parts).removesuffix(".__init__"))
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == module.__name__:
                found.add(value)
    return found


def test_every_exception_class_of_the_package_is_a_user_error_or_a_runtime_failure():
    from webagent.apps.gold import GoldStepError
    from webagent.apps.instance import AppError
    from webagent.browser.actions import ActionFailed
    from webagent.browser.errors import BrowserError, CaptureError, SharedTargetError
    from webagent.llm.client import ContextOverflow, EndpointUnavailable, ModelCallError, TransientError
    from webagent.miniwob.episode import EpisodeNotStarted

    found = exception_classes()
    runtime = {
        CaptureError,
        SharedTargetError,
        ActionFailed,
        TransientError,
        ModelCallError,
        EndpointUnavailable,
        ContextOverflow,
        AppError,
        GoldStepError,
        EpisodeNotStarted,
    }
    assert runtime | {UserError, DataError, BrowserError} <= found  # the walk sees them all
    assert all(issubclass(c, RuntimeFailure) and not issubclass(c, UserError) for c in runtime)
    strays = sorted(f"{c.__module__}.{c.__qualname__}" for c in found if not issubclass(c, (UserError, RuntimeFailure)))
    assert strays == []
    assert not issubclass(RuntimeFailure, UserError) and not issubclass(UserError, RuntimeFailure)


def test_the_cli_says_a_user_error_in_one_line_and_lets_a_runtime_failure_through(capsys):
    @user_errors
    def mistaken():
        raise DataError("tasks.json", "not a list", record=3)

    with pytest.raises(SystemExit) as exited:
        mistaken()
    assert exited.value.code == 2 and capsys.readouterr().err == "error: tasks.json, record 3: not a list\n"

    @user_errors
    def broken():
        from webagent.llm.client import ModelCallError

        raise ModelCallError("refused")

    with pytest.raises(RuntimeFailure, match="refused"):  # not turned into a line: its traceback stays
        broken()


@pytest.mark.parametrize(
    "exc, empty, line",
    [
        (ValueError("first\nsecond"), None, "first"),
        (ValueError("\n  first\nsecond"), None, "first"),
        (ValueError(""), None, "ValueError"),
        (TimeoutError(), None, "TimeoutError"),
        (ValueError("   "), "", ""),
        (OSError(), "no details", "no details"),
        (ValueError("said"), "", "said"),
    ],
)
def test_first_line(exc, empty, line):
    assert first_line(exc, empty) == line
