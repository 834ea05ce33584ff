"""find_references of Python definitions met through what the code says of
types: a field a base class declares, a class body's own names (each test
on the local store and PostgreSQL, ``store_url``)."""

from __future__ import annotations

from pathlib import Path

from repolens import service
from repolens.index.build import build_index


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
