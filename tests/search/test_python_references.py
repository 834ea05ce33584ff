"""find_references of Python definitions met through what the code says of
types: a field a base class declares, a class body's own names, what a
function returns, a class defined in a test, pytest's fixtures (each test
on the local store and PostgreSQL, ``store_url``)."""

from __future__ import annotations

from pathlib import Path

from repolens import service
from repolens.index.build import build_index
from repolens.search.references import TYPES_READ_OF


def resolved(root: Path, target: str) -> list[str]:
    """The file and ``scope line: text`` lines of ``target``'s resolved uses."""
    text = service.find_references(target, root).text.split("name matches (same name")[0]
    return [line.strip() for line in text.splitlines()[1:] if line.strip()]


def test_a_field_a_base_class_declares_and_a_name_of_the_class_body(tmp_path: Path, write_tree, store_url):
    tags = (
        "class Serializer:\n"  # 1
        "    def tag(self, value):\n"
        "        return value\n"
        "\n"
        "\n"  # 5
        "class Tag:\n"
        "    def __init__(self, serializer: Serializer):\n"
        "        self.serializer = serializer\n"
        "\n"
        "\n"  # 10
        "class PassList(Tag):\n"
        "    def to_json(self, value):\n"
        "        return self.serializer.tag(value)\n"
        "\n"
        "    tag = to_json\n"  # 15
    )
    write_tree(tmp_path, {"py/app/tags.py": tags})
    build_index(tmp_path)
    assert resolved(tmp_path, "Serializer.tag") == [
        "py/app/tags.py",
        "PassList.to_json 13: return self.serializer.tag(value)",
    ]
    assert resolved(tmp_path, "PassList.to_json") == ["py/app/tags.py", "PassList 15: tag = to_json"]


def test_a_method_through_what_a_function_returns(tmp_path: Path, write_tree, store_url):
    write_tree(
        tmp_path,
        {
            "py/lib/__init__.py": "from lib.sessions import session\n",
            "py/lib/sessions.py": (
                "class Session:\n    def get(self):\n        return 1\n\n\n"
                "def session():\n    return Session()\n"
            ),
            "py/use.py": (
                "import lib\n"  # 1
                "\n"
                "\n"
                "def fetch():\n"
                "    s = lib.session()\n"  # 5
                "    return s.get()\n"
                "\n"
                "\n"
                "def fetch_again():\n"
                "    return lib.session().get()\n"  # 10
            ),
        },
    )
    build_index(tmp_path)
    assert resolved(tmp_path, "Session.get") == [
        "py/use.py",
        "fetch 6: return s.get()",
        "fetch_again 10: return lib.session().get()",
    ]


def test_a_local_class_instance_names_its_base_methods_not_those_it_redefines(
    tmp_path: Path, write_tree, store_url
):
    write_tree(
        tmp_path,
        {
            "py/lib/__init__.py": "",
            "py/lib/core.py": (
                "class App:\n    def route(self, f):\n        return f\n\n"
                "    def other(self):\n        return 1\n"
            ),
            "py/tests/test_views.py": (
                "from lib.core import App\n"  # 1
                "\n"
                "\n"
                "def test_custom():\n"
                "    class MyApp(App):\n"  # 5
                "        def other(self):\n"
                "            return 2\n"
                "\n"
                "    app = MyApp()\n"
                "    app.other()\n"  # 10
                "\n"
                "    @app.route\n"
                "    def index():\n"
                "        return 1\n"
            ),
        },
    )
    build_index(tmp_path)
    assert resolved(tmp_path, "App.route") == ["py/tests/test_views.py", "test_custom 12: @app.route"]
    assert resolved(tmp_path, "App.other") == []


