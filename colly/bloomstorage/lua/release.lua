-- After give_back.lua: gives back the entries of the owner ARGV[1] (its
-- hash KEYS[2], its lease KEYS[3]) to the list KEYS[1], and removes it from
-- the set KEYS[4]. Returns 1.
giveBack(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1])
return 1
