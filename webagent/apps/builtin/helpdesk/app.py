"""django-helpdesk 2.6.1 for webagent's real-app suite: seed / serve / check.

Run with the app venv's python, cwd = this folder (see webagent/apps/APP_FORMAT.md):
    python app.py seed STATE
    python app.py serve STATE PORT
    python app.py check STATE TASK_ID [--answer TEXT]
"""

import datetime as dt
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.dont_write_bytecode = True  # no __pycache__ in the app folder (its files key the pristine state)

USERS = [
    # login, password, first, last, email, staff, superuser
    ("admin", "admin-pass-1", "Dana", "Admin", "admin@deskco.example", True, True),
    ("alice", "alice-pass-1", "Alice", "Moreau", "alice@deskco.example", True, False),
    ("bob", "bob-pass-1", "Bob", "Okafor", "bob@deskco.example", True, False),
    ("carol", "carol-pass-1", "Carol", "Nguyen", "carol.nguyen@example.org", False, False),
]

QUEUES = [
    # slug, title, email
    ("it", "IT Support", "it-support@deskco.example"),
    ("cs", "Customer Support", "support@deskco.example"),
    ("billing", "Billing", "billing@deskco.example"),
    ("facilities", "Facilities", "facilities@deskco.example"),
]

OPEN, REOPENED, RESOLVED, CLOSED = 1, 2, 3, 4

