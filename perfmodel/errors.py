"""One exception type for bad input, so the CLI can turn it into one line and exit status 2."""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input: a malformed file, an unknown key, a negative size, a missing counter.

    The message is a single line that names where (file or case), which field, and what was
    expected. The CLI prints it as ``error: <message>`` and exits with status 2.
    """

    def __init__(self, message: str, *, where: str | None = None, key: str | None = None):
        self.where = where
        self.key = key
        self.detail = message  # the message without the place, to restate it for another place
        parts = [one_line(p) for p in (where, key) if p]
        prefix = ": ".join(parts)
        super().__init__(one_line(f"{prefix}: {message}" if prefix else message))


MAX_MESSAGE = 400  # characters of one error line


def one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` on one line (newlines and other control characters escaped: a file name or a
    corrupt database may hold any), cut in the middle when longer than ``limit``."""
    text = str(text)
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    if len(text) > limit:
        half = limit // 2 - 3
        text = f"{text[:half]} ... {text[-half:]}"
    return text


def excerpt(value, limit: int = 60) -> str:
    """A short ``repr`` of a value from an input file, for an error line (never the whole value)."""
    import reprlib

    r = reprlib.Repr()
    r.maxlevel, r.maxlist, r.maxdict, r.maxstring, r.maxother, r.maxlong = 3, 4, 4, limit, limit, 40
    return one_line(r.repr(value), limit)


class InputErrors(InputError):
    """Several bad inputs at once (every invalid case of a batch): one line each at the CLI."""

    def __init__(self, errors: list[InputError]):
        self.errors = list(errors)
        super().__init__(f"{len(self.errors)} invalid inputs")

    def lines(self) -> list[str]:
        return [str(e) for e in self.errors]


def did_you_mean(name: str, choices) -> str:
    """A ' (did you mean X?)' suffix for an unknown name, or '' when nothing is close."""
    import difflib

    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
