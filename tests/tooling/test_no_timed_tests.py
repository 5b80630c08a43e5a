"""No test asserts on wall-clock durations: speed is measured in bench/, never judged by a test.

A busy machine moves every timing, so an assertion on one fails at random. The rule, checked on
every Python file under tests/: no `assert` may mention a reading of the clock
(`time.monotonic()`, `time.perf_counter()`, `time.time()` and their `_ns` forms, however
imported), nor a name assigned from one within the same function, however indirectly
(`started = time.monotonic()`, `seconds = time.monotonic() - started`, `timings[k].append(...)`,
`median = statistics.median(seconds)`), nor a call to a function of the module that returns
one. A count of timed things (`len(...)`) is a count, not a timing.

What a test asserts instead is what happened: the status, the body, how many requests were
served, which error was raised, what was still open. A guard against a hang is written as a
generous patience that fails the test when it runs out (`tests.support.waiting.until`, a
client's or socket's timeout), not as an assertion on how long something took. Should a test
ever need an assertion on the clock, it goes in ALLOWED with the reason; an entry that no
longer matches a flagged assertion fails, so the list cannot rot.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).parents[2]
TESTS = ROOT / "tests"
CLOCKS = frozenset(
    {"monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "time", "time_ns"}
)
# Calls whose result is no longer a timing even when their argument is one.
COUNTS = frozenset({"len"})
# Methods that put a value into the object they are called on.
FILLS = frozenset({"append", "extend", "add", "insert", "update", "setdefault", "put"})
# (path under the repository, function) -> why an assertion there may read the clock.
ALLOWED: dict[tuple[str, str], str] = {}


class _Clock:
    """How one module reaches the clock: the names of the time module and of its functions."""

    def __init__(self, tree: ast.Module) -> None:
        self.modules: set[str] = set()
        self.functions: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                self.modules |= {a.asname or a.name for a in node.names if a.name == "time"}
            elif isinstance(node, ast.ImportFrom) and node.module == "time":
                self.functions |= {a.asname or a.name for a in node.names if a.name in CLOCKS}

    def read_by(self, call: ast.Call) -> bool:
        func = call.func
        if isinstance(func, ast.Attribute):
            return (
                func.attr in CLOCKS
                and isinstance(func.value, ast.Name)
                and func.value.id in self.modules
            )
        return isinstance(func, ast.Name) and func.id in self.functions


class _Scope:
    """One top-level function (nested functions included) or the module's own statements."""

    def __init__(self, name: str, nodes: list[ast.AST], clock: _Clock) -> None:
        self.name = name
        self.nodes = nodes
        self.clock = clock
        self.timed: set[str] = set()

    def walk(self) -> Iterator[ast.AST]:
        for node in self.nodes:
            yield from ast.walk(node)

    def mentions(self, node: ast.AST, timed_functions: set[str]) -> bool:
        """Whether `node` reads the clock, a timed name, or a function returning a timing."""
        if isinstance(node, ast.Call):
            func = node.func
            if self.clock.read_by(node):
                return True
            if isinstance(func, ast.Name) and func.id in COUNTS:
                return False
            if isinstance(func, ast.Name) and func.id in timed_functions:
                return True
        if isinstance(node, ast.Name) and node.id in self.timed:
            return True
        return any(self.mentions(child, timed_functions) for child in ast.iter_child_nodes(node))

    def settle(self, timed_functions: set[str]) -> None:
        """Grow the set of timed names until every assignment from a timed value is in it."""
        while True:
            before = len(self.timed)
            for node in self.walk():
                for targets, value in _flows(node):
                    if self.mentions(value, timed_functions):
                        self.timed |= {n for t in targets for n in _bound(t)}
            if len(self.timed) == before:
                return


def _flows(node: ast.AST) -> Iterator[tuple[list[ast.expr], ast.AST]]:
    """(targets, value) for each way `node` binds or fills names with a value."""
    if isinstance(node, ast.Assign):
        target, value = node.targets[0], node.value
        if (
            len(node.targets) == 1
            and isinstance(target, ast.Tuple)
            and isinstance(value, ast.Tuple)
            and len(target.elts) == len(value.elts)
        ):
            # `started, closed = time.monotonic(), False`: only `started` is a timing.
            for one, its in zip(target.elts, value.elts, strict=True):
                yield [one], its
        else:
            yield node.targets, node.value
    elif isinstance(node, ast.NamedExpr | ast.AnnAssign | ast.AugAssign) and node.value is not None:
        yield [node.target], node.value
    elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
        yield [node.target], node.iter
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        yield [node.optional_vars], node.context_expr
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in FILLS
    ):
        for value in [*node.args, *(k.value for k in node.keywords)]:
            yield [node.func.value], value


