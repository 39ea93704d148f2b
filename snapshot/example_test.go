package snapshot_test

import (
	"fmt"
	"log"

	"github.com/edgebloom/edgebloom/snapshot"
)

// docs/go.md's sharded filter: every line of it stands here.
func ExampleNewSharded() {
	urls := []string{"https://example.com/", "https://example.com/a", "https://example.com/"}

	s, err := snapshot.NewSharded(1_000_000, 0.01, 4) // the edge service's 4 shards of 250,000 keys
	if err != nil {
		log.Fatal(err)
	}
	if s.AddString("https://example.com/b") { // test-and-add, as bloom.Filter's
		fmt.Println("new")
	}
	fresh := s.AddManyString(urls, nil) // a batch: routed, then each shard's batch
	found := s.HasManyString([]string{"https://example.com/a", "https://example.com/c"}, nil)
	fmt.Println(s.Count(), s.NumBits(), s.NumHashes(), s.Capacity()) // totals over the shards

	data, _ := s.MarshalBinary() // the service's snapshot of the same keys, byte for byte
	set, err := snapshot.Load(data, 1<<33)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(set.HasString("https://example.com/a"), len(set.(*snapshot.Sharded).Shards), fresh, found)
	// Output:
	// new
	// 3 9585060 7 1000000
	// true 4 [true true false] [true false]
}
