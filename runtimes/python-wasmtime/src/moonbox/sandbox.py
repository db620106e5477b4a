"""Sandboxes and sessions: where scripts run."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import wasmtime
from wasmtime import component as cm

from . import _guest
from ._eval import EvalContext
from .capabilities import Capability, capability_list
from . import _contract
from .errors import ComponentError, ConfigError
from .limits import Limits
from .report import LogEvent, LuaError, Report, Stats, one_line
from .values import I64_MAX, I64_MIN, Json, to_wit

#: Receives the script's output bytes as they are written.
OutputSink = Callable[[bytes], object]
#: Receives each log event as the script makes it.
LogSink = Callable[[LogEvent], object]

#: The chunk name evals use unless told otherwise: messages read
#: ``main.lua:3: ...``.
DEFAULT_CHUNK_NAME = _contract.DEFAULT_CHUNK_NAME

#: The most arguments an eval takes (wit/contract.toml's ``max-args``).
MAX_ARGS = _contract.MAX_ARGS

#: A file's contents: text (written as UTF-8) or bytes.
FileContents = str | bytes


@dataclass(frozen=True)
class Determinism:
    """Deterministic mode: what ``os.time()`` returns and the seed of
    ``math.random``. The defaults are the Rust crate's: 2024-01-01T00:00:00Z
    and seed 0."""

    clock: int = 1_704_067_200
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("clock", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"deterministic {name} must be an integer, not {type(value).__name__}")
            if not I64_MIN <= value <= I64_MAX:
                raise ConfigError(f"deterministic {name} {value} does not fit in 64 bits")


def _bytes(value: object, what: str) -> bytes:
    if isinstance(value, str):
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError:
            raise ConfigError(f"{what} is not valid Unicode (it holds lone surrogates)") from None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise ConfigError(f"{what} must be str or bytes, not {type(value).__name__}")


def _eval_args(args: Iterable[str] | None) -> list[str] | None:
    if args is None:
        return None
    if isinstance(args, (str, bytes)):
        raise ConfigError("args must be a sequence of str, not a single string")
    out = []
    for arg in args:
        if not isinstance(arg, str):
            raise ConfigError(f"args: {arg!r} is not a str")
        _bytes(arg, "an argument")
        out.append(arg)
    return out


def _eval_files(files: Mapping[str, FileContents] | None) -> list[tuple[str, bytes]]:
    if files is None:
        return []
    if not isinstance(files, Mapping):
        raise ConfigError(f"files must be a mapping of name to str or bytes, not {type(files).__name__}")
    out = []
    for name, contents in files.items():
        if not isinstance(name, str):
            raise ConfigError(f"file name {name!r} is not a str")
        _bytes(name, f"file name {name!r}")
        out.append((name, _bytes(contents, f"file {name!r}")))
    return out


def _check_files(args: list[str] | None, files: list[tuple[str, bytes]], stdin: bytes, max_memory: int) -> str | None:
    """Why the arguments, files or standard input cannot cross, as the Rust
    crate words it (``script::check_files``), or None."""
    if args is not None and len(args) > MAX_ARGS:
        return f"{len(args)} arguments are more than the {MAX_ARGS} an eval takes"
    if len(files) > _contract.MAX_FILES:
        return f"{len(files)} files are more than the {_contract.MAX_FILES} a session holds"
    max_name = _contract.MAX_FILE_NAME_BYTES
    total = len(stdin)
    for name, contents in files:
        if not name or len(name.encode("utf-8")) > max_name or "\0" in name:
            return f"file name '{one_line(name[:80])}' is empty, longer than {max_name} bytes or contains NUL"
        total += len(contents)
    if total > max_memory:
        return f"the files and stdin take {total} bytes, more than max-memory-bytes ({max_memory})"
    return None


def _record(**fields: Any) -> cm.Record:
    value = cm.Record()
    for name, field in fields.items():
        setattr(value, name.replace("_", "-"), field)
    return value


class _Request:
    """An eval's ``args``, ``files`` and ``stdin``, checked for type."""

    __slots__ = ("args", "files", "stdin")

    def __init__(
        self,
        args: Sequence[str] | None,
        files: Mapping[str, FileContents] | None,
        stdin: str | bytes | None,
    ) -> None:
        self.args = _eval_args(args)
        self.files = _eval_files(files)
        self.stdin = b"" if stdin is None else _bytes(stdin, "stdin")


