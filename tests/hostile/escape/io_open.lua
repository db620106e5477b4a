-- expect: sandboxed
-- Opening a file.
return io.open('/etc/passwd'):read('a')
