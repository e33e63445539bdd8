"""A tool result read the way a model reads it. Every API hands the model a
result, or a message, as a string or as a list of parts, some of which
carry text; the model reads the text. What a program wraps around it (a
prefix line, a tag) is that program's, and its driver takes it off."""

import json


def text_of(content) -> str:
    """The text a model reads in `content`: a string as it is, or the text
    of each part of a list that has one, joined by line ends."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part["text"] for part in content if isinstance(part, dict) and "text" in part)
    return ""


def json_of(content):
    """The JSON value a model reads in `content`, or None when its text is not JSON."""
    try:
        return json.loads(text_of(content))
    except ValueError:
        return None


def unquoted(text: str) -> str:
    """Some clients send the user's text as a JSON string literal; read it as the text."""
    text = text or ""
    if text.startswith('"'):
        try:
            inner = json.loads(text, strict=False)  # raw newlines inside, as sent
            if isinstance(inner, str):
                return inner
        except ValueError:
            pass
    return text
