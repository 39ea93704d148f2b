package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/edgebloom/edgebloom/token"
)

// Params are a filter's parameters, as PUT takes them.
type Params struct {
	// Capacity is how many keys the filter holds at ErrorRate, 1 to 2^53.
	Capacity uint64 `json:"capacity"`
	// ErrorRate is the false-positive rate at Capacity, in (0, 1).
	ErrorRate float64 `json:"errorRate"`
	// Shards is how many Durable Objects hold the filter, 1 to MaxShards;
	// 0 means 1.
	Shards int `json:"shards,omitempty"`
	// Canonicalize maps every key of the filter's adds and checks to its
	// canonical URL first (docs/urls.md).
	Canonicalize bool `json:"canonicalize"`
}

// A Filter describes a filter as Create answers it.
type Filter struct {
	Name string `json:"name"`
	Params
	ShardCapacity uint64 `json:"shardCapacity"`
	ShardBits     uint64 `json:"shardBits"`
	Hashes        uint32 `json:"hashes"`
	Bits          uint64 `json:"bits"`
	// Created is set when the answer was 201 (made), not 200 (the same
	// parameters again). A Create whose first attempt failed with a 502 may
	// have made the filter: its retry answers 200, and Created is false.
	Created bool `json:"-"`
}

// checkName refuses a name the service would: 1 to 64 of A-Za-z0-9-_. .
func checkName(name string) error {
	ok := len(name) >= 1 && len(name) <= 64
	for i := 0; ok && i < len(name); i++ {
		b := name[i]
		ok = b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_' || b == '.'
	}
	if !ok {
		return fmt.Errorf("client: filter name %q: a name is 1 to 64 characters, each A-Z, a-z, 0-9, '-', '_' or '.'", name)
	}
	return nil
}

func filterPath(name, rest string) string { return "/v1/filters/" + name + rest }

// Create makes the filter name with the parameters p (PUT). Made again with
// the same parameters it answers the filter (Created false); with other
// parameters it fails with ErrConflict.
func (c *Client) Create(ctx context.Context, name string, p Params) (*Filter, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	switch {
	case p.Capacity < 1 || p.Capacity > 1<<53:
		return nil, fmt.Errorf("client: Create: Capacity %d must be from 1 to 2^53", p.Capacity)
	case !(p.ErrorRate > 0 && p.ErrorRate < 1):
		return nil, fmt.Errorf("client: Create: ErrorRate %v must be between 0 and 1 (exclusive)", p.ErrorRate)
	case p.Shards < 0 || p.Shards > MaxShards:
		return nil, fmt.Errorf("client: Create: Shards %d must be from 1 to %d (0 for 1)", p.Shards, MaxShards)
	}
	var f Filter
	status, err := c.doJSON(ctx, http.MethodPut, filterPath(name, ""), p, &f, nil)
	if err != nil {
		return nil, err
	}
	f.Created = status == http.StatusCreated
	return &f, nil
}

// Delete deletes the filter name: its keys, its checkpoints and every copy's
// claim to them (a copy of it resyncs when a filter of the name is made
// again). It fails with ErrNotFound when there is no such filter — unless an
// earlier attempt of this call may have deleted it (its answer was lost, or
// was a 502 after part of the work), in which case the 404 of the retry
// means the filter is gone, and Delete returns nil.
func (c *Client) Delete(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	var info sent
	_, err := c.doJSON(ctx, http.MethodDelete, filterPath(name, ""), nil, nil, &info)
	if info.attempts > 1 && info.unsure && errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// ShardStats are the statistics of a shard, or their totals.
type ShardStats struct {
	Index    int    `json:"index"`    // the shard's index (0 in a total)
	Capacity uint64 `json:"capacity"` // keys the shard holds at the error rate (0 in a total)
	Bits     uint64 `json:"bits"`
	Hashes   uint32 `json:"hashes"`
	Count    uint64 `json:"count"` // keys added that were new
	SetBits  uint64 `json:"setBits"`
	// EstimatedCount is the count the set bits give, nil when every bit is set.
	EstimatedCount     *float64 `json:"estimatedCount"`
	FillRatio          float64  `json:"fillRatio"`
	EstimatedErrorRate float64  `json:"estimatedErrorRate"`
	ByteLength         uint64   `json:"byteLength"` // of the shard's snapshot record
}

// Stats are a filter's parameters and statistics (GET /v1/filters/{name}).
type Stats struct {
	Name string `json:"name"`
	Params
	Total    ShardStats   `json:"total"`
	PerShard []ShardStats `json:"perShard"`
}

// Stats returns the filter's parameters and statistics. It needs the secret
// or a read token.
func (c *Client) Stats(ctx context.Context, name string) (*Stats, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	var s Stats
	if _, err := c.doJSON(ctx, http.MethodGet, filterPath(name, ""), nil, &s, nil); err != nil {
		return nil, err
	}
	return &s, nil
}

// A Token is a scoped token the service made (MintToken).
type Token struct {
	Token   string      `json:"token"` // what WithToken takes
	Expires time.Time   `json:"expires"`
	Scope   token.Scope `json:"scope"`
	Filter  string      `json:"filter"` // a name, or a prefix and "*"
}

// MintToken asks the service for a token of scope (token.Read or
// token.Write) for the filter named filter, or every filter whose name
// starts with prefix when filter is "prefix*", valid for expiresIn (a whole
// number of seconds, 1 s to token.MaxLifetime). It needs the secret. The
// token package makes the same tokens offline from the secret.
func (c *Client) MintToken(ctx context.Context, scope token.Scope, filter string, expiresIn time.Duration) (*Token, error) {
	switch {
	case scope != token.Read && scope != token.Write:
		return nil, fmt.Errorf("client: MintToken: scope %q must be token.Read or token.Write", scope)
	case token.ValidFilter(filter) != nil:
		return nil, fmt.Errorf("client: MintToken: %w", token.ValidFilter(filter))
	case expiresIn < time.Second || expiresIn > token.MaxLifetime || expiresIn%time.Second != 0:
		return nil, fmt.Errorf("client: MintToken: expiresIn %v must be whole seconds from 1s to %v", expiresIn, token.MaxLifetime)
	}
	in := map[string]any{"scope": scope, "filter": filter, "expiresIn": int64(expiresIn / time.Second)}
	var t Token
	if _, err := c.doJSON(ctx, http.MethodPost, "/v1/tokens", in, &t, nil); err != nil {
		return nil, err
	}
	return &t, nil
}

// A Checkpoint is a filter's newest checkpoint
// (GET /v1/filters/{name}/checkpoints/latest).
type Checkpoint struct {
	Generation uint64    `json:"generation"`
	Checkpoint uint64    `json:"checkpoint"` // its number, from 1
	Cursor     string    `json:"cursor"`     // what a copy at it holds
	Oldest     uint64    `json:"oldest"`     // the oldest checkpoint kept
	Published  time.Time `json:"published"`
	Interval   int       `json:"interval"` // seconds between checkpoints at most
}

// LatestCheckpoint returns the filter's newest checkpoint. Before the first
// is published it waits (503 checkpoint_pending) as the retry policy allows,
// then fails with ErrCheckpointPending.
func (c *Client) LatestCheckpoint(ctx context.Context, name string) (*Checkpoint, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	var cp Checkpoint
	if _, err := c.doJSON(ctx, http.MethodGet, filterPath(name, "/checkpoints/latest"), nil, &cp, nil); err != nil {
		return nil, err
	}
	return &cp, nil
}
