-- Replaces the entry taken under number ARGV[1] in the owner's hash
-- KEYS[1] by ARGV[3], to be fetched again once due (ARGV[2], in Unix ms),
-- in the sorted set KEYS[2]. Returns 1, or 0 when the hash no longer holds
-- the entry (its lease ran out and busy.lua gave it back): then nothing
-- changes.
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 1
