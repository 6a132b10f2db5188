"""Text shown to a person, with the control characters it may carry made visible.

A class, group, feature or file name comes from the user's data, and may hold anything: an
escape sequence (``ESC]0;...BEL`` retitles a terminal window, ``ESC[2J`` clears the screen,
``ESC[31m`` colours what follows), a newline that forges a line of the answer, or a
right-to-left override that shows text in another order than it is. :func:`visible` writes
each such character as its escape (``\\x1b``, ``\\n``, ``\\u202e``), as Python's ``repr``
does, and leaves every other character, and a name without them, as it is. The command
line passes everything it prints through it (:class:`~ensstab_dask.cli` wraps its
standard streams); the answer's text, the messages' names and the feature table's names
are made visible where they are written. The HTML report escapes names as HTML instead.
"""

from __future__ import annotations

import re

__all__ = ["visible"]

#: C0 and C1 control characters and DEL, the line and paragraph separators, and the
#: bidirectional controls (the "Trojan Source" characters).
_CONTROL = "\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_PATTERNS: dict[str, re.Pattern[str]] = {}


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    named = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(match.group())
    return named or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def visible(text, *, keep: str = "") -> str:
    """``text`` (made a str) with every control character but those in ``keep`` written as
    its escape.

    Examples
    --------
    >>> visible("\\x1b]0;pwned\\x07\\x1b[31mRED")
    '\\\\x1b]0;pwned\\\\x07\\\\x1b[31mRED'
    >>> visible("two\\nlines\\n", keep="\\n")
    'two\\nlines\\n'
    """
    text = str(text)
    if text.isprintable():
        return text
    pattern = _PATTERNS.get(keep)
    if pattern is None:
        kept = "".join(re.escape(c) for c in keep)
        pattern = _PATTERNS[keep] = re.compile(f"(?![{kept}])[{_CONTROL}]" if keep else f"[{_CONTROL}]")
    return pattern.sub(_escape, text)
