-- After check_shard.lua: reads the bits of n keys in one shard and returns,
-- for each key, 1 when all of its bits are set.
local j = 5
for i = 1, n do
	local has = 1
	for m = 0, k - 1 do
		if redis.call('GETBIT', KEYS[1], ARGV[j + m]) == 0 then
			has = 0
			break
		end
	end
	out[i] = has
	j = j + k
end
return out
