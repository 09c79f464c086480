"""One check per task of tasks.json, read from the tracker's database through
roundup's own API. A check is false on the pristine state, true after the
task's gold path, and false when the task was done twice or when a field of
the touched records that the task did not ask about changed (the pristine
values come from seed_data.py)."""

import re

from seed_data import ISSUES

CHECKS = {}


def check(home, task_id, answer):
    from roundup import instance

    if task_id not in CHECKS:
        raise SystemExit("no check for task %r" % task_id)
    db = instance.open(home).open("admin")
    try:
        return CHECKS[task_id](Tracker(db), answer)
    finally:
        db.close()


def fold(text):
    return re.sub(r"\s+", " ", (text or "")).strip().casefold()


class Tracker:
    """The few reads the checks need, as plain values (names, not ids)."""

    def __init__(self, db):
        self.db = db

    def issue(self, issue_id):
        db, get = self.db, self.db.issue.get
        assignee = get(issue_id, "assignedto")
        return dict(
            title=get(issue_id, "title"),
            priority=db.priority.get(get(issue_id, "priority"), "name"),
            status=db.status.get(get(issue_id, "status"), "name"),
            assignee=db.user.get(assignee, "username") if assignee else None,
            keywords=sorted(db.keyword.get(k, "name") for k in get(issue_id, "keyword")),
            creator=db.user.get(get(issue_id, "creator"), "username"),
            messages=[
                dict(author=db.user.get(db.msg.get(m, "author"), "username"), body=db.msg.get(m, "content"))
                for m in get(issue_id, "messages")
            ],
        )

    def issues_titled(self, title):
        return [i for i in self.db.issue.list() if fold(self.db.issue.get(i, "title")) == fold(title)]


def pristine(issue_id):
    """Issue N as seeded, in Tracker.issue's shape (creator and messages omitted)."""
    title, priority, status, assignee, keywords, _reporter, _msgs = ISSUES[int(issue_id) - 1]
    return dict(title=title, priority=priority, status=status, assignee=assignee, keywords=sorted(keywords))


# An issue's fields a task may edit, in the order a check compares them with the seed.
FIELDS = ("title", "priority", "status", "assignee", "keywords")


def unchanged(now, issue_id, *fields):
    """'' if the given fields of issue_id still hold their seeded values, else why not."""
    seed = pristine(issue_id)
    for f in fields:
        if now[f] != seed[f]:
            return "issue%s: %s changed from %r to %r" % (issue_id, f, seed[f], now[f])
    return ""


def new_messages(now, issue_id):
    return now["messages"][len(ISSUES[int(issue_id) - 1][6]) :]


def task(task_id):
    def register(fn):
        CHECKS[task_id] = fn
        return fn

    return register


def edit_check(issue_id, want, note=None, note_author=None):
    """An edit of one issue: fields in `want` hold the given values, every other
    field of FIELDS its seeded one; with `note`, exactly one new message, that text
    by note_author, else no new message."""

    def run(t, _answer):
        now = t.issue(issue_id)
        for f, v in want.items():
            if now[f] != v:
                return False, "issue%s: %s is %r, wanted %r" % (issue_id, f, now[f], v)
        why = unchanged(now, issue_id, *(f for f in FIELDS if f not in want))
        if why:
            return False, why
        added = new_messages(now, issue_id)
        if note is None:
            if added:
                return False, "issue%s: %d message(s) added, none asked" % (issue_id, len(added))
        else:
            if len(added) != 1:
                return False, "issue%s: %d new message(s), wanted 1" % (issue_id, len(added))
            if fold(added[0]["body"]) != fold(note) or added[0]["author"] != note_author:
                return False, "issue%s: the new message is %r by %s" % (
                    issue_id,
                    added[0]["body"][:80],
                    added[0]["author"],
                )
        return True, "issue%s: %s" % (issue_id, ", ".join("%s=%s" % kv for kv in want.items()) or "as asked")

    return run


