package bloom

import (
	"testing"

	"github.com/edgebloom/edgebloom/internal/abi"
)

// TestKindsMatchABI checks that the kinds the engine's interface names
// (internal/abi, and so js/abi.js) are the kinds of the format.
func TestKindsMatchABI(t *testing.T) {
	for _, tt := range []struct {
		name      string
		abi, here int
	}{
		{"classic", abi.KindClassic, kindClassic},
		{"counting", abi.KindCounting, kindCounting},
		{"scalable", abi.KindScalable, kindScalable},
		{"window", abi.KindWindow, kindWindow},
		{"blocked", abi.KindBlocked, kindBlocked},
	} {
		if tt.abi != tt.here {
			t.Errorf("kind %s: internal/abi has %d; the format has %d", tt.name, tt.abi, tt.here)
		}
	}
}
