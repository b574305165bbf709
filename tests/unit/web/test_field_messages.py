"""The framework's refusals in our words: each pydantic error type gets a text of ours (with the limit it names),
our validators keep their own texts, anything else is "Invalid value." — never the framework's English."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, ValidationError, field_validator

from doctordesk import i18n
from doctordesk.domain.texts import Text
from doctordesk.web.field_messages import field_message
from doctordesk.web.params import STRICT_ID


class Body(BaseModel):
    count: int = Field(ge=1, le=10)
    name: str = Field(max_length=3)
    flag: bool = False

    @field_validator("name")
    @classmethod
    def _no_x(cls, value: str) -> str:
        if "x" in value:
            raise ValueError(Text("No {letter} here.", letter="x"))
        return value


def messages(data: dict[str, object]) -> dict[str, str]:
    with pytest.raises(ValidationError) as caught:
        Body.model_validate(data)
    return {str(e["loc"][0]): field_message(e) for e in caught.value.errors()}


def test_each_kind_of_refusal_gets_our_words_with_its_limit() -> None:
    found = messages({"count": 11, "name": "abcd", "flag": "maybe"})
    assert found == {"count": "At most 10.", "name": "At most 3 characters.", "flag": "Use true or false."}
    assert {k: i18n.t("de", v) for k, v in found.items()} == {
        "count": "Höchstens 10.",
        "name": "Höchstens 3 Zeichen.",
        "flag": "Verwenden Sie true oder false.",
    }
    assert messages({"name": "ab"}) == {"count": "Required."}
    assert messages({"count": "two", "name": "ab"}) == {"count": "A whole number."}


def test_our_own_validators_keep_their_texts() -> None:
    (message,) = messages({"count": 1, "name": "x"}).values()
    assert isinstance(message, Text) and message == "No x here."


def test_our_strict_parameters_are_written_from_their_values() -> None:
    from typing import Annotated

    class Query(BaseModel):
        id: Annotated[int, STRICT_ID]

    with pytest.raises(ValidationError) as caught:
        Query.model_validate({"id": "+1"})
    message = field_message(caught.value.errors()[0])
    assert i18n.t("de", message).startswith("Eine ganze Zahl von 1 bis 9007199254740992")


def test_an_error_type_we_do_not_know_is_an_invalid_value() -> None:
    assert field_message({"type": "something_new", "msg": "Input should be nice"}) == "Invalid value."
    assert field_message({"type": "value_error", "ctx": {}}) == "Invalid value."