class Sandbox:
    """A configuration scripts run under: limits, capabilities, modules and
    the names allowed back. Cheap to share between threads; each eval or
    session gets its own wasm instance.

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
        self._by_name = {c.name: c for c in self.capabilities}
        self._guest = _guest.guest()
        # The config as the guest takes it, built once: every session
        # (every fresh eval) lowers the same record.
        self._config = self._build_config()
        # One session proves the config, as the Rust crate's build does.
        Session(self).close()

    def _build_config(self) -> cm.Record:
        lim = self.limits
        det = self.deterministic
        return _record(
            limits=_record(
                max_instructions=lim.max_instructions,
                max_call_depth=lim.max_call_depth,
                max_string_bytes=lim.max_string_bytes,
                max_memory_bytes=lim.max_memory_bytes,
                max_output_bytes=lim.max_output_bytes,
                max_value_depth=lim.max_value_depth,
            ),
            allow=list(self.allow),
            modules=[_record(name=n, source=s) for n, s in self.modules.items()],
            capabilities=[
                _record(
                    name=c.name,
                    min_args=c.min_args,
                    max_args=c.max_args,
                )
                for c in self.capabilities
            ],
            deterministic=None if det is None else _record(clock=det.clock, seed=det.seed),
        )

    def session(self) -> Session:
        """A session: globals persist from one eval to the next. Use it as a
        context manager, or call :meth:`Session.close`."""
        return Session(self)

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

        ``args`` become the global ``arg`` (the chunk name at 0) and the
        chunk's ``...``; ``files`` (name to contents) are mounted read-only;
        ``stdin`` is what ``io.read`` reads. The files the script wrote are
        the report's ``files``.

        ``on_output`` receives the script's bytes as it writes them, and
        ``on_log`` each log event, on the eval's thread; the report has them
        all the same. A sink that raises is not called again."""
        with self.session() as session:
            return session.eval(
                code,
                inputs=inputs,
                chunk_name=chunk_name,
                args=args,
                files=files,
                stdin=stdin,
                on_output=on_output,
                on_log=on_log,
            )

    async def eval_async(
        self,
        code: str | bytes,
        *,
        inputs: Mapping[str, Json] | None = None,
        chunk_name: str | None = None,
        args: Sequence[str] | None = None,
        files: Mapping[str, FileContents] | None = None,
        stdin: str | bytes | None = None,
    ) -> Report:
        """:meth:`eval` without blocking the event loop: the guest runs on a
        thread, and coroutine capabilities run on this loop."""
        loop = asyncio.get_running_loop()
        request = _Request(args, files, stdin)

        def run() -> Report:
            with self.session() as session:
                return session._eval(code, inputs, chunk_name, request, loop, None, None)

        return await asyncio.to_thread(run)


