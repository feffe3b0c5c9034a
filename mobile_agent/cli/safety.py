"""`mobile-agent resume EPISODE [--reply TEXT]` and the safety options of `run` / `demo`.

cli/app.py mounts ``resume_command`` as ``resume``; `run` (cli/run.py) and `resume` turn the ``--policy`` /
``--allow`` / ``--deny`` words into a policy with :func:`policy_from_options`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from mobile_agent.cli.completion import complete_episode, complete_serial
from mobile_agent.cli.terminal import TerminalUser, console, interruption_said, printable, shown

if TYPE_CHECKING:
    from mobile_agent.agent.config import StepEvent
    from mobile_agent.gate.policy import SafetyPolicy

POLICY_HELP = (
    "Safety policy: ask|deny|allow for every consequential kind, or KIND=ACTION, KIND@APP=ACTION "
    "(kinds: pay transfer order delete send post call sensitive). Repeat or comma-separate."
)
ALLOW_HELP = (
    "Let this kind of consequential action through without asking: KIND@APP (e.g. send@com.tencent.mm)."
)
DENY_HELP = "Refuse this kind of consequential action (the episode ends as blocked): KIND or KIND@APP."


def policy_from_options(
    policy: list[str] | None = None, allow: list[str] | None = None, deny: list[str] | None = None
) -> SafetyPolicy | None:
    """The policy the options describe, or None when none was given (the library default: ask)."""
    if not (policy or allow or deny):
        return None
    from mobile_agent.gate.policy import parse_policy

    return parse_policy(policy or [], allow=allow or [], deny=deny or [])


def _print_step(event: StepEvent) -> None:
    what = event.action.describe() if event.action else (event.error or "(no action)")
    source = "" if event.source == "model" else f"[magenta]({shown(str(event.source))})[/] "
    thought = printable(event.thought or "").replace("\n", " ")[:80]
    console.print(f"[bold]{event.index:>3}[/] {source}{shown(what)}  [dim]{shown(thought)}[/]")


def resume_command(
    episode: str = typer.Argument(
        ..., autocompletion=complete_episode, help="The paused episode (a unique id prefix is enough)."
    ),
    reply: str | None = typer.Option(
        None,
        "--reply",
        "-r",
        help="Answer to the question it paused on: yes/no for a confirmation, or any text.",
    ),
    db: str | None = typer.Option(
        None, "--db", envvar="MOBILE_AGENT_DB", help="SQLAlchemy URL of the store."
    ),
    device: str | None = typer.Option(
        None,
        "--device",
        "-d",
        autocompletion=complete_serial,
        help="Phone serial (default: the one it ran on).",
    ),
    adb: str | None = typer.Option(None, "--adb", envvar="MOBILE_AGENT_ADB", help="adb server HOST:PORT."),
    base_url: list[str] | None = typer.Option(
        None, "--base-url", help="Model endpoint(s) (default: the ones it ran with)."
    ),
    model: str | None = typer.Option(None, "--model", help="Model name (default: the one it ran with)."),
    apps_dir: str | None = typer.Option(
        None, "--apps-dir", envvar="MOBILE_AGENT_APPS", help="Extra manifests."
    ),
    policy: list[str] | None = typer.Option(None, "--policy", help=POLICY_HELP),
    allow: list[str] | None = typer.Option(None, "--allow", help=ALLOW_HELP),
    deny: list[str] | None = typer.Option(None, "--deny", help=DENY_HELP),
    non_interactive: bool = typer.Option(
        False, "--non-interactive", help="Never ask the terminal; pause again as needs_user."
    ),
) -> None:
    """Continue a paused (needs_user) episode after a person acted on the phone or answered its question."""
    from mobile_agent.agent.config import NoUser
    from mobile_agent.agent.runtime import resume_episode

    with interruption_said():
        result = resume_episode(
            episode,
            reply=reply,
            db=db,
            device=device,
            adb=adb,
            base_url=base_url or None,
            model=model,
            apps_dir=apps_dir,
            safety=policy_from_options(policy, allow, deny),
            user=NoUser() if non_interactive else TerminalUser(),
            on_step=_print_step,
        )
    colour = "green" if result.ok else "red"
    console.print(
        f"outcome: [bold {colour}]{result.outcome}[/] after {result.steps} steps (episode {result.episode_id})"
    )
    if result.detail and not result.ok:
        console.print(f"detail: {shown(result.detail)}")
    raise typer.Exit(0 if result.ok else 1)


__all__ = ["ALLOW_HELP", "DENY_HELP", "POLICY_HELP", "policy_from_options", "resume_command"]
