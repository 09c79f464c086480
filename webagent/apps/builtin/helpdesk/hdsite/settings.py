"""Django settings for the offline django-helpdesk instance.

Everything the app writes lives under $HELPDESK_STATE (the STATE folder given to app.py).
"""

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
STATE = Path(os.environ.get("HELPDESK_STATE", HERE / "state")).resolve()

SECRET_KEY = "webagent-offline-helpdesk-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
SITE_ID = 1

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.sites",
    "django.contrib.humanize",
    "rest_framework",
    "helpdesk",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "hdsite.site_host.SameHostRedirects",
]

ROOT_URLCONF = "hdsite.urls"
WSGI_APPLICATION = "hdsite.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [str(HERE / "templates")],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.debug",
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# The framework resets an instance by restoring STATE's files under the running server:
# a connection per request and no cache in the process.
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(STATE / "db.sqlite3"),
        "CONN_MAX_AGE": 0,
        # seeding writes a fresh file that is thrown away if it fails: no fsync there
        "OPTIONS": {"init_command": "PRAGMA synchronous=OFF; PRAGMA journal_mode=MEMORY"}
        if os.environ.get("HELPDESK_SEEDING")
        else {},
    }
}
CACHES = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
SESSION_ENGINE = "django.contrib.sessions.backends.db"
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"

PASSWORD_HASHERS = [
    # fast hashing: seeding and logging in stay well under a second
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
MEDIA_ROOT = str(STATE / "media")
MEDIA_URL = "/media/"

EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
EMAIL_FILE_PATH = str(STATE / "mail")
DEFAULT_FROM_EMAIL = "helpdesk@example.com"
SERVER_EMAIL = "helpdesk@example.com"

LOGIN_URL = "helpdesk:login"
LOGIN_REDIRECT_URL = "helpdesk:home"

# django-helpdesk
HELPDESK_TEAMS_MODE_ENABLED = False
HELPDESK_USE_CDN = False
HELPDESK_KB_ENABLED = True  # False breaks helpdesk 2.6.1 urls.py (NameError: kb)
HELPDESK_TICKETS_TIMELINE_ENABLED = False
HELPDESK_TRANSLATE_TICKET_COMMENTS = False
HELPDESK_SUBMIT_A_TICKET_PUBLIC = True
HELPDESK_VIEW_A_TICKET_PUBLIC = True
HELPDESK_REDIRECT_TO_LOGIN_BY_DEFAULT = False
HELPDESK_ENABLE_PASSWORD_RESET = False
HELPDESK_GET_FOLLOWUP_WEBHOOK_URLS = lambda: []  # noqa: E731
HELPDESK_GET_NEW_TICKET_WEBHOOK_URLS = lambda: []  # noqa: E731

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
}
HELPDESK_UPDATE_PUBLIC_DEFAULT = False  # the followup form shows an "Is this update public?" checkbox (ticked)
HELPDESK_STAFF_ONLY_TICKET_OWNERS = True
