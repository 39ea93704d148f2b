-- Removes the entry taken under number ARGV[1] from the owner's hash
-- KEYS[1] and appends its failure ARGV[2] (JSON) to the list KEYS[2].
-- Returns 1, or 0 when the hash no longer holds the entry (its lease ran
-- out and busy.lua gave it back): then nothing changes, so a request's
-- failure is recorded once, by the collector that holds it.
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[2])
return 1
