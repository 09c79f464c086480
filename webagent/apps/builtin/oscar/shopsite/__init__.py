"""A minimal django-oscar 4.2 shop project for webagent's real-app suite."""
