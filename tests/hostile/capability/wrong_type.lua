-- expect: capability
-- A table where a string is expected.
return records.get({ id = '123' })
