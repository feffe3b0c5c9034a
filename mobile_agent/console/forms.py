"""The console's state-changing requests: answer waiting questions (approve, deny, reply) and release a phone
from quarantine. Each needs the CSRF field of the console's own forms and, when the browser sends one, an Origin of
this host; anything else gets 403 and changes nothing."""

from __future__ import annotations

import hmac
from urllib.parse import parse_qs, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from mobile_agent.console.security import csrf_token, same_origin
from mobile_agent.errors import UserError
from mobile_agent.farm.inbox import answer
from mobile_agent.store import phones as phone_db
from mobile_agent.store.store import TrajectoryStore

MAX_FORM = 16 * 1024


class Forms:
    def __init__(self, store: TrajectoryStore, token: str, user: str) -> None:
        self.store = store
        self.csrf = csrf_token(token)
        self.user = user

    async def _form(self, request: Request) -> dict[str, list[str]] | Response:
        if not same_origin(request.headers, request.headers.get("host", "")):
            return PlainTextResponse("forbidden: the request did not come from this console", status_code=403)
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            return PlainTextResponse("send the console's own form", status_code=415)
        body = b""
        async for chunk in request.stream():  # the console's forms are small: read at most MAX_FORM bytes
            body += chunk
            if len(body) > MAX_FORM:
                return PlainTextResponse("the form is too large", status_code=413)
        form = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=64)
        given = (form.get("csrf") or [""])[0]
        if not hmac.compare_digest(given.encode(), self.csrf.encode()):
            return PlainTextResponse("forbidden: missing or wrong CSRF field", status_code=403)
        return form

    @staticmethod
    def _back(form: dict[str, list[str]], fallback: str, message: str) -> RedirectResponse:
        target = (form.get("next") or [fallback])[0]
        if not target.startswith("/") or target.startswith("//") or "\\" in target:  # only our own pages
            target = fallback
        sep = "&" if "?" in target else "?"
        return RedirectResponse(f"{target}{sep}{urlencode({'message': message})}", status_code=303)

    async def answer(self, request: Request) -> Response:
        form = await self._form(request)
        if isinstance(form, Response):
            return form
        episodes = [e for e in form.get("episode", []) if e.strip()]
        choice = (form.get("reply") or [""])[0]
        reply = (form.get("text") or [""])[0] if choice == "text" else choice
        who = f"{self.user} (console, {request.client.host if request.client else '?'})"
        try:
            done = await run_in_threadpool(answer, self.store, episodes, reply, who=who)
        except UserError as exc:
            return self._back(form, "/inbox", f"not answered: {exc.message}")
        names = ", ".join(a.episode_id for a in done)
        left = [a.episode_id for a in done if a.continues == "none"]
        tail = f"; no farm worker holds {', '.join(left)}: continue with mobile-agent resume" if left else ""
        return self._back(form, "/inbox", f"answered {names} with {reply!r}{tail}")

    async def release(self, request: Request) -> Response:
        form = await self._form(request)
        if isinstance(form, Response):
            return form
        key = (form.get("key") or [""])[0]
        info = await run_in_threadpool(phone_db.farm_device, self.store, key)
        if info is None:
            return self._back(form, "/phones", f"no phone {key!r}")
        await run_in_threadpool(
            lambda: phone_db.record_device_result(self.store, info.key, info.serial, info.adb_server, ok=True)
        )
        return self._back(form, "/phones", f"released {info.serial} from quarantine")


__all__ = ["Forms"]
