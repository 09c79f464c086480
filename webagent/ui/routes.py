"""The pages: new run, live job, runs, skills, teach, replay. Server-rendered (Jinja2); a bad
form value is the same page again with the values kept and one line saying what to fix."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import FileResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from webagent.errors import UserError
from webagent.runs_index import find_run, recent_runs
from webagent.ui.jobs import RunForm, UiSettings, replay_job, run_job, site_list, teach_job
from webagent.ui.live import Desk, LiveJob

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
TEMPLATES.env.globals["when"] = lambda t: time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))
RUN_FILES = ("report.html",)  # besides the step screenshots (step_NN.png)


class Pages:
    """The routes over one ``Desk`` of jobs and the server's ``UiSettings``."""

    def __init__(self, settings: UiSettings, desk: Desk):
        self.settings, self.desk = settings, desk

    def page(self, request: Request, name: str, status: int = 200, **context: Any) -> Response:
        context.setdefault("said", request.query_params.get("said"))
        here = "/" + name.removesuffix(".html")
        return TEMPLATES.TemplateResponse(
            request, name, {"here": here, "title": here[1:], **context}, status_code=status
        )

    def routes(self) -> list[Route]:
        return [
            Route("/", lambda r: RedirectResponse("/run", status_code=303)),
            Route("/run", self.new_run, methods=["GET", "POST"]),
            Route("/live/{job_id}", self.live),
            Route("/live/{job_id}/events", self.events),
            Route("/live/{job_id}/stop", self.stop, methods=["POST"]),
            Route("/live/{job_id}/finish", self.finish, methods=["POST"]),
            Route("/runs", self.runs),
            Route("/runs/{kind}/{name}/", self.run_file),
            Route("/runs/{kind}/{name}/{file}", self.run_file),
            Route("/skills", self.skills),
            Route("/skills/export", self.export_skills),
            Route("/skills/remove", self.remove_skill, methods=["POST"]),
            Route("/skills/import", self.import_skills, methods=["POST"]),
            Route("/skills/{site}/{skill_id}", self.skill),
            Route("/teach", self.teach, methods=["GET", "POST"]),
            Route("/replay", self.replay, methods=["GET", "POST"]),
        ]

    def _begin(self, job: LiveJob) -> Response:
        self.desk.begin(job)
        return RedirectResponse(f"/live/{job.id}", status_code=303)

    @staticmethod
    def _refused(exc: UserError) -> int:
        return 409 if "is going on" in str(exc) else 400

    # --- a new run, and a job live -------------------------------------------------------

    async def new_run(self, request: Request) -> Response:
        shown: dict[str, Any] = {
            "default_model": self.settings.endpoint.model or "the embedded model",
            "secrets": sorted(self.settings.secrets),
        }
        if request.method == "GET":
            return self.page(request, "run.html", form={}, **shown)
        form = {k: str(v) for k, v in (await request.form()).items()}
        try:
            return self._begin(run_job(RunForm.read(form), self.settings))
        except UserError as exc:
            return self.page(request, "run.html", self._refused(exc), form=form, error=str(exc), **shown)

    def _job(self, request: Request) -> LiveJob:
        return self.desk.get(request.path_params["job_id"])

    def _run_id(self, job: LiveJob) -> str:
        return job.trace_dir.relative_to(self.settings.runs_dir).as_posix()

    async def live(self, request: Request) -> Response:
        try:
            job = self._job(request)
        except UserError as exc:
            return self.page(request, "runs.html", 404, error=str(exc), **self._runs_context())
        return self.page(request, "live.html", job=job, run_id=self._run_id(job), title=job.title)

    async def events(self, request: Request) -> Response:
        job = self._job(request)

        async def stream():
            sent = 0
            while True:
                while sent < len(job.events):
                    event = job.events[sent]
                    sent += 1
                    yield f"data: {json.dumps(event, ensure_ascii=False)}\n\n"
                    if event["kind"] == "end":
                        return
                if await request.is_disconnected():
                    return
                await asyncio.sleep(0.2)

        return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    async def stop(self, request: Request) -> Response:
        job = self._job(request)
        job.stop()
        return RedirectResponse(f"/live/{job.id}", status_code=303)

    async def finish(self, request: Request) -> Response:
        job = self._job(request)
        job.finishing.set()
        return RedirectResponse(f"/live/{job.id}", status_code=303)

    # --- runs -----------------------------------------------------------------------------

    def _runs_context(self) -> dict[str, Any]:
        live = {job.trace_dir: job.id for job in self.desk.jobs.values() if job.running}
        return {"runs": recent_runs(self.settings.runs_dir), "runs_dir": self.settings.runs_dir, "live": live}

    async def runs(self, request: Request) -> Response:
        return self.page(request, "runs.html", **self._runs_context())

    async def run_file(self, request: Request) -> Response:
        p = request.path_params
        name = p.get("file", "report.html")
        try:
            run = find_run(self.settings.runs_dir, f"{p['kind']}/{p['name']}")
        except UserError as exc:
            return self.page(request, "runs.html", 404, error=str(exc), **self._runs_context())
        shot = name.startswith("step_") and name.endswith(".png") and name[5:-4].isdigit()
        if not (shot or name in RUN_FILES) or not (run.folder / name).is_file():
            why = "no report yet (the run is still going?)" if name == "report.html" else f"no file {name!r}"
            return self.page(request, "runs.html", 404, error=f"{run.id}: {why}", **self._runs_context())
        return FileResponse(run.folder / name)

    # --- skills ---------------------------------------------------------------------------

    async def skills(self, request: Request, error: str | None = None, status: int = 200) -> Response:
        from webagent.skills import store

        sites: dict[str, list] = {}
        try:
            for skill in store.every_skill():
                sites.setdefault(skill.site, []).append(skill)
        except UserError as exc:  # a skills file this webagent cannot read: say which
            error = error or str(exc)
        return self.page(request, "skills.html", status, sites=sites, error=error)

    async def skill(self, request: Request) -> Response:
        from webagent.skills import store

        site, skill_id = request.path_params["site"], request.path_params["skill_id"]
        found = next((s for s in store.load(site) if s.id == skill_id), None)
        if found is None:
            return await self.skills(request, f"no skill {skill_id!r} for {site}", 404)
        return self.page(request, "skill.html", skill=found, title=found.name)

    async def remove_skill(self, request: Request) -> Response:
        from urllib.parse import quote

        from webagent.skills import store

        form = await request.form()
        site, skill_id = str(form.get("site", "")), str(form.get("skill_id", ""))
        try:
            gone = store.remove(site, skill_id)
        except UserError as exc:
            return await self.skills(request, str(exc), 400)
        return RedirectResponse(
            f"/skills?said={quote(f'removed {gone.id} ({gone.name}) from {site}')}", status_code=303
        )

    async def export_skills(self, request: Request) -> Response:
        from webagent.skills import store

        site = request.query_params.get("site", "")
        with tempfile.TemporaryDirectory() as tmp:
            try:
                store.export(site, Path(tmp) / "skills.json")
            except UserError as exc:
                return await self.skills(request, str(exc), 404)
            body = (Path(tmp) / "skills.json").read_bytes()
        filename = "skills-" + site.replace(":", "_") + ".json"
        return Response(
            body, media_type="application/json", headers={"Content-Disposition": f'attachment; filename="{filename}"'}
        )

    async def import_skills(self, request: Request) -> Response:
        from urllib.parse import quote

        from webagent.skills import store

        upload = (await request.form()).get("file")
        if not isinstance(upload, UploadFile) or not upload.filename:
            return await self.skills(request, "choose a skills file to import", 400)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / Path(upload.filename).name  # the error line names the file as the person knows it
            path.write_bytes(await upload.read())
            try:
                kept = store.add(store.read_file(path))
            except UserError as exc:
                return await self.skills(request, str(exc).replace(str(path), path.name), 400)
        sites = ", ".join(dict.fromkeys(s.site for s in kept))
        return RedirectResponse(
            f"/skills?said={quote(f'imported {path.name}: {len(kept)} skills kept for {sites}')}", status_code=303
        )

    # --- teach and replay -------------------------------------------------------------------

    async def teach(self, request: Request) -> Response:
        if request.method == "GET":
            return self.page(request, "teach.html", form={})
        form = {k: str(v) for k, v in (await request.form()).items()}
        try:
            sites = site_list(form.get("allow_domains", ""))
            return self._begin(teach_job(form.get("url", ""), form.get("task", ""), self.settings, allow_domains=sites))
        except UserError as exc:
            return self.page(request, "teach.html", self._refused(exc), form=form, error=str(exc))

    def _workflows(self) -> list[dict[str, Any]]:
        from webagent.replay import store

        rows = store.listing()
        for row in rows:
            if "error" in row:
                continue
            params = store.load(row["name"]).params
            row["fields"] = [
                {
                    "name": n,
                    "source": p.get("source", ""),
                    "secret": p.get("source") == "password",
                    "default": p.get("default") or "",
                }
                for n, p in params.items()
            ]
        return rows

    async def replay(self, request: Request) -> Response:
        if request.method == "GET":
            return self.page(request, "replay.html", workflows=self._workflows())
        form = {k: str(v) for k, v in (await request.form()).items()}
        params = {k.removeprefix("param:"): v for k, v in form.items() if k.startswith("param:") and v != ""}
        try:
            demo = form.get("demo") == "on"
            job = replay_job(form.get("name", ""), params, self.settings, url=form.get("url", ""), demo=demo)
            return self._begin(job)
        except UserError as exc:
            return self.page(request, "replay.html", self._refused(exc), workflows=self._workflows(), error=str(exc))
