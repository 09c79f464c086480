from django.contrib import admin
from django.contrib.staticfiles.views import serve as static_serve
from django.urls import include, path, re_path


def _static(request, path):
    # The wheels' static files (helpdesk's vendored bootstrap/jquery, admin), served by the
    # app server itself even with DEBUG off: nothing comes from another host.
    return static_serve(request, path, insecure=True)


urlpatterns = [
    re_path(r"^static/(?P<path>.*)$", _static),
    path("admin/", admin.site.urls),
    path("", include("helpdesk.urls", namespace="helpdesk")),
]
