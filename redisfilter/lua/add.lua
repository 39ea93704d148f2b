-- After check_shard.lua: sets the bits of n keys in one shard and returns,
-- for each key, 1 when one of its bits was 0, adding the number of such keys
-- to the shard's count, KEYS[3]. A script runs atomically: of concurrent
-- adds of one key, exactly one finds a 0.
--
-- The count is checked before any bit is set: a count that is not a number,
-- or that this call could take past ARGV[4], is an error that changes
-- nothing, so INCRBY, last, cannot fail and an add never stops half-way.
-- (Each key counted sets a bit, so a count within bounds stays within them:
-- restored counts are at most (bloom.MaxCountPerBit-1)·m.)
--
-- With a fourth key, a claim of the one key added (see AddClaimed), the
-- script sets it when the key was new and answers 1 whenever it is set.
local count = redis.call('GET', KEYS[3])
if count then
	local max = tonumber(ARGV[4])
	if not string.match(count, '^%d+$') or #count > 15 or tonumber(count) + math.min(n, max) > max then
		return redis.error_reply('EDGEBLOOM CORRUPT count ' .. KEYS[3] .. ' is ' .. string.sub(count, 1, 40) .. ', more than the bits can hold or not a number')
	end
end
local added = 0
local j = 5
for i = 1, n do
	local new = 0
	for _ = 1, k do
		if redis.call('SETBIT', KEYS[1], ARGV[j], 1) == 0 then new = 1 end
		j = j + 1
	end
	out[i] = new
	added = added + new
end
if added > 0 then redis.call('INCRBY', KEYS[3], added) end
if KEYS[4] then
	if added > 0 then redis.call('SET', KEYS[4], '1') end
	out[1] = redis.call('EXISTS', KEYS[4])
end
return out