FIXTURES = {
    "py/lib/__init__.py": "",
    "py/lib/core.py": "class App:\n    def route(self, f):\n        return f\n",
    "py/lib/copy.py": "def copy(tmp_dir):\n    return tmp_dir\n",  # no test, no fixture: a parameter
    "py/tests/conftest.py": (
        "import pytest\n"  # 1
        "from lib.core import App\n"
        "\n"
        "\n"
        "@pytest.fixture\n"  # 5
        "def app():\n"
        "    made = App()\n"
        "    return made\n"
        "\n"
        "\n"  # 10
        "@pytest.fixture(scope='session')\n"
        "def tmp_dir():\n"
        "    return 1\n"
    ),
    "py/tests/unit/test_views.py": (
        "def test_index(app, tmp_dir):\n"  # 1
        "    @app.route\n"
        "    def index():\n"
        "        return tmp_dir\n"
    ),
    "py/tests/other/conftest.py": "from pytest import fixture\n\n\n@fixture\ndef tmp_dir():\n    return 2\n",
    "py/tests/other/test_near.py": "def test_near(tmp_dir):\n    assert tmp_dir\n",
}


def test_a_pytest_fixture_is_used_by_the_tests_naming_it_and_gives_their_parameter_its_type(
    tmp_path: Path, write_tree, store_url
):
    write_tree(tmp_path, FIXTURES)
    build_index(tmp_path)
    assert resolved(tmp_path, "py/tests/conftest.py:12") == [
        "py/tests/unit/test_views.py",
        "test_index 1: def test_index(app, tmp_dir):",
        "test_index 4: return tmp_dir",
    ]
    assert resolved(tmp_path, "py/tests/other/conftest.py:5") == [
        "py/tests/other/test_near.py",  # the nearest conftest.py's fixture
        "test_near 1: def test_near(tmp_dir):",
        "test_near 2: assert tmp_dir",
    ]
    assert resolved(tmp_path, "App.route") == [
        "py/tests/unit/test_views.py",
        "test_index 2: @app.route",  # app: what the app fixture returns
    ]
    callees = service.find_references("test_index", tmp_path, direction="callees").text
    assert "py/lib/core.py:2 App.route (method)" in callees  # a call through a fixture is followed


def test_a_method_through_a_module_global_another_module_imports(tmp_path: Path, write_tree, store_url):
    """``current_app: "Flask" = LocalProxy(...)`` and ``app = Flask()`` at a
    module's top level: their importers' calls mean the class's method."""
    write_tree(
        tmp_path,
        {
            "pkg/app.py": "class Flask:\n    def make_response(self, rv):\n        return rv\n",
            "pkg/globals.py": (
                "import typing as t\n"
                "if t.TYPE_CHECKING:\n"
                "    from .app import Flask\n"
                "\n"
                'current_app: "Flask" = LocalProxy("app")\n'
                "plain_app = Flask()\n"
                "unknown = make()\n"
            ),
            "pkg/helpers.py": (
                "from .globals import current_app, plain_app, unknown\n"  # 1
                "\n"
                "\n"
                "def make_response(*args):\n"
                "    return current_app.make_response(args)\n"  # 5
                "\n"
                "\n"
                "def other(*args):\n"
                "    return plain_app.make_response(args)\n"
                "\n"
                "\n"
                "def third(*args):\n"
                "    return unknown.make_response(args)\n"  # 13: a global of no declared type
            ),
        },
    )
    build_index(tmp_path)
    assert resolved(tmp_path, "Flask.make_response") == [
        "pkg/helpers.py",
        "make_response 5: return current_app.make_response(args)",
        "other 9: return plain_app.make_response(args)",
    ]


