"""The tasks' checks: each reads the helpdesk's database through Django's ORM (never page
text) and returns (ok, why). Imported by app.py's check after Django is set up under STATE."""

import re

from seed_data import CLOSED, REOPENED, RESOLVED, TICKETS

# What each task's check expects (task id -> expectation). Ticket numbers are TICKETS' order.
CHECKS = {
    "helpdesk-submit-docking-ticket": dict(
        check="public-submit",
        title="Docking station does not detect second screen",
        queue="it",
        prio=2,
        email="sam.reed@example.com",
        desc_has="Dell dock",
    ),
    "helpdesk-submit-billing-question": dict(
        check="public-submit",
        title="Need invoices addressed to our new office",
        queue="billing",
        prio=3,
        email="ines.weber@example.de",
        desc_has="Hafenstrasse 12",
    ),
    "helpdesk-answer-submitter": dict(check="answer", ticket=8, field="submitter"),
    "helpdesk-answer-queue": dict(check="answer", ticket=16, field="queue"),
    "helpdesk-answer-owner": dict(check="answer", ticket=22, field="owner"),
    "helpdesk-assign-battery-to-bob": dict(check="update", ticket=2, set={"owner": "bob"}, by="alice", no_comment=True),
    "helpdesk-internal-note-vpn": dict(
        check="update", ticket=3, by="bob", public=False, comment_has="Firewall idle timeout raised to 60 minutes"
    ),
    "helpdesk-public-reply-damaged-order": dict(
        check="update",
        ticket=13,
        by="alice",
        public=True,
        comment_has="A replacement lamp ships tomorrow, no need to return the broken one",
    ),
    "helpdesk-resolve-pdf-download": dict(
        check="update",
        ticket=11,
        set={"status": RESOLVED},
        by="alice",
        comment_has="Fixed in billing portal release 4.2",
        resolution_has="Fixed in billing portal release 4.2",
    ),
    "helpdesk-close-broken-chair": dict(
        check="update", ticket=19, set={"status": CLOSED}, by="bob", comment_has="Chair replaced"
    ),
    "helpdesk-filter-facilities-take": dict(check="update", ticket=18, set={"owner": "bob"}, by="bob", no_comment=True),
    "helpdesk-filter-owner-raise-refund": dict(check="update", ticket=10, set={"prio": 2}, by="alice", no_comment=True),
    "helpdesk-gdpr-critical-unassigned": dict(check="update", ticket=32, set={"prio": 1}, by="admin", no_comment=True),
    "helpdesk-reopen-phishing": dict(
        check="update",
        ticket=23,
        set={"status": REOPENED},
        by="alice",
        comment_has="Another user received the same email today",
    ),
}


def _seeded(n):
    return TICKETS[n - 1]


def _ticket_unchanged_except(tk, n, allowed=()):
    """'' when ticket tk (seeded as number n) keeps its seeded values outside `allowed`."""
    t = _seeded(n)
    now = {
        "title": tk.title,
        "queue": tk.queue.slug,
        "prio": tk.priority,
        "status": tk.status,
        "owner": tk.assigned_to.username if tk.assigned_to else None,
        "email": tk.submitter_email,
        "desc": tk.description,
    }
    for key, val in now.items():
        if key in allowed:
            continue
        if val != t[key]:
            return f"ticket {n} {key} changed: {t[key]!r} -> {val!r}"
    if tk.on_hold:
        return f"ticket {n} was put on hold"
    if tk.due_date is not None:
        return f"ticket {n} got a due date"
    if tk.merged_to_id is not None:
        return f"ticket {n} was merged into ticket {tk.merged_to_id}"
    return ""


def _new_followups(tk, n):
    """Followups added after the seed (the seeded ones are the opening one plus t['fu'])."""
    seeded = 1 + len(_seeded(n)["fu"])
    return list(tk.followup_set.order_by("id"))[seeded:]


def _only_ticket_changed(n_changed, Ticket):
    """'' when no ticket other than those in n_changed gained followups or changed."""
    for tk in Ticket.objects.exclude(pk__in=n_changed).filter(pk__lte=len(TICKETS)):
        why = _ticket_unchanged_except(tk, tk.pk)
        if why:
            return why
        if _new_followups(tk, tk.pk):
            return f"ticket {tk.pk} got a followup"
    return ""


def _norm(s):
    return " ".join((s or "").replace("\u2019", "'").split()).strip().strip(".").casefold()


def _names_of(field, tk):
    """Each possible value of the asked field: its accepted spellings (the first list is the
    ticket's own value)."""
    from django.contrib.auth.models import User
    from helpdesk.models import Queue, Ticket

    if field == "queue":
        mine = [[tk.queue.title]]
        return mine + [[q.title] for q in Queue.objects.exclude(pk=tk.queue_id)]
    if field == "owner":

        def spell(u):
            return [u.username, u.get_full_name(), u.first_name]

        others = User.objects.exclude(pk=tk.assigned_to_id)
        return [spell(tk.assigned_to) if tk.assigned_to else ["unassigned", "nobody"]] + [spell(u) for u in others]
    if field == "status":
        return [[label] for value, label in sorted(Ticket.STATUS_CHOICES, key=lambda c: c[0] != tk.status)]
    if field == "priority":
        return [
            [label, label.split(". ", 1)[-1]]
            for value, label in sorted(Ticket.PRIORITY_CHOICES, key=lambda c: c[0] != tk.priority)
        ]
    raise KeyError(field)


