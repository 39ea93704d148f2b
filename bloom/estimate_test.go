package bloom

import (
	"errors"
	"math"
	"testing"
)

func TestOptimal(t *testing.T) {
	for _, tt := range []struct {
		name  string
		n     uint64
		p     float64
		wantM uint64
		wantK uint32
	}{
		{"1M at 0.01%", 1_000_000, 0.0001, 19_170_117, 13},
		{"1M at 1%", 1_000_000, 0.01, 9_585_059, 7},
		{"one key at 50%", 1, 0.5, 2, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, k, err := Optimal(tt.n, tt.p)
			if err != nil || m != tt.wantM || k != tt.wantK {
				t.Errorf("Optimal(%d, %g) = %d, %d, %v; want %d, %d, nil", tt.n, tt.p, m, k, err, tt.wantM, tt.wantK)
			}
		})
	}
}

func TestEstimateFPR(t *testing.T) {
	const n = 1000
	got := EstimateFPR(20*n, 10, n)
	if math.Abs(got-0.0000889) > 0.00000005 {
		t.Errorf("EstimateFPR(20n, 10, n) = %.7f; want 0.0000889", got)
	}
}

func TestOptimalRejects(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    uint64
		p    float64
		arg  string
	}{
		{"zero capacity", 0, 0.01, "capacity"},
		{"zero rate", 10, 0, "fpRate"},
		{"negative rate", 10, -0.1, "fpRate"},
		{"rate one", 10, 1, "fpRate"},
		{"NaN rate", 10, math.NaN(), "fpRate"},
		{"too many bits", 1 << 40, 0.01, "capacity"},
		{"too many hashes", 10, 1e-30, "fpRate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Optimal(tt.n, tt.p)
			var ae *ArgError
			if !errors.As(err, &ae) || ae.Arg != tt.arg {
				t.Errorf("Optimal(%d, %g): got %v; want an ArgError for %q", tt.n, tt.p, err, tt.arg)
			}
		})
	}
}