# Tickets, numbered 1.. in this order. Followups: (day offset, login or None for the
# submitter, public, comment, new_status or None).
TICKETS = [
    dict(
        title="Outlook keeps asking for my password",
        queue="it",
        prio=3,
        status=OPEN,
        owner="alice",
        email="m.fischer@example.com",
        day=1,
        desc="Since this morning Outlook pops up a password prompt every few minutes, even after I type it in.",
        fu=[(1, "alice", True, "Could you tell me whether this also happens in webmail?", None)],
    ),
    dict(
        title="Laptop battery swelling",
        queue="it",
        prio=2,
        status=OPEN,
        owner=None,
        email="j.patel@example.com",
        day=2,
        desc="My ThinkPad's touchpad is lifting, looks like the battery is swollen. Asset tag LT-2231.",
        fu=[],
    ),
    dict(
        title="VPN disconnects every 20 minutes",
        queue="it",
        prio=2,
        status=OPEN,
        owner="bob",
        email="r.silva@example.com",
        day=2,
        desc="The GlobalConnect VPN drops roughly every 20 minutes when I work from home.",
        fu=[(3, "bob", False, "Seen on two other users, probably the new firewall idle timeout.", None)],
    ),
    dict(
        title="Request: second monitor for new hire",
        queue="it",
        prio=4,
        status=OPEN,
        owner=None,
        email="hr@deskco.example",
        day=3,
        desc="Kim Lee starts on Monday in Finance and needs a second 24-inch monitor.",
        fu=[],
    ),
    dict(
        title="Shared drive S: not mapped after reboot",
        queue="it",
        prio=3,
        status=RESOLVED,
        owner="alice",
        email="t.brown@example.com",
        day=3,
        desc="After the weekly reboot my S: drive is gone.",
        fu=[(4, "alice", True, "The login script was fixed, please log out and back in.", RESOLVED)],
    ),
    dict(
        title="Printer on 3rd floor jams constantly",
        queue="facilities",
        prio=3,
        status=OPEN,
        owner="bob",
        email="l.garcia@example.com",
        day=4,
        desc="The HP printer near room 312 jams on every second page.",
        fu=[(5, None, True, "It is still jamming today, even with new paper.", None)],
    ),
    dict(
        title="Password reset for SAP account",
        queue="it",
        prio=2,
        status=CLOSED,
        owner="alice",
        email="k.schmidt@example.com",
        day=4,
        desc="I locked myself out of SAP after the holidays.",
        fu=[
            (4, "alice", True, "Password reset, temporary password sent by SMS.", RESOLVED),
            (6, "alice", False, "No answer from the user, closing.", CLOSED),
        ],
    ),
    dict(
        title="Invoice #4471 charged twice",
        queue="billing",
        prio=1,
        status=OPEN,
        owner=None,
        email="accounts@brightpath.example",
        day=5,
        desc="Our card was charged twice for invoice #4471 (EUR 1,240.00). Please refund one payment.",
        fu=[],
    ),
    dict(
        title="Update VAT number on our account",
        queue="billing",
        prio=4,
        status=OPEN,
        owner="bob",
        email="finance@nordlicht.example",
        day=5,
        desc="Our new VAT number is DE298765432, please put it on future invoices.",
        fu=[],
    ),
    dict(
        title="Refund for cancelled annual plan",
        queue="billing",
        prio=3,
        status=REOPENED,
        owner="alice",
        email="o.haddad@example.net",
        day=6,
        desc="I cancelled within 14 days and would like a refund of the annual plan.",
        fu=[
            (7, "alice", True, "Refund issued to your card.", RESOLVED),
            (9, None, True, "Nothing arrived on my card yet.", REOPENED),
        ],
    ),
    dict(
        title="Cannot download invoices as PDF",
        queue="billing",
        prio=3,
        status=OPEN,
        owner=None,
        email="p.kowalski@example.com",
        day=6,
        desc="Clicking 'Download PDF' in the billing portal gives an empty page.",
        fu=[],
    ),
    dict(
        title="Wrong currency on quote Q-2024-118",
        queue="billing",
        prio=4,
        status=RESOLVED,
        owner="bob",
        email="sales@andes-trading.example",
        day=7,
        desc="The quote shows USD but we agreed on EUR.",
        fu=[(8, "bob", True, "Quote re-issued in EUR.", RESOLVED)],
    ),
    dict(
        title="Order 88213 arrived damaged",
        queue="cs",
        prio=2,
        status=OPEN,
        owner="alice",
        email="c.martin@example.com",
        day=7,
        desc="The box was crushed and the lamp's glass shade is broken. Photos attached to my email.",
        fu=[(8, "alice", True, "Sorry about that! Could you send the photos to this ticket?", None)],
    ),
    dict(
        title="How do I change my delivery address?",
        queue="cs",
        prio=5,
        status=OPEN,
        owner=None,
        email="s.ito@example.jp",
        day=8,
        desc="I moved last week; where can I change the delivery address for my subscription?",
        fu=[],
    ),
    dict(
        title="Account locked after too many attempts",
        queue="cs",
        prio=2,
        status=OPEN,
        owner="bob",
        email="carol.nguyen@example.org",
        day=8,
        desc="My customer account is locked, I mistyped my password a few times.",
        fu=[],
    ),
    dict(
        title="Promo code SPRING25 not accepted",
        queue="cs",
        prio=3,
        status=OPEN,
        owner=None,
        email="b.adeyemi@example.com",
        day=9,
        desc="The checkout says the code SPRING25 is invalid, the newsletter said it runs until May.",
        fu=[],
    ),
    dict(
        title="Missing item in order 87990",
        queue="cs",
        prio=3,
        status=CLOSED,
        owner="alice",
        email="h.jensen@example.dk",
        day=9,
        desc="The order was missing the USB-C cable.",
        fu=[
            (10, "alice", True, "A cable was sent today, tracking 00340434.", RESOLVED),
            (12, "alice", False, "Delivered, closing.", CLOSED),
        ],
    ),
    dict(
        title="Air conditioning too cold in meeting room B",
        queue="facilities",
        prio=4,
        status=OPEN,
        owner=None,
        email="e.rossi@example.com",
        day=10,
        desc="Meeting room B is at 17 degrees all afternoon.",
        fu=[],
    ),
    dict(
        title="Broken chair at desk 4.12",
        queue="facilities",
        prio=5,
        status=OPEN,
        owner="bob",
        email="n.dubois@example.com",
        day=10,
        desc="The chair at desk 4.12 sinks down all the time.",
        fu=[],
    ),
    dict(
        title="Badge reader at main entrance not working",
        queue="facilities",
        prio=1,
        status=OPEN,
        owner="alice",
        email="security@deskco.example",
        day=11,
        desc="The badge reader at the main entrance rejects every badge since 8:00.",
        fu=[(11, "alice", False, "Vendor called, technician on the way.", None)],
    ),
    dict(
        title="Install Adobe Acrobat Pro",
        queue="it",
        prio=4,
        status=OPEN,
        owner=None,
        email="g.novak@example.com",
        day=11,
        desc="I need Acrobat Pro to edit contracts; my manager approved it.",
        fu=[],
    ),
    dict(
        title="Wi-Fi slow in building C",
        queue="it",
        prio=3,
        status=OPEN,
        owner="bob",
        email="a.khan@example.com",
        day=12,
        desc="Wi-Fi in building C is below 2 Mbit/s since Tuesday.",
        fu=[(12, "bob", True, "We are replacing the access point on floor 2.", None)],
    ),
    dict(
        title="Phishing email reported: 'Your mailbox is full'",
        queue="it",
        prio=2,
        status=RESOLVED,
        owner="alice",
        email="f.meyer@example.com",
        day=12,
        desc="I got an email asking me to log in to 'upgrade' my mailbox. Looks fake.",
        fu=[(13, "alice", True, "Thanks, the message was blocked for everyone.", RESOLVED)],
    ),
    dict(
        title="Subscription renewal failed",
        queue="billing",
        prio=2,
        status=OPEN,
        owner=None,
        email="carol.nguyen@example.org",
        day=13,
        desc="My card was declined at renewal although it is valid until 2027.",
        fu=[],
    ),
    dict(
        title="Request a copy of contract terms",
        queue="cs",
        prio=5,
        status=RESOLVED,
        owner="bob",
        email="legal@fjord-media.example",
        day=13,
        desc="Please send us a copy of the terms we signed in 2023.",
        fu=[(14, "bob", True, "Sent as PDF to your address.", RESOLVED)],
    ),
    dict(
        title="Parking permit for visitor",
        queue="facilities",
        prio=4,
        status=OPEN,
        owner=None,
        email="reception@deskco.example",
        day=14,
        desc="A visitor from Andes Trading needs a parking permit for Thursday.",
        fu=[],
    ),
    dict(
        title="Monitor flickering",
        queue="it",
        prio=4,
        status=OPEN,
        owner=None,
        email="j.patel@example.com",
        day=14,
        desc="The left monitor flickers when it warms up.",
        fu=[],
    ),
    dict(
        title="Delivery tracking link broken",
        queue="cs",
        prio=3,
        status=OPEN,
        owner="alice",
        email="d.evans@example.co.uk",
        day=15,
        desc="The tracking link in the shipping email gives a 404.",
        fu=[],
    ),
    dict(
        title="Leaking tap in 2nd floor kitchen",
        queue="facilities",
        prio=3,
        status=CLOSED,
        owner="bob",
        email="l.garcia@example.com",
        day=15,
        desc="The tap in the kitchen on the 2nd floor drips.",
        fu=[(16, "bob", False, "Plumber fixed it.", CLOSED)],
    ),
    dict(
        title="Overdue invoice reminder sent by mistake",
        queue="billing",
        prio=3,
        status=OPEN,
        owner=None,
        email="ap@greenfield.example",
        day=16,
        desc="We got a reminder for invoice #4390 which we paid on the 3rd.",
        fu=[],
    ),
    dict(
        title="New laptop for Finance team lead",
        queue="it",
        prio=3,
        status=OPEN,
        owner="alice",
        email="hr@deskco.example",
        day=16,
        desc="Sam Ortiz needs a laptop with 32 GB RAM from the 1st.",
        fu=[],
    ),
    dict(
        title="Export of my personal data (GDPR)",
        queue="cs",
        prio=2,
        status=OPEN,
        owner=None,
        email="v.lambert@example.fr",
        day=17,
        desc="Under GDPR article 15 I request a copy of all personal data you hold about me.",
        fu=[],
    ),
]


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

