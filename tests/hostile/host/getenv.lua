-- expect: ok
-- returns: [null]
-- Reading the host environment: the sandbox's environment is empty.
return os.getenv('AWS_SECRET_ACCESS_KEY')
