"""``webagent skills run`` on a page of another port (or host) says so, naming both sites:
skills are kept per host:port, and "does not start on /" sent a user looking at the page
(issue 47, item 7)."""

from webagent.skills.direct import missing, not_offered
from webagent.skills.model import Skill, SkillStart

SKILL = Skill(
    id="log_in",
    name="Log in",
    description="",
    site="127.0.0.1:8001",
    start=SkillStart(url="http://127.0.0.1:8001/login/", pattern="/login/"),
    steps=[],
)


def test_a_page_on_another_port_names_the_port_and_both_sites():
    assert not_offered(SKILL, "http://127.0.0.1:9000/login/") == (
        "skill log_in is kept for 127.0.0.1:8001, and http://127.0.0.1:9000/login/ is on 127.0.0.1:9000: "
        "the port differs (skills are kept per host and port)"
    )
    assert "the host and port differ" in not_offered(SKILL, "http://localhost/login/")


def test_a_site_given_with_another_port_names_the_port_and_the_site_that_keeps_it():
    assert missing("127.0.0.1:9000", "log_in", [SKILL]) == (
        "no skill 'log_in' for 127.0.0.1:9000; it is kept for 127.0.0.1:8001: "
        "the port differs (skills are kept per host and port)"
    )
    assert (
        missing("127.0.0.1:9000", "save", [SKILL]) == "no skill 'save' for 127.0.0.1:9000 (see `webagent skills list`)"
    )


def test_on_its_own_site_the_start_page_is_the_cause():
    assert not_offered(SKILL, "http://127.0.0.1:8001/") == (
        "skill log_in does not start on http://127.0.0.1:8001/ (it starts on /login/)"
    )
