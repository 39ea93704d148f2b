-- Writes the parameter hash KEYS[1] (ARGV: its fields and values) when the
-- key is free, atomically, and returns 1; when it exists it returns its
-- fields (HGETALL), or the WRONGTYPE error when the key holds another type.
if redis.call('EXISTS', KEYS[1]) == 0 then
	redis.call('HSET', KEYS[1], unpack(ARGV))
	return 1
end
return redis.call('HGETALL', KEYS[1])
