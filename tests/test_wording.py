"""Messages that name settings as parts: Python's spelling as a str, another reader's from
the parts alone (ensstab_dask.wording)."""

from __future__ import annotations

import json
import pickle

import pytest

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.wording import NAME_ONLY, Code, Param, Text, param, python, spell, subject, words


def upper(p: Param) -> str:
    """A reader that writes every setting in capitals: what it changes comes from the parts."""
    return p.name.upper() if p.value is NAME_ONLY else f"{p.name.upper()}:{p.value}"


def test_a_message_is_pythons_spelling_and_keeps_the_settings_it_names():
    msg = words("use ", param("model", "anchored"), ", or ask for ", param("n_target", 13))
    assert msg == "use model='anchored', or ask for n_target=13" and isinstance(msg, str)
    assert msg.parts == ("use ", Param("model", "anchored"), ", or ask for ", Param("n_target", 13))
    assert msg.spelled(upper) == "use MODEL:anchored, or ask for N_TARGET:13"
    assert msg.spelled(python) == msg


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (True, "x=True"),
        (False, "x=False"),
        ("a b", "x='a b'"),
        (3, "x=3"),
        (..., "x=..."),
        (Code("S(a=1)"), "x=S(a=1)"),
    ],
)
def test_each_value_is_written_as_python_code_would(value, shown):
    assert str(param("x", value)) == shown


def test_adding_and_joining_keep_the_parts_and_anything_else_gives_plain_text():
    msg = words("pass ", param("overwrite", True))
    both = "output exists; " + msg + " to replace it"
    assert isinstance(both, Text) and both.spelled(upper) == "output exists; pass OVERWRITE:True to replace it"
    joined = Text(" or ").join([param("task", "regression"), param("task", "classification")])
    assert joined.spelled(upper) == "TASK:regression or TASK:classification"
    built = "x"
    built += msg  # the augmented form of a str on the left keeps them too
    assert isinstance(built, Text) and built.spelled(upper) == "xpass OVERWRITE:True"
    # An f-string and a slice see only the str: Python's spelling, with no parts left.
    assert type(f"{msg}") is str and type(msg[:4]) is str and type(str(msg)) is str


def test_a_message_survives_pickling_and_json_with_its_parts():
    msg = words(param("n_target"), " must be at least 1; got 0")
    back = pickle.loads(pickle.dumps(msg))  # as a result comes back from a worker
    assert isinstance(back, Text) and back.parts == msg.parts and back == msg
    assert json.loads(json.dumps({"m": msg})) == {"m": "n_target must be at least 1; got 0"}


def test_an_error_keeps_its_message_whole_for_the_reader():
    with pytest.raises(InvalidParameterError) as info:
        raise InvalidParameterError(subject("m_ensemble values") + " must be at least 1; got 0")
    assert str(info.value) == "m_ensemble values must be at least 1; got 0"
    assert spell(info.value.args[0], upper) == "M_ENSEMBLE values must be at least 1; got 0"


@pytest.mark.parametrize(
    ("name", "spelled"),
    [("n_target", "N_TARGET"), ("m_ensemble values", "M_ENSEMBLE values"), ("grid[0]", "grid[0]"), ("a.b", "a.b")],
)
def test_a_subject_names_a_setting_only_where_it_opens_with_one(name, spelled):
    assert subject(name).spelled(upper) == spelled and subject(name) == name


def test_plain_text_is_never_read_for_settings():
    assert spell("pass overwrite=True", upper) == "pass overwrite=True"
