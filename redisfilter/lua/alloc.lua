-- Makes a shard at its full length, ARGV[1] bytes of zeros, and its
-- generation, ARGV[2], together, unless the shard exists: a second maker
-- must not clear the last byte. KEYS are the bits and the generation.
-- Returns the bits' length.
if redis.call('EXISTS', KEYS[1]) == 0 and redis.call('EXISTS', KEYS[2]) == 0 then
	redis.call('SETRANGE', KEYS[1], tonumber(ARGV[1]) - 1, '\0')
	redis.call('SET', KEYS[2], ARGV[2])
end
return redis.call('STRLEN', KEYS[1])
