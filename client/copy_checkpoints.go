package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/edgebloom/edgebloom/snapshot"
)

// syncCheckpoints syncs through the published checkpoints: nothing when the
// copy holds the latest, the delta from the copy's checkpoint when the
// service still keeps it, the latest checkpoint's snapshot otherwise.
func (cp *Copy) syncCheckpoints(ctx context.Context, st copyState, set snapshot.Set) (snapshot.Set, SyncResult, error) {
	res := SyncResult{Generation: st.Generation, Cursor: st.Cursor, Checkpoint: st.Checkpoint}
	// A generation can go between reading latest and reading its
	// snapshot (410): latest is read again, a few times.
	for range 3 {
		latest, err := cp.c.LatestCheckpoint(ctx, cp.name)
		if err != nil {
			return nil, res, err
		}
		at := fmt.Sprintf("/checkpoints/%d/%d", latest.Generation, latest.Checkpoint)
		cur, ok := cp.cursorOf(st, set)
		same := ok && st.Generation == latest.Generation && st.Checkpoint > 0
		if same && st.Checkpoint >= latest.Checkpoint || ok && latest.Generation < st.Generation {
			// Nothing new. latest is cached a few seconds, so it may be
			// behind what the copy holds, even of the generation before
			// (generations only grow).
			return nil, res, nil
		}
		switch {
		case !ok:
		case st.Generation != latest.Generation:
			res.Resync = "generation"
		case st.Checkpoint == 0 || st.Checkpoint < latest.Oldest:
			res.Resync = "checkpoint_gone"
		default:
			d, err := cp.c.getBinary(ctx, filterPath(cp.name, at+"/delta"), fmt.Sprintf("from=%d", st.Checkpoint))
			switch {
			case err == nil:
				res.Bytes += int64(len(d.body))
				nset, r, err := cp.applyDelta(d, set, st, cur, latest.Checkpoint, res)
				if !errors.Is(err, snapshot.ErrDeltaMismatch) {
					return nset, r, err
				}
				res.Resync = "mismatch"
			case errors.Is(err, ErrCheckpointGone):
				res.Resync = "checkpoint_gone"
			default:
				return nil, res, err
			}
		}
		d, err := cp.c.getBinary(ctx, filterPath(cp.name, at+"/snapshot"), "")
		if errors.Is(err, ErrCheckpointGone) {
			continue
		}
		if err != nil {
			return nil, res, err
		}
		res.Bytes += int64(len(d.body))
		return cp.loaded(d, res, latest.Checkpoint)
	}
	return nil, res, fmt.Errorf("client: the filter %q was made again three times during one sync", cp.name)
}
