"""Import and name resolution: the modules of a scan, each read and parsed once, imports followed to the
project's files (relative and absolute), and module-level names followed to where they are bound."""

from __future__ import annotations

import ast
import os
import stat
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from .. import places
from .found import Scan
from .positions import _Module
from .reading import PythonSourceError, _newer_python_hint, _span_at, _undecodable, parsed
from .syntax import _MAX_HOPS, _chain, _describe, _Scope, _short


class FileAnswers:
    """The file system's answers that import resolution asks for (whether a candidate file or folder is there,
    a path's real path, a file's path as findings show it), kept between the scans of one project by its owner
    (the linter's project, for the editor's edits): a scan then makes no system call for a candidate an earlier
    scan checked.

    Only answers about paths inside `root` (both as written and once resolved) are kept: no file event tells
    the owner of a change outside it, so those are asked again by each scan. The owner calls `forget` whenever
    files may have been created or deleted; the answers are dropped too when the current folder changes (the
    paths are relative to it)."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self._below = self.root.rstrip(os.sep) + os.sep
        self.cwd = self.real_cwd = ""
        self.missing: dict[str, bool] = {}
        self.real: dict[str, str] = {}
        self.real_folders: dict[str, str] = {}
        self.shown: dict[Path, str] = {}
        self.parents: dict[str, list[Path]] = {}

    def forget(self) -> None:
        """Drop every answer kept: the next scan asks the file system again."""
        self.missing.clear()
        self.real.clear()
        self.real_folders.clear()
        self.shown.clear()
        self.parents.clear()

    def begin(self) -> None:
        """Called as a scan starts: the answers are for the current folder's relative paths."""
        try:
            cwd = os.getcwd()
        except OSError:  # (removed): nothing relative to it is kept
            cwd = ""
        if cwd != self.cwd or not cwd:
            self.forget()
            self.cwd = cwd
            self.real_cwd = os.path.realpath(cwd) if cwd else ""

    def inside(self, path: str, real: str) -> bool:
        """Whether an answer about `path` (whose real path, or its folder's, is `real`) may be kept: both
        inside the root."""
        return self.written_inside(path) and self.real_inside(real)

    def real_inside(self, real: str) -> bool:
        return real == self.root or real.startswith(self._below)

    def written_inside(self, path: str) -> bool:
        if not self.cwd:
            return False
        written = os.path.join(self.cwd, path)  # (the current folder as the system gives it: resolved)
        if ".." in written.split(os.sep):
            written = os.path.normpath(written)
        return written == self.root or written.startswith(self._below)


