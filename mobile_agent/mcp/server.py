"""The MCP server: the farm's phones and tasks as tools, recent episodes as resources, a prompt to run a task.

Task tools (``list_phones``, ``run_task``, ``episode``, ``stop_episode``) go through the farm's queue
(mobile_agent.mcp.tasks). Device tools (``screenshot``, ``view_tree``, ``tap``, ``long_press``, ``swipe``, ``type``,
``key``, ``launch``, ``back``, ``home``, with ``hold_phone`` / ``release_phone``) drive one phone, each acting call a
recorded step of an episode with source ``mcp`` behind the guards (mobile_agent.mcp.drive); a consequential action
goes to the person (mobile_agent.mcp.consent). Every failure is a tool error of one line and a hint, never a
traceback. Blocking work (the phone, the store) runs in worker threads, so one slow phone holds up no other call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image

from mobile_agent.actions import Action, Key
from mobile_agent.errors import MobileAgentError, UserError
from mobile_agent.mcp.consent import ask_by_elicitation, ask_by_inbox, question_for, supports_elicitation
from mobile_agent.mcp.drive import Drive, Drives
from mobile_agent.mcp.tasks import TaskRequest, TaskService
from mobile_agent.mcp.views import compact_tree, episode_view, recent_episodes
from mobile_agent.privacy.redact import redact_text
from mobile_agent.store.store import TrajectoryStore

INSTRUCTIONS = (
    "A farm of Android phones. Run a whole task with run_task (an agent model drives the phone; follow it with "
    "episode), or drive a phone yourself: screenshot / view_tree to look, then tap, swipe, type, key, launch, back, "
    "home. Coordinates are device pixels. Every action is recorded and passes the safety gate: a payment, a send "
    "or another consequential action is put to the person, never to you; a refusal comes back as a tool error "
    "saying why. release_phone gives the phone back when you are done."
)


@dataclass
class ServerParts:
    """What the tools work on (built by the command, closed when the server stops)."""

    store: TrajectoryStore
    tasks: TaskService
    drives: Drives
    ask_timeout_s: float = 300.0

    def close(self) -> None:
        self.drives.close()
        self.tasks.close()


def _fail(exc: MobileAgentError) -> ToolError:
    hint = f" (hint: {exc.hint})" if exc.hint else ""
    return ToolError(redact_text(exc.message + hint))


async def _blocking(call: Callable[..., Any], *args: Any) -> Any:
    """Run a blocking call in a worker thread; a library error becomes a one-line tool error."""
    try:
        return await anyio.to_thread.run_sync(call, *args)
    except MobileAgentError as exc:
        raise _fail(exc) from None


def _client_name(ctx: Context) -> str:
    try:
        info = ctx.session.client_params.client_info if ctx.session.client_params else None
    except (ValueError, AttributeError):
        info = None
    return f"{info.name} {info.version}".strip() if info is not None else "mcp client"


def build_server(parts: ServerParts) -> MCPServer:
    app = MCPServer("mobile-agent", instructions=INSTRUCTIONS, log_level="WARNING")
    store, tasks, drives = parts.store, parts.tasks, parts.drives
    locks = _PhoneLocks()

    # ----- task tools -------------------------------------------------------------------------------------------
    @app.tool()
    async def list_phones() -> dict[str, Any]:
        """The farm's phones: serial, model, tags, state (online, busy, reserved, offline...) and who holds it."""
        return {"phones": await _blocking(tasks.list_phones)}

    @app.tool()
    async def run_task(
        task: str,
        ctx: Context,
        phone: str | None = None,
        tags: list[str] | None = None,
        app_name: str | None = None,
        policy: list[str] | None = None,
        max_steps: int | None = None,
        check: dict[str, Any] | None = None,
        wait: bool = False,
    ) -> dict[str, Any]:
        """Queue a task for the farm's agent (the farm's queue, leases and safety policies). Returns the episode id
        as soon as a phone starts it (task_id while it waits). With wait=true the call stays until the episode
        ends, with a progress notification per step. policy: words such as "send@com.tencent.mm=allow"; check:
        a task check (see the task file format)."""
        request = TaskRequest(task, phone, tuple(tags or ()), app_name, tuple(policy or ()), max_steps, check)
        task_id = await _blocking(tasks.submit, request)
        episode_id = await _blocking(tasks.wait_for_episode, task_id, 30.0)
        if not wait:
            row = await _blocking(tasks.task, task_id)
            return {"task_id": task_id, "episode_id": episode_id, "state": str(row.state) if row else None}
        while episode_id is None:
            episode_id = await _blocking(tasks.wait_for_episode, task_id, 30.0)
        await ctx.report_progress(0, None, f"episode {episode_id} started")
        seen = 0
        while True:
            info = await _blocking(store.episode, episode_id)
            if info.step_count > seen:
                seen = info.step_count
                steps = await _blocking(store.steps, episode_id)
                last = steps[-1] if steps else None
                what = last.action.describe() if last is not None and last.action else "observed"
                await ctx.report_progress(seen, max_steps, f"step {seen}: {what}")
            row = await _blocking(tasks.task, task_id)
            if not info.is_running and row is not None and str(row.state) != "claimed":
                break
            await anyio.sleep(0.2)
        return {"task_id": task_id, **await _blocking(episode_view, store, episode_id, False)}

    @app.tool()
    async def episode(episode_id: str | None = None, task_id: int | None = None) -> dict[str, Any]:
        """An episode: status, outcome, answer, verdict and its steps (source, action, the guards' decisions,
        the screenshot's path). Give episode_id, or the task_id run_task returned."""
        if episode_id is None and task_id is None:
            raise ToolError("give episode_id or task_id (hint: run_task returns both)")
        if episode_id is None:
            episode_id = await _blocking(tasks.episode_of, task_id)
            if episode_id is None:
                row = await _blocking(tasks.task, task_id)
                if row is None:
                    raise ToolError(
                        f"no task {task_id} in this server's run (hint: run_task returns task_id)"
                    )
                return {"task_id": task_id, "state": str(row.state), "episode_id": None}
        return await _blocking(episode_view, store, episode_id)

    @app.tool()
    async def stop_episode(episode_id: str) -> dict[str, Any]:
        """Stop an episode: a farm task after its current step (or before it starts), a driven phone now (the
        phone is released). The episode ends as interrupted."""
        info = await _blocking(store.episode, episode_id)
        drive = drives.by_episode(info.id)
        if drive is not None:
            async with locks.of(drive.hold.serial):
                await _blocking(drives.release, drive.hold.serial, "interrupted", "stopped by the MCP client")
            return await _blocking(episode_view, store, info.id, False)
        task_id = await _blocking(tasks.task_of, info.id)
        if task_id is None:
            raise ToolError(
                f"episode {info.id} is not one of this server's (hint: see list of recent episodes)"
            )
        if not info.is_running:
            return await _blocking(episode_view, store, info.id, False)
        tasks.stop(task_id, info.id)
        with anyio.move_on_after(60):
            while (await _blocking(store.episode, info.id)).is_running:
                await anyio.sleep(0.2)
        return await _blocking(episode_view, store, info.id, False)

    # ----- device tools -----------------------------------------------------------------------------------------
    def which(serial: str | None) -> str:
        if serial:
            return serial
        online = [p.serial for p in tasks.phones() if str(p.state) == "online"]
        if len(online) == 1:
            return online[0]
        found = "no phone is online" if not online else f"{len(online)} phones are online"
        raise UserError(f"{found}: say which phone (serial)", "see list_phones")

    async def drive_for(serial: str | None, ctx: Context, task: str | None = None) -> Drive:
        held = drives.current(serial) if serial else None
        if held is not None:  # the common case: no thread hop
            return held

        def open_it() -> Drive:
            return drives.get(which(serial), client=_client_name(ctx), task=task)

        return await _blocking(open_it)

    @app.tool()
    async def hold_phone(serial: str, ctx: Context, task: str | None = None) -> dict[str, Any]:
        """Hold a phone for your device calls and start its episode (task: what you are about to do, recorded).
        Device calls hold the phone themselves when needed; release_phone gives it back."""
        drive = await drive_for(serial, ctx, task)
        return {"serial": drive.hold.serial, "episode_id": drive.episode_id}

    @app.tool()
    async def release_phone(serial: str) -> dict[str, Any]:
        """End the episode of your device calls on this phone (finished) and give the phone back."""
        async with locks.of(serial):
            episode_id = await _blocking(drives.release, serial)
        return await _blocking(episode_view, store, episode_id, False)

    @app.tool()
    async def screenshot(ctx: Context, serial: str | None = None) -> Image:
        """The phone's screen now, as a JPEG at device pixels (no step is recorded)."""
        drive = await drive_for(serial, ctx)
        async with locks.of(drive.hold.serial):
            capture = await _blocking(drive.capture)
        return Image(data=capture.screenshot, format="jpeg")

    @app.tool()
    async def view_tree(ctx: Context, serial: str | None = None) -> str:
        """The screen's elements, one per line: label, class, id, bounds, the point to tap, what it accepts."""
        drive = await drive_for(serial, ctx)

        def read() -> str:
            capture = drive.capture()
            return compact_tree(capture.screen().hierarchy)

        async with locks.of(drive.hold.serial):
            return await _blocking(read)

    async def act(ctx: Context, serial: str | None, action: Action, why: str) -> str:
        drive = await drive_for(serial, ctx)
        async with locks.of(drive.hold.serial):
            proposal, done = await _blocking(drive.step, action, why)  # judged, and done when nothing objects
            if done is not None:
                return json.dumps(done, ensure_ascii=False)
            if proposal.blocked is not None:
                blocked = proposal.blocked
                raise ToolError(f"refused by the {blocked.guard} guard: {blocked.reason} (not done)")
            question = await _blocking(question_for, drive, proposal)
            if supports_elicitation(ctx):
                answer = await ask_by_elicitation(ctx, proposal, question, parts.ask_timeout_s)
                if not answer.allowed:
                    await _blocking(drive.refuse, proposal, answer.decision)
            else:
                answer = await _blocking(ask_by_inbox, drive, proposal, question, parts.ask_timeout_s)
                if answer.allowed:  # the asked step is recorded: the approved action is the next one
                    proposal = await _blocking(drive.approved, proposal)
            if not answer.allowed:
                asked = proposal.asked
                kind = asked.kind if asked is not None else "consequential"
                raise ToolError(
                    f"not done: this {kind} action needs a person's consent and {answer.detail}"
                    f" ({asked.reason if asked is not None else ''})"
                )
            return json.dumps(await _blocking(drive.act, proposal, answer.decision), ensure_ascii=False)

    @app.tool()
    async def tap(x: int, y: int, ctx: Context, serial: str | None = None, why: str = "") -> str:
        """Tap at (x, y) in device pixels. why: what you expect it to do (recorded with the step)."""
        return await act(ctx, serial, Action.tap(x, y), why)

    @app.tool()
    async def long_press(
        x: int, y: int, ctx: Context, serial: str | None = None, duration_ms: int | None = None, why: str = ""
    ) -> str:
        """Press and hold at (x, y)."""
        return await act(ctx, serial, Action.long_press(x, y, duration_ms), why)

    @app.tool()
    async def swipe(
        x1: int,
        y1: int,
        x2: int,
        y2: int,
        ctx: Context,
        serial: str | None = None,
        duration_ms: int | None = None,
        why: str = "",
    ) -> str:
        """Swipe from (x1, y1) to (x2, y2)."""
        return await act(ctx, serial, Action.swipe(x1, y1, x2, y2, duration_ms), why)

    @app.tool(name="type")
    async def type_text(text: str, ctx: Context, serial: str | None = None, why: str = "") -> str:
        """Type text into the focused field."""
        return await act(ctx, serial, Action.type(text), why)

    @app.tool()
    async def key(name: str, ctx: Context, serial: str | None = None, why: str = "") -> str:
        """Press a key: back, home, enter or recent."""
        try:
            pressed = Key(name.strip().lower())
        except ValueError:
            raise ToolError(f"unknown key {name!r} (hint: back, home, enter or recent)") from None
        return await act(ctx, serial, Action.press(pressed), why)

    @app.tool()
    async def launch(app_name: str, ctx: Context, serial: str | None = None, why: str = "") -> str:
        """Open an app by its name (微信, Settings...) or its package."""
        return await act(ctx, serial, Action.launch(app_name), why)

    @app.tool()
    async def back(ctx: Context, serial: str | None = None, why: str = "") -> str:
        """Press back."""
        return await act(ctx, serial, Action.press(Key.BACK), why)

    @app.tool()
    async def home(ctx: Context, serial: str | None = None, why: str = "") -> str:
        """Go to the home screen."""
        return await act(ctx, serial, Action.press(Key.HOME), why)

    # ----- resources and the prompt -----------------------------------------------------------------------------
    @app.resource("mobile-agent://episodes", mime_type="application/json")
    def episodes_resource() -> str:
        """The 20 most recent episodes of the store."""
        return json.dumps(recent_episodes(store), ensure_ascii=False, indent=1)

    @app.resource("mobile-agent://episodes/{episode_id}", mime_type="application/json")
    def episode_resource(episode_id: str) -> str:
        """One episode's report: its outcome, verdict and every step."""
        try:
            return json.dumps(episode_view(store, episode_id), ensure_ascii=False, indent=1)
        except MobileAgentError as exc:
            raise _fail(exc) from None

    @app.prompt()
    def run_task_on_a_phone(task: str, phone: str = "") -> str:
        """Run a task on one of the farm's phones and report what happened."""
        where = f" on phone {phone}" if phone else ""
        return (
            f"Use the mobile-agent tools to do this on an Android phone{where}: {task}\n"
            "1. list_phones, and pick an online phone (or the one named).\n"
            "2. run_task with the task (and the phone), then follow the episode with episode until it ends; or "
            "drive the phone yourself with screenshot, view_tree and the device tools.\n"
            "3. A consequential action (paying, sending, deleting) is asked of the person; if it is refused, say so "
            "and do not try another way around it.\n"
            "4. Report the outcome, the answer and the verdict, and release_phone if you held it."
        )

    return app


class _PhoneLocks:
    """One call at a time on a phone (a second one waits; a cancelled wait leaves nothing held)."""

    def __init__(self) -> None:
        self._locks: dict[str, anyio.Lock] = {}

    def of(self, serial: str) -> anyio.Lock:
        return self._locks.setdefault(serial, anyio.Lock())


__all__ = ["INSTRUCTIONS", "ServerParts", "build_server"]
