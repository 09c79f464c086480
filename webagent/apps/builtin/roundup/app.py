"""Roundup 2.6 (classic template, sqlite) for webagent's real-app suite.

    python app.py seed STATE
    python app.py serve STATE PORT
    python app.py check STATE TASK_ID [--answer TEXT]

The tracker home (config, schema, templates, db/) is STATE/tracker. Seed data
lives in seed_data.py. Runs with the app venv's python (roundup==2.6.0).
"""

import datetime
import json
import os
import sqlite3
import sys

sys.dont_write_bytecode = True  # keep the app folder free of __pycache__

from seed_data import ISSUES, KEYWORDS, TRACKER_NAME, USERS  # noqa: E402 - after dont_write_bytecode


def stamp(n, k):
    """The fixed time of message k of issue n (0-based): day n from 2025-01-06,
    09:00 plus 2 hours per message, as roundup's date spec."""
    t = datetime.datetime(2025, 1, 6, 9) + datetime.timedelta(days=n, hours=2 * k)
    return t.strftime("%Y-%m-%d.%H:%M:%S")


def tracker_home(state):
    return os.path.join(os.path.abspath(state), "tracker")


# ---------------------------------------------------------------- seed


def seed(state):
    from roundup import configuration, init, instance, password
    from roundup.date import Date

    home = tracker_home(state)
    template = os.path.join(sys.prefix, "share", "roundup", "templates", "classic")
    init.install(home, template)
    # demo.py removes the nosy reactor; we keep it (it adds authors to the
    # nosy list) and send its mail to a file instead of an SMTP server.
    config = configuration.CoreConfig()
    for key, value in {
        "TRACKER_HOME": home,
        "TRACKER_NAME": TRACKER_NAME,
        # a placeholder: serve sets the real port in memory
        "TRACKER_WEB": "http://127.0.0.1:8080/",
        "DATABASE": "db",
        "RDBMS_BACKEND": "sqlite",
        "INDEXER": "native",  # full-text index inside the sqlite db
        "MAIL_DOMAIN": "inkwell.example",
        "MAIL_DEBUG": "mail.log",  # relative to the tracker home
        "TIMEZONE": "UTC",
        # the default 250000 rounds cost ~0.3 s per login and per seeded user
        "PASSWORD_PBKDF2_DEFAULT_ROUNDS": 1000,
        "WEB_SECRET_KEY": "inkwell-webagent-fixed-secret-key-0000000000",
    }.items():
        config[key] = value
    config.save(os.path.join(home, config.INI_FILE))
    os.remove(os.path.join(home, "config.bak"))  # save() keeps the template's
    # install() records the absolute path here; keep the state free of it
    info = os.path.join(home, "TEMPLATE-INFO.txt")
    with open(info, encoding="utf-8") as f:
        text = f.read().replace("Path: %s\n" % home, "")
    with open(info, "w", encoding="utf-8") as f:
        f.write(text)

    label_fields(os.path.join(home, "html"))
    no_fsync_while_seeding()

    tracker = instance.open(home)
    tracker.init(password.Password(USERS[0]["password"], config=config))

    db = tracker.open("admin")
    for u in USERS:
        props = dict(realname=u["realname"], address=u["address"], roles=u["roles"])
        if u["username"] == "admin":
            db.user.set(db.user.lookup("admin"), **props)
        else:
            db.user.create(username=u["username"], password=password.Password(u["password"], config=db.config), **props)
    for name in KEYWORDS:
        db.keyword.create(name=name)
    db.commit()
    db.close()

    # Each issue is filed by its reporter (creator, journal) and its messages
    # by their authors; dates are fixed, one day apart from 2025-01-06.
    for n, issue in enumerate(ISSUES):
        (title, priority, status, assignee, keywords, reporter, messages) = issue
        db = tracker.open(reporter)
        msg_ids = []
        for k, (author, body) in enumerate(messages):
            msg_ids.append(db.msg.create(content=body, author=db.user.lookup(author), date=Date(stamp(n, k))))
        nosy = {db.user.lookup(a) for a, _ in messages}
        if assignee:
            nosy.add(db.user.lookup(assignee))
        db.issue.create(
            title=title,
            priority=db.priority.lookup(priority),
            status=db.status.lookup(status),
            assignedto=db.user.lookup(assignee) if assignee else None,
            keyword=[db.keyword.lookup(k) for k in keywords],
            messages=msg_ids,
            nosy=sorted(nosy, key=int),
        )
        db.commit()
        db.close()
    fix_dates(home)


def no_fsync_while_seeding():
    """Roundup commits each new id on its own; with fsync that is most of the
    seed's time. A crashed seed is thrown away anyway, so skip the syncs."""
    from roundup.backends import back_sqlite

    opened = back_sqlite.Database.sql_open_connection

    def sql_open_connection(self, dbname=None):
        conn, cursor = opened(self, dbname)
        cursor.execute("pragma synchronous = off")
        return conn, cursor

    back_sqlite.Database.sql_open_connection = sql_open_connection


