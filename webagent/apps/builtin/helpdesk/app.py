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

from seed_data import BASE, CLOSED, OPEN, QUEUES, REOPENED, RESOLVED, TICKETS, USERS  # noqa: E402


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


def check(state, task_id, answer=None):
    _django(state)
    from checks import check as run_check
    from django.core.exceptions import ObjectDoesNotExist

    try:
        return run_check(task_id, answer)
    except ObjectDoesNotExist as exc:  # the run deleted a record the task needs (a ticket, a user)
        return False, f"a record the task needs no longer exists: {exc}"


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
