-- expect: ok
-- returns: [null, "/etc/passwd: No such file or directory", 2]
-- Looking for the original io in package.loaded: it is the same io, whose
-- files are the session's own.
return package.loaded.io.open('/etc/passwd')
