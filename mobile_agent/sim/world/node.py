"""A screen as a tree of views: what uiautomator dumps, what the renderer draws, what a tap hits.

A Node carries three kinds of fields: the accessibility attributes a real dump shows, a small Style for drawing,
and behaviour (closures run when the node is tapped, long-pressed or dragged) that never leaves the process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

Rect = tuple[int, int, int, int]  # left, top, right, bottom in device pixels
Color = tuple[int, int, int]

FRAME = "android.widget.FrameLayout"
LINEAR = "android.widget.LinearLayout"
TEXT = "android.widget.TextView"
IMAGE = "android.widget.ImageView"
BUTTON = "android.widget.Button"
EDIT = "android.widget.EditText"
RECYCLER = "androidx.recyclerview.widget.RecyclerView"
VIEW = "android.view.View"
SWITCH = "android.widget.Switch"
SEEKBAR = "android.widget.SeekBar"
VIEWGROUP = "android.view.ViewGroup"


@dataclass(frozen=True)
class Style:
    bg: Color | None = None
    fg: Color = (25, 25, 25)
    size: int = 0  # font size in px; 0 = no text drawn
    bold: bool = False
    align: str = "left"  # left | center | right
    radius: int = 0
    border: Color | None = None
    image: str | None = None  # "photo:<seed>", "avatar:<seed>", "icon:<seed>", "black"
    hint_fg: Color = (170, 170, 170)
    pad: int = 0  # horizontal text padding in px

    def signature(self) -> tuple:
        return (
            self.bg,
            self.fg,
            self.size,
            self.bold,
            self.align,
            self.radius,
            self.border,
            self.image,
            self.pad,
        )


NO_STYLE = Style()


@dataclass(eq=False)
class Node:
    cls: str = FRAME
    bounds: Rect = (0, 0, 0, 0)
    text: str = ""
    rid: str = ""
    desc: str = ""
    children: list[Node] = field(default_factory=list)
    clickable: bool = False
    long_clickable: bool = False
    focusable: bool = False
    focused: bool = False
    scrollable: bool = False
    checkable: bool = False
    checked: bool = False
    selected: bool = False
    password: bool = False
    enabled: bool = True
    style: Style = NO_STYLE
    hint: str = ""  # an EditText's placeholder: dumped as text while empty (as most devices do), drawn grey
    package: str = ""  # filled in by the phone for the dump
    # behaviour
    on_click: Callable[[], None] | None = None
    on_long_click: Callable[[], None] | None = None
    on_drag: Callable[[int, int, int, int], None] | None = None  # (x1, y1, x2, y2) gesture that starts on it
    on_scroll: Callable[[int, int], None] | None = None  # (dx, dy) content offset change from a swipe
    on_tap_at: Callable[[int, int], None] | None = None  # a tap that cares where it landed (sliders, keypads)
    field_key: str | None = None  # editable: the page field it edits
    opaque: bool = False  # drawn with its children, dumped without them (Flutter, canvas)

    def add(self, *nodes: Node) -> Node:
        self.children.extend(nodes)
        return self

    @property
    def editable(self) -> bool:
        return self.field_key is not None

    @property
    def center(self) -> tuple[int, int]:
        left, top, right, bottom = self.bounds
        return (left + right) // 2, (top + bottom) // 2

    def contains(self, x: int, y: int) -> bool:
        left, top, right, bottom = self.bounds
        return left <= x < right and top <= y < bottom

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            yield from child.walk()

    def shown_text(self) -> str:
        return self.text if (self.text or not self.editable) else self.hint

    def signature(self) -> tuple:
        """Everything that changes the pixels or the dump; equal signatures render to equal images."""
        return (
            self.cls,
            self.bounds,
            self.text,
            self.hint,
            self.rid,
            self.desc,
            self.focused,
            self.checked,
            self.selected,
            self.enabled,
            self.password,
            self.style.signature(),
            tuple(c.signature() for c in self.children),
        )


def hit_test(root: Node, x: int, y: int, want: Callable[[Node], bool]) -> Node | None:
    """The top-most node under (x, y) for which ``want`` is true (later siblings are drawn above earlier ones)."""
    if not root.contains(x, y):
        return None
    for child in reversed(root.children):
        found = hit_test(child, x, y, want)
        if found is not None:
            return found
    return root if want(root) else None


def _b(flag: bool) -> str:
    return "true" if flag else "false"


def _dump_node(node: Node, index: int, depth: int, max_depth: int, out: list[str]) -> None:
    left, top, right, bottom = node.bounds
    text = node.text if node.text or not node.editable else node.hint
    if node.password and node.text:
        text = "•" * len(node.text)
    attrs = (
        f'<node index="{index}" text={quoteattr(text)} resource-id={quoteattr(node.rid)} '
        f"class={quoteattr(node.cls)} package={quoteattr(node.package)} content-desc={quoteattr(node.desc)} "
        f'checkable="{_b(node.checkable)}" checked="{_b(node.checked)}" clickable="{_b(node.clickable)}" '
        f'enabled="{_b(node.enabled)}" focusable="{_b(node.focusable or node.editable)}" '
        f'focused="{_b(node.focused)}" scrollable="{_b(node.scrollable)}" '
        f'long-clickable="{_b(node.long_clickable)}" password="{_b(node.password)}" '
        f'selected="{_b(node.selected)}" bounds="[{left},{top}][{right},{bottom}]"'
    )
    if not node.children or depth >= max_depth or node.opaque:
        out.append(attrs + " />")
        return
    out.append(attrs + ">")
    for i, child in enumerate(node.children):
        _dump_node(child, i, depth + 1, max_depth, out)
    out.append("</node>")


XML_HEADER = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"


def dump_xml(root: Node, rotation: int = 0, max_depth: int = 50) -> str:
    """uiautomator's dump format: one line per the shell tool, the u2 server returns the same text."""
    out: list[str] = [f'{XML_HEADER}<hierarchy rotation="{rotation}">']
    _dump_node(root, 0, 1, max_depth, out)
    out.append("</hierarchy>")
    return "".join(out)


def set_package(root: Node, package: str) -> None:
    for node in root.walk():
        if not node.package:
            node.package = package
