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
        parts = [p for p in (where, key) if p]
        prefix = ": ".join(parts)
        super().__init__(f"{prefix}: {message}" if prefix else message)


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
