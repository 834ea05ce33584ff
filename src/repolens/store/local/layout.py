"""Where an index lives on disk, and how a new one is published atomically.

::

    <index_dir>/                  default <root>/.repolens
      .gitignore                  "*": the folder ignores itself
      current -> gen-000007       symlink, swapped with one rename
      write.lock                  flock held by the one writer
      gen-000007/                 one complete index: index.db + lexical/
      gen-000008.building/        a build in progress (resumable)

A full build writes a fresh generation beside the published one and then
swaps the ``current`` symlink with ``os.replace``, which is atomic on POSIX:
a reader resolves ``current`` once and sees the old index or the new one,
never a mix. A crash before the swap leaves the previous generation current.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

from repolens.errors import IndexLockedError, IndexMissingError, IndexReadOnlyError, StorageFullError
from repolens.fronts import say
from repolens.record import Record

INDEX_DIR_NAME = ".repolens"
_GEN = r"^gen-(\d{6,})$"  # compiled at first use: a search needs none
# Old generations are kept this long after being replaced so that a reader
# that resolved ``current`` just before the swap can still open them.
_GRACE_SECONDS = 120.0
# Times a writer opens the lock anew when the folder holding it was removed meanwhile.
_LOCK_ATTEMPTS = 8


def shared_index_dir(root: Path, parent: str | os.PathLike[str]) -> Path:
    """The index folder of ``root`` in ``parent``, a folder shared by many
    roots (``REPOLENS_INDEX_DIR``): one sub-folder per root, named by its path
    (:func:`shared_key`). A root whose index was made under the key of
    earlier versions, which two roots could share (``a/b`` and ``a_b``),
    keeps it while that index records this root."""
    parent = Path(parent).expanduser()
    folder = parent / shared_key(root)
    if not folder.exists():
        legacy = parent / (re.sub(r"[^A-Za-z0-9._-]+", "_", str(root).strip("/")) or "root")
        if legacy != folder and legacy.is_dir() and _recorded_root(legacy) == str(root):
            folder = legacy
    return folder.resolve()


_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-")


def shared_key(root: Path) -> str:
    """The name of ``root``'s sub-folder in a shared index folder: its path
    with ``/`` as ``_``, and every other character outside ``[A-Za-z0-9.-]``
    (``_`` too) as ``~`` and its UTF-8 bytes in hex (``my_app`` is
    ``my~5fapp``), so that no two roots share a key."""
    parts = []
    for ch in str(root).strip("/"):
        if ch in _KEY_CHARS:
            parts.append(ch)
        elif ch == "/":
            parts.append("_")
        else:
            parts.append("".join(f"~{b:02x}" for b in ch.encode("utf-8", "surrogatepass")))
    return "".join(parts) or "root"


def _recorded_root(folder: Path) -> str:
    """The root the published index in ``folder`` records ("" when none can be read)."""
    import sqlite3

    from repolens.store.local.generation import DB_NAME
    from repolens.store.local.sqlite import read_meta

    try:
        db = sqlite3.connect(f"file:{folder / 'current' / DB_NAME}?mode=ro", uri=True)
        try:
            return read_meta(db).get("root", "")
        finally:
            db.close()
    except sqlite3.Error:
        return ""


class IndexLayout(Record):
    """Where a root's local index lives: its folder, the ``current`` link, the writer lock."""

    root: Path
    index_dir: Path

    @property
    def current_link(self) -> Path:
        return self.index_dir / "current"

    @property
    def lock_path(self) -> Path:
        return self.index_dir / "write.lock"

    def current_generation(self) -> Path | None:
        """The published generation directory, or None when there is none."""
        try:
            target = os.readlink(self.current_link)
        except (FileNotFoundError, OSError):
            return None
        path = self.index_dir / target
        return path if path.is_dir() else None

    def require_current(self) -> Path:
        gen = self.current_generation()
        if gen is None:
            raise self.missing()
        return gen

    def missing(self) -> IndexMissingError:
        """The error for a root without an index; its fix is one that can work."""
        if self._can_create():
            return IndexMissingError(f"no index for {self.root}: {say('run build', root=self.root)}")
        return IndexMissingError(
            f"no index for {self.root}, and its index folder {self.index_dir} cannot be written: "
            f"{say('build elsewhere', root=self.root)}"
        )

    def _can_create(self) -> bool:
        """Whether the index folder is, or can be made, writable by this process."""
        path = self.index_dir
        while not path.exists() and path != path.parent:
            path = path.parent
        # (root may write any folder, but no folder can be made under a file)
        return path.is_dir() and os.access(path, os.W_OK)

    def not_writable(self, exc: OSError) -> IndexReadOnlyError | StorageFullError:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return StorageFullError(str(self.index_dir))
        return IndexReadOnlyError(
            f"cannot write index folder {self.index_dir} ({exc.strerror or exc}): {say('write elsewhere')}"
        )

    def ensure_dir(self) -> list[Path]:
        """Make the index folder, its missing parents and its ``.gitignore``;
        the folders this call made, outermost first: a writer that leaves no
        index in them removes them again (:meth:`_unmake`), and never a
        folder another process made (``mkdir`` tells which)."""
        missing = []
        path = self.index_dir
        while not path.is_dir() and path != path.parent:
            missing.append(path)
            path = path.parent
        made = []
        try:
            for folder in reversed(missing):
                with contextlib.suppress(FileExistsError):
                    folder.mkdir()
                    made.append(folder)
            ignore = self.index_dir / ".gitignore"
            if not ignore.exists():
                ignore.write_text("*\n", encoding="utf-8")
        except FileNotFoundError:
            raise  # a parent removed meanwhile (:meth:`_unmake`): the caller tries again
        except OSError as exc:
            raise self.not_writable(exc) from exc
        return made

    def _unmake(self, made: list[Path]) -> None:
        """Remove the folders this writer made (``made``, outermost first)
        when it leaves no index in them: a first build that failed (nothing
        to index, a model that cannot load) leaves no folder behind that
        would be taken for an index. Only under the lock, and only while the
        folder holds nothing but the lock and ``.gitignore``: a build kept to
        resume, or one that another writer published, stays. The lock file
        goes first, so a writer waiting on it takes the lock anew
        (:func:`_same_file`)."""
        if self.index_dir not in made:
            return
        with contextlib.suppress(OSError):
            if set(os.listdir(self.index_dir)) != {self.lock_path.name, ".gitignore"}:
                return
            self.lock_path.unlink()
            (self.index_dir / ".gitignore").unlink()
            for folder in reversed(made):
                folder.rmdir()  # fails, and stops, at a folder another process wrote in meanwhile

    def _generations(self) -> list[tuple[int, Path]]:
        out = []
        if self.index_dir.is_dir():
            for entry in self.index_dir.iterdir():
                name = entry.name.removesuffix(".building")
                m = re.match(_GEN, name)
                if m:
                    out.append((int(m.group(1)), entry))
        return sorted(out)

    def new_building_dir(self) -> Path:
        """A fresh ``gen-N.building`` folder numbered after every existing one."""
        gens = self._generations()
        n = (gens[-1][0] + 1) if gens else 1
        path = self.index_dir / f"gen-{n:06d}.building"
        try:
            path.mkdir()
        except OSError as exc:
            raise self.not_writable(exc) from exc
        return path

    def building_dirs(self) -> list[Path]:
        return [p for _, p in self._generations() if p.name.endswith(".building")]

    def publish(self, building: Path) -> Path:
        """Rename ``building`` to its final name and point ``current`` at it."""
        final = building.with_name(building.name.removesuffix(".building"))
        os.replace(building, final)
        _fsync_dir(self.index_dir)
        tmp_link = self.index_dir / f".current.{os.getpid()}.tmp"
        with contextlib.suppress(FileNotFoundError):
            tmp_link.unlink()
        os.symlink(final.name, tmp_link)
        os.replace(tmp_link, self.current_link)
        _fsync_dir(self.index_dir)
        return final

    def collect_garbage(self, keep: Path | None = None) -> None:
        """Delete generations that are neither current nor recently replaced.

        Stale ``.building`` folders are removed only by a writer holding the
        lock (the caller), so an in-progress build is never deleted.
        """
        current = self.current_generation()
        now = time.time()
        for _, path in self._generations():
            if path in (current, keep):
                continue
            try:
                age = now - path.stat().st_mtime
            except FileNotFoundError:
                continue
            if path.name.endswith(".building") or age > _GRACE_SECONDS:
                import shutil  # only when there is something to remove

                shutil.rmtree(path, ignore_errors=True)

    def lock_held(self) -> bool | None:
        """Whether a process holds :meth:`write_lock` now, read from the
        kernel's table of locks (Linux ``/proc/locks``), never by taking it;
        None where there is no such table."""
        try:
            st = os.stat(self.lock_path)
        except FileNotFoundError:
            return False  # no writer ever ran here
        except OSError:
            return None
        return flock_held(st.st_dev, st.st_ino)

    @contextlib.contextmanager
    def write_lock(self, wait: float = 0.0) -> Iterator[None]:
        """Hold the writer lock; raise ``IndexLockedError`` if another holds it.

        ``flock`` is released by the kernel when the holder dies, so a crashed
        indexer never leaves a stale lock behind. The folder this made is
        removed again when the writer leaves no index in it (:meth:`_unmake`).
        """
        made: list[Path] = []
        deadline = time.monotonic() + wait
        for _ in range(_LOCK_ATTEMPTS):
            try:
                made += self.ensure_dir()
                fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            except FileNotFoundError:
                continue  # removed meanwhile by the writer that made it: made anew
            except OSError as exc:
                raise self.not_writable(exc) from exc
            try:
                self._flock(fd, deadline)
            except BaseException:
                os.close(fd)
                raise
            if _same_file(fd, self.lock_path):
                break
            os.close(fd)  # the lock of a folder removed (or dropped) while this waited: taken anew
        else:
            raise self.not_writable(OSError(errno.ENOENT, "it was removed while this process waited for it"))
        try:
            # who holds it, for a second writer's message (a full disk may refuse even that)
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                os.write(fd, str(os.getpid()).encode())
            yield
        finally:
            try:
                self._unmake(made)
            finally:
                os.close(fd)

    def _flock(self, fd: int, deadline: float) -> None:
        """Take ``flock`` on ``fd``, trying until ``deadline``."""
        import fcntl  # only a writer locks: a search need not load it

        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _read_holder(fd)
                    raise IndexLockedError(
                        f"another process{holder} is writing the index in {self.index_dir}: "
                        "wait for it to finish and try again",
                        holder=holder,
                    ) from None
                time.sleep(0.05)


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``fd`` is still the file at ``path`` (a lock taken on a lock
    file that was removed meanwhile guards nothing)."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def flock_held(dev: int, ino: int, table: str = "/proc/locks") -> bool | None:
    """Whether ``/proc/locks`` lists an exclusive ``flock`` on the file
    ``(dev, ino)``; None when the table cannot be read. A line reads
    ``1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234567 0 EOF`` (device major and
    minor in hex, then the inode)."""
    try:
        with open(table, encoding="ascii", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    wanted = f"{os.major(dev):02x}:{os.minor(dev):02x}:{ino}"
    for line in lines:
        fields = line.split()
        if "->" in fields:  # a waiter, listed under the holder
            continue
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[3] == "WRITE" and fields[5] == wanted:
            return True
    return False


def _read_holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode().strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
