-- expect: runtime
-- Opening a host file: the session's files hold no host path, so io.open
-- returns nil and indexing it fails.
return io.open('/etc/passwd'):read('a')
