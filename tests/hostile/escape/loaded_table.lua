-- expect: sandboxed
-- Looking for the original io in package.loaded.
return package.loaded.io.open('/etc/passwd')
