"""Recorded episodes as training data for multimodal fine-tuning toolkits.

``per="step"`` (the default): one JSONL record per model step: the chat the model was given at that step (the
family's own prompt, the bounded history of earlier steps, the screenshot) and, as the assistant's answer, the
recorded action written in the family's exact syntax by its ``format``, with the recorded thought. Where a family
shows history as earlier assistant turns, every record repeats them: LLaMA-Factory trains on them too unless
``mask_history: true`` is set (ms-swift: ``--loss_scale last_round``). ``per="episode"``: one multi-turn record per
episode (the first step's prompt, then each later step's new user turn), every assistant turn one step to learn.
Screenshots become ``<image>`` placeholders in the text and file paths in ``images``, in order.

Formats (schemas as the toolkits document them):

- ``sharegpt``: LLaMA-Factory's ShareGPT style, ``{"messages": [{"role", "content"}...], "images": [...]}``, plus
  the ``dataset_info.json`` entry LLaMA-Factory needs (merged into an existing file). LLaMA-Factory resolves the
  relative image paths against its ``media_dir`` (the dataset folder by default).
- ``swift``: ms-swift's standard ``{"messages": [...], "images": [...]}``. ms-swift resolves relative paths against
  the working directory: train from the dataset folder.

Image paths are always relative to the output folder, so the folder can be copied to a training machine whole.

``--images copy`` writes each screenshot, resized to the family's working size (what the model is shown), into
``<out>/images``; ``--images reference`` points at the store's own full-size screenshots. Coordinates in the text
are always those of the image the record names, so pixel-coordinate families stay consistent in both modes.

    result = export_episodes(store, select_episodes(store, run="a1b2"), "train/", ExportOptions(format="swift"))
"""

from __future__ import annotations

import base64
import io
import json
import logging
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from PIL import Image

from mobile_agent.actions import Action, Size
from mobile_agent.errors import UserError
from mobile_agent.model.base import HistoryTurn, ModelFamily, PromptOptions
from mobile_agent.model.families import get_family
from mobile_agent.model.images import Geometry, PreparedImage, prepare_image
from mobile_agent.report.selection import action_was_performed
from mobile_agent.report.verdicts import COMPLETE, EpisodeVerdict, episode_verdict, verification_available
from mobile_agent.store.files import readable_image
from mobile_agent.store.records import ActionSource, EpisodeInfo, StepInfo
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)

IMAGE_TOKEN = "<image>"
_MARKER = b"mobile-agent-image:"


class ExportFormat(str, Enum):
    SHAREGPT = "sharegpt"
    SWIFT = "swift"


class ImageMode(str, Enum):
    COPY = "copy"
    REFERENCE = "reference"


class ExportUnit(str, Enum):
    """What one record holds: one step (with its prompt's history), or a whole episode as one conversation."""

    STEP = "step"
    EPISODE = "episode"


# A dataset name becomes a file name in the output folder: one plain component, nothing that climbs out of it.
_DATASET_NAME = re.compile(r"[A-Za-z0-9\u00c0-\uffff][A-Za-z0-9_.\-\u00c0-\uffff]{0,127}")


def checked_dataset_name(name: str) -> str:
    """``name`` when it is a plain file name; UserError for a path (``../x``, ``/abs``, ``a/b``) or odd characters."""
    if not _DATASET_NAME.fullmatch(name) or ".." in name:
        raise UserError(
            f"dataset name {name!r} is not a plain name: it must stay inside the output folder",
            hint="use letters, digits, '_', '-' and '.', no '/' or '..' (put the folder in -o DIR instead)",
        )
    return name


@dataclass(frozen=True)
class ExportOptions:
    format: ExportFormat | str = ExportFormat.SHAREGPT
    family: str | None = None  # None: each episode's own family
    only_complete: bool = False
    only_correct_steps: bool = False
    images: ImageMode | str = ImageMode.COPY
    dataset_name: str | None = None  # default mobile_agent_<format>
    prompt: PromptOptions = field(default_factory=PromptOptions)
    per: ExportUnit | str = ExportUnit.STEP

    def __post_init__(self) -> None:
        if self.dataset_name is not None:
            checked_dataset_name(self.dataset_name)

    @property
    def name(self) -> str:
        return self.dataset_name or f"mobile_agent_{ExportFormat(self.format).value}"


