-- expect: sandboxed
-- Running a shell command.
return os.execute('cat /etc/passwd')