class _Modules:
    """The modules of a scan, parsed once each, and name resolution across them."""

    def __init__(
        self,
        read: Callable[[str], str],
        unsaved: Collection[str] | None = None,
        answers: FileAnswers | None = None,
        links: places.LinkedFolders | None = None,
    ) -> None:
        self.read = read
        self.links = links  # the project's links to folders: where a relative import going up out of one starts
        # the names of the files `read` gives a text for that may not be on disk (None: any file may be such)
        self.unsaved = None if unsaved is None else {os.path.basename(path) for path in unsaved}
        self.modules: dict[str, _Module] = {}
        self.result = Scan()
        self.unreadable: set[str] = set()
        # a scan's paths resolved once each (every import tries up to 24 candidate files), starting from those
        # an earlier scan of the project kept (`answers`: those inside the root go there too)
        self.answers = answers
        self._cwd: str | None = None  # the current folder's real path, once asked
        if answers is not None:
            answers.begin()
        self._real: dict[str, str] = {} if answers is None else dict(answers.real)
        self._real_folders: dict[str, str] = {} if answers is None else dict(answers.real_folders)
        self._shown: dict[Path, str] = {} if answers is None else dict(answers.shown)
        self._parents: dict[str, list[Path]] = {} if answers is None else dict(answers.parents)
        # candidate files and folders: known not to be there
        self._missing: dict[str, bool] = {} if answers is None else dict(answers.missing)
        self._listed: set[str] = set()  # the candidate files not there, listed in the result's `unread`
        self._found: dict[tuple[str, str, int], _Module | None] = {}  # (importer's folder, name, level) -> module

    def realpath(self, path: str) -> str:
        """`os.path.realpath(path)`, computed once per path in a scan, and from its folder's (resolved once
        per folder): a system call for the file itself only, and the whole walk again only for a link."""
        real = self._real.get(path)
        if real is None:
            real = self._real[path] = self._resolved(path)
            if self.answers is not None and self.answers.inside(path, real):
                self.answers.real[path] = real
        return real

    def _real_folder(self, folder: str) -> str:
        """`os.path.realpath(folder)`, once per folder, from its parent's (one `lstat` a folder)."""
        real = self._real_folders.get(folder)
        if real is None:
            real = places.real_folder(folder, self._real_folders)
            if self.answers is not None and self.answers.inside(folder or os.curdir, real):
                self.answers.real_folders[folder] = real
        return real

    def _resolved(self, path: str) -> str:
        """A file's real path, from its folder's."""
        folder, name = os.path.split(path)
        if os.name != "posix" or name in ("", ".", ".."):
            return os.path.realpath(path or os.curdir)
        full = os.path.join(self._real_folder(folder), name)
        try:
            link = stat.S_ISLNK(os.lstat(full).st_mode)
        except OSError:  # not there (or not reachable): realpath keeps such a last part as it is
            return full
        return os.path.realpath(full) if link else full

    def _shown_as(self, candidate: Path) -> str:
        """`places.shown(candidate)` (relative to the current folder when under it, else its real path), from the
        real paths worked out once per folder."""
        if os.name != "posix":
            return places.shown(candidate)
        real = self.realpath(str(candidate))
        cwd = self._real_cwd()
        below = cwd.rstrip(os.sep) + os.sep
        shown = "." if real == cwd else real[len(below) :] if real.startswith(below) else real
        kept = self.answers is not None and self.answers.inside(str(candidate), real)
        if shown not in self._real:
            self._real[shown] = real  # (a real path relative to the real current folder: its own real path)
            if kept:
                self.answers.real[shown] = real  # type: ignore[union-attr]
        if kept:
            self.answers.shown[candidate] = shown  # type: ignore[union-attr]
        return shown

    def _real_cwd(self) -> str:
        if self._cwd is None:
            kept_cwd = self.answers.real_cwd if self.answers is not None else ""
            self._cwd = kept_cwd or os.path.realpath(os.getcwd())
        return self._cwd

    def _not_there(self, files: Sequence[str | None]) -> None:
        """Record the candidate `files` found not there in `Scan.unread`: what the scan gives depends on their
        absence (the lint cache checks each again), as it does on a file that was read."""
        for file in files:
            if file is not None and file not in self._listed:
                self._listed.add(file)
                self.result.unread.append(file)

    def _absent(self, path: str, files: Sequence[str | None]) -> bool:
        """Whether `path` is certainly not there (nothing of that name, or a part of it is no folder), so
        neither are the `files` (it or in it): one `stat` (no file opened), its answer kept for the scan.
        Any other failure is not certain; nor is any file named as one `read` may give without a file."""
        if self.unsaved is None or any(file and os.path.basename(file) in self.unsaved for file in files):
            return False
        missing = self._missing.get(path)
        if missing is None:
            try:
                os.stat(path)
                missing = False
            except (FileNotFoundError, NotADirectoryError):
                missing = True
            except (OSError, ValueError):
                missing = False
            self._missing[path] = missing
            answers = self.answers  # (the folder's real path only for a path inside the root as written)
            if (
                answers is not None
                and answers.written_inside(path)
                and answers.real_inside(self._real_folder(os.path.dirname(path)))
            ):
                answers.missing[path] = missing
        return missing

    # -- loading

    def load(self, path: str, *, linted: bool) -> _Module:
        key = self.realpath(path)
        module = self.modules.get(key)
        if module is not None:
            module.linted = module.linted or linted
            return module
        try:
            text = self.read(path)
        except UnicodeDecodeError as exc:  # Python itself refuses such a file (a SyntaxError)
            raise _undecodable(path, exc) from None
        try:
            tree = parsed(text, path)
        except SyntaxError as exc:
            span = _span_at(text, exc.lineno, exc.offset)
            raise PythonSourceError(
                f"not valid Python: {exc.msg}", path=path, source=text, span=span, help=_newer_python_hint(exc)
            ) from None
        except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
            span = _span_at(text, None, None)
            raise PythonSourceError(f"cannot be parsed as Python: {exc}", path=path, source=text, span=span) from None
        module = _Module(path, key, text, tree, linted=linted)
        self.modules[key] = module
        self.result.sources[path] = text
        return module

    def find_module(self, importer: _Module, name: str, level: int) -> _Module | None:
        """The module `name` imported from `importer` (`level` dots), if it is a file we can read. Worked
        out once per folder of importers (the candidates depend on the folder only), and kept for the
        scan: a candidate read or refused once is so again, so the answer stays the same (until a text
        file an instruction reads becomes a module: see `_Project.text_file`)."""
        folder = os.path.dirname(importer.path if level else self.realpath(importer.path))
        memo = (folder, name, level)
        if memo in self._found:
            return self._found[memo]
        found = self._found[memo] = self._find_module(importer, name, level)
        return found

    def _find_module(self, importer: _Module, name: str, level: int) -> _Module | None:
        parts = [p for p in name.split(".") if p]
        if level:
            folder = os.path.dirname(importer.path)
            base = Path(places.up(folder, level - 1))
            bases = [base]
            if self.links and level > 1:  # imported through a link too: from the folder holding it
                real = self._real_folder(folder)
                linked = self.links.bases(real, level)
                if linked and os.path.isabs(importer.path):  # (named as the importer is: absolute)
                    linked = [os.path.abspath(start) for start in linked]
                # the link's side first: a module is scanned once, by its real path, for all its importers, and a
                # folder linked into an app is there to be imported through the link (a package importing it by its
                # real path too is then read as the link's: see docs/linting.md)
                bases = [*map(Path, linked), base]
        else:
            bases = self._parents.get(importer.path) or []
            if not bases:
                real = self.realpath(importer.path)
                bases = self._parents[importer.path] = list(Path(real).parents)[:12]
                if self.answers is not None and self.answers.inside(importer.path, real):
                    self.answers.parents[importer.path] = bases
        for base in bases:
            # Most candidates are not there (`google/adk/agents.py` above each folder of the importer's): each
            # is first looked for with one `stat` of its folder, then of itself, before its names are worked out.
            folder = os.path.join(str(base), *parts)
            files = (folder + ".py" if parts else None, os.path.join(folder, "__init__.py"))
            known = self._real.get(files[0]) if files[0] is not None else None
            if known is not None and known in self.modules:  # a module already read, by this very path: no `stat`
                return self.modules[known]
            if parts and self._absent(os.path.dirname(folder), files):
                self._not_there(files)
                continue
            target: Path | None = None
            for file, made in zip(files, (".py", "__init__.py"), strict=True):
                if file is None:
                    continue
                if self._absent(file, (file,)):
                    self._not_there((file,))
                    continue
                target = base.joinpath(*parts) if target is None else target
                candidate = target.with_suffix(".py") if made == ".py" else target / "__init__.py"
                if level:  # shown as written, unless a linked folder is on the way (as the run lists it)
                    shown = str(candidate)
                    written = os.path.join(self._real_cwd(), shown)
                    if ".." in shown:
                        written = os.path.normpath(written)
                    if self.realpath(shown) != written:
                        real = self._shown.get(candidate) or ""
                        if not real:
                            real = self._shown[candidate] = self._shown_as(candidate)
                        if not os.path.isabs(real):  # (outside the current folder: as named, as the run lists it)
                            shown = real
                else:
                    shown = self._shown.get(candidate) or ""
                    if not shown:
                        shown = self._shown[candidate] = self._shown_as(candidate)
                key = self.realpath(shown)
                if key in self.modules:
                    return self.modules[key]
                if key in self.unreadable:
                    continue
                try:
                    return self.load(shown, linted=False)
                except Exception:  # a module that cannot be read or parsed is not followed
                    self.unreadable.add(key)
        return None

    # -- qualified names of callees

    def qualify(self, module: _Module, expr: ast.expr) -> str | None:
        """The dotted origin of a name as imported (`google.adk.agents.LlmAgent`), or None."""
        names = _chain(expr)
        if names is None:
            return None
        first, *rest = names
        binding = module.bindings.get(first)
        if not isinstance(binding, ast.ImportFrom | ast.Import):
            return None
        alias = next(a for a in binding.names if (a.asname or a.name.split(".")[0]) == first)
        if isinstance(binding, ast.ImportFrom):
            base = "." * binding.level + (binding.module or "") + "." + alias.name
        else:
            base = alias.name if alias.asname else alias.name.split(".")[0]
        return ".".join([base, *rest])

    # -- following names

    def imported(self, module: _Module, binding: ast.ImportFrom, name: str) -> tuple[_Module, str] | None:
        """Where `name`, bound in `module` by `from ... import`, is defined: the module (if it is
        a file we can read, holding such a name) and the name there."""
        alias = next(a for a in binding.names if (a.asname or a.name) == name)
        source = self.find_module(module, binding.module or "", binding.level)
        if source is None or alias.name not in source.bindings:
            return None
        return source, alias.name

    def follow(self, module: _Module, name: str) -> tuple[_Module, str] | str:
        """Where the module-level `name` of `module` is bound, `from x import name` followed (re-exports
        too) as far as the project's files go; a cycle of such imports is a reason (a str) instead."""
        seen: set[tuple[str, str]] = set()
        chain: list[str] = []
        while isinstance(binding := module.bindings.get(name), ast.ImportFrom):
            chain.append(module.path)
            if (module.key, name) in seen:
                cycle = " -> ".join(chain[chain.index(module.path) :])
                return f"{name!r} is imported in a cycle ({cycle}): it is bound nowhere"
            if len(seen) >= _MAX_HOPS:
                return f"{name!r} is imported through more than {_MAX_HOPS} modules: not followed"
            seen.add((module.key, name))
            found = self.imported(module, binding, name)
            if found is None:
                break
            module, name = found
        return module, name

    def module_named(self, module: _Module, names: list[str] | None, scope: _Scope | None) -> _Module | None:
        """The module a name or a dotted chain of names stands for: `prompt` after
        `from . import prompt`, `p` after `import pkg.prompt as p`, `pkg.prompt` after
        `import pkg.prompt`."""
        if not names or (scope is not None and scope.binds(names[0])):
            return None
        name, rest = names[0], names[1:]
        binding = module.bindings.get(name)
        if isinstance(binding, ast.ImportFrom):
            alias = next(a for a in binding.names if (a.asname or a.name) == name)
            dotted = ".".join([binding.module or "", alias.name, *rest]).strip(".")
            return self.find_module(module, dotted, binding.level)
        if isinstance(binding, ast.Import):
            alias = next(a for a in binding.names if (a.asname or a.name.split(".")[0]) == name)
            return self.find_module(module, ".".join([alias.name if alias.asname else name, *rest]), 0)
        return None

    def class_named(self, module: _Module, expr: ast.expr) -> tuple[_Module, ast.ClassDef] | str:
        """The module-level class `expr` names (`TripState`, `state.TripState`, imports followed), or why not."""
        if isinstance(expr, ast.Attribute):
            target = self.module_named(module, _chain(expr.value), None)
            if target is None:
                return f"{_short(expr)!r} is not a module of the project's"
            module, name = target, expr.attr
        elif isinstance(expr, ast.Name):
            name = expr.id
        else:
            return f"{_describe(expr)} is not a class name"
        followed = self.follow(module, name)
        if isinstance(followed, str):
            return followed
        module, name = followed
        binding = module.bindings.get(name)
        if isinstance(binding, ast.ClassDef):
            return module, binding
        if isinstance(binding, ast.ImportFrom | ast.Import):
            return f"{name!r} is imported from a module outside the linted files"
        return f"{name!r} is not a class defined at module level in {module.path}"

    def function_called(
        self, module: _Module, func: ast.expr, scope: _Scope | None
    ) -> tuple[_Module, ast.FunctionDef | ast.AsyncFunctionDef] | None:
        """The module-level function `func` names (`prompts.root` or `root`, imports followed), if any."""
        if isinstance(func, ast.Attribute):
            target = self.module_named(module, _chain(func.value), scope)
            if target is None:
                return None
            module, name = target, func.attr
        elif isinstance(func, ast.Name) and not (scope is not None and scope.binds(func.id)):
            name = func.id
        else:
            return None
        followed = self.follow(module, name)  # re-exports: from .prompts import root, in a package's __init__.py
        if isinstance(followed, str):
            return None
        module, name = followed
        binding = module.bindings.get(name)
        return (module, binding) if isinstance(binding, ast.FunctionDef | ast.AsyncFunctionDef) else None
