"""A scrolling column of items that makes widgets only for the items on and near the screen.

:class:`VirtualColumn` holds the open chat's items (``ui/chat/items.py``) and a widget per item in the
*live range*: the screen plus half a screen above and below. Items outside have a height — measured when
their widget existed at this width, else estimated — so the scroll bar spans the whole chat. Widgets that
leave the keep range (two screens around the viewport) are destroyed; their item remembers everything.

- Widgets are made by ``factory(item)``; the column sets ``chatItemKey`` on them and places them by hand
  (no layout: a height change relayouts the live range only, never the whole chat).
- Making widgets is budgeted (:data:`BUDGET_S` per pass, visible items first): a pass that runs out
  continues on the next turn of the event loop, so scrolling into a part of the chat never shown
  costs a frame, not a freeze.
- Idle time prepares what the user scrolls to next: slices of at most :data:`IDLE_BUDGET_S` on the Qt loop
  (a 0 ms timer) make widgets up to :data:`AHEAD_PAGES` screens ahead in the scroll direction and call
  :meth:`VirtualColumn.prepare` further ahead (the chat renders Markdown there), then
  :meth:`VirtualColumn.background` (the chat's pre-render queue). Widgets far away are dropped a few per
  pass (:data:`DROP_PER_PASS`), and :meth:`VirtualColumn.recycle` may keep a dropped widget to rebind it
  to another item instead of making a new one.
- Heights live in a list beside the items (measured, else the item's cached estimate); the offsets are
  their running sum, recomputed only from the first item whose height changed.
- When a measured height differs from the estimate, the item at the top of the screen keeps its place
  (anchoring), so the text the user reads never jumps; at the bottom, the column stays at the bottom
  (the chat follows a streaming answer until the user scrolls up).
- A widget tells the column it changed height with ``updateGeometry()`` (``content_resized`` does it for
  nested views); items can be pinned (a streaming message) so their widget is never dropped.
- The text column is at most :data:`MAX_COLUMN` px wide, centred: lines stay readable on wide screens.
"""

from __future__ import annotations

import bisect
import itertools
import time
from collections.abc import Callable, Iterable, Sequence

from PySide6.QtCore import QEvent, QObject, QRect, QSize, Qt, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QAbstractScrollArea, QFrame, QWidget

from weclaw_desktop.ui.chat.items import ChatItem

BUDGET_S = 0.006
IDLE_BUDGET_S = 0.004
#: Idle work makes widgets this many screens ahead in the scroll direction, and prepares (``prepare``)
#: items up to PREPARE_PAGES screens ahead.
AHEAD_PAGES = 1.5
PREPARE_PAGES = 4
DROP_PER_PASS = 3
#: Idle work starts this long after a layout pass, so one turn of the loop does not hold a pass, a paint
#: and an idle slice at once.
IDLE_AFTER_PASS_S = 0.010
MAX_COLUMN = 860
MARGIN_X = 24
MARGIN_TOP = 18
MARGIN_BOTTOM = 18
SPACING = 12
STICK_PX = 24


