-- expect: capability
-- Too many arguments.
return records.get('123', '456')
