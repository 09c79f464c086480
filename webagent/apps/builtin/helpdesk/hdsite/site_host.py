"""django-helpdesk writes a ticket's absolute URL from the Sites framework's domain, and its
header search redirects there when the query is a ticket number. The seeded domain cannot know
the port each instance is served on, so that redirect pointed at port 80 (the browser showed
its error page). A redirect to the seeded domain goes to the request's own host instead."""

SEEDED = "http://127.0.0.1/"  # the Site domain app.py seeds, as helpdesk writes it into a URL


class SameHostRedirects:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        location = response.get("Location", "")
        if location.startswith(SEEDED):
            response["Location"] = request.build_absolute_uri("/" + location[len(SEEDED) :])
        return response