class VirtualColumn(QAbstractScrollArea):
    def __init__(self, factory: Callable[[ChatItem], QWidget], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._factory = factory
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.viewport().setObjectName("ChatBody")
        self.viewport().setAutoFillBackground(False)
        self.items: list[ChatItem] = []
        self._index: dict[int, int] = {}
        self._offsets: list[int] = []  # top of each item in content coordinates, then the end
        self._heights: list[int] = []  # each item's height + SPACING (measured, else estimated)
        self._dirty = True  # heights and offsets rebuilt from the items
        self._from: int | None = None  # offsets stale from this index on
        self._widgets: dict[int, QWidget] = {}
        self._remeasure: set[int] = set()  # keys whose widgets asked to be measured again
        self._stale: set[int] = set()  # live widgets that may have changed: measured when on screen
        self._costs: dict[type, float] = {}  # recent cost of making a widget, per item type (s)
        self._direction = -1  # the last scroll's direction (-1 up: chats are read upwards from the end)
        self._pinned: set[int] = set()
        self._stick = True
        self._setting = False
        self._width = 0
        self._anchor: tuple[int, int] | None = None  # (item key, its top relative to the viewport)
        self._pass_end = 0.0  # when the last layout pass ended (idle work keeps clear of it)
        self._placed_top = 0  # the scroll value the widgets were last placed for
        self.passes = 0  # layout passes (tests, bench)
        self.made = 0  # widgets made (tests, bench)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.relayout)
        self._idle = QTimer(self)
        self._idle.setSingleShot(True)
        self._idle.setInterval(0)
        self._idle.timeout.connect(self._idle_slice)
        bar = self.verticalScrollBar()
        bar.setSingleStep(48)
        bar.valueChanged.connect(self._scrolled)
        self._filter = _LayoutFilter(self)

    # --- items ----------------------------------------------------------------------------------
    def set_items(self, items: Iterable[ChatItem]) -> None:
        """Replace everything (a chat was opened): widgets are dropped, the view goes to the end."""
        self._drop_all()
        self.items = list(items)
        self._reindex()
        self._stick = True
        self._anchor = None
        self.relayout()

    def append(self, item: ChatItem) -> None:
        self.items.append(item)
        n = len(self.items)
        self._index[item.key] = n - 1
        if not self._dirty and len(self._heights) == n - 1:
            self._heights.append(self._height(item) + SPACING)
            self._offsets.append(self._offsets[-1])
            self._stale_from(n - 1)
        else:
            self._dirty = True
        self.schedule()

    def insert(self, index: int, item: ChatItem) -> None:
        self.items.insert(index, item)
        self._reindex()
        self.schedule()

    def remove(self, item: ChatItem) -> None:
        i = self._index.get(item.key)
        if i is None:
            return
        del self.items[i]
        self._pinned.discard(item.key)
        self._drop(item.key)
        self._reindex()
        self.schedule()

    def index_of(self, item: ChatItem) -> int:
        return self._index.get(item.key, -1)

    def changed(self, item: ChatItem) -> None:
        """``item``'s widget may have a new height (or there is none yet): measure it on the next pass."""
        if item.key not in self._widgets:  # no widget: its estimate may have changed (a streaming answer)
            self._set_height(item)
        self._remeasure.add(item.key)
        self.schedule()

    # --- hooks for subclasses -------------------------------------------------------------------
    def prepare(self, item: ChatItem) -> bool:
        """Idle work for an item the user may scroll to soon (e.g. render its text); True if it did any."""
        return False

    def background(self, deadline: float) -> bool:
        """Other idle work, after the look-ahead; return True while some is left."""
        return False

    def recycle(self, widget: QWidget) -> bool:
        """A dropped widget: return True to keep it (to rebind to another item), False to delete it."""
        return False

    def pin(self, item: ChatItem, pinned: bool = True) -> None:
        """A pinned item's widget is never dropped (the streaming message keeps its render state)."""
        if pinned:
            self._pinned.add(item.key)
        else:
            self._pinned.discard(item.key)

    def widget_of(self, item: ChatItem) -> QWidget | None:
        """The item's widget if it exists now (it may not: it is made when the item comes near the screen)."""
        return self._widgets.get(item.key)

    def materialize(self, item: ChatItem) -> QWidget:
        """The item's widget, made now if needed (it is dropped again when far from the screen)."""
        widget = self._widgets.get(item.key)
        if widget is None:
            widget = self._make(item)
            self._measure(item, widget)
            self._place()
        return widget

    def live_widgets(self) -> list[tuple[ChatItem, QWidget]]:
        return [(self.items[self._index[k]], w) for k, w in self._widgets.items() if k in self._index]

    def rebuild(self) -> None:
        """Make every live widget again (the theme changed): pinned ones too; heights stay as estimates."""
        self._drop_all(keep_pinned=False)
        self.relayout()

    @property
    def has_content(self) -> bool:
        return bool(self.items)

    # --- scrolling ------------------------------------------------------------------------------
    @property
    def at_end(self) -> bool:
        return self._stick

    def scroll_to_end(self) -> None:
        self._stick = True
        self._anchor = None
        self.relayout()

    def scroll_to(self, item: ChatItem, y_in_item: int = 0, *, margin: int = 48) -> None:
        """Bring ``item`` (and the point ``y_in_item`` of it) on screen."""
        i = self._index.get(item.key)
        if i is None:
            return
        self.materialize(item)
        self._ensure_offsets()
        target = self._offsets[i] + y_in_item - margin
        self._stick = False
        self._set_value(target)
        self._anchor = self._anchor_at(self.verticalScrollBar().value())
        self.relayout()

    def schedule(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    def _scrolled(self, value: int) -> None:
        if self._setting:
            return
        if value != self._placed_top:
            self._direction = 1 if value > self._placed_top else -1
        bar = self.verticalScrollBar()
        self._stick = value >= bar.maximum() - STICK_PX
        self._anchor = None if self._stick else self._anchor_at(value)
        self.relayout()

    # --- geometry -------------------------------------------------------------------------------
    def column_width(self) -> int:
        return max(120, min(MAX_COLUMN, self.viewport().width() - 2 * MARGIN_X))

    def _column_x(self) -> int:
        return max(MARGIN_X, (self.viewport().width() - self.column_width()) // 2)

    def _reindex(self) -> None:
        self._index = {item.key: i for i, item in enumerate(self.items)}
        self._dirty = True

    def _height(self, item: ChatItem) -> int:
        # measured at another width: still a better guess than the estimate (measured again when made)
        return item.height if item.height else item.estimate(self._width)

    def _stale_from(self, i: int) -> None:
        self._from = i if self._from is None else min(self._from, i)

    def _set_height(self, item: ChatItem) -> bool:
        """Bring ``item``'s entry in the height list up to date; True if it changed."""
        i = self._index.get(item.key)
        if i is None or self._dirty or len(self._heights) != len(self.items):
            self._dirty = True
            return True
        h = self._height(item) + SPACING
        if self._heights[i] == h:
            return False
        self._heights[i] = h
        self._stale_from(i)
        return True

    def _ensure_offsets(self) -> None:
        n = len(self.items)
        if self._dirty or len(self._heights) != n or len(self._offsets) != n + 1:
            self._heights = [self._height(item) + SPACING for item in self.items]
            self._offsets = list(itertools.accumulate(self._heights, initial=MARGIN_TOP))  # n + 1: the end
            self._dirty, self._from = False, None
        elif self._from is not None:
            i = self._from
            self._offsets[i:] = itertools.accumulate(self._heights[i:], initial=self._offsets[i])
            self._from = None

    def total_height(self) -> int:
        self._ensure_offsets()
        if not self.items:
            return 0
        return self._offsets[-1] - SPACING + MARGIN_BOTTOM

    def _item_at(self, y: int) -> int:
        """Index of the item covering content y (the last one starting at or above it)."""
        return max(0, min(len(self.items) - 1, bisect.bisect_right(self._offsets, y) - 1))

    def _anchor_at(self, top: int) -> tuple[int, int] | None:
        if not self.items:
            return None
        self._ensure_offsets()
        i = self._item_at(top)
        return self.items[i].key, self._offsets[i] - top

    def _set_value(self, value: int) -> None:
        bar = self.verticalScrollBar()
        self._setting = True
        try:
            bar.setValue(max(0, min(value, bar.maximum())))
        finally:
            self._setting = False

    def _update_range(self) -> None:
        bar = self.verticalScrollBar()
        page = self.viewport().height()
        self._setting = True
        try:
            bar.setRange(0, max(0, self.total_height() - page))
            bar.setPageStep(page)
        finally:
            self._setting = False

    def _top(self) -> int:
        """Where the viewport's top should be now: the end, or where the anchor item keeps its place."""
        self._ensure_offsets()
        page = self.viewport().height()
        total = self.total_height()
        if self._stick:
            return max(0, total - page)
        if self._anchor is not None:
            i = self._index.get(self._anchor[0])
            if i is not None:
                return max(0, min(self._offsets[i] - self._anchor[1], max(0, total - page)))
        return max(0, min(self.verticalScrollBar().value(), max(0, total - page)))

    # --- the layout pass ----------------------------------------------------------------------
    def relayout(self) -> None:
        self._timer.stop()
        self.passes += 1
        deadline = time.perf_counter() + BUDGET_S
        width = self.column_width()
        if width != self._width:
            self._width = width
            self._dirty = True
            self._remeasure.update(self._widgets)
        page = max(1, self.viewport().height())
        pending = False
        made = 0
        if not self.items:
            self._remeasure.clear()
            self._stale.clear()
            self._place()
            return
        for _ in range(6):
            top = self._top()
            lo = self._item_at(max(0, top - page // 2))
            hi = self._item_at(top + page + page // 2)
            on_lo, on_hi = self._item_at(top), self._item_at(top + page)
            changed = False
            for i in self._order(lo, hi, top, page):
                item = self.items[i]
                widget = self._widgets.get(item.key)
                if widget is None:
                    if made and time.perf_counter() + self._cost(item) > deadline:
                        pending = True  # would not fit this pass: the next turn of the loop makes it
                        continue
                    widget = self._make(item)
                    changed |= self._measure(item, widget)
                    made += 1
                elif (
                    item.key in self._remeasure
                    or item.measured_width != width
                    or (item.key in self._stale and on_lo <= i <= on_hi)
                ):
                    changed |= self._measure(item, widget)
            for key in list(self._remeasure):  # live widgets outside the range that changed
                live = self._widgets.get(key)
                i2 = self._index.get(key)
                if live is not None and i2 is not None and not lo <= i2 <= hi:
                    changed |= self._measure(self.items[i2], live)
            self._remeasure.clear()
            if not changed:
                break
        self._place()
        self._release()
        self._pass_end = time.perf_counter()
        if pending:
            self.schedule()
        elif not self._idle.isActive():
            self._idle.start(int(IDLE_AFTER_PASS_S * 1000))

    def _order(self, lo: int, hi: int, top: int, page: int) -> Sequence[int]:
        """Indices to make, the ones on screen first (from the bottom when at the end)."""
        on_lo, on_hi = self._item_at(top), self._item_at(top + page)
        first = range(on_hi, on_lo - 1, -1) if self._stick else range(on_lo, on_hi + 1)
        rest = [i for i in range(lo, hi + 1) if not on_lo <= i <= on_hi]
        rest.sort(key=lambda i: min(abs(i - on_lo), abs(i - on_hi)))
        return [*first, *rest]

    # --- idle time: prepare what comes next in the scroll direction -----------------------------------
    def _ahead(self) -> tuple[list[int], int]:
        """Indices ahead of the screen in the scroll direction, nearest first, and how many of them (the
        first) are near enough to get a widget; then the ones half a screen behind."""
        self._ensure_offsets()
        top = self.verticalScrollBar().value()
        page = max(1, self.viewport().height())
        n = len(self.items)
        on_lo, on_hi = self._item_at(top), self._item_at(top + page)
        near_lo = self._item_at(max(0, top - int(AHEAD_PAGES * page)))
        near_hi = self._item_at(top + page + int(AHEAD_PAGES * page))
        far_lo = self._item_at(max(0, top - PREPARE_PAGES * page))
        far_hi = self._item_at(top + page + PREPARE_PAGES * page)
        if self._direction < 0:
            near = list(range(on_lo, near_lo - 1, -1))
            far = list(range(near_lo - 1, far_lo - 1, -1))
            behind = list(range(on_hi, min(n - 1, self._item_at(top + page + page // 2)) + 1))
        else:
            near = list(range(on_hi, near_hi + 1))
            far = list(range(near_hi + 1, far_hi + 1))
            behind = list(range(on_lo, max(0, self._item_at(max(0, top - page // 2))) - 1, -1))
        return [*near, *behind, *far], len(near) + len(behind)

    def _idle_slice(self) -> None:
        if not self.items or self._timer.isActive():
            return
        since = time.perf_counter() - self._pass_end
        if since < IDLE_AFTER_PASS_S:  # the loop just did a pass (a scroll): let it paint first
            self._idle.start(max(1, int((IDLE_AFTER_PASS_S - since) * 1000)))
            return
        self._idle.setInterval(0)
        deadline = time.perf_counter() + IDLE_BUDGET_S
        made = False
        more = False
        order, near = self._ahead()
        done = False
        for n, i in enumerate(order):
            item = self.items[i]
            make = n < near and item.key not in self._widgets
            if done and time.perf_counter() + (self._cost(item) if make else 0.0) > deadline:
                more = True  # at least one piece of work per slice; then only what fits the budget
                break
            if self.prepare(item):
                done = True
                continue
            if make:
                self._measure(item, self._make(item))
                made = done = True
        if made:
            self._place()
        if not more:
            more = self._release(limit=DROP_PER_PASS) or self.background(deadline)
        if more or made:
            self._idle.start()

    def _cost(self, item: ChatItem) -> float:
        """What making (and measuring) a widget for ``item`` costs, as seen lately for its kind (s)."""
        return self._costs.get(type(item), 0.002)

    def _make(self, item: ChatItem) -> QWidget:
        t0 = time.perf_counter()
        widget = self._make_widget_for(item)
        kind = type(item)
        spent = time.perf_counter() - t0
        self._costs[kind] = 0.7 * self._costs.get(kind, spent) + 0.3 * spent
        return widget

    def _make_widget_for(self, item: ChatItem) -> QWidget:
        widget = self._factory(item)
        widget.setProperty("chatItemKey", item.key)
        if widget.parentWidget() is not self.viewport():
            widget.setParent(self.viewport())
        widget.installEventFilter(self._filter)
        self._widgets[item.key] = widget
        self.made += 1
        widget.resize(self._width or self.column_width(), max(1, widget.height()))
        return widget

    def _measure(self, item: ChatItem, widget: QWidget) -> bool:
        width = self._width or self.column_width()
        height = widget.heightForWidth(width) if widget.hasHeightForWidth() else widget.sizeHint().height()
        height = max(height, widget.minimumSizeHint().height(), 1)
        item.height, item.measured_width = height, width
        self._stale.discard(item.key)
        return self._set_height(item)

    def _place(self) -> None:
        self._ensure_offsets()
        self._update_range()
        top = self._top()
        self._set_value(top)
        top = self.verticalScrollBar().value()
        self._placed_top = top
        if self._stick or self._anchor is None:
            self._anchor = None if self._stick else self._anchor_at(top)
        x = self._column_x()
        width = self._width or self.column_width()
        for key, widget in self._widgets.items():
            i = self._index.get(key)
            if i is None:
                continue
            rect = QRect(x, self._offsets[i] - top, width, self._heights[i] - SPACING)
            if widget.geometry() != rect:
                widget.setGeometry(rect)
            if widget.isHidden():
                widget.show()
        # No update() of the whole viewport: Qt repaints what a moved, resized or newly shown widget covered
        # and covers now. A pass that only made widgets ahead of the screen (idle time) paints nothing; a
        # whole-viewport update per pass was ~5 full repaints per page scrolled.

    def _release(self, limit: int = DROP_PER_PASS) -> bool:
        """Drop the widgets far from the screen, the farthest first, at most ``limit`` now; True if more are left."""
        if not self._widgets:
            return False
        top = self.verticalScrollBar().value()
        page = max(1, self.viewport().height())
        lo, hi = top - 2 * page, top + 3 * page
        far: list[tuple[int, int]] = []
        focus = self.focusWidget()
        for key, widget in self._widgets.items():
            if key in self._pinned:
                continue
            i = self._index.get(key)
            if i is None:
                far.append((1 << 30, key))
                continue
            start = self._offsets[i]
            end = start + self._heights[i]
            if end < lo or start > hi:
                if focus is not None and widget.isAncestorOf(focus):
                    continue  # the user is selecting text in it
                far.append((max(lo - end, start - hi), key))
        far.sort(reverse=True)
        for _distance, key in far[:limit]:
            self._drop(key)
        return len(far) > limit

    def _drop(self, key: int) -> None:
        widget = self._widgets.pop(key, None)
        self._stale.discard(key)
        if widget is not None:
            widget.removeEventFilter(self._filter)
            widget.hide()
            if not self.recycle(widget):
                widget.deleteLater()  # still parented: Qt deletes it after this event (setParent(None)
                # would hand it to Python, which frees it at once while Qt may still hold it)

    def _drop_all(self, *, keep_pinned: bool = False) -> None:
        for key in list(self._widgets):
            if keep_pinned and key in self._pinned:
                continue
            self._drop(key)
        if not keep_pinned:
            self._remeasure.clear()

    # --- Qt events ------------------------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._anchor is None and not self._stick:
            self._anchor = self._anchor_at(self.verticalScrollBar().value())
        self.relayout()

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:  # an item widget's updateGeometry(): which one is not
            # known, so the live ones that do not report their own changes are measured when on screen. Most
            # of these come from show() of a widget just made (measured already): marking every live widget
            # stale here measured ~25 unchanged widgets per page scrolled.
            self._stale.update(k for k, w in self._widgets.items() if not reports_resizes(w))
            self.schedule()
            return True
        return super().viewportEvent(event)

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        pass  # the widgets are placed by relayout (valueChanged)

    def sizeHint(self) -> QSize:
        return QSize(480, 400)

    def minimumSizeHint(self) -> QSize:
        return QSize(200, 120)


#: An item widget property: True when every change of its size reaches the widget itself as a LayoutRequest
#: (see :func:`reports_resizes`).
REPORTS_RESIZES = "reportsResizes"


def reports_resizes(widget: QWidget) -> bool:
    """Whether ``widget`` tells the column about its own size changes: a widget with a layout does (a child's
    change invalidates the layout, which posts a LayoutRequest to the widget, seen by the column's filter), and
    one that says so (``REPORTS_RESIZES``: e.g. a message widget that places its bubble by hand and turns the
    bubble's requests into its own). Others (a bare label) are measured again after any anonymous request."""
    return widget.layout() is not None or bool(widget.property(REPORTS_RESIZES))


class _LayoutFilter(QObject):
    """Sees an item widget ask for a new layout (its content changed size) and has it measured."""

    def __init__(self, column: VirtualColumn) -> None:
        super().__init__(column)
        self._column = column

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            key = watched.property("chatItemKey")
            if key is not None:
                self._column._remeasure.add(int(key))
                self._column.schedule()
        return False
