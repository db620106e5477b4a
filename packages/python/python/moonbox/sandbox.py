"""Sandboxes and sessions: where scripts run."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from . import _native
from .capabilities import Capability, capability_list
from .errors import ComponentError, ConfigError, MoonboxError
from .limits import Limits
from .report import Json, LogEvent, Report

# Imported by the async methods that use it: most of `import moonbox`'s
# time otherwise.
if TYPE_CHECKING:
    import asyncio

#: Receives the script's output bytes as they are written.
OutputSink = Callable[[bytes], object]
#: Receives each log event as the script makes it.
LogSink = Callable[[LogEvent], object]

#: The chunk name evals use unless told otherwise: messages read
#: ``main.lua:3: ...``.
DEFAULT_CHUNK_NAME: str = _native.DEFAULT_CHUNK_NAME


@dataclass(frozen=True)
class Determinism:
    """Deterministic mode: what ``os.time()`` returns and the seed of
    ``math.random``. The defaults are the Rust crate's: 2024-01-01T00:00:00Z
    and seed 0. Fuel is metered in this mode."""

    clock: int = 1_704_067_200
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("clock", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"deterministic {name} must be an integer, not {type(value).__name__}")
            if not -(1 << 63) <= value < 1 << 63:
                raise ConfigError(f"deterministic {name} {value} does not fit in 64 bits")


def _error(e: Exception, context: str = "") -> MoonboxError:
    """The native module's error as the package's: a ``ValueError`` (what
    the crate refuses) is a :class:`ConfigError`, anything else a
    :class:`ComponentError`, with ``context`` before its message."""
    if isinstance(e, MoonboxError):
        return e
    if isinstance(e, ValueError):
        return ConfigError(str(e))
    return ComponentError(f"{context}{e}")


def _source(code: str | bytes) -> bytes:
    if isinstance(code, str):
        return code.encode("utf-8", errors="surrogateescape")
    if isinstance(code, (bytes, bytearray, memoryview)):
        return bytes(code)
    raise ConfigError(f"code must be str or bytes, not {type(code).__name__}")


#: A mounted file's contents: text (written as UTF-8) or bytes.
FileContents = str | bytes

#: An eval's ``args``, ``files`` and ``stdin`` as the native module takes
#: them.
_Extra = tuple[list[str] | None, list[tuple[str, bytes]], bytes]


def _text(value: str, what: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError(f"{what} is not valid Unicode (it holds lone surrogates)") from None
    return value


def _contents(value: object, what: str) -> bytes:
    if isinstance(value, str):
        try:
            return value.encode("utf-8", errors="surrogateescape")
        except UnicodeEncodeError:
            raise ConfigError(f"{what} is not valid Unicode (it holds lone surrogates)") from None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise ConfigError(f"{what} must be str or bytes, not {type(value).__name__}")


def _extra(
    args: Sequence[str] | None, files: Mapping[str, FileContents] | None, stdin: str | bytes | None
) -> _Extra | None:
    """An eval's ``args``, ``files`` and ``stdin``, their types checked; the
    crate refuses what is past its bounds with an ``invalid_value`` report."""
    if args is None and files is None and stdin is None:
        return None
    wit_args: list[str] | None = None
    if args is not None:
        if isinstance(args, (str, bytes)):
            raise ConfigError("args must be a sequence of str, not a single string")
        wit_args = []
        for arg in args:
            if not isinstance(arg, str):
                raise ConfigError(f"args: {arg!r} is not a str")
            wit_args.append(_text(arg, "an argument"))
    mounted: list[tuple[str, bytes]] = []
    if files is not None:
        if not isinstance(files, Mapping):
            raise ConfigError(f"files must be a mapping of name to str or bytes, not {type(files).__name__}")
        for name, contents in files.items():
            if not isinstance(name, str):
                raise ConfigError(f"file name {name!r} is not a str")
            mounted.append((_text(name, f"file name {name!r}"), _contents(contents, f"file {name!r}")))
    return wit_args, mounted, b"" if stdin is None else _contents(stdin, "stdin")


def _log_sink(on_log: LogSink | None) -> Callable[[dict[str, Any]], object] | None:
    if on_log is None:
        return None
    return lambda event: on_log(LogEvent._from(event))


class Sandbox:
    """A configuration scripts run under: limits, capabilities, modules and
    the names allowed back. Cheap to share between threads; each eval or
    session gets its own wasm instance. Evals release the GIL while Lua
    runs.

    >>> from moonbox import Sandbox
    >>> sandbox = Sandbox(capabilities={"greet": lambda name: f"hello, {name}"})
    >>> report = sandbox.eval('print("hi") return greet("Ada"), 1.0')
    >>> report.values, report.output
    (['hello, Ada', 1.0], 'hi\\n')

    The constructor starts one session to prove the configuration, so a bad
    module, capability name or ``allow`` entry is a :class:`ConfigError`
    here, not on the first eval.
    """

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        capabilities: Mapping[str, Callable[..., Any]] | Sequence[Capability] | None = None,
        allow: Iterable[str] = (),
        modules: Mapping[str, str | bytes] | None = None,
        deterministic: Determinism | bool | None = None,
        chunk_name: str = DEFAULT_CHUNK_NAME,
    ) -> None:
        if limits is None:
            limits = Limits()
        if not isinstance(limits, Limits):
            raise ConfigError(f"limits must be a moonbox.Limits, not {type(limits).__name__}")
        self.limits = limits
        self.capabilities = capability_list(capabilities)
        self.allow = tuple(allow)
        for name in self.allow:
            if not isinstance(name, str):
                raise ConfigError(f"allow: {name!r} is not a name")
        self.modules: dict[str, bytes] = {}
        for name, source in (modules or {}).items():
            if not isinstance(name, str) or not isinstance(source, (str, bytes)):
                raise ConfigError(f"module {name!r}: the name must be a str and the source str or bytes")
            self.modules[name] = source.encode("utf-8") if isinstance(source, str) else bytes(source)
        if deterministic is True:
            deterministic = Determinism()
        elif deterministic is False:
            deterministic = None
        if deterministic is not None and not isinstance(deterministic, Determinism):
            raise ConfigError("deterministic must be a bool or a moonbox.Determinism")
        self.deterministic: Determinism | None = deterministic
        if not isinstance(chunk_name, str):
            raise ConfigError(f"chunk_name must be a str, not {type(chunk_name).__name__}")
        self.chunk_name = chunk_name
        try:
            self._native = _native.NativeSandbox(
                limits._crate(),
                [c._spec(limits.timeout) for c in self.capabilities],
                list(self.allow),
                list(self.modules.items()),
                None if deterministic is None else (deterministic.clock, deterministic.seed),
            )
        except (ValueError, RuntimeError) as e:
            raise _error(e) from None

    def session(self) -> Session:
        """A session: globals persist from one eval to the next. Use it as a
        context manager, or call :meth:`Session.close`."""
        return Session(self)

    def _chunk(self, chunk_name: str | None) -> str:
        chunk = self.chunk_name if chunk_name is None else chunk_name
        if not isinstance(chunk, str):
            raise ConfigError(f"chunk_name must be a str, not {type(chunk).__name__}")
        return chunk

    def eval(
        self,
        code: str | bytes,
        *,
        inputs: Mapping[str, Json] | None = None,
        chunk_name: str | None = None,
        args: Sequence[str] | None = None,
        files: Mapping[str, FileContents] | None = None,
        stdin: str | bytes | None = None,
        on_output: OutputSink | None = None,
        on_log: LogSink | None = None,
    ) -> Report:
        """Runs ``code`` in a fresh session and returns its report. A
        script's failure is in the report; only bad arguments raise.

        ``args`` become the global ``arg`` (the chunk name at index 0, these
        at 1..n) and the chunk's ``...``, as ``lua5.4 script.lua a b`` gives
        them; ``files`` (name to contents) are mounted read-only for
        ``io.open``, ``io.lines``, ``loadfile``, ``dofile`` and ``require``;
        ``stdin`` is what ``io.read`` reads. The files the script wrote are
        the report's :attr:`~moonbox.Report.files`.

        ``on_output`` receives the script's bytes as it writes them, and
        ``on_log`` each log event, on the eval's threads; the report has
        them all the same. A sink that raises is not called again (its
        exception goes to :func:`sys.unraisablehook`)."""
        extra = _extra(args, files, stdin)
        return self._eval(code, inputs, chunk_name, extra, on_output, on_log, None, None)

    def _eval(
        self,
        code: str | bytes,
        inputs: Mapping[str, Json] | None,
        chunk_name: str | None,
        extra: _Extra | None,
        on_output: OutputSink | None,
        on_log: LogSink | None,
        cancel: _native.CancelToken | None,
        event_loop: asyncio.AbstractEventLoop | None,
    ) -> Report:
        try:
            native = self._native.eval(
                _source(code),
                inputs,
                self._chunk(chunk_name),
                on_output,
                _log_sink(on_log),
                cancel,
                event_loop,
                extra,
            )
        except (ValueError, RuntimeError) as e:
            raise _error(e) from None
        return Report(native)

    async def eval_async(
        self,
        code: str | bytes,
        *,
        inputs: Mapping[str, Json] | None = None,
        chunk_name: str | None = None,
        args: Sequence[str] | None = None,
        files: Mapping[str, FileContents] | None = None,
        stdin: str | bytes | None = None,
        on_output: OutputSink | None = None,
        on_log: LogSink | None = None,
    ) -> Report:
        """:meth:`eval` without blocking the event loop: the guest runs on a
        thread, and coroutine capabilities run on this loop. Cancelling the
        awaiting task stops the guest (the eval ends with ``cancelled``)
        before the cancellation propagates."""
        import asyncio

        extra = _extra(args, files, stdin)
        loop = asyncio.get_running_loop()
        cancel = _native.CancelToken()
        future = loop.run_in_executor(
            None, self._eval, code, inputs, chunk_name, extra, on_output, on_log, cancel, loop
        )
        return await _cancelling(future, cancel.cancel)


async def _cancelling(future: asyncio.Future[Report], cancel: Callable[[], None]) -> Report:
    """Awaits an eval running on a thread; if the awaiting task is
    cancelled, stops the guest and waits for it to end before re-raising."""
    import asyncio

    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        cancel()
        try:
            await future
        except Exception:  # noqa: BLE001 - the eval's own failure no longer matters
            pass
        raise


class Session:
    """Lua state that persists across evals, in a wasm instance of its own.

    A limit the guest enforces (instructions, memory, output...) leaves the
    session usable. The outer wall (the deadline, fuel, a trap) stops the
    guest mid-call, so the session is then *poisoned*: each later eval
    reports ``session_poisoned``. Evals of one session run one at a time.
    """

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        try:
            self._native: _native.NativeSession | None = sandbox._native.session()
        except (ValueError, RuntimeError) as e:
            raise _error(e, "cannot start a session: ") from None

    def _session(self) -> _native.NativeSession:
        if self._native is None:
            raise ConfigError("this session is closed")
        return self._native

    @property
    def is_poisoned(self) -> bool:
        """Whether the outer wall stopped an eval, so this session can no
        longer run code."""
        return self._native is not None and self._native.poisoned

    def eval(
        self,
        code: str | bytes,
        *,
        inputs: Mapping[str, Json] | None = None,
        chunk_name: str | None = None,
        args: Sequence[str] | None = None,
        files: Mapping[str, FileContents] | None = None,
        stdin: str | bytes | None = None,
        on_output: OutputSink | None = None,
        on_log: LogSink | None = None,
    ) -> Report:
        """Runs ``code`` in this session and returns its report. Inputs
        become globals before it runs; ``args``, ``files``, ``stdin`` and
        the sinks are as in :meth:`Sandbox.eval`. Mounted files, and the
        files the script writes, stay in the session for its later evals."""
        extra = _extra(args, files, stdin)
        return self._eval(code, inputs, chunk_name, extra, on_output, on_log, None)

    def _eval(
        self,
        code: str | bytes,
        inputs: Mapping[str, Json] | None,
        chunk_name: str | None,
        extra: _Extra | None,
        on_output: OutputSink | None,
        on_log: LogSink | None,
        event_loop: asyncio.AbstractEventLoop | None,
    ) -> Report:
        session = self._session()
        try:
            native = session.eval(
                _source(code),
                inputs,
                self.sandbox._chunk(chunk_name),
                on_output,
                _log_sink(on_log),
                event_loop,
                extra,
            )
        except (ValueError, RuntimeError) as e:
            raise _error(e) from None
        return Report(native)

    async def eval_async(
        self,
        code: str | bytes,
        *,
        inputs: Mapping[str, Json] | None = None,
        chunk_name: str | None = None,
        args: Sequence[str] | None = None,
        files: Mapping[str, FileContents] | None = None,
        stdin: str | bytes | None = None,
        on_output: OutputSink | None = None,
        on_log: LogSink | None = None,
    ) -> Report:
        """:meth:`eval` without blocking the event loop. Cancelling the
        awaiting task stops the guest; the session's later evals then
        report ``cancelled`` too, so start a new session."""
        import asyncio

        extra = _extra(args, files, stdin)
        session = self._session()
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(None, self._eval, code, inputs, chunk_name, extra, on_output, on_log, loop)
        return await _cancelling(future, session.cancel)

    def cancel(self) -> None:
        """Stops the running eval, from any thread; it ends with
        ``cancelled``, and so does every later eval of this session."""
        self._session().cancel()

    def close(self) -> None:
        """Frees the session's instance. Closing twice is harmless."""
        if self._native is not None:
            self._native.close()
            self._native = None

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
