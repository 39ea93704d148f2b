-- Replaces the entry taken under number ARGV[1] in the owner's hash
-- KEYS[1] by ARGV[2] (the entry marked with its claim), if the hash still
-- holds it. Returns 1, or 0 when the entry is no longer the owner's (its
-- lease ran out and busy.lua gave it back): then nothing changes.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
