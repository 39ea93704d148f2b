-- The opening of the scripts that read or set a shard's bits (add.lua,
-- has.lua, stat.lua follow it): it checks that the shard belongs to the
-- handle's filter and is whole before anything is read or set.
--
-- KEYS[1] the shard's bits, KEYS[2] its generation, KEYS[3] its count.
-- ARGV[1] the payload's length in bytes, ARGV[2] k, ARGV[3] the handle's
-- generation, ARGV[4] the largest count the shard may hold
-- (bloom.MaxCountPerBit·m), then from ARGV[5] the k offsets of each key.
--
-- A shard whose generation is gone was lost; one with another generation
-- belongs to a filter made since. A bits string shorter than the payload is
-- missing (Redis reads a missing key as zeros: never answer from those) or
-- damaged.
local gen = redis.call('GET', KEYS[2])
if gen ~= ARGV[3] then
	if not gen then
		return redis.error_reply('EDGEBLOOM LOST shard ' .. KEYS[1] .. ' has lost its generation (Redis restarted without its data, or evicted or deleted it)')
	end
	return redis.error_reply('EDGEBLOOM RECREATED shard ' .. KEYS[1] .. ' belongs to a filter made since (generation ' .. gen .. ', want ' .. ARGV[3] .. ')')
end
local size = redis.call('STRLEN', KEYS[1])
if size ~= tonumber(ARGV[1]) then
	if size == 0 then
		return redis.error_reply('EDGEBLOOM LOST shard ' .. KEYS[1] .. ' is missing (Redis restarted without its data, or evicted or deleted it)')
	end
	return redis.error_reply('EDGEBLOOM CORRUPT shard ' .. KEYS[1] .. ' is ' .. size .. ' bytes, want ' .. ARGV[1])
end
local k = tonumber(ARGV[2])
local n = (#ARGV - 4) / k
local out = {}