def _bound(target: ast.AST) -> set[str]:
    """The names a target binds or fills: `a`, `a, b`, and the base of `a[k]` or `a.x`."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Tuple | ast.List):
        return {n for e in target.elts for n in _bound(e)}
    if isinstance(target, ast.Starred | ast.Subscript | ast.Attribute):
        return _bound(target.value)
    return set()


def _scopes(tree: ast.Module, clock: _Clock) -> list[_Scope]:
    scopes: list[_Scope] = []
    module: list[ast.AST] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            scopes.append(_Scope(node.name, [node], clock))
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    scopes.append(_Scope(f"{node.name}.{item.name}", [item], clock))
                else:
                    module.append(item)
        else:
            module.append(node)
    return [*scopes, _Scope("<module>", module, clock)]


def timed_asserts(source: str) -> list[tuple[str, int, str]]:
    """(function, line, assertion) for every assertion on the clock in a module's source."""
    tree = ast.parse(source)
    clock = _Clock(tree)
    scopes = _scopes(tree, clock)
    # Functions whose return value is a timing, found to a fixed point: a helper returning
    # `time.monotonic() - started` makes its callers' results timings too.
    timed_functions: set[str] = set()
    while True:
        before = len(timed_functions)
        for scope in scopes:
            scope.settle(timed_functions)
            for node in scope.walk():
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
                    isinstance(r, ast.Return)
                    and r.value is not None
                    and scope.mentions(r.value, timed_functions)
                    for r in ast.walk(node)
                ):
                    timed_functions.add(node.name)
        if len(timed_functions) == before:
            break
    return [
        (scope.name, node.lineno, ast.unparse(node.test))
        for scope in scopes
        for node in scope.walk()
        if isinstance(node, ast.Assert) and scope.mentions(node.test, timed_functions)
    ]


def _found() -> dict[tuple[str, str], list[str]]:
    files = sorted(TESTS.rglob("*.py"))
    assert len(files) > 100, "the rule reads every Python file under tests/"
    found: dict[tuple[str, str], list[str]] = {}
    for path in files:
        where = str(path.relative_to(ROOT))
        for function, line, test in timed_asserts(path.read_text(encoding="utf-8")):
            found.setdefault((where, function), []).append(f"{where}:{line}: assert {test}")
    return found


def test_no_assertion_compares_wall_clock_durations() -> None:
    bad = [line for key, lines in _found().items() if key not in ALLOWED for line in lines]
    assert not bad, "assertions on wall-clock time (move the figure to bench/):\n" + "\n".join(bad)


def test_every_allowed_assertion_still_exists() -> None:
    assert not set(ALLOWED) - set(_found()), "remove the stale entries from ALLOWED"


PROBE = """
import statistics
import time
import time as clock
from time import perf_counter as pc

def _timed(url):
    started = time.monotonic()
    get(url)
    return time.monotonic() - started

def test_direct():
    started, closed = time.monotonic(), False
    run()
    assert time.monotonic() - started < 15
    assert closed

def test_through_a_helper():
    seconds = [_timed(u) for u in URLS]
    assert max(seconds) < 1.0

def test_through_a_nested_function_and_a_list():
    seconds = []
    def scrape():
        started = clock.perf_counter()
        seconds.append(clock.perf_counter() - started)
    scrape()
    median = statistics.median(seconds)
    assert median < 0.1

def test_through_a_dict_and_a_loop():
    timings = {"a": [], "b": []}
    for what in timings:
        t0 = pc()
        timings[what].append(pc() - t0)
    a, b = (statistics.median(t) for t in timings.values())
    assert 0.6 < a / b < 1.6

def test_wall_clock():
    assert abs(time.time() - answer()) < 5
"""

PROBE_CLEAN = """
import time

def until(check):
    end = time.monotonic() + 60
    while not check():
        if time.monotonic() > end:
            raise TimeoutError
        time.sleep(0.1)

def test_counts_and_statuses():
    seen = []
    serve(lambda: seen.append(time.monotonic()))
    asked = len(seen)
    time.sleep(1)
    assert asked == len(seen) == 1
    until(lambda: ready())
    assert get().status == 200
"""


def test_the_rule_sees_every_way_a_timing_reaches_an_assertion() -> None:
    assert [(f, t) for f, _, t in timed_asserts(PROBE)] == [
        ("test_direct", "time.monotonic() - started < 15"),
        ("test_through_a_helper", "max(seconds) < 1.0"),
        ("test_through_a_nested_function_and_a_list", "median < 0.1"),
        ("test_through_a_dict_and_a_loop", "0.6 < a / b < 1.6"),
        ("test_wall_clock", "abs(time.time() - answer()) < 5"),
    ]
    assert timed_asserts(PROBE_CLEAN) == []