BASE = dt.datetime(2025, 3, 3, 9, 0, tzinfo=dt.UTC)


def _django(state):
    os.environ["HELPDESK_STATE"] = str(Path(state).resolve())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hdsite.settings")
    sys.path.insert(0, str(HERE))
    import django

    django.setup()


# ---------------------------------------------------------------------------------- seed


def seed(state):
    state = Path(state)
    state.mkdir(parents=True, exist_ok=True)
    (state / "media").mkdir(exist_ok=True)
    (state / "mail").mkdir(exist_ok=True)
    os.environ["HELPDESK_SEEDING"] = "1"
    _django(state)
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    call_command("loaddata", "emailtemplate.json", verbosity=0)

    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import User
    from django.contrib.sites.models import Site
    from helpdesk.models import FollowUp, Queue, Ticket, TicketChange, UserSettings

    Site.objects.update_or_create(id=1, defaults={"domain": "127.0.0.1", "name": "DeskCo Helpdesk"})
    users = {}
    for login, pw, first, last, email, staff, su in USERS:
        u = User(username=login, first_name=first, last_name=last, email=email, is_staff=staff, is_superuser=su)
        u.password = make_password(pw, salt="webagent" + login)  # fixed salt: same file each seed
        u.save()
        users[login] = u
        UserSettings.objects.get_or_create(user=u)
    User.objects.update(date_joined=BASE - dt.timedelta(days=30))
    queues = {}
    for slug, title, email in QUEUES:
        queues[slug] = Queue.objects.create(
            title=title,
            slug=slug,
            email_address=email,
            allow_public_submission=True,
            allow_email_submission=False,
            enable_notifications_on_email_events=False,
        )
    status_label = {OPEN: "Open", REOPENED: "Reopened", RESOLVED: "Resolved", CLOSED: "Closed"}
    for n, t in enumerate(TICKETS, start=1):
        created = BASE + dt.timedelta(days=t["day"], hours=n % 7)
        tk = Ticket.objects.create(
            title=t["title"],
            queue=queues[t["queue"]],
            submitter_email=t["email"],
            assigned_to=users[t["owner"]] if t["owner"] else None,
            status=OPEN,
            description=t["desc"],
            priority=t["prio"],
        )
        assert tk.id == n, (tk.id, n)
        fus = [(t["day"], None, True, "Ticket Opened", None)] + list(t["fu"])
        last = created
        status = OPEN
        for k, (day, who, public, comment, new_status) in enumerate(fus):
            when = created if k == 0 else BASE + dt.timedelta(days=day, hours=n % 7 + k)
            title = "Ticket Opened" if k == 0 else ("Comment" if new_status is None else status_label[new_status])
            fu = FollowUp.objects.create(
                ticket=tk,
                title=title,
                comment="" if k == 0 else comment,
                public=public,
                user=users[who] if who else None,
                new_status=new_status,
            )
            FollowUp.objects.filter(pk=fu.pk).update(date=when)
            if new_status is not None and new_status != status:
                TicketChange.objects.create(
                    followup=fu, field="Status", old_value=status_label[status], new_value=status_label[new_status]
                )
                status = new_status
            last = when
        assert status == t["status"], (n, status, t["status"])
        resolution = ""
        if status in (RESOLVED, CLOSED):
            resolution = [c for (_, _, _, c, s) in t["fu"] if s == RESOLVED or s == CLOSED][0]
        Ticket.objects.filter(pk=tk.pk).update(
            created=created,
            modified=last,
            status=status,
            resolution=resolution or None,
            secret_key="%08x-0000-4000-8000-%012x" % (n, n * 7919),
        )
    from django.db import connection

    connection.close()
    import sqlite3

    db = sqlite3.connect(state / "db.sqlite3")
    with db:  # the only clock-dependent values left: when each migration was applied
        db.execute("UPDATE django_migrations SET applied = ?", ("2025-03-01 08:00:00",))
    db.execute("VACUUM")
    db.close()