# The classic template's form fields have no accessible name (their caption is
# a <th> beside them, never a <label>), so a person's "the Priority list" has
# nothing to point at. These edits of the tracker's copy of the templates add
# labels and aria-labels; markup only, no change in what the pages do.
ITEM_FIELDS = [  # issue.item.html: (caption, the field's TAL, the field with an id)
    ("Title", None, None),
    ("Priority", "context/priority/menu", "python:context.priority.menu(html_kwargs={'id': 'priority'})"),
    ("Status", "context/status/menu", "python:context.status.menu(html_kwargs={'id': 'status'})"),
    ("Superseder", None, None),
    ("Nosy List", None, None),
    ("Assigned To", "context/assignedto/menu", "python:context.assignedto.menu(html_kwargs={'id': 'assignedto'})"),
    ("Keywords", None, None),
    ("Change Note", 'name="@note"', 'name="@note" id="@note"'),
]
ITEM_IDS = {
    "Title": "title",
    "Priority": "priority",
    "Status": "status",
    "Superseder": "superseder",
    "Nosy List": "nosy",
    "Assigned To": "assignedto",
    "Keywords": "keyword",
    "Change Note": "@note",
}
SEARCH_CAPTIONS = [
    "All text*:",
    "Title:",
    "Keyword:",
    "ID:",
    "Creation Date:",
    "Creator:",
    "Activity:",
    "Actor:",
    "Priority:",
    "Status:",
    "Assigned to:",
]
PAGE_INPUTS = [  # page.html (the sidebar): (the input's start, its accessible name)
    ('<input id="search-text" name="@search_text"', "Search text"),
    ('type="text" name="@number"', "Issue number"),
    ('<input size="10" required name="__login_name"', "Username"),
    ('name="__login_password"', "Password"),
]


def label_fields(html):
    def edit(name, pairs):
        path = os.path.join(html, name)
        text = open(path, encoding="utf-8").read()
        for old, new in pairs:
            assert text.count(old) == 1, (name, old)  # fails loudly on another version
            text = text.replace(old, new)
        open(path, "w", encoding="utf-8").write(text)

    item = []
    for caption, old, new in ITEM_FIELDS:
        th = 'i18n:translate="">%s</th>' % caption
        item.append((th, '><label for="%s" i18n:translate="">%s</label></th>' % (ITEM_IDS[caption], caption)))
        if old:
            item.append((old, new))
    edit("issue.item.html", item)
    edit(
        "issue.search.html",
        [
            (
                '<th i18n:translate="">%s</th>' % c,
                '<th><label tal:attributes="for name" i18n:translate="">%s</label></th>' % c,
            )
            for c in SEARCH_CAPTIONS
        ],
    )
    edit("page.html", [(old, '%s aria-label="%s"' % (old, name)) for old, name in PAGE_INPUTS])


def fix_dates(home):
    """Roundup stamps creation/activity and journal entries with 'now' (and
    message ids with the time and a random part); set them from the seed's
    fixed times so the pristine state is the same each time (and the index's
    order by activity is stable). Only the password salts still differ."""

    def sql_date(n, k):  # roundup's sqlite date format
        return stamp(n, k).replace("-", "").replace(".", "").replace(":", "") + ".000"

    con = sqlite3.connect(os.path.join(home, "db", "db"))
    start = sql_date(-5, 0)  # users, keywords, priorities, statuses
    for cls in ("user", "keyword", "priority", "status"):
        con.execute("update _%s set _creation=?, _activity=?" % cls, (start, start))
        con.execute("update %s__journal set date=?" % cls, (start,))
    for n, issue in enumerate(ISSUES):
        issue_id = str(n + 1)
        last = sql_date(n, len(issue[6]) - 1)
        con.execute("update _issue set _creation=?, _activity=? where id=?", (sql_date(n, 0), last, issue_id))
        con.execute("update issue__journal set date=? where nodeid=?", (sql_date(n, 0), issue_id))
        msg_ids = [
            r[0]
            for r in con.execute(
                "select linkid from issue_messages where nodeid=? order by cast(linkid as int)", (issue_id,)
            )
        ]
        for k, msg_id in enumerate(msg_ids):
            con.execute(
                "update _msg set _creation=?, _activity=?, _messageid=? where id=?",
                (sql_date(n, k), sql_date(n, k), "<msg%s.issue%s@inkwell.example>" % (msg_id, issue_id), msg_id),
            )
            con.execute("update msg__journal set date=? where nodeid=?", (sql_date(n, k), msg_id))
    con.commit()
    con.close()


# ---------------------------------------------------------------- serve


def serve(state, port):
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    from roundup.cgi.wsgi_handler import RequestDispatcher

    # roundup-server refuses to run as root, so serve the WSGI handler here.
    # The tracker (schema, templates) is cached; the db is opened per request.
    app = RequestDispatcher(tracker_home(state))
    app.tracker.config["TRACKER_WEB"] = "http://127.0.0.1:%d/" % port

    # Threads, so that a connection Chromium opens ahead and leaves idle does
    # not hold up the others (roundup-server also serves from threads).
    class Server(ThreadingMixIn, WSGIServer):
        daemon_threads = True

    class QuietHandler(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    httpd = make_server("127.0.0.1", port, app, Server, QuietHandler)
    print("roundup serving on http://127.0.0.1:%d/" % port, flush=True)
    httpd.serve_forever()


# ---------------------------------------------------------------- command line


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "seed" and len(argv) == 3:
        seed(argv[2])
    elif cmd == "serve" and len(argv) == 4:
        serve(argv[2], int(argv[3]))
    elif cmd == "check" and len(argv) >= 4:
        from checks import check

        answer = None
        if "--answer" in argv:
            answer = argv[argv.index("--answer") + 1]
        ok, why = check(tracker_home(argv[2]), argv[3], answer)
        print(json.dumps({"ok": ok, "why": why}))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
