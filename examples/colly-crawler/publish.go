package main

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/edgebloom/edgebloom/client"
)

// A publisher adds the URLs of the pages the crawler found to a service
// filter, a thousand at a time (client.Add splits and retries), so that
// pages and extensions that keep a copy of it know them.
type publisher struct {
	c       *client.Client
	name    string
	match   []byte
	pending []string
	sent    int
}

const publishBatch = 1000

func newPublisher(service, name, match string) (*publisher, error) {
	c, err := client.New(service, client.WithToken(os.Getenv("EDGEBLOOM_TOKEN")))
	if err != nil {
		return nil, fmt.Errorf("-publish: %w (set EDGEBLOOM_TOKEN to the secret or a write token of %s)", err, name)
	}
	return &publisher{c: c, name: name, match: []byte(match)}, nil
}

// found takes a page fetched; a full batch is sent. Calls are serialized
// by the caller.
func (p *publisher) found(url string, body []byte) error {
	if len(p.match) > 0 && !bytes.Contains(body, p.match) {
		return nil
	}
	p.pending = append(p.pending, url)
	if len(p.pending) < publishBatch {
		return nil
	}
	return p.flush()
}

// flush sends what is pending.
func (p *publisher) flush() error {
	if len(p.pending) == 0 {
		return nil
	}
	if _, err := p.c.Add(context.Background(), p.name, p.pending...); err != nil {
		return fmt.Errorf("publishing to %s: %w", p.name, err)
	}
	p.sent += len(p.pending)
	p.pending = p.pending[:0]
	return nil
}
