"""Text that names the caller's settings, spelled by whoever shows it in their own names.

The library names a setting as Python does (``n_target must be ...``, ``pass
overwrite=True``, ``use model='anchored'``); the command line names the same setting by
its option (``--n-target must be ...``, ``pass --overwrite``, ``use --model anchored``).
A message is written once, as :class:`Text`: a ``str`` in Python's spelling that keeps,
as :class:`Param` parts, where it names a setting. Whoever shows it with other names
spells it anew from those parts (:meth:`Text.spelled`), never by reading its words.

>>> msg = words("output 'e.json' exists; pass ", param("overwrite", True), " to replace it")
>>> print(msg)
output 'e.json' exists; pass overwrite=True to replace it
>>> msg.spelled(lambda p: "--" + p.name.replace("_", "-"))
"output 'e.json' exists; pass --overwrite to replace it"
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["NAME_ONLY", "Code", "Param", "Spelling", "Text", "param", "python", "spell", "subject", "words"]


class _NameOnly:
    """The value of a :class:`Param` that names a setting without giving it a value."""

    def __repr__(self) -> str:
        return "NAME_ONLY"

    def __reduce__(self) -> str:  # unpickled as the one instance, which readers test by identity
        return "NAME_ONLY"


NAME_ONLY = _NameOnly()


class Code(str):
    """A value shown as the code it is (``Security(...)``), not quoted as a string."""


@dataclass(frozen=True)
class Param:
    """A setting named in a message: its name, and the value advised or reported with it
    (:data:`NAME_ONLY` for the name alone)."""

    name: str
    value: object = NAME_ONLY

    def __str__(self) -> str:
        if self.value is NAME_ONLY:
            return self.name
        return f"{self.name}={_shown(self.value)}"


def _shown(value: object) -> str:
    """A value as Python code would write it: strings quoted, ``...`` as itself, code as it is."""
    if value is Ellipsis:
        return "..."
    if isinstance(value, Code):
        return str.__str__(value)
    return repr(value) if isinstance(value, str) else str(value)


#: How a reader names a setting: a function of the :class:`Param` (:func:`python`: ``name=value``).
Spelling = Callable[[Param], str]


def python(p: Param) -> str:
    """Python's spelling, the library's own: ``n_target``, ``overwrite=True``, ``model='anchored'``."""
    return str(p)


class Text(str):
    """A message in Python's spelling that knows the settings it names (``parts``: its
    plain pieces and its :class:`Param` s, in order).

    Adding text to it, or joining by it, keeps the parts; anything else (an f-string,
    slicing) gives a plain ``str`` in Python's spelling.
    """

    parts: tuple[str | Param, ...]

    def __new__(cls, *parts: str | Param) -> Text:
        flat: list[str | Param] = []
        for piece in (q for part in parts for q in (part.parts if isinstance(part, Text) else (part,))):
            if isinstance(piece, Param):
                flat.append(piece)
            elif flat and isinstance(flat[-1], str):
                flat[-1] = flat[-1] + str.__str__(piece)
            elif piece:
                flat.append(str.__str__(piece))
        self = super().__new__(cls, "".join(python(p) if isinstance(p, Param) else p for p in flat))
        self.parts = tuple(flat)
        return self

    def __getnewargs__(self) -> tuple:  # pickled whole: its parts, not its Python spelling alone
        return tuple(self.parts)

    def __add__(self, other: object) -> Text:
        return Text(self, other) if isinstance(other, (str, Param)) else NotImplemented

    def __radd__(self, other: object) -> Text:
        return Text(other, self) if isinstance(other, (str, Param)) else NotImplemented

    def join(self, items: Iterable[str]) -> Text:  # type: ignore[override]
        out: list[str | Param] = []
        for i, item in enumerate(items):
            out.extend([self, item] if i else [item])
        return Text(*out)

    def spelled(self, spelling: Spelling) -> str:
        """The text with each setting it names written as ``spelling`` writes it."""
        return "".join(spelling(p) if isinstance(p, Param) else p for p in self.parts)


def param(name: str, value: object = NAME_ONLY) -> Text:
    """A setting named in a message: ``name``, or ``name=value`` as advice or report."""
    return Text(Param(name, value))


def words(*parts: str | Param) -> Text:
    """A message from its plain pieces and the settings it names (:func:`param`)."""
    return Text(*parts)


def subject(name: str) -> Text:
    """A message's opening parameter, named as a setting where it is one: ``n_target`` and
    ``m_ensemble values`` name a setting (the first word); ``grid[0]`` or a file's name do not."""
    first, space, rest = name.partition(" ")
    return words(param(first), space + rest) if first.isidentifier() else words(name)


def spell(text: str, spelling: Spelling) -> str:
    """Any message as ``spelling`` writes the settings it names; plain text as it is."""
    return text.spelled(spelling) if isinstance(text, Text) else text
