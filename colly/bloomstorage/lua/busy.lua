-- After give_back.lua: gives back to the list KEYS[1] the entries of the
-- owners of the set KEYS[2] whose lease ran out, and returns the number of
-- entries given back, plus that of the other owners that hold entries,
-- plus that of the entries of the sorted set KEYS[3] (to fetch again
-- later). ARGV[1] is the owner asking, ARGV[2] the prefix of the owners'
-- keys (taken:<owner>, alive:<owner>).
local busy = redis.call('ZCARD', KEYS[3])
for _, o in ipairs(redis.call('SMEMBERS', KEYS[2])) do
	if o ~= ARGV[1] then
		local taken, alive = ARGV[2] .. 'taken:' .. o, ARGV[2] .. 'alive:' .. o
		if redis.call('EXISTS', alive) == 0 then
			busy = busy + redis.call('HLEN', taken)
			giveBack(KEYS[1], taken, alive, KEYS[2], o)
		elseif redis.call('HLEN', taken) > 0 then
			busy = busy + 1
		end
	end
end
return busy