@dataclass(frozen=True)
class ExportResult:
    data_file: Path
    dataset_info: Path | None
    records: int
    episodes: int
    skipped_episodes: dict[str, str]  # episode id -> why
    skipped_steps: dict[str, int]  # reason -> count
    notes: list[str]


@dataclass(frozen=True)
class _Picture:
    """A step's screenshot as one record names it: the path written in ``images`` and its pixel size."""

    path: str
    size: Size


class _Images:
    """Writes (copy) or locates (reference) the picture of each step once, however many records show it."""

    def __init__(self, store: TrajectoryStore, out_dir: Path, mode: ImageMode) -> None:
        self.store = store
        self.out_dir = out_dir
        self.mode = mode
        self._done: dict[tuple[str, int, str], _Picture] = {}

    def picture(self, step: StepInfo, family: ModelFamily) -> _Picture | None:
        key = (step.episode_id, step.index, family.name)
        if key in self._done:
            return self._done[key]
        source = self.store.screenshot_path(step)
        data = readable_image(source, f"screenshot of step {step.index} of {step.episode_id}")
        if source is None or data is None:
            return None
        if self.mode is ImageMode.REFERENCE:
            with Image.open(io.BytesIO(data)) as img:
                size = Size(*img.size)
            # relative to the dataset folder too: the store and the dataset travel together or not at all
            picture = _Picture(
                Path(os.path.relpath(source.resolve(), self.out_dir.resolve())).as_posix(), size
            )
        else:
            prepared = prepare_image(data, family)
            name = f"images/{step.episode_id}/{step.index:04d}_{family.name}.jpg"
            target = self.out_dir / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(prepared.jpeg)
            picture = _Picture(name, prepared.size)
        self._done[key] = picture
        return picture


def _marker(number: int) -> bytes:
    return _MARKER + str(number).encode()


def _marker_number(url: str) -> int | None:
    """Which picture an image part stands for (the family embedded our marker bytes as its base64 data)."""
    _, _, data = url.partition("base64,")
    try:
        raw = base64.b64decode(data, validate=True)
    except (ValueError, TypeError):
        return None
    return int(raw[len(_MARKER) :]) if raw.startswith(_MARKER) else None


def flatten_messages(
    messages: list[dict[str, Any]], pictures: Sequence[_Picture]
) -> tuple[list[dict], list[str]]:
    """OpenAI chat messages -> ``{"role", "content"}`` text messages with ``<image>`` placeholders, and the images.

    Consecutive messages of the same role are joined (the toolkits want user/assistant turns to alternate).
    """
    flat: list[dict[str, str]] = []
    images: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            text = literal_text(content)
        else:
            pieces = []
            for part in content or []:
                if part.get("type") == "text":
                    pieces.append(literal_text(str(part.get("text", ""))))
                elif part.get("type") == "image_url":
                    number = _marker_number(str(part.get("image_url", {}).get("url", "")))
                    if number is None:
                        raise ValueError(
                            "a message holds an image that is not one of the episode's screenshots"
                        )
                    pieces.append(IMAGE_TOKEN)
                    images.append(pictures[number].path)
            text = "".join(pieces)
        role = str(message["role"])
        if flat and flat[-1]["role"] == role:
            flat[-1]["content"] += "\n" + text
        else:
            flat.append({"role": role, "content": text})
    return flat, images


def _geometry(step: StepInfo, picture: _Picture) -> Geometry:
    return Geometry(device=step.screen or picture.size, image=picture.size)


# UI-Venus-2's reference prompt sends the history turns beyond its screenshot budget as empty user turns; in a
# training record such a turn says what it stands for (UI-TARS' own prompt writes the same words there).
OMITTED_SCREENSHOT = "(screenshot omitted)"


