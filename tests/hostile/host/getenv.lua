-- expect: sandboxed
-- Reading the host environment.
return os.getenv('AWS_SECRET_ACCESS_KEY')
