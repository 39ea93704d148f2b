package main

import (
	"runtime"
	"sync"
)

// batchKeys is how many keys travel together between the pipeline's stages:
// about 330 KB of URLs, large enough that channel operations cost nothing
// per key, small enough that the stages overlap from the start.
const batchKeys = 4096

// A batch is a run of consecutive keys, stored back to back.
type batch struct {
	data  []byte
	ends  []int // key i is data[ends[i-1]:ends[i]], with ends[-1] = 0
	ready chan struct{}

	// Set by canonicalization: the keys it refused, and the first reason.
	invalid      uint64
	firstInvalid error
	spare        []byte // the other buffer, swapped with data
	spareEnds    []int
}

func (b *batch) len() int { return len(b.ends) }

func (b *batch) key(i int) []byte {
	start := 0
	if i > 0 {
		start = b.ends[i-1]
	}
	return b.data[start:b.ends[i]]
}

func (b *batch) append(key []byte) {
	b.data = append(b.data, key...)
	b.ends = append(b.ends, len(b.data))
}

// A batchAdder adds batches with one AddMany call each, which overlaps the
// cache misses of many keys (see bloom's AddMany), keeping its slices from
// batch to batch.
type batchAdder struct {
	keys  [][]byte
	fresh []bool
}

// add adds the keys of b to f, in order, and returns how many were new.
func (a *batchAdder) add(f filter, b *batch) (added uint64) {
	a.keys = a.keys[:0]
	for i := range b.len() {
		a.keys = append(a.keys, b.key(i))
	}
	a.fresh = f.AddMany(a.keys, a.fresh[:0])
	for _, fresh := range a.fresh {
		if fresh {
			added++
		}
	}
	return added
}

// canonicalize replaces every key by canon(key), dropping the keys canon
// refuses.
func (b *batch) canonicalize(canon canonFunc) {
	out, ends := b.spare[:0], b.spareEnds[:0]
	for i := range b.len() {
		c, err := canon(string(b.key(i)))
		if err != nil {
			if b.invalid++; b.firstInvalid == nil {
				b.firstInvalid = err
			}
			continue
		}
		out = append(out, c...)
		ends = append(ends, len(out))
	}
	b.spare, b.spareEnds = b.data, b.ends
	b.data, b.ends = out, ends
}

// A pipeline reads keys from a lineSource in one goroutine, canonicalizes
// them in several when asked, and hands them out in input order, so that
// reading and decompressing overlap with filling the filter, and the counts
// of new keys are the same from run to run.
type pipeline struct {
	ordered chan *batch
	free    chan *batch
	err     error // of reading; valid once ordered is closed
}

func startPipeline(src *lineSource, canon canonFunc) *pipeline {
	workers := 0
	if canon != nil {
		workers = runtime.GOMAXPROCS(0)
	}
	depth := 2*workers + 2
	p := &pipeline{ordered: make(chan *batch, depth), free: make(chan *batch, depth+2)}
	work := make(chan *batch, depth)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				b.canonicalize(canon)
				close(b.ready)
			}
		}()
	}
	go func() {
		defer close(p.ordered)
		defer close(work)
		for {
			var b *batch
			select {
			case b = <-p.free:
				b.data, b.ends, b.invalid, b.firstInvalid = b.data[:0], b.ends[:0], 0, nil
			default:
				b = &batch{}
			}
			b.ready = make(chan struct{})
			for b.len() < batchKeys {
				key, err := src.next()
				if key == nil {
					p.err = err
					break
				}
				b.append(key)
			}
			if b.len() == 0 {
				return
			}
			if canon == nil {
				close(b.ready)
			} else {
				work <- b
			}
			p.ordered <- b
			if p.err != nil {
				return
			}
		}
	}()
	return p
}

// next returns the next batch in input order, or nil after the last. The
// batch is valid until the following call.
func (p *pipeline) next(prev *batch) *batch {
	if prev != nil {
		select {
		case p.free <- prev:
		default:
		}
	}
	b, ok := <-p.ordered
	if !ok {
		return nil
	}
	<-b.ready
	return b
}
