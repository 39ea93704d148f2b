-- Takes the first entry due of the sorted set KEYS[6] (due by ARGV[3], the
-- time now in Unix ms), or else the head of the list KEYS[1], into the
-- owner's hash KEYS[3] under a new number from the counter KEYS[2];
-- registers the owner ARGV[1] in the set KEYS[4] and renews its lease
-- KEYS[5] for ARGV[2] ms. Returns {number, entry}, or false when no entry
-- is due. The number, unique among all owners, is the claim the owner
-- holds the entry under: every later change of the entry's state by the
-- owner checks that the hash still holds it (mark.lua, again.lua, fail.lua,
-- and HDEL for done).
local e = redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', ARGV[3], 'LIMIT', 0, 1)[1]
if e then
	redis.call('ZREM', KEYS[6], e)
else
	e = redis.call('LPOP', KEYS[1])
end
if not e then return false end
local n = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[3], n, e)
redis.call('SADD', KEYS[4], ARGV[1])
redis.call('SET', KEYS[5], '1', 'PX', ARGV[2])
return {n, e}
