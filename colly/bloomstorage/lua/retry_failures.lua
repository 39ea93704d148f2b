-- Appends the entry of each failure of the list KEYS[1] (JSON, its entry
-- hex-encoded) to the list KEYS[2] and deletes the failures, in one step.
-- Returns the number of entries put back.
local all = redis.call('LRANGE', KEYS[1], 0, -1)
for _, rec in ipairs(all) do
	local e = string.gsub(cjson.decode(rec).entry, '..', function(cc) return string.char(tonumber(cc, 16)) end)
	redis.call('RPUSH', KEYS[2], e)
end
redis.call('DEL', KEYS[1])
return #all
