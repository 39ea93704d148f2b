package bloomstorage

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The Redis frontier's Lua scripts, one file each in lua/, where their
// keys, arguments and replies are described. Every script that changes a
// taken entry's state first checks that the owner's hash still holds it
// under the number take.lua gave it: an owner whose lease ran out and
// whose entries another collector gave back changes nothing.
var (
	//go:embed lua/take.lua
	takeLua string
	//go:embed lua/mark.lua
	markLua string
	//go:embed lua/again.lua
	againLua string
	//go:embed lua/fail.lua
	failLua string
	//go:embed lua/retry_failures.lua
	retryFailuresLua string
	//go:embed lua/give_back.lua
	giveBackLua string
	//go:embed lua/release.lua
	releaseLua string
	//go:embed lua/busy.lua
	busyLua string
)

var (
	// takeScript takes the next entry due into the owner's hash and
	// renews its lease (take).
	takeScript = redis.NewScript(takeLua)
	// markScript marks a taken entry with its claim (own).
	markScript = redis.NewScript(markLua)
	// againScript replaces a taken entry by the one to fetch again (again).
	againScript = redis.NewScript(againLua)
	// failScript removes a taken entry and records its failure (fail).
	failScript = redis.NewScript(failLua)
	// retryFailuresScript puts the entries given up on back (retryFailures).
	retryFailuresScript = redis.NewScript(retryFailuresLua)
	// releaseScript gives the owner's taken entries back (release).
	releaseScript = redis.NewScript(giveBackLua + releaseLua)
	// busyScript gives back the entries of owners whose lease ran out and
	// counts what may still come (busy).
	busyScript = redis.NewScript(giveBackLua + busyLua)
)