def _answer_matches(field, tk, truth, answer):
    """The answer names the ticket's value and no other: either exactly, or in a sentence
    ("It is in Customer Support") that names no other value of the same field."""

    said = _norm(answer)
    if field == "submitter":
        emails = {e.lower().strip(".") for e in re.findall(r"[\w.+-]+@[\w.-]+", answer)}
        return emails == {(truth or "").lower()}
    values = _names_of(field, tk)
    mine, others = values[0], [n for v in values[1:] for n in v]
    if said in {_norm(n) for n in mine}:
        return True

    def names(text, name):
        return re.search(r"(?<!\w)" + re.escape(_norm(name)) + r"(?!\w)", text) is not None

    return any(names(said, n) for n in mine) and not any(
        names(said, n) for n in others if _norm(n) not in {_norm(m) for m in mine}
    )


def _check_public_submit(exp, Ticket):
    found = Ticket.objects.filter(title__iexact=exp["title"])
    if found.count() != 1:
        return False, f"{found.count()} tickets titled {exp['title']!r}"
    tk = found.get()
    if tk.queue.slug != exp["queue"]:
        return False, f"queue is {tk.queue.slug}"
    if tk.priority != exp["prio"]:
        return False, f"priority is {tk.priority}"
    if (tk.submitter_email or "").lower() != exp["email"]:
        return False, f"submitter is {tk.submitter_email}"
    if tk.assigned_to_id is not None:
        return False, "ticket got an owner"
    if tk.due_date is not None:  # the form's optional field, which no task asks to fill
        return False, f"ticket got a due date ({tk.due_date:%Y-%m-%d})"
    if exp.get("desc_has") and exp["desc_has"].lower() not in (tk.description or "").lower():
        return False, "description lacks " + exp["desc_has"]
    if Ticket.objects.count() != len(TICKETS) + 1:
        return False, f"{Ticket.objects.count() - len(TICKETS)} new tickets"
    return True, f"ticket {tk.pk} created as asked"


def check(task_id, answer=None):
    """(ok, why) of one task; Django is set up (app.py's check)."""
    if task_id not in CHECKS:
        raise SystemExit(f"unknown task {task_id}")
    from helpdesk.models import Ticket

    exp = CHECKS[task_id]
    kind = exp["check"]
    if kind == "public-submit":
        ok, why = _check_public_submit(exp, Ticket)
        if ok:
            why2 = _only_ticket_changed([], Ticket)
            if why2:
                return False, why2
        return ok, why
    if kind == "answer":
        n = exp["ticket"]
        tk = Ticket.objects.get(pk=n)
        field = exp["field"]
        truth = {
            "submitter": tk.submitter_email,
            "queue": tk.queue.title,
            "owner": tk.assigned_to.username if tk.assigned_to else "",
            "status": tk.get_status_display(),
            "priority": tk.get_priority_display(),
        }[field]
        if answer is None:
            return False, "no answer given"
        if not _answer_matches(field, tk, truth, answer):
            return False, f"answer {answer!r} is not {truth!r}"
        why2 = _only_ticket_changed([], Ticket)
        if why2:
            return False, why2
        return True, f"answer matches {truth!r}"
    if kind == "update":
        # one ticket updated through the followup form: exactly one new followup, with the
        # expected fields, and nothing else changed.
        n = exp["ticket"]
        tk = Ticket.objects.get(pk=n)
        allowed = set(exp.get("set", {}))
        why = _ticket_unchanged_except(tk, n, allowed)
        if why:
            return False, why
        for key, val in exp.get("set", {}).items():
            now = {
                "owner": tk.assigned_to.username if tk.assigned_to else None,
                "status": tk.status,
                "prio": tk.priority,
                "title": tk.title,
                "email": tk.submitter_email,
                "queue": tk.queue.slug,
            }[key]
            if now != val:
                return False, f"ticket {n} {key} is {now!r}, not {val!r}"
        new = _new_followups(tk, n)
        want = exp.get("followups", 1)
        if len(new) != want:
            return False, f"ticket {n} has {len(new)} new followups, not {want}"
        if new:
            fu = new[-1]
            if exp.get("by") and (fu.user is None or fu.user.username != exp["by"]):
                return False, f"followup by {fu.user}"
            if "comment_has" in exp and _norm(exp["comment_has"]) not in _norm(fu.comment):
                return False, f"followup comment is {fu.comment!r}"
            if "comment_has" not in exp and exp.get("no_comment") and (fu.comment or "").strip():
                return False, f"unasked comment {fu.comment!r}"
            if "public" in exp and fu.public != exp["public"]:
                return False, f"followup public={fu.public}"
        if exp.get("resolution_has") and _norm(exp["resolution_has"]) not in _norm(tk.resolution):
            return False, f"resolution is {tk.resolution!r}"
        if Ticket.objects.count() != len(TICKETS):
            return False, "a ticket was added"
        why2 = _only_ticket_changed([n], Ticket)
        if why2:
            return False, why2
        return True, f"ticket {n} updated as asked"
    raise SystemExit(f"task {task_id} has no check kind")
