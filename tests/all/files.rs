//! The session's files: the reference `io`, `os` and base libraries over
//! the guest's own filesystem (guest/src/files.rs). The scenarios compare
//! with `lua5.4` on Linux: each expected output is what `lua5.4` printed
//! running the same script in an empty directory. Then the hostile cases,
//! the memory limit, and which session sees which files.

use std::time::Duration;

use moonbox::{ErrorKind, File, Limits, Sandbox, Script};
use serde_json::json;

use crate::support::{assert_usable, fails, ok, values};

/// The default sandbox: every script has the file functions.
fn files() -> Sandbox {
    files_with(Limits::default())
}

/// As [`files`], with `limits`.
fn files_with(limits: Limits) -> Sandbox {
    crate::support::with_limits(limits)
}

/// What `code` printed, failing the test on an error.
async fn output(sandbox: &Sandbox, code: &str) -> String {
    ok(sandbox, code).await.output.to_str_lossy().into_owned()
}

/// Writing then reading back: values, `io.lines`, binary bytes, `n` formats.
#[tokio::test]
async fn written_files_read_back_as_in_lua() {
    let code = r##"
local f = assert(io.open("notes.txt", "w"))
print(io.type(f), f:write("one\n", 2, "\n", 3.5, "\n") == f)
print(f:close(), io.type(f))
for line in io.lines("notes.txt") do io.write("[", line, "]") end print()
local g = assert(io.open("./notes.txt", "rb"))
print(g:read("a") == "one\n2\n3.5\n", g:read("a"), g:read("l"), g:read(0))
g:close()
local b = assert(io.open("bin.dat", "wb")) b:write("\0\255\r\n\0") b:close()
local s = io.open("./bin.dat", "rb"):read("a") print(#s, s:byte(1, -1))
print(io.open("notes.txt"):read("n", "n", "n", "n"))
"##;
    let expected = r##"file	true
true	closed file
[one][2][3.5]
true		nil	nil
5	0	255	13	10	0
nil
"##;
    assert_eq!(output(&files(), code).await, expected);
}

/// `io.lines` and `file:read` with every format.
#[tokio::test]
async fn read_formats_and_lines_as_in_lua() {
    let code = r##"
local f = assert(io.open("data.txt", "w"))
f:write("10 20.5 0x1F\nhello world\n\nlast line without newline")
f:close()
for a, b, c in io.lines("data.txt", "n", "n", "n") do print(a, b, c) break end
local h = io.open("data.txt")
print(h:read("n", "n", "n", "L", "l", "l", 4, "a"))
print(h:read("a"), h:read("l"), h:read("n"), h:read(1))
h:close()
for l in io.lines("data.txt", "L") do io.write(("%q"):format(l), " ") end print()
for c in io.lines("data.txt", 7) do io.write("<", c, ">") end print()
local n = 0 for l in io.open("data.txt"):lines() do n = n + 1 end print(n)
"##;
    let expected = r##"10	20.5	31
10	20.5	31	
	hello world		last	 line without newline
	nil	nil	nil
"10 20.5 0x1F\
" "hello world\
" "\
" "last line without newline" 
<10 20.5>< 0x1F
h><ello wo><rld

la><st line>< withou><t newli><ne>
4
"##;
    assert_eq!(output(&files(), code).await, expected);
}

/// `file:seek("set"/"cur"/"end")`, a negative position, a write past the end.
#[tokio::test]
async fn seek_set_cur_end_as_in_lua() {
    let code = r##"
local f = assert(io.open("s.txt", "w+"))
f:write("0123456789")
print(f:seek("cur"), f:seek("set"), f:read(3), f:seek("cur"), f:seek("cur", 2), f:read(2))
print(f:seek("end"), f:seek("end", -4), f:read("a"))
print(f:seek("set", -1))
print(f:seek("set", 15), f:write("X") == f, f:seek("end"))
f:seek("set") local all = f:read("a") print(#all, all:byte(11, 16))
print(pcall(f.seek, f, "bad"))
print(f:seek("set", 2), f:write("ab") == f, f:seek("cur"))
f:seek("set") print(f:read("a"):sub(1, 6))
f:close()
"##;
    let expected = r##"10	0	012	3	5	56
10	6	6789
nil	Invalid argument	22
15	true	16
16	0	0	0	0	0	88
false	bad argument #2 to '?' (invalid option 'bad')
2	true	4
01ab45
"##;
    assert_eq!(output(&files(), code).await, expected);
}

/// `a` starts at the end and `a+` at the start; both write at the end.
#[tokio::test]
async fn append_modes_write_at_the_end_as_in_lua() {
    let code = r##"
local f = io.open("a.txt", "w") f:write("hello\nworld\n") f:close()
local a = io.open("a.txt", "a")
print(a:seek("cur")) a:write("A") print(a:seek("cur")) print(a:seek("set", 0)) a:write("B") print(a:seek("cur"))
print(a:read("a"))
a:close()
local p = io.open("a.txt", "a+")
print(p:seek("cur"), p:read("l")) p:write("C") print(p:seek("cur"), p:read("a")) p:seek("set", 0) print(p:read("a"))
p:close()
local n = io.open("new.txt", "a") n:write("x") n:close() print(io.open("new.txt"):read("a"))
"##;
    let expected = r##"12
13
0
14
nil	Bad file descriptor	9
0	hello
15	
hello
world
ABC
x
"##;
    assert_eq!(output(&files(), code).await, expected);
}

/// `r+` and `w+`, and reading a write-only file.
#[tokio::test]
async fn read_write_modes_as_in_lua() {
    let code = r##"
print(io.open("rp.txt", "r+"))
local f = io.open("rp.txt", "w") f:write("abcdef") f:close()
local r = io.open("rp.txt", "r+")
print(r:read(2)) r:seek("cur") r:write("XY") r:seek("set") print(r:read("a")) r:close()
local w = io.open("rp.txt", "w+")
print(w:read("a")) w:write("new") w:seek("set") print(w:read("a")) w:close()
print(io.open("rp.txt"):read("a"))
local wo = io.open("rp.txt", "w")
print(wo:read("a")) print(wo:read("l")) print(io.type(wo:write("z"))) wo:close()
print(io.open("rp.txt"):read("a"))
"##;
    let expected = r##"nil	rp.txt: No such file or directory	2
ab
abXYef

new
new
nil	Bad file descriptor	9
nil	Bad file descriptor	9
file
z
"##;
    assert_eq!(output(&files(), code).await, expected);
}

/// A missing file, an empty name and names that can only be directories.
#[tokio::test]
async fn missing_files_and_directory_names_fail_as_in_lua() {
    let code = r##"
print(io.open("x"))
print(io.open("x", "r+"))
print(pcall(io.lines, "x"))
print(io.open("x") == nil, io.open("/x") == nil)
print(loadfile("x"))
print(pcall(dofile, "x"))
print(io.open(""))
print(io.open("d/", "w"))
print(io.open("d/"))
print(io.open("/", "w"))
print(io.open(".", "a+"))
print(pcall(io.open, "x", "rw"))
print(pcall(io.input, "x"))
"##;
    let expected = r##"nil	x: No such file or directory	2
nil	x: No such file or directory	2
false	cannot open file 'x' (No such file or directory)
true	true
nil	cannot open x: No such file or directory
false	cannot open x: No such file or directory
nil	: No such file or directory	2
nil	d/: Is a directory	21
nil	d/: No such file or directory	2
nil	/: Is a directory	21
nil	.: Is a directory	21
false	bad argument #2 to 'io.open' (invalid mode)
false	cannot open file 'x' (No such file or directory)
"##;
    assert_eq!(output(&files(), code).await, expected);
}

/// `os.remove` and `os.rename`, over an existing file and on an open one.
#[tokio::test]
async fn remove_and_rename_as_in_lua() {
    let code = r##"
local function put(name, text) local f = assert(io.open(name, "w")) f:write(text) f:close() end
local function get(name) local f = io.open(name) if not f then return nil end local s = f:read("a") f:close() return s end
put("a", "A") put("b", "B")
print(os.remove("nope"))
print(os.rename("nope", "c"))
print(os.rename("a", "c"), get("a"), get("c"))
print(os.rename("c", "b"), get("c"), get("b"))
print(os.remove("b"), get("b"))
print(os.remove("b"))
print(os.remove(""))
put("k", "keep")
local h = io.open("k") print(os.remove("k"), io.open("k"), h:read("a")) h:close()
put("x", "1") print(os.rename("x", "x"), get("x"))
"##;
    let expected = r##"nil	nope: No such file or directory	2
nil	No such file or directory	2
true	nil	A
true	nil	A
true	nil
nil	b: No such file or directory	2
nil	: No such file or directory	2
true	nil	keep
true	1
"##;
    assert_eq!(output(&files(), code).await, expected);
}

/// A closed file refuses `lines`, `read` and `write`; `io.lines` closes at the end.
#[tokio::test]
async fn closed_files_refuse_as_in_lua() {
    let code = r##"
local f = io.open("c.txt", "w") f:write("a\nb\n") f:close()
print(pcall(f.lines, f))
print(pcall(f.read, f))
print(pcall(f.write, f, "x"))
print(io.type(f), tostring(f))
local it = io.lines("c.txt") print(it(), it(), it()) print(pcall(it))
local g = io.open("c.txt")
for l in g:lines() do end
print(io.type(g), g:read("a"))
print(pcall(function() for l in io.lines("c.txt") do end end))
"##;
    let expected = r##"false	attempt to use a closed file
false	attempt to use a closed file
false	attempt to use a closed file
closed file	file (closed)
a	b
false	file is already closed
file	
true
"##;
    assert_eq!(output(&files(), code).await, expected);
}

/// One handle reads a file another writes: it sees what was flushed.
#[tokio::test]
async fn a_reader_sees_what_another_handle_flushed() {
    let code = r##"
local w = assert(io.open("shared.txt", "w"))
local r = assert(io.open("shared.txt", "r"))
w:write("first\n")
print(r:read("l"))
w:flush()
print(r:read("l"))
w:setvbuf("no")
w:write("second\n")
print(r:read("l"))
w:close()
print(r:read("a"), r:read("l"))
r:close()
"##;
    let expected = r##"nil
first
second
	nil
"##;
    assert_eq!(output(&files(), code).await, expected);
}

/// A NUL byte ends a name (Lua's C API stops there); a 5000-byte name is too long.
#[tokio::test]
async fn nul_bytes_and_long_names_as_in_lua() {
    let code = r##"
local f = assert(io.open("a\0b", "w")) f:write("x") f:close()
print(io.open("a"):read("a"), io.open("a\0zzz"):read("a"), io.open("b"))
print(os.remove("a\0ignored"), io.open("a"))
local name = ("n"):rep(5000)
print(select(2, io.open(name, "w")):sub(-24), select(3, io.open(name, "w")))
print(select(3, io.open(name)), select(3, os.remove(name)), select(3, os.rename("x", name)))
"##;
    let expected = r##"x	x	nil	b: No such file or directory	2
true	nil	a: No such file or directory	2
nnnn: File name too long	36
36	36	36
"##;
    assert_eq!(output(&files(), code).await, expected);
}

/// `loadfile` and `dofile` of files the script wrote: a `#` line, modes, syntax errors, `env`.
#[tokio::test]
async fn loadfile_and_dofile_run_written_files_as_in_lua() {
    let code = r##"
local f = assert(io.open("mod.lua", "w"))
f:write("#!/usr/bin/lua\nlocal n = ... return (n or 0) + 1, 'from mod'\n")
f:close()
local chunk = assert(loadfile("mod.lua"))
print(chunk(41))
print(dofile("mod.lua"))
print(loadfile("mod.lua", "b"))
local g = io.open("bad.lua", "w") g:write("return +") g:close()
print(loadfile("bad.lua"))
print(pcall(dofile, "bad.lua"))
local e = io.open("env.lua", "w") e:write("return x") e:close()
print(loadfile("env.lua", "t", {x = "from env"})())
"##;
    // One difference from lua5.4: without `binary-chunks`, the sandbox takes
    // `b` out of the mode, as `load` does, so the message shows what is left.
    let expected = r##"42	from mod
1	from mod
nil	attempt to load a text chunk (mode is '')
nil	bad.lua:1: unexpected symbol near '+'
false	bad.lua:1: unexpected symbol near '+'
from env
"##;
    assert_eq!(output(&files(), code).await, expected);
}

#[tokio::test]
async fn a_missing_file_is_nil_message_and_linux_errno() {
    // As `lua5.4` on Linux: errno 2, not WASI's 44.
    assert_eq!(
        values(&files(), "return io.open('x')").await,
        [json!(null), json!("x: No such file or directory"), json!(2)]
    );
    assert_eq!(
        values(&files(), "return os.remove('x/')").await,
        [
            json!(null),
            json!("x/: No such file or directory"),
            json!(2)
        ]
    );
}

#[tokio::test]
async fn no_host_path_is_reachable() {
    let sb = files();
    let code = r#"
        local found = {}
        for _, name in ipairs({"/etc/passwd", "../../etc/passwd", "/etc/hostname",
                "/proc/self/environ", "/dev/null", "/", ".", "..", "/tmp"}) do
            local f, err, code = io.open(name)
            found[#found + 1] = f and "opened " .. name or err .. " " .. code
        end
        return found
    "#;
    assert_eq!(
        values(&sb, code).await,
        [json!([
            "/etc/passwd: No such file or directory 2",
            "../../etc/passwd: No such file or directory 2",
            "/etc/hostname: No such file or directory 2",
            "/proc/self/environ: No such file or directory 2",
            "/dev/null: No such file or directory 2",
            "/: Is a directory 21",
            ".: Is a directory 21",
            "..: Is a directory 21",
            "/tmp: Is a directory 21",
        ])]
    );
    // `..` stops at the root: these all name the script's own /etc/passwd
    // (in the directory a mounted file makes).
    let code = r#"
        assert(io.open("../../etc/hosts")) -- the mount
        local f = assert(io.open("../../etc/passwd", "w")) f:write("mine") f:close()
        return io.open("/etc/passwd"):read("a"), io.open("etc/passwd"):read("a"),
            io.open("/../etc/./passwd"):read("a"), io.open("./etc//passwd"):read("a")
    "#;
    let out = sb
        .run(moonbox::Script::new(code).file("/etc/hosts", "127.0.0.1 localhost\n"))
        .await
        .unwrap();
    assert_eq!(
        out.values,
        [json!("mine"), json!("mine"), json!("mine"), json!("mine")]
    );
    assert_eq!(
        values(&sb, "return io.open('/etc/passwd')").await,
        [
            json!(null),
            json!("/etc/passwd: No such file or directory"),
            json!(2)
        ],
        "each session starts with no files"
    );
}

#[tokio::test]
async fn tmpname_makes_unique_files_with_the_same_names_each_session() {
    let sb = files();
    let code = r#"
        local a, b = os.tmpname(), os.tmpname()
        local fa = assert(io.open(a))
        local size = fa:seek("end")
        local f = assert(io.open(b, "w")) f:write("temp") f:close()
        local c = os.tmpname()
        return a, b, c, a ~= b and b ~= c, size, io.open(b):read("a")
    "#;
    let first = values(&sb, code).await;
    assert_eq!(
        first,
        [
            json!("/tmp/lua_000001"),
            json!("/tmp/lua_000002"),
            json!("/tmp/lua_000003"),
            json!(true),
            json!(0),
            json!("temp")
        ]
    );
    assert_eq!(values(&sb, code).await, first, "deterministic");
    // A name the script took already is skipped.
    let code = "io.open('/tmp/lua_000001', 'w'):close() return os.tmpname()";
    assert_eq!(values(&sb, code).await, [json!("/tmp/lua_000002")]);
}

#[tokio::test]
async fn tmpfile_is_an_anonymous_read_write_file() {
    let code = r#"
        local f = assert(io.tmpfile())
        print(io.type(f), f:write("scratch", 1, "\n") == f, f:seek("cur"))
        f:seek("set")
        print(f:read("l"), f:read("l"))
        print(f:close(), io.type(f))
        print(pcall(f.read, f))
    "#;
    assert_eq!(
        output(&files(), code).await,
        "file\ttrue\t9\nscratch1\tnil\ntrue\tclosed file\nfalse\tattempt to use a closed file\n"
    );
    // In no namespace: nothing appears, nothing is left.
    let sb = files();
    let mut s = sb.session(()).await.unwrap();
    s.eval("t = io.tmpfile() t:write(('x'):rep(1000)) t = nil collectgarbage()")
        .await
        .unwrap();
    assert_eq!(
        s.eval("return os.tmpname()").await.unwrap().values,
        [json!("/tmp/lua_000001")]
    );
}

#[tokio::test]
async fn require_finds_modules_the_script_wrote() {
    let code = r#"
        local f = assert(io.open("greet.lua", "w"))
        f:write("local M = {} function M.hi(n) return 'hi ' .. n end return M")
        f:close()
        -- (in /tmp, a directory every session has)
        local g = assert(io.open("tmp/init.lua", "w")) g:write("return {name = ...}") g:close()
        local greet = require("greet")
        return greet.hi("there"), require("greet") == greet, require("tmp").name,
            package.searchpath("greet", package.path), (select(2, pcall(require, "nope")):match("no file './nope.lua'"))
    "#;
    assert_eq!(
        values(&files(), code).await,
        [
            json!("hi there"),
            json!(true),
            json!("tmp"),
            json!("./greet.lua"),
            json!("no file './nope.lua'")
        ]
    );
}

#[tokio::test]
async fn loadfile_reopens_a_binary_chunk_and_its_mode_refuses_one() {
    let write_chunk = r#"
        local f = assert(io.open("seven.luac", "wb"))
        f:write(string.dump(function() return 7 end))
        f:close()
    "#;
    // With binary chunks allowed, `luaL_loadfilex` reopens the file
    // (`freopen`) and loads it.
    let allowed = Sandbox::builder()
        .allow("io")
        .allow("loadfile")
        .allow("string.dump")
        .allow("binary-chunks")
        .build()
        .unwrap();
    let code = format!("{write_chunk} return assert(loadfile('seven.luac'))()");
    assert_eq!(values(&allowed, &code).await, [json!(7)]);
    // Text only: refused by the mode, after the reopen.
    let code = format!("{write_chunk} return loadfile('seven.luac', 't')");
    assert_eq!(
        values(&allowed, &code).await,
        [
            json!(null),
            json!("attempt to load a binary chunk (mode is 't')")
        ]
    );
}

/// Without `binary-chunks`, `loadfile` refuses a binary chunk the script
/// wrote, as `load` does.
#[tokio::test]
async fn loadfile_refuses_binary_chunks_unless_allowed() {
    let code = r#"
        local f = assert(io.open("x.luac", "wb"))
        f:write("\27Lua\x54\0\x19\x93\r\n\x1a\n\4\8\8\x78\x56\0\0\0\0\0\0\0\0\0\0\0\x28\x77\x40")
        f:close()
        return loadfile("x.luac")
    "#;
    assert_eq!(
        values(&files(), code).await,
        [
            json!(null),
            json!("attempt to load a binary chunk (mode is 't')")
        ]
    );
}

#[tokio::test]
async fn a_huge_write_trips_the_memory_limit_past_pcall() {
    let sb = files_with(Limits {
        max_memory_bytes: 4 << 20,
        ..Limits::default()
    });
    let code = r#"
        local chunk = ("x"):rep(1 << 20)
        local f = assert(io.open("big.bin", "w"))
        print("before")
        local ok, err = pcall(function()
            for i = 1, 100 do f:write(chunk) end
        end)
        print("after", ok, err)
    "#;
    let e = fails(&sb, code, ErrorKind::MemoryLimit).await;
    assert!(
        e.message
            .contains("not enough memory to write 1048576 bytes to the file '/big.bin'")
            && e.message
                .contains("limited to 4194304 bytes by max-memory-bytes"),
        "{}",
        e.message
    );
    assert_eq!(e.output.to_str_lossy(), "before\n");
    // A write far past the end needs as many bytes.
    let code = r#"
        local f = assert(io.open("sparse", "w"))
        f:seek("set", 1 << 40)
        f:setvbuf("no")
        return pcall(f.write, f, "x")
    "#;
    let e = fails(&sb, code, ErrorKind::MemoryLimit).await;
    assert!(e.message.contains("to the file '/sparse'"), "{}", e.message);
    assert_usable(&sb).await;
}

#[tokio::test]
async fn many_files_trip_the_memory_limit_past_pcall() {
    // Past the heap limit, small as it is here...
    let sb = files_with(Limits {
        max_memory_bytes: 1 << 20,
        ..Limits::default()
    });
    // (long names: each file's name counts too)
    let long = r#"
        print("start")
        pcall(function()
            for i = 1, 1e6 do assert(io.open(("n"):rep(2000) .. i, "w")):close() end
        end)
        print("not reached")
    "#;
    let e = fails(&sb, long, ErrorKind::MemoryLimit).await;
    assert!(e.message.contains("max-memory-bytes"), "{}", e.message);
    assert_eq!(e.output.to_str_lossy(), "start\n");
    let code = r#"
        print("start")
        pcall(function()
            for i = 1, 1e6 do assert(io.open("f" .. i, "w")):close() end
        end)
        print("not reached")
    "#;
    // ...and past the count, whatever the memory.
    let e = fails(&files(), code, ErrorKind::MemoryLimit).await;
    assert_eq!(
        e.message,
        "main.lua:4: a session holds at most 1024 files, so there is no room to create the file 'f1025'"
    );
    assert_eq!(e.output.to_str_lossy(), "start\n");
}

#[tokio::test]
async fn files_count_in_peak_memory_and_give_their_bytes_back() {
    let sb = files_with(Limits {
        max_memory_bytes: 4 << 20,
        ..Limits::default()
    });
    let mut s = sb.session(()).await.unwrap();
    let small = s.eval("return 1").await.unwrap().stats.peak_memory_bytes;
    // 3 MiB written 64 KiB at a time: the file, not the heap, holds it.
    let code = "local f = io.open('m', 'w') local s = ('y'):rep(1 << 16) for i = 1, 48 do f:write(s) end f:close()";
    let out = s.eval(code).await.unwrap();
    assert!(
        out.stats.peak_memory_bytes >= small.map(|p| p + (3 << 20)),
        "{:?} vs {small:?}",
        out.stats.peak_memory_bytes
    );
    // The file holds 3 MiB of the 4: a second one does not fit...
    let e = s.eval(code.replace("'m'", "'n'")).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::MemoryLimit);
    // ...until the first is removed (or emptied).
    s.eval("assert(os.remove('n')) assert(os.remove('m'))")
        .await
        .unwrap();
    s.eval(code).await.unwrap();
    s.eval("io.open('m', 'w'):close()").await.unwrap();
    s.eval(code.replace("'m'", "'n'")).await.unwrap();
}

#[tokio::test]
async fn files_persist_in_their_session_only() {
    let sb = files();
    let mut s = sb.session(()).await.unwrap();
    s.eval("local f = io.open('keep.txt', 'w') f:write('kept') f:close() out = io.open('open.txt', 'w') out:write('buffered')")
        .await
        .unwrap();
    assert_eq!(
        s.eval("return io.open('keep.txt'):read('a'), io.open('open.txt'):read('a'), out:close(), io.open('open.txt'):read('a')")
            .await
            .unwrap()
            .values,
        // What an eval left buffered in a stream it kept open is flushed
        // when the eval ends, as `lua5.4` flushes at exit.
        [json!("kept"), json!("buffered"), json!(true), json!("buffered")]
    );
    let mut other = sb.session(()).await.unwrap();
    assert_eq!(
        other
            .eval("return io.open('keep.txt')")
            .await
            .unwrap()
            .values,
        [
            json!(null),
            json!("keep.txt: No such file or directory"),
            json!(2)
        ]
    );
    // Sessions interleave; each keeps its own.
    other
        .eval("local f = io.open('keep.txt', 'w') f:write('other') f:close()")
        .await
        .unwrap();
    assert_eq!(
        s.eval("return io.open('keep.txt'):read('a')")
            .await
            .unwrap()
            .values,
        [json!("kept")]
    );
}

#[tokio::test]
async fn writing_a_read_only_file_fails_at_once() {
    // `lua5.4` (glibc) says `nil, "Bad file descriptor", 9`; musl refuses
    // the write before any function of the guest's runs, with no errno,
    // which Lua reports as below. The file is unchanged either way.
    let code = r#"
        local f = io.open("ro.txt", "w") f:write("data") f:close()
        local r = io.open("ro.txt")
        print(r:write("zz"))
        print(r:read("a"))
    "#;
    assert_eq!(
        output(&files(), code).await,
        "nil\t(no extra info)\t0\ndata\n"
    );
}

#[tokio::test]
async fn the_output_stream_cannot_seek_like_a_pipe() {
    assert_eq!(
        values(&crate::support::sandbox(), "return io.stdout:seek('set')").await,
        [json!(null), json!("Illegal seek"), json!(29)]
    );
}

/// What an eval wrote, as (name, text) pairs.
fn written(files: &[File]) -> Vec<(&str, String)> {
    files
        .iter()
        .map(|f| {
            (
                f.name.as_str(),
                String::from_utf8_lossy(&f.bytes).into_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn mounted_files_are_read_only_inputs_and_written_files_come_back() {
    let sb = files();
    let script = Script::new(
        r#"
        local total = 0
        for line in io.lines("data/in.csv") do
            local _, n = line:match("(%w+),(%d+)")
            total = total + tonumber(n)
        end
        local out = assert(io.open("data/total.txt", "w"))
        out:write(total, "\n")
        out:close()
        local scratch = io.open("scratch", "w") scratch:write("gone") scratch:close()
        os.remove("scratch")
        local mode = require("lib.mode")
        return total, mode, dofile("/data/../run.lua"),
            io.open("data/in.csv", "a"), (select(2, os.remove("data/in.csv"))), select(2, os.rename("run.lua", "x"))
        "#,
    )
    .file("data/in.csv", "a,1\nb,2\nc,3\n")
    .file("lib/mode.lua", "return 'mounted module'")
    .file("./run.lua", "return 'ran'");
    let out = sb.run(script).await.unwrap();
    assert_eq!(
        out.values,
        [
            json!(6),
            json!("mounted module"),
            json!("ran"),
            json!(null),
            json!("data/in.csv: Permission denied"),
            json!("Permission denied"),
            json!(13)
        ]
    );
    // Only what the script wrote comes back; mounted and removed files do not.
    assert_eq!(written(&out.files), [("data/total.txt", "6\n".to_owned())]);
}

#[tokio::test]
async fn written_files_come_back_on_every_stop_the_guest_sees() {
    let sb = files_with(Limits {
        max_instructions: 100_000,
        ..Limits::default()
    });
    let write = "local f = io.open('log.txt', 'w') f:write('step 1') f:close() ";
    for (tail, kind) in [
        ("error('boom')", ErrorKind::Runtime),
        ("while true do end", ErrorKind::InstructionLimit),
        ("pcall(string.rep, 'x', 1 << 30)", ErrorKind::StringSize),
    ] {
        let e = sb.eval(format!("{write}{tail}")).await.unwrap_err();
        assert_eq!(e.kind, kind);
        assert_eq!(
            written(&e.files),
            [("log.txt", "step 1".to_owned())],
            "{kind}"
        );
    }
    let out = sb.eval(format!("{write} os.exit(3)")).await.unwrap();
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(written(&out.files), [("log.txt", "step 1".to_owned())]);
}

/// The outer wall's stops end an eval without the guest's account of its
/// files; the host's copy, kept from the guest's changes as they happen,
/// reports them: closed files whole, open ones up to what their streams
/// flushed (a stream buffers up to 1,024 bytes).
#[tokio::test]
async fn written_files_come_back_when_the_outer_wall_stops_the_eval() {
    let setup = r#"
        local f = io.open('done.txt', 'w') f:write('closed') f:close()
        local g = io.open('open.txt', 'w') g:write(('x'):rep(3000)) g:write('tail')
        local u = io.open('unbuffered.txt', 'w') u:setvbuf('no') u:write('each byte')
        io.open('doomed', 'w'):close() os.remove('doomed')
        io.open('old', 'w'):close() os.rename('old', 'renamed.txt')
        local t = io.tmpfile() t:write('anonymous') t:flush()
    "#;
    let expected = |files: &[File]| {
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["done.txt", "open.txt", "renamed.txt", "unbuffered.txt"]
        );
        assert_eq!(files[0].bytes, b"closed");
        // 3,000 bytes passed the 1,024-byte buffer; 'tail' is still in it.
        assert_eq!(files[1].bytes, vec![b'x'; 3000]);
        assert_eq!(files[2].bytes, b"");
        assert_eq!(files[3].bytes, b"each byte");
    };
    // A timeout inside one C call (a pattern that backtracks for minutes).
    let timeout = files_with(Limits {
        timeout: Duration::from_millis(300),
        ..Limits::default()
    });
    let code = format!("{setup} return ('a'):rep(28):match(('a?'):rep(28) .. ('a'):rep(28))");
    let e = fails(&timeout, &code, ErrorKind::Timeout).await;
    expected(&e.files);
    // Fuel.
    let fuel = files_with(Limits {
        fuel: Some(50_000_000),
        max_instructions: Limits::MAX_MAX_INSTRUCTIONS,
        ..Limits::default()
    });
    let e = fails(
        &fuel,
        &format!("{setup} while true do end"),
        ErrorKind::FuelExhausted,
    )
    .await;
    expected(&e.files);
    // The host's cancel, in a session whose earlier eval wrote files of
    // its own: only this eval's are reported.
    let sb = files_with(Limits {
        max_instructions: Limits::MAX_MAX_INSTRUCTIONS,
        timeout: Duration::from_secs(120),
        ..Limits::default()
    });
    let mut session = sb.session(()).await.unwrap();
    session
        .eval("io.open('earlier.txt', 'w'):write('kept') io.open('renamed.txt', 'w'):close()")
        .await
        .unwrap();
    let cancel = session.cancel_handle();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let e = session
        .eval(format!("{setup} while true do end"))
        .await
        .unwrap_err();
    canceller.await.unwrap();
    assert_eq!(e.kind, ErrorKind::Cancelled);
    expected(&e.files);
}

#[tokio::test]
async fn a_session_keeps_its_files_and_reports_each_eval_s_own_writes() {
    let sb = files();
    let mut s = sb.session(()).await.unwrap();
    let out = s
        .run(
            Script::new("io.open('a', 'w'):write('1') io.open('b', 'w'):write('2')")
                .file("in", "x"),
        )
        .await
        .unwrap();
    assert_eq!(
        written(&out.files),
        [("a", "1".to_owned()), ("b", "2".to_owned())]
    );
    // The next eval sees them and the mount; it reports only what it wrote.
    let out = s
        .run(Script::new(
            "local a = io.open('a'):read('a') io.open('b', 'a'):write('+') return a, io.open('in'):read('a')",
        ))
        .await
        .unwrap();
    assert_eq!(out.values, [json!("1"), json!("x")]);
    assert_eq!(written(&out.files), [("b", "2+".to_owned())]);
    // A later mount of the same name replaces it; a rename is a write.
    let out = s
        .run(Script::new("os.rename('a', 'c') return io.open('in'):read('a')").file("/in", "y"))
        .await
        .unwrap();
    assert_eq!(out.values, [json!("y")]);
    assert_eq!(written(&out.files), [("c", "1".to_owned())]);
}

#[tokio::test]
async fn a_module_named_json_in_the_files_comes_before_moonbox_json() {
    let sb = files();
    let out = sb
        .run(
            Script::new("return require('json').name, type(json.encode)")
                .file("json.lua", "return { name = 'mine' }"),
        )
        .await
        .unwrap();
    assert_eq!(out.values, [json!("mine"), json!("function")]);
}

#[tokio::test]
async fn bad_mounts_are_refused_before_the_chunk_runs() {
    let sb = files();
    for (name, why) in [
        ("a/", "names a directory"),
        ("..", "names a directory"),
        ("", "is empty, longer than 4096 bytes or contains NUL"),
        ("a\0b", "is empty, longer than 4096 bytes or contains NUL"),
    ] {
        let e = sb
            .run(Script::new("print('ran')").file(name, "x"))
            .await
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidValue, "{name:?}");
        assert!(e.message.contains(why), "{name:?}: {}", e.message);
        assert_eq!(e.output.as_bytes(), b"", "nothing ran");
    }
    // Two names that resolve to one file.
    let e = sb
        .run(
            Script::new("print('ran')")
                .file("a.txt", "1")
                .file("./a.txt", "2"),
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidValue);
    assert!(e.message.contains("is given twice"), "{}", e.message);
    // Too long a name, and too many files, are refused by the host.
    let long = "n".repeat(Limits::MAX_FILE_NAME_BYTES + 1);
    let e = sb
        .run(Script::new("return 1").file(long, "x"))
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidValue);
    let mut many = Script::new("return 1");
    for i in 0..=Limits::MAX_FILES {
        many = many.file(format!("f{i}"), "");
    }
    let e = sb.run(many).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidValue);
    assert!(
        e.message.contains("1025 files are more than the 1024"),
        "{}",
        e.message
    );
    // Files larger than the memory limit are refused by the host; files that
    // fit alone but not beside the heap trip the guest's memory limit.
    let small = files_with(Limits {
        max_memory_bytes: 1 << 20,
        ..Limits::default()
    });
    let e = small
        .run(Script::new("return 1").file("big", vec![b'x'; 2 << 20]))
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidValue);
    let e = small
        .run(Script::new("print('ran')").file("big", vec![b'x'; (1 << 20) - 100]))
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::MemoryLimit, "{}", e.message);
    assert!(e.message.contains("file 'big'"), "{}", e.message);
    assert_usable(&small).await;
}

#[tokio::test]
async fn directories_are_implicit_and_a_file_needs_one() {
    let sb = files();
    let script = Script::new(
        r#"
        local results = {}
        local function try(name) local f, err = io.open(name, "w") if f then f:close() return "ok" end return err end
        results[#results + 1] = try("out/report.txt")
        results[#results + 1] = try("data/out.csv")
        results[#results + 1] = try("/tmp/scratch")
        results[#results + 1] = try("data")
        results[#results + 1] = try("data/in.csv/x")
        results[#results + 1] = select(2, os.rename("/tmp/scratch", "nowhere/x"))
        return results
        "#,
    )
    .file("data/in.csv", "1");
    let out = sb.run(script).await.unwrap();
    assert_eq!(
        out.values,
        [json!([
            "out/report.txt: No such file or directory",
            "ok",
            "ok",
            "data: Is a directory",
            "data/in.csv/x: Not a directory",
            "No such file or directory"
        ])]
    );
}
