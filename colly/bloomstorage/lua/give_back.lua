-- giveBack puts the entries of an owner's hash taken back at the head of
-- the list q, in the order they were taken, deletes the hash and the lease
-- alive, and removes the owner from the set owners. The owner's numbers go
-- with the hash: a later change it makes under one of them changes nothing.
-- Read before release.lua and busy.lua.
local function giveBack(q, taken, alive, owners, owner)
	local all = redis.call('HGETALL', taken)
	local es = {}
	for i = 1, #all, 2 do es[#es + 1] = {tonumber(all[i]), all[i + 1]} end
	table.sort(es, function(a, b) return a[1] > b[1] end)
	for _, e in ipairs(es) do redis.call('LPUSH', q, e[2]) end
	redis.call('DEL', taken, alive)
	redis.call('SREM', owners, owner)
end
