package token_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/edgebloom/edgebloom/token"
)

// A backend that holds the service's secret hands a page a read token for
// one filter; the service checks it with the same secret.
func Example() {
	secret := []byte("the service's EDGEBLOOM_TOKEN")
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	tok, err := token.Mint(secret, token.Claims{Scope: token.Read, Filter: "crawl", Expires: now.Add(24 * time.Hour)})
	if err != nil {
		panic(err)
	}

	v := token.NewVerifier(secret)
	c, err := v.Verify(tok, now)
	fmt.Println(c.Scope, c.Filter, c.Expires, err)
	fmt.Println(c.Allow(token.Changes, "crawl"))
	fmt.Println(errors.Is(c.Allow(token.Add, "crawl"), token.ErrOperation))
	fmt.Println(errors.Is(c.Allow(token.Changes, "other"), token.ErrFilter))
	_, err = v.Verify(tok, now.Add(25*time.Hour))
	fmt.Println(errors.Is(err, token.ErrExpired))
	// Output:
	// read crawl 2026-11-27 12:00:00 +0000 UTC <nil>
	// <nil>
	// true
	// true
	// true
}