def test_a_method_through_fields_a_method_s_result_makes_and_the_owner_s_subclasses_and_re_exports(
    tmp_path: Path, write_tree, store_url
):
    """``app.config.from_file`` (``self.config = self.make_config()``, ``-> Config``) and
    ``@app.cli.command()`` (``self.cli = AppGroup()`` in ``Flask``'s base), ``app`` made by
    ``pkg.Flask``, a re-export; ``app.route()`` the base's, ``app.add_url_rule()`` not (``Flask``
    overrides it); ``session_interface = self.app.session_interface``."""
    write_tree(
        tmp_path,
        {
            "src/pkg/__init__.py": "from .app import Flask as Flask\n",
            "src/pkg/config.py": "class Config:\n    def from_file(self, name):\n        return name\n",
            "src/pkg/cli.py": "class AppGroup:\n    def command(self):\n        return 1\n",
            "src/pkg/sessions.py": "class Sessions:\n    def open_session(self, app):\n        return app\n",
            "src/pkg/scaffold.py": (
                "from .cli import AppGroup\n\n\nclass Scaffold:\n    def __init__(self):\n"
                "        self.cli = AppGroup()\n\n"
                "    def route(self):\n        return 1\n\n"
                "    def add_url_rule(self):\n        raise NotImplementedError\n"
            ),
            "src/pkg/app.py": (
                "from .config import Config\n"  # 1
                "from .scaffold import Scaffold\n"
                "from .sessions import Sessions\n"
                "\n"
                "\n"  # 5
                "class Flask(Scaffold):\n"
                "    session_interface: Sessions = Sessions()\n"
                "\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"  # 10
                "        self.config = self.make_config()\n"
                "\n"
                "    def make_config(self) -> Config:\n"
                "        return Config()\n"
                "\n"
                "    def add_url_rule(self):\n"  # 16
                "        return 2\n"
            ),
            "src/pkg/ctx.py": (
                "from .app import Flask\n"  # 1
                "\n"
                "\n"
                "class Ctx:\n"
                "    def __init__(self, app: Flask):\n"  # 5
                "        self.app = app\n"
                "\n"
                "    def push(self):\n"
                "        session_interface = self.app.session_interface\n"
                "        return session_interface.open_session(self.app)\n"  # 10
            ),
            "tests/test_app.py": (
                "import pkg\n"  # 1
                "\n"
                "\n"
                "def test_config():\n"
                "    app = pkg.Flask()\n"  # 5
                "    app.config.from_file('x')\n"
                "\n"
                "    @app.cli.command()\n"
                "    def hello():\n"
                "        return 1\n"  # 10
                "\n"
                "    app.route()\n"
                "    app.add_url_rule()\n"
            ),
        },
    )
    build_index(tmp_path)
    tests = "tests/test_app.py"
    assert resolved(tmp_path, "Config.from_file") == [tests, "test_config 6: app.config.from_file('x')"]
    assert resolved(tmp_path, "AppGroup.command") == [tests, "test_config 8: @app.cli.command()"]
    assert resolved(tmp_path, "Scaffold.route") == [tests, "test_config 12: app.route()"]  # Flask's base's
    assert resolved(tmp_path, "Scaffold.add_url_rule") == []  # Flask's own overrides it
    assert resolved(tmp_path, "Flask.add_url_rule") == [tests, "test_config 13: app.add_url_rule()"]
    assert resolved(tmp_path, "Sessions.open_session") == [
        "src/pkg/ctx.py",
        "Ctx.push 10: return session_interface.open_session(self.app)",
    ]


