package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"sync/atomic"
)

// maxLine is the longest line accepted. URLs past a few kilobytes are
// refused by most servers; 1 MiB leaves room for any other key.
const maxLine = 1 << 20

// lineSource reads keys, one a line, from a list of inputs in turn: files,
// or "-" for stdin. Gzip input is recognized by its magic bytes, whatever
// the name. Blank lines are skipped and surrounding white space (including
// a CR of CRLF line ends) is dropped.
type lineSource struct {
	names []string
	stdin io.Reader

	read  atomic.Int64 // bytes read from the inputs as stored (compressed if so)
	total int64        // sum of the inputs' sizes, -1 when unknown

	cur     int // index in names of the input being read
	file    io.Closer
	scanner *bufio.Scanner
	line    int // line number in the current input
}

// newLineSource checks that every input can be opened, and sums their sizes
// for the progress estimate. With no names it reads stdin.
func newLineSource(names []string, stdin io.Reader) (*lineSource, error) {
	if len(names) == 0 {
		names = []string{"-"}
	}
	s := &lineSource{names: names, stdin: stdin, cur: -1}
	for _, name := range names {
		var fi os.FileInfo
		var err error
		if name == "-" {
			if f, ok := stdin.(*os.File); ok {
				fi, err = f.Stat()
			}
		} else {
			fi, err = os.Stat(name)
		}
		switch {
		case err != nil:
			return nil, err
		case fi != nil && fi.IsDir():
			return nil, fmt.Errorf("%s: is a directory", name)
		case fi == nil || !fi.Mode().IsRegular() || s.total < 0:
			s.total = -1
		default:
			s.total += fi.Size()
		}
	}
	return s, nil
}

// countReader counts the bytes read through it into n.
type countReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// next returns the next key, or nil at the end of the last input. The slice
// is valid until the following call.
func (s *lineSource) next() ([]byte, error) {
	for {
		if s.scanner != nil {
			for s.scanner.Scan() {
				s.line++
				if key := bytes.TrimSpace(s.scanner.Bytes()); len(key) > 0 {
					return key, nil
				}
			}
			err := s.scanner.Err()
			if s.file != nil {
				s.file.Close()
			}
			s.scanner, s.file = nil, nil
			if err == bufio.ErrTooLong {
				return nil, fmt.Errorf("%s:%d: line longer than %d bytes", s.names[s.cur], s.line+1, maxLine)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.names[s.cur], err)
			}
		}
		if s.cur+1 == len(s.names) {
			return nil, nil
		}
		s.cur++
		if err := s.open(s.names[s.cur]); err != nil {
			return nil, err
		}
	}
}

func (s *lineSource) open(name string) error {
	r := s.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		r, s.file = f, f
	}
	br := bufio.NewReaderSize(countReader{r, &s.read}, 1<<16)
	var lines io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		lines = zr
	}
	s.scanner = bufio.NewScanner(lines)
	s.scanner.Buffer(make([]byte, 1<<16), maxLine)
	s.line = 0
	return nil
}

// Close closes the input being read, if any.
func (s *lineSource) Close() {
	if s.file != nil {
		s.file.Close()
	}
}
