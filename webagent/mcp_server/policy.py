"""The rules every tool call of ``webagent mcp`` passes before anything runs, set when the
server starts (``config.ServerConfig``) and never by a call:

- sites: a call runs within the server's allowed sites, or within fewer (``allowed_sites``
  narrows them); an entry wider than the server's, or a URL outside them, refuses the call
  and says why;
- documents: only files under the server's document folders;
- secrets: the server holds them; a call names the ones a run may type (``<secret:NAME>``),
  never gives a value (a password in plain text, or a held secret's value, refuses the call),
  and every text the server sends back or logs has each value replaced by its placeholder;
- steps: at most the server's limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from webagent.agent.secrets import mask, mask_task
from webagent.browser.guard import PLACEHOLDER, NavigationGuard
from webagent.errors import UserError

STANDARD_PORTS = (80, 443)  # one site to the guard: http://x and https://x

HOW_TO_ALLOW = "the person who runs the server allows sites with --allow-site or allowed_sites in its config"


class Refused(UserError):
    """A tool call outside the server's rules; its message is the reason the assistant reads."""


def _within(site: tuple[str, int | None], allowed: tuple[str, int | None]) -> bool:
    """Whether every URL ``site`` allows is allowed by ``allowed`` (the guard's own matching)."""
    host, port = site
    domain, allowed_port = allowed
    if not (host == domain or host.endswith("." + domain)):
        return False
    if allowed_port is None:
        return True
    return port is not None and (port == allowed_port or (port in STANDARD_PORTS and allowed_port in STANDARD_PORTS))


@dataclass
class Policy:
    sites: list[str]  # the server's allowed sites
    docs_dirs: list[Path] = field(default_factory=list)
    secrets: dict[str, str] = field(default_factory=dict)  # name -> value, held by the server
    max_steps: int = 15  # (the server's: config.ServerConfig.max_steps)

    def sites_for(self, url: str | None, narrowed: list[str] | None = None) -> list[str]:
        """The sites a call may go to: the server's, or ``narrowed`` when every entry of it is
        within them; ``url`` (where the call starts) must be in them. Else ``Refused``, why."""
        entries = NavigationGuard(self.sites).entries  # (host, port or None), as the guard reads them
        chosen = self.sites
        if narrowed:
            chosen = []
            for site in narrowed:
                parsed = NavigationGuard([site])
                if not parsed.entries:
                    raise Refused(f"allowed_sites: {site!r} is not a site (write host or host:port)")
                if not any(_within(parsed.entries[0], e) for e in entries):
                    raise Refused(
                        f"allowed_sites: {site!r} is wider than or outside the sites this server allows "
                        f"({', '.join(self.sites)}): a call may narrow them, never widen them"
                    )
                chosen.append(parsed.allowed_domains[0])
        if url is not None:
            from webagent.agent.episode import check_url

            check_url(url, flag="url ")
            if NavigationGuard(chosen).why_refused(url) is not None:
                raise Refused(f"{url} is outside the allowed sites ({', '.join(chosen)}); {HOW_TO_ALLOW}")
        return list(chosen)

    def document(self, path: str) -> Path:
        """``path`` resolved, when it is a file under one of the document folders."""
        if not self.docs_dirs:
            raise Refused(
                "this server reads no documents: the person who runs it names the folders with --docs-dir "
                "or docs_dirs in its config"
            )
        resolved = Path(path).expanduser().resolve()
        if not any(resolved.is_relative_to(d.resolve()) for d in self.docs_dirs):
            raise Refused(f"{path}: not under the document folders ({', '.join(map(str, self.docs_dirs))})")
        if not resolved.is_file():
            raise Refused(f"{path}: no such file")
        return resolved

    def chosen_secrets(self, names: list[str] | None) -> dict[str, str]:
        """The held secrets named by ``names`` (a name the server does not hold refuses the call)."""
        chosen: dict[str, str] = {}
        for name in names or []:
            key = name.strip().lower()
            if key not in self.secrets:
                held = ", ".join(sorted(self.secrets)) or "none"
                raise Refused(f"secrets: the server holds no secret {name!r} (it holds: {held})")
            chosen[key] = self.secrets[key]
        return chosen

    def check_text(self, what: str, text: str | None) -> None:
        """Refuse an argument that gives a secret's value: a held one, or a password in plain
        text (the value is never repeated)."""
        if not text:
            return
        if any(value in text for value in self.secrets.values()):
            raise Refused(f"{what} contains the value of a secret the server holds: write <secret:NAME> instead")
        _, found = mask_task(PLACEHOLDER.sub("", text))
        if found:
            raise Refused(
                f"{what} gives a password in plain text: give it to the server when it starts "
                "(WEBAGENT_SECRET_NAME or its secrets file), then write <secret:NAME> and name it in secrets"
            )

    def steps(self, asked: int | None) -> int:
        if asked is None:
            return self.max_steps
        if asked > self.max_steps:
            raise Refused(f"max_steps {asked}: this server allows at most {self.max_steps} steps a run")
        return asked

    def mask(self, text: str) -> str:
        """``text`` with every held secret's value replaced by its placeholder."""
        return mask(text, self.secrets) if text and self.secrets else text
