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
