//go:build js && wasm

package main

import (
	"github.com/edgebloom/edgebloom/internal/abi"
	"github.com/edgebloom/edgebloom/internal/engine"
)

// digest is the key being hashed in pieces (abi.OpDigest), of filter digestOf.
var (
	digest   engine.Digest
	digestOf filter
)

// digestOp starts (step 0), continues with scratch[a:a+b] (step 1) or ends
// (step 2: add when a is 1, test when 0) the key of filter f that the JS
// side hashes in pieces.
func digestOp(f filter, step, a, b int32) int32 {
	switch {
	case step == 0:
		digest, digestOf = engine.NewDigest(f.Seed()), f
		return 0
	case digest == nil || digestOf != f:
		return fail(abi.ErrArg, "edgebloom: no key is being hashed for this filter")
	case step == 1:
		k, ok := span(a, b)
		if !ok {
			return fail(abi.ErrArg, "edgebloom: key outside the scratch buffer")
		}
		digest.Write(k)
		return 0
	}
	h := digest.Sum64()
	digest, digestOf = nil, nil
	r, ok := engine.Digested(f, h, a == 1)
	if !ok {
		return fail(abi.ErrUnsupported, "edgebloom: this kind takes no key hashed in pieces")
	}
	return b2i(r)
}
