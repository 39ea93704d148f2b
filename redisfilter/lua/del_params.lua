-- Deletes the parameter hash KEYS[1] when its generation is ARGV[1].
if redis.call('HGET', KEYS[1], 'generation') == ARGV[1] then
	return redis.call('DEL', KEYS[1])
end
return 0