class Session:
    """Lua state that persists across evals, in a wasm instance of its own.

    A limit the guest enforces (instructions, memory, output...) leaves the
    session usable. The outer wall (the deadline, fuel, a trap) stops the
    guest mid-call, so the session is then *poisoned*: each later eval
    reports ``session_poisoned``. Not for use from two threads at once; a
    lock serialises evals.
    """

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self._guest = sandbox._guest
        self._lock = threading.Lock()
        self._poisoned: str | None = None
        self._handle: cm.ResourceAny | None = None
        limits = sandbox.limits
        self._store = wasmtime.Store(self._guest.engine)
        # An empty WasiConfig grants nothing: no directories, environment,
        # arguments or inherited stdio.
        self._store.set_wasi(wasmtime.WasiConfig())
        self._store.set_limits(memory_size=limits.effective_max_wasm_memory_bytes)
        self._store.set_fuel(limits.effective_fuel)
        try:
            with self._guest.running(self._store, _start_seconds(limits)):
                instance = self._guest.linker.instantiate(self._store, self._guest.component)
                self._create = instance.get_func(self._store, self._guest.create_index)
                self._eval_func = instance.get_func(self._store, self._guest.eval_index)
                created = self._call(self._create, sandbox._config)
        except wasmtime.WasmtimeError as e:
            # Starting runs only the guest's own code on a bounded config,
            # under a deadline of its own: a trap here is the host's fault.
            raise ComponentError(f"cannot start a session: {_trap_message(e)}") from None
        if isinstance(created, str):
            raise ConfigError(created)
        self._handle = created

    def _call(self, func: cm.Func | None, *args: Any) -> Any:
        if func is None:
            raise ConfigError("the component's export is not a function")
        result = func(self._store, *args)
        func.post_return(self._store)
        return result

    @property
    def is_poisoned(self) -> bool:
        """Whether the outer wall stopped an eval, so this session can no
        longer run code."""
        return self._poisoned is not None

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
        become globals before it runs; ``args``, ``files``, ``stdin`` and the
        sinks are as in :meth:`Sandbox.eval`. Mounted files stay in the
        session for its later evals."""
        return self._eval(code, inputs, chunk_name, _Request(args, files, stdin), None, on_output, on_log)

    async def eval_async(
        self,
        code: str | bytes,
        *,
        inputs: Mapping[str, Json] | None = None,
        chunk_name: str | None = None,
        args: Sequence[str] | None = None,
        files: Mapping[str, FileContents] | None = None,
        stdin: str | bytes | None = None,
    ) -> Report:
        """:meth:`eval` without blocking the event loop."""
        loop = asyncio.get_running_loop()
        request = _Request(args, files, stdin)
        return await asyncio.to_thread(self._eval, code, inputs, chunk_name, request, loop, None, None)

    def _eval(
        self,
        code: str | bytes,
        inputs: Mapping[str, Json] | None,
        chunk_name: str | None,
        extra: _Request,
        loop: asyncio.AbstractEventLoop | None,
        on_output: OutputSink | None,
        on_log: LogSink | None,
    ) -> Report:
        chunk = self.sandbox.chunk_name if chunk_name is None else chunk_name
        if not isinstance(chunk, str):
            raise ConfigError(f"chunk_name must be a str, not {type(chunk).__name__}")
        if isinstance(code, str):
            source = code.encode("utf-8")
        elif isinstance(code, (bytes, bytearray, memoryview)):
            source = bytes(code)
        else:
            raise ConfigError(f"code must be str or bytes, not {type(code).__name__}")
        wit_inputs = []
        for name, value in (inputs or {}).items():
            if not isinstance(name, str):
                raise ConfigError(f"input name {name!r} is not a str")
            wit_inputs.append(_record(name=name, value=to_wit(value, f"input {name}")))
        request = _record(
            code=source,
            chunk_name=chunk,
            inputs=wit_inputs,
            args=extra.args,
            files=[_record(name=name, bytes=contents) for name, contents in extra.files],
            stdin=extra.stdin,
        )

        with self._lock:
            if self._handle is None:
                raise ConfigError("this session is closed")
            if self._poisoned is not None:
                return _host_stop(
                    "session_poisoned",
                    f"this session can no longer run code: {self._poisoned}; start a new session",
                    chunk,
                    None,
                    Stats(),
                )
            why = _check_files(extra.args, extra.files, extra.stdin, self.sandbox.limits.max_memory_bytes)
            if why is not None:
                return _host_stop("invalid_value", why, chunk, None, Stats())
            return self._run(request, chunk, loop, on_output, on_log)

    def _run(
        self,
        request: cm.Record,
        chunk: str,
        loop: asyncio.AbstractEventLoop | None,
        on_output: OutputSink | None,
        on_log: LogSink | None,
    ) -> Report:
        limits = self.sandbox.limits
        started = time.monotonic()
        ctx = EvalContext(
            max_output_bytes=limits.max_output_bytes,
            deadline=started + limits.timeout,
            capabilities=self.sandbox._by_name,
            loop=loop,
            max_reply_bytes=limits.max_memory_bytes,
        )
        ctx.on_output = on_output
        ctx.on_log = on_log
        fuel = limits.effective_fuel
        self._store.set_fuel(fuel)
        _guest.set_current_eval(ctx)
        trap: wasmtime.WasmtimeError | None = None
        result: Any = None
        try:
            with self._guest.running(self._store, limits.timeout):
                result = self._call(self._eval_func, self._handle, request)
        except wasmtime.WasmtimeError as e:
            trap = e
        except Exception as e:  # noqa: BLE001 - a host failure is the eval's report
            ctx.escaped(e)
        finally:
            _guest.set_current_eval(None)
        if isinstance(ctx.escape, (KeyboardInterrupt, SystemExit)):
            self._poisoned = "an earlier eval was interrupted"
            raise ctx.escape
        elapsed = time.monotonic() - started
        fuel_used = fuel if _is_fuel(trap) else fuel - self._store.get_fuel()
        output = ctx.output()
        host_stats = Stats(
            capability_calls=ctx.calls,
            output_bytes=len(output),
            fuel_used=fuel_used,
            wall_time_us=int(elapsed * 1_000_000),
        )

        if ctx.escape is not None:
            self._poisoned = "an earlier eval failed in the host (internal)"
            message = f"the host failed while the script ran: {type(ctx.escape).__name__}: {ctx.escape}"
            return _host_stop("internal", message, chunk, output, host_stats, ctx.logs)
        if trap is not None or ctx.timed_out:
            # Past the deadline the trap is the deadline's, whatever wasmtime
            # names it: the epoch check can surface as an out-of-fuel trap.
            if ctx.timed_out or _is_interrupt(trap) or time.monotonic() >= ctx.deadline:
                kind = "timeout"
                message = (
                    f"the script ran longer than the {round(limits.timeout * 1000)} ms timeout "
                    "(raise the timeout limit, --timeout)"
                )
            elif _is_fuel(trap):
                kind = "fuel_exhausted"
                message = _fuel_message(limits)
            elif "call stack exhausted" in str(trap):
                kind = "call_depth"
                message = "the script exhausted the wasm stack (recursion through C functions is too deep)"
            else:
                kind = "internal"
                message = f"the guest trapped: {_trap_message(trap)}"
            self._poisoned = f"an earlier eval was stopped by the host ({kind})"
            return _host_stop(kind, message, chunk, output, host_stats, ctx.logs)

        outcome = result.payload
        guest_stats = getattr(outcome, "stats")
        stats = Stats(
            instructions=getattr(guest_stats, "instructions"),
            peak_memory_bytes=getattr(guest_stats, "peak-memory-bytes"),
            capability_calls=ctx.calls,
            output_bytes=len(output),
            fuel_used=fuel_used,
            wall_time_us=host_stats.wall_time_us,
        )
        written = {getattr(f, "name"): bytes(getattr(f, "bytes")) for f in getattr(outcome, "files")}
        if result.tag == "ok":
            return Report(
                ok=True,
                values=json.loads(getattr(outcome, "values")),
                output_bytes=output,
                exit_code=getattr(outcome, "exit-code"),
                logs=ctx.logs,
                stats=stats,
                files=written,
            )
        error = getattr(outcome, "error")
        return Report(
            ok=False,
            output_bytes=output,
            error=LuaError(
                kind=getattr(error, "kind").replace("-", "_"),
                message=getattr(error, "message"),
                chunk=getattr(error, "chunk"),
                line=getattr(error, "line"),
                traceback=getattr(error, "traceback"),
            ),
            logs=ctx.logs,
            stats=stats,
            files=written,
        )

    def close(self) -> None:
        """Ends the session and frees its instance. Closing twice is fine."""
        with self._lock:
            handle, self._handle = self._handle, None
            if handle is not None and self._poisoned is None:
                try:
                    self._store.set_fuel(self.sandbox.limits.effective_fuel)
                    with self._guest.running(self._store, _start_seconds(self.sandbox.limits)):
                        handle.drop(self._store)
                except wasmtime.WasmtimeError:
                    pass  # the store goes away with the session either way

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        self.close()


#: The least time a session's start (or its end) may take, whatever the
#: eval's timeout: it runs only the guest's own code on a bounded config,
#: and a GIL held elsewhere must not make it fail.
MIN_START_SECONDS = 10.0


def _start_seconds(limits: Limits) -> float:
    return max(limits.timeout, MIN_START_SECONDS)


def _host_stop(
    kind: str,
    message: str,
    chunk: str,
    output: bytes | None,
    stats: Stats,
    logs: list[Any] | None = None,
) -> Report:
    return Report(
        ok=False,
        output_bytes=output or b"",
        error=LuaError(kind=kind, message=message, chunk=chunk),
        logs=logs or [],
        stats=stats,
    )


def _is_interrupt(e: wasmtime.WasmtimeError | None) -> bool:
    """Whether the epoch deadline stopped the guest. A component's traps
    reach wasmtime-py as errors whose text names the trap."""
    return e is not None and "wasm trap: interrupt" in str(e)


def _is_fuel(e: wasmtime.WasmtimeError | None) -> bool:
    return e is not None and "all fuel consumed" in str(e)


def _trap_message(e: wasmtime.WasmtimeError | None) -> str:
    """A wasmtime error's cause without its wasm backtrace."""
    text = str(e)
    _, caused, cause = text.partition("Caused by:")
    lines = [line.strip() for line in (cause if caused else text).splitlines()]
    return next((line for line in lines if line), text)


def _fuel_message(limits: Limits) -> str:
    if limits.fuel == 0:
        return (
            f"the script used up its fuel ({limits.effective_fuel} units, derived from max-instructions "
            f"{limits.max_instructions}): its instructions did more work in the C library than the margin "
            "allows; raise the instruction limit (--max-instructions) or set the fuel limit (--fuel)"
        )
    return (
        f"the script used up its fuel ({limits.fuel} units, the host's budget of wasm instructions); "
        "raise the fuel limit (--fuel)"
    )