def literal_text(text: str) -> str:
    """Text with any literal ``<image>`` defused: the toolkits count placeholders and match them to images."""
    return text.replace(IMAGE_TOKEN, "[image]")


@dataclass(eq=False)  # a worker, not a value: identity equality
class _EpisodeExporter:
    """Builds the records of one episode."""

    store: TrajectoryStore
    episode: EpisodeInfo
    family: ModelFamily
    images: _Images
    options: ExportOptions
    verdict: EpisodeVerdict
    skipped: dict[str, int]  # reason -> steps left out, shared across the episodes of one export

    def _skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def records(self) -> list[dict[str, Any]]:
        per_step = self._step_records()
        if ExportUnit(self.options.per) is ExportUnit.STEP or not per_step:
            return per_step
        return [conversation(per_step)]

    def _step_records(self) -> list[dict[str, Any]]:
        pictures: list[_Picture] = []
        history: list[HistoryTurn] = []
        out: list[dict[str, Any]] = []
        use_labels = self.options.only_correct_steps and bool(self.verdict.step_labels)
        for step in self.store.steps(self.episode.id):
            if step.action_source != ActionSource.MODEL or not action_was_performed(step):
                self._skip("not a usable model step (rule, replay, unparsed or blocked)")
                continue
            action: Action = step.action  # type: ignore[assignment]
            try:
                self.family.check_expressible(action)
            except ValueError:
                self._skip(f"action kind not expressible in {self.family.name}")
                continue
            picture = self.images.picture(step, self.family)
            if picture is None:
                self._skip("no readable screenshot")
                continue
            geometry = _geometry(step, picture)
            answer = literal_text(self.family.format(action, geometry, step.thought or ""))
            current = len(pictures)
            pictures.append(picture)
            wanted = not use_labels or self.verdict.step_labels.get(step.index) == "correct"
            if not wanted:
                self._skip("not labelled correct")
            else:
                out.append(self._record(history, current, picture, step, answer, pictures))
            history.append(HistoryTurn(image=_marker(current), reply=answer, action=action))
        return out

    def _record(
        self,
        history: list[HistoryTurn],
        current: int,
        picture: _Picture,
        step: StepInfo,
        answer: str,
        pictures: list[_Picture],
    ) -> dict[str, Any]:
        shown = PreparedImage(
            jpeg=_marker(current), size=picture.size, device_size=step.screen or picture.size
        )
        messages = self.family.build_messages(
            self.episode.task, list(history), shown, options=self.options.prompt
        )
        flat, images = flatten_messages(messages, pictures)
        for message in flat:
            if message["role"] == "user" and not message["content"].strip():
                message["content"] = OMITTED_SCREENSHOT  # a history turn the family sent without its picture
        if flat and flat[-1]["role"] == "assistant":
            flat[-1]["content"] += "\n" + answer
        else:
            flat.append({"role": "assistant", "content": answer})
        return {"messages": flat, "images": images}