def answer_check(expected_fn):
    """An answer task: the answer must contain one of the expected strings
    (case and spacing aside); expected_fn(t) reads them from the database."""

    def run(t, answer):
        expected = expected_fn(t)
        if not fold(answer):
            return False, "no answer"
        if any(fold(e) in fold(answer) for e in expected):
            return True, "answer %r matches %r" % (answer, expected[0])
        return False, "answer %r, the tracker says %r" % (answer, expected[0])

    return run


def create_check(title, want, creator, note=None):
    """Exactly one issue with this title (case aside), with the fields in
    `want` (a new issue's status is "unread" unless the task sets one), filed
    by `creator`, with the description `note` as its only message (or no
    message when note is None)."""

    def run(t, _answer):
        found = t.issues_titled(title)
        if len(found) != 1:
            return False, "%d issues titled %r" % (len(found), title)
        now = t.issue(found[0])
        for f, v in dict(want, creator=creator).items():
            if now[f] != v:
                return False, "issue%s: %s is %r, wanted %r" % (found[0], f, now[f], v)
        bodies = [(fold(m["body"]), m["author"]) for m in now["messages"]]
        wanted = [(fold(note), creator)] if note else []
        if bodies != wanted:
            return False, "issue%s: messages %r, wanted %r" % (found[0], bodies, wanted)
        return True, "issue%s filed as asked" % found[0]

    return run


def user_names(t, username):
    return [username, t.db.user.get(t.db.user.lookup(username), "realname")]


# ---------------------------------------------------------------- the tasks

task("roundup-answer-assignee")(answer_check(lambda t: user_names(t, t.issue("12")["assignee"])))

task("roundup-answer-search-status")(answer_check(lambda t: [t.issue("5")["status"]]))


@task("roundup-answer-count-testing")
def _count_testing(t, answer):
    testing = t.db.issue.filter(None, {"status": t.db.status.lookup("testing")})
    numbers = re.findall(r"\d+", answer or "")
    if numbers == [str(len(testing))]:
        return True, "%d issues in testing" % len(testing)
    return False, "answer %r, %d issues are in testing" % (answer, len(testing))


task("roundup-answer-your-need-eg")(
    answer_check(
        lambda t: [
            t.issue(i)["title"]
            for i in t.db.issue.filter(
                None, {"assignedto": t.db.user.lookup("carol"), "status": t.db.status.lookup("need-eg")}
            )
        ]
    )
)

task("roundup-create-issue")(
    create_check(
        "Exported HTML is missing images",
        dict(priority="bug", status="unread", assignee="carol", keywords=[]),
        "alice",
    )
)

task("roundup-create-issue-with-description")(
    create_check(
        "App crashes when pasting an image from the clipboard",
        dict(priority="critical", status="unread", assignee=None, keywords=["desktop"]),
        "erin",
        note="The desktop app closes as soon as I paste a screenshot into a note.",
    )
)

task("roundup-assign-to-self")(edit_check("7", dict(assignee="bob")))

task("roundup-search-and-comment")(
    edit_check(
        "15",
        {},
        note="Reproduced on 2.3.1 with a clean profile.",
        note_author="carol",
    )
)

task("roundup-resolve-with-note")(
    edit_check(
        "21",
        dict(status="resolved"),
        note="Fixed in 2.4.0, verified by QA.",
        note_author="dave",
    )
)

task("roundup-fix-title-typo")(edit_check("9", dict(title="Sync conflict dialog shows the wrong timestamps")))

task("roundup-raise-priority")(edit_check("29", dict(priority="urgent")))

task("roundup-add-keyword")(edit_check("3", dict(keywords=["editor", "ui"])))

task("roundup-assign-from-unassigned")(edit_check("22", dict(assignee="erin")))


@task("roundup-filter-keyword-assign")
def _filter_keyword_assign(t, answer):
    ok, why = edit_check("18", dict(assignee="dave", status="in-progress"))(t, answer)
    if not ok:
        return ok, why
    for other in ("17", "35"):  # the other 'database' issues stay as they were
        why = unchanged(t.issue(other), other, *FIELDS) or (
            "issue%s: new message" % other if new_messages(t.issue(other), other) else ""
        )
        if why:
            return False, why
    return True, "issue18 taken by dave, in-progress"
