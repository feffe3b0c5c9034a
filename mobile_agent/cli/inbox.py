"""`mobile-agent inbox [--json]` (every question a paused episode waits on, across runs and hosts) and
`mobile-agent inbox answer EPISODE... --reply yes|no|TEXT`, and `mobile-agent inbox release EPISODE...` (free the
phones they keep booked; the questions stay answerable).

Both call the library (mobile_agent.farm.inbox). An answer to an episode of a farm is recorded for the worker that
holds (or next frees) its phone; an episode outside any farm is continued here, as `mobile-agent resume` would.
"""

from __future__ import annotations

import typer
from rich.table import Table

from mobile_agent.cli.completion import complete_episode, complete_run
from mobile_agent.cli.farm_options import DbOpt, JsonOpt, console, print_json
from mobile_agent.cli.terminal import shown
from mobile_agent.errors import UserError

inbox_app = typer.Typer(
    help="Questions paused episodes wait on; answer them.", invoke_without_command=True, no_args_is_help=False
)


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"


@inbox_app.callback()
def inbox_command(
    ctx: typer.Context,
    db: str | None = DbOpt,
    run: list[str] = typer.Option(
        [], "--run", autocompletion=complete_run, help="Only these runs (repeatable)."
    ),
    as_json: bool = JsonOpt,
) -> None:
    """List every episode waiting for a person: phone, app, question, proposed action, screenshot, age."""
    if ctx.invoked_subcommand is not None:
        return
    from mobile_agent.farm.inbox import list_waiting
    from mobile_agent.store.store import TrajectoryStore

    with TrajectoryStore.open(db) as store:
        run_ids = [store.run(r).id for r in run] or None
        waiting = list_waiting(store, run_ids=run_ids)
    if as_json:
        print_json([q.to_dict() for q in waiting])
        return
    if not waiting:
        console.print("nothing waits for a person")
        return
    table = Table("episode", "phone", "app", "question", "proposed", "age", "answer with", title="waiting")
    for q in waiting:
        state = f" (answered {q.reply!r} by {q.replied_by})" if q.reply is not None else ""
        table.add_row(
            q.episode_id,
            shown(q.phone),
            shown(q.app or "-"),
            shown(q.question_line[:80]) + shown(state),
            shown((q.proposed or "-") + (f" on {q.element}" if q.element else "")),
            _age(q.age_s),
            shown(q.answer_command),
        )
    console.print(table)
    for q in waiting:
        if q.screenshot is not None:
            console.print(f"{q.episode_id} screen: {shown(str(q.screenshot))}", highlight=False)


@inbox_app.command("answer")
def answer_command(
    episodes: list[str] = typer.Argument(
        ..., autocompletion=complete_episode, help="Episodes to answer (unique id prefixes are enough)."
    ),
    reply: str = typer.Option(..., "--reply", "-r", help="yes or no for a confirmation, or any text."),
    db: str | None = DbOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Answer one or many waiting episodes; each answer records who (the OS user) and when."""
    from mobile_agent.farm.inbox import answer, os_user
    from mobile_agent.store.store import TrajectoryStore

    with TrajectoryStore.open(db) as store:
        answered = answer(store, episodes, reply, who=os_user())
        if as_json:
            print_json(
                [
                    {
                        "episode": a.episode_id,
                        "reply": a.reply,
                        "who": a.who,
                        "at": a.at.isoformat(),
                        "by": a.continues,
                    }
                    for a in answered
                ]
            )
        for a in answered:
            how = (
                "the farm worker on its phone continues it"
                if a.continues == "worker"
                else "continuing it here"
            )
            if not as_json:
                console.print(
                    f"{a.episode_id}: answered {shown(a.reply)} as {shown(a.who)}; {how}", highlight=False
                )
        # no farm waits for these: continue them here, like `mobile-agent resume`
        codes = [
            _continue_here(store, a.episode_id, quiet=as_json) for a in answered if a.continues == "none"
        ]
    raise typer.Exit(max(codes, default=0))


@inbox_app.command("release")
def release_command(
    episodes: list[str] = typer.Argument(
        ...,
        autocompletion=complete_episode,
        help="Paused episodes whose phones to free (unique id prefixes).",
    ),
    db: str | None = DbOpt,
) -> None:
    """Free the phones paused episodes keep booked, now: other runs and batches may use them at once. The questions
    stay answerable; an answered episode continues on its phone once the phone is free again."""
    from mobile_agent.store import answers as answer_db
    from mobile_agent.store.convert import now_utc
    from mobile_agent.store.pauses import open_pause
    from mobile_agent.store.store import TrajectoryStore

    with TrajectoryStore.open(db) as store:
        pauses = []
        for given in episodes:
            episode_id = store.episode(given).id
            pause = open_pause(store, episode_id)
            if pause is None:
                raise UserError(
                    f"episode {episode_id} waits for nobody",
                    "list the waiting ones with `mobile-agent inbox`",
                )
            pauses.append(pause)
        for pause in pauses:
            booked = pause.reserved(now_utc())
            answer_db.let_go(store, pause.id)
            what = "freed" if booked else "was not booked"
            console.print(
                f"{pause.episode_id}: phone {shown(pause.device)} {what}; the question stays answerable "
                f"(mobile-agent inbox answer {pause.episode_id} --reply ...)",
                highlight=False,
            )


def _continue_here(store, episode_id: str, *, quiet: bool) -> int:
    from mobile_agent.agent.config import NoUser
    from mobile_agent.agent.runtime import resume_episode
    from mobile_agent.store import answers as answer_db
    from mobile_agent.store.pauses import open_pause

    pause = open_pause(store, episode_id)
    got = answer_db.take_reply(store, pause.id, worker="inbox") if pause is not None else None
    if got is None:
        return 0  # someone else continues it
    result = resume_episode(episode_id, reply=got.reply, user=NoUser(), store=store)
    if not quiet:
        colour = "green" if result.ok else "red"
        console.print(f"{episode_id}: [bold {colour}]{result.outcome}[/] after {result.steps} steps")
    return 0 if result.ok else 1


__all__ = ["answer_command", "inbox_app", "inbox_command", "release_command"]