def test_a_subclass_redeclaring_a_base_s_field_is_not_followed_for_a_path_through_it(
    tmp_path: Path, write_tree, store_url
):
    """``Flask`` redeclares ``cli`` (``self.cli = FlaskGroup()``) and ``shell`` (a property)
    that its base ``Scaffold`` makes ``AppGroup()``: ``app.cli.command()`` and
    ``app.shell.command()`` are not ``AppGroup.command``, ``app.group.command()`` is."""
    write_tree(
        tmp_path,
        {
            "src/pkg/__init__.py": "from .app import Flask as Flask\n",
            "src/pkg/cli.py": (
                "class AppGroup:\n    def command(self):\n        return 1\n\n\n"
                "class FlaskGroup:\n    def command(self):\n        return 2\n"
            ),
            "src/pkg/scaffold.py": (
                "from .cli import AppGroup\n\n\nclass Scaffold:\n    def __init__(self):\n"
                "        self.cli = AppGroup()\n"
                "        self.shell = AppGroup()\n"
                "        self.group = AppGroup()\n"
            ),
            "src/pkg/app.py": (
                "from .cli import FlaskGroup\n"  # 1
                "from .scaffold import Scaffold\n"
                "\n"
                "\n"
                "class Flask(Scaffold):\n"  # 5
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.cli = FlaskGroup()\n"
                "\n"
                "    @property\n"  # 10
                "    def shell(self):\n"
                "        return FlaskGroup()\n"
            ),
            "tests/test_app.py": (
                "import pkg\n"  # 1
                "\n"
                "\n"
                "def test_cli():\n"
                "    app = pkg.Flask()\n"  # 5
                "    app.cli.command()\n"
                "    app.shell.command()\n"
                "    app.group.command()\n"
            ),
        },
    )
    build_index(tmp_path)
    assert resolved(tmp_path, "AppGroup.command") == ["tests/test_app.py", "test_cli 8: app.group.command()"]
    assert resolved(tmp_path, "FlaskGroup.command") == [
        "tests/test_app.py",
        "test_cli 6: app.cli.command()",
        "test_cli 7: app.shell.command()",  # what the property returns
    ]


def test_a_field_s_owner_is_read_before_a_popular_class_s_subclasses(tmp_path: Path, write_tree, store_url):
    """``Config`` has more subclasses than a question reads types after its first round, all
    met before ``Flask``, whose field ``config`` it is: ``Flask`` is read first, for its
    re-export ``pkg.Flask`` (``app.config.from_file``)."""
    subclasses = {
        f"src/pkg/a/c{i:02}.py": f"from pkg.config import Config\n\n\nclass C{i:02}(Config):\n    pass\n"
        for i in range(TYPES_READ_OF["python"] + 1)
    }
    write_tree(
        tmp_path,
        {
            **subclasses,
            "src/pkg/__init__.py": "from .zapp import Flask as Flask\n",
            "src/pkg/a/__init__.py": "",
            "src/pkg/config.py": "class Config:\n    def from_file(self, name):\n        return name\n",
            "src/pkg/zapp.py": (
                "from .config import Config\n\n\nclass Flask:\n"
                "    def __init__(self):\n        self.config = Config()\n"
            ),
            "tests/test_app.py": (
                "import pkg\n\n\ndef test_config():\n    pkg.Flask().config.from_file('x')\n"
            ),
        },
    )
    build_index(tmp_path)
    assert resolved(tmp_path, "Config.from_file") == [
        "tests/test_app.py",
        "test_config 5: pkg.Flask().config.from_file('x')",
    ]


def test_a_method_through_with_a_generic_s_annotation_and_a_method_s_local(
    tmp_path: Path, write_tree, store_url
):
    """``with lib.raises(E) as info: info.render()`` (``raises`` returns a ``Raises[E]``
    whose ``__enter__`` returns an ``Info[E]``), ``Info.current().render()`` (a
    classmethod declaring ``-> "Info[BaseException]"``) and ``r = self._open(); r.render()``."""
    write_tree(
        tmp_path,
        {
            "src/lib/__init__.py": "from .api import raises\nfrom .info import Info\n",
            "src/lib/info.py": (
                "from typing import Generic, TypeVar\n"  # 1
                "\n"
                "E = TypeVar('E')\n"
                "\n"
                "\n"  # 5
                "class Info(Generic[E]):\n"
                "    def render(self):\n"
                "        return 1\n"
                "\n"
                "    @classmethod\n"  # 10
                "    def current(cls) -> 'Info[BaseException]':\n"
                "        return cls()\n"
            ),
            "src/lib/api.py": (
                "from .info import E, Info\n"  # 1
                "\n"
                "\n"
                "class Raises:\n"
                "    def __enter__(self) -> Info[E]:\n"  # 5
                "        return Info()\n"
                "\n"
                "\n"
                "def raises(kind) -> 'Raises[E]':\n"
                "    return Raises()\n"  # 10
                "\n"
                "\n"
                "class Log:\n"
                "    def _open(self):\n"
                "        made = Info()\n"  # 15
                "        return made\n"
                "\n"
                "    def log(self):\n"
                "        r = self._open()\n"
                "        return r.render()\n"  # 20
            ),
            "tests/test_info.py": (
                "import lib\n"  # 1
                "\n"
                "\n"
                "def test_render():\n"
                "    with lib.raises(ValueError) as info:\n"  # 5
                "        pass\n"
                "    assert info.render()\n"
                "    assert lib.Info.current().render()\n"
            ),
        },
    )
    build_index(tmp_path)
    assert resolved(tmp_path, "Info.render") == [
        "src/lib/api.py",
        "Log.log 20: return r.render()",
        "tests/test_info.py",
        "test_render 7: assert info.render()",
        "test_render 8: assert lib.Info.current().render()",
    ]


