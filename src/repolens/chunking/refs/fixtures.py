"""pytest's fixtures: a test's parameters are the fixtures of their names.

Run once per Python file after its locals' types are read (the last of
the ``rules`` of :mod:`.specs`'s Python, after :mod:`.python_types`), on
the captures of the file's one query.

A parameter of a *pytest function* (a function whose name starts with
``test``, as pytest collects them, or a fixture) is the fixture of that
name that pytest finds for the function's file: one of the file itself,
of the ``conftest.py`` files of its folder and the folders above, or of
pytest's own plugins (the modules of ``_pytest``), nearest first; a
fixture named as its function (``def app(app)``) overrides one found past
its own file. Which file that is needs other files, so the
parameter, each use of it in the function, and each member reached through
it (``app.route``, ``monkeypatch.setattr``) are kept with a key naming the
fixture, resolved when a question is asked
(:mod:`repolens.search.ref_fixtures`):

``@N``          the fixture ``N`` the file sees (``@^N``: past the file itself)
``@N.a.b``      the member ``a.b`` of the object that fixture gives

A fixture (a module-level function decorated ``@pytest.fixture``,
``@pytest.fixture(...)`` or pytest's ``fixture`` imported) is kept as a row
of kind ``fixture`` (no use): named ``@`` and the name parameters use (its
``name=``, else its function's), scoped to the function, its target the key
of the class it gives when the file says it (its return annotation,
``Generator[X, ...]`` giving ``X``, or what it returns or yields:
``X(...)``, a local ``x = X(...)``), or ``@N`` when it gives its parameter ``N``
(another fixture's value).

Nothing here needs another file; a fixture's own file resolves its return type.
"""

from __future__ import annotations

import tree_sitter as ts

from repolens.chunking.refs import FIXTURE_KIND, Ref
from repolens.chunking.refs.extracting import Extracting, line_of, text
from repolens.chunking.refs.python_types import function_name, returned_value_type, returned_values

# The keys pytest's fixture decorator resolves to (``_pytest/fixtures.py`` defines it).
_FIXTURE_DECORATORS = frozenset({"pytest.fixture", "_pytest.fixtures.fixture"})
# Parameters that are the receiver of a method, never a fixture.
_RECEIVERS = frozenset({"self", "cls"})


def fixtures(ex: Extracting, caps: dict[str, list[ts.Node]]) -> None:
    """Add a file's fixture rows, and its tests' and fixtures' parameters, to ``ex``."""
    functions = {n.parent.start_byte: n.parent for n in caps.get("test", ()) if n.parent is not None}
    for node in caps.get("decorator", ()):
        if ex.src[node.start_byte : node.end_byte] == b"fixture":
            fixture = _decorated_fixture(ex, node)
            if fixture is not None:
                functions[fixture.start_byte] = fixture
    for _, function in sorted(functions.items()):
        _pytest_function(ex, function)


def _decorated_fixture(ex: Extracting, name: ts.Node) -> ts.Node | None:
    """The function a ``fixture`` decorator name decorates, when it is pytest's; at a
    module's top level, also its ``fixture`` row."""
    decorator = name.parent
    while decorator is not None and decorator.type != "decorator":
        decorator = decorator.parent
    decorated = decorator.parent if decorator is not None else None
    function = decorated.child_by_field_name("definition") if decorated is not None else None
    if decorator is None or function is None or function.type != "function_definition":
        return None
    expression = decorator.named_children[0] if decorator.named_child_count else None
    call = expression if expression is not None and expression.type == "call" else None
    if call is not None:
        expression = call.child_by_field_name("function")
    fn, qualname, own = ex.function_at(line_of(function))
    if expression is None or ex.named_type(text(ex, expression), -1) not in _fixture_keys(ex.path):
        return None
    at_top = decorated.parent is not None and decorated.parent.type == "module"
    if at_top and own == function_name(ex, function):
        name_kw = _keyword(ex, call, "name") if call is not None else ""
        returns = returned_value_type(ex, function, fn) or _returned_parameter(ex, function, own)
        line = line_of(function)
        ex.refs.append(Ref("@" + (name_kw or own), line, FIXTURE_KIND, qualname, returns))
    return function


def _returned_parameter(ex: Extracting, function: ts.Node, own: str) -> str:
    """``@N`` when the fixture returns or yields its parameter ``N`` first, another fixture
    (``def stepwise_testdir(testdir): ...; return testdir``): it gives what that one gives."""
    parameters = function.child_by_field_name("parameters")
    listed = parameters.named_children if parameters is not None else []
    names = {text(ex, p) for p in listed if p.type == "identifier"} - _RECEIVERS
    value = next(returned_values(function), None)
    if value is None or value.type != "identifier" or text(ex, value) not in names:
        return ""
    return ("@^" if text(ex, value) == own else "@") + text(ex, value)


def _fixture_keys(path: str) -> frozenset[str]:
    """The keys of pytest's fixture decorator, as ``path`` may spell them."""
    if path.endswith("_pytest/fixtures.py"):  # pytest's own module defines it
        return _FIXTURE_DECORATORS | {"=fixture"}
    return _FIXTURE_DECORATORS


def _keyword(ex: Extracting, call: ts.Node, name: str) -> str:
    """The string a call passes as keyword ``name`` ("" none, or not a plain string)."""
    args = call.child_by_field_name("arguments")
    for arg in args.named_children if args is not None else ():
        if arg.type == "keyword_argument":
            key, value = arg.child_by_field_name("name"), arg.child_by_field_name("value")
            if key is not None and value is not None and text(ex, key) == name and value.type == "string":
                said = text(ex, value)
                return said.strip("\"'") if said[:1] in "\"'" and said.isprintable() else ""
    return ""


def _pytest_function(ex: Extracting, function: ts.Node) -> None:
    """The parameters of a test or fixture: each a use of the fixture of its
    name, and the type of its local (its members reached through the fixture)."""
    own = function_name(ex, function)
    fn, qualname, symbol = ex.function_at(line_of(function))
    parameters = function.child_by_field_name("parameters")
    if fn < 0 or symbol != own or parameters is None:
        return  # a function nested in another: no symbol of its own
    for parameter in parameters.named_children:
        if parameter.type in ("identifier", "typed_parameter"):
            name = parameter if parameter.type == "identifier" else parameter.named_children[0]
        elif parameter.type in ("default_parameter", "typed_default_parameter"):
            name = parameter.child_by_field_name("name")
        else:
            continue
        if name is None or name.type != "identifier":
            continue
        parameter_name = text(ex, name)
        if parameter_name in _RECEIVERS:
            continue
        target = ("@^" if parameter_name == own else "@") + parameter_name
        ex.fixture_params[(fn, parameter_name)] = target
        ex.typed.setdefault((fn, parameter_name), target)  # an annotation says the type first
        ex.refs.append(Ref(parameter_name, line_of(name), "name", qualname, target))