def conversation(steps: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per-step records of one episode as one multi-turn record: the first whole, then from each later step only
    its new user turn (from its last user message on) and its answer, with the images those turns show."""
    messages = list(steps[0]["messages"])
    images = list(steps[0]["images"])
    for record in steps[1:]:
        flat = record["messages"]
        last_user = max(i for i, m in enumerate(flat) if m["role"] == "user")
        turn = flat[last_user:]
        shown = sum(m["content"].count(IMAGE_TOKEN) for m in turn)
        messages.extend(turn)
        images.extend(record["images"][len(record["images"]) - shown :] if shown else [])
    return {"messages": messages, "images": images}


def export_episodes(
    store: TrajectoryStore, episodes: Sequence[EpisodeInfo], output_dir: str | Path, options: ExportOptions
) -> ExportResult:
    """Write the training records of ``episodes`` under ``output_dir``; returns what was written and skipped."""
    fmt = ExportFormat(options.format)
    mode = ImageMode(options.images)
    out_dir = Path(output_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"cannot create {out_dir}: {exc.strerror or exc}", hint="pass another -o DIR"
        ) from exc
    family_override = get_family(options.family) if options.family else None
    images = _Images(store, out_dir, mode)
    notes: list[str] = []
    if ExportUnit(options.per) is ExportUnit.STEP:
        notes.append(
            "one record per step: records repeat the episode's earlier turns; train on the last one only "
            "(LLaMA-Factory: mask_history: true; ms-swift: --loss_scale last_round), or export --per episode"
        )
    verification = verification_available(store)
    if options.only_complete and not verification:
        notes.append(
            "verification is not available in this store: --only-complete kept episodes whose outcome is "
            "finished or answered (unverified)"
        )
    skipped_episodes: dict[str, str] = {}
    skipped_steps: dict[str, int] = {}
    data_file = out_dir / f"{options.name}.jsonl"
    records = exported = 0
    unlabelled = 0
    with data_file.open("w", encoding="utf-8") as sink:
        for episode in episodes:
            verdict = episode_verdict(store, episode.id)
            reason = _episode_filter(episode, verdict, options.only_complete, verification)
            if reason is not None:
                skipped_episodes[episode.id] = reason
                continue
            if options.only_correct_steps and not verdict.step_labels:
                unlabelled += 1
            family = family_override or get_family(episode.family)
            rows = _EpisodeExporter(store, episode, family, images, options, verdict, skipped_steps).records()
            for row in rows:
                sink.write(json.dumps(row, ensure_ascii=False) + "\n")
            records += len(rows)
            exported += 1 if rows else 0
    if unlabelled:
        notes.append(
            f"--only-correct-steps: {unlabelled} episode(s) have no step labels; all their steps were kept"
        )
    info = (
        _write_dataset_info(out_dir, options.name, data_file.name) if fmt is ExportFormat.SHAREGPT else None
    )
    log.info("exported %d records of %d episodes to %s", records, exported, data_file)
    return ExportResult(data_file, info, records, exported, skipped_episodes, skipped_steps, notes)


def _episode_filter(
    episode: EpisodeInfo, verdict: EpisodeVerdict, only_complete: bool, verification: bool
) -> str | None:
    if episode.is_running:
        return "still running"
    if not only_complete:
        return None
    if verification:
        if verdict.verdict == COMPLETE:
            return None
        return f"verdict {verdict.verdict}" if verdict.verdict else "not verified (run mobile-agent verify)"
    if episode.outcome is not None and episode.outcome.ended_by_agent:
        return None
    return f"outcome {episode.outcome}"


def dataset_info_entry(data_file_name: str) -> dict[str, Any]:
    """LLaMA-Factory's description of a ShareGPT-style multimodal file with OpenAI-style role tags."""
    return {
        "file_name": data_file_name,
        "formatting": "sharegpt",
        "columns": {"messages": "messages", "images": "images"},
        "tags": {
            "role_tag": "role",
            "content_tag": "content",
            "user_tag": "user",
            "assistant_tag": "assistant",
            "system_tag": "system",
        },
    }


def _write_dataset_info(out_dir: Path, name: str, data_file_name: str) -> Path:
    path = out_dir / "dataset_info.json"
    existing: dict[str, Any] = {}
    if path.is_file():
        try:
            existing = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UserError(
                f"{path} exists but is not valid JSON ({exc})",
                hint="fix or remove it, or export to another -o DIR",
            ) from exc
        if not isinstance(existing, dict):
            raise UserError(
                f"{path} is not a JSON object", hint="fix or remove it, or export to another -o DIR"
            )
    existing[name] = dataset_info_entry(data_file_name)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(existing, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    shutil.move(str(tmp), path)
    return path


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of an exported JSONL file (for checks and tests)."""
    with open(path, encoding="utf-8") as source:
        return [json.loads(line) for line in source if line.strip()]


def image_size(path: str | Path) -> Size:
    with Image.open(path) as img:
        return Size(*img.size)


__all__ = [
    "ExportFormat",
    "ExportOptions",
    "ExportResult",
    "ExportUnit",
    "ImageMode",
    "checked_dataset_name",
    "conversation",
    "dataset_info_entry",
    "export_episodes",
    "flatten_messages",
    "read_records",
]