def test_a_fixture_giving_another_fixture_s_value_and_a_classmethod_s_cls(
    tmp_path: Path, write_tree, store_url
):
    """``def wrapped(app): ...; return app`` gives what the ``app`` fixture gives;
    ``App.make()`` returning ``cls()`` makes an ``App``."""
    write_tree(
        tmp_path,
        {
            "py/lib/__init__.py": "",
            "py/lib/core.py": (
                "class App:\n    def route(self, f):\n        return f\n\n"
                "    @classmethod\n    def make(cls):\n        return cls()\n"
            ),
            "py/tests/conftest.py": (
                "import pytest\nfrom lib.core import App\n\n\n@pytest.fixture\ndef app():\n    return App()\n"
            ),
            "py/tests/test_wrapped.py": (
                "import pytest\n"  # 1
                "from lib.core import App\n"
                "\n"
                "\n"
                "@pytest.fixture\n"  # 5
                "def wrapped(app):\n"
                "    app.route(1)\n"
                "    return app\n"
                "\n"
                "\n"  # 10
                "def test_it(wrapped):\n"
                "    wrapped.route(2)\n"
                "    made = App.make()\n"
                "    made.route(3)\n"
            ),
        },
    )
    build_index(tmp_path)
    assert resolved(tmp_path, "App.route") == [
        "py/tests/test_wrapped.py",
        "wrapped 7: app.route(1)",
        "test_it 12: wrapped.route(2)",
        "test_it 14: made.route(3)",
    ]


def test_a_fixture_annotated_with_typing_s_generic_is_of_no_known_type(tmp_path: Path, write_tree, store_url):
    """``-> List[Bag]`` (``-> Callable[[], Bag]``) says nothing of a class of the repository:
    ``many.append`` stays a name match of ``Bag.append``, not ``typing.List.append``."""
    write_tree(
        tmp_path,
        {
            "py/lib/__init__.py": "",
            "py/lib/bag.py": "class Bag:\n    def append(self, x):\n        return x\n",
            "py/tests/conftest.py": (
                "from typing import Callable, List\n"  # 1
                "\n"
                "import pytest\n"
                "from lib.bag import Bag\n"
                "\n"  # 5
                "\n"
                "@pytest.fixture\n"
                "def many() -> List[Bag]:\n"
                "    return [Bag()]\n"
                "\n"  # 10
                "\n"
                "@pytest.fixture\n"
                "def make() -> Callable[[], Bag]:\n"
                "    return Bag\n"
            ),
            "py/tests/test_many.py": "def test_it(many, make):\n    many.append(1)\n    make.append(2)\n",
        },
    )
    build_index(tmp_path)
    text = service.find_references("Bag.append", tmp_path).text
    matches = text.split("name matches (same name")[1]
    assert "many.append(1)" in matches and "make.append(2)" in matches
