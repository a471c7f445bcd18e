"""The API's JSON parser with the text gate (core.text): a string anywhere in the body (keys
included) carrying NUL or another refused control character is a 400 naming where."""

from __future__ import annotations

from rest_framework import exceptions
from rest_framework.parsers import JSONParser

from core.text import first_bad_text


class GatedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        bad = first_bad_text(data)
        if bad is not None:
            where, message = bad
            raise exceptions.ValidationError({where: [message]})
        return data
