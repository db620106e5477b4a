-- expect: sandboxed
-- Starting a process.
return io.popen('id'):read('a')
