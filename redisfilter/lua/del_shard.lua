-- Deletes a shard's keys (KEYS: bits, generation, count) when its
-- generation is ARGV[1], or absent: what is left of a lost filter, and never
-- the shard of a filter made since.
local gen = redis.call('GET', KEYS[2])
if gen and gen ~= ARGV[1] then
	return 0
end
return redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
