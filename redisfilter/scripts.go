package redisfilter

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts, one file each in lua/, where their keys, arguments and
// replies are described. Every script that reads or sets a shard's bits
// starts with check_shard.lua, so none of them answers from a shard that is
// not the handle's filter, whole.
var (
	//go:embed lua/check_shard.lua
	checkShard string
	//go:embed lua/add.lua
	addLua string
	//go:embed lua/has.lua
	hasLua string
	//go:embed lua/stat.lua
	statLua string
	//go:embed lua/create.lua
	createLua string
	//go:embed lua/alloc.lua
	allocLua string
	//go:embed lua/del_shard.lua
	delShardLua string
	//go:embed lua/del_params.lua
	delParamsLua string
)

var (
	// addScript sets the bits of keys in one shard and reports which were
	// new (Add, AddMany).
	addScript = redis.NewScript(checkShard + addLua)
	// hasScript reports which keys have all their bits set in one shard
	// (Has, HasMany).
	hasScript = redis.NewScript(checkShard + hasLua)
	// statScript returns a shard's count and the number of its bits set:
	// a reply of two values, read by stats and writeShard.
	statScript = redis.NewScript(checkShard + statLua)
	// createScript writes the parameter hash unless the name holds one.
	createScript = redis.NewScript(createLua)
	// allocScript makes a shard at its full length with its generation.
	allocScript = redis.NewScript(allocLua)
	// delShardScript deletes a shard's keys unless they belong to a filter
	// made since.
	delShardScript = redis.NewScript(delShardLua)
	// delParamsScript deletes the parameter hash of one generation.
	delParamsScript = redis.NewScript(delParamsLua)
)
