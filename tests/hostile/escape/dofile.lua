-- expect: runtime
-- Running a host file: no host path is reachable.
return dofile('/etc/passwd')
