package bloomstorage

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// TestRetryWaitUncapped checks the waits of a Retry whose MaxBackoff is
// math.MaxInt64, meant as no cap, with a Backoff of an hour: doubling it
// passes what an int64 holds at the 23rd failure. SetRetry takes it, and
// each wait stays between half and all of Backoff·2^(failures-1), or of
// MaxBackoff once that is less, at every count of failures.
func TestRetryWaitUncapped(t *testing.T) {
	r := Retry{Attempts: 255, Backoff: time.Hour, MaxBackoff: math.MaxInt64}
	s, err := NewMemory(100, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SetRetry(r); err != nil {
		t.Fatalf("SetRetry(%+v): %v", r, err)
	}
	now := time.Now()
	for _, failed := range []int{1, 2, 22, 23, 52, 63, 100, 254} {
		ceil := r.MaxBackoff
		if f := float64(r.Backoff) * math.Pow(2, float64(failed-1)); f < float64(r.MaxBackoff) {
			ceil = r.Backoff << (failed - 1)
		}
		for range 100 {
			got, err := waitOf(r, failed, now)
			if err != nil || got < ceil/2 || got > ceil {
				t.Errorf("the wait after %d failures: %v, %v; want %v to %v", failed, got, err, ceil/2, ceil)
				break
			}
		}
	}
}

// waitOf returns r's wait after failed failures, or the panic it made.
func waitOf(r Retry, failed int, now time.Time) (d time.Duration, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return r.wait(failed, "", now), nil
}
