//go:build !(js && wasm)

package main

import (
	"encoding/binary"
	"net/http"
	"strconv"

	"github.com/edgebloom/edgebloom/bloom"
)

// merge serves a shard's POST /merge as shard.js does: the body is
// positions, uint32 little-endian and increasing; those not yet set are
// set and logged as one add's row, and the count grows by the
// X-Edgebloom-Count header only when some were. It answers {"set": n}.
func (sh *memoryShard) merge(w http.ResponseWriter, header http.Header, body []byte) {
	f := sh.filter
	count, err := strconv.ParseUint(header.Get(mergeCountHeader), 10, 64)
	if err != nil || len(body)%4 != 0 {
		writeError(w, "", errorf(400, "bad_shard_request", "POST /merge takes uint32 positions and %s", mergeCountHeader))
		return
	}
	var row []uint64
	var b [1]byte
	for i := 0; i < len(body); i += 4 {
		p := uint64(binary.LittleEndian.Uint32(body[i:]))
		if p >= f.NumBits() || i > 0 && p <= uint64(binary.LittleEndian.Uint32(body[i-4:])) {
			writeError(w, "", errorf(400, "bad_shard_request", "POST /merge: position %d is not increasing below %d", p, f.NumBits()))
			return
		}
		f.ReadAt(b[:], int64(bloom.HeaderSize+p/8))
		if b[0]&(1<<(p%8)) == 0 {
			row = append(row, p)
		}
	}
	if len(row) > 0 {
		if err := f.ApplyChanges(row, f.Count()+count); err != nil {
			writeError(w, "", internalError(500, "internal", "setting the merged bits failed", err))
			return
		}
		sh.log = append(sh.log, row)
		sh.counts = append(sh.counts, f.Count())
	}
	writeJSON(w, 200, map[string]int{"set": len(row)})
}
