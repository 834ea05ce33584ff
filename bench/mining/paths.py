"""Which repositories are mined, in which languages, and what a path is to the miner.

The rules here are the miner's own, written for it and kept apart from
repolens's ``roles.py`` on purpose: the labels a ranker is trained on must
not change when the engine's classification does.

A path is one of:

``source``  code of one of the repository's languages that is not a test, a
            doc, an example, a benchmark, vendored or generated (the only
            kind that can be gold)
``code``    code of another language, or of the repository's languages
            outside ``source`` (docs/, examples/, tests ...): it never counts
            as gold, but a commit that changes code of another language in
            source folders is dropped, since its gold would be incomplete
``other``   everything else (docs, data, configuration)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

LANGUAGE_EXTS: dict[str, tuple[str, ...]] = {
    "python": (".py",),
    "go": (".go",),
    "rust": (".rs",),
    "typescript": (".ts", ".tsx", ".mts", ".cts"),
    "javascript": (".js", ".jsx", ".mjs", ".cjs"),
    "java": (".java",),
    "kotlin": (".kt",),
    "ruby": (".rb",),
    "cpp": (".hpp", ".cpp", ".cc", ".cxx", ".hh", ".h", ".ipp"),
}
# Code in any language: a change to one of these outside the repository's
# languages makes a commit's gold incomplete.
_OTHER_CODE_EXTS = (".c", ".cs", ".swift", ".scala", ".php", ".pyx", ".pxd", ".m", ".mm", ".lua", ".zig")
ALL_CODE_EXTS = tuple(e for exts in LANGUAGE_EXTS.values() for e in exts) + _OTHER_CODE_EXTS


@dataclass(frozen=True)
class RepoSpec:
    repo: str  # owner/name
    language: str  # the main language: the question's ``language``
    languages: tuple[str, ...]  # whose files can be gold

    @property
    def exts(self) -> tuple[str, ...]:
        return tuple(e for lang in self.languages for e in LANGUAGE_EXTS[lang])


def _spec(repo: str, *languages: str) -> RepoSpec:
    return RepoSpec(repo, languages[0], languages)


# The repositories issues 28 and 37 allow (none of the development set's).
# Those the search library's `fetch` could not bring (over its size limit:
# django, scikit-learn, matplotlib, junit5, pandas) are listed for the record
# and skipped when their mirror is absent.
REPOS: tuple[RepoSpec, ...] = (
    _spec("django/django", "python"),
    _spec("scikit-learn/scikit-learn", "python"),
    _spec("matplotlib/matplotlib", "python"),
    _spec("pallets/werkzeug", "python"),
    _spec("pallets/jinja", "python"),
    _spec("encode/httpx", "python"),
    _spec("psf/black", "python"),
    _spec("python-attrs/attrs", "python"),
    _spec("pypa/pip", "python"),
    _spec("pydantic/pydantic", "python"),
    _spec("gin-gonic/gin", "go"),
    _spec("cli/cli", "go"),
    _spec("urfave/cli", "go"),
    _spec("go-chi/chi", "go"),
    _spec("prometheus/client_golang", "go"),
    _spec("sharkdp/bat", "rust"),
    _spec("clap-rs/clap", "rust"),
    _spec("tokio-rs/axum", "rust"),
    _spec("serde-rs/serde", "rust"),
    _spec("trpc/trpc", "typescript", "javascript"),
    _spec("vitest-dev/vitest", "typescript", "javascript"),
    _spec("expressjs/express", "javascript", "typescript"),
    _spec("axios/axios", "javascript", "typescript"),
    _spec("square/okhttp", "kotlin", "java"),
    _spec("square/retrofit", "java", "kotlin"),
    _spec("apache/commons-lang", "java"),
    _spec("junit-team/junit5", "java", "kotlin"),
    _spec("rack/rack", "ruby"),
    _spec("nlohmann/json", "cpp"),
    # issue 37: the repositories whose issues SWE-Gym gathered, for more Python fixes with their tests
    _spec("pandas-dev/pandas", "python"),
    _spec("getmoto/moto", "python"),
    _spec("python/mypy", "python"),
    _spec("dask/dask", "python"),
    _spec("conan-io/conan", "python"),
    _spec("facebookresearch/hydra", "python"),
    _spec("iterative/dvc", "python"),
    _spec("bokeh/bokeh", "python", "typescript"),
    _spec("modin-project/modin", "python"),
    _spec("Project-MONAI/MONAI", "python"),
)

# Folders whose code is not the repository's source. Tests and their data (a
# folder named ``test_*``, ``*_tests`` or ``testutil`` too):
_TEST_DIRS = re.compile(
    r"^(tests?|testing|testdata|test_data|testutils?|testlib|test[_-].+|.+[_-]tests?|__tests__|__mocks__"
    r"|__snapshots__|specs?|e2e|fixtures?)$",
    re.IGNORECASE,
)
# the project's own code that is not its source: docs, examples, benchmarks
_ASIDE_DIRS = re.compile(
    r"^(benches|benchmarks?|bench|examples?|samples?|demos?|docs?|documentation|site|website)$", re.IGNORECASE
)
# and code that is not the project's own: vendored or generated (an amalgamated header, a build)
_FOREIGN_DIRS = re.compile(
    r"^(vendor|vendored|_vendor|third_party|third-party|node_modules|dist|generated|__generated__"
    r"|single_include)$",
    re.IGNORECASE,
)
_TEST_NAME = re.compile(
    r"(^test_.*\.py$|.*_tests?\.py$|^conftest\.py$|.*_test\.(go|rs|rb|cpp|cc)$|^test_.*\.rb$|.*_spec\.rb$"
    r"|.*(Test|Tests|IT|TestCase)\.(java|kt)$|.*\.(test|spec|bench|test-d)\.[cm]?[jt]sx?$)"
)
_GENERATED_NAME = re.compile(r"(_pb2(_grpc)?\.py|\.pb\.go|_gen\.go|\.min\.js|\.generated\.\w+)$")


def _dirs(path: str) -> tuple[str, ...]:
    return PurePosixPath(path).parts[:-1]


def is_test(path: str) -> bool:
    """Tests and their data: never gold, and their definitions do not count."""
    return bool(_TEST_NAME.match(PurePosixPath(path).name)) or any(_TEST_DIRS.match(d) for d in _dirs(path))


def is_foreign(path: str) -> bool:
    """Vendored or generated code: never gold, and its definitions do not count
    (a name defined in ``src/`` and again in an amalgamated header is defined once)."""
    return bool(_GENERATED_NAME.search(path)) or any(_FOREIGN_DIRS.match(d) for d in _dirs(path))


def in_source_folders(path: str) -> bool:
    """Whether a path lies outside tests, docs, examples, vendored and generated folders."""
    return not any(rx.match(d) for d in _dirs(path) for rx in (_TEST_DIRS, _ASIDE_DIRS, _FOREIGN_DIRS))


def path_kind(path: str, spec: RepoSpec) -> str:
    """``source``, ``code`` or ``other`` (the module docstring says what each is)."""
    name = PurePosixPath(path).name
    if not name.endswith(ALL_CODE_EXTS):
        return "other"
    if not name.endswith(spec.exts) or not in_source_folders(path) or is_test(path) or is_foreign(path):
        return "code"
    return "source"
