"""Oscar's thumbnailer without sorl/easy-thumbnails: the image itself, unresized (no cache to reset)."""

from django.conf import settings
from django.templatetags.static import static
from oscar.core.thumbnails import AbstractThumbnailer


class _Image:
    def __init__(self, url):
        self.url = url
        self.width = None
        self.height = None


class NoResize(AbstractThumbnailer):
    def generate_thumbnail(self, source, **opts):
        name = getattr(source, "name", str(source))
        if name == settings.OSCAR_MISSING_IMAGE_URL:
            return _Image(static("oscar/img/image_not_found.jpg"))
        return _Image(settings.MEDIA_URL + name)

    def delete_thumbnails(self, source):
        pass
