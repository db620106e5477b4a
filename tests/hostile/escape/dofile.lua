-- expect: sandboxed
-- Running a file.
return dofile('/etc/passwd')
