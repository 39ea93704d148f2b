-- After check_shard.lua: returns the shard's count, KEYS[3] ('0' when it has
-- none), and with ARGV[5] = '1' the number of its bits set (0 without).
local bits = 0
if ARGV[5] == '1' then bits = redis.call('BITCOUNT', KEYS[1]) end
return {redis.call('GET', KEYS[3]) or '0', bits}
