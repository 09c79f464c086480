"""`webagent run --accept-dialogs` reaches the BrowserSession, with the trace folder's
downloads/ as its downloads_dir."""


def test_run_has_an_accept_dialogs_flag_passed_to_the_session(monkeypatch, tmp_path):
    from click.testing import CliRunner

    import webagent.browser as browser_module
    from webagent import cli_run as cli

    seen = {}

    class Stop(Exception):
        pass

    class FakeSession:
        def __init__(self, **kwargs):
            seen.update(kwargs)
            raise Stop()

    monkeypatch.setattr(browser_module, "BrowserSession", FakeSession)
    runner = CliRunner()
    out = runner.invoke(
        cli.run_command,
        ["do it", "--url", "http://127.0.0.1:9/", "--accept-dialogs", "--trace-dir", str(tmp_path / "trace")],
    )
    assert isinstance(out.exception, Stop), out.output
    assert seen["accept_dialogs"] is True
    assert seen["downloads_dir"] == tmp_path / "trace" / "downloads"
