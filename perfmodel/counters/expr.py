"""A small, safe arithmetic expression evaluator for counter formulas.

Formulas are data (YAML), so they must never reach ``eval``. They are parsed with :mod:`ast` and
only numbers, names, ``+ - * /``, unary minus, parentheses and the functions ``sum``, ``min``,
``max`` and ``abs`` are accepted; anything else is rejected when the formula is loaded, not when
it is first used.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field

from perfmodel.errors import excerpt

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_FUNCS = {
    "sum": lambda *a: float(sum(a)),
    "min": lambda *a: float(min(a)),
    "max": lambda *a: float(max(a)),
    "abs": lambda a: float(abs(a)),
}


class ExprError(ValueError):
    """A formula that is not plain arithmetic on names and numbers."""


@dataclass(frozen=True)
class Expr:
    """A parsed formula: its text, the names it reads, and the checked syntax tree."""

    text: str
    names: frozenset[str] = field(compare=False)
    _tree: ast.AST = field(compare=False, repr=False)

    def __call__(self, env: Mapping[str, float]) -> float:
        return _eval(self._tree, env)


MAX_TEXT = 2000  # characters of one formula (the longest shipped one has ~200)


def parse(text: str) -> Expr:
    """Parse and validate ``text``; raise :class:`ExprError` on anything but arithmetic."""
    if not isinstance(text, (str, int, float)) or isinstance(text, bool):
        raise ExprError(f"formula {excerpt(text)}: expected arithmetic as text")
    if len(str(text)) > MAX_TEXT:
        raise ExprError(f"formula {excerpt(text)}: longer than {MAX_TEXT} characters")
    try:
        tree = ast.parse(str(text).strip(), mode="eval").body
        names: set[str] = set()
        _check(tree, text, names)
    except SyntaxError as e:
        raise ExprError(f"formula {excerpt(text)} is not valid arithmetic ({e.msg})") from None
    except (RecursionError, MemoryError, ValueError) as e:
        if isinstance(e, ExprError):
            raise
        raise ExprError(f"formula {excerpt(text)}: nested too deeply") from None
    return Expr(str(text).strip(), frozenset(names), tree)


def _check(node: ast.AST, text: str, names: set[str]) -> None:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ExprError(f"formula {excerpt(text)}: only numbers are allowed as constants")
        if not abs(node.value) < 1e300:  # also refuses inf and integers too large for a float
            raise ExprError(f"formula {excerpt(text)}: constant {excerpt(node.value, 30)} out of range")
    elif isinstance(node, ast.Name):
        names.add(node.id)
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _BINOPS:
            raise ExprError(f"formula {excerpt(text)}: operator {type(node.op).__name__} not allowed")
        _check(node.left, text, names)
        _check(node.right, text, names)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.USub, ast.UAdd)):
            raise ExprError(f"formula {excerpt(text)}: unary {type(node.op).__name__} not allowed")
        _check(node.operand, text, names)
    elif isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCS or node.keywords:
            raise ExprError(f"formula {excerpt(text)}: only calls to {sorted(_FUNCS)} are allowed")
        if not node.args:
            raise ExprError(f"formula {excerpt(text)}: {node.func.id}() needs arguments")
        if node.func.id == "abs" and len(node.args) != 1:
            raise ExprError(f"formula {excerpt(text)}: abs() takes one argument")
        for a in node.args:
            _check(a, text, names)
    else:
        raise ExprError(f"formula {excerpt(text)}: {type(node).__name__} is not allowed")


def _eval(node: ast.AST, env: Mapping[str, float]) -> float:
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        return float(env[node.id])
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_eval(node.left, env), _eval(node.right, env))
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Call):
        return _FUNCS[node.func.id](*(_eval(a, env) for a in node.args))  # type: ignore[union-attr]
    raise ExprError(f"cannot evaluate {type(node).__name__}")  # pragma: no cover - rejected by _check