# --------------------------------------------------------------------------------- serve


def serve(state, port):
    _django(state)
    from hdsite.wsgi import application
    from waitress import serve as waitress_serve

    waitress_serve(application, host="127.0.0.1", port=int(port), threads=4, ident="helpdesk", _quiet=True)


# --------------------------------------------------------------------------------- check


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
    import re

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
    if exp.get("desc_has") and exp["desc_has"].lower() not in (tk.description or "").lower():
        return False, "description lacks " + exp["desc_has"]
    if Ticket.objects.count() != len(TICKETS) + 1:
        return False, f"{Ticket.objects.count() - len(TICKETS)} new tickets"
    return True, f"ticket {tk.pk} created as asked"


def check(state, task_id, answer=None):
    if task_id not in CHECKS:
        raise SystemExit(f"unknown task {task_id}")
    _django(state)
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


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    cmd = argv[1]
    if cmd == "seed":
        seed(argv[2])
    elif cmd == "serve":
        serve(argv[2], argv[3])
    elif cmd == "check":
        answer = None
        rest = argv[4:]
        if rest[:1] == ["--answer"] and len(rest) >= 2:
            answer = rest[1]
        elif rest and rest[0].startswith("--answer="):
            answer = rest[0].split("=", 1)[1]
        ok, why = check(argv[2], argv[3], answer)
        print(json.dumps({"ok": bool(ok), "why": why}))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
