// Package refusal names a Go decoder's refusal by the error code the npm
// module refuses the same input with, for the tests that hold Go and the
// module to the same refusals (bloom/testdata/malformed.json,
// snapshot/testdata/hostile-deltas).
package refusal

import (
	"errors"
	"io"

	"github.com/edgebloom/edgebloom/bloom"
)

// Code returns the npm module's err.code for err, an error of a Go decoder:
// the code of the bloom sentinel it wraps (ErrCorrupt is ERR_CORRUPT, …),
// ERR_TRUNCATED for io.ErrUnexpectedEOF, "no error" for nil.
func Code(err error) string {
	switch {
	case err == nil:
		return "no error"
	case errors.Is(err, bloom.ErrTooLarge):
		return "ERR_TOO_LARGE"
	case errors.Is(err, bloom.ErrChecksum):
		return "ERR_CHECKSUM"
	case errors.Is(err, bloom.ErrNotFilter):
		return "ERR_NOT_FILTER"
	case errors.Is(err, bloom.ErrVersion):
		return "ERR_VERSION"
	case errors.Is(err, bloom.ErrKind):
		return "ERR_KIND"
	case errors.Is(err, bloom.ErrCorrupt):
		return "ERR_CORRUPT"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "ERR_TRUNCATED"
	}
	return "unclassified: " + err.Error()
}
